# SPDX-License-Identifier: GPL-2.0
#
# dctcp_flow.awk: functions for reading a dctcp_flow client's output (see
# dctcp_flow.c), loaded before the script that uses them by the
# simulated-time tests and the benchmark:
#
#   awk -f dctcp_flow.awk -f SCRIPT.awk OUT
#
#   kv()            the current line's key=value fields as numbers, in v[]
#   hsort(a, n)     sort numbers a[1..n] ascending
#   pct(a, n, p)    nearest-rank percentile p of a sorted a[1..n], -1 if empty
#   add_sample()    record the current "sample" line's acked bytes for its
#                   flow (after kv()): ns[f] samples at st[f, i], sa[f, i]
#   acked(f, x)     bytes acked by flow f at time x (us), linear between
#                   its samples

function kv(   i, e) {
	delete v
	for (i = 2; i <= NF; i++) {
		e = index($i, "=")
		if (e)
			v[substr($i, 1, e - 1)] = substr($i, e + 1) + 0
	}
}

# heapsort: no recursion, which mawk limits
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

function pct(a, n, p,   i) {
	if (!n)
		return -1
	i = int(p / 100 * n + 0.999999)
	return a[i < 1 ? 1 : i]
}

function add_sample(   f) {
	f = v["flow"]
	ns[f]++
	st[f, ns[f]] = v["t_us"]
	sa[f, ns[f]] = v["acked"]
}

function acked(f, x,   i, w) {
	if (!ns[f] || x <= st[f, 1])
		return ns[f] ? sa[f, 1] : 0
	for (i = 2; i <= ns[f]; i++) {
		if (st[f, i] < x)
			continue
		w = (x - st[f, i - 1]) / (st[f, i] - st[f, i - 1])
		return sa[f, i - 1] + (sa[f, i] - sa[f, i - 1]) * w
	}
	return sa[f, ns[f]]
}
