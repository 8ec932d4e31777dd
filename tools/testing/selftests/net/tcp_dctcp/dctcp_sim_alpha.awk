# SPDX-License-Identifier: GPL-2.0
#
# dctcp_sim_alpha.awk: alpha's gain per RTT in one dctcp_flow run whose
# packets were all CE-marked at first (alpha rises towards 1024) and then
# none (alpha decays towards 0); see dctcp_sim_alpha.sh.
#
# alpha follows alpha' = (1 - g) alpha + g F once per window of data:
# 1024 - alpha (rise, F = 1) and alpha (decay, F = 0) shrink by (1 - g)
# per window, so their logarithm falls on a straight line of slope
# ln(1 - g) / window.  A least-squares fit over the samples between the
# first update and the peak (rise) and after the peak (decay), where that
# quantity is at least 16 (integer rounding) and at most 1008 (the first
# step), gives the slope; with the RTT the median smoothed RTT over the
# same samples, the gain per RTT is 1 - exp(slope * RTT).
#
# Prints: rise_g= decay_g= rise_rtt_us= decay_rtt_us= rise_n= decay_n=
#         peak= final=  (a gain is -1 when fewer than 5 samples fit)
#
#   awk -f dctcp_flow.awk -f dctcp_sim_alpha.awk OUT

# the gain of the samples from..to whose y = (rise ? 1024 - a : a) fits
function fit(from, to, rise,   i, y, n, sx, sy, sxx, sxy, r, nr, slope, j, x, k) {
	n = sx = sy = sxx = sxy = nr = 0
	for (i = from; i <= to; i++) {
		y = rise ? 1024 - a[i] : a[i]
		if (y < 16 || y > 1008 || (rise && !a[i]))
			continue
		x = t[i] / 1e6
		n++; sx += x; sy += log(y); sxx += x * x; sxy += x * log(y)
		r[++nr] = rtt[i]
	}
	fit_n = n
	fit_rtt = 0
	if (n < 5 || n * sxx - sx * sx <= 0)
		return -1
	# median RTT (insertion sort: a few hundred samples at most)
	for (j = 2; j <= nr; j++) {
		x = r[j]
		for (k = j - 1; k >= 1 && r[k] > x; k--)
			r[k + 1] = r[k]
		r[k + 1] = x
	}
	fit_rtt = r[int((nr + 1) / 2)]
	slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
	return 1 - exp(slope * fit_rtt / 1e6)
}

$1 == "sample" {
	kv()
	n++
	t[n] = v["t_us"]; a[n] = v["alpha"]; rtt[n] = v["rtt_us"]
	if (a[n] > peak) {
		peak = a[n]
		ip = n
	}
}

END {
	rg = fit(1, ip, 1); rn = fit_n; rr = fit_rtt
	dg = fit(ip, n, 0)
	printf "rise_g=%.4f decay_g=%.4f rise_rtt_us=%d decay_rtt_us=%d rise_n=%d decay_n=%d peak=%d final=%d\n",
	       rg, dg, rr, fit_rtt, rn, fit_n, peak, a[n]
}
