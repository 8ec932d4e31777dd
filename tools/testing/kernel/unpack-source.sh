#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Unpack Debian's linux-source-6.1 tarball once into the shared cache and
# print the resulting directory.  Atomic (temp dir + mv) and serialised by
# flock, so parallel callers either wait or find the finished tree.
#
#   CACHE=${DCTCP_CACHE:-/var/cache/dctcp-oot}
#   $CACHE/src/linux-source-6.1/          pristine, read-only by convention
set -eu

readonly CACHE="${DCTCP_CACHE:-/var/cache/dctcp-oot}"
readonly TARBALL="${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}"
readonly NAME=linux-source-6.1
readonly DEST="$CACHE/src/$NAME"
TMP=""

die() { echo "unpack-source: $*" >&2; exit 1; }

cleanup() {
	[ -z "$TMP" ] || rm -rf "$TMP"
}
trap cleanup EXIT

main() {
	[ -r "$TARBALL" ] || die "$TARBALL missing: apt-get install linux-source-6.1"
	command -v xz >/dev/null || die "xz missing: apt-get install xz-utils"
	command -v flock >/dev/null || die "flock missing: apt-get install util-linux"

	mkdir -p "$CACHE/src"
	exec 9>"$CACHE/src/.$NAME.lock"
	flock 9
	if [ ! -f "$DEST/Makefile" ]; then
		TMP=$(mktemp -d "$CACHE/src/.$NAME.tmp.XXXXXX")
		tar -C "$TMP" -xJf "$TARBALL"
		[ -f "$TMP/$NAME/Makefile" ] || die "unexpected tarball layout"
		# Record what we unpacked so consumers can hash it.
		dpkg-query -W -f='${Version}\n' linux-source-6.1 \
			>"$TMP/$NAME/.debian-version" 2>/dev/null ||
			sha256sum "$TARBALL" | cut -d' ' -f1 >"$TMP/$NAME/.debian-version"
		chmod 755 "$TMP"
		mv "$TMP/$NAME" "$DEST"
	fi
	flock -u 9
	echo "$DEST"
}

main "$@"
