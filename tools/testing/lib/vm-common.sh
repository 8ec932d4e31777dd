# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# vm-common.sh - what the two guest back ends share: the QEMU one
# (tools/testing/qemu/vm-run.sh) and the User-Mode Linux one
# (tools/testing/uml/uml-run.sh).  Sourced, never run.
#
#   - the command line (parse_args; a back end adds its own options with
#     BACKEND_OPTS[--name]=VARIABLE before calling it)
#   - the per-run files of the guest: --overlay, --file, --bin, the
#     --kmod closure with depmod, the command and its environment
#     (stage_run_tree, see tools/testing/qemu/guest-init.sh)
#   - the live output stream with its start/exit markers (stream_output)
#   - the kernel log splat check (SPLAT_RE, BENIGN_RE, dmesg_check)
#   - the verdict: exit status, 124 (watchdog) or 125 (crash, splat)
#
# The back end sets PROG (the prefix of its messages) and BACKEND (what
# runs the guest, for messages) before sourcing.

: "${PROG:?set PROG before sourcing vm-common.sh}"
: "${BACKEND:?set BACKEND before sourcing vm-common.sh}"

NET_KMODS=(veth sch_tbf sch_red sch_netem sch_htb sch_prio sch_ingress
	   cls_u32 cls_matchall act_mirred sch_fq_codel tcp_diag inet_diag
	   udp_diag)

KDIR=
KVER=
TIMEOUT=900
MEM=1024
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
# option -> variable, for the back end's own options taking a value
declare -A BACKEND_OPTS=()

die()
{
	echo "$PROG: $*" >&2
	exit 125
}

log()
{
	echo "$PROG: $*" >&2
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
	local var

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
		--append)	APPEND="$APPEND ${2?}"; shift ;;
		--dmesg-check)	DMESG_CHECK=1 ;;
		--log)		LOG=${2:?}; shift ;;
		-h|--help)	usage ;;
		--)		shift; CMD=("$@"); break ;;
		*)
			var=${BACKEND_OPTS[$1]:-}
			[ -n "$var" ] || { log "unknown option: $1"; usage; }
			printf -v "$var" '%s' "${2:?}"
			shift
			;;
		esac
		shift
	done
	[ -n "$KDIR" ] || { log "--kernel DIR is required"; usage; }
	[ ${#CMD[@]} -gt 0 ] || { log "no COMMAND given after --"; usage; }
}

# The kernel dir's kver; TIMEOUT and MEM (and the back end's numbers,
# given as further arguments) must be plain numbers.
check_kdir_numbers()
{
	[ -f "$KDIR/kver" ] || die "$KDIR/kver not found"
	KVER=$(cat "$KDIR/kver")
	case "$TIMEOUT$MEM$*" in
	*[!0-9]*) die "--timeout, --mem and --smp take plain numbers" ;;
	esac
}

# ---------------------------------------------------------------------
# the guest's files

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

# /etc/vm-run/{cmd,env,config}: see guest-init.sh
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

# The per-run files of the guest, as a tree under $1 to lay over its /.
stage_run_tree()
{
	local root=$1 spec src dst

	mkdir -p "$root/etc/vm-run"
	install_kmods "$root"
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
}

# ---------------------------------------------------------------------
# the guest's output and verdict

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

console_tail()
{
	log "last $2 console lines${LOG:+ (full log: $LOG)}:"
	tail -n "$2" "$1" | sed 's/^/#   /' >&2
}

# verdict CONSOLE_LOG GUEST_STATUS: exit with the command's status, 124
# if the watchdog fired (GUEST_STATUS 124 or 137), 125 if the guest died
# without an exit marker or --dmesg-check found a splat.
verdict()
{
	local conlog=$1 grc=$2 st

	if [ "$grc" -eq 124 ] || [ "$grc" -eq 137 ]; then
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
			log "CRASH: guest or $BACKEND died without an exit marker (${BACKEND,,} status $grc)"
		fi
		console_tail "$conlog" 40
		exit 125
	fi
	st=$(cat "$WORK/status")
	if [ "$DMESG_CHECK" -eq 1 ] && ! dmesg_check "$conlog"; then
		log "command status was $st; failing because of --dmesg-check"
		exit 125
	fi
	exit "$st"
}
