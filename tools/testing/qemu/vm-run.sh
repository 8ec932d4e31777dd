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

NET_KMODS=(veth sch_tbf sch_red sch_netem sch_htb sch_prio sch_ingress
	   cls_u32 cls_matchall act_mirred sch_fq_codel tcp_diag inet_diag
	   udp_diag)

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
/bin/ping:/bin/ping"
# shipped when the host has them (procps, util-linux, jq)
OPTIONAL_BINS="/usr/bin/pgrep:/usr/bin/pgrep
/usr/bin/pkill:/usr/bin/pkill
/usr/bin/mountpoint:/usr/bin/mountpoint
/usr/bin/jq:/usr/bin/jq"

KDIR=
KVER=
TIMEOUT=900
MEM=1024
SMP=2
APPEND=
DMESG_CHECK=0
LOG=
OVERLAYS=()
FILES=()
BINS=()
KMODS=()
ENVS=()
CMD=()
WORK=

die()
{
	echo "vm-run: $*" >&2
	exit 125
}

log()
{
	echo "vm-run: $*" >&2
}

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup()
{
	if [ -n "$WORK" ]; then
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT

usage()
{
	sed -n '4,/^$/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

need()
{
	command -v "$1" >/dev/null 2>&1 || die "$1 missing: apt-get install $2"
}

now_ms()
{
	date +%s%3N
}

parse_args()
{
	while [ $# -gt 0 ]; do
		case "$1" in
		--kernel)	KDIR=${2:?}; shift ;;
		--overlay)	OVERLAYS+=("${2:?}"); shift ;;
		--file)		FILES+=("${2:?}"); shift ;;
		--bin)		BINS+=("${2:?}"); shift ;;
		--kmod)		KMODS+=("${2:?}"); shift ;;
		--net-kmods)	KMODS+=("${NET_KMODS[@]}") ;;
		--env)		ENVS+=("${2:?}"); shift ;;
		--timeout)	TIMEOUT=${2:?}; shift ;;
		--mem)		MEM=${2:?}; shift ;;
		--smp)		SMP=${2:?}; shift ;;
		--append)	APPEND="$APPEND ${2?}"; shift ;;
		--dmesg-check)	DMESG_CHECK=1 ;;
		--log)		LOG=${2:?}; shift ;;
		-h|--help)	usage ;;
		--)		shift; CMD=("$@"); break ;;
		*)		log "unknown option: $1"; usage ;;
		esac
		shift
	done
	[ -n "$KDIR" ] || { log "--kernel DIR is required"; usage; }
	[ ${#CMD[@]} -gt 0 ] || { log "no COMMAND given after --"; usage; }
	[ -f "$KDIR/vmlinuz" ] || die "$KDIR/vmlinuz not found (run fetch-kernel.sh?)"
	[ -f "$KDIR/kver" ] || die "$KDIR/kver not found"
	KVER=$(cat "$KDIR/kver")
	case "$TIMEOUT$MEM$SMP" in
	*[!0-9]*) die "--timeout, --mem and --smp take plain numbers" ;;
	esac
}

# ---------------------------------------------------------------------
# initramfs

# Copy a host file to the same (or the given) path under root $1.
install_file()
{
	local root=$1 src=$2 dst=${3:-$2}

	mkdir -p "$root$(dirname "$dst")"
	cp -L "$src" "$root$dst"
}

# Print the shared libraries (and the loader) a dynamic binary needs.
lib_closure()
{
	ldd "$1" 2>/dev/null | awk '
		$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// { print $1 }'
}

install_bin()
{
	local root=$1 src=$2 dst=${3:-$2} lib

	[ -x "$src" ] || die "$src missing or not executable"
	install_file "$root" "$src" "$dst"
	for lib in $(lib_closure "$src"); do
		[ -e "$root$lib" ] || install_file "$root" "$lib"
	done
}

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

kmod_tree()
{
	echo "$KDIR/modules/lib/modules/$KVER"
}

is_builtin()
{
	local name=${1//-/_} tree

	tree=$(kmod_tree)
	[ -f "$tree/modules.builtin" ] &&
		sed 's|.*/||; s|\.ko$||; s|-|_|g' "$tree/modules.builtin" |
		grep -qx "$name" && return 0
	[ "$(modinfo -b "$KDIR/modules" -k "$KVER" -F filename "$1" 2>/dev/null)" = "(builtin)" ]
}

# Print the module file(s) NAME resolves to (aliases may give several).
kmod_files()
{
	modinfo -b "$KDIR/modules" -k "$KVER" -F filename "$1" 2>/dev/null |
		grep '^/' || true
}

# Resolve --kmod names to the files of their depends+softdep closure.
resolve_kmods()
{
	local -A seen=()
	local queue=("$@") name file deps soft dep files

	while [ ${#queue[@]} -gt 0 ]; do
		name=${queue[0]}
		queue=("${queue[@]:1}")
		[ -n "${seen[${name//-/_}]:-}" ] && continue
		seen[${name//-/_}]=1
		is_builtin "$name" && continue
		files=$(kmod_files "$name")
		if [ -z "$files" ]; then
			case " ${KMODS[*]} " in
			*" $name "*)
				die "kernel module $name not found in $(kmod_tree)" ;;
			esac
			continue	# an unresolvable softdep is not fatal
		fi
		for file in $files; do
			echo "$file"
			deps=$(modinfo -F depends "$file" | tr ',' ' ')
			soft=$(modinfo -F softdep "$file" |
			       sed 's/\(pre\|post\)://g')
			for dep in $deps $soft; do
				queue+=("$dep")
			done
		done
	done
}

install_kmods()
{
	local root=$1 tree dst f rel n=0

	tree=$(kmod_tree)
	dst=$root/lib/modules/$KVER
	mkdir -p "$dst"
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		[ -f "$tree/$f" ] && cp "$tree/$f" "$dst/"
	done
	[ -f "$dst/modules.order" ] &&
		sed -i 's/\.ko\.\(xz\|zst\|gz\)$/.ko/' "$dst/modules.order"
	if [ ${#KMODS[@]} -gt 0 ]; then
		[ -d "$tree" ] || die "kernel $KDIR has no module tree ($tree)"
		resolve_kmods "${KMODS[@]}" >"$WORK/kmods"
		sort -u -o "$WORK/kmods" "$WORK/kmods"
		while read -r f; do
			rel=${f#"$tree"/}
			mkdir -p "$dst/$(dirname "$rel")"
			case "$f" in
			*.ko.xz)  xz -dc "$f" >"$dst/${rel%.xz}" ;;
			*.ko.zst) zstd -qdc "$f" >"$dst/${rel%.zst}" ;;
			*.ko.gz)  gzip -dc "$f" >"$dst/${rel%.gz}" ;;
			*)        cp "$f" "$dst/$rel" ;;
			esac
			n=$((n + 1))
		done <"$WORK/kmods"
	fi
	depmod -b "$root" "$KVER" 2>&1 | grep -v 'No such file' >&2 || true
	[ $n -eq 0 ] || log "$n kernel modules added"
}

write_cmd()
{
	local root=$1 kv

	if [ ${#CMD[@]} -eq 1 ]; then
		printf '%s\n' "${CMD[0]}" >"$root/etc/vm-run/cmd"
	else
		printf '%q ' "${CMD[@]}" >"$root/etc/vm-run/cmd"
		echo >>"$root/etc/vm-run/cmd"
	fi
	# sourced by bash (with set -a) right before the command
	{
		[ -z "${CI+x}" ] || printf 'CI=%q\n' "$CI"
		for kv in "${ENVS[@]}"; do
			case "$kv" in
			[A-Za-z_]*=*) printf '%s=%q\n' "${kv%%=*}" "${kv#*=}" ;;
			*) die "--env wants NAME=VALUE, got '$kv'" ;;
			esac
		done
	} >"$root/etc/vm-run/env"
	# read by /init itself
	echo "VMRUN_KMEMLEAK=$DMESG_CHECK" >"$root/etc/vm-run/config"
}

build_run_cpio()
{
	local root=$WORK/run spec src dst

	mkdir -p "$root/etc/vm-run"
	install_kmods "$root"
	# the kernel's own userland, if it has one (fetch-kernel.sh gives
	# 7.x guests their release's iproute2); --overlay may override it
	[ ! -d "$KDIR/userland" ] || cp -a "$KDIR/userland/." "$root/"
	for src in "${OVERLAYS[@]}"; do
		[ -d "$src" ] || die "--overlay $src is not a directory"
		cp -a "$src/." "$root/"
	done
	for spec in "${FILES[@]}"; do
		src=${spec%%:*}
		dst=${spec#*:}
		if [ "$src" = "$spec" ] || [ "${dst#/}" = "$dst" ]; then
			die "--file wants SRC:/abs/DST, got '$spec'"
		fi
		[ -f "$src" ] || die "--file: $src not found"
		case "$dst" in
		*/) dst=$dst${src##*/} ;;
		esac
		install_file "$root" "$src" "$dst"
	done
	for src in "${BINS[@]}"; do
		install_bin "$root" "$src"
	done
	write_cmd "$root"
	mkcpio "$root" >"$WORK/run.cpio"
}

# ---------------------------------------------------------------------
# running the guest

# Forward the guest's command output live; catch (and hide) the exit
# marker, writing the status it carries to $WORK/status.
stream_output()
{
	local interactive=

	# mawk reads pipes in big blocks unless told otherwise
	awk -W version 2>&1 | grep -q mawk && interactive="-W interactive"
	# shellcheck disable=SC2086 # empty or two words
	awk $interactive -v status="$WORK/status" -v started="$WORK/started" '
	{
		gsub(/\r/, "")
		if (index($0, "\001VMRUN-START\001")) {
			print "" > started
			close(started)
			next
		}
		i = index($0, "\001VMRUN-EXIT=")
		if (i) {
			if (i > 1)
				print substr($0, 1, i - 1)
			st = substr($0, i + 12)
			sub(/\001.*/, "", st)
			print st > status
			close(status)
		} else {
			print
		}
		fflush()
	}'
}

# Guest kernel log lines that mean something went wrong: BUG/WARN/oops,
# sanitizers, lockdep, leaks, hung tasks, RCU stalls, soft lockups,
# refcount_t saturation and list (CONFIG_DEBUG_LIST) corruption.
SPLAT_RE='BUG:|WARNING:|KASAN|KFENCE|UBSAN:|Oops|Call Trace|general protection fault|possible circular locking|possible recursive locking|inconsistent lock state|lockdep|kmemleak: [0-9]+ new suspected|suspected memory leak|unreferenced object|blocked for more than [0-9]+ seconds|rcu: INFO|detected stalls? on CPU|self-detected stall|soft lockup|hard LOCKUP|refcount_t: |list_(add|del) corruption|list corruption|Kernel panic'
# Known benign boot lines matching the above.
BENIGN_RE='KernelAddressSanitizer initialized|RCU lockdep checking is enabled|RETBleed: WARNING|MAX_LOCKDEP|lockdep: fixing up alternatives'

dmesg_check()
{
	local hits first

	hits=$(grep -a -n -E "$SPLAT_RE" "$1" | grep -a -v -E "$BENIGN_RE" || true)
	[ -n "$hits" ] || return 0
	first=${hits%%:*}
	log "--dmesg-check: the guest kernel log has splats:"
	# the log holds the live console and the final dmesg dump: dedupe
	printf '%s\n' "$hits" | cut -d: -f2- | awk '!seen[$0]++' |
		head -n 50 | sed 's/^/#   /' >&2
	log "first one in context:"
	awk -v first="$first" 'NR >= first && NR < first + 40 {
		if (NR > first && /^vm-run: /) exit
		print "#   " $0 }' "$1" >&2
	return 1
}

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

console_tail()
{
	log "last $2 console lines${LOG:+ (full log: $LOG)}:"
	tail -n "$2" "$1" | sed 's/^/#   /' >&2
}

main()
{
	local t0 t1 t2 conlog ucpio qrc=0 st

	parse_args "$@"
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

	if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
		log "TIMEOUT: guest killed by the watchdog after ${TIMEOUT}s"
		[ ! -f "$WORK/status" ] ||
			log "(the command had finished with status $(cat "$WORK/status"); the guest did not shut down)"
		console_tail "$conlog" 30
		exit 124
	fi
	if [ ! -f "$WORK/status" ]; then
		if grep -aq 'Kernel panic' "$conlog"; then
			log "CRASH: the guest kernel panicked (no exit marker)"
		else
			log "CRASH: guest or QEMU died without an exit marker (qemu status $qrc)"
		fi
		console_tail "$conlog" 40
		exit 125
	fi
	st=$(cat "$WORK/status")
	if [ $DMESG_CHECK -eq 1 ] && ! dmesg_check "$conlog"; then
		log "command status was $st; failing because of --dmesg-check"
		exit 125
	fi
	exit "$st"
}

main "$@"
