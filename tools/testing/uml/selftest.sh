#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh - check uml-run.sh's contract on the UML kernel of build-uml.sh
#
# Usage: selftest.sh [TEST...]    (default: all of them, see TESTS)
#
# Prints TAP.  The kernel is built and cached by build-uml.sh (a cold build
# takes minutes); each case boots a fresh guest (about a second), the
# watchdog case waits for its 20 s timeout.  UML_RUN=path tests another
# copy of uml-run.sh (a mutant).

# The guest commands and eval'ed checks are single-quoted on purpose.
# shellcheck disable=SC2016

set -eu
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
UMLRUN=${UML_RUN:-$HERE/uml-run.sh}
KDIR=
KVER=
WALL_MS=0
HARNESS=uml-run
# shellcheck source=../lib/harness-selftest.sh
source "$HERE/../lib/harness-selftest.sh"
TESTS=(basics argv userland isolation kmod our_module clock failures interrupt)

# vm ARGS...: run uml-run.sh with its work files under $TMP/work, keep
# stdout/stderr/status/wall-clock time for the checks.  A harness whose
# watchdog is broken is killed after 120 s (status 137).
vm()
{
	local t0

	RC=0
	t0=$(date +%s%3N)
	TMPDIR=$TMP/work timeout -s KILL 120 "$UMLRUN" --kernel "$KDIR" "$@" \
		>"$TMP/out" 2>"$TMP/err" || RC=$?
	WALL_MS=$(($(date +%s%3N) - t0))
}

# The guest's line "NAME=VALUE" -> VALUE
out_val()
{
	sed -n "s/^$1=//p" "$TMP/out" | head -n 1
}

# The guest's value NAME is a number in [LOW, HIGH)
in_range()
{
	local v

	v=$(out_val "$1")
	[[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -ge "$2" ] && [ "$v" -lt "$3" ]
}

# Nothing of the last run is left on the host: no process, no file.
no_leftovers()
{
	! pgrep -f "$TMP/work" >/dev/null &&
		[ -z "$(ls -A "$TMP/work")" ] &&
		! grep -qF "$TMP/work" /proc/mounts
}

get_kernel()
{
	[ "$(id -u)" = 0 ] ||
		skip_all "uml-run.sh needs root (mount and PID namespaces)"
	if ! KDIR=$("$HERE/build-uml.sh" 2>"$TMP/build.err"); then
		tail -n 30 "$TMP/build.err" | diag
		skip_all "build-uml.sh failed (see above)"
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
	check "no process, file or mount is left on the host" no_leftovers
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
		ip netns add st && ip -n st link set lo up
		ip link add va type veth peer name vb netns st
		ip addr add 10.9.0.1/24 dev va && ip link set va up
		ip -n st addr add 10.9.0.2/24 dev vb && ip -n st link set vb up
		tc qdisc add dev va root handle 1: tbf rate 100mbit burst 16kb latency 10ms
		tc qdisc add dev va parent 1:1 red limit 400000 min 30000 max 31500 \
			avpkt 1500 burst 21 bandwidth 100mbit probability 1 ecn
		ping -c1 -W5 10.9.0.2 >/dev/null
		ip netns exec st iperf3 -s -1 -D
		sleep 1
		iperf3 -c 10.9.0.2 -t 1 -C cubic --json >/tmp/ip.json
		grep -q "\"sender\":[[:space:]]*true" /tmp/ip.json
		ss -tin state time-wait | grep -q 10.9.0.2
		grep -q " /sys/kernel/debug debugfs " /proc/mounts
		grep -q " /sys/kernel/tracing tracefs " /proc/mounts
		grep -q "^net:net_dev_xmit$" /sys/kernel/tracing/available_events
		grep -q " /dev/pts devpts " /proc/mounts
		[ -c /dev/ptmx ]
		echo userland-ok'
	check "iproute2/iperf3/ping, netns, veth, tbf+red, tracefs, mounts" \
		eval 'is "$RC" 0 && out_has userland-ok'
}

# The guest cannot see or write the host's files.
test_isolation()
{
	local canary

	canary=uml-selftest-$$-$RANDOM
	echo host-secret >"/tmp/$canary"
	vm --env "C=$canary" -- '
		[ -e "/tmp/$C" ] && echo "sees-host-tmp"
		[ -d /var/cache/dctcp-oot ] && echo "sees-host-var-cache"
		[ -d /home ] && [ -z "$(ls -A /home)" ] && echo "home-empty"
		echo guest >"/usr/w-$C" && echo "usr-writable"
		echo guest >"/etc/w-$C" && echo "etc-writable"
		mkdir -p /mnt/h && mount -t hostfs -o / none /mnt/h &&
			echo "hostfs-mounted"
		[ -f /mnt/h/linux ] && [ -f /mnt/h/root/init ] && echo "hostfs-jail"
		[ -e "/mnt/h/tmp/$C" ] && echo "hostfs-sees-host-tmp"
		true'
	check "the guest sees neither the host's /tmp nor /var/cache" \
		eval 'is "$RC" 0 && out_has home-empty && ! out_has sees-host-tmp && ! out_has sees-host-var-cache'
	check "guest writes to /usr and /etc stay in the guest" \
		eval 'out_has usr-writable && out_has etc-writable && [ ! -e "/usr/w-$canary" ] && [ ! -e "/etc/w-$canary" ]'
	check "hostfs mounted at / in the guest only reaches the jail" \
		eval 'out_has hostfs-mounted && out_has hostfs-jail && ! out_has hostfs-sees-host-tmp'
	rm -f "/tmp/$canary"
}

test_kmod()
{
	vm --kmod tcp_dctcp -- '
		set -e
		modprobe tcp_dctcp
		grep -qw dctcp /proc/sys/net/ipv4/tcp_available_congestion_control
		modprobe -r tcp_dctcp
		! grep -q "^tcp_dctcp " /proc/modules
		echo kmod-ok'
	check "--kmod adds modules that modprobe can load and unload" \
		eval 'is "$RC" 0 && out_has kmod-ok'

	vm --kmod no_such_module -- true
	check "--kmod of a missing module fails clearly" \
		eval 'is "$RC" 125 && err_has "no_such_module not found"'
}

# The guest loaded the module with srcversion $1 and selected dctcp.
loaded_is()
{
	is "$RC" 0 && out_has "srcversion=$1" && out_has cc=dctcp
}

# Our module, built by build-module.sh for this kernel, loads in the guest.
test_our_module()
{
	local ko srcversion

	if ! ko=$("$TOP/tools/testing/build-module.sh" "$KDIR" 2>"$TMP/err"); then
		RC=$?
		: >"$TMP/out"
		result fail "build-module.sh builds tcp_dctcp.ko for $KVER"
		return
	fi
	srcversion=$(modinfo -F srcversion "$ko")
	vm --file "$ko:/opt/dctcp/" -- '
		insmod /opt/dctcp/tcp_dctcp.ko
		echo "srcversion=$(cat /sys/module/tcp_dctcp/srcversion)"
		sysctl -qw net.ipv4.tcp_congestion_control=dctcp &&
		echo "cc=$(sysctl -n net.ipv4.tcp_congestion_control)"'
	check "build-module.sh's tcp_dctcp.ko loads and registers dctcp" \
		loaded_is "$srcversion"
}

# Simulated time: a 30 s sleep takes far less than 30 s of wall clock,
# the guest's clocks advance by exactly 30 s (the fork+exec of date and
# the timer slack take no or next to no guest time), and a busy loop takes
# no guest time.
test_clock()
{
	vm -- '
		read -r up0 _ </proc/uptime
		r0=$(date +%s%N)
		sleep 30
		r1=$(date +%s%N)
		read -r up1 _ </proc/uptime
		echo "uptime_cs=$(echo "$up0 $up1" | awk "{ printf \"%d\", (\$2 - \$1) * 100 }")"
		echo "real_us=$(((r1 - r0) / 1000))"
		t0=$(date +%s%N)
		i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done
		t1=$(date +%s%N)
		echo "busy_us=$(((t1 - t0) / 1000))"'
	check "sleep 30 advances the guest's clocks by 30 s ($(out_val real_us) us)" \
		eval 'is "$RC" 0 && in_range uptime_cs 3000 3002 &&
		      in_range real_us 30000000 30001000'
	check "... in less than 15 s of wall clock ($WALL_MS ms)" \
		eval '[ "$WALL_MS" -lt 15000 ]'
	check "a busy loop takes no simulated time ($(out_val busy_us) us)" \
		in_range busy_us 0 1000
}

test_failures()
{
	vm --timeout 20 -- 'echo spinning; while :; do :; done'
	check "wall-clock watchdog kills a busy loop (exit 124 in ${WALL_MS} ms)" \
		eval 'is "$RC" 124 && out_has spinning && err_has TIMEOUT &&
		      [ "$WALL_MS" -lt 25000 ]'
	check "... and leaves no process, file or mount behind" no_leftovers

	vm --dmesg-check -- 'echo "WARNING: uml-run selftest splat" >/dev/kmsg'
	check "--dmesg-check catches a WARNING (exit 125)" \
		eval 'is "$RC" 125 && err_has "WARNING: uml-run selftest splat"'

	vm --timeout 60 -- 'echo c >/proc/sysrq-trigger'
	check "a guest panic is reported (exit 125)" \
		eval 'is "$RC" 125 && err_has "panicked"'
	check "... and leaves no process, file or mount behind" no_leftovers

	vm --smp 2 -- true
	check "--smp 2 is refused clearly" \
		eval 'is "$RC" 125 && err_has "uniprocessor"'
}

# A signal to uml-run.sh ends the guest at once.
test_interrupt()
{
	local pid t0

	t0=$(date +%s%3N)
	TMPDIR=$TMP/work timeout -s KILL 120 "$UMLRUN" --kernel "$KDIR" --timeout 300 -- \
		'echo spinning; while :; do :; done' >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	while ! out_has spinning && [ $(($(date +%s%3N) - t0)) -lt 60000 ]; do
		sleep 0.2
	done
	kill -TERM "$pid"
	RC=0
	wait "$pid" || RC=$?
	WALL_MS=$(($(date +%s%3N) - t0))
	check "SIGTERM ends the run (exit 143) and the guest with it" \
		eval 'is "$RC" 143 && no_leftovers'
}

main()
{
	local t

	for t in "$@"; do
		case " ${TESTS[*]} " in
		*" $t "*) ;;
		*) echo "selftest: unknown test '$t' (${TESTS[*]})" >&2; exit 2 ;;
		esac
	done
	[ $# -eq 0 ] || TESTS=("$@")
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/uml-selftest.XXXXXX")
	mkdir "$TMP/work"
	echo "TAP version 13"
	get_kernel
	echo "# kernel $KVER ($KDIR)"
	for t in "${TESTS[@]}"; do
		"test_$t"
	done
	echo "1..$N"
	[ $FAILED -eq 0 ]
}

main "$@"
