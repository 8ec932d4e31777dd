#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Convergence on simulated time (User-Mode Linux, time-travel=inf-cpu):
# flows joining and leaving reach their fair shares within a bounded
# number of RTTs.
#
#   snd ---- rtr [tbf 1gbit -> red ecn K = 30000 B] ----> rcv
#                                      ACKs <- netem 0.1 ms
#
# Flow 0 runs alone for 0.5 s, flow 1 joins for 1 s, flow 0 runs alone
# again for 0.5 s (one dctcp_flow client: -P 2 -S 500 -E 500).  Their
# goodputs are compared over consecutive windows of WIN_US
# (dctcp_sim_converge.awk):
#   - from FAIR_RTTS RTTs after flow 1 joined, every window is fair (each
#     flow within 20% of the mean of both) until it leaves, and the
#     shared period's Jain index is >= 0.99
#   - from BACK_RTTS RTTs after flow 1 left, flow 0 alone carries >= 90%
#     of the link's goodput in every window
# The RTT is the floor a DCTCP queue allows, base RTT + K/C (342 us: the
# median of 1-byte probes on the empty path, 102 us, plus 240 us), not
# the flows' own: a module that lets the queue grow must not earn itself
# a longer time unit.  Measured when the test was written: fair from
# 15 ms (44 RTTs) after the join, flow 0 back from the second window
# (5 ms, 15 RTTs) after the leave; the bounds are about twice that.

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
source "$(dirname "$0")/dctcp_sim_lib.sh"
trap lib_cleanup EXIT

K=30000
ACK_DELAY_MS=0.1
WIN_US=5000
FAIR_RTTS=100
BACK_RTTS=30
CEIL_MBIT=956.5		# 1 Gbit/s of 1514-byte frames carrying 1448 bytes

test_converge()
{
	local out=$TMPD/conv r rtt=$RTT_US

	sim_flows "$out" -c dctcp -P 2 -S 500 -E 500 -t 2 -I 500
	check_flows "$out" dctcp 1
	r=$(awk -v win_us="$WIN_US" -v tol=0.2 -v ceil_mbit="$CEIL_MBIT" -v back_frac=0.9 \
		-f "$HERE/dctcp_flow.awk" -f "$HERE/dctcp_sim_converge.awk" "$out")
	figure "sim_converge K=$K win_us=$WIN_US rtt_unit_us=$rtt $r fair_rtts=$(calc "$(fig "$r" fair_us) / $rtt") back_rtts=$(calc "$(fig "$r" back_us) / $rtt")"
	within "$(fig "$r" fair_us)" 0 $((FAIR_RTTS * rtt)) ||
		fail "not fair within $FAIR_RTTS RTTs of the join: $r"
	within "$(fig "$r" share_jain)" 0.99 1 || fail "Jain index of the shared period < 0.99: $r"
	within "$(fig "$r" back_us)" 0 $((BACK_RTTS * rtt)) ||
		fail "flow 0 did not take the link back within $BACK_RTTS RTTs: $r"
}

main()
{
	require_sim
	require_dctcp
	topo_setup
	bottleneck_red "$K"
	ack_delay "$ACK_DELAY_MS"
	sim_server dctcp
	RTT_US=$(calc "int($(base_rtt_us) + $K * 8 / $(rate_bps) * 1e6 + 0.5)")
	ktap_header 1

	run_test "a joining dctcp flow gets its fair share within $FAIR_RTTS RTTs, the link is taken back within $BACK_RTTS RTTs of its leaving" test_converge
	ktap_finish
}

main "$@"
