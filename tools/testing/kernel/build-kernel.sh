#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a bootable test kernel from Debian's linux-source-6.1 and cache it.
#
#   build-kernel.sh --name NAME --fragment FILE [--fragment FILE ...]
#                   [--prep SCRIPT] [--patch FILE] [--jobs N] [--print-dir]
#
# Config: `make tinyconfig`, then merge_config.sh of the fragments, then
# olddefconfig; every CONFIG_ line of every fragment must hold in the final
# .config or the build fails (a silently dropped option would make tests
# pass for the wrong reason).
#
# Source changes: --prep SCRIPT runs `SCRIPT TREE` on the fresh copy (it
# must also answer `SCRIPT --inputs` with the files it reads), then
# --patch FILE is applied with `patch -p1 --fuzz=0`.
#
# Result (layout shared with tools/testing/qemu/fetch-kernel.sh), printed
# on stdout:
#   $CACHE/kernels/NAME-HASH12/
#       vmlinuz   kver   modules/lib/modules/KVER/   build/ (KDIR)
#       inputs    (what the hash covers, human-readable)
# HASH = sha256 over the recipe version, the linux-source package version,
# the fragments, the prep script and its inputs, and the patch.  A second
# call with the same inputs prints the cached directory and returns.
#
# A patched build reuses a finished unpatched build with the same source,
# fragments and prep when one is cached: its tree is copied with
# timestamps, the patch applied and make rebuilds only what depends on it.
# This works because every build runs in the same directory,
# $CACHE/kbuild/tree (one build at a time, flock): objtool and other
# host tools record absolute paths, and a tree built elsewhere would make
# them, and with them every object, rebuild.  The finished tree is then
# moved into the kernel directory.
set -eu

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly HERE
readonly CACHE="${DCTCP_CACHE:-/var/cache/dctcp-oot}"
# Bump when the layout or the build procedure changes.
readonly RECIPE="build-kernel v1: tinyconfig+fragments, in-tree, LOCALVERSION=-NAME"

NAME=""
FRAGMENTS=()
PREP=""
PATCH=""
JOBS="${BUILD_JOBS:-3}"
STAGE=""
LOG=""
WORKTREE="$CACHE/kbuild/tree"
WORK_LOCKED=0

die() { echo "build-kernel: $*" >&2; exit 1; }
note() { echo "# build-kernel: $*" >&2; }

cleanup() {
	if [ -n "$STAGE" ] && [ -d "$STAGE" ]; then
		rm -rf "$STAGE"
	fi
	if [ "$WORK_LOCKED" = 1 ]; then
		rm -rf "$WORKTREE"
	fi
}
trap cleanup EXIT

usage() {
	sed -n '3,30s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--name) NAME="$2"; shift ;;
		--fragment) FRAGMENTS+=("$(realpath "$2")"); shift ;;
		--prep) PREP="$(realpath "$2")"; shift ;;
		--patch) PATCH="$(realpath "$2")"; shift ;;
		--jobs|-j) JOBS="$2"; shift ;;
		-h|--help) usage ;;
		*) die "unknown argument: $1" ;;
		esac
		shift
	done
	[ -n "$NAME" ] || die "--name is required"
	[[ "$NAME" =~ ^[a-z0-9][a-z0-9.-]*$ ]] || die "bad --name '$NAME' (a-z 0-9 . -)"
	[ ${#FRAGMENTS[@]} -gt 0 ] || die "at least one --fragment is required"
	local f
	for f in "${FRAGMENTS[@]}" $PREP $PATCH; do
		[ -r "$f" ] || die "$f: not readable"
	done
	[ -z "$PREP" ] || [ -x "$PREP" ] || die "$PREP: not executable"
}

check_tools() {
	local t pkg
	for t in make:make gcc:build-essential flex:flex bison:bison bc:bc \
		 patch:patch flock:util-linux sha256sum:coreutils depmod:kmod \
		 perl:perl xz:xz-utils; do
		pkg="${t#*:}"
		command -v "${t%%:*}" >/dev/null ||
			die "${t%%:*} missing: apt-get install $pkg"
	done
	[ -e /usr/include/libelf.h ] || die "libelf missing: apt-get install libelf-dev"
	[ -e /usr/include/openssl/ssl.h ] || die "openssl headers missing: apt-get install libssl-dev"
}

# Hash of everything that defines the tree before --patch, and of the patch.
hash_files() {
	local f
	for f in "$@"; do
		printf '%s\n' "$(basename "$f")"
		sha256sum <"$f"
	done
}

compute_hashes() {
	local src_version="$1" prep_inputs=()

	if [ -n "$PREP" ]; then
		mapfile -t prep_inputs < <("$PREP" --inputs)
	fi
	TREE_DESC=$(
		echo "$RECIPE"
		echo "linux-source-6.1 $src_version"
		echo "fragments:"; hash_files "${FRAGMENTS[@]}"
		if [ -n "$PREP" ]; then
			echo "prep:"; hash_files "$PREP" "${prep_inputs[@]}"
		fi
	)
	TREE_HASH=$(printf '%s\n' "$TREE_DESC" | sha256sum | cut -c1-64)
	PATCH_DESC=""
	if [ -n "$PATCH" ]; then
		PATCH_DESC=$(echo "patch:"; hash_files "$PATCH")
	fi
	HASH=$(printf '%s\n%s\n' "$TREE_DESC" "$PATCH_DESC" | sha256sum | cut -c1-12)
}

is_complete() {
	[ -s "$1/vmlinuz" ] && [ -s "$1/kver" ] && [ -d "$1/build" ] &&
		[ -d "$1/modules/lib/modules/$(cat "$1/kver")" ]
}

# A cached build with the same pre-patch tree and no patch, if any.
find_unpatched_twin() {
	local d
	for d in "$CACHE"/kernels/*/; do
		d="${d%/}"
		if [ ! -f "$d/tree-hash" ] || [ -s "$d/patch-hash" ]; then
			continue
		fi
		[ "$(cat "$d/tree-hash")" = "$TREE_HASH" ] || continue
		is_complete "$d" && { echo "$d"; return; }
	done
}

run() {
	echo "+ $*" >>"$LOG"
	"$@" >>"$LOG" 2>&1 || {
		tail -n 40 "$LOG" >&2
		die "failed: $* (full log: $LOG)"
	}
}

kmake() {
	run make -C "$TREE" -j"$JOBS" LOCALVERSION= KBUILD_BUILD_USER=build \
		KBUILD_BUILD_HOST=build-kernel "$@"
}

configure() {
	kmake tinyconfig
	run "$TREE/scripts/kconfig/merge_config.sh" -m -O "$TREE" \
		"$TREE/.config" "${FRAGMENTS[@]}"
	set_localversion
}

set_localversion() {
	run "$TREE/scripts/config" --file "$TREE/.config" \
		--set-str LOCALVERSION "-$NAME" --disable LOCALVERSION_AUTO
	kmake olddefconfig
}

# Every requested value must hold; "is not set" also holds when the symbol
# is absent because its dependencies are off.
verify_config() {
	local frag line sym want bad=0

	{ echo "+ final .config:"; cat "$TREE/.config"; } >>"$LOG"

	for frag in "${FRAGMENTS[@]}"; do
		while IFS= read -r line; do
			if [[ "$line" =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
				sym="${BASH_REMATCH[1]}"; want="${BASH_REMATCH[2]}"
				if ! grep -qxF "$sym=$want" "$TREE/.config"; then
					echo "build-kernel: $(basename "$frag"): wanted $sym=$want, got: $(grep -E "^(# )?${sym}[= ]" "$TREE/.config" || echo absent)" >&2
					bad=1
				fi
			elif [[ "$line" =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
				sym="${BASH_REMATCH[1]}"
				if grep -qE "^$sym=" "$TREE/.config"; then
					echo "build-kernel: $(basename "$frag"): wanted $sym off, got: $(grep -E "^$sym=" "$TREE/.config")" >&2
					bad=1
				fi
			fi
		done <"$frag"
	done
	[ "$bad" = 0 ] || die "config fragments not honoured (see above; .config kept in $LOG)"
}

apply_patch() {
	note "applying $(basename "$PATCH")"
	# Exact context only (--fuzz=0); dry run first so a failure is clean.
	run patch -d "$TREE" -p1 --fuzz=0 --forward --batch --dry-run -i "$PATCH"
	run patch -d "$TREE" -p1 --fuzz=0 --forward --batch --no-backup-if-mismatch -i "$PATCH"
}

prepare_tree() {
	local twin="$1" src="$2"

	if [ -n "$twin" ]; then
		note "reusing the built tree of $(basename "$twin")"
		cp -a "$twin/build" "$TREE"
		apply_patch
		set_localversion
		# Same fragments and prep: only LOCALVERSION may differ.
		if ! diff <(grep -v '^CONFIG_LOCALVERSION=' "$twin/build/.config") \
			  <(grep -v '^CONFIG_LOCALVERSION=' "$TREE/.config") >>"$LOG"; then
			die "config of the reused tree differs from $twin (see $LOG)"
		fi
	else
		note "copying $src"
		cp -a "$src" "$TREE"
		if [ -n "$PREP" ]; then
			note "prep: $(basename "$PREP")"
			run "$PREP" "$TREE"
		fi
		[ -z "$PATCH" ] || apply_patch
		configure
	fi
	verify_config
}

build() {
	local start=$SECONDS kver moddir

	note "make -j$JOBS bzImage modules (log: $LOG)"
	kmake bzImage modules
	# Module.symvers and scripts/ for out-of-tree builds against build/.
	kmake modules_prepare
	[ -f "$TREE/Module.symvers" ] || die "no Module.symvers in $TREE"
	kver=$(make -s -C "$TREE" LOCALVERSION= kernelrelease)
	[ -n "$kver" ] || die "empty kernelrelease"
	kmake modules_install INSTALL_MOD_PATH="$STAGE/modules"
	moddir="$STAGE/modules/lib/modules/$kver"
	mkdir -p "$moddir"
	# modules_install links build/source to the temporary path: make them
	# relative to the final kernel directory instead.
	rm -f "$moddir/build" "$moddir/source"
	ln -s ../../../../build "$moddir/build"
	ln -s ../../../../build "$moddir/source"
	cp "$TREE/arch/x86/boot/bzImage" "$STAGE/vmlinuz"
	echo "$kver" >"$STAGE/kver"
	note "built $kver in $((SECONDS - start)) s"
	echo "$((SECONDS - start))" >"$STAGE/build-seconds"
}

main() {
	local src src_version out twin

	parse_args "$@"
	check_tools
	src=$("$HERE/unpack-source.sh")
	src_version=$(cat "$src/.debian-version")
	compute_hashes "$src_version"
	out="$CACHE/kernels/$NAME-$HASH"

	if is_complete "$out"; then
		echo "$out"
		return
	fi
	mkdir -p "$CACHE/kernels/.logs"
	exec 9>"$CACHE/kernels/.$NAME-$HASH.lock"
	note "waiting for lock on $NAME-$HASH" && flock 9
	if is_complete "$out"; then
		echo "$out"
		return
	fi
	[ ! -e "$out" ] || rm -rf "$out"	# incomplete leftover

	STAGE=$(mktemp -d "$CACHE/kernels/.$NAME-$HASH.tmp.XXXXXX")
	LOG="$CACHE/kernels/.logs/$NAME-$HASH.log"
	: >"$LOG"
	twin=""
	[ -z "$PATCH" ] || twin=$(find_unpatched_twin)

	# One build at a time, always in the same place (see the header).
	mkdir -p "$CACHE/kbuild"
	exec 8>"$CACHE/kbuild/.lock"
	note "waiting for the build directory" && flock 8
	WORK_LOCKED=1
	rm -rf "$WORKTREE"
	TREE="$WORKTREE"
	prepare_tree "$twin" "$src"
	build
	mv "$WORKTREE" "$STAGE/build"
	WORK_LOCKED=0
	flock -u 8

	printf '%s\n%s\n' "$TREE_DESC" "$PATCH_DESC" >"$STAGE/inputs"
	echo "$TREE_HASH" >"$STAGE/tree-hash"
	if [ -n "$PATCH" ]; then
		sha256sum <"$PATCH" | cut -c1-64 >"$STAGE/patch-hash"
		[ -z "$twin" ] || echo "incremental from $(basename "$twin")" >>"$STAGE/inputs"
	else
		: >"$STAGE/patch-hash"
	fi
	chmod 755 "$STAGE"
	mv "$STAGE" "$out"
	STAGE=""
	note "done: $out"
	echo "$out"
}

main "$@"
