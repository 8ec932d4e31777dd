#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-kernel.sh - make a Debian kernel bootable by vm-run.sh
#
# Usage: fetch-kernel.sh [--refresh] NAME
#        fetch-kernel.sh --list
#
#   NAME            suite               kernel (amd64 flavour)
#   deb-5.10        bullseye            5.10, Debian 11
#   deb-6.1         bookworm            6.1, Debian 12 (installed headers)
#   deb-6.12        bookworm-security   6.12 (installed headers), 3-argument
#                                       __tcp_send_ack()
#   deb-6.12-bpo    bookworm-backports  6.12, 2-argument __tcp_send_ack()
#   deb-6.12-trixie trixie              6.12, Debian 13, built with gcc-14
#   deb-7.2         sid                 7.2
#   deb-7.3         experimental        7.3-rc
#
# deb-6.1 and deb-6.12 use the linux-headers packages installed on this
# machine (scripts/install-deps.sh) and download the linux-image of exactly
# that version.  Every other series comes from its own suite through
# tools/testing/kernel/debian-archive.sh (the system's mirror, private
# package lists, nothing installed): the newest headers of the series, the
# linux-headers-*-common and linux-kbuild-* they need, and the image (7.x:
# linux-binary + linux-modules + linux-base).  All are unpacked with
# dpkg-deb -x into the cache:
#
#   $CACHE/kernels/<name>/vmlinuz     bootable bzImage
#   $CACHE/kernels/<name>/vmlinux     the same kernel uncompressed (ELF with
#                                     a PVH note): QEMU boots it directly,
#                                     which saves ~3.5 s of TCG decompression
#   $CACHE/kernels/<name>/kver        uname -r string
#   $CACHE/kernels/<name>/suite       the Debian suite it came from
#   $CACHE/kernels/<name>/deb-version the package version
#   $CACHE/kernels/<name>/config      the kernel's .config
#   $CACHE/kernels/<name>/modules/lib/modules/<kver>/   module tree (depmod'ed)
#   $CACHE/kernels/<name>/headers/    unpacked headers + kbuild (not for
#                                     deb-6.1/deb-6.12)
#   $CACHE/kernels/<name>/build  ->   the headers (kbuild tree)
#   $CACHE/kernels/<name>/userland/   7.x only: an overlay for vm-run.sh
#                                     with the suite's iproute2 (AccECN-aware
#                                     ss), taken from the toolchain chroot
#
# A complete entry is used as it is, without network, until --refresh
# (which picks up a newer package of the series, if the suite has one).
# The entry is built in a temp dir and moved into place under flock, so
# concurrent callers never see a half-populated directory.  Prints the
# kernel directory on stdout; everything else goes to stderr.

set -eu
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
ARCHIVE=$HERE/../kernel/debian-archive.sh
CHROOT=$HERE/../toolchain/chroot.sh
CACHE=${DCTCP_CACHE:-/var/cache/dctcp-oot}
NAME=
SUITE=
SERIES=
KVER=
VERSION=
HEADERS=
TMP=
LOCKFD=
REFRESH=0

# name | suite | series | where the headers come from
KERNELS="deb-5.10|bullseye|5.10|archive
deb-6.1|bookworm|6.1|host:linux-headers-amd64
deb-6.12|bookworm-security|6.12|host:linux-headers-6.12-amd64
deb-6.12-bpo|bookworm-backports|6.12|archive
deb-6.12-trixie|trixie|6.12|archive
deb-7.2|sid|7.2|archive
deb-7.3|experimental|7.3|archive"

die()
{
	echo "fetch-kernel: $*" >&2
	exit 1
}

log()
{
	echo "fetch-kernel: $*" >&2
}

cleanup()
{
	if [ -n "$TMP" ]; then
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT

need()
{
	command -v "$1" >/dev/null 2>&1 || die "$1 missing: apt-get install $2"
}

usage()
{
	echo "usage: $0 [--refresh] NAME (one of: $(echo "$KERNELS" | cut -d'|' -f1 | tr '\n' ' '))" >&2
	exit 2
}

# Set SUITE, SERIES and HEADERS for NAME.
lookup()
{
	local line

	line=$(echo "$KERNELS" | awk -F'|' -v n="$1" '$1 == n')
	[ -n "$line" ] || usage
	IFS='|' read -r _ SUITE SERIES HEADERS <<<"$line"
}

in_series()
{
	case "$1" in
	"$SERIES".*|"$SERIES"-*) return 0 ;;
	esac
	return 1
}

installed()
{
	[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]
}

# Installed meta package -> linux-headers-<kver>: set KVER and VERSION.
find_host_headers()
{
	local meta=$1 dep

	installed "$meta" ||
		die "$meta is not installed: apt-get install $meta"
	dep=$(dpkg-query -W -f='${Depends}' "$meta" | tr ',' '\n' |
	      sed -n 's/^ *\(linux-headers-[^ ]*-amd64\).*/\1/p' | head -n1)
	[ -n "$dep" ] || die "cannot find the headers package $meta depends on"
	installed "$dep" ||
		die "$dep is not installed: apt-get install $meta $dep"
	KVER=${dep#linux-headers-}
	VERSION=$(dpkg-query -W -f='${Version}' "$dep")
	[ -f "/usr/src/linux-headers-$KVER/Makefile" ] ||
		die "/usr/src/linux-headers-$KVER is incomplete: apt-get install --reinstall $dep"
	in_series "$KVER" || die "$meta points at $KVER, which is not the $NAME series"
}

# The newest linux-headers-<kver>-amd64 of the series in SUITE: the one
# the suite's linux-headers-amd64 points at, or else the highest version.
find_archive_headers()
{
	local pkg

	pkg=$("$ARCHIVE" depends "$SUITE" linux-headers-amd64 |
	      grep -E '^linux-headers-.*-amd64$' | head -n 1) || true
	if [ -z "$pkg" ] || ! in_series "${pkg#linux-headers-}"; then
		pkg=$("$ARCHIVE" names "$SUITE" \
			"^linux-headers-${SERIES//./\\.}([.-][^ ]*[0-9])?-amd64\$" |
		      tail -n 1)
	fi
	[ -n "$pkg" ] || die "$SUITE has no linux-headers-$SERIES*-amd64 (any more?)"
	KVER=${pkg#linux-headers-}
	VERSION=$("$ARCHIVE" version "$SUITE" "$pkg")
	[ -n "$VERSION" ] || die "no version of $pkg in $SUITE"
}

find_headers()
{
	case "$HEADERS" in
	host:*) find_host_headers "${HEADERS#host:}" ;;
	archive) find_archive_headers ;;
	esac
}

# Is the cache entry complete (and, for host headers, for the installed
# version)?
entry_ok()
{
	local dir=$1 kver

	[ -f "$dir/vmlinuz" ] && [ -f "$dir/kver" ] || return 1
	kver=$(cat "$dir/kver")
	[ -f "$dir/modules/lib/modules/$kver/modules.dep" ] &&
		[ -e "$dir/build/Makefile" ] &&
		{ [ -f "$dir/vmlinux" ] ||
		  ! grep -q '^CONFIG_PVH=y' "$dir/config"; } || return 1
	# entries made before there was a suite file are host ones
	case "$SERIES" in
	[7-9].*) [ -x "$dir/userland/usr/sbin/ss" ] || return 1 ;;
	esac
	case "$HEADERS" in
	host:*)	[ "$kver" = "$KVER" ] ;;
	*)	[ -f "$dir/suite" ] ;;
	esac
}

# Unpack the ELF vmlinux from a bzImage (what scripts/extract-vmlinux
# does): find the compressed payload by its magic and decompress it.
extract_vmlinux()
{
	local bz=$1 out=$2 magic tool off

	for magic in "$(printf '\3757zXZ'):xz" \
		     "$(printf '\050\265\057\375'):zstd" \
		     "$(printf '\037\213\010'):gzip"; do
		tool=${magic##*:}
		command -v "$tool" >/dev/null 2>&1 || continue
		for off in $(LC_ALL=C grep -abFo "${magic%:*}" "$bz" |
			     cut -d: -f1 | head -n 5); do
			tail -c +$((off + 1)) "$bz" | "$tool" -dc >"$out" 2>/dev/null
			if [ "$(head -c 4 "$out" | od -An -c | tr -d ' ')" = '177ELF' ]; then
				return 0
			fi
		done
	done
	rm -f "$out"
	return 1
}

# deb-6.1/deb-6.12: the image matching the installed headers, through the
# system's apt (it is the system's own suite).
download_host_image()
{
	local pkg

	mkdir -p "$TMP/deb"
	chown _apt "$TMP/deb" 2>/dev/null || true
	# Prefer the signed image; the -unsigned one has the same content.
	for pkg in "linux-image-$KVER" "linux-image-$KVER-unsigned"; do
		log "apt-get download $pkg=$VERSION"
		if (cd "$TMP/deb" && apt-get download -q "$pkg=$VERSION" >&2); then
			return 0
		fi
	done
	die "cannot download linux-image-$KVER=$VERSION (try: apt-get update)"
}

# The packages making up the kernel and its headers in SUITE.
archive_packages()
{
	local image=linux-image-$KVER dep split=0

	echo "linux-headers-$KVER=$VERSION"
	for dep in $("$ARCHIVE" depends "$SUITE" "linux-headers-$KVER"); do
		case "$dep" in
		linux-headers-*-common|linux-kbuild-*) echo "$dep=$VERSION" ;;
		esac
	done
	# 7.x: the image package is a meta package for the binary, the
	# modules and linux-base (config, System.map, modules.builtin).
	for dep in $("$ARCHIVE" depends "$SUITE" "$image"); do
		case "$dep" in
		linux-binary-*|linux-modules-*|linux-base-*-amd64)
			echo "$dep=$VERSION"
			split=1
			;;
		esac
	done
	if [ $split -eq 0 ]; then
		[ -n "$("$ARCHIVE" version "$SUITE" "$image")" ] ||
			image=$image-unsigned
		echo "$image=$VERSION"
	fi
}

download_archive()
{
	local pkgs

	pkgs=$(archive_packages)
	log "downloading from $SUITE: $(tr '\n' ' ' <<<"$pkgs")"
	# shellcheck disable=SC2086 # package names have no blanks
	"$ARCHIVE" download "$SUITE" "$TMP/deb" $pkgs
}

# pick_in ROOT PATH...: the first of the PATHs (relative to ROOT) that
# exists.
pick_in()
{
	local root=$1 f

	shift
	for f in "$@"; do
		if [ -e "$root/$f" ]; then
			echo "$root/$f"
			return 0
		fi
	done
	return 1
}

# First existing path of the candidates in the unpacked packages.
pick()
{
	pick_in "$TMP/x" "$@"
}

# Headers in the cache: the flavour Makefile includes the -common tree by
# absolute path; point it (and KBUILD_OUTPUT, 7.x) at the cache instead.
# The kbuild symlinks (scripts, tools) are relative and keep working.
install_headers()
{
	local new=$1 dest=$2 hdr f

	mkdir -p "$new/headers/usr/src" "$new/headers/usr/lib"
	mv "$TMP/x/usr/src/"* "$new/headers/usr/src/"
	for f in "$TMP/x/usr/lib/"linux-kbuild-*; do
		mv "$f" "$new/headers/usr/lib/"
	done
	hdr=$new/headers/usr/src/linux-headers-$KVER
	[ -f "$hdr/Makefile" ] || die "linux-headers-$KVER has no Makefile"
	sed -i "s|/usr/src/|$dest/headers/usr/src/|g" "$hdr/Makefile"
	ln -s "headers/usr/src/linux-headers-$KVER" "$new/build"
}

# 7.x guests get the suite's ip, tc, ss and nstat (bookworm's ss cannot
# show AccECN), with their own libraries and loader under /opt/SUITE: the
# guest keeps the host's libc for everything else.  Taken from the
# toolchain chroot, which has iproute2 for this.
install_userland()
{
	local new=$1 root cc bin src lib libs opt=/opt/$SUITE

	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$new/build/.config")
	root=$("$CHROOT" path "$(toolchain_suite)" "${cc##*-linux-gnu-}")
	mkdir -p "$new/userland$opt/bin" "$new/userland$opt/lib" \
		 "$new/userland/usr/sbin"
	for bin in ip tc ss nstat; do
		src=$(pick_in "$root" "usr/sbin/$bin" "usr/bin/$bin") ||
			die "$bin missing in $root: iproute2 not in the chroot?"
		cp -L "$src" "$new/userland$opt/bin/"
		libs=$("$root/usr/lib64/ld-linux-x86-64.so.2" --library-path \
			"$root/usr/lib/x86_64-linux-gnu" --list "$src")
		libs=$(awk '$2 == "=>" && $3 ~ /^\// { print $3 }' <<<"$libs")
		for lib in $libs; do
			cp -L "$lib" "$new/userland$opt/lib/"
		done
		printf '#!/bin/sh\n# %s from %s (vm-run.sh overlay of fetch-kernel.sh)\nexec %s/lib/ld-linux-x86-64.so.2 --library-path %s/lib %s/bin/%s "$@"\n' \
			"$bin" "$SUITE" "$opt" "$opt" "$opt" "$bin" \
			>"$new/userland/usr/sbin/$bin"
		chmod 755 "$new/userland/usr/sbin/$bin"
	done
	cp -L "$root/usr/lib64/ld-linux-x86-64.so.2" "$new/userland$opt/lib/"
}

# The release whose compiler built this kernel (what build-module.sh uses).
toolchain_suite()
{
	case "$SUITE" in
	experimental)	echo sid ;;
	*-security|*-backports|*-updates) echo "${SUITE%-*}" ;;
	*)		echo "$SUITE" ;;
	esac
}

populate()
{
	local dest=$1 new deb vmlinuz config map moddir

	TMP=$(mktemp -d "${TMPDIR:-/tmp}/fetch-kernel.XXXXXX")
	# apt's _apt sandbox user must reach the download dir
	chmod 755 "$TMP"
	mkdir -p "$TMP/x"
	case "$HEADERS" in
	host:*)	download_host_image ;;
	*)	download_archive ;;
	esac
	for deb in "$TMP"/deb/*.deb; do
		dpkg-deb -x "$deb" "$TMP/x"
	done

	vmlinuz=$(pick "boot/vmlinuz-$KVER" "usr/lib/modules/$KVER/vmlinuz") ||
		die "no vmlinuz for $KVER in the packages"
	config=$(pick "boot/config-$KVER" "usr/lib/modules/$KVER/config") ||
		die "no config for $KVER in the packages"
	moddir=$(pick "lib/modules/$KVER" "usr/lib/modules/$KVER") ||
		die "no modules for $KVER in the packages"
	map=$(pick "boot/System.map-$KVER" "usr/lib/modules/$KVER/System.map") || true

	new=$(mktemp -d "$CACHE/kernels/.new-$NAME.XXXXXX")
	mv "$vmlinuz" "$new/vmlinuz"
	cp "$config" "$new/config"
	if grep -q '^CONFIG_PVH=y' "$new/config"; then
		extract_vmlinux "$new/vmlinuz" "$new/vmlinux" ||
			log "could not extract vmlinux; vm-run.sh will boot vmlinuz"
	fi
	[ -z "$map" ] || cp "$map" "$new/System.map"
	echo "$KVER" >"$new/kver"
	echo "$SUITE" >"$new/suite"
	printf '%s\n' "$VERSION" >"$new/deb-version"
	mkdir -p "$new/modules/lib/modules"
	mv "$moddir" "$new/modules/lib/modules/$KVER"
	# the package's build/source links point at the headers; keep ours
	rm -f "$new/modules/lib/modules/$KVER/build" \
	      "$new/modules/lib/modules/$KVER/source"
	depmod -b "$new/modules" "$KVER"
	case "$HEADERS" in
	host:*)	ln -s "/usr/src/linux-headers-$KVER" "$new/build" ;;
	*)	install_headers "$new" "$dest" ;;
	esac
	case "$SERIES" in
	[7-9].*) install_userland "$new" ;;
	esac
	chmod 755 "$new"

	if [ -e "$dest" ]; then
		mv "$dest" "$new.old"
		mv "$new" "$dest"
		rm -rf "$new.old"
	else
		mv "$new" "$dest"
	fi
}

main()
{
	local dest t0

	if [ "${1:-}" = --list ]; then
		echo "$KERNELS" | tr '|' ' '
		return 0
	fi
	if [ "${1:-}" = --refresh ]; then
		REFRESH=1
		shift
	fi
	[ $# -eq 1 ] || usage
	NAME=$1
	lookup "$NAME"
	need dpkg-deb dpkg
	need apt-get apt
	need depmod kmod
	need flock util-linux

	dest=$CACHE/kernels/$NAME
	mkdir -p "$CACHE/kernels"
	case "$HEADERS" in
	host:*) find_headers ;;
	esac

	if [ $REFRESH -eq 1 ] || ! entry_ok "$dest"; then
		exec {LOCKFD}>"$CACHE/kernels/.$NAME.lock"
		flock "$LOCKFD"
		if [ $REFRESH -eq 1 ] || ! entry_ok "$dest"; then
			[ -n "$KVER" ] || find_headers
			if [ $REFRESH -eq 1 ] && entry_ok "$dest" &&
			   [ "$(cat "$dest/deb-version")" = "$VERSION" ]; then
				log "$NAME: $KVER ($VERSION) is still the newest in $SUITE"
			else
				t0=$(date +%s)
				populate "$dest"
				log "$NAME: $KVER ($VERSION) from $SUITE ready in $(($(date +%s) - t0)) s"
			fi
		fi
		flock -u "$LOCKFD"
	fi
	echo "$dest"
}

main "$@"
