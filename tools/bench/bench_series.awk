# SPDX-License-Identifier: GPL-2.0
#
# bench_series.awk: the series of one long-flow run for the plots, from a
# dctcp_flow client's output (queue and rr lines, see dctcp_flow.c), as
# CSV rows "algo,flows,kind,x,y":
#   queue_ts   x = ms since the client started, y = bottleneck backlog (B)
#   queue_cdf  x = percentile 0..100, y = backlog (B)
#   rtt_cdf    x = percentile 0..100, y = probe round trip (us)
# Only samples from "from" (us) on count (slow start is over).
#
#   awk -v from=US -v algo=ROW -v flows=N -f dctcp_flow.awk -f bench_series.awk OUT

function cdf(kind, a, n,   p) {
	if (!n)
		return
	hsort(a, n)
	for (p = 0; p <= 100; p++)
		printf "%s,%d,%s,%d,%d\n", algo, flows, kind, p, pct(a, n, p)
}

$1 == "queue" {
	kv()
	if (v["t_us"] < from)
		next
	q[++nq] = v["backlog"]
	printf "%s,%d,queue_ts,%.3f,%d\n", algo, flows, v["t_us"] / 1000, v["backlog"]
}

$1 == "rr" {
	kv()
	if (v["t_us"] >= from)
		r[++nr] = v["rtt_us"]
}

END {
	cdf("queue_cdf", q, nq)
	cdf("rtt_cdf", r, nr)
}
