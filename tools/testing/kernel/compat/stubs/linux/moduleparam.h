/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Stand-in for linux/moduleparam.h. */
#ifndef _STUB_LINUX_MODULEPARAM_H
#define _STUB_LINUX_MODULEPARAM_H

struct kernel_param {
	const char *name;
	void *arg;
};

#ifdef COMPAT_HAS_PARAM_SET_UINT_MINMAX
int param_set_uint_minmax(const char *val, const struct kernel_param *kp,
			  unsigned int min, unsigned int max);
#endif

#endif
