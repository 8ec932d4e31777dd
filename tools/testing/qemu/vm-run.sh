#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-run.sh - run one command as root inside a throw-away QEMU (TCG) guest
#
# Usage: vm-run.sh --kernel DIR [options] -- COMMAND...
#
#   --kernel DIR        kernel dir: vmlinuz, kver, modules/lib/modules/<kver>/
#                       (an ELF vmlinux with a PVH note is booted instead
#                       of vmlinuz when present: no TCG decompression)
#   --overlay DIR       copy DIR's contents into the guest's / (repeatable)
#   --file SRC:DST      copy host file SRC to guest path DST (repeatable)
#   --bin PATH          copy a host binary and its ldd closure to the same
#                       path in the guest (repeatable)
#   --kmod NAME         add module NAME and its depends/softdep closure
#                       (repeatable; built-in modules are skipped)
#   --net-kmods         add the usual networking modules (see NET_KMODS)
#   --env NAME=VALUE    export NAME in the guest (repeatable; CI is passed
#                       through from the host environment by default)
#   --timeout SECS      watchdog, default 900: a hang exits with 124
#   --mem MB, --smp N   guest size, default 1024 MB and 2 CPUs
#   --append "..."      extra kernel command line
#   --dmesg-check       exit 125 if the guest kernel log shows a splat
#   --log FILE          keep the guest console (kernel log) in FILE
#
# A single COMMAND argument is run as a bash script text (so pipes and
# && work); several arguments are run as one quoted command line.
# COMMAND's stdout+stderr are streamed to stdout while it runs; harness
# messages go to stderr.  Exit status: COMMAND's, or 124 (watchdog),
# 125 (guest crashed, no exit marker, or --dmesg-check found a splat).

set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${DCTCP_CACHE:-/var/cache/dctcp-oot}
QEMU=${QEMU:-qemu-system-x86_64}
PROG=vm-run
BACKEND=QEMU
# options, files, modules, output stream, splat check, verdict
# shellcheck source=../lib/vm-common.sh
. "$HERE/../lib/vm-common.sh"

SMP=2
BACKEND_OPTS[--smp]=SMP

# busybox applets that must not shadow the real tools we ship
NO_APPLETS="ip tc ss nstat ping ping6 bash iperf3 init linuxrc pgrep pkill
mountpoint jq"
# real binaries: host path -> guest path
USERLAND_BINS="/bin/bash:/bin/bash
/bin/ip:/usr/sbin/ip
/sbin/tc:/usr/sbin/tc
/bin/ss:/usr/sbin/ss
/usr/bin/nstat:/usr/sbin/nstat
/usr/bin/iperf3:/usr/bin/iperf3
/bin/ping:/bin/ping
/usr/bin/jq:/usr/bin/jq"
# shipped when the host has them (procps, util-linux)
OPTIONAL_BINS="/usr/bin/pgrep:/usr/bin/pgrep
/usr/bin/pkill:/usr/bin/pkill
/usr/bin/mountpoint:/usr/bin/mountpoint"

# ---------------------------------------------------------------------
# initramfs

# Bump when build_userland() changes.
USERLAND_LAYOUT=1

optional_bins()
{
	local spec

	for spec in $OPTIONAL_BINS; do
		[ ! -x "${spec%%:*}" ] || echo "$spec"
	done
}

# All inputs of the cached userland: if none changed, reuse the cpio.
userland_key()
{
	local spec src

	{
		echo "$USERLAND_LAYOUT $NO_APPLETS $USERLAND_BINS"
		cat "$HERE/guest-init.sh"
		for spec in $USERLAND_BINS $(optional_bins); do
			src=${spec%%:*}
			# shellcheck disable=SC2046 # paths without blanks
			stat -L -c '%n %s %Y' "$src" $(lib_closure "$src")
		done
		stat -L -c '%n %s %Y' /bin/busybox
		find /usr/lib/x86_64-linux-gnu/tc /etc/iproute2 -type f \
			-printf '%p %s %T@\n' 2>/dev/null
	} | sha256sum | cut -c1-16
}

build_userland()
{
	local root=$1 spec applet dir

	mkdir -p "$root"
	for dir in bin sbin usr/bin usr/sbin usr/local/bin usr/local/sbin \
		   lib lib64 usr/lib proc sys dev tmp run root etc/vm-run \
		   var mnt opt; do
		mkdir -p "$root/$dir"
	done
	ln -s ../run "$root/var/run"

	install_file "$root" /bin/busybox
	for applet in $(/bin/busybox --list-full); do
		case " $NO_APPLETS " in
		*" ${applet##*/} "*) continue ;;
		esac
		[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
	done
	for spec in $USERLAND_BINS $(optional_bins); do
		[ -e "$root${spec#*:}" ] && rm -f "$root${spec#*:}"
		install_bin "$root" "${spec%%:*}" "${spec#*:}"
	done
	ln -s ping "$root/bin/ping6"
	ln -s /bin/bash "$root/usr/bin/bash"
	ln -s /usr/sbin/ip "$root/sbin/ip"
	ln -s /usr/sbin/tc "$root/sbin/tc"
	ln -s /usr/sbin/ss "$root/bin/ss"
	[ -d /usr/lib/x86_64-linux-gnu/tc ] &&
		cp -a /usr/lib/x86_64-linux-gnu/tc "$root/usr/lib/x86_64-linux-gnu/"
	[ -d /etc/iproute2 ] && cp -a /etc/iproute2 "$root/etc/"

	install -m 755 "$HERE/guest-init.sh" "$root/init"
	printf 'root:x:0:0:root:/root:/bin/bash\n' >"$root/etc/passwd"
	printf 'root:x:0:\ntty:x:5:\n' >"$root/etc/group"
	printf '127.0.0.1\tlocalhost vm\n::1\t\tlocalhost ip6-localhost\n' \
		>"$root/etc/hosts"
	: >"$root/etc/fstab"
}

mkcpio()
{
	(cd "$1" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc -R 0:0 --quiet)
}

# The userland part is the same for every run: cache it by content.
userland_cpio()
{
	local key file tmp fd

	key=$(userland_key)
	file=$CACHE/initramfs/userland-$key.cpio
	if [ ! -f "$file" ]; then
		mkdir -p "$CACHE/initramfs"
		exec {fd}>"$CACHE/initramfs/.lock"
		flock "$fd"
		if [ ! -f "$file" ]; then
			log "building userland initramfs ($key)"
			build_userland "$WORK/userland"
			tmp=$(mktemp "$file.XXXXXX")
			mkcpio "$WORK/userland" >"$tmp"
			chmod 644 "$tmp"
			mv "$tmp" "$file"
			rm -rf "$WORK/userland"
			# drop userlands no run has used for a week
			find "$CACHE/initramfs" -name 'userland-*.cpio' \
				-mtime +7 -delete
		fi
		exec {fd}>&-
	fi
	touch "$file" 2>/dev/null || true	# mtime = last use
	echo "$file"
}

build_run_cpio()
{
	stage_run_tree "$WORK/run"
	mkcpio "$WORK/run" >"$WORK/run.cpio"
}

# ---------------------------------------------------------------------
# running the guest

# Prefer an uncompressed PVH-bootable vmlinux: decompressing a bzImage
# takes seconds under TCG.
kernel_image()
{
	if [ -f "$KDIR/vmlinux" ] && command -v readelf >/dev/null 2>&1 &&
	   readelf -n "$KDIR/vmlinux" 2>/dev/null |
	   grep -q 'Xen.*(0x00000012)'; then
		echo "$KDIR/vmlinux"
	else
		echo "$KDIR/vmlinuz"
	fi
}

# On a busy host the guest's TSC calibration can be off by 20x, and
# whether the TSC is kept as clocksource varies between boots: use the
# emulated HPET, which follows the host clock, so guest time is real time.
BASE_APPEND="clocksource=hpet"

run_qemu()
{
	local conlog=$1 rcs

	set +e
	timeout -k 10 "$TIMEOUT" "$QEMU" \
		-machine pc -cpu max -m "$MEM" -smp "$SMP" \
		-nodefaults -nographic -monitor none -no-reboot \
		-kernel "$(kernel_image)" -initrd "$WORK/initrd" \
		-append "console=ttyS0 panic=-1 rdinit=/init $BASE_APPEND $APPEND" \
		-chardev file,id=con,path="${conlog//,/,,}" -serial chardev:con \
		-chardev file,id=out,path=/dev/stdout -serial chardev:out \
		</dev/null | stream_output
	rcs=("${PIPESTATUS[@]}")
	set -e
	return "${rcs[0]}"
}

main()
{
	local t0 t1 t2 conlog ucpio qrc=0

	parse_args "$@"
	[ -f "$KDIR/vmlinuz" ] || die "$KDIR/vmlinuz not found (run fetch-kernel.sh?)"
	check_kdir_numbers "$SMP"
	need "$QEMU" qemu-system-x86
	need cpio cpio
	need depmod kmod
	need timeout coreutils
	need flock util-linux
	[ -x /bin/busybox ] || die "busybox missing: apt-get install busybox-static"
	need xz xz-utils
	need zstd zstd

	WORK=$(mktemp -d "${TMPDIR:-/tmp}/vm-run.XXXXXX")
	t0=$(now_ms)
	ucpio=$(userland_cpio)
	build_run_cpio
	cat "$ucpio" "$WORK/run.cpio" >"$WORK/initrd"
	t1=$(now_ms)

	conlog=${LOG:-$WORK/console.log}
	: >"$conlog" || die "cannot write --log $conlog"
	log "booting $KVER (initramfs $((t1 - t0))ms, $(($(stat -c %s "$WORK/initrd") >> 20)) MB; timeout ${TIMEOUT}s)"
	run_qemu "$conlog" || qrc=$?
	# TCG on a loaded host occasionally crashes a guest while it boots
	# (seen: 6.12 oopsing in idle during SMP bring-up under load average
	# 10). Before the command started nothing under test has run: say so
	# loudly and boot once more. A second crash is a failure.
	if [ ! -f "$WORK/status" ] && [ ! -f "$WORK/started" ] &&
	   [ $qrc -ne 124 ] && [ $qrc -ne 137 ]; then
		log "FLAKE: the guest died before the command started (qemu status $qrc); booting once more"
		console_tail "$conlog" 15
		cp "$conlog" "$conlog.flake" 2>/dev/null || true
		: >"$conlog"
		qrc=0
		run_qemu "$conlog" || qrc=$?
	fi
	t2=$(now_ms)
	log "guest ran $(((t2 - t1) / 1000)).$(((t2 - t1) % 1000 / 100))s"

	verdict "$conlog" "$qrc"
}

main "$@"
