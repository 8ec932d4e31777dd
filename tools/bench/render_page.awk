# SPDX-License-Identifier: GPL-2.0
#
# render_page.awk: Documentation/benchmark.rst from its template
# (tools/bench/benchmark.rst.in).  A template line that is exactly
#   @TABLES@   becomes the tables of the run (DIR/tables.rst)
#   @META@     a list of the run's facts (DIR/meta.txt)
#   @PAPER@    the table of the seed's figures beside this run's
#   @INCAST@   a paragraph with this run's incast RTO counts
# every other line is copied.
#
#   awk -v tables=F -v meta=F -v results=F -f render_page.awk TEMPLATE

function kv(line, k,   n, f, i) {
	n = split(line, f, " ")
	for (i = 2; i <= n; i++)
		if (index(f[i], k "=") == 1)
			return substr(f[i], length(k) + 2)
	return ""
}

# R[scenario, algo, id, key] from the RESULT lines
function load(   l, s, a, id, n, f, i, e) {
	while ((getline l < results) > 0) {
		if (l !~ /^RESULT /)
			continue
		s = kv(l, "scenario"); a = kv(l, "algo")
		id = s == "queue" || s == "10g" ? kv(l, "flows") : (s == "incast" ? kv(l, "senders") : "")
		n = split(l, f, " ")
		for (i = 2; i <= n; i++) {
			e = index(f[i], "=")
			R[s, a, id, substr(f[i], 1, e - 1)] = substr(f[i], e + 1)
		}
	}
}

function get(s, a, id, k) {
	return ((s, a, id, k) in R) && R[s, a, id, k] != "" ? R[s, a, id, k] : "-"
}

function fmt(x, f) {
	return x == "-" ? "-" : sprintf(f, x)
}

function ms(x) {
	return x == "-" ? "-" : x / 1000
}

function paper(   w) {
	print ".. table:: The seed's figures (10 Gbit/s, 19 iperf senders for 30 s) beside this run's (1 Gbit/s, 19 long flows)"
	print ""
	w = "   =================================  =========  =========  ===========  ==========  ============"
	print w
	print "   figure                             seed       seed       cubic-noecn  dctcp-ours  dctcp-intree"
	print "   ..                                 CUBIC      DCTCP      this run     this run    this run"
	print w
	printf "   %-33s  %-9s  %-9s  %-11s  %-10s  %s\n", "RTO timeouts", "3227", "25",
	       get("queue", "cubic-noecn", 19, "rtos"), get("queue", "dctcp-ours", 19, "rtos"),
	       get("queue", "dctcp-intree", 19, "rtos")
	printf "   %-33s  %-9s  %-9s  %-11s  %-10s  %s\n", "per-flow throughput stddev (Mbps)", "105.9", "2.6",
	       fmt(get("queue", "cubic-noecn", 19, "fstd"), "%.2f"), fmt(get("queue", "dctcp-ours", 19, "fstd"), "%.2f"),
	       fmt(get("queue", "dctcp-intree", 19, "fstd"), "%.2f")
	printf "   %-33s  %-9s  %-9s  %-11s  %-10s  %s\n", "Jain's index", "0.962", "0.999",
	       fmt(get("queue", "cubic-noecn", 19, "jain"), "%.3f"), fmt(get("queue", "dctcp-ours", 19, "jain"), "%.3f"),
	       fmt(get("queue", "dctcp-intree", 19, "jain"), "%.3f")
	printf "   %-33s  %-9s  %-9s  %-11s  %-10s  %s\n", "latency median (ms)", "4.055", "0.0395",
	       fmt(ms(get("queue", "cubic-noecn", 19, "rr_p50")), "%.3f"),
	       fmt(ms(get("queue", "dctcp-ours", 19, "rr_p50")), "%.3f"),
	       fmt(ms(get("queue", "dctcp-intree", 19, "rr_p50")), "%.3f")
	printf "   %-33s  %-9s  %-9s  %-11s  %-10s  %s\n", "latency max (ms)", "4.2", "0.085",
	       fmt(ms(get("queue", "cubic-noecn", 19, "rr_max")), "%.3f"),
	       fmt(ms(get("queue", "dctcp-ours", 19, "rr_max")), "%.3f"),
	       fmt(ms(get("queue", "dctcp-intree", 19, "rr_max")), "%.3f")
	print w
	print ""
	print "The seed measured latency with ``ping`` (``-Q 0x6`` for DCTCP) through"
	print "its switch; this run with 1-byte TCP request/responses through the"
	print "bottleneck (ECT for the ECN rows), which is what a query sees."
	print "Its RTO count is ``netstat -s`` over the whole host (it says most of"
	print "DCTCP's 25 were other traffic); ours is the sender namespace's"
	print "``TcpExtTCPTimeouts``, which sees only the test's flows."
}

# the sender counts of this run (the default or the --long sweep), the
# rows that ran, and their RTOs
function incast(   n, list, m, ns, used, i, a, r, sep, found) {
	m = split("5 10 15 19 25 30 40", list, " ")
	ns = 0
	for (i = 1; i <= m; i++)
		if (get("incast", "dctcp-ours", list[i], "rtos") != "-")
			used[++ns] = list[i]
	r = "  RTO timeouts at"
	for (i = 1; i <= ns; i++)
		r = r (i == 1 ? " " : (i == ns ? " and " : ", ")) used[i]
	r = r " senders in this run:"
	split("cubic-noecn cubic-ecn reno-ecn dctcp-reno dctcp-ours dctcp-intree", a, " ")
	found = 0
	for (n = 1; n <= 6; n++) {
		if (get("incast", a[n], used[1], "rtos") == "-")
			continue
		r = r (found++ ? ";" : "") " " a[n]
		sep = " "
		for (i = 1; i <= ns; i++) {
			r = r sep get("incast", a[n], used[i], "rtos")
			sep = ", "
		}
	}
	print r "."
}

BEGIN {
	load()
}

$0 == "@TABLES@" {
	while ((getline l < tables) > 0)
		print l
	next
}

$0 == "@META@" {
	while ((getline l < meta) > 0)
		print "- ``" l "``"
	next
}

$0 == "@PAPER@" {
	paper()
	next
}

$0 == "@INCAST@" {
	incast()
	next
}

{
	print
}
