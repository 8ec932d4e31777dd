#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The control law decides the outcome: a marking threshold K well below
# the bandwidth-delay product, on simulated time (User-Mode Linux,
# time-travel=inf-cpu).
#
#   snd ---- rtr [tbf 1gbit -> red ecn K = 21000 B] ----> rcv
#                                       ACKs <- netem 1 ms
#
# Base RTT 1 ms: the BDP is 125 KB, K is BDP/6.  One flow for 3 s of each
# algorithm on the same RED queue, measured from 1 s on.  DCTCP cuts its
# window by alpha/2, a few percent at a time, and keeps the link busy with
# a queue near K; Reno and CUBIC with RFC 3168 ECN cut by a half and 30%
# on every marked window and leave the link idle until their window
# exceeds the BDP again.  Measured when this test was written (1 Gbit/s,
# K = BDP/6): dctcp 100% of the link, reno-ecn 72%, cubic-ecn 73%; at
# K = BDP/12 still 100%, 68%, 70%.  A dctcp that halves on every CE-marked
# window behaves like the Reno row and fails the first check; one whose
# reduction ignores alpha (no reduction) keeps the link busy but lets the
# queue grow without bound and fails the second.
#   - dctcp: utilisation >= 95%, mean backlog <= 1.5 K, flow is dctcp+ECN
#   - reno-ecn, cubic-ecn: flows are reno/cubic with ECN, CE-marked,
#     and at least 5 points of utilisation below dctcp's

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
source "$(dirname "$0")/dctcp_sim_lib.sh"
trap lib_cleanup EXIT

K=21000
ACK_DELAY_MS=1
SECS=3
FROM_US=1000000

# run_cc CC PORT: one flow of CC to the server on PORT; figures in
# $TMPD/CC.fig
run_cc()
{
	local cc=$1 out=$TMPD/$1 PORT=$2

	sim_flows "$out" -c "$cc" -t "$SECS" -I 1000
	check_flows "$out" "$cc" 1
	sim_stats "$out" "$FROM_US" $((SECS * 1000000)) > "$out.fig"
	figure "sim_kbdp_$cc K=$K base_rtt_us=$BASE_US $(cat "$out.fig")"
}

test_dctcp()
{
	local f

	run_cc dctcp "$PORT"
	f=$(cat "$TMPD/dctcp.fig")
	(( $(fig "$f" marks) > 0 )) || fail "RED marked nothing"
	within "$(fig "$f" util)" 0.95 1.01 ||
		fail "dctcp used $(fig "$f" util) of the link with K = BDP/6"
	within "$(fig "$f" q_mean)" 0 $((K * 3 / 2)) ||
		fail "dctcp's mean backlog $(fig "$f" q_mean) B above 1.5 K"
}

# test_classic CC PORT: RFC 3168 ECN loses a share of the link
test_classic()
{
	local cc=$1 f d

	[[ -s $TMPD/dctcp.fig ]] || fail "no dctcp run to compare with"
	run_cc "$cc" "$2"
	f=$(cat "$TMPD/$cc.fig")
	d=$(fig "$(cat "$TMPD/dctcp.fig")" util)
	(( $(fig "$f" marks) > 0 )) || fail "RED marked nothing"
	within "$(fig "$f" util)" 0 "$(calc "$d - 0.05")" ||
		fail "$cc-ecn used $(fig "$f" util) of the link, dctcp $d: no loss of share"
}

main()
{
	require_sim
	require_dctcp
	# one topology, one server per algorithm (a listener accepts a
	# DCTCP sender's ECT SYN only if it is dctcp itself)
	topo_setup
	bottleneck_red "$K"
	ack_delay "$ACK_DELAY_MS"
	sim_server dctcp
	sim_server reno $((PORT + 1))
	sim_server cubic $((PORT + 2))
	BASE_US=$(base_rtt_us)
	ktap_header 3
	figure "sim_kbdp rate=$RATE K=$K base_rtt_us=$BASE_US bdp_bytes=$(calc "$(rate_bps) / 8 * $BASE_US / 1e6")"

	run_test "K = BDP/6: dctcp keeps >= 95% of the link, queue near K" test_dctcp
	run_test "K = BDP/6: reno with RFC 3168 ECN loses a share of the link" \
		test_classic reno $((PORT + 1))
	run_test "K = BDP/6: cubic with RFC 3168 ECN loses a share of the link" \
		test_classic cubic $((PORT + 2))
	ktap_finish
}

main "$@"
