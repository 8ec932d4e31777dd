#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# TAP test of the mm_map restorer helper on the running kernel.
#   test_mm_map.sh [MM_MAP_BINARY]
# EXPECT_MM_MAP=present|absent (default: whatever the kernel says) makes
# the probe an assertion: run_all.sh sets "absent" for the base kernel
# and "present" for the patched one.  Without PR_SET_MM_MAP the helper
# must fall back to the legacy per-field calls.
set -eu
shopt -s inherit_errexit

readonly MM_MAP="${1:-$(dirname "$0")/mm_map}"
readonly NOBODY=65534
N=0
FAILED=0
TARGET_PID=""
OUT=""

ok() { N=$((N + 1)); echo "ok $N - $*"; }
not_ok() { N=$((N + 1)); FAILED=1; echo "not ok $N - $*"; }
diag() { sed 's/^/# /'; }

# check NAME CMD...: one TAP line for one command's exit status.
check() {
	local name="$1"
	shift
	if OUT=$("$@" 2>&1); then
		ok "$name"
	else
		not_ok "$name"
	fi
	printf '%s\n' "$OUT" | diag
}

# check_fails NAME PATTERN CMD...: CMD must fail and print PATTERN.
check_fails() {
	local name="$1" pattern="$2"
	shift 2
	if OUT=$("$@" 2>&1); then
		not_ok "$name (unexpectedly succeeded)"
	elif grep -q "$pattern" <<<"$OUT"; then
		ok "$name"
	else
		not_ok "$name (no '$pattern')"
	fi
	printf '%s\n' "$OUT" | diag
}

cleanup() {
	[ -z "$TARGET_PID" ] || kill "$TARGET_PID" 2>/dev/null || true
}
trap cleanup EXIT

has_cap_sys_resource() {
	local eff
	eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
	(( (0x$eff >> 24) & 1 ))
}

# Poll (bounded) until PID has exec'ed NAME: before that it is a copy of us.
wait_exec() {
	local _
	for _ in $(seq 100); do
		tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q "^$2 " && return
		sleep 0.05
	done
	echo "Bail out! pid $1 never became $2"
	exit 1
}

# /proc/PID/stat field N (comm may contain blanks: count after ')').
stat_field() {
	sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f$(($2 - 2))
}

# Legacy PR_SET_MM wants a VMA at or above each stack/arg/env address in
# the caller, else EFAULT.  Where ASLR put the two stacks decides which
# applies, so decide it per run: apply-from prints the end of the
# caller's highest VMA, /proc/PID/stat has the target's addresses.
check_legacy_apply_from() {
	local top highest=0 f v want rc=0

	OUT=$("$MM_MAP" apply-from "$TARGET_PID" --expect-path legacy 2>&1) || rc=$?
	top=$(awk '/^caller vma top:/ { print $4 }' <<<"$OUT")
	for f in 28 48 49 50 51; do	# start_stack, arg_*, env_*
		v=$(stat_field "$TARGET_PID" "$f")
		if (( v > highest )); then highest=$v; fi
	done
	if [ -z "$top" ]; then
		not_ok "apply-from (legacy): no 'caller vma top' line"
	elif (( highest >= top )); then
		want="refused with EFAULT: target's $(printf '%#x' "$highest") >= caller's top VMA end $top"
		if [ "$rc" = 1 ] && grep -q "Bad address via legacy" <<<"$OUT"; then
			ok "apply-from (legacy): $want"
		else
			not_ok "apply-from (legacy): $want"
		fi
	else
		want="restores the map: target's $(printf '%#x' "$highest") below caller's top VMA end $top"
		if [ "$rc" = 0 ]; then
			ok "apply-from (legacy): $want"
		else
			not_ok "apply-from (legacy): $want"
		fi
	fi
	printf '%s\n' "$OUT" | diag
}

main() {
	local state want_path cap

	[ -x "$MM_MAP" ] || { echo "Bail out! $MM_MAP missing: make -C tools/mm_map"; exit 1; }
	echo "TAP version 13"
	echo "1..8"

	state=$("$MM_MAP" probe | cut -d' ' -f1)
	if [ -n "${EXPECT_MM_MAP:-}" ]; then
		check "probe: PR_SET_MM_MAP is $EXPECT_MM_MAP" \
			"$MM_MAP" probe --expect "$EXPECT_MM_MAP"
	else
		check "probe: PR_SET_MM_MAP is $state" "$MM_MAP" probe --expect "$state"
	fi
	[ "$state" = present ] && want_path=map || want_path=legacy
	has_cap_sys_resource && cap=1 || cap=0

	sleep 300 &
	TARGET_PID=$!
	wait_exec "$TARGET_PID" sleep
	# The map shown for a task must be what /proc/PID/stat says.
	OUT=$("$MM_MAP" show "$TARGET_PID")
	if [ "$(awk '$1 == "start_code" { print $2 }' <<<"$OUT")" = \
	     "$(printf '%#x' "$(stat_field "$TARGET_PID" 26)")" ] &&
	   [ "$(awk '$1 == "env_end" { print $2 }' <<<"$OUT")" = \
	     "$(printf '%#x' "$(stat_field "$TARGET_PID" 51)")" ] &&
	   grep -q '^auxv' <<<"$OUT"; then
		ok "show: map of pid $TARGET_PID matches /proc/$TARGET_PID/stat"
	else
		not_ok "show: map of pid $TARGET_PID matches /proc/$TARGET_PID/stat"
		printf '%s\n' "$OUT" | diag
	fi

	if [ "$want_path" = map ] || [ "$cap" = 1 ]; then
		check "apply-self: moved map round-trips via $want_path path" \
			"$MM_MAP" apply-self --expect-path "$want_path"
		if [ "$want_path" = map ]; then
			check "apply-from: restores the map of pid $TARGET_PID via map path" \
				"$MM_MAP" apply-from "$TARGET_PID" --expect-path map
		else
			check_legacy_apply_from
		fi
	else
		check_fails "apply-self: legacy fallback refused without CAP_SYS_RESOURCE" \
			"Operation not permitted" "$MM_MAP" apply-self
		check_fails "apply-from: legacy fallback refused without CAP_SYS_RESOURCE" \
			"Operation not permitted" "$MM_MAP" apply-from "$TARGET_PID"
	fi

	if [ "$cap" = 1 ]; then
		check "apply-self --legacy: per-field PR_SET_MM round-trips" \
			"$MM_MAP" apply-self --legacy --expect-path legacy
	else
		check_fails "apply-self --legacy: EPERM without CAP_SYS_RESOURCE" \
			"Operation not permitted" "$MM_MAP" apply-self --legacy
	fi

	if [ "$(id -u)" != 0 ]; then
		ok "apply-self as uid $NOBODY # SKIP needs root to switch users"
		ok "apply-self --legacy as uid $NOBODY # SKIP needs root to switch users"
	else
		if [ "$want_path" = map ]; then
			check "apply-self as uid $NOBODY: no capability needed for PR_SET_MM_MAP" \
				"$MM_MAP" apply-self --user "$NOBODY" --expect-path map
		else
			check_fails "apply-self as uid $NOBODY: legacy fallback refused (EPERM)" \
				"Operation not permitted" "$MM_MAP" apply-self --user "$NOBODY"
		fi
		check_fails "apply-self --legacy as uid $NOBODY: EPERM" \
			"Operation not permitted" "$MM_MAP" apply-self --legacy --user "$NOBODY"
	fi

	# Garbage in, clear error out.
	check_fails "show of a missing pid fails cleanly" "No such file" \
		"$MM_MAP" show 999999999
	exit "$FAILED"
}

main "$@"
