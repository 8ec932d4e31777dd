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
#   awk -v from=US -v algo=ROW -v flows=N -f bench_series.awk OUT

function kv(   i, e) {
	delete v
	for (i = 2; i <= NF; i++) {
		e = index($i, "=")
		if (e)
			v[substr($i, 1, e - 1)] = substr($i, e + 1) + 0
	}
}

# heapsort a[1..n]: no recursion (mawk limits it)
function sift(a, i, n,   c, t) {
	while ((c = 2 * i) <= n) {
		if (c < n && a[c + 1] > a[c])
			c++
		if (a[i] >= a[c])
			return
		t = a[i]; a[i] = a[c]; a[c] = t
		i = c
	}
}

function hsort(a, n,   i, t) {
	for (i = int(n / 2); i >= 1; i--)
		sift(a, i, n)
	for (i = n; i > 1; i--) {
		t = a[1]; a[1] = a[i]; a[i] = t
		sift(a, 1, i - 1)
	}
}

function cdf(kind, a, n,   p, i) {
	if (!n)
		return
	hsort(a, n)
	for (p = 0; p <= 100; p++) {
		i = int(p / 100 * n + 0.999999)
		printf "%s,%d,%s,%d,%d\n", algo, flows, kind, p, a[i < 1 ? 1 : i]
	}
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
