// SPDX-License-Identifier: GPL-2.0
/*
 * The legacy single-field PR_SET_MM operations (PR_SET_MM_START_CODE ...
 * PR_SET_MM_ENV_END, PR_SET_MM_AUXV, PR_SET_MM_EXE_FILE), as root.
 *
 * Each case makes one call, after an optional preparing call that must
 * succeed, in a fresh copy of the test process, and checks the result:
 * a refused call leaves the mm unchanged, an accepted one changes exactly
 * its field.  Two rule sets are known:
 *
 *   upstream (default)  today's kernels: each operation validates the map
 *                       it would leave behind, like PR_SET_MM_MAP
 *   3.17                MM_LEGACY_RULES=3.17: per-field rules, as before
 *                       PR_SET_MM_MAP (this project's base tree)
 *
 * Every case prints "# legacy-result CASE RESULT", so that runs on
 * different kernels can be compared case by case.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "mm_map_util.h"

static bool ci_mode(void)
{
	const char *ci = getenv("CI");

	return ci && !strcmp(ci, "true");
}

static bool rules_317(void)
{
	const char *r = getenv("MM_LEGACY_RULES");

	return r && !strcmp(r, "3.17");
}

/* How a case computes the value it passes. */
enum val_kind {
	V_FIELD,	/* the current value of field @ref, plus @delta */
	V_MMAP_MIN,	/* mmap_min_addr, plus @delta */
	V_TASK_SIZE,	/* TASK_SIZE, plus @delta */
	V_ABOVE_VMAS,	/* an address above every VMA, below TASK_SIZE */
	V_AUXV,		/* the current vector, length + @delta */
	V_EXE,		/* an fd of the running executable */
	V_PLAIN_FILE,	/* an fd of a regular file without x bits */
};

struct legacy_op {
	int opt;	/* PR_SET_MM_*; 0: no operation */
	int kind;
	int ref;	/* enum mm_field for V_FIELD */
	long delta;
	unsigned long arg4;
};

static const int opt_field[] = {
	[PR_SET_MM_START_CODE] = F_START_CODE,
	[PR_SET_MM_END_CODE] = F_END_CODE,
	[PR_SET_MM_START_DATA] = F_START_DATA,
	[PR_SET_MM_END_DATA] = F_END_DATA,
	[PR_SET_MM_START_STACK] = F_START_STACK,
	[PR_SET_MM_START_BRK] = F_START_BRK,
	[PR_SET_MM_BRK] = F_BRK,
	[PR_SET_MM_ARG_START] = F_ARG_START,
	[PR_SET_MM_ARG_END] = F_ARG_END,
	[PR_SET_MM_ENV_START] = F_ENV_START,
	[PR_SET_MM_ENV_END] = F_ENV_END,
};

/* The field @opt sets, or -1 (auxv, exe, unknown operations). */
static int field_of(int opt)
{
	if (opt < PR_SET_MM_START_CODE || opt > PR_SET_MM_ENV_END)
		return -1;
	return opt_field[opt];
}

/* End of the highest VMA (the vsyscall page is not one). */
static __u64 top_of_vmas(void)
{
	static char maps[1 << 16];
	unsigned long long lo, hi, top = 0;
	char *line, *save;
	ssize_t n;

	n = read_file("/proc/self/maps", maps, sizeof(maps) - 1);
	if (n <= 0)
		return 0;
	maps[n] = '\0';
	for (line = strtok_r(maps, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
		    !strstr(line, "[vsyscall]") && hi > top)
			top = hi;
	return top;
}

#define ASSERT_SNAP(snap) ASSERT_EQ(0, snap_take(snap))

/* What a case needs besides the mm: the limits and two files. */
struct legacy_env {
	struct mm_oracle lim;
	int exe_fd;		/* the running executable */
	int plain_fd;		/* a regular file without x bits */
	char plain[64];
};

FIXTURE(legacy) {
	struct mm_snap orig;
	struct legacy_env env;
};

FIXTURE_VARIANT(legacy) {
	const char *name;
	struct legacy_op pre;	/* must succeed under both rule sets */
	struct legacy_op op;
	int upstream;		/* expected result, today's rules */
	int v317;		/* expected result, 3.17 rules */
	int rlimit_slack;	/* > 0: RLIMIT_DATA = data + heap + slack,
				 * < 0: RLIMIT_DATA = 0
				 */
	bool drop_cap;		/* without CAP_SYS_RESOURCE */
};

FIXTURE_SETUP(legacy)
{
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };

	self->env.exe_fd = -1;
	self->env.plain_fd = -1;
	if (!has_effective_cap(CAP_SYS_RESOURCE)) {
		ASSERT_FALSE(ci_mode());
		SKIP(return, "needs CAP_SYS_RESOURCE (run as root)");
	}
	ASSERT_EQ(0, setrlimit(RLIMIT_DATA, &inf));
	oracle_get(&self->env.lim);
	if (!self->env.lim.mmap_min || !self->env.lim.task_size) {
		ASSERT_FALSE(ci_mode());
		SKIP(return, "no independent limit: %s", self->env.lim.why);
	}
	self->env.exe_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->env.exe_fd);
	strcpy(self->env.plain, "/tmp/mm_legacy.XXXXXX");
	self->env.plain_fd = mkstemp(self->env.plain);
	ASSERT_LE(0, self->env.plain_fd);
	ASSERT_EQ(0, fchmod(self->env.plain_fd, 0644));
	ASSERT_SNAP(&self->orig);
}

FIXTURE_TEARDOWN(legacy)
{
	if (self->env.plain_fd >= 0) {
		close(self->env.plain_fd);
		unlink(self->env.plain);
	}
}

/* The value @op passes (arg3), 0 if it cannot be made here. */
static unsigned long op_value(const struct legacy_env *env,
			      const struct legacy_op *op,
			      const struct mm_snap *now)
{
	__u64 top;

	switch (op->kind) {
	case V_FIELD:
		return now->val[op->ref] + op->delta;
	case V_MMAP_MIN:
		return env->lim.mmap_min + op->delta;
	case V_TASK_SIZE:
		return env->lim.task_size + op->delta;
	case V_ABOVE_VMAS:
		top = top_of_vmas();
		if (!top || top + 2 * 4096 > env->lim.task_size)
			return 0;
		return top + 4096;
	case V_AUXV:
		return (unsigned long)now->auxv;
	case V_EXE:
		return env->exe_fd;
	case V_PLAIN_FILE:
		return env->plain_fd;
	}
	return 0;
}

static int run_op(const struct legacy_op *op, unsigned long val,
		  const struct mm_snap *now)
{
	unsigned long arg4 = op->arg4;

	if (op->kind == V_AUXV)
		arg4 = now->auxv_bytes + op->delta;
	return sys_prctl5(PR_SET_MM, op->opt, val, arg4, 0);
}

static const char *result_name(int err)
{
	switch (err) {
	case 0:
		return "ok";
	case -EINVAL:
		return "EINVAL";
	case -EFAULT:
		return "EFAULT";
	case -EPERM:
		return "EPERM";
	case -EACCES:
		return "EACCES";
	case -EBUSY:
		return "EBUSY";
	case -EBADF:
		return "EBADF";
	}
	return "other";
}

TEST_F(legacy, op)
{
	int want = rules_317() ? variant->v317 : variant->upstream;
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY }, lim;
	int err, f = field_of(variant->op.opt), d;
	struct mm_snap before, after;
	unsigned long val;

	if (self->env.exe_fd < 0)
		return;		/* the setup skipped */
	if (variant->pre.opt) {
		val = op_value(&self->env, &variant->pre, &self->orig);
		err = run_op(&variant->pre, val, &self->orig);
		if (err)
			TH_LOG("preparing call: %s", result_name(err));
		ASSERT_EQ(0, err);
	}
	ASSERT_SNAP(&before);
	val = op_value(&self->env, &variant->op, &before);
	if (!val && variant->op.kind == V_ABOVE_VMAS) {
		ASSERT_FALSE(ci_mode());
		SKIP(return, "no room between the highest VMA and TASK_SIZE");
	}
	if (variant->drop_cap) {
		struct __user_cap_header_struct hdr = {
			.version = _LINUX_CAPABILITY_VERSION_3,
		};
		struct __user_cap_data_struct data[2];

		ASSERT_EQ(0, syscall(SYS_capget, &hdr, data));
		data[0].effective &= ~(1U << CAP_SYS_RESOURCE);
		ASSERT_EQ(0, syscall(SYS_capset, &hdr, data));
	}
	if (variant->rlimit_slack) {
		lim.rlim_max = RLIM_INFINITY;
		lim.rlim_cur = 0;
		if (variant->rlimit_slack > 0)
			lim.rlim_cur = before.val[F_BRK] -
				       before.val[F_START_BRK] +
				       before.val[F_END_DATA] -
				       before.val[F_START_DATA] +
				       variant->rlimit_slack;
		ASSERT_EQ(0, setrlimit(RLIMIT_DATA, &lim));
	}
	/* No allocation from here to the snapshot. */
	err = run_op(&variant->op, val, &before);
	ASSERT_EQ(0, setrlimit(RLIMIT_DATA, &inf));
	ASSERT_SNAP(&after);

	printf("# legacy-result %s %s\n", variant->name, result_name(err));
	fflush(stdout);
	if (err != want)
		TH_LOG("%s rules: want %s, got %s",
		       rules_317() ? "3.17" : "upstream", result_name(want),
		       result_name(err));
	ASSERT_EQ(want, err);

	/* Refused: nothing changed.  Accepted: exactly the one field. */
	if (!err && f >= 0)
		before.val[f] = val;
	d = snap_diff(&before, &after);
	if (d >= 0)
		TH_LOG("mm field %s is not as expected", snap_diff_name(d));
	ASSERT_EQ(-1, d);
}

#define OP(o, k, r, dl)	{ .opt = (o), .kind = (k), .ref = (r), .delta = (dl) }

FIXTURE_VARIANT_ADD(legacy, same_value_ok) {
	.name = "same_value_ok",
	.op = OP(PR_SET_MM_START_CODE, V_FIELD, F_START_CODE, 0),
	.upstream = 0, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, start_code_above_end_code) {
	.name = "start_code_above_end_code",
	.op = OP(PR_SET_MM_START_CODE, V_FIELD, F_END_CODE, 4096),
	.upstream = -EINVAL, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, end_code_at_start_code) {
	.name = "end_code_at_start_code",
	.op = OP(PR_SET_MM_END_CODE, V_FIELD, F_START_CODE, 0),
	.upstream = -EINVAL, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, end_code_moved) {
	.name = "end_code_moved",
	.op = OP(PR_SET_MM_END_CODE, V_FIELD, F_END_CODE, 8),
	.upstream = 0, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, start_data_above_end_data) {
	.name = "start_data_above_end_data",
	.op = OP(PR_SET_MM_START_DATA, V_FIELD, F_END_DATA, 4096),
	.upstream = -EINVAL, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, end_data_below_start_data) {
	.name = "end_data_below_start_data",
	.op = OP(PR_SET_MM_END_DATA, V_FIELD, F_START_DATA, -4096),
	.upstream = -EINVAL, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, start_brk_at_end_data) {
	.name = "start_brk_at_end_data",
	.op = OP(PR_SET_MM_START_BRK, V_FIELD, F_END_DATA, 0),
	.upstream = 0, .v317 = -EINVAL,
};

FIXTURE_VARIANT_ADD(legacy, brk_below_start_brk) {
	.name = "brk_below_start_brk",
	.op = OP(PR_SET_MM_BRK, V_FIELD, F_START_BRK, -8),
	.upstream = -EINVAL, .v317 = 0,
};

/* end_data moved up to brk first: brk is then not above end_data. */
FIXTURE_VARIANT_ADD(legacy, brk_at_end_data) {
	.name = "brk_at_end_data",
	.pre = OP(PR_SET_MM_END_DATA, V_FIELD, F_BRK, 0),
	.op = OP(PR_SET_MM_BRK, V_FIELD, F_BRK, 0),
	.upstream = 0, .v317 = -EINVAL,
};

FIXTURE_VARIANT_ADD(legacy, brk_moved) {
	.name = "brk_moved",
	.op = OP(PR_SET_MM_BRK, V_FIELD, F_BRK, 4096),
	.upstream = 0, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, brk_over_rlimit_data) {
	.name = "brk_over_rlimit_data",
	.op = OP(PR_SET_MM_BRK, V_FIELD, F_BRK, 8192),
	.rlimit_slack = 4096,
	.upstream = -EINVAL, .v317 = -EINVAL,
};

FIXTURE_VARIANT_ADD(legacy, brk_within_rlimit_data) {
	.name = "brk_within_rlimit_data",
	.op = OP(PR_SET_MM_BRK, V_FIELD, F_BRK, 4096),
	.rlimit_slack = 4096,
	.upstream = 0, .v317 = 0,
};

/* Today every operation checks the whole map against RLIMIT_DATA. */
FIXTURE_VARIANT_ADD(legacy, start_code_over_rlimit_data) {
	.name = "start_code_over_rlimit_data",
	.op = OP(PR_SET_MM_START_CODE, V_FIELD, F_START_CODE, 0),
	.rlimit_slack = -1,
	.upstream = -EINVAL, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, start_stack_moved) {
	.name = "start_stack_moved",
	.op = OP(PR_SET_MM_START_STACK, V_FIELD, F_START_STACK, 8),
	.upstream = 0, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, start_stack_above_vmas) {
	.name = "start_stack_above_vmas",
	.op = OP(PR_SET_MM_START_STACK, V_ABOVE_VMAS, 0, 0),
	.upstream = -EFAULT, .v317 = -EFAULT,
};

FIXTURE_VARIANT_ADD(legacy, arg_start_above_arg_end) {
	.name = "arg_start_above_arg_end",
	.op = OP(PR_SET_MM_ARG_START, V_FIELD, F_ARG_END, 8),
	.upstream = -EINVAL, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, arg_end_below_arg_start) {
	.name = "arg_end_below_arg_start",
	.op = OP(PR_SET_MM_ARG_END, V_FIELD, F_ARG_START, -8),
	.upstream = -EINVAL, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, arg_end_above_vmas) {
	.name = "arg_end_above_vmas",
	.op = OP(PR_SET_MM_ARG_END, V_ABOVE_VMAS, 0, 0),
	.upstream = -EFAULT, .v317 = -EFAULT,
};

FIXTURE_VARIANT_ADD(legacy, env_start_above_env_end) {
	.name = "env_start_above_env_end",
	.op = OP(PR_SET_MM_ENV_START, V_FIELD, F_ENV_END, 8),
	.upstream = -EINVAL, .v317 = 0,
};

/* Today the ordering check comes before the VMA check. */
FIXTURE_VARIANT_ADD(legacy, env_start_above_vmas) {
	.name = "env_start_above_vmas",
	.op = OP(PR_SET_MM_ENV_START, V_ABOVE_VMAS, 0, 0),
	.upstream = -EINVAL, .v317 = -EFAULT,
};

FIXTURE_VARIANT_ADD(legacy, env_end_moved) {
	.name = "env_end_moved",
	.op = OP(PR_SET_MM_ENV_END, V_FIELD, F_ENV_END, -8),
	.upstream = 0, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, below_mmap_min_addr) {
	.name = "below_mmap_min_addr",
	.op = OP(PR_SET_MM_START_CODE, V_MMAP_MIN, 0, -1),
	.upstream = -EINVAL, .v317 = -EINVAL,
};

FIXTURE_VARIANT_ADD(legacy, at_mmap_min_addr) {
	.name = "at_mmap_min_addr",
	.op = OP(PR_SET_MM_START_DATA, V_MMAP_MIN, 0, 0),
	.upstream = 0, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, at_task_size) {
	.name = "at_task_size",
	.op = OP(PR_SET_MM_END_CODE, V_TASK_SIZE, 0, 0),
	.upstream = -EINVAL, .v317 = -EINVAL,
};

FIXTURE_VARIANT_ADD(legacy, below_task_size) {
	.name = "below_task_size",
	.op = OP(PR_SET_MM_END_CODE, V_TASK_SIZE, 0, -1),
	.upstream = 0, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, unknown_operation) {
	.name = "unknown_operation",
	.op = OP(99, V_FIELD, F_START_CODE, 0),
	.upstream = -EINVAL, .v317 = -EINVAL,
};

FIXTURE_VARIANT_ADD(legacy, arg4_reserved) {
	.name = "arg4_reserved",
	.op = { .opt = PR_SET_MM_START_CODE, .kind = V_FIELD,
		.ref = F_START_CODE, .arg4 = 1 },
	.upstream = -EINVAL, .v317 = -EINVAL,
};

FIXTURE_VARIANT_ADD(legacy, auxv_same) {
	.name = "auxv_same",
	.op = OP(PR_SET_MM_AUXV, V_AUXV, 0, 0),
	.upstream = 0, .v317 = 0,
};

FIXTURE_VARIANT_ADD(legacy, auxv_too_long) {
	.name = "auxv_too_long",
	.op = OP(PR_SET_MM_AUXV, V_AUXV, 0, 4096),
	.upstream = -EINVAL, .v317 = -EINVAL,
};

FIXTURE_VARIANT_ADD(legacy, exe_file_still_mapped) {
	.name = "exe_file_still_mapped",
	.op = OP(PR_SET_MM_EXE_FILE, V_EXE, 0, 0),
	.upstream = -EBUSY, .v317 = -EBUSY,
};

FIXTURE_VARIANT_ADD(legacy, exe_file_not_executable) {
	.name = "exe_file_not_executable",
	.op = OP(PR_SET_MM_EXE_FILE, V_PLAIN_FILE, 0, 0),
	.upstream = -EACCES, .v317 = -EACCES,
};

FIXTURE_VARIANT_ADD(legacy, without_cap_sys_resource) {
	.name = "without_cap_sys_resource",
	.op = OP(PR_SET_MM_START_CODE, V_FIELD, F_START_CODE, 0),
	.drop_cap = true,
	.upstream = -EPERM, .v317 = -EPERM,
};

TEST_HARNESS_MAIN
