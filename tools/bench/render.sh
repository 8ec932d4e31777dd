#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# render.sh DIR - tables and plots from a bench.sh results directory
#
# Reads DIR/results.txt (RESULT lines), DIR/*.csv and DIR/meta.txt; writes
#   DIR/summary.txt   the tables as text (also printed on stdout)
#   DIR/tables.rst    the same tables as reStructuredText
#   DIR/*.png         queue.png incast.png converge.png alpha.png (gnuplot)
set -eu

readonly OUT=${1:?usage: render.sh RESULTS_DIR}
readonly ORDER="dctcp-ours dctcp-intree dctcp-reno cubic-ecn reno-ecn cubic-noecn"
PLOT=""

die() { echo "render: $*" >&2; exit 1; }

cleanup()
{
	[ -z "$PLOT" ] || rm -rf "$PLOT"
}
trap cleanup EXIT

# ---- tables ----------------------------------------------------------------
# One awk program: parse RESULT lines into R[scenario, algo, id, key] and
# print every table twice, as aligned text and as an RST simple table.
tables()
{
	awk -v order="$ORDER" -v txt="$OUT/summary.txt" -v rst="$OUT/tables.rst" \
	    -v conv="$OUT/converge_ts.csv" -v meta="$OUT/meta.txt" '
	function kv(k,  i) { for (i = 2; i <= NF; i++) if (index($i, k "=") == 1) return substr($i, length(k) + 2); return "" }
	# (a plain R[..] lookup would create the element: test with "in")
	function get(s, a, id, k) { return (s, a, id, k) in R && R[s, a, id, k] != "" ? R[s, a, id, k] : "-" }
	function any(s, id, k,  i) { for (i = 1; i <= na; i++) if ((s, A[i], id, k) in R) return R[s, A[i], id, k]; return "-" }
	function r1(x) { return x == "-" || x == "nan" ? x : sprintf("%.1f", x) }
	function r2(x) { return x == "-" || x == "nan" ? x : sprintf("%.2f", x) }
	function r3(x) { return x == "-" || x == "nan" ? x : sprintf("%.3f", x) }

	function tstart(title, note) { nrow = 0; ttitle = title; tnote = note }
	function trow(line) { rows[++nrow] = line }
	function tend(  i, j, n, c, w, ncol, line, sep) {
		ncol = 0
		for (i = 1; i <= nrow; i++) {
			n = split(rows[i], c, "|")
			if (n > ncol) ncol = n
			for (j = 1; j <= n; j++) if (length(c[j]) > w[j]) w[j] = length(c[j])
		}
		# text
		print ttitle > txt
		if (tnote != "") print tnote > txt
		for (i = 1; i <= nrow; i++) {
			n = split(rows[i], c, "|"); line = ""
			for (j = 1; j <= ncol; j++)
				line = line sprintf(j == 1 ? "  %-" w[j] "s" : "  %" w[j] "s", j <= n ? c[j] : "")
			print line > txt
			if (i == 1) { sep = ""; for (j = 1; j <= ncol; j++) sep = sep "  " rep("-", w[j]); print sep > txt }
		}
		print "" > txt
		# rst simple table
		sep = ""
		for (j = 1; j <= ncol; j++) sep = sep (j > 1 ? "  " : "") rep("=", w[j])
		print ".. table:: " ttitle > rst
		print "" > rst
		print "   " sep > rst
		for (i = 1; i <= nrow; i++) {
			n = split(rows[i], c, "|"); line = ""
			for (j = 1; j <= ncol; j++) {
				x = j <= n ? c[j] : ""
				if (j == 1 && x == "") x = ".."
				line = line (j > 1 ? "  " : "") sprintf("%-" w[j] "s", x)
			}
			sub(/ +$/, "", line)
			print "   " line > rst
			if (i == 1) print "   " sep > rst
		}
		print "   " sep > rst
		print "" > rst
		if (tnote != "") { print tnote > rst; print "" > rst }
		for (j = 1; j <= ncol; j++) delete w[j]
	}
	function rep(ch, n,  s) { s = ""; while (n-- > 0) s = s ch; return s }
	# header row and per-algorithm cells for one scenario/id
	function header(first,  i, s) { s = first; for (i = 1; i <= na; i++) s = s "|" A[i]; return s }
	function line(label, s, id, k, fmt,  i, x, out) {
		out = label
		for (i = 1; i <= na; i++) {
			x = get(s, A[i], id, k)
			if (fmt == 1) x = r1(x); else if (fmt == 2) x = r2(x); else if (fmt == 3) x = r3(x)
			out = out "|" x
		}
		return out
	}

	/^RESULT / {
		s = kv("scenario"); a = kv("algo")
		if (s == "env") { env[kv("impl")] = $0; nenv++; next }
		id = ""
		if (s == "queue") id = kv("flows")
		else if (s == "incast") id = kv("buffer") "/" kv("senders")
		else if (s == "alpha") id = kv("phase")
		else if (s == "syn") { id = kv("competing"); synm[id + 0] = 1 }
		for (i = 2; i <= NF; i++) { p = index($i, "="); R[s, a, id, substr($i, 1, p - 1)] = substr($i, p + 1) }
		seen[a] = 1; ids[s, id] = 1
		if (s == "queue" && !(id in qf)) { qf[id] = 1; qlist = qlist " " id }
		if (s == "incast") { inc[kv("senders")] = 1; if (kv("buffer") == "deep") deep[a] = 1 }
		if (s == "alpha" && id != "all" && id + 0 > nph) nph = id + 0
	}
	END {
		n = split(order, o, " "); na = 0
		for (i = 1; i <= n; i++) if (o[i] in seen) A[++na] = o[i]
		printf "" > txt; printf "" > rst

		# setup
		tstart("Setup", "")
		trow("boot|kernel|module|base RTT (ms)|K (bytes)|K/C (ms)|C*RTT/7 (bytes)")
		for (im in env) {
			$0 = env[im]
			rate = kv("rate_mbit"); rtt = kv("base_rtt_ms"); k = kv("k_bytes")
			trow(im "|" kv("kernel") "|" kv("module") "|" rtt "|" k "|" sprintf("%.2f", k * 8 / (rate * 1000)) "|" sprintf("%.0f", rate * 1e6 / 8 * rtt / 1000 / 7))
			base = rtt; kc = k * 8 / (rate * 1000); kb = k
		}
		tend()
		while ((getline l < meta) > 0) print "  " l > txt
		print "" > txt

		# scenario 1
		nq = split(qlist, ql, " ")
		for (q = 1; q <= nq; q++) {
			f = ql[q]
			tstart(sprintf("Queue and latency: %d long flows, %s s, %s Mbit/s bottleneck", f, any("queue", f, "secs"), any("queue", f, "rate_mbit")),
			       sprintf("Physical floor for RED rows: base RTT + K/C = %.2f + %.2f = %.2f ms.", base, kc, base + kc))
			trow(header("metric"))
			trow(line("bottleneck qdisc", "queue", f, "qdisc"))
			trow(line("goodput (Mbit/s)", "queue", f, "goodput_mbit", 1))
			trow(line("utilisation (%)", "queue", f, "util_pct", 1))
			trow(line("per-flow mean (Mbit/s)", "queue", f, "flow_mean", 2))
			trow(line("per-flow min (Mbit/s)", "queue", f, "flow_min", 2))
			trow(line("per-flow max (Mbit/s)", "queue", f, "flow_max", 2))
			trow(line("per-flow stddev (Mbit/s)", "queue", f, "flow_sd", 2))
			trow(line("Jain fairness", "queue", f, "jain", 3))
			trow(line("ping RTT p50 (ms)", "queue", f, "rtt_p50", 2))
			trow(line("ping RTT p90 (ms)", "queue", f, "rtt_p90", 2))
			trow(line("ping RTT p99 (ms)", "queue", f, "rtt_p99", 2))
			trow(line("ping RTT max (ms)", "queue", f, "rtt_max", 2))
			trow(line("ping loss (%)", "queue", f, "ping_loss_pct", 1))
			trow(line("queue mean (KB)", "queue", f, "q_kb_mean", 1))
			trow(line("queue p99 (KB)", "queue", f, "q_kb_p99", 1))
			trow(line("RTO timeouts", "queue", f, "rtos"))
			trow(line("retransmitted segments", "queue", f, "retrans"))
			trow(line("bottleneck drops", "queue", f, "drops"))
			trow(line("CE marks", "queue", f, "marks"))
			trow(line("ss: congestion control", "queue", f, "ca"))
			trow(line("ss: ECN negotiated", "queue", f, "ecn"))
			tend()
			u = get("queue", "cubic-noecn", f, "util_pct")
			if (u != "-" && u + 0 < 85) {
				warn = sprintf("cubic-noecn on its deep FIFO used only %s%% of the link: the guest was short of CPU (host load?), so every row here measures CPU starvation as much as congestion control. Rerun on an idle machine or with --rate 50.", u)
				print "WARNING: " warn > txt; print "" > txt
				print ".. warning:: " warn > rst; print "" > rst
			}
		}

		# scenario 2
		ns = 0
		for (x in inc) sl[++ns] = x + 0
		for (i = 1; i <= ns; i++) for (j = i + 1; j <= ns; j++) if (sl[j] < sl[i]) { t = sl[i]; sl[i] = sl[j]; sl[j] = t }
		if (ns) {
			hdr = "senders"; for (i = 1; i <= na; i++) { hdr = hdr "|" A[i]; if (A[i] in deep) hdr = hdr "|" A[i] " deep" }
			split("rtos qct qct99 gp", what, " ")
			sm = "-"; for (k in R) { split(k, kk, SUBSEP); if (kk[1] == "incast" && kk[4] == "slow_ms") { sm = R[k]; break } }
			title["rtos"] = sprintf("Incast: RTO timeouts (rounds that took %s ms or more)", sm == "-" ? 200 : sm)
			title["qct"] = "Incast: query completion time p50 (ms)"
			title["qct99"] = "Incast: query completion time p99 / max (ms)"
			title["gp"] = "Incast: goodput over all queries (Mbit/s)"
			rounds = ""; for (k in R) { split(k, kk, SUBSEP); if (kk[1] == "incast" && kk[4] == "rounds") { rounds = R[k]; break } }
			for (wi = 1; wi <= 4; wi++) {
				w = what[wi]
				tstart(title[w], w == "rtos" ? sprintf("1 MB per query split over the senders, %s measured rounds after 2 warm-up rounds; shallow buffer = 100 packets, deep = pfifo 1000.", rounds) : "")
				trow(hdr)
				for (i = 1; i <= ns; i++) {
					row = sl[i]
					for (j = 1; j <= na; j++) for (b = 1; b <= 2; b++) {
						bn = b == 1 ? "shallow" : "deep"
						if (b == 2 && !(A[j] in deep)) continue
						id = bn "/" sl[i]
						if (w == "rtos") cell = get("incast", A[j], id, "rtos") " (" get("incast", A[j], id, "rto_rounds") ")"
						else if (w == "qct") cell = r1(get("incast", A[j], id, "qct_ms_p50"))
						else if (w == "qct99") cell = r1(get("incast", A[j], id, "qct_ms_p99")) " / " r1(get("incast", A[j], id, "qct_ms_max"))
						else cell = r1(get("incast", A[j], id, "goodput_mbit"))
						row = row "|" cell
					}
					trow(row)
				}
				tend()
			}
		}

		# scenario 3
		if (("converge", "") in ids) {
			tstart(sprintf("Convergence: flow 1 alone %s s, flow 2 joins for %s s, flow 1 alone again", any("converge", "", "alone_s"), any("converge", "", "together_s")),
			       "Statistics over the shared period (0.5 s bins); converged = both within 20% of their mean for 3 bins in a row.")
			trow(header("metric"))
			trow(line("flow 1 mean (Mbit/s)", "converge", "", "flow1_mbit", 2))
			trow(line("flow 2 mean (Mbit/s)", "converge", "", "flow2_mbit", 2))
			trow(line("flow 1 stddev (Mbit/s)", "converge", "", "flow1_sd_mbit", 2))
			trow(line("flow 2 stddev (Mbit/s)", "converge", "", "flow2_sd_mbit", 2))
			trow(line("Jain of the means", "converge", "", "jain_of_means", 3))
			trow(line("Jain per bin (mean)", "converge", "", "jain_per_bin", 3))
			trow(line("time to converge (s)", "converge", "", "converge_s"))
			trow(line("flow 1 back to 80% (s)", "converge", "", "recover_s"))
			tend()

			# the "Seconds / Flow 1 / Flow 2" table of the seed, in Mbit/s
			nsel = 0
			split("dctcp-ours cubic-noecn dctcp-intree", pick, " ")
			for (i = 1; i <= 3; i++) if (("converge", pick[i], "", "flow1_mbit") in R) sel[++nsel] = pick[i]
			while ((getline l < conv) > 0) {
				split(l, c, ",")
				if (c[1] == "algo") continue
				T[c[1], c[2]] = c[3] "|" c[4]; if (!(c[2] in tseen)) { tseen[c[2]] = 1; tl[++nt] = c[2] + 0 }
			}
			for (i = 1; i <= nt; i++) for (j = i + 1; j <= nt; j++) if (tl[j] < tl[i]) { t = tl[i]; tl[i] = tl[j]; tl[j] = t }
			if (nsel && nt) {
				tstart("Convergence over time (Mbit/s per 0.5 s), as in the seed", "")
				hdr = "seconds"; for (j = 1; j <= nsel; j++) hdr = hdr "|" sel[j] " flow 1|" sel[j] " flow 2"
				trow(hdr)
				for (i = 1; i <= nt; i++) {
					row = sprintf("%.1f", tl[i]); some = 0
					for (j = 1; j <= nsel; j++) {
						k = sel[j] SUBSEP sprintf("%.1f", tl[i])
						if (k in T) { row = row "|" T[k]; some = 1 } else row = row "|-|-"
					}
					if (some) trow(row)
				}
				tend()
			}
		}

		# scenario 5
		nm = 0
		for (x in synm) ml[++nm] = x + 0
		for (i = 1; i <= nm; i++) for (j = i + 1; j <= nm; j++) if (ml[j] < ml[i]) { t = ml[i]; ml[i] = ml[j]; ml[j] = t }
		if (nm) {
			tstart("Connection probability with competing DCTCP flows (SYN/ECT test)",
			       sprintf("Share of %s connection attempts whose first SYN got through (handshake < 0.9 s) while N dctcp flows keep the RED queue at K.", any("syn", ml[1], "tries")))
			hdr = "SYN (socket) / competing flows"; for (i = 1; i <= nm; i++) hdr = hdr "|" ml[i]
			trow(hdr)
			for (j = 1; j <= na; j++) {
				if (!(("syn", A[j], ml[1], "p_ect") in R)) continue
				row = A[j] ": ECT SYN (dctcp)"; row2 = A[j] ": non-ECT SYN (cubic+ECN)"
				for (i = 1; i <= nm; i++) { row = row "|" get("syn", A[j], ml[i], "p_ect"); row2 = row2 "|" get("syn", A[j], ml[i], "p_nonect") }
				trow(row); trow(row2)
			}
			tend()
		}

		# scenario 4
		if (nph) {
			tstart("alpha while the RED threshold K changes (one flow; mean over the second half of each phase)",
			       "model: alpha = sqrt(2 / W*), W* = (C * base RTT + K) / MSS packets (DCTCP analysis, SIGMETRICS 2011), scaled to 1024.")
			hdr = "phase|K (bytes)"
			for (i = 1; i <= na; i++) if (("alpha", A[i], "1", "alpha_mean") in R) { al[++nal] = A[i]; hdr = hdr "|" A[i] " alpha|queue (KB)|Mbit/s" }
			hdr = hdr "|model alpha"
			trow(hdr)
			for (p = 1; p <= nph; p++) {
				row = p "|" get("alpha", al[1], p, "k_bytes")
				for (i = 1; i <= nal; i++)
					row = row "|" get("alpha", al[i], p, "alpha_mean") "|" get("alpha", al[i], p, "q_kb_mean") "|" r1(get("alpha", al[i], p, "goodput_mbit"))
				row = row "|" get("alpha", al[1], p, "alpha_theory")
				trow(row)
			}
			tend()
		}
	}' "$OUT/results.txt"
}

# ---- plots -----------------------------------------------------------------
# split CSV NAME by its first column into $PLOT/NAME-ALGO.dat (space
# separated); with a second argument, only rows whose "flows" column (the
# second) is that number, without that column
split_csv()
{
	[ -s "$OUT/$1.csv" ] || return 0
	awk -F, -v d="$PLOT" -v n="$1" -v flows="${2:-}" '
	NR > 1 {
		f = d "/" n "-" $1 ".dat"; $1 = ""
		if (flows != "") { if ($2 != flows) next; $2 = "" }
		print > f
	}' "$OUT/$1.csv"
}

algos_with()
{
	local a l=""

	for a in $ORDER; do
		[ ! -s "$PLOT/$1-$a.dat" ] || l="$l $a"
	done
	echo "$l"
}

# gnuplot "plot" clause over algorithms: plot_clause NAME USING; an
# algorithm keeps its line style (its place in ORDER) in every plot
plot_clause()
{
	local a sep="" s="" i=0

	for a in $ORDER; do
		i=$((i + 1))
		[ -s "$PLOT/$1-$a.dat" ] || continue
		s="$s$sep'$PLOT/$1-$a.dat' using $2 with lines ls $i title '$a'"
		sep=", "
	done
	echo "$s"
}

gp_common()
{
	cat <<-'EOF'
	set terminal pngcairo size 900,380 font "sans,9"
	set style line 1 lc rgb "#1f77b4" lw 1.5
	set style line 2 lc rgb "#17becf" lw 1.5 dt 2
	set style line 3 lc rgb "#9467bd" lw 1.5
	set style line 4 lc rgb "#ff7f0e" lw 1.5
	set style line 5 lc rgb "#2ca02c" lw 1.5
	set style line 6 lc rgb "#d62728" lw 1.5
	set style line 7 lc rgb "#7f7f7f" lw 1.5 dt 3
	set grid lc rgb "#dddddd"
	set key top left font ",8"
	EOF
}

plots()
{
	local n qflows

	PLOT=$(mktemp -d /tmp/bench-plot.XXXXXX)
	for n in converge_ts alpha_ts incast_qct; do
		split_csv "$n"
	done
	# queue plots: the run with the fewest flows (--long adds 19 flows)
	qflows=$(awk -F, 'NR > 1 && (min == "" || $2 < min) { min = $2 } END { print min }' "$OUT/queue_ts.csv" 2>/dev/null)
	if [ -n "$qflows" ]; then
		split_csv queue_ts "$qflows"
		split_csv queue_rtt_cdf "$qflows"
	fi

	# queue: backlog over time and RTT CDF
	if [ -n "$(algos_with queue_ts)" ]; then
		local k_kb
		k_kb=$(awk '/scenario=env/ { for (i = 2; i <= NF; i++) if ($i ~ /^k_bytes=/) { sub(/.*=/, "", $i); print $i / 1000; exit } }' "$OUT/results.txt")
		{
			gp_common
			echo "set output '$OUT/queue.png'"
			echo "set multiplot layout 1,2"
			echo "set title 'bottleneck backlog, $qflows flows (sampled every 100 ms)'"
			echo "set xlabel 'time (s)'; set ylabel 'KB (log)'; set logscale y; set yrange [0.5:3000]"
			echo "set arrow 1 from graph 0, first $k_kb to graph 1, first $k_kb nohead dt 3 lc rgb '#555555'"
			echo "set label 1 'K' at graph 0.97, first $k_kb offset 0,0.6 tc rgb '#555555'"
			echo "plot $(plot_clause queue_ts '1:($2/1000 < 0.5 ? 0.5 : $2/1000)')"
			echo "unset arrow 1; unset label 1"
			echo "set title 'ping RTT under load, $qflows flows (CDF)'"
			echo "set xlabel 'RTT (ms, log)'; set ylabel 'percentile'; unset logscale y; set logscale x; set yrange [0:100]; set autoscale x"
			echo "set key bottom right"
			echo "plot $(plot_clause queue_rtt_cdf '2:1')"
			echo "unset multiplot"
		} | gnuplot || die "gnuplot failed for queue.png"
	fi

	# incast: QCT p99 and RTOs per number of senders, from results.txt
	if grep -q 'scenario=incast' "$OUT/results.txt"; then
		awk -v d="$PLOT" '
		/scenario=incast/ {
			for (i = 2; i <= NF; i++) { p = index($i, "="); v[substr($i, 1, p - 1)] = substr($i, p + 1) }
			name = v["algo"] (v["buffer"] == "deep" ? "-deep" : "")
			print v["senders"], v["qct_ms_p50"], v["qct_ms_p99"], v["rtos"] > (d "/incast-" name ".dat")
		}' "$OUT/results.txt"
		local s="" s2="" sep="" i=0 a
		for a in $ORDER cubic-noecn-deep; do
			i=$((i + 1))
			[ -s "$PLOT/incast-$a.dat" ] || continue
			sort -n -o "$PLOT/incast-$a.dat" "$PLOT/incast-$a.dat"
			s="$s$sep'$PLOT/incast-$a.dat' using 1:3 with linespoints ls $i title '$a'"
			s2="$s2$sep'$PLOT/incast-$a.dat' using 1:4 with linespoints ls $i title '$a'"
			sep=", "
		done
		{
			gp_common
			echo "set output '$OUT/incast.png'"
			echo "set multiplot layout 1,2"
			echo "set title 'query completion time p99'"
			echo "set xlabel 'senders'; set ylabel 'ms'"
			echo "plot $s"
			echo "set title 'RTO timeouts (all measured rounds)'"
			echo "set ylabel 'timeouts'"
			echo "plot $s2"
			echo "unset multiplot"
		} | gnuplot || die "gnuplot failed for incast.png"
	fi

	# convergence: one panel per algorithm
	local algos
	algos=$(algos_with converge_ts)
	if [ -n "$algos" ]; then
		set -- $algos
		{
			gp_common
			echo "set terminal pngcairo size 900,$(( $# > 3 ? 480 : 260 )) font 'sans,8'"
			echo "set output '$OUT/converge.png'"
			echo "set multiplot layout $(( ($# + 2) / 3 )),3"
			echo "set yrange [0:*]; set key top right"
			for a in "$@"; do
				echo "set title '$a'; set xlabel 's'; set ylabel 'Mbit/s'"
				echo "plot '$PLOT/converge_ts-$a.dat' using 1:2 with lines ls 1 title 'flow 1'," \
					"'' using 1:3 with lines ls 6 title 'flow 2'"
			done
			echo "unset multiplot"
		} | gnuplot || die "gnuplot failed for converge.png"
	fi

	# alpha over time with the marking threshold
	algos=$(algos_with alpha_ts)
	if [ -n "$algos" ]; then
		local s="" i=0
		for a in $ORDER; do
			i=$((i + 1))
			[ -s "$PLOT/alpha_ts-$a.dat" ] || continue
			s="$s'$PLOT/alpha_ts-$a.dat' using 1:(\$3 < 0 ? NaN : \$3) with lines ls $i title '$a alpha', "
		done
		set -- $algos
		s="$s'$PLOT/alpha_ts-$1.dat' using 1:(\$2/1000) axes x1y2 with steps ls 7 title 'K (KB, right axis)'"
		{
			gp_common
			echo "set output '$OUT/alpha.png'"
			echo "set title 'DCTCP alpha (ss -ti, 0..1024) while RED K changes'"
			echo "set xlabel 'time (s)'; set ylabel 'alpha'; set yrange [0:1100]"
			echo "set y2label 'K (KB)'; set y2tics; set y2range [0:*]; set key top right"
			echo "plot $s"
		} | gnuplot || die "gnuplot failed for alpha.png"
	fi
}

main()
{
	[ -s "$OUT/results.txt" ] || die "$OUT/results.txt missing or empty"
	command -v gnuplot >/dev/null || die "gnuplot missing: apt-get install gnuplot-nox"
	tables
	plots
	cat "$OUT/summary.txt"
	echo "tables: $OUT/summary.txt, $OUT/tables.rst; plots: $(cd "$OUT" && ls ./*.png 2>/dev/null | tr '\n' ' ')"
}

main
