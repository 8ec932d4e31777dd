#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Queue control: DCTCP keeps the bottleneck queue near the marking
# threshold K, CUBIC without ECN fills a deep tail-drop buffer.
#
#   snd --- rtr [tbf $RATE -> red ecn K     ] ---> rcv   (dctcp, ECN)
#   snd --- rtr [tbf $RATE -> pfifo 1000 pkt] ---> rcv   (cubic, no ECN)
#
# Same link, one after the other in the same boot.  While each flow runs,
# the router's backlog is sampled $SAMPLES times from `tc -s qdisc` and
# $PINGS pings (ECT(0), so RED marks rather than drops them) measure the
# RTT through the queue.  Absolute numbers depend on how fast the
# emulated guest is; the assertions are ratios measured in this run:
#   - dctcp's median backlog stays within a few K
#   - cubic's median backlog is > 3x dctcp's, its median ping > 2x
#   - dctcp keeps at least 70% of cubic's throughput

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
trap lib_cleanup EXIT

PINGS=${PINGS:-25}
SAMPLES=${SAMPLES:-25}

# run_one LABEL CC: one flow; after 1 s, $PINGS pings run in the
# background while the backlog is sampled $SAMPLES times, then the flow is
# stopped (so both run while it lasts, however slow the guest).  Sets
# BACKLOG (median, bytes), PING (median, ms), MBIT, DROPS and MARKS.
run_one()
{
	local label=$1 cc=$2 out=$TMPD/$1 ping_pid

	flow_client_bg "$out" -c "$cc" -t 300 -i 100 $RCV4 "$PORT"
	wait_sample "$out" 1000 30000 "$FLOW_PID" || fail "$label: flow stalled"
	"$IP_BIN" netns exec "$snd" "$PING_BIN" -n -Q 2 -i 0.1 -c "$PINGS" -W 10 \
		$RCV4 > "$out.ping" &
	ping_pid=$!
	BG_PIDS+=("$ping_pid")
	for _ in $(seq "$SAMPLES"); do
		qdisc_stat "$rtr" rtr1 1: backlog
		sleep 0.1
	done > "$out.backlog"
	wait "$ping_pid" || true
	kill -TERM "$FLOW_PID"
	flow_wait "$FLOW_PID" 30000 || fail "$label: client failed: $(cat "$out.err")"
	grep -q "^cc $cc$" "$out" || fail "$label: not a $cc flow"

	BACKLOG=$(median < "$out.backlog")
	PING=$(sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$out.ping" | median)
	MBIT=$(done_field "$out" mbit)
	DROPS=$(bottleneck_stat drops)
	MARKS=$(bottleneck_stat marked)
}

test_queue()
{
	local base d_bl d_ping d_mbit d_drop d_mark c_bl c_ping c_mbit c_drop kc

	topo_setup
	flow_server
	base=$(ping_rtts "$snd" $RCV4 5 | median)
	kc=$(k_over_c_ms)

	bottleneck_red
	run_one dctcp dctcp
	d_bl=$BACKLOG d_ping=$PING d_mbit=$MBIT d_drop=$DROPS d_mark=$MARKS

	in_ns "$snd" sysctl -qw net.ipv4.tcp_ecn=0
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_ecn=0
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_congestion_control=cubic
	bottleneck_fifo
	run_one cubic cubic
	c_bl=$BACKLOG c_ping=$PING c_mbit=$MBIT c_drop=$DROPS

	figure "queue rate=$RATE K=$K k_over_c_ms=$kc base_ping_ms=$base"
	figure "queue_dctcp backlog=$d_bl ping_ms=$d_ping mbit=$d_mbit marked=$d_mark dropped=$d_drop"
	figure "queue_cubic backlog=$c_bl ping_ms=$c_ping mbit=$c_mbit dropped=$c_drop"
	diag "dctcp backlog: $(tr '\n' ' ' < "$TMPD/dctcp.backlog")"
	diag "dctcp ping: $(sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$TMPD/dctcp.ping" | tr '\n' ' ')"
	diag "cubic backlog: $(tr '\n' ' ' < "$TMPD/cubic.backlog")"
	diag "cubic ping: $(sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$TMPD/cubic.ping" | tr '\n' ' ')"

	# The comparison means something only if the qdisc, not the emulated
	# CPU, was the bottleneck: CUBIC on a deep FIFO fills any link the
	# guest can drive, so its throughput says whether the guest kept up.
	# DCTCP's own throughput is a result, checked against CUBIC's below.
	awk -v m="$c_mbit" -v r="$(rate_mbit)" 'BEGIN { exit !(m >= 0.7 * r) }' ||
		skip_because "guest too slow: cubic got $c_mbit Mbit/s through a $RATE bottleneck"
	awk -v b="$d_bl" -v k="$K" 'BEGIN { exit !(b <= 3 * k) }' ||
		fail "dctcp backlog median $d_bl > 3K"
	awk -v c="$c_bl" -v d="$d_bl" -v k="$K" 'BEGIN { exit !(c > 3 * d && c > 3 * k) }' ||
		fail "cubic backlog $c_bl not > 3x dctcp's $d_bl"
	awk -v c="$c_ping" -v d="$d_ping" 'BEGIN { exit !(d > 0 && c > 2 * d) }' ||
		fail "cubic ping $c_ping ms not > 2x dctcp's $d_ping ms"
	awk -v d="$d_ping" -v b="$base" -v kc="$kc" 'BEGIN { exit !(d <= b + 3 * kc + 5) }' ||
		fail "dctcp ping $d_ping ms far above base $base + K/C $kc"
	awk -v c="$c_mbit" -v d="$d_mbit" 'BEGIN { exit !(d >= 0.7 * c) }' ||
		fail "dctcp throughput $d_mbit < 70% of cubic's $c_mbit"
	(( d_mark > 0 )) || fail "RED did not mark"
}

main()
{
	require_dctcp
	ktap_header 1

	run_test "dctcp holds the queue near K, cubic fills the FIFO" test_queue
	ktap_finish
}

main "$@"
