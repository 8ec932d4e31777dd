// SPDX-License-Identifier: GPL-2.0
/*
 * PR_SET_MM_MAP / PR_SET_MM_MAP_SIZE: the ABI checkpoint/restore tools
 * rely on.
 *
 * Every test runs in its own forked child (kselftest harness), so it may
 * change its own mm freely.  Each rejected map must leave the mm exactly as
 * it was: /proc/self/stat memory fields, brk, /proc/self/auxv and
 * /proc/self/exe are compared before and after.  Maps used for rejection
 * tests differ from the current mm in every field (and carry a changed
 * auxv where the check under test comes after the auxv copy), so a partial
 * update cannot go unnoticed.
 *
 * The limits are not taken from the kernel under test: mmap_min_addr
 * comes from the sysctl and the kernel's config, TASK_SIZE from the paging
 * mode, the auxv size from the kernel version or PR_SET_MM_AUXV (see
 * mm_map_util.h), and the boundaries are asserted exactly.  The expected
 * results are today's upstream rules (Documentation/prctl_mm_map.rst); they
 * must hold unchanged on any kernel that has PR_SET_MM_MAP.
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
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "mm_map_util.h"

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE	40
#endif

#define NOBODY	65534

static bool ci_mode(void)
{
	const char *ci = getenv("CI");

	return ci && !strcmp(ci, "true");
}

/*
 * True, with the test marked skipped, when the kernel lacks the interface;
 * under CI=true that is a failure instead.
 */
static bool mm_map_missing(struct __test_metadata *_metadata)
{
	unsigned int size = 0;
	int err = get_mm_map_size(&size);

	if (err == -EINVAL && !ci_mode())
		SKIP(return true, "PR_SET_MM_MAP_SIZE: EINVAL, kernel lacks PR_SET_MM_MAP");
	ASSERT_EQ(0, err);
	return false;
}

/*
 * The independent limits, or a skip (a failure under CI=true) saying what
 * is missing.  Call before taking snapshots: the legacy auxv probe runs
 * PR_SET_MM_AUXV (with the unchanged vector).
 */
static bool oracle_missing(struct __test_metadata *_metadata,
			   struct mm_oracle *o)
{
	oracle_get(o);
	if (o->mmap_min && o->task_size && o->auxv_bytes)
		return false;
	if (ci_mode())
		TH_LOG("CI=true and no oracle: %s", o->why);
	ASSERT_FALSE(ci_mode());
	SKIP(return true, "no independent limit: %s", o->why);
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

/*
 * @want: @orig with AT_FLAGS changed (nothing reads it after startup);
 * @m gets it as its vector, so accepting @m changes auxv too.
 */
static bool map_with_new_auxv(struct prctl_mm_map *m,
			      const struct mm_snap *orig, struct mm_snap *want)
{
	unsigned long *v;
	bool found = false;

	*want = *orig;
	for (v = want->auxv; v[0] != AT_NULL; v += 2) {
		if (v[0] == AT_FLAGS) {
			v[1] ^= 0x5a5a;
			found = true;
		}
	}
	m->auxv = (__u64 *)want->auxv;
	m->auxv_size = want->auxv_bytes;
	return found;
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

/* Copy the running executable to @path with @mode: 0 or -errno. */
static int copy_exe(const char *path, mode_t mode)
{
	char buf[65536];
	int in, out, err = 0;
	ssize_t n;

	in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			err = -EIO;
			break;
		}
	if (n < 0)
		err = -errno;
	if (fchmod(out, mode) && !err)
		err = -errno;
	close(in);
	close(out);
	return err;
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
 * valid map that differs from orig in every field; lim: the oracle.
 */
#define MM_FIXTURE_DATA							\
	struct mm_snap orig;						\
	struct prctl_mm_map cur;					\
	struct prctl_mm_map next;					\
	struct mm_oracle lim

/* Boundary maps are huge: take RLIMIT_DATA out of the picture. */
#define MM_FIXTURE_SETUP() do {						\
	struct rlimit __inf = { RLIM_INFINITY, RLIM_INFINITY };	\
									\
	if (setrlimit(RLIMIT_DATA, &__inf))				\
		TH_LOG("RLIMIT_DATA stays finite: %s", strerror(errno)); \
	oracle_get(&self->lim);						\
	ASSERT_SNAP(&self->orig);					\
	map_from_snap(&self->cur, &self->orig);				\
	map_shifted(&self->next, &self->orig);				\
} while (0)

/*
 * The 6.1 harness runs the test body even when the setup SKIPs, so each
 * body starts with mm_map_missing() (and oracle_missing() where the limits
 * matter) instead.
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
#if __SIZEOF_POINTER__ == 8 && __SIZEOF_LONG__ == 8
	/*
	 * The 64-bit layout.  A 32-bit build has a 4-byte auxv pointer and
	 * (on i386) 4-byte alignment for __u64: its struct is 100 bytes,
	 * which a 64-bit kernel refuses with EINVAL (no compat handling).
	 */
	ASSERT_EQ(104, size);
#endif
}

TEST(map_size_bad_pointer_efault)
{
	struct mm_snap orig;

	if (mm_map_missing(_metadata))
		return;
	ASSERT_SNAP(&orig);
	ASSERT_EQ(-EFAULT, sys_prctl5(PR_SET_MM, PR_SET_MM_MAP_SIZE, 8, 0, 0));
	ASSERT_MM_IS(&orig);
}

/*
 * What PR_SET_MM_MAP enforces equals the independent limits: the smallest
 * accepted address, one above the largest, the largest auxv_size.
 */
TEST_F(mm_map, limits_match_oracle)
{
	__u64 min, task_size;
	__u32 auxv;

	if (mm_map_missing(_metadata) || oracle_missing(_metadata, &self->lim))
		return;
	TH_LOG("oracle: mmap_min %#llx (sysctl %lu), TASK_SIZE %#llx",
	       (unsigned long long)self->lim.mmap_min, sysctl_mmap_min_addr(),
	       (unsigned long long)self->lim.task_size);
	TH_LOG("oracle: auxv %u bytes (version table %u, PR_SET_MM_AUXV %u)",
	       self->lim.auxv_bytes, self->lim.auxv_by_version,
	       self->lim.auxv_by_legacy);
	min = probe_mmap_min(&self->cur);
	task_size = probe_task_size(&self->cur);
	auxv = probe_auxv_max(&self->cur, &self->orig);
	ASSERT_MM_IS(&self->orig);
	ASSERT_EQ(self->lim.mmap_min, min);
	ASSERT_EQ(self->lim.task_size, task_size);
	ASSERT_EQ(self->lim.auxv_bytes, auxv);
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
	struct mm_snap want;

	if (mm_map_missing(_metadata))
		return;
	ASSERT_TRUE(map_with_new_auxv(&m, &self->orig, &want));
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
	__u64 min = self->lim.mmap_min;

	if (mm_map_missing(_metadata) || oracle_missing(_metadata, &self->lim))
		return;
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
	__u64 min = self->lim.mmap_min;
	int lo, hi;

	if (mm_map_missing(_metadata) || oracle_missing(_metadata, &self->lim))
		return;
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
	__u64 task_size = self->lim.task_size;

	if (mm_map_missing(_metadata) || oracle_missing(_metadata, &self->lim))
		return;
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
	__u64 task_size = self->lim.task_size;
	int lo, hi;

	if (mm_map_missing(_metadata) || oracle_missing(_metadata, &self->lim))
		return;
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
	struct mm_snap orig, after_over;
	struct rlimit saved, lim;
	struct prctl_mm_map m;
	int err_over, err_fit, snap_err;
	__u64 need;

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
	snap_err = snap_take(&after_over);
	lim.rlim_cur = need;
	setrlimit(RLIMIT_DATA, &lim);
	err_fit = set_mm_map(&m);
	ASSERT_EQ(0, setrlimit(RLIMIT_DATA, &saved));

	ASSERT_EQ(-EINVAL, err_over);
	ASSERT_EQ(0, snap_err);
	if (snap_diff(&orig, &after_over) >= 0)
		TH_LOG("rejected map changed %s",
		       snap_diff_name(snap_diff(&orig, &after_over)));
	ASSERT_EQ(-1, snap_diff(&orig, &after_over));
	ASSERT_EQ(0, err_fit);
	ASSERT_MM_SET_TO(&m, &orig);
}

/* auxv_size is bounded by sizeof(mm->saved_auxv) and needs a pointer. */
TEST_F(mm_map, auxv_size_bounded)
{
	static unsigned long vec[AUXV_WORDS_MAX];
	struct prctl_mm_map m = self->next;
	__u32 max = self->lim.auxv_bytes;
	struct mm_snap want;

	if (mm_map_missing(_metadata) || oracle_missing(_metadata, &self->lim))
		return;
	ASSERT_GE(max, self->orig.auxv_bytes);
	ASSERT_GT(sizeof(vec), max);

	/* The full size is accepted; vec is orig's vector padded with 0. */
	memcpy(vec, self->orig.auxv, self->orig.auxv_bytes);
	m.auxv = (__u64 *)vec;
	m.auxv_size = max;
	ASSERT_EQ(0, set_mm_map(&m));
	ASSERT_MM_SET_TO(&m, &self->orig);
	ASSERT_EQ(0, set_mm_map(&self->cur));
	ASSERT_MM_IS(&self->orig);

	/* One byte more is not, with a vector that would change auxv. */
	m = self->next;
	ASSERT_TRUE(map_with_new_auxv(&m, &self->orig, &want));
	memcpy(vec, want.auxv, want.auxv_bytes);
	m.auxv = (__u64 *)vec;
	m.auxv_size = max + 1;
	ASSERT_EQ(-EINVAL, set_mm_map(&m));
	ASSERT_MM_IS(&self->orig);
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
	__u32 max = self->lim.auxv_bytes;
	ssize_t n;
	size_t i;

	if (mm_map_missing(_metadata) || oracle_missing(_metadata, &self->lim))
		return;
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

/*
 * A short vector without terminator: the kernel copies it into a zeroed
 * buffer, so exactly the given pairs and AT_NULL read back.  A full vector
 * of non-zero pairs is set first: without the zero fill, its words would
 * still be in the kernel's buffer (same stack frame) and show up here.
 */
TEST_F(mm_map, auxv_zero_filled)
{
	static unsigned long full[AUXV_WORDS_MAX];
	const unsigned long two[] = { AT_FLAGS, 0x5a5a, AT_IGNORE, 0xa5a5 };
	unsigned long back[AUXV_WORDS_MAX];
	struct prctl_mm_map m = self->cur;
	__u32 max = self->lim.auxv_bytes;
	ssize_t n;
	size_t i;

	if (mm_map_missing(_metadata) || oracle_missing(_metadata, &self->lim))
		return;
	for (i = 0; i < max / sizeof(unsigned long); i += 2) {
		full[i] = AT_IGNORE;
		full[i + 1] = 0xfeed0000 + i;
	}
	m.auxv = (__u64 *)full;
	m.auxv_size = max;
	ASSERT_EQ(0, set_mm_map(&m));

	m.auxv = (__u64 *)two;
	m.auxv_size = sizeof(two);
	ASSERT_EQ(0, set_mm_map(&m));
	n = read_file("/proc/self/auxv", back, sizeof(back));
	if (n != sizeof(two) + 2 * sizeof(unsigned long))
		TH_LOG("auxv reads back %zd bytes, word 4 %#lx", n, back[4]);
	ASSERT_EQ(sizeof(two) + 2 * sizeof(unsigned long), n);
	ASSERT_EQ(0, memcmp(back, two, sizeof(two)));
	ASSERT_EQ(AT_NULL, back[4]);
	ASSERT_EQ(0, back[5]);

	ASSERT_EQ(0, set_mm_map(&self->cur));
	ASSERT_MM_IS(&self->orig);
}

TEST_F(mm_map, wrong_size_einval)
{
	const unsigned long sizes[] = {
		0, 1, sizeof(struct prctl_mm_map) - 8,
		sizeof(struct prctl_mm_map) - 1, sizeof(struct prctl_mm_map) + 1,
		sizeof(struct prctl_mm_map) + 8, 4096, ~0UL,
		100,	/* the i386 layout: a 32-bit caller on a 64-bit kernel */
	};
	size_t i;

	if (mm_map_missing(_metadata))
		return;
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		long err;

		if (sizes[i] == sizeof(struct prctl_mm_map))
			continue;	/* 100 on a 32-bit build */
		err = sys_prctl5(PR_SET_MM, PR_SET_MM_MAP,
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
	struct mm_snap want;
	int exe;

	if (mm_map_missing(_metadata))
		return;
	exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, exe);
	if (geteuid() != 0)
		SKIP(return, "needs root to drop exactly the two capabilities");
	ASSERT_TRUE(map_with_new_auxv(&self->next, &self->orig, &want));
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
 * exe_fd file checks, each with a map that would change every field and
 * auxv: EBADF, EACCES (not a regular file, not executable, on a noexec
 * mount, open for writing), EBUSY (the old executable still mapped).
 * Each refusal leaves the mm unchanged.  Once the old executable is no
 * longer mapped, an executable copy is accepted and /proc/self/exe follows.
 */
FIXTURE(exe) {
	MM_FIXTURE_DATA;
	struct mm_snap want;	/* orig with next's auxv */
	char dir[64];
	char exec_copy[128];	/* 0755 */
	char plain_copy[128];	/* 0644 */
};

FIXTURE_SETUP(exe)
{
	MM_FIXTURE_SETUP();
	ASSERT_TRUE(map_with_new_auxv(&self->next, &self->orig, &self->want));
	strcpy(self->dir, "/tmp/mm_map_exe.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	ASSERT_EQ(0, chmod(self->dir, 0755));
	snprintf(self->exec_copy, sizeof(self->exec_copy), "%s/exec",
		 self->dir);
	snprintf(self->plain_copy, sizeof(self->plain_copy), "%s/plain",
		 self->dir);
	ASSERT_EQ(0, copy_exe(self->exec_copy, 0755));
	ASSERT_EQ(0, copy_exe(self->plain_copy, 0644));
}

FIXTURE_TEARDOWN(exe)
{
	unlink(self->exec_copy);
	unlink(self->plain_copy);
	rmdir(self->dir);
}

/* The map was refused with @err and nothing changed. */
#define ASSERT_EXE_REFUSED(err, fd) do {				\
	self->next.exe_fd = (fd);					\
	ASSERT_EQ(err, set_mm_map(&self->next));			\
	ASSERT_MM_IS(&self->orig);					\
} while (0)

TEST_F(exe, file_checks)
{
	int exe, plain, pipefd[2];

	if (mm_map_missing(_metadata))
		return;
	if (geteuid() != 0)
		SKIP(return, "needs CAP_SYS_ADMIN for the exe_fd checks");
	exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, exe);
	plain = open(self->plain_copy, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, plain);
	ASSERT_EQ(0, pipe(pipefd));

	ASSERT_EXE_REFUSED(-EBADF, 1000);
	ASSERT_EXE_REFUSED(-EACCES, pipefd[0]);	/* not a regular file */
	ASSERT_EXE_REFUSED(-EACCES, plain);	/* no x bit, even for root */
	/* The old executable is still mapped: the link may not move. */
	ASSERT_EXE_REFUSED(-EBUSY, exe);

	/* exe_fd = -1 leaves the link alone. */
	self->next.exe_fd = -1;
	ASSERT_EQ(0, set_mm_map(&self->next));
	ASSERT_MM_SET_TO(&self->next, &self->want);
	close(exe);
	close(plain);
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST_F(exe, noexec_mount_eacces)
{
	char mnt[128];

	if (mm_map_missing(_metadata))
		return;
	if (geteuid() != 0)
		SKIP(return, "needs root to mount a noexec tmpfs");
	snprintf(mnt, sizeof(mnt), "%s/mnt", self->dir);
	ASSERT_EQ(0, mkdir(mnt, 0755));
	/* The mount lives in the child's own mount namespace only. */
	IN_CHILD({
		char path[160];
		int fd;

		ASSERT_EQ(0, unshare(CLONE_NEWNS));
		ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE,
				   NULL));
		ASSERT_EQ(0, mount("mm_map", mnt, "tmpfs", MS_NOEXEC, NULL));
		snprintf(path, sizeof(path), "%s/exec", mnt);
		ASSERT_EQ(0, copy_exe(path, 0755));
		fd = open(path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, fd);
		ASSERT_EXE_REFUSED(-EACCES, fd);
	});
	ASSERT_EQ(0, rmdir(mnt));
}

/*
 * With the old executable unmapped, the remaining checks are reached: a
 * file somebody has open for writing is refused (EACCES), an executable
 * copy is accepted and becomes /proc/self/exe along with the new map.
 */
TEST_F(exe, replaced_once_unmapped)
{
	if (mm_map_missing(_metadata))
		return;
	if (geteuid() != 0)
		SKIP(return, "needs CAP_SYS_ADMIN for exe_fd");
	IN_CHILD({
		struct mm_snap want = self->want;
		int writer;
		int ro;

		ASSERT_EQ(0, unmap_exe());
		ASSERT_MM_IS(&self->orig);

		writer = open(self->exec_copy, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, writer);
		ro = open(self->exec_copy, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, ro);
		ASSERT_EXE_REFUSED(-EACCES, ro);
		close(writer);

		self->next.exe_fd = ro;
		ASSERT_EQ(0, set_mm_map(&self->next));
		strcpy(want.exe, self->exec_copy);
		ASSERT_MM_SET_TO(&self->next, &want);
	});
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
		struct mm_snap want;
		struct prctl_mm_map m;
		size_t i;

		ASSERT_EQ(0, become_nobody());
		ASSERT_FALSE(has_effective_cap(CAP_SYS_RESOURCE));
		ASSERT_SNAP(&orig);
		map_shifted(&m, &orig);
		ASSERT_TRUE(map_with_new_auxv(&m, &orig, &want));
		ASSERT_EQ(0, set_mm_map(&m));
		ASSERT_MM_SET_TO(&m, &want);
		/* ... while every legacy single-field call is refused. */
		for (i = 0; i < ARRAY_SIZE(legacy_ops); i++) {
			__u64 val = *mm_field_ptr(&m, legacy_field[i]);

			ASSERT_EQ(-EPERM, legacy_set(legacy_ops[i], val));
		}
		ASSERT_MM_SET_TO(&m, &want);
	});
}

/*
 * The point of PR_SET_MM_MAP: a restorer inside a new user namespace,
 * started by an unprivileged user, can restore the whole map while the
 * legacy interface (CAP_SYS_RESOURCE in the initial namespace) refuses.
 * exe_fd gets past the capability check too (CAP_SYS_ADMIN in the own
 * namespace counts): only the file checks stand in the way, and an
 * executable file is accepted once the old one is unmapped.
 */
TEST_F(exe, user_namespace_restorer)
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
		struct mm_snap orig, want;
		struct prctl_mm_map m;
		int exe, copy;
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
		ASSERT_TRUE(map_with_new_auxv(&m, &orig, &want));

		for (i = 0; i < ARRAY_SIZE(legacy_ops); i++) {
			__u64 val = orig.val[legacy_field[i]];

			ASSERT_EQ(-EPERM, legacy_set(legacy_ops[i], val));
		}
		ASSERT_EQ(-EPERM, legacy_set(PR_SET_MM_EXE_FILE, exe));
		ASSERT_MM_IS(&orig);

		m.exe_fd = exe;
		ASSERT_EQ(-EBUSY, set_mm_map(&m));
		ASSERT_MM_IS(&orig);

		ASSERT_EQ(0, unmap_exe());
		copy = open(self->exec_copy, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, copy);
		m.exe_fd = copy;
		ASSERT_EQ(0, set_mm_map(&m));
		strcpy(want.exe, self->exec_copy);
		ASSERT_MM_SET_TO(&m, &want);
		_exit(_metadata->passed ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (WIFEXITED(status) && WEXITSTATUS(status) == KSFT_SKIP) {
		ASSERT_FALSE(ci_mode());
		SKIP(return, "unprivileged user namespaces unavailable");
	}
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_HARNESS_MAIN
