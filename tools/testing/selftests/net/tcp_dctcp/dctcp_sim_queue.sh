#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Queue, latency and throughput at the DCTCP paper's scale, on simulated
# time (User-Mode Linux, time-travel=inf-cpu): every figure is exact, so
# the tolerances are tight.
#
#   snd ---- rtr [tbf 1gbit -> red ecn K = 30000 B (20 packets)] ----> rcv
#                                                    ACKs <- netem 0.1 ms
#
# Two dctcp flows for 2 s; from 0.5 s on (slow start over):
#   - the bottleneck's mean backlog is within 20% of K (sampled about
#     every ms over netlink)
#   - the median RTT of 1-byte TCP request/responses through the queue
#     (one about every ms) is within 10% of the floor base RTT + K/C,
#     the base RTT being the median of the same probes on the empty path
#   - the link is busy: the bottleneck sent >= 95% of what its rate allows
# Determinism is checked across two boots (tools/testing/dctcp/
# compare_intree.sh): a second run in the same boot, even on a network
# built afresh, is not the same scenario — its mean backlog came out
# 3-4 % lower every time (kernel state outlives the namespaces; not
# identified).

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
source "$(dirname "$0")/dctcp_sim_lib.sh"
trap lib_cleanup EXIT

K=30000
ACK_DELAY_MS=0.1
SECS=2
FROM_US=500000

# net_setup: the network, built afresh for each run; sets BASE_US
net_setup()
{
	topo_setup
	bottleneck_red "$K"
	ack_delay "$ACK_DELAY_MS"
	sim_server dctcp
	BASE_US=$(base_rtt_us)
}

# run_queue NAME: the scenario on a new network; its figures in
# $TMPD/NAME.fig
run_queue()
{
	local out=$TMPD/$1

	topo_reset
	net_setup
	sim_flows "$out" -c dctcp -P 2 -t "$SECS" -I 1000 -e 1000
	check_flows "$out" dctcp 1
	sim_stats "$out" "$FROM_US" $((SECS * 1000000)) > "$out.fig"
	figure "sim_queue_$1 K=$K base_rtt_us=$BASE_US $(cat "$out.fig")"
}

test_queue()
{
	local f floor

	run_queue run1
	f=$(cat "$TMPD/run1.fig")
	floor=$(calc "$BASE_US + $K * 8 / $(rate_bps) * 1e6")
	diag "floor base + K/C = $floor us"
	near "$(fig "$f" q_mean)" "$K" 0.2 ||
		fail "mean backlog $(fig "$f" q_mean) B not within 20% of K = $K B"
	near "$(fig "$f" rr_p50)" "$floor" 0.1 ||
		fail "RTT p50 $(fig "$f" rr_p50) us not within 10% of base + K/C = $floor us"
	within "$(fig "$f" util)" 0.95 1.01 ||
		fail "utilisation $(fig "$f" util) < 0.95"
}

main()
{
	require_sim
	require_dctcp
	# the floor's base RTT (a failure here ends the script before its
	# plan: run_guest.sh counts that as a failure)
	net_setup
	ktap_header 1
	figure "sim_queue rate=$RATE K=$K k_over_c_ms=$(k_over_c_ms) base_rtt_us=$BASE_US"

	run_test "2 dctcp flows, 1 Gbit/s, K=20 pkts: queue ~K, RTT ~base+K/C, link busy" test_queue
	ktap_finish
}

main "$@"
