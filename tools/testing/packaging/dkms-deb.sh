#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The tcp-dctcp-dkms package, end to end, on this machine (root; it
# installs and purges a package, so run it where that is fine: CI, a VM):
#
#  1. make deb builds it and lintian reports no error and no warning;
#  2. dpkg -i installs it, and DKMS builds and installs tcp_dctcp for every
#     kernel whose headers are installed (/usr/src/linux-headers-*/Makefile,
#     within BUILD_EXCLUSIVE_KERNEL): the .ko is in updates/dkms/, has our
#     version and the kernel's vermagic, and depmod resolves tcp_dctcp to it;
#  3. that very .ko, built by DKMS for Debian's 6.1, boots in the QEMU
#     guest (deb-6.1) and passes the core checks (run_vm.sh --core);
#  4. dpkg --purge removes it and nothing of it is left: no package, no
#     /usr/src/tcp_dctcp-*, no DKMS tree, no tcp_dctcp under
#     /lib/modules/*/updates and no updates/ directory that was not there
#     before, no modules.dep entry.
#
# Boots one guest: run it under flock /tmp/dctcp-vm.lock like the other
# QEMU suites.  TAP on stdout; the nested guest run is shown as comments.
# Exit status 1 if a test failed.
#
# Environment: VM_KERNEL (deb-6.1).
set -u

TOP=$(cd "$(dirname "$0")/../../.." && pwd)
RUN_VM=$TOP/tools/testing/dctcp/run_vm.sh
VM_KERNEL=${VM_KERNEL:-deb-6.1}
PKG=tcp-dctcp-dkms
MOD=tcp_dctcp
TMP=
n=0
failed=0

cleanup()
{
	[[ -z $TMP ]] || rm -rf "$TMP"
}
trap cleanup EXIT

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

# check NAME CMD...: one TAP line from CMD's status, its output as comments.
check()
{
	local name=$1 out

	shift
	if out=$("$@" 2>&1); then
		[[ -z $out ]] || sed 's/^/# /' <<<"$out"
		ok "$name"
	else
		sed 's/^/# /' <<<"$out"
		not_ok "$name"
	fi
}

installed()
{
	[[ $(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null) == "ii " ]]
}

# Kernels with installed headers, in the package's BUILD_EXCLUSIVE range.
header_kernels()
{
	local dir kver range

	range=$(sed -n 's/^BUILD_EXCLUSIVE_KERNEL="\(.*\)"$/\1/p' "$TOP/dkms.conf")
	for dir in /usr/src/linux-headers-*; do
		[[ -f $dir/Makefile && -f $dir/Module.symvers ]] || continue
		kver=${dir#/usr/src/linux-headers-}
		[[ $kver =~ $range ]] && echo "$kver"
	done
}

module_file()
{
	local f

	for f in /lib/modules/"$1"/updates/dkms/$MOD.ko{,.xz,.zst,.gz}; do
		[[ -f $f ]] && { echo "$f"; return 0; }
	done
	return 1
}

built_for()
{
	local kver=$1 ko version vermagic dep

	dkms status -m $MOD -k "$kver" | grep -q ': installed' ||
		{ echo "dkms status: $(dkms status -m $MOD -k "$kver")"; return 1; }
	ko=$(module_file "$kver") || { echo "no $MOD.ko in /lib/modules/$kver/updates/dkms"; return 1; }
	version=$(modinfo -F version "$ko")
	vermagic=$(modinfo -F vermagic "$ko")
	dep=$(modinfo -k "$kver" -F filename $MOD)
	echo "$ko: version $version, vermagic $vermagic; modprobe finds $dep"
	[[ $version == "$VERSION-oot" ]] || { echo "version $version, want $VERSION-oot"; return 1; }
	[[ ${vermagic%% *} == "$kver" ]] || { echo "vermagic is not $kver"; return 1; }
	[[ $dep == "$ko" ]] || { echo "modprobe would load $dep"; return 1; }
}

# The DKMS-built module for VM_KERNEL in the guest, with the core checks.
boot_it()
{
	local kver=$1 ko rc

	ko=$(module_file "$kver") || { echo "no module for $kver"; return 1; }
	case $ko in
	*.xz) xz -dc "$ko" >"$TMP/$MOD.ko" ;;
	*.zst) zstd -qdc "$ko" >"$TMP/$MOD.ko" ;;
	*.gz) gzip -dc "$ko" >"$TMP/$MOD.ko" ;;
	*) cp "$ko" "$TMP/$MOD.ko" ;;
	esac
	# shellcheck disable=SC2086 # a list of script names
	"$RUN_VM" "$VM_KERNEL" --ko "$TMP/$MOD.ko" --core >"$TMP/vm.log" 2>&1
	rc=$?
	sed 's/^/#   /' "$TMP/vm.log"
	echo "guest: $(grep -c '^ok' "$TMP/vm.log") passed, $(grep -c '^not ok' "$TMP/vm.log") failed, exit $rc"
	((rc == 0)) && ! grep -q '^not ok' "$TMP/vm.log" && grep -q '^ok' "$TMP/vm.log"
}

nothing_left()
{
	local left=0 f

	if dpkg-query -W -f='${db:Status-Abbrev}\n' $PKG 2>/dev/null | grep -q .; then
		echo "dpkg still knows $PKG: $(dpkg-query -W -f='${db:Status-Abbrev}' $PKG)"
		left=1
	fi
	for f in /usr/src/$MOD-* /var/lib/dkms/$MOD /lib/modules/*/updates/dkms/$MOD.ko*; do
		[[ -e $f ]] && { echo "left: $f"; left=1; }
	done
	if dkms status -m $MOD 2>/dev/null | grep -q .; then
		echo "dkms status: $(dkms status -m $MOD)"
		left=1
	fi
	for f in /lib/modules/*/updates; do
		[[ -e $f ]] && ! grep -qxF "$f" "$TMP/updates.before" &&
			{ echo "left: $f (not there before the install)"; left=1; }
	done
	for f in /lib/modules/*/modules.dep; do
		grep -q "updates/dkms/$MOD" "$f" && { echo "$f still lists $MOD"; left=1; }
	done
	return $left
}

main()
{
	local deb kver kdir kernels

	[[ $(id -u) == 0 ]] || { echo "1..0 # SKIP must run as root (dpkg -i)"; exit 4; }
	echo "TAP version 13"
	TMP=$(mktemp -d)
	VERSION=$(sed -n 's/^#define DCTCP_VERSION[[:space:]]*"\(.*\)-oot"$/\1/p' "$TOP/tcp_dctcp.c")
	if ! command -v dkms >/dev/null; then
		echo "1..1"
		echo "not ok 1 - dkms missing: apt-get install dkms"
		exit 1
	fi
	mapfile -t kernels < <(header_kernels)
	echo "1..$((5 + (${#kernels[@]} ? ${#kernels[@]} : 1)))"
	echo "# kernels with headers: ${kernels[*]:-none}"

	if deb=$("$TOP/tools/packaging/build-deb.sh" "$TMP/deb" 2>"$TMP/build.log"); then
		sed 's/^/# /' "$TMP/build.log"
		ok "make deb builds $(basename "$deb"), lintian clean"
	else
		sed 's/^/# /' "$TMP/build.log"
		not_ok "make deb builds the package, lintian clean"
		exit 1
	fi

	if installed $PKG; then
		echo "# $PKG is installed (a previous run?): purging it first"
		dpkg --purge $PKG >/dev/null 2>&1
	fi
	compgen -G "/lib/modules/*/updates" >"$TMP/updates.before" || true
	check "dpkg -i installs $PKG" dpkg -i "$deb"

	((${#kernels[@]})) || not_ok "no linux-headers installed: apt-get install linux-headers-amd64"
	for kver in "${kernels[@]}"; do
		check "DKMS built and installed $MOD $VERSION for $kver" built_for "$kver"
	done

	kdir=$("$TOP/tools/testing/qemu/fetch-kernel.sh" "$VM_KERNEL") || kdir=/nonexistent
	kver=$(cat "$kdir/kver" 2>/dev/null)
	check "the DKMS-built .ko for $kver passes the core checks in the $VM_KERNEL guest" \
		boot_it "$kver"

	check "dpkg --purge removes $PKG" dpkg --purge $PKG
	check "nothing of $PKG is left (package, /usr/src, DKMS tree, updates/, modules.dep)" \
		nothing_left
	exit $failed
}

main "$@"
