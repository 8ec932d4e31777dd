# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared helpers of the tcp_dctcp selftests: TAP output and test bodies,
# the module under test (load it, prove it is the one we mean, save and
# restore its parameters), flows and their samples.  The network itself
# (namespaces, bottleneck, qdisc readings) is dctcp_topo.sh, shared with
# the demo and the benchmark.  Sourced by every dctcp_*.sh; README.md lists
# the environment variables.
#
# Conventions: a value a function computes is printed on stdout (or set in
# a global); diagnostics always go to stderr, so that a failing check
# inside $(...) cannot be read as a number.  inherit_errexit makes a
# failing check inside $(...) fail the assignment, and so the test.

shopt -s inherit_errexit

# kselftest framework requirement: exit code of a skipped program
readonly ksft_skip=4

# Knobs (environment); the topology's (RATE, K, ...) are in dctcp_topo.sh.
DCTCP_IMPL=${DCTCP_IMPL:-ours}			# ours | intree
DCTCP_KO=${DCTCP_KO:-/opt/dctcp/tcp_dctcp.ko}	# ours is insmod'ed from here
FLOW_SECS=${FLOW_SECS:-3}			# length of one measured flow
PORT=${PORT:-5301}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=dctcp_topo.sh
source "$HERE/dctcp_topo.sh"
FLOW=${FLOW:-$HERE/dctcp_flow}
TMPD=$(mktemp -d /tmp/dctcp.XXXXXX)
BG_BASE=0	# run_test: background processes before this index are not ours
BG_PIDS=()
declare -A SAVED_PARAMS=()
SAVED_ALLOWED=

# ---------------------------------------------------------------- TAP
KTAP_N=0
KTAP_FAIL=0

KTAP_PLAN=

ktap_header()
{
	KTAP_PLAN=$1
	echo "TAP version 13"
	echo "1..$1"
}

# diag MSG: a TAP diagnostic, on stderr (see the conventions above).
diag()
{
	printf '# %s\n' "$*" >&2
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
# subshell exits, and the module parameters it changed are restored, so
# that no test sees another's settings.
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
	restore_params
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

# ktap_finish: the exit status of the script; a plan that does not match
# the tests run is a failure of its own.
ktap_finish()
{
	diag "$KTAP_N tests, $KTAP_FAIL failed"
	if [[ $KTAP_N != "$KTAP_PLAN" ]]; then
		diag "planned $KTAP_PLAN tests, ran $KTAP_N"
		return 1
	fi
	(( KTAP_FAIL == 0 ))
}

# ---------------------------------------------------------------- time
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

# srcversion_expected: the srcversion of the .ko we built, a hash of its
# sources (DCTCP_SRCVERSION, computed by the harness on the host, or
# modinfo of $DCTCP_KO).
srcversion_expected()
{
	echo "${DCTCP_SRCVERSION:-$(modinfo -F srcversion "$DCTCP_KO")}"
}

# build_id_expected: the GNU build ID of the .ko we built (DCTCP_BUILD_ID,
# read by the harness on the host, or readelf of $DCTCP_KO).  It changes
# with any byte of the module, where srcversion only hashes the sources in
# tcp_dctcp.c's own directory: not include/, where the control law is.
build_id_expected()
{
	echo "${DCTCP_BUILD_ID:-$(readelf -n "$DCTCP_KO" 2>/dev/null | sed -n 's/.*Build ID: *//p')}"
}

# build_id_loaded: the loaded module's, from its ELF note in sysfs: namesz,
# descsz and type (4 bytes each), "GNU\0", then the ID.
build_id_loaded()
{
	od -An -tx1 -v "$MOD/notes/.note.gnu.build-id" 2>/dev/null | tr -d ' \n' | cut -c33-
}

# The implementation we are supposed to test is loaded and registered.
# Ours: the loaded module's srcversion and build ID are the ones of the .ko
# we built, so neither the distribution's tcp_dctcp nor a stale or other
# build of ours can pass for it.  In-tree: the kernel did not taint itself
# with "O" (out-of-tree) when loading it.
dctcp_is_loaded()
{
	local want id

	[[ -d $MOD ]] && cc_available dctcp || return 1
	if [[ $DCTCP_IMPL == ours ]]; then
		want=$(srcversion_expected)
		id=$(build_id_expected)
		[[ -n $want && $(cat "$MOD/srcversion" 2>/dev/null) == "$want" &&
		   -n $id && $(build_id_loaded) == "$id" ]]
	else
		[[ $(cat "$MOD/taint") != *O* ]]
	fi
}

# dctcp_load: make the implementation under test the loaded tcp_dctcp
# (insmod $DCTCP_KO for ours, modprobe for the in-tree one), unloading
# another one first.  Non-zero with a reason on stderr if impossible.
dctcp_load()
{
	if [[ -d $MOD ]]; then
		dctcp_is_loaded && return 0
		rmmod tcp_dctcp || return 1
	fi
	if [[ $DCTCP_IMPL == ours ]]; then
		[[ -r $DCTCP_KO ]] || { echo "module $DCTCP_KO not found" >&2; return 1; }
		insmod "$DCTCP_KO"
	else
		modprobe tcp_dctcp
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

# The whole script failed before its first test: one failed TAP line.
bail_out()
{
	echo "1..1"
	echo "not ok 1 - $(basename "$0"): $*"
	exit 1
}

require_tools()
{
	topo_tools || bail_out "tools missing (see above)"
	[[ -x $FLOW ]] || bail_out "$FLOW missing: run make in $HERE"
}

# Every script starts with this: tools, root, module.  A module under
# test that does not load, or is not the one we built, fails the script:
# it is what the suite exists to check, never a reason to skip.
require_dctcp()
{
	require_tools
	[[ $(id -u) == 0 ]] || skip_all "must run as root"
	if ! { dctcp_load && dctcp_is_loaded; } 2> "$TMPD/load.err"; then
		diag "$(cat "$TMPD/load.err")"
		diag "loaded: srcversion '$(cat "$MOD/srcversion" 2>/dev/null)'" \
		     "build ID '$(build_id_loaded)'" \
		     "taint '$(cat "$MOD/taint" 2>/dev/null)'; ours is" \
		     "srcversion '$(srcversion_expected 2>/dev/null)'" \
		     "build ID '$(build_id_expected)'"
		bail_out "cannot load the $DCTCP_IMPL tcp_dctcp"
	fi
	diag "tcp_dctcp: impl=$DCTCP_IMPL version=$(mod_version) srcversion=$(cat "$MOD/srcversion" 2>/dev/null) build_id=$(build_id_loaded) kernel=$(uname -r)"
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
	# only what changed: a write runs the parameter's setter, which would
	# hide a module whose initial state differs from what it reads back
	for p in "${!SAVED_PARAMS[@]}"; do
		[[ -w $MOD/parameters/$p ]] || continue
		[[ $(cat "$MOD/parameters/$p") == "${SAVED_PARAMS[$p]}" ]] ||
			echo "${SAVED_PARAMS[$p]}" > "$MOD/parameters/$p" 2>/dev/null
	done
	return 0
}

# ---------------------------------------------------------------- flows
# flow_server [NS] [-6]: a dctcp_flow sink on $PORT, ready when it returns.
# Under TCG on a busy host (or a debug kernel) a process can take many
# seconds to start: be patient.
flow_server()
{
	local ns=${1:-$rcv}

	shift || true
	# A simple command, not a function: $! is then the server itself.
	"$IP_BIN" netns exec "$ns" "$FLOW" server -p "$PORT" "$@" > /dev/null &
	BG_PIDS+=("$!")
	busywait 35000 listening "$ns" ||
		fail "flow server did not start within 35 s"
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

# ---------------------------------------------------------------- cleanup
# Stop background helpers and remove the namespaces (which also ends any
# process left inside them).  Runs from EXIT traps and in the middle of
# test bodies: it never fails half-way, and leaves errexit as it found it
# (a test body that calls it keeps failing on its next failed check).
topo_reset()
{
	local pid errexit=$-

	set +e
	for pid in "${BG_PIDS[@]:$BG_BASE}"; do
		kill "$pid" 2>/dev/null
	done
	cleanup_ns
	for pid in "${BG_PIDS[@]:$BG_BASE}"; do
		wait "$pid" 2>/dev/null
	done
	BG_PIDS=("${BG_PIDS[@]:0:$BG_BASE}")
	[[ $errexit != *e* ]] || set -e
	return 0
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
