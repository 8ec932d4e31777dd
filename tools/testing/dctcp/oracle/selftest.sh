#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Self-test of dctcp_oracle on records made up here: a consistent set must
# pass, and each kind of wrong record must fail exactly the check meant to
# catch it.  TAP.  (The end-to-end proof, modules that are wrong in the
# kernel, is in Documentation/dctcp.rst, "Checking the control law".)

set -eu
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
ORACLE=$HERE/dctcp_oracle
TMP=$(mktemp -d /tmp/dctcp-oracle-selftest.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

K=00000000aabbccdd/198.51.100.2:40000/203.0.113.2:5301
ONE=$((1 << 30))
n=0 failed=0

# next G ALPHA MARKED TOTAL: dctcp_next_alpha() for small inputs.
next_alpha()
{
	local g=$1 a=$2 m=$3 t=$4 d

	d=$((a >> g))
	if (( m == 0 )); then
		echo $(( d ? a - d : 0 ))
	else
		echo $(( a - d + (m << (30 - g)) / t ))
	fi
}

reduced()
{
	local r=$(($1 - (($1 * $2) >> 31)))

	echo $(( r > 2 ? r : 2 ))
}

# A consistent phase: init, updates, a CE reduction, a recovery, an undo,
# a second recovery at once, an RTO a window later, a fallback of another
# connection.
good()
{
	local a0=$ONE a1 a2

	a1=$(next_alpha 4 $a0 0 10)
	a2=$(next_alpha 4 "$a1" 5 10)
	cat <<-EOF
		P selftest 4 1024 0
		I 1.000000 $K $a0
		A 1.001000 $K 10 0 4 $a0 $a1
		R 1.002000 $K 20 $a1 $(reduced 20 "$a1")
		A 1.003000 $K 10 5 4 $a1 $a2
		L 1.004000 $K recovery 2 20 10 $a2 $a2 1000 2000 2000 500
		U 1.004500 $K 20 20
		L 1.004600 $K recovery 0 20 10 $a2 $a2 1100 2100 2100 500
		L 1.100000 $K rto 3 10 5 $a2 $a2 2100 3000 2100 500
		F 1.200000 other/1.1.1.1:1/2.2.2.2:2
		E selftest 9 0
	EOF
}

# expect NAME CHECKS SED: the good records edited by SED must fail exactly
# CHECKS (the checks' names, comma-separated, in the checker's order);
# CHECKS "" means everything must pass.
expect()
{
	local name=$1 want=$2 edit=$3 out bad

	good | sed "$edit" > "$TMP/rec"
	out=$("$ORACLE" -m 1 "$TMP/rec") || true
	bad=$(sed -n 's/^not ok [0-9]* - \([a-z]*\):.*/\1/p' <<< "$out" | paste -sd ',' -)
	n=$((n + 1))
	if [[ $bad == "$want" ]]; then
		echo "ok $n - $name"
	else
		sed 's/^/# /' <<< "$out"
		echo "not ok $n - $name: failed '${bad:-nothing}', want '${want:-nothing}'"
		failed=1
	fi
}

main()
{
	local a1

	[[ -x $ORACLE ]] || { echo "$ORACLE missing: run make in $HERE" >&2; exit 1; }
	a1=$(next_alpha 4 $ONE 0 10)
	echo "TAP version 13"
	echo "1..14"
	expect "consistent records pass" "" ""
	expect "alpha update off by one unit" alpha \
		"3s/ $a1\$/ $((a1 + 1))/;4s/ $a1 / $((a1 + 1)) /;5s/ $a1 / $((a1 + 1)) /"
	expect "alpha update with another g" gain,alpha "3s/ 10 0 4 / 10 0 5 /"
	expect "alpha_old not the previous alpha" chain "3s/ 10 0 4 $ONE / 10 0 4 $((ONE - 1)) /"
	expect "init with another alpha" init,chain "2s/ $ONE\$/ 0/"
	expect "CE reduction ignores alpha" reduction "4s/ [0-9]*\$/ 10/"
	expect "loss reaction not a halving" loss "6s/ 20 10 / 20 15 /"
	expect "new recovery after the stack ended the last one, no undo_cwnd" "" \
		"7d;s/^E selftest 9/E selftest 8/"
	expect "second loss reaction to one loss" once \
		"7d;8s/ 1100 2100 2100 / 1000 2100 2100 /;s/^E selftest 9/E selftest 8/"
	expect "RTO within a window, no progress" once \
		"7d;8d;9s/ 2100 3000 2100 / 1000 3000 2100 /;s/^E selftest 9/E selftest 7/"
	expect "no socket hash yet: addresses and ports identify" "" \
		"s#00000000aabbccdd/#(____ptrval____)/#"
	expect "event after the fallback" fallback \
		"9s#^#F 1.090000 $K\\n#;s#^E selftest 9#E selftest 10#"
	expect "lost events" input "s/^E selftest 9 0/E selftest 9 3/"
	expect "record missing" input,chain "5d"
	exit $failed
}

main "$@"
