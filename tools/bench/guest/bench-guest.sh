#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make bench`: the DCTCP paper's comparisons on one emulated
# bottleneck.  Runs inside the QEMU guest (tools/bench/bench.sh boots it), or
# on any host with netns/veth/tbf (and RED for the ECN rows) for debugging.
#
# TOPO:
#
#   +------------------+      +----------------------------+      +-----------------+
#   | ns snd           |      | ns sw  ("switch port")     |      | ns rcv          |
#   | senders,         | veth | forwards; egress to rcv:   | veth | receivers,      |
#   | responders   s0  +------+ w0     tbf RATE            +------+ r0  aggregator  |
#   | 198.51.100.1     |      |          `-- RED | pfifo w1 |      | 203.0.113.1     |
#   | GSO: 1 segment   |      |                            |      |                 |
#   +------------------+      +----------------------------+      +-----------------+
#       data -------------------> (the only queue: sw:w1) ------------> ACKs back,
#                                                                        not shaped
#
# Output on stdout (parsed by bench.sh):
#   # text                          progress, diagnostics
#   RESULT scenario=S algo=A k=v..  one summary line per run
#   CSV-BEGIN name header           followed by CSV rows, then
#   CSV-END name
# Exit status: 0, or 1 when a run could not be done or did not use the
# configuration it claims (e.g. ECN not negotiated), 2 on bad usage.
set -eu

SELF_DIR=$(cd "$(dirname "$0")" && pwd)
readonly SELF_DIR

# ---- parameters (bench.sh passes them; defaults are the quick run) -------
MODE=quick
IMPL=none		# ours | intree | none (host debugging: no dctcp)
KO=/opt/dctcp/tcp_dctcp.ko
INCAST_BIN=${INCAST_BIN:-$SELF_DIR/../incast}
SAMPLER_BIN=${SAMPLER_BIN:-$SELF_DIR/../sampler}
ALGOS=""
SCENARIOS="queue incast converge alpha syn"

readonly RATE_MBIT=${BENCH_RATE_MBIT:-100}
readonly MTU_WIRE=1514			# bytes per full packet as tbf counts it
readonly MSS=1448			# payload per full packet (timestamps on)
readonly K_BYTES=${BENCH_K:-30000}	# RED marking threshold
readonly DEEP_PKTS=1000			# deep tail-drop buffer (pfifo limit)
readonly SHALLOW_PKTS=100		# shallow switch buffer for incast

readonly SND_IP=198.51.100.1
readonly RCV_IP=203.0.113.1
SUFFIX=$(mktemp -u XXXXXX)
readonly SUFFIX
readonly NS_SND=bench-snd-$SUFFIX
readonly NS_SW=bench-sw-$SUFFIX
readonly NS_RCV=bench-rcv-$SUFFIX
readonly BOTTLENECK=w1
WORK=""
BG_PIDS=""
BASE_RTT_MS=""
FAILED=0

# ---- small helpers -------------------------------------------------------
log() { echo "# $*"; }
die() { echo "# ERROR: $*"; exit 1; }
now() { echo "$EPOCHREALTIME"; }

# sleep_until T0 SECONDS: sleep until SECONDS after the time T0 ($EPOCHREALTIME)
sleep_until()
{
	local left

	left=$(( ${1/./} + $2 * 1000000 - ${EPOCHREALTIME/./} ))
	[ "$left" -le 0 ] || sleep "$(printf '%d.%06d' $((left / 1000000)) $((left % 1000000)))"
}

# run COMMAND in a namespace (ip netns exec remounts /sys: keep it for
# long-lived programs; tc -n / ss -N / ip -n are used for quick queries)
nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# bg_start COMMAND...: run a program (not a shell function: its pid must be
# the program's, so that kill reaches it) in the background; pid in LAST_PID
bg_start()
{
	"$@" &
	BG_PIDS="$BG_PIDS $!"
	LAST_PID=$!
}

bg_stop_all()
{
	local p

	for p in $BG_PIDS; do
		kill "$p" 2>/dev/null || true
	done
	for p in $BG_PIDS; do
		wait "$p" 2>/dev/null || true
	done
	BG_PIDS=""
}

cleanup()
{
	set +e
	bg_stop_all
	ip netns pids "$NS_SND" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns pids "$NS_RCV" 2>/dev/null | xargs -r kill 2>/dev/null
	for ns in "$NS_SND" "$NS_SW" "$NS_RCV"; do
		ip netns del "$ns" 2>/dev/null
	done
	[ -z "$WORK" ] || [ -n "${BENCH_KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

need()
{
	command -v "$1" >/dev/null 2>&1 || die "$1 missing: apt-get install $2"
}

# wait_until SECONDS COMMAND...: poll (every 50 ms) until COMMAND succeeds
wait_until()
{
	local limit=$1 i=0

	shift
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -le $((limit * 20)) ] || return 1
		sleep 0.05
	done
}

listening() { ss -N "$1" -Htln "sport = :$2" | grep -q .; }

# n, mean, sd, min, p50, p90, p99, max of a column of numbers on stdin,
# printed as "n=.. mean=.. ..." with keys prefixed by $1
summarize()
{
	sort -n | awk -v pre="$1" "$AWK_SQRT"'
		{ v[NR] = $1; s += $1; ss += $1 * $1 }
		function pct(p,  i) {
			i = int(p / 100 * NR + 0.999999); if (i < 1) i = 1
			return v[i]
		}
		END {
			if (NR == 0) { printf "%sn=0", pre; exit }
			m = s / NR; var = ss / NR - m * m; if (var < 0) var = 0
			printf "%sn=%d %smean=%.3f %ssd=%.3f %smin=%.3f %sp50=%.3f %sp90=%.3f %sp99=%.3f %smax=%.3f",
				pre, NR, pre, m, pre, root(var), pre, v[1], pre, pct(50),
				pre, pct(90), pre, pct(99), pre, v[NR]
		}'
}

# Jain's fairness index of a column of numbers: (sum x)^2 / (n * sum x^2)
jain()
{
	awk '{ s += $1; ss += $1 * $1; n++ }
	     END { if (ss > 0) printf "%.4f", s * s / (n * ss); else printf "nan" }'
}

# Debian's busybox awk has no libm: no sqrt(), no ^.  Newton's method.
readonly AWK_SQRT='function root(x,  r, i) { if (x <= 0) return 0; r = x < 1 ? 1 : x
	for (i = 0; i < 100; i++) r = (r + x / r) / 2; return r }'

csv_begin() { echo "CSV-BEGIN $1 $2"; }
csv_end() { echo "CSV-END $1"; }

nstat_get() # NS COUNTER
{
	nsx "$1" nstat -saz "$2" | awk -v c="$2" '$1 == c { print $2; f = 1 } END { if (!f) print 0 }'
}

# ---- setup -----------------------------------------------------------------
load_modules()
{
	local m

	# Debian builds these as modules; a host kernel may have them built in.
	for m in veth sch_tbf sch_red tcp_diag; do
		modprobe "$m" 2>/dev/null || true
	done

	case $IMPL in
	ours)
		[ -r "$KO" ] || die "our module $KO is missing"
		insmod "$KO" || die "insmod $KO failed"
		[ -r /sys/module/tcp_dctcp/version ] ||
			die "/sys/module/tcp_dctcp/version missing: not our module"
		MODVER=$(cat /sys/module/tcp_dctcp/version)
		case $MODVER in *-oot) ;; *) die "loaded tcp_dctcp is $MODVER, not ours (-oot)";; esac
		;;
	intree)
		modprobe tcp_dctcp || die "modprobe tcp_dctcp (in-tree) failed"
		[ ! -e /sys/module/tcp_dctcp/version ] ||
			die "tcp_dctcp has a version file: this is not Debian's in-tree module"
		MODVER=in-tree
		;;
	none)
		MODVER=none
		;;
	*)
		die "unknown --impl $IMPL"
		;;
	esac
}

allow_algos()
{
	local avail allowed a

	avail=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control)
	allowed=""
	for a in $avail; do
		allowed="$allowed $a"
	done
	# namespaces other than init_net may only pick "allowed" algorithms
	sysctl -qw net.ipv4.tcp_allowed_congestion_control="${allowed# }"
}

setup_topology()
{
	local ns

	for ns in "$NS_SND" "$NS_SW" "$NS_RCV"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	ip -n "$NS_SND" link add s0 type veth peer name w0 netns "$NS_SW"
	ip -n "$NS_SW" link add "$BOTTLENECK" type veth peer name r0 netns "$NS_RCV"
	ip -n "$NS_SND" addr add "$SND_IP/24" dev s0
	ip -n "$NS_SW" addr add 198.51.100.2/24 dev w0
	ip -n "$NS_SW" addr add 203.0.113.2/24 dev "$BOTTLENECK"
	ip -n "$NS_RCV" addr add "$RCV_IP/24" dev r0
	ip -n "$NS_SND" link set s0 up
	ip -n "$NS_SW" link set w0 up
	ip -n "$NS_SW" link set "$BOTTLENECK" up
	ip -n "$NS_RCV" link set r0 up
	ip -n "$NS_SND" route add default via 198.51.100.2
	ip -n "$NS_RCV" route add default via 203.0.113.2
	nsx "$NS_SW" sysctl -qw net.ipv4.ip_forward=1
	# One MSS per skb: RED and pfifo then count real packets, not
	# 64 KB GSO bursts, like a switch port would.
	ip -n "$NS_SND" link set s0 gso_max_segs 1 ||
		die "cannot limit GSO on veth (ip link set gso_max_segs)"
	ip -n "$NS_RCV" link set r0 gso_max_segs 1
	wait_until 5 nsx "$NS_SND" ping -c1 -W1 "$RCV_IP" ||
		die "no connectivity through the switch namespace"
}

# bottleneck red K LIMIT_BYTES | pfifo LIMIT_PKTS
bottleneck()
{
	tc -n "$NS_SW" qdisc del dev "$BOTTLENECK" root 2>/dev/null || true
	tc -n "$NS_SW" qdisc add dev "$BOTTLENECK" root handle 1: \
		tbf rate "${RATE_MBIT}mbit" burst 15000 latency 1000ms
	case $1 in
	red)
		red_opts "$2" "$3"
		tc -n "$NS_SW" qdisc add dev "$BOTTLENECK" parent 1:1 handle 10: "${RED_OPTS[@]}"
		;;
	pfifo)
		tc -n "$NS_SW" qdisc add dev "$BOTTLENECK" parent 1:1 handle 10: \
			pfifo limit "$2"
		;;
	esac
}

# RED as a DCTCP switch: mark (not drop) ECT packets as soon as the queue
# exceeds K.  burst = 1 + K/avpkt is the smallest tc accepts and gives the
# shortest EWMA (Wlog 2): the average follows the instantaneous queue.
red_opts()	# K LIMIT -> RED_OPTS
{
	local k=$1 limit=$2

	RED_OPTS=(red limit "$limit" min "$k" max $((k + 1500)) avpkt 1500
		  burst $((1 + k / 1500)) probability 1.0 bandwidth "${RATE_MBIT}mbit" ecn)
}

red_change_k()
{
	red_opts "$1" "$2"
	tc -n "$NS_SW" qdisc change dev "$BOTTLENECK" parent 1:1 handle 10: "${RED_OPTS[@]}"
}

# algo_setup ALGO: congestion control + ECN on both ends, and which
# bottleneck it gets in the latency/fairness scenarios
algo_setup()
{
	local snd_cc rcv_cc snd_ecn rcv_ecn

	case $1 in
	dctcp-ours|dctcp-intree)
		snd_cc=dctcp rcv_cc=dctcp snd_ecn=1 rcv_ecn=1 ALGO_Q=red ;;
	dctcp-reno)
		# our dctcp towards a receiver without ECN: the connection
		# falls back to dctcp-reno, on the same RED (which drops
		# non-ECT packets where it would mark)
		snd_cc=dctcp rcv_cc=cubic snd_ecn=1 rcv_ecn=0 ALGO_Q=red ;;
	cubic-ecn)
		snd_cc=cubic rcv_cc=cubic snd_ecn=1 rcv_ecn=1 ALGO_Q=red ;;
	reno-ecn)
		snd_cc=reno rcv_cc=reno snd_ecn=1 rcv_ecn=1 ALGO_Q=red ;;
	cubic-noecn)
		snd_cc=cubic rcv_cc=cubic snd_ecn=0 rcv_ecn=0 ALGO_Q=pfifo ;;
	*)
		die "unknown algorithm $1" ;;
	esac
	case $1 in
	dctcp-reno) ALGO_EXPECT_CA=dctcp-reno ALGO_EXPECT_ECN=0 ;;
	*) ALGO_EXPECT_CA=$snd_cc ALGO_EXPECT_ECN=$snd_ecn ;;
	esac
	nsx "$NS_SND" sysctl -qw net.ipv4.tcp_congestion_control="$snd_cc" \
		net.ipv4.tcp_ecn="$snd_ecn" ||
		die "cannot select $snd_cc in the sender namespace"
	nsx "$NS_RCV" sysctl -qw net.ipv4.tcp_congestion_control="$rcv_cc" \
		net.ipv4.tcp_ecn="$rcv_ecn" ||
		die "cannot select $rcv_cc in the receiver namespace"
}

# the bottleneck an algorithm gets for long flows: the same RED for all
# ECN rows, a deep tail-drop FIFO for CUBIC without ECN
algo_bottleneck()
{
	if [ "$ALGO_Q" = red ]; then
		bottleneck red "$K_BYTES" $((DEEP_PKTS * MTU_WIRE))
	else
		bottleneck pfifo "$DEEP_PKTS"
	fi
}

# ---- sampling --------------------------------------------------------------
# sampler OUT SECONDS PORTS: start sampling in the background (LAST_PID):
# every 100 ms, the bottleneck queue and the sender's sockets towards PORTS
# (tools/bench/sampler.c: netlink, no forks)
sampler()
{
	bg_start "$SAMPLER_BIN" -q "$NS_SW:$BOTTLENECK:10" -s "$NS_SND" \
		-p "$(echo $3 | tr ' ' ,)" -i 100 -t "$2" > "$1"
}

# parse_samples RAW T0: the sampler's rows with time relative to T0
#   t,backlog_b,qlen_p,marked,dport,bytes_acked,cwnd,alpha,ca,ecn,srtt_us,delivered_ce
parse_samples()
{
	awk -F, -v t0="$2" 'BEGIN { OFS = "," } { $1 = sprintf("%.3f", $1 - t0); print }' "$1"
}

# check_socket_config SAMPLES_CSV: the busiest socket must run the algorithm
# and ECN setting the row claims; prints ca=.. ecn=.. check=ok|fail
check_socket_config()
{
	local got

	got=$(awk -F, '$6 > best { best = $6; ca = $9; ecn = $10 }
		       END { print ca, ecn }' "$1")
	set -- $got
	if [ "${1:-}" = "$ALGO_EXPECT_CA" ] && [ "${2:-}" = "$ALGO_EXPECT_ECN" ]; then
		echo "ca=$1 ecn=$2 check=ok"
	else
		echo "# ERROR: expected ca=$ALGO_EXPECT_CA ecn=$ALGO_EXPECT_ECN on the data socket, ss shows ca=${1:-none} ecn=${2:-none}" >&2
		echo "ca=${1:-none} ecn=${2:-none} check=fail"
	fi
}

iperf_server() # PORT: one-off iperf3 server in rcv, waits until it listens
{
	bg_start ip netns exec "$NS_RCV" iperf3 -s -1 -p "$1" >/dev/null 2>&1
	wait_until 10 listening "$NS_RCV" "$1" || die "iperf3 server on port $1 did not start"
}

measure_base_rtt()
{
	bottleneck pfifo "$DEEP_PKTS"
	nsx "$NS_SND" ping -n -q -c 20 -i 0.05 "$RCV_IP" > "$WORK/base-ping.txt" ||
		die "ping without load failed"
	# rtt min/avg/max/mdev = a/b/c/d ms: take avg
	BASE_RTT_MS=$(awk -F'[/ =]+' '/^rtt/ { print $7 }' "$WORK/base-ping.txt")
	[ -n "$BASE_RTT_MS" ] || die "cannot parse ping output"
}

# ---- scenario 1: queue length and latency under N long flows --------------
scenario_queue()
{
	local algo=$1 nflows=$2 secs=$3 raw samples t0 ping_n rtos0 rtos1 rtx0 rtx1 cfg

	log "queue: $algo, $nflows flows x ${secs}s"
	algo_setup "$algo"
	algo_bottleneck
	iperf_server 5201
	rtos0=$(nstat_get "$NS_SND" TcpExtTCPTimeouts)
	rtx0=$(nstat_get "$NS_SND" TcpRetransSegs)
	raw=$WORK/q-$algo.raw
	t0=$(now)
	sampler "$raw" "$secs" 5201
	local sp=$LAST_PID
	# ping (ECT(0), as the paper's "ping -Q 0x6") after 1 s of slow start
	ping_n=$(( (secs - 2) * 20 ))
	( sleep 1; nsx "$NS_SND" ping -n -Q 0x02 -i 0.05 -c "$ping_n" "$RCV_IP" \
		> "$WORK/q-$algo.ping" 2>&1 || true ) &
	local pp=$!
	nsx "$NS_SND" iperf3 -c "$RCV_IP" -p 5201 -P "$nflows" -t "$secs" -f m -i 0 \
		> "$WORK/q-$algo.iperf" 2>&1 || {
		sed 's/^/# iperf3: /' "$WORK/q-$algo.iperf"
		die "iperf3 failed for $algo"
	}
	wait "$pp" || true
	wait "$sp" || true
	bg_stop_all
	rtos1=$(nstat_get "$NS_SND" TcpExtTCPTimeouts)
	rtx1=$(nstat_get "$NS_SND" TcpRetransSegs)

	samples=$WORK/q-$algo.csv
	parse_samples "$raw" "$t0" > "$samples"
	cfg=$(check_socket_config "$samples")
	case $cfg in *check=fail*) FAILED=1;; esac

	# per-flow goodput (Mbit/s) as measured by the iperf3 receiver
	awk '/receiver$/ && !/SUM/ { for (i = 1; i <= NF; i++) if ($i == "Mbits/sec") print $(i - 1) }' \
		"$WORK/q-$algo.iperf" > "$WORK/q-$algo.flows"
	local total jn flows rtt q drops marks loss
	total=$(awk '{ s += $1 } END { printf "%.2f", s }' "$WORK/q-$algo.flows")
	jn=$(jain < "$WORK/q-$algo.flows")
	flows=$(summarize flow_ < "$WORK/q-$algo.flows")
	sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$WORK/q-$algo.ping" > "$WORK/q-$algo.rtt"
	rtt=$(summarize rtt_ < "$WORK/q-$algo.rtt")
	loss=$(awk -v n="$ping_n" 'END { printf "%.1f", n ? 100 * (n - NR) / n : 0 }' "$WORK/q-$algo.rtt")
	# queue statistics after the first second (slow start)
	q=$(awk -F, '$1 >= 1 && !seen[$1]++ { print $2 / 1000 }' "$samples" | summarize q_kb_)
	drops=$(tc -n "$NS_SW" -s -j qdisc show dev "$BOTTLENECK" handle 10: |
		awk '{ if (match($0, /"drops":[0-9]+/)) print substr($0, RSTART + 8, RLENGTH - 8); else print 0 }')
	marks=$(awk -F, 'END { print $4 + 0 }' "$samples")

	echo "RESULT scenario=queue algo=$algo flows=$nflows secs=$secs rate_mbit=$RATE_MBIT" \
		"qdisc=$ALGO_Q k_bytes=$K_BYTES goodput_mbit=$total" \
		"util_pct=$(awk -v g="$total" -v c="$RATE_MBIT" -v m=$MSS -v w=$MTU_WIRE 'BEGIN { printf "%.1f", 100 * g / (c * m / w) }')" \
		"jain=$jn $flows $rtt ping_loss_pct=$loss $q" \
		"rtos=$((rtos1 - rtos0)) retrans=$((rtx1 - rtx0)) drops=$drops marks=$marks" \
		"base_rtt_ms=$BASE_RTT_MS $cfg"

	csv_begin queue_ts "algo,flows,t_s,backlog_bytes,qlen_pkts"
	awk -F, -v a="$algo" -v n="$nflows" '!seen[$1]++ { print a "," n "," $1 "," $2 "," $3 }' "$samples"
	csv_end queue_ts
	csv_begin queue_rtt_cdf "algo,flows,pct,rtt_ms"
	sort -n "$WORK/q-$algo.rtt" | awk -v a="$algo" -v n="$nflows" '
		{ v[NR] = $1 }
		END { for (p = 0; p <= 100; p++) { i = int(p / 100 * NR + 0.999999); if (i < 1) i = 1
			if (NR) printf "%s,%d,%d,%s\n", a, n, p, v[i] } }'
	csv_end queue_rtt_cdf
	csv_begin queue_flows "algo,flows,flow,goodput_mbit"
	awk -v a="$algo" -v n="$nflows" '{ print a "," n "," NR "," $1 }' "$WORK/q-$algo.flows"
	csv_end queue_flows
}

# ---- scenario 2: incast ----------------------------------------------------
# incast_run ALGO BUFFER_NAME NFLOWS ROUNDS
incast_run()
{
	local algo=$1 buf=$2 n=$3 rounds=$4 bytes out rtos0 rtos1 line qct fct slow

	bytes=$((INCAST_TOTAL / n))
	out=$WORK/i-$algo-$buf-$n.csv
	# 2 warm-up rounds open the connections' windows; then the RTO
	# counter is read and the measured rounds start
	coproc INC { nsx "$NS_RCV" "$INCAST_BIN" client -c "$SND_IP" -p 7000 \
		-n "$n" -s "$bytes" -r "$rounds" -W 2 2>&1; }
	local inc_pid=$INC_PID
	while IFS= read -r -t 60 line <&"${INC[0]}"; do
		[ "$line" != w ] || break
		log "incast: $line"
	done
	[ "${line:-}" = w ] || die "incast client did not finish its warm-up"
	rtos0=$(nstat_get "$NS_SND" TcpExtTCPTimeouts)
	echo go >&"${INC[1]}"
	cat <&"${INC[0]}" > "$out"
	wait "$inc_pid" || { sed 's/^/# incast: /' "$out"; die "incast client failed ($algo, $n flows)"; }
	rtos1=$(nstat_get "$NS_SND" TcpExtTCPTimeouts)

	qct=$(awk -F, '$1 == "q" { print $3 / 1000 }' "$out" | summarize qct_ms_)
	fct=$(awk -F, '$1 == "f" { print $4 / 1000 }' "$out" | summarize fct_ms_)
	# a round that took the minimum RTO (200 ms) longer than the transfer
	# itself needs at line rate most likely waited for one
	local slow_ms
	slow_ms=$(awk -v b="$INCAST_TOTAL" -v c="$RATE_MBIT" -v m=$MSS -v w=$MTU_WIRE \
		'BEGIN { printf "%d", b * 8 / (c * 1000 * m / w) + 200 }')
	slow=$(awk -F, -v t="$slow_ms" '$1 == "q" && $3 >= t * 1000 { n++ } END { print n + 0 }' "$out")
	echo "RESULT scenario=incast algo=$algo buffer=$buf senders=$n rounds=$rounds" \
		"bytes_per_sender=$bytes rtos=$((rtos1 - rtos0)) rto_rounds=$slow slow_ms=$slow_ms $qct $fct" \
		"goodput_mbit=$(awk -F, -v b=$((n * bytes)) '$1 == "q" { t += $3; r++ } END { printf "%.2f", t ? b * 8 * r / t : 0 }' "$out")"
	csv_begin incast_qct "algo,buffer,senders,round,qct_ms"
	awk -F, -v a="$algo" -v b="$buf" -v n="$n" '$1 == "q" { printf "%s,%s,%d,%d,%.3f\n", a, b, n, $2, $3 / 1000 }' "$out"
	csv_end incast_qct
}

scenario_incast()
{
	local algo=$1 n bufs b

	algo_setup "$algo"
	bufs=shallow
	# CUBIC without ECN also on its deep buffer: no incast loss, but the
	# latency of scenario 1
	[ "$algo" != cubic-noecn ] || bufs="shallow deep"
	for b in $bufs; do
		if [ "$b" = deep ]; then
			bottleneck pfifo "$DEEP_PKTS"
		elif [ "$ALGO_Q" = red ]; then
			bottleneck red "$K_BYTES" $((SHALLOW_PKTS * MTU_WIRE))
		else
			bottleneck pfifo "$SHALLOW_PKTS"
		fi
		bg_start ip netns exec "$NS_SND" "$INCAST_BIN" server -p 7000
		local srv=$LAST_PID
		wait_until 10 listening "$NS_SND" 7000 || die "incast server did not start"
		for n in $INCAST_SENDERS; do
			log "incast: $algo, $b buffer, $n senders x $INCAST_ROUNDS rounds"
			incast_run "$algo" "$b" "$n" "$INCAST_ROUNDS"
		done
		kill "$srv" 2>/dev/null || true
		ip netns pids "$NS_SND" | xargs -r kill 2>/dev/null || true
		bg_stop_all
		wait_until 10 sh -c "! ss -N $NS_SND -Htln 'sport = :7000' | grep -q ." ||
			die "incast server did not stop"
	done
}

# ---- scenario 3: convergence and fairness ----------------------------------
scenario_converge()
{
	local algo=$1 raw t0 samples pre=$CONV_ALONE mid=$CONV_TOGETHER total cfg

	total=$((pre + mid + pre))
	log "converge: $algo, flow 1 for ${total}s, flow 2 joins at ${pre}s for ${mid}s"
	algo_setup "$algo"
	algo_bottleneck
	iperf_server 5201
	iperf_server 5202
	raw=$WORK/c-$algo.raw
	t0=$(now)
	sampler "$raw" $((total + 1)) "5201 5202"
	local sp=$LAST_PID
	bg_start ip netns exec "$NS_SND" iperf3 -c "$RCV_IP" -p 5201 -t "$total" -i 0 >/dev/null 2>&1
	local f1=$LAST_PID
	sleep_until "$t0" "$pre"
	nsx "$NS_SND" iperf3 -c "$RCV_IP" -p 5202 -t "$mid" -i 0 > /dev/null 2>&1 ||
		die "iperf3 flow 2 failed ($algo)"
	wait "$f1" || die "iperf3 flow 1 failed ($algo)"
	wait "$sp" || true
	bg_stop_all

	samples=$WORK/c-$algo.csv
	parse_samples "$raw" "$t0" > "$samples"
	cfg=$(check_socket_config "$samples")
	case $cfg in *check=fail*) FAILED=1;; esac

	# per-flow goodput in 0.5 s bins from bytes_acked (sum per port)
	awk -F, -v a="$algo" '
	$5 == 0 { next }
	{ key = $1 SUBSEP $5; b[key] += $6; if (!($1 in seen)) { seen[$1] = 1; ts[++nt] = $1 } }
	END {
		for (i = 1; i <= nt; i++) {
			t = ts[i]; bin = int(t / 0.5)
			for (p = 5201; p <= 5202; p++) {
				v = b[t, p] + 0
				if (!((p, bin) in first) && v > 0) { first[p, bin] = v; ft[p, bin] = t }
				if (v > 0) { last[p, bin] = v; lt[p, bin] = t }
			}
			if (bin > maxbin) maxbin = bin
		}
		for (bin = 0; bin <= maxbin; bin++) {
			printf "%s,%.1f", a, bin * 0.5
			for (p = 5201; p <= 5202; p++) {
				r = 0
				# rate from the last sample of the previous bin to the
				# last of this one, else within this bin
				if ((p, bin - 1) in last && (p, bin) in last)
					r = (last[p, bin] - last[p, bin - 1]) * 8 / (lt[p, bin] - lt[p, bin - 1]) / 1e6
				else if ((p, bin) in last && lt[p, bin] > ft[p, bin])
					r = (last[p, bin] - first[p, bin]) * 8 / (lt[p, bin] - ft[p, bin]) / 1e6
				printf ",%.2f", r < 0 ? 0 : r
			}
			printf "\n"
		}
	}' "$samples" > "$WORK/c-$algo.bins"

	# join/leave times as seen in the samples, then the statistics of the
	# shared period: Jain per bin (mean), Jain of the means, stddev of each
	# flow over time, time until both are within 20% of the fair share for
	# 3 bins in a row
	local stats
	stats=$(awk -F, -v cap="$(awk -v c="$RATE_MBIT" -v m=$MSS -v w=$MTU_WIRE 'BEGIN { print c * m / w }')" "$AWK_SQRT"'
	{ t[NR] = $2; x[NR] = $3; y[NR] = $4 }
	END {
		for (i = 1; i <= NR; i++) if (y[i] > 0) { if (!js) js = i; je = i }
		if (!js) { print "join_s=nan"; exit }
		for (i = js + 1; i < je; i++) {		# skip the partial bins at the edges
			n++; s1 += x[i]; s2 += y[i]; q1 += x[i] * x[i]; q2 += y[i] * y[i]
			sj += (x[i] + y[i]) * (x[i] + y[i]) / (2 * (x[i] * x[i] + y[i] * y[i]) + 1e-9)
			d = x[i] - y[i]; if (d < 0) d = -d
			if (!conv && x[i] > 0 && y[i] > 0 && d <= 0.2 * (x[i] + y[i])) {
				run++; if (run == 3) conv = t[i - 2] - t[js]
			} else if (!conv) run = 0
		}
		m1 = n ? s1 / n : 0; m2 = n ? s2 / n : 0
		sd1 = n ? root(q1 / n - m1 * m1) : 0; sd2 = n ? root(q2 / n - m2 * m2) : 0
		rec = "nan"
		for (i = je + 1; i <= NR; i++) if (x[i] >= 0.8 * cap) { rec = sprintf("%.1f", t[i] - t[je]); break }
		printf "join_s=%.1f leave_s=%.1f shared_bins=%d flow1_mbit=%.2f flow2_mbit=%.2f", t[js], t[je], n, m1, m2
		printf " flow1_sd_mbit=%.2f flow2_sd_mbit=%.2f jain_of_means=%.4f jain_per_bin=%.4f", sd1, sd2, (m1 + m2) * (m1 + m2) / (2 * (m1 * m1 + m2 * m2) + 1e-9), n ? sj / n : 0
		printf " converge_s=%s recover_s=%s", conv ? sprintf("%.1f", conv) : "nan", rec
	}' "$WORK/c-$algo.bins")
	echo "RESULT scenario=converge algo=$algo alone_s=$pre together_s=$mid $stats $cfg"
	csv_begin converge_ts "algo,t_s,flow1_mbit,flow2_mbit"
	cat "$WORK/c-$algo.bins"
	csv_end converge_ts
}

# ---- scenario 4: alpha while the marking threshold changes -----------------
scenario_alpha()
{
	local algo=$1 raw t0 samples k phase secs total limit

	secs=$ALPHA_PHASE
	set -- $ALPHA_KS
	total=$((secs * $#))
	limit=$((DEEP_PKTS * MTU_WIRE))
	log "alpha: $algo, one flow, K = $* bytes, ${secs}s each"
	algo_setup "$algo"
	bottleneck red "$1" "$limit"
	iperf_server 5201
	raw=$WORK/a-$algo.raw
	t0=$(now)
	sampler "$raw" $((total + 1)) 5201
	local sp=$LAST_PID
	bg_start ip netns exec "$NS_SND" iperf3 -c "$RCV_IP" -p 5201 -t $((total + 1)) -i 0 >/dev/null 2>&1
	local fp=$LAST_PID
	: > "$WORK/a-$algo.phases"
	phase=0
	for k in "$@"; do
		# phases start on a fixed schedule, whatever the change costs
		sleep_until "$t0" $((phase * secs))
		if [ "$phase" -gt 0 ]; then
			red_change_k "$k" "$limit"
		fi
		echo "$phase $(awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.3f", a - b }') $k" >> "$WORK/a-$algo.phases"
		phase=$((phase + 1))
	done
	wait "$fp" || die "iperf3 failed ($algo)"
	wait "$sp" || true
	bg_stop_all

	samples=$WORK/a-$algo.csv
	parse_samples "$raw" "$t0" > "$samples"
	local cfg
	cfg=$(check_socket_config "$samples")
	case $cfg in *check=fail*) FAILED=1;; esac

	# the data socket = the one with the most bytes acked at each sample
	awk -F, -v a="$algo" -v pf="$WORK/a-$algo.phases" '
	BEGIN { while ((getline l < pf) > 0) { split(l, f, " "); np++; ps[np] = f[2]; pk[np] = f[3] } }
	$5 != 0 && ($1 != t || $6 > best) { t = $1; best = $6; row[$1] = $0; if (!($1 in seen)) { seen[$1] = 1; ts[++nt] = $1 } }
	END {
		for (i = 1; i <= nt; i++) {
			split(row[ts[i]], f, ",")
			k = pk[1]; for (j = 1; j <= np; j++) if (f[1] + 0 >= ps[j]) k = pk[j]
			printf "%s,%s,%d,%s,%s,%s,%s\n", a, f[1], k, f[8], f[7], f[2], f[6]
		}
	}' "$samples" > "$WORK/a-$algo.ts"

	# per phase: mean alpha / backlog / goodput over its second half, and
	# the fluid-model prediction alpha ~ sqrt(2 / W*), W* = (C*RTT + K)/MSS
	awk -F, -v a="$algo" -v c="$RATE_MBIT" -v rtt="$BASE_RTT_MS" -v mss=$MSS -v secs="$secs" -v pf="$WORK/a-$algo.phases" "$AWK_SQRT"'
	BEGIN { while ((getline l < pf) > 0) { split(l, f, " "); np++; ps[np] = f[2]; pk[np] = f[3] } }
	{
		for (j = np; j >= 1; j--) if ($2 >= ps[j]) break
		if (j < 1 || $2 < ps[j] + secs / 2) next
		n[j]++; al[j] += $4; bl[j] += $6
		if (!(j in fb)) { fb[j] = $7; ft[j] = $2 }
		lb[j] = $7; lt[j] = $2
	}
	END {
		for (j = 1; j <= np; j++) {
			w = (c * 1e6 / 8 * rtt / 1000 + pk[j]) / mss
			model = 1024 * root(2 / w)
			if (model > 1024)
				model = 1024
			am = n[j] ? al[j] / n[j] : -1
			qm = n[j] ? bl[j] / n[j] / 1000 : 0
			gp = lt[j] > ft[j] ? (lb[j] - fb[j]) * 8 / (lt[j] - ft[j]) / 1e6 : 0
			printf "RESULT scenario=alpha algo=%s phase=%d k_bytes=%d samples=%d", a, j, pk[j], n[j]
			printf " alpha_mean=%.1f alpha_theory=%.1f q_kb_mean=%.1f goodput_mbit=%.2f\n", am, model, qm, gp
		}
	}' "$WORK/a-$algo.ts"
	echo "RESULT scenario=alpha algo=$algo phase=all $cfg"
	csv_begin alpha_ts "algo,t_s,k_bytes,alpha,cwnd,backlog_bytes,bytes_acked"
	cat "$WORK/a-$algo.ts"
	csv_end alpha_ts
}

# ---- scenario 5: connection probability of ECT vs non-ECT SYNs -------------
# The seed's "SYN/ACK ECT test": RED drops what it cannot mark, so a SYN
# without ECT competes badly with DCTCP flows that keep the queue at K.
scenario_syn()
{
	local algo=$1 m out t0 client server

	algo_setup "$algo"
	bottleneck red "$K_BYTES" $((DEEP_PKTS * MTU_WIRE))
	bg_start ip netns exec "$NS_RCV" "$INCAST_BIN" server -p 7001
	wait_until 10 listening "$NS_RCV" 7001 || die "probe listener did not start"
	for m in $SYN_COMPETING; do
		log "syn: $algo, $m competing flows, $SYN_TRIES ECT (dctcp) and non-ECT (cubic) SYNs"
		iperf_server 5201
		server=$LAST_PID
		t0=$(now)
		bg_start ip netns exec "$NS_SND" iperf3 -c "$RCV_IP" -p 5201 -P "$m" -t 120 -i 0 >/dev/null 2>&1
		client=$LAST_PID
		sleep_until "$t0" 2		# let the flows fill the queue to K
		out=$WORK/s-$algo-$m.csv
		nsx "$NS_SND" "$INCAST_BIN" probe -c "$RCV_IP" -p 7001 -n "$SYN_TRIES" \
			-C "$SYN_CCS" -w 50 -T 900 > "$out" || die "connection probe failed"
		kill "$client" "$server" 2>/dev/null || true
		wait "$client" "$server" 2>/dev/null || true
		wait_until 10 sh -c "! ss -N $NS_RCV -Htln 'sport = :5201' | grep -q ." ||
			die "iperf3 server on port 5201 did not stop"
		# first congestion control: ECT SYN, second: non-ECT SYN
		awk -F, -v a="$algo" -v m="$m" -v ccs="$SYN_CCS" '
		BEGIN { split(ccs, cc, ",") }
		{ n[$2]++; if ($4 >= 0) { ok[$2]++; us[$2] += $4 } }
		END {
			e = cc[1]; x = cc[2]
			printf "RESULT scenario=syn algo=%s competing=%d tries=%d", a, m, n[e]
			printf " p_ect=%.2f p_nonect=%.2f", ok[e] / n[e], ok[x] / n[x]
			printf " ect_ms_mean=%.2f nonect_ms_mean=%.2f\n", ok[e] ? us[e] / ok[e] / 1000 : -1,
				ok[x] ? us[x] / ok[x] / 1000 : -1
		}' "$out"
	done
	bg_stop_all
}

# ---- main ------------------------------------------------------------------
usage()
{
	echo "usage: $0 [--quick|--long] [--impl ours|intree|none] [--ko PATH]" \
		"[--algos 'A B..'] [--scenarios 'queue incast converge alpha syn']" >&2
	exit 2
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case $1 in
		--quick) MODE=quick ;;
		--long) MODE=long ;;
		--impl) IMPL=$2; shift ;;
		--ko) KO=$2; shift ;;
		--incast) INCAST_BIN=$2; shift ;;
		--sampler) SAMPLER_BIN=$2; shift ;;
		--algos) ALGOS=$2; shift ;;
		--scenarios) SCENARIOS=$2; shift ;;
		*) usage ;;
		esac
		shift
	done
	if [ -z "$ALGOS" ]; then
		case $IMPL in
		ours) ALGOS="dctcp-ours dctcp-reno cubic-ecn reno-ecn cubic-noecn" ;;
		intree) ALGOS="dctcp-intree" ;;
		none) ALGOS="cubic-noecn" ;;
		esac
	fi
	if [ "$MODE" = quick ]; then
		QUEUE_RUNS="4:10"		# flows:seconds
		INCAST_SENDERS="4 8 19"
		INCAST_ROUNDS=20
		CONV_ALONE=2 CONV_TOGETHER=8
		ALPHA_PHASE=4
		SYN_TRIES=8
	else
		QUEUE_RUNS="4:30 19:30"		# 19 senders x 30 s, as in the seed
		INCAST_SENDERS="2 4 8 12 19 32"
		INCAST_ROUNDS=100
		CONV_ALONE=5 CONV_TOGETHER=30
		ALPHA_PHASE=8
		SYN_TRIES=20
	fi
	SYN_COMPETING=${BENCH_SYN_COMPETING:-1 2 4 8 16}
	SYN_CCS=${BENCH_SYN_CCS:-dctcp,cubic}	# ECT SYN, non-ECT SYN
	INCAST_TOTAL=$((1000 * 1000))	# bytes per query, split over the senders
	ALPHA_KS="$K_BYTES 6000 120000 $K_BYTES"
}

main()
{
	local algo s run

	parse_args "$@"
	for t in ip tc ss nstat ping iperf3 awk sort; do
		need "$t" "$(case $t in ping) echo iputils-ping;; iperf3) echo iperf3;; awk|sort) echo busybox-static;; *) echo iproute2;; esac)"
	done
	[ -x "$INCAST_BIN" ] || die "incast helper $INCAST_BIN missing: build it with make -C tools/bench"
	[ -x "$SAMPLER_BIN" ] || die "sampler helper $SAMPLER_BIN missing: build it with make -C tools/bench"
	WORK=$(mktemp -d /tmp/bench.XXXXXX)

	load_modules
	allow_algos
	setup_topology
	measure_base_rtt
	echo "RESULT scenario=env impl=$IMPL module=$MODVER kernel=$(uname -r)" \
		"mode=$MODE rate_mbit=$RATE_MBIT k_bytes=$K_BYTES base_rtt_ms=$BASE_RTT_MS" \
		"cpus=$(grep -c ^processor /proc/cpuinfo) algos=$(echo "$ALGOS" | tr ' ' '+')"
	log "bottleneck ${RATE_MBIT} Mbit/s, base RTT ${BASE_RTT_MS} ms, K=${K_BYTES} B" \
		"(K/C = $(awk -v k="$K_BYTES" -v c="$RATE_MBIT" 'BEGIN { printf "%.2f", k * 8 / c / 1000 }') ms)"

	for s in $SCENARIOS; do
		for algo in $ALGOS; do
			case $s in
			queue)
				for run in $QUEUE_RUNS; do
					scenario_queue "$algo" "${run%:*}" "${run#*:}"
				done
				;;
			incast) scenario_incast "$algo" ;;
			converge) scenario_converge "$algo" ;;
			alpha)
				case $algo in
				dctcp-ours|dctcp-intree) scenario_alpha "$algo" ;;
				esac
				;;
			syn)
				case $algo in
				dctcp-ours|dctcp-intree) scenario_syn "$algo" ;;
				esac
				;;
			*) die "unknown scenario $s" ;;
			esac
		done
	done
	log "guest done (failed checks: $FAILED)"
	return "$FAILED"
}

main "$@"; exit $?
