#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The host half of the tracepoint oracle, as TAP.
#
#   tools/testing/dctcp/oracle/check.sh LOG [--min N]
#
# LOG is the output of a guest run of dctcp_trace.sh (run_vm.sh calls this
# on every run that printed oracle records).  The records between its
# "# oracle-begin" and "# oracle-end" markers are decoded, verified against
# the line count and hash the guest printed, and every one is checked by
# dctcp_oracle against include/dctcp_math.h compiled here: it must see at
# least N events (default 10000) and no mismatch.

set -eu
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
WORK=

cleanup()
{
	[[ -z $WORK ]] || rm -rf "$WORK"
}
trap cleanup EXIT

tap_fail()
{
	echo "1..1"
	echo "not ok 1 - oracle: $*"
	exit 1
}

# decode LOG RECORDS: the records between the oracle markers of LOG,
# verified against the line count and hash the guest printed.
decode()
{
	local log=$1 rec=$2 head lines sum

	head=$(grep -m1 '^# oracle-begin ' "$log") ||
		{ echo "no oracle records in $log" >&2; return 1; }
	grep -q '^# oracle-end' "$log" ||
		{ echo "oracle records in $log are truncated" >&2; return 1; }
	read -r _ _ lines _ _ sum <<< "$head"
	sed -n 's/^# oracle-data //p' "$log" | base64 -d | gunzip > "$rec" ||
		{ echo "cannot decode the oracle records" >&2; return 1; }
	[[ $(wc -l < "$rec") == "$lines" && $(sha256sum < "$rec" | cut -d' ' -f1) == "$sum" ]] ||
		{ echo "oracle records damaged: want $lines lines, sha256 $sum" >&2; return 1; }
}

main()
{
	local log=${1:-} min=10000

	[[ -r $log ]] || { sed -n '4,6s/^# \{0,1\}//p' "$0" >&2; exit 2; }
	if [[ ${2:-} == --min ]]; then
		min=${3:?}
		[[ $min =~ ^[0-9]+$ ]] || { echo "--min takes a number" >&2; exit 2; }
	fi
	WORK=$(mktemp -d /tmp/dctcp-oracle.XXXXXX)
	make -s -C "$HERE" >&2 || tap_fail "build of dctcp_oracle failed"
	decode "$log" "$WORK/records" || tap_fail "no records to check (see above)"
	"$HERE/dctcp_oracle" -m "$min" "$WORK/records"
}

main "$@"
