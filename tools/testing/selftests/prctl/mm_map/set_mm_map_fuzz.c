// SPDX-License-Identifier: GPL-2.0
/*
 * Bounded, seeded fuzzer for PR_SET_MM_MAP.
 *
 *   set_mm_map_fuzz [-n COUNT] [-s SEED] [-v]
 *
 * Throws random and boundary maps (addresses, ordering, auxv size and
 * pointer, exe_fd, struct size and pointer) at PR_SET_MM_MAP while a
 * second thread keeps reading the /proc files that use the map (stat,
 * auxv, cmdline, environ, maps).  The iterations are split in three
 * parts, each in its own child: as the caller (root in make check), as
 * uid nobody inside a new user namespace (capabilities there, none in the
 * initial namespace: no CAP_SYS_RESOURCE, exe_fd allowed past the
 * capability check), and as uid nobody without one (exe_fd: EPERM).  The
 * two unprivileged parts run with a finite RLIMIT_DATA.  For every call it
 * checks:
 *
 *  - the errno equals what a model of the documented rules predicts
 *    (Documentation/prctl_mm_map.rst), with the limits taken from the
 *    independent oracles of mm_map_util.h, not from the kernel under test;
 *  - a rejected map left the mm unchanged (stat fields, brk, auxv, exe);
 *  - an accepted map reads back exactly, auxv included.
 *
 * Each iteration is generated from (SEED, index) alone, so a failure is
 * reproduced by re-running with the printed seed.  The kernel taint flags
 * must not change during the run; the VM harness (--dmesg-check) catches
 * oopses and warnings in the log.  Output is TAP, exit 0 only if all held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "mm_map_util.h"

#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE	40
#endif

#define MAX_REPORTS	20	/* failures printed in full, per child */
#define NOBODY		65534

enum part { PART_CALLER, PART_USERNS, PART_NOBODY, PART_NR };

static const char * const part_name[PART_NR] = {
	"caller", "nobody in a user namespace", "nobody",
};

struct env {
	__u64 mmap_min;		/* mmap_min_addr (oracle) */
	__u64 task_size;	/* TASK_SIZE (oracle) */
	__u32 auxv_max;		/* sizeof(mm->saved_auxv) (oracle) */
	__u64 rlim_data;	/* RLIMIT_DATA soft limit */
	bool privileged;	/* may change exe_fd */
	int exe_fd;		/* /proc/self/exe: EBUSY, still mapped */
	int pipe_fd;		/* not a regular file: EACCES */
	char *bad;		/* an unmapped page */
	char *edge;		/* last bytes before that page */
};

/* Shared with the parent: counters of one child. */
struct stats {
	unsigned long calls, accepted, rejected;
	unsigned long verdict_bad, unchanged_bad, readback_bad, restore_bad;
	unsigned long setup_bad;
	bool legacy_refused;		/* PR_SET_MM_START_CODE gave EPERM */
	bool privileged;		/* had the exe_fd capability */
	__u64 mmap_min, task_size;	/* what the probes found */
	__u32 auxv_max;
};

static struct mm_oracle oracle;

static struct mm_snap orig_snap;
static struct prctl_mm_map orig_map;		/* base of every call, no auxv */
static struct prctl_mm_map restore_map;		/* orig_map plus its auxv */
static unsigned long auxv_buf[AUXV_WORDS_MAX];
static struct stats *st;
static bool verbose;
static int stop_reader;		/* __atomic: set by main, read by reader */

/* write(2) from a static buffer: no stdio or malloc inside the loop. */
static void report(const char *fmt, ...)
{
	static char buf[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	if (n > 0 && write(STDOUT_FILENO, buf, n) < 0)
		_exit(3);
}

/* splitmix64: tiny, good enough, and reproducible everywhere. */
static __u64 rnd_state;

static __u64 rnd(void)
{
	__u64 z = (rnd_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static __u64 rnd_below(__u64 n)
{
	return n ? rnd() % n : 0;
}

static __u64 boundary_value(const struct env *e, const struct prctl_mm_map *m)
{
	const __u64 vals[] = {
		0, 1, e->mmap_min - 1, e->mmap_min, e->mmap_min + 1,
		e->task_size - 2, e->task_size - 1, e->task_size,
		e->task_size + 1, 1ULL << 31, 1ULL << 32, (1ULL << 32) - 1,
		1ULL << 47, (1ULL << 47) - 4096, 1ULL << 56, 1ULL << 63,
		~0ULL, ~0ULL - 1, (__u64)INT32_MAX, 4096,
	};
	int f = rnd_below(F_NR);

	switch (rnd_below(5)) {
	case 0:
		return vals[rnd_below(ARRAY_SIZE(vals))];
	case 1:	/* near the current value of some field */
		return *mm_field_ptr((struct prctl_mm_map *)m, f) +
			(__s64)rnd_below(64) - 32;
	case 2:	/* anywhere valid */
		return e->mmap_min + rnd_below(e->task_size - e->mmap_min);
	case 3:	/* a random 64-bit pattern */
		return rnd();
	default: /* a random bit */
		return 1ULL << rnd_below(64);
	}
}

struct call {
	struct prctl_mm_map map;
	const void *map_ptr;	/* what is passed as arg3 */
	unsigned long size;	/* arg4 */
	unsigned long arg5;
	const void *auxv_src;	/* bytes behind map.auxv, NULL if unreadable */
};

/* A few fields replaced by boundary or random values. */
static void mutate_fields(struct prctl_mm_map *m, const struct env *e)
{
	int i, n = 1 + rnd_below(4);

	for (i = 0; i < n; i++) {
		int f = rnd_below(F_NR);

		*mm_field_ptr(m, f) = boundary_value(e, m);
	}
	/* Often make it plausible again, to get past the range check. */
	if (rnd_below(3) == 0) {
		for (i = 0; i < F_NR; i++) {
			__u64 *v = mm_field_ptr(m, i);

			if (*v < e->mmap_min || *v >= e->task_size)
				*v = e->mmap_min + rnd_below(e->task_size - e->mmap_min);
		}
	}
}

/* A valid-looking map: random places, small ordered pairs. */
static void ordered_random(struct prctl_mm_map *m, const struct env *e)
{
	__u64 span = e->task_size - e->mmap_min - (1ULL << 32);
	int f;

	for (f = 0; f < F_NR; f++) {
		__u64 *v = mm_field_ptr(m, f);

		if (f == F_START_STACK || f == F_START_CODE ||
		    f == F_START_DATA || f == F_START_BRK ||
		    f == F_ARG_START || f == F_ENV_START)
			*v = e->mmap_min + rnd_below(span);
		else	/* the end of the pair started just before */
			*v = *(v - 1) + (f == F_END_CODE) +
			     rnd_below(1ULL << rnd_below(32));
	}
}

/* One pair around its ordering boundary: end = start - 1, start, start + 1. */
static void pair_edge(struct prctl_mm_map *m)
{
	static const int starts[] = {
		F_START_CODE, F_START_DATA, F_START_BRK, F_ARG_START,
		F_ENV_START,
	};
	int f = starts[rnd_below(ARRAY_SIZE(starts))];

	*mm_field_ptr(m, f + 1) = *mm_field_ptr(m, f) + rnd_below(3) - 1;
}

/* One field at mmap_min_addr - 1, mmap_min_addr, TASK_SIZE - 1, TASK_SIZE. */
static void range_edge(struct prctl_mm_map *m, const struct env *e)
{
	const __u64 vals[] = {
		e->mmap_min - 1, e->mmap_min, e->task_size - 1, e->task_size,
	};
	int f = rnd_below(F_NR);

	*mm_field_ptr(m, f) = vals[rnd_below(ARRAY_SIZE(vals))];
}

/* Heap plus data at RLIMIT_DATA - 1, RLIMIT_DATA, RLIMIT_DATA + 1. */
static void rlimit_edge(struct prctl_mm_map *m, const struct env *e)
{
	__u64 data = rnd_below(e->rlim_data);
	__u64 heap = e->rlim_data - data + rnd_below(3) - 1;

	m->end_data = m->start_data + data;
	m->brk = m->start_brk + heap;
}

static void gen_call(struct call *c, const struct env *e)
{
	memset(c, 0, sizeof(*c));
	c->map = orig_map;
	c->map.auxv = NULL;
	c->map.auxv_size = 0;
	c->map_ptr = &c->map;
	c->size = sizeof(c->map);

	switch (rnd_below(4)) {
	case 0:
		mutate_fields(&c->map, e);
		break;
	case 1:
		ordered_random(&c->map, e);
		pair_edge(&c->map);
		break;
	case 2:
		ordered_random(&c->map, e);
		range_edge(&c->map, e);
		break;
	default:
		ordered_random(&c->map, e);
		if (e->rlim_data != RLIM_INFINITY)
			rlimit_edge(&c->map, e);
		else
			pair_edge(&c->map);
		break;
	}

	switch (rnd_below(8)) {
	case 0:	/* the real vector, some length */
	case 1: {
		static const int lens[] = { -2, -1, 0, 1, 2, 8, 16 };

		c->map.auxv = (__u64 *)auxv_buf;
		c->map.auxv_size = e->auxv_max + lens[rnd_below(ARRAY_SIZE(lens))] *
				   (rnd_below(2) ? 1 : 8);
		if (rnd_below(2))
			c->map.auxv_size = rnd_below(e->auxv_max + 1);
		c->auxv_src = auxv_buf;
		break;
	}
	case 2:
		c->map.auxv = NULL;
		c->map.auxv_size = rnd_below(2) ? 16 : rnd();
		break;
	case 3:	/* unreadable, or readable only in part */
		/* edge has 8 readable bytes: ask for more. */
		c->map.auxv = (__u64 *)(rnd_below(2) ? e->bad : e->edge);
		c->map.auxv_size = 9 + rnd_below(e->auxv_max);
		break;
	case 4:
		c->map.auxv = (__u64 *)auxv_buf;
		c->map.auxv_size = rnd();
		c->auxv_src = auxv_buf;
		break;
	default:
		break;
	}

	switch (rnd_below(12)) {
	case 0:
		c->map.exe_fd = e->exe_fd;
		break;
	case 1:
		c->map.exe_fd = e->pipe_fd;
		break;
	case 2:
		c->map.exe_fd = 1000 + rnd_below(1000);	/* not open */
		break;
	case 3:
		c->map.exe_fd = rnd();
		break;
	default:
		c->map.exe_fd = (__u32)-1;
	}

	switch (rnd_below(40)) {
	case 0:
		c->size = rnd_below(2 * sizeof(c->map));
		break;
	case 1:
		c->size = rnd();
		break;
	case 2:
		c->map_ptr = e->bad;
		break;
	case 3:	/* the struct runs into the unmapped page */
		c->map_ptr = e->bad - 1 - rnd_below(sizeof(c->map) - 1);
		break;
	case 4:
		c->arg5 = 1 + rnd_below(100);
		break;
	default:
		break;
	}
}

/* What the documented rules say the call returns. */
static int model(const struct call *c, const struct env *e)
{
	const struct prctl_mm_map *m = &c->map;
	__u64 data, heap;
	int f;

	if (c->arg5 || c->size != sizeof(*m))
		return -EINVAL;
	if (c->map_ptr != m)
		return -EFAULT;
	for (f = 0; f < F_NR; f++) {
		__u64 v = *mm_field_ptr((struct prctl_mm_map *)m, f);

		if (v < e->mmap_min || v >= e->task_size)
			return -EINVAL;
	}
	if (m->start_code >= m->end_code || m->start_data > m->end_data ||
	    m->start_brk > m->brk || m->arg_start > m->arg_end ||
	    m->env_start > m->env_end)
		return -EINVAL;
	heap = m->brk - m->start_brk;
	data = m->end_data - m->start_data;
	if (e->rlim_data != RLIM_INFINITY && heap + data > e->rlim_data)
		return -EINVAL;
	if (m->auxv_size) {
		if (!m->auxv || m->auxv_size > e->auxv_max)
			return -EINVAL;
		if (!c->auxv_src)
			return -EFAULT;
	}
	if (m->exe_fd != (__u32)-1) {
		if (!e->privileged)
			return -EPERM;
		if ((int)m->exe_fd == e->exe_fd)
			return -EBUSY;
		if ((int)m->exe_fd == e->pipe_fd)
			return -EACCES;
		return -EBADF;
	}
	return 0;
}

/* /proc/self/auxv after the kernel copied @size bytes of @src. */
static void expected_auxv(struct mm_snap *want, const void *src, __u32 size,
			  const struct env *e)
{
	unsigned long vec[AUXV_WORDS_MAX] = { 0 };
	size_t words = e->auxv_max / sizeof(long), n;

	memcpy(vec, src, size);
	vec[words - 2] = AT_NULL;
	vec[words - 1] = AT_NULL;
	for (n = 0; n < words; n += 2)
		if (vec[n] == AT_NULL)
			break;
	want->auxv_bytes = (n + 2) * sizeof(long);
	memcpy(want->auxv, vec, want->auxv_bytes);
}

static void dump_call(unsigned long seed, unsigned long i,
		      const struct call *c)
{
	int f;

	report("#   seed %lu iteration %lu: size %lu arg5 %lu ptr %s\n", seed, i,
	       c->size, c->arg5, c->map_ptr == &c->map ? "ok" : "bad");
	for (f = 0; f < F_NR; f++)
		report("#     %-11s %#llx\n", mm_field_name[f],
		       (unsigned long long)*mm_field_ptr((struct prctl_mm_map *)&c->map, f));
	report("#     auxv %p size %u exe_fd %d\n", (void *)c->map.auxv,
	       c->map.auxv_size, (int)c->map.exe_fd);
}

static int fail_once(unsigned long *counter)
{
	(*counter)++;
	return st->verdict_bad + st->unchanged_bad + st->readback_bad +
	       st->restore_bad <= MAX_REPORTS;
}

static void run_one(unsigned long seed, unsigned long i, const struct env *e)
{
	struct mm_snap now, want;
	struct call c;
	int want_err, err, d;

	rnd_state = seed * 0x100000001b3ULL + i;
	gen_call(&c, e);
	want_err = model(&c, e);
	err = sys_prctl5(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)c.map_ptr,
			 c.size, c.arg5);
	st->calls++;
	if (snap_take(&now)) {
		st->setup_bad++;
		return;
	}
	if (err != want_err && fail_once(&st->verdict_bad)) {
		report("# verdict: got %d (%s), model says %d (%s)\n", err,
		       strerror(-err), want_err, strerror(-want_err));
		dump_call(seed, i, &c);
	}
	if (err) {
		st->rejected++;
		d = snap_diff(&orig_snap, &now);
		if (d >= 0 && fail_once(&st->unchanged_bad)) {
			report("# rejected map (%d) changed %s\n", err,
			       snap_diff_name(d));
			dump_call(seed, i, &c);
		}
		if (d >= 0)	/* get back to a known state */
			set_mm_map(&restore_map);
		return;
	}

	st->accepted++;
	want = orig_snap;
	for (d = 0; d < F_NR; d++)
		want.val[d] = *mm_field_ptr(&c.map, d);
	if (c.map.auxv_size)
		expected_auxv(&want, c.auxv_src, c.map.auxv_size, e);
	d = snap_diff(&want, &now);
	if (d >= 0 && fail_once(&st->readback_bad)) {
		report("# accepted map reads back wrong: %s\n", snap_diff_name(d));
		dump_call(seed, i, &c);
	}
	if (set_mm_map(&restore_map) || snap_take(&now) ||
	    snap_diff(&orig_snap, &now) >= 0) {
		if (fail_once(&st->restore_bad))
			report("# could not restore the original map after iteration %lu\n", i);
	}
}

static void *reader(void *arg)
{
	static const char * const files[] = {
		"/proc/self/stat", "/proc/self/statm", "/proc/self/auxv",
		"/proc/self/cmdline", "/proc/self/environ", "/proc/self/maps",
	};
	static char buf[1 << 16];
	unsigned long n = 0;

	while (!__atomic_load_n(&stop_reader, __ATOMIC_RELAXED))
		read_file(files[n++ % ARRAY_SIZE(files)], buf, sizeof(buf));
	return NULL;
}

static bool has_cr_caps(void)
{
	return has_effective_cap(CAP_SYS_ADMIN) ||
	       has_effective_cap(CAP_CHECKPOINT_RESTORE);
}

/* 0, or the exit status of a child that could not set itself up. */
static int enter_part(enum part part)
{
	if (part == PART_CALLER)
		return 0;
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)))
		return 2;
	/* /proc/self/{auxv,...} stay readable only for a dumpable task. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return 2;
	if (part == PART_USERNS && unshare(CLONE_NEWUSER))
		return 4;	/* no unprivileged user namespaces */
	return 0;
}

/* One child: fuzz iterations [first, last) in one @part. */
static void fuzz_child(unsigned long seed, unsigned long first,
		       unsigned long last, enum part part)
{
	long page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	pthread_t thr;
	int pipefd[2], rc;
	struct env e;
	unsigned long i;
	char *area;

	memset(&e, 0, sizeof(e));
	e.exe_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (e.exe_fd < 0 || pipe(pipefd))
		_exit(2);
	rc = enter_part(part);
	if (rc)
		_exit(rc);
	e.privileged = has_cr_caps();
	st->privileged = e.privileged;
	e.pipe_fd = pipefd[0];
	area = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || munmap(area + page, page))
		_exit(2);
	e.bad = area + page;
	e.edge = area + page - 8;
	if (part != PART_CALLER) {
		rl.rlim_cur = 1ULL << 30;
		rl.rlim_max = RLIM_INFINITY;
		setrlimit(RLIMIT_DATA, &rl);
	}
	getrlimit(RLIMIT_DATA, &rl);
	e.rlim_data = rl.rlim_cur;

	if (snap_take(&orig_snap))
		_exit(2);
	/* No CAP_SYS_RESOURCE in the initial namespace: legacy refused. */
	st->legacy_refused = sys_prctl5(PR_SET_MM, PR_SET_MM_START_CODE,
					orig_snap.val[F_START_CODE], 0,
					0) == -EPERM;
	map_from_snap(&orig_map, &orig_snap);
	orig_map.auxv = NULL;
	orig_map.auxv_size = 0;
	e.mmap_min = oracle.mmap_min;
	e.task_size = oracle.task_size;
	e.auxv_max = oracle.auxv_bytes;
	st->mmap_min = probe_mmap_min(&orig_map);
	st->task_size = probe_task_size(&orig_map);
	st->auxv_max = probe_auxv_max(&orig_map, &orig_snap);
	if (!e.auxv_max || e.auxv_max > sizeof(auxv_buf))
		_exit(2);
	memcpy(auxv_buf, orig_snap.auxv, orig_snap.auxv_bytes);
	/* The probes may have padded auxv: take the reference now. */
	if (snap_take(&orig_snap))
		_exit(2);
	restore_map = orig_map;
	restore_map.auxv = (__u64 *)orig_snap.auxv;
	restore_map.auxv_size = orig_snap.auxv_bytes;
	if (verbose)
		report("# %s: rlimit_data %#llx; probed mmap_min %#llx task_size %#llx auxv %u\n",
		       part_name[part], (unsigned long long)e.rlim_data,
		       (unsigned long long)st->mmap_min,
		       (unsigned long long)st->task_size, st->auxv_max);

	if (pthread_create(&thr, NULL, reader, NULL))
		_exit(2);
	for (i = first; i < last; i++)
		run_one(seed, i, &e);
	__atomic_store_n(&stop_reader, 1, __ATOMIC_RELAXED);
	pthread_join(thr, NULL);
	_exit(0);
}

static int run_child(unsigned long seed, unsigned long first,
		     unsigned long last, enum part part)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		fuzz_child(seed, first, last, part);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static unsigned long read_taint(void)
{
	char buf[32];
	ssize_t n = read_file("/proc/sys/kernel/tainted", buf, sizeof(buf) - 1);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoul(buf, NULL, 10);
}

static int tap(int num, bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", num);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	return ok ? 0 : 1;
}

static bool ci_mode(void)
{
	const char *ci = getenv("CI");

	return ci && !strcmp(ci, "true");
}

int main(int argc, char **argv)
{
	unsigned long count = 2000, seed = 1, taint0, taint1, sum[8] = { 0 };
	int opt, p, rc[PART_NR], fails = 0;
	bool started = true, limits = true, parts = true;
	unsigned int size = 0;
	struct stats *s;

	while ((opt = getopt(argc, argv, "n:s:v")) != -1) {
		switch (opt) {
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-n COUNT] [-s SEED] [-v]\n",
				argv[0]);
			return 2;
		}
	}

	printf("TAP version 13\n");
	if (get_mm_map_size(&size)) {
		printf("1..0 # SKIP kernel lacks PR_SET_MM_MAP (PR_SET_MM_MAP_SIZE: EINVAL)\n");
		return 4;
	}
	oracle_get(&oracle);
	if (!oracle.mmap_min || !oracle.task_size || !oracle.auxv_bytes) {
		printf("1..0 # SKIP no independent limit: %s\n", oracle.why);
		return ci_mode() ? 1 : 4;
	}
	printf("1..8\n");
	printf("# seed %lu, %lu maps (-s %lu -n %lu reproduces)\n", seed, count,
	       seed, count);
	printf("# oracle: mmap_min %#llx, TASK_SIZE %#llx, auxv %u bytes\n",
	       (unsigned long long)oracle.mmap_min,
	       (unsigned long long)oracle.task_size, oracle.auxv_bytes);

	s = mmap(NULL, PART_NR * sizeof(*s), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED)
		return 2;
	taint0 = read_taint();
	for (p = 0; p < PART_NR; p++) {
		st = &s[p];
		rc[p] = run_child(seed, count * p / PART_NR,
				  count * (p + 1) / PART_NR, p);
		started = started && rc[p] == 0 && !s[p].setup_bad;
		sum[0] += s[p].calls;
		sum[1] += s[p].accepted;
		sum[2] += s[p].rejected;
		sum[3] += s[p].verdict_bad;
		sum[4] += s[p].unchanged_bad;
		sum[5] += s[p].readback_bad;
		sum[6] += s[p].restore_bad;
		limits = limits && s[p].mmap_min == oracle.mmap_min &&
			 s[p].task_size == oracle.task_size &&
			 s[p].auxv_max == oracle.auxv_bytes;
		printf("# %s: exited %d, %lu calls, exe_fd capability %s, legacy PR_SET_MM %s\n",
		       part_name[p], rc[p], s[p].calls,
		       s[p].privileged ? "yes" : "no",
		       s[p].legacy_refused ? "refused" : "allowed");
	}
	taint1 = read_taint();
	/* Both unprivileged parts lack CAP_SYS_RESOURCE; only one has exe_fd. */
	parts = s[PART_USERNS].legacy_refused && s[PART_NOBODY].legacy_refused &&
		s[PART_USERNS].privileged && !s[PART_NOBODY].privileged;

	fails += tap(1, started && sum[0] == count,
		     "%lu calls completed in %d parts", sum[0], PART_NR);
	fails += tap(2, !sum[3],
		     "errno matched the model: %lu accepted, %lu rejected, %lu mismatches",
		     sum[1], sum[2], sum[3]);
	fails += tap(3, !sum[4],
		     "every rejected map left the mm unchanged (%lu violations)",
		     sum[4]);
	fails += tap(4, !sum[5] && sum[1] > 0,
		     "every accepted map read back as set (%lu violations)",
		     sum[5]);
	fails += tap(5, !sum[6],
		     "original map restored after each accepted one");
	fails += tap(6, taint0 == taint1,
		     "kernel taint unchanged (%#lx -> %#lx)", taint0, taint1);
	fails += tap(7, limits,
		     "probed limits equal the oracle in every part");
	fails += tap(8, parts,
		     "unprivileged parts: no CAP_SYS_RESOURCE; exe_fd capability only in the user namespace");
	return fails ? 1 : 0;
}
