/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Out-of-tree compatibility glue for tcp_dctcp.
 *
 * Kbuild force-includes this header ("-include") ahead of every source file,
 * so that all kernel-version differences live here and tcp_dctcp.c is
 * written against the newest API, like mainline.
 *
 * Tested: Linux 5.10 .. 7.3, i.e. every kernel Debian ships for amd64:
 * bullseye 5.10, bookworm 6.1, 6.12 from bookworm-security and from
 * bookworm-backports, trixie 6.12, sid 7.2 and experimental 7.3-rc.
 * Older kernels are refused. Newer ones build with a compiler warning
 * saying that they are untested (an error under CONFIG_WERROR).
 *
 * Differences, and how they are met. Where stable series backport a change,
 * LINUX_VERSION_CODE cannot tell: Kbuild greps the target's headers and
 * defines COMPAT_* instead.
 *
 *  - tcp_snd_cwnd() (5.18) wraps tp->snd_cwnd. Probed: COMPAT_HAS_TCP_SND_CWND.
 *  - param_set_uint_minmax() (5.15) is missing in 5.10.218 and older, and
 *    was backported later in the 5.10 series. Probed:
 *    COMPAT_HAS_PARAM_SET_UINT_MINMAX; else a copy of mainline's.
 *  - __tcp_send_ack(sk, rcv_nxt) became __tcp_send_ack(sk, rcv_nxt, flags)
 *    ("tcp: Pass flags to __tcp_send_ack", mainline 6.14). Stable kernels
 *    took it as a prerequisite for fixes: Debian's 6.12.117 (trixie) and
 *    6.12.118 (bookworm-security) have it, 6.12.95 (bookworm-backports)
 *    does not. Probed: COMPAT_TCP_SEND_ACK_HAS_FLAGS.
 *  - Accurate ECN (RFC 9768, Linux 7.x): TCP_ECN_OK became
 *    TCP_ECN_MODE_RFC3168, joined by TCP_ECN_MODE_ACCECN;
 *    tcp_ecn_mode_any() is true for either. Mapping the old flag to
 *    RFC 3168 alone would send every AccECN connection to dctcp-reno, so
 *    older kernels get tcp_ecn_mode_any() = TCP_ECN_OK, the only ECN
 *    they have. TCP_CONG_NEEDS_ACCECN is 0 there: nothing to
 *    negotiate (see dctcp_accecn in tcp_dctcp.c).
 *  - CA_EVENT_TX_START moved to a .cwnd_event_tx_start callback (7.x). It
 *    only feeds Protective Load Balancing, which this module leaves out.
 *  - cong_control(sk, rs) became cong_control(sk, ack, flag, rs) in 6.10.
 *    DCTCP uses cong_avoid (Reno's), not cong_control: nothing to do.
 *  - Protective Load Balancing (tcp_plb_*, 6.2+) is fed by mainline DCTCP's
 *    alpha update. Not used here, so behaviour is the same on every kernel.
 *  - Mainline registers dctcp_* as BPF kfuncs (register_btf_kfunc_id_set)
 *    for BPF struct_ops reuse; that needs the in-tree BTF and is omitted.
 *  - get_info() with union tcp_cc_info, CA_EVENT_ECN_*, ICSK_ACK_TIMER,
 *    TCP_ECN_DEMAND_CWR, tp->delivered_ce and TCP_CONG_NEEDS_ECN are the
 *    same on every supported kernel.
 */
#ifndef _DCTCP_COMPAT_H
#define _DCTCP_COMPAT_H

#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 10, 0)
#error "tcp_dctcp (out of tree) needs Linux 5.10 or newer"
#endif

#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 4, 0)
#warning "tcp_dctcp (out of tree) is tested on Linux 5.10 .. 7.3 only: untested kernel"
#endif

#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <net/tcp.h>

#ifndef COMPAT_HAS_TCP_SND_CWND
static inline u32 tcp_snd_cwnd(const struct tcp_sock *tp)
{
	return tp->snd_cwnd;
}
#endif

#ifndef COMPAT_HAS_PARAM_SET_UINT_MINMAX
/* Mainline's, from kernel/params.c (5.15). */
static inline int compat_param_set_uint_minmax(const char *val,
					       const struct kernel_param *kp,
					       unsigned int min,
					       unsigned int max)
{
	unsigned int num;
	int ret;

	if (!val)
		return -EINVAL;
	ret = kstrtouint(val, 0, &num);
	if (ret)
		return ret;
	if (num < min || num > max)
		return -EINVAL;
	*((unsigned int *)kp->arg) = num;
	return 0;
}

#define param_set_uint_minmax compat_param_set_uint_minmax
#endif

#ifndef COMPAT_TCP_SEND_ACK_HAS_FLAGS
/* Older kernels can only send a plain ACK: callers here always pass 0. */
static inline void __compat_tcp_send_ack(struct sock *sk, u32 rcv_nxt,
					 u16 flags)
{
	WARN_ON_ONCE(flags);
	__tcp_send_ack(sk, rcv_nxt);
}

#define __tcp_send_ack __compat_tcp_send_ack
#endif

#ifndef TCP_ECN_MODE_ANY
/* Before AccECN, RFC 3168 was the only ECN mode. */
static inline bool tcp_ecn_mode_any(const struct tcp_sock *tp)
{
	return tp->ecn_flags & TCP_ECN_OK;
}

#define TCP_CONG_NEEDS_ACCECN 0
#endif

#endif /* _DCTCP_COMPAT_H */
