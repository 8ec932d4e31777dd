# SPDX-License-Identifier: GPL-2.0
#
# dctcp_sim_decay.awk: does alpha decay to exactly 0 once the marks stop?
# Input: the "A" records of one connection (dctcp_trace.awk's conversion of
# the dctcp_alpha_update tracepoint: A TS KEY delivered delivered_ce
# shift_g alpha_old alpha, alpha in internal 1/2^30 units).
#
# From the last update that saw marks, each unmarked RTT multiplies alpha
# by (1 - g) (alpha -= alpha >> shift_g) until the shift truncates to 0,
# and then drops the remainder: alpha is exactly 0 after a number of
# updates this script predicts from the alpha of that last marked update.
#
# Prints: unmarked= (updates after the last marked one) predicted=
# (updates to 0) zero_at= (the update that first reported 0, counted from
# the last marked one; -1 if none) stays_zero=0|1 (every later update is
# 0) per_update_us= (mean time between updates until 0) start_alpha=
# last_alpha=
#
#   awk -f dctcp_sim_decay.awk RECORDS

$1 == "A" {
	n++
	ts[n] = $2; ce[n] = $5; sg[n] = $6; al[n] = $8
	if ($5 > 0)
		m = n
}

END {
	if (!m) {
		print "unmarked=0 predicted=-1 zero_at=-1 stays_zero=0 per_update_us=0 start_alpha=0 last_alpha=0"
		exit
	}
	x = al[m]
	for (p = 0; x > 0; p++) {
		d = int(x / 2 ^ sg[m])
		x = d ? x - d : 0
	}
	z = -1
	stays = 1
	for (i = m + 1; i <= n; i++) {
		if (z < 0 && al[i] == 0)
			z = i - m
		else if (z >= 0 && al[i] != 0)
			stays = 0
	}
	printf "unmarked=%d predicted=%d zero_at=%d stays_zero=%d per_update_us=%.1f start_alpha=%d last_alpha=%d\n",
	       n - m, p, z, (z >= 0 && stays), (z > 0 ? (ts[m + z] - ts[m]) * 1e6 / z : 0), al[m], al[n]
}
