// SPDX-License-Identifier: GPL-2.0
/*
 * dctcp_flow: TCP sink, echo and sources for the tcp_dctcp selftests, the
 * demo and the benchmark.
 *
 *   dctcp_flow server [-6] [-p PORT] [-c CC] [-l LOWAT] [-A]
 *	One process serves every connection (poll).  The first byte a client
 *	sends chooses: 's' sink (read and discard until EOF, woken only once
 *	LOWAT bytes, default 256 KiB, are queued: SO_RCVLOWAT), 'e' echo
 *	(each byte sent back at once).  Every connection gets an 8 MiB receive
 *	buffer: the flows are never limited by the receive window; -A keeps
 *	the kernel's autotuned one instead.  -c sets
 *	the listener's algorithm, so
 *	that an ECT SYN meets a listener that accepts it.  SIGTERM ends the
 *	server.  Sockets close with RST (SO_LINGER 0) so that nothing
 *	outlives the test's namespaces.
 *
 *   dctcp_flow client [-c CC] [-t SECS | -n BYTES] [-i MS | -I US] [-H | -W]
 *		       [-P FLOWS] [-S MS] [-E MS] [-M BYTES_PER_SEC]
 *		       [-q NETNS:DEV:HANDLE] [-e US] HOST PORT
 *	FLOWS (default 1) connections (after setsockopt(TCP_CONGESTION, CC)
 *	when -c is given), each sending as fast as it may, in writes of up
 *	to 1 MiB, for SECS seconds or BYTES bytes (then until all is
 *	acknowledged).  Flow i starts i * S ms after the first and stops
 *	i * E ms before it (-S/-E: flows joining and leaving one by one;
 *	the first flow sends for SECS seconds from its connection).  -M paces every flow
 *	(SO_MAX_PACING_RATE).  With -i/-I, every MS milliseconds (US
 *	microseconds) print a sample of TCP_INFO and TCP_CC_INFO of every
 *	running flow (-I: at jittered times, uniform in [US/2, 3US/2], the
 *	same in every run) and, with -q, one of the qdisc with major handle HANDLE
 *	on DEV in namespace NETNS (netlink: no process per sample).  A
 *	flow's sample is also printed right after it connects and when it
 *	ends.  -e adds a probe connection (-P 0: only the probe, for SECS
 *	seconds) that sends one byte to the echo
 *	server every US microseconds (or as soon as the previous answer came
 *	back) and prints each round trip: the RTT a short message sees
 *	through the queue.  -H holds the connections open without sending
 *	until SIGTERM/SIGINT; -W keeps them open after sending (so that `ss`
 *	can still see their final state) until SIGTERM/SIGINT.  SIGTERM
 *	during the transfer ends it early, with the final samples and done
 *	lines.
 *
 * Output lines (parsed by dctcp_lib.sh and the benchmark; key=value pairs
 * may gain keys at the end):
 *	cc NAME
 *	sport LOCAL_PORT
 *	flow I cc=NAME sport=LOCAL_PORT
 *	sample t_ms=T cc_enabled=E ce_state=C alpha=A ab_ecn=X ab_tot=Y
 *	       cwnd=W ssthresh=S rtt_us=R retrans=N ca_state=Z ecn=0|1
 *	       acked=B t_us=T flow=I delivered=P delivered_ce=P
 *	       min_rtt_us=R
 *	queue t_us=T backlog=B qlen=P bytes=B packets=P drops=P
 *	      overlimits=P marked=P
 *	rr t_us=T rtt_us=R
 *	done sent=B acked=B ms=T mbit=M flow=I
 * t_ms and t_us count from the start of the client.
 *
 * Errors are reported as "error OP: strerror" on stderr with exit status 1,
 * so that a test can assert e.g. that setsockopt(TCP_CONGESTION) fails
 * with ENOENT once the module is gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/gen_stats.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <linux/tcp.h>

#define CHUNK		(1024 * 1024)	/* largest write or read */
#define DEFAULT_PORT	"5301"
#define DEFAULT_LOWAT	(256 * 1024)
#define RCVBUF		(8 * 1024 * 1024)	/* the kernel doubles it */
#define CA_NAME_MAX	16	/* TCP_CA_NAME_MAX, not in uapi */
#define MAX_FLOWS	256
#define MAX_CONNS	1024
#define FLUSH_US	100000	/* flush buffered samples this often */
#define NL_BUF		(64 * 1024)
#define MODE_SINK	's'
#define MODE_ECHO	'e'

static volatile sig_atomic_t stop;
static char buf[CHUNK];

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * Close with RST, not FIN: when a test tears its namespaces down right
 * after killing us, a FIN would leave an orphaned socket retransmitting
 * into a deleted veth for minutes, holding the netns and a reference on
 * the congestion control module (which the rmmod tests would trip over).
 * Data is always acknowledged before we close on purpose.
 */
static void abort_on_close(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

/* No SA_RESTART: a blocking call must return EINTR on SIGTERM. */
static void catch_signal(int sig)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void die(const char *op)
{
	fprintf(stderr, "error %s: %s\n", op, strerror(errno));
	exit(1);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: dctcp_flow server [-6] [-p PORT] [-c CC] [-l LOWAT] [-A]\n"
		"       dctcp_flow client [-c CC] [-t SECS | -n BYTES] [-i MS | -I US] [-H | -W]\n"
		"                         [-P FLOWS] [-S MS] [-E MS] [-M BYTES_PER_SEC]\n"
		"                         [-q NETNS:DEV:HANDLE] [-e US] HOST PORT\n");
	exit(2);
}

static void set_cc(int fd, const char *cc)
{
	if (cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc)) < 0)
		die("setsockopt TCP_CONGESTION");
}

static void set_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---------------------------------------------------------------- server */

/*
 * A receive buffer far larger than the sink's SO_RCVLOWAT, fixed before
 * the handshake (so that the window scale allows it) and inherited by
 * every accepted socket: the data the sink lets pile up before it reads
 * never closes the window, the flows are limited by the network alone.
 * SO_RCVBUFFORCE goes past net.core.rmem_max (root); else SO_RCVBUF.
 */
static void set_rcvbuf(int fd)
{
	int size = RCVBUF;

	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

struct conn {
	int fd;
	char mode;	/* 0 until the client's first byte */
};

static int server_listen(int family, const char *port, const char *cc,
			 int autotune)
{
	struct sockaddr_storage ss = { 0 };
	int one = 1, lfd;
	socklen_t len;

	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(atoi(port));
		sin6->sin6_addr = in6addr_any;
		len = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(atoi(port));
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
		len = sizeof(*sin);
	}

	lfd = socket(family, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (!autotune)
		set_rcvbuf(lfd);
	set_cc(lfd, cc);
	if (bind(lfd, (struct sockaddr *)&ss, len) < 0)
		die("bind");
	if (listen(lfd, MAX_CONNS) < 0)
		die("listen");
	return lfd;
}

/* Serve one readable connection; 0 when it is over. */
static int server_read(struct conn *c, int lowat)
{
	ssize_t n;

	if (!c->mode) {
		char mode;

		n = read(c->fd, &mode, 1);
		if (n <= 0)
			return n < 0 && errno == EINTR;
		c->mode = mode;
		if (mode == MODE_ECHO)
			set_nodelay(c->fd);
		else
			setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &lowat,
				   sizeof(lowat));
		return 1;
	}
	n = read(c->fd, buf, c->mode == MODE_ECHO ? 4096 : sizeof(buf));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN;
	if (n && c->mode == MODE_ECHO && write(c->fd, buf, n) != n)
		return 0;
	return n > 0;
}

static int server(int argc, char **argv)
{
	static struct pollfd pfd[MAX_CONNS + 1];
	static struct conn conns[MAX_CONNS];
	const char *port = DEFAULT_PORT, *cc = NULL;
	int family = AF_INET, opt, lfd, nconn = 0, lowat = DEFAULT_LOWAT, i;
	int autotune = 0;

	while ((opt = getopt(argc, argv, "6p:c:l:A")) != -1) {
		switch (opt) {
		case 'A':
			autotune = 1;
			break;
		case '6':
			family = AF_INET6;
			break;
		case 'p':
			port = optarg;
			break;
		case 'c':
			cc = optarg;
			break;
		case 'l':
			lowat = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (lowat < 1)
		usage();

	lfd = server_listen(family, port, cc, autotune);
	catch_signal(SIGTERM);
	signal(SIGPIPE, SIG_IGN);

	while (!stop) {
		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		for (i = 0; i < nconn; i++) {
			pfd[i + 1].fd = conns[i].fd;
			pfd[i + 1].events = POLLIN;
		}
		if (poll(pfd, nconn + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		/* Serve before accepting: the indexes are pfd's. */
		for (i = nconn - 1; i >= 0; i--) {
			if (!pfd[i + 1].revents)
				continue;
			if (server_read(&conns[i], lowat))
				continue;
			close(conns[i].fd);
			conns[i] = conns[--nconn];
		}
		if (pfd[0].revents & POLLIN) {
			int fd = accept(lfd, NULL, NULL);

			if (fd < 0) {
				if (errno == EINTR)
					continue;
				die("accept");
			}
			abort_on_close(fd);
			if (nconn == MAX_CONNS) {
				close(fd);
				continue;
			}
			conns[nconn].fd = fd;
			conns[nconn++].mode = 0;
		}
	}
	for (i = 0; i < nconn; i++)
		close(conns[i].fd);
	return 0;
}

/* ---------------------------------------------------------------- qdisc */

struct qstat {
	uint64_t bytes;
	uint32_t packets, backlog, qlen, drops, overlimits, marked;
};

struct qdisc_src {
	int nl;
	int ifindex;
	uint32_t handle;
};

/*
 * NETNS:DEV:HANDLE: open a netlink socket in NETNS (it stays there when
 * we go back to our own namespace) and find DEV's index in it.
 */
static void qdisc_open(struct qdisc_src *q, char *spec)
{
	char *ns = strtok(spec, ":"), *dev = strtok(NULL, ":");
	char *handle = strtok(NULL, ":"), path[256];
	int self, fd;

	if (!ns || !dev || !handle)
		usage();
	q->handle = (uint32_t)strtoul(handle, NULL, 16) << 16;
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	self = open("/proc/self/ns/net", O_RDONLY);
	fd = open(path, O_RDONLY);
	if (self < 0 || fd < 0)
		die(path);
	if (setns(fd, CLONE_NEWNET))
		die("setns");
	q->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (q->nl < 0)
		die("netlink socket");
	q->ifindex = if_nametoindex(dev);
	if (!q->ifindex)
		die(dev);
	if (setns(self, CLONE_NEWNET))
		die("setns back");
	close(fd);
	close(self);
}

static void qdisc_stats2(struct rtattr *nest, struct qstat *s)
{
	int len = RTA_PAYLOAD(nest);
	struct rtattr *a;

	for (a = RTA_DATA(nest); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		size_t n = RTA_PAYLOAD(a);

		if (a->rta_type == TCA_STATS_BASIC) {
			struct gnet_stats_basic b = { 0 };

			memcpy(&b, RTA_DATA(a), n < sizeof(b) ? n : sizeof(b));
			s->bytes = b.bytes;
			s->packets = b.packets;
		} else if (a->rta_type == TCA_STATS_QUEUE) {
			struct gnet_stats_queue qs = { 0 };

			memcpy(&qs, RTA_DATA(a), n < sizeof(qs) ? n : sizeof(qs));
			s->backlog = qs.backlog;
			s->qlen = qs.qlen;
			s->drops = qs.drops;
			s->overlimits = qs.overlimits;
		}
	}
}

static void qdisc_attrs(struct tcmsg *tcm, int alen, struct qstat *s)
{
	struct rtattr *a = (struct rtattr *)((char *)tcm + NLMSG_ALIGN(sizeof(*tcm)));
	int red = 0;

	for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
		if (a->rta_type == TCA_KIND)
			red = !strcmp(RTA_DATA(a), "red");
		else if (a->rta_type == TCA_STATS2)
			qdisc_stats2(a, s);
		else if (a->rta_type == TCA_XSTATS && red &&
			 RTA_PAYLOAD(a) >= sizeof(struct tc_red_xstats))
			s->marked = ((struct tc_red_xstats *)RTA_DATA(a))->marked;
	}
}

/* One dump of DEV's qdiscs; 0 if the one with our handle was in it. */
static int qdisc_read(const struct qdisc_src *q, struct qstat *s)
{
	struct {
		struct nlmsghdr nlh;
		struct tcmsg tcm;
	} req = {
		.nlh.nlmsg_len = sizeof(req),
		.nlh.nlmsg_type = RTM_GETQDISC,
		.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		.tcm.tcm_family = AF_UNSPEC,
		.tcm.tcm_ifindex = q->ifindex,
	};
	static char nlbuf[NL_BUF];
	int found = 0;

	if (send(q->nl, &req, sizeof(req), 0) < 0)
		die("netlink send");
	for (;;) {
		int len = recv(q->nl, nlbuf, sizeof(nlbuf), 0);
		struct nlmsghdr *h;

		if (len < 0)
			die("netlink recv");
		for (h = (struct nlmsghdr *)nlbuf; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
			struct tcmsg *tcm = NLMSG_DATA(h);

			if (h->nlmsg_type == NLMSG_DONE)
				return found ? 0 : -1;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -1;
			if (tcm->tcm_ifindex != q->ifindex || tcm->tcm_handle != q->handle)
				continue;
			found = 1;
			qdisc_attrs(tcm, h->nlmsg_len - NLMSG_LENGTH(sizeof(*tcm)), s);
		}
	}
}

static void print_queue(const struct qdisc_src *q, uint64_t t_us)
{
	struct qstat s = { 0 };

	if (qdisc_read(q, &s)) {
		fprintf(stderr, "error qdisc: handle %x: not found\n", q->handle >> 16);
		exit(1);
	}
	printf("queue t_us=%llu backlog=%u qlen=%u bytes=%llu packets=%u ",
	       (unsigned long long)t_us, s.backlog, s.qlen,
	       (unsigned long long)s.bytes, s.packets);
	printf("drops=%u overlimits=%u marked=%u\n", s.drops, s.overlimits, s.marked);
}

/* ---------------------------------------------------------------- client */

/* FLOW_SENT: all of -n BYTES written, waiting for the ACKs */
enum { FLOW_WAIT, FLOW_CONNECTING, FLOW_RUNNING, FLOW_SENT, FLOW_DONE };

struct flow {
	int fd;
	int state;
	uint64_t start_us;	/* planned, from the client's start */
	uint64_t dur_us;	/* planned, from the connection */
	uint64_t began_us;	/* connected */
	uint64_t sent;
};

struct client_opts {
	const char *cc;
	uint64_t secs_us, bytes, interval_us, stagger_us, leave_us, rr_us;
	uint64_t pacing;
	int nflows, hold, wait_end, sndbuf, jitter;
	struct qdisc_src *qdisc;
};

/* HOST is numeric (IPv4 or IPv6): no resolver in a static binary. */
static socklen_t parse_addr(const char *host, const char *port,
			    struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(atoi(port));
		return sizeof(*sin);
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(atoi(port));
		return sizeof(*sin6);
	}
	fprintf(stderr, "error address: %s is not numeric\n", host);
	exit(1);
}

/* A non-blocking connect(); completion is seen by poll(). */
static int start_connect(const struct sockaddr_storage *ss, socklen_t len,
			 const struct client_opts *o)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd < 0)
		die("socket");
	set_cc(fd, o->cc);
	if (o->pacing && setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE,
				    &o->pacing, sizeof(o->pacing)) < 0)
		die("setsockopt SO_MAX_PACING_RATE");
	if (o->sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o->sndbuf,
				    sizeof(o->sndbuf)) < 0)
		die("setsockopt SO_SNDBUF");
	if (connect(fd, (const struct sockaddr *)ss, len) < 0 && errno != EINPROGRESS)
		die("connect");
	return fd;
}

/* The connection is up: say so, tell the server what we want. */
static void connected(int fd, int idx, char mode)
{
	char name[CA_NAME_MAX] = "";
	struct sockaddr_storage ss;
	socklen_t len = sizeof(int);
	int err = 0, port;

	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
	if (err) {
		errno = err;
		die("connect");
	}
	abort_on_close(fd);
	if (mode && send(fd, &mode, 1, 0) != 1)
		die("send");
	if (idx < 0)
		return;

	len = sizeof(name);
	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) < 0)
		die("getsockopt TCP_CONGESTION");
	name[len < sizeof(name) ? len : sizeof(name) - 1] = 0;
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		die("getsockname");
	port = ss.ss_family == AF_INET6 ?
		ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) :
		ntohs(((struct sockaddr_in *)&ss)->sin_port);
	printf("cc %s\nsport %d\nflow %d cc=%s sport=%d\n", name, port, idx, name, port);
	fflush(stdout);
}

static uint64_t print_sample(int fd, int idx, uint64_t t_us)
{
	union tcp_cc_info cc;
	struct tcp_info ti;
	socklen_t len;

	memset(&cc, 0, sizeof(cc));
	memset(&ti, 0, sizeof(ti));
	len = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
		die("getsockopt TCP_INFO");
	/* Algorithms without get_info (cubic, reno) return 0 bytes. */
	len = sizeof(cc);
	if (getsockopt(fd, IPPROTO_TCP, TCP_CC_INFO, &cc, &len) < 0)
		die("getsockopt TCP_CC_INFO");
	if (len < sizeof(cc.dctcp))
		memset(&cc, 0, sizeof(cc));

	/* One line per sample; the test scripts parse key=value pairs. */
	printf("sample t_ms=%llu cc_enabled=%u ce_state=%u alpha=%u ab_ecn=%u ab_tot=%u ",
	       (unsigned long long)(t_us / 1000), cc.dctcp.dctcp_enabled,
	       cc.dctcp.dctcp_ce_state, cc.dctcp.dctcp_alpha,
	       cc.dctcp.dctcp_ab_ecn, cc.dctcp.dctcp_ab_tot);
	printf("cwnd=%u ssthresh=%u rtt_us=%u retrans=%u ca_state=%u ecn=%u acked=%llu ",
	       ti.tcpi_snd_cwnd, ti.tcpi_snd_ssthresh, ti.tcpi_rtt,
	       ti.tcpi_total_retrans, ti.tcpi_ca_state,
	       !!(ti.tcpi_options & TCPI_OPT_ECN),
	       (unsigned long long)ti.tcpi_bytes_acked);
	printf("t_us=%llu flow=%d delivered=%u delivered_ce=%u min_rtt_us=%u\n",
	       (unsigned long long)t_us, idx, ti.tcpi_delivered,
	       ti.tcpi_delivered_ce, ti.tcpi_min_rtt);
	return ti.tcpi_bytes_acked;
}

/* The probe: one byte out, one byte back. */
struct probe {
	int fd;
	int up;
	uint64_t sent_us;	/* 0: no request in flight */
	uint64_t next_us;
};

static void probe_answer(struct probe *p, uint64_t t, uint64_t start, uint64_t every)
{
	char c;
	ssize_t n = recv(p->fd, &c, 1, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n != 1)
		die("probe recv");
	printf("rr t_us=%llu rtt_us=%llu\n", (unsigned long long)(p->sent_us - start),
	       (unsigned long long)(t - p->sent_us));
	p->sent_us = 0;
	p->next_us += every;
	if (p->next_us < t)
		p->next_us = t;
}

static void probe_send(struct probe *p, uint64_t t)
{
	char c = 'p';

	if (send(p->fd, &c, 1, MSG_DONTWAIT) != 1)
		die("probe send");
	p->sent_us = t;
}

/* A flow's last sample and its done line. */
static void flow_finish(struct flow *f, int idx, uint64_t t, uint64_t start)
{
	uint64_t acked = print_sample(f->fd, idx, t - start);
	uint64_t ms = (t - f->began_us) / 1000;

	printf("done sent=%llu acked=%llu ms=%llu mbit=%.2f flow=%d\n",
	       (unsigned long long)f->sent, (unsigned long long)acked,
	       (unsigned long long)ms,
	       t > f->began_us ? acked * 8.0 / (t - f->began_us) : 0.0, idx);
	fflush(stdout);
	f->state = FLOW_DONE;
}

/* Wait (bounded) until everything sent is acknowledged. */
static void wait_acked(struct flow *fl, int n, uint64_t start)
{
	int i, outq;

	for (i = 0; i < n; i++) {
		while (fl[i].state == FLOW_SENT && !stop &&
		       now_us() < start + 60000000) {
			if (ioctl(fl[i].fd, SIOCOUTQ, &outq) < 0)
				die("ioctl SIOCOUTQ");
			if (!outq)
				break;
			usleep(10000);
		}
	}
}

static void flow_send(struct flow *f, const struct client_opts *o)
{
	size_t n = sizeof(buf);
	ssize_t ret;

	if (o->bytes && o->bytes - f->sent < n)
		n = o->bytes - f->sent;
	ret = send(f->fd, buf, n, MSG_DONTWAIT);
	if (ret < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		die("send");
	}
	f->sent += ret;
	if (o->bytes && f->sent >= o->bytes)
		f->state = FLOW_SENT;
}

/*
 * The next sampling time: -i is a fixed grid; -I is jittered, uniform
 * in [US/2, 3US/2] (xorshift, fixed seed: the same times in every run),
 * so that a queue oscillating with a period near US cannot alias with it.
 */
static uint64_t next_tick(uint64_t t, const struct client_opts *o)
{
	static uint32_t x = 2463534242U;

	if (!o->jitter)
		return t + o->interval_us;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return t + o->interval_us / 2 + x % (o->interval_us + 1);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* When a running flow is due to stop. */
static uint64_t flow_end(const struct flow *f)
{
	return f->dur_us == UINT64_MAX ? UINT64_MAX : f->began_us + f->dur_us;
}

static struct timespec *us_timespec(struct timespec *ts, uint64_t us)
{
	ts->tv_sec = us / 1000000;
	ts->tv_nsec = us % 1000000 * 1000;
	return ts;
}

/*
 * The client's loop: one poll() over every flow and the probe, woken by
 * send buffer space, the probe's answers and the next deadline (a sample,
 * a flow to start or to end, a probe to send).
 */
static void client_loop(struct flow *fl, const struct client_opts *o,
			const struct sockaddr_storage *ss, socklen_t sslen,
			struct probe *p, uint64_t start)
{
	struct pollfd pfd[MAX_FLOWS + 1];
	int idx[MAX_FLOWS + 1];
	uint64_t next_sample = o->interval_us ? next_tick(start, o) : UINT64_MAX;
	uint64_t last_flush = start;
	struct timespec ts;

	for (;;) {
		uint64_t t = now_us(), wake = UINT64_MAX;
		int i, np = 0, active = 0;

		if (t >= next_sample) {
			if (o->qdisc)
				print_queue(o->qdisc, t - start);
			for (i = 0; i < o->nflows; i++)
				if (fl[i].state == FLOW_RUNNING)
					print_sample(fl[i].fd, i, t - start);
			next_sample = next_tick(next_sample, o);
			if (next_sample <= t)
				next_sample = next_tick(t, o);
			if (t - last_flush >= FLUSH_US || o->interval_us >= 10000) {
				fflush(stdout);
				last_flush = t;
			}
			continue;
		}
		for (i = 0; i < o->nflows; i++) {
			struct flow *f = &fl[i];

			if (f->state == FLOW_WAIT && t >= start + f->start_us) {
				f->fd = start_connect(ss, sslen, o);
				f->state = FLOW_CONNECTING;
			}
			if (f->state == FLOW_RUNNING &&
			    (stop || t >= flow_end(f)))
				flow_finish(f, i, t, start);
			if (f->state == FLOW_WAIT)
				wake = min_u64(wake, start + f->start_us);
			if (f->state == FLOW_RUNNING)
				wake = min_u64(wake, flow_end(f));
			if (f->state == FLOW_CONNECTING || f->state == FLOW_RUNNING) {
				pfd[np].fd = f->fd;
				pfd[np].events = POLLOUT;
				idx[np++] = i;
			}
			active += f->state < FLOW_SENT;
		}
		if (!o->nflows) {	/* only the probe, for -t SECS */
			active = t < start + o->secs_us;
			wake = min_u64(wake, start + o->secs_us);
		}
		if (!active || stop)
			break;
		if (p->fd >= 0) {
			if (p->up && !p->sent_us && t >= p->next_us)
				probe_send(p, t);
			if (p->up && !p->sent_us)
				wake = min_u64(wake, p->next_us);
			pfd[np].fd = p->fd;
			pfd[np].events = p->up ? POLLIN : POLLOUT;
			idx[np++] = -1;
		}
		wake = min_u64(wake, next_sample);
		if (ppoll(pfd, np, wake == UINT64_MAX ? NULL : us_timespec(&ts, wake - t),
			  NULL) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		t = now_us();
		for (i = 0; i < np; i++) {
			struct flow *f = idx[i] < 0 ? NULL : &fl[idx[i]];

			if (!pfd[i].revents)
				continue;
			if (!f && !p->up) {
				connected(p->fd, -1, MODE_ECHO);
				set_nodelay(p->fd);
				p->up = 1;
				p->next_us = t;
			} else if (!f) {
				probe_answer(p, t, start, o->rr_us);
			} else if (f->state == FLOW_CONNECTING) {
				connected(f->fd, idx[i], o->hold ? 0 : MODE_SINK);
				f->began_us = t;
				f->state = FLOW_RUNNING;
				print_sample(f->fd, idx[i], t - start);
				fflush(stdout);
			} else if (!o->hold) {
				flow_send(f, o);
			}
		}
	}
}

static int parse_client(int argc, char **argv, struct client_opts *o,
			struct qdisc_src *q)
{
	int opt;

	while ((opt = getopt(argc, argv, "c:t:n:i:I:HWP:S:E:M:B:q:e:")) != -1) {
		switch (opt) {
		case 'c':
			o->cc = optarg;
			break;
		case 't':
			o->secs_us = strtod(optarg, NULL) * 1e6;
			break;
		case 'n':
			o->bytes = strtoull(optarg, NULL, 0);
			break;
		case 'i':
			o->interval_us = strtoull(optarg, NULL, 0) * 1000;
			break;
		case 'I':
			o->interval_us = strtoull(optarg, NULL, 0);
			o->jitter = 1;
			break;
		case 'H':
			o->hold = 1;
			break;
		case 'W':
			o->wait_end = 1;
			break;
		case 'P':
			o->nflows = atoi(optarg);
			break;
		case 'S':
			o->stagger_us = strtoull(optarg, NULL, 0) * 1000;
			break;
		case 'E':
			o->leave_us = strtoull(optarg, NULL, 0) * 1000;
			break;
		case 'M':
			o->pacing = strtoull(optarg, NULL, 0);
			break;
		case 'B':
			o->sndbuf = atoi(optarg);
			break;
		case 'q':
			qdisc_open(q, optarg);
			o->qdisc = q;
			break;
		case 'e':
			o->rr_us = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (optind + 2 != argc || (!o->secs_us && !o->bytes && !o->hold) ||
	    o->nflows < !o->rr_us || o->nflows > MAX_FLOWS || (o->rr_us && o->hold) ||
	    (!o->nflows && !o->secs_us) ||
	    ((o->stagger_us || o->leave_us) &&
	     (o->nflows - 1) * (o->stagger_us + o->leave_us) >= o->secs_us))
		usage();
	return optind;
}

static int client(int argc, char **argv)
{
	struct client_opts o = { .nflows = 1 };
	struct probe p = { .fd = -1 };
	static struct flow fl[MAX_FLOWS];
	struct sockaddr_storage ss;
	struct qdisc_src q;
	socklen_t sslen;
	uint64_t start;
	int i, arg;

	arg = parse_client(argc, argv, &o, &q);
	sslen = parse_addr(argv[arg], argv[arg + 1], &ss);

	catch_signal(SIGTERM);
	catch_signal(SIGINT);
	signal(SIGPIPE, SIG_IGN);
	memset(buf, 'd', sizeof(buf));

	start = now_us();
	for (i = 0; i < o.nflows; i++) {
		fl[i].start_us = i * o.stagger_us;
		fl[i].dur_us = o.secs_us ? o.secs_us - i * (o.stagger_us + o.leave_us) :
			UINT64_MAX;
	}
	if (o.rr_us)
		p.fd = start_connect(&ss, sslen, &o);

	if (o.hold) {
		/* connect them all, then hold */
		for (i = 0; i < o.nflows; i++) {
			struct pollfd pfd = { .events = POLLOUT };

			pfd.fd = start_connect(&ss, sslen, &o);
			while (poll(&pfd, 1, -1) < 0)
				if (errno != EINTR || stop)
					die("connect");
			connected(pfd.fd, i, 0);
			print_sample(pfd.fd, i, now_us() - start);
			fl[i].fd = pfd.fd;
		}
		printf("holding\n");
		fflush(stdout);
		while (!stop)
			pause();
		return 0;
	}

	client_loop(fl, &o, &ss, sslen, &p, start);
	if (o.bytes && !stop)
		wait_acked(fl, o.nflows, start);
	for (i = 0; i < o.nflows; i++)
		if (fl[i].state == FLOW_RUNNING || fl[i].state == FLOW_SENT)
			flow_finish(&fl[i], i, now_us(), start);
	fflush(stdout);
	if (o.wait_end) {
		printf("waiting\n");
		fflush(stdout);
		while (!stop)
			pause();
	}
	for (i = 0; i < o.nflows; i++) {
		if (fl[i].state != FLOW_DONE)
			continue;
		if (shutdown(fl[i].fd, SHUT_WR) < 0)
			die("shutdown");
		close(fl[i].fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "server"))
		return server(argc - 1, argv + 1);
	if (!strcmp(argv[1], "client"))
		return client(argc - 1, argv + 1);
	usage();
	return 2;
}
