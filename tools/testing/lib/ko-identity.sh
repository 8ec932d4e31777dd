#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ko-identity.sh - what a guest needs to prove that the loaded tcp_dctcp
# is the .ko the host shipped (dctcp_lib.sh's dctcp_is_loaded).  Sourced.

# ko_identity_env KO: sets KO_ENV to the harness arguments exporting the
# .ko's srcversion and GNU build ID (DCTCP_SRCVERSION, DCTCP_BUILD_ID).
ko_identity_env()
{
	# shellcheck disable=SC2034 # the result, read by the caller
	KO_ENV=(--env "DCTCP_SRCVERSION=$(modinfo -F srcversion "$1")"
		--env "DCTCP_BUILD_ID=$(readelf -n "$1" | sed -n 's/.*Build ID: *//p')")
}
