// SPDX-License-Identifier: GPL-2.0
/*
 * PR_SET_MM_MAP / PR_SET_MM_MAP_SIZE: the ABI checkpoint/restore tools
 * rely on.
 *
 * Every test runs in its own forked child (kselftest harness), so it may
 * change its own mm freely.  Each rejected map must leave the mm exactly as
 * it was: /proc/self/stat memory fields, brk, /proc/self/auxv and
 * /proc/self/exe are compared before and after.  Maps used for rejection
 * tests differ from the current mm in every field, so a partial update
 * cannot go unnoticed.
 *
 * The expected results are today's upstream rules (see
 * Documentation/prctl_mm_map.rst); they must hold unchanged on any kernel
 * that has PR_SET_MM_MAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>
#include <grp.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "mm_map_util.h"

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE	40
#endif

#define NOBODY	65534

/*
 * True, with the test marked skipped, when the kernel lacks the interface;
 * under CI=true that is a failure instead.
 */
static bool mm_map_missing(struct __test_metadata *_metadata)
{
	const char *ci = getenv("CI");
	unsigned int size = 0;
	int err = get_mm_map_size(&size);

	if (err == -EINVAL && !(ci && !strcmp(ci, "true")))
		SKIP(return true, "PR_SET_MM_MAP_SIZE: EINVAL, kernel lacks PR_SET_MM_MAP");
	ASSERT_EQ(0, err);
	return false;
}

#define ASSERT_SNAP(snap) ASSERT_EQ(0, snap_take(snap))

/* The mm must equal @want; name the first field that differs. */
static void assert_mm_is(struct __test_metadata *_metadata,
			 const struct mm_snap *want, int line)
{
	struct mm_snap now;
	int d;

	ASSERT_SNAP(&now);
	d = snap_diff(want, &now);
	if (d >= 0)
		TH_LOG("line %d: mm field %s changed", line, snap_diff_name(d));
	ASSERT_EQ(-1, d);
}

/* The mm must now show @map's addresses; auxv and exe as in @rest. */
static void assert_mm_set_to(struct __test_metadata *_metadata,
			     struct prctl_mm_map *map,
			     const struct mm_snap *rest, int line)
{
	struct mm_snap now;
	int d;

	ASSERT_SNAP(&now);
	d = map_matches_snap(map, &now);
	if (d >= 0)
		TH_LOG("line %d: %s: set %#llx, reads back %#llx", line,
		       mm_field_name[d],
		       (unsigned long long)*mm_field_ptr(map, d),
		       (unsigned long long)now.val[d]);
	ASSERT_EQ(-1, d);
	ASSERT_EQ(rest->auxv_bytes, now.auxv_bytes);
	ASSERT_EQ(0, memcmp(rest->auxv, now.auxv, now.auxv_bytes));
	ASSERT_STREQ(rest->exe, now.exe);
}

#define ASSERT_MM_IS(want) assert_mm_is(_metadata, want, __LINE__)
#define ASSERT_MM_SET_TO(map, rest) \
	assert_mm_set_to(_metadata, map, rest, __LINE__)

/* Fork; the child runs @body (ASSERTs only) and exits 0 if all held. */
#define IN_CHILD(body) do {						\
	int __status;							\
	pid_t __pid = fork();						\
									\
	ASSERT_LE(0, __pid);						\
	if (__pid == 0) {						\
		body;							\
		_exit(_metadata->passed ? 0 : 1);			\
	}								\
	ASSERT_EQ(__pid, waitpid(__pid, &__status, 0));			\
	if (!WIFEXITED(__status) || WEXITSTATUS(__status))		\
		TH_LOG("child failed, status %#x", __status);		\
	ASSERT_TRUE(WIFEXITED(__status) && !WEXITSTATUS(__status));	\
} while (0)

/* The current map shifted by 8 bytes: valid, and different everywhere. */
static void map_shifted(struct prctl_mm_map *m, struct mm_snap *s)
{
	int f;

	map_from_snap(m, s);
	for (f = 0; f < F_NR; f++)
		*mm_field_ptr(m, f) += 8;
	m->auxv = NULL;
	m->auxv_size = 0;
}

static int drop_caps(unsigned long long drop)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[0].effective &= ~(__u32)drop;
	data[1].effective &= ~(__u32)(drop >> 32);
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

static int become_nobody(void)
{
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		return -errno;
	/* /proc/self/{auxv,...} stay readable only for a dumpable task. */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ? -errno : 0;
}

/* Legacy single-field PR_SET_MM with the value the field already has. */
static int legacy_set(int opt, unsigned long val)
{
	return sys_prctl5(PR_SET_MM, opt, val, 0, 0);
}

static const int legacy_ops[] = {
	PR_SET_MM_START_CODE, PR_SET_MM_END_CODE, PR_SET_MM_START_DATA,
	PR_SET_MM_END_DATA, PR_SET_MM_START_STACK, PR_SET_MM_START_BRK,
	PR_SET_MM_BRK, PR_SET_MM_ARG_START, PR_SET_MM_ARG_END,
	PR_SET_MM_ENV_START, PR_SET_MM_ENV_END,
};

static const int legacy_field[] = {
	F_START_CODE, F_END_CODE, F_START_DATA, F_END_DATA, F_START_STACK,
	F_START_BRK, F_BRK, F_ARG_START, F_ARG_END, F_ENV_START, F_ENV_END,
};

/*
 * orig: the mm as the test found it; cur: a map equal to it; next: a
 * valid map that differs from orig in every field.
 */
#define MM_FIXTURE_DATA							\
	struct mm_snap orig;						\
	struct prctl_mm_map cur;					\
	struct prctl_mm_map next

/* Boundary maps are huge: take RLIMIT_DATA out of the picture. */
#define MM_FIXTURE_SETUP() do {						\
	struct rlimit __inf = { RLIM_INFINITY, RLIM_INFINITY };	\
									\
	if (setrlimit(RLIMIT_DATA, &__inf))				\
		TH_LOG("RLIMIT_DATA stays finite: %s", strerror(errno)); \
	ASSERT_SNAP(&self->orig);					\
	map_from_snap(&self->cur, &self->orig);				\
	map_shifted(&self->next, &self->orig);				\
} while (0)

/*
 * The 6.1 harness runs the test body even when the setup SKIPs, so each
 * body starts with mm_map_missing() instead, and the probes that need a
 * working PR_SET_MM_MAP run after it.
 */
FIXTURE(mm_map) {
	MM_FIXTURE_DATA;
};

FIXTURE_SETUP(mm_map)
{
	MM_FIXTURE_SETUP();
}

FIXTURE_TEARDOWN(mm_map)
{
}

TEST(map_size_is_sizeof)
{
	unsigned int size = 0;

	if (mm_map_missing(_metadata))
		return;
	ASSERT_EQ(0, get_mm_map_size(&size));
	ASSERT_EQ(sizeof(struct prctl_mm_map), size);
	ASSERT_EQ(104, size);	/* x86_64/arm64 layout, part of the ABI */
}

TEST(map_size_bad_pointer_efault)
{
	if (mm_map_missing(_metadata))
		return;
	ASSERT_EQ(-EFAULT, sys_prctl5(PR_SET_MM, PR_SET_MM_MAP_SIZE, 8, 0, 0));
}

/* Setting the map the task already has is accepted and changes nothing. */
TEST_F(mm_map, set_current_map_is_noop)
{
	if (mm_map_missing(_metadata))
		return;
	ASSERT_EQ(0, set_mm_map(&self->cur));
	ASSERT_MM_IS(&self->orig);
}

/* New values for every field and a changed auxv entry read back as set. */
TEST_F(mm_map, new_map_round_trips)
{
	struct prctl_mm_map m = self->next;
	struct mm_snap want = self->orig;
	unsigned long *v;
	int found = 0;

	if (mm_map_missing(_metadata))
		return;
	/* Change AT_FLAGS; nothing reads it after startup. */
	for (v = want.auxv; v[0] != AT_NULL; v += 2) {
		if (v[0] == AT_FLAGS) {
			v[1] ^= 0x5a5a;
			found = 1;
		}
	}
	ASSERT_TRUE(found);
	m.auxv = (__u64 *)want.auxv;
	m.auxv_size = want.auxv_bytes;

	ASSERT_EQ(0, set_mm_map(&m));
	ASSERT_MM_SET_TO(&m, &want);

	/* And back: the original map round-trips too. */
	ASSERT_EQ(0, set_mm_map(&self->cur));
	ASSERT_MM_IS(&self->orig);
}

/* A heap set below the data segment is accepted (not in v3.18). */
TEST_F(mm_map, brk_below_data_accepted)
{
	struct prctl_mm_map m = self->next;

	if (mm_map_missing(_metadata))
		return;
	m.start_brk = m.start_data - 0x2000;
	m.brk = m.start_data - 0x1000;
	ASSERT_EQ(0, set_mm_map(&m));
	ASSERT_MM_SET_TO(&m, &self->orig);
	ASSERT_EQ(0, set_mm_map(&self->cur));
	ASSERT_MM_IS(&self->orig);
}

/* Every address field, pushed to and past [mmap_min_addr, TASK_SIZE). */
FIXTURE(field) {
	MM_FIXTURE_DATA;
};

FIXTURE_VARIANT(field) {
	int field;
};

FIXTURE_SETUP(field)
{
	MM_FIXTURE_SETUP();
}

FIXTURE_TEARDOWN(field)
{
}

FIXTURE_VARIANT_ADD(field, start_code) {
	.field = F_START_CODE,
};

FIXTURE_VARIANT_ADD(field, end_code) {
	.field = F_END_CODE,
};

FIXTURE_VARIANT_ADD(field, start_data) {
	.field = F_START_DATA,
};

FIXTURE_VARIANT_ADD(field, end_data) {
	.field = F_END_DATA,
};

FIXTURE_VARIANT_ADD(field, start_brk) {
	.field = F_START_BRK,
};

FIXTURE_VARIANT_ADD(field, brk) {
	.field = F_BRK,
};

FIXTURE_VARIANT_ADD(field, start_stack) {
	.field = F_START_STACK,
};

FIXTURE_VARIANT_ADD(field, arg_start) {
	.field = F_ARG_START,
};

FIXTURE_VARIANT_ADD(field, arg_end) {
	.field = F_ARG_END,
};

FIXTURE_VARIANT_ADD(field, env_start) {
	.field = F_ENV_START,
};

FIXTURE_VARIANT_ADD(field, env_end) {
	.field = F_ENV_END,
};

/* Start and end of the pair @f belongs to, or -1 for start_stack. */
static void pair_of(int f, int *lo, int *hi)
{
	static const int start_of[F_NR] = {
		[F_START_CODE] = F_START_CODE,	[F_END_CODE] = F_START_CODE,
		[F_START_DATA] = F_START_DATA,	[F_END_DATA] = F_START_DATA,
		[F_START_BRK] = F_START_BRK,	[F_BRK] = F_START_BRK,
		[F_START_STACK] = -1,
		[F_ARG_START] = F_ARG_START,	[F_ARG_END] = F_ARG_START,
		[F_ENV_START] = F_ENV_START,	[F_ENV_END] = F_ENV_START,
	};

	*lo = start_of[f];
	*hi = *lo < 0 ? -1 : *lo + 1;
}

/*
 * Put @f at @val and move its partner so that the pair stays ordered
 * (start_code strictly below end_code): only the range rule can fail.
 */
static void set_field_ordered(struct prctl_mm_map *m, int f, __u64 val)
{
	int lo, hi;
	__u64 gap;

	pair_of(f, &lo, &hi);
	*mm_field_ptr(m, f) = val;
	if (lo < 0)
		return;
	gap = lo == F_START_CODE ? 1 : 0;
	if (f == lo && *mm_field_ptr(m, hi) < val + gap)
		*mm_field_ptr(m, hi) = val + gap;
	if (f == hi && *mm_field_ptr(m, lo) + gap > val)
		*mm_field_ptr(m, lo) = val - gap;
}

TEST_F(field, below_mmap_min_addr_einval)
{
	struct prctl_mm_map m = self->next;
	__u64 min;

	if (mm_map_missing(_metadata))
		return;
	min = probe_mmap_min(&self->cur);
	ASSERT_MM_IS(&self->orig);
	/* The LSM may raise the limit above the sysctl, never lower it. */
	ASSERT_GE(min, sysctl_mmap_min_addr());
	if (min < 2)
		SKIP(return, "mmap_min_addr is %llu: nothing below it",
		     (unsigned long long)min);
	set_field_ordered(&m, variant->field, min - 1);
	ASSERT_EQ(-EINVAL, set_mm_map(&m));
	ASSERT_MM_IS(&self->orig);

	m = self->next;
	set_field_ordered(&m, variant->field, 0);
	ASSERT_EQ(-EINVAL, set_mm_map(&m));
	ASSERT_MM_IS(&self->orig);
}

TEST_F(field, at_mmap_min_addr_accepted)
{
	struct prctl_mm_map m = self->next;
	int lo, hi;
	__u64 min;

	if (mm_map_missing(_metadata))
		return;
	min = probe_mmap_min(&self->cur);
	pair_of(variant->field, &lo, &hi);
	if (variant->field == hi && lo == F_START_CODE)
		set_field_ordered(&m, variant->field, min + 1);
	else
		set_field_ordered(&m, variant->field, min);
	ASSERT_EQ(0, set_mm_map(&m));
	ASSERT_MM_SET_TO(&m, &self->orig);
}

TEST_F(field, at_task_size_einval)
{
	struct prctl_mm_map m = self->next;
	__u64 task_size;

	if (mm_map_missing(_metadata))
		return;
	task_size = probe_task_size(&self->cur);
	ASSERT_MM_IS(&self->orig);
#ifdef __x86_64__
	/* TASK_SIZE_MAX with 4- or 5-level page tables. */
	if (task_size != 0x7ffffffff000ULL && task_size != 0xfffffffffff000ULL)
		TH_LOG("unexpected TASK_SIZE %#llx", (unsigned long long)task_size);
	ASSERT_TRUE(task_size == 0x7ffffffff000ULL ||
		    task_size == 0xfffffffffff000ULL);
#endif
	set_field_ordered(&m, variant->field, task_size);
	ASSERT_EQ(-EINVAL, set_mm_map(&m));
	ASSERT_MM_IS(&self->orig);

	m = self->next;
	set_field_ordered(&m, variant->field, ~0ULL - 1);
	ASSERT_EQ(-EINVAL, set_mm_map(&m));
	ASSERT_MM_IS(&self->orig);

	/* Bits above 32 must not be dropped on the way to the check. */
	m = self->next;
	set_field_ordered(&m, variant->field,
			  (1ULL << 63) | *mm_field_ptr(&m, variant->field));
	ASSERT_EQ(-EINVAL, set_mm_map(&m));
	ASSERT_MM_IS(&self->orig);
}

TEST_F(field, below_task_size_accepted)
{
	struct prctl_mm_map m = self->next;
	__u64 task_size;
	int lo, hi;

	if (mm_map_missing(_metadata))
		return;
	task_size = probe_task_size(&self->cur);
	pair_of(variant->field, &lo, &hi);
	if (variant->field == lo && lo == F_START_CODE)
		set_field_ordered(&m, variant->field, task_size - 2);
	else
		set_field_ordered(&m, variant->field, task_size - 1);
	ASSERT_EQ(0, set_mm_map(&m));
	ASSERT_MM_SET_TO(&m, &self->orig);
}

/*
 * Ordering rules: the end of one pair at start - 1, start, start + 1.  A
 * rejected map must leave the mm untouched.
 */
FIXTURE(order) {
	struct mm_snap orig;
};

FIXTURE_VARIANT(order) {
	int start;		/* first field of the pair */
	int delta;		/* end = start + delta */
	int expect;
};

FIXTURE_SETUP(order)
{
	ASSERT_SNAP(&self->orig);
}

FIXTURE_TEARDOWN(order)
{
}

FIXTURE_VARIANT_ADD(order, code_empty_einval) {
	.start = F_START_CODE,
	.delta = 0,
	.expect = -EINVAL,
};

FIXTURE_VARIANT_ADD(order, code_reversed_einval) {
	.start = F_START_CODE,
	.delta = -1,
	.expect = -EINVAL,
};

FIXTURE_VARIANT_ADD(order, code_one_byte_ok) {
	.start = F_START_CODE,
	.delta = 1,
	.expect = 0,
};

FIXTURE_VARIANT_ADD(order, data_reversed_einval) {
	.start = F_START_DATA,
	.delta = -1,
	.expect = -EINVAL,
};

FIXTURE_VARIANT_ADD(order, data_empty_ok) {
	.start = F_START_DATA,
	.delta = 0,
	.expect = 0,
};

FIXTURE_VARIANT_ADD(order, brk_reversed_einval) {
	.start = F_START_BRK,
	.delta = -1,
	.expect = -EINVAL,
};

FIXTURE_VARIANT_ADD(order, brk_empty_ok) {
	.start = F_START_BRK,
	.delta = 0,
	.expect = 0,
};

FIXTURE_VARIANT_ADD(order, arg_reversed_einval) {
	.start = F_ARG_START,
	.delta = -1,
	.expect = -EINVAL,
};

FIXTURE_VARIANT_ADD(order, arg_empty_ok) {
	.start = F_ARG_START,
	.delta = 0,
	.expect = 0,
};

FIXTURE_VARIANT_ADD(order, env_reversed_einval) {
	.start = F_ENV_START,
	.delta = -1,
	.expect = -EINVAL,
};

FIXTURE_VARIANT_ADD(order, env_empty_ok) {
	.start = F_ENV_START,
	.delta = 0,
	.expect = 0,
};

TEST_F(order, pair)
{
	struct prctl_mm_map m;

	if (mm_map_missing(_metadata))
		return;
	map_shifted(&m, &self->orig);
	*mm_field_ptr(&m, variant->start + 1) =
		*mm_field_ptr(&m, variant->start) + variant->delta;
	ASSERT_EQ(variant->expect, set_mm_map(&m));
	if (variant->expect)
		ASSERT_MM_IS(&self->orig);
	else
		ASSERT_MM_SET_TO(&m, &self->orig);
}

/* Heap plus data must fit into RLIMIT_DATA, like brk() itself. */
TEST(rlimit_data_enforced)
{
	struct rlimit saved, lim;
	struct prctl_mm_map m;
	struct mm_snap orig;
	__u64 need;
	int err_over, err_fit;

	if (mm_map_missing(_metadata))
		return;
	ASSERT_SNAP(&orig);
	map_shifted(&m, &orig);
	m.end_data = m.start_data + 0x10000;
	m.brk = m.start_brk + 0x30000;
	need = (m.brk - m.start_brk) + (m.end_data - m.start_data);
	ASSERT_EQ(0, getrlimit(RLIMIT_DATA, &saved));
	if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < need)
		SKIP(return, "RLIMIT_DATA hard limit %llu too low",
		     (unsigned long long)saved.rlim_max);

	/* No allocation may happen while the limit is this low. */
	lim.rlim_max = saved.rlim_max;
	lim.rlim_cur = need - 1;
	ASSERT_EQ(0, setrlimit(RLIMIT_DATA, &lim));
	err_over = set_mm_map(&m);
	lim.rlim_cur = need;
	setrlimit(RLIMIT_DATA, &lim);
	err_fit = set_mm_map(&m);
	ASSERT_EQ(0, setrlimit(RLIMIT_DATA, &saved));

	ASSERT_EQ(-EINVAL, err_over);
	ASSERT_EQ(0, err_fit);
	ASSERT_MM_SET_TO(&m, &orig);
}

/* auxv_size is bounded by sizeof(mm->saved_auxv) and needs a pointer. */
TEST_F(mm_map, auxv_size_bounded)
{
	static unsigned long vec[AUXV_WORDS_MAX];
	struct prctl_mm_map m = self->next;
	__u32 max;

	if (mm_map_missing(_metadata))
		return;
	max = probe_auxv_max(&self->cur, &self->orig);
	ASSERT_MM_IS(&self->orig);
	TH_LOG("largest accepted auxv_size: %u bytes", max);
	/* Whole AT_ pairs, room for what the kernel gave us at exec. */
	ASSERT_GE(max, self->orig.auxv_bytes);
	ASSERT_EQ(0, max % (2 * sizeof(unsigned long)));
	ASSERT_GT(sizeof(vec), max);

	memcpy(vec, self->orig.auxv, self->orig.auxv_bytes);
	m.auxv = (__u64 *)vec;
	m.auxv_size = max + sizeof(unsigned long);
	ASSERT_EQ(-EINVAL, set_mm_map(&m));
	ASSERT_MM_IS(&self->orig);
	m.auxv_size = ~0U;
	ASSERT_EQ(-EINVAL, set_mm_map(&m));
	ASSERT_MM_IS(&self->orig);

	m.auxv = NULL;
	m.auxv_size = self->orig.auxv_bytes;
	ASSERT_EQ(-EINVAL, set_mm_map(&m));
	ASSERT_MM_IS(&self->orig);

	/* A NULL vector of size 0 means: leave auxv alone. */
	m.auxv_size = 0;
	ASSERT_EQ(0, set_mm_map(&m));
	ASSERT_MM_SET_TO(&m, &self->orig);
}

/* The kernel terminates the vector even if the caller does not. */
TEST_F(mm_map, auxv_always_terminated)
{
	static unsigned long vec[AUXV_WORDS_MAX];
	struct prctl_mm_map m = self->cur;
	unsigned long back[AUXV_WORDS_MAX];
	ssize_t n;
	size_t i;
	__u32 max;

	if (mm_map_missing(_metadata))
		return;
	max = probe_auxv_max(&self->cur, &self->orig);
	for (i = 0; i < max / sizeof(unsigned long); i += 2) {
		vec[i] = AT_IGNORE;
		vec[i + 1] = i;
	}
	m.auxv = (__u64 *)vec;
	m.auxv_size = max;
	ASSERT_EQ(0, set_mm_map(&m));
	n = read_file("/proc/self/auxv", back, sizeof(back));
	/* All but the last pair survive, then AT_NULL. */
	ASSERT_EQ(max, n);
	ASSERT_EQ(0, memcmp(back, vec, max - 2 * sizeof(unsigned long)));
	ASSERT_EQ(AT_NULL, back[max / sizeof(unsigned long) - 2]);
	ASSERT_EQ(0, set_mm_map(&self->cur));
	ASSERT_MM_IS(&self->orig);
}

TEST_F(mm_map, wrong_size_einval)
{
	const unsigned long sizes[] = {
		0, 1, sizeof(struct prctl_mm_map) - 8,
		sizeof(struct prctl_mm_map) - 1, sizeof(struct prctl_mm_map) + 1,
		sizeof(struct prctl_mm_map) + 8, 4096, ~0UL,
	};
	size_t i;

	if (mm_map_missing(_metadata))
		return;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		long err = sys_prctl5(PR_SET_MM, PR_SET_MM_MAP,
				      (unsigned long)&self->next, sizes[i], 0);

		if (err != -EINVAL)
			TH_LOG("size %lu: %ld", sizes[i], err);
		ASSERT_EQ(-EINVAL, err);
		ASSERT_MM_IS(&self->orig);
	}
	/* arg5 is reserved. */
	ASSERT_EQ(-EINVAL, sys_prctl5(PR_SET_MM, PR_SET_MM_MAP,
				      (unsigned long)&self->next,
				      sizeof(self->next), 1));
	ASSERT_MM_IS(&self->orig);
}

TEST_F(mm_map, bad_pointers_efault)
{
	long page = sysconf(_SC_PAGESIZE);
	struct prctl_mm_map *straddle;
	char *area;

	if (mm_map_missing(_metadata))
		return;
	/* Map unreadable: NULL, unmapped, and cut off by an unmapped page. */
	ASSERT_EQ(-EFAULT, sys_prctl5(PR_SET_MM, PR_SET_MM_MAP, 0,
				      sizeof(self->next), 0));
	ASSERT_MM_IS(&self->orig);

	area = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	ASSERT_EQ(0, munmap(area + page, page));
	straddle = (struct prctl_mm_map *)(area + page - 16);
	memcpy(straddle, &self->next, 16);
	ASSERT_EQ(-EFAULT, set_mm_map(straddle));
	ASSERT_MM_IS(&self->orig);
	ASSERT_EQ(-EFAULT, set_mm_map((void *)(area + page)));
	ASSERT_MM_IS(&self->orig);

	/* A vector that cannot be read: the rest must not be applied. */
	self->next.auxv = (__u64 *)(area + page);
	self->next.auxv_size = 2 * sizeof(unsigned long);
	ASSERT_EQ(-EFAULT, set_mm_map(&self->next));
	ASSERT_MM_IS(&self->orig);
	self->next.auxv = (__u64 *)(area + page - 8);
	ASSERT_EQ(-EFAULT, set_mm_map(&self->next));
	ASSERT_MM_IS(&self->orig);
	munmap(area, page);
}

/*
 * exe_fd needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE in the caller's
 * user namespace.  Without them: EPERM, whatever the fd.
 */
TEST_F(mm_map, exe_fd_without_caps_eperm)
{
	int exe;

	if (mm_map_missing(_metadata))
		return;
	exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, exe);
	if (geteuid() != 0)
		SKIP(return, "needs root to drop exactly the two capabilities");
	IN_CHILD({
		ASSERT_EQ(0, drop_caps(1ULL << CAP_SYS_ADMIN |
				       1ULL << CAP_CHECKPOINT_RESTORE));
		self->next.exe_fd = exe;
		ASSERT_EQ(-EPERM, set_mm_map(&self->next));
		ASSERT_MM_IS(&self->orig);
		self->next.exe_fd = 1000;	/* not even open */
		ASSERT_EQ(-EPERM, set_mm_map(&self->next));
		ASSERT_MM_IS(&self->orig);
	});
	/* Either capability alone is enough to get past the check. */
	IN_CHILD({
		ASSERT_EQ(0, drop_caps(1ULL << CAP_SYS_ADMIN));
		self->next.exe_fd = 1000;
		ASSERT_EQ(-EBADF, set_mm_map(&self->next));
		ASSERT_MM_IS(&self->orig);
	});
	IN_CHILD({
		ASSERT_EQ(0, drop_caps(1ULL << CAP_CHECKPOINT_RESTORE));
		self->next.exe_fd = 1000;
		ASSERT_EQ(-EBADF, set_mm_map(&self->next));
		ASSERT_MM_IS(&self->orig);
	});
	IN_CHILD({
		ASSERT_EQ(0, become_nobody());
		self->next.exe_fd = exe;
		ASSERT_EQ(-EPERM, set_mm_map(&self->next));
		ASSERT_MM_IS(&self->orig);
	});
	close(exe);
}

/*
 * A privileged caller reaches the PR_SET_MM_EXE_FILE checks; each
 * failure there still leaves the rest of the map unapplied.
 */
TEST_F(mm_map, exe_fd_checks_leave_mm_unchanged)
{
	int exe, pipefd[2];

	if (mm_map_missing(_metadata))
		return;
	exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, exe);
	ASSERT_EQ(0, pipe(pipefd));
	if (geteuid() != 0)
		SKIP(return, "needs CAP_SYS_ADMIN");

	self->next.exe_fd = 1000;
	ASSERT_EQ(-EBADF, set_mm_map(&self->next));
	ASSERT_MM_IS(&self->orig);

	self->next.exe_fd = pipefd[0];	/* not a regular file */
	ASSERT_EQ(-EACCES, set_mm_map(&self->next));
	ASSERT_MM_IS(&self->orig);

	/* The old executable is still mapped: the link may not move. */
	self->next.exe_fd = exe;
	ASSERT_EQ(-EBUSY, set_mm_map(&self->next));
	ASSERT_MM_IS(&self->orig);

	/* exe_fd = -1 leaves the link alone. */
	self->next.exe_fd = -1;
	ASSERT_EQ(0, set_mm_map(&self->next));
	ASSERT_MM_SET_TO(&self->next, &self->orig);
	close(exe);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* No capability at all is needed for the map itself. */
TEST_F(mm_map, unprivileged_user_sets_map)
{
	if (mm_map_missing(_metadata))
		return;
	if (geteuid() != 0)
		SKIP(return, "needs root to switch to uid %d", NOBODY);
	IN_CHILD({
		struct mm_snap orig;
		struct prctl_mm_map m;
		size_t i;

		ASSERT_EQ(0, become_nobody());
		ASSERT_SNAP(&orig);
		map_shifted(&m, &orig);
		ASSERT_EQ(0, set_mm_map(&m));
		ASSERT_MM_SET_TO(&m, &orig);
		/* ... while every legacy single-field call is refused. */
		for (i = 0; i < ARRAY_SIZE(legacy_ops); i++) {
			__u64 val = *mm_field_ptr(&m, legacy_field[i]);

			ASSERT_EQ(-EPERM, legacy_set(legacy_ops[i], val));
		}
		ASSERT_MM_SET_TO(&m, &orig);
	});
}

/*
 * The point of PR_SET_MM_MAP: a restorer inside a new user namespace,
 * started by an unprivileged user, can restore the whole map while the
 * legacy interface (CAP_SYS_RESOURCE in the initial namespace) refuses.
 * exe_fd is allowed past the capability check: CAP_SYS_ADMIN in the own
 * namespace counts, so the next error comes from the file checks.
 */
TEST_F(mm_map, user_namespace_restorer)
{
	int status;
	pid_t pid;

	if (mm_map_missing(_metadata))
		return;
	if (geteuid() != 0)
		SKIP(return, "needs root to switch to uid %d", NOBODY);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct mm_snap orig;
		struct prctl_mm_map m;
		int exe;
		size_t i;

		exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, exe);
		ASSERT_EQ(0, become_nobody());
		if (unshare(CLONE_NEWUSER)) {
			TH_LOG("unshare(CLONE_NEWUSER): %s", strerror(errno));
			_exit(KSFT_SKIP);
		}
		ASSERT_SNAP(&orig);
		map_shifted(&m, &orig);

		for (i = 0; i < ARRAY_SIZE(legacy_ops); i++) {
			__u64 val = orig.val[legacy_field[i]];

			ASSERT_EQ(-EPERM, legacy_set(legacy_ops[i], val));
		}
		ASSERT_EQ(-EPERM, legacy_set(PR_SET_MM_EXE_FILE, exe));
		ASSERT_MM_IS(&orig);

		m.exe_fd = exe;
		ASSERT_EQ(-EBUSY, set_mm_map(&m));
		ASSERT_MM_IS(&orig);

		m.exe_fd = -1;
		m.auxv = (__u64 *)orig.auxv;
		m.auxv_size = orig.auxv_bytes;
		ASSERT_EQ(0, set_mm_map(&m));
		ASSERT_MM_SET_TO(&m, &orig);
		_exit(_metadata->passed ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (WIFEXITED(status) && WEXITSTATUS(status) == KSFT_SKIP) {
		const char *ci = getenv("CI");

		ASSERT_FALSE(ci && !strcmp(ci, "true"));
		SKIP(return, "unprivileged user namespaces unavailable");
	}
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_HARNESS_MAIN
