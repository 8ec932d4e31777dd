#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel coding style: scripts/checkpatch.pl --strict from Debian's
# linux-source-6.1 over our C sources, headers and the kernel patch.
# One TAP line per file.
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${DCTCP_CACHE:-/var/cache/dctcp-oot}
SRC=$CACHE/src/linux-source-6.1
TARBALL=/usr/src/linux-source-6.1.tar.xz

unpack_source()
{
	[[ -x $SRC/scripts/checkpatch.pl ]] && return 0
	if [[ ! -r $TARBALL ]]; then
		echo "# $TARBALL missing: apt-get install linux-source-6.1" >&2
		return 1
	fi
	mkdir -p "$CACHE/src"
	(
		flock 9
		[[ -x $SRC/scripts/checkpatch.pl ]] && exit 0
		tmp=$(mktemp -d "$CACHE/src/.unpack.XXXXXX")
		tar -C "$tmp" -xJf "$TARBALL" && mv "$tmp/linux-source-6.1" "$SRC"
		rm -rf "$tmp"
	) 9> "$CACHE/src/.lock"
}

main()
{
	local files=() f n=0 failed=0 out

	cd "$TOP" || exit 1
	while IFS= read -r f; do
		files+=("$f")
	done < <(git ls-files -co --exclude-standard -- '*.c' '*.h' '*.patch' | sort)

	echo "TAP version 13"
	echo "1..${#files[@]}"
	if ! unpack_source; then
		for f in "${files[@]}"; do
			echo "not ok $((++n)) - checkpatch $f # linux source unavailable"
		done
		return 1
	fi
	for f in "${files[@]}"; do
		n=$((n + 1))
		if [[ $f == *.patch ]]; then
			out=$("$SRC/scripts/checkpatch.pl" --strict --no-tree "$f" 2>&1)
		else
			out=$("$SRC/scripts/checkpatch.pl" --strict --no-tree \
				-f "$f" 2>&1)
		fi
		if [[ $? -eq 0 ]] && ! grep -qE '^(WARNING|CHECK|ERROR)' <<< "$out"; then
			echo "ok $n - checkpatch --strict $f"
		else
			failed=1
			sed 's/^/# /' <<< "$out"
			echo "not ok $n - checkpatch --strict $f"
		fi
	done
	return $failed
}

main "$@"
