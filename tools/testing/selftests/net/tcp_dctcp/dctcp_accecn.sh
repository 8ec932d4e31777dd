#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Accurate ECN (AccECN, Linux 7.x) and dctcp.  The ECN mode of each end
# comes from the kernel (tcpi_ecn_mode through INET_DIAG: dctcp_tcpinfo),
# the algorithm from getsockopt(TCP_CONGESTION) and ss.
#
#  - dctcp on both ends with net.ipv4.tcp_ecn=3 (AccECN) negotiates AccECN
#    and stays dctcp: a module that took only RFC 3168 ECN for ECN would
#    fall back to dctcp-reno here;
#  - ours (dctcp_accecn=Y) asks for AccECN with tcp_ecn=1 and grants it to
#    an AccECN client; a peer with RFC 3168 ECN only gets RFC 3168 ECN, one
#    without ECN dctcp-reno; dctcp_accecn=N asks for RFC 3168 only, and
#    then, like mainline's dctcp, gets no ECN at all from a non-DCTCP Linux
#    peer (it refuses ECN to ECT SYNs unless its own algorithm needs ECN);
#    the parameter reads N and refuses Y on a kernel without AccECN;
#  - alpha against the true marking fraction: netem on the sender's egress
#    sets CE on P% of the packets (counted by its ecn_marked statistic)
#    for a flow to a CUBIC receiver with tcp_ecn=3.  With AccECN the
#    sender's CE count is exact: its CE fraction (TCP_INFO delivered_ce /
#    delivered, what alpha is computed from) must be within ACCECN_MAX_ERR %
#    of marked/sent, and alpha itself within ACCECN_MAX_ALPHA_ERR %; with
#    RFC 3168 ECN (a listener running dctcp hands the connection to CUBIC,
#    see measure()) CUBIC's ECE stays on until the sender's CWR, so the
#    sender counts far more marks (both errors must be larger than
#    ACCECN_MAX_ALPHA_ERR %: AccECN is what makes the difference).  alpha
#    gets the wider bound because it is an EWMA of per-window fractions,
#    sampled in time: when the guest is slow the windows are a few
#    segments and the short windows after each reduction pull its mean up
#    (29 % seen on a loaded host with the CE count exact to 0.1 %).
#
#   snd0 egress: netem loss P% ecn --- rtr [tbf $RATE -> pfifo] ---> rcv
#   rcv0 egress: netem delay $DELAY_MS (the ACKs)
#
# Environment: ACCECN_PROBS (marking probabilities in %, default "10"),
# ACCECN_SECS (flow length, 8), ACCECN_MAX_ERR (10), ACCECN_MAX_ALPHA_ERR
# (40), DELAY_MS (5),
# ACCECN_TABLE=1 adds DCTCP-receiver rows (the table of dctcp.rst).

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
trap lib_cleanup EXIT

TCPINFO=${TCPINFO:-$HERE/dctcp_tcpinfo}
ACCECN_PROBS=${ACCECN_PROBS:-10}
ACCECN_SECS=${ACCECN_SECS:-8}
ACCECN_MAX_ERR=${ACCECN_MAX_ERR:-10}
ACCECN_MAX_ALPHA_ERR=${ACCECN_MAX_ALPHA_ERR:-40}
ACCECN_TABLE=${ACCECN_TABLE:-0}
DELAY_MS=${DELAY_MS:-5}

kernel_has_accecn()
{
	[[ -e /proc/sys/net/ipv4/tcp_ecn_option ]]
}

need_accecn()
{
	kernel_has_accecn ||
		not_applicable "kernel $(uname -r) has no AccECN (no net.ipv4.tcp_ecn_option)"
}

need_ours()
{
	[[ $DCTCP_IMPL == ours ]] ||
		not_applicable "$1"
}

# tcpinfo NS SIDE FIELD: FIELD of the connection on $PORT as the kernel
# reports it; SIDE dport = the client's end, sport = the server's.
tcpinfo()
{
	in_ns "$1" "$TCPINFO" "$PORT" | awk -v side="$2" -v port="$PORT" -v f="$3" '
		{
			delete v
			for (i = 2; i <= NF; i++) {
				split($i, kv, "=")
				v[kv[1]] = kv[2]
			}
			if (v[side] == port) {
				print v[f]
				exit
			}
		}'
}

# setup SND_ECN RCV_CC RCV_ECN: module parameters as loaded (a previous
# test may have changed them: only those are written back, a write would
# hide a wrong initial state), topology, sysctls, a server on rcv.
setup()
{
	local p

	for p in "${!SAVED_PARAMS[@]}"; do
		[[ $(param_get "$p") == "${SAVED_PARAMS[$p]}" ]] ||
			param_set "$p" "${SAVED_PARAMS[$p]}"
	done
	topo_setup
	in_ns "$snd" sysctl -qw net.ipv4.tcp_ecn="$1"
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_congestion_control="$2" \
		net.ipv4.tcp_ecn="$3"
	flow_server
}

# hold OUT CC: connect from snd with CC, hold the connection.
hold()
{
	flow_client_bg "$1" -H -c "$2" $RCV4 "$PORT"
	busywait 10000 grep -q '^holding' "$1" ||
		fail "client did not connect: $(cat "$1.err")"
}

# expect NS SIDE CC MODE: that end of the connection runs CC in ECN MODE.
expect()
{
	local ns=$1 side=$2 cc=$3 mode=$4 info got

	info=$(ss -N "$ns" -Htino "$side = :$PORT" | tr -s ' \t\n' ' ')
	got=$(tcpinfo "$ns" "$side" ecn_mode)
	diag "$side end: ecn_mode=$got; ss: $info"
	[[ $got == "$mode" ]] || fail "$side end: ECN mode '$got', want $mode"
	[[ " $info " == *" $cc "* ]] || fail "$side end: ss does not show $cc"
	if [[ $cc == dctcp ]]; then
		[[ $info =~ dctcp:\(ce_state:[0-9]+,alpha:[0-9]+ ]] ||
			fail "$side end: no dctcp:(ce_state,alpha,...) in ss"
	fi
}

test_param()
{
	local err rc=0

	need_ours "Debian's in-tree module has no dctcp_accecn"
	# as loaded: read by require_dctcp before any test ran
	if kernel_has_accecn; then
		[[ ${SAVED_PARAMS[dctcp_accecn]} == Y ]] ||
			fail "dctcp_accecn was ${SAVED_PARAMS[dctcp_accecn]} at load, want Y on an AccECN kernel"
		param_set dctcp_accecn N || fail "N refused"
		[[ $(param_get dctcp_accecn) == N ]] || fail "N did not stick"
		param_set dctcp_accecn Y || fail "Y refused"
		[[ $(param_get dctcp_accecn) == Y ]] || fail "Y did not stick"
		return 0
	fi
	[[ ${SAVED_PARAMS[dctcp_accecn]} == N ]] ||
		fail "dctcp_accecn was ${SAVED_PARAMS[dctcp_accecn]} at load on a kernel without AccECN"
	err=$( { echo Y > "$(param_path dctcp_accecn)"; } 2>&1 ) || rc=$?
	diag "writing Y: rc=$rc $err; dmesg: $(dmesg | grep dctcp_accecn | tail -n 1)"
	(( rc != 0 )) || fail "Y accepted on a kernel without AccECN"
	[[ $err == *"Invalid argument"* ]] || fail "not EINVAL: $err"
	[[ $(param_get dctcp_accecn) == N ]] || fail "value changed by a refused write"
	dmesg | grep -q 'dctcp_accecn: this kernel has no Accurate ECN' ||
		fail "no kernel message saying why"
}

# Both ends dctcp, both ask for AccECN by sysctl: the connection must
# stay dctcp (mainline 7.x tests tcp_ecn_mode_any(), not RFC 3168 only).
test_both_ends()
{
	need_accecn
	setup 3 dctcp 3
	hold "$TMPD/c" dctcp
	[[ $(client_cc "$TMPD/c") == dctcp ]] ||
		fail "getsockopt says $(client_cc "$TMPD/c"): AccECN was not taken for ECN"
	expect "$snd" dport dctcp accecn
	expect "$rcv" sport dctcp accecn
}

test_asks()
{
	need_accecn
	need_ours "mainline's dctcp sets no AccECN flag"
	setup 1 cubic 3
	hold "$TMPD/c" dctcp
	expect "$snd" dport dctcp accecn
	expect "$rcv" sport cubic accecn
}

test_grants()
{
	need_accecn
	need_ours "mainline's dctcp sets no AccECN flag"
	setup 3 dctcp 1
	hold "$TMPD/c" cubic
	expect "$snd" dport cubic accecn
	expect "$rcv" sport dctcp accecn
}

# A peer with RFC 3168 ECN only: dctcp falls back to it and stays dctcp.
test_rfc3168_peer()
{
	need_accecn
	setup 3 cubic 1
	hold "$TMPD/c" dctcp
	expect "$snd" dport dctcp rfc3168
}

# A peer without ECN: the AccECN SYN gets a plain SYN-ACK, dctcp-reno.
test_no_ecn_peer()
{
	local info

	need_accecn
	setup 3 reno 0
	hold "$TMPD/c" dctcp
	info=$(ss_flow "$snd" "$PORT")
	diag "ecn_mode=$(tcpinfo "$snd" dport ecn_mode); ss: $info"
	[[ $(tcpinfo "$snd" dport ecn_mode) == off ]] || fail "ECN negotiated"
	[[ $info == *"dctcp:fallback_mode"* ]] || fail "ss: no dctcp:fallback_mode"
	if [[ $DCTCP_IMPL == ours ]]; then
		[[ $(client_cc "$TMPD/c") == dctcp-reno ]] ||
			fail "getsockopt says $(client_cc "$TMPD/c"), want dctcp-reno"
	fi
}

# dctcp_accecn=N: RFC 3168 with a DCTCP peer that would grant AccECN, and,
# as with mainline's dctcp, no ECN at all with a non-DCTCP peer: Linux
# grants RFC 3168 ECN to an ECT SYN (which DCTCP sends) only if the
# listener's algorithm needs ECN (tcp_ecn_create_request()).
test_param_off()
{
	need_accecn
	need_ours "Debian's in-tree module has no dctcp_accecn"
	setup 1 dctcp 3
	param_set dctcp_accecn N
	hold "$TMPD/c" dctcp
	expect "$snd" dport dctcp rfc3168
	expect "$rcv" sport dctcp rfc3168
	topo_reset
	setup 1 cubic 3
	param_set dctcp_accecn N
	hold "$TMPD/c2" dctcp
	[[ $(tcpinfo "$snd" dport ecn_mode) == off ]] ||
		fail "ECN mode $(tcpinfo "$snd" dport ecn_mode) with a CUBIC peer, want off"
	[[ $(client_cc "$TMPD/c2") == dctcp-reno ]] ||
		fail "getsockopt says $(client_cc "$TMPD/c2") with a CUBIC peer, want dctcp-reno"
}

# measure P MODE RCV_CC: one flow with P% of the packets CE-marked; MODE
# accecn or rfc3168.  The receiver's listener runs dctcp, which grants ECN
# to DCTCP's ECT SYN, but the connections it accepts run RCV_CC (the
# netns default, switched after listen(): children without a
# setsockopt(TCP_CONGESTION) get the current default).  Prints a figure
# line, sets ERR (percent, |alpha - F| / F with F = netem's ecn_marked /
# packets sent) and SND_ERR (the same for the sender's CE fraction).
measure()
{
	local p=$1 mode=$2 rcv_cc=$3 out=$TMPD/m snd_ecn=1 sent marked alpha frac f_snd

	# ours asks for AccECN by itself; mainline's needs the sysctl
	[[ $mode == rfc3168 || $DCTCP_IMPL == ours ]] || snd_ecn=3
	setup "$snd_ecn" dctcp 3
	[[ $mode == accecn || $DCTCP_IMPL != ours ]] || param_set dctcp_accecn N
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_congestion_control="$rcv_cc"
	bottleneck_fifo
	ack_delay "$DELAY_MS"
	tc -n "$snd" qdisc replace dev snd0 root handle 1: netem limit 100000 \
		loss random "$p%" ecn
	param_set dctcp_alpha_on_init 0

	flow_client_bg "$out" -t "$ACCECN_SECS" -i 100 -W -c dctcp $RCV4 "$PORT"
	busywait $((ACCECN_SECS * 1000 + 30000)) grep -q '^waiting' "$out" ||
		fail "flow did not finish: $(cat "$out.err")"
	expect "$snd" dport dctcp "$mode"
	expect "$rcv" sport "$rcv_cc" "$mode"
	f_snd=$(in_ns "$snd" "$TCPINFO" "$PORT" | awk -v port="$PORT" '
		{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
		v["dport"] == port { printf "%.4f", v["delivered_ce"] / v["delivered"]; exit }')
	kill -TERM "$FLOW_PID"
	flow_wait "$FLOW_PID" 30000 || fail "client failed: $(cat "$out.err")"

	sent=$(qdisc_stat "$snd" snd0 1: packets)
	# netem's own statistics (Linux 7.x, shown by iproute2 >= 6.x)
	marked=$(tc -n "$snd" -s qdisc show dev snd0 |
		 sed -n 's/.*ecn_marked \([0-9]*\).*/\1/p')
	[[ -n $marked ]] || fail "tc -s shows no netem ecn_marked (iproute2 too old?)"
	alpha=$(samples "$out" t_ms alpha |
		awk '$1 >= 2000 { s += $2; n++ } END { if (n) printf "%.1f", s / n }')
	[[ -n $alpha ]] || fail "no alpha samples after 2 s"
	(( sent > 0 && marked > 0 )) || fail "netem sent $sent packets, marked $marked"
	[[ -n $f_snd ]] || fail "dctcp_tcpinfo: no delivered_ce/delivered"
	read -r frac ERR SND_ERR <<<"$(awk -v m="$marked" -v s="$sent" -v a="$alpha" \
		-v fs="$f_snd" 'BEGIN {
		f = m / s; e = (a / 1024 - f) / f * 100; d = (fs - f) / f * 100
		printf "%.4f %.1f %.1f\n", f, e < 0 ? -e : e, d < 0 ? -d : d }')"
	figure "accecn p=$p% mode=$mode receiver=$rcv_cc sent=$sent marked=$marked F=$frac alpha=$alpha alpha_frac=$(awk -v a="$alpha" 'BEGIN { printf "%.4f", a / 1024 }') err_pct=$ERR sender_F=$f_snd sender_err_pct=$SND_ERR mbit=$(done_field "$out" mbit)"
}

test_alpha_accuracy()
{
	local p=$1 err_accecn snd_err_accecn

	need_accecn
	measure "$p" accecn cubic
	err_accecn=$ERR snd_err_accecn=$SND_ERR
	topo_reset
	measure "$p" rfc3168 cubic
	diag "p=$p%: CE fraction error with AccECN $snd_err_accecn %, with RFC 3168 ECN $SND_ERR %;" \
		"alpha error $err_accecn % and $ERR %"
	awk -v e="$snd_err_accecn" -v m="$ACCECN_MAX_ERR" 'BEGIN { exit !(e <= m) }' ||
		fail "AccECN: the sender's CE fraction is off by $snd_err_accecn % of the marked fraction (max $ACCECN_MAX_ERR %)"
	awk -v e="$err_accecn" -v m="$ACCECN_MAX_ALPHA_ERR" 'BEGIN { exit !(e <= m) }' ||
		fail "AccECN: alpha off by $err_accecn % of the marked fraction (max $ACCECN_MAX_ALPHA_ERR %)"
	awk -v e="$SND_ERR" -v a="$ERR" -v m="$ACCECN_MAX_ALPHA_ERR" 'BEGIN { exit !(e > m && a > m) }' ||
		fail "RFC 3168 ECN with a CUBIC receiver is as accurate (CE fraction $SND_ERR %, alpha $ERR %): the test cannot show AccECN's gain"
	if [[ $ACCECN_TABLE == 1 ]]; then
		topo_reset
		measure "$p" rfc3168 dctcp
		topo_reset
		measure "$p" accecn dctcp
	fi
}

main()
{
	local p n=7

	require_dctcp
	[[ -x $TCPINFO ]] || skip_all "$TCPINFO missing: run make in $HERE"
	for p in $ACCECN_PROBS; do
		n=$((n + 1))
	done
	ktap_header "$n"

	run_test "tcp_ecn=3 on both dctcp ends: AccECN negotiated, stays dctcp" test_both_ends
	run_test "dctcp asks for AccECN (tcp_ecn=1, AccECN CUBIC receiver)" test_asks
	run_test "dctcp grants AccECN (tcp_ecn=1 listener, AccECN CUBIC client)" test_grants
	run_test "peer with RFC 3168 ECN only: RFC 3168, stays dctcp" test_rfc3168_peer
	run_test "peer without ECN: AccECN SYN falls back to dctcp-reno" test_no_ecn_peer
	run_test "dctcp_accecn=N: RFC 3168 with a DCTCP peer, dctcp-reno with a CUBIC one" \
		test_param_off
	for p in $ACCECN_PROBS; do
		run_test "CE on $p% of packets, CUBIC receiver: CE fraction within $ACCECN_MAX_ERR %, alpha within $ACCECN_MAX_ALPHA_ERR % with AccECN, not without" \
			test_alpha_accuracy "$p"
	done
	# last: the tests above see the parameter as loaded, never rewritten
	run_test "dctcp_accecn reads Y exactly where the kernel has AccECN" test_param
	ktap_finish
}

main "$@"
