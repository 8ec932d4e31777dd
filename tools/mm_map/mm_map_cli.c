// SPDX-License-Identifier: GPL-2.0
/*
 * mm_map - look at and restore memory-descriptor maps (demo restorer).
 *
 *   mm_map probe [--expect present|absent]
 *	Ask the kernel with PR_SET_MM_MAP_SIZE.  Prints "present SIZE" or
 *	"absent"; with --expect, exits 1 if that is not what was expected.
 *   mm_map show [PID]
 *	Print the map of PID (default: mm_map itself) as a restorer sees it.
 *   mm_map apply-self [--legacy] [--user UID] [--expect-path map|legacy]
 *	In a child: move every field of its own map by 8 bytes, apply that
 *	with mm_map_apply(), check /proc/self/stat and brk read back as
 *	applied, then restore the original map and check again.
 *   mm_map apply-from PID [--legacy] [--expect-path map|legacy]
 *	In a child: read PID's map from /proc and install it in itself, the
 *	way a restorer rebuilds a dumped task; check it reads back.  Prints
 *	"caller vma top: ADDR" first, the end of the child's highest VMA:
 *	legacy PR_SET_MM refuses stack/arg/env addresses at or above it.
 *
 * --legacy forces the per-field PR_SET_MM path (needs CAP_SYS_RESOURCE);
 * --user drops to UID (and its gid) first, without any capability.
 * Exit status: 0 success, 1 check failed, 2 usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "mm_map.h"

static unsigned int apply_flags;
static const char *expect_path;
static long drop_uid = -1;

/* No stdio after a map was applied: write(2) from a static buffer. */
static void say(const char *fmt, ...)
{
	static char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0 && write(STDOUT_FILENO, buf,
			   (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0)
		_exit(2);
}

static int print_usage(void)
{
	fprintf(stderr,
		"usage: mm_map probe [--expect present|absent]\n"
		"       mm_map show [PID]\n"
		"       mm_map apply-self [--legacy] [--user UID] [--expect-path map|legacy]\n"
		"       mm_map apply-from PID [--legacy] [--expect-path map|legacy]\n");
	return 2;
}

/*
 * Present: PR_SET_MM_MAP_SIZE reports sizeof(struct prctl_mm_map) and
 * setting the caller's own map (a no-op) succeeds.  Absent: both fail with
 * EINVAL, the answer of a kernel that does not know the operations.
 */
static int cmd_probe(int argc, char **argv)
{
	struct mm_map_image img;
	unsigned int size;
	int err_size, err_map;
	const char *got;

	if (argc && (argc != 2 || strcmp(argv[0], "--expect")))
		return print_usage();
	err_size = mm_map_probe(&size);
	err_map = mm_map_read(0, &img);
	if (err_map) {
		fprintf(stderr, "mm_map_read: %s\n", strerror(-err_map));
		return 2;
	}
	err_map = mm_map_set(&img);
	if (!err_size && size == MM_MAP_STRUCT_SIZE && !err_map)
		got = "present";
	else if (err_size == -EINVAL && err_map == -EINVAL)
		got = "absent";
	else
		got = "inconsistent";
	printf("%s (PR_SET_MM_MAP_SIZE: %s, size %u; PR_SET_MM_MAP of own map: %s)\n",
	       got, err_size ? strerror(-err_size) : "ok", err_size ? 0 : size,
	       err_map ? strerror(-err_map) : "ok");
	if (argc)
		return strcmp(argv[1], got) ? 1 : 0;
	return strcmp(got, "inconsistent") ? 0 : 1;
}

static void print_image(const struct mm_map_image *img)
{
	size_t i;

	for (i = 0; i < MM_NR_FIELDS; i++)
		say("%-12s %#llx\n", mm_map_field_names[i],
		    (unsigned long long)img->val[i]);
	for (i = 0; i + 1 < img->auxv_bytes / sizeof(long); i += 2)
		say("auxv[%zu]    %lu %#lx\n", i / 2, img->auxv[i],
		    img->auxv[i + 1]);
}

static int cmd_show(int argc, char **argv)
{
	struct mm_map_image img;
	pid_t pid = argc ? atoi(argv[0]) : 0;
	int err = mm_map_read(pid, &img);

	if (err) {
		fprintf(stderr, "mm_map_read(%d): %s\n", (int)pid, strerror(-err));
		return 2;
	}
	print_image(&img);
	return 0;
}

/* Does the caller's mm show @want's addresses (and auxv, if @auxv)? */
static int check_self(const struct mm_map_image *want, int auxv)
{
	struct mm_map_image now;
	int f, bad = 0, err = mm_map_read(0, &now);

	if (err) {
		say("read back: %s\n", strerror(-err));
		return 1;
	}
	for (f = 0; f < MM_NR_FIELDS; f++) {
		if (now.val[f] != want->val[f]) {
			say("%s: applied %#llx, reads %#llx\n",
			    mm_map_field_names[f],
			    (unsigned long long)want->val[f],
			    (unsigned long long)now.val[f]);
			bad = 1;
		}
	}
	if (auxv && (now.auxv_bytes != want->auxv_bytes ||
		     memcmp(now.auxv, want->auxv, now.auxv_bytes))) {
		say("auxv differs (%zu vs %zu bytes)\n", now.auxv_bytes,
		    want->auxv_bytes);
		bad = 1;
	}
	return bad;
}

static int apply_checked(const struct mm_map_image *img, const char *what)
{
	enum mm_map_path path;
	int err = mm_map_apply(img, apply_flags, &path);

	say("%s: %s via %s\n", what, err ? strerror(-err) : "applied",
	    mm_map_path_name(path));
	if (err)
		return 1;
	if (expect_path &&
	    strcmp(expect_path, path == MM_MAP_PATH_MAP ? "map" : "legacy")) {
		say("%s: expected the %s path\n", what, expect_path);
		return 1;
	}
	return check_self(img, 1);
}

static int drop_privileges(void)
{
	if (drop_uid < 0)
		return 0;
	if (setgroups(0, NULL) || setgid(drop_uid) || setuid(drop_uid)) {
		say("cannot become uid %ld: %s\n", drop_uid, strerror(errno));
		return -1;
	}
	/* /proc/self/auxv is only readable by a dumpable task's owner. */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

static void child_apply_self(void)
{
	static struct mm_map_image orig, moved;
	int f;

	if (drop_privileges() || mm_map_read(0, &orig))
		_exit(2);
	moved = orig;
	for (f = 0; f < MM_NR_FIELDS; f++)
		moved.val[f] += 8;
	if (apply_checked(&moved, "moved map") ||
	    apply_checked(&orig, "original map"))
		_exit(1);
	_exit(0);
}

/* End of the caller's highest VMA (the vsyscall page is not one). */
static unsigned long long vma_top(void)
{
	static char maps[1 << 16];
	unsigned long long lo, hi, top = 0;
	size_t len = 0;
	char *line, *save;
	ssize_t n;
	int fd;

	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (len < sizeof(maps) - 1 &&
	       (n = read(fd, maps + len, sizeof(maps) - 1 - len)) > 0)
		len += n;
	close(fd);
	maps[len] = '\0';
	for (line = strtok_r(maps, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
		    !strstr(line, "[vsyscall]") && hi > top)
			top = hi;
	return top;
}

static void child_apply_from(pid_t pid)
{
	static struct mm_map_image img;
	int err = mm_map_read(pid, &img);

	if (err) {
		say("mm_map_read(%d): %s\n", (int)pid, strerror(-err));
		_exit(2);
	}
	say("caller vma top: %#llx\n", vma_top());
	_exit(apply_checked(&img, "map of the target") ? 1 : 0);
}

static int run_in_child(void (*fn)(pid_t), pid_t arg)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0)
		fn(arg);
	if (waitpid(pid, &status, 0) != pid)
		return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static void apply_self_thunk(pid_t unused)
{
	child_apply_self();
}

static int parse_apply_opts(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--legacy")) {
			apply_flags |= MM_MAP_FORCE_LEGACY;
		} else if (!strcmp(argv[i], "--user") && i + 1 < argc) {
			drop_uid = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--expect-path") && i + 1 < argc) {
			expect_path = argv[++i];
			if (strcmp(expect_path, "map") &&
			    strcmp(expect_path, "legacy"))
				return -1;
		} else {
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return print_usage();
	if (!strcmp(argv[1], "probe"))
		return cmd_probe(argc - 2, argv + 2);
	if (!strcmp(argv[1], "show") && argc <= 3)
		return cmd_show(argc - 2, argv + 2);
	if (!strcmp(argv[1], "apply-self")) {
		if (parse_apply_opts(argc - 2, argv + 2))
			return print_usage();
		return run_in_child(apply_self_thunk, 0);
	}
	if (!strcmp(argv[1], "apply-from") && argc >= 3) {
		if (parse_apply_opts(argc - 3, argv + 3))
			return print_usage();
		return run_in_child(child_apply_from, atoi(argv[2]));
	}
	return print_usage();
}
