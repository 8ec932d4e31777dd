/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Stand-in for linux/kernel.h: what include/compat.h uses from it. */
#ifndef _STUB_LINUX_KERNEL_H
#define _STUB_LINUX_KERNEL_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;

extern int stub_warnings;

#define WARN_ON_ONCE(cond) ({ bool __c = (cond); if (__c) stub_warnings++; __c; })

/* kstrtouint(): base 0, one trailing newline allowed, no overflow. */
static inline int kstrtouint(const char *s, unsigned int base, unsigned int *res)
{
	unsigned long v;
	char *end;

	if (*s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, base);
	if (end == s || (*end && !(end[0] == '\n' && !end[1])))
		return -EINVAL;
	if (errno || v > UINT_MAX)
		return -ERANGE;
	*res = v;
	return 0;
}

#endif
