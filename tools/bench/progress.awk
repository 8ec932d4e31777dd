# SPDX-License-Identifier: GPL-2.0
#
# progress.awk: bench.sh's live view of the guest's output.  Each input
# line is "ELAPSED_S LINE" (the host's wall clock since bench.sh started):
# "# " lines are shown, RESULT lines summarised, CSV blocks skipped, and
# the wall clock of each "SCENARIO NAME start" .. "SCENARIO NAME end" is
# shown and appended to the file walls ("NAME SECONDS" lines).
#
#   ... | awk -v walls=FILE -f progress.awk

function kv(k,   i) {
	for (i = 3; i <= NF; i++)
		if (index($i, k "=") == 1)
			return substr($i, length(k) + 2)
	return "?"
}

function say(msg) {
	printf "bench [%3dm%02ds] %s\n", int($1 / 60), $1 % 60, msg
	fflush()
}

{
	line = substr($0, index($0, " ") + 1)
}

$2 == "CSV-BEGIN" {
	incsv = 1
	next
}

$2 == "CSV-END" {
	incsv = 0
	next
}

incsv {
	next
}

$2 == "SCENARIO" && $4 == "start" {
	t0[$3] = $1
	say("scenario " $3 " starts")
	next
}

$2 == "SCENARIO" && $4 == "end" {
	say("scenario " $3 " took " ($1 - t0[$3]) " s of wall clock")
	print $3, $1 - t0[$3] >> walls
	fflush(walls)
	next
}

$2 == "RESULT" {
	s = kv("scenario")
	if (s == "queue" || s == "10g")
		msg = sprintf("  %-12s %2s flows: util %s, queue mean %s B, RTT p50 %s us (floor %s), Jain %s, RTOs %s, %s",
			      kv("algo"), kv("flows"), kv("util"), kv("q_mean"), kv("rr_p50"),
			      kv("floor_us"), kv("jain"), kv("rtos"), kv("check"))
	else if (s == "incast")
		msg = sprintf("  %-12s %2s senders: RTOs %s, TLPs %s, QCT p50 %s ms p99 %s ms, %s",
			      kv("algo"), kv("senders"), kv("rtos"), kv("tlps"), kv("qct_p50_ms"),
			      kv("qct_p99_ms"), kv("check"))
	else if (s == "converge")
		msg = sprintf("  %-12s converged within %s ms of each change, min Jain %s, %s",
			      kv("algo"), kv("conv_max_ms"), kv("jain_min"), kv("check"))
	else if (s == "alpha")
		msg = sprintf("  %-12s K=%s B: alpha %s (model %s), queue %s B",
			      kv("algo"), kv("k_bytes"), kv("alpha_mean"), kv("model"), kv("q_mean"))
	else if (s == "env")
		msg = sprintf("  %s: kernel %s, module %s", kv("algo"), kv("kernel"), kv("module"))
	else
		msg = "  " line
	say(msg)
	next
}

$2 == "#" {
	say(substr(line, 3))
	next
}

{
	say(line)
}
