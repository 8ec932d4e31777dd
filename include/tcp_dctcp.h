/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * DCTCP receiver side: echoing CE marks correctly under delayed ACKs.
 */
#ifndef _TCP_DCTCP_H
#define _TCP_DCTCP_H

#include <net/tcp.h>

/* Let the next ACK carry ECE iff the CE state is 1. */
static inline void dctcp_ece_ack_cwr(struct sock *sk, u32 ce_state)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (ce_state)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

/**
 * dctcp_ece_ack_update() - track the CE state of received data
 * @sk:			the receiving socket
 * @evt:		CA_EVENT_ECN_IS_CE or CA_EVENT_ECN_NO_CE
 * @prior_rcv_nxt:	rcv_nxt before the segment that raised @evt
 * @ce_state:		CE state of the last data segment (0 or 1)
 *
 * DCTCP's sender needs an exact count of the bytes that were marked, so each
 * ACK must echo ECE for exactly the data that arrived with CE (RFC 8257,
 * section 3.2). A delayed ACK covers several segments: when the CE state
 * flips while an ACK is being delayed, that ACK is sent at once, acking only
 * up to @prior_rcv_nxt with the old state, and the segment that flipped the
 * state is ACKed immediately with the new one.
 */
static inline void dctcp_ece_ack_update(struct sock *sk, enum tcp_ca_event evt,
					u32 *prior_rcv_nxt, u32 *ce_state)
{
	struct inet_connection_sock *icsk = inet_csk(sk);
	u32 new_ce_state = evt == CA_EVENT_ECN_IS_CE ? 1 : 0;

	if (*ce_state != new_ce_state) {
		if (icsk->icsk_ack.pending & ICSK_ACK_TIMER) {
			/* Flush the delayed ACK with the old CE state. */
			dctcp_ece_ack_cwr(sk, *ce_state);
			__tcp_send_ack(sk, *prior_rcv_nxt, 0);
		}
		icsk->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	*prior_rcv_nxt = tcp_sk(sk)->rcv_nxt;
	*ce_state = new_ce_state;
	dctcp_ece_ack_cwr(sk, new_ce_state);
}

#endif /* _TCP_DCTCP_H */
