#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debian-archive.sh - read any Debian suite without touching the system's apt
#
#   debian-archive.sh mirror SUITE               print "URI KEYRING" for SUITE
#   debian-archive.sh update SUITE               refresh SUITE's package lists
#   debian-archive.sh version SUITE PACKAGE      candidate version ("" if none)
#   debian-archive.sh depends SUITE PACKAGE      its Depends, one name a line
#   debian-archive.sh names SUITE REGEX          package names matching REGEX
#   debian-archive.sh download SUITE DIR PACKAGE[=VERSION]...
#
# The mirror and its keyring are those of the system's own entry for the
# host's release (/etc/apt/sources.list.d/*.sources or *.list, read at run
# time; SUITE-security uses the host's -security entry), so whatever mirror
# or proxy this machine is set up for is used, and nothing is hard-coded.
# Each suite gets a private sources list, package lists and download cache
# under $CACHE/apt/SUITE; apt runs with an empty dpkg status, so nothing is
# ever installed and the system's lists are never read or written.
#
# Lists are fetched when missing or older than DCTCP_APT_MAX_AGE hours
# (default 24), and once more when a download fails.  The archive here is a
# snapshot whose Release files are past their Valid-Until date, so apt
# runs with Acquire::Check-Valid-Until=false (the signatures are checked).
set -eu
shopt -s inherit_errexit

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${DCTCP_CACHE:-/var/cache/dctcp-oot}
SOURCES=${DCTCP_APT_SOURCES:-/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources}
MAX_AGE=${DCTCP_APT_MAX_AGE:-24}
STATE=

die()
{
	echo "debian-archive: $*" >&2
	exit 1
}

usage()
{
	sed -n 's/^# \{0,1\}//; 6,11p' "$0" >&2
	exit 2
}

need()
{
	command -v "$1" >/dev/null 2>&1 || die "$1 missing: apt-get install $2"
}

# The host's release codename (bookworm on Debian 12).
host_codename()
{
	local codename

	codename=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release 2>/dev/null)
	[ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release: not a Debian system?"
	echo "$codename"
}

# mirror SUITE: "URI KEYRING" of the system entry serving SUITE's archive.
mirror()
{
	local suite=$1 want files=() f line

	want=$(host_codename)
	case "$suite" in
	*-security) want=$want-security ;;
	esac
	# shellcheck disable=SC2086 # SOURCES is a list of globs
	for f in $SOURCES; do
		[ -f "$f" ] && files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || die "no apt sources found ($SOURCES)"
	line=$(awk -f "$HERE/apt-sources.awk" "${files[@]}" |
	       awk -v s="$want" '$2 == s { print $1, $3; exit }')
	[ -n "$line" ] ||
		die "the system's apt sources have no 'deb' entry for $want: add one (see sources.list(5))"
	case "${line#* }" in
	-)	die "the apt entry for $want has no Signed-By: add 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg'" ;;
	inline)	die "the apt entry for $want embeds its key: put it in a keyring file and name that in Signed-By" ;;
	esac
	[ -r "${line#* }" ] || die "keyring ${line#* } missing: apt-get install debian-archive-keyring"
	echo "$line"
}

# Make $CACHE/apt/SUITE and its private sources list; set STATE.
prepare()
{
	local suite=$1 uri keyring

	case "$suite" in
	''|*[!a-z0-9-]*) die "bad suite name '$suite'" ;;
	esac
	read -r uri keyring <<<"$(mirror "$suite")"
	STATE=$CACHE/apt/$suite
	mkdir -p "$STATE/lists/partial" "$STATE/cache/archives/partial"
	echo "deb [signed-by=$keyring] $uri $suite main" >"$STATE/sources.list.new"
	if cmp -s "$STATE/sources.list.new" "$STATE/sources.list"; then
		rm -f "$STATE/sources.list.new"
	else
		mv "$STATE/sources.list.new" "$STATE/sources.list"
		rm -f "$STATE/lists/"*_Release "$STATE/lists/"*_InRelease
	fi
	: >>"$STATE/status"
	# apt drops privileges to _apt for downloads
	chown -R _apt "$STATE/lists/partial" "$STATE/cache/archives/partial" 2>/dev/null || true
}

apt_private()
{
	local tool=$1

	shift
	"$tool" -q \
		-o Dir::Etc::sourcelist="$STATE/sources.list" \
		-o Dir::Etc::sourceparts=/dev/null \
		-o Dir::Etc::preferences=/dev/null \
		-o Dir::Etc::preferencesparts=/dev/null \
		-o Dir::State::Lists="$STATE/lists" \
		-o Dir::State::status="$STATE/status" \
		-o Dir::Cache="$STATE/cache" \
		-o Acquire::Check-Valid-Until=false \
		-o Acquire::Languages=none \
		-o APT::Architecture=amd64 -o APT::Architectures=amd64 \
		"$@"
}

update_now()
{
	echo "debian-archive: updating the package lists of $1" >&2
	apt_private apt-get update >&2 ||
		die "apt-get update of $1 failed (network? see above)"
	touch "$STATE/updated"
}

# Lists present and fresh enough?
lists_fresh()
{
	[ -f "$STATE/updated" ] &&
		[ -z "$(find "$STATE/updated" -mmin +$((MAX_AGE * 60)))" ] &&
		compgen -G "$STATE/lists/*_Packages*" >/dev/null
}

# Run FUNCTION under SUITE's lock with fresh lists.
with_lists()
{
	local suite=$1 fd

	shift
	prepare "$suite"
	exec {fd}>"$STATE/.lock"
	flock "$fd"
	lists_fresh || update_now "$suite"
	"$@"
	exec {fd}>&-
}

cmd_version()
{
	apt_private apt-cache policy "$1" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }'
}

cmd_depends()
{
	apt_private apt-cache show --no-all-versions "$1" 2>/dev/null |
		sed -n 's/^Depends: //p' | sed 's/[,|]/\n/g' |
		sed 's/^ *//; s/[ :].*//' | grep .
}

cmd_names()
{
	apt_private apt-cache pkgnames 2>/dev/null | grep -E "$1" | sort -V
}

try_download()
{
	local dir=$1

	shift
	(cd "$dir" && apt_private apt-get download "$@" >&2)
}

cmd_download()
{
	local suite=$1 dir=$2

	shift 2
	mkdir -p "$dir"
	chmod 755 "$dir"
	chown _apt "$dir" 2>/dev/null || true
	try_download "$dir" "$@" && return 0
	# a stale list names files the mirror no longer has: refresh once
	update_now "$suite"
	try_download "$dir" "$@" || die "cannot download $* from $suite"
}

main()
{
	local cmd=${1:-}

	[ $# -ge 2 ] || usage
	shift
	need apt-get apt
	need flock util-linux
	case "$cmd" in
	mirror)		[ $# -eq 1 ] || usage; mirror "$1" ;;
	update)		[ $# -eq 1 ] || usage; prepare "$1"; update_now "$1" ;;
	version)	[ $# -eq 2 ] || usage; with_lists "$1" cmd_version "$2" ;;
	depends)	[ $# -eq 2 ] || usage; with_lists "$1" cmd_depends "$2" ;;
	names)		[ $# -eq 2 ] || usage; with_lists "$1" cmd_names "$2" ;;
	download)	[ $# -ge 3 ] || usage; with_lists "$1" cmd_download "$@" ;;
	*)		usage ;;
	esac
}

main "$@"
