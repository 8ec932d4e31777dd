/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the PR_SET_MM_MAP tests: a snapshot of everything
 * PR_SET_MM can change (the /proc/self/stat memory fields, brk,
 * /proc/self/auxv and /proc/self/exe) and its comparison, the limits the
 * kernel must enforce as independent oracles, and probes of the limits it
 * does enforce.
 *
 * No stdio and no malloc between a snapshot and the call under test:
 * either could move brk and make an unchanged mm look changed.
 */
#ifndef MM_MAP_UTIL_H
#define MM_MAP_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/capability.h>
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

static inline bool has_effective_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1U << (cap % 32));
}

/*
 * The kernel's build configuration, read once: $MM_MAP_KCONFIG,
 * /boot/config-$(uname -r) (the VM harness puts it there) or
 * /proc/config.gz.
 */
static char kconfig_buf[1 << 20];
static ssize_t kconfig_len = -1;

static inline ssize_t kconfig_load(void)
{
	const char *env = getenv("MM_MAP_KCONFIG");
	char path[PATH_MAX];
	struct utsname u;
	size_t n;
	FILE *f;

	if (kconfig_len >= 0)
		return kconfig_len;
	if (env) {
		kconfig_len = read_file(env, kconfig_buf, sizeof(kconfig_buf) - 1);
	} else {
		uname(&u);
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		kconfig_len = read_file(path, kconfig_buf, sizeof(kconfig_buf) - 1);
	}
	if (kconfig_len < 0 && !env &&
	    access("/proc/config.gz", R_OK) == 0) {
		f = popen("gzip -dc /proc/config.gz", "r");
		if (f) {
			n = fread(kconfig_buf, 1, sizeof(kconfig_buf) - 1, f);
			if (pclose(f) == 0 && n > 0)
				kconfig_len = n;
		}
	}
	if (kconfig_len < 0)
		kconfig_len = 0;
	kconfig_buf[kconfig_len] = '\0';
	return kconfig_len;
}

/*
 * 1 and @val set when CONFIG_@sym has a value, 0 when it is not set or
 * absent, -ENOENT when no configuration is available.
 */
static inline int kconfig_get(const char *sym, char *val, size_t size)
{
	const char *p, *end;
	char key[128];
	size_t klen;

	if (!kconfig_load())
		return -ENOENT;
	klen = snprintf(key, sizeof(key), "\nCONFIG_%s=", sym);
	p = strstr(kconfig_buf, key);
	if (!p)
		return 0;
	p += klen;
	end = strchrnul(p, '\n');
	snprintf(val, size, "%.*s", (int)(end - p), p);
	return 1;
}

/*
 * What the kernel under test must enforce, derived without asking
 * PR_SET_MM_MAP.  A value of 0 means no oracle was available; @why then
 * says what is missing.
 */
struct mm_oracle {
	__u64 mmap_min;		/* max(sysctl, CONFIG_LSM_MMAP_MIN_ADDR) */
	__u64 task_size;	/* TASK_SIZE from the paging mode */
	__u32 auxv_bytes;	/* sizeof(mm->saved_auxv) */
	__u32 auxv_by_version;	/* ... from the kernel version and config */
	__u32 auxv_by_legacy;	/* ... from PR_SET_MM_AUXV's own check */
	char why[256];
};

static inline void oracle_why(struct mm_oracle *o, const char *what)
{
	size_t len = strlen(o->why);

	snprintf(o->why + len, sizeof(o->why) - len, "%s%s",
		 len ? "; " : "", what);
}

/*
 * security/min_addr.c: mmap_min_addr is max(dac_mmap_min_addr,
 * CONFIG_LSM_MMAP_MIN_ADDR) when the LSM floor is configured, else
 * dac_mmap_min_addr alone, which is what the vm.mmap_min_addr sysctl
 * reads (CONFIG_DEFAULT_MMAP_MIN_ADDR is only its boot value).
 */
static inline void oracle_mmap_min(struct mm_oracle *o)
{
	__u64 dac = sysctl_mmap_min_addr(), lsm;
	char val[64];
	int ret = kconfig_get("LSM_MMAP_MIN_ADDR", val, sizeof(val));

	if (ret < 0) {
		oracle_why(o, "no kernel config for CONFIG_LSM_MMAP_MIN_ADDR");
		return;
	}
	lsm = ret ? strtoull(val, NULL, 0) : 0;
	o->mmap_min = dac > lsm ? dac : lsm;
}

/*
 * x86_64: TASK_SIZE is (1 << 47) - PAGE_SIZE with 4-level paging and
 * (1 << 56) - PAGE_SIZE with 5-level paging.  The kernel clears the la57
 * CPU flag whenever it does not run with 5-level paging (not configured,
 * not supported or "no5lvl"), so /proc/cpuinfo tells the mode.
 */
static inline void oracle_task_size(struct mm_oracle *o)
{
#ifdef __x86_64__
	static char buf[1 << 16];
	char *flags, *eol;
	bool la57;
	ssize_t n;

	n = read_file("/proc/cpuinfo", buf, sizeof(buf) - 1);
	if (n <= 0) {
		oracle_why(o, "no /proc/cpuinfo");
		return;
	}
	buf[n] = '\0';
	flags = strstr(buf, "\nflags");
	if (!flags) {
		oracle_why(o, "no flags line in /proc/cpuinfo");
		return;
	}
	eol = strchrnul(flags + 1, '\n');
	*eol = '\0';
	la57 = strstr(flags, " la57 ") || !strcmp(eol - 5, " la57");
	if (la57 && kconfig_load() &&
	    strstr(kconfig_buf, "\n# CONFIG_X86_5LEVEL is not set")) {
		oracle_why(o, "la57 set although CONFIG_X86_5LEVEL is off");
		return;
	}
	o->task_size = (1ULL << (la57 ? 56 : 47)) - 4096;
#else
	oracle_why(o, "no TASK_SIZE oracle for this architecture");
#endif
}

/*
 * sizeof(mm->saved_auxv) = AT_VECTOR_SIZE longs, AT_VECTOR_SIZE =
 * 2 * (AT_VECTOR_SIZE_ARCH + AT_VECTOR_SIZE_BASE + 1).  x86_64:
 * AT_VECTOR_SIZE_ARCH is 3 with CONFIG_IA32_EMULATION, else 2;
 * AT_VECTOR_SIZE_BASE is 20 up to 6.2, 22 from 6.3 (AT_RSEQ_*) and 24 in
 * 6.18 (AT_HWCAP3/4).  Only the versions measured here are listed.
 */
static inline __u32 auxv_bytes_by_version(void)
{
#ifdef __x86_64__
	unsigned int major = 0, minor = 0, base;
	struct utsname u;
	char val[8];
	int ia32;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return 0;
	if (major == 6 && minor <= 2)
		base = 20;
	else if (major == 6 && minor >= 3 && minor <= 12)
		base = 22;
	else if (major == 6 && minor == 18)
		base = 24;
	else
		return 0;
	ia32 = kconfig_get("IA32_EMULATION", val, sizeof(val));
	if (ia32 < 0)
		return 0;
	return 2 * ((ia32 ? 3 : 2) + base + 1) * sizeof(long);
#else
	return 0;
#endif
}

/*
 * Largest @len PR_SET_MM_AUXV accepts (it refuses len > sizeof(saved_auxv)
 * in prctl_set_auxv(), which PR_SET_MM_MAP does not use), probed with the
 * current vector padded with zeros so that /proc/self/auxv stays as it
 * was.  Needs CAP_SYS_RESOURCE; 0 without it.
 */
static inline __u32 auxv_bytes_by_legacy(void)
{
	static unsigned long vec[AUXV_WORDS_MAX];
	__u32 lo = 0, hi = sizeof(vec);
	ssize_t n;

	if (!has_effective_cap(CAP_SYS_RESOURCE))
		return 0;
	memset(vec, 0, sizeof(vec));
	n = read_file("/proc/self/auxv", vec, sizeof(vec));
	if (n <= 0)
		return 0;
	if (sys_prctl5(PR_SET_MM, PR_SET_MM_AUXV, (unsigned long)vec, n, 0))
		return 0;
	lo = n;
	while (hi - lo > 1) {
		__u32 mid = lo + (hi - lo) / 2;

		if (sys_prctl5(PR_SET_MM, PR_SET_MM_AUXV, (unsigned long)vec,
			       mid, 0) == 0)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static inline void oracle_auxv(struct mm_oracle *o)
{
	o->auxv_by_version = auxv_bytes_by_version();
	o->auxv_by_legacy = auxv_bytes_by_legacy();
	if (o->auxv_by_version && o->auxv_by_legacy &&
	    o->auxv_by_version != o->auxv_by_legacy) {
		oracle_why(o, "auxv size: version table and PR_SET_MM_AUXV disagree");
		return;
	}
	o->auxv_bytes = o->auxv_by_version ?: o->auxv_by_legacy;
	if (!o->auxv_bytes)
		oracle_why(o,
			   "auxv size: kernel version not in the table, no CAP_SYS_RESOURCE for PR_SET_MM_AUXV");
}

static inline void oracle_get(struct mm_oracle *o)
{
	memset(o, 0, sizeof(*o));
	oracle_mmap_min(o);
	oracle_task_size(o);
	oracle_auxv(o);
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

/* The smallest address PR_SET_MM_MAP accepts. */
static inline __u64 probe_mmap_min(const struct prctl_mm_map *base)
{
	return probe_edge(base, 0, base->start_stack, 0);
}

/* One above the largest address PR_SET_MM_MAP accepts. */
static inline __u64 probe_task_size(const struct prctl_mm_map *base)
{
	return probe_edge(base, base->start_stack, ~0ULL, 1) + 1;
}

/*
 * Largest auxv_size PR_SET_MM_MAP accepts, probed with the snapshot's own
 * vector padded with AT_NULL, so every accepted probe leaves
 * /proc/self/auxv as it was.  Restores @base.
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

/*
 * Replace every mapping of the running executable by an anonymous copy
 * with the same contents and protection, so that the old executable is no
 * longer mapped and PR_SET_MM_EXE_FILE's EBUSY check passes, as it does
 * in a restorer that unmapped everything.  mremap() moves each copy over
 * the original in one step; the code that runs on return from it is the
 * identical copy.  0 or -errno; the process cannot undo it.
 */
static inline int unmap_exe(void)
{
	static char maps[1 << 16], exe[PATH_MAX];
	unsigned long long lo, hi;
	char perms[5], *line, *next;
	ssize_t n;
	int prot;
	void *copy;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	n = read_file("/proc/self/maps", maps, sizeof(maps) - 1);
	if (n < 0)
		return n;
	maps[n] = '\0';
	for (line = maps; *line; line = next) {
		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		if (sscanf(line, "%llx-%llx %4s", &lo, &hi, perms) != 3)
			return -EIO;
		if (strlen(line) < strlen(exe) ||
		    strcmp(line + strlen(line) - strlen(exe), exe))
			continue;
		prot = (perms[0] == 'r' ? PROT_READ : 0) |
		       (perms[1] == 'w' ? PROT_WRITE : 0) |
		       (perms[2] == 'x' ? PROT_EXEC : 0);
		if (!(prot & PROT_READ) &&
		    mprotect((void *)lo, hi - lo, prot | PROT_READ))
			return -errno;
		copy = mmap(NULL, hi - lo, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (copy == MAP_FAILED)
			return -errno;
		memcpy(copy, (void *)lo, hi - lo);
		if (mprotect(copy, hi - lo, prot) ||
		    mremap(copy, hi - lo, hi - lo, MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)lo) == MAP_FAILED)
			return -errno;
	}
	return 0;
}

#endif /* MM_MAP_UTIL_H */
