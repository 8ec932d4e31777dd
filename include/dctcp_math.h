/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * DCTCP fixed-point arithmetic.
 *
 * Pure functions of their arguments (no socket, no globals), shared by
 * tcp_dctcp.c and the host unit tests in tools/testing/unit/, which compile
 * this very header in userspace and compare it with exact references.
 *
 * alpha, the estimated fraction of marked traffic, is reported (ss, module
 * parameters) in units of 1/DCTCP_MAX_ALPHA: 0 is no congestion, 1024 means
 * every segment of the last RTT was CE-marked. Internally it is kept with
 * 2 * DCTCP_MAX_SHIFT_G more fractional bits, 30 in all, in units of
 * 1/DCTCP_MAX_ALPHA_FP = 1/2^30.
 *
 * Why 30: the update truncates both of its terms, g * F and the decay
 * g * alpha, each by less than one internal unit per RTT, which moves the
 * EWMA's mean by up to 2^shift_g units. The marks of one RTT weigh
 * g * F = 2^(30 - shift_g) / segments, and without marks a remainder below
 * 2^shift_g units is dropped so that alpha decays to exactly 0. With 10
 * fractional bits g * F is lost entirely for shift_g >= 6 (alpha stuck at
 * 1/1024 with every segment marked); with 20, one marked segment in 100 per
 * RTT at g = 1/1024 adds about 10 units, which the next unmarked RTT drops
 * (alpha stays near 0 where a float EWMA averages 10/1024). With 30 bits
 * that segment adds about 10000 units, the error bound 2^shift_g is 2^-20
 * of full scale, and the product with a 32-bit cwnd or counter still fits
 * in 64 bits.
 */
#ifndef _DCTCP_MATH_H
#define _DCTCP_MATH_H

#ifdef __KERNEL__
#include <linux/math64.h>
#include <linux/types.h>
#else
/* Userspace shim: the uapi fixed-size types and a plain 64/32 division. */
#include <linux/types.h>

static inline __u64 div_u64(__u64 dividend, __u32 divisor)
{
	return dividend / divisor;
}
#endif

#define DCTCP_MAX_ALPHA		1024U	/* 1.0 as reported: 2^10 */
#define DCTCP_MAX_SHIFT_G	10U	/* g >= 1/1024 */
#define DCTCP_FP_EXTRA_SHIFT	(2 * DCTCP_MAX_SHIFT_G)	/* internal - reported */
#define DCTCP_ALPHA_FP_SHIFT	30U	/* 10 + DCTCP_FP_EXTRA_SHIFT bits */
#define DCTCP_MAX_ALPHA_FP	(DCTCP_MAX_ALPHA << DCTCP_FP_EXTRA_SHIFT)

/**
 * dctcp_alpha_to_fp() - internal alpha from a reported one
 * @alpha:	alpha in 1/DCTCP_MAX_ALPHA units, clamped to DCTCP_MAX_ALPHA
 *
 * Return: alpha in 1/DCTCP_MAX_ALPHA_FP units.
 */
static inline __u32 dctcp_alpha_to_fp(__u32 alpha)
{
	if (alpha > DCTCP_MAX_ALPHA)
		alpha = DCTCP_MAX_ALPHA;
	return alpha << DCTCP_FP_EXTRA_SHIFT;
}

/**
 * dctcp_alpha_from_fp() - reported alpha from the internal one
 * @alpha_fp:	alpha in 1/DCTCP_MAX_ALPHA_FP units
 *
 * Return: alpha in 1/DCTCP_MAX_ALPHA units, rounded down.
 */
static inline __u32 dctcp_alpha_from_fp(__u32 alpha_fp)
{
	return alpha_fp >> DCTCP_FP_EXTRA_SHIFT;
}

/**
 * dctcp_next_alpha() - fold one RTT of feedback into alpha
 * @alpha_fp:	alpha before this RTT, 0..DCTCP_MAX_ALPHA_FP
 * @marked:	CE-marked units (packets or bytes) acknowledged in this RTT
 * @total:	all units acknowledged in this RTT, same unit as @marked
 * @shift_g:	the EWMA gain is g = 1/2^shift_g, 0..DCTCP_MAX_SHIFT_G
 *
 * Computes alpha = (1 - g) * alpha + g * F with F = marked / total.
 *
 * (1 - g) * alpha is alpha - (alpha >> shift_g). In an RTT without marks,
 * once alpha is so small that the shift truncates to 0, the remainder (less
 * than 2^shift_g internal units, at most 1/2^20 of full scale) is dropped,
 * so that alpha decays to exactly 0 instead of sticking at 2^shift_g - 1.
 * Only then: mainline drops it in every RTT, which, with few marks and a
 * small g, pins alpha at g * F.
 *
 * g * F is marked * 2^(30 - shift_g) / total, in 64 bits: marked is a full
 * 32-bit counter. An empty RTT (total == 0) only decays alpha.
 *
 * Return: the new alpha, 0..DCTCP_MAX_ALPHA_FP.
 */
static inline __u32 dctcp_next_alpha(__u32 alpha_fp, __u32 marked,
				     __u32 total, __u32 shift_g)
{
	__u32 decay;
	__u64 gf;

	if (shift_g > DCTCP_MAX_SHIFT_G)
		shift_g = DCTCP_MAX_SHIFT_G;
	if (alpha_fp > DCTCP_MAX_ALPHA_FP)
		alpha_fp = DCTCP_MAX_ALPHA_FP;

	/* (1 - g) * alpha */
	decay = alpha_fp >> shift_g;

	/* No marks: decay, to exactly 0 once the shift truncates to 0. */
	if (!marked || !total)
		return alpha_fp - (decay ? decay : alpha_fp);

	alpha_fp -= decay;

	/* + g * F, saturating at 1.0 */
	gf = div_u64((__u64)marked << (DCTCP_ALPHA_FP_SHIFT - shift_g), total);
	if (gf >= DCTCP_MAX_ALPHA_FP - alpha_fp)
		return DCTCP_MAX_ALPHA_FP;
	return alpha_fp + (__u32)gf;
}

/**
 * dctcp_reduced_cwnd() - slow start threshold after a round with marks
 * @cwnd:	congestion window in segments
 * @alpha_fp:	current alpha, 0..DCTCP_MAX_ALPHA_FP
 *
 * Computes cwnd * (1 - alpha / 2), rounded up, but never below 2 segments:
 * alpha / 2 is alpha_fp / 2^31. The product is 64 bits wide so that large
 * windows cannot wrap (the 32-bit cwnd * alpha of old kernels would do so
 * from 4 M segments on).
 *
 * Return: the new slow start threshold, at least 2.
 */
static inline __u32 dctcp_reduced_cwnd(__u32 cwnd, __u32 alpha_fp)
{
	__u32 ssthresh;

	if (alpha_fp > DCTCP_MAX_ALPHA_FP)
		alpha_fp = DCTCP_MAX_ALPHA_FP;

	/* cwnd - cwnd * alpha / 2 */
	ssthresh = cwnd - (__u32)(((__u64)cwnd * alpha_fp) >>
				  (DCTCP_ALPHA_FP_SHIFT + 1));

	return ssthresh > 2U ? ssthresh : 2U;
}

#endif /* _DCTCP_MATH_H */
