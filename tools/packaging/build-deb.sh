#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-deb.sh - build the tcp-dctcp-dkms Debian package ("make deb")
#
#   tools/packaging/build-deb.sh [OUTDIR]
#
# Stages the module's sources (Kbuild, tcp_dctcp.c, include/, dkms.conf,
# Documentation/dctcp.rst) with tools/packaging/debian/ in a temporary
# tcp-dctcp-VERSION tree, runs dpkg-buildpackage -b (dh + dh-dkms) there and
# copies the .deb, .buildinfo and .changes to OUTDIR (default: deb/ at the
# top of the tree). VERSION is the module's (DCTCP_VERSION in tcp_dctcp.c
# without "-oot"); debian/changelog must name the same version. Then runs
# lintian on the .changes: any error or warning fails the build, its whole
# output is shown. Prints the path of the .deb on stdout.
set -eu
shopt -s inherit_errexit

TOP=$(cd "$(dirname "$0")/../.." && pwd)
DEBIAN=$TOP/tools/packaging/debian
STAGE=

die()
{
	echo "build-deb: $*" >&2
	exit 1
}

cleanup()
{
	[[ -z $STAGE ]] || rm -rf "$STAGE"
}
trap cleanup EXIT

need()
{
	command -v "$1" >/dev/null || die "$1 missing: apt-get install $2"
}

main()
{
	local out=${1:-$TOP/deb} version deb_version src log

	[[ $# -le 1 ]] || die "usage: $0 [OUTDIR]"
	need dpkg-buildpackage dpkg-dev
	need dh debhelper
	need dh_dkms dh-dkms
	need lintian lintian

	version=$(sed -n 's/^#define DCTCP_VERSION[[:space:]]*"\(.*\)-oot"$/\1/p' "$TOP/tcp_dctcp.c")
	[[ -n $version ]] || die "no DCTCP_VERSION \"X.Y.Z-oot\" in tcp_dctcp.c"
	deb_version=$(dpkg-parsechangelog -l "$DEBIAN/changelog" -S Version)
	[[ $deb_version == "$version" ]] ||
		die "tools/packaging/debian/changelog is at $deb_version, the module at $version: add an entry (dch -c tools/packaging/debian/changelog -v $version)"

	STAGE=$(mktemp -d "${TMPDIR:-/tmp}/build-deb.XXXXXX")
	src=$STAGE/tcp-dctcp-$version
	mkdir -p "$src/Documentation"
	cp -r "$TOP/Kbuild" "$TOP/tcp_dctcp.c" "$TOP/dkms.conf" "$TOP/include" "$src/"
	cp "$TOP/Documentation/dctcp.rst" "$src/Documentation/"
	cp -r "$DEBIAN" "$src/debian"

	log=$STAGE/build.log
	if ! (cd "$src" && dpkg-buildpackage -b -us -uc) >"$log" 2>&1; then
		cat "$log" >&2
		die "dpkg-buildpackage failed"
	fi
	mkdir -p "$out"
	cp "$STAGE"/*.deb "$STAGE"/*.buildinfo "$STAGE"/*.changes "$out/"

	echo "build-deb: lintian $out/tcp-dctcp_${version}_amd64.changes:" >&2
	if ! lintian --fail-on error,warning --display-info \
		"$out/tcp-dctcp_${version}_amd64.changes" >&2; then
		die "lintian reported errors or warnings (above)"
	fi
	echo "build-deb: lintian: no errors, no warnings" >&2
	echo "$out/tcp-dctcp-dkms_${version}_all.deb"
}

main "$@"
