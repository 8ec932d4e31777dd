#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the tcp_dctcp selftests inside a guest booting KERNEL: QEMU, or
# User-Mode Linux on simulated time for KERNEL "uml".
#
#   run_vm.sh KERNEL [--impl ours|intree] [--ko FILE] [--rate RATE]
#             [--log FILE] [--core | SCRIPT...]
#   run_vm.sh --prepare KERNEL
#
# KERNEL is a kernel directory in the cache layout, a cached kernel name,
# deb-* (fetched by tools/testing/qemu/fetch-kernel.sh: deb-5.10 .. deb-7.3) or
# "debug" (base.config + debug.config, built and cached by
# tools/testing/kernel/build-kernel.sh; RATE=2mbit K=9000 by default there)
# or "uml" (tools/testing/uml/build-uml.sh, run by tools/testing/uml/uml-run.sh
# on simulated time; a uml-* cache name or a dir with a `linux` executable
# is UML too).  RATE, K and ACCECN_* (dctcp_accecn.sh) from the
# environment are passed to the guest.  SCRIPTs default to the suite's
# TEST_PROGS (its kselftest Makefile) for the back end: the simulated-time
# scripts (dctcp_sim_*.sh, exact timing) on UML, the others on QEMU.
# --core runs the core subset (CORE_SCRIPTS below: load and identity,
# parameters, selection, fallback, marking, lifecycle with CYCLES=10,
# AccECN) followed by any SCRIPTs given, the checks for kernels that do not
# get the whole suite; the scripts it leaves out are named in the output.
# CYCLES and ORACLE_EVENTS from the environment reach the guest too.  --prepare only fetches or builds
# the kernel and the modules a run would boot (tools/testing/prepare.sh).
#
# --impl ours (default) builds tcp_dctcp.ko against KERNEL with
# tools/testing/build-module.sh and insmods it from /opt/dctcp; --impl
# intree ships the kernel's own tcp_dctcp instead (modprobe; on UML the
# in-tree module built from the same linux-source).  --ko tests a
# prebuilt module instead of building one (e.g. a deliberately broken one).
# The guest proves that the loaded module is the one shipped: its
# srcversion and GNU build ID must be the .ko's (DCTCP_SRCVERSION,
# DCTCP_BUILD_ID).  The guest kernel log is
# checked for splats (--dmesg-check) and, on a kmemleak kernel, scanned for
# leaks at the end.  TAP is streamed to stdout; exit status is non-zero on
# any failure, a hung guest (watchdog) or a kernel splat.
#
# Timeouts nest: each script gets the suite's `settings` timeout (times
# TIMEOUT_SCALE on slow kernels), enforced in the guest with SIGTERM first
# so that its cleanup runs; the VM watchdog is the sum of those plus a
# margin for booting, so it only fires when the guest itself is stuck.

set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
SUITE=$TOP/tools/testing/selftests/net/tcp_dctcp
CACHE=${DCTCP_CACHE:-/var/cache/dctcp-oot}
QEMU_DIR=$TOP/tools/testing/qemu
UML_DIR=$TOP/tools/testing/uml
# shellcheck source=../lib/ko-identity.sh
source "$TOP/tools/testing/lib/ko-identity.sh"
VM_RUN=${VM_RUN:-}		# the harness; default by back end
KCONF_DIR=$TOP/tools/testing/kernel
SIM_RE='^dctcp_sim_.*\.sh$'	# the scripts that need simulated time

# Booting, building the initramfs and the final kmemleak scan, seconds.
VM_BOOT_MARGIN=180

# --core: dctcp_module.sh (the module is ours, parameters), dctcp_select.sh
# (selection, ECN, fallback to dctcp-reno), dctcp_marking.sh (marks become
# alpha), dctcp_lifecycle.sh (unload while in use, load/unload cycles),
# dctcp_accecn.sh (AccECN on 7.x, its absence elsewhere).
CORE_SCRIPTS=(dctcp_module.sh dctcp_select.sh dctcp_marking.sh
	      dctcp_lifecycle.sh dctcp_accecn.sh)

KERNEL=
IMPL=ours
KO=
CORE=
PREPARE=
RATE=
LOG=
SCRIPTS=()
STAGE=

cleanup()
{
	[[ -z $STAGE ]] || rm -rf "$STAGE"
}
trap cleanup EXIT

die()
{
	echo "run_vm: $*" >&2
	exit 1
}

usage()
{
	sed -n '4,9s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

parse_args()
{
	while (( $# )); do
		case $1 in
		--impl)		IMPL=${2:?}; shift ;;
		--ko)		KO=${2:?}; shift ;;
		--rate)		RATE=${2:?}; shift ;;
		--log)		LOG=${2:?}; shift ;;
		--core)		CORE=y ;;
		--prepare)	PREPARE=y ;;
		-h|--help)	usage ;;
		-*)		echo "unknown option $1" >&2; usage ;;
		*)
			if [[ -z $KERNEL ]]; then
				KERNEL=$1
			else
				SCRIPTS+=("$1")
			fi
			;;
		esac
		shift
	done
	[[ -n $KERNEL ]] || usage
	[[ $IMPL == ours || $IMPL == intree ]] || die "--impl ours|intree"
}

# Print the kernel directory for KERNEL, fetching or building it.
resolve_kernel()
{
	case $KERNEL in
	*/*)
		[[ -f $KERNEL/vmlinuz || -x $KERNEL/linux ]] ||
			die "$KERNEL: no vmlinuz (QEMU) nor linux (UML)"
		echo "$KERNEL"
		;;
	uml)
		"$UML_DIR/build-uml.sh"
		;;
	deb-*)
		"$QEMU_DIR/fetch-kernel.sh" "$KERNEL"
		;;
	debug)
		"$KCONF_DIR/build-kernel.sh" --name debug \
			--fragment "$KCONF_DIR/base.config" \
			--fragment "$KCONF_DIR/debug.config"
		;;
	*)
		[[ -f $CACHE/kernels/$KERNEL/vmlinuz || -x $CACHE/kernels/$KERNEL/linux ]] ||
			die "no kernel $KERNEL in $CACHE/kernels"
		echo "$CACHE/kernels/$KERNEL"
		;;
	esac
}

# The suite's scripts for a back end (uml or qemu), as its kselftest
# Makefile lists them.
suite_scripts()
{
	local sel=-v

	[[ $1 == uml ]] && sel=
	# shellcheck disable=SC2016 # $(TEST_PROGS) is make's
	printf 'print-progs:\n\t@echo $(TEST_PROGS)\n' |
		make -s --no-print-directory -C "$SUITE" -f Makefile -f - print-progs |
		tr ' ' '\n' | grep $sel -E "$SIM_RE" | tr '\n' ' '
}

# has_kmod KDIR NAME: the kernel's module tree has NAME.
has_kmod()
{
	modinfo -b "$1/modules" -k "$(cat "$1/kver")" -F filename "$2" 2>/dev/null |
		grep -q '^/'
}

# Report a harness-level failure as TAP, so that it is counted.
tap_fail()
{
	echo "1..1"
	echo "not ok 1 - $*"
}

main()
{
	local kdir rc start script_timeout clash backend v vm_args=()

	parse_args "$@"
	start=$SECONDS

	kdir=$(resolve_kernel) || { tap_fail "kernel $KERNEL unavailable"; exit 1; }
	echo "# kernel $KERNEL: $kdir ($(cat "$kdir/kver"))"
	if [[ -x $kdir/linux ]]; then
		backend=uml VM_RUN=${VM_RUN:-$UML_DIR/uml-run.sh}
	else
		backend=qemu VM_RUN=${VM_RUN:-$QEMU_DIR/vm-run.sh}
	fi
	# KASAN + lockdep under TCG forward only a few Mbit/s: shape well
	# below that so that the bottleneck is the qdisc, not the CPU, and
	# scale K down with it (K/C = 36 ms).
	# no5lvl: with 5-level paging (QEMU's -cpu max has LA57) KASAN in
	# 6.1 computes its shadow bounds from boot_cpu_data's LA57 bit, which
	# identify_cpu() clears and sets again during boot; an interrupt in
	# that window reported a wild-memory-access on an ff11... (5-level
	# direct map) address before init, in 1 of 4 whole `make check` runs.
	if [[ $KERNEL == debug ]]; then
		RATE=${RATE:-2mbit}
		K=${K:-9000}
		TIMEOUT_SCALE=${TIMEOUT_SCALE:-3}
		vm_args+=(--append no5lvl)
	fi
	if [[ -n $CORE ]]; then
		SCRIPTS=("${CORE_SCRIPTS[@]}" "${SCRIPTS[@]}")
		CYCLES=${CYCLES:-10}
		echo "# core subset: ${SCRIPTS[*]}; not run here:" \
			"$(suite_scripts "$backend" | tr ' ' '\n' |
			   grep -vxF -f <(printf '%s\n' "${SCRIPTS[@]}") | tr '\n' ' ')"
	fi
	(( ${#SCRIPTS[@]} )) || read -ra SCRIPTS <<< "$(suite_scripts "$backend")"
	script_timeout=$(( $(sed -n 's/^timeout=//p' "$SUITE/settings") * ${TIMEOUT_SCALE:-1} ))

	STAGE=$(mktemp -d /tmp/dctcp-vm.XXXXXX)
	make -s -C "$SUITE" OUTPUT="$STAGE" INSTALL_PATH="$STAGE/root/opt/tcp_dctcp" \
		install >&2 || { tap_fail "build of the selftests failed"; exit 1; }
	install -m 0755 "$HERE/run_guest.sh" "$STAGE/root/opt/tcp_dctcp/"

	if [[ -z $KO && $IMPL == ours ]]; then
		KO=$("$TOP/tools/testing/build-module.sh" "$kdir") ||
			{ tap_fail "tcp_dctcp.ko build for $KERNEL failed"; exit 1; }
	fi
	if [[ -n $KO ]]; then
		ko_identity_env "$KO"
		vm_args+=(--file "$KO:/opt/dctcp/tcp_dctcp.ko" "${KO_ENV[@]}")
	fi
	# The distribution's tcp_dctcp sits where modprobe finds it, as on a
	# real system: the in-tree runs load it, ours must coexist with it.
	! has_kmod "$kdir" tcp_dctcp || vm_args+=(--kmod tcp_dctcp)
	# dctcp_register.sh's rival module (a QEMU script: not built for UML)
	if [[ $backend == qemu ]]; then
		clash=$("$HERE/build-testmod.sh" "$kdir" "$HERE/clash") ||
			{ tap_fail "dctcp_clash.ko build for $KERNEL failed"; exit 1; }
		vm_args+=(--file "$clash:/opt/dctcp/dctcp_clash.ko")
	fi
	if [[ -n $PREPARE ]]; then
		echo "# prepared $KERNEL: $kdir ${KO:+$KO }${clash:-}"
		exit 0
	fi
	vm_args+=(--env "DCTCP_IMPL=$IMPL" --env "SCRIPT_TIMEOUT=$script_timeout")
	[[ -z $RATE ]] || vm_args+=(--env "RATE=$RATE")
	[[ -z ${K:-} ]] || vm_args+=(--env "K=$K")
	for v in ACCECN_PROBS ACCECN_SECS ACCECN_TABLE CYCLES ORACLE_EVENTS; do
		[[ -z ${!v:-} ]] || vm_args+=(--env "$v=${!v}")
	done
	[[ -z $LOG ]] || vm_args+=(--log "$LOG")

	set +e
	"$VM_RUN" --kernel "$kdir" --net-kmods "${vm_args[@]}" \
		--overlay "$STAGE/root" --dmesg-check \
		--timeout $((VM_BOOT_MARGIN + ${#SCRIPTS[@]} * script_timeout)) \
		-- /opt/tcp_dctcp/run_guest.sh "${SCRIPTS[@]}" |
		tee "$STAGE/guest.log" | grep -v '^# oracle-data '
	rc=${PIPESTATUS[0]}
	set -e

	# dctcp_trace.sh recorded every tracepoint of its flows (base64 in the
	# guest's output, kept out of the stream above): check each one
	# against include/dctcp_math.h on the host.
	if grep -q '^# oracle-begin' "$STAGE/guest.log" &&
	   ! "$HERE/oracle/check.sh" "$STAGE/guest.log"; then
		(( rc != 0 )) || rc=1
	fi

	case $rc in
	0|1) ;;
	124) tap_fail "guest on $KERNEL hung: watchdog fired" ;;
	125) tap_fail "guest on $KERNEL crashed or logged a kernel splat (see above)" ;;
	*) tap_fail "guest on $KERNEL exited $rc" ;;
	esac
	echo "# run_vm $KERNEL impl=$IMPL: exit $rc after $((SECONDS - start)) s"
	exit $rc
}

main "$@"
