// SPDX-License-Identifier: GPL-2.0
/*
 * criu_target FILE: the process criu_restore.sh dumps and restores.
 *
 * Moves its heap end to an address that is not page aligned (so that only
 * an exact restore of mm->brk reproduces it; the [heap] VMA would not),
 * then every 100 ms replaces FILE with one line: a counter and brk(0).
 * After a restore the counter keeps going and brk(0) tells what the
 * restorer put into mm->brk.  No stdio, no malloc after startup.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

int main(int argc, char **argv)
{
	const struct timespec tick = { 0, 100 * 1000 * 1000 };
	char tmp[4096], line[64];
	unsigned long n = 0, brk;
	int fd, len;

	if (argc != 2 || strlen(argv[1]) > sizeof(tmp) - 8) {
		fprintf(stderr, "usage: criu_target FILE\n");
		return 2;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	brk = syscall(SYS_brk, 0UL);
	if (syscall(SYS_brk, brk + 3 * 4096 + 123) != brk + 3 * 4096 + 123) {
		fprintf(stderr, "criu_target: brk failed\n");
		return 1;
	}
	for (;;) {
		brk = syscall(SYS_brk, 0UL);
		len = snprintf(line, sizeof(line), "%lu %#lx\n", ++n, brk);
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, line, len) != len || close(fd) ||
		    rename(tmp, argv[1]))
			return 1;
		nanosleep(&tick, NULL);
	}
}
