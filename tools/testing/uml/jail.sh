#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# jail.sh - the host side of one uml-run.sh guest; uml-run.sh starts it as
# PID 1 of fresh PID and mount namespaces (unshare --pid --mount --fork
# --kill-child), so that every process and mount it makes dies with it.
#
# Usage: jail.sh NSDIR RUNTREE LINUX [UML ARGUMENT...]
#
# Mounts a private tmpfs on NSDIR and builds there:
#   NSDIR/root/     the guest's / (hostfs rootflags=/root): the host's
#                   /usr and /etc as read-only lower layers of overlays
#                   whose upper layers are in this tmpfs, the host's
#                   top-level links to them (/bin -> usr/bin ...), empty
#                   /tmp /run /var /proc ..., then RUNTREE laid over it
#   NSDIR/linux     LINUX, bound read-only
#   NSDIR/usr ...   links to root/usr ... (the loader and libc of LINUX)
#   NSDIR/tmp/      UML's memory file (TMPDIR) and uml_dir
#   NSDIR/dev/null  for UML's null channel
# and runs LINUX chrooted into NSDIR: nothing the guest does, even mounting
# hostfs at "/", can reach a host path outside NSDIR, and everything it can
# write is in this tmpfs.  The host's /tmp, /var, /home and /work are not
# part of it.  UML's own file descriptors 3 and 4 (console and command
# output) are inherited from uml-run.sh.
set -eu
shopt -s inherit_errexit

# Top-level entries of the host's / that hold the userland.
readonly USERLAND="usr etc bin sbin lib lib32 lib64 libx32"
# Empty directories of the guest's /, and their modes.
readonly DIRS="proc:555 sys:555 dev:755 tmp:1777 run:755 var:755 var/tmp:1777
root:700 mnt:755 opt:755 home:755 srv:755"

die()
{
	echo "uml-run: jail: $*" >&2
	exit 125
}

# The guest's / under $1: overlays of the host's userland, empty dirs.
make_root()
{
	local ns=$1 root=$1/root e spec

	mkdir -m 755 "$root"
	for e in $USERLAND; do
		if [ -L "/$e" ]; then
			cp -P "/$e" "$root/$e"
		elif [ -d "/$e" ]; then
			mkdir -p "$root/$e" "$ns/ovl/up/$e" "$ns/ovl/work/$e"
			mount -t overlay -o "ro,nodev,nosuid" \
				-o "lowerdir=/$e,upperdir=$ns/ovl/up/$e,workdir=$ns/ovl/work/$e" \
				"uml-$e" "$root/$e" ||
				die "cannot mount an overlay of /$e (overlayfs missing?)"
			# the guest may write: into the upper layer only
			mount -o remount,rw,nodev,nosuid "$root/$e"
		fi
	done
	for spec in $DIRS; do
		mkdir -m "${spec#*:}" "$root/${spec%%:*}"
	done
	ln -s ../run "$root/var/run"
}

main()
{
	local ns=$1 run=$2 linux=$3 e chroot

	shift 3
	[ "$$" = 1 ] || die "must run as PID 1 of its own namespaces (see uml-run.sh)"
	mount -t tmpfs -o mode=755,nodev,nosuid uml-jail "$ns"
	make_root "$ns"
	# RUNTREE over /, following the root's directory links (lib -> usr/lib)
	tar -C "$run" -cf - . | tar -C "$ns/root" -xf - --keep-directory-symlink \
		--no-same-owner
	for e in $USERLAND; do
		[ ! -e "$ns/root/$e" ] || ln -s "root/$e" "$ns/$e"
	done
	mkdir -m 755 "$ns/dev" "$ns/proc"
	mkdir -m 1777 "$ns/tmp"
	touch "$ns/dev/null" "$ns/linux"
	mount --bind /dev/null "$ns/dev/null"
	mount --bind "$linux" "$ns/linux"
	mount -o remount,bind,ro "$ns/linux"
	# UML reads the host's CPU flags there; a copy, not the host's /proc
	cat /proc/cpuinfo >"$ns/proc/cpuinfo"
	ulimit -c 0	# a guest panic aborts UML: no core file
	cd "$ns"
	chroot=$(command -v chroot) || die "chroot missing: apt-get install coreutils"
	# Not exec'ed: as the namespace's PID 1, UML could not abort() on a
	# guest panic (PID 1 ignores its own fatal signals) and would hang.
	env -i TMPDIR=/tmp HOME=/tmp PATH=/ "$chroot" . /linux "$@"
}

main "$@"
