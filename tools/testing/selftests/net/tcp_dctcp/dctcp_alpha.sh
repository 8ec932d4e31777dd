#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# alpha follows the marks, at the rate g = 1/2^dctcp_shift_g predicts.
#
#   snd0 egress: netem "loss 100% ecn" = every ECT packet gets CE (phase A),
#                removed mid-flow (phase B: no marks at all)
#   rcv0 egress: netem delay $DELAY_MS on the ACKs: a fixed RTT, so that
#                "per RTT" is a countable number of windows
#
# In phase A the fraction of marked bytes F is 1, so from alpha_on_init=0
# alpha_n = 1024 * (1 - (1 - g)^n); in phase B F = 0 and alpha decays as
# alpha_n = alpha_A * (1 - g)^n, one n per window (~ one RTT).  The flow
# samples TCP_CC_INFO/TCP_INFO every $SAMPLE_MS ms: the step between
# consecutive alpha values must show the gain g (within 1.5x, for
# g = 1/16 and 1/4), and the time constant in RTTs must be near
# -1/ln(1 - g) (15.5 and 3.5 windows).
#
# Also: dctcp_alpha_on_init is what a new connection starts with (and
# existing ones keep theirs); RED marking that stops mid-flow (threshold
# raised with `tc qdisc change`) lets alpha decay; with
# dctcp_clamp_alpha_on_loss=1 a loss (here an RTO) sets alpha to the maximum.

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
trap lib_cleanup EXIT

DELAY_MS=${DELAY_MS:-20}
SAMPLE_MS=${SAMPLE_MS:-10}
PHASE_MS=${PHASE_MS:-2500}	# >= 50 RTTs even on the debug kernel

# conn_alpha OUT: hold a connection; sets ALPHA (at connect time, from
# TCP_CC_INFO) and SPORT.  Not to be called in $(...): the held client
# must stay in BG_PIDS to be cleaned up.
conn_alpha()
{
	local out=$1

	flow_client_bg "$out" -H -c dctcp $RCV4 "$PORT"
	busywait 10000 grep -q '^holding' "$out" ||
		fail "client did not connect: $(cat "$out.err")"
	ALPHA=$(samples "$out" alpha | head -n 1)
	SPORT=$(awk '/^sport/ { print $2 }' "$out")
}

# ss_alpha_of LOCAL_PORT
ss_alpha_of()
{
	ss -N "$snd" -Htino "sport = :$1" |
		sed -n 's/.*dctcp:(ce_state:[0-9]*,alpha:\([0-9]*\),.*/\1/p'
}

test_alpha_on_init()
{
	local v a port first_port

	topo_setup
	flow_server
	param_set dctcp_alpha_on_init 1024
	conn_alpha "$TMPD/c1024"
	a=$ALPHA first_port=$SPORT
	diag "alpha_on_init=1024 -> alpha $a at connect"
	(( a == 1024 )) || fail "alpha $a, want 1024"

	for v in 0 512 100; do
		param_set dctcp_alpha_on_init "$v"
		conn_alpha "$TMPD/c$v"
		a=$ALPHA port=$SPORT
		diag "alpha_on_init=$v -> alpha $a at connect, ss: $(ss_alpha_of "$port")"
		(( a == v )) || fail "alpha $a, want $v"
		[[ $(ss_alpha_of "$port") == "$v" ]] || fail "ss alpha differs"
	done
	# the first connection kept what it started with
	[[ $(ss_alpha_of "$first_port") == 1024 ]] ||
		fail "existing connection changed alpha to $(ss_alpha_of "$first_port")"
}

# tau SHIFT: the model's time constant in windows, -1 / ln(1 - g), from
# the series ln(1 - g) = -sum g^k / k (busybox awk has no log()).
tau()
{
	awk -v s="$1" 'BEGIN {
		g = 1; l = 0; p = 1
		for (k = 0; k < s; k++) g /= 2
		for (k = 1; k <= 60; k++) { p *= g; l += p / k }
		printf "%.1f\n", 1 / l }'
}

# analyse OUT: print "g_rise g_decay tau_rise tau_decay peak final rtt_ms".
#
# g: every DCTCP update is alpha' = (1 - g) alpha + g F.  With F = 1
# (phase A) 1024 - alpha shrinks by (1 - g) per update, with F = 0
# (phase B) alpha does.  Sampling every $SAMPLE_MS ms, faster than one
# update per RTT, consecutive distinct values are mostly one update apart
# (two or more updates only make the ratio smaller), so the upper quartile
# of the ratios is 1 - g.  Values within 32 of the target are left out:
# the reported alpha is an integer.
#
# tau: the area between alpha and its target divided by the step is the
# time constant -1/ln(1 - g), here in RTTs (dn = dt / srtt): this checks
# that an update happens about once per RTT.
#
# The phases split at the last maximum of alpha: under 100% marking alpha
# only grows, without marks it only shrinks.  The rise is counted from the
# first update (alpha > 0).
analyse()
{
	awk -f "$HERE/alpha_steps.awk" "$1"
}

# phase_flow OUT T_MS SECS_MAX CHANGE-CMD...: a dctcp flow sampled every
# $SAMPLE_MS; once it has run T_MS run CHANGE-CMD, then let it run T_MS
# more and stop it.  Times are the client's, so a slow guest only
# stretches the phases, it does not shorten the second one.
phase_flow()
{
	local out=$1 t=$2 t_change

	shift 2
	flow_client_bg "$out" -c dctcp -t 60 -i "$SAMPLE_MS" $RCV4 "$PORT"
	wait_sample "$out" "$t" 60000 "$FLOW_PID" ||
		fail "flow did not get to $t ms: $(cat "$out.err")"
	"$@"
	t_change=$(samples "$out" t_ms | tail -n 1)
	wait_sample "$out" $((t_change + t)) 60000 "$FLOW_PID" ||
		fail "flow stopped before $((t_change + t)) ms: $(cat "$out.err")"
	kill -TERM "$FLOW_PID"
	flow_wait "$FLOW_PID" 30000 || fail "client failed: $(cat "$out.err")"
	echo "$t_change"
}

# One mark-all-then-nothing flow with dctcp_shift_g=$1; prints analyse().
rise_decay_flow()
{
	local shift_g=$1 out=$TMPD/flow.g$1

	param_set dctcp_shift_g "$shift_g"
	param_set dctcp_alpha_on_init 0
	data_netem loss 100% ecn
	phase_flow "$out" "$PHASE_MS" data_netem_off > /dev/null
	analyse "$out"
}

# within FACTOR_LO FACTOR_HI MEASURED MODEL
within()
{
	awk -v lo="$1" -v hi="$2" -v m="$3" -v e="$4" \
		'BEGIN { exit !(m > 0 && m >= e * lo && m <= e * hi) }'
}

# gain SHIFT: g = 1/2^SHIFT
gain()
{
	awk -v s="$1" 'BEGIN { g = 1; for (k = 0; k < s; k++) g /= 2; print g }'
}

test_rise_decay()
{
	local shift g gr gd tr td peak final rtt res

	topo_setup
	ack_delay "$DELAY_MS"
	flow_server

	for shift in 4 2; do
		res=$(rise_decay_flow "$shift")
		read -r gr gd tr td peak final rtt <<< "$res"
		g=$(gain "$shift")
		diag "alpha every 50 ms, g=$g: $(samples "$TMPD/flow.g$shift" alpha | awk 'NR % 5 == 1' | tr '\n' ' ')"
		figure "alpha_g$((1 << shift)) g=$g g_rise=$gr g_decay=$gd tau_rise=$tr tau_decay=$td tau_model=$(tau "$shift") peak=$peak final=$final srtt_ms=$rtt"

		(( peak >= 950 )) || fail "g=$g: alpha peaked at $peak under 100% marking"
		(( final * 8 <= peak )) || fail "g=$g: alpha still $final after ${PHASE_MS} ms unmarked"
		# the EWMA gain itself, per update: within 1.5x (the next
		# shift_g is 2x away)
		within 0.67 1.5 "$gr" "$g" || fail "g=$g: rising alpha shows a gain of $gr"
		within 0.67 1.5 "$gd" "$g" || fail "g=$g: decaying alpha shows a gain of $gd"
		# about one update per RTT (cwnd ~2 under 100% marking can
		# close two windows per RTT)
		within 0.3 2 "$tr" "$(tau "$shift")" || fail "g=$g: rise time constant $tr RTTs"
		within 0.3 2 "$td" "$(tau "$shift")" || fail "g=$g: decay time constant $td RTTs"
	done
}

# raise RED's threshold out of reach, note the marks so far
raise_k()
{
	bottleneck_red_change 3000000
	bottleneck_stat marked > "$TMPD/marks_at_change"
}

test_red_stops()
{
	local out=$TMPD/flow m_change m_end t_change a_before a_after

	topo_setup
	bottleneck_red 3000
	ack_delay 5
	param_set dctcp_alpha_on_init 0
	flow_server
	SAMPLE_MS=50
	t_change=$(phase_flow "$out" 2000 raise_k)
	m_end=$(bottleneck_stat marked)
	m_change=$(cat "$TMPD/marks_at_change")

	# alpha swings a lot with a 2-packet K: compare means, the second
	# second of marking against the second second without
	a_before=$(samples "$out" t_ms alpha |
		awk -v tc="$t_change" '$1 >= 1000 && $1 <= tc { s += $2; n++ }
			END { print n ? int(s / n) : 0 }')
	a_after=$(samples "$out" t_ms alpha |
		awk -v tc="$t_change" '$1 >= tc + 1000 { s += $2; n++ }
			END { print n ? int(s / n) : -1 }')
	figure "red_stops K=3000 raised_at_ms=$t_change marked=$m_change marked_after=$((m_end - m_change)) alpha_before=$a_before alpha_after=$a_after"
	diag "alpha every 50 ms: $(samples "$out" alpha | tr '\n' ' ')"

	(( m_change > 0 )) || fail "RED did not mark"
	(( a_before >= 32 )) || fail "mean alpha only $a_before under K=3000 marking"
	(( m_end - m_change <= m_change / 10 + 5 )) || fail "marking did not stop"
	(( a_after >= 0 && a_after * 4 <= a_before )) ||
		fail "alpha did not decay: $a_before -> $a_after"
}

# dctcp_clamp_alpha_on_loss: alpha=0 at start and no marks; a black hole
# (netem loss 100% on the data path) until the sender times out, then the
# path is restored.  With the clamp the loss sets alpha to the maximum
# (shift_g=10 makes it decay slowly enough to be seen); without it alpha
# stays 0.  Random loss would not do: a tail loss repaired by a TLP probe
# never enters Recovery.
in_loss_state()
{
	samples "$1" ca_state | grep -qx 4	# TCP_CA_Loss
}

black_hole()
{
	data_netem loss 100%
	busywait 15000 in_loss_state "$CLAMP_OUT" || diag "no RTO seen"
	data_netem_off
}

clamp_flow()
{
	local clamp=$1

	CLAMP_OUT=$TMPD/flow.clamp$1
	param_set dctcp_clamp_alpha_on_loss "$clamp"
	SAMPLE_MS=50
	phase_flow "$CLAMP_OUT" 1000 black_hole > /dev/null
	in_loss_state "$CLAMP_OUT" || fail "clamp=$clamp: the sender never timed out"
	echo "$(samples "$CLAMP_OUT" alpha | max_of) $(samples "$CLAMP_OUT" retrans | tail -n 1)"
}

test_clamp_on_loss()
{
	local max1 retr1 max0 retr0 res

	if [[ ! -e $(param_path dctcp_clamp_alpha_on_loss) ]]; then
		[[ $DCTCP_IMPL == intree ]] ||
			fail "no dctcp_clamp_alpha_on_loss parameter"
		not_applicable "Debian's in-tree module has no dctcp_clamp_alpha_on_loss"
	fi
	topo_setup
	bottleneck_fifo
	ack_delay 5
	flow_server
	param_set dctcp_alpha_on_init 0
	param_set dctcp_shift_g 10

	res=$(clamp_flow 1)
	read -r max1 retr1 <<< "$res"
	res=$(clamp_flow 0)
	read -r max0 retr0 <<< "$res"
	figure "clamp rto clamp1_alpha_max=$max1 clamp1_retrans=$retr1 clamp0_alpha_max=$max0 clamp0_retrans=$retr0"
	diag "alpha, clamp=1: $(samples "$TMPD/flow.clamp1" alpha | uniq | tr '\n' ' ')"

	(( retr1 > 0 && retr0 > 0 )) || fail "no retransmission"
	(( max1 >= 1000 )) || fail "clamp=1: alpha only reached $max1"
	(( max0 == 0 )) || fail "clamp=0: alpha moved to $max0 without marks"
}

main()
{
	require_dctcp
	ktap_header 4

	run_test "alpha_on_init applies to new connections only" test_alpha_on_init
	run_test "alpha rises/decays at the rate g predicts (g=1/16, 1/4)" test_rise_decay
	run_test "alpha decays once RED stops marking (threshold raised)" test_red_stops
	run_test "clamp_alpha_on_loss=1 sets alpha to max on loss (RTO)" test_clamp_on_loss
	ktap_finish
}

main "$@"
