#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch and build everything the test suites boot, before any of them runs.
#
#   tools/testing/prepare.sh
#
# Two lanes run side by side, so that a cold run's downloads overlap its
# compiles: Debian's kernels (package downloads, the debootstrap chroot of
# each release's compiler, tcp_dctcp.ko built with it) in one, the kernels
# built here from linux-source-6.1 (debug, User-Mode Linux, the
# PR_SET_MM_MAP base and patched kernels) in the other.  Everything is
# cached by content hash (tools/testing/qemu/README.md), so a warm run
# only checks the cache.  One TAP line per artifact, with the seconds it
# took; a failed one shows the end of its output.
set -eu
shopt -s inherit_errexit

TOP=$(cd "$(dirname "$0")/../.." && pwd)
readonly TOP
readonly RUN_VM=$TOP/tools/testing/dctcp/run_vm.sh
readonly PRCTL=$TOP/tools/testing/prctl/run_all.sh
OUT=

cleanup()
{
	[[ -z $OUT ]] || rm -rf "$OUT"
}
trap cleanup EXIT

# item LANE WHAT CMD...: run CMD, record "rc|seconds|WHAT" for LANE.
item()
{
	local lane=$1 what=$2 start=$SECONDS rc=0

	shift 2
	"$@" > "$OUT/$lane.out" 2>&1 || rc=$?
	if (( rc )); then
		tail -n 20 "$OUT/$lane.out" | sed 's/^/# /' >> "$OUT/$lane.fail"
	fi
	echo "$rc|$((SECONDS - start))|$what" >> "$OUT/$lane.res"
	echo "# prepare: $what: exit $rc after $((SECONDS - start)) s" >&2
}

lane_debian()
{
	local k

	for k in $("$TOP/tools/testing/qemu/fetch-kernel.sh" --list | cut -d' ' -f1); do
		item debian "$k: Debian's kernel, tcp_dctcp.ko built with its compiler" \
			"$RUN_VM" --prepare "$k"
	done
}

lane_custom()
{
	item custom "debug kernel (KASAN, lockdep, kmemleak), tcp_dctcp.ko" \
		"$RUN_VM" --prepare debug
	item custom "User-Mode Linux time-travel kernel, tcp_dctcp.ko" \
		"$RUN_VM" --prepare uml
	item custom "PR_SET_MM_MAP base and patched kernels, Debian kernels for it" "$PRCTL" -p
}

main()
{
	local lanes=(debian custom) pid lane n=0 rc secs what failed=0

	OUT=$(mktemp -d /tmp/dctcp-prepare.XXXXXX)
	lane_debian &
	pid=$!
	lane_custom
	wait "$pid" || true

	echo "TAP version 13"
	echo "1..$(cat "$OUT"/*.res | wc -l)"
	for lane in "${lanes[@]}"; do
		[[ -f $OUT/$lane.res ]] || { failed=1; echo "# lane $lane recorded nothing"; continue; }
		[[ ! -f $OUT/$lane.fail ]] || cat "$OUT/$lane.fail"
		while IFS='|' read -r rc secs what; do
			n=$((n + 1))
			if (( rc )); then
				failed=1
				echo "not ok $n - $what (exit $rc, $secs s)"
			else
				echo "ok $n - $what ($secs s)"
			fi
		done < "$OUT/$lane.res"
	done
	return "$failed"
}

main "$@"
