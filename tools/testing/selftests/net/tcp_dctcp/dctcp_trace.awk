# SPDX-License-Identifier: GPL-2.0
#
# Turn tcp_dctcp trace events (the text of a tracefs "trace" file) into the
# oracle's records, one per line, in the order of the trace:
#
#   I TS KEY alpha
#   A TS KEY delivered delivered_ce shift_g alpha_old alpha
#   R TS KEY cwnd alpha ssthresh
#   L TS KEY reason ca_state cwnd ssthresh alpha_old alpha snd_una snd_nxt high_seq srtt_us
#   U TS KEY cwnd loss_cwnd
#   F TS KEY
#
# TS is the trace timestamp in seconds, KEY the connection: the hashed
# socket address, source and destination ("sk/src/dest").  Lines that are
# not tcp_dctcp events (the header, other events) are skipped; an event
# with a missing field is printed as "? LINE" so that the checker counts
# it as malformed instead of the conversion hiding it.
#
#   awk -f dctcp_trace.awk TRACE

function need(k)
{
	if (!(k in v)) {
		bad = 1
		return "?"
	}
	return v[k]
}

function out(rec)
{
	if (bad)
		print "? " $0
	else
		print rec
}

{
	ev = ""
	for (i = 2; i <= NF; i++) {
		if ($i ~ /^dctcp_[a-z_]+:$/ && $(i - 1) ~ /^[0-9]+\.[0-9]+:$/) {
			ev = substr($i, 1, length($i) - 1)
			ts = substr($(i - 1), 1, length($(i - 1)) - 1)
			break
		}
	}
	if (ev == "")
		next
	delete v
	for (j = i + 1; j <= NF; j++) {
		eq = index($j, "=")
		if (eq)
			v[substr($j, 1, eq - 1)] = substr($j, eq + 1)
	}
	bad = 0
	key = need("sk") "/" need("src") "/" need("dest")
	head = ts " " key
	if (ev == "dctcp_init")
		out("I " head " " need("alpha"))
	else if (ev == "dctcp_alpha_update")
		out("A " head " " need("delivered") " " need("delivered_ce") " " \
		    need("shift_g") " " need("alpha_old") " " need("alpha"))
	else if (ev == "dctcp_ce_reduction")
		out("R " head " " need("cwnd") " " need("alpha") " " need("ssthresh"))
	else if (ev == "dctcp_loss")
		out("L " head " " need("reason") " " need("ca_state") " " \
		    need("cwnd") " " need("ssthresh") " " need("alpha_old") " " \
		    need("alpha") " " need("snd_una") " " need("snd_nxt") " " \
		    need("high_seq") " " need("srtt_us"))
	else if (ev == "dctcp_undo")
		out("U " head " " need("cwnd") " " need("loss_cwnd"))
	else if (ev == "dctcp_fallback")
		out("F " head)
	else
		print "? " $0
}
