/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracepoints of tcp_dctcp: every input and output of DCTCP's control law,
 * so that operators can watch alpha per RTT and tests can recompute each
 * step exactly (alpha in the internal 1/DCTCP_MAX_ALPHA_FP units of
 * include/dctcp_math.h, windows in segments).
 *
 * They appear under /sys/kernel/tracing/events/tcp_dctcp/. Disabled, each
 * costs one static branch: the arguments are values the module computes
 * anyway.
 *
 * Every event identifies its connection like the tcp tracepoints do: the
 * socket address (printed hashed by %p, stable while the socket lives),
 * family, source and destination address and port.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tcp_dctcp

#if !defined(_TCP_DCTCP_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TCP_DCTCP_TRACE_H

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/tracepoint.h>
#include <net/inet_sock.h>
#include <net/tcp.h>

#ifndef _TCP_DCTCP_TRACE_HELPERS
#define _TCP_DCTCP_TRACE_HELPERS

/* Why the window was halved on a loss (dctcp_loss). */
enum dctcp_loss_reason {
	DCTCP_LOSS_RECOVERY = 1,	/* entering fast recovery */
	DCTCP_LOSS_RTO,			/* retransmission timeout */
};

/* Store the connection's addresses as sockaddr_in or sockaddr_in6. */
static inline void dctcp_trace_store_addrs(const struct sock *sk, void *saddr,
					   void *daddr)
{
	const struct inet_sock *inet = inet_sk(sk);

	memset(saddr, 0, sizeof(struct sockaddr_in6));
	memset(daddr, 0, sizeof(struct sockaddr_in6));
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		struct sockaddr_in6 *v6 = saddr;

		v6->sin6_family = AF_INET6;
		v6->sin6_port = inet->inet_sport;
		v6->sin6_addr = sk->sk_v6_rcv_saddr;
		v6 = daddr;
		v6->sin6_family = AF_INET6;
		v6->sin6_port = inet->inet_dport;
		v6->sin6_addr = sk->sk_v6_daddr;
		return;
	}
#endif
	((struct sockaddr_in *)saddr)->sin_family = AF_INET;
	((struct sockaddr_in *)saddr)->sin_port = inet->inet_sport;
	((struct sockaddr_in *)saddr)->sin_addr.s_addr = inet->inet_saddr;
	((struct sockaddr_in *)daddr)->sin_family = AF_INET;
	((struct sockaddr_in *)daddr)->sin_port = inet->inet_dport;
	((struct sockaddr_in *)daddr)->sin_addr.s_addr = inet->inet_daddr;
}

#endif /* _TCP_DCTCP_TRACE_HELPERS */

/*
 * Every event starts with the connection's identity, as the tcp
 * tracepoints store it; DCTCP_TP_SOCK_ASSIGN() fills these fields.
 */
#define DCTCP_TP_SOCK_ASSIGN(sk)					\
	do {								\
		const struct sock *__sk = (sk);				\
									\
		__entry->skaddr = __sk;					\
		__entry->family = __sk->sk_family;			\
		__entry->sport = ntohs(inet_sk(__sk)->inet_sport);	\
		__entry->dport = ntohs(inet_sk(__sk)->inet_dport);	\
		dctcp_trace_store_addrs(__sk, __entry->saddr,		\
					__entry->daddr);		\
	} while (0)

#define DCTCP_TP_SOCK_FMT	"sk=%p family=%s src=%pISpc dest=%pISpc "

#define show_dctcp_family(family)					\
	__print_symbolic(family, { AF_INET, "AF_INET" },		\
			 { AF_INET6, "AF_INET6" })

#define show_dctcp_loss_reason(reason)					\
	__print_symbolic(reason, { DCTCP_LOSS_RECOVERY, "recovery" },	\
			 { DCTCP_LOSS_RTO, "rto" })

/* Let user space tools print the reason of dctcp_loss by name. */
TRACE_DEFINE_ENUM(DCTCP_LOSS_RECOVERY);
TRACE_DEFINE_ENUM(DCTCP_LOSS_RTO);

/* A connection (or listener) starts with alpha = dctcp_alpha_on_init. */
TRACE_EVENT(dctcp_init,
	    TP_PROTO(const struct sock *sk, u32 alpha),
	    TP_ARGS(sk, alpha),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(__u16, family)
			     __field(__u16, sport)
			     __field(__u16, dport)
			     __array(__u8, saddr, sizeof(struct sockaddr_in6))
			     __array(__u8, daddr, sizeof(struct sockaddr_in6))
			     __field(__u32, alpha)),
	    TP_fast_assign(DCTCP_TP_SOCK_ASSIGN(sk);
			   __entry->alpha = alpha;),
	    TP_printk(DCTCP_TP_SOCK_FMT "alpha=%u",
		      __entry->skaddr, show_dctcp_family(__entry->family),
		      __entry->saddr, __entry->daddr,
		      __entry->alpha)
);

/*
 * Once per RTT: alpha = (1 - g) * alpha_old + g * delivered_ce / delivered,
 * g = 1/2^shift_g, as dctcp_next_alpha() computes it.
 */
TRACE_EVENT(dctcp_alpha_update,
	    TP_PROTO(const struct sock *sk, u32 delivered, u32 delivered_ce,
		     u32 shift_g, u32 alpha_old, u32 alpha),
	    TP_ARGS(sk, delivered, delivered_ce, shift_g, alpha_old, alpha),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(__u16, family)
			     __field(__u16, sport)
			     __field(__u16, dport)
			     __array(__u8, saddr, sizeof(struct sockaddr_in6))
			     __array(__u8, daddr, sizeof(struct sockaddr_in6))
			     __field(__u32, delivered)
			     __field(__u32, delivered_ce)
			     __field(__u32, shift_g)
			     __field(__u32, alpha_old)
			     __field(__u32, alpha)),
	    TP_fast_assign(DCTCP_TP_SOCK_ASSIGN(sk);
			   __entry->delivered = delivered;
			   __entry->delivered_ce = delivered_ce;
			   __entry->shift_g = shift_g;
			   __entry->alpha_old = alpha_old;
			   __entry->alpha = alpha;),
	    TP_printk(DCTCP_TP_SOCK_FMT
		      "delivered=%u delivered_ce=%u shift_g=%u alpha_old=%u alpha=%u",
		      __entry->skaddr, show_dctcp_family(__entry->family),
		      __entry->saddr, __entry->daddr,
		      __entry->delivered, __entry->delivered_ce,
		      __entry->shift_g, __entry->alpha_old, __entry->alpha)
);

/*
 * Entering CWR, in practice on ECE: ssthresh = cwnd * (1 - alpha / 2), as
 * dctcp_reduced_cwnd() computes it.
 */
TRACE_EVENT(dctcp_ce_reduction,
	    TP_PROTO(const struct sock *sk, u32 cwnd, u32 alpha, u32 ssthresh),
	    TP_ARGS(sk, cwnd, alpha, ssthresh),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(__u16, family)
			     __field(__u16, sport)
			     __field(__u16, dport)
			     __array(__u8, saddr, sizeof(struct sockaddr_in6))
			     __array(__u8, daddr, sizeof(struct sockaddr_in6))
			     __field(__u32, cwnd)
			     __field(__u32, alpha)
			     __field(__u32, ssthresh)),
	    TP_fast_assign(DCTCP_TP_SOCK_ASSIGN(sk);
			   __entry->cwnd = cwnd;
			   __entry->alpha = alpha;
			   __entry->ssthresh = ssthresh;),
	    TP_printk(DCTCP_TP_SOCK_FMT "cwnd=%u alpha=%u ssthresh=%u",
		      __entry->skaddr, show_dctcp_family(__entry->family),
		      __entry->saddr, __entry->daddr,
		      __entry->cwnd, __entry->alpha, __entry->ssthresh)
);

/*
 * A loss: ssthresh = max(cwnd / 2, 2), once per loss episode. alpha_old and
 * alpha differ iff dctcp_clamp_alpha_on_loss set alpha to the maximum.
 * ca_state is the state being left; snd_una, snd_nxt, high_seq and srtt
 * tell when the next reduction may come.
 */
TRACE_EVENT(dctcp_loss,
	    TP_PROTO(const struct sock *sk, enum dctcp_loss_reason reason,
		     u32 cwnd, u32 ssthresh, u32 alpha_old, u32 alpha),
	    TP_ARGS(sk, reason, cwnd, ssthresh, alpha_old, alpha),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(__u16, family)
			     __field(__u16, sport)
			     __field(__u16, dport)
			     __array(__u8, saddr, sizeof(struct sockaddr_in6))
			     __array(__u8, daddr, sizeof(struct sockaddr_in6))
			     __field(__u8, reason)
			     __field(__u8, ca_state)
			     __field(__u32, cwnd)
			     __field(__u32, ssthresh)
			     __field(__u32, alpha_old)
			     __field(__u32, alpha)
			     __field(__u32, snd_una)
			     __field(__u32, snd_nxt)
			     __field(__u32, high_seq)
			     __field(__u32, srtt_us)),
	    TP_fast_assign(const struct tcp_sock *tp = tcp_sk(sk);

			   DCTCP_TP_SOCK_ASSIGN(sk);
			   __entry->reason = reason;
			   __entry->ca_state = inet_csk(sk)->icsk_ca_state;
			   __entry->cwnd = cwnd;
			   __entry->ssthresh = ssthresh;
			   __entry->alpha_old = alpha_old;
			   __entry->alpha = alpha;
			   __entry->snd_una = tp->snd_una;
			   __entry->snd_nxt = tp->snd_nxt;
			   __entry->high_seq = tp->high_seq;
			   __entry->srtt_us = tp->srtt_us >> 3;),
	    TP_printk(DCTCP_TP_SOCK_FMT
		      "reason=%s ca_state=%u cwnd=%u ssthresh=%u alpha_old=%u alpha=%u snd_una=%u snd_nxt=%u high_seq=%u srtt_us=%u",
		      __entry->skaddr, show_dctcp_family(__entry->family),
		      __entry->saddr, __entry->daddr,
		      show_dctcp_loss_reason(__entry->reason),
		      __entry->ca_state, __entry->cwnd, __entry->ssthresh,
		      __entry->alpha_old, __entry->alpha, __entry->snd_una,
		      __entry->snd_nxt, __entry->high_seq, __entry->srtt_us)
);

/*
 * A reduction turned out to be spurious: cwnd goes back to
 * max(cwnd, loss_cwnd), and a new loss may be reacted to at once.
 */
TRACE_EVENT(dctcp_undo,
	    TP_PROTO(const struct sock *sk, u32 cwnd, u32 loss_cwnd),
	    TP_ARGS(sk, cwnd, loss_cwnd),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(__u16, family)
			     __field(__u16, sport)
			     __field(__u16, dport)
			     __array(__u8, saddr, sizeof(struct sockaddr_in6))
			     __array(__u8, daddr, sizeof(struct sockaddr_in6))
			     __field(__u32, cwnd)
			     __field(__u32, loss_cwnd)),
	    TP_fast_assign(DCTCP_TP_SOCK_ASSIGN(sk);
			   __entry->cwnd = cwnd;
			   __entry->loss_cwnd = loss_cwnd;),
	    TP_printk(DCTCP_TP_SOCK_FMT "cwnd=%u loss_cwnd=%u",
		      __entry->skaddr, show_dctcp_family(__entry->family),
		      __entry->saddr, __entry->daddr,
		      __entry->cwnd, __entry->loss_cwnd)
);

/* The peer did not negotiate ECN: the connection continues as dctcp-reno. */
TRACE_EVENT(dctcp_fallback,
	    TP_PROTO(const struct sock *sk),
	    TP_ARGS(sk),
	    TP_STRUCT__entry(__field(const void *, skaddr)
			     __field(__u16, family)
			     __field(__u16, sport)
			     __field(__u16, dport)
			     __array(__u8, saddr, sizeof(struct sockaddr_in6))
			     __array(__u8, daddr, sizeof(struct sockaddr_in6))
			     __field(__u8, state)),
	    TP_fast_assign(DCTCP_TP_SOCK_ASSIGN(sk);
			   __entry->state = sk->sk_state;),
	    TP_printk(DCTCP_TP_SOCK_FMT "state=%u",
		      __entry->skaddr, show_dctcp_family(__entry->family),
		      __entry->saddr, __entry->daddr,
		      __entry->state)
);

#endif /* _TCP_DCTCP_TRACE_H */

/* Out of tree: define_trace.h finds this file through Kbuild's -I. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tcp_dctcp_trace
#include <trace/define_trace.h>
