# SPDX-License-Identifier: GPL-2.0
#
# bench_alpha.awk: alpha while RED's K changes, against the fluid model.
# Reads the phases file ("phase I k=K t_us=T": K from T on, client clock)
# and the dctcp_flow client output (sample and queue lines).
#
# The model (Alizadeh et al., "Analysis of DCTCP", SIGMETRICS 2011): with
# N flows whose windows would fill the pipe and the queue up to K,
# W* = (C * RTT + K) / N packets, the marked fraction settles at
# alpha = sqrt(2 / W*).  Here N = 1, C * RTT is the bandwidth-delay product
# of the base RTT (rate_bps, base_us), packets are 1514 bytes on the wire.
#
# Prints one "RESULT scenario=alpha algo=ROW phase=I k_bytes=K alpha_mean=
# model= q_mean= mbit=" line per phase (means over its second half), then
# CSV rows "algo,t_ms,alpha,k_bytes,model,backlog" for every sample.
#
#   awk -v algo=ROW -v rate_bps=R -v base_us=B -v phase_us=P \
#       -f dctcp_flow.awk -f bench_alpha.awk PHASES OUT

function phase_of(t,   i) {
	for (i = np - 1; i >= 0; i--)
		if (t >= pt[i])
			return i
	return 0
}

FNR == NR && $1 == "phase" {
	kv()
	pk[$2] = v["k"]; pt[$2] = v["t_us"]; np = $2 + 1
	pm[$2] = 1024 * sqrt(2 / ((rate_bps / 8 * base_us / 1e6 + v["k"]) / 1514))
	next
}

$1 == "queue" {
	kv()
	q = v["backlog"]
	p = phase_of(v["t_us"])
	if (v["t_us"] >= pt[p] + phase_us / 2) {
		qs[p] += q; qn[p]++
	}
}

$1 == "sample" {
	kv()
	t = v["t_us"]
	p = phase_of(t)
	if (t >= pt[p] + phase_us / 2) {
		as[p] += v["alpha"]; an[p]++
		if (!(p in a0)) {
			a0[p] = v["acked"]; t0[p] = t
		}
		a1[p] = v["acked"]; t1[p] = t
	}
	rows[++nr] = sprintf("%s,%.3f,%d,%d,%.1f,%d", algo, t / 1000, v["alpha"], pk[p], pm[p], q)
}

END {
	for (p = 0; p < np; p++)
		printf "RESULT scenario=alpha algo=%s phase=%d k_bytes=%d alpha_mean=%.1f model=%.1f q_mean=%.0f mbit=%.1f\n",
		       algo, p, pk[p], (an[p] ? as[p] / an[p] : -1), pm[p], (qn[p] ? qs[p] / qn[p] : -1),
		       (t1[p] > t0[p] ? (a1[p] - a0[p]) * 8 / (t1[p] - t0[p]) : 0)
	for (i = 1; i <= nr; i++)
		print rows[i]
}
