#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build a test-only kernel module directory (a Kbuild with obj-m) against
# one cached kernel and print the path of each .ko it makes.
#
#   tools/testing/dctcp/build-testmod.sh KERNEL_DIR MODULE_SRC_DIR
#
# KERNEL_DIR is a kernel directory in the cache layout (kver, build/), e.g.
# the output of tools/testing/qemu/fetch-kernel.sh. The build runs with W=1
# in $CACHE/modbuild/<kver>/<name>-<hash>/, <hash> covering the sources and
# the kernel tree; a finished directory is reused and never modified.
# Build output goes to stderr. Exit status 0 ok, 1 build failed, 2 usage.
set -eu

readonly CACHE="${DCTCP_CACHE:-/var/cache/dctcp-oot}"
tmp_dir=""

cleanup()
{
	[[ -z $tmp_dir ]] || rm -rf "$tmp_dir"
}
trap cleanup EXIT

die()
{
	local status=$1

	shift
	echo "build-testmod.sh: $*" >&2
	exit "$status"
}

source_hash()
{
	local kdir=$1 kver=$2 src=$3

	{
		echo "$kver $(readlink -f "$kdir")"
		stat -c '%n %s %Y' "$kdir/Module.symvers" 2>/dev/null || true
		(cd "$src" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
	} | sha256sum | cut -c1-16
}

main()
{
	local kernel_dir=${1:-} src=${2:-} kdir kver name out

	[[ $# -eq 2 ]] || { sed -n '4,13s/^# \{0,1\}//p' "$0" >&2; exit 2; }
	command -v make > /dev/null || die 2 "make missing: apt-get install build-essential"
	[[ -r $kernel_dir/kver ]] || die 2 "$kernel_dir/kver missing: not a kernel dir"
	[[ -f $src/Kbuild ]] || die 2 "$src/Kbuild missing: not a module source dir"
	kver=$(cat "$kernel_dir/kver")
	kdir=$kernel_dir/build
	[[ -e $kdir/Makefile ]] || die 2 "$kdir/Makefile missing: no build tree for $kver"
	name=$(basename "$(cd "$src" && pwd)")
	out=$CACHE/modbuild/$kver/$name-$(source_hash "$kdir" "$kver" "$src")

	if ! compgen -G "$out/*.ko" > /dev/null; then
		mkdir -p "$CACHE/modbuild/$kver"
		tmp_dir=$(mktemp -d "$CACHE/modbuild/$kver/.$name.XXXXXX")
		cp -r "$src/." "$tmp_dir/"
		if ! make -C "$kdir" M="$tmp_dir" W=1 modules >&2; then
			die 1 "$name: build against $kdir failed"
		fi
		chmod 755 "$tmp_dir"
		# a parallel identical build may have won: same content
		mv -T "$tmp_dir" "$out" 2>/dev/null && tmp_dir=""
		find "$CACHE/modbuild/$kver" -mindepth 1 -maxdepth 1 -type d \
			-name "$name-????????????????" -mtime +7 -exec rm -rf {} +
	fi
	touch "$out"
	ls "$out"/*.ko
}

main "$@"
