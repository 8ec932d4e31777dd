#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A real PR_SET_MM_MAP client: criu dumps a running criu_target and
# restores it; the restored process must keep counting, with the same
# memory-descriptor map it had when it was dumped: /proc/PID/stat fields,
# auxv, exe and brk (which criu_target reports itself, unaligned).
# Meant for a VM guest, as root.
#
# The target, and the restoring criu, run without CAP_SYS_RESOURCE in
# their bounding set (util-linux setpriv).  The legacy single-field
# PR_SET_MM needs that capability, PR_SET_MM_MAP does not:
#
#   EXPECT_MM_PATH=map     the restore must succeed: proof that the
#                          restorer used PR_SET_MM_MAP.  Its log must not
#                          show the legacy fallback either.
#   EXPECT_MM_PATH=legacy  the kernel lacks PR_SET_MM_MAP: that restore
#                          must fail in the legacy PR_SET_MM calls, and a
#                          restore with the capability must then succeed
#                          through them.
#
# env: CRIU_TARGET (default: criu_target next to this script),
#      SETPRIV (default /usr/bin/setpriv)
set -eu
shopt -s inherit_errexit

readonly EXPECT_MM_PATH="${EXPECT_MM_PATH:-map}"
CRIU_TARGET="${CRIU_TARGET:-$(dirname "$0")/criu_target}"
readonly CRIU_TARGET
readonly SETPRIV="${SETPRIV:-/usr/bin/setpriv}"
readonly CAP_SYS_RESOURCE=24
WORK="$(mktemp -d /tmp/criu-test.XXXXXX)"
readonly WORK
readonly KSFT_SKIP=4
N=0
FAILED=0
PID=""

ok() { N=$((N + 1)); echo "ok $N - $*"; }
not_ok() { N=$((N + 1)); FAILED=1; echo "not ok $N - $*"; }
diag() { sed 's/^/# /'; }
assert() {
	local name="$1"
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

cleanup() {
	[ -z "$PID" ] || kill -9 "$PID" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

bail() {
	local f

	echo "Bail out! $*"
	for f in "$WORK"/*.log; do
		[ -f "$f" ] || continue
		echo "# --- tail of $f"
		tail -n 30 "$f" | diag
	done
	exit 1
}

# "COUNTER BRK" as criu_target last wrote it.
report() { cat "$WORK/counter" 2>/dev/null || echo "0 0"; }
counter() { report | cut -d' ' -f1; }
target_brk() { report | cut -d' ' -f2; }

# poll_until SECONDS CMD...: bounded wait for a condition, no fixed sleeps.
poll_until() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt "$deadline" ] || return 1
		sleep 0.1
	done
}

counter_above() { [ "$(counter)" -gt "$1" ]; }
gone() { ! kill -0 "$1" 2>/dev/null; }
alive() { kill -0 "$1" 2>/dev/null; }

# What PR_SET_MM_MAP restores, as /proc and the target itself show it.
mm_state() {
	local pid="$1"
	echo "stat: $(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f24-26,43-49)"
	echo "brk: $(target_brk)"
	echo "auxv: $(md5sum <"/proc/$pid/auxv" | cut -d' ' -f1)"
	echo "exe: $(readlink "/proc/$pid/exe")"
}

# Run "$@" without CAP_SYS_RESOURCE anywhere (bounding set included).
without_sys_resource() {
	"$SETPRIV" --bounding-set -sys_resource --inh-caps -sys_resource -- "$@"
}

bnd_lacks_sys_resource() {
	local bnd
	bnd=$(without_sys_resource awk '/^CapBnd:/ { print $2 }' /proc/self/status)
	(( ! ((0x$bnd >> CAP_SYS_RESOURCE) & 1) ))
}

start_target() {
	# A new session without a tty: criu dumps it without --shell-job.
	# A simple command, not the function: $! must be the target itself.
	"$SETPRIV" --bounding-set -sys_resource --inh-caps -sys_resource -- \
		setsid "$CRIU_TARGET" "$WORK/counter" </dev/null >/dev/null 2>&1 &
	PID=$!
	disown "$PID"	# no job report from bash when criu dump kills it
	poll_until 20 counter_above 3 || bail "criu_target never started counting"
	[ "$(readlink "/proc/$PID/exe")" = "$(readlink -f "$CRIU_TARGET")" ] ||
		bail "pid $PID is $(readlink "/proc/$PID/exe"), not criu_target"
}

restore() {
	local log="$1"
	shift
	"$@" criu restore -d -D "$WORK" -v4 -o "$log"
}

main() {
	local before after c_dump

	command -v criu >/dev/null || {
		echo "1..0 # SKIP criu missing: apt-get install criu"
		exit "$KSFT_SKIP"
	}
	[ -x "$SETPRIV" ] || bail "$SETPRIV missing: apt-get install util-linux"
	[ -x "$CRIU_TARGET" ] || bail "$CRIU_TARGET missing: built by run_all.sh"
	echo "TAP version 13"
	echo "# criu $(criu --version | head -n1), kernel $(uname -r), expecting the $EXPECT_MM_PATH path"

	if criu check >"$WORK/check.log" 2>&1; then
		ok "criu check: kernel has what criu needs"
	else
		not_ok "criu check: kernel has what criu needs"
	fi
	diag <"$WORK/check.log"
	assert "setpriv drops CAP_SYS_RESOURCE from the bounding set" \
		bnd_lacks_sys_resource

	start_target
	before=$(mm_state "$PID")
	if criu dump -t "$PID" -D "$WORK" -v4 -o dump.log; then
		ok "criu dump of pid $PID"
	else
		not_ok "criu dump of pid $PID"
		bail "dump failed"
	fi
	assert "dumped target is gone" poll_until 10 gone "$PID"
	c_dump=$(counter)

	case "$EXPECT_MM_PATH" in
	map)
		if restore restore.log without_sys_resource; then
			ok "criu restore without CAP_SYS_RESOURCE (only PR_SET_MM_MAP can do that)"
		else
			not_ok "criu restore without CAP_SYS_RESOURCE (only PR_SET_MM_MAP can do that)"
			bail "restore failed"
		fi
		;;
	legacy)
		if restore restore-nocap.log without_sys_resource; then
			not_ok "criu restore without CAP_SYS_RESOURCE fails (legacy PR_SET_MM needs it)"
		elif grep -q "prctl failed" "$WORK/restore-nocap.log"; then
			ok "criu restore without CAP_SYS_RESOURCE fails (legacy PR_SET_MM needs it)"
		else
			not_ok "criu restore without CAP_SYS_RESOURCE fails in PR_SET_MM (no 'prctl failed' in its log)"
		fi
		grep -E "prctl failed|Restoring EXE link|Error" "$WORK/restore-nocap.log" |
			head -n 10 | diag
		poll_until 10 gone "$PID" || bail "pid $PID left over by the failed restore"
		if restore restore.log env; then
			ok "criu restore with CAP_SYS_RESOURCE"
		else
			not_ok "criu restore with CAP_SYS_RESOURCE"
			bail "restore failed"
		fi
		;;
	*)
		bail "EXPECT_MM_PATH=$EXPECT_MM_PATH: want map or legacy"
		;;
	esac
	poll_until 10 alive "$PID" || bail "pid $PID not back after restore"
	assert "restored target keeps counting (was $c_dump at dump)" \
		poll_until 20 counter_above $((c_dump + 3))

	after=$(mm_state "$PID")
	if [ "$before" = "$after" ]; then
		ok "restored stat fields, brk, auxv and exe equal the dumped ones"
	else
		not_ok "restored stat fields, brk, auxv and exe equal the dumped ones"
		# Files, not <(...): the guest has no /dev/fd.
		echo "$before" >"$WORK/mm-before"
		echo "$after" >"$WORK/mm-after"
		diff "$WORK/mm-before" "$WORK/mm-after" | diag || true
	fi
	echo "$after" | diag

	# criu's restorer calls PR_SET_MM_MAP first; only when that fails
	# with EINVAL does it set the fields one by one and then the exe link
	# with PR_SET_MM_EXE_FILE, logging "Restoring EXE link".
	grep -E "pie: [0-9]+: ([0-9]+: Restored|Restoring EXE link)|PR_SET_MM" \
		"$WORK/restore.log" | diag
	case "$EXPECT_MM_PATH" in
	map)
		if grep -qE "Restoring EXE link|PR_SET_MM_MAP\) failed" "$WORK/restore.log"; then
			not_ok "restore.log shows no legacy fallback"
		else
			ok "restore.log shows no legacy fallback"
		fi
		;;
	legacy)
		if grep -q "Restoring EXE link" "$WORK/restore.log"; then
			ok "restore.log shows the legacy fallback (exe link restored late)"
		else
			not_ok "restore.log shows the legacy fallback (exe link restored late)"
		fi
		;;
	esac
	echo "1..$N"
	exit "$FAILED"
}

main "$@"
