// SPDX-License-Identifier: GPL-2.0
/*
 * dctcp_tcpinfo: the ECN state of TCP sockets, as the kernel reports it.
 *
 *   dctcp_tcpinfo PORT
 *	Ask INET_DIAG (as ss does) for the struct tcp_info of every IPv4 and
 *	IPv6 TCP socket of the current network namespace whose local or
 *	remote port is PORT (listeners excluded), and print one line each:
 *
 *	sock sport=S dport=D state=N info_len=L ecn_mode=M delivered=P
 *	     delivered_ce=C received_ce=R delivered_e0_bytes=B
 *	     delivered_ce_bytes=B received_e0_bytes=B received_ce_bytes=B
 *	     accecn_opt_seen=O accecn_fail_mode=F
 *
 *	M is off, rfc3168, accecn or pending (tcpi_ecn_mode), or "unknown"
 *	when the kernel's tcp_info is too short to carry it (a kernel without
 *	AccECN); the AccECN counters are 0 then.  ss (iproute2 7.3)
 *	prints none of these, and the libc headers here predate them, so the
 *	Linux 7.x layout of struct tcp_info is spelled out below.
 *
 * Exit status 0 if at least one socket matched, 1 if none did, 2 on error.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* struct tcp_info of Linux 7.2 (include/uapi/linux/tcp.h), append-only ABI */
struct tcp_info_v7 {
	__u8	tcpi_state;
	__u8	tcpi_ca_state;
	__u8	tcpi_retransmits;
	__u8	tcpi_probes;
	__u8	tcpi_backoff;
	__u8	tcpi_options;
	__u8	tcpi_snd_wscale : 4, tcpi_rcv_wscale : 4;
	__u8	tcpi_delivery_rate_app_limited:1, tcpi_fastopen_client_fail:2;
	__u32	tcpi_rto;
	__u32	tcpi_ato;
	__u32	tcpi_snd_mss;
	__u32	tcpi_rcv_mss;
	__u32	tcpi_unacked;
	__u32	tcpi_sacked;
	__u32	tcpi_lost;
	__u32	tcpi_retrans;
	__u32	tcpi_fackets;
	__u32	tcpi_last_data_sent;
	__u32	tcpi_last_ack_sent;
	__u32	tcpi_last_data_recv;
	__u32	tcpi_last_ack_recv;
	__u32	tcpi_pmtu;
	__u32	tcpi_rcv_ssthresh;
	__u32	tcpi_rtt;
	__u32	tcpi_rttvar;
	__u32	tcpi_snd_ssthresh;
	__u32	tcpi_snd_cwnd;
	__u32	tcpi_advmss;
	__u32	tcpi_reordering;
	__u32	tcpi_rcv_rtt;
	__u32	tcpi_rcv_space;
	__u32	tcpi_total_retrans;
	__u64	tcpi_pacing_rate;
	__u64	tcpi_max_pacing_rate;
	__u64	tcpi_bytes_acked;
	__u64	tcpi_bytes_received;
	__u32	tcpi_segs_out;
	__u32	tcpi_segs_in;
	__u32	tcpi_notsent_bytes;
	__u32	tcpi_min_rtt;
	__u32	tcpi_data_segs_in;
	__u32	tcpi_data_segs_out;
	__u64	tcpi_delivery_rate;
	__u64	tcpi_busy_time;
	__u64	tcpi_rwnd_limited;
	__u64	tcpi_sndbuf_limited;
	__u32	tcpi_delivered;
	__u32	tcpi_delivered_ce;
	__u64	tcpi_bytes_sent;
	__u64	tcpi_bytes_retrans;
	__u32	tcpi_dsack_dups;
	__u32	tcpi_reord_seen;
	__u32	tcpi_rcv_ooopack;
	__u32	tcpi_snd_wnd;
	__u32	tcpi_rcv_wnd;
	__u32	tcpi_rehash;
	__u16	tcpi_total_rto;
	__u16	tcpi_total_rto_recoveries;
	__u32	tcpi_total_rto_time;
	__u32	tcpi_received_ce;
	__u32	tcpi_delivered_e1_bytes;
	__u32	tcpi_delivered_e0_bytes;
	__u32	tcpi_delivered_ce_bytes;
	__u32	tcpi_received_e1_bytes;
	__u32	tcpi_received_e0_bytes;
	__u32	tcpi_received_ce_bytes;
	__u32	tcpi_ecn_mode:2,
		tcpi_accecn_opt_seen:2,
		tcpi_accecn_fail_mode:4,
		tcpi_options2:24;
};

/* The part both layouts share must line up. */
static_assert(offsetof(struct tcp_info_v7, tcpi_snd_wnd) ==
	       offsetof(struct tcp_info, tcpi_snd_wnd), "tcp_info layout");

static const char * const ecn_modes[] = { "off", "rfc3168", "accecn", "pending" };

static int matched;

static void print_sock(const struct inet_diag_msg *msg, const void *info,
		       size_t len)
{
	struct tcp_info_v7 ti;
	const char *mode = "unknown";

	memset(&ti, 0, sizeof(ti));
	memcpy(&ti, info, len < sizeof(ti) ? len : sizeof(ti));
	if (len >= sizeof(ti))
		mode = ecn_modes[ti.tcpi_ecn_mode];
	printf("sock sport=%u dport=%u state=%u info_len=%zu ecn_mode=%s ",
	       ntohs(msg->id.idiag_sport), ntohs(msg->id.idiag_dport),
	       msg->idiag_state, len, mode);
	printf("delivered=%u delivered_ce=%u received_ce=%u ",
	       ti.tcpi_delivered, ti.tcpi_delivered_ce, ti.tcpi_received_ce);
	printf("delivered_e0_bytes=%u delivered_ce_bytes=%u ",
	       ti.tcpi_delivered_e0_bytes, ti.tcpi_delivered_ce_bytes);
	printf("received_e0_bytes=%u received_ce_bytes=%u ",
	       ti.tcpi_received_e0_bytes, ti.tcpi_received_ce_bytes);
	printf("accecn_opt_seen=%u accecn_fail_mode=%u\n",
	       ti.tcpi_accecn_opt_seen, ti.tcpi_accecn_fail_mode);
	matched = 1;
}

/* Walk one INET_DIAG reply message; print it if it is on PORT. */
static void parse_msg(const struct nlmsghdr *nlh, unsigned int port)
{
	const struct inet_diag_msg *msg = NLMSG_DATA(nlh);
	int len = nlh->nlmsg_len - NLMSG_LENGTH(sizeof(*msg));
	const struct rtattr *rta = (const struct rtattr *)(msg + 1);

	if (ntohs(msg->id.idiag_sport) != port &&
	    ntohs(msg->id.idiag_dport) != port)
		return;
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		if (rta->rta_type == INET_DIAG_INFO) {
			print_sock(msg, RTA_DATA(rta), RTA_PAYLOAD(rta));
			return;
		}
	}
}

/* Dump the TCP sockets of FAMILY; 0 on success, -1 (errno) on error. */
static int dump(int fd, int family, unsigned int port)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} rq = {
		.nlh = {
			.nlmsg_len = sizeof(rq),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		},
		.req = {
			.sdiag_family = family,
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_ext = 1 << (INET_DIAG_INFO - 1),
			/* every state but LISTEN (10) */
			.idiag_states = ~(1U << 10),
		},
	};
	static union {
		struct nlmsghdr align;
		char buf[65536];
	} rx;
	const struct nlmsghdr *nlh;
	ssize_t n;

	if (send(fd, &rq, sizeof(rq), 0) < 0)
		return -1;
	for (;;) {
		n = recv(fd, rx.buf, sizeof(rx.buf), 0);
		if (n < 0)
			return -1;
		for (nlh = &rx.align; NLMSG_OK(nlh, n); nlh = NLMSG_NEXT(nlh, n)) {
			if (nlh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nlh);

				errno = -e->error;
				return -1;
			}
			parse_msg(nlh, port);
		}
	}
}

int main(int argc, char **argv)
{
	char *end;
	long port;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s PORT\n", argv[0]);
		return 2;
	}
	port = strtol(argv[1], &end, 10);
	if (*end || port <= 0 || port > 65535) {
		fprintf(stderr, "error port: '%s' is not a port number\n", argv[1]);
		return 2;
	}
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0 || dump(fd, AF_INET, port) < 0 || dump(fd, AF_INET6, port) < 0) {
		fprintf(stderr, "error inet_diag: %s\n", strerror(errno));
		return 2;
	}
	close(fd);
	return matched ? 0 : 1;
}
