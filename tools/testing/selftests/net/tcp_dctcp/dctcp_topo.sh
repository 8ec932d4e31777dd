# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The one network topology of the tcp_dctcp selftests, the demo and the
# benchmark: three namespaces, a router whose egress towards the receiver
# is the bottleneck, and the qdiscs that mark, drop and delay.  Sourced;
# needs bash, iproute2 (ip, tc, ss, nstat), iputils ping and jq.
#
#  ns snd                      ns rtr                            ns rcv
# +--------------------+     +--------------------------------+     +--------------------+
# | snd0               |     | rtr0                      rtr1 |     |               rcv0 |
# | 198.51.100.2/24    +-----+ 198.51.100.1       203.0.113.1 +-----+ 203.0.113.2/24     |
# | 2001:db8:1::2/64   |veth | 2001:db8:1::1     2001:db8:2::1 |veth | 2001:db8:2::2/64   |
# +--------------------+     +--------------------------------+     +--------------------+
#   egress: netem on the        egress of rtr1 = the bottleneck:      egress: netem delay
#   data path (delay, loss,     handle 1: tbf or htb at $RATE,        on the ACK path
#   CE-mark-all; optional)      handle 10: red ecn K or pfifo         (optional)
#
# Data flows snd -> rcv.  The bottleneck sits on a router's egress, as a
# switch port would: on the sender's own veth, TCP small queues would keep
# a tail-drop queue short and hide what the algorithms do to it.
#
# Knobs (environment): RATE (bottleneck rate, tc syntax), K (RED marking
# threshold in bytes), FIFO_LIMIT (packets), RCV_CC (receiver's default
# algorithm).

RATE=${RATE:-10mbit}
K=${K:-30000}
FIFO_LIMIT=${FIFO_LIMIT:-1000}
RCV_CC=${RCV_CC:-dctcp}

SND4=198.51.100.2	RTR4_S=198.51.100.1	RTR4_R=203.0.113.1	RCV4=203.0.113.2
SND6=2001:db8:1::2	RTR6_S=2001:db8:1::1	RTR6_R=2001:db8:2::1	RCV6=2001:db8:2::2

# Fixed MACs (02:00:00:00:<link>:<end>) so that the neighbour entries can
# be pinned without asking: a qdisc that drops every non-ECT packet (the
# CE-mark-all and loss set-ups) must not starve ARP/ND.
MAC_SND0=02:00:00:00:01:02	MAC_RTR0=02:00:00:00:01:01
MAC_RTR1=02:00:00:00:02:01	MAC_RCV0=02:00:00:00:02:02

NS_LIST=()
NS_BASE=0	# cleanup_ns deletes the namespaces from this index on
snd='' rtr='' rcv=''

# ---------------------------------------------------------------- tools
# Inside a busybox userland the applets would shadow iproute2: resolve the
# real binaries once.
find_tool()
{
	local name=$1 pkg=$2 dir

	for dir in /usr/sbin /usr/bin /sbin /bin; do
		[[ -x $dir/$name ]] || continue
		[[ $(readlink -f "$dir/$name") == */busybox ]] && continue
		echo "$dir/$name"
		return 0
	done
	echo "$name missing: apt-get install $pkg" >&2
	return 1
}

# topo_tools: resolve every tool the topology needs, or say which is
# missing and fail.
topo_tools()
{
	IP_BIN=$(find_tool ip iproute2) &&
	TC_BIN=$(find_tool tc iproute2) &&
	SS_BIN=$(find_tool ss iproute2) &&
	NSTAT_BIN=$(find_tool nstat iproute2) &&
	PING_BIN=$(find_tool ping iputils-ping) &&
	JQ_BIN=$(find_tool jq jq)
}

ip() { "$IP_BIN" "$@"; }
tc() { "$TC_BIN" "$@"; }
ss() { "$SS_BIN" "$@"; }
nstat() { "$NSTAT_BIN" "$@"; }
in_ns() { local ns=$1; shift; "$IP_BIN" netns exec "$ns" "$@"; }

# ---------------------------------------------------------------- namespaces
# Namespaces are named dctcp<TAG>-<role>-<random>, TAG unique per process
# that sourced this file, so that purge_namespaces finds every one it made.
NS_PREFIX=dctcp$(mktemp -u XXXXXX)

# setup_ns VAR...: create namespaces with a random suffix, named in VAR.
setup_ns()
{
	local var name

	for var in "$@"; do
		name="$NS_PREFIX-${var}-$(mktemp -u XXXXXX)"
		ip netns add "$name" || return 1
		NS_LIST+=("$name")
		printf -v "$var" '%s' "$name"
	done
}

cleanup_ns()
{
	local ns

	for ns in "${NS_LIST[@]:$NS_BASE}"; do
		ip netns del "$ns" 2>/dev/null
	done
	NS_LIST=("${NS_LIST[@]:0:$NS_BASE}")
	return 0
}

# Whatever namespace of ours is left (a caller that lost track of a
# background process): kill what runs in it and delete it.
purge_namespaces()
{
	local ns

	for ns in $(ip netns list | awk -v p="$NS_PREFIX-" 'index($1, p) == 1 { print $1 }'); do
		echo "# leftover namespace $ns: $(ip netns pids "$ns" | wc -l) processes" >&2
		ip netns pids "$ns" | xargs -r kill -9
		ip netns del "$ns"
	done
}

# topo_setup: snd -- rtr -- rcv as drawn at the top; both ends tcp_ecn=1,
# the receiver defaults to $RCV_CC (dctcp: a DCTCP receiver echoes CE
# exactly).  Segmentation offload is off on the sender's path
# (gso_max_segs 1) so that the bottleneck sees MSS-sized packets, as a
# switch port would.
topo_setup()
{
	setup_ns snd rtr rcv || return 1

	ip -n "$rtr" -b - <<-EOF
		link set lo up
		link add name rtr0 address $MAC_RTR0 gso_max_segs 1 type veth peer name snd0 netns $snd address $MAC_SND0 gso_max_segs 1
		link add name rtr1 address $MAC_RTR1 gso_max_segs 1 type veth peer name rcv0 netns $rcv address $MAC_RCV0 gso_max_segs 1
		addr add $RTR4_S/24 dev rtr0
		addr add $RTR6_S/64 dev rtr0 nodad
		addr add $RTR4_R/24 dev rtr1
		addr add $RTR6_R/64 dev rtr1 nodad
		link set rtr0 up
		link set rtr1 up
		neigh replace $SND4 lladdr $MAC_SND0 dev rtr0 nud permanent
		neigh replace $SND6 lladdr $MAC_SND0 dev rtr0 nud permanent
		neigh replace $RCV4 lladdr $MAC_RCV0 dev rtr1 nud permanent
		neigh replace $RCV6 lladdr $MAC_RCV0 dev rtr1 nud permanent
	EOF
	topo_end "$snd" snd0 "$SND4" "$SND6" "$RTR4_S" "$RTR6_S" "$MAC_RTR0"
	topo_end "$rcv" rcv0 "$RCV4" "$RCV6" "$RTR4_R" "$RTR6_R" "$MAC_RTR1"

	in_ns "$rtr" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	# tcp_ecn_fallback=0: a SYN that netem loss drops is retransmitted
	# still asking for ECN (RFC 3168 6.1.1.1 lets a sender give up ECN
	# on a SYN retransmit; with the default 1 a dctcp flow then runs as
	# dctcp-reno and a test that asked for random loss sees no ECN).
	in_ns "$snd" sysctl -qw net.ipv4.tcp_ecn=1 net.ipv4.tcp_no_metrics_save=1 \
		net.ipv4.tcp_ecn_fallback=0
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_ecn=1 net.ipv4.tcp_no_metrics_save=1 \
		net.ipv4.tcp_ecn_fallback=0 \
		net.ipv4.tcp_congestion_control="$RCV_CC"
}

# topo_end NS DEV ADDR4 ADDR6 GW4 GW6 GW_MAC: one end host.
topo_end()
{
	ip -n "$1" -b - <<-EOF
		link set lo up
		addr add $3/24 dev $2
		addr add $4/64 dev $2 nodad
		link set $2 up
		route add default via $5
		route add default via $6
		neigh replace $5 lladdr $7 dev $2 nud permanent
		neigh replace $6 lladdr $7 dev $2 nud permanent
	EOF
}

# ---------------------------------------------------------------- bottleneck
# rtr1's egress: a shaper at $RATE (handle 1:) and a queue under it
# (handle 10:).  The shaper only paces; the queue decides what is marked
# or dropped, so every statistic of interest is the child's.

# red_args K: the one RED definition.  ECT packets are marked once the
# average queue passes K bytes, with a probability that ramps up to 1
# between K and K + RED_RAMP bytes (default 1000): a step marker, as in
# the DCTCP paper.  burst makes the average follow the instantaneous
# queue within about a K's worth of packets.  RED draws a random number
# for a packet on the ramp: RED_RAMP=1 makes the marking a function of the
# queue alone (the simulated-time tests, whose runs must repeat exactly).
# RED_LIMIT (bytes, default 4000000) is the hard limit: a shallow switch
# buffer for incast, tail drop beyond it.
RED_RAMP=${RED_RAMP:-1000}
RED_LIMIT=${RED_LIMIT:-4000000}
red_args()
{
	echo "red limit $RED_LIMIT min $1 max $(($1 + RED_RAMP)) avpkt 1500" \
	     "burst $(((2 * $1 + 1000) / 3000 + 1)) probability 1.0 bandwidth $RATE ecn"
}

# bottleneck SHAPER QUEUE...: (re)build rtr1's egress.  SHAPER is tbf or
# htb, QUEUE the child qdisc and its arguments.
bottleneck()
{
	local shaper=$1

	shift
	tc -n "$rtr" qdisc del dev rtr1 root 2>/dev/null || true
	case $shaper in
	tbf)
		tc -n "$rtr" -b - <<-EOF
			qdisc add dev rtr1 root handle 1: tbf rate $RATE burst 16kb latency 10s
			qdisc add dev rtr1 parent 1:1 handle 10: $*
		EOF
		;;
	htb)
		tc -n "$rtr" -b - <<-EOF
			qdisc add dev rtr1 root handle 1: htb default 1
			class add dev rtr1 parent 1: classid 1:1 htb rate $RATE ceil $RATE burst 16k cburst 16k quantum 1514
			qdisc add dev rtr1 parent 1:1 handle 10: $*
		EOF
		;;
	*)
		echo "bottleneck: unknown shaper '$shaper'" >&2
		return 1
		;;
	esac
}

# bottleneck_red [K [SHAPER]]: RED ecn at K bytes under a tbf (or htb).
bottleneck_red()
{
	# shellcheck disable=SC2046 # red_args is a word list
	bottleneck "${2:-tbf}" $(red_args "${1:-$K}")
}

# bottleneck_red_change K: move the threshold of a running RED queue.
bottleneck_red_change()
{
	# shellcheck disable=SC2046
	tc -n "$rtr" qdisc change dev rtr1 parent 1:1 handle 10: $(red_args "$1")
}

# bottleneck_fifo [LIMIT [SHAPER]]: a deep tail-drop FIFO (packets).
bottleneck_fifo()
{
	bottleneck "${2:-tbf}" pfifo limit "${1:-$FIFO_LIMIT}"
}

# ack_delay MS: netem delay on the receiver's egress, i.e. on the ACKs.
ack_delay()
{
	tc -n "$rcv" qdisc replace dev rcv0 root netem delay "${1}ms" limit 100000
}

# data_netem ARGS...: netem on the sender's egress, on the data path in
# front of the bottleneck (delay, loss, CE marking of every ECT packet).
# A delay here holds data in the sender's own qdisc: it must stay below
# net.ipv4.tcp_limit_output_bytes (TCP small queues), about rate * delay.
data_netem()
{
	tc -n "$snd" qdisc replace dev snd0 root netem limit 100000 "$@"
}

data_netem_off()
{
	tc -n "$snd" qdisc del dev snd0 root 2>/dev/null || true
}

# ---------------------------------------------------------------- readings
# qdisc_stat NS DEV HANDLE FIELD: one counter of `tc -s -j qdisc` for the
# qdisc with that handle (exact numbers: JSON has no "Kb" rounding).
# FIELD: bytes packets drops overlimits backlog (bytes) qlen (packets),
# and for RED marked early pdrop.  Empty if the qdisc lacks the field.
qdisc_stat()
{
	tc -n "$1" -s -j qdisc show dev "$2" |
		"$JQ_BIN" -r --arg h "$3" --arg f "$4" \
			'.[] | select(.handle == $h) | .[$f] // empty'
}

# bottleneck_stat FIELD: qdisc_stat of the bottleneck's queue (10:).
bottleneck_stat()
{
	qdisc_stat "$rtr" rtr1 10: "$1"
}

# ping_rtts NS DST COUNT: RTTs in ms, one per line.  ToS 2 = ECT(0), so
# that a RED queue marks the probes instead of dropping them.
ping_rtts()
{
	in_ns "$1" "$PING_BIN" -n -Q 2 -i 0.1 -c "$3" -W 10 "$2" |
		sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p'
}

# nstat_get NS COUNTER: absolute value of a SNMP/netstat counter.
nstat_get()
{
	in_ns "$1" "$NSTAT_BIN" -asz "$2" 2>/dev/null |
		awk -v c="$2" '$1 == c { print $2; f = 1 } END { if (!f) print 0 }'
}

# rate_bps [RATE]: a tc rate (kbit, mbit, gbit, bit) in bit/s.
rate_bps()
{
	awk -v r="${1:-$RATE}" 'BEGIN {
		v = r + 0
		if (r ~ /gbit$/) v *= 1e9; else if (r ~ /mbit$/) v *= 1e6
		else if (r ~ /kbit$/) v *= 1e3
		printf "%d\n", v }'
}

rate_mbit()
{
	awk -v b="$(rate_bps "$@")" 'BEGIN { print b / 1e6 }'
}

# k_over_c_ms [K [RATE]]: the queueing delay of K bytes at RATE, in ms,
# the floor a DCTCP queue sits on.
k_over_c_ms()
{
	awk -v k="${1:-$K}" -v b="$(rate_bps "${2:-$RATE}")" \
		'BEGIN { printf "%.3f\n", k * 8 / b * 1000 }'
}
