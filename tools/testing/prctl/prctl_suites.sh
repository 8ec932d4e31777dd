#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the PR_SET_MM_MAP suites named on the command line, each framed by
# "### suite NAME" / "### end NAME rc=N" lines that run_all.sh parses.
# Used inside vm-run.sh guests (binaries in /opt/prctl) and on the host
# (PRCTL_BIN_DIR pointing at a directory with the same files).
#
#   selftest         set_mm_map_test (kselftest harness)
#   legacy-upstream  set_mm_legacy_test, today's rules expected
#   legacy-3.17      the same, 3.17's per-field rules expected (base)
#   fuzz             set_mm_map_fuzz -n $FUZZ_COUNT (default 2000)
#   mm_map-present   tools/mm_map test, PR_SET_MM_MAP expected
#   mm_map-absent    same, expecting the legacy fallback (base kernel)
#   criu-map         criu dump/restore without CAP_SYS_RESOURCE: the
#                    restorer must use PR_SET_MM_MAP
#   criu-legacy      same, it must fail there and restore through the
#                    legacy PR_SET_MM with the capability
set -eu

readonly DIR="${PRCTL_BIN_DIR:-/opt/prctl}"
# What criu needs when the kernel has it as modules (Debian kernels).
readonly CRIU_KMODS="inet_diag tcp_diag udp_diag unix_diag af_packet_diag
netlink_diag crc32c_generic nf_tables tun veth"

# A failing suite is reported, not fatal: the next one still runs.
run_suite() {
	local name="$1" rc=0
	shift
	echo "### suite $name"
	"$@" || rc=$?
	echo "### end $name rc=$rc"
}

load_criu_kmods() {
	local m
	[ -d "/lib/modules/$(uname -r)" ] || return 0
	for m in $CRIU_KMODS; do
		modprobe "$m" 2>/dev/null || echo "# modprobe $m failed (built in?)"
	done
}

main() {
	local s
	for s in "$@"; do
		case "$s" in
		selftest)
			run_suite "$s" "$DIR/set_mm_map_test" ;;
		legacy-upstream|legacy-3.17)
			run_suite "$s" env MM_LEGACY_RULES="${s#legacy-}" \
				"$DIR/set_mm_legacy_test" ;;
		fuzz)
			run_suite "$s" "$DIR/set_mm_map_fuzz" -n "${FUZZ_COUNT:-2000}" -v ;;
		mm_map-present|mm_map-absent)
			run_suite "$s" env EXPECT_MM_MAP="${s#mm_map-}" \
				"$DIR/test_mm_map.sh" "$DIR/mm_map" ;;
		criu-map|criu-legacy)
			load_criu_kmods
			run_suite "$s" env EXPECT_MM_PATH="${s#criu-}" \
				CRIU_TARGET="$DIR/criu_target" \
				"$DIR/criu_restore.sh" ;;
		*)
			echo "### suite $s"
			echo "not ok 1 - unknown suite $s"
			echo "### end $s rc=2" ;;
		esac
	done
}

main "$@"
