#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# harness-selftest.sh - TAP helpers shared by the selftests of the two VM
# harnesses (tools/testing/qemu/selftest.sh, tools/testing/uml/selftest.sh).
# Sourced.  The caller sets HARNESS (the harness's name, for messages) and
# keeps each guest run's stdout, stderr and status in $TMP/out, $TMP/err and
# RC (and WALL_MS, its wall-clock time, when it measures one).

KSFT_SKIP=4
TMP=
N=0
FAILED=0
RC=0

cleanup()
{
	if [ -n "$TMP" ]; then
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT

diag()
{
	sed 's/^/# /'
}

result()
{
	local verdict=$1 name=$2

	N=$((N + 1))
	if [ "$verdict" = ok ]; then
		echo "ok $N - $name"
	else
		echo "not ok $N - $name"
		FAILED=$((FAILED + 1))
		echo "# status $RC${WALL_MS:+, $WALL_MS ms of wall clock}; guest output:"
		diag <"$TMP/out"
		echo "# $HARNESS messages:"
		tail -n 20 "$TMP/err" | diag
	fi
}

# check NAME CMD...: one TAP line, ok if CMD succeeds
check()
{
	local name=$1

	shift
	if "$@"; then
		result ok "$name"
	else
		result fail "$name"
	fi
}

out_has()
{
	grep -qxF -- "$1" "$TMP/out"
}

err_has()
{
	grep -qF -- "$1" "$TMP/err"
}

is()
{
	[ "$1" = "$2" ]
}

# A failure under CI=true, a skip otherwise.
skip_all()
{
	if [ "${CI:-}" = true ]; then
		echo "not ok 1 - $1"
		exit 1
	fi
	echo "1..0 # SKIP $1"
	exit $KSFT_SKIP
}
