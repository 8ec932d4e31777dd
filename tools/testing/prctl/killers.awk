# SPDX-License-Identifier: GPL-2.0
# The failing tests in the output of prctl_suites.sh, one "suite:test" per
# line: kselftest and TAP "not ok" lines (a fuzzer line is cut at its
# first ':' or '('), and a suite that failed without any.
/^### suite / {
	suite = $3
	next
}
/^### end / {
	rc = substr($4, 4)
	if (rc != 0 && rc != 4 && !failed[suite])
		print suite ":exit(" rc ")"
	next
}
/^not ok / {
	sub(/^not ok [0-9]+ (- )?/, "")
	sub(/ *[:(].*/, "")
	gsub(/ /, "_")
	print suite ":" $0
	failed[suite] = 1
}
