#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernel coding style: scripts/checkpatch.pl --strict from Debian's
# linux-source-6.1 over our C sources, headers and the kernel patches, and
# the shellcheck linter over our shell scripts.  One TAP line per file.
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
SRC=

# The one unpacker of linux-source-6.1 (shared lock, atomic, cached).
unpack_source()
{
	SRC=$("$TOP/tools/testing/kernel/unpack-source.sh") &&
		[[ -x $SRC/scripts/checkpatch.pl ]]
}

# The shellcheck linter, warnings and errors, on every bash script.
check_shell()
{
	local f out

	for f in "${scripts[@]}"; do
		n=$((n + 1))
		if out=$(shellcheck -x -P SCRIPTDIR -S warning -e SC1091 "$f" 2>&1); then
			echo "ok $n - shellcheck $f"
		else
			failed=1
			sed 's/^/# /' <<< "$out" | head -n 40 || true
			echo "not ok $n - shellcheck $f"
		fi
	done
}

main()
{
	local files=() scripts=() f n=0 failed=0 out rc

	cd "$TOP" || exit 1
	while IFS= read -r f; do
		files+=("$f")
	done < <(git ls-files -co --exclude-standard -- '*.c' '*.h' '*.patch' | sort)

	while IFS= read -r f; do
		head -n 1 "$f" | grep -qE '^#!.*(ba)?sh' && scripts+=("$f")
	done < <(git ls-files -co --exclude-standard | grep -vE '\.(c|h|patch|md|rst|png|csv)$' |
		 while read -r f; do [[ -f $f ]] && echo "$f"; done | sort)

	echo "TAP version 13"
	echo "1..$(( ${#files[@]} + ${#scripts[@]} ))"
	if ! command -v shellcheck > /dev/null; then
		echo "# shellcheck missing: apt-get install shellcheck"
		for f in "${scripts[@]}"; do
			echo "not ok $((++n)) - shellcheck $f # shellcheck missing"
		done
		failed=1
	else
		check_shell
	fi
	if ! unpack_source; then
		for f in "${files[@]}"; do
			echo "not ok $((++n)) - checkpatch $f (linux source unavailable)"
		done
		return 1
	fi
	for f in "${files[@]}"; do
		n=$((n + 1))
		rc=0
		if [[ $f == *.patch ]]; then
			# On stdin: inside a git tree checkpatch would take a tracked
			# .patch for a source file and flag its diff lines.
			out=$("$SRC/scripts/checkpatch.pl" --strict --no-tree - \
				< "$f" 2>&1) || rc=$?
		elif [[ $f == include/compat.h ]]; then
			# The one place allowed to test LINUX_VERSION_CODE.
			out=$("$SRC/scripts/checkpatch.pl" --strict --no-tree \
				--ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON \
				-f "$f" 2>&1)
		elif [[ $f == tools/* ]]; then
			# Userspace: libc types, volatile sig_atomic_t and a
			# usage() that prints its own name are the norm there.
			out=$("$SRC/scripts/checkpatch.pl" --strict --no-tree \
				--ignore PREFER_KERNEL_TYPES,VOLATILE,EMBEDDED_FUNCTION_NAME \
				-f "$f" 2>&1) || rc=$?
		else
			out=$("$SRC/scripts/checkpatch.pl" --strict --no-tree \
				-f "$f" 2>&1) || rc=$?
		fi
		if (( rc == 0 )) && ! grep -qE '^(WARNING|CHECK|ERROR)' <<< "$out"; then
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
