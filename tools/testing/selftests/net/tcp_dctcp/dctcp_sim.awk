# SPDX-License-Identifier: GPL-2.0
#
# dctcp_sim.awk: the figures of one dctcp_flow client run (its "sample",
# "queue" and "rr" lines, see dctcp_flow.c) over the time window
# [from_us, to_us] of the client's clock, printed as one line of
# key=value pairs:
#
#   util         bytes the bottleneck queue sent / (rate * window): the
#                link's utilisation, 0..1 (needs rate_bps and -q samples)
#   mbit         the flows' goodput: bytes acknowledged in the window
#   flows        flows with samples in the window
#   jain fstd    Jain's index and the standard deviation (Mbit/s) of the
#                per-flow goodputs
#   fmin fmax    the smallest and largest per-flow goodput (Mbit/s)
#   q_mean q_p50 q_p99 q_max   bottleneck backlog in bytes (queue samples)
#   marks drops  RED marks and qdisc drops in the window
#   rr_n rr_p50 rr_p90 rr_p99 rr_max   probe round trips (us) sent in the window
#   srtt_p50     median of the flows' smoothed RTT samples (us)
#   alpha_mean   mean DCTCP alpha of the flows' samples (1/1024 units)
#   ewma_mean    mean of a float EWMA with gain 1/2^shift_g of the marked
#                fraction each flow saw between consecutive samples
#                (delivered_ce / delivered), scaled to 1024, started from
#                the flow's alpha at its first sample in the window
#   ewma_mad     mean |alpha - EWMA| over the same samples
#   ecn          1 iff every flow reported ECN (TCPI_OPT_ECN) in every sample
#
#   awk -v from_us=F -v to_us=T -v rate_bps=R [-v shift_g=G] \
#       -f dctcp_flow.awk -f dctcp_sim.awk OUT
#
# Percentiles are nearest-rank.  Samples sit on the client's sampling
# grid, which dctcp_flow jitters: a periodic queue cannot alias with it.

function inwin(t) {
	return t >= from_us && t <= to_us
}

BEGIN {
	if (to_us == "")
		to_us = 1e18
	from_us += 0
	if (shift_g == "")
		shift_g = 4
	g = 1 / 2 ^ shift_g
	ecn = 1
}

$1 == "queue" {
	kv()
	if (!inwin(v["t_us"]))
		next
	nq++
	q[nq] = v["backlog"]; qsum += v["backlog"]
	if (nq == 1) {
		qt0 = v["t_us"]; qb0 = v["bytes"]; qm0 = v["marked"]; qd0 = v["drops"]
	}
	qt1 = v["t_us"]; qb1 = v["bytes"]; qm1 = v["marked"]; qd1 = v["drops"]
}

$1 == "rr" {
	kv()
	if (inwin(v["t_us"]))
		rr[++nrr] = v["rtt_us"]
}

$1 == "sample" {
	kv()
	if (!inwin(v["t_us"]))
		next
	f = v["flow"]
	if (!(f in ft0)) {
		ft0[f] = v["t_us"]; fa0[f] = v["acked"]; nf++
		e[f] = v["alpha"] / 1024
	} else if (v["delivered"] > fdl[f]) {
		e[f] = (1 - g) * e[f] + g * (v["delivered_ce"] - fdc[f]) / (v["delivered"] - fdl[f])
	}
	ft1[f] = v["t_us"]; fa1[f] = v["acked"]
	fdl[f] = v["delivered"]; fdc[f] = v["delivered_ce"]
	if (v["rtt_us"] > 0)
		srtt[++nsr] = v["rtt_us"]
	if (v["cc_enabled"]) {
		na++
		asum += v["alpha"]
		esum += e[f] * 1024
		d = v["alpha"] - e[f] * 1024
		emad += d < 0 ? -d : d
	}
	if (!v["ecn"])
		ecn = 0
}

END {
	out = ""
	if (nq > 1 && rate_bps > 0 && qt1 > qt0)
		out = out sprintf(" util=%.4f", (qb1 - qb0) * 8 / (rate_bps * (qt1 - qt0) / 1e6))
	for (f in ft0) {
		if (ft1[f] <= ft0[f])
			continue
		r = (fa1[f] - fa0[f]) * 8 / (ft1[f] - ft0[f])
		tot += r; sq += r * r; n++
		if (fmin == "" || r < fmin)
			fmin = r
		if (r > fmax)
			fmax = r
	}
	out = out sprintf(" mbit=%.2f flows=%d", tot, nf)
	if (n) {
		m = tot / n
		out = out sprintf(" jain=%.4f fstd=%.3f fmin=%.2f fmax=%.2f", sq > 0 ? tot * tot / (n * sq) : 0,
				  sqrt(sq / n - m * m > 0 ? sq / n - m * m : 0), fmin, fmax)
	}
	if (nq) {
		hsort(q, nq)
		out = out sprintf(" q_mean=%.1f q_p50=%d q_p99=%d q_max=%d marks=%d drops=%d",
				  qsum / nq, pct(q, nq, 50), pct(q, nq, 99), q[nq], qm1 - qm0, qd1 - qd0)
	}
	if (nrr) {
		hsort(rr, nrr)
		out = out sprintf(" rr_n=%d rr_p50=%d rr_p90=%d rr_p99=%d rr_max=%d", nrr,
				  pct(rr, nrr, 50), pct(rr, nrr, 90), pct(rr, nrr, 99), rr[nrr])
	}
	if (nsr) {
		hsort(srtt, nsr)
		out = out sprintf(" srtt_p50=%d", pct(srtt, nsr, 50))
	}
	if (na)
		out = out sprintf(" alpha_mean=%.2f ewma_mean=%.2f ewma_mad=%.2f", asum / na, esum / na,
				  emad / na)
	print substr(out, 2) " ecn=" ecn
}
