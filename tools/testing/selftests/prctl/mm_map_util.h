/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by set_mm_map_test.c and set_mm_map_fuzz.c: take a
 * snapshot of everything PR_SET_MM_MAP can change (the /proc/self/stat
 * memory fields, brk, /proc/self/auxv and /proc/self/exe), compare two
 * snapshots, and probe the limits the kernel enforces.
 *
 * No stdio and no malloc between a snapshot and the call under test:
 * either could move brk and make an unchanged mm look changed.
 */
#ifndef MM_MAP_UTIL_H
#define MM_MAP_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/prctl.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* Old uapi headers (or a PR_SET_MM_MAP-less tree) lack these. */
#ifndef PR_SET_MM_MAP
#define PR_SET_MM_MAP		14
#define PR_SET_MM_MAP_SIZE	15

struct prctl_mm_map {
	__u64	start_code;
	__u64	end_code;
	__u64	start_data;
	__u64	end_data;
	__u64	start_brk;
	__u64	brk;
	__u64	start_stack;
	__u64	arg_start;
	__u64	arg_end;
	__u64	env_start;
	__u64	env_end;
	__u64	*auxv;
	__u32	auxv_size;
	__u32	exe_fd;
};
#endif

/* The eleven address fields, in struct order. */
enum mm_field {
	F_START_CODE, F_END_CODE, F_START_DATA, F_END_DATA, F_START_BRK,
	F_BRK, F_START_STACK, F_ARG_START, F_ARG_END, F_ENV_START, F_ENV_END,
	F_NR,
};

static const char * const mm_field_name[F_NR] = {
	"start_code", "end_code", "start_data", "end_data", "start_brk",
	"brk", "start_stack", "arg_start", "arg_end", "env_start", "env_end",
};

/* /proc/self/stat field number of each, 0 for brk (not in stat). */
static const int mm_field_stat[F_NR] = {
	26, 27, 45, 46, 47, 0, 28, 48, 49, 50, 51,
};

static inline __u64 *mm_field_ptr(struct prctl_mm_map *m, int f)
{
	return &m->start_code + f;
}

#define AUXV_WORDS_MAX	128	/* far above any AT_VECTOR_SIZE */

struct mm_snap {
	__u64 val[F_NR];
	unsigned long auxv[AUXV_WORDS_MAX];
	size_t auxv_bytes;
	char exe[PATH_MAX];
};

static inline long sys_prctl5(long opt, unsigned long a2, unsigned long a3,
			      unsigned long a4, unsigned long a5)
{
	long ret = syscall(SYS_prctl, opt, a2, a3, a4, a5);

	return ret < 0 ? -errno : ret;
}

/* 0 or -errno. */
static inline int set_mm_map(const struct prctl_mm_map *map)
{
	return sys_prctl5(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)map,
			  sizeof(*map), 0);
}

static inline int get_mm_map_size(unsigned int *size)
{
	return sys_prctl5(PR_SET_MM, PR_SET_MM_MAP_SIZE, (unsigned long)size,
			  0, 0);
}

static inline ssize_t read_file(const char *path, void *buf, size_t size)
{
	size_t done = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done < size) {
		n = read(fd, (char *)buf + done, size - done);
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		done += n;
	}
	close(fd);
	return done;
}

static inline int parse_stat(struct mm_snap *s)
{
	char buf[4096], *p, *end;
	ssize_t n;
	int field, f;

	n = read_file("/proc/self/stat", buf, sizeof(buf) - 1);
	if (n <= 0)
		return n < 0 ? n : -EIO;
	buf[n] = '\0';
	/* comm may hold spaces and ')': field 3 starts after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return -EIO;
	p += 2;
	for (field = 3; *p && *p != '\n'; field++) {
		for (f = 0; f < F_NR; f++)
			if (mm_field_stat[f] == field)
				s->val[f] = strtoull(p, NULL, 10);
		end = strchr(p, ' ');
		if (!end)
			break;
		p = end + 1;
	}
	return field >= 51 ? 0 : -EIO;
}

static inline unsigned long current_brk(void)
{
	/* brk(0) is always below start_brk: it only reports mm->brk. */
	return syscall(SYS_brk, 0UL);
}

static inline int snap_take(struct mm_snap *s)
{
	ssize_t n;
	int err;

	memset(s, 0, sizeof(*s));
	err = parse_stat(s);
	if (err)
		return err;
	s->val[F_BRK] = current_brk();
	n = read_file("/proc/self/auxv", s->auxv, sizeof(s->auxv));
	if (n < 0)
		return n;
	s->auxv_bytes = n;
	n = readlink("/proc/self/exe", s->exe, sizeof(s->exe) - 1);
	if (n < 0)
		return -errno;
	return 0;
}

/* Index of the first differing field, F_NR for auxv, F_NR + 1 for exe. */
static inline int snap_diff(const struct mm_snap *a, const struct mm_snap *b)
{
	int f;

	for (f = 0; f < F_NR; f++)
		if (a->val[f] != b->val[f])
			return f;
	if (a->auxv_bytes != b->auxv_bytes ||
	    memcmp(a->auxv, b->auxv, a->auxv_bytes))
		return F_NR;
	if (strcmp(a->exe, b->exe))
		return F_NR + 1;
	return -1;
}

static inline const char *snap_diff_name(int d)
{
	if (d < 0)
		return "none";
	if (d < F_NR)
		return mm_field_name[d];
	return d == F_NR ? "auxv" : "exe";
}

/* A map that sets the mm to the snapshot (auxv included, exe untouched). */
static inline void map_from_snap(struct prctl_mm_map *m, struct mm_snap *s)
{
	int f;

	memset(m, 0, sizeof(*m));
	for (f = 0; f < F_NR; f++)
		*mm_field_ptr(m, f) = s->val[f];
	m->auxv = (__u64 *)s->auxv;
	m->auxv_size = s->auxv_bytes;
	m->exe_fd = (__u32)-1;
}

/* Does the map's address part equal what the snapshot shows? */
static inline int map_matches_snap(struct prctl_mm_map *m,
				   const struct mm_snap *s)
{
	int f;

	for (f = 0; f < F_NR; f++)
		if (*mm_field_ptr(m, f) != s->val[f])
			return f;
	return -1;
}

static inline unsigned long sysctl_mmap_min_addr(void)
{
	char buf[32];
	ssize_t n = read_file("/proc/sys/vm/mmap_min_addr", buf,
			      sizeof(buf) - 1);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoul(buf, NULL, 10);
}

/*
 * Smallest (lo_ok = 0) or largest (lo_ok = 1) value of start_stack in
 * (lo, hi) the kernel accepts, given that @lo is rejected and @hi
 * accepted (lo_ok = 0) or the reverse.  start_stack has no ordering
 * partner, so only the address-range rule applies.  Restores @base.
 */
static inline __u64 probe_edge(const struct prctl_mm_map *base, __u64 lo,
			       __u64 hi, int lo_ok)
{
	struct prctl_mm_map m = *base;

	m.auxv = NULL;
	m.auxv_size = 0;
	while (hi - lo > 1) {
		__u64 mid = lo + (hi - lo) / 2;
		int ok;

		m.start_stack = mid;
		ok = set_mm_map(&m) == 0;
		if (ok == lo_ok)
			lo = mid;
		else
			hi = mid;
	}
	m.start_stack = base->start_stack;
	set_mm_map(&m);
	return lo_ok ? lo : hi;
}

/* The kernel's effective mmap_min_addr (the LSM may raise the sysctl). */
static inline __u64 probe_mmap_min(const struct prctl_mm_map *base)
{
	return probe_edge(base, 0, base->start_stack, 0);
}

/* TASK_SIZE: one above the largest accepted address. */
static inline __u64 probe_task_size(const struct prctl_mm_map *base)
{
	return probe_edge(base, base->start_stack, ~0ULL, 1) + 1;
}

/*
 * Largest accepted auxv_size (sizeof(mm->saved_auxv)), probed with the
 * snapshot's own vector padded with AT_NULL, so every accepted probe
 * leaves /proc/self/auxv as it was.  Restores @base.
 */
static inline __u32 probe_auxv_max(const struct prctl_mm_map *base,
				   const struct mm_snap *s)
{
	static unsigned long vec[AUXV_WORDS_MAX];
	struct prctl_mm_map m = *base;
	__u32 lo = s->auxv_bytes, hi = sizeof(vec);

	memset(vec, 0, sizeof(vec));
	memcpy(vec, s->auxv, s->auxv_bytes);
	m.auxv = (__u64 *)vec;
	m.auxv_size = lo;
	if (set_mm_map(&m))
		return 0;
	while (hi - lo > 1) {
		__u32 mid = lo + (hi - lo) / 2;

		m.auxv_size = mid;
		if (set_mm_map(&m) == 0)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

#endif /* MM_MAP_UTIL_H */
