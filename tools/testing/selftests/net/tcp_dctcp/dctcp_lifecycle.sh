#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Module lifecycle: tcp_dctcp cannot be removed while a socket uses it and
# can once the socket is gone; $CYCLES load / connect+send / unload cycles
# leave no oops, no stale "dctcp" in tcp_available_congestion_control and
# a module reference count back at 0 each time.  Runs last: it unloads the
# module (and loads it again at the end).
#
#   snd --- rtr ---> rcv
#
# The receiver's default stays reno (a namespace default pins the module);
# its route back to the sender says "congctl dctcp", which makes accepted
# connections DCTCP with ECN without a long-lived reference.

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
trap lib_cleanup EXIT

CYCLES=${CYCLES:-50}

mod_unload()
{
	rmmod tcp_dctcp
}

refcnt_is_zero()
{
	[[ $(mod_refcnt) == 0 ]]
}

# topology whose only dctcp references are the connections' own
lifecycle_topo()
{
	RCV_CC=reno topo_setup
	ip -n "$rcv" route replace $SND4/32 via $RTR4_R congctl dctcp
	flow_server
}

not_registered()
{
	! cc_available dctcp && ! cc_available dctcp-reno && [[ ! -d $MOD ]]
}

test_busy()
{
	local out=$TMPD/hold err rc=0

	lifecycle_topo
	flow_client_bg "$out" -H -c dctcp $RCV4 "$PORT"
	busywait 10000 grep -q '^holding' "$out" || fail "no connection"
	diag "refcnt with one dctcp socket: $(mod_refcnt)"
	(( $(mod_refcnt) >= 1 )) || fail "refcnt $(mod_refcnt) with a dctcp socket open"

	err=$(mod_unload 2>&1) || rc=$?
	diag "rmmod while in use: rc=$rc: $err"
	(( rc != 0 )) || fail "rmmod succeeded under a live dctcp socket"
	dctcp_is_loaded || fail "module gone after a refused rmmod"

	kill "$FLOW_PID"
	flow_wait "$FLOW_PID" 10000 || true
	topo_reset
	busywait 10000 refcnt_is_zero || fail "refcnt stuck at $(mod_refcnt)"
	mod_unload || fail "rmmod refused after the socket closed"
	not_registered || fail "dctcp still registered after rmmod"
}

# One cycle: load, one short dctcp flow, wait for refcnt 0, unload.
cycle()
{
	local i=$1 out=$TMPD/c

	dctcp_load || fail "cycle $i: load failed"
	dctcp_is_loaded || fail "cycle $i: not the $DCTCP_IMPL module"
	flow_client "$out" -c dctcp -n 200000 $RCV4 "$PORT" ||
		fail "cycle $i: flow failed: $(cat "$out.err")"
	[[ $(client_cc "$out") == dctcp ]] || fail "cycle $i: flow was $(client_cc "$out")"
	busywait 10000 refcnt_is_zero || fail "cycle $i: refcnt stuck at $(mod_refcnt)"
	mod_unload || fail "cycle $i: rmmod failed"
	not_registered || fail "cycle $i: stale registration after rmmod"
}

test_cycles()
{
	local i oops0 oops1

	dctcp_load	# the congctl route needs the name registered once
	lifecycle_topo
	busywait 10000 refcnt_is_zero || fail "refcnt $(mod_refcnt) before the cycles"
	mod_unload
	oops0=$(dmesg | grep -cE 'BUG:|WARNING:|Oops|general protection' || true)
	for i in $(seq "$CYCLES"); do
		cycle "$i"
	done
	oops1=$(dmesg | grep -cE 'BUG:|WARNING:|Oops|general protection' || true)
	diag "$CYCLES cycles done; kernel splats before $oops0, after $oops1"
	(( oops1 == oops0 )) || { dmesg | tail -n 40 | sed 's/^/# /'; fail "kernel splat"; }
}

main()
{
	require_dctcp
	ktap_header 2

	run_test "rmmod refused while a dctcp socket exists, works after" test_busy
	run_test "$CYCLES load/flow/unload cycles: no oops, refcnt 0, no stale entry" test_cycles
	# leave the module loaded, as we found it
	dctcp_load && dctcp_is_loaded || diag "could not reload tcp_dctcp"
	ktap_finish
}

main "$@"
