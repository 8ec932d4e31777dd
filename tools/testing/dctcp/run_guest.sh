#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of run_vm.sh: run the named test scripts of the tcp_dctcp
# suite (installed beside this file), stream their TAP, and end with a
# kmemleak scan when the kernel has kmemleak.  Exit status 0 only if every
# script passed.
#
#   run_guest.sh SCRIPT...
#
# Each script runs under SCRIPT_TIMEOUT seconds (default: the suite's
# `settings`), ended with SIGTERM so that its cleanup runs, SIGKILL 15 s
# later.  A script that exits non-zero without a failed test, or whose
# results do not match its plan, gets a failed TAP block of its own.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
KMEMLEAK=/sys/kernel/debug/kmemleak
SCRIPT_TIMEOUT=${SCRIPT_TIMEOUT:-$(sed -n 's/^timeout=//p' "$HERE/settings")}

# kmemleak only reports objects that stayed unreferenced across two scans
# at least min_age (5 s) apart.  Prints one TAP block.
kmemleak_check()
{
	local leaks

	echo "TAP version 13"
	echo "1..1"
	echo scan > "$KMEMLEAK"
	for _ in 1 2 3 4 5 6; do
		sleep 1		# let objects age past kmemleak's min_age
	done
	echo scan > "$KMEMLEAK"
	leaks=$(cat "$KMEMLEAK")
	if [[ -n $leaks ]]; then
		echo "$leaks" | sed 's/^/# /' | head -n 80
		echo "not ok 1 - kmemleak: no unreferenced objects"
		return 1
	fi
	echo "ok 1 - kmemleak: no unreferenced objects"
}

# tap_verdict LOG RC: why a script's run does not count as a pass on its
# own TAP, or nothing.
tap_verdict()
{
	local log=$1 rc=$2 plan results

	plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$log" | tail -n 1)
	results=$(grep -cE '^(not )?ok [0-9]+' "$log")
	if [[ -z $plan ]]; then
		echo "printed no TAP plan (exit $rc)"
	elif (( results != plan )); then
		echo "planned $plan tests, reported $results (exit $rc)"
	elif (( rc != 0 && rc != 4 )) && ! grep -qE '^not ok [0-9]+' "$log"; then
		echo "exited $rc without reporting a failure"
	fi
}

main()
{
	local s rc failed=0 start log=/tmp/run_guest.log why

	if (( $# == 0 )); then
		echo "usage: $0 SCRIPT..." >&2
		return 2
	fi
	echo "# tcp_dctcp selftests on $(uname -r): impl=${DCTCP_IMPL:-ours} rate=${RATE:-default} CI=${CI:-} timeout=${SCRIPT_TIMEOUT}s/script"
	# Only what the tests leave behind counts: forget what boot left.
	if [[ -w $KMEMLEAK ]]; then
		echo clear > "$KMEMLEAK"
	fi
	for s in "$@"; do
		start=$SECONDS
		echo "# ---- $s"
		timeout -k 15 "$SCRIPT_TIMEOUT" "$HERE/$s" 2>&1 | tee "$log"
		rc=${PIPESTATUS[0]}
		echo "# ---- $s: exit $rc, $((SECONDS - start)) s"
		(( rc == 124 )) && echo "# $s: killed after ${SCRIPT_TIMEOUT}s"
		why=$(tap_verdict "$log" "$rc")
		if [[ -n $why ]]; then
			echo "TAP version 13"
			echo "1..1"
			echo "not ok 1 - $s $why"
		fi
		if [[ -n $why ]] || (( rc != 0 && rc != 4 )); then
			failed=1
		fi
	done
	if [[ -w $KMEMLEAK ]]; then
		echo "# ---- kmemleak"
		kmemleak_check || failed=1
	else
		echo "# no kmemleak in this kernel"
	fi
	return $failed
}

main "$@"
