# SPDX-License-Identifier: GPL-2.0
#
# render_split.awk: the benchmark's series, one data file per plotted line
# ("x y ..." rows) in directory dir, for gnuplot (see render.sh):
#   SCEN-KIND-ALGO-FLOWS.dat   from SCEN_series.csv (queue_ts, queue_cdf,
#                              rtt_cdf; SCEN is queue or 10g)
#   incast_rtos-ALGO-0.dat     senders, RTOs       (RESULT lines)
#   incast_qct99-ALGO-0.dat    senders, QCT p99 ms (RESULT lines)
#   conv-ALGO-FLOW.dat         t_s, Mbit/s         (converge_rates.csv)
#   alpha-ALGO.dat             t_ms, alpha, model, K (alpha_series.csv)
#
#   awk -v dir=DIR -f render_split.awk DIR/results.txt DIR/*.csv

function kv(k,   i) {
	for (i = 2; i <= NF; i++)
		if (index($i, k "=") == 1)
			return substr($i, length(k) + 2)
	return ""
}

FNR == 1 {
	base = FILENAME
	sub(/.*\//, "", base)
	FS = base ~ /\.csv$/ ? "," : " "
	$0 = $0
	if (base ~ /\.csv$/)
		next
}

base == "results.txt" && $1 == "RESULT" && kv("scenario") == "incast" {
	print kv("senders"), kv("rtos") > (dir "/incast_rtos-" kv("algo") "-0.dat")
	print kv("senders"), kv("qct_p99_ms") > (dir "/incast_qct99-" kv("algo") "-0.dat")
	next
}

base ~ /_series\.csv$/ && base != "alpha_series.csv" {
	s = base
	sub(/_series\.csv$/, "", s)
	print $4, $5 > (dir "/" s "-" $3 "-" $1 "-" $2 ".dat")
	next
}

base == "converge_rates.csv" {
	print $2, $4 > (dir "/conv-" $1 "-" $3 ".dat")
	next
}

base == "alpha_series.csv" {
	print $2, $3, $5, $4 > (dir "/alpha-" $1 ".dat")
}
