/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stand-in for net/tcp.h, in two flavours: the oldest API include/compat.h
 * supports (5.10.218-like: no tcp_snd_cwnd(), two-argument __tcp_send_ack(),
 * RFC 3168 ECN only), and with STUB_NEW_API the newest (7.x: AccECN).
 */
#ifndef _STUB_NET_TCP_H
#define _STUB_NET_TCP_H

#include <linux/kernel.h>

struct sock {
	u32 last_ack;
	u16 last_flags;
};

struct tcp_sock {
	u32 snd_cwnd;
	u8 ecn_flags;
};

#ifdef STUB_NEW_API
#define TCP_ECN_MODE_RFC3168	1
#define TCP_ECN_MODE_ACCECN	16
#define TCP_ECN_MODE_ANY	(TCP_ECN_MODE_RFC3168 | TCP_ECN_MODE_ACCECN)
#define TCP_CONG_NEEDS_ACCECN	4

static inline bool tcp_ecn_mode_any(const struct tcp_sock *tp)
{
	return tp->ecn_flags & TCP_ECN_MODE_ANY;
}

static inline u32 tcp_snd_cwnd(const struct tcp_sock *tp)
{
	return tp->snd_cwnd;
}

void __tcp_send_ack(struct sock *sk, u32 rcv_nxt, u16 flags);
#else
#define TCP_ECN_OK		1

void __tcp_send_ack(struct sock *sk, u32 rcv_nxt);
#endif

#endif
