#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Can the tcp_dctcp tests fail?  Build deliberately broken copies of the
# module (one rule of the control law, the CE echo, the fallback, the
# registration or the reporting changed each) and check that the suites
# notice every one.  One TAP line per mutant, "ok" when it was killed,
# naming the suite that killed it.
#
#   mutants.sh [-l] [-a] [-f] [MUTANT...]   (default: all of them)
#     -l  list the mutants and exit
#     -a  run every killer stage of a mutant, not only up to the first kill
#         (shows that each listed suite bites on its own)
#     -f  ignore cached verdicts
#   mutants.sh --canary    the one fast mutant `make check` runs
#
# A mutant is a perl substitution on a scratch copy of the sources (it
# must change the file, or the mutant is reported as stale).  Its killer
# stages run in order until one fails:
#   unit            tools/testing/unit against the mutated dctcp_math.h
#   qemu:S1,S2      run_vm.sh deb-6.1 --ko <mutant built for it> S1 S2
#                   (QEMU under flock $VM_LOCK, --dmesg-check, the oracle)
#   uml:S1,S2       run_vm.sh uml --ko <mutant built for it> S1 S2
# A verdict is cached under $CACHE/dctcp-mutants/ by the hash of the
# mutated sources, the stage and the suite, so a rerun after an unrelated
# change costs nothing.
#   env: DCTCP_CACHE, VM_LOCK (default /tmp/dctcp-vm.lock, empty: no lock)
set -eu
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
readonly HERE TOP
readonly CACHE=${DCTCP_CACHE:-/var/cache/dctcp-oot}
readonly VERDICTS=$CACHE/dctcp-mutants
readonly VM_LOCK=${VM_LOCK-/tmp/dctcp-vm.lock}
readonly SOURCES=(Kbuild tcp_dctcp.c include)
readonly CANARY=no-fallback

# name|file|perl substitution (perl -0pe)|killer stages|what it breaks
readonly MUTANTS=(
	'alpha-never-updated|tcp_dctcp.c|s/\tWRITE_ONCE\(ca->alpha_fp, alpha\);\n//|qemu:dctcp_marking.sh qemu:dctcp_trace.sh|alpha never updated'
	'ssthresh-fixed-alpha|tcp_dctcp.c|s/dctcp_reduced_cwnd\(tcp_snd_cwnd\(tp\), ca->alpha_fp\)/dctcp_reduced_cwnd(tcp_snd_cwnd(tp), DCTCP_MAX_ALPHA_FP \/ 2)/|qemu:dctcp_trace.sh|ssthresh ignores alpha (fixed alpha 1/2)'
	'halve-on-ce|tcp_dctcp.c|s/return dctcp_reduced_cwnd\(tcp_snd_cwnd\(tp\), ca->alpha_fp\);/return max(tcp_snd_cwnd(tp) >> 1U, 2U);/|qemu:dctcp_trace.sh|halves on every CE mark, like RFC 3168'
	'g-off-by-one|tcp_dctcp.c|s/(dctcp_next_alpha\(ca->alpha_fp, delivered_ce, delivered,\s*)shift_g\)/${1}shift_g + 1)/|qemu:dctcp_trace.sh|EWMA gain g/2 instead of g'
	'no-decay-to-zero|include/dctcp_math.h|s/return alpha_fp - \(decay \? decay : alpha_fp\);/return alpha_fp - decay;/|unit|alpha sticks above 0 after marking stops'
	'reduction-full-alpha|include/dctcp_math.h|s/\(DCTCP_ALPHA_FP_SHIFT \+ 1\)\)/(DCTCP_ALPHA_FP_SHIFT))/|unit|cwnd * (1 - alpha) instead of (1 - alpha / 2)'
	'clamp-ignored|tcp_dctcp.c|s/if \(READ_ONCE\(dctcp_clamp_alpha_on_loss\)\)/if (0 \&\& READ_ONCE(dctcp_clamp_alpha_on_loss))/|qemu:dctcp_alpha.sh qemu:dctcp_trace.sh|dctcp_clamp_alpha_on_loss ignored'
	'no-fallback|tcp_dctcp.c|s/\n\tdctcp_fall_back\(sk\);\n/\n/|qemu:dctcp_select.sh|no fallback to dctcp-reno without ECN'
	'ce-no-flush|include/tcp_dctcp.h|s/\t\t\t__tcp_send_ack\(sk, \*prior_rcv_nxt, 0\);\n//|qemu:dctcp_marking.sh|delayed ACK not flushed when the CE state flips'
	'loss-twice|tcp_dctcp.c|s/if \(new_state == TCP_CA_Recovery && new_state != old_state\)/if (new_state == TCP_CA_Loss \x7c\x7c (new_state == TCP_CA_Recovery \&\& new_state != old_state))/|qemu:dctcp_trace.sh|an RTO reacted to twice (state and event)'
	'info-units|tcp_dctcp.c|s/dctcp_ab_tot = tp->mss_cache \*\s*\(/dctcp_ab_tot = (/|qemu:dctcp_marking.sh|ab_tot in segments, not bytes'
	'alpha-on-init-ignored|tcp_dctcp.c|s/dctcp_alpha_to_fp\(READ_ONCE\(dctcp_alpha_on_init\)\)/DCTCP_MAX_ALPHA_FP/|qemu:dctcp_alpha.sh|dctcp_alpha_on_init ignored'
	'shift-g-range|tcp_dctcp.c|s/dctcp_param_set_range\(val, kp, 0, DCTCP_MAX_SHIFT_G\)/dctcp_param_set_range(val, kp, 0, DCTCP_MAX_SHIFT_G + 1)/|qemu:dctcp_module.sh|dctcp_shift_g 11 accepted (the syzkaller shift)'
	'reno-unregistered-always|tcp_dctcp.c|s/\tif \(dctcp_reno_registered\)\n\t\ttcp_unregister/\ttcp_unregister/|qemu:dctcp_register.sh|exit unregisters a dctcp-reno it does not own'
	'no-undo|tcp_dctcp.c|s/\t\.undo_cwnd\t= dctcp_cwnd_undo,\n//|qemu:dctcp_module.sh|no undo_cwnd: the kernel refuses to register'
)

WORK=
ALL_STAGES=0
FORCE=0
N=0
SURVIVED=0
declare -A KO_CACHE=()

cleanup()
{
	[[ -z $WORK ]] || rm -rf "$WORK"
}
trap cleanup EXIT

usage()
{
	sed -n '4,27s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

field()
{
	local IFS='|' f

	read -ra f <<< "$1"
	echo "${f[$2]}"
}

list_mutants()
{
	local m

	for m in "${MUTANTS[@]}"; do
		printf '%-26s %-44s %s\n' "$(field "$m" 0)" "$(field "$m" 4)" "$(field "$m" 3)"
	done
}

# mutate NAME FILE SUBST: the sources with SUBST applied to FILE, in
# $WORK/NAME/src; fails if SUBST changes nothing.
mutate()
{
	local name=$1 file=$2 subst=$3 dir=$WORK/$1/src

	mkdir -p "$dir"
	(cd "$TOP" && cp -r "${SOURCES[@]}" "$dir/")
	perl -0pi -e "$subst" "$dir/$file"
	if cmp -s "$TOP/$file" "$dir/$file"; then
		echo "# $name: the substitution no longer applies to $file (stale mutant)" >&2
		return 1
	fi
	diff -u "$TOP/$file" "$dir/$file" | sed -n '3,$s/^/# /p' | grep '^# [-+]' >&2 || true
}

# kernel_dir KERNEL: the cached kernel run_vm.sh would boot.
kernel_dir()
{
	case $1 in
	qemu) "$TOP/tools/testing/qemu/fetch-kernel.sh" deb-6.1 ;;
	uml) "$TOP/tools/testing/uml/build-uml.sh" ;;
	esac
}

# mutant_ko NAME BACKEND: the mutant built for the back end's kernel.
mutant_ko()
{
	local name=$1 backend=$2 kdir

	if [[ -z ${KO_CACHE[$name.$backend]:-} ]]; then
		kdir=$(kernel_dir "$backend")
		KO_CACHE[$name.$backend]=$("$HERE/build-testmod.sh" "$kdir" \
			"$WORK/$name/src" 2> "$WORK/$name/build.log" |
			grep '/tcp_dctcp\.ko$') ||
			{ cat "$WORK/$name/build.log" >&2; return 1; }
	fi
	echo "${KO_CACHE[$name.$backend]}"
}

# stage NAME STAGE LOG: run one killer stage; 0 = the mutant survived it.
stage()
{
	local name=$1 stage=$2 log=$3 backend scripts ko lock=()

	case $stage in
	unit)
		mkdir -p "$WORK/$name/unit"
		make -s -C "$TOP/tools/testing/unit" INCLUDE="$WORK/$name/src/include" \
			OUTPUT="$WORK/$name/unit" check > "$log" 2>&1
		;;
	qemu:*|uml:*)
		backend=${stage%%:*}
		scripts=${stage#*:}
		ko=$(mutant_ko "$name" "$backend") || return 0	# no .ko: nothing killed
		[[ $backend == uml || -z $VM_LOCK ]] || lock=(flock "$VM_LOCK")
		# shellcheck disable=SC2086 # a comma-separated list of scripts
		"${lock[@]}" "$HERE/run_vm.sh" "$([[ $backend == qemu ]] && echo deb-6.1 || echo uml)" \
			--ko "$ko" ${scripts//,/ } > "$log" 2>&1
		;;
	*)
		echo "# unknown stage $stage" >&2
		return 0
		;;
	esac
}

# verdict_key NAME STAGE: what a cached verdict depends on.
verdict_key()
{
	{
		echo "$2"
		(cd "$WORK/$1/src" && find . -type f -print0 | sort -z | xargs -0 sha256sum)
		(cd "$TOP" && sha256sum tools/testing/dctcp/*.sh tools/testing/unit/*.c \
			tools/testing/selftests/net/tcp_dctcp/*)
	} | sha256sum | cut -c1-16
}

# run_mutant SPEC: one TAP line.
run_mutant()
{
	local spec=$1 name file subst stages what st key log killers=()

	name=$(field "$spec" 0) file=$(field "$spec" 1) subst=$(field "$spec" 2)
	stages=$(field "$spec" 3) what=$(field "$spec" 4)
	N=$((N + 1))
	echo "# ---- mutant $name: $what"
	if ! mutate "$name" "$file" "$subst"; then
		SURVIVED=$((SURVIVED + 1))
		echo "not ok $N - $name: stale, the substitution does not apply"
		return
	fi
	for st in $stages; do
		key=$(verdict_key "$name" "$st")
		log=$VERDICTS/$name-$key.log
		if (( FORCE )) || [[ ! -f $log.verdict ]]; then
			mkdir -p "$VERDICTS"
			# Killed means a test said "not ok", not that the
			# harness gave up.
			if ! stage "$name" "$st" "$log.tmp" &&
			   grep -q '^not ok' "$log.tmp"; then
				echo killed > "$log.verdict"
			else
				echo survived > "$log.verdict"
			fi
			mv "$log.tmp" "$log"
		else
			echo "# $name: $st: cached verdict ($log)"
		fi
		if [[ $(cat "$log.verdict") == killed ]]; then
			killers+=("$st")
			grep -E '^not ok' "$log" | head -n 3 | sed "s/^/# $st: /"
			(( ALL_STAGES )) || break
		else
			echo "# $name: survived $st"
		fi
	done
	if (( ${#killers[@]} )); then
		echo "ok $N - $name killed by ${killers[*]}"
	else
		SURVIVED=$((SURVIVED + 1))
		echo "not ok $N - $name survived $stages"
	fi
}

main()
{
	local want=() m name start=$SECONDS

	while (( $# )); do
		case $1 in
		-l) list_mutants; return 0 ;;
		-a) ALL_STAGES=1 ;;
		-f) FORCE=1 ;;
		--canary) want+=("$CANARY") ;;
		-h|--help) usage ;;
		-*) usage ;;
		*) want+=("$1") ;;
		esac
		shift
	done
	WORK=$(mktemp -d /tmp/dctcp-mutants.XXXXXX)
	local selected=()
	for m in "${MUTANTS[@]}"; do
		name=$(field "$m" 0)
		if (( ${#want[@]} )) && ! printf '%s\n' "${want[@]}" | grep -qxF "$name"; then
			continue
		fi
		selected+=("$m")
	done
	(( ${#selected[@]} )) || { echo "no such mutant: ${want[*]}" >&2; return 2; }
	echo "TAP version 13"
	echo "1..${#selected[@]}"
	for m in "${selected[@]}"; do
		run_mutant "$m"
	done
	echo "# $((N - SURVIVED)) of $N mutants killed in $((SECONDS - start)) s"
	(( SURVIVED == 0 ))
}

main "$@"
