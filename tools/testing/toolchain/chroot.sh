#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# chroot.sh - another Debian release's compiler, in a cached minimal chroot
#
#   chroot.sh path SUITE COMPILER           make it once, print its directory
#   chroot.sh run SUITE COMPILER -- CMD...  run CMD (as root) inside it
#
# COMPILER is the gcc the kernel was built with, e.g. gcc-16 (its headers'
# CONFIG_CC_VERSION_TEXT). The chroot is made by debootstrap --variant=minbase
# from the mirror and keyring of the system's own apt entry (see
# tools/testing/kernel/debian-archive.sh) with only COMPILER, make and dwarves
# (pahole, which Debian's linux-kbuild wants for module BTF), perl (W=1 runs
# scripts/kernel-doc on the module's sources, a Perl script up to 6.x), and
# iproute2: the 7.x guests run that release's ss (see fetch-kernel.sh).
# It lives in $CACHE/toolchains/SUITE-COMPILER-HASH (HASH: of everything
# that went into it), is made in a temporary directory and renamed when
# complete, under a lock, and never changed afterwards.
#
# "run" gives CMD /proc (objtool needs it), /dev and the whole cache at the
# same path as outside (kernel trees, module build directories), in a
# private mount namespace: the mounts vanish with CMD whatever happens to
# it, and can never outlive it or leak into the host's mount table.
set -eu
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
ARCHIVE=$HERE/../kernel/debian-archive.sh
CACHE=${DCTCP_CACHE:-/var/cache/dctcp-oot}
# Bump when the way a chroot is made changes.
LAYOUT=1
TMP=

die()
{
	echo "chroot.sh: $*" >&2
	exit 1
}

log()
{
	echo "chroot.sh: $*" >&2
}

usage()
{
	sed -n 's/^# \{0,1\}//; 6,7p' "$0" >&2
	exit 2
}

cleanup()
{
	if [ -n "$TMP" ]; then
		# debootstrap mounted nothing here: it ran in its own namespace
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT

need()
{
	command -v "$1" >/dev/null 2>&1 || die "$1 missing: apt-get install $2"
}

packages()
{
	echo "$1,make,dwarves,perl,iproute2"
}

# Everything the chroot is made of: a change gives a new directory.
chroot_dir()
{
	local suite=$1 cc=$2 mirror hash

	mirror=$("$ARCHIVE" mirror "$suite")
	hash=$({
		echo "$LAYOUT $suite $(packages "$cc") $mirror"
		debootstrap --version
	} | sha256sum | cut -c1-12)
	echo "$CACHE/toolchains/$suite-$cc-$hash"
}

# The chroot is complete and has COMPILER.
chroot_ok()
{
	[ -f "$1/toolchain.txt" ] && [ -x "$1/usr/bin/$2" ]
}

make_chroot()
{
	local suite=$1 cc=$2 dir=$3 uri keyring t0

	need debootstrap debootstrap
	need unshare util-linux
	read -r uri keyring <<<"$("$ARCHIVE" mirror "$suite")"
	TMP=$(mktemp -d "$dir.tmp.XXXXXX")
	t0=$(date +%s)
	log "debootstrap $suite with $(packages "$cc") (once; cached in $dir)"
	# Own mount namespace: whatever debootstrap mounts (proc, sys) goes
	# away with it, even if it fails half-way.
	if ! nice -n 10 unshare --mount --propagation private \
		debootstrap --variant=minbase --include="$(packages "$cc")" \
		--keyring="$keyring" "$suite" "$TMP" "$uri" >"$TMP.log" 2>&1; then
		tail -n 30 "$TMP.log" >&2
		[ ! -f "$TMP/debootstrap/debootstrap.log" ] ||
			tail -n 30 "$TMP/debootstrap/debootstrap.log" >&2
		rm -f "$TMP.log"
		die "debootstrap of $suite failed (see above)"
	fi
	rm -f "$TMP.log"
	[ -x "$TMP/usr/bin/$cc" ] || die "debootstrap of $suite did not install $cc: does $suite have it?"
	rm -f "$TMP"/var/cache/apt/archives/*.deb "$TMP"/var/lib/apt/lists/*_Packages
	mkdir -p "$TMP$CACHE"
	{
		echo "suite: $suite"
		echo "mirror: $uri"
		echo "made: $(date -u +%FT%TZ) in $(($(date +%s) - t0)) s"
		echo "compiler: $(chroot "$TMP" "$cc" --version | head -n 1)"
		chroot "$TMP" dpkg-query -W -f '${Package} ${Version}\n' \
			"$cc" make dwarves iproute2 libc6
	} >"$TMP/toolchain.txt"
	chmod 755 "$TMP"
	mv -T "$TMP" "$dir"
	TMP=
	log "$suite chroot ready in $(($(date +%s) - t0)) s, $(du -sm "$dir" | cut -f1) MB"
}

ensure()
{
	local suite=$1 cc=$2 dir fd

	case "$cc" in
	gcc-[0-9]*) ;;
	*) die "compiler '$cc' is not of the form gcc-N" ;;
	esac
	dir=$(chroot_dir "$suite" "$cc")
	if ! chroot_ok "$dir" "$cc"; then
		mkdir -p "$CACHE/toolchains"
		exec {fd}>"$dir.lock"
		flock "$fd"
		chroot_ok "$dir" "$cc" || make_chroot "$suite" "$cc" "$dir"
		exec {fd}>&-
	fi
	echo "$dir"
}

# Mount /proc, /dev and the cache, chroot, run. Executed by unshare in a
# private mount namespace, so the mounts end with it.
run_inside()
{
	local root=$1

	shift
	mount -t proc proc "$root/proc"
	mount --rbind /dev "$root/dev"
	mount --bind "$CACHE" "$root$CACHE"
	exec chroot "$root" /usr/bin/env -i \
		PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
		HOME=/root LC_ALL=C.UTF-8 "$@"
}

main()
{
	local cmd=${1:-} dir

	[ $# -ge 3 ] || usage
	[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, chroot, mount)"
	need flock util-linux
	case "$cmd" in
	path)
		[ $# -eq 3 ] || usage
		ensure "$2" "$3"
		;;
	run)
		[ $# -ge 5 ] && [ "$4" = -- ] || usage
		dir=$(ensure "$2" "$3")
		shift 4
		need unshare util-linux
		unshare --mount --propagation private \
			"$0" --inside "$dir" "$@"
		;;
	--inside)
		shift
		run_inside "$@"
		;;
	*)
		usage
		;;
	esac
}

main "$@"
