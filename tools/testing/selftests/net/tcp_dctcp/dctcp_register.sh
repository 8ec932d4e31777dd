#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Registration of "dctcp" and "dctcp-reno" when a name is already taken.
# What the module registers and unregisters is read from the kernel itself:
# kprobe events on tcp_register_congestion_control() (name and return
# value) and tcp_unregister_congestion_control() (name), recorded in a
# private trace instance around each insmod/rmmod.
#
#  - Debian's in-tree tcp_dctcp loaded: insmod of ours fails with EEXIST
#    in the module loader (same module name), before our init runs: no
#    registration at all, the in-tree "dctcp" keeps working.
#  - another module holds "dctcp": our init fails with EEXIST after one
#    attempt, on "dctcp"; "dctcp-reno" is never registered (a socket could
#    otherwise grab it while the failing module's code is freed), nothing
#    is unregistered, and the kernel log says what to do.
#  - another module holds "dctcp-reno": ours loads with a warning, "dctcp"
#    still falls back to its own dctcp-reno, and rmmod of ours
#    unregisters only "dctcp": the other module's dctcp-reno stays usable.
#
# The helper module (tools/testing/dctcp/clash) is $DCTCP_CLASH_KO; the
# in-tree module comes from the guest's module tree (Debian kernels).
# Leaves our module loaded, as it found it.

set -eu
shopt -s inherit_errexit
source "$(dirname "$0")/dctcp_lib.sh"
trap register_cleanup EXIT

DCTCP_CLASH_KO=${DCTCP_CLASH_KO:-/opt/dctcp/dctcp_clash.ko}
TRACEFS=/sys/kernel/tracing
INST=$TRACEFS/instances/dctcp_register
PROBE_GROUP=dctcp_register
CLASH=/sys/module/dctcp_clash

# probes_on [NAME_OFFSET]: record register/unregister calls (with the
# name when the offset of tcp_congestion_ops.name is known) in $INST.
probes_on()
{
	local off=${1:-} name=''

	[[ -z $off ]] || name=" name=+$off(\$arg1):string"
	probes_off
	mkdir "$INST"
	{
		echo "p:$PROBE_GROUP/reg tcp_register_congestion_control$name"
		echo "r:$PROBE_GROUP/reg_ret tcp_register_congestion_control ret=\$retval:s32"
		echo "p:$PROBE_GROUP/unreg tcp_unregister_congestion_control$name"
	} >> "$TRACEFS/kprobe_events"
	echo 1 > "$INST/events/$PROBE_GROUP/enable"
}

# probes_off: remove the instance and the probes (each write is one
# command: one failing must not keep the others from running).
probes_off()
{
	local p

	if [[ -d $INST ]]; then
		echo 0 > "$INST/events/$PROBE_GROUP/enable"
		rmdir "$INST"
	fi
	for p in reg reg_ret unreg; do
		grep -q ":$PROBE_GROUP/$p " "$TRACEFS/kprobe_events" 2>/dev/null || continue
		echo "-:$PROBE_GROUP/$p" >> "$TRACEFS/kprobe_events"
	done
}

# calls: what was recorded, in order, one line each: "reg NAME" (a call),
# "ret N" (its return value), "unreg NAME"; NAME is empty without the
# offset.
calls()
{
	sed -n -e 's/.* reg: ([^)]*)\( name="\([^"]*\)"\)\{0,1\}$/reg \2/p' \
	       -e 's/.* reg_ret: ([^)]*) ret=\(-\{0,1\}[0-9]*\)$/ret \1/p' \
	       -e 's/.* unreg: ([^)]*)\( name="\([^"]*\)"\)\{0,1\}$/unreg \2/p' \
		"$INST/trace"
}

# expect_calls WANT: the calls recorded are WANT ("call;call;..."), or
# WANT repeated: busybox insmod tries init_module() again when
# finit_module() fails, and so runs a failing init twice.
expect_calls()
{
	local want=$1 got again

	got=$(calls | paste -sd ';' -)
	diag "calls: ${got:-none}"
	again=$want
	while [[ -n $want && ${#again} -lt ${#got} ]]; do
		again="$again;$want"
	done
	[[ $got == "$again" ]] ||
		fail "register/unregister calls '${got:-none}', want '${want:-none}' (once or repeated)"
}

require_probes()
{
	[[ -w $TRACEFS/kprobe_events ]] ||
		skip_because "no $TRACEFS/kprobe_events: kernel without CONFIG_KPROBE_EVENTS or tracefs not mounted"
}

require_clash()
{
	[[ $DCTCP_IMPL == ours ]] || not_applicable "tests our module's registration"
	[[ -r $DCTCP_CLASH_KO ]] ||
		skip_because "$DCTCP_CLASH_KO missing: build tools/testing/dctcp/clash (tools/testing/dctcp/build-testmod.sh) and ship it"
	require_probes
}

load_clash()
{
	insmod "$DCTCP_CLASH_KO" name="$1" || fail "cannot load dctcp_clash name=$1"
	cc_available "$1" || fail "dctcp_clash did not register $1"
}

unload_clash()
{
	[[ ! -d $CLASH ]] || rmmod dctcp_clash
}

register_cleanup()
{
	set +e
	probes_off
	unload_clash
	lib_cleanup
}

refcnt_is_zero()
{
	[[ $(mod_refcnt) == 0 ]]
}

ours_unload()
{
	[[ ! -d $MOD ]] || rmmod tcp_dctcp || fail "cannot unload tcp_dctcp"
}

# insmod_ours: insmod our module; sets INSMOD_RC and INSMOD_ERR.
insmod_ours()
{
	INSMOD_RC=0
	INSMOD_ERR=$(insmod "$DCTCP_KO" 2>&1) || INSMOD_RC=$?
	diag "insmod $DCTCP_KO: rc $INSMOD_RC ${INSMOD_ERR:+: $INSMOD_ERR}"
}

# Kernel log lines of tcp_dctcp since the last dmesg_mark.
dmesg_mark()
{
	DMESG_LINES=$(dmesg | wc -l)
}

dmesg_new()
{
	dmesg | tail -n +$((DMESG_LINES + 1)) | grep 'tcp_dctcp: ' || true
}

# Put our module back, whatever a test left behind.
restore_ours()
{
	probes_off
	unload_clash
	dctcp_load && dctcp_is_loaded || diag "could not reload our tcp_dctcp"
}

intree_available()
{
	find "/lib/modules/$(uname -r)" -name 'tcp_dctcp.ko*' 2>/dev/null | grep -q .
}

test_intree_loaded()
{
	[[ $DCTCP_IMPL == ours ]] || not_applicable "tests loading ours over the in-tree module"
	intree_available ||
		not_applicable "no in-tree tcp_dctcp module in this kernel (Debian's is shipped with --kmod tcp_dctcp)"
	require_probes
	ours_unload
	modprobe tcp_dctcp || fail "modprobe of the in-tree tcp_dctcp failed"
	[[ ! -e $MOD/version ]] || fail "the loaded tcp_dctcp has a version: not the in-tree one"

	probes_on
	insmod_ours
	(( INSMOD_RC != 0 )) || fail "insmod of ours succeeded over the in-tree module"
	[[ $INSMOD_ERR == *"File exists"* ]] || fail "insmod error is not EEXIST"
	# the module loader refused it: our init never ran
	expect_calls ""
	cc_available dctcp || fail "in-tree dctcp no longer registered"
	[[ ! -e $MOD/version ]] || fail "tcp_dctcp is now ours?"
	! cc_available dctcp-reno || fail "dctcp-reno registered"
	probes_off
	rmmod tcp_dctcp
}

test_dctcp_taken()
{
	local msg

	require_clash
	ours_unload
	load_clash dctcp
	probes_on "$(cat "$CLASH/parameters/name_offset")"
	dmesg_mark
	insmod_ours
	(( INSMOD_RC != 0 )) || fail "insmod succeeded with dctcp taken"
	[[ $INSMOD_ERR == *"File exists"* ]] || fail "insmod error is not EEXIST"
	expect_calls "reg dctcp;ret -17"
	! cc_available dctcp-reno || fail "dctcp-reno registered after the failed load"
	[[ ! -d $MOD ]] || fail "tcp_dctcp present after a failed init"
	msg=$(dmesg_new)
	diag "kernel log: ${msg:-none}"
	[[ $msg == *'"dctcp" is already registered'* ]] || fail "no message naming the clash"
	[[ $msg == *rmmod* ]] || fail "the message does not say how to fix it"
}

# The connection falls back to dctcp-reno: ours, not the other module's.
fallback_flow()
{
	local out=$TMPD/fb

	RCV_CC=reno topo_setup
	in_ns "$rcv" sysctl -qw net.ipv4.tcp_ecn=0 net.ipv4.tcp_congestion_control=reno
	flow_server
	flow_client "$out" -c dctcp -n 100000 $RCV4 "$PORT" ||
		fail "flow failed: $(cat "$out.err")"
	[[ $(client_cc "$out") == dctcp-reno ]] || fail "fell back to '$(client_cc "$out")'"
	(( $(cat "$CLASH/refcnt") == 0 )) || fail "the other module's dctcp-reno was used"
	topo_reset
}

# A connection that asks for dctcp-reno gets the other module's.
hold_reno()
{
	local out=$TMPD/reno

	RCV_CC=reno topo_setup
	flow_server
	flow_client_bg "$out" -H -c dctcp-reno $RCV4 "$PORT"
	busywait 10000 grep -q '^holding' "$out" ||
		fail "no dctcp-reno connection: $(cat "$out.err")"
	diag "dctcp_clash refcnt with a dctcp-reno socket: $(cat "$CLASH/refcnt")"
	(( $(cat "$CLASH/refcnt") >= 1 )) || fail "dctcp-reno socket does not use dctcp_clash"
	topo_reset
}

test_reno_taken()
{
	local msg

	require_clash
	ours_unload
	load_clash dctcp-reno
	probes_on "$(cat "$CLASH/parameters/name_offset")"
	dmesg_mark
	insmod_ours
	(( INSMOD_RC == 0 )) || fail "insmod failed with only dctcp-reno taken"
	msg=$(dmesg_new)
	diag "kernel log: ${msg:-none}"
	[[ $msg == *'"dctcp-reno" is already registered'* ]] || fail "no warning about dctcp-reno"
	expect_calls "reg dctcp;ret 0;reg dctcp-reno;ret -17"
	cc_available dctcp || fail "dctcp not registered"
	fallback_flow
	busywait 10000 refcnt_is_zero || fail "tcp_dctcp refcnt stuck at $(mod_refcnt)"

	probes_on "$(cat "$CLASH/parameters/name_offset")"
	rmmod tcp_dctcp || fail "rmmod of ours failed"
	expect_calls "unreg dctcp"
	cc_available dctcp-reno || fail "the other module's dctcp-reno is gone"
	! cc_available dctcp || fail "dctcp still registered"
	hold_reno
}

main()
{
	require_dctcp
	ktap_header 3

	run_test "in-tree tcp_dctcp loaded: insmod of ours fails (EEXIST), init never runs" \
		test_intree_loaded
	restore_ours
	run_test "dctcp taken: init fails (EEXIST) on dctcp alone, dctcp-reno never registered, log says how to fix" \
		test_dctcp_taken
	restore_ours
	run_test "dctcp-reno taken: loads with a warning, falls back to its own, rmmod leaves the other's" \
		test_reno_taken
	restore_ours
	ktap_finish
}

main "$@"
