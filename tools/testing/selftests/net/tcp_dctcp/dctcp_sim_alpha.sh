#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# alpha's EWMA on simulated time (User-Mode Linux, time-travel=inf-cpu):
# its gain per RTT is g, and it decays to exactly 0 once the marks stop.
#
#   snd -[netem: CE on every packet, for a few RTTs]- rtr [tbf 1gbit -> pfifo] - rcv
#                                                           ACKs <- netem 1 ms
#
# One dctcp flow paced at 500 Mbit/s (SO_MAX_PACING_RATE: the bottleneck
# never queues, the RTT stays the 1 ms of netem), starting with
# dctcp_alpha_on_init=0.  After 50 ms (its window has grown to twice what
# the pacing needs) netem CE-marks every packet for MARK_MS (F = 1: alpha
# rises, 1024 - alpha shrinks by (1 - g) per window), then none (F = 0:
# alpha shrinks by (1 - g) per window).  alpha is read from TCP_CC_INFO
# every 250 us or so; a log-linear fit of each phase gives the gain per
# RTT (dctcp_sim_alpha.awk), which must be g within 10%, for g = 1/16
# (the default) and g = 1/64: a gain off by a factor 2 (one shift) or two
# updates per RTT fail it.
#
# Why paced, and why only a few marked RTTs: DCTCP's window of data ends
# at what was sent when the previous one closed; when the sender is ACK-
# clocked with W packets in flight that was one ACK spacing before, so the
# window lasts RTT * (1 - 2/W), and with W = 2 (every packet marked for
# long) two windows close per RTT.  A paced sender with a window larger
# than the pacing needs sent its last packet one pacing interval (24 us)
# before: windows last an RTT.  MARK_MS is short enough that the window
# never falls below what the pacing needs.
#
# The dctcp_alpha_update tracepoint shows alpha in its internal units:
# after the last marked window it must reach exactly 0 after the number of
# updates the EWMA predicts (dctcp_sim_decay.awk), one per RTT (within
# 10%), and stay there.

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
source "$(dirname "$0")/dctcp_sim_lib.sh"
trap sim_alpha_cleanup EXIT

ACK_DELAY_MS=1
PRE_SECS=0.05		# unmarked: the window grows
PACING=62500000		# bytes/s: 500 Mbit/s
TOL=0.1
declare -A MARK_SECS=([4]=0.008 [6]=0.013)	# per shift_g: alpha ~0.4, ~0.2
declare -A SECS=([4]=0.5 [6]=1.4)		# long enough to reach 0
INST=/sys/kernel/tracing/instances/dctcp_sim

sim_alpha_cleanup()
{
	set +e
	if [[ -d $INST ]]; then
		echo 0 > "$INST/events/tcp_dctcp/enable"
		rmdir "$INST"
	fi
	lib_cleanup
}

# trace_on: the sender's alpha updates (dport $PORT) in a private ring
# buffer with the monotonic clock (the only exact one on UML: the local
# clock ticks in jiffies).  Nothing if the module has no tracepoints.
trace_on()
{
	[[ -d /sys/kernel/tracing/events/tcp_dctcp ]] || return 0
	mkdir "$INST"
	echo mono > "$INST/trace_clock"
	echo 4096 > "$INST/buffer_size_kb"
	echo "dport == $PORT" > "$INST/events/tcp_dctcp/dctcp_alpha_update/filter"
	echo 1 > "$INST/events/tcp_dctcp/dctcp_alpha_update/enable"
}

# mark_then_stop SHIFT_G: the flow; its samples in $TMPD/gSHIFT_G, its
# alpha updates (if traced) in $TMPD/gSHIFT_G.trace
mark_then_stop()
{
	local out=$TMPD/g$1

	param_set dctcp_shift_g "$1"
	param_set dctcp_alpha_on_init 0
	[[ ! -d $INST ]] || : > "$INST/trace"
	flow_client_bg "$out" -B "$SIM_SNDBUF" -c dctcp -t "${SECS[$1]}" -M "$PACING" \
		-I 250 $RCV4 "$PORT"
	sleep "$PRE_SECS"	# simulated time: exact
	data_netem loss 100% ecn
	sleep "${MARK_SECS[$1]}"
	data_netem_off
	wait "$FLOW_PID" || fail "client failed: $(cat "$out.err")"
	check_flows "$out" dctcp 1
	[[ ! -d $INST ]] ||
		awk -f "$HERE/dctcp_trace.awk" "$INST/trace" | grep '^A ' > "$out.trace" || true
}

test_gain()
{
	local shift=$1 g r

	mark_then_stop "$shift"
	g=$(calc "1 / 2 ^ $shift")
	r=$(awk -f "$HERE/dctcp_flow.awk" -f "$HERE/dctcp_sim_alpha.awk" "$TMPD/g$shift")
	figure "sim_alpha_g$((1 << shift)) g=$g $r"
	diag "alpha every 2 ms or so: $(samples "$TMPD/g$shift" alpha | awk 'NR % 8 == 1' | uniq | tr '\n' ' ')"
	near "$(fig "$r" rise_g)" "$g" "$TOL" ||
		fail "rising alpha: gain $(fig "$r" rise_g) per RTT, g = $g"
	near "$(fig "$r" decay_g)" "$g" "$TOL" ||
		fail "decaying alpha: gain $(fig "$r" decay_g) per RTT, g = $g"
}

test_zero()
{
	local shift r rtt

	[[ $DCTCP_IMPL == ours ]] || not_applicable "the in-tree module has no tracepoints"
	[[ -d $INST ]] || skip_because "no tcp_dctcp trace events (tracefs)"
	for shift in 4 6; do
		[[ -s $TMPD/g$shift.trace ]] || fail "g=1/$((1 << shift)): no alpha updates traced"
		r=$(awk -f "$HERE/dctcp_sim_decay.awk" "$TMPD/g$shift.trace")
		rtt=$(fig "$(awk -f "$HERE/dctcp_flow.awk" -f "$HERE/dctcp_sim_alpha.awk" "$TMPD/g$shift")" decay_rtt_us)
		figure "sim_alpha_zero_g$((1 << shift)) $r rtt_us=$rtt"
		(( $(fig "$r" zero_at) == $(fig "$r" predicted) )) ||
			fail "g=1/$((1 << shift)): alpha reached 0 after $(fig "$r" zero_at) unmarked updates, predicted $(fig "$r" predicted)"
		(( $(fig "$r" stays_zero) )) || fail "g=1/$((1 << shift)): alpha left 0"
		near "$(fig "$r" per_update_us)" "$rtt" "$TOL" ||
			fail "g=1/$((1 << shift)): one update per $(fig "$r" per_update_us) us, RTT $rtt us"
	done
}

main()
{
	require_sim
	require_dctcp
	topo_setup
	bottleneck_fifo
	ack_delay "$ACK_DELAY_MS"
	sim_server dctcp
	trace_on
	ktap_header 3

	run_test "alpha's gain per RTT is g = 1/16 (rising under CE, decaying without)" test_gain 4
	run_test "alpha's gain per RTT is g = 1/64 (rising under CE, decaying without)" test_gain 6
	run_test "alpha decays to exactly 0, one update per RTT, once the marks stop" test_zero
	ktap_finish
}

main "$@"
