#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's tracepoints (events/tcp_dctcp), and what they prove.
#
#  - every event is there, with the fields the checker needs;
#  - dctcp-reno chosen by name and dctcp-reno by fallback are told apart
#    (ss: nothing vs dctcp:fallback_mode; one dctcp_fallback event);
#  - the oracle recording: flows under RED marking, netem CE marking at
#    fixed probabilities, random loss and black holes (RTOs), for several
#    dctcp_shift_g, alpha_on_init and clamp settings, with every event
#    recorded in a private trace instance; a ring buffer that lost events
#    fails the run.  The records of all phases are printed at the end,
#    gzip + base64 between "# oracle-begin" and "# oracle-end", for the
#    host checker (tools/testing/dctcp/oracle), which recomputes each one
#    with include/dctcp_math.h;
#  - the window law: with shift_g 10 (alpha barely moves) and alpha_on_init
#    0 or 1024, the ssthresh TCP_INFO reports after the first CE-marked
#    window is the cwnd of that window or half of it, and is the ssthresh
#    of the first dctcp_ce_reduction event.
#
#   snd -[netem: CE marks, loss, black hole]- rtr [tbf -> red ecn] - rcv

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
trap trace_cleanup EXIT

TRACEFS=/sys/kernel/tracing
INST=$TRACEFS/instances/dctcp_trace
EVENTS=(dctcp_init dctcp_alpha_update dctcp_ce_reduction dctcp_loss dctcp_undo dctcp_fallback)
ORACLE=$TMPD/oracle		# records of every traced phase
PHASE=$TMPD/phase		# records of the last one
ORACLE_SECS=${ORACLE_SECS:-4}	# length of each oracle flow
ORACLE_FLOWS=${ORACLE_FLOWS:-3}	# flows per phase
# The phases are repeated until the records reach ORACLE_EVENTS, or no
# new round may start after ORACLE_BUDGET seconds (half the script's time).
ORACLE_EVENTS=${ORACLE_EVENTS:-12000}
ORACLE_BUDGET=${ORACLE_BUDGET:-$(( ${SCRIPT_TIMEOUT:-900} / 2 ))}
TRACE_BUF_KB=${TRACE_BUF_KB:-16384}	# per CPU
INFINITE_SSTHRESH=2147483647	# TCP_INFINITE_SSTHRESH

trace_cleanup()
{
	set +e
	lib_cleanup_trace
	lib_cleanup
}

lib_cleanup_trace()
{
	[[ -d $INST ]] || return 0
	echo 0 > "$INST/events/tcp_dctcp/enable"
	rmdir "$INST"
}

# trace_instance: a private ring buffer with every tcp_dctcp event on.
# The events of one socket can come from both CPUs: their order in the
# merged output is their clock's.  "global" is not good enough under TCG:
# a CPU whose clock lags gets the last global value for a run of events,
# and equal timestamps merge in any order (seen: one socket's alpha chain
# out of order).  "mono" reads the clocksource every CPU shares.  The
# receiver's alpha updates (no data acked, alpha already 0) are filtered
# out: dropping only updates from 0 to... 0 keeps every chain intact.
trace_instance()
{
	lib_cleanup_trace
	mkdir "$INST"
	echo mono > "$INST/trace_clock"
	echo "$TRACE_BUF_KB" > "$INST/buffer_size_kb"
	echo 'delivered != 0 || alpha_old != 0' \
		> "$INST/events/tcp_dctcp/dctcp_alpha_update/filter"
	echo 1 > "$INST/events/tcp_dctcp/enable"
}

# lost_events: events the ring buffer overwrote or dropped, all CPUs.
lost_events()
{
	cat "$INST"/per_cpu/cpu*/stats |
		awk '/^(overrun|commit overrun|dropped events):/ { n += $NF }
		     END { print n + 0 }'
}

# trace_phase NAME CMD...: run CMD with the events recorded; the records
# go to $PHASE and, with the phase's parameters, to $ORACLE.  Lost events
# fail the phase.
trace_phase()
{
	local name=$1 lost n

	shift
	echo 0 > "$INST/tracing_on"
	: > "$INST/trace"
	echo 1 > "$INST/tracing_on"
	"$@"
	echo 0 > "$INST/tracing_on"
	lost=$(lost_events)
	awk -f "$HERE/dctcp_trace.awk" "$INST/trace" > "$PHASE"
	n=$(wc -l < "$PHASE")
	{
		echo "P $name $(param_get dctcp_shift_g) $(param_get dctcp_alpha_on_init) $(param_get dctcp_clamp_alpha_on_loss)"
		cat "$PHASE"
		echo "E $name $n $lost"
	} >> "$ORACLE"
	diag "$name: $n events: $(cut -d' ' -f1 "$PHASE" | sort | uniq -c | tr -s ' \n' ' ')"
	(( lost == 0 )) || fail "$name: the ring buffer lost $lost events (TRACE_BUF_KB=$TRACE_BUF_KB)"
}

# phase_count KIND: records of that kind in the last phase.
phase_count()
{
	grep -c "^$1 " "$PHASE" || true
}

# records PORT KIND: the last phase's records of KIND for the connection
# whose source port is PORT.
records()
{
	grep "^$2 [^ ]* [^/]*/[^ /]*:$1/" "$PHASE" || true
}

require_trace()
{
	[[ $DCTCP_IMPL == ours ]] || not_applicable "the in-tree module has no tracepoints"
	[[ -d $TRACEFS/events/tcp_dctcp ]] ||
		skip_because "no $TRACEFS/events/tcp_dctcp: tracefs not mounted or the kernel has no event tracing"
	# one instance for the whole script (trace_phase clears it), removed
	# at exit: fewer instance teardowns, each of which waits for RCU
	[[ -d $INST ]] || trace_instance
}

test_events()
{
	local ev fmt field

	[[ $DCTCP_IMPL == ours ]] || not_applicable "the in-tree module has no tracepoints"
	[[ -d $TRACEFS/events/tcp_dctcp ]] ||
		skip_because "no $TRACEFS/events/tcp_dctcp: tracefs not mounted or the kernel has no event tracing"
	for ev in "${EVENTS[@]}"; do
		fmt=$TRACEFS/events/tcp_dctcp/$ev/format
		[[ -r $fmt ]] || fail "no event $ev"
		for field in skaddr family sport dport saddr daddr; do
			grep -q "field:.* $field\(\[.*\]\)\{0,1\};" "$fmt" ||
				fail "$ev: no field $field"
		done
	done
	for field in delivered delivered_ce shift_g alpha_old alpha; do
		grep -q "field:.* $field;" "$TRACEFS/events/tcp_dctcp/dctcp_alpha_update/format" ||
			fail "dctcp_alpha_update: no field $field"
	done
}

# hold OUT CLIENT-ARGS...: a connection from snd that stays open.
hold()
{
	local out=$1

	shift
	flow_client_bg "$out" -H "$@" $RCV4 "$PORT"
	busywait 10000 grep -q '^holding' "$out" ||
		fail "client did not connect: $(cat "$out.err")"
	ss_flow "$snd" "$PORT" > "$out.ss"
}

client_sport()
{
	sed -n 's/^sport //p' "$1"
}

# dctcp-reno by name: no DCTCP state reported (like reno), no fallback.
test_reno_by_name()
{
	local out=$TMPD/reno port

	require_trace
	topo_setup
	flow_server
	trace_phase reno-by-name hold "$out" -c dctcp-reno
	port=$(client_sport "$out")
	diag "ss: $(cat "$out.ss")"
	[[ $(client_cc "$out") == dctcp-reno ]] || fail "getsockopt says $(client_cc "$out")"
	[[ " $(cat "$out.ss") " == *" dctcp-reno "* ]] || fail "ss does not show dctcp-reno"
	[[ $(cat "$out.ss") != *dctcp:* ]] || fail "ss reports DCTCP state for dctcp-reno chosen by name"
	[[ -z $(records "$port" F) ]] || fail "a dctcp_fallback event for dctcp-reno chosen by name"
}

# A receiver without ECN: dctcp falls back, says so in ss and the trace.
test_reno_fallback()
{
	local out=$TMPD/fb port

	require_trace
	topo_setup
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_ecn=0 net.ipv4.tcp_congestion_control=reno
	flow_server
	trace_phase fallback hold "$out" -c dctcp
	port=$(client_sport "$out")
	diag "ss: $(cat "$out.ss")"
	[[ $(client_cc "$out") == dctcp-reno ]] || fail "getsockopt says $(client_cc "$out")"
	[[ $(cat "$out.ss") == *dctcp:fallback_mode* ]] || fail "ss: no dctcp:fallback_mode"
	[[ $(records "$port" F | wc -l) == 1 ]] ||
		fail "$(records "$port" F | wc -l) dctcp_fallback events, want 1"
}

# ---------------------------------------------------------------- oracle
# flows HOST [SETUP...]: $ORACLE_FLOWS dctcp flows of $ORACLE_SECS to HOST;
# once all are connected, run SETUP (black holes: a lost SYN would cost a
# second or more of the flow); wait for all.
flows()
{
	local host=$1 pids=() i

	shift
	for ((i = 0; i < ORACLE_FLOWS; i++)); do
		flow_client_bg "$TMPD/flow$i" -c dctcp -t "$ORACLE_SECS" "$host" "$PORT"
		pids+=("$FLOW_PID")
	done
	for ((i = 0; i < ORACLE_FLOWS; i++)); do
		busywait 20000 grep -q '^sport' "$TMPD/flow$i" ||
			fail "flow $i did not connect: $(cat "$TMPD/flow$i.err")"
	done
	(( $# == 0 )) || "$@"
	for ((i = 0; i < ORACLE_FLOWS; i++)); do
		flow_wait "${pids[$i]}" $((ORACLE_SECS * 1000 + 60000)) ||
			fail "flow $i failed: $(cat "$TMPD/flow$i.err")"
	done
	data_netem_off
}

# black_holes N: N times, drop everything on the data path for a second
# (RTOs with backoff), then let it through for a second.
black_holes()
{
	local i

	for ((i = 0; i < $1; i++)); do
		data_netem loss 100%
		sleep 1
		data_netem_off
		sleep 1
	done
}

# oracle_phase NAME SHIFT_G ALPHA_ON_INIT CLAMP TOPO [ARGS...]: one
# recorded phase; TOPO builds the path and runs flows.
oracle_phase()
{
	local name=$1

	param_set dctcp_shift_g "$2"
	param_set dctcp_alpha_on_init "$3"
	param_set dctcp_clamp_alpha_on_loss "$4"
	shift 4
	topo_setup
	trace_phase "$name" "$@"
	topo_reset
}

# RED marking at a small K: a short queue, so many RTTs per second.
red_flows()
{
	bottleneck_red "$1"
	flow_server
	flows $RCV4
}

# netem CE-marks each packet with probability P (no bottleneck), from the
# first: dctcp sends every packet as ECT, the SYN too, so none is dropped.
# (Applied once the flows run, the marks could come too late on the debug
# kernel, where one tc command can take seconds.)
netem_ecn_flows()
{
	local p=$1 host=${2:-$RCV4}

	if [[ $host == "$RCV6" ]]; then
		flow_server "$rcv" -6
	else
		flow_server
	fi
	data_netem loss "$p" ecn
	flows "$host"
}

# random loss of packets in front of a RED marking bottleneck
loss_flows()
{
	bottleneck_red "$2"
	flow_server
	data_netem loss "$1"
	flows $RCV4
}

# The flows outlast the two black holes even where starting them and each
# tc command take seconds (the debug kernel).
rto_flows()
{
	local ORACLE_SECS=$((ORACLE_SECS + 8))

	bottleneck_red "$1"
	flow_server
	flows $RCV4 black_holes 2
}

# oracle_round R: every phase once; phase names end in .R
oracle_round()
{
	local r=$1 k=4500

	oracle_phase "red-g4.$r" 4 1024 0 red_flows $k
	oracle_phase "red-g0-init0.$r" 0 0 0 red_flows $k
	oracle_phase "ecn1-g10.$r" 10 0 0 netem_ecn_flows 1%
	oracle_phase "ecn10-g4.$r" 4 1024 0 netem_ecn_flows 10%
	oracle_phase "ecn50-g1.$r" 1 512 0 netem_ecn_flows 50%
	oracle_phase "ecn5-g3-ipv6.$r" 3 1024 0 netem_ecn_flows 5% $RCV6
	oracle_phase "loss1-g4.$r" 4 1024 0 loss_flows 1% $k
	oracle_phase "loss3-g5-clamp.$r" 5 0 1 loss_flows 3% $k
	oracle_phase "rto-g4.$r" 4 1024 1 rto_flows $k
}

oracle_records()
{
	grep -c '^[IARLUF] ' "$ORACLE" || true
}

# Rounds of all phases until $ORACLE_EVENTS records, within the budget.
test_oracle()
{
	local r=0 start=$SECONDS kinds kind

	require_trace
	while (( r == 0 || ($(oracle_records) < ORACLE_EVENTS &&
			    SECONDS - start < ORACLE_BUDGET) )); do
		r=$((r + 1))
		oracle_round $r
	done
	kinds=$(sed -n 's/^\([IARLUF]\) .*/\1/p' "$ORACLE" | sort | uniq -c | tr -s ' \n' ' ')
	diag "oracle records: $(oracle_records) ($kinds) in $r rounds, $((SECONDS - start)) s"
	(( $(oracle_records) >= ORACLE_EVENTS )) ||
		diag "fewer than $ORACLE_EVENTS records within ${ORACLE_BUDGET}s"
	for kind in I A R L; do
		grep -q "^$kind " "$ORACLE" || fail "no $kind records in any phase"
	done
	grep -q '^L [^ ]* [^ ]* rto ' "$ORACLE" || fail "no RTO loss reaction recorded"
	grep -q '^L [^ ]* [^ ]* recovery ' "$ORACLE" || fail "no fast recovery recorded"
}

# ---------------------------------------------------------------- window law
# The marks start with the connection (dctcp's SYN is ECT: marked, not
# dropped), so that the first reduction comes in slow start, long before
# a window large enough to overflow a queue on the way.
window_flow()
{
	local out=$1

	data_netem loss 5% ecn
	flow_client "$out" -c dctcp -t 2 -i 10 $RCV4 "$PORT" ||
		fail "client failed: $(cat "$out.err")"
	data_netem_off
}

# With shift_g 10, alpha is still about alpha_on_init when the first
# marks arrive.  The first finite ssthresh TCP_INFO reports (sampled every
# 10 ms, RTT >= 50 ms: before a second reduction) must be the one the first
# dctcp_ce_reduction event set, for that event's cwnd C:
#   alpha_on_init 0:    C - 1 - C/64 <= ssthresh <= C
#   alpha_on_init 1024: ceil(C/2) <= ssthresh <= ceil(C/2) + 1 + C/64
# C/64 allows alpha to drift by 32/1024 before the first reduction.
# Packets the guest's two CPUs reorder could start a fast recovery before
# the first mark: the sender needs 127 dupacks (no RACK) to see a loss, and
# a flow whose first reduction still was a loss is run again (3 tries).
test_window_law()
{
	local init=$1 out=$TMPD/wl port first ev cwnd alpha ss_ev ss_info lo hi try

	require_trace
	param_set dctcp_shift_g 10
	param_set dctcp_alpha_on_init "$init"
	topo_setup
	in_ns "$snd" sysctl -qw net.ipv4.tcp_recovery=0 net.ipv4.tcp_reordering=127
	ack_delay 50
	flow_server
	for try in 1 2 3; do
		trace_phase "window-law-init$init.$try" window_flow "$out"
		port=$(client_sport "$out")
		first=$(records "$port" '[RL]' | head -n 1)
		[[ -n $first ]] || fail "no window reduction traced for port $port"
		read -r ev _ _ cwnd alpha ss_ev _ <<< "$first"
		[[ $ev == L ]] || break
		diag "try $try: the first reduction was a loss: $first"
	done
	[[ $ev == R ]] || fail "3 flows whose first reduction was a loss"
	ss_info=$(samples "$out" ssthresh | awk -v inf=$INFINITE_SSTHRESH '$1 < inf { print; exit }')
	[[ -n $ss_info ]] || fail "TCP_INFO never showed a finite ssthresh"
	if (( init == 0 )); then
		lo=$((cwnd - 1 - cwnd / 64)) hi=$cwnd
	else
		lo=$(((cwnd + 1) / 2)) hi=$(((cwnd + 1) / 2 + 1 + cwnd / 64))
	fi
	figure "window_law init=$init try=$try cwnd=$cwnd alpha=$((alpha >> 20)) ssthresh_event=$ss_ev ssthresh_tcp_info=$ss_info allowed=$lo..$hi"
	(( ss_info == ss_ev )) ||
		fail "TCP_INFO ssthresh $ss_info is not the first reduction's $ss_ev"
	(( lo <= ss_info && ss_info <= hi )) ||
		fail "ssthresh $ss_info for cwnd $cwnd outside $lo..$hi (alpha_on_init $init)"
}

# The oracle's input, for the host: gzip + base64 between markers.
dump_oracle()
{
	[[ -s $ORACLE ]] || return 0
	echo "# oracle-begin $(wc -l < "$ORACLE") lines sha256 $(sha256sum < "$ORACLE" | cut -d' ' -f1)"
	gzip -9 -c "$ORACLE" | base64 | sed 's/^/# oracle-data /'
	echo "# oracle-end"
}

main()
{
	require_dctcp
	ktap_header 6

	run_test "tcp_dctcp events with connection identity and the law's inputs" test_events
	run_test "dctcp-reno by name: no DCTCP info, no fallback event" test_reno_by_name
	run_test "fallback to dctcp-reno: fallback_mode in ss, one dctcp_fallback event" \
		test_reno_fallback
	run_test "oracle recording: RED, netem CE 1/5/10/50%, loss, RTOs; no lost events" \
		test_oracle
	run_test "window law: alpha_on_init 0, shift_g 10: ssthresh = cwnd" \
		test_window_law 0
	run_test "window law: alpha_on_init 1024, shift_g 10: ssthresh = cwnd/2" \
		test_window_law 1024
	dump_oracle
	ktap_finish
}

main "$@"
