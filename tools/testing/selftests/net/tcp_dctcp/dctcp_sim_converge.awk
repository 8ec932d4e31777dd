# SPDX-License-Identifier: GPL-2.0
#
# dctcp_sim_converge.awk: how fast two flows share a link fairly when the
# second joins, and how fast the first takes it back when the second
# leaves, from one dctcp_flow run (-P 2 -S J -E L, sampled with -I).
#
# Each flow's goodput is computed over consecutive windows of win_us,
# from join_us on (its bytes_acked, interpolated linearly between
# samples).  The flows share fairly in a window when each has between
# (1 - tol) and (1 + tol) times their mean; the second joined at join_us
# (when its first sample appears) and left at its last sample.
#
# Prints: fair_us= (from the join to the start of the first window after
# which every window until the leave is fair; -1 if never) back_us= (from
# the leave to the start of the first window after which the first flow
# alone carries at least back_frac of ceil_mbit in every window; -1 if
# never) share_jain= (Jain's index of the two goodputs over the shared
# period after fair_us) rtt_us= (median smoothed RTT while shared)
#
#   awk -v win_us=W -v tol=T -v ceil_mbit=C -v back_frac=F \
#       -f dctcp_flow.awk -f dctcp_sim_converge.awk OUT

function rate(f, x) {
	return (acked(f, x + win_us) - acked(f, x)) * 8 / win_us
}

BEGIN {
	if (win_us <= 0) {
		print "dctcp_sim_converge.awk: win_us must be > 0" > "/dev/stderr"
		bad = 1
		exit 2
	}
}

$1 == "sample" {
	kv()
	add_sample()
	if (v["flow"] == 1 && v["rtt_us"] > 0)
		rtt[++nr] = v["rtt_us"]
}

END {
	if (bad)
		exit 2
	join = st[1, 1]; leave = st[1, ns[1]]; end = st[0, ns[0]]
	fair = -1
	for (x = join; x + win_us <= leave; x += win_us) {
		a = rate(0, x); b = rate(1, x); m = (a + b) / 2
		ok = m > 0 && a >= (1 - tol) * m && a <= (1 + tol) * m &&
		     b >= (1 - tol) * m && b <= (1 + tol) * m
		if (!ok)
			fair = -1
		else if (fair < 0)
			fair = x
	}
	back = -1
	for (x = leave; x + win_us <= end; x += win_us) {
		if (rate(0, x) < back_frac * ceil_mbit)
			back = -1
		else if (back < 0)
			back = x
	}
	jain = 0
	if (fair >= 0 && leave > fair) {
		a = (acked(0, leave) - acked(0, fair)); b = (acked(1, leave) - acked(1, fair))
		jain = (a + b) * (a + b) / (2 * (a * a + b * b))
	}
	hsort(rtt, nr)
	printf "fair_us=%d back_us=%d share_jain=%.4f rtt_us=%d\n", (fair < 0 ? -1 : fair - join),
	       (back < 0 ? -1 : back - leave), jain, (nr ? pct(rtt, nr, 50) : 0)
}
