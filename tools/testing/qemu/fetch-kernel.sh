#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-kernel.sh - make a Debian kernel bootable by vm-run.sh
#
# Usage: fetch-kernel.sh deb-6.1|deb-6.12
#
# Finds the linux-headers package installed for the requested series,
# downloads the linux-image package of exactly that version, unpacks it
# and lays it out in the shared cache:
#
#   $CACHE/kernels/<name>/vmlinuz     bootable bzImage
#   $CACHE/kernels/<name>/vmlinux     the same kernel uncompressed (ELF with
#                                     a PVH note): QEMU boots it directly,
#                                     which saves ~3.5 s of TCG decompression
#   $CACHE/kernels/<name>/kver        uname -r string
#   $CACHE/kernels/<name>/config      the kernel's .config
#   $CACHE/kernels/<name>/modules/lib/modules/<kver>/   module tree (depmod'ed)
#   $CACHE/kernels/<name>/build  ->   /usr/src/linux-headers-<kver>
#
# The entry is built in a temp dir and moved into place under flock, so
# concurrent callers never see a half-populated directory.  Prints the
# kernel directory on stdout; everything else goes to stderr.

set -eu

CACHE=${DCTCP_CACHE:-/var/cache/dctcp-oot}
NAME=
KVER=
VERSION=
TMP=
LOCKFD=

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
	echo "usage: $0 deb-6.1|deb-6.12" >&2
	exit 2
}

# The meta package that pulls in the right headers for each series.
meta_headers()
{
	case "$1" in
	deb-6.1)	echo linux-headers-amd64 ;;
	deb-6.12)	echo linux-headers-6.12-amd64 ;;
	*)		usage ;;
	esac
}

installed()
{
	[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]
}

# Resolve meta package -> linux-headers-<kver>, set KVER and VERSION.
find_headers()
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
	case "$NAME:$KVER" in
	deb-6.1:6.1.*|deb-6.12:6.12.*) ;;
	*) die "$meta points at $KVER, which is not the $NAME series" ;;
	esac
}

# Is the cache entry there and for the installed headers?
entry_ok()
{
	local dir=$1

	[ -f "$dir/vmlinuz" ] && [ -f "$dir/kver" ] &&
		[ "$(cat "$dir/kver")" = "$KVER" ] &&
		[ -f "$dir/modules/lib/modules/$KVER/modules.dep" ] &&
		[ -e "$dir/build/Makefile" ] &&
		{ [ -f "$dir/vmlinux" ] ||
		  ! grep -q '^CONFIG_PVH=y' "$dir/config"; }
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

download_image()
{
	local pkg

	# Prefer the signed image; the -unsigned one has the same content.
	for pkg in "linux-image-$KVER" "linux-image-$KVER-unsigned"; do
		log "apt-get download $pkg=$VERSION"
		if (cd "$TMP/deb" && apt-get download -q "$pkg=$VERSION" >&2); then
			return 0
		fi
	done
	die "cannot download linux-image-$KVER=$VERSION (try: apt-get update)"
}

populate()
{
	local dest=$1 new debs

	mkdir -p "$TMP/deb" "$TMP/x"
	# apt's _apt sandbox user must be able to write the download dir
	chmod 755 "$TMP"
	chown _apt "$TMP/deb" 2>/dev/null || true
	download_image
	debs=("$TMP"/deb/linux-image-*.deb)
	dpkg-deb -x "${debs[0]}" "$TMP/x"

	new=$(mktemp -d "$CACHE/kernels/.new-$NAME.XXXXXX")
	cp "$TMP/x/boot/vmlinuz-$KVER" "$new/vmlinuz"
	cp "$TMP/x/boot/config-$KVER" "$new/config"
	if grep -q '^CONFIG_PVH=y' "$new/config"; then
		extract_vmlinux "$new/vmlinuz" "$new/vmlinux" ||
			log "could not extract vmlinux; vm-run.sh will boot vmlinuz"
	fi
	[ -f "$TMP/x/boot/System.map-$KVER" ] &&
		cp "$TMP/x/boot/System.map-$KVER" "$new/System.map"
	echo "$KVER" >"$new/kver"
	mkdir -p "$new/modules/lib/modules"
	mv "$TMP/x/lib/modules/$KVER" "$new/modules/lib/modules/$KVER"
	# the package's build/source links point at the headers; keep ours
	rm -f "$new/modules/lib/modules/$KVER/build" \
	      "$new/modules/lib/modules/$KVER/source"
	depmod -b "$new/modules" "$KVER"
	ln -s "/usr/src/linux-headers-$KVER" "$new/build"
	printf '%s\n' "$VERSION" >"$new/deb-version"
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

	[ $# -eq 1 ] || usage
	NAME=$1
	need dpkg-deb dpkg
	need apt-get apt
	need depmod kmod
	need flock util-linux

	find_headers "$(meta_headers "$NAME")"
	dest=$CACHE/kernels/$NAME
	mkdir -p "$CACHE/kernels"

	if ! entry_ok "$dest"; then
		exec {LOCKFD}>"$CACHE/kernels/.$NAME.lock"
		flock "$LOCKFD"
		if ! entry_ok "$dest"; then
			t0=$(date +%s)
			TMP=$(mktemp -d "${TMPDIR:-/tmp}/fetch-kernel.XXXXXX")
			populate "$dest"
			log "$NAME: $KVER ($VERSION) ready in $(($(date +%s) - t0)) s"
		fi
		flock -u "$LOCKFD"
	fi
	echo "$dest"
}

main "$@"
