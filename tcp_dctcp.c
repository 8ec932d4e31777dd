// SPDX-License-Identifier: GPL-2.0-or-later
/* DataCenter TCP (DCTCP) congestion control, out-of-tree module.
 *
 * DCTCP is Reno with a gentler, proportional response to ECN: switches mark
 * packets (CE) once their queue exceeds a threshold K, and the sender keeps
 * alpha, a moving average of the fraction of marked data per RTT. On marks,
 * cwnd is cut by alpha / 2 instead of by half, which meets the three data
 * center requirements:
 *
 *  - high burst tolerance (incast due to partition/aggregate)
 *  - low latency (short flows, queries)
 *  - high throughput (continuous updates, large transfers) with commodity,
 *    shallow buffered switches
 *
 * Both ends must run DCTCP and negotiate ECN; without ECN a connection falls
 * back to plain Reno, visible as "dctcp-reno".
 *
 * The algorithm is described in:
 *
 * 1) Mohammad Alizadeh, Albert Greenberg, David A. Maltz, Jitendra Padhye,
 *    Parveen Patel, Balaji Prabhakar, Sudipta Sengupta, and Murari Sridharan:
 *      "Data Center TCP (DCTCP)", Proc. ACM SIGCOMM, New Delhi, 2010.
 *    http://simula.stanford.edu/~alizade/Site/DCTCP_files/dctcp-final.pdf
 *
 * 2) Mohammad Alizadeh, Adel Javanmard, and Balaji Prabhakar:
 *      "Analysis of DCTCP: Stability, Convergence, and Fairness",
 *      Proc. ACM SIGMETRICS, San Jose, 2011.
 *    http://simula.stanford.edu/~alizade/Site/DCTCP_files/dctcp_analysis-full.pdf
 *
 * and in RFC 8257. The Linux design (v3.18) is by Daniel Borkmann, Florian
 * Westphal and Glenn Judd, after a prototype by Abdul Kabbani, Masato Yasuda
 * and Mohammad Alizadeh. This module follows mainline's later fixes and
 * registers "dctcp-reno" as well, so that the fallback is listed.
 */

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/inet_diag.h>
#include <net/tcp.h>

#include "dctcp_math.h"
#include "tcp_dctcp.h"

#define CREATE_TRACE_POINTS
#include "tcp_dctcp_trace.h"

#define DCTCP_VERSION	"1.0.0-oot"

/* Per-connection state, lives in inet_csk_ca(sk). */
struct dctcp {
	u32 old_delivered;	/* tp->delivered when this RTT began */
	u32 old_delivered_ce;	/* tp->delivered_ce when this RTT began */
	u32 prior_rcv_nxt;	/* rcv_nxt at the last CE state update */
	u32 alpha_fp;		/* marked fraction EWMA, 1/DCTCP_MAX_ALPHA_FP */
	u32 next_seq;		/* snd_nxt when this RTT began: its end */
	u32 ce_state;		/* 1 iff the last received segment had CE */
	u32 loss_cwnd;		/* cwnd before the last reduction, for undo */
	u32 fell_back;		/* 1 iff dctcp switched this socket to
				 * dctcp-reno; 0 if dctcp-reno was chosen
				 * (selecting an algorithm zeroes this area)
				 */
};

static unsigned int dctcp_shift_g __read_mostly = 4; /* g = 1/2^4 */
static unsigned int dctcp_alpha_on_init __read_mostly = DCTCP_MAX_ALPHA;
static unsigned int dctcp_clamp_alpha_on_loss __read_mostly;

/* Accept @val only within [min, max]; on error say why, keep the old value. */
static int dctcp_param_set_range(const char *val, const struct kernel_param *kp,
				 unsigned int min, unsigned int max)
{
	int ret = param_set_uint_minmax(val, kp, min, max);

	if (ret) {
		if (!val)
			val = "";
		pr_warn("%s: invalid value '%.*s', valid range is %u..%u, keeping %u\n",
			kp->name, (int)strcspn(val, "\n"), val, min, max,
			*(unsigned int *)kp->arg);
		return -EINVAL;
	}
	return 0;
}

static int dctcp_shift_g_set(const char *val, const struct kernel_param *kp)
{
	return dctcp_param_set_range(val, kp, 0, DCTCP_MAX_SHIFT_G);
}

static const struct kernel_param_ops dctcp_shift_g_ops = {
	.set	= dctcp_shift_g_set,
	.get	= param_get_uint,
};

module_param_cb(dctcp_shift_g, &dctcp_shift_g_ops, &dctcp_shift_g, 0644);
MODULE_PARM_DESC(dctcp_shift_g,
		 "parameter g for updating dctcp_alpha, g = 1/2^shift_g (0..10, default 4)");

static int dctcp_alpha_on_init_set(const char *val,
				   const struct kernel_param *kp)
{
	return dctcp_param_set_range(val, kp, 0, DCTCP_MAX_ALPHA);
}

static const struct kernel_param_ops dctcp_alpha_on_init_ops = {
	.set	= dctcp_alpha_on_init_set,
	.get	= param_get_uint,
};

module_param_cb(dctcp_alpha_on_init, &dctcp_alpha_on_init_ops,
		&dctcp_alpha_on_init, 0644);
MODULE_PARM_DESC(dctcp_alpha_on_init,
		 "initial alpha of a connection (0..1024, default 1024 = 1.0)");

static int dctcp_clamp_alpha_on_loss_set(const char *val,
					 const struct kernel_param *kp)
{
	return dctcp_param_set_range(val, kp, 0, 1);
}

static const struct kernel_param_ops dctcp_clamp_alpha_on_loss_ops = {
	.set	= dctcp_clamp_alpha_on_loss_set,
	.get	= param_get_uint,
};

module_param_cb(dctcp_clamp_alpha_on_loss, &dctcp_clamp_alpha_on_loss_ops,
		&dctcp_clamp_alpha_on_loss, 0644);
MODULE_PARM_DESC(dctcp_clamp_alpha_on_loss,
		 "set alpha to its maximum on packet loss (0..1, default 0)");

static struct tcp_congestion_ops dctcp_reno;
/* Whether dctcp_reno is ours in the list (another module may hold the name). */
static bool dctcp_reno_registered;

/* Start a new observation window of one RTT. */
static void dctcp_reset(const struct tcp_sock *tp, struct dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;

	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

/* No ECN support? Fall back to Reno. Also stop sending ECT, which
 * TCP_CONG_NEEDS_ECN had set for the handshake.
 */
static void dctcp_fall_back(struct sock *sk)
{
	struct dctcp *ca = inet_csk_ca(sk);

	/* Mark first: dctcp_reno_get_info() runs without the socket lock. */
	WRITE_ONCE(ca->fell_back, 1);
	/* inet_diag and getsockopt(TCP_CC_INFO) read the ops locklessly. */
	WRITE_ONCE(inet_csk(sk)->icsk_ca_ops, &dctcp_reno);
	INET_ECN_dontxmit(sk);
	trace_dctcp_fallback(sk);
}

static void dctcp_init(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	/* A listener or a not yet connected socket (setsockopt before
	 * connect()) has not negotiated anything yet: assume ECN for now,
	 * init runs again once the handshake is done.
	 */
	if ((tp->ecn_flags & TCP_ECN_OK) ||
	    sk->sk_state == TCP_LISTEN || sk->sk_state == TCP_CLOSE) {
		struct dctcp *ca = inet_csk_ca(sk);

		ca->prior_rcv_nxt = tp->rcv_nxt;
		ca->alpha_fp = dctcp_alpha_to_fp(READ_ONCE(dctcp_alpha_on_init));
		ca->loss_cwnd = 0;
		ca->ce_state = 0;

		dctcp_reset(tp, ca);
		trace_dctcp_init(sk, ca->alpha_fp);
		return;
	}

	dctcp_fall_back(sk);
}

static u32 dctcp_ssthresh(struct sock *sk)
{
	struct dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	ca->loss_cwnd = tcp_snd_cwnd(tp);
	/* ssthresh = cwnd * (1 - alpha / 2), at least 2 */
	return dctcp_reduced_cwnd(tcp_snd_cwnd(tp), ca->alpha_fp);
}

/* The stack has just set ssthresh with dctcp_ssthresh() to enter CWR. */
static void dctcp_trace_ce_reduction(struct sock *sk)
{
	const struct dctcp *ca = inet_csk_ca(sk);

	trace_dctcp_ce_reduction(sk, ca->loss_cwnd, ca->alpha_fp,
				 tcp_sk(sk)->snd_ssthresh);
}

static void dctcp_update_alpha(struct sock *sk, u32 flags)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *ca = inet_csk_ca(sk);
	u32 delivered, delivered_ce, shift_g, alpha;

	/* Wait until everything sent in this RTT is acknowledged. */
	if (before(tp->snd_una, ca->next_seq))
		return;

	delivered = tp->delivered - ca->old_delivered;
	delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
	shift_g = READ_ONCE(dctcp_shift_g);

	/* alpha = (1 - g) * alpha + g * F, F = delivered_ce / delivered */
	alpha = dctcp_next_alpha(ca->alpha_fp, delivered_ce, delivered,
				 shift_g);
	trace_dctcp_alpha_update(sk, delivered, delivered_ce, shift_g,
				 ca->alpha_fp, alpha);

	/* dctcp_get_info() reads alpha without the socket lock. */
	WRITE_ONCE(ca->alpha_fp, alpha);
	dctcp_reset(tp, ca);
}

/* Loss is congestion beyond what marking could signal: react like Reno. */
static void dctcp_react_to_loss(struct sock *sk,
				enum dctcp_loss_reason reason)
{
	struct dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 alpha_old = ca->alpha_fp;

	/* Optionally also assume full congestion for the next RTTs. */
	if (READ_ONCE(dctcp_clamp_alpha_on_loss))
		WRITE_ONCE(ca->alpha_fp, DCTCP_MAX_ALPHA_FP);

	ca->loss_cwnd = tcp_snd_cwnd(tp);
	/* ssthresh = cwnd / 2, at least 2 */
	WRITE_ONCE(tp->snd_ssthresh, max(tcp_snd_cwnd(tp) >> 1U, 2U));
	trace_dctcp_loss(sk, reason, ca->loss_cwnd, tp->snd_ssthresh,
			 alpha_old, ca->alpha_fp);
}

static void dctcp_state(struct sock *sk, u8 new_state)
{
	u8 old_state = inet_csk(sk)->icsk_ca_state;

	/* An RTO is handled on CA_EVENT_LOSS in dctcp_cwnd_event() instead
	 * of on TCP_CA_Loss here: the state is set again on every backed off
	 * retransmission, the event only once per loss episode, so the
	 * window is reduced only once per RTT.
	 */
	if (new_state == TCP_CA_Recovery && new_state != old_state)
		dctcp_react_to_loss(sk, DCTCP_LOSS_RECOVERY);
	else if (new_state == TCP_CA_CWR && old_state < TCP_CA_CWR)
		dctcp_trace_ce_reduction(sk);
}

static void dctcp_cwnd_event(struct sock *sk, enum tcp_ca_event ev)
{
	struct dctcp *ca = inet_csk_ca(sk);

	switch (ev) {
	case CA_EVENT_ECN_IS_CE:
	case CA_EVENT_ECN_NO_CE:
		dctcp_ece_ack_update(sk, ev, &ca->prior_rcv_nxt, &ca->ce_state);
		break;
	case CA_EVENT_LOSS:
		dctcp_react_to_loss(sk, DCTCP_LOSS_RTO);
		break;
	default:
		/* Don't care for the rest. */
		break;
	}
}

static u32 dctcp_cwnd_undo(struct sock *sk)
{
	const struct dctcp *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	trace_dctcp_undo(sk, tcp_snd_cwnd(tp), ca->loss_cwnd);
	return max(tcp_snd_cwnd(tp), ca->loss_cwnd);
}

/* Which diag requests to answer. Old inet_diag request structs can only ask
 * for the first 8 extensions and DCTCPINFO is the 9th, so answer VEGASINFO
 * too; the reply still carries the correct INET_DIAG_DCTCPINFO attribute.
 */
static bool dctcp_info_requested(u32 ext)
{
	return ext & ((1 << (INET_DIAG_DCTCPINFO - 1)) |
		      (1 << (INET_DIAG_VEGASINFO - 1)));
}

static size_t dctcp_get_info(struct sock *sk, u32 ext, int *attr,
			     union tcp_cc_info *info)
{
	const struct dctcp *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	if (!dctcp_info_requested(ext))
		return 0;

	memset(&info->dctcp, 0, sizeof(info->dctcp));
	info->dctcp.dctcp_enabled = 1;
	info->dctcp.dctcp_ce_state = (u16)ca->ce_state;
	info->dctcp.dctcp_alpha = dctcp_alpha_from_fp(READ_ONCE(ca->alpha_fp));
	/* Bytes acked in the current RTT, as whole segments. */
	info->dctcp.dctcp_ab_ecn = tp->mss_cache *
		(tp->delivered_ce - ca->old_delivered_ce);
	info->dctcp.dctcp_ab_tot = tp->mss_cache *
		(tp->delivered - ca->old_delivered);

	*attr = INET_DIAG_DCTCPINFO;
	return sizeof(info->dctcp);
}

/* A connection that fell back reports dctcp_enabled = 0 (ss prints
 * "dctcp:fallback_mode"); one that chose dctcp-reno reports nothing, like
 * reno.
 */
static size_t dctcp_reno_get_info(struct sock *sk, u32 ext, int *attr,
				  union tcp_cc_info *info)
{
	const struct dctcp *ca = inet_csk_ca(sk);

	if (!dctcp_info_requested(ext) || !READ_ONCE(ca->fell_back))
		return 0;

	memset(&info->dctcp, 0, sizeof(info->dctcp));
	*attr = INET_DIAG_DCTCPINFO;
	return sizeof(info->dctcp);
}

static struct tcp_congestion_ops dctcp __read_mostly = {
	.init		= dctcp_init,
	.in_ack_event	= dctcp_update_alpha,
	.cwnd_event	= dctcp_cwnd_event,
	.ssthresh	= dctcp_ssthresh,
	.cong_avoid	= tcp_reno_cong_avoid,
	.undo_cwnd	= dctcp_cwnd_undo,
	.set_state	= dctcp_state,
	.get_info	= dctcp_get_info,
	.flags		= TCP_CONG_NEEDS_ECN,
	.owner		= THIS_MODULE,
	.name		= "dctcp",
};

/* Where dctcp connections go when the peer does not negotiate ECN. */
static struct tcp_congestion_ops dctcp_reno __read_mostly = {
	.ssthresh	= tcp_reno_ssthresh,
	.cong_avoid	= tcp_reno_cong_avoid,
	.undo_cwnd	= tcp_reno_undo_cwnd,
	.get_info	= dctcp_reno_get_info,
	.owner		= THIS_MODULE,
	.name		= "dctcp-reno",
};

static int __init dctcp_register(void)
{
	int ret;

	BUILD_BUG_ON(sizeof(struct dctcp) > ICSK_CA_PRIV_SIZE);

	/* "dctcp" first: once a name is registered sockets may use it, so
	 * everything registered before a failure would be in use while the
	 * failed module's code is freed.
	 */
	ret = tcp_register_congestion_control(&dctcp);
	if (ret == -EEXIST) {
		pr_err("\"dctcp\" is already registered, by a kernel with CONFIG_TCP_CONG_DCTCP=y, another module (lsmod; rmmod it) or a BPF struct_ops (bpftool struct_ops list): remove it, then load this module\n");
		return ret;
	}
	if (ret) {
		pr_err("cannot register \"dctcp\" (%d)\n", ret);
		return ret;
	}

	/* Optional from here on: the fallback uses dctcp_reno whether it is
	 * registered or not, registering only lists it and makes it
	 * selectable by name.
	 */
	ret = tcp_register_congestion_control(&dctcp_reno);
	if (ret)
		pr_warn("\"dctcp-reno\" is already registered (%d), by another module: dctcp still falls back to its own, which is not listed\n",
			ret);
	dctcp_reno_registered = !ret;

	pr_info("DCTCP %s registered \"dctcp\"%s\n", DCTCP_VERSION,
		dctcp_reno_registered ? " and \"dctcp-reno\"" : "");
	return 0;
}

/* Unregister what dctcp_register() registered, nothing else. */
static void __exit dctcp_unregister(void)
{
	if (dctcp_reno_registered)
		tcp_unregister_congestion_control(&dctcp_reno);
	tcp_unregister_congestion_control(&dctcp);
}

module_init(dctcp_register);
module_exit(dctcp_unregister);

MODULE_AUTHOR("Daniel Borkmann <dborkman@redhat.com>");
MODULE_AUTHOR("Florian Westphal <fw@strlen.de>");
MODULE_AUTHOR("Glenn Judd <glenn.judd@morganstanley.com>");

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("DataCenter TCP (DCTCP), out-of-tree build");
MODULE_VERSION(DCTCP_VERSION);
/* request_module("tcp_%s") finds us for "dctcp-reno" too. */
MODULE_ALIAS("tcp_dctcp-reno");
