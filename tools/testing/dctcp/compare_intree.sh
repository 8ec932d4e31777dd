#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Ours vs Debian's in-tree tcp_dctcp: boot KERNEL twice, once with our
# module (insmod) and once with the in-tree one (modprobe), run the same
# measuring scripts in both, then compare the figures they print.
#
#   compare_intree.sh [KERNEL] [--keep DIR]      (KERNEL: deb-6.1)
#
# Both boots' own TAP is streamed (the in-tree boot skips what only ours
# provides).  Then one TAP line per compared figure: throughput within
# 25%, mean alpha within 2x (or 40/1024), dctcp backlog and ping within
# 50%, the EWMA gain seen in alpha's steps within 25%.  The tolerances are wide
# because each figure is one short flow in an emulated guest, yet a
# broken alpha update or ssthresh lands far outside them.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
KERNEL=deb-6.1
KEEP=
SCRIPTS=(dctcp_marking.sh dctcp_queue.sh dctcp_alpha.sh)
N=0
FAILED=0

while (( $# )); do
	case $1 in
	--keep) KEEP=${2:?}; shift ;;
	*) KERNEL=$1 ;;
	esac
	shift
done

OUT=${KEEP:-$(mktemp -d /tmp/dctcp-compare.XXXXXX)}
mkdir -p "$OUT"
[[ -n $KEEP ]] || trap 'rm -rf "$OUT"' EXIT

# fig FILE NAME KEY: one value of a "# figure: NAME k=v ..." line
fig()
{
	awk -v n="$2" -v k="$3" '$1 == "#" && $2 == "figure:" && $3 == n {
		for (i = 4; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) v = kv[2] } }
		END { print v }' "$1"
}

result()
{
	N=$((N + 1))
	if [[ $1 == ok ]]; then
		echo "ok $N - $2"
	else
		FAILED=$((FAILED + 1))
		echo "not ok $N - $2"
	fi
}

# compare NAME KEY MODE TOL: MODE rel (|a-b| <= TOL * max) or ratio
# (max/min <= TOL, or both within ABS of each other for small values)
compare()
{
	local name=$1 key=$2 mode=$3 tol=$4 abs=${5:-0} a b verdict

	a=$(fig "$OUT/ours.log" "$name" "$key")
	b=$(fig "$OUT/intree.log" "$name" "$key")
	if [[ -z $a || -z $b ]]; then
		echo "# $name $key: missing (ours '$a', in-tree '$b')"
		result fail "ours vs in-tree: $name $key"
		return
	fi
	verdict=$(awk -v a="$a" -v b="$b" -v m="$mode" -v t="$tol" -v abs="$abs" 'BEGIN {
		hi = a > b ? a : b; lo = a > b ? b : a; d = hi - lo
		if (d <= abs) ok = 1
		else if (m == "rel") ok = (d <= t * hi)
		else ok = (lo > 0 && hi / lo <= t)
		print ok ? "ok" : "fail" }')
	echo "# $name $key: ours $a, in-tree $b"
	result "$verdict" "ours vs in-tree: $name $key ($mode $tol)"
}

main()
{
	local impl rc=0

	for impl in ours intree; do
		echo "# ==== $KERNEL, $impl tcp_dctcp"
		"$HERE/run_vm.sh" "$KERNEL" --impl "$impl" "${SCRIPTS[@]}" |
			tee "$OUT/$impl.log"
		(( PIPESTATUS[0] == 0 )) || rc=1
	done

	echo "# ==== ours vs in-tree on $KERNEL"
	echo "1..11"
	compare marking_d0 mbit rel 0.25
	compare marking_d0 alpha_mean ratio 2 40
	compare marking_d10 mbit rel 0.25
	compare marking_d10 alpha_mean ratio 2 40
	compare queue_dctcp backlog rel 0.5
	compare queue_dctcp ping_ms rel 0.5 2
	compare queue_dctcp mbit rel 0.25
	compare alpha_g16 g_rise rel 0.25
	compare alpha_g16 g_decay rel 0.25
	compare alpha_g4 g_rise rel 0.25
	compare alpha_g4 g_decay rel 0.25
	(( FAILED == 0 && rc == 0 ))
}

main
