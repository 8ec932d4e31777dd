// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Host test of include/compat.h against stand-in kernel headers (stubs/):
 * the shims it adds for old kernels behave like mainline's functions, and
 * on the newest API it adds nothing. Built twice by compat-check.sh: with
 * the oldest API, and with -DSTUB_NEW_API and every COMPAT_* probe set.
 * Prints a diagnostic per failed check; exit status 1 if any failed.
 * The stand-in kernel functions are defined before compat.h is included,
 * so that its renaming macros apply to the callers only.
 */
#include <stdio.h>
#include <string.h>

#include <linux/moduleparam.h>
#include <net/tcp.h>

int stub_warnings;
static int failed;

#define CHECK(cond, ...) do {					\
	if (!(cond)) {						\
		printf("# FAIL line %d: ", __LINE__);		\
		printf(__VA_ARGS__);				\
		printf("\n");					\
		failed = 1;					\
	}							\
} while (0)

#ifdef STUB_NEW_API
void __tcp_send_ack(struct sock *sk, u32 rcv_nxt, u16 flags)
{
	sk->last_ack = rcv_nxt;
	sk->last_flags = flags;
}

/* The kernel's own: compat.h must not replace it. */
int param_set_uint_minmax(const char *val, const struct kernel_param *kp,
			  unsigned int min, unsigned int max)
{
	(void)val, (void)kp, (void)min, (void)max;
	return -EDOM;
}
#else
void __tcp_send_ack(struct sock *sk, u32 rcv_nxt)
{
	sk->last_ack = rcv_nxt;
	sk->last_flags = 0xffff;	/* "sent without flags" */
}
#endif

/* After the "kernel" above, as Kbuild's -include puts it before the module. */
#include "compat.h"

static int set(const char *val, unsigned int *v, unsigned int min,
	       unsigned int max)
{
	struct kernel_param kp = { .name = "p", .arg = v };

	return param_set_uint_minmax(val, &kp, min, max);
}

static void test_param(void)
{
	unsigned int v = 4;

#ifdef STUB_NEW_API
	CHECK(set("5", &v, 0, 10) == -EDOM,
	      "compat.h replaced the kernel's param_set_uint_minmax()");
#else
	CHECK(set("7", &v, 0, 10) == 0 && v == 7, "7 in 0..10: got v=%u", v);
	CHECK(set("10\n", &v, 0, 10) == 0 && v == 10, "\"10\\n\" (echo) in 0..10: v=%u", v);
	CHECK(set("0x3", &v, 0, 10) == 0 && v == 3, "0x3 (base 0) in 0..10: v=%u", v);
	CHECK(set("11", &v, 0, 10) == -EINVAL && v == 3, "11 accepted or changed v=%u", v);
	CHECK(set("1", &v, 2, 10) == -EINVAL && v == 3, "1 below min accepted, v=%u", v);
	CHECK(set("-1", &v, 0, 10) == -EINVAL && v == 3, "-1 accepted, v=%u", v);
	CHECK(set("abc", &v, 0, 10) == -EINVAL && v == 3, "abc accepted, v=%u", v);
	CHECK(set("", &v, 0, 10) == -EINVAL && v == 3, "empty string accepted, v=%u", v);
	CHECK(set(NULL, &v, 0, 10) == -EINVAL && v == 3, "NULL accepted, v=%u", v);
	CHECK(set("99999999999", &v, 0, 4294967295U) != 0 && v == 3, "overflow accepted, v=%u", v);
	CHECK(set("4294967295", &v, 0, 4294967295U) == 0 && v == 4294967295U,
	      "UINT_MAX refused, v=%u", v);
#endif
}

static void test_send_ack(void)
{
	struct sock sk = { 0 };

	stub_warnings = 0;
	__tcp_send_ack(&sk, 42, 0);
	CHECK(sk.last_ack == 42, "ACK for 42 not sent (got %u)", sk.last_ack);
	CHECK(stub_warnings == 0, "flags 0 warned");
#ifdef STUB_NEW_API
	__tcp_send_ack(&sk, 43, 2);
	CHECK(sk.last_ack == 43 && sk.last_flags == 2, "flags not passed through");
#else
	CHECK(sk.last_flags == 0xffff, "not the two-argument __tcp_send_ack()");
	__tcp_send_ack(&sk, 43, 2);
	CHECK(stub_warnings == 1, "flags the old kernel cannot send did not WARN");
#endif
}

static void test_ecn(void)
{
	struct tcp_sock tp = { .snd_cwnd = 17 };

	CHECK(tcp_snd_cwnd(&tp) == 17, "tcp_snd_cwnd() = %u, want 17", tcp_snd_cwnd(&tp));
	tp.ecn_flags = 0;
	CHECK(!tcp_ecn_mode_any(&tp), "no ECN taken for ECN");
#ifdef STUB_NEW_API
	tp.ecn_flags = TCP_ECN_MODE_ACCECN;
	CHECK(tcp_ecn_mode_any(&tp), "an AccECN connection is not ECN");
	tp.ecn_flags = TCP_ECN_MODE_RFC3168;
	CHECK(tcp_ecn_mode_any(&tp), "an RFC 3168 connection is not ECN");
	CHECK(TCP_CONG_NEEDS_ACCECN == 4, "compat.h replaced TCP_CONG_NEEDS_ACCECN");
#else
	tp.ecn_flags = TCP_ECN_OK;
	CHECK(tcp_ecn_mode_any(&tp), "TCP_ECN_OK is not ECN");
	tp.ecn_flags = TCP_ECN_OK | 0x6;
	CHECK(tcp_ecn_mode_any(&tp), "TCP_ECN_OK with CWR flags is not ECN");
	CHECK(TCP_CONG_NEEDS_ACCECN == 0, "AccECN flag nonzero on a kernel without AccECN");
#endif
}

int main(void)
{
	test_param();
	test_send_ack();
	test_ecn();
	return failed;
}
