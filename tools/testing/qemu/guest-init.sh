#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash disable=SC1091
#
# PID 1 of a vm-run.sh guest (busybox sh) and of a uml-run.sh guest (the
# host's dash, over hostfs).
#
# Mounts the usual filesystems, runs /etc/vm-run/cmd under bash with its
# stdout+stderr piped to the second serial port (the host streams it), writes
# an exit marker there, dumps dmesg on the console and reboots; the host
# runs QEMU with -no-reboot, so the reboot ends QEMU.
#
# /etc/vm-run/config may set VMRUN_OUT (the command's output device),
# VMRUN_CON_TTY (the console's tty, drained before the end), VMRUN_HALT
# and VMRUN_SYSRQ (how to end, and the sysrq key if that fails: a UML
# kernel restarts itself on a reboot, it needs a power-off).

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
export TERM=dumb

CON=/dev/console
OUT=/dev/ttyS1

say()
{
	echo "vm-run: $*" >"$CON"
}

mount_fs()
{
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev 2>/dev/null
	mkdir -p /dev/pts /dev/shm
	mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
	[ -e /dev/ptmx ] || ln -s pts/ptmx /dev/ptmx
	mount -t tmpfs -o mode=1777 tmpfs /dev/shm
	mount -t tmpfs -o mode=1777 tmpfs /tmp
	mount -t tmpfs -o mode=755 tmpfs /run
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null ||
		say "debugfs not available"
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
	mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
	mkdir -p /run/netns
}

# Everything written to the serial ports must reach the host before the
# reboot: stty sets attributes with TCSADRAIN, which waits for the UART.
drain()
{
	stty -F "$1" raw -echo 2>/dev/null
}

# Kill everything but PID 1 and $1: leftover background jobs of the
# command must not keep its output pipe open.
kill_leftovers()
{
	local pid

	for pid in /proc/[0-9]*; do
		pid=${pid#/proc/}
		[ "$pid" = 1 ] || [ "$pid" = "$1" ] || kill -9 "$pid" 2>/dev/null
	done
}

# The command writes into a pipe, not the tty, so it sees the same kind
# of stdout as under a CI runner (no colours, no column layout).
run_cmd()
{
	local rc cat_pid i=0

	if [ ! -c "$OUT" ]; then
		say "no $OUT (kernel has one UART?): command output goes to the console"
		OUT=$CON
	fi
	drain "$OUT"
	mkfifo /run/vm-run.out
	cat /run/vm-run.out >"$OUT" &
	cat_pid=$!
	# tells the host the kernel booted and the command runs now
	printf '\001VMRUN-START\001\n' >"$OUT"
	cd /
	/bin/bash -c 'set -a; . /etc/vm-run/env; set +a; exec /bin/bash /etc/vm-run/cmd' \
		</dev/null >/run/vm-run.out 2>&1
	rc=$?
	kill_leftovers "$cat_pid"
	while kill -0 "$cat_pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill "$cat_pid" 2>/dev/null
	wait "$cat_pid"
	# \001 delimits the marker so it can follow output with no newline
	printf '\001VMRUN-EXIT=%d\001\n' "$rc" >"$OUT"
	drain "$OUT"
	return "$rc"
}

finish()
{
	local rc="$1"

	if [ "${VMRUN_KMEMLEAK:-0}" = 1 ] && [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan >/sys/kernel/debug/kmemleak
		cat /sys/kernel/debug/kmemleak >"$CON"
	fi
	say "command exited with status $rc at $(cut -d' ' -f1 /proc/uptime) s"
	echo "vm-run: ----- dmesg -----" >"$CON"
	dmesg >"$CON"
	echo "vm-run: ----- end of dmesg -----" >"$CON"
	drain "${VMRUN_CON_TTY:-/dev/ttyS0}"
	${VMRUN_HALT:-reboot -f}
	echo "${VMRUN_SYSRQ:-b}" >/proc/sysrq-trigger
}

main()
{
	local rc

	mount_fs
	say "/init started at $(cut -d' ' -f1 /proc/uptime) s"
	/usr/sbin/ip link set lo up
	hostname vm
	[ -f /etc/vm-run/config ] && . /etc/vm-run/config
	OUT=${VMRUN_OUT:-$OUT}
	run_cmd
	rc=$?
	finish "$rc"
}

main
