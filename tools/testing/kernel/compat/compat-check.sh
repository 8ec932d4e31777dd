#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of include/compat.h, no kernel needed (< 1 s): compiles it
# against stand-in kernel headers (stubs/) at chosen kernel versions.
#
#  - the supported range: older than 5.10 is refused with a clear error,
#    5.10 .. 7.3 compile without a diagnostic, newer kernels compile with
#    a "#warning" saying they are untested;
#  - the shims for old kernels (param_set_uint_minmax() as missing before
#    5.10.219, tcp_snd_cwnd(), two-argument __tcp_send_ack(), RFC 3168-only
#    ECN) behave like mainline's functions (compat_test.c), which no Debian
#    kernel can show: they all have param_set_uint_minmax();
#  - on the newest API (AccECN) compat.h replaces nothing.
#
# TAP on stdout; exit status 1 if a test failed.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../../.." && pwd)
CC=${CC:-gcc}
NEW_API=(-DSTUB_NEW_API -DCOMPAT_HAS_TCP_SND_CWND
	 -DCOMPAT_HAS_PARAM_SET_UINT_MINMAX -DCOMPAT_TCP_SEND_ACK_HAS_FLAGS)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
n=0
failed=0

ok()
{
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok()
{
	n=$((n + 1))
	failed=1
	echo "not ok $n - $1"
}

# compile VERSION [CFLAGS...]: build compat_test for kernel VERSION (a.b.c);
# compiler output in $TMP/out, binary $TMP/t.
compile()
{
	local v=$1

	shift
	IFS=. read -r major minor sub <<<"$v"
	"$CC" -std=gnu11 -Wall -Wextra -O1 -I"$HERE/stubs" -I"$TOP/include" \
		-DLINUX_VERSION_CODE=$(((major << 16) + (minor << 8) + sub)) \
		"$@" -o "$TMP/t" "$HERE/compat_test.c" >"$TMP/out" 2>&1
}

show()
{
	sed 's/^/# /' "$TMP/out"
}

# Built silently, and the checks in compat_test.c pass.
expect_clean()
{
	local name=$1 v=$2

	shift 2
	if ! compile "$v" "$@"; then
		show
		not_ok "$name: does not compile"
	elif [[ -s $TMP/out ]]; then
		show
		not_ok "$name: compiler diagnostics"
	elif ! "$TMP/t"; then
		not_ok "$name"
	else
		ok "$name"
	fi
}

main()
{
	command -v "$CC" >/dev/null || { echo "$CC missing: apt-get install gcc" >&2; exit 2; }
	echo "TAP version 13"
	echo "1..5"

	if compile 5.9.255; then
		not_ok "Linux 5.9 is refused: it compiled"
	elif grep -q 'error: #error "tcp_dctcp (out of tree) needs Linux 5.10 or newer"' "$TMP/out"; then
		ok "Linux 5.9 is refused with a clear error"
	else
		show
		not_ok "Linux 5.9 is refused with a clear error"
	fi

	expect_clean "Linux 5.10 (old API): no diagnostic, shims behave like mainline" 5.10.0
	expect_clean "Linux 7.3 (AccECN API): no diagnostic, compat.h replaces nothing" \
		7.3.255 "${NEW_API[@]}"

	if ! compile 7.4.0 "${NEW_API[@]}"; then
		show
		not_ok "Linux 7.4 builds with an untested-kernel warning: it does not build"
	elif grep -q 'warning: #warning "tcp_dctcp (out of tree) is tested on Linux 5.10 .. 7.3 only: untested kernel"' "$TMP/out"; then
		ok "Linux 7.4 builds with an untested-kernel warning"
	else
		show
		not_ok "Linux 7.4 builds with an untested-kernel warning: no warning"
	fi

	if compile 7.4.0 "${NEW_API[@]}" -Werror; then
		not_ok "under -Werror (CONFIG_WERROR) Linux 7.4 is refused: it built"
	else
		ok "under -Werror (CONFIG_WERROR) Linux 7.4 is refused"
	fi
	exit $failed
}

main "$@"
