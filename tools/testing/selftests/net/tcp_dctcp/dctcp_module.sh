#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tcp_dctcp module identity and parameters: the module under test is the
# one loaded (ours carries a "-oot" MODULE_VERSION, Debian's in-tree one
# has no version), it registers dctcp and dctcp-reno, and its runtime
# parameters accept their whole range and reject everything else with
# EINVAL, keeping the old value and saying so in the kernel log.
#
# No network: this runs on the module alone.

set -eu
source "$(dirname "$0")/dctcp_lib.sh"
trap lib_cleanup EXIT

# param min max: the documented ranges (module contract)
PARAMS=(
	"dctcp_shift_g 0 10"
	"dctcp_alpha_on_init 0 1024"
	"dctcp_clamp_alpha_on_loss 0 1"
)

test_version()
{
	local v

	v=$(mod_version)
	diag "/sys/module/tcp_dctcp/version: '${v:-<none>}'"
	if [[ $DCTCP_IMPL == ours ]]; then
		[[ $v == *-oot ]]
	else
		[[ $v != *-oot ]]
	fi
}

test_available()
{
	local avail

	avail=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control)
	diag "available: $avail"
	cc_available dctcp || fail "dctcp not in the available list"
	if [[ $DCTCP_IMPL == intree ]]; then
		not_applicable "Debian's in-tree module registers only dctcp"
	fi
	cc_available dctcp-reno || fail "dctcp-reno not in the available list"
}

# Every parameter is there, root-writable, and within its range.
test_params_present()
{
	local entry name lo hi v mode

	for entry in "${PARAMS[@]}"; do
		read -r name lo hi <<< "$entry"
		if [[ ! -e $(param_path "$name") ]]; then
			[[ $DCTCP_IMPL == intree && $name == dctcp_clamp_alpha_on_loss ]] &&
				continue	# not in Debian's in-tree module
			fail "$name missing"
		fi
		mode=$(stat -c %a "$(param_path "$name")")
		v=$(param_get "$name")
		diag "$name = $v (mode $mode)"
		[[ $mode == 644 ]] || fail "$name mode $mode, want 644"
		(( v >= lo && v <= hi )) || fail "$name = $v outside $lo..$hi"
	done
}

# Both ends of every range are accepted and read back.
test_params_valid()
{
	local entry name lo hi v

	for entry in "${PARAMS[@]}"; do
		read -r name lo hi <<< "$entry"
		[[ -e $(param_path "$name") ]] || continue
		for v in "$hi" "$lo" "$(((lo + hi) / 2))"; do
			param_set "$name" "$v" || fail "$name=$v rejected"
			[[ $(param_get "$name") == "$v" ]] ||
				fail "$name reads $(param_get "$name") after writing $v"
		done
	done
	restore_params
}

# test_param_rejects NAME GOOD BAD: writing BAD fails with EINVAL, NAME
# still reads GOOD, and the kernel log names the parameter.
test_param_rejects()
{
	local name=$1 good=$2 bad=$3 err before after rc=0

	[[ $DCTCP_IMPL == ours ]] ||
		not_applicable "range checks and messages are ours; in-tree 6.1 checks only shift_g"
	param_set "$name" "$good"
	before=$(dmesg | wc -l)
	err=$( { printf '%s\n' "$bad" > "$(param_path "$name")"; } 2>&1 ) || rc=$?
	after=$(dmesg | wc -l)
	diag "$name <- '$bad': rc=$rc ${err##*: }"
	(( rc != 0 )) || fail "write of '$bad' succeeded"
	[[ $err == *"Invalid argument"* ]] || fail "error is not EINVAL: $err"
	[[ $(param_get "$name") == "$good" ]] ||
		fail "$name is $(param_get "$name") after the bad write, want $good"
	dmesg | tail -n $((after - before)) | grep -q "$name" ||
		fail "no kernel message naming $name"
	diag "kernel: $(dmesg | tail -n $((after - before)) | grep "$name" | tail -n 1)"
}

main()
{
	local entry name lo hi bad n

	require_dctcp
	n=$((4 + ${#PARAMS[@]} * 4))
	ktap_header "$n"

	run_test "module is the $DCTCP_IMPL tcp_dctcp (version)" test_version
	run_test "dctcp and dctcp-reno are available" test_available
	run_test "parameters present, 0644, in range" test_params_present
	run_test "parameters accept their full range" test_params_valid

	for entry in "${PARAMS[@]}"; do
		read -r name lo hi <<< "$entry"
		for bad in -1 $((hi + 1)) abc ""; do
			run_test "$name rejects '${bad}' with EINVAL, keeps old value" \
				test_param_rejects "$name" "$hi" "$bad"
		done
	done
	ktap_finish
}

main "$@"
