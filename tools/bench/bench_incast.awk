# SPDX-License-Identifier: GPL-2.0
#
# bench_incast.awk: query completion times of one incast client run (its
# "q,ROUND,QCT_US" lines), as key=value pairs: qct_p50_ms qct_p90_ms
# qct_p99_ms qct_max_ms (nearest rank), slow_rounds (queries that took
# 200 ms or more: the minimum RTO, so at least one timeout) and
# goodput_mbit (all queries' bytes over all queries' time; needs bytes).
#
#   awk [-v bytes=B] -f bench_incast.awk OUT

function pct(p,   i) {
	i = int(p / 100 * n + 0.999999)
	return q[i < 1 ? 1 : i] / 1000
}

BEGIN {
	FS = ","
}

$1 == "q" {
	q[++n] = $3
	sum += $3
	if ($3 >= 200000)
		slow++
}

END {
	# insertion sort: a few hundred queries
	for (i = 2; i <= n; i++) {
		x = q[i]
		for (j = i - 1; j >= 1 && q[j] > x; j--)
			q[j + 1] = q[j]
		q[j + 1] = x
	}
	if (!n) {
		print "queries=0"
		exit
	}
	printf "queries=%d qct_p50_ms=%.3f qct_p90_ms=%.3f qct_p99_ms=%.3f qct_max_ms=%.3f slow_rounds=%d",
	       n, pct(50), pct(90), pct(99), q[n] / 1000, slow
	if (bytes > 0)
		printf " goodput_mbit=%.1f", bytes * n * 8 / sum
	printf "\n"
}
