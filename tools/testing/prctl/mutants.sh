#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Can the PR_SET_MM_MAP tests fail?  Build kernels from deliberately broken
# copies of prctl_mm_map.patch (one rule changed each) and check that the
# tests notice every one of them.  One TAP line per mutant, "ok" when it
# was killed, with the tests that failed on it; first the control: the
# unbroken patch must pass the same tests.
#
#   mutants.sh [-l] [-d] [-f] [-c] [MUTANT...]   (default: all of them)
#     -l  list the mutants and exit
#     -d  show each mutant's change to the patched kernel/sys.c and exit
#     -f  ignore cached verdicts
#     -c  canary: only the control and mmap-min-le (a few minutes
#         uncached, seconds when both verdicts are cached)
#
# Each mutant is base + patch with one perl substitution applied to the
# patched kernel/sys.c, built by build-kernel.sh as an incremental rebuild
# of the cached base tree.  Once all are built they are booted one after
# the other (QEMU, --dmesg-check: a splat kills a mutant too) to run
# set_mm_map_test, set_mm_legacy_test and set_mm_map_fuzz.  A verdict is
# cached under $CACHE/prctl-mutants/ by the hash of the mutant patch, the
# base tree's inputs and the test binaries (the control's too), so a rerun
# after an unrelated change costs nothing; the mutant kernels themselves
# are deleted after their run (their build trees once built).  The VM part
# runs under flock $VM_LOCK (default /tmp/dctcp-vm.lock, empty: no lock),
# taken twice: for the control, then for all mutant boots at once.  Do not
# wrap this script in the same flock.
#   env: FUZZ_COUNT (2000), VM_TIMEOUT (600 s), DCTCP_CACHE, VM_LOCK
set -eu
shopt -s inherit_errexit

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOP="$(cd "$HERE/../../.." && pwd)"
readonly HERE TOP
readonly KTOOLS="$TOP/tools/testing/kernel"
readonly SELFTESTS="$TOP/tools/testing/selftests/prctl/mm_map"
readonly CACHE="${DCTCP_CACHE:-/var/cache/dctcp-oot}"
readonly VERDICTS="$CACHE/prctl-mutants"
readonly VM_LOCK="${VM_LOCK-/tmp/dctcp-vm.lock}"
readonly FUZZ_COUNT="${FUZZ_COUNT:-2000}"
readonly VM_TIMEOUT="${VM_TIMEOUT:-600}"
readonly SUITES="selftest legacy-upstream fuzz"
# The one mutant of -c: the bug the old, self-calibrated tests missed.
readonly CANARY="mmap-min-le"
WORK=""
LOCK_WAIT=0
TOTAL_WAIT=0
PENDING=()
N=0
FAILED=0
FORCE=0
SHOW=0
CANARY_ONLY=0
TEST_HASH=""
TREE_INPUTS_HASH=""

# name|perl substitution on the patched kernel/sys.c|what it breaks
readonly MUTANTS=(
	'data-strict|s/map->start_data > map->end_data/map->start_data >= map->end_data/|start_data < end_data required (3.18)'
	'no-rlimit|s/if \(check_data_rlimit\(rlimit\(RLIMIT_DATA\)/if (0 \&\& check_data_rlimit(rlimit(RLIMIT_DATA)/|RLIMIT_DATA ignored'
	'task-size-le|s/addrs\[i\] >= TASK_SIZE/addrs[i] > TASK_SIZE/|TASK_SIZE itself accepted'
	'auxv-bound|s/map\.auxv_size > sizeof\(mm->saved_auxv\)/map.auxv_size >= sizeof(mm->saved_auxv)/|a full-size auxv refused'
	'exe-einval|s/return -EPERM;\n\n\t\terror = prctl_set_mm_exe_file/return -EINVAL;\n\n\t\terror = prctl_set_mm_exe_file/|EINVAL instead of EPERM for exe_fd (3.18)'
	'mmap-min-le|s/addrs\[i\] < mmap_min_addr/addrs[i] <= mmap_min_addr/|mmap_min_addr itself refused'
	'no-auxv-zero-fill|s/unsigned long user_auxv\[AT_VECTOR_SIZE\] = \{\};\n\tstruct mm_struct/unsigned long user_auxv[AT_VECTOR_SIZE];\n\tstruct mm_struct/|auxv buffer not zero-filled'
	'fields-before-exe|s/(\tif \(map\.exe_fd != \(u32\)-1\) \{\n.*?\n\t\}\n)\n(.*?\tmmap_read_unlock\(mm\);\n)/$2$1/s|fields and auxv written before the exe_fd checks'
	'capable-init-ns|s/checkpoint_restore_ns_capable\(current_user_ns\(\)\)/(capable(CAP_SYS_ADMIN) || capable(CAP_CHECKPOINT_RESTORE))/|exe_fd capability checked in the initial user namespace'
	'no-forced-at-null|s/\t\tuser_auxv\[AT_VECTOR_SIZE - 2\] = AT_NULL;\n\t\tuser_auxv\[AT_VECTOR_SIZE - 1\] = AT_NULL;\n//|auxv not forced to end with AT_NULL'
	'start-code-le|s/map->start_code >= map->end_code/map->start_code > map->end_code/|empty code area accepted'
	'addr-u32|s/const u64 addrs\[\] = \{/const u32 addrs[] = {/|address fields truncated to 32 bits'
	'auxv-null-ok|s/if \(!map\.auxv \|\| map\.auxv_size/if (map.auxv_size/|NULL auxv with a size not refused up front'
	'size-lt|s/if \(data_size != sizeof\(map\)\)/if (data_size < sizeof(map))/|a larger struct size accepted'
	'validate-late|s/(\terror = validate_prctl_map\(&map\);\n\tif \(error\)\n\t\treturn error;\n)\n(.*?\tmmap_read_unlock\(mm\);\n)/$2$1/s|map written before it is validated'
	'legacy-no-validate|s/error = validate_prctl_map\(&map\);\n\tif \(error\)\n\t\tgoto out;/error = 0;/|single-field PR_SET_MM without the shared validation'
	'legacy-no-vma|s/if \(!vma\) \{/if (0 \&\& !vma) {/|single-field stack/arg/env without the VMA check'
	'map-needs-cap|s/(\tif \(data_size != sizeof\(map\)\))/\tif (!capable(CAP_SYS_RESOURCE))\n\t\treturn -EPERM;\n\n$1/|PR_SET_MM_MAP needs CAP_SYS_RESOURCE like the legacy calls'
	'brk-above-data|s/map->start_brk > map->brk \|\|/map->start_brk > map->brk || map->start_brk <= map->end_data ||/|heap required above the data segment (3.18)'
	'size-probe|s/put_user\(\(unsigned int\)sizeof\(map\),/put_user((unsigned int)sizeof(map) - 8,/|PR_SET_MM_MAP_SIZE reports a wrong size'
	'efault-einval|s/(copy_from_user\(&map, addr, sizeof\(map\)\)\)\n\t\treturn -)EFAULT/$1EINVAL/|unreadable map: EINVAL instead of EFAULT'
	'no-auxv-store|s/\tif \(map\.auxv_size\)\n\t\tmemcpy\(mm->saved_auxv, user_auxv, sizeof\(user_auxv\)\);\n//|auxv accepted but not stored'
	'legacy-no-put|s/\tprctl_mm_map_put\(mm, &map\);\nout:/out:/|single-field PR_SET_MM succeeds without setting the field'
)

die() { echo "Bail out! $*"; exit 1; }
note() { echo "# $*"; }

cleanup() {
	local m kdir

	[ -z "$WORK" ] || rm -rf "$WORK"
	# Mutant kernels built but not booted (interrupted run).
	for m in "${PENDING[@]}"; do
		kdir="${m#*|}"
		rm -rf "${kdir%%|*}"
	done
}
trap cleanup EXIT

usage() {
	sed -n '3,29s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

list_mutants() {
	local m rest
	for m in "${MUTANTS[@]}"; do
		rest="${m#*|}"
		printf '%-20s %s\n' "${m%%|*}" "${rest##*|}"
	done
}

# The two files the patches touch, as in the base tree and as patched.
prepare_sources() {
	local src f

	src=$("$KTOOLS/unpack-source.sh")
	for f in kernel/sys.c include/uapi/linux/prctl.h; do
		mkdir -p "$WORK/base/$(dirname "$f")"
		cp "$src/$f" "$WORK/base/$f"
	done
	"$KTOOLS/prep-base.sh" "$WORK/base" 2>/dev/null ||
		die "prep-base.sh failed on the two files"
	cp -a "$WORK/base" "$WORK/patched"
	patch -d "$WORK/patched" -p1 --fuzz=0 --batch -s <"$TOP/prctl_mm_map.patch" ||
		die "prctl_mm_map.patch does not apply to the base"
}

# Static test binaries and the suite runner, as the guest's /opt/prctl.
build_tests() {
	local ksft

	ksft="$("$KTOOLS/unpack-source.sh")/tools/testing/selftests"
	mkdir -p "$WORK/overlay/opt/prctl"
	make -s -C "$SELFTESTS" KSFT_DIR="$ksft" OUTPUT="$WORK/overlay/opt/prctl" \
		LDFLAGS=-static >"$WORK/build-tests.log" 2>&1 ||
		{ cat "$WORK/build-tests.log" >&2; die "test build failed"; }
	cp "$HERE/prctl_suites.sh" "$WORK/overlay/opt/prctl/"
	TEST_HASH=$(cd "$WORK/overlay/opt/prctl" && cat set_mm_map_test \
		set_mm_legacy_test set_mm_map_fuzz prctl_suites.sh | sha256sum | cut -c1-16)
	TREE_INPUTS_HASH=$(cat "$KTOOLS/base.config" "$KTOOLS/criu.config" \
		"$KTOOLS/prep-base.sh" "$KTOOLS/base-remove-mm-map.patch" \
		"$KTOOLS/build-kernel.sh" | sha256sum | cut -c1-16)
}

# A patch from the base tree to the patched tree with @expr applied.
make_mutant_patch() {
	local name="$1" expr="$2" out="$3" f
	local dir="$WORK/m-$name"

	rm -rf "$dir"
	cp -a "$WORK/patched" "$dir"
	perl -0pi -e "$expr" "$dir/kernel/sys.c"
	cmp -s "$dir/kernel/sys.c" "$WORK/patched/kernel/sys.c" && return 1
	: >"$out"
	for f in include/uapi/linux/prctl.h kernel/sys.c; do
		(cd "$WORK" && diff -u --label "a/$f" --label "b/$f" \
			"base/$f" "m-$name/$f" >>"$out") || true
	done
	rm -rf "$dir"
}

# -d: what each mutant changes, as a diff of the patched kernel/sys.c.
show_mutant() {
	local name="$1" expr="$2" dir="$WORK/m-$1"

	cp -a "$WORK/patched" "$dir"
	perl -0pi -e "$expr" "$dir/kernel/sys.c"
	echo "### $name"
	(cd "$WORK" && diff -u --label "patched/kernel/sys.c" \
		--label "$name/kernel/sys.c" patched/kernel/sys.c \
		"m-$name/kernel/sys.c") || true
	rm -rf "$dir"
}

# The failing tests of one run, one "suite:test" per line.
killers() {
	awk -f "$HERE/killers.awk" "$1"
}

# At most four of the killers, and how many more there are.
summarise() {
	local all=("$@")

	if [ ${#all[@]} -gt 4 ]; then
		echo "${all[*]:0:4} (+$((${#all[@]} - 4)) more)"
	else
		echo "${all[*]}"
	fi
}

# Run "$@" under flock $VM_LOCK (if set); LOCK_WAIT: seconds spent waiting.
with_vm_lock() {
	local fd t0=$SECONDS rc=0

	LOCK_WAIT=0
	[ -n "$VM_LOCK" ] || { "$@"; return; }
	exec {fd}>>"$VM_LOCK"
	flock "$fd"
	LOCK_WAIT=$((SECONDS - t0))
	TOTAL_WAIT=$((TOTAL_WAIT + LOCK_WAIT))
	"$@" || rc=$?
	exec {fd}>&-
	return "$rc"
}

# Boot @kdir, run the suites; output in @out, returns vm-run's status.
# The caller holds the VM lock.
run_vm() {
	local kdir="$1" out="$2" config="$1/config"

	[ -f "$config" ] || config="$kdir/build/.config"
	# shellcheck disable=SC2086 # word list
	"$TOP/tools/testing/qemu/vm-run.sh" --kernel "$kdir" \
		--timeout "$VM_TIMEOUT" --dmesg-check --overlay "$WORK/overlay" \
		--file "$config:/boot/config-$(cat "$kdir/kver")" \
		--env FUZZ_COUNT="$FUZZ_COUNT" --log "$out.console" \
		-- /opt/prctl/prctl_suites.sh $SUITES >"$out" 2>&1
}

build_kernel() {
	"$KTOOLS/build-kernel.sh" --name "$1" \
		--fragment "$KTOOLS/base.config" --fragment "$KTOOLS/criu.config" \
		--prep "$KTOOLS/prep-base.sh" --patch "$2" 2>"$WORK/build.log"
}

# The verdict cache key of a kernel patch under the current tests.
verdict_hash() {
	{ cat "$1"; echo "$TEST_HASH $TREE_INPUTS_HASH $FUZZ_COUNT"; } |
		sha256sum | cut -c1-16
}

# The unbroken patch must pass: otherwise every "kill" means nothing.
control() {
	local kdir out="$WORK/control.out" rc=0 start=$SECONDS bad cached

	N=$((N + 1))
	cached="$VERDICTS/control-$(verdict_hash "$TOP/prctl_mm_map.patch")"
	if [ "$FORCE" = 0 ] && [ -e "$cached" ]; then
		echo "ok $N - control: the unbroken patch passes $SUITES # cached verdict"
		return
	fi
	kdir=$(build_kernel prctl-mm-map "$TOP/prctl_mm_map.patch") ||
		{ tail -n 20 "$WORK/build.log" | sed 's/^/# /'; die "patched kernel build failed"; }
	with_vm_lock run_vm "$kdir" "$out" || rc=$?
	bad=$(killers "$out" | tr '\n' ' ')
	bad="${bad% }"
	if [ "$rc" = 0 ] && [ -z "$bad" ] && grep -q "^### end fuzz" "$out"; then
		echo "ok $N - control: the unbroken patch passes $SUITES ($((SECONDS - start - LOCK_WAIT)) s, lock wait ${LOCK_WAIT} s)"
		mkdir -p "$VERDICTS"
		: >"$cached"
	else
		FAILED=1
		echo "not ok $N - control: the unbroken patch fails (vm-run $rc): $bad"
		grep -E "^not ok|^### end" "$out" | sed 's/^/# /'
		die "no point in running mutants"
	fi
}

# Build one mutant's kernel (or report its cached verdict); a built one
# waits in PENDING for boot_pending.  Only vmlinuz, kver, the modules and
# the .config are kept until then.
prepare_mutant() {
	local name="$1" expr="$2" what="$3" patch hash cached kdir t0=$SECONDS

	patch="$WORK/prctl_mm_map-$name.patch"
	if ! make_mutant_patch "$name" "$expr" "$patch"; then
		N=$((N + 1))
		FAILED=1
		echo "not ok $N - mutant $name: its substitution no longer matches the patched sys.c"
		return
	fi
	hash=$(verdict_hash "$patch")
	cached="$VERDICTS/$name-$hash"
	if [ "$FORCE" = 0 ] && [ -s "$cached" ]; then
		N=$((N + 1))
		echo "ok $N - mutant $name ($what) killed by: $(cat "$cached") # cached verdict"
		return
	fi
	if ! kdir=$(build_kernel "prctl-mutant-$name" "$patch"); then
		N=$((N + 1))
		FAILED=1
		echo "not ok $N - mutant $name: kernel build failed"
		tail -n 20 "$WORK/build.log" | sed 's/^/# /'
		return
	fi
	cp "$kdir/build/.config" "$kdir/config"
	rm -rf "$kdir/build"
	PENDING+=("$name|$kdir|$cached|$((SECONDS - t0))|$what")
}

# Boot every pending mutant, one after the other (the caller holds the VM
# lock once for all of them), and report which tests killed each.
boot_pending() {
	local m name kdir cached t_build what out rc t0 t_vm killed list

	for m in "${PENDING[@]}"; do
		IFS='|' read -r name kdir cached t_build what <<<"$m"
		out="$WORK/$name.out"
		rc=0
		t0=$SECONDS
		run_vm "$kdir" "$out" || rc=$?
		t_vm=$((SECONDS - t0))
		rm -rf "$kdir" "$CACHE/kernels/.$(basename "$kdir").lock"
		mapfile -t list < <(killers "$out")
		case "$rc" in
		0) ;;
		125) list+=("vm:splat-or-crash") ;;
		124) list+=("vm:hang") ;;
		*) list+=("vm:exit($rc)") ;;
		esac
		killed=""
		[ ${#list[@]} = 0 ] || killed=$(summarise "${list[@]}")
		N=$((N + 1))
		if ! grep -q "^### end fuzz" "$out" && [ "$rc" = 0 ]; then
			FAILED=1
			echo "not ok $N - mutant $name: the VM did not run the tests"
		elif [ -n "$killed" ]; then
			echo "ok $N - mutant $name ($what) killed by: $killed (build ${t_build} s, vm ${t_vm} s)"
			mkdir -p "$VERDICTS"
			echo "$killed" >"$cached"
		else
			FAILED=1
			echo "not ok $N - mutant $name ($what) went unnoticed (build ${t_build} s, vm ${t_vm} s)"
		fi
		grep -E "^not ok|^### end" "$out" | head -n 20 | sed 's/^/# /'
	done
}

main() {
	local m name rest opt start=$SECONDS

	while getopts "ldfch" opt; do
		case "$opt" in
		l) list_mutants; exit 0 ;;
		d) SHOW=1 ;;
		f) FORCE=1 ;;
		c) CANARY_ONLY=1 ;;
		*) usage ;;
		esac
	done
	shift $((OPTIND - 1))
	[ "$CANARY_ONLY" = 0 ] || set -- "$CANARY"
	command -v perl >/dev/null || die "perl missing: apt-get install perl"
	WORK=$(mktemp -d /tmp/prctl-mutants.XXXXXX)
	prepare_sources
	if [ "$SHOW" = 0 ]; then
		echo "TAP version 13"
		build_tests
		control
	fi
	for m in "${MUTANTS[@]}"; do
		name="${m%%|*}"
		rest="${m#*|}"
		if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
			continue
		fi
		if [ "$SHOW" = 1 ]; then
			show_mutant "$name" "${rest%|*}"
		else
			prepare_mutant "$name" "${rest%|*}" "${rest##*|}"
		fi
	done
	[ "$SHOW" = 0 ] || exit 0
	if [ ${#PENDING[@]} -gt 0 ]; then
		note "booting ${#PENDING[@]} mutant kernels"
		with_vm_lock boot_pending
		note "waited $LOCK_WAIT s for ${VM_LOCK:-no lock} before booting them"
	fi
	note "total wall time $((SECONDS - start)) s, of which $TOTAL_WAIT s waiting for ${VM_LOCK:-no lock}"
	echo "1..$N"
	exit "$FAILED"
}

main "$@"
