// SPDX-License-Identifier: GPL-2.0
/*
 * dctcp_flow: a minimal TCP sink and source for the tcp_dctcp selftests.
 *
 *   dctcp_flow server [-6] [-p PORT]
 *	Listen, fork one child per connection, read and discard until EOF.
 *	SIGTERM ends the server and its children.  Sockets close with RST
 *	(SO_LINGER 0) so that nothing outlives the test's namespaces.
 *
 *   dctcp_flow client [-c CC] [-t SECS | -n BYTES] [-i MS] [-H | -W] HOST PORT
 *	Connect (after setsockopt(TCP_CONGESTION, CC) when -c is given),
 *	print the algorithm the kernel reports with getsockopt(TCP_CONGESTION)
 *	and send for SECS seconds or BYTES bytes.  With -i, print a sample of
 *	TCP_INFO and TCP_CC_INFO every MS milliseconds; a sample is always
 *	printed right after connect() and one at the end.  With -H, hold the
 *	connection open without sending until SIGTERM/SIGINT; with -W, keep
 *	it open after sending (so that `ss` can still see its final state)
 *	until SIGTERM/SIGINT.  SIGTERM during the transfer ends it early, with
 *	the final sample and the done line.
 *
 * Output lines (parsed by dctcp_lib.sh):
 *	cc NAME
 *	sport LOCAL_PORT
 *	sample t_ms=T cc_enabled=E ce_state=C alpha=A ab_ecn=X ab_tot=Y
 *	       cwnd=W ssthresh=S rtt_us=R retrans=N ca_state=Z ecn=0|1
 *	       acked=B
 *	done sent=B acked=B ms=T mbit=M
 *
 * Errors are reported as "error OP: strerror" on stderr with exit status 1,
 * so that a test can assert e.g. that setsockopt(TCP_CONGESTION) fails
 * with ENOENT once the module is gone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/inet_diag.h>
#include <linux/sockios.h>
#include <linux/tcp.h>

#define CHUNK		(64 * 1024)
#define DEFAULT_PORT	"5301"
#define CA_NAME_MAX	16	/* TCP_CA_NAME_MAX, not in uapi */

static volatile sig_atomic_t stop;

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

/* No SA_RESTART: a blocking accept() must return EINTR on SIGTERM. */
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

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: dctcp_flow server [-6] [-p PORT]\n"
		"       dctcp_flow client [-c CC] [-t SECS | -n BYTES] [-i MS] [-H | -W] HOST PORT\n");
	exit(2);
}

static int server(int argc, char **argv)
{
	const char *port = DEFAULT_PORT;
	int family = AF_INET, one = 1, opt, lfd;
	struct sockaddr_storage ss = { 0 };
	socklen_t len;

	while ((opt = getopt(argc, argv, "6p:")) != -1) {
		switch (opt) {
		case '6':
			family = AF_INET6;
			break;
		case 'p':
			port = optarg;
			break;
		default:
			usage();
		}
	}

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
	if (bind(lfd, (struct sockaddr *)&ss, len) < 0)
		die("bind");
	if (listen(lfd, 64) < 0)
		die("listen");
	signal(SIGCHLD, SIG_IGN);	/* children reap themselves */
	/* Own process group: SIGTERM to the server ends its children too. */
	setpgid(0, 0);
	catch_signal(SIGTERM);

	for (;;) {
		static char buf[CHUNK];
		int fd = accept(lfd, NULL, NULL);

		if (stop) {
			signal(SIGTERM, SIG_DFL);
			kill(0, SIGTERM);
			return 0;
		}
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			die("accept");
		}
		abort_on_close(fd);
		if (fork() == 0) {
			close(lfd);
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			_exit(0);
		}
		close(fd);
	}
}

/* HOST is numeric (IPv4 or IPv6): no resolver in a static binary. */
static int connect_to(const char *host, const char *port, const char *cc)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	socklen_t len;
	int fd;

	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(atoi(port));
		len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(atoi(port));
		len = sizeof(*sin6);
	} else {
		fprintf(stderr, "error address: %s is not numeric\n", host);
		exit(1);
	}

	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	if (cc && setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, strlen(cc)) < 0)
		die("setsockopt TCP_CONGESTION");
	if (connect(fd, (struct sockaddr *)&ss, len) < 0)
		die("connect");
	abort_on_close(fd);
	return fd;
}

static void print_cc(int fd)
{
	char name[CA_NAME_MAX] = "";
	struct sockaddr_storage ss;
	socklen_t len = sizeof(name);
	int port;

	if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) < 0)
		die("getsockopt TCP_CONGESTION");
	printf("cc %.*s\n", (int)strnlen(name, len), name);

	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		die("getsockname");
	port = ss.ss_family == AF_INET6 ?
		ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) :
		ntohs(((struct sockaddr_in *)&ss)->sin_port);
	printf("sport %d\n", port);
}

static uint64_t print_sample(int fd, uint64_t t_ms)
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
	       (unsigned long long)t_ms, cc.dctcp.dctcp_enabled,
	       cc.dctcp.dctcp_ce_state, cc.dctcp.dctcp_alpha,
	       cc.dctcp.dctcp_ab_ecn, cc.dctcp.dctcp_ab_tot);
	printf("cwnd=%u ssthresh=%u rtt_us=%u retrans=%u ca_state=%u ecn=%u acked=%llu\n",
	       ti.tcpi_snd_cwnd, ti.tcpi_snd_ssthresh, ti.tcpi_rtt,
	       ti.tcpi_total_retrans, ti.tcpi_ca_state,
	       !!(ti.tcpi_options & TCPI_OPT_ECN),
	       (unsigned long long)ti.tcpi_bytes_acked);
	fflush(stdout);
	return ti.tcpi_bytes_acked;
}

static int client(int argc, char **argv)
{
	uint64_t secs = 0, bytes = 0, interval = 0, sent = 0;
	uint64_t start, end, next, t, acked;
	static char buf[CHUNK];
	const char *cc = NULL;
	int opt, fd, hold = 0, wait_end = 0;

	while ((opt = getopt(argc, argv, "c:t:n:i:HW")) != -1) {
		switch (opt) {
		case 'c':
			cc = optarg;
			break;
		case 't':
			secs = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			bytes = strtoull(optarg, NULL, 0);
			break;
		case 'i':
			interval = strtoull(optarg, NULL, 0);
			break;
		case 'H':
			hold = 1;
			break;
		case 'W':
			wait_end = 1;
			break;
		default:
			usage();
		}
	}
	if (optind + 2 != argc || (!secs && !bytes && !hold))
		usage();

	catch_signal(SIGTERM);
	catch_signal(SIGINT);
	signal(SIGPIPE, SIG_IGN);

	fd = connect_to(argv[optind], argv[optind + 1], cc);
	print_cc(fd);
	start = now_ms();
	print_sample(fd, 0);

	if (hold) {
		printf("holding\n");
		fflush(stdout);
		while (!stop)
			pause();
		close(fd);
		return 0;
	}

	memset(buf, 'd', sizeof(buf));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	end = secs ? start + secs * 1000 : UINT64_MAX;
	next = interval ? start + interval : UINT64_MAX;

	while (!stop && (t = now_ms()) < end && (!bytes || sent < bytes)) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		uint64_t wake = next < end ? next : end;
		size_t n = sizeof(buf);
		ssize_t ret;

		if (t >= next) {
			print_sample(fd, t - start);
			next += interval;
			continue;
		}
		if (poll(&pfd, 1, (int)(wake - t)) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (!(pfd.revents & (POLLOUT | POLLERR | POLLHUP)))
			continue;
		if (bytes && bytes - sent < n)
			n = bytes - sent;
		ret = send(fd, buf, n, MSG_DONTWAIT);
		if (ret < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			die("send");
		}
		sent += ret;
	}

	/* With -n, wait (bounded) until everything sent is acknowledged. */
	while (bytes && !stop && now_ms() < start + 60000) {
		int outq = 0;

		if (ioctl(fd, SIOCOUTQ, &outq) < 0)
			die("ioctl SIOCOUTQ");
		if (!outq)
			break;
		usleep(10000);
	}

	/* Throughput is what the peer acknowledged, not what was queued. */
	t = now_ms();
	acked = print_sample(fd, t - start);
	printf("done sent=%llu acked=%llu ms=%llu mbit=%.2f\n",
	       (unsigned long long)sent, (unsigned long long)acked,
	       (unsigned long long)(t - start),
	       t > start ? acked * 8.0 / 1000.0 / (t - start) : 0.0);
	fflush(stdout);
	if (wait_end) {
		printf("waiting\n");
		fflush(stdout);
		while (!stop)
			pause();
	}
	if (shutdown(fd, SHUT_WR) < 0)
		die("shutdown");
	close(fd);
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
