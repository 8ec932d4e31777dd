// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Host unit tests for include/dctcp_math.h, the fixed-point arithmetic that
 * tcp_dctcp.ko runs. The header is compiled here unchanged and compared with
 * exact rational references (128-bit integers) and a floating-point model:
 * exhaustively over small ranges, with seeded random inputs over the full
 * 32-bit counter range, and at the edges.
 *
 * Output is TAP; the random seed is printed and can be replayed with
 * DCTCP_UNIT_SEED=<seed>. Exit status 0 iff every test passed.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dctcp_math.h"

#define RANDOM_ROUNDS	2000000
#define MAX_FAIL_LOG	5

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static uint64_t rng_state;
static int test_no;
static int failed_tests;
static unsigned long case_failures;
static unsigned long case_count;

/* xorshift64*: reproducible everywhere, unlike rand(). */
static uint64_t rnd64(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(rnd64() % n);
}

/* Random 32-bit counter, biased towards the interesting top of the range. */
static uint32_t rnd_counter(void)
{
	switch (rnd_below(4)) {
	case 0:
		return UINT32_MAX - rnd_below(1U << 16);
	case 1:
		return rnd_below(1U << 16);
	default:
		return (uint32_t)rnd64();
	}
}

/* Record one failed case; print the first few as TAP diagnostics. */
static void fail_case(const char *fmt, ...)
{
	va_list ap;

	if (case_failures++ >= MAX_FAIL_LOG)
		return;
	va_start(ap, fmt);
	printf("# FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}

static void run_test(const char *name, void (*fn)(void))
{
	case_failures = 0;
	case_count = 0;
	fn();
	test_no++;
	printf("# %s: %lu cases\n", name, case_count);
	if (case_failures) {
		printf("# %s: %lu failing case(s)\n", name, case_failures);
		printf("not ok %d - %s\n", test_no, name);
		failed_tests++;
	} else {
		printf("ok %d - %s\n", test_no, name);
	}
	fflush(stdout);
}

/* ---- alpha representation ---------------------------------------------- */

static void expect_u32(const char *what, uint32_t got, uint32_t want)
{
	case_count++;
	if (got != want)
		fail_case("%s = %u, want %u", what, got, want);
}

static void test_alpha_units(void)
{
	for (uint32_t a = 0; a <= DCTCP_MAX_ALPHA; a++) {
		expect_u32("from_fp(to_fp(a)) == a",
			   dctcp_alpha_from_fp(dctcp_alpha_to_fp(a)), a);
		expect_u32("to_fp(a) == a * 2^20", dctcp_alpha_to_fp(a), a << 20);
	}
	expect_u32("to_fp(1025) clamps", dctcp_alpha_to_fp(1025), DCTCP_MAX_ALPHA_FP);
	expect_u32("to_fp(UINT32_MAX) clamps", dctcp_alpha_to_fp(UINT32_MAX),
		   DCTCP_MAX_ALPHA_FP);
	expect_u32("from_fp(2^20 - 1) rounds down",
		   dctcp_alpha_from_fp((1U << 20) - 1), 0);
	expect_u32("from_fp(2^30)", dctcp_alpha_from_fp(1U << 30), 1024);
}

/* ---- reduced cwnd (ssthresh) ------------------------------------------ */

/* Exact: ceil(cwnd * (1 - alpha / 2)), alpha = alpha_fp / 2^30, at least 2. */
static uint32_t ref_reduced_cwnd(uint32_t cwnd, uint32_t alpha_fp)
{
	const __uint128_t two = (__uint128_t)1 << (DCTCP_ALPHA_FP_SHIFT + 1);
	__uint128_t num = (__uint128_t)cwnd * (two - alpha_fp);
	__uint128_t r = (num + two - 1) / two;

	return r < 2 ? 2 : (uint32_t)r;
}

static void check_reduced_cwnd(uint32_t cwnd, uint32_t alpha_fp)
{
	uint32_t got = dctcp_reduced_cwnd(cwnd, alpha_fp);
	uint32_t want = ref_reduced_cwnd(cwnd, alpha_fp);
	/* 64-bit mantissa: cwnd * alpha_fp / 2^31 is exact */
	long double model = fmaxl(2.0L, (long double)cwnd *
				  (1.0L - alpha_fp / (2.0L * DCTCP_MAX_ALPHA_FP)));

	case_count++;
	if (got != want || fabsl(got - model) >= 1.0L)
		fail_case("reduced_cwnd(cwnd=%u, alpha_fp=%u) = %u, exact %u, float %.3Lf",
			  cwnd, alpha_fp, got, want, model);
	if (got < 2 || (cwnd >= 2 && got > cwnd))
		fail_case("reduced_cwnd(cwnd=%u, alpha_fp=%u) = %u outside [2, cwnd]",
			  cwnd, alpha_fp, got);
}

/*
 * For a given cwnd the result is a step function of alpha: it drops by one
 * where cwnd * alpha_fp crosses a multiple of 2^31. Every internal alpha is
 * 2^30 values; the steps and their neighbours are where rounding goes wrong.
 */
static void check_cwnd_steps(uint32_t cwnd)
{
	const uint64_t two = 1ULL << (DCTCP_ALPHA_FP_SHIFT + 1);

	for (uint64_t k = 0; k * two <= (uint64_t)cwnd * DCTCP_MAX_ALPHA_FP; k++) {
		/* smallest alpha with cwnd * alpha >= k * 2^31 */
		uint64_t step = cwnd ? (k * two + cwnd - 1) / cwnd : 0;

		for (uint64_t a = step ? step - 1 : 0;
		     a <= step + 1 && a <= DCTCP_MAX_ALPHA_FP; a++)
			check_reduced_cwnd(cwnd, (uint32_t)a);
	}
}

static void test_cwnd_exhaustive(void)
{
	/* every reported alpha for windows up to 2048 segments ... */
	for (uint32_t cwnd = 0; cwnd <= 2048; cwnd++)
		for (uint32_t a = 0; a <= DCTCP_MAX_ALPHA; a++)
			check_reduced_cwnd(cwnd, dctcp_alpha_to_fp(a));
	/* ... and every step of the internal alpha for windows up to 4096 */
	for (uint32_t cwnd = 0; cwnd <= 4096; cwnd++)
		check_cwnd_steps(cwnd);
}

static void test_cwnd_random(void)
{
	for (int i = 0; i < RANDOM_ROUNDS; i++)
		check_reduced_cwnd(rnd_counter(),
				   rnd_below(DCTCP_MAX_ALPHA_FP + 1));
}

static void test_cwnd_edges(void)
{
	static const uint32_t cwnds[] = { 0, 1, 2, 3, 4, 10, 1U << 22,
					  (1U << 22) + 1, UINT32_MAX - 1,
					  UINT32_MAX };
	const uint32_t max = DCTCP_MAX_ALPHA_FP;

	for (uint32_t a = 0; a <= DCTCP_MAX_ALPHA; a++) {
		expect_u32("cwnd 2 never goes below 2",
			   dctcp_reduced_cwnd(2, dctcp_alpha_to_fp(a)), 2);
		expect_u32("cwnd 0 is floored to 2",
			   dctcp_reduced_cwnd(0, dctcp_alpha_to_fp(a)), 2);
	}
	for (size_t i = 0; i < ARRAY_SIZE(cwnds); i++) {
		uint32_t c = cwnds[i];

		expect_u32("alpha 0 keeps cwnd", dctcp_reduced_cwnd(c, 0),
			   c < 2 ? 2 : c);
		expect_u32("alpha 1024 halves cwnd (rounded up)",
			   dctcp_reduced_cwnd(c, max), c < 4 ? 2 : c - c / 2);
		/* Out-of-range alpha is treated as 1.0, not wrapped. */
		expect_u32("alpha > 1.0 is clamped",
			   dctcp_reduced_cwnd(c, UINT32_MAX),
			   dctcp_reduced_cwnd(c, max));
		check_reduced_cwnd(c, 1);
		check_reduced_cwnd(c, max - 1);
	}
	/* The 32-bit product cwnd * alpha of the 3.18 code wraps here. */
	expect_u32("cwnd 2^22 alpha 1024", dctcp_reduced_cwnd(1U << 22, max),
		   1U << 21);
}

/* ---- alpha update ------------------------------------------------------ */

/*
 * Specification of dctcp_next_alpha(), checked against exact rationals
 * (alpha in 1/2^30 units, s = shift_g, g = 1/2^s):
 *
 *   exact = (1 - g) * alpha + g * F * 2^30 = num / den with
 *   num = alpha * (2^s - 1) * total + marked * 2^30, den = 2^s * total.
 *
 * - total == 0 or marked == 0: the result is the decayed alpha alone,
 *   alpha - (alpha >> s), or 0 once that shift is 0 (decay to zero).
 * - otherwise |result - exact| < 1: only the two terms are truncated, and
 *   (1 - g) * alpha is rounded up by less than alpha * g < 1 when alpha < 2^s.
 * - always 0 <= result <= 2^30.
 */
static void check_next_alpha(uint32_t alpha, uint32_t marked, uint32_t total,
			     uint32_t s)
{
	uint32_t got = dctcp_next_alpha(alpha, marked, total, s);
	uint32_t decayed = (alpha >> s) ? alpha - (alpha >> s) : 0;
	__uint128_t num, den, lhs, err;

	case_count++;
	if (got > DCTCP_MAX_ALPHA_FP) {
		fail_case("next_alpha(%u, %u, %u, g=1/2^%u) = %u > 2^30",
			  alpha, marked, total, s, got);
		return;
	}

	if (!total || !marked) {
		if (got != decayed)
			fail_case("next_alpha(%u, %u, %u, g=1/2^%u) = %u, want pure decay %u",
				  alpha, marked, total, s, got, decayed);
		return;
	}

	num = (__uint128_t)alpha * ((1U << s) - 1) * total +
	      ((__uint128_t)marked << DCTCP_ALPHA_FP_SHIFT);
	den = (__uint128_t)total << s;
	lhs = (__uint128_t)got * den;
	err = lhs >= num ? lhs - num : num - lhs;

	/* |got - num/den| < 1  <=>  |got * den - num| < den */
	if (err >= den) {
		double g = 1.0 / (1U << s);
		double model = (1 - g) * alpha +
			       g * (double)DCTCP_MAX_ALPHA_FP * marked / total;

		fail_case("next_alpha(%u, %u, %u, g=1/2^%u) = %u, exact %.4f: too far off",
			  alpha, marked, total, s, got, model);
	}
}

static void test_alpha_exhaustive(void)
{
	for (uint32_t s = 0; s <= DCTCP_MAX_SHIFT_G; s++) {
		for (uint32_t total = 0; total <= 32; total++) {
			for (uint32_t marked = 0; marked <= total; marked++) {
				/* every reported alpha ... */
				for (uint32_t a = 0; a <= DCTCP_MAX_ALPHA; a++)
					check_next_alpha(dctcp_alpha_to_fp(a),
							 marked, total, s);
				/* ... and every internal one below 2 */
				for (uint32_t a = 0; a < 2048; a++)
					check_next_alpha(a, marked, total, s);
			}
		}
	}
}

static void test_alpha_random(void)
{
	for (int i = 0; i < RANDOM_ROUNDS; i++) {
		uint32_t total = rnd_counter();
		uint32_t marked = total ? (uint32_t)(rnd64() % ((uint64_t)total + 1)) : 0;

		/* Fully marked and unmarked RTTs are common: test them. */
		if (!rnd_below(8))
			marked = rnd_below(2) ? total : 0;
		check_next_alpha(rnd_below(DCTCP_MAX_ALPHA_FP + 1), marked,
				 total, rnd_below(DCTCP_MAX_SHIFT_G + 1));
	}
}

/* Against a floating-point model: mean error well below one internal unit. */
static void test_alpha_float_model(void)
{
	double err_sum = 0, err_max = 0;
	int n = 0;

	for (int i = 0; i < RANDOM_ROUNDS / 4; i++) {
		uint32_t s = rnd_below(DCTCP_MAX_SHIFT_G + 1);
		uint32_t alpha = (1U << s) +
				 rnd_below(DCTCP_MAX_ALPHA_FP + 1 - (1U << s));
		uint32_t total = 1 + rnd_below(UINT32_MAX);
		uint32_t marked = (uint32_t)(rnd64() % ((uint64_t)total + 1));
		double g = 1.0 / (1U << s);
		double model = (1 - g) * alpha +
			       g * (double)DCTCP_MAX_ALPHA_FP * marked / total;
		double err = fabs(dctcp_next_alpha(alpha, marked, total, s) - model);

		err_sum += err;
		err_max = fmax(err_max, err);
		n++;
	}
	case_count += n;
	printf("# float model: |error| mean %.4f max %.4f (1/2^30 units), %d cases\n",
	       err_sum / n, err_max, n);
	if (err_sum / n >= 1.0 || err_max > 1.000001)
		fail_case("error mean %.4f max %.4f", err_sum / n, err_max);
}

static void expect_alpha(const char *what, uint32_t alpha_fp, uint32_t marked,
			 uint32_t total, uint32_t s, uint32_t want)
{
	expect_u32(what, dctcp_alpha_from_fp(dctcp_next_alpha(alpha_fp, marked,
							      total, s)),
		   want);
}

/* Expected values in reported (1/1024) units. */
static void test_alpha_edges(void)
{
	const uint32_t max = UINT32_MAX, one = DCTCP_MAX_ALPHA_FP;

	/* g = 1 (shift 0): alpha is exactly F, history is forgotten. */
	expect_alpha("g=1, F=1", 0, max, max, 0, 1024);
	expect_alpha("g=1, F=0", one, 0, max, 0, 0);
	expect_alpha("g=1, F=1/2", one, 1U << 31, max, 0, 512);
	expect_alpha("g=1, F=(2^32-2)/(2^32-1)", 0, max - 1, max, 0, 1023);
	/* g = 1/1024 (shift 10) */
	expect_alpha("g=1/1024, alpha 0, F=1", 0, max, max, 10, 1);
	expect_alpha("g=1/1024, alpha 1024, F=1", one, max, max, 10, 1024);
	expect_alpha("g=1/1024, alpha 1024, F=0", one, 0, max, 10, 1023);
	expect_alpha("g=1/1024, alpha 1023, F=0 (no early drop to 0)",
		     dctcp_alpha_to_fp(1023), 0, max, 10, 1022);
	expect_alpha("g=1/1024, alpha 1, F=1 (grows: mainline sticks at 1)",
		     dctcp_alpha_to_fp(1), max, max, 10, 1);
	expect_u32("g=1/1024, alpha 1, F=1, internal",
		   dctcp_next_alpha(dctcp_alpha_to_fp(1), max, max, 10),
		   (2U << 20) - (1U << 10));
	/* One marked segment in 100 at g = 1/1024 adds 2^20 / 100 units, and
	 * the next unmarked RTT decays it by 1/1024 instead of dropping it
	 * (the 20-bit update zeroed it: alpha stuck near 0 with sparse marks).
	 */
	expect_u32("g=1/1024, alpha 0, F=1/100",
		   dctcp_next_alpha(0, 1, 100, 10), (1U << 20) / 100);
	expect_u32("g=1/1024, alpha 10485, F=0 decays by 1/1024",
		   dctcp_next_alpha(10485, 0, 100, 10), 10485 - 10);
	/* Default g = 1/16. */
	expect_alpha("g=1/16, alpha 0, F=1", 0, max, max, 4, 64);
	expect_alpha("g=1/16, alpha 1024, F=1", one, max, max, 4, 1024);
	expect_alpha("g=1/16, alpha 1024, F=0", one, 0, 1, 4, 960);
	expect_u32("g=1/16, internal alpha 15, F=0 decays to 0",
		   dctcp_next_alpha(15, 0, 10, 4), 0);
	/* Counters near 2^32: a 32-bit "marked << 10" wraps. */
	expect_alpha("marked 2^31, total 2^32-1, g=1", 0, 1U << 31, max, 0, 512);
	expect_alpha("marked 2^22, total 2^22, g=1", 0, 1U << 22, 1U << 22, 0, 1024);
	expect_alpha("marked 2^32-1, total 2^32-1, g=1/2", 0, max, max, 1, 512);
	/* More marks than acked (counters sampled racily) stays at 1.0. */
	expect_alpha("marked > total saturates, g=1", 0, 10, 5, 0, 1024);
	expect_alpha("marked > total saturates, g=1/16", one, max, 1, 4, 1024);
	/* Empty RTT: only decay. */
	expect_alpha("total 0, alpha 1024", one, 0, 0, 4, 960);
	expect_alpha("total 0, marked > 0 ignored", one, 5, 0, 4, 960);
	/* Defensive clamps (the module's param setters already reject these). */
	expect_u32("shift_g 11 acts as 10", dctcp_next_alpha(one, 0, 1, 11),
		   one - (one >> 10));
	expect_u32("shift_g 32 acts as 10", dctcp_next_alpha(0, max, max, 32),
		   one >> 10);
	expect_alpha("alpha > 1.0 acts as 1.0", UINT32_MAX, 0, 1, 4, 960);
}

/* Without marks alpha falls strictly monotonically to exactly 0. */
static void test_alpha_decays_to_zero(void)
{
	for (uint32_t s = 0; s <= DCTCP_MAX_SHIFT_G; s++) {
		int worst = 0;

		for (uint32_t start = 0; start <= DCTCP_MAX_ALPHA; start++) {
			uint32_t alpha = dctcp_alpha_to_fp(start);
			int steps = 0;

			while (alpha && steps < 1000000) {
				uint32_t next = dctcp_next_alpha(alpha, 0, 1000, s);

				if (next >= alpha) {
					fail_case("g=1/2^%u: alpha_fp %u -> %u without marks",
						  s, alpha, next);
					break;
				}
				alpha = next;
				steps++;
			}
			case_count++;
			if (alpha)
				fail_case("g=1/2^%u: alpha %u never reaches 0 (stuck at %u)",
					  s, start, alpha);
			if (steps > worst)
				worst = steps;
		}
		if (s == 4 || s == 10)
			printf("# g=1/2^%u: alpha 1024 -> 0 in at most %d RTTs\n",
			       s, worst);
	}
}

/* With constant F, alpha settles within 2^s internal units (at most one
 * reported unit) of F, from above and from below, for every g: the fixed
 * points of the update are (F * 2^30 - 2^s, F * 2^30 + 2^s). A 10-bit
 * update with mainline's decay rule settles at g * F instead for g <= 1/64.
 */
static void check_settles(uint32_t m, uint32_t t, uint32_t s, uint32_t start)
{
	double want = (double)DCTCP_MAX_ALPHA_FP * m / t;
	uint32_t alpha = start;

	case_count++;
	for (int i = 0; i < 200000; i++)
		alpha = dctcp_next_alpha(alpha, m, t, s);

	if (fabs(alpha - want) >= (1U << s) && !(m == 0 && alpha == 0))
		fail_case("g=1/2^%u, F=%u/%u, from %u: alpha settles at %.2f, want %.2f +- %.2f",
			  s, m, t, dctcp_alpha_from_fp(start),
			  alpha * DCTCP_MAX_ALPHA / (double)DCTCP_MAX_ALPHA_FP,
			  want * DCTCP_MAX_ALPHA / (double)DCTCP_MAX_ALPHA_FP,
			  (1U << s) * DCTCP_MAX_ALPHA / (double)DCTCP_MAX_ALPHA_FP);
}

static void test_alpha_tracks_f(void)
{
	static const uint32_t fractions[][2] = {
		{ 0, 1 }, { 1, 1000 }, { 1, 7 }, { 1, 2 }, { 999, 1000 }, { 1, 1 },
	};

	for (uint32_t s = 0; s <= DCTCP_MAX_SHIFT_G; s++) {
		for (size_t f = 0; f < ARRAY_SIZE(fractions); f++) {
			check_settles(fractions[f][0], fractions[f][1], s, 0);
			check_settles(fractions[f][0], fractions[f][1], s,
				      DCTCP_MAX_ALPHA_FP);
		}
	}
}

/* More marks never give a smaller alpha; a larger alpha stays larger. */
static void test_alpha_monotonic(void)
{
	for (uint32_t s = 0; s <= DCTCP_MAX_SHIFT_G; s++) {
		for (uint32_t a = 0; a <= DCTCP_MAX_ALPHA; a++) {
			uint32_t alpha = dctcp_alpha_to_fp(a);
			uint32_t prev = 0;

			for (uint32_t marked = 0; marked <= 100; marked++) {
				uint32_t got = dctcp_next_alpha(alpha, marked, 100, s);

				case_count++;
				if (got < prev)
					fail_case("g=1/2^%u alpha %u: marked %u gives %u < %u",
						  s, alpha, marked, got, prev);
				prev = got;
			}
			if (alpha && dctcp_next_alpha(alpha, 30, 100, s) <
				     dctcp_next_alpha(alpha - 1, 30, 100, s))
				fail_case("g=1/2^%u: not monotonic in alpha at %u",
					  s, alpha);
		}
	}
}

/*
 * Sparse marks, small g: with random per-segment marking, the mean alpha of
 * the fixed-point update stays within 5 % of a floating-point EWMA fed the
 * same marks, for every g, starting from alpha 0. Both see identical RTTs,
 * so the difference is the arithmetic alone: a rule that zeroes or
 * truncates small values of alpha shows up as a large relative error when
 * g * F is small (the example: 100 segments per RTT, 1 % marked,
 * g = 1/1024, float mean 10.2/1024).
 */
#define SPARSE_RTTS	200000
#define SPARSE_MAX_ERR	0.05

struct sparse_case {
	uint32_t segs;		/* segments per RTT */
	double p;		/* per-segment marking probability */
};

static void check_sparse(const struct sparse_case *c, const uint16_t *marks)
{
	double sum[DCTCP_MAX_SHIFT_G + 1] = { 0 };
	double fsum[DCTCP_MAX_SHIFT_G + 1] = { 0 };
	uint32_t alpha[DCTCP_MAX_SHIFT_G + 1] = { 0 };
	double fl[DCTCP_MAX_SHIFT_G + 1] = { 0 };
	/* reported units (1/1024) per internal unit */
	const double unit = (double)DCTCP_MAX_ALPHA / DCTCP_MAX_ALPHA_FP;

	for (int r = 0; r < SPARSE_RTTS; r++) {
		for (uint32_t s = 0; s <= DCTCP_MAX_SHIFT_G; s++) {
			double g = 1.0 / (1U << s);

			alpha[s] = dctcp_next_alpha(alpha[s], marks[r],
						    c->segs, s);
			fl[s] = (1 - g) * fl[s] +
				g * DCTCP_MAX_ALPHA_FP * marks[r] / c->segs;
			sum[s] += alpha[s];
			fsum[s] += fl[s];
		}
	}
	for (uint32_t s = 0; s <= DCTCP_MAX_SHIFT_G; s++) {
		double err = (sum[s] - fsum[s]) / fsum[s];

		case_count++;
		printf("# g=1/2^%-2u%5u seg/RTT p=%4.1f%%: alpha %8.3f float %8.3f /1024 %+.2f%%\n",
		       s, c->segs, c->p * 100, sum[s] / SPARSE_RTTS * unit,
		       fsum[s] / SPARSE_RTTS * unit, err * 100);
		if (fabs(err) > SPARSE_MAX_ERR)
			fail_case("g=1/2^%u, %u seg/RTT, p=%.3f: mean alpha off by %+.1f%%",
				  s, c->segs, c->p, err * 100);
	}
}

static void test_alpha_sparse_marks(void)
{
	static const struct sparse_case cases[] = {
		{ 100, 0.001 }, { 100, 0.01 }, { 100, 0.1 }, { 100, 0.5 },
		{ 10, 0.01 }, { 1000, 0.001 },
	};
	static uint16_t marks[SPARSE_RTTS];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		/* P(segment marked) = p: a uniform 64-bit draw below p * 2^64 */
		uint64_t below = (uint64_t)(cases[i].p * 18446744073709551616.0);

		for (int r = 0; r < SPARSE_RTTS; r++) {
			marks[r] = 0;
			for (uint32_t k = 0; k < cases[i].segs; k++)
				marks[r] += rnd64() < below;
		}
		check_sparse(&cases[i], marks);
	}
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "alpha units: reported 1/1024 <-> internal 1/2^30", test_alpha_units },
	{ "reduced_cwnd exhaustive, cwnd 0..2048 x all reported alpha, 0..4096 x every step",
	  test_cwnd_exhaustive },
	{ "reduced_cwnd random cwnd over 32 bits", test_cwnd_random },
	{ "reduced_cwnd edges (cwnd 2, alpha 0/1024, 2^22, 2^32-1)", test_cwnd_edges },
	{ "next_alpha exhaustive, g 0..10 x marked<=total<=32 x alpha",
	  test_alpha_exhaustive },
	{ "next_alpha random counters over 32 bits", test_alpha_random },
	{ "next_alpha vs float model", test_alpha_float_model },
	{ "next_alpha edges (alpha 0/1024, g 0/10, counters near 2^32)", test_alpha_edges },
	{ "next_alpha decays to exactly 0 without marks", test_alpha_decays_to_zero },
	{ "next_alpha settles within 1/1024 of constant F for every g", test_alpha_tracks_f },
	{ "next_alpha monotonic in marks and in alpha", test_alpha_monotonic },
	{ "next_alpha mean within 5% of a float EWMA, sparse random marks, every g",
	  test_alpha_sparse_marks },
};

int main(void)
{
	const char *env = getenv("DCTCP_UNIT_SEED");
	uint64_t seed;

	seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ 0x9e3779b97f4a7c15ULL;
	rng_state = seed ? seed : 1;

	printf("TAP version 13\n");
	printf("1..%zu\n", ARRAY_SIZE(tests));
	printf("# seed %llu (replay: DCTCP_UNIT_SEED=%llu)\n",
	       (unsigned long long)seed, (unsigned long long)seed);

	for (size_t i = 0; i < ARRAY_SIZE(tests); i++)
		run_test(tests[i].name, tests[i].fn);

	printf("# %d of %d tests failed\n", failed_tests, test_no);
	return failed_tests ? 1 : 0;
}
