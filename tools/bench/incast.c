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
 *   incast server -p PORT [-b ADDR]
 *   incast client -c ADDR -p PORT -n FLOWS -s BYTES -r ROUNDS [-w MSEC] [-W WARMUP]
 *   incast probe  -c ADDR -p PORT -n TRIES -C CC1[,CC2] [-w MSEC] [-T MSEC]
 *
 * With -W, WARMUP unreported rounds open the congestion windows first; the
 * client then prints "w", and waits for a line on stdin before the measured
 * rounds, so that the caller can snapshot counters (nstat) in between.
 *
 * The client prints CSV on stdout, one line per flow per round and one line
 * per round:
 *   f,ROUND,FLOW,FCT_US     flow completion time (request sent -> last byte)
 *   q,ROUND,QCT_US          query completion time (the slowest flow)
 *
 * "probe" is the seed's SYN/ECT test: TRIES connection attempts for each
 * congestion control CC (set with TCP_CONGESTION before connect(), so that
 * dctcp sends an ECT SYN and e.g. cubic a non-ECT one), alternating, MSEC
 * apart.  An attempt counts as connected when the handshake completes
 * within -T MSEC (default 900: before the 1 s SYN retransmission timer):
 *   c,CC,TRY,CONNECT_US     or   c,CC,TRY,-1 (first SYN lost)
 * Errors go to stderr and make the exit status non-zero.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/types.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define INCAST_MAX_FLOWS	256
#define INCAST_MAX_BYTES	(64U << 20)
#define INCAST_BUF		65536
#define INCAST_ROUND_TIMEOUT_MS	30000

static char buf[INCAST_BUF];

struct incast_flow {
	int fd;
	__u32 left;		/* bytes of this round's answer still due */
	__u64 done_us;	/* when the last byte arrived */
};

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

static int incast_write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c += n;
		len -= n;
	}
	return 0;
}

static int incast_read_all(int fd, void *p, size_t len)
{
	char *c = p;

	while (len) {
		ssize_t n = read(fd, c, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c += n;
		len -= n;
	}
	return 0;
}

/* Responder: answer each 4-byte big-endian request with that many bytes. */
static void incast_serve(int fd)
{
	__u32 req;

	while (incast_read_all(fd, &req, sizeof(req)) == 0) {
		__u32 left = ntohl(req);

		if (left > INCAST_MAX_BYTES)
			break;
		while (left) {
			__u32 n = left < INCAST_BUF ? left : INCAST_BUF;

			if (incast_write_all(fd, buf, n))
				exit(1);
			left -= n;
		}
	}
	exit(0);
}

static int incast_server(const char *addr, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int one = 1;
	int lfd;

	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "incast: bad address %s\n", addr);
		return 1;
	}
	signal(SIGCHLD, SIG_IGN);	/* children are reaped by the kernel */

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		incast_die("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)))
		incast_die("bind");
	if (listen(lfd, INCAST_MAX_FLOWS))
		incast_die("listen");

	for (;;) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			incast_die("accept");
		}
		if (fork() == 0) {
			close(lfd);
			incast_serve(fd);
		}
		close(fd);
	}
}

static int incast_connect(const struct sockaddr_in *sin)
{
	int one = 1;
	int fd;

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		incast_die("socket");
	if (connect(fd, (const struct sockaddr *)sin, sizeof(*sin)))
		incast_die("connect");
	/* the 4-byte requests must leave at once, not wait for Nagle */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
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
		if (incast_write_all(fl[i].fd, &req, sizeof(req)))
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
			/* poll() said readable: this read does not block */
			got = read(fl[i].fd, buf,
				   fl[i].left < INCAST_BUF ? fl[i].left : INCAST_BUF);
			if (got < 0 && errno == EINTR)
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
			 __u32 bytes, int rounds, int wait_ms, int warmup)
{
	char line[64];
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct incast_flow fl[INCAST_MAX_FLOWS];
	struct timespec gap = {
		.tv_sec = wait_ms / 1000,
		.tv_nsec = (long)(wait_ms % 1000) * 1000000,
	};
	int i, r;

	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "incast: bad address %s\n", addr);
		return 1;
	}
	for (i = 0; i < nflows; i++)
		fl[i].fd = incast_connect(&sin);

	for (r = -warmup; r < rounds; r++) {
		if (r == 0 && warmup) {
			printf("w\n");
			fflush(stdout);
			if (!fgets(line, sizeof(line), stdin))
				return 1;
		}
		if (incast_round(fl, nflows, bytes, r, r >= 0))
			return 1;
		fflush(stdout);
		if (wait_ms)
			nanosleep(&gap, NULL);
	}
	for (i = 0; i < nflows; i++)
		close(fl[i].fd);
	return 0;
}

/* One non-blocking connect: microseconds to complete, or -1 on timeout. */
static long long incast_probe_one(const struct sockaddr_in *sin,
				  const char *cc, int timeout_ms)
{
	struct pollfd pfd = { .events = POLLOUT };
	__u64 start;
	long long us = -1;
	socklen_t len;
	int err = 0;

	pfd.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (pfd.fd < 0)
		incast_die("socket");
	if (setsockopt(pfd.fd, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc)))
		incast_die(cc);
	start = incast_now_us();
	if (connect(pfd.fd, (const struct sockaddr *)sin, sizeof(*sin)) &&
	    errno != EINPROGRESS)
		incast_die("connect");
	if (poll(&pfd, 1, timeout_ms) == 1) {
		len = sizeof(err);
		getsockopt(pfd.fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err) {
			errno = err;
			incast_die("connect");
		}
		us = incast_now_us() - start;
	}
	close(pfd.fd);
	return us;
}

static int incast_probe(const char *addr, int port, int tries, char *ccs,
			int wait_ms, int timeout_ms)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct timespec gap = {
		.tv_sec = wait_ms / 1000,
		.tv_nsec = (long)(wait_ms % 1000) * 1000000,
	};
	char *cc[2], *tok;
	int ncc = 0, t, i;

	sin.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "incast: bad address %s\n", addr);
		return 1;
	}
	for (tok = strtok(ccs, ","); tok && ncc < 2; tok = strtok(NULL, ","))
		cc[ncc++] = tok;
	if (!ncc) {
		fprintf(stderr, "incast: -C wants one or two congestion controls\n");
		return 1;
	}
	for (t = 0; t < tries; t++) {
		for (i = 0; i < ncc; i++) {
			printf("c,%s,%d,%lld\n", cc[i], t,
			       incast_probe_one(&sin, cc[i], timeout_ms));
			fflush(stdout);
			nanosleep(&gap, NULL);
		}
	}
	return 0;
}

static void incast_usage(void)
{
	fprintf(stderr,
		"usage: incast server -p PORT [-b ADDR]\n"
		"       incast client -c ADDR -p PORT -n FLOWS -s BYTES -r ROUNDS [-w MSEC] [-W WARMUP]\n"
		"       incast probe  -c ADDR -p PORT -n TRIES -C CC1[,CC2] [-w MSEC] [-T MSEC]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	int port = 0, nflows = 1, rounds = 1, wait_ms = 0, warmup = 0;
	int timeout_ms = 900;
	char *ccs = NULL;
	unsigned long bytes = 65536;
	int opt;

	if (argc < 2)
		incast_usage();
	optind = 2;
	while ((opt = getopt(argc, argv, "b:c:p:n:s:r:w:W:C:T:")) != -1) {
		switch (opt) {
		case 'b':
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
		case 'w':
			wait_ms = atoi(optarg);
			break;
		case 'W':
			warmup = atoi(optarg);
			break;
		case 'C':
			ccs = optarg;
			break;
		case 'T':
			timeout_ms = atoi(optarg);
			break;
		default:
			incast_usage();
		}
	}
	if (port <= 0 || port > 65535)
		incast_usage();

	if (!strcmp(argv[1], "server"))
		return incast_server(addr ? addr : "0.0.0.0", port);
	if (!strcmp(argv[1], "probe")) {
		if (!addr || !ccs || nflows < 1 || wait_ms < 0 || timeout_ms < 1)
			incast_usage();
		return incast_probe(addr, port, nflows, ccs, wait_ms, timeout_ms);
	}

	if (strcmp(argv[1], "client") || !addr || nflows < 1 ||
	    nflows > INCAST_MAX_FLOWS || !bytes || bytes > INCAST_MAX_BYTES ||
	    rounds < 1 || wait_ms < 0 || warmup < 0)
		incast_usage();
	return incast_client(addr, port, nflows, bytes, rounds, wait_ms,
			     warmup);
}
