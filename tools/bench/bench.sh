#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - `make bench`: the DCTCP paper's comparisons, side by side, at
# the paper's scale (1 Gbit/s, K = 20 packets) on simulated time.
#
# Usage: tools/bench/bench.sh [--long] [--out DIR] [--scenarios "S..."]
#                             [--rows "ROW..."] [--doc]
#        tools/bench/bench.sh --render DIR [--doc]
#
# Boots a User-Mode Linux guest with time-travel=inf-cpu (tools/testing/uml:
# the guest's clock only advances when it is idle, so every rate, RTT and
# queue is exact, whatever the host's load) and runs
# tools/bench/guest/bench-guest.sh there, twice: one boot with our module
# (our dctcp, dctcp-reno, CUBIC and Reno with RFC 3168 ECN on the same
# RED, CUBIC without ECN on a deep FIFO), one boot with the in-tree
# tcp_dctcp built from the same kernel source.  A fresh boot per
# implementation, as compare_intree.sh does: switching modules in one boot
# needs an rmmod of ours, which has to wait until every namespace that
# used dctcp is freed, and a deleted namespace lives on while a socket in
# it does.  After the dctcp-reno incast rows, the responders' connections
# (killed while the peer's namespace went away) stay orphaned in the gone
# sender namespace, retransmitting until they give up: tcp_dctcp's
# refcnt stayed at 92 (each row's N connections plus its namespace's
# default algorithm: 20 + 31 + 41 for 19, 30 and 40 senders) for 115 s of
# simulated time after the last namespace was deleted, then fell row by
# row.  Both boots land in one table.
# The scenarios:
#   queue     2 and 19 long flows: queue, RTT (TCP probes), utilisation,
#             fairness, against the floor base RTT + K/C
#   incast    5..40 synchronized senders, 1 MB per query, shallow buffer:
#             RTOs, TLPs, query completion time percentiles
#   converge  5 flows joining and leaving one by one
#   alpha     alpha while K changes, against the fluid model
#   10g       the queue scenario at 10 Gbit/s, K = 65 packets (--long)
# The guest's output is kept in DIR/raw.txt; its RESULT lines go to
# DIR/results.txt and its CSV blocks to DIR/NAME.csv; tools/bench/render.sh
# writes DIR/summary.txt, DIR/tables.rst, DIR/*.png and DIR/benchmark.rst.
# --doc copies the latter and the plots into Documentation/.  Progress,
# with the wall clock spent so far, is printed while the guest runs; the
# wall clock of each scenario goes to DIR/walls.txt.
#
# --rows limits the rows (dctcp-ours dctcp-intree dctcp-reno cubic-ecn
# reno-ecn cubic-noecn).  The default: 1 s flows, incast with 5, 19 and 40
# senders and 100 queries each (p99 is the 99th of 100, not the maximum),
# 400 ms convergence stages, 500 ms alpha phases; --long: 5 s flows,
# 5..40 senders in 7 steps with 500 queries, 1 s stages and phases, and
# the 10g scenario.  Documentation/benchmark.rst gives the wall clock of
# each scenario on this 2-core machine.
set -eu
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
# shellcheck source=../testing/lib/ko-identity.sh
source "$TOP/tools/testing/lib/ko-identity.sh"
readonly HERE TOP
readonly UML_DIR=$TOP/tools/testing/uml
readonly SUITE=$TOP/tools/testing/selftests/net/tcp_dctcp

LONG=0
OUT=
SCENARIOS=
ROWS=
RENDER_ONLY=
DOC=0
STAGE=
START=$SECONDS

die() { echo "bench: $*" >&2; exit 1; }
log() { printf 'bench [%3dm%02ds] %s\n' $(((SECONDS - START) / 60)) $(((SECONDS - START) % 60)) "$*"; }

cleanup()
{
	[[ -z $STAGE ]] || rm -rf "$STAGE"
}
trap cleanup EXIT

need()
{
	command -v "$1" >/dev/null 2>&1 || die "$1 missing: apt-get install $2"
}

usage()
{
	sed -n '4,9s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

parse_args()
{
	while (( $# )); do
		case $1 in
		--long) LONG=1 ;;
		--quick) LONG=0 ;;
		--out) OUT=${2:?}; shift ;;
		--scenarios) SCENARIOS=${2:?}; shift ;;
		--rows) ROWS=${2:?}; shift ;;
		--render) RENDER_ONLY=${2:?}; shift ;;
		--doc) DOC=1 ;;
		-h|--help) usage ;;
		*) echo "bench: unknown argument $1" >&2; usage ;;
		esac
		shift
	done
	[[ -n $OUT ]] || OUT=/tmp/dctcp-bench-$(date +%Y%m%d-%H%M%S)
	if [[ -z $SCENARIOS ]]; then
		SCENARIOS="queue incast converge alpha"
		(( !LONG )) || SCENARIOS+=" 10g"
	fi
	local s
	for s in $SCENARIOS; do
		case $s in
		queue|incast|converge|alpha|10g) ;;
		*) die "unknown scenario '$s' (queue incast converge alpha 10g)" ;;
		esac
	done
}

# the guest's files: the test suite (topology, dctcp_flow), the bench's
# guest script, its awk and the incast helper
stage_guest()
{
	STAGE=$(mktemp -d /tmp/bench-stage.XXXXXX)
	mkdir -p "$STAGE/build"
	make -s -C "$SUITE" OUTPUT="$STAGE/build" INSTALL_PATH="$STAGE/opt/tcp_dctcp" \
		install >&2 || die "building the test suite (dctcp_flow) failed"
	mkdir -p "$STAGE/opt/bench/guest"
	install -m 0755 "$HERE/guest/bench-guest.sh" "$STAGE/opt/bench/guest/"
	install -m 0644 "$HERE"/bench_*.awk "$STAGE/opt/bench/"
	gcc -O2 -Wall -Wextra -o "$STAGE/opt/bench/incast" "$HERE/incast.c" ||
		die "cannot build incast.c (apt-get install build-essential)"
}

# run_guest KDIR KO IMPL: one boot for that tcp_dctcp implementation, its
# output appended to $OUT/raw.txt; progress and per-scenario wall clock
# (progress.awk) while it runs
run_guest()
{
	local kdir=$1 ko=$2 impl=$3 timeout=1800 args=() rc
	local gargs=(--impl "$impl" --scenarios "$SCENARIOS")

	(( !LONG )) || { timeout=10800; gargs+=(--long); }
	[[ -z $ROWS ]] || gargs+=(--rows "$ROWS")
	ko_identity_env "$ko"
	args=(--kernel "$kdir" --overlay "$STAGE" --file "$ko:/opt/dctcp/tcp_dctcp.ko"
	      --kmod tcp_dctcp "${KO_ENV[@]}"
	      --dmesg-check --log "$OUT/console-$impl.log" --timeout "$timeout")
	log "booting $(cat "$kdir/kver") for the $impl tcp_dctcp (UML, simulated time; wall-clock watchdog ${timeout}s)"
	set +e
	"$UML_DIR/uml-run.sh" "${args[@]}" -- /opt/bench/guest/bench-guest.sh "${gargs[@]}" \
		2> "$OUT/uml-run-$impl.err" |
		tee -a "$OUT/raw.txt" |
		while IFS= read -r line; do printf '%d %s\n' $((SECONDS - START)) "$line"; done |
		awk -v walls="$OUT/walls.txt" -f "$HERE/progress.awk"
	rc=${PIPESTATUS[0]}
	set -e
	if (( rc != 0 )); then
		sed 's/^/  uml-run: /' "$OUT/uml-run-$impl.err" >&2
		log "the $impl guest exited with status $rc (see $OUT/raw.txt, $OUT/console-$impl.log)"
	fi
	return "$rc"
}

# wants_rows ROW...: --rows (default: all) names one of ROW
wants_rows()
{
	local row

	[[ -n $ROWS ]] || return 0
	for row in "$@"; do
		[[ " $ROWS " != *" $row "* ]] || return 0
	done
	return 1
}

main()
{
	local kdir ko rc=0

	parse_args "$@"
	need gnuplot gnuplot-nox
	if [[ -n $RENDER_ONLY ]]; then
		"$HERE/render.sh" "$RENDER_ONLY"
		(( !DOC )) || "$HERE/render.sh" --doc "$RENDER_ONLY" "$TOP/Documentation"
		return
	fi
	need gcc build-essential
	mkdir -p "$OUT"
	log "scenarios: $SCENARIOS; results in $OUT"
	kdir=$("$UML_DIR/build-uml.sh" 2> "$OUT/build-uml.log") ||
		die "building the UML kernel failed (see $OUT/build-uml.log)"
	ko=$("$TOP/tools/testing/build-module.sh" "$kdir" 2> "$OUT/build-module.log") ||
		die "building our module failed (see $OUT/build-module.log)"
	stage_guest
	{
		echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) long=$LONG scenarios=$SCENARIOS"
		echo "kernel=$(cat "$kdir/kver") host=$(uname -r) cpus=$(nproc)"
		echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
	} > "$OUT/meta.txt"

	: > "$OUT/raw.txt"
	: > "$OUT/walls.txt"
	if wants_rows dctcp-ours dctcp-reno cubic-ecn reno-ecn cubic-noecn; then
		run_guest "$kdir" "$ko" ours || rc=1
	fi
	if wants_rows dctcp-intree; then
		run_guest "$kdir" "$ko" intree || rc=1
	fi
	echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg) wall_s=$((SECONDS - START))" >> "$OUT/meta.txt"
	awk -v out="$OUT" -f "$HERE/collect.awk" "$OUT/raw.txt"
	[[ -s $OUT/results.txt ]] || die "no results collected (see $OUT/raw.txt)"
	"$HERE/render.sh" "$OUT" || rc=1
	(( !DOC )) || "$HERE/render.sh" --doc "$OUT" "$TOP/Documentation" || rc=1
	if grep -q 'check=fail' "$OUT/results.txt"; then
		log "some runs did not use the configuration they claim (check=fail in results.txt)"
		rc=1
	fi
	log "done in $(((SECONDS - START) / 60))m$(((SECONDS - START) % 60))s; results in $OUT"
	return "$rc"
}

main "$@"
