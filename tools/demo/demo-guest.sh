#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`, guest side: DCTCP vs CUBIC through the same 100 Mbit
# bottleneck, one after the other, in two network namespaces.
#
#   +---------------------+                       +---------------------+
#   | ns snd  198.51.100.1|  veth  (egress:        | ns rcv  198.51.100.2|
#   | iperf3 -c, ping     |========  tbf 100mbit ==>| iperf3 -s           |
#   +---------------------+        + RED ecn K    +---------------------+
#                                  or pfifo 1000)
#
# DCTCP runs with ECN and a RED queue marking above K = 30 kB, as a DCTCP
# switch would; CUBIC runs without ECN on a deep tail-drop FIFO, as most
# networks do.  Both share the link rate, the buffer size and the duration.
set -eu

RATE=${RATE:-100mbit}
SECS=${SECS:-8}
K=${K:-30000}
MODULE=${MODULE:-/opt/dctcp/tcp_dctcp.ko}
IP=${IP:-/usr/sbin/ip}
TC=${TC:-/usr/sbin/tc}
SS=${SS:-/usr/sbin/ss}
SND=demo-snd-$$
RCV=demo-rcv-$$
OUT=/tmp/demo
declare -A R

cleanup()
{
	local ns

	for ns in "$SND" "$RCV"; do
		$IP netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
		$IP netns del "$ns" 2>/dev/null || true
	done
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

setup()		# $1: ecn sysctl value, $2: "red" or "fifo"
{
	cleanup
	$IP netns add "$SND"
	$IP netns add "$RCV"
	$IP -n "$SND" link add veth0 type veth peer name veth0 netns "$RCV"
	$IP -n "$SND" addr add 198.51.100.1/24 dev veth0
	$IP -n "$RCV" addr add 198.51.100.2/24 dev veth0
	for ns in "$SND" "$RCV"; do
		$IP -n "$ns" link set lo up
		$IP -n "$ns" link set veth0 up
		$IP netns exec "$ns" sysctl -qw net.ipv4.tcp_ecn="$1"
	done
	$TC -n "$SND" qdisc add dev veth0 root handle 1: \
		tbf rate "$RATE" burst 32kb limit 2mb
	if [[ $2 == red ]]; then
		$TC -n "$SND" qdisc add dev veth0 parent 1:1 handle 10: \
			red limit 1500000 min "$K" max $((K + 1000)) avpkt 1500 \
			burst 21 probability 1.0 bandwidth "$RATE" ecn
	else
		$TC -n "$SND" qdisc add dev veth0 parent 1:1 handle 10: \
			pfifo limit 1000
	fi
}

wait_listen()
{
	local _
	for _ in $(seq 100); do
		$SS -N "$RCV" -ltn 'sport = :5201' | grep -q LISTEN && return 0
		sleep 0.05
	done
	echo "iperf3 server did not start" >&2
	return 1
}

# $1: label, $2: congestion control
run()
{
	local label=$1 cc=$2 d=$OUT/$1

	mkdir -p "$d"
	$IP netns exec "$RCV" iperf3 -s -1 -D -I "$d/iperf3-s.pid"
	wait_listen
	$IP netns exec "$SND" iperf3 -c 198.51.100.2 -C "$cc" -t "$SECS" \
		-f m > "$d/iperf3.txt" 2>&1 &
	local client=$!
	# ECT(0) pings (TOS 2), as the seed's "ping -Q 0x6": RED marks them
	# like the data instead of dropping them above K.
	$IP netns exec "$SND" ping -Q 2 -i 0.2 -w $((SECS - 1)) 198.51.100.2 \
		> "$d/ping.txt" 2>&1 &
	local pinger=$!
	sleep 1
	# Sample the bottleneck and the socket until the flow ends: TCG makes
	# every sample slow, so count on the flow's end, not on a fixed count.
	while kill -0 "$client" 2>/dev/null; do
		$TC -n "$SND" -s qdisc show dev veth0 parent 1:1 |
			awk '/backlog/ { print $2 }' >> "$d/backlog.txt"
		$SS -N "$SND" -tin 'dport = :5201' > "$d/ss.now"
		grep -q bytes_acked "$d/ss.now" && mv "$d/ss.now" "$d/ss.txt"
		sleep 0.2
	done
	wait "$client" "$pinger" || true
	touch "$d/ss.txt" "$d/backlog.txt"
	$TC -n "$SND" -s qdisc show dev veth0 > "$d/qdisc.txt"

	R[$label.mbit]=$(awk '/receiver/ { for (i = 1; i < NF; i++)
		if ($(i + 1) == "Mbits/sec") print $i }' "$d/iperf3.txt")
	R[$label.ping]=$(awk -F/ '/^rtt|^round-trip/ { print $5 }' "$d/ping.txt")
	# tc prints sizes as 1234b, 45Kb or 2Mb.
	R[$label.backlog]=$(awk '{ v = $1 + 0 } /Kb$/ { v *= 1024 }
		/Mb$/ { v *= 1048576 } { print v }' "$d/backlog.txt" |
		sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	R[$label.marked]=$(awk '/marked/ { for (i = 1; i < NF; i++)
		if ($i == "marked") print $(i + 1) }' "$d/qdisc.txt" | head -n 1)
	R[$label.dropped]=$(awk '/dropped/ { gsub(",", ""); print $7; exit }' \
		"$d/qdisc.txt")

	echo "ss -ti, data connection, sender side, near the end of the flow:"
	# iperf3 has a control and a data connection: show the busier one.
	awk '/bytes_acked:/ { match($0, /bytes_acked:[0-9]+/);
		n = substr($0, RSTART + 12, RLENGTH - 12) + 0;
		if (n >= max) { max = n; line = $0 } }
		END { print line }' "$d/ss.txt" | fold -s -w 100 | sed 's/^/  /'
	echo "tc -s qdisc (bottleneck):"
	grep -E 'qdisc|Sent|backlog|marked' "$d/qdisc.txt" | sed 's/^/  /'
	echo "iperf3: ${R[$label.mbit]:-?} Mbit/s, ping under load avg ${R[$label.ping]:-?} ms"
}

main()
{
	rm -rf "$OUT"
	if ! grep -qw dctcp /proc/sys/net/ipv4/tcp_available_congestion_control; then
		insmod "$MODULE"
	fi
	say "module: tcp_dctcp $(cat /sys/module/tcp_dctcp/version 2>/dev/null || echo in-tree) on $(uname -r)"
	echo "available: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control)"

	say "DCTCP + ECN, tbf $RATE + RED marking at K=$K bytes"
	setup 1 red
	run dctcp dctcp

	say "CUBIC without ECN, tbf $RATE + pfifo limit 1000 (tail drop)"
	setup 0 fifo
	run cubic cubic

	say "side by side ($SECS s each, $RATE bottleneck, QEMU TCG: figures are noisy)"
	printf '%-8s %12s %14s %18s %10s %10s\n' algo Mbit/s "ping avg ms" \
		"median backlog B" marked dropped
	for a in dctcp cubic; do
		printf '%-8s %12s %14s %18s %10s %10s\n' "$a" "${R[$a.mbit]:-?}" \
			"${R[$a.ping]:-?}" "${R[$a.backlog]:-?}" "${R[$a.marked]:-0}" \
			"${R[$a.dropped]:-?}"
	done
	echo
	echo "K/C floor: $K bytes at $RATE = $(awk -v k="$K" 'BEGIN { printf "%.1f", k * 8 / 100e6 * 1000 }') ms of queue"
}

main "$@"
