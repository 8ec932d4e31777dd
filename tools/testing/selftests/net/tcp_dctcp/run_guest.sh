#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of run_vm.sh: run every test script of the suite (or the ones
# named), stream their TAP, and end with a kmemleak scan when the kernel
# has kmemleak.  Exit status 0 only if no script failed.
#
#   run_guest.sh [SCRIPT...]

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
SCRIPTS=(dctcp_module.sh dctcp_select.sh dctcp_marking.sh dctcp_alpha.sh
	 dctcp_queue.sh dctcp_lifecycle.sh dctcp_accecn.sh)
KMEMLEAK=/sys/kernel/debug/kmemleak
SCRIPT_TIMEOUT=${SCRIPT_TIMEOUT:-$(sed -n 's/^timeout=//p' "$HERE/settings")}

# kmemleak only reports objects that stayed unreferenced across two scans
# at least min_age (5 s) apart.  Prints one TAP line.
kmemleak_check()
{
	local leaks

	if [[ ! -w $KMEMLEAK ]]; then
		echo "# no kmemleak in this kernel"
		return 0
	fi
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

main()
{
	local scripts=("$@") s rc failed=0 start log=/tmp/run_guest.log

	(( ${#scripts[@]} )) || scripts=("${SCRIPTS[@]}")
	echo "# tcp_dctcp selftests on $(uname -r): impl=${DCTCP_IMPL:-ours} rate=${RATE:-default} CI=${CI:-}"
	for s in "${scripts[@]}"; do
		start=$SECONDS
		echo "# ---- $s"
		timeout -s KILL "$SCRIPT_TIMEOUT" "$HERE/$s" 2>&1 | tee "$log"
		rc=${PIPESTATUS[0]}
		echo "# ---- $s: exit $rc, $((SECONDS - start)) s"
		case $rc in
		0|4) ;;
		*)
			failed=1
			# crashed, timed out or died before reporting: say so
			if ! grep -qE '^not ok [0-9]+' "$log"; then
				echo "1..1"
				echo "not ok 1 - $s exited $rc without reporting a failure (timeout ${SCRIPT_TIMEOUT}s)"
			fi
			;;
		esac
	done
	echo "# ---- kmemleak"
	kmemleak_check || failed=1
	return $failed
}

main "$@"
