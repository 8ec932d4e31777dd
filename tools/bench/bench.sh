#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - `make bench`: the DCTCP paper's comparisons, side by side, in
# QEMU guests booting Debian's kernel.
#
# Usage: tools/bench/bench.sh [--quick|--long] [--out DIR] [--kernel deb-6.1|deb-6.12]
#                              [--rate MBIT]
#        tools/bench/bench.sh --render DIR      (tables and plots again)
#
# Boots two guests, one after the other:
#   ours    insmod our tcp_dctcp.ko: dctcp-ours, dctcp-reno (its fallback),
#           cubic-ecn, reno-ecn, cubic-noecn
#   intree  modprobe Debian's tcp_dctcp: dctcp-intree
# and runs tools/bench/guest/bench-guest.sh in each (scenarios: queue and
# latency, incast, convergence, alpha, SYN/ECT connection probability).  The guest prints RESULT lines and
# CSV blocks; this script collects them into DIR and renders tables
# (DIR/summary.txt, DIR/tables.rst) and plots (DIR/*.png) with
# tools/bench/render.sh.
#
# --quick (default) took 7-8 minutes on a busy 2-core machine including
# both boots (about 11 with --rate 20); --long uses the seed's 30 s, 19
# long flows and more incast rounds (about 30 minutes).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
readonly HERE TOP
readonly QEMU_DIR=$TOP/tools/testing/qemu

MODE=quick
OUT=""
KERNEL=deb-6.1
IMPLS="ours intree"
RENDER_ONLY=""
RATE=100
STAGE=""
START=$SECONDS

die() { echo "bench: $*" >&2; exit 1; }
log() { printf 'bench [%3dm%02ds] %s\n' $(((SECONDS - START) / 60)) $(((SECONDS - START) % 60)) "$*"; }

cleanup()
{
	[ -z "$STAGE" ] || rm -rf "$STAGE"
}
trap cleanup EXIT

need()
{
	command -v "$1" >/dev/null 2>&1 || die "$1 missing: apt-get install $2"
}

usage()
{
	sed -n '4,/^$/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case $1 in
		--quick) MODE=quick ;;
		--long) MODE=long ;;
		--out) OUT=$2; shift ;;
		--kernel) KERNEL=$2; shift ;;
		--rate) RATE=$2; shift ;;
		--impls) IMPLS=$2; shift ;;	# debugging: only some boots
		--render) RENDER_ONLY=$2; shift ;;
		-h|--help) usage ;;
		*) usage ;;
		esac
		shift
	done
	[ -n "$OUT" ] || OUT=/tmp/dctcp-bench-$(date +%Y%m%d-%H%M%S)
	case $RATE in
	''|*[!0-9]*) die "--rate wants Mbit/s as a number (10..100)" ;;
	esac
	if [ "$RATE" -lt 10 ] || [ "$RATE" -gt 100 ]; then
		die "--rate must be 10..100 Mbit/s"
	fi
}

# the guest userland: the guest script and the static helpers
stage_guest()
{
	local h

	STAGE=$(mktemp -d /tmp/bench-stage.XXXXXX)
	mkdir -p "$STAGE/opt/bench/guest"
	install -m 0755 "$HERE/guest/bench-guest.sh" "$STAGE/opt/bench/guest/"
	for h in incast sampler; do
		gcc -O2 -Wall -Wextra -o "$STAGE/opt/bench/$h" "$HERE/$h.c" -static ||
			die "cannot build $h.c (static glibc: apt-get install libc6-dev)"
	done
}

# progress: the guest's "# " lines and a short form of each RESULT line
progress()
{
	local impl=$1

	awk -v impl="$impl" '
	function kv(k,  i) { for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "?" }
	/^# / { print "  [" impl "] " substr($0, 3); fflush(); next }
	/^RESULT / {
		s = kv("scenario")
		if (s == "queue")
			printf "  [%s]   %-12s goodput %s Mbit/s, ping p50 %s ms p99 %s ms, queue mean %s KB, RTOs %s, %s\n", impl, kv("algo"), kv("goodput_mbit"), kv("rtt_p50"), kv("rtt_p99"), kv("q_kb_mean"), kv("rtos"), kv("check")
		else if (s == "incast")
			printf "  [%s]   %-12s %s buffer, %2s senders: RTOs %s, QCT p50 %s ms p99 %s ms\n", impl, kv("algo"), kv("buffer"), kv("senders"), kv("rtos"), kv("qct_ms_p50"), kv("qct_ms_p99")
		else if (s == "converge")
			printf "  [%s]   %-12s flows %s / %s Mbit/s, Jain %s, converged after %s s, %s\n", impl, kv("algo"), kv("flow1_mbit"), kv("flow2_mbit"), kv("jain_of_means"), kv("converge_s"), kv("check")
		else if (s == "alpha" && kv("phase") != "all")
			printf "  [%s]   %-12s K=%s B: alpha %s (model %s), queue %s KB, %s Mbit/s\n", impl, kv("algo"), kv("k_bytes"), kv("alpha_mean"), kv("alpha_theory"), kv("q_kb_mean"), kv("goodput_mbit")
		else if (s == "syn")
			printf "  [%s]   %-12s %2s competing flows: connected ECT SYN %s, non-ECT SYN %s\n", impl, kv("algo"), kv("competing"), kv("p_ect"), kv("p_nonect")
		else if (s == "env")
			printf "  [%s] kernel %s, module %s, base RTT %s ms\n", impl, kv("kernel"), kv("module"), kv("base_rtt_ms")
		fflush()
	}'
}

# run_boot IMPL KDIR KO: one guest, its output in $OUT/raw-IMPL.txt
run_boot()
{
	local impl=$1 kdir=$2 ko=$3 timeout rc=0
	local args=(--kernel "$kdir" --net-kmods --overlay "$STAGE"
		    --env "BENCH_RATE_MBIT=$RATE" --log "$OUT/console-$impl.log")

	if [ "$MODE" = quick ]; then timeout=900; else timeout=3600; fi
	case $impl in
	ours) args+=(--file "$ko:/opt/dctcp/tcp_dctcp.ko") ;;
	intree) args+=(--kmod tcp_dctcp) ;;
	esac
	log "boot $impl ($(cat "$kdir/kver"), timeout ${timeout}s)"
	: > "$OUT/raw-$impl.txt"	# exists before tail -f looks for it
	"$QEMU_DIR/vm-run.sh" "${args[@]}" --timeout "$timeout" -- \
		bash /opt/bench/guest/bench-guest.sh --"$MODE" --impl "$impl" \
		--incast /opt/bench/incast --sampler /opt/bench/sampler > "$OUT/raw-$impl.txt" 2> "$OUT/vm-run-$impl.err" &
	local vm=$!
	# follow the output while the guest runs
	tail -n +1 -f --pid="$vm" "$OUT/raw-$impl.txt" 2>/dev/null | progress "$impl"
	wait "$vm" || rc=$?
	if [ "$rc" -ne 0 ]; then
		sed 's/^/  vm-run: /' "$OUT/vm-run-$impl.err" >&2
		log "guest $impl exited with status $rc (see $OUT/raw-$impl.txt, $OUT/console-$impl.log)"
	fi
	return "$rc"
}

# collect: RESULT lines -> results.txt, CSV blocks -> one CSV per name
collect()
{
	local f

	rm -f "$OUT"/*.csv "$OUT/results.txt"
	for f in "$OUT"/raw-*.txt; do
		[ -e "$f" ] || continue
		tr -d '\r' < "$f" | awk -v out="$OUT" '
		/^RESULT / { print >> (out "/results.txt"); next }
		/^CSV-BEGIN / {
			name = $2; file = out "/" name ".csv"
			if (!(name in hdr) && (getline l < file) <= 0) print $3 > file
			close(file); hdr[name] = 1; incsv = 1; next
		}
		/^CSV-END / { incsv = 0; close(file); next }
		incsv { print >> file }
		'
	done
}

main()
{
	local kdir ko rc=0 impl load0

	parse_args "$@"
	if [ -n "$RENDER_ONLY" ]; then
		exec "$HERE/render.sh" "$RENDER_ONLY"
	fi
	need qemu-system-x86_64 qemu-system-x86
	need gnuplot gnuplot-nox
	need gcc build-essential
	mkdir -p "$OUT"
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	log "mode $MODE, results in $OUT, host load average $load0"
	log "scale: $RATE Mbit/s emulated bottleneck in QEMU TCG (software CPU," \
		"2 vCPUs) vs the paper's 1-10 Gbit/s hardware: compare columns, not absolute numbers"

	stage_guest
	kdir=$("$QEMU_DIR/fetch-kernel.sh" "$KERNEL" 2> "$OUT/fetch-kernel.log") ||
		die "fetch-kernel.sh $KERNEL failed (see $OUT/fetch-kernel.log)"
	ko=""
	case " $IMPLS " in
	*" ours "*)
		ko=$("$TOP/tools/testing/build-module.sh" "$kdir" 2> "$OUT/build-module.log") ||
			die "building our module failed (see $OUT/build-module.log)"
		;;
	esac

	{
		echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ) mode=$MODE kernel=$KERNEL"
		echo "host=$(uname -r) cpus=$(nproc) load_before=$load0"
		echo "qemu=$(qemu-system-x86_64 --version | head -1)"
	} > "$OUT/meta.txt"

	for impl in $IMPLS; do
		run_boot "$impl" "$kdir" "$ko" || rc=1
		log "boot $impl done"
	done
	echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg) elapsed_s=$((SECONDS - START))" >> "$OUT/meta.txt"

	collect
	[ -s "$OUT/results.txt" ] || die "no results collected (see $OUT/raw-*.txt)"
	"$HERE/render.sh" "$OUT" || rc=1
	if grep -q 'check=fail' "$OUT/results.txt"; then
		log "some runs did not use the configuration they claim (check=fail in results.txt)"
		rc=1
	fi
	log "done in $(((SECONDS - START) / 60))m$(((SECONDS - START) % 60))s, load average now $(cut -d' ' -f1-3 /proc/loadavg); results in $OUT"
	return "$rc"
}

main "$@"; exit $?
