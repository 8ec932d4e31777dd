#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A real PR_SET_MM_MAP client: criu dumps a running shell loop and restores
# it; the restored loop must keep counting, with the same memory-descriptor
# map (/proc/PID/stat mm fields, auxv, exe) it had when it was dumped.
# Meant for the VM (root, full capabilities): run_all.sh copies criu and
# its libraries in.
#
#   EXPECT_MM_PATH=map     criu's restorer must succeed with PR_SET_MM_MAP:
#                          no legacy fallback in its log (-v4)
#   EXPECT_MM_PATH=legacy  the kernel lacks it: the log must show the legacy
#                          fallback (the exe link restored separately)
set -eu

readonly EXPECT_MM_PATH="${EXPECT_MM_PATH:-map}"
WORK="$(mktemp -d /tmp/criu-test.XXXXXX)"
readonly WORK
readonly KSFT_SKIP=4
N=0
FAILED=0
LOOP_PID=""

ok() { N=$((N + 1)); echo "ok $N - $*"; }
not_ok() { N=$((N + 1)); FAILED=1; echo "not ok $N - $*"; }
diag() { sed 's/^/# /'; }
assert() {
	local name="$1"
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

cleanup() {
	[ -z "$LOOP_PID" ] || kill -9 "$LOOP_PID" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT

bail() {
	echo "Bail out! $*"
	for f in "$WORK"/*.log; do
		[ -f "$f" ] || continue
		echo "# --- tail of $f"
		tail -n 30 "$f" | diag
	done
	exit 1
}

counter() {
	cat "$WORK/counter" 2>/dev/null || echo 0
}

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

# What PR_SET_MM_MAP restores, as /proc shows it.
mm_state() {
	local pid="$1"
	sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f24-26,43-49
	md5sum <"/proc/$pid/auxv" | cut -d' ' -f1
	readlink "/proc/$pid/exe"
}

start_loop() {
	# A new session without a tty: criu dumps it without --shell-job.
	setsid bash -c 'i=0; while :; do i=$((i + 1)); echo $i >"$1.tmp";
			mv "$1.tmp" "$1"; sleep 0.1; done' loop "$WORK/counter" \
		</dev/null >/dev/null 2>&1 &
	LOOP_PID=$!
	poll_until 20 counter_above 3 || bail "the loop never started counting"
}

main() {
	local before after c_dump

	command -v criu >/dev/null || {
		echo "1..0 # SKIP criu missing: apt-get install criu"
		exit "$KSFT_SKIP"
	}
	echo "TAP version 13"
	echo "1..7"
	echo "# criu $(criu --version | head -n1), kernel $(uname -r), expecting the $EXPECT_MM_PATH path"

	if criu check >"$WORK/check.log" 2>&1; then
		ok "criu check: kernel has what criu needs"
	else
		not_ok "criu check: kernel has what criu needs"
	fi
	diag <"$WORK/check.log"

	start_loop
	before=$(mm_state "$LOOP_PID")
	if criu dump -t "$LOOP_PID" -D "$WORK" -v4 -o dump.log; then
		ok "criu dump of pid $LOOP_PID"
	else
		not_ok "criu dump of pid $LOOP_PID"
		bail "dump failed"
	fi
	assert "dumped loop is gone" poll_until 10 gone "$LOOP_PID"
	c_dump=$(counter)

	if criu restore -d -D "$WORK" -v4 -o restore.log; then
		ok "criu restore -d"
	else
		not_ok "criu restore -d"
		bail "restore failed"
	fi
	poll_until 10 alive "$LOOP_PID" || bail "pid $LOOP_PID not back after restore"
	assert "restored loop keeps counting (was $c_dump at dump)" \
		poll_until 20 counter_above $((c_dump + 3))

	after=$(mm_state "$LOOP_PID")
	if [ "$before" = "$after" ]; then
		ok "restored mm fields, auxv and exe equal the dumped ones"
	else
		not_ok "restored mm fields, auxv and exe equal the dumped ones"
		diff <(echo "$before") <(echo "$after") | diag || true
	fi

	# criu's restorer (pie) calls PR_SET_MM_MAP first; only when that
	# fails with EINVAL does it set the fields one by one and then the
	# exe link with PR_SET_MM_EXE_FILE, logging "Restoring EXE link"
	# (the MAP call carries exe_fd itself).  Its pr_debug() lines are not
	# in the log, so that line is the witness of the path taken.
	grep -E "pie: [0-9]+: ([0-9]+: Restored|Restoring EXE link)|PR_SET_MM" \
		"$WORK/restore.log" | diag
	if ! grep -q "pie: [0-9]*: [0-9]*: Restored" "$WORK/restore.log"; then
		not_ok "restorer path: no 'Restored' line in restore.log to tell"
		exit 1
	fi
	case "$EXPECT_MM_PATH" in
	map)
		if grep -qE "Restoring EXE link|PR_SET_MM_MAP\) failed" "$WORK/restore.log"; then
			not_ok "restorer used PR_SET_MM_MAP (no legacy fallback in restore.log)"
		else
			ok "restorer used PR_SET_MM_MAP (no legacy fallback in restore.log)"
		fi
		;;
	legacy)
		if grep -q "Restoring EXE link" "$WORK/restore.log"; then
			ok "restorer fell back to legacy PR_SET_MM (exe link restored late)"
		else
			not_ok "restorer fell back to legacy PR_SET_MM (exe link restored late)"
		fi
		;;
	*)
		not_ok "EXPECT_MM_PATH=$EXPECT_MM_PATH: want map or legacy"
		;;
	esac
	exit "$FAILED"
}

main "$@"
