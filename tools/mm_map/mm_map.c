// SPDX-License-Identifier: GPL-2.0
/*
 * Restorer-side PR_SET_MM_MAP helper, see mm_map.h.
 */
#define _GNU_SOURCE
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/prctl.h>

#include "mm_map.h"

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

#ifdef __LP64__
static_assert(sizeof(struct prctl_mm_map) == MM_MAP_STRUCT_SIZE,
	      "struct prctl_mm_map layout");
#endif

const char * const mm_map_field_names[MM_NR_FIELDS] = {
	"start_code", "end_code", "start_data", "end_data", "start_brk",
	"brk", "start_stack", "arg_start", "arg_end", "env_start", "env_end",
};

/* /proc/<pid>/stat field of each (brk is not there). */
static const int stat_field[MM_NR_FIELDS] = {
	26, 27, 45, 46, 47, 0, 28, 48, 49, 50, 51,
};

/* Legacy opcode of each field. */
static const int legacy_op[MM_NR_FIELDS] = {
	PR_SET_MM_START_CODE, PR_SET_MM_END_CODE, PR_SET_MM_START_DATA,
	PR_SET_MM_END_DATA, PR_SET_MM_START_BRK, PR_SET_MM_BRK,
	PR_SET_MM_START_STACK, PR_SET_MM_ARG_START, PR_SET_MM_ARG_END,
	PR_SET_MM_ENV_START, PR_SET_MM_ENV_END,
};

static long prctl5(long opt, unsigned long a2, unsigned long a3,
		   unsigned long a4, unsigned long a5)
{
	long ret = syscall(SYS_prctl, opt, a2, a3, a4, a5);

	return ret < 0 ? -errno : ret;
}

int mm_map_probe(unsigned int *size)
{
	*size = 0;
	return prctl5(PR_SET_MM, PR_SET_MM_MAP_SIZE, (unsigned long)size,
		      0, 0);
}

static ssize_t read_proc(pid_t pid, const char *name, void *buf,
			 size_t size)
{
	char path[64];
	size_t done = 0;
	ssize_t n;
	int fd;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	else
		snprintf(path, sizeof(path), "/proc/self/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (done < size) {
		n = read(fd, (char *)buf + done, size - done);
		if (n <= 0) {
			if (n < 0)
				done = -errno;
			break;
		}
		done += n;
	}
	close(fd);
	return done;
}

static int read_stat(pid_t pid, struct mm_map_image *img)
{
	char buf[4096], *p;
	int field, f;
	ssize_t n;

	n = read_proc(pid, "stat", buf, sizeof(buf) - 1);
	if (n < 0)
		return n;
	buf[n] = '\0';
	/* comm may contain anything: field 3 follows the last ')'. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EIO;
	p += 2;
	for (field = 3; *p && *p != '\n'; field++) {
		for (f = 0; f < MM_NR_FIELDS; f++)
			if (stat_field[f] == field)
				img->val[f] = strtoull(p, NULL, 10);
		p = strchr(p, ' ');
		if (!p)
			break;
		p++;
	}
	return field >= 51 ? 0 : -EIO;
}

/* End of the [heap] mapping of @pid, 0 if it has none. */
static __u64 heap_end(pid_t pid)
{
	static char maps[1 << 16];
	unsigned long long lo, hi;
	char *line, *save;
	ssize_t n;

	n = read_proc(pid, "maps", maps, sizeof(maps) - 1);
	if (n <= 0)
		return 0;
	maps[n] = '\0';
	for (line = strtok_r(maps, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "[heap]") &&
		    sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			return hi;
	return 0;
}

int mm_map_read(pid_t pid, struct mm_map_image *img)
{
	ssize_t n;
	int err;

	memset(img, 0, sizeof(*img));
	img->exe_fd = -1;
	err = read_stat(pid, img);
	if (err)
		return err;
	if (pid == 0 || pid == getpid()) {
		img->val[MM_BRK] = syscall(SYS_brk, 0UL);
	} else {
		img->val[MM_BRK] = heap_end(pid);
		if (img->val[MM_BRK] < img->val[MM_START_BRK])
			img->val[MM_BRK] = img->val[MM_START_BRK];
	}
	n = read_proc(pid, "auxv", img->auxv, sizeof(img->auxv));
	if (n < 0)
		return n;
	img->auxv_bytes = n;
	return 0;
}

int mm_map_set(const struct mm_map_image *img)
{
	struct prctl_mm_map map = {
		.start_code	= img->val[MM_START_CODE],
		.end_code	= img->val[MM_END_CODE],
		.start_data	= img->val[MM_START_DATA],
		.end_data	= img->val[MM_END_DATA],
		.start_brk	= img->val[MM_START_BRK],
		.brk		= img->val[MM_BRK],
		.start_stack	= img->val[MM_START_STACK],
		.arg_start	= img->val[MM_ARG_START],
		.arg_end	= img->val[MM_ARG_END],
		.env_start	= img->val[MM_ENV_START],
		.env_end	= img->val[MM_ENV_END],
		.auxv		= (__u64 *)img->auxv,
		.auxv_size	= img->auxv_bytes,
		.exe_fd		= (__u32)img->exe_fd,
	};

	return prctl5(PR_SET_MM, PR_SET_MM_MAP, (unsigned long)&map,
		      sizeof(map), 0);
}

static int legacy_set(int field, __u64 val)
{
	return prctl5(PR_SET_MM, legacy_op[field], val, 0, 0);
}

/*
 * Set one start/end pair so that every intermediate state stays ordered:
 * moving up, the end goes first; moving down, the start does.
 */
static int legacy_pair(const struct mm_map_image *img, const __u64 *cur,
		       int start)
{
	int end = start + 1, err;

	if (img->val[start] >= cur[end]) {
		err = legacy_set(end, img->val[end]);
		return err ?: legacy_set(start, img->val[start]);
	}
	err = legacy_set(start, img->val[start]);
	return err ?: legacy_set(end, img->val[end]);
}

/*
 * Per-field PR_SET_MM in the order CRIU uses (code, data, stack, heap,
 * arg, env, auxv, exe), each pair ordered by legacy_pair().
 */
static int apply_legacy(const struct mm_map_image *img)
{
	struct mm_map_image now;
	int err;

	err = mm_map_read(0, &now);
	if (err)
		return err;
	err = legacy_pair(img, now.val, MM_START_CODE);
	err = err ?: legacy_pair(img, now.val, MM_START_DATA);
	err = err ?: legacy_set(MM_START_STACK, img->val[MM_START_STACK]);
	err = err ?: legacy_pair(img, now.val, MM_START_BRK);
	err = err ?: legacy_pair(img, now.val, MM_ARG_START);
	err = err ?: legacy_pair(img, now.val, MM_ENV_START);
	if (!err && img->auxv_bytes)
		err = prctl5(PR_SET_MM, PR_SET_MM_AUXV,
			     (unsigned long)img->auxv, img->auxv_bytes, 0);
	if (!err && img->exe_fd >= 0)
		err = prctl5(PR_SET_MM, PR_SET_MM_EXE_FILE, img->exe_fd, 0, 0);
	return err;
}

int mm_map_apply(const struct mm_map_image *img, unsigned int flags,
		 enum mm_map_path *path)
{
	enum mm_map_path dummy;
	unsigned int size;
	int err;

	if (!path)
		path = &dummy;
	*path = MM_MAP_PATH_NONE;
	if (!(flags & MM_MAP_FORCE_LEGACY)) {
		err = mm_map_probe(&size);
		if (err == 0) {
			if (size != sizeof(struct prctl_mm_map))
				return -EPROTO;	/* a different ABI */
			*path = MM_MAP_PATH_MAP;
			return mm_map_set(img);
		}
		/*
		 * "No such operation" means: try the old way.  A kernel
		 * without PR_SET_MM_MAP checks CAP_SYS_RESOURCE before it
		 * looks at the opcode, so an unprivileged caller sees EPERM
		 * there; the legacy calls will then say EPERM as well.
		 */
		if (err != -EINVAL && err != -EPERM)
			return err;
	}
	*path = MM_MAP_PATH_LEGACY;
	return apply_legacy(img);
}

const char *mm_map_path_name(enum mm_map_path path)
{
	switch (path) {
	case MM_MAP_PATH_MAP:
		return "PR_SET_MM_MAP";
	case MM_MAP_PATH_LEGACY:
		return "legacy PR_SET_MM";
	default:
		return "none";
	}
}
