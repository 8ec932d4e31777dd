# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Which compiler builds modules for a cached kernel: the one that built the
# kernel (the gcc-N of the headers' CONFIG_CC_VERSION_TEXT), from the
# kernel's own Debian release (KERNEL_DIR/suite, written by
# fetch-kernel.sh): this host's for the host's release and for kernels
# without a suite file (the custom ones), else that release's chroot
# (chroot.sh; experimental uses sid's). A different major version is
# refused. Sourced by tools/testing/build-module.sh and
# tools/testing/dctcp/build-testmod.sh, which define die STATUS MESSAGE.
#
#   choose_toolchain KERNEL_DIR   sets tc_suite, tc_cc and tc_desc
#   in_toolchain CMD...           runs CMD with that toolchain
#
# tc_desc names the compiler and the kernel's: it goes into build logs and
# into build hashes (another toolchain is another build).

TC_CHROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/chroot.sh
tc_suite=""	# the toolchain chroot's release, or "" for this host
tc_cc=""	# and its compiler (gcc-N)
tc_desc=""	# what builds the module, for the log and the hash

# The host's Debian codename (bookworm).
host_suite()
{
	sed -n 's/^VERSION_CODENAME=//p' /etc/os-release
}

# The release whose compiler built a kernel of SUITE.
toolchain_suite()
{
	case "$1" in
	experimental)	echo sid ;;
	*-security|*-backports|*-updates) echo "${1%-*}" ;;
	*)		echo "$1" ;;
	esac
}

# shellcheck disable=SC2034 # tc_desc is for the sourcing script
choose_toolchain()
{
	local kernel_dir="$1" kdir="$1/build" text cc want suite have

	text="$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"$/\1/p' "$kdir/.config")"
	[[ -n "$text" ]] || die 2 "$kdir/.config has no CONFIG_CC_VERSION_TEXT"
	# "x86_64-linux-gnu-gcc-16 (Debian 16.2.0-4) 16.2.0" -> gcc-16, 16
	cc="${text%% *}"
	cc="${cc##*-linux-gnu-}"
	want="$(sed -n 's/^[^ ]* (.*) \([0-9]*\)\..*/\1/p' <<<"$text")"
	[[ "$cc" == gcc || "$cc" == "gcc-$want" ]] ||
		die 2 "cannot tell the compiler of $kdir from '$text'"

	suite="$(host_suite)"
	[[ ! -r "$kernel_dir/suite" ]] || suite="$(toolchain_suite "$(cat "$kernel_dir/suite")")"
	if [[ "$suite" != "$(host_suite)" ]]; then
		tc_suite="$suite"
		tc_cc="gcc-$want"
		"$TC_CHROOT" path "$tc_suite" "$tc_cc" >/dev/null ||
			die 2 "no $suite toolchain (see above)"
	fi
	have="$(in_toolchain "$cc" --version 2>/dev/null | head -n 1)" ||
		die 2 "$cc missing${tc_suite:+ in the $tc_suite chroot}: apt-get install gcc-$want"
	[[ "$(sed -n 's/^[^ ]* (.*) \([0-9]*\)\..*/\1/p' <<<"$have")" == "$want" ]] ||
		die 2 "$kdir was built with '$text', but $cc is '$have'"
	if [[ -n "$tc_suite" ]]; then
		tc_desc="$tc_suite chroot: $have (kernel: $text)"
	else
		tc_desc="host ($(host_suite)): $have (kernel: $text)"
	fi
}

in_toolchain()
{
	if [[ -n "$tc_suite" ]]; then
		"$TC_CHROOT" run "$tc_suite" "$tc_cc" -- "$@"
	else
		"$@"
	fi
}
