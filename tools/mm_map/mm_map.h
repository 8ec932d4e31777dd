/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Restorer-side helper for the memory-descriptor map of a task.
 *
 * mm_map_read() fills a struct mm_map_image from /proc/<pid>/stat,
 * /proc/<pid>/auxv (and brk, see below); mm_map_apply() installs it in the
 * calling task the way CRIU's restorer does: one PR_SET_MM_MAP call when
 * PR_SET_MM_MAP_SIZE says the kernel has it, else the legacy per-field
 * PR_SET_MM operations (which need CAP_SYS_RESOURCE).
 *
 * Applying a map to the calling task changes what brk() and /proc report
 * for it: a caller that keeps running should not rely on malloc() growing
 * the heap afterwards (glibc falls back to mmap when brk() fails).
 */
#ifndef MM_MAP_H
#define MM_MAP_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#define MM_MAP_AUXV_WORDS	128	/* above any kernel's AT_VECTOR_SIZE */
#define MM_MAP_STRUCT_SIZE	104	/* sizeof(struct prctl_mm_map), 64-bit */

/* Field order matches struct prctl_mm_map. */
enum mm_map_field {
	MM_START_CODE, MM_END_CODE, MM_START_DATA, MM_END_DATA,
	MM_START_BRK, MM_BRK, MM_START_STACK, MM_ARG_START, MM_ARG_END,
	MM_ENV_START, MM_ENV_END, MM_NR_FIELDS,
};

extern const char * const mm_map_field_names[MM_NR_FIELDS];

struct mm_map_image {
	__u64 val[MM_NR_FIELDS];
	unsigned long auxv[MM_MAP_AUXV_WORDS];
	size_t auxv_bytes;		/* including the AT_NULL pair */
	int exe_fd;			/* -1: leave /proc/self/exe alone */
};

enum mm_map_path {
	MM_MAP_PATH_NONE,
	MM_MAP_PATH_MAP,		/* one PR_SET_MM_MAP call */
	MM_MAP_PATH_LEGACY,		/* per-field PR_SET_MM calls */
};

/* Flags for mm_map_apply(). */
#define MM_MAP_FORCE_LEGACY	0x1	/* skip PR_SET_MM_MAP */

/*
 * 0 and *size = sizeof(struct prctl_mm_map) as the kernel sees it, or
 * -EINVAL when the kernel lacks PR_SET_MM_MAP (-EPERM if, in addition, the
 * caller lacks CAP_SYS_RESOURCE), or another -errno.
 */
int mm_map_probe(unsigned int *size);

/*
 * Read the map of @pid (0: the caller).  brk is not in /proc/<pid>/stat:
 * for the caller it is brk(0), for another task the end of its [heap]
 * mapping in /proc/<pid>/maps (page aligned), or start_brk if it has none.
 */
int mm_map_read(pid_t pid, struct mm_map_image *img);

/*
 * Install @img in the calling task.  Returns 0 or -errno; *path (may be
 * NULL) tells which interface was used.  A PR_SET_MM_MAP failure other
 * than "not implemented" is returned as is: its errno is the kernel's
 * verdict on the map.  On the legacy path the first failing operation
 * stops the sequence, and the fields set before it stay set.
 */
int mm_map_apply(const struct mm_map_image *img, unsigned int flags,
		 enum mm_map_path *path);

/* One raw PR_SET_MM_MAP call with @img, no fallback: 0 or -errno. */
int mm_map_set(const struct mm_map_image *img);

const char *mm_map_path_name(enum mm_map_path path);

#endif /* MM_MAP_H */
