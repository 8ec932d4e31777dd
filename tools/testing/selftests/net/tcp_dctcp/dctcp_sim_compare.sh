#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The scenarios tools/testing/dctcp/compare_intree.sh compares between our
# tcp_dctcp and the in-tree one built from the same kernel source: it
# boots User-Mode Linux on simulated time twice (DCTCP_IMPL=ours, then
# intree), runs this script in each and compares the "# figure:" lines.
# On its own it checks that each scenario ran as described.
#
#   red:    snd ---- rtr [tbf 1gbit -> red ecn K = 30000 B] ----> rcv
#           two dctcp flows for 2 s, ACKs delayed 0.1 ms (as dctcp_sim_queue.sh)
#   sparse: snd -[netem: CE on 1% of the packets]- rtr [tbf 1gbit -> pfifo] - rcv
#           one dctcp flow paced at 500 Mbit/s (43 packets per 1 ms RTT)
#           for 2 s, g = 1/1024, alpha_on_init = 10 (what the marks give)
#
# Both report the flows' mean alpha (TCP_CC_INFO, sampled about once per
# RTT) beside a float EWMA with the same g of the marked fraction each
# sample interval saw (TCP_INFO delivered_ce / delivered), see
# dctcp_sim.awk: the float model of the marks the module was given.  In
# "sparse" each RTT carries about 0.43 marks: a 10-bit alpha that drops
# what it cannot shift (mainline) stays at 0 where the EWMA averages 10.

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
source "$(dirname "$0")/dctcp_sim_lib.sh"
trap lib_cleanup EXIT

test_red()
{
	local out=$TMPD/red f

	topo_setup
	bottleneck_red 30000
	ack_delay 0.1
	sim_server dctcp
	sim_flows "$out" -c dctcp -P 2 -t 2 -I 350
	check_flows "$out" dctcp 1
	f=$(sim_stats "$out" 500000 2000000 "$(param_get dctcp_shift_g)")
	figure "compare_red impl=$DCTCP_IMPL shift_g=$(param_get dctcp_shift_g) $f"
	(( $(fig "$f" marks) > 0 )) || fail "RED marked nothing"
	within "$(fig "$f" util)" 0.95 1.01 || fail "utilisation $(fig "$f" util)"
}

test_sparse()
{
	local out=$TMPD/sparse f

	param_set dctcp_shift_g 10
	param_set dctcp_alpha_on_init 10
	topo_setup
	bottleneck_fifo
	ack_delay 1
	data_netem loss 1% ecn
	sim_server dctcp
	sim_flows "$out" -c dctcp -t 2 -M 62500000 -I 1000
	check_flows "$out" dctcp 1
	f=$(sim_stats "$out" 0 2000000 10)
	figure "compare_sparse impl=$DCTCP_IMPL shift_g=10 $f"
	(( $(awk '$1 == "sample"' "$out" | tail -n 1 | sed 's/.*delivered_ce=\([0-9]*\).*/\1/') > 0 )) ||
		fail "no CE-marked packet delivered"
}

main()
{
	require_sim
	require_dctcp
	ktap_header 2

	run_test "red: 2 dctcp flows, 1 Gbit/s, K=30000: figures for the comparison" test_red
	run_test "sparse: 1% CE marks, g=1/1024: figures for the comparison" test_sparse
	ktap_finish
}

main "$@"
