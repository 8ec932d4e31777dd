#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian 12 packages that building, testing, the demo and the
# benchmark need.  Idempotent: does nothing (and needs no network) when every
# package is already installed.  Needs root for apt-get.
#
#   scripts/install-deps.sh [--print]
#
# --print only lists the missing packages.
set -eu

PACKAGES=(
	# building the module and kernels
	build-essential bc bison flex libelf-dev libssl-dev dwarves kmod
	cpio xz-utils zstd libcap-dev
	linux-headers-amd64 linux-headers-6.12-amd64 linux-source-6.1
	# the QEMU harness and its guest userland
	qemu-system-x86 busybox-static iproute2 iperf3 iputils-ping bash jq
	# style checks
	shellcheck
	# checkpoint/restore client and plots
	criu gnuplot-nox
)

missing=()
for pkg in "${PACKAGES[@]}"; do
	[[ $pkg == \#* ]] && continue
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
	[[ $status == installed ]] || missing+=("$pkg")
done

if (( ${#missing[@]} == 0 )); then
	exit 0
fi

if [[ ${1:-} == --print ]]; then
	printf '%s\n' "${missing[@]}"
	exit 0
fi

echo "install-deps: missing Debian packages: ${missing[*]}" >&2
if (( EUID != 0 )); then
	echo "install-deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: installed ${missing[*]}" >&2
