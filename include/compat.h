/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Out-of-tree compatibility glue for tcp_dctcp.
 *
 * Kbuild force-includes this header ("-include") ahead of every source file,
 * so that all kernel-version differences live here and tcp_dctcp.c is
 * written against the newest API, like mainline.
 *
 * Supported: Linux 6.1 .. 6.12, tested on Debian 12's 6.1 (linux-image-amd64)
 * and 6.12 (linux-image-6.12-amd64).
 *
 * tcp_congestion_ops differences between 6.1 and 6.12, and how they are met:
 *
 *  - __tcp_send_ack(sk, rcv_nxt) became __tcp_send_ack(sk, rcv_nxt, flags)
 *    ("tcp: Pass flags to __tcp_send_ack", mainline 6.14). Stable kernels
 *    took it as a prerequisite for fixes, e.g. Debian's 6.12.117 has it, so
 *    LINUX_VERSION_CODE cannot tell: Kbuild greps the target's tcp.h and
 *    defines COMPAT_TCP_SEND_ACK_HAS_FLAGS. Shimmed below.
 *  - cong_control(sk, rs) became cong_control(sk, ack, flag, rs) in 6.10.
 *    DCTCP uses cong_avoid (Reno's), not cong_control: nothing to do.
 *  - Protective Load Balancing (tcp_plb_*, 6.2+) is fed by mainline DCTCP's
 *    alpha update. Not used here, so behaviour is the same on 6.1 and 6.12.
 *  - Mainline registers dctcp_* as BPF kfuncs (register_btf_kfunc_id_set)
 *    for BPF struct_ops reuse; that needs the in-tree BTF and is omitted.
 *  - tcp_snd_cwnd(), param_set_uint_minmax(), get_info() with
 *    union tcp_cc_info, CA_EVENT_ECN_*, ICSK_ACK_TIMER and TCP_CONG_NEEDS_ECN
 *    are identical on every supported kernel.
 */
#ifndef _DCTCP_COMPAT_H
#define _DCTCP_COMPAT_H

#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "tcp_dctcp (out of tree) needs Linux 6.1 or newer"
#endif

#include <net/tcp.h>

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

#endif /* _DCTCP_COMPAT_H */
