#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every test suite of the project and count the results.
#
#   tools/testing/check.sh [SUITE...]
#
# Each suite is a command printing flat TAP ("ok N - name", "not ok N - name",
# "ok N - name # SKIP why").  This script streams the output, keeps a log per
# suite under $CHECK_OUT (default: $CACHE/check-<date>), counts every result
# line and ends with one line "N passed, N failed, N skipped".
#
# A suite that exits non-zero without reporting a failure (a crash, a hung
# VM killed by the watchdog, a build error) counts as one failure.  A suite
# that reports nothing at all counts as one failure too, and so does every
# TAP block whose results do not match its plan (tap_plans.awk): a script
# that died half-way cannot pass for one that ran all its tests.
#
# Without arguments every suite runs; `tools/testing/check.sh --list` names them.
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${DCTCP_CACHE:-/var/cache/dctcp-oot}
CHECK_OUT=${CHECK_OUT:-$CACHE/check-$(date +%Y%m%d-%H%M%S)}

# name | command (run from $TOP).  The whole tcp_dctcp suite runs on
# Debian 12's kernel (and its timing scripts on User-Mode Linux); the core
# subset (run_vm.sh --core: load, identity, parameters, selection,
# fallback, marking, lifecycle, AccECN) on every other Debian kernel, with
# the tracepoint oracle on 6.12 and the debug kernel too, and the
# registration-clash tests on the debug kernel.
SUITES=(
	"prepare|tools/testing/prepare.sh"
	"unit|make -s -C tools/testing/unit check"
	"style|tools/testing/style.sh"
	"harness|tools/testing/qemu/selftest.sh"
	"harness-uml|tools/testing/uml/selftest.sh"
	"dctcp-6.1|tools/testing/dctcp/run_vm.sh deb-6.1"
	"dctcp-debug|ORACLE_EVENTS=10000 tools/testing/dctcp/run_vm.sh debug --core dctcp_trace.sh dctcp_register.sh"
	"dctcp-sim|tools/testing/dctcp/run_vm.sh uml"
	"dctcp-intree|tools/testing/dctcp/compare_intree.sh uml"
	"dctcp-5.10|tools/testing/dctcp/run_vm.sh deb-5.10 --core"
	"dctcp-6.12|tools/testing/dctcp/run_vm.sh deb-6.12 --core dctcp_trace.sh"
	"dctcp-6.12-bpo|tools/testing/dctcp/run_vm.sh deb-6.12-bpo --core"
	"dctcp-6.12-trixie|tools/testing/dctcp/run_vm.sh deb-6.12-trixie --core"
	"dctcp-7.2|tools/testing/dctcp/run_vm.sh deb-7.2 --core"
	"dctcp-7.3|tools/testing/dctcp/run_vm.sh deb-7.3 --core"
	"dctcp-deb|tools/testing/packaging/dkms-deb.sh"
	"dctcp-mutant|tools/testing/dctcp/mutants.sh --canary"
	"prctl|tools/testing/prctl/run_all.sh"
)

# One suite at a time machine-wide: QEMU under TCG runs at the host's
# leftover speed, so every suite holds this lock (the tools inside take
# it only when run on their own).
VM_LOCK=${VM_LOCK-/tmp/dctcp-vm.lock}

pass=0 fail=0 skip=0
failed_names=()

list_suites()
{
	local s
	for s in "${SUITES[@]}"; do
		printf '%-18s %s\n' "${s%%|*}" "${s#*|}"
	done
}

# Count the TAP result lines of one suite's log.
count_log()
{
	local name=$1 log=$2 rc=$3
	local p f s

	p=$(grep -cE '^ok [0-9]+' "$log" | head -1)
	s=$(grep -E '^ok [0-9]+' "$log" | grep -ciE '#[[:space:]]*skip')
	f=$(grep -cE '^not ok [0-9]+' "$log")
	p=$((p - s))

	while read -r line; do
		failed_names+=("$name: $line")
	done < <(grep -E '^not ok [0-9]+' "$log")
	while read -r line; do
		f=$((f + 1))
		failed_names+=("$name: $line")
	done < <(awk -f "$TOP/tools/testing/tap_plans.awk" "$log")

	if (( rc != 0 && f == 0 )); then
		f=1
		failed_names+=("$name: exited $rc without reporting a failed test")
	elif (( p + f + s == 0 )); then
		f=1
		failed_names+=("$name: reported no test result")
	fi
	if [[ ${CI:-} == true ]] && (( s > 0 )); then
		echo "# $name: $s skipped test(s) under CI=true:" >&2
		grep -E '^ok [0-9]+' "$log" | grep -iE '#[[:space:]]*skip' >&2
	fi

	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	printf '# suite %-18s %d passed, %d failed, %d skipped (rc %d, log %s)\n' \
		"$name" "$p" "$f" "$s" "$rc" "$log"
}

main()
{
	local want=("$@") s name cmd rc log start

	if [[ ${1:-} == --list ]]; then
		list_suites
		return 0
	fi
	mkdir -p "$CHECK_OUT"
	cd "$TOP" || exit 1

	for s in "${SUITES[@]}"; do
		name=${s%%|*} cmd=${s#*|}
		if (( ${#want[@]} )) && ! printf '%s\n' "${want[@]}" | grep -qxF "$name"; then
			continue
		fi
		log=$CHECK_OUT/$name.log
		start=$SECONDS
		echo "# ==== suite $name: $cmd"
		if [[ -n $VM_LOCK ]]; then
			flock "$VM_LOCK" env VM_LOCK= bash -c "$cmd" < /dev/null 2>&1 | tee "$log"
		else
			bash -c "$cmd" < /dev/null 2>&1 | tee "$log"
		fi
		rc=${PIPESTATUS[0]}
		echo "# ==== suite $name took $((SECONDS - start)) s"
		count_log "$name" "$log" "$rc"
	done

	if (( ${#failed_names[@]} )); then
		echo "# failures:"
		printf '#   %s\n' "${failed_names[@]}"
	fi
	echo "# logs: $CHECK_OUT"
	echo "$pass passed, $fail failed, $skip skipped"
	(( fail == 0 ))
}

main "$@"
