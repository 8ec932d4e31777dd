#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh - check vm-run.sh's contract by booting a Debian kernel
#
# Usage: selftest.sh [deb-6.1|deb-6.12]     (default deb-6.1)
#
# Prints TAP.  Each case boots a fresh guest (~4 s in TCG), the watchdog
# case waits for its 30 s timeout.

# The guest commands and eval'ed checks are single-quoted on purpose.
# shellcheck disable=SC2016

set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
VMRUN=$HERE/vm-run.sh
KNAME=${1:-deb-6.1}
KDIR=
KVER=
HARNESS=vm-run
# shellcheck source=../lib/harness-selftest.sh
source "$HERE/../lib/harness-selftest.sh"

# vm ARGS...: run vm-run.sh, keep stdout/stderr/status for the checks
vm()
{
	RC=0
	"$VMRUN" --kernel "$KDIR" "$@" >"$TMP/out" 2>"$TMP/err" || RC=$?
}

get_kernel()
{
	if ! KDIR=$("$HERE/fetch-kernel.sh" "$KNAME" 2>"$TMP/fetch.err"); then
		diag <"$TMP/fetch.err"
		skip_all "fetch-kernel.sh $KNAME failed (see above)"
	fi
	KVER=$(cat "$KDIR/kver")
}

test_basics()
{
	mkdir -p "$TMP/overlay/opt/st"
	echo overlay-content >"$TMP/overlay/opt/st/o"
	echo file-content >"$TMP/f"
	CI=selftest-ci vm --dmesg-check --overlay "$TMP/overlay" \
		--file "$TMP/f:/opt/st/f" --env 'FOO=x y$z' -- '
		echo "hello from $(uname -r)"
		echo "CI=$CI FOO=$FOO"
		cat /opt/st/o /opt/st/f
		echo "pwd=$PWD user=$(id -u)"
		printf no-newline
		exit 3'
	check "exit status propagates (exit 3 -> 3)" is "$RC" 3
	check "a clean boot passes --dmesg-check" eval '! err_has dmesg-check'
	check "command output comes back" out_has "hello from $KVER"
	check "output without a final newline is kept" out_has "no-newline"
	check "CI and --env reach the guest" out_has 'CI=selftest-ci FOO=x y$z'
	check "--overlay and --file are copied" \
		eval 'out_has overlay-content && out_has file-content'
	check "runs as root in /" out_has "pwd=/ user=0"
}

test_argv()
{
	vm -- printf '%s|' 'a b' "c'd" '$HOME'
	check "several COMMAND args are passed verbatim" \
		eval 'is "$RC" 0 && out_has "a b|c'\''d|\$HOME|"'
}

test_userland()
{
	vm -- '
		set -e
		ip -V | grep -q iproute2
		tc -V | grep -q iproute2
		ss -V | grep -q iproute2
		nstat -V | grep -q iproute2
		iperf3 --version | grep -q "^iperf 3"
		ping -V | grep -q iputils
		[ "$(type -p ip)" = /usr/sbin/ip ]
		ip netns add st && ip -n st link set lo up
		ping -c1 -W5 127.0.0.1 >/dev/null
		grep -q " /sys/kernel/debug debugfs " /proc/mounts
		grep -q " /dev/pts devpts " /proc/mounts
		[ -c /dev/ptmx ]
		echo userland-ok'
	check "real iproute2/iperf3/ping, netns, mounts" \
		eval 'is "$RC" 0 && out_has userland-ok'
}

test_kmod()
{
	vm --kmod tcp_dctcp --kmod libcrc32c -- '
		set -e
		modprobe tcp_dctcp
		grep -qw dctcp /proc/sys/net/ipv4/tcp_available_congestion_control
		modprobe libcrc32c
		grep -q "^libcrc32c " /proc/modules
		echo kmod-ok'
	check "--kmod adds modules that modprobe can load" \
		eval 'is "$RC" 0 && out_has kmod-ok'

	vm --kmod no_such_module -- true
	check "--kmod of a missing module fails clearly" \
		eval 'is "$RC" 125 && err_has "no_such_module not found"'
}

test_failures()
{
	vm --timeout 30 -- 'echo hanging; sleep 1000'
	check "watchdog kills a hung guest (exit 124)" \
		eval 'is "$RC" 124 && out_has hanging && err_has TIMEOUT'

	vm --dmesg-check -- 'echo "WARNING: vm-run selftest splat" >/dev/kmsg'
	check "--dmesg-check catches a WARNING (exit 125)" \
		eval 'is "$RC" 125 && err_has "WARNING: vm-run selftest splat"'

	vm -- 'echo c >/proc/sysrq-trigger'
	check "a guest panic is reported (exit 125)" \
		eval 'is "$RC" 125 && err_has "panicked"'
}

main()
{
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/vm-selftest.XXXXXX")
	echo "TAP version 13"
	get_kernel
	echo "# kernel $KNAME: $KVER ($KDIR)"
	test_basics
	test_argv
	test_userland
	test_kmod
	test_failures
	echo "1..$N"
	[ $FAILED -eq 0 ]
}

main "$@"
