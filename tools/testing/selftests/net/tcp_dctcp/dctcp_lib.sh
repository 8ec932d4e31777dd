# SPDX-License-Identifier: GPL-2.0
#
# Shared helpers of the tcp_dctcp selftests: TAP output, tool lookup, the
# module under test, the three-namespace topology with its bottleneck,
# flows, and samplers.  Sourced by every dctcp_*.sh; README.md lists the
# environment variables.
#
#  ns snd                      ns rtr                            ns rcv
# +--------------------+     +--------------------------------+     +--------------------+
# | snd0               |     | rtr0                      rtr1 |     |               rcv0 |
# | 198.51.100.2/24    +-----+ 198.51.100.1       203.0.113.1 +-----+ 203.0.113.2/24     |
# | 2001:db8:1::2/64   |veth | 2001:db8:1::1     2001:db8:2::1 |veth | 2001:db8:2::2/64   |
# +--------------------+     +--------------------------------+     +--------------------+
#   egress: netem loss         egress of rtr1 = the bottleneck:       egress: netem delay
#   or CE-mark-all (opt.)      tbf $RATE -> red ecn K | pfifo         on the ACK path (opt.)
#
# Data flows snd -> rcv.  The sender and the router's egress are the places
# a DCTCP switch would sit; delaying only the ACK path gives a real RTT
# without putting the delay line inside the marking queue.

# kselftest framework requirement: exit code of a skipped program
readonly ksft_skip=4

# Knobs (environment)
DCTCP_IMPL=${DCTCP_IMPL:-ours}			# ours | intree
DCTCP_KO=${DCTCP_KO:-/opt/dctcp/tcp_dctcp.ko}	# ours is insmod'ed from here
RATE=${RATE:-10mbit}				# bottleneck rate: well below what a TCG
						# guest forwards on a busy host (~15 Mbit/s)
K=${K:-30000}					# RED marking threshold, bytes
FIFO_LIMIT=${FIFO_LIMIT:-1000}			# deep tail-drop buffer, packets
FLOW_SECS=${FLOW_SECS:-3}			# length of one measured flow
PORT=${PORT:-5301}
RCV_CC=${RCV_CC:-dctcp}				# receiver's default algorithm

SND4=198.51.100.2	RTR4_S=198.51.100.1	RTR4_R=203.0.113.1	RCV4=203.0.113.2
SND6=2001:db8:1::2	RTR6_S=2001:db8:1::1	RTR6_R=2001:db8:2::1	RCV6=2001:db8:2::2

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FLOW=${FLOW:-$HERE/dctcp_flow}
TMPD=$(mktemp -d /tmp/dctcp.XXXXXX)
NS_LIST=()
NS_BASE=0	# run_test: namespaces/processes before this index are not ours
BG_BASE=0
snd='' rtr='' rcv=''				# namespace names, set by topo_setup
BG_PIDS=()
declare -A SAVED_PARAMS=()
SAVED_ALLOWED=

# ---------------------------------------------------------------- TAP
KTAP_N=0
KTAP_FAIL=0

ktap_header()
{
	echo "TAP version 13"
	echo "1..$1"
}

diag()
{
	printf '# %s\n' "$*"
}

# figure NAME KEY=VALUE...: a measured number, for humans and for
# compare_intree.sh (which greps "# figure: NAME ").
figure()
{
	printf '# figure: %s\n' "$*"
}

ok()
{
	KTAP_N=$((KTAP_N + 1))
	echo "ok $KTAP_N - $1"
}

not_ok()
{
	KTAP_N=$((KTAP_N + 1))
	KTAP_FAIL=$((KTAP_FAIL + 1))
	echo "not ok $KTAP_N - $1"
}

# A skip must say why.  Under CI=true a missing capability is a failure.
skip()
{
	local name=$1 why=$2

	if [[ ${CI:-} == true ]]; then
		diag "CI=true: $why"
		not_ok "$name"
		return
	fi
	KTAP_N=$((KTAP_N + 1))
	echo "ok $KTAP_N - $name # SKIP $why"
}

# run_test NAME BODY [ARGS...]: a test body is a function run in a subshell
# under `set -e`, so a bare failing assertion fails the test (and only the
# test).  It exits 0 (pass), non-zero (fail) or calls skip_because.
# Whatever it set up (namespaces, background flows) is torn down when the
# subshell exits.
run_test()
{
	local name=$1 rc

	shift
	set +e
	(
		NS_BASE=${#NS_LIST[@]} BG_BASE=${#BG_PIDS[@]}
		trap topo_reset EXIT
		set -e
		"$@"
	)
	rc=$?
	set -e
	case $rc in
	0) ok "$name" ;;
	"$ksft_skip") skip "$name" "$(cat "$TMPD/skip_why" 2>/dev/null)" ;;
	"$KSFT_NA")
		KTAP_N=$((KTAP_N + 1))
		echo "ok $KTAP_N - $name # SKIP $(cat "$TMPD/skip_why" 2>/dev/null)"
		;;
	*) not_ok "$name" ;;
	esac
	rm -f "$TMPD/skip_why"
}

# Inside a test body: give up with a reason (a failure under CI=true).
skip_because()
{
	echo "$*" > "$TMPD/skip_why"
	exit "$ksft_skip"
}

# Inside a test body: the test does not apply to the module under test
# (DCTCP_IMPL=intree: Debian's module lacks dctcp-reno, the clamp
# parameter and the range checks).  A skip even under CI=true: nothing
# is missing from the environment.
KSFT_NA=5
not_applicable()
{
	echo "$*" > "$TMPD/skip_why"
	exit "$KSFT_NA"
}

# Inside a test body: fail with a diagnostic.
fail()
{
	diag "FAIL: $*"
	return 1
}

ktap_finish()
{
	diag "$KTAP_N tests, $KTAP_FAIL failed"
	(( KTAP_FAIL == 0 ))
}

# ---------------------------------------------------------------- tools
# busybox's applets shadow iproute2 in the VM: resolve real binaries once.
find_tool()
{
	local name=$1 pkg=$2 dir

	for dir in /usr/sbin /usr/bin /sbin /bin; do
		if [[ -x $dir/$name && ! -L $dir/$name ]] ||
		   [[ -x $dir/$name && $(readlink -f "$dir/$name") != *busybox* ]]; then
			echo "$dir/$name"
			return 0
		fi
	done
	echo "$name missing: apt-get install $pkg" >&2
	return 1
}

require_tools()
{
	IP_BIN=$(find_tool ip iproute2) &&
	TC_BIN=$(find_tool tc iproute2) &&
	SS_BIN=$(find_tool ss iproute2) &&
	NSTAT_BIN=$(find_tool nstat iproute2) &&
	PING_BIN=$(find_tool ping iputils-ping) || exit 1
	if [[ ! -x $FLOW ]]; then
		echo "$FLOW missing: run make in $HERE" >&2
		exit 1
	fi
}

ip() { "$IP_BIN" "$@"; }
tc() { "$TC_BIN" "$@"; }
ss() { "$SS_BIN" "$@"; }
nstat() { "$NSTAT_BIN" "$@"; }
in_ns() { local ns=$1; shift; "$IP_BIN" netns exec "$ns" "$@"; }

# now_ms: wall clock in ms (bash's EPOCHREALTIME: no fork)
now_ms()
{
	local t=${EPOCHREALTIME/[.,]/}

	echo $((t / 1000))
}

# busywait TIMEOUT_MS CMD...: retry CMD every 50 ms for at most TIMEOUT_MS
# of wall time (on the debug kernel one try can take longer than 50 ms).
busywait()
{
	local timeout_ms=$1 end

	shift
	end=$(($(now_ms) + timeout_ms))
	until "$@"; do
		(( $(now_ms) >= end )) && return 1
		sleep 0.05
	done
}

# ---------------------------------------------------------------- module
MOD=/sys/module/tcp_dctcp

mod_version()
{
	cat "$MOD/version" 2>/dev/null || true
}

mod_refcnt()
{
	cat "$MOD/refcnt" 2>/dev/null || echo -1
}

cc_available()
{
	tr ' ' '\n' < /proc/sys/net/ipv4/tcp_available_congestion_control |
		grep -qxF "$1"
}

# Ours: insmod $DCTCP_KO (unloading an in-tree one first).  In-tree:
# modprobe.  Returns non-zero with a reason on stderr if impossible.
dctcp_load()
{
	local v

	if [[ -d $MOD ]]; then
		v=$(mod_version)
		if [[ $DCTCP_IMPL == ours && $v == *-oot ]] ||
		   [[ $DCTCP_IMPL == intree && $v != *-oot ]]; then
			return 0
		fi
		rmmod tcp_dctcp || return 1
	fi
	if [[ $DCTCP_IMPL == ours ]]; then
		[[ -r $DCTCP_KO ]] || { echo "module $DCTCP_KO not found" >&2; return 1; }
		insmod "$DCTCP_KO"
	else
		modprobe tcp_dctcp
	fi
}

# The implementation we are supposed to test is loaded and registered.
dctcp_is_loaded()
{
	[[ -d $MOD ]] && cc_available dctcp || return 1
	if [[ $DCTCP_IMPL == ours ]]; then
		[[ $(mod_version) == *-oot ]]
	else
		[[ ! -e $MOD/version || $(mod_version) != *-oot ]]
	fi
}

# The whole script cannot run: one TAP line saying why, then exit.
# A skip (exit 4), or a failure under CI=true.
skip_all()
{
	echo "1..1"
	if [[ ${CI:-} == true ]]; then
		echo "not ok 1 - $(basename "$0"): $*"
		exit 1
	fi
	echo "ok 1 - $(basename "$0") # SKIP $*"
	exit $ksft_skip
}

# Every script starts with this: tools, root, module.
require_dctcp()
{
	require_tools
	[[ $(id -u) == 0 ]] || skip_all "must run as root"
	if ! { dctcp_load && dctcp_is_loaded; } 2> "$TMPD/load.err"; then
		diag "$(cat "$TMPD/load.err")"
		skip_all "cannot load the $DCTCP_IMPL tcp_dctcp"
	fi
	diag "tcp_dctcp: impl=$DCTCP_IMPL version=$(mod_version) kernel=$(uname -r)"
	allow_cc dctcp
	save_params
}

# Let namespaces other than init_net default to dctcp (a "restricted"
# algorithm until it is on the allowed list).
allow_cc()
{
	local list

	[[ -n $SAVED_ALLOWED ]] ||
		SAVED_ALLOWED=$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)
	list="$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control) $*"
	echo "$list" > /proc/sys/net/ipv4/tcp_allowed_congestion_control
}

param_path()
{
	echo "$MOD/parameters/$1"
}

param_get()
{
	cat "$(param_path "$1")"
}

# param_set NAME VALUE: the write's exit status is the kernel's verdict.
param_set()
{
	echo "$2" > "$(param_path "$1")"
}

save_params()
{
	local p

	for p in "$MOD"/parameters/*; do
		[[ -e $p ]] || continue
		SAVED_PARAMS[${p##*/}]=$(cat "$p")
	done
}

restore_params()
{
	local p

	[[ -d $MOD/parameters ]] || return 0
	for p in "${!SAVED_PARAMS[@]}"; do
		[[ -w $MOD/parameters/$p ]] &&
			echo "${SAVED_PARAMS[$p]}" > "$MOD/parameters/$p" 2>/dev/null
	done
	return 0
}

# ---------------------------------------------------------------- topology
# Under TCG, and even more on the debug kernel, every exec costs a few
# hundred ms: the setup below batches commands per namespace.

# Namespaces are named dctcp<TAG>-<role>-<random>, TAG unique per script
# run, so that lib_cleanup can find every one this script made.
NS_PREFIX=dctcp$(mktemp -u XXXXXX)

# setup_ns VAR...: create namespaces with a random suffix.
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

# Fixed MACs (02:00:00:00:<link>:<end>) so that the neighbour entries can
# be pinned without asking: a qdisc that drops every non-ECT packet (the
# CE-mark-all and loss phases) must not starve ARP/ND.
MAC_SND0=02:00:00:00:01:02	MAC_RTR0=02:00:00:00:01:01
MAC_RTR1=02:00:00:00:02:01	MAC_RCV0=02:00:00:00:02:02

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
	ip -n "$snd" -b - <<-EOF
		link set lo up
		addr add $SND4/24 dev snd0
		addr add $SND6/64 dev snd0 nodad
		link set snd0 up
		route add default via $RTR4_S
		route add default via $RTR6_S
		neigh replace $RTR4_S lladdr $MAC_RTR0 dev snd0 nud permanent
		neigh replace $RTR6_S lladdr $MAC_RTR0 dev snd0 nud permanent
	EOF
	ip -n "$rcv" -b - <<-EOF
		link set lo up
		addr add $RCV4/24 dev rcv0
		addr add $RCV6/64 dev rcv0 nodad
		link set rcv0 up
		route add default via $RTR4_R
		route add default via $RTR6_R
		neigh replace $RTR4_R lladdr $MAC_RTR1 dev rcv0 nud permanent
		neigh replace $RTR6_R lladdr $MAC_RTR1 dev rcv0 nud permanent
	EOF

	in_ns "$rtr" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	in_ns "$snd" sysctl -qw net.ipv4.tcp_ecn=1 net.ipv4.tcp_no_metrics_save=1
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_ecn=1 net.ipv4.tcp_no_metrics_save=1 \
		net.ipv4.tcp_congestion_control="$RCV_CC"
}

# bottleneck KIND ARGS: (re)build rtr1's egress: tbf $RATE and a child
bottleneck()
{
	local latency=$1

	shift
	tc -n "$rtr" qdisc del dev rtr1 root 2>/dev/null || true
	tc -n "$rtr" -b - <<-EOF
		qdisc add dev rtr1 root handle 1: tbf rate $RATE burst 16kb latency $latency
		qdisc add dev rtr1 parent 1:1 handle 10: $*
	EOF
}

# red_args K: RED marking ECT packets once the average queue passes K
# bytes (probability 1 between K and K+1000: a step marker, as in the
# DCTCP paper).
red_args()
{
	echo "red limit 4000000 min $1 max $(($1 + 1000)) avpkt 1500" \
	     "burst $(((2 * $1 + 1000) / 3000 + 1)) probability 1.0 bandwidth $RATE ecn"
}

# bottleneck_red [K]: tbf $RATE with a RED ecn child.
bottleneck_red()
{
	# shellcheck disable=SC2046 # red_args is a word list
	bottleneck 1s $(red_args "${1:-$K}")
}

# Move the RED threshold of a running bottleneck.
bottleneck_red_change()
{
	# shellcheck disable=SC2046
	tc -n "$rtr" qdisc change dev rtr1 parent 1:1 handle 10: $(red_args "$1")
}

# bottleneck_fifo [LIMIT]: tbf $RATE with a deep tail-drop FIFO.
bottleneck_fifo()
{
	bottleneck 10s pfifo limit "${1:-$FIFO_LIMIT}"
}

# ack_delay MS: netem delay on the receiver's egress, i.e. on the ACKs.
ack_delay()
{
	tc -n "$rcv" qdisc replace dev rcv0 root netem delay "${1}ms" limit 100000
}

# data_netem ARGS...: netem on the sender's egress (loss, CE marking).
data_netem()
{
	tc -n "$snd" qdisc replace dev snd0 root netem limit 100000 "$@"
}

data_netem_off()
{
	tc -n "$snd" qdisc del dev snd0 root 2>/dev/null || true
}

# qdisc_stat NS DEV HANDLE FIELD: one counter of `tc -s qdisc` for the
# qdisc with that handle.  FIELD: sent_bytes sent_pkts dropped overlimits
# backlog_bytes backlog_pkts marked early pdrop.
qdisc_stat()
{
	tc -n "$1" -s qdisc show dev "$2" | awk -v h="$3" -v f="$4" '
		function bytes(s) {
			if (s ~ /Mb$/) return substr(s, 1, length(s) - 2) * 1000000
			if (s ~ /Kb$/) return substr(s, 1, length(s) - 2) * 1000
			if (s ~ /b$/) return substr(s, 1, length(s) - 1)
			return s
		}
		/^qdisc / { cur = ($3 == h) }
		!cur { next }
		$1 == "Sent" {
			v["sent_bytes"] = $2; v["sent_pkts"] = $4
			d = $7; sub(/,/, "", d); v["dropped"] = d
			o = $9; sub(/,/, "", o); v["overlimits"] = o
		}
		$1 == "backlog" {
			v["backlog_bytes"] = bytes($2)
			p = $3; sub(/p$/, "", p); v["backlog_pkts"] = p
		}
		$1 == "marked" { v["marked"] = $2; v["early"] = $4; v["pdrop"] = $6 }
		END { print (f in v) ? v[f] : "" }'
}

# ---------------------------------------------------------------- flows
# flow_server [NS] [-6]: a dctcp_flow sink on $PORT, ready when it returns.
flow_server()
{
	local ns=${1:-$rcv}

	shift || true
	# A simple command, not a function: $! is then the server itself.
	"$IP_BIN" netns exec "$ns" "$FLOW" server -p "$PORT" "$@" > /dev/null &
	BG_PIDS+=("$!")
	busywait 5000 listening "$ns" || { diag "flow server did not start"; return 1; }
}

listening()
{
	ss -N "$1" -Htln "sport = :$PORT" | grep -q .
}

# flow_client OUT CLIENT-ARGS...: run dctcp_flow client in snd, output to
# OUT (samples, see dctcp_flow.c).  Foreground.
flow_client()
{
	local out=$1

	shift
	in_ns "$snd" "$FLOW" client "$@" > "$out" 2> "$out.err"
}

# flow_client_bg OUT CLIENT-ARGS...: the same in the background; sets
# FLOW_PID.
flow_client_bg()
{
	local out=$1

	shift
	"$IP_BIN" netns exec "$snd" "$FLOW" client "$@" > "$out" 2> "$out.err" &
	FLOW_PID=$!
	BG_PIDS+=("$FLOW_PID")
}

# flow_wait PID TIMEOUT_MS: wait for a background client, bounded.
flow_wait()
{
	local pid=$1 rc=0

	if ! busywait "$2" pid_gone "$pid"; then
		diag "client $pid still running after $2 ms: killing it"
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 1
	fi
	wait "$pid" || rc=$?
	return $rc
}

pid_gone()
{
	! kill -0 "$1" 2>/dev/null
}

# measured_flow OUT SECS CLIENT-ARGS... HOST: a flow of SECS seconds
# from snd to rcv sampled every 100 ms.  The client keeps the connection
# open when done (-W) so that `ss -tino` of its final state is saved to
# OUT.ss, then it is told to close.  Fails if the client does.
measured_flow()
{
	local out=$1 secs=$2

	shift 2
	flow_client_bg "$out" -t "$secs" -i 100 -W "$@" "$PORT"
	busywait $((secs * 1000 + 30000)) grep -q '^waiting' "$out" ||
		fail "flow did not finish: $(cat "$out.err")"
	ss_flow "$snd" "$PORT" > "$out.ss"
	kill -TERM "$FLOW_PID"
	flow_wait "$FLOW_PID" 30000 || fail "client failed: $(cat "$out.err")"
}

# wait_sample OUT T_MS TIMEOUT_MS [PID]: wait (bounded) until the client's
# output has a sample at or after T_MS; give up early if PID exits first.
wait_sample()
{
	local out=$1 t_ms=$2 timeout_ms=$3 pid=${4:-}

	busywait "$timeout_ms" sample_or_gone "$out" "$t_ms" "$pid" &&
		sample_reached "$out" "$t_ms"
}

sample_or_gone()
{
	sample_reached "$1" "$2" || { [[ -n $3 ]] && pid_gone "$3"; }
}

sample_reached()
{
	awk -v t="$2" '/^sample/ { split($2, a, "="); if (a[2] + 0 >= t) f = 1 }
		END { exit !f }' "$1"
}

# samples OUT FIELD...: print the named fields of every sample, one line
# per sample, in the order given (t_ms is a field too).
samples()
{
	local out=$1

	shift
	awk -v want="$*" '
		BEGIN { n = split(want, w, " ") }
		/^sample/ {
			for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			line = ""
			for (i = 1; i <= n; i++) line = line (i > 1 ? " " : "") v[w[i]]
			print line
		}' "$out"
}

# field OUT KEY: a key=value of the "done" or "cc" line.
done_field()
{
	awk -v k="$2" '/^done/ { for (i = 2; i <= NF; i++) { split($i, kv, "=");
		if (kv[1] == k) print kv[2] } }' "$1"
}

client_cc()
{
	awk '/^cc / { print $2 }' "$1"
}

# ss_flow NS PORT: the `ss -tino` entry of the connection to PORT, on one
# line (-o: the ts/sack/ecn option flags are only printed with it).
ss_flow()
{
	ss -N "$1" -Htino "dport = :$2" | tr -s ' \t\n' ' '
}

# $RATE in Mbit/s
rate_mbit()
{
	echo "$RATE" | awk '/mbit$/ { print $0 + 0 } /kbit$/ { print $0 / 1000 }
		/gbit$/ { print $0 * 1000 }'
}

# median/max of numbers on stdin.
median()
{
	sort -n | awk '{ v[NR] = $1 } END {
		if (!NR) { print 0; exit }
		print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

max_of()
{
	sort -n | tail -n 1
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

# ---------------------------------------------------------------- cleanup
# Stop background helpers and remove the namespaces (which also ends any
# process left inside them).
topo_reset()
{
	local pid

	set +e		# runs from EXIT traps: never fail half-way
	for pid in "${BG_PIDS[@]:$BG_BASE}"; do
		kill "$pid" 2>/dev/null
	done
	cleanup_ns
	for pid in "${BG_PIDS[@]:$BG_BASE}"; do
		wait "$pid" 2>/dev/null
	done
	BG_PIDS=("${BG_PIDS[@]:0:$BG_BASE}")
	return 0
}

# Safety net: whatever namespace of ours is left (a test that lost track
# of a background process), kill what runs in it and delete it.
purge_namespaces()
{
	local ns

	for ns in $(ip netns list | awk -v p="$NS_PREFIX-" 'index($1, p) == 1 { print $1 }'); do
		diag "leftover namespace $ns: $(ip netns pids "$ns" | wc -l) processes"
		ip netns pids "$ns" | xargs -r kill -9
		ip netns del "$ns"
	done
}

lib_cleanup()
{
	set +e
	topo_reset
	purge_namespaces
	restore_params
	if [[ -n $SAVED_ALLOWED ]]; then
		echo "$SAVED_ALLOWED" > /proc/sys/net/ipv4/tcp_allowed_congestion_control
	fi
	rm -rf "$TMPD"
}
