#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# uml-run.sh - run one command as root inside a throw-away User-Mode Linux
# guest on simulated time (time-travel=inf-cpu)
#
# Usage: uml-run.sh --kernel DIR [options] -- COMMAND...
#
#   --kernel DIR        UML kernel dir (build-uml.sh): linux, kver,
#                       modules/lib/modules/<kver>/
#   --overlay DIR       copy DIR's contents into the guest's / (repeatable)
#   --file SRC:DST      copy host file SRC to guest path DST (repeatable)
#   --bin PATH          copy a host binary and its ldd closure to the same
#                       path in the guest (repeatable)
#   --kmod NAME         add module NAME and its depends/softdep closure
#                       (repeatable; built-in modules are skipped)
#   --net-kmods         add the usual networking modules (see vm-common.sh)
#   --env NAME=VALUE    export NAME in the guest (repeatable; CI is passed
#                       through from the host environment by default)
#   --timeout SECS      WALL-CLOCK watchdog, default 900: a hang exits with
#                       124 (in inf-cpu mode a busy loop stalls simulated
#                       time, so only the host's clock can end it)
#   --mem MB            guest memory, default 1024
#   --smp 1             UML is uniprocessor (time travel needs !SMP)
#   --cpu N|auto|none   host CPU to pin the guest to; auto (default): the
#                       one that was idlest over the last 100 ms
#   --time-travel MODE  inf-cpu (default): the guest's clock only advances
#                       when it is idle, CPU work takes no simulated time;
#                       basic: idle time is skipped, CPU work takes host
#                       time; off: the host's clock
#   --append "..."      extra kernel command line
#   --dmesg-check       exit 125 if the guest kernel log shows a splat
#   --log FILE          keep the guest console (kernel log) in FILE
#
# Same interface and exit statuses as tools/testing/qemu/vm-run.sh: a single
# COMMAND argument is run as a bash script text, several as one quoted
# command line; COMMAND's stdout+stderr stream to stdout while it runs,
# harness messages go to stderr.  Exit status: COMMAND's, or 124
# (watchdog), 125 (guest crashed, no exit marker, or a splat).
#
# The guest's userland is the host's: its / is built by jail.sh in private
# namespaces from the host's /usr and /etc as read-only lower layers of
# overlays (writes land in a private tmpfs), with empty /tmp, /run, /var,
# /root; the UML kernel runs chrooted there, so neither it nor the guest
# can write a host file or see the host's /tmp, /var or /home.  All of it
# (processes, mounts, files) is gone when the guest ends or is killed.

set -eu
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
PROG=uml-run
BACKEND=UML
# options, files, modules, output stream, splat check, verdict
# shellcheck source=../lib/vm-common.sh
. "$HERE/../lib/vm-common.sh"

SMP=1
TIME_TRAVEL=inf-cpu
BACKEND_OPTS[--smp]=SMP
BACKEND_OPTS[--time-travel]=TIME_TRAVEL
CPU=auto
BACKEND_OPTS[--cpu]=CPU
PIN=()

# How the shared guest-init.sh talks and ends here: con1 carries the
# command's output, con0 is the console; a reboot would restart UML.
GUEST_CONFIG='VMRUN_OUT=/dev/tty1
VMRUN_CON_TTY=/dev/tty0
VMRUN_HALT="/bin/busybox poweroff -f"
VMRUN_SYSRQ=c'

# A run interrupted by a signal: end the guest too.  The watchdog leads
# its own process group (timeout, unshare, jail.sh, UML): SIGKILL to it
# ends unshare, whose PID namespace dies with it.
# shellcheck disable=SC2317 # called by the INT/TERM traps
interrupted()
{
	local pid

	if [ -n "$WORK" ] && [ -f "$WORK/timeout.pid" ]; then
		pid=$(cat "$WORK/timeout.pid")
		kill -KILL -- "-$pid" 2>/dev/null || true
		while kill -0 "$pid" 2>/dev/null; do
			sleep 0.1
		done
	fi
	log "interrupted"
	exit "$1"
}
trap 'interrupted 130' INT
trap 'interrupted 143' TERM

check_args()
{
	[ -x "$KDIR/linux" ] ||
		die "$KDIR/linux not found: not a UML kernel dir (run tools/testing/uml/build-uml.sh)"
	check_kdir_numbers "$SMP"
	[ "$SMP" = 1 ] || die "--smp $SMP: UML is uniprocessor (time travel needs !SMP)"
	case "$TIME_TRAVEL" in
	inf-cpu) TIME_TRAVEL_ARG=time-travel=inf-cpu ;;
	basic)	 TIME_TRAVEL_ARG=time-travel ;;
	off)	 TIME_TRAVEL_ARG= ;;
	*)	 die "--time-travel takes inf-cpu, basic or off, not '$TIME_TRAVEL'" ;;
	esac
	case "$CPU" in
	auto|none|[0-9]|[0-9][0-9]|[0-9][0-9][0-9]) ;;
	*)	 die "--cpu takes a CPU number, auto or none, not '$CPU'" ;;
	esac
}

# The host CPU that was idlest over the last 100 ms.
idlest_cpu()
{
	local a b

	a=$(grep '^cpu[0-9]' /proc/stat)
	sleep 0.1
	b=$(grep '^cpu[0-9]' /proc/stat)
	paste -d' ' <(echo "$a") <(echo "$b") | awk '
	{
		n = NF / 2
		idle = $(n + 5) + $(n + 6) - $5 - $6
		if (best == "" || idle > max) {
			best = substr($1, 4)
			max = idle
		}
	}
	END { print best }'
}

# UML's kernel and the host processes that run its guest's processes hand
# the CPU to each other on every guest syscall and page fault (ptrace
# stops).  On one host CPU they switch directly, without cross-CPU
# wake-ups: measured on this 2-core host under load, 50 fork+exec in the
# guest took 10.2 s instead of 17.2 s of wall clock (mean of 4 runs), an
# iperf3 run 119 s instead of 142 s.
pin_cpu()
{
	local cpu=$CPU

	[ "$cpu" != none ] || return 0
	command -v taskset >/dev/null 2>&1 ||
		die "taskset missing: apt-get install util-linux (or --cpu none)"
	[ "$cpu" != auto ] || cpu=$(idlest_cpu)
	if taskset -c "$cpu" true 2>/dev/null; then
		PIN=(taskset -c "$cpu")
	elif [ "$CPU" = auto ]; then
		log "cannot pin to CPU $cpu: running unpinned"
	else
		die "--cpu $cpu: not a CPU this process may run on"
	fi
}

check_host()
{
	need timeout coreutils
	need unshare util-linux
	need depmod kmod
	need tar tar
	[ -x /bin/busybox ] || die "busybox missing: apt-get install busybox-static"
	[ "$(id -u)" = 0 ] ||
		die "needs root for its private mount and PID namespaces (overlayfs, chroot)"
}

# The per-run tree laid over the guest's /: the shared part plus /init.
stage()
{
	stage_run_tree "$WORK/run"
	install -m 755 "$HERE/../qemu/guest-init.sh" "$WORK/run/init"
	printf '%s\n' "$GUEST_CONFIG" >>"$WORK/run/etc/vm-run/config"
}

# Boot the guest under the wall-clock watchdog: UML's own output and the
# console (con0, fd 3) go to $1, the command's (con1, fd 4) to stdout.
# The watchdog sends SIGKILL: the namespace's PID 1 (jail.sh) ignores a
# SIGTERM, and UML takes seconds to act on one.
# Writes the watchdog's PID and exit status to $WORK/timeout.pid and
# $WORK/uml-status.
boot()
{
	local conlog=$1 pid rc=0

	mkdir "$WORK/ns"
	"${PIN[@]}" timeout -s KILL "$TIMEOUT" \
		unshare --mount --pid --fork --kill-child -- \
		"$HERE/jail.sh" "$WORK/ns" "$WORK/run" "$(readlink -f "$KDIR/linux")" \
		"mem=${MEM}M" root=/dev/root rootfstype=hostfs rootflags=/root rw \
		init=/init con=null con0=null,fd:3 con1=null,fd:4 \
		uml_dir=/tmp umid=uml-run $TIME_TRAVEL_ARG $APPEND \
		</dev/null 3>>"$conlog" 4>&1 >>"$conlog" 2>&1 &
	pid=$!
	echo "$pid" >"$WORK/timeout.pid"
	# (braces: no "Killed" job report from bash when the watchdog fires)
	{ wait "$pid" || rc=$?; } 2>/dev/null
	rm -f "$WORK/timeout.pid"
	echo "$rc" >"$WORK/uml-status"
}

main()
{
	local t0 t1 t2 conlog grc

	parse_args "$@"
	check_args
	check_host

	WORK=$(mktemp -d "${TMPDIR:-/tmp}/uml-run.XXXXXX")
	t0=$(now_ms)
	stage
	t1=$(now_ms)

	conlog=${LOG:-$WORK/console.log}
	: >"$conlog" || die "cannot write --log $conlog"
	pin_cpu
	log "booting $KVER (${TIME_TRAVEL_ARG:-no time travel}; ${PIN[*]:-unpinned}; staging $((t1 - t0))ms; wall-clock timeout ${TIMEOUT}s)"
	# The watchdog runs in the background so that a signal to this
	# script is handled at once (interrupted() ends the guest).
	boot "$conlog" | stream_output &
	wait $! || true
	t2=$(now_ms)
	grc=$(cat "$WORK/uml-status" 2>/dev/null || echo 125)
	log "guest ran $(((t2 - t1) / 1000)).$(((t2 - t1) % 1000 / 100))s of wall clock"
	verdict "$conlog" "$grc"
}

main "$@"
