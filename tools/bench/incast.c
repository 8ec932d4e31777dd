// SPDX-License-Identifier: GPL-2.0
/*
 * incast - partition/aggregate request/response load for the DCTCP benchmark
 *
 * One aggregator (the "client") keeps FLOWS persistent TCP connections to
 * responders (the "server") and, ROUNDS times, writes a 4-byte request on
 * every connection back to back, then waits until every responder has sent
 * its BYTES-byte answer.  All answers start within microseconds of each other
 * and converge on the bottleneck: the incast pattern of the DCTCP paper
 * (SIGCOMM 2010, section 4.2).
 *
 *   incast server -p PORT
 *   incast client -c ADDR -p PORT -n FLOWS -s BYTES -r ROUNDS [-W WARMUP]
 *
 * One process serves every responder connection (poll): an answer is
 * queued whole in the socket (SO_SNDBUF 4 MB) the moment its request
 * arrives, so all responders send at once, as N servers would.  When a
 * connection's first request arrives the server prints the algorithm and
 * ECN state of its socket, the sender of the answers:
 *   conn SPORT DPORT cc=NAME ecn=0|1
 * The aggregator sets SO_RCVLOWAT to the answer's size: poll() wakes it
 * once per answer, when its last byte is in, which is the flow's completion
 * time.
 *
 * With -W, WARMUP unreported rounds open the congestion windows first; the
 * client then prints "w", and waits for a line on stdin before the measured
 * rounds, so that the caller can snapshot counters (nstat) in between.
 *
 * The client prints one line per flow per round and one line per round:
 *   f,ROUND,FLOW,FCT_US     flow completion time (request sent -> last byte)
 *   q,ROUND,QCT_US          query completion time (the slowest flow)
 * Errors go to stderr and make the exit status non-zero.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/types.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define INCAST_MAX_FLOWS	256
#define INCAST_MAX_BYTES	(4U << 20)
#define INCAST_BUF		(4U << 20)
#define INCAST_ROUND_TIMEOUT_MS	60000
#define INCAST_CA_NAME_MAX	16

static char buf[INCAST_BUF];

static void incast_die(const char *what)
{
	fprintf(stderr, "incast: %s: %s\n", what, strerror(errno));
	exit(1);
}

static __u64 incast_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void incast_setint(int fd, int level, int opt, int val, const char *what)
{
	if (setsockopt(fd, level, opt, &val, sizeof(val)))
		incast_die(what);
}

/* ---------------------------------------------------------------- server */

struct incast_conn {
	int fd;
	int said;		/* printed its conn line */
	__u32 got;		/* bytes of the 4-byte request read so far */
	unsigned char req[4];
	__u32 left;		/* bytes of the answer not yet written */
};

/* The socket that sends the answers: its algorithm and ECN state. */
static void incast_conn_line(int fd)
{
	char name[INCAST_CA_NAME_MAX + 1] = "";
	struct sockaddr_in a = { 0 }, b = { 0 };
	socklen_t len = INCAST_CA_NAME_MAX;
	struct tcp_info ti = { 0 };

	getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len);
	len = sizeof(ti);
	getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len);
	len = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &len);
	len = sizeof(b);
	getpeername(fd, (struct sockaddr *)&b, &len);
	printf("conn %u %u cc=%s ecn=%d\n", ntohs(a.sin_port), ntohs(b.sin_port), name,
	       !!(ti.tcpi_options & TCPI_OPT_ECN));
	fflush(stdout);
}

/* Write what fits of the answer; 0 when the connection is gone. */
static int incast_answer(struct incast_conn *c)
{
	while (c->left) {
		ssize_t n = send(c->fd, buf, c->left < INCAST_BUF ? c->left : INCAST_BUF,
				 MSG_DONTWAIT);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		c->left -= n;
	}
	return 1;
}

/* Read (part of) a request; 0 when the connection is gone. */
static int incast_request(struct incast_conn *c)
{
	ssize_t n = recv(c->fd, c->req + c->got, sizeof(c->req) - c->got, MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	if (!n)
		return 0;
	c->got += n;
	if (c->got < sizeof(c->req))
		return 1;
	c->got = 0;
	memcpy(&c->left, c->req, sizeof(c->left));
	c->left = ntohl(c->left);
	if (c->left > INCAST_MAX_BYTES)
		return 0;
	if (!c->said) {
		incast_conn_line(c->fd);
		c->said = 1;
	}
	return incast_answer(c);
}

static void incast_server(int port)
{
	static struct incast_conn conns[INCAST_MAX_FLOWS];
	static struct pollfd pfd[INCAST_MAX_FLOWS + 1];
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int lfd, nconn = 0, i;

	sin.sin_port = htons(port);
	sin.sin_addr.s_addr = htonl(INADDR_ANY);
	signal(SIGPIPE, SIG_IGN);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		incast_die("socket");
	incast_setint(lfd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)))
		incast_die("bind");
	if (listen(lfd, INCAST_MAX_FLOWS))
		incast_die("listen");

	for (;;) {
		pfd[0].fd = lfd;
		pfd[0].events = POLLIN;
		for (i = 0; i < nconn; i++) {
			pfd[i + 1].fd = conns[i].fd;
			pfd[i + 1].events = conns[i].left ? POLLOUT : POLLIN;
		}
		if (poll(pfd, nconn + 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			incast_die("poll");
		}
		for (i = nconn - 1; i >= 0; i--) {
			struct incast_conn *c = &conns[i];

			if (!pfd[i + 1].revents)
				continue;
			if (c->left ? incast_answer(c) : incast_request(c))
				continue;
			close(c->fd);
			*c = conns[--nconn];
		}
		if ((pfd[0].revents & POLLIN) && nconn < INCAST_MAX_FLOWS) {
			int fd = accept(lfd, NULL, NULL);

			if (fd < 0) {
				if (errno == EINTR)
					continue;
				incast_die("accept");
			}
			incast_setint(fd, SOL_SOCKET, SO_SNDBUF, INCAST_BUF, "SO_SNDBUF");
			memset(&conns[nconn], 0, sizeof(conns[nconn]));
			conns[nconn++].fd = fd;
		}
	}
}

/* ---------------------------------------------------------------- client */

struct incast_flow {
	int fd;
	__u32 left;		/* bytes of this round's answer still due */
	__u64 done_us;		/* when the last byte arrived */
};

static int incast_connect(const struct sockaddr_in *sin, __u32 bytes)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), rcvbuf = 2 * INCAST_BUF;

	if (fd < 0)
		incast_die("socket");
	/* the window never limits an answer (SO_RCVBUFFORCE: root) */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		incast_setint(fd, SOL_SOCKET, SO_RCVBUF, rcvbuf, "SO_RCVBUF");
	if (connect(fd, (const struct sockaddr *)sin, sizeof(*sin)))
		incast_die("connect");
	/* the answer arrives whole before poll() says readable */
	incast_setint(fd, SOL_SOCKET, SO_RCVLOWAT, bytes, "SO_RCVLOWAT");
	/* the 4-byte requests must leave at once, not wait for Nagle */
	incast_setint(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
	return fd;
}

/* Send one request on every flow, then collect every answer. */
static int incast_round(struct incast_flow *fl, int nflows, __u32 bytes,
			int round, int report)
{
	struct pollfd pfd[INCAST_MAX_FLOWS];
	int idx[INCAST_MAX_FLOWS];
	__u32 req = htonl(bytes);
	__u64 start, qct = 0;
	int pending = nflows;
	int i;

	start = incast_now_us();
	for (i = 0; i < nflows; i++) {
		fl[i].left = bytes;
		if (send(fl[i].fd, &req, sizeof(req), 0) != sizeof(req))
			incast_die("request");
	}

	while (pending) {
		int n, k, np = 0;

		for (i = 0; i < nflows; i++) {
			if (!fl[i].left)
				continue;
			pfd[np].fd = fl[i].fd;
			pfd[np].events = POLLIN;
			idx[np++] = i;
		}
		n = poll(pfd, np, INCAST_ROUND_TIMEOUT_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			incast_die("poll");
		if (n == 0) {
			fprintf(stderr, "incast: round %d: %d flows still pending after %d ms\n",
				round, pending, INCAST_ROUND_TIMEOUT_MS);
			return -1;
		}
		for (k = 0; k < np; k++) {
			ssize_t got;

			if (!pfd[k].revents)
				continue;
			i = idx[k];
			got = recv(fl[i].fd, buf, fl[i].left, MSG_DONTWAIT);
			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (got <= 0) {
				fprintf(stderr, "incast: round %d flow %d: connection lost\n",
					round, i);
				return -1;
			}
			fl[i].left -= got;
			if (!fl[i].left) {
				fl[i].done_us = incast_now_us();
				pending--;
			}
		}
	}

	if (!report)
		return 0;
	for (i = 0; i < nflows; i++) {
		__u64 fct = fl[i].done_us - start;

		printf("f,%d,%d,%llu\n", round, i, (unsigned long long)fct);
		if (fct > qct)
			qct = fct;
	}
	printf("q,%d,%llu\n", round, (unsigned long long)qct);
	return 0;
}

static int incast_client(const char *addr, int port, int nflows,
			 __u32 bytes, int rounds, int warmup)
{
	static struct incast_flow fl[INCAST_MAX_FLOWS];
	struct sockaddr_in sin = { .sin_family = AF_INET };
	char line[64];
	int i, r;

	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "incast: bad address %s\n", addr);
		return 1;
	}
	for (i = 0; i < nflows; i++)
		fl[i].fd = incast_connect(&sin, bytes);

	for (r = -warmup; r < rounds; r++) {
		if (r == 0 && warmup) {
			printf("w\n");
			fflush(stdout);
			if (!fgets(line, sizeof(line), stdin))
				return 1;
		}
		if (incast_round(fl, nflows, bytes, r, r >= 0))
			return 1;
	}
	fflush(stdout);
	for (i = 0; i < nflows; i++)
		close(fl[i].fd);
	return 0;
}

static void incast_usage(void)
{
	fprintf(stderr,
		"usage: incast server -p PORT\n"
		"       incast client -c ADDR -p PORT -n FLOWS -s BYTES -r ROUNDS [-W WARMUP]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int port = 0, nflows = 1, rounds = 1, warmup = 0, opt;
	unsigned long bytes = 65536;
	const char *addr = NULL;

	if (argc < 2)
		incast_usage();
	optind = 2;
	while ((opt = getopt(argc, argv, "c:p:n:s:r:W:")) != -1) {
		switch (opt) {
		case 'c':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'n':
			nflows = atoi(optarg);
			break;
		case 's':
			bytes = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'W':
			warmup = atoi(optarg);
			break;
		default:
			incast_usage();
		}
	}
	if (port <= 0 || port > 65535)
		incast_usage();
	if (!strcmp(argv[1], "server"))
		incast_server(port);	/* until killed */
	if (strcmp(argv[1], "client") || !addr || nflows < 1 ||
	    nflows > INCAST_MAX_FLOWS || !bytes || bytes > INCAST_MAX_BYTES ||
	    rounds < 1 || warmup < 0)
		incast_usage();
	return incast_client(addr, port, nflows, bytes, rounds, warmup);
}
