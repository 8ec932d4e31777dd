#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make bench`: the DCTCP paper's comparisons on simulated
# time.  Runs in a User-Mode Linux guest booted with time-travel=inf-cpu
# (tools/bench/bench.sh boots it): rates, RTTs and queues are exact and the
# 1 Gbit/s bottleneck is the paper's.  The network is the test suite's
# (dctcp_topo.sh: snd -- rtr -- rcv, the bottleneck on rtr's egress), the
# traffic dctcp_flow (long flows, RTT probes, qdisc samples in one process)
# and incast (partition/aggregate).
#
#   bench-guest.sh --impl ours|intree [--long]
#                  [--scenarios "queue incast converge alpha 10g"] [--rows "ROW..."]
#
# One boot per tcp_dctcp implementation (bench.sh boots the guest twice):
# --impl ours runs every row but dctcp-intree with our module, --impl
# intree the dctcp-intree row with the kernel's own module.  Sharing a boot
# meant an rmmod of ours in between, after every namespace that used dctcp
# was freed: orphaned connections keep a deleted namespace, and their
# references on the module, for minutes of simulated time (see bench.sh).
# Rows, one after the other on the same simulated link:
#   dctcp-ours    our tcp_dctcp ($DCTCP_KO), dctcp on both ends, RED
#   dctcp-reno    our dctcp towards a receiver without ECN: falls back
#   cubic-ecn     CUBIC + RFC 3168 ECN on the same RED
#   reno-ecn      Reno + RFC 3168 ECN on the same RED
#   cubic-noecn   CUBIC without ECN on a deep tail-drop FIFO (1000 packets;
#                 incast: the same shallow buffer as the others)
#   dctcp-intree  the kernel's own tcp_dctcp (--impl intree)
#
# Output on stdout (parsed by bench.sh, see there): "# " progress lines,
# "SCENARIO name start|end" marks, "RESULT scenario=S algo=A k=v ..."
# lines and CSV blocks ("CSV-BEGIN name header" ... "CSV-END name").
# Every RESULT has check=ok only if every data socket of the run reported
# the algorithm and ECN state its row claims.  Exit status 1 if a run
# failed or a check did not hold.

set -eu
shopt -s inherit_errexit

BENCH=$(cd "$(dirname "$0")/.." && pwd)
SUITE=${SUITE:-/opt/tcp_dctcp}
# shellcheck source=../../testing/selftests/net/tcp_dctcp/dctcp_lib.sh
source "$SUITE/dctcp_lib.sh"
# shellcheck source=../../testing/selftests/net/tcp_dctcp/dctcp_sim_lib.sh
source "$SUITE/dctcp_sim_lib.sh"
trap lib_cleanup EXIT

INCAST=$BENCH/incast
AWK_DIR=$BENCH
LONG=0
IMPL=
SCENARIOS="queue incast converge alpha"
ROWS_OURS="dctcp-ours dctcp-reno cubic-ecn reno-ecn cubic-noecn"
ROWS_INTREE="dctcp-intree"
FAILED=0
ONLY_ROWS=		# all

K_1G=30000		# 20 packets: the paper's K at 1 Gbit/s
K_10G=97500		# 65 packets: at 10 Gbit/s
ACK_DELAY_MS=0.1	# base RTT about 100 us, as in the paper's testbed
SHALLOW_BYTES=151400	# incast buffer: 100 packets
INCAST_SIZES="5 19 40"		# --long: 5 10 15 19 25 30 40
INCAST_QUERY=1000000	# bytes per query, split over the senders
INCAST_PORT=5400

log() { echo "# $*"; }

parse_args()
{
	while (( $# )); do
		case $1 in
		--long) LONG=1 ;;
		--impl) IMPL=${2:?}; shift ;;
		--scenarios) SCENARIOS=${2:?}; shift ;;
		--rows) ONLY_ROWS=${2:?}; shift ;;
		*) echo "bench-guest: unknown argument $1" >&2; exit 2 ;;
		esac
		shift
	done
	case $IMPL in
	ours|intree) ;;
	*) echo "bench-guest: --impl ours|intree missing" >&2; exit 2 ;;
	esac
}

# row_setup ROW: the algorithm and ECN of both ends, the queue and what
# the data sockets must report.  Sets SND_CC SND_ECN RCV_CC RCV_ECN QUEUE
# EXPECT_CC EXPECT_ECN.
row_setup()
{
	case $1 in
	dctcp-ours|dctcp-intree)
		SND_CC=dctcp SND_ECN=1 RCV_CC=dctcp RCV_ECN=1 QUEUE=red ;;
	dctcp-reno)
		SND_CC=dctcp SND_ECN=1 RCV_CC=cubic RCV_ECN=0 QUEUE=red ;;
	cubic-ecn)
		SND_CC=cubic SND_ECN=1 RCV_CC=cubic RCV_ECN=1 QUEUE=red ;;
	reno-ecn)
		SND_CC=reno SND_ECN=1 RCV_CC=reno RCV_ECN=1 QUEUE=red ;;
	cubic-noecn)
		SND_CC=cubic SND_ECN=0 RCV_CC=cubic RCV_ECN=0 QUEUE=fifo ;;
	*)
		echo "bench-guest: unknown row $1" >&2
		return 1
		;;
	esac
	EXPECT_CC=$SND_CC EXPECT_ECN=$SND_ECN
	[[ $1 != dctcp-reno ]] || EXPECT_CC=dctcp-reno EXPECT_ECN=0
	# the namespaces' defaults too: the incast responders take them
	in_ns "$snd" sysctl -qw net.ipv4.tcp_ecn="$SND_ECN" \
		net.ipv4.tcp_congestion_control="$SND_CC"
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_ecn="$RCV_ECN" \
		net.ipv4.tcp_congestion_control="$RCV_CC"
}

# row_queue K [LIMIT_BYTES LIMIT_PKTS]: the row's bottleneck queue: RED
# marking at K (hard limit LIMIT_BYTES) or the tail-drop FIFO (LIMIT_PKTS).
row_queue()
{
	if [[ $QUEUE == red ]]; then
		RED_LIMIT=${2:-4000000} bottleneck_red "$1"
	else
		bottleneck_fifo "${3:-1000}"
	fi
}

# check_run OUT: every flow of a dctcp_flow run is EXPECT_CC with
# EXPECT_ECN; prints "ca=.. ecn=.. check=ok|fail"
check_run()
{
	if (check_flows "$1" "$EXPECT_CC" "$EXPECT_ECN") 2> "$1.check"; then
		echo "ca=$EXPECT_CC ecn=$EXPECT_ECN check=ok"
	else
		sed 's/^/# ERROR: /' "$1.check"
		echo "ca=? ecn=? check=fail"
	fi
}

# counters NS: the sender's RTO, TLP and retransmission counters
counters()
{
	echo "$(nstat_get "$1" TcpExtTCPTimeouts) $(nstat_get "$1" TcpExtTCPLossProbes) $(nstat_get "$1" TcpRetransSegs)"
}

# in_row ROW CMD...: CMD in a subshell (errexit on), on a network built
# afresh (snd -- rtr -- rcv, ACKs delayed ACK_DELAY_MS) with the row's
# algorithms and ECN; the network and what CMD started are removed when
# it ends.  A failure is reported and counted, the bench goes on.
in_row()
{
	local row=$1

	shift
	if ! (
		# shellcheck disable=SC2034 # read by topo_reset (dctcp_lib.sh)
		NS_BASE=${#NS_LIST[@]} BG_BASE=${#BG_PIDS[@]}
		trap topo_reset EXIT
		set -e
		topo_setup
		ack_delay "$ACK_DELAY_MS"
		row_setup "$row"
		"$@"
	); then
		log "ERROR: $row: $* failed"
		echo "RESULT scenario=$1 algo=$row check=fail"
		FAILED=1
	fi
}

csv() # NAME HEADER: the CSV block of stdin
{
	echo "CSV-BEGIN $1 $2"
	cat
	echo "CSV-END $1"
}

# ---------------------------------------------------------------- 1: queue
# long_flows SCEN ROW N SECS K: N long flows for SECS; statistics from the
# first quarter of the run on (slow start over)
long_flows()
{
	local scen=$1 row=$2 n=$3 secs=$4 k=$5 out=$TMPD/$1-$2-$3 c0 c1 f from
	local every=1000

	(( n < 10 )) || every=2000
	sim_server "$RCV_CC"
	row_queue "$k"
	read -ra c0 <<< "$(counters "$snd")"
	sim_flows "$out" -c "$SND_CC" -P "$n" -t "$secs" -I "$every" -e 1000
	read -ra c1 <<< "$(counters "$snd")"
	from=$(calc "$secs * 250000")
	f=$(sim_stats "$out" "$from" "$(calc "$secs * 1e6")")
	echo "RESULT scenario=$scen algo=$row flows=$n secs=$secs rate=$RATE k_bytes=$k" \
		"qdisc=$QUEUE base_us=$BASE_US floor_us=$(calc "$BASE_US + $k * 8 / $(rate_bps) * 1e6")" \
		"$f rtos=$((c1[0] - c0[0])) tlps=$((c1[1] - c0[1])) retrans=$((c1[2] - c0[2]))" \
		"$(check_run "$out")"
	awk -v from="$from" -v algo="$row" -v flows="$n" \
		-f "$SUITE/dctcp_flow.awk" -f "$AWK_DIR/bench_series.awk" "$out" |
		csv "${scen}_series" "algo,flows,kind,x,y"
}

scenario_queue()	# SCEN RATE K SECS FLOWS...: rows x flows
{
	local scen=$1 k=$3 secs=$4 n row

	RATE=$2
	shift 4
	for n in "$@"; do
		for row in $ROWS; do
			log "$scen: $row, $n flows, $secs s at $RATE, K=$k"
			in_row "$row" long_flows "$scen" "$row" "$n" "$secs" "$k"
		done
	done
}

# ---------------------------------------------------------------- 2: incast
# incast_run ROW N ROUNDS: N responders in snd, one aggregator in rcv,
# INCAST_QUERY bytes per query, ROUNDS queries after 2 warm-up ones, on
# the shallow buffer; RTOs and TLPs counted over the measured queries.
incast_run()
{
	local row=$1 n=$2 rounds=$3 out=$TMPD/incast-$1-$2 fifo=$TMPD/fifo c0 c1 cpid bad

	row_queue "$K_1G" "$SHALLOW_BYTES" 100
	"$IP_BIN" netns exec "$snd" "$INCAST" server -p "$INCAST_PORT" > "$out.srv" &
	BG_PIDS+=("$!")
	PORT=$INCAST_PORT busywait 5000 listening "$snd" ||
		{ log "incast server did not start"; return 1; }
	rm -f "$fifo"
	mkfifo "$fifo"
	# the client waits for a line on its stdin after the warm-up
	"$IP_BIN" netns exec "$rcv" "$INCAST" client -c $SND4 -p "$INCAST_PORT" -n "$n" \
		-s $((INCAST_QUERY / n)) -r "$rounds" -W 2 < "$fifo" > "$out" 2> "$out.err" &
	cpid=$!
	BG_PIDS+=("$cpid")
	exec {wfd}> "$fifo"
	busywait 60000 grep -qx w "$out" || { log "incast warm-up failed: $(cat "$out.err")"; return 1; }
	read -ra c0 <<< "$(counters "$snd")"
	echo go >&"$wfd"
	exec {wfd}>&-
	wait "$cpid" || { log "incast client failed: $(cat "$out.err")"; return 1; }
	read -ra c1 <<< "$(counters "$snd")"
	bad=$(awk -v cc="cc=$EXPECT_CC" -v ecn="ecn=$EXPECT_ECN" \
		'$1 == "conn" && ($4 != cc || $5 != ecn)' "$out.srv" | head -n 1)
	(( $(grep -c '^conn ' "$out.srv") == n )) && [[ -z $bad ]] ||
		{ log "ERROR: $row: responder sockets: $(grep '^conn ' "$out.srv" | cut -d' ' -f4,5 | sort | uniq -c | tr -s '\n ' ' ')"; bad=1; }
	echo "RESULT scenario=incast algo=$row senders=$n rounds=$rounds query_bytes=$INCAST_QUERY" \
		"buffer_bytes=$([[ $QUEUE == red ]] && echo "$SHALLOW_BYTES" || echo 100pkts)" \
		"rtos=$((c1[0] - c0[0])) tlps=$((c1[1] - c0[1])) retrans=$((c1[2] - c0[2]))" \
		"$(awk -v bytes=$((INCAST_QUERY / n * n)) -f "$AWK_DIR/bench_incast.awk" "$out")" \
		"ca=$EXPECT_CC ecn=$EXPECT_ECN check=$([[ -z $bad ]] && echo ok || echo fail)"
}

scenario_incast()
{
	local rounds=100 n row

	(( LONG )) && rounds=500 INCAST_SIZES="5 10 15 19 25 30 40"
	RATE=1gbit
	for row in $ROWS; do
		for n in $INCAST_SIZES; do
			log "incast: $row, $n senders, $rounds queries of $INCAST_QUERY bytes"
			in_row "$row" incast_run "$row" "$n" "$rounds"
		done
	done
}

# ---------------------------------------------------------------- 3: convergence
# converge_run ROW STAGE_MS: 5 flows joining one by one every STAGE_MS,
# then leaving one by one (the last to join leaves first)
converge_run()
{
	local row=$1 stage=$2 out=$TMPD/conv-$1

	sim_server "$RCV_CC"
	row_queue "$K_1G"
	sim_flows "$out" -c "$SND_CC" -P 5 -S "$stage" -E "$stage" -t "$(calc "9 * $stage / 1000")" -I 2000
	echo "RESULT scenario=converge algo=$row stage_ms=$stage" \
		"$(awk -v stage_us=$((stage * 1000)) -v win_us=10000 -v tol=0.2 \
			-f "$SUITE/dctcp_flow.awk" -f "$AWK_DIR/bench_converge.awk" "$out")" "$(check_run "$out")"
	awk -v mode=rates -v algo="$row" -v bin_us=20000 \
		-f "$SUITE/dctcp_flow.awk" -f "$AWK_DIR/bench_converge.awk" "$out" |
		csv converge_rates "algo,t_s,flow,mbit"
}

scenario_converge()
{
	local stage=400 row

	(( LONG )) && stage=1000
	RATE=1gbit
	for row in $ROWS; do
		log "converge: $row, 5 flows joining every $stage ms, then leaving"
		in_row "$row" converge_run "$row" "$stage"
	done
}

# ---------------------------------------------------------------- 4: alpha
# alpha_run ROW PHASE_MS K...: one flow while RED's K moves every PHASE_MS
alpha_run()
{
	local row=$1 phase=$2 out=$TMPD/alpha-$1 k t0 i=0

	shift 2
	sim_server "$RCV_CC"
	row_queue "$1"
	flow_client_bg "$out" -B "$SIM_SNDBUF" -q "$rtr:rtr1:10" -c "$SND_CC" \
		-t "$(calc "$# * $phase / 1000")" -I 1000 $RCV4 "$PORT"
	t0=$EPOCHREALTIME
	for k in "$@"; do
		(( i++ == 0 )) || bottleneck_red_change "$k"
		echo "phase $((i - 1)) k=$k t_us=$(calc "int(($EPOCHREALTIME - $t0) * 1e6)")" >> "$out.phases"
		sleep "$(calc "$phase / 1000")"		# simulated: exact
	done
	wait "$FLOW_PID" || { log "client failed: $(cat "$out.err")"; return 1; }
	awk -v algo="$row" -v rate_bps="$(rate_bps)" -v base_us="$BASE_US" \
		-v phase_us=$((phase * 1000)) -f "$SUITE/dctcp_flow.awk" \
		-f "$AWK_DIR/bench_alpha.awk" "$out.phases" "$out" \
		> "$out.res"
	grep '^RESULT ' "$out.res" | sed "s/\$/ $(check_run "$out")/"
	grep -v '^RESULT ' "$out.res" | csv alpha_series "algo,t_ms,alpha,k_bytes,model,backlog"
}

scenario_alpha()
{
	local phase=500 row

	(( LONG )) && phase=1000
	RATE=1gbit
	for row in $ROWS; do
		[[ $row == dctcp-ours || $row == dctcp-intree ]] || continue
		log "alpha: $row, one flow, K = 30000 6000 120000 30000 B for $phase ms each"
		in_row "$row" alpha_run "$row" "$phase" 30000 6000 120000 30000
	done
}

# ---------------------------------------------------------------- main
scenarios()
{
	local s

	for s in $SCENARIOS; do
		echo "SCENARIO $s start"
		case $s in
		queue)
			scenario_queue queue 1gbit "$K_1G" $((LONG ? 5 : 1)) 2 19 ;;
		10g)
			scenario_queue 10g 10gbit "$K_10G" $((LONG ? 2 : 1)) 2 19 ;;
		incast|converge|alpha)
			"scenario_$s" ;;
		*)
			echo "bench-guest: unknown scenario $s" >&2
			return 2
			;;
		esac
		echo "SCENARIO $s end"
	done
}

# phase IMPL ROWS: load that tcp_dctcp, measure the base RTT, run every
# scenario for ROWS
phase()
{
	local impl=$1 row

	ROWS=
	for row in $2; do
		[[ -z $ONLY_ROWS || " $ONLY_ROWS " == *" $row "* ]] && ROWS+=" $row"
	done
	[[ -n $ROWS ]] || return 0
	DCTCP_IMPL=$impl
	if ! { dctcp_load && dctcp_is_loaded; }; then
		log "ERROR: cannot load the $impl tcp_dctcp"
		FAILED=1
		return 0
	fi
	allow_cc dctcp
	log "tcp_dctcp: $impl, version $(mod_version), srcversion $(cat "$MOD/srcversion" 2>/dev/null)"
	echo "RESULT scenario=env algo=dctcp-$impl kernel=$(uname -r) module=$(mod_version) srcversion=$(cat "$MOD/srcversion" 2>/dev/null) taint=$(cat "$MOD/taint")"
	RATE=1gbit
	topo_setup
	ack_delay "$ACK_DELAY_MS"
	sim_server dctcp
	BASE_US=$(base_rtt_us)
	topo_reset
	log "base RTT $BASE_US us (probes on the empty path)"
	scenarios
}

main()
{
	parse_args "$@"
	grep -qw 'time-travel=inf-cpu' /proc/cmdline ||
		{ echo "bench-guest: needs User-Mode Linux with time-travel=inf-cpu (tools/bench/bench.sh)" >&2; exit 2; }
	require_tools
	[[ -x $INCAST ]] || { echo "bench-guest: $INCAST missing" >&2; exit 2; }
	if [[ $IMPL == ours ]]; then
		phase ours "$ROWS_OURS"
	else
		phase intree "$ROWS_INTREE"
	fi
	return $FAILED
}

main "$@"
