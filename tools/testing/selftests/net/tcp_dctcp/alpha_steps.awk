# SPDX-License-Identifier: GPL-2.0
#
# alpha_steps.awk: the EWMA gain and time constant seen in a dctcp_flow
# sample series (dctcp_alpha.sh: one flow under 100% CE marking, then
# none).  Prints "g_rise g_decay tau_rise tau_decay peak final rtt_ms";
# see analyse() in dctcp_alpha.sh for the method.

function upper_quartile(arr, m,    i, j, x) {
	for (i = 2; i <= m; i++) {
		x = arr[i]
		for (j = i - 1; j >= 1 && arr[j] > x; j--)
			arr[j + 1] = arr[j]
		arr[j + 1] = x
	}
	return m ? arr[int((3 * m + 3) / 4)] : 0
}
/^sample/ {
	for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	n++; t[n] = v["t_ms"]; a[n] = v["alpha"]; r[n] = v["rtt_us"] / 1000
}
END {
	peak = -1
	for (i = 1; i <= n; i++) if (a[i] >= peak) { peak = a[i]; ip = i }
	for (i = 1; i <= n && a[i] == 0; i++)
		;
	i0 = i
	for (i = 1; i < n; i++) {
		rtt = r[i + 1] > 0 ? r[i + 1] : r[i]
		if (rtt <= 0) continue
		dn = (t[i + 1] - t[i]) / rtt
		if (i < ip) {
			if (i >= i0)
				rise += (1024 - a[i]) * dn
		} else {
			decay += a[i] * dn
		}
		rsum += rtt; rn++
	}
	for (i = i0; i < ip; i++) {
		if (a[i + 1] == a[i] || 1024 - a[i + 1] < 32) continue
		ru[++nu] = (1024 - a[i + 1]) / (1024 - a[i])
	}
	for (i = ip; i < n; i++) {
		if (a[i + 1] == a[i] || a[i + 1] < 32) continue
		rd[++nd] = a[i + 1] / a[i]
	}
	printf "%.3f %.3f %.1f %.1f %d %d %.1f\n",
		(nu ? 1 - upper_quartile(ru, nu) : -1),
		(nd ? 1 - upper_quartile(rd, nd) : -1),
		rise / 1024, (peak > 0 ? decay / peak : -1), peak, a[n],
		(rn ? rsum / rn : 0)
}
