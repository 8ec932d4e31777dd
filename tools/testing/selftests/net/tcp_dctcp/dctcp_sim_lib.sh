# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers of the simulated-time tests (dctcp_sim_*.sh), sourced after
# dctcp_lib.sh.  They run only in a User-Mode Linux guest booted with
# time-travel=inf-cpu (tools/testing/dctcp/run_vm.sh uml): its clock only
# advances when the kernel is idle, so every rate, RTT and queue delay is
# exact however slow the host, and so is `sleep` in a script.  Elsewhere
# they skip (a failure under CI=true).
#
# Figures come from one dctcp_flow client per run: the flows, the
# bottleneck queue (-q, netlink) and RTT probes (-e) in one process, whose
# output dctcp_sim.awk reduces to key=value figures.

# (the namespaces, RATE and RED_RAMP are dctcp_topo.sh's)
# shellcheck disable=SC2034
RATE=1gbit		# the DCTCP paper's rate; a scenario may change it
SIM_SNDBUF=4000000	# SO_SNDBUF of every flow: few wake-ups per MB
# shellcheck disable=SC2034
RED_RAMP=1		# a step marker without random draws

# require_sim: the script's first call, before the TAP plan.
require_sim()
{
	grep -qw 'time-travel=inf-cpu' /proc/cmdline ||
		skip_all "needs simulated time: User-Mode Linux booted with time-travel=inf-cpu (tools/testing/dctcp/run_vm.sh uml)"
}

# sim_server CC [PORT]: a dctcp_flow server in rcv whose listener uses CC,
# on PORT (default $PORT).  A DCTCP sender's SYN is ECT: only a listener
# that needs ECN itself (dctcp) accepts it; an RFC 3168 sender's SYN is
# not ECT and any listener with tcp_ecn=1 accepts it.
# shellcheck disable=SC2154
sim_server()
{
	local PORT=${2:-$PORT}

	flow_server "$rcv" -c "$1"
}

# sim_flows OUT CLIENT-ARGS...: a dctcp_flow client run from snd to rcv
# ($PORT), in the foreground, sampling the bottleneck queue.
# shellcheck disable=SC2154
sim_flows()
{
	local out=$1

	shift
	flow_client "$out" -B "$SIM_SNDBUF" -q "$rtr:rtr1:10" "$@" $RCV4 "$PORT" ||
		fail "client failed: $(cat "$out.err")"
}

# sim_stats OUT FROM_US TO_US [SHIFT_G]: the run's figures in the window
# (see dctcp_sim.awk), one line of key=value pairs.
sim_stats()
{
	awk -v from_us="$2" -v to_us="$3" -v rate_bps="$(rate_bps)" \
	    -v shift_g="${4:-4}" -f "$HERE/dctcp_flow.awk" -f "$HERE/dctcp_sim.awk" "$1"
}

# fig LINE KEY: the value of KEY in a line of key=value pairs.
fig()
{
	local kv

	for kv in $1; do
		[[ ${kv%%=*} == "$2" ]] && { echo "${kv#*=}"; return 0; }
	done
	echo "no figure $2 in: $1" >&2
	return 1
}

# check_flows OUT CC ECN: every flow of the run is a CC socket (getsockopt
# TCP_CONGESTION) and reported ECN (TCPI_OPT_ECN) as ECN (0 or 1) in
# every sample.
check_flows()
{
	local out=$1 cc=$2 ecn=$3 bad

	bad=$(awk -v cc="cc=$cc" '$1 == "flow" && $3 != cc' "$out")
	[[ -z $bad && $(grep -c '^flow ' "$out") -gt 0 ]] ||
		fail "flows are not all $cc: $(grep '^flow ' "$out" | cut -d' ' -f3 | sort | uniq -c | tr -s ' \n' ' ')"
	bad=$(awk -v e="$ecn" '$1 == "sample" && $0 !~ (" ecn=" e " ")' "$out" | head -n 1)
	[[ -z $bad ]] || fail "a $cc sample with ECN != $ecn: $bad"
}

# base_rtt_us: the median RTT of 200 probes through the empty path (the
# bottleneck as set up, no other traffic), in microseconds.  Needs a
# server.
base_rtt_us()
{
	local out=$TMPD/base

	flow_client "$out" -P 0 -t 0.2 -e 1000 $RCV4 "$PORT" ||
		fail "probe failed: $(cat "$out.err")"
	fig "$(sim_stats "$out" 0 1e18)" rr_p50
}

# within X LO HI: LO <= X <= HI (decimals)
within()
{
	awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'
}

# near X REF TOL: |X - REF| <= TOL * REF
near()
{
	awk -v x="$1" -v r="$2" -v t="$3" 'BEGIN { d = x - r; exit !((d < 0 ? -d : d) <= t * r) }'
}

# calc EXPR: an awk expression, printed with %.4g
calc()
{
	awk "BEGIN { printf \"%.6g\\n\", $1 }"
}
