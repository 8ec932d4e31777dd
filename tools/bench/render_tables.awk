# SPDX-License-Identifier: GPL-2.0
#
# render_tables.awk: the benchmark's tables from DIR/results.txt (RESULT
# lines of bench-guest.sh) and DIR/walls.txt, each written twice: as
# aligned text to txt and as a reStructuredText table to rst.
#
#   awk -v txt=FILE -v rst=FILE -v walls=DIR/walls.txt -f render_tables.awk DIR/results.txt

function kv(k,   i) {
	for (i = 2; i <= NF; i++)
		if (index($i, k "=") == 1)
			return substr($i, length(k) + 2)
	return ""
}

# R[scenario, algo, id, key]; "-" when missing
function get(s, a, id, k) {
	return ((s, a, id, k) in R) && R[s, a, id, k] != "" ? R[s, a, id, k] : "-"
}

function fmt(x, f) {
	return x == "-" || x == "" ? "-" : sprintf(f, x)
}

function rep(c, n,   s) {
	s = ""
	while (n-- > 0)
		s = s c
	return s
}

function tstart(title, note) {
	nrow = 0
	ttitle = title
	tnote = note
}

function trow(line) {
	rows[++nrow] = line
}

function tend(   i, j, n, c, w, ncol, line, sep, x) {
	ncol = 0
	for (i = 1; i <= nrow; i++) {
		n = split(rows[i], c, "|")
		if (n > ncol)
			ncol = n
		for (j = 1; j <= n; j++)
			if (length(c[j]) > w[j])
				w[j] = length(c[j])
	}
	print ttitle > txt
	for (i = 1; i <= nrow; i++) {
		n = split(rows[i], c, "|")
		line = ""
		for (j = 1; j <= ncol; j++)
			line = line sprintf(j == 1 ? "  %-" w[j] "s" : "  %" w[j] "s", j <= n ? c[j] : "")
		print line > txt
		if (i == 1) {
			sep = ""
			for (j = 1; j <= ncol; j++)
				sep = sep "  " rep("-", w[j])
			print sep > txt
		}
	}
	if (tnote != "")
		print tnote > txt
	print "" > txt

	sep = ""
	for (j = 1; j <= ncol; j++)
		sep = sep (j > 1 ? "  " : "") rep("=", w[j])
	print ".. table:: " ttitle > rst
	print "" > rst
	print "   " sep > rst
	for (i = 1; i <= nrow; i++) {
		n = split(rows[i], c, "|")
		line = ""
		for (j = 1; j <= ncol; j++) {
			x = j <= n ? c[j] : ""
			if (j == 1 && x == "")
				x = ".."
			line = line (j > 1 ? "  " : "") sprintf("%-" w[j] "s", x)
		}
		sub(/ +$/, "", line)
		print "   " line > rst
		if (i == 1)
			print "   " sep > rst
	}
	print "   " sep > rst
	print "" > rst
	if (tnote != "") {
		print tnote > rst
		print "" > rst
	}
	for (j = 1; j <= ncol; j++)
		delete w[j]
}

# a table row: LABEL then one cell per algorithm
function algrow(label, s, id, key, f,   i, r) {
	r = label
	for (i = 1; i <= na; i++)
		r = r "|" fmt(get(s, A[i], id, key), f)
	return r
}

function header(first,   i, r) {
	r = first
	for (i = 1; i <= na; i++)
		r = r "|" A[i]
	return r
}

# scenario queue or 10g, N flows
function queue_table(s, n, title,   id, i, base, fl) {
	id = n
	base = fl = "-"
	for (i = 1; i <= na; i++) {
		if (get(s, A[i], id, "base_us") != "-")
			base = get(s, A[i], id, "base_us")
		if (get(s, A[i], id, "qdisc") == "red")
			fl = get(s, A[i], id, "floor_us")
	}
	tstart(title, sprintf("Floor of a RED row's RTT: base RTT + K/C = %s us (base: median of 1-byte probes on the empty path, %s us). Statistics from the first quarter of the run on.", fl, base))
	trow(header("metric"))
	trow(algrow("bottleneck queue", s, id, "qdisc", "%s"))
	trow(algrow("utilisation (%)", s, id, "util_pct", "%.1f"))
	trow(algrow("goodput (Mbit/s)", s, id, "mbit", "%.1f"))
	trow(algrow("per-flow stddev (Mbit/s)", s, id, "fstd", "%.2f"))
	trow(algrow("per-flow min (Mbit/s)", s, id, "fmin", "%.1f"))
	trow(algrow("per-flow max (Mbit/s)", s, id, "fmax", "%.1f"))
	trow(algrow("Jain's index", s, id, "jain", "%.4f"))
	trow(algrow("queue mean (KB)", s, id, "q_kb_mean", "%.1f"))
	trow(algrow("queue p50 (KB)", s, id, "q_kb_p50", "%.1f"))
	trow(algrow("queue p99 (KB)", s, id, "q_kb_p99", "%.1f"))
	trow(algrow("TCP RTT p50 (us)", s, id, "rr_p50", "%d"))
	trow(algrow("TCP RTT p90 (us)", s, id, "rr_p90", "%d"))
	trow(algrow("TCP RTT p99 (us)", s, id, "rr_p99", "%d"))
	trow(algrow("TCP RTT max (us)", s, id, "rr_max", "%d"))
	trow(algrow("RTT p50 / floor", s, id, "rtt_floor", "%.2f"))
	trow(algrow("RTO timeouts", s, id, "rtos", "%d"))
	trow(algrow("tail loss probes", s, id, "tlps", "%d"))
	trow(algrow("retransmitted segments", s, id, "retrans", "%d"))
	trow(algrow("bottleneck drops", s, id, "drops", "%d"))
	trow(algrow("CE marks", s, id, "marks", "%d"))
	trow(algrow("socket: algorithm", s, id, "ca", "%s"))
	trow(algrow("socket: ECN", s, id, "ecn", "%s"))
	trow(algrow("check", s, id, "check", "%s"))
	tend()
}

BEGIN {
	split("dctcp-ours dctcp-intree dctcp-reno cubic-ecn reno-ecn cubic-noecn", order, " ")
	while ((getline l < walls) > 0) {
		split(l, wv, " ")
		W[wv[1]] += wv[2]	# once per module phase
		wsum += wv[2]
	}
}

$1 == "RESULT" {
	s = kv("scenario"); a = kv("algo")
	if (s == "queue" || s == "10g")
		id = kv("flows")
	else if (s == "incast")
		id = kv("senders")
	else if (s == "alpha")
		id = kv("phase")
	else
		id = ""
	for (i = 2; i <= NF; i++) {
		e = index($i, "=")
		R[s, a, id, substr($i, 1, e - 1)] = substr($i, e + 1)
	}
	if (s == "queue" || s == "10g") {
		R[s, a, id, "util_pct"] = kv("util") * 100
		R[s, a, id, "q_kb_mean"] = kv("q_mean") / 1000
		R[s, a, id, "q_kb_p50"] = kv("q_p50") / 1000
		R[s, a, id, "q_kb_p99"] = kv("q_p99") / 1000
		if (kv("floor_us") > 0 && kv("rr_p50") != "")
			R[s, a, id, "rtt_floor"] = kv("rr_p50") / kv("floor_us")
		Q[s, id] = 1
	}
	if (s == "incast")
		N[id] = 1
	if (s == "alpha")
		P[id] = 1
	seen[a] = 1
	S[s] = 1
}

END {
	na = 0
	for (i = 1; i <= 6; i++)
		if (order[i] in seen)
			A[++na] = order[i]

	if ((("queue", 2) in Q))
		queue_table("queue", 2, "Queue and latency, 1 Gbit/s, K = 30 KB (20 packets): 2 long flows")
	if ((("queue", 19) in Q))
		queue_table("queue", 19, "Queue and latency, 1 Gbit/s, K = 30 KB (20 packets): 19 long flows")
	if ((("10g", 2) in Q))
		queue_table("10g", 2, "Queue and latency, 10 Gbit/s, K = 97.5 KB (65 packets): 2 long flows")
	if ((("10g", 19) in Q))
		queue_table("10g", 19, "Queue and latency, 10 Gbit/s, K = 97.5 KB (65 packets): 19 long flows")

	if ("incast" in S) {
		nn = 0
		for (x in N)
			ns[++nn] = x + 0
		for (i = 1; i <= nn; i++)
			for (j = i + 1; j <= nn; j++)
				if (ns[j] < ns[i]) {
					t = ns[i]; ns[i] = ns[j]; ns[j] = t
				}
		split("rtos tlps qct", what, " ")
		title["rtos"] = "Incast: RTO timeouts over all queries (queries that took >= 200 ms)"
		title["tlps"] = "Incast: tail loss probes over all queries"
		title["qct"] = "Incast: query completion time p50 / p99 (ms)"
		a1 = A[1]
		note = sprintf("1 MB per query split over the senders, %s queries after 2 warm-up ones; shallow buffer: RED limit %s B (100 packets) for the ECN rows and dctcp-reno, pfifo limit 100 for cubic-noecn.",
			       get("incast", a1, ns[1], "rounds"), get("incast", a1, ns[1], "buffer_bytes"))
		for (wi = 1; wi <= 3; wi++) {
			w = what[wi]
			tstart(title[w], w == "rtos" ? note : "")
			trow(header("senders"))
			for (i = 1; i <= nn; i++) {
				r = ns[i]
				for (j = 1; j <= na; j++) {
					if (w == "rtos")
						c = get("incast", A[j], ns[i], "rtos") " (" get("incast", A[j], ns[i], "slow_rounds") ")"
					else if (w == "tlps")
						c = get("incast", A[j], ns[i], "tlps")
					else
						c = fmt(get("incast", A[j], ns[i], "qct_p50_ms"), "%.1f") " / " fmt(get("incast", A[j], ns[i], "qct_p99_ms"), "%.1f")
					r = r "|" c
				}
				trow(r)
			}
			tend()
		}
	}

	if ("converge" in S) {
		tstart(sprintf("Convergence: 5 flows joining every %s ms, then leaving one by one", get("converge", A[1], "", "stage_ms")),
		       "conv = time from a join or a leave until every 10 ms window of the stage is fair (each running flow within 20% of their mean); Jain over the second half of each stage.")
		trow(header("stage"))
		split("1 2 3 4 5 4 3 2 1", nfl, " ")
		for (k = 1; k <= 8; k++) {
			r = sprintf("%d -> %d flows: conv (ms) / Jain", nfl[k], nfl[k + 1])
			for (j = 1; j <= na; j++)
				r = r "|" get("converge", A[j], "", "conv_ms_s" k) " / " fmt(get("converge", A[j], "", "jain_s" k), "%.3f")
			trow(r)
		}
		trow(algrow("slowest convergence (ms)", "converge", "", "conv_max_ms", "%s"))
		trow(algrow("lowest Jain", "converge", "", "jain_min", "%.3f"))
		trow(algrow("check", "converge", "", "check", "%s"))
		tend()
	}

	if ("alpha" in S) {
		tstart("alpha while K changes (one flow, 1 Gbit/s; means over the second half of each phase)",
		       "model: alpha = sqrt(2 / W*), W* = (C * base RTT + K) / 1514 B packets (Alizadeh et al., SIGMETRICS 2011), scaled to 1024.")
		r = "phase|K (B)|model"
		for (j = 1; j <= na; j++)
			if (get("alpha", A[j], 0, "alpha_mean") != "-")
				r = r "|" A[j] " alpha|queue (KB)|Mbit/s"
		trow(r)
		for (p = 0; (p in P); p++) {
			r = p "|" get("alpha", A[1], p, "k_bytes") "|" fmt(get("alpha", A[1], p, "model"), "%.0f")
			for (j = 1; j <= na; j++)
				if (get("alpha", A[j], 0, "alpha_mean") != "-")
					r = r "|" fmt(get("alpha", A[j], p, "alpha_mean"), "%.0f") "|" \
					    fmt(get("alpha", A[j], p, "q_mean") / 1000, "%.1f") "|" \
					    fmt(get("alpha", A[j], p, "mbit"), "%.0f")
			trow(r)
		}
		tend()
	}

	if (wsum > 0) {
		tstart("Wall clock of each scenario (this machine, while it ran)",
		       "Summed over both boots (our module's rows, then dctcp-intree's). The whole run, with the builds and the two boots: wall_s in the run's details.")
		trow("scenario|seconds")
		split("queue incast converge alpha 10g", sc, " ")
		for (i = 1; i <= 5; i++)
			if (sc[i] in W)
				trow(sc[i] "|" W[sc[i]])
		trow("all scenarios|" wsum)
		tend()
	}
}
