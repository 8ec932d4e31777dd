#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a User-Mode Linux (ARCH=um, x86_64) kernel with time-travel support
# from Debian's linux-source-6.1 and cache it; print its directory.
#
#   build-uml.sh [--jobs N]
#
# Config: `make ARCH=um tinyconfig`, then merge_config.sh of uml.config
# (next to this script), then olddefconfig; every CONFIG_ line of the
# fragment must hold in the final .config or the build fails.  The tree is
# built out of the shared pristine source (O=), so no copy of the source is
# made and build/ holds only objects: in $CACHE/kbuild/uml-HASH12 first,
# kept when the build fails so that the next call resumes it, then moved
# into the kernel dir.
#
# Result (the layout of the other kernel dirs, see tools/testing/qemu/README.md):
#   $CACHE/kernels/uml-HASH12/
#       linux          the UML kernel (a host executable)
#       kver           uname -r inside
#       modules/lib/modules/KVER/   modules_install + depmod (tcp_dctcp.ko
#                                   is the in-tree module, for comparison)
#       build/         KDIR for out-of-tree builds: make ARCH=um -C build M=...
#       inputs         what the hash covers, build-seconds
# HASH = sha256 over the recipe version, the linux-source package version,
# uml.config and this script.  A second call prints the cached directory.
set -eu
shopt -s inherit_errexit

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly HERE
readonly CACHE="${DCTCP_CACHE:-/var/cache/dctcp-oot}"
readonly FRAGMENT="$HERE/uml.config"
# Bump when the layout or the build procedure changes.
readonly RECIPE="build-uml v1: ARCH=um tinyconfig+uml.config, O=build, LOCALVERSION=-uml"

JOBS="${BUILD_JOBS:-3}"
STAGE=""
LOG=""
SRC=""
OBJ=""

die() { echo "build-uml: $*" >&2; exit 1; }
note() { echo "# build-uml: $*" >&2; }

cleanup() {
	if [ -n "$STAGE" ] && [ -d "$STAGE" ]; then
		rm -rf "$STAGE"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

usage() {
	sed -n '3,24s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--jobs|-j) JOBS="${2:?}"; shift ;;
		-h|--help) usage ;;
		*) die "unknown argument: $1 (see --help)" ;;
		esac
		shift
	done
	[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || die "--jobs takes a positive number"
}

check_tools() {
	local t
	for t in make:make gcc:build-essential flex:flex bison:bison bc:bc \
		 flock:util-linux sha256sum:coreutils depmod:kmod perl:perl; do
		command -v "${t%%:*}" >/dev/null ||
			die "${t%%:*} missing: apt-get install ${t#*:}"
	done
	[ -r "$FRAGMENT" ] || die "$FRAGMENT missing"
}

run() {
	echo "+ $*" >>"$LOG"
	"$@" >>"$LOG" 2>&1 || {
		tail -n 40 "$LOG" >&2
		die "failed: $* (full log: $LOG)"
	}
}

kmake() {
	run make -C "$SRC" O="$OBJ" ARCH=um SUBARCH=x86_64 -j"$JOBS" \
		LOCALVERSION= KBUILD_BUILD_USER=build KBUILD_BUILD_HOST=build-uml "$@"
}

# Every requested value must hold; "is not set" also holds when the symbol
# is absent because its dependencies are off.
verify_config() {
	local line sym want bad=0

	{ echo "+ final .config:"; cat "$OBJ/.config"; } >>"$LOG"
	while IFS= read -r line; do
		if [[ "$line" =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
			sym="${BASH_REMATCH[1]}"; want="${BASH_REMATCH[2]}"
			grep -qxF "$sym=$want" "$OBJ/.config" && continue
			echo "build-uml: uml.config: wanted $sym=$want, got: $(grep -E "^(# )?${sym}[= ]" "$OBJ/.config" || echo absent)" >&2
			bad=1
		elif [[ "$line" =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
			sym="${BASH_REMATCH[1]}"
			grep -qE "^$sym=" "$OBJ/.config" || continue
			echo "build-uml: uml.config: wanted $sym off, got: $(grep -E "^$sym=" "$OBJ/.config")" >&2
			bad=1
		fi
	done <"$FRAGMENT"
	[ "$bad" = 0 ] || die "uml.config not honoured (see above; .config kept in $LOG)"
}

configure() {
	kmake tinyconfig
	run "$SRC/scripts/kconfig/merge_config.sh" -m -O "$OBJ" \
		"$OBJ/.config" "$FRAGMENT"
	run "$SRC/scripts/config" --file "$OBJ/.config" \
		--set-str LOCALVERSION "-uml" --disable LOCALVERSION_AUTO
	kmake olddefconfig
	verify_config
}

build() {
	local kver moddir

	note "make -j$JOBS ARCH=um linux modules (log: $LOG)"
	kmake linux modules
	[ -f "$OBJ/Module.symvers" ] || die "no Module.symvers in $OBJ"
	kver=$(make -s -C "$SRC" O="$OBJ" ARCH=um LOCALVERSION= kernelrelease)
	[ -n "$kver" ] || die "empty kernelrelease"
	kmake modules_install INSTALL_MOD_PATH="$STAGE/modules"
	moddir="$STAGE/modules/lib/modules/$kver"
	[ -f "$moddir/kernel/net/ipv4/tcp_dctcp.ko" ] ||
		die "the in-tree tcp_dctcp.ko was not built"
	# modules_install links build/source to the temporary path: make them
	# relative to the final kernel directory instead.
	rm -f "$moddir/build" "$moddir/source"
	ln -s ../../../../build "$moddir/build"
	ln -s "$SRC" "$moddir/source"
	# The kernel is a host executable; the object files beside it are
	# only needed to rebuild it, not for M= builds or for running it.
	cp "$OBJ/linux" "$STAGE/linux"
	echo "$kver" >"$STAGE/kver"
	echo "$SECONDS" >"$STAGE/build-seconds"
	note "built $kver in $SECONDS s"
}

is_complete() {
	[ -x "$1/linux" ] && [ -s "$1/kver" ] && [ -f "$1/build/Module.symvers" ] &&
		[ -f "$1/modules/lib/modules/$(cat "$1/kver")/modules.dep" ]
}

main() {
	local src_version desc hash out

	parse_args "$@"
	check_tools
	SRC=$("$HERE/../kernel/unpack-source.sh")
	src_version=$(cat "$SRC/.debian-version")
	desc=$(
		echo "$RECIPE"
		echo "linux-source-6.1 $src_version"
		echo "uml.config $(sha256sum <"$FRAGMENT")"
		echo "build-uml.sh $(sha256sum <"${BASH_SOURCE[0]}")"
	)
	hash=$(printf '%s\n' "$desc" | sha256sum | cut -c1-12)
	out="$CACHE/kernels/uml-$hash"

	if is_complete "$out"; then
		echo "$out"
		return
	fi
	mkdir -p "$CACHE/kernels/.logs" "$CACHE/kbuild"
	exec 9>"$CACHE/kernels/.uml-$hash.lock"
	note "waiting for lock on uml-$hash" && flock 9
	if is_complete "$out"; then
		echo "$out"
		return
	fi
	[ ! -e "$out" ] || rm -rf "$out"	# incomplete leftover

	STAGE=$(mktemp -d "$CACHE/kernels/.uml-$hash.tmp.XXXXXX")
	OBJ="$CACHE/kbuild/uml-$hash"
	LOG="$CACHE/kernels/.logs/uml-$hash.log"
	: >"$LOG"
	if [ -f "$OBJ/.build-uml-configured" ]; then
		note "resuming the unfinished build in $OBJ"
	else
		rm -rf "$OBJ"
		mkdir -p "$OBJ"
		configure
		: >"$OBJ/.build-uml-configured"
	fi
	build
	mv -T "$OBJ" "$STAGE/build"
	# The objects are only needed to rebuild the kernel, not for M=
	# builds or for running it.
	find "$STAGE/build" \( -name '*.o' -o -name '*.a' -o -name '.*.cmd' \) \
		-not -path "$STAGE/build/scripts/*" -delete
	rm -f "$STAGE/build/vmlinux" "$STAGE/build/linux" \
		"$STAGE/build/.build-uml-configured"
	printf '%s\n' "$desc" >"$STAGE/inputs"
	chmod 755 "$STAGE"
	mv -T "$STAGE" "$out"
	STAGE=""
	note "done: $out"
	echo "$out"
}

main "$@"
