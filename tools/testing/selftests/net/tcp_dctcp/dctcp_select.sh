#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Selecting dctcp and negotiating ECN.  Every way of choosing an algorithm
# gives a dctcp socket: the namespace default (sysctl), a route attribute
# (congctl) and setsockopt(TCP_CONGESTION); dctcp-reno can be asked for by
# name.  With ECN on both ends the connection stays dctcp and ss shows the
# DCTCP diag info; with a receiver that refuses ECN it falls back to
# dctcp-reno.  Each connection is held open (no data) and checked through
# getsockopt(TCP_CONGESTION) and through `ss -ti`.
#
#   snd (198.51.100.2) ---- rtr ---- rcv (203.0.113.2), see dctcp_lib.sh

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
trap lib_cleanup EXIT

# hold_conn OUT DST [CLIENT-ARGS...]: connect from snd, hold, wait until
# connected.
hold_conn()
{
	local out=$1 dst=$2

	shift 2
	flow_client_bg "$out" -H "$@" "$dst" "$PORT"
	busywait 10000 grep -q '^holding' "$out" ||
		fail "client did not connect: $(cat "$out.err")"
}

# expect_cc OUT WANT: getsockopt(TCP_CONGESTION) and ss agree on WANT.
expect_cc()
{
	local out=$1 want=$2 got info

	got=$(client_cc "$out")
	info=$(ss_flow "$snd" "$PORT")
	diag "getsockopt: $got; ss: $info"
	[[ $got == "$want" ]] || fail "getsockopt says '$got', want '$want'"
	[[ " $info " == *" $want "* ]] || fail "ss does not show '$want'"
}

# ss shows an ECN connection with DCTCP's diag info.
expect_dctcp_ecn()
{
	local out=$1 info

	info=$(ss_flow "$snd" "$PORT")
	[[ " $info " == *" ecn "* ]] || fail "ss: no ecn flag"
	[[ $info =~ dctcp:\(ce_state:[0-9]+,alpha:[0-9]+,ab_ecn:[0-9]+,ab_tot:[0-9]+\) ]] ||
		fail "ss: no dctcp:(ce_state,alpha,ab_ecn,ab_tot)"
	samples "$out" cc_enabled ecn | head -n 1 | grep -qx '1 1' ||
		fail "TCP_CC_INFO/TCP_INFO: dctcp not enabled or no ECN"
}

test_sysctl_default()
{
	topo_setup
	flow_server
	in_ns "$snd" sysctl -qw net.ipv4.tcp_congestion_control=dctcp
	hold_conn "$TMPD/c" $RCV4
	expect_cc "$TMPD/c" dctcp
	expect_dctcp_ecn "$TMPD/c"
}

test_route_congctl()
{
	local family=$1 dst via

	topo_setup
	in_ns "$snd" sysctl -qw net.ipv4.tcp_congestion_control=reno
	if [[ $family == 6 ]]; then
		dst=$RCV6 via=$RTR6_S
		flow_server "$rcv" -6
		ip -n "$snd" -6 route add $dst/128 via $via congctl dctcp
	else
		dst=$RCV4 via=$RTR4_S
		flow_server
		ip -n "$snd" route add $dst/32 via $via congctl dctcp
	fi
	diag "route: $(ip -n "$snd" -"$family" route get $dst)"
	hold_conn "$TMPD/c" $dst
	expect_cc "$TMPD/c" dctcp
	expect_dctcp_ecn "$TMPD/c"
}

test_setsockopt()
{
	topo_setup
	flow_server
	in_ns "$snd" sysctl -qw net.ipv4.tcp_congestion_control=reno
	hold_conn "$TMPD/c" $RCV4 -c dctcp
	expect_cc "$TMPD/c" dctcp
	expect_dctcp_ecn "$TMPD/c"
}

test_dctcp_reno_by_name()
{
	local info

	[[ $DCTCP_IMPL == ours ]] ||
		not_applicable "Debian's in-tree module does not register dctcp-reno"
	topo_setup
	flow_server
	hold_conn "$TMPD/c" $RCV4 -c dctcp-reno
	expect_cc "$TMPD/c" dctcp-reno
	info=$(ss_flow "$snd" "$PORT")
	[[ $info != *"dctcp:(ce_state"* ]] || fail "dctcp-reno reports DCTCP state"
}

# The receiver refuses ECN (tcp_ecn=0, reno listener): the SYN-ACK carries
# no ECE, dctcp must switch itself to dctcp-reno and say so.
test_fallback()
{
	local info

	topo_setup
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_ecn=0
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_congestion_control=reno
	flow_server
	hold_conn "$TMPD/c" $RCV4 -c dctcp
	info=$(ss_flow "$snd" "$PORT")
	diag "ss: $info"
	[[ " $info " != *" ecn "* ]] || fail "ECN negotiated with a tcp_ecn=0 receiver"
	if [[ $DCTCP_IMPL == ours ]]; then
		expect_cc "$TMPD/c" dctcp-reno
	fi
	[[ $info == *"dctcp:fallback_mode"* ]] || fail "ss: no dctcp:fallback_mode"
	samples "$TMPD/c" cc_enabled | head -n 1 | grep -qx 0 ||
		fail "TCP_CC_INFO still says dctcp enabled"
}

# Data over a fallback connection still flows (Reno behaviour).
test_fallback_data()
{
	topo_setup
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_ecn=0
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_congestion_control=reno
	flow_server
	flow_client "$TMPD/c" -c dctcp -n 4000000 $RCV4 "$PORT"
	diag "$(grep '^done' "$TMPD/c")"
	(( $(done_field "$TMPD/c" acked) >= 4000000 )) || fail "not all data acked"
	if [[ $DCTCP_IMPL == ours ]]; then
		[[ $(client_cc "$TMPD/c") == dctcp-reno ]] || fail "cc is $(client_cc "$TMPD/c")"
	fi
}

# The client's SYN is lost (netem drops everything until the socket is in
# SYN-SENT) and retransmitted.  RFC 3168 6.1.1.1 lets a sender give up ECN
# on the retransmit, which Linux does with net.ipv4.tcp_ecn_fallback=1 (the
# default): dctcp must then fall back to dctcp-reno.  With 0 the
# retransmitted SYN still asks for ECN and the flow stays dctcp (what
# dctcp_topo.sh sets for every test that puts random loss on the path).
# Linux 7.x keeps an AccECN SYN's flags on its first retransmits (it gives
# them up only once icsk_retransmits > 1), so where ours would ask for
# AccECN the SYN asks for RFC 3168 ECN here (dctcp_accecn=N).
test_lost_syn()
{
	local fallback=$1 want=$2 r0 info

	topo_setup
	in_ns "$snd" sysctl -qw net.ipv4.tcp_ecn_fallback="$fallback"
	[[ ! -e $(param_path dctcp_accecn) ]] || param_set dctcp_accecn N
	flow_server
	data_netem loss 100%
	r0=$(nstat_get "$snd" TcpExtTCPSynRetrans)
	flow_client_bg "$TMPD/c" -H -c dctcp $RCV4 "$PORT"
	busywait 10000 syn_sent || fail "the client never reached SYN-SENT"
	data_netem_off
	busywait 10000 grep -q '^holding' "$TMPD/c" ||
		fail "client did not connect: $(cat "$TMPD/c.err")"
	(( $(nstat_get "$snd" TcpExtTCPSynRetrans) > r0 )) ||
		fail "TcpExtTCPSynRetrans did not move: no SYN was retransmitted"
	info=$(ss_flow "$snd" "$PORT")
	if [[ $want == dctcp ]]; then
		expect_cc "$TMPD/c" dctcp
		expect_dctcp_ecn "$TMPD/c"
		return
	fi
	[[ " $info " != *" ecn "* ]] || fail "ss: ECN kept after a fallback SYN retransmit"
	[[ $DCTCP_IMPL != ours ]] || expect_cc "$TMPD/c" dctcp-reno
	[[ $info == *"dctcp:fallback_mode"* ]] || fail "ss: no dctcp:fallback_mode"
}

syn_sent()
{
	ss -N "$snd" -Htn state syn-sent "dport = :$PORT" | grep -q .
}

main()
{
	require_dctcp
	ktap_header 10

	run_test "sysctl default selects dctcp, ECN negotiated" test_sysctl_default
	run_test "route congctl dctcp (IPv4)" test_route_congctl 4
	run_test "route congctl dctcp (IPv6)" test_route_congctl 6
	run_test "setsockopt(TCP_CONGESTION) dctcp" test_setsockopt
	run_test "setsockopt(TCP_CONGESTION) dctcp-reno" test_dctcp_reno_by_name
	run_test "receiver tcp_ecn=0: falls back to dctcp-reno" test_fallback
	run_test "fallback connection carries data" test_fallback_data
	run_test "lost SYN, tcp_ecn_fallback=0: the retransmit keeps ECN, stays dctcp" \
		test_lost_syn 0 dctcp
	run_test "lost SYN, tcp_ecn_fallback=1: ECN given up, falls back to dctcp-reno" \
		test_lost_syn 1 dctcp-reno
	run_test "dctcp over IPv6 with ECN" test_ipv6_flow
	ktap_finish
}

test_ipv6_flow()
{
	topo_setup
	flow_server "$rcv" -6
	hold_conn "$TMPD/c" $RCV6 -c dctcp
	expect_cc "$TMPD/c" dctcp
	expect_dctcp_ecn "$TMPD/c"
}

main "$@"
