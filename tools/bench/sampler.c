// SPDX-License-Identifier: GPL-2.0
/*
 * sampler - periodic snapshot of a bottleneck qdisc and of TCP senders
 *
 * The benchmark needs the queue length and every sender's bytes_acked,
 * cwnd and DCTCP alpha about every 100 ms.  Forking tc and ss ten times a
 * second costs more CPU than a QEMU TCG guest can spare, so this asks the
 * kernel directly over netlink, as tc and ss do:
 *   RTM_GETQDISC         backlog/qlen (TCA_STATS2) and RED's marked count
 *   SOCK_DIAG_BY_FAMILY  tcp_info, the congestion control name and
 *                        INET_DIAG_DCTCPINFO (what `ss -ti` prints)
 *
 *   sampler -q NETNS:DEV:HANDLE -s NETNS -p PORT[,PORT..] -i MSEC -t SEC
 *
 * HANDLE is the qdisc's major number (10 for "10:").  One CSV row per
 * matching socket per sample (one row with dport 0 when there is none):
 *   time,backlog_bytes,qlen_pkts,marked,dport,bytes_acked,cwnd,alpha,ca,ecn,srtt_us,delivered_ce
 * time is CLOCK_REALTIME in seconds (as bash's $EPOCHREALTIME); alpha is
 * -1 when the socket reports no DCTCP info; ecn is 1 when ECN was
 * negotiated (TCPI_OPT_ECN).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/gen_stats.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <linux/types.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SAMPLER_MAX_PORTS	8
#define SAMPLER_BUF		(64 * 1024)

struct sampler_queue {
	__u32 backlog;	/* bytes queued in the qdisc */
	__u32 qlen;		/* packets queued */
	__u32 marked;	/* RED: packets CE-marked so far */
};

static __u16 ports[SAMPLER_MAX_PORTS];	/* host byte order */
static int nports;
static char buf[SAMPLER_BUF];		/* one qdisc dump datagram */
static char dump[16 * SAMPLER_BUF];	/* a whole socket dump */

static void sampler_die(const char *what)
{
	fprintf(stderr, "sampler: %s: %s\n", what, strerror(errno));
	exit(1);
}

/*
 * Enter NETNS and open a netlink socket there: the socket stays in that
 * namespace after the caller moves on.
 */
static int sampler_nl_socket(const char *netns, int proto)
{
	char path[256];
	int fd, nl;

	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		sampler_die(path);
	if (setns(fd, CLONE_NEWNET))
		sampler_die("setns");
	close(fd);
	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto);
	if (nl < 0)
		sampler_die("netlink socket");
	return nl;
}

static int sampler_request(int nl, struct nlmsghdr *nlh)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	return sendto(nl, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&sa,
		      sizeof(sa)) < 0 ? -1 : 0;
}

/* Parse the nested TCA_STATS2 for TCA_STATS_QUEUE. */
static void sampler_stats2(struct rtattr *nest, struct sampler_queue *q)
{
	int len = RTA_PAYLOAD(nest);
	struct rtattr *a;

	for (a = RTA_DATA(nest); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		struct gnet_stats_queue qs;

		if (a->rta_type != TCA_STATS_QUEUE)
			continue;
		memset(&qs, 0, sizeof(qs));
		memcpy(&qs, RTA_DATA(a), RTA_PAYLOAD(a) < sizeof(qs) ?
		       RTA_PAYLOAD(a) : sizeof(qs));
		q->backlog = qs.backlog;
		q->qlen = qs.qlen;
	}
}

static int sampler_qdisc(int nl, int ifindex, __u32 handle,
			 struct sampler_queue *q)
{
	struct {
		struct nlmsghdr nlh;
		struct tcmsg tcm;
	} req = {
		.nlh.nlmsg_len = sizeof(req),
		.nlh.nlmsg_type = RTM_GETQDISC,
		.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.tcm.tcm_family = AF_UNSPEC,
		.tcm.tcm_ifindex = ifindex,
	};
	int found = 0;

	if (sampler_request(nl, &req.nlh))
		return -1;
	for (;;) {
		int len = recv(nl, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len < 0)
			return -1;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			struct tcmsg *tcm = NLMSG_DATA(h);
			int alen = h->nlmsg_len - NLMSG_LENGTH(sizeof(*tcm));
			struct rtattr *a;
			int red = 0;

			if (h->nlmsg_type == NLMSG_DONE)
				return found ? 0 : -1;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -1;
			if (tcm->tcm_ifindex != ifindex || tcm->tcm_handle != handle)
				continue;
			found = 1;
			for (a = (struct rtattr *)((char *)tcm + NLMSG_ALIGN(sizeof(*tcm)));
			     RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
				if (a->rta_type == TCA_KIND)
					red = !strcmp(RTA_DATA(a), "red");
				else if (a->rta_type == TCA_STATS2)
					sampler_stats2(a, q);
				else if (a->rta_type == TCA_XSTATS && red &&
					 RTA_PAYLOAD(a) >= sizeof(struct tc_red_xstats))
					q->marked = ((struct tc_red_xstats *)RTA_DATA(a))->marked;
			}
		}
	}
}

static int sampler_port_wanted(__u16 dport)
{
	int i;

	for (i = 0; i < nports; i++)
		if (ports[i] == dport)
			return 1;
	return 0;
}

static void sampler_print_socket(double now, const struct sampler_queue *q,
				 struct inet_diag_msg *m, int alen)
{
	struct tcp_info ti;
	struct tcp_dctcp_info dc;
	const char *ca = "-";
	int have_dctcp = 0;
	struct rtattr *a;

	memset(&ti, 0, sizeof(ti));
	for (a = (struct rtattr *)(m + 1); RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
		size_t n = RTA_PAYLOAD(a);

		switch (a->rta_type) {
		case INET_DIAG_INFO:
			/* the kernel's struct may be shorter or longer */
			memcpy(&ti, RTA_DATA(a), n < sizeof(ti) ? n : sizeof(ti));
			break;
		case INET_DIAG_CONG:
			ca = RTA_DATA(a);
			break;
		case INET_DIAG_DCTCPINFO:
			memset(&dc, 0, sizeof(dc));
			memcpy(&dc, RTA_DATA(a), n < sizeof(dc) ? n : sizeof(dc));
			have_dctcp = dc.dctcp_enabled;
			break;
		}
	}
	printf("%.6f,%u,%u,%u,%u,%llu,%u,%d,%s,%d,%u,%u\n", now, q->backlog,
	       q->qlen, q->marked, ntohs(m->id.idiag_dport),
	       (unsigned long long)ti.tcpi_bytes_acked, ti.tcpi_snd_cwnd,
	       have_dctcp ? (int)dc.dctcp_alpha : -1, ca,
	       !!(ti.tcpi_options & TCPI_OPT_ECN), ti.tcpi_rtt,
	       ti.tcpi_delivered_ce);
}

static double sampler_realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Dump the sockets, then print them stamped with the middle of the dump:
 * in an emulated guest the dump itself can take milliseconds.
 */
static int sampler_sockets(int nl, const struct sampler_queue *q)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
		.nlh.nlmsg_len = sizeof(req),
		.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY,
		.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.r.sdiag_family = AF_INET,
		.r.sdiag_protocol = IPPROTO_TCP,
		.r.idiag_states = 1 << 1,	/* TCP_ESTABLISHED */
		/*
		 * idiag_ext is 8 bits wide: INET_DIAG_DCTCPINFO does not fit,
		 * DCTCP answers the VEGASINFO bit, as for ss.
		 */
		.r.idiag_ext = (1 << (INET_DIAG_INFO - 1)) |
			       (1 << (INET_DIAG_VEGASINFO - 1)) |
			       (1 << (INET_DIAG_CONG - 1)),
	};
	size_t used = 0;
	int printed = 0, done = 0, len;
	struct nlmsghdr *h;
	double t0, now;

	t0 = sampler_realtime();
	if (sampler_request(nl, &req.nlh))
		return -1;
	/* collect the whole dump first: netlink messages stay 4-byte aligned */
	while (!done) {
		if (sizeof(dump) - used < SAMPLER_BUF)
			return -1;	/* thousands of sockets: not our setup */
		len = recv(nl, dump + used, SAMPLER_BUF, 0);
		if (len <= 0)
			return -1;
		for (h = (struct nlmsghdr *)(dump + used); NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_ERROR)
				return -1;
			if (h->nlmsg_type == NLMSG_DONE)
				done = 1;
		}
		used += (char *)h - (dump + used);
	}
	now = (t0 + sampler_realtime()) / 2;

	len = used;
	for (h = (struct nlmsghdr *)dump; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
		struct inet_diag_msg *m = NLMSG_DATA(h);

		if (h->nlmsg_type == NLMSG_DONE)
			break;
		if (!sampler_port_wanted(ntohs(m->id.idiag_dport)))
			continue;
		sampler_print_socket(now, q, m, h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
		printed = 1;
	}
	if (!printed)
		printf("%.6f,%u,%u,%u,0,0,0,-1,-,0,0,0\n", now, q->backlog,
		       q->qlen, q->marked);
	return 0;
}

static void sampler_usage(void)
{
	fprintf(stderr,
		"usage: sampler -q NETNS:DEV:HANDLE -s NETNS -p PORT[,PORT..] -i MSEC -t SEC\n");
	exit(2);
}

int main(int argc, char **argv)
{
	char *qspec = NULL, *sns = NULL, *qns, *dev, *hstr, *p;
	int interval_ms = 100, secs = 10, opt, qnl, snl, ifindex, self;
	struct timespec next;
	__u32 handle;
	double end;

	while ((opt = getopt(argc, argv, "q:s:p:i:t:")) != -1) {
		switch (opt) {
		case 'q':
			qspec = optarg;
			break;
		case 's':
			sns = optarg;
			break;
		case 'p':
			for (p = strtok(optarg, ","); p && nports < SAMPLER_MAX_PORTS;
			     p = strtok(NULL, ","))
				ports[nports++] = atoi(p);
			break;
		case 'i':
			interval_ms = atoi(optarg);
			break;
		case 't':
			secs = atoi(optarg);
			break;
		default:
			sampler_usage();
		}
	}
	if (!qspec || !sns || !nports || interval_ms < 1 || secs < 1)
		sampler_usage();
	qns = strtok(qspec, ":");
	dev = strtok(NULL, ":");
	hstr = strtok(NULL, ":");
	if (!qns || !dev || !hstr)
		sampler_usage();
	handle = (__u32)strtoul(hstr, NULL, 16) << 16;

	self = open("/proc/self/ns/net", O_RDONLY);
	if (self < 0)
		sampler_die("open /proc/self/ns/net");
	qnl = sampler_nl_socket(qns, NETLINK_ROUTE);
	ifindex = if_nametoindex(dev);		/* in the qdisc's namespace */
	if (!ifindex)
		sampler_die(dev);
	snl = sampler_nl_socket(sns, NETLINK_SOCK_DIAG);
	if (setns(self, CLONE_NEWNET))
		sampler_die("setns back");

	end = sampler_realtime() + secs;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		struct sampler_queue q = { 0 };

		if (sampler_realtime() >= end)
			break;
		if (sampler_qdisc(qnl, ifindex, handle, &q))
			fprintf(stderr, "sampler: qdisc %s %s not found\n", dev, hstr);
		if (sampler_sockets(snl, &q))
			sampler_die("sock_diag");
		fflush(stdout);		/* a kill loses nothing */
		next.tv_nsec += (long)interval_ms * 1000000;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return 0;
}
