#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PR_SET_MM_MAP: build what is needed (cached) and run every suite on every
# kernel asked for; one TAP stream, exit status non-zero on any failure.
#
#   run_all.sh [-k "KERNEL..."] [-n FUZZ_COUNT]
#   run_all.sh -p [-k "KERNEL..."]   only fetch/build the kernels (cached)
#
#   host      the running kernel: selftest, fuzz, mm_map (and the legacy
#             test if root has CAP_SYS_RESOURCE there)
#   deb-6.1   Debian's 6.1 in QEMU (upstream PR_SET_MM_MAP): + legacy, criu
#   deb-6.12  Debian's 6.12 in QEMU: selftest, legacy, fuzz, mm_map
#   base      6.1 without PR_SET_MM_MAP (prep-base.sh): the legacy test
#             with 3.17's rules, mm_map must find it absent and fall back,
#             criu must fail without CAP_SYS_RESOURCE and restore through
#             the legacy path with it
#   patched   base + prctl_mm_map.patch: selftest, legacy, fuzz, mm_map,
#             criu without CAP_SYS_RESOURCE
#   patched-debug  the same with debug.config (KASAN, lockdep, kmemleak),
#             without criu; not in the default list (slow build)
#   deb-5.10  Debian 11's 5.10, deb-7.2 sid's 7.2 (upstream's code there):
#             selftest, legacy, fuzz, mm_map; the differences are listed
#             in KNOWN_DIFFS with their reason
#
# KERNEL_TABLE below lists them.  Any deb-NAME that
# tools/testing/qemu/fetch-kernel.sh knows is one more line there.
#
# The selftests come from tools/testing/selftests/prctl/mm_map (kselftest
# target prctl/mm_map), built static here for the guests.  Every VM runs
# with --dmesg-check; a hang (124), a crash or a kernel splat (125) fails
# that kernel.  The selftest's per-case verdicts must be the same on every
# kernel that has PR_SET_MM_MAP, and the legacy test's per-case results
# must be the same on every other kernel as on Debian's 6.1 (the base
# differs where 3.17's rules do: that table is printed).
#   env: FUZZ_COUNT, VM_TIMEOUT (default 900 s), CI, DCTCP_CACHE,
#        VM_LOCK (default /tmp/dctcp-vm.lock: each VM run, not the
#        builds, under flock on it; empty: no lock, for a caller that
#        holds it already)
set -eu
shopt -s inherit_errexit

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOP="$(cd "$HERE/../../.." && pwd)"
readonly HERE TOP
readonly KTOOLS="$TOP/tools/testing/kernel"
readonly QEMU_DIR="$TOP/tools/testing/qemu"
readonly SELFTESTS="$TOP/tools/testing/selftests/prctl/mm_map"
readonly CAP_SYS_RESOURCE=24
# What criu needs on a kernel that has it as modules (Debian's).
readonly CRIU_KMODS="inet_diag tcp_diag udp_diag unix_diag af_packet_diag
netlink_diag nf_tables crc32c_generic tun veth"

# KERNEL|default or extra (only with -k)|the prctl_suites.sh suites
# (host: chosen at run time); run, compared and tabled in this order.
readonly KERNEL_TABLE=(
	"host|default|"
	"deb-6.1|default|selftest legacy-upstream fuzz mm_map-present criu-map"
	"deb-6.12|default|selftest legacy-upstream fuzz mm_map-present"
	"base|default|legacy-3.17 mm_map-absent criu-legacy"
	"patched|default|selftest legacy-upstream fuzz mm_map-present criu-map"
	"patched-debug|extra|selftest legacy-upstream fuzz mm_map-present"
	"deb-5.10|default|selftest legacy-upstream fuzz mm_map-present"
	"deb-7.2|default|selftest legacy-upstream fuzz mm_map-present"
)

# Cases a kernel is known to answer differently from the patched kernel and
# Debian's 6.1, each explained in Documentation/prctl_mm_map.rst ("Other
# kernels"): KERNEL|SUITE|CASE|why.  Such a failure is reported as ok with
# the reason and left out of the comparison; a listed difference that does
# not show is a failure (the table and the documentation would be stale).
readonly KNOWN_DIFFS=(
	"deb-5.10|selftest|exe.replaced_once_unmapped|a new exe file open for writing is accepted (no deny-write before 5.15)"
)

ALL_KERNELS=""
DEFAULT_KERNELS=""
declare -A SUITES_OF=()
for row in "${KERNEL_TABLE[@]}"; do
	IFS='|' read -r k kind suites <<<"$row"
	ALL_KERNELS+="${ALL_KERNELS:+ }$k"
	[ "$kind" != default ] || DEFAULT_KERNELS+="${DEFAULT_KERNELS:+ }$k"
	SUITES_OF[$k]="$suites"
done
unset row k kind suites
readonly ALL_KERNELS DEFAULT_KERNELS SUITES_OF

KERNELS="$DEFAULT_KERNELS"
PREPARE=
FUZZ_COUNT="${FUZZ_COUNT:-2000}"
VM_TIMEOUT="${VM_TIMEOUT:-900}"
readonly VM_LOCK="${VM_LOCK-/tmp/dctcp-vm.lock}"
N=0
FAILED=0
LOCK_WAIT=0
WORK=""
VM_OPTS=()
declare -A SELFTEST_RESULT=() LEGACY_RESULT=() VERDICT=() KNOWN_SEEN=()

ok() { N=$((N + 1)); echo "ok $N - $*"; }
not_ok() { N=$((N + 1)); FAILED=1; echo "not ok $N - $*"; }
skip() {
	if [ "${CI:-}" = true ]; then
		not_ok "$1 (CI=true: a skip is a failure: $2)"
	else
		N=$((N + 1))
		echo "ok $N - $1 # SKIP $2"
	fi
}
note() { echo "# $*"; }
die() { echo "Bail out! $*"; exit 1; }

# Per-kernel tally for the verdict table: KERNEL ok|fail|skip.
tally() {
	local k="$1" what="$2" o f s

	read -r o f s <<<"${VERDICT[$k]:-0 0 0}"
	case "$what" in
	ok) o=$((o + 1)) ;;
	fail) f=$((f + 1)) ;;
	skip) s=$((s + 1)) ;;
	esac
	VERDICT[$k]="$o $f $s"
}

# The reason KNOWN_DIFFS gives for KERNEL SUITE CASE; false if not listed.
known_diff() {
	local row k s c why

	for row in "${KNOWN_DIFFS[@]}"; do
		IFS='|' read -r k s c why <<<"$row"
		if [ "$k|$s|$c" = "$1|$2|$3" ]; then
			echo "$why"
			return 0
		fi
	done
	return 1
}

cleanup() {
	[ -z "$WORK" ] || rm -rf "$WORK"
}
trap cleanup EXIT

usage() {
	sed -n '3,39s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

parse_args() {
	while getopts "k:n:ph" opt; do
		case "$opt" in
		p) PREPARE=1 ;;
		k) KERNELS="${OPTARG//,/ }" ;;
		n) FUZZ_COUNT="$OPTARG" ;;
		*) usage ;;
		esac
	done
	local k
	for k in $KERNELS; do
		case " $ALL_KERNELS " in
		*" $k "*) ;;
		*) echo "unknown kernel '$k' (known: $ALL_KERNELS)" >&2; exit 2 ;;
		esac
	done
}

check_tools() {
	command -v make >/dev/null || die "make missing: apt-get install build-essential"
	command -v gcc >/dev/null || die "gcc missing: apt-get install build-essential"
	[ -e /usr/lib/x86_64-linux-gnu/libc.a ] ||
		die "static libc missing: apt-get install libc6-dev"
	if [ "$KERNELS" != host ]; then
		command -v qemu-system-x86_64 >/dev/null ||
			die "qemu-system-x86_64 missing: apt-get install qemu-system-x86"
		[ -x "$QEMU_DIR/vm-run.sh" ] || die "$QEMU_DIR/vm-run.sh missing"
		[ -x /usr/sbin/criu ] || die "criu missing: apt-get install criu"
		[ -x /usr/bin/setpriv ] || die "setpriv missing: apt-get install util-linux"
	fi
}

# Static binaries (they go into the guests) plus the scripts, in one dir.
build_userland() {
	local src ksft

	src=$("$KTOOLS/unpack-source.sh")
	ksft="$src/tools/testing/selftests"
	WORK=$(mktemp -d /tmp/prctl-run-all.XXXXXX)
	mkdir -p "$WORK/bin" "$WORK/st" "$WORK/mm_map"
	if make -s -C "$SELFTESTS" KSFT_DIR="$ksft" OUTPUT="$WORK/st" \
		LDFLAGS=-static >"$WORK/build.log" 2>&1 &&
	   make -s -C "$TOP/tools/mm_map" LDFLAGS=-static \
		>>"$WORK/build.log" 2>&1 &&
	   gcc -O2 -Wall -static -o "$WORK/bin/criu_target" \
		"$HERE/criu_target.c" >>"$WORK/build.log" 2>&1; then
		ok "build: set_mm_map_test, set_mm_legacy_test, set_mm_map_fuzz, mm_map, criu_target (static)"
	else
		not_ok "build: set_mm_map_test, set_mm_legacy_test, set_mm_map_fuzz, mm_map, criu_target (static)"
		sed 's/^/# /' "$WORK/build.log"
		die "cannot test without the binaries"
	fi
	cp "$WORK/st/set_mm_map_test" "$WORK/st/set_mm_legacy_test" \
	   "$WORK/st/set_mm_map_fuzz" "$TOP/tools/mm_map/mm_map" \
	   "$TOP/tools/mm_map/test_mm_map.sh" "$HERE/criu_restore.sh" \
	   "$HERE/prctl_suites.sh" "$WORK/bin/"
}

# Renumber the TAP lines of one prctl_suites.sh run, prefix "KERNEL/SUITE:",
# turn everything else into diagnostics, and check each suite's exit code.
relay() {
	local kernel="$1" line suite="" rc status desc num why known=0 other=0

	while IFS= read -r line; do
		case "$line" in
		"### suite "*)
			suite="${line#\#\#\# suite }"
			known=0
			other=0
			continue ;;
		"### end "*)
			rc="${line##*rc=}"
			case "$rc" in
			0) ok "$kernel/$suite: exited 0" ;;
			4) skip "$kernel/$suite" "the suite skipped itself" ;;
			1) if [ "$known" -gt 0 ] && [ "$other" = 0 ]; then
				ok "$kernel/$suite: exited 1, only known differences failed"
			   else
				not_ok "$kernel/$suite: exited 1"; tally "$kernel" fail
			   fi ;;
			*) not_ok "$kernel/$suite: exited $rc"; tally "$kernel" fail ;;
			esac
			suite=""
			continue ;;
		"# legacy-result "*)	# shown in compare_legacy's table
			LEGACY_RESULT[$kernel]+="${line#\# legacy-result }"$'\n'
			continue ;;
		esac
		if [[ "$line" =~ ^(not\ )?ok\ ([0-9]+)\ ?(-\ )?(.*)$ ]]; then
			status="${BASH_REMATCH[1]:+not }ok"
			num="${BASH_REMATCH[2]}"
			desc="${BASH_REMATCH[4]}"
			N=$((N + 1))
			if [[ "$desc" =~ \#\ SKIP ]]; then
				tally "$kernel" skip
				if [ "${CI:-}" = true ]; then
					status="not ok"
					FAILED=1
				fi
				echo "$status $N - $kernel/$suite: case $num $desc"
				desc="skip"
			else
				if [ "$status" = ok ]; then
					tally "$kernel" ok
				elif why=$(known_diff "$kernel" "$suite" "$desc"); then
					KNOWN_SEEN[$kernel|$suite|$desc]=1
					known=$((known + 1))
					tally "$kernel" ok
					status=ok
					desc+=" # known difference: $why"
				else
					other=$((other + 1))
					tally "$kernel" fail
					FAILED=1
				fi
				echo "$status $N - $kernel/$suite: $desc"
			fi
			[ "$suite" != selftest ] ||
				SELFTEST_RESULT[$kernel]+="$num $status $desc"$'\n'
			continue
		fi
		case "$line" in
		"TAP version"*|1..*) ;;
		"#  RUN "*|"#"*" OK  "*) ;;	# harness chatter
		"#"*) echo "$line" ;;
		*) echo "# $line" ;;
		esac
	done
	[ -z "$suite" ] || not_ok "$kernel/$suite: output ended inside the suite"
}

host_suites() {
	local eff

	eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
	if (( (0x$eff >> CAP_SYS_RESOURCE) & 1 )); then
		echo "selftest legacy-upstream fuzz mm_map-present"
	else
		echo "selftest fuzz mm_map-present"
	fi
}

host_run() {
	local log="$WORK/host.log" suites start=$SECONDS

	suites=$(host_suites)
	note "host: $(uname -r): $suites"
	case "$suites" in
	*legacy*) ;;
	*) note "host: root lacks CAP_SYS_RESOURCE here: no legacy PR_SET_MM test" ;;
	esac
	# shellcheck disable=SC2086 # word list
	PRCTL_BIN_DIR="$WORK/bin" FUZZ_COUNT="$FUZZ_COUNT" \
		"$WORK/bin/prctl_suites.sh" $suites >"$log" 2>&1 || true
	relay host <"$log"
	note "host: suites ran in $((SECONDS - start)) s"
}

kernel_dir() {
	case "$1" in
	deb-*)
		"$QEMU_DIR/fetch-kernel.sh" "$1" ;;
	base)
		"$KTOOLS/build-kernel.sh" --name prctl-base \
			--fragment "$KTOOLS/base.config" \
			--fragment "$KTOOLS/criu.config" \
			--prep "$KTOOLS/prep-base.sh" ;;
	patched)
		"$KTOOLS/build-kernel.sh" --name prctl-mm-map \
			--fragment "$KTOOLS/base.config" \
			--fragment "$KTOOLS/criu.config" \
			--prep "$KTOOLS/prep-base.sh" \
			--patch "$TOP/prctl_mm_map.patch" ;;
	patched-debug)
		"$KTOOLS/build-kernel.sh" --name prctl-mm-map-debug \
			--fragment "$KTOOLS/base.config" \
			--fragment "$KTOOLS/criu.config" \
			--fragment "$KTOOLS/debug.config" \
			--prep "$KTOOLS/prep-base.sh" \
			--patch "$TOP/prctl_mm_map.patch" ;;
	esac
}

# The kernel's .config, for the selftests' mmap_min_addr oracle.
kernel_config() {
	if [ -f "$1/config" ]; then
		echo "$1/config"
	else
		echo "$1/build/.config"
	fi
}

# Extra vm-run.sh options (into VM_OPTS): a Debian kernel that runs criu
# needs criu's modules in the guest.
vm_opts_for() {
	local m
	VM_OPTS=()
	case "$1:${SUITES_OF[$1]}" in
	deb-*:*criu*)
		for m in $CRIU_KMODS; do
			VM_OPTS+=(--kmod "$m")
		done ;;
	esac
}

# Run "$@" under flock $VM_LOCK (if set); LOCK_WAIT: seconds spent waiting.
with_vm_lock() {
	local fd t0=$SECONDS rc=0

	LOCK_WAIT=0
	[ -n "$VM_LOCK" ] || { "$@"; return; }
	exec {fd}>>"$VM_LOCK"
	flock "$fd"
	LOCK_WAIT=$((SECONDS - t0))
	"$@" || rc=$?
	exec {fd}>&-
	return "$rc"
}

vm_run_kernel() {
	local kernel="$1" kdir log rc start suites config

	start=$SECONDS
	if ! kdir=$(kernel_dir "$kernel" 2>"$WORK/$kernel.build.log"); then
		not_ok "$kernel: kernel available (build/fetch failed)"
		tally "$kernel" fail
		tail -n 30 "$WORK/$kernel.build.log" | sed 's/^/# /'
		return
	fi
	ok "$kernel: kernel available in $((SECONDS - start)) s ($(basename "$kdir"), $(cat "$kdir/kver"))"
	config=$(kernel_config "$kdir")

	suites="${SUITES_OF[$kernel]}"
	vm_opts_for "$kernel"
	log="$WORK/$kernel.vm.log"
	rc=0
	start=$SECONDS
	# shellcheck disable=SC2086 # word list
	with_vm_lock "$QEMU_DIR/vm-run.sh" --kernel "$kdir" --timeout "$VM_TIMEOUT" \
		--dmesg-check --log "$WORK/$kernel.console.log" \
		--overlay "$WORK/bin-overlay" --bin /usr/sbin/criu \
		--bin /usr/bin/setpriv \
		--file "$config:/boot/config-$(cat "$kdir/kver")" \
		--env FUZZ_COUNT="$FUZZ_COUNT" "${VM_OPTS[@]}" \
		-- /opt/prctl/prctl_suites.sh $suites >"$log" 2>&1 || rc=$?
	relay "$kernel" <"$log"
	case "$rc" in
	0) ok "$kernel: VM ran to the end, kernel log clean ($((SECONDS - start - LOCK_WAIT)) s, lock wait $LOCK_WAIT s)" ;;
	124) not_ok "$kernel: VM hung (watchdog after ${VM_TIMEOUT} s)" ;;
	125) not_ok "$kernel: VM crashed or the kernel log has a splat"
	     grep -E 'BUG:|WARNING:|Oops|Call Trace|KASAN|lockdep' \
		"$WORK/$kernel.console.log" 2>/dev/null | head -n 40 | sed 's/^/# /' ;;
	*) not_ok "$kernel: guest command exited $rc" ;;
	esac
	[ "$rc" = 0 ] || tally "$kernel" fail
}

# A kernel's selftest verdicts without the cases of KNOWN_DIFFS.
selftest_compared() {
	local row k s c r="${SELFTEST_RESULT[$1]}"

	for row in "${KNOWN_DIFFS[@]}"; do
		IFS='|' read -r k s c _ <<<"$row"
		[ "$s" = selftest ] || continue
		r=$(grep -v " $c\( #.*\)\?\$" <<<"$r" || true)
	done
	echo "$r"
}

# Every kernel with PR_SET_MM_MAP must give the same per-case verdicts
# (apart from KNOWN_DIFFS, each of which must show).
compare_selftests() {
	local k ref="" refk="" bad=0 n=0 cur row s c why

	for k in $ALL_KERNELS; do
		[ -n "${SELFTEST_RESULT[$k]:-}" ] || continue
		n=$((n + 1))
		cur=$(selftest_compared "$k")
		if [ -z "$ref" ]; then
			ref="$cur"
			refk="$k"
		elif [ "$ref" != "$cur" ]; then
			bad=1
			diff <(echo "$ref") <(echo "$cur") |
				sed "s/^/# $refk vs $k: /"
		fi
	done
	for row in "${KNOWN_DIFFS[@]}"; do
		IFS='|' read -r k s c why <<<"$row"
		[ -n "${SELFTEST_RESULT[$k]:-}" ] || continue
		if [ -n "${KNOWN_SEEN[$k|$s|$c]:-}" ]; then
			ok "$k: known difference $s $c shows ($why)"
		else
			not_ok "$k: known difference $s $c shows ($why): update KNOWN_DIFFS and Documentation/prctl_mm_map.rst"
		fi
	done
	[ "$n" -ge 2 ] || return 0
	if [ "$bad" = 0 ]; then
		ok "selftest verdicts identical on: ${!SELFTEST_RESULT[*]}"
	else
		not_ok "selftest verdicts identical on: ${!SELFTEST_RESULT[*]}"
	fi
}

# Legacy PR_SET_MM, case by case: a table over the kernels, and patched
# (and Debian's 6.12, the host) must equal Debian's 6.1 in every case.
compare_legacy() {
	local k kernels=() compared=() ref cases c row same=1 differ=""

	for k in $ALL_KERNELS; do
		[ -n "${LEGACY_RESULT[$k]:-}" ] && kernels+=("$k")
	done
	[ ${#kernels[@]} -gt 0 ] || return 0
	note "legacy PR_SET_MM per case: ${kernels[*]}"
	cases=$(for k in "${kernels[@]}"; do echo -n "${LEGACY_RESULT[$k]}"; done |
		awk '{ print $1 }' | awk '!seen[$0]++')
	for c in $cases; do
		row=""
		for k in "${kernels[@]}"; do
			row+=" $(awk -v c="$c" '$1 == c { print $2 }' <<<"${LEGACY_RESULT[$k]}")"
		done
		note "  $(printf '%-28s' "$c")$row"
	done
	ref="${LEGACY_RESULT[deb-6.1]:-}"
	if [ -z "$ref" ]; then
		note "legacy: no deb-6.1 run to compare with"
		return 0
	fi
	for k in "${kernels[@]}"; do
		[ "$k" != deb-6.1 ] || continue
		[ "$k" = base ] || compared+=("$k")
		if [ "$k" = base ]; then
			differ=$(diff <(sort <<<"$ref") <(sort <<<"${LEGACY_RESULT[base]}") |
				awk '/^>/ { print $2 }' | sort -u | tr '\n' ' ') || true
			note "legacy: base (3.17 rules) differs from deb-6.1 in: ${differ:-nothing}"
			continue
		fi
		if [ "$(sort <<<"$ref")" != "$(sort <<<"${LEGACY_RESULT[$k]}")" ]; then
			same=0
			diff <(sort <<<"$ref") <(sort <<<"${LEGACY_RESULT[$k]}") |
				sed "s/^/# deb-6.1 vs $k: /" || true
		fi
	done
	[ ${#compared[@]} -gt 0 ] || return 0
	if [ "$same" = 1 ]; then
		ok "legacy PR_SET_MM results equal deb-6.1's case by case on: ${compared[*]}"
	else
		not_ok "legacy PR_SET_MM results equal deb-6.1's case by case on: ${compared[*]}"
	fi
}

verdict_table() {
	local k o f s

	note "verdicts (TAP lines ok / not ok / skip per kernel):"
	for k in $KERNELS; do
		read -r o f s <<<"${VERDICT[$k]:-0 0 0}"
		note "  $(printf '%-14s' "$k") ok $o, not ok $f, skip $s: $([ "$f" = 0 ] && echo PASS || echo FAIL)"
	done
}

main() {
	local k start=$SECONDS

	parse_args "$@"
	if [ -n "$PREPARE" ]; then
		for k in $KERNELS; do
			[ "$k" = host ] || kernel_dir "$k" >/dev/null ||
				die "kernel $k: fetch or build failed"
		done
		exit 0
	fi
	echo "TAP version 13"
	check_tools
	build_userland
	mkdir -p "$WORK/bin-overlay/opt"
	cp -a "$WORK/bin" "$WORK/bin-overlay/opt/prctl"
	note "kernels: $KERNELS; fuzz count $FUZZ_COUNT"

	for k in $KERNELS; do
		if [ "$k" = host ]; then
			host_run
		else
			vm_run_kernel "$k"
		fi
	done
	compare_selftests
	compare_legacy
	verdict_table
	note "total wall time $((SECONDS - start)) s"
	echo "1..$N"
	exit "$FAILED"
}

main "$@"
