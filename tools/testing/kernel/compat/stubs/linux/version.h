/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Stand-in for the kernel's linux/version.h. The version under test comes
 * from the command line (compat-check.sh: -DLINUX_VERSION_CODE=...).
 */
#ifndef _STUB_LINUX_VERSION_H
#define _STUB_LINUX_VERSION_H

#define KERNEL_VERSION(a, b, c) (((a) << 16) + ((b) << 8) + (c))

#endif
