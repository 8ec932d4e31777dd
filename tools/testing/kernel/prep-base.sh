#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn a pristine linux-source-6.1 tree into the "base" tree that
# prctl_mm_map.patch applies to: Linux 6.1 without PR_SET_MM_MAP.
#
# Upstream has carried PR_SET_MM_MAP since 3.18, and no tree that predates
# it can be built here, so the base is 6.1 with the interface taken out
# again by base-remove-mm-map.patch (next to this script; its changelog
# says exactly what it changes).  The result is then checked: no trace of
# PR_SET_MM_MAP or struct prctl_mm_map may remain in the uapi header or in
# kernel/sys.c, and the legacy single-field PR_SET_MM must still be there.
#
# Usage: prep-base.sh TREE       modify TREE in place
#        prep-base.sh --inputs   list the files this step depends on
#                                (build-kernel.sh hashes them)
set -eu

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly HERE
readonly PATCH="$HERE/base-remove-mm-map.patch"

die() { echo "prep-base: $*" >&2; exit 1; }

apply_patch() {
	local tree="$1"

	command -v patch >/dev/null || die "patch missing: apt-get install patch"
	# --fuzz=0: the patch must apply exactly, or the base is not what we
	# documented.  --dry-run first so a failure leaves the tree untouched.
	patch -d "$tree" -p1 --fuzz=0 --forward --batch --dry-run -s <"$PATCH" >/dev/null ||
		die "$PATCH does not apply cleanly to $tree"
	patch -d "$tree" -p1 --fuzz=0 --forward --batch -s --no-backup-if-mismatch <"$PATCH"
}

verify_base() {
	local tree="$1" f

	for f in include/uapi/linux/prctl.h kernel/sys.c; do
		if grep -nE 'PR_SET_MM_MAP|prctl_mm_map' "$tree/$f"; then
			die "$f still mentions PR_SET_MM_MAP"
		fi
	done
	grep -q 'case PR_SET_MM_START_BRK:' "$tree/kernel/sys.c" ||
		die "legacy PR_SET_MM lost from kernel/sys.c"
	grep -q '# define PR_SET_MM_EXE_FILE' "$tree/include/uapi/linux/prctl.h" ||
		die "legacy PR_SET_MM opcodes lost from prctl.h"
}

main() {
	[ $# -eq 1 ] || die "usage: prep-base.sh TREE | --inputs"
	if [ "$1" = --inputs ]; then
		echo "$PATCH"
		return
	fi
	[ -f "$1/kernel/sys.c" ] || die "$1 is not a kernel tree"
	apply_patch "$1"
	verify_base "$1"
	echo "prep-base: $1 is now 6.1 without PR_SET_MM_MAP" >&2
}

main "$@"
