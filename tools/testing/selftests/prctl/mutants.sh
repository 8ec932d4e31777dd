#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Can the PR_SET_MM_MAP tests fail?  Build kernels from deliberately broken
# copies of prctl_mm_map.patch (one rule changed each) and check that the
# selftest or the fuzzer notices every one of them.  One TAP line per
# mutant: "ok" means the mutant was caught.
#
#   mutants.sh [MUTANT...]      (default: all of them)
#
# Each mutant is an incremental rebuild of the cached base tree (about half
# a minute) plus one VM boot.  The mutant kernels are removed afterwards.
# Not part of make check: run it after changing the tests or the patch.
set -eu

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOP="$(cd "$HERE/../../../.." && pwd)"
readonly HERE TOP
readonly KTOOLS="$TOP/tools/testing/kernel"
readonly CACHE="${DCTCP_CACHE:-/var/cache/dctcp-oot}"
WORK=""
N=0
FAILED=0

# name|sed expression applied to the patch|what it breaks
readonly MUTANTS=(
	"data-strict|s/^+	    map->start_data > map->end_data ||/+	    map->start_data >= map->end_data ||/|3.18's start_data < end_data"
	"no-rlimit|s/^+	if (check_data_rlimit(rlimit(RLIMIT_DATA), map->brk, map->start_brk,/+	if (0 \&\& check_data_rlimit(rlimit(RLIMIT_DATA), map->brk, map->start_brk,/|RLIMIT_DATA ignored"
	"range-off-by-one|s/^+		if (addrs\[i\] < mmap_min_addr || addrs\[i\] >= TASK_SIZE)/+		if (addrs[i] < mmap_min_addr || addrs[i] > TASK_SIZE)/|TASK_SIZE itself accepted"
	"auxv-bound|s/^+		if (!map.auxv || map.auxv_size > sizeof(mm->saved_auxv))/+		if (!map.auxv || map.auxv_size >= sizeof(mm->saved_auxv))/|a full-size auxv refused"
	"exe-einval|s/^+			return -EPERM;/+			return -EINVAL;/|3.18's EINVAL for exe_fd"
)

cleanup() {
	[ -z "$WORK" ] || rm -rf "$WORK"
}
trap cleanup EXIT

build_tests() {
	local ksft
	ksft="$("$KTOOLS/unpack-source.sh")/tools/testing/selftests"
	mkdir -p "$WORK/bin"
	make -s -C "$HERE" KSFT_DIR="$ksft" OUTPUT="$WORK/bin" \
		"$WORK/bin/set_mm_map_test" "$WORK/bin/set_mm_map_fuzz" >&2
}

run_mutant() {
	local name="$1" expr="$2" what="$3" patch kdir out

	patch="$WORK/prctl_mm_map-$name.patch"
	sed "$expr" "$TOP/prctl_mm_map.patch" >"$patch"
	if cmp -s "$patch" "$TOP/prctl_mm_map.patch"; then
		N=$((N + 1)); FAILED=1
		echo "not ok $N - mutant $name: the sed expression no longer matches the patch"
		return
	fi
	if ! kdir=$("$KTOOLS/build-kernel.sh" --name "prctl-mutant-$name" \
			--fragment "$KTOOLS/base.config" \
			--fragment "$KTOOLS/criu.config" \
			--prep "$KTOOLS/prep-base.sh" --patch "$patch" 2>"$WORK/build.log"); then
		N=$((N + 1)); FAILED=1
		echo "not ok $N - mutant $name: kernel build failed"
		tail -n 20 "$WORK/build.log" | sed 's/^/# /'
		return
	fi
	out="$WORK/$name.out"
	"$TOP/tools/testing/qemu/vm-run.sh" --kernel "$kdir" --timeout 600 \
		--overlay "$WORK/overlay" -- \
		'/opt/prctl/set_mm_map_test; echo "selftest rc=$?"; /opt/prctl/set_mm_map_fuzz -n 2000; echo "fuzz rc=$?"' \
		>"$out" 2>&1 || true
	rm -rf "$kdir" "$CACHE/kernels/.$(basename "$kdir").lock"
	N=$((N + 1))
	if grep -q "^selftest rc=0" "$out" && grep -q "^fuzz rc=0" "$out"; then
		FAILED=1
		echo "not ok $N - mutant $name ($what) went unnoticed"
	elif grep -qE "^(selftest|fuzz) rc=" "$out"; then
		echo "ok $N - mutant $name ($what) caught"
	else
		FAILED=1
		echo "not ok $N - mutant $name: the VM did not run the tests"
	fi
	grep -E "^not ok|^(selftest|fuzz) rc=" "$out" | sed 's/^/# /'
}

main() {
	local m name rest

	WORK=$(mktemp -d /tmp/prctl-mutants.XXXXXX)
	build_tests
	mkdir -p "$WORK/overlay/opt"
	cp -a "$WORK/bin" "$WORK/overlay/opt/prctl"
	echo "TAP version 13"
	for m in "${MUTANTS[@]}"; do
		name="${m%%|*}"
		rest="${m#*|}"
		if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
			continue
		fi
		run_mutant "$name" "${rest%|*}" "${rest##*|}"
	done
	echo "1..$N"
	exit "$FAILED"
}

main "$@"
