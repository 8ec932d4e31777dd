#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The tracepoint oracle for one kernel, as TAP.
#
#   tools/testing/dctcp/oracle/run.sh KERNEL [--ko FILE] [--log FILE]
#                                     [--min N] [SCRIPT...]
#   tools/testing/dctcp/oracle/run.sh --check LOG [--min N]
#
# KERNEL is deb-6.1, deb-6.12, debug or a kernel directory in the cache
# layout.  The guest (QEMU, one at a time: flock /tmp/dctcp-vm.lock) runs
# SCRIPTs of the tcp_dctcp suite, by default dctcp_trace.sh and
# dctcp_register.sh, with our module (built for KERNEL by build-module.sh,
# or --ko FILE, e.g. a deliberately broken one), the test module
# dctcp_clash.ko and, when KERNEL has one, Debian's in-tree tcp_dctcp.
# Then the event records dctcp_trace.sh printed are decoded and every one
# is checked by dctcp_oracle against include/dctcp_math.h; it must see at
# least N events (--min, default 10000) and no mismatch.
#
# --check LOG skips the VM and checks the records in the log of an
# earlier run (of this script or of run_vm.sh).  --log FILE keeps the
# whole output, and the guest's console in FILE.console.  Exit status 0
# iff the guest and the checker passed.

set -eu
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../../.." && pwd)
SUITE=$TOP/tools/testing/selftests/net/tcp_dctcp
QEMU_DIR=$TOP/tools/testing/qemu
KCONF_DIR=$TOP/tools/testing/kernel
CACHE=${DCTCP_CACHE:-/var/cache/dctcp-oot}
VM_LOCK=/tmp/dctcp-vm.lock
VM_BOOT_MARGIN=180

KERNEL=
KO=
LOG=
CHECK_LOG=
MIN=10000
SCRIPTS=()
WORK=

cleanup()
{
	[[ -z $WORK ]] || rm -rf "$WORK"
}
trap cleanup EXIT

die()
{
	echo "oracle/run.sh: $*" >&2
	exit 2
}

usage()
{
	sed -n '4,8s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

tap_fail()
{
	echo "1..1"
	echo "not ok 1 - $*"
}

parse_args()
{
	while (( $# )); do
		case $1 in
		--ko)		KO=${2:?}; shift ;;
		--log)		LOG=${2:?}; shift ;;
		--min)		MIN=${2:?}; shift ;;
		--check)	CHECK_LOG=${2:?}; shift ;;
		-h|--help)	usage ;;
		-*)		echo "unknown option $1" >&2; usage ;;
		*)
			if [[ -z $KERNEL && -z $CHECK_LOG ]]; then
				KERNEL=$1
			else
				SCRIPTS+=("$1")
			fi
			;;
		esac
		shift
	done
	[[ -n $KERNEL || -n $CHECK_LOG ]] || usage
	[[ $MIN =~ ^[0-9]+$ ]] || die "--min takes a number"
	(( ${#SCRIPTS[@]} )) || SCRIPTS=(dctcp_trace.sh dctcp_register.sh)
}

resolve_kernel()
{
	case $KERNEL in
	*/*)
		[[ -f $KERNEL/vmlinuz ]] || die "$KERNEL: no vmlinuz"
		echo "$KERNEL"
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
		[[ -f $CACHE/kernels/$KERNEL/vmlinuz ]] ||
			die "no kernel $KERNEL in $CACHE/kernels"
		echo "$CACHE/kernels/$KERNEL"
		;;
	esac
}

# has_kmod KDIR NAME: the kernel's module tree has NAME.
has_kmod()
{
	modinfo -b "$1/modules" -k "$(cat "$1/kver")" -F filename "$2" 2>/dev/null |
		grep -q '^/'
}

# run_guest KDIR OUT: boot KDIR, run the scripts, output (also streamed) to OUT.
run_guest()
{
	local kdir=$1 out=$2 clash timeout scale=1 vm_args=() rc

	make -s -C "$SUITE" OUTPUT="$WORK" INSTALL_PATH="$WORK/root/opt/tcp_dctcp" \
		install >&2 || { tap_fail "build of the selftests failed"; return 1; }
	install -m 0755 "$TOP/tools/testing/dctcp/run_guest.sh" "$WORK/root/opt/tcp_dctcp/"
	if [[ -z $KO ]]; then
		KO=$("$TOP/tools/testing/build-module.sh" "$kdir") ||
			{ tap_fail "tcp_dctcp.ko build for $KERNEL failed"; return 1; }
	fi
	clash=$("$TOP/tools/testing/dctcp/build-testmod.sh" "$kdir" \
		"$TOP/tools/testing/dctcp/clash") ||
		{ tap_fail "dctcp_clash.ko build for $KERNEL failed"; return 1; }
	vm_args+=(--file "$KO:/opt/dctcp/tcp_dctcp.ko"
		  --file "$clash:/opt/dctcp/dctcp_clash.ko"
		  --env "DCTCP_SRCVERSION=$(modinfo -F srcversion "$KO")"
		  --env DCTCP_IMPL=ours)
	! has_kmod "$kdir" tcp_dctcp || vm_args+=(--kmod tcp_dctcp)
	if [[ $KERNEL == debug ]]; then
		vm_args+=(--env "RATE=${RATE:-2mbit}" --env "K=${K:-9000}")
		scale=3
	fi
	timeout=$(( $(sed -n 's/^timeout=//p' "$SUITE/settings") * scale ))
	vm_args+=(--env "SCRIPT_TIMEOUT=$timeout")
	[[ -z $LOG ]] || vm_args+=(--log "$LOG.console")

	set +e
	flock "$VM_LOCK" "$QEMU_DIR/vm-run.sh" --kernel "$kdir" --net-kmods \
		"${vm_args[@]}" --overlay "$WORK/root" --dmesg-check \
		--timeout $((VM_BOOT_MARGIN + ${#SCRIPTS[@]} * timeout)) \
		-- /opt/tcp_dctcp/run_guest.sh "${SCRIPTS[@]}" | tee "$out"
	rc=${PIPESTATUS[0]}
	set -e
	case $rc in
	0|1) ;;
	124) tap_fail "guest on $KERNEL hung: watchdog fired" ;;
	125) tap_fail "guest on $KERNEL crashed or logged a kernel splat (see above)" ;;
	*) tap_fail "guest on $KERNEL exited $rc" ;;
	esac
	return "$rc"
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
	local kdir log rc=0

	parse_args "$@"
	WORK=$(mktemp -d /tmp/dctcp-oracle.XXXXXX)
	make -s -C "$HERE" >&2 || { tap_fail "build of dctcp_oracle failed"; exit 1; }

	if [[ -n $CHECK_LOG ]]; then
		log=$CHECK_LOG
	else
		kdir=$(resolve_kernel) || { tap_fail "kernel $KERNEL unavailable"; exit 1; }
		echo "# oracle on $KERNEL: $kdir ($(cat "$kdir/kver"))"
		log=${LOG:-$WORK/guest.log}
		run_guest "$kdir" "$log" || rc=$?
	fi
	if ! decode "$log" "$WORK/records"; then
		tap_fail "oracle: no records to check (see above)"
		exit 1
	fi
	"$HERE/dctcp_oracle" -m "$MIN" "$WORK/records" || rc=1
	exit "$rc"
}

main "$@"
