#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`, host side: build tcp_dctcp.ko for Debian's kernel, boot that
# kernel in QEMU and run demo-guest.sh inside it, on the selftests'
# topology library.
#
#   tools/demo/run.sh [deb-6.1|deb-6.12]
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
SUITE=$TOP/tools/testing/selftests/net/tcp_dctcp
KERNEL=${1:-deb-6.1}

echo "# fetching kernel $KERNEL (cached after the first run)"
kdir=$("$TOP/tools/testing/qemu/fetch-kernel.sh" "$KERNEL")
echo "# building tcp_dctcp.ko against $(cat "$kdir/kver")"
ko=$("$TOP/tools/testing/build-module.sh" "$kdir")
echo "# booting $(cat "$kdir/kver") in QEMU (TCG, no KVM: ~10 s to a shell)"
exec "$TOP/tools/testing/qemu/vm-run.sh" --kernel "$kdir" --net-kmods \
	--file "$ko:/opt/dctcp/tcp_dctcp.ko" \
	--file "$SUITE/dctcp_topo.sh:/opt/tcp_dctcp/dctcp_topo.sh" \
	--file "$TOP/tools/demo/demo-guest.sh:/usr/local/bin/dctcp-demo" \
	--timeout 300 -- dctcp-demo
