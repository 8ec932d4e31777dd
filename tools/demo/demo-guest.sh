#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`, guest side: DCTCP vs CUBIC through the same bottleneck, one
# after the other, on the selftests' topology (dctcp_topo.sh):
#
#   snd ---- rtr [tbf $RATE -> RED ecn, marking above K bytes] ---> rcv
#   snd ---- rtr [tbf $RATE -> pfifo 1000 packets, tail drop ] ---> rcv
#
# DCTCP runs with ECN and a RED queue marking above K, as a DCTCP switch
# would; CUBIC runs without ECN on a deep tail-drop FIFO, as most networks
# do.  Both share the link rate and the duration.  What is shown comes from
# the kernel: ss -ti (alpha), tc -s (marks, backlog), ECT(0) pings through
# the queue, and the module's tracepoints.
set -eu
shopt -s inherit_errexit

RATE=${RATE:-100mbit}
K=${K:-30000}
SECS=${SECS:-8}
MODULE=${MODULE:-/opt/dctcp/tcp_dctcp.ko}
SUITE=${SUITE:-/opt/tcp_dctcp}
OUT=/tmp/demo
TRACEFS=/sys/kernel/tracing
declare -A R

# shellcheck source=../testing/selftests/net/tcp_dctcp/dctcp_topo.sh
source "$SUITE/dctcp_topo.sh"
trap 'cleanup_ns; purge_namespaces' EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# wait_listen: the iperf3 server in rcv is accepting.
wait_listen()
{
	local _

	for _ in $(seq 100); do
		ss -N "$rcv" -Hltn 'sport = :5201' | grep -q . && return 0
		sleep 0.05
	done
	echo "iperf3 server did not start" >&2
	return 1
}

# run LABEL CC: one iperf3 flow snd -> rcv with ECT(0) pings beside it,
# sampling the bottleneck's backlog and the socket until it ends.
run()
{
	local label=$1 cc=$2 d=$OUT/$1 client pinger

	mkdir -p "$d"
	in_ns "$rcv" iperf3 -s -1 -D -I "$d/iperf3-s.pid"
	wait_listen
	in_ns "$snd" iperf3 -c "$RCV4" -C "$cc" -t "$SECS" -f m \
		> "$d/iperf3.txt" 2>&1 &
	client=$!
	# ToS 2 = ECT(0): RED marks the probes like the data instead of
	# dropping them above K.
	in_ns "$snd" "$PING_BIN" -Q 2 -i 0.2 -w $((SECS - 1)) "$RCV4" \
		> "$d/ping.txt" 2>&1 &
	pinger=$!
	sleep 1
	# Sample until the flow ends: under emulation every sample is slow,
	# so count on the flow's end, not on a fixed number of samples.
	while kill -0 "$client" 2>/dev/null; do
		bottleneck_stat backlog >> "$d/backlog.txt"
		ss -N "$snd" -Htin "dport = :5201" > "$d/ss.now"
		grep -q bytes_acked "$d/ss.now" && mv "$d/ss.now" "$d/ss.txt"
		sleep 0.2
	done
	wait "$client" "$pinger" || true
	touch "$d/ss.txt"

	R[$label.mbit]=$(awk '/receiver/ { for (i = 1; i < NF; i++)
		if ($(i + 1) == "Mbits/sec") print $i }' "$d/iperf3.txt")
	R[$label.ping]=$(awk -F/ '/^rtt|^round-trip/ { print $5 }' "$d/ping.txt")
	R[$label.backlog]=$(sort -n "$d/backlog.txt" |
		awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : "?" }')
	R[$label.marked]=$(bottleneck_stat marked)
	R[$label.dropped]=$(bottleneck_stat drops)

	echo "ss -ti, the busiest connection of the sender, near the end:"
	# iperf3 has a control and a data connection: show the busier one.
	awk '/bytes_acked:/ { match($0, /bytes_acked:[0-9]+/);
		n = substr($0, RSTART + 12, RLENGTH - 12) + 0;
		if (n >= max) { max = n; line = $0 } }
		END { print line }' "$d/ss.txt" | fold -s -w 100 | sed 's/^/  /'
	echo "tc -s qdisc (the bottleneck, rtr1 egress):"
	tc -n "$rtr" -s qdisc show dev rtr1 | sed 's/^/  /'
	echo "iperf3: ${R[$label.mbit]:-?} Mbit/s, ping through the queue avg ${R[$label.ping]:-?} ms"
}

# trace_alpha: the module's alpha updates of one short flow, as an
# operator would read them (perf/trace-cmd/bpftrace read the same event).
trace_alpha()
{
	local ev=$TRACEFS/events/tcp_dctcp

	if [[ ! -d $ev ]]; then
		echo "(no tcp_dctcp tracepoints in this module build)"
		return 0
	fi
	echo 1 > "$ev/enable"
	: > "$TRACEFS/trace"
	in_ns "$snd" iperf3 -c "$RCV4" -C dctcp -t 1 > /dev/null 2>&1 || true
	echo 0 > "$ev/enable"
	echo "# cat $TRACEFS/trace (first alpha updates and window reductions):"
	grep -E 'dctcp_(alpha_update|ce_reduction)' "$TRACEFS/trace" | head -n 12 |
		cut -c1-160 | sed 's/^/  /'
}

main()
{
	local a

	rm -rf "$OUT"
	topo_tools
	insmod "$MODULE"
	say "module: tcp_dctcp $(cat /sys/module/tcp_dctcp/version) on $(uname -r)"
	echo "srcversion $(cat /sys/module/tcp_dctcp/srcversion) = the .ko built for this kernel: $(modinfo -F srcversion "$MODULE")"
	echo "available: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control)"
	# A namespace other than the initial one may only default to an
	# algorithm on the allowed list (the receiver's namespace uses dctcp).
	echo "$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control) dctcp" \
		> /proc/sys/net/ipv4/tcp_allowed_congestion_control

	say "DCTCP + ECN: tbf $RATE + RED marking above K = $K bytes"
	topo_setup
	bottleneck_red
	run dctcp dctcp
	say "tracepoints: alpha per RTT"
	trace_alpha
	cleanup_ns

	say "CUBIC without ECN: tbf $RATE + pfifo limit $FIFO_LIMIT (tail drop)"
	RCV_CC=cubic topo_setup
	in_ns "$snd" sysctl -qw net.ipv4.tcp_ecn=0
	bottleneck_fifo
	run cubic cubic
	cleanup_ns

	say "side by side ($SECS s each, $RATE bottleneck; emulated CPU: figures are noisy, see make bench)"
	printf '%-8s %12s %14s %18s %10s %10s\n' algo Mbit/s "ping avg ms" \
		"median backlog B" marked dropped
	for a in dctcp cubic; do
		printf '%-8s %12s %14s %18s %10s %10s\n' "$a" "${R[$a.mbit]:-?}" \
			"${R[$a.ping]:-?}" "${R[$a.backlog]:-?}" "${R[$a.marked]:-0}" \
			"${R[$a.dropped]:-?}"
	done
	echo
	echo "K/C floor: $K bytes at $RATE = $(k_over_c_ms) ms of queue"
}

main "$@"
