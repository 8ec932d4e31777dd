# SPDX-License-Identifier: GPL-2.0
#
# bench_converge.awk: five flows joining one by one and leaving one by one
# (dctcp_flow -P 5 -S STAGE -E STAGE -t 9*STAGE, sampled with -I).  Stage k
# (0..8) is [k, k + 1) * stage_us from the client's start; flows 0..k run
# in stages 0..4, flows 0..8-k in stages 5..8.  Each flow's goodput comes
# from its bytes_acked, interpolated linearly between samples.
#
# mode=stats (default) prints key=value pairs:
#   conv_ms_sK   from the start of stage K to the first window of win_us
#                after which every window of the stage is fair (each
#                running flow within tol of their mean); -1 if never
#   jain_sK      Jain's index of the running flows' goodputs over the
#                second half of stage K
#   conv_max_ms  the largest conv_ms (-1 if one never converged)
#   jain_min     the smallest jain_sK of the stages with 2 flows or more
# mode=rates prints CSV rows "algo,t_s,flow,mbit": each flow's goodput in
# bins of bin_us while it runs.
#
#   awk -v stage_us=S -v win_us=W -v tol=T -f dctcp_flow.awk -f bench_converge.awk OUT
#   awk -v mode=rates -v algo=ROW -v stage_us=S -v bin_us=B \
#       -f dctcp_flow.awk -f bench_converge.awk OUT

function mbit(f, a, b) {
	return (acked(f, b) - acked(f, a)) * 8 / (b - a)
}

function running(k) {
	return k <= 4 ? k + 1 : 9 - k
}

# every running flow within tol of their mean over [a, b)
function fair(k, a, b,   n, f, m, r) {
	n = running(k)
	m = 0
	for (f = 0; f < n; f++) {
		r[f] = mbit(f, a, b)
		m += r[f] / n
	}
	if (m <= 0)
		return 0
	for (f = 0; f < n; f++)
		if (r[f] < (1 - tol) * m || r[f] > (1 + tol) * m)
			return 0
	return 1
}

$1 == "sample" {
	kv()
	add_sample()
}

END {
	if (mode == "rates") {
		for (f = 0; f < 5; f++)
			for (x = st[f, 1]; x + bin_us <= st[f, ns[f]]; x += bin_us)
				printf "%s,%.3f,%d,%.2f\n", algo, (x + bin_us / 2) / 1e6, f, mbit(f, x, x + bin_us)
		exit
	}
	cmax = 0
	jmin = 1
	for (k = 0; k <= 8; k++) {
		s0 = k * stage_us; s1 = s0 + stage_us
		c = -1
		for (x = s0; x + win_us <= s1; x += win_us) {
			if (!fair(k, x, x + win_us))
				c = -1
			else if (c < 0)
				c = x - s0
		}
		n = running(k)
		t = q = 0
		for (f = 0; f < n; f++) {
			r = mbit(f, s0 + stage_us / 2, s1)
			t += r; q += r * r
		}
		j = q > 0 ? t * t / (n * q) : 0
		printf "conv_ms_s%d=%.0f jain_s%d=%.4f ", k, (c < 0 ? -1 : c / 1000), k, j
		if (c < 0 || cmax < 0)
			cmax = -1
		else if (c / 1000 > cmax)
			cmax = c / 1000
		if (n > 1 && j < jmin)
			jmin = j
	}
	printf "conv_max_ms=%.0f jain_min=%.4f\n", cmax, jmin
}
