#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build tcp_dctcp.ko for one cached kernel, in a private copy of the sources.
#
#   tools/testing/build-module.sh [--werror] KERNEL_DIR
#
# KERNEL_DIR is a kernel directory in the cache layout ($CACHE/kernels/<name>,
# with kver and build/). The module is built with W=1 in
# $CACHE/modbuild/<kver>/<hash>/, where <hash> covers the sources and the
# kernel tree, and its path is printed on stdout; build output goes to
# stderr. A finished build directory is never modified again: a caller
# holding its path (a test run, a parallel build of other sources from
# another checkout) cannot see its .ko swapped underneath it.
#
#   --werror   fail if the compiler printed any warning
#
# Exit status: 0 ok, 1 build failed or wrong vermagic, 2 usage/missing tools.
set -eu

SRC_DIR="$(cd "$(dirname "$0")/../.." && pwd)"
readonly SRC_DIR
readonly CACHE="${DCTCP_CACHE:-/var/cache/dctcp-oot}"
readonly SOURCES=(Kbuild tcp_dctcp.c include)

tmp_dir=""
werror=0

cleanup()
{
	if [[ -n "$tmp_dir" ]]; then
		rm -rf "$tmp_dir"
	fi
}
trap cleanup EXIT

die()
{
	local status="$1"

	shift
	echo "build-module.sh: $*" >&2
	exit "$status"
}

usage()
{
	sed -n 's/^# \{0,1\}//; 4,15p' "$0" >&2
	exit 2
}

need()
{
	command -v "$1" >/dev/null || die 2 "$1 missing: apt-get install $2"
}

# Everything that should trigger a rebuild when it changes.
source_hash()
{
	local kdir="$1" kver="$2"

	{
		echo "$kver $(readlink -f "$kdir")"
		stat -c '%n %s %Y' "$kdir/Module.symvers" "$kdir/include/generated/utsrelease.h" 2>/dev/null || true
		(cd "$SRC_DIR" && find "${SOURCES[@]}" -type f -print0 | sort -z | xargs -0 sha256sum)
	} | sha256sum | cut -d' ' -f1
}

check_vermagic()
{
	local ko="$1" kver="$2" vermagic

	vermagic="$(modinfo -F vermagic "$ko")"
	[[ "${vermagic%% *}" == "$kver" ]] ||
		die 1 "$ko has vermagic '$vermagic', expected kernel $kver"
}

build()
{
	local kdir="$1" dir="$2" log="$2/build.log" arch=()

	# A User-Mode Linux tree (tools/testing/uml/build-uml.sh) is built,
	# and so must be used, with ARCH=um.
	if grep -qx 'CONFIG_UML=y' "$kdir/.config" 2>/dev/null; then
		arch=(ARCH=um)
	fi
	(cd "$SRC_DIR" && cp -r "${SOURCES[@]}" "$dir/")
	if ! make -C "$kdir" "${arch[@]}" M="$dir" W=1 modules >"$log" 2>&1; then
		cat "$log" >&2
		die 1 "build against $kdir failed"
	fi
	cat "$log" >&2
	if grep -q 'warning:' "$log"; then
		if ((werror)); then
			die 1 "compiler warnings (--werror)"
		fi
		echo "build-module.sh: WARNING: the build printed warnings" >&2
	fi
}

main()
{
	local kernel_dir kdir kver out hash

	if [[ "${1:-}" == "--werror" ]]; then
		werror=1
		shift
	fi
	[[ $# -eq 1 ]] || usage
	kernel_dir="$1"

	need make build-essential
	need modinfo kmod

	[[ -r "$kernel_dir/kver" ]] || die 2 "$kernel_dir/kver missing: not a kernel dir (see tools/testing/qemu/fetch-kernel.sh)"
	kver="$(cat "$kernel_dir/kver")"
	kdir="$kernel_dir/build"
	[[ -e "$kdir/Makefile" ]] || die 2 "$kdir/Makefile missing: no kernel build tree for $kver"
	[[ -e "$kdir/Module.symvers" ]] || die 2 "$kdir/Module.symvers missing: $kver was built without module support?"

	hash="$(source_hash "$kdir" "$kver")"
	out="$CACHE/modbuild/$kver/${hash:0:16}"
	mkdir -p "$CACHE/modbuild/$kver"

	if [[ -f "$out/tcp_dctcp.ko" ]]; then
		echo "build-module.sh: $kver: sources unchanged, reusing $out/tcp_dctcp.ko" >&2
		if ((werror)) && grep -q 'warning:' "$out/build.log"; then
			die 1 "the cached build had compiler warnings (--werror)"
		fi
	else
		tmp_dir="$(mktemp -d "$CACHE/modbuild/$kver/.build.XXXXXX")"
		build "$kdir" "$tmp_dir"
		check_vermagic "$tmp_dir/tcp_dctcp.ko" "$kver"
		chmod 755 "$tmp_dir"
		# Two identical builds may race: the first one to finish wins,
		# the other is dropped (same hash, same content).
		if mv -T "$tmp_dir" "$out" 2>/dev/null; then
			tmp_dir=""
		fi
		# Builds of other sources are only reused by their own hash:
		# forget the ones nobody has used for a week.
		find "$CACHE/modbuild/$kver" -mindepth 1 -maxdepth 1 -type d \
			-name '????????????????' -mtime +7 -exec rm -rf {} +
	fi
	touch "$out"	# mtime = last use

	check_vermagic "$out/tcp_dctcp.ko" "$kver"
	echo "$out/tcp_dctcp.ko"
}

main "$@"
