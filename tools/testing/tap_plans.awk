# SPDX-License-Identifier: GPL-2.0
#
# tap_plans.awk: check every TAP block of a suite's log against its plan.
#
# A suite's log is a sequence of blocks, one per script: "TAP version"
# starts a block; a plan ("1..N") either opens it (before any result) or
# closes it (after its results).  In each block the results must be
# numbered 1, 2, ... and their count must equal the plan.  Prints one line
# per broken block ("plan: ...") and nothing when every block is whole.

function close_block() {
	if (count > 0 && plan < 0)
		printf "plan: block at line %d: %d results and no plan\n", start, count
	else if (plan >= 0 && count != plan)
		printf "plan: block at line %d planned %d tests, reported %d\n", start, plan, count
	plan = -1; count = 0; start = NR
}

BEGIN { plan = -1; count = 0; start = 1 }

/^TAP version / { close_block(); next }

/^1\.\.[0-9]+/ {
	n = substr($1, 4) + 0
	if (count == 0 && plan < 0) {		# leading plan
		plan = n; start = NR
	} else if (plan < 0) {			# trailing plan
		plan = n; close_block()
	} else {				# the next script's leading plan
		close_block(); plan = n
	}
	next
}

/^(not )?ok [0-9]+/ {
	count++
	num = ($1 == "not") ? $3 : $2
	if (num + 0 != count)
		printf "plan: line %d: result numbered %d, expected %d\n", NR, num, count
}

END { close_block() }
