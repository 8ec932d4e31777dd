#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Ours vs the in-tree tcp_dctcp built from the same kernel source, on
# identical simulated hardware: boot User-Mode Linux with time-travel
# (tools/testing/uml) three times, twice with our module (insmod) and once
# with the kernel's own (modprobe), run dctcp_sim_compare.sh in each, then
# compare the figures it prints: our two boots must agree within 1%
# (determinism: throughput, mean backlog, marks, mean alpha).
#
#   compare_intree.sh [KERNEL] [--keep DIR]      (KERNEL: uml)
#
# The boots' own TAP is streamed.  Then one TAP line per comparison, on
# the "red" scenario (1 Gbit/s, RED K = 30000 B, two flows; simulated
# time is exact, so the tolerances are tight): goodput within 3%, mean
# bottleneck backlog within 10%; and on the "sparse" one (1% CE marks,
# g = 1/1024): our alpha within 10% of a float EWMA of the marks our
# flow saw.  For both modules and both scenarios it reports how far the
# module's mean alpha is from that float EWMA (the in-tree module is not
# held to it: its 10-bit alpha drops sparse marks, see include/dctcp_math.h).

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
KERNEL=uml
KEEP=
SCRIPT=dctcp_sim_compare.sh
N=0
FAILED=0

while (( $# )); do
	case $1 in
	--keep) KEEP=${2:?}; shift ;;
	-h|--help) sed -n '3,18s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	-*) echo "compare_intree: unknown option $1" >&2; exit 2 ;;
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

# rel A B: |A - B| / B
rel()
{
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d
		if (b == 0) print (d == 0 ? 0 : 1e9); else printf "%.4f\n", d / b }'
}

# compare NAME KEY TOL A B WHAT: the figure in boots A and B within TOL
compare()
{
	local name=$1 key=$2 tol=$3 x=$4 y=$5 what=$6 a b r verdict=fail

	a=$(fig "$OUT/$x.log" "$name" "$key")
	b=$(fig "$OUT/$y.log" "$name" "$key")
	if [[ -n $a && -n $b ]]; then
		r=$(rel "$a" "$b")
		awk -v r="$r" -v t="$tol" 'BEGIN { exit !(r <= t) }' && verdict=ok
	fi
	echo "# $name $key: $x '$a', $y '$b', differ by ${r:-?}"
	result "$verdict" "$what: $name $key within $tol"
}

# report NAME: each module's mean alpha and the float EWMA of its marks
report()
{
	local name=$1 impl a e

	for impl in ours intree; do
		a=$(fig "$OUT/$impl.log" "$name" alpha_mean)
		e=$(fig "$OUT/$impl.log" "$name" ewma_mean)
		echo "# $name $impl: mean alpha ${a:-?}, float EWMA of its marks ${e:-?}" \
		     "(off by $([[ -n $a && -n $e ]] && rel "$a" "$e" || echo ?);" \
		     "mean |alpha - EWMA| $(fig "$OUT/$impl.log" "$name" ewma_mad))"
	done
}

main()
{
	local boot key rc=0 a e verdict=fail

	# ours twice: simulated time must make two boots of the same
	# scenario agree (determinism), then the in-tree module
	for boot in ours ours-again intree; do
		echo "# ==== $KERNEL, ${boot%-again} tcp_dctcp ($boot)"
		"$HERE/run_vm.sh" "$KERNEL" --impl "${boot%-again}" "$SCRIPT" | tee "$OUT/$boot.log"
		(( PIPESTATUS[0] == 0 )) || rc=1
	done

	echo "# ==== determinism, and ours vs in-tree on $KERNEL"
	echo "1..7"
	for key in mbit q_mean marks alpha_mean; do
		compare compare_red "$key" 0.01 ours-again ours "determinism, two boots"
	done
	compare compare_red mbit 0.03 ours intree "ours vs in-tree"
	compare compare_red q_mean 0.10 ours intree "ours vs in-tree"
	report compare_red
	report compare_sparse
	a=$(fig "$OUT/ours.log" compare_sparse alpha_mean)
	e=$(fig "$OUT/ours.log" compare_sparse ewma_mean)
	[[ -n $a && -n $e ]] && awk -v r="$(rel "$a" "$e")" 'BEGIN { exit !(r <= 0.1) }' &&
		verdict=ok
	result "$verdict" "ours: sparse marks, g=1/1024: mean alpha within 10% of the float EWMA"
	(( FAILED == 0 && rc == 0 ))
}

main
