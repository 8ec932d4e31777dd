// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dctcp_oracle: check every tcp_dctcp trace event recorded in a guest
 * against include/dctcp_math.h, compiled here unchanged.
 *
 *   dctcp_oracle [-m MIN_EVENTS] [RECORDS]
 *
 * RECORDS (default stdin) is what dctcp_trace.sh recorded, one record per
 * line (see dctcp_trace.awk): "P name shift_g alpha_on_init clamp" opens a
 * phase (the module parameters, fixed while it ran), the events follow,
 * "E name count lost" closes it. The checks, per connection (the hashed
 * socket address with its addresses and ports; until the kernel's random
 * pool is ready, tracefs prints "(____ptrval____)" for every socket, and
 * the addresses and ports alone identify it):
 *
 *  init       a connection starts with alpha = dctcp_alpha_to_fp(alpha_on_init)
 *  gain       every alpha update used the phase's shift_g
 *  alpha      alpha == dctcp_next_alpha(alpha_old, delivered_ce, delivered, g)
 *  chain      alpha_old of an update, the alpha of a reduction and of a loss
 *             reaction are the connection's current alpha: the last one an
 *             init, update or loss reaction (the clamp) left. Before its
 *             init event a connection's alpha is 0: the stack zeroes the
 *             private area when it assigns the algorithm, and the alpha
 *             update for the ACK of a SYN runs before init() (in mainline
 *             too)
 *  reduction  ssthresh == dctcp_reduced_cwnd(cwnd, alpha)
 *  loss       ssthresh == max(cwnd / 2, 2); alpha unchanged, or the maximum
 *             if the phase had dctcp_clamp_alpha_on_loss = 1
 *  once       loss reactions at most once per loss episode, which the stack
 *             delimits: after a reaction L1, the next one L2 of the
 *             connection needs one of
 *             (a) everything outstanding at L1 acknowledged: L2.snd_una at
 *                 or after L1's window end (high_seq for fast recovery,
 *                 snd_nxt for an RTO), a new round trip;
 *             (b) an undo event between them (the window was restored);
 *             (c) L2 is a fast recovery, entered from a state below
 *                 Recovery (the stack had ended L1's episode, e.g. by an
 *                 undo that did not need undo_cwnd()), and an ACK moved
 *                 snd_una since L1;
 *             (d) L2 is an RTO, snd_una moved since L1 and at least one
 *                 smoothed RTT (L1.srtt_us) passed: the stack's rule for a
 *                 new RTO in the Loss state.
 *             Two reactions to one event (same snd_una, nothing between)
 *             meet none of them.
 *  fallback   no DCTCP event of a connection after its fallback
 *  input      every line parses, each phase is complete (record count as
 *             the guest counted it) and lost no events in the ring buffer
 *
 * Prints TAP (one test per check above, then the event count against
 * MIN_EVENTS, default 10000), the number of events per kind and per phase,
 * and the first mismatches of each kind. Exit status 0 iff all pass.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dctcp_math.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_LOG		8	/* mismatches printed per check */
#define MAX_CONNS	4096
#define MAX_FIELDS	16
#define TCP_CA_RECOVERY	3	/* enum tcp_ca_state, as in the ca_state field */
/* What %p prints before the kernel's random pool is ready */
#define NO_HASH		"(____ptrval____)"

enum check {
	CHK_INPUT,
	CHK_INIT,
	CHK_GAIN,
	CHK_ALPHA,
	CHK_CHAIN,
	CHK_REDUCTION,
	CHK_LOSS,
	CHK_ONCE,
	CHK_FALLBACK,
	NR_CHECKS,
};

static const char *const check_desc[NR_CHECKS] = {
	[CHK_INPUT]	= "input: every record parses, phases complete, no lost events",
	[CHK_INIT]	= "init: alpha starts at dctcp_alpha_on_init",
	[CHK_GAIN]	= "gain: every alpha update used the phase's dctcp_shift_g",
	[CHK_ALPHA]	= "alpha: every update is dctcp_next_alpha() of its inputs",
	[CHK_CHAIN]	= "chain: each event starts from the alpha the previous one left",
	[CHK_REDUCTION]	= "reduction: every CE reduction is dctcp_reduced_cwnd(cwnd, alpha)",
	[CHK_LOSS]	= "loss: every loss reaction halves (min 2), clamps iff configured",
	[CHK_ONCE]	= "once: loss reactions at most once per round trip",
	[CHK_FALLBACK]	= "fallback: no DCTCP event after a fallback",
};

struct loss {
	bool valid;		/* a reaction since init and no undo after it */
	bool rto;		/* it was an RTO (else fast recovery) */
	double ts;		/* trace time, seconds */
	uint32_t snd_una;
	uint32_t window_end;	/* high_seq (recovery) or snd_nxt (RTO) */
	uint32_t srtt_us;
};

struct conn {
	char *key;		/* "sk/src/dest" */
	bool fell_back;		/* a dctcp_fallback event was seen */
	uint32_t alpha;		/* the connection's current alpha */
	struct loss loss;	/* the last loss reaction */
};

struct phase {
	char name[64];
	unsigned int shift_g;
	unsigned int alpha_on_init;
	unsigned int clamp;
	unsigned long records;	/* records read in this phase */
};

static struct conn conns[MAX_CONNS];
static int nr_conns;
static struct phase phase;
static bool in_phase;
static unsigned long line_no;
static unsigned long mismatches[NR_CHECKS];
static unsigned long checked[NR_CHECKS];
/* events per kind: I A R L U F, and some details */
static unsigned long n_init, n_alpha, n_alpha_marked, n_red, n_recovery, n_rto;
static unsigned long n_clamp, n_undo, n_fallback;
static unsigned long n_phases, n_nohash;

static void mismatch(enum check c, const char *line, const char *fmt, ...)
{
	va_list ap;

	if (mismatches[c]++ >= MAX_LOG)
		return;
	printf("# MISMATCH %s, line %lu: ", check_desc[c], line_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n#   %s\n", line);
}

static void check(enum check c, bool ok, const char *line, const char *fmt, ...)
{
	va_list ap;
	char msg[256];

	checked[c]++;
	if (ok)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mismatch(c, line, "%s", msg);
}

static bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static struct conn *find_conn(const char *key)
{
	for (int i = nr_conns - 1; i >= 0; i--)
		if (!strcmp(conns[i].key, key))
			return &conns[i];
	if (nr_conns == MAX_CONNS) {
		fprintf(stderr, "dctcp_oracle: more than %d connections\n", MAX_CONNS);
		exit(2);
	}
	conns[nr_conns].key = strdup(key);
	if (!conns[nr_conns].key) {
		perror("dctcp_oracle");
		exit(2);
	}
	return &conns[nr_conns++];
}

/* A phase's sockets are all new: forget the last phase's. */
static void forget_conns(void)
{
	for (int i = 0; i < nr_conns; i++)
		free(conns[i].key);
	memset(conns, 0, sizeof(conns[0]) * nr_conns);
	nr_conns = 0;
}

static bool parse_u32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end || end == s || x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	return true;
}

/* parse_u32s: fields[from..from+n) as numbers */
static bool parse_u32s(char **f, int from, int n, uint32_t *v)
{
	for (int i = 0; i < n; i++)
		if (!parse_u32(f[from + i], &v[i]))
			return false;
	return true;
}

/* The connection's alpha must be the one its last event left. */
static void check_chain(struct conn *c, uint32_t alpha, const char *line)
{
	check(CHK_CHAIN, alpha == c->alpha, line,
	      "starts from alpha %u, the connection's is %u", alpha, c->alpha);
}

static void check_fallback(struct conn *c, const char *line)
{
	check(CHK_FALLBACK, !c->fell_back, line, "event after the fallback");
}

static void on_init(struct conn *c, uint32_t *v, const char *line)
{
	uint32_t want = dctcp_alpha_to_fp(phase.alpha_on_init);

	n_init++;
	check(CHK_INIT, v[0] == want, line, "alpha %u, want %u (alpha_on_init %u)",
	      v[0], want, phase.alpha_on_init);
	c->fell_back = false;
	c->alpha = v[0];
	c->loss.valid = false;
}

/* A: delivered delivered_ce shift_g alpha_old alpha */
static void on_alpha(struct conn *c, uint32_t *v, const char *line)
{
	uint32_t want = dctcp_next_alpha(v[3], v[1], v[0], v[2]);

	n_alpha++;
	if (v[1])
		n_alpha_marked++;
	check_fallback(c, line);
	check(CHK_GAIN, v[2] == phase.shift_g, line, "shift_g %u, the phase's is %u",
	      v[2], phase.shift_g);
	check(CHK_ALPHA, v[4] == want, line, "alpha %u, dctcp_next_alpha() gives %u",
	      v[4], want);
	check_chain(c, v[3], line);
	c->alpha = v[4];
}

/* R: cwnd alpha ssthresh */
static void on_reduction(struct conn *c, uint32_t *v, const char *line)
{
	uint32_t want = dctcp_reduced_cwnd(v[0], v[1]);

	n_red++;
	check_fallback(c, line);
	check(CHK_REDUCTION, v[2] == want, line,
	      "ssthresh %u, dctcp_reduced_cwnd() gives %u", v[2], want);
	check_chain(c, v[1], line);
}

/* The "once" rule against the previous reaction; see the top comment. */
static void check_once(struct conn *c, bool rto, double ts, uint32_t ca_state,
		       uint32_t snd_una, const char *line)
{
	const struct loss *l = &c->loss;
	bool new_window, progress, new_recovery, new_rto;

	checked[CHK_ONCE]++;
	if (!l->valid)		/* (b): none yet, or an undo since */
		return;
	new_window = !seq_before(snd_una, l->window_end);
	progress = seq_before(l->snd_una, snd_una);
	new_recovery = !rto && ca_state < TCP_CA_RECOVERY && progress;
	new_rto = rto && progress && (ts - l->ts) * 1e6 >= l->srtt_us;
	if (!new_window && !new_recovery && !new_rto)
		mismatch(CHK_ONCE, line,
			 "%.6f s after the last reaction (srtt %u us), snd_una %u (then %u) before its window end %u",
			 ts - l->ts, l->srtt_us, snd_una, l->snd_una, l->window_end);
}

/* L: ca_state cwnd ssthresh alpha_old alpha snd_una snd_nxt high_seq srtt */
static void on_loss(struct conn *c, bool rto, double ts, uint32_t *v,
		    const char *line)
{
	uint32_t half = v[1] >> 1 > 2 ? v[1] >> 1 : 2;
	uint32_t want_alpha = phase.clamp ? DCTCP_MAX_ALPHA_FP : v[3];

	if (rto)
		n_rto++;
	else
		n_recovery++;
	if (v[4] != v[3])
		n_clamp++;
	check_fallback(c, line);
	check(CHK_LOSS, v[2] == half, line, "ssthresh %u, want max(cwnd/2, 2) = %u",
	      v[2], half);
	check(CHK_LOSS, v[4] == want_alpha, line, "alpha after %u, want %u (clamp %u)",
	      v[4], want_alpha, phase.clamp);
	check_chain(c, v[3], line);
	check_once(c, rto, ts, v[0], v[5], line);
	c->alpha = v[4];
	c->loss = (struct loss){
		.valid = true,
		.rto = rto,
		.ts = ts,
		.snd_una = v[5],
		.window_end = rto ? v[6] : v[7],
		.srtt_us = v[8],
	};
}

static void on_phase_end(char **f, int n, const char *line)
{
	uint32_t count, lost;

	checked[CHK_INPUT]++;
	if (n != 4 || !in_phase || strcmp(f[1], phase.name) ||
	    !parse_u32(f[2], &count) || !parse_u32(f[3], &lost)) {
		mismatch(CHK_INPUT, line, "phase end without its start");
		return;
	}
	if (count != phase.records)
		mismatch(CHK_INPUT, line, "phase %s: %u records recorded, %lu received",
			 phase.name, count, phase.records);
	if (lost)
		mismatch(CHK_INPUT, line, "phase %s: %u events lost in the ring buffer",
			 phase.name, lost);
	printf("# phase %-20s g=1/2^%-2u alpha_on_init=%-4u clamp=%u: %lu events\n",
	       phase.name, phase.shift_g, phase.alpha_on_init, phase.clamp,
	       phase.records);
	in_phase = false;
}

static void on_phase_start(char **f, int n, const char *line)
{
	uint32_t v[3];

	checked[CHK_INPUT]++;
	if (in_phase)
		mismatch(CHK_INPUT, line, "phase %s never ended", phase.name);
	if (n != 5 || !parse_u32s(f, 2, 3, v)) {
		mismatch(CHK_INPUT, line, "malformed phase start");
		in_phase = false;
		return;
	}
	snprintf(phase.name, sizeof(phase.name), "%s", f[1]);
	phase.shift_g = v[0];
	phase.alpha_on_init = v[1];
	phase.clamp = v[2];
	phase.records = 0;
	in_phase = true;
	n_phases++;
	forget_conns();
}

/* One event record: KIND TS KEY VALUES... */
static void on_event(char **f, int n, const char *line)
{
	static const struct {
		char kind;
		int values;
	} kinds[] = {
		{ 'I', 1 }, { 'A', 5 }, { 'R', 3 }, { 'L', 10 }, { 'U', 2 }, { 'F', 0 },
	};
	uint32_t v[MAX_FIELDS];
	int values = -1, from = 3;
	struct conn *c;
	bool rto = false;
	double ts;
	char *end;

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (f[0][0] == kinds[i].kind && !f[0][1])
			values = kinds[i].values;
	if (f[0][0] == 'L' && n > 3) {
		rto = !strcmp(f[3], "rto");
		if (!rto && strcmp(f[3], "recovery"))
			values = -1;
		from = 4;
		values--;
	}
	checked[CHK_INPUT]++;
	ts = n > 1 ? strtod(f[1], &end) : 0;
	if (values < 0 || n != from + values || !in_phase || *end ||
	    !parse_u32s(f, from, values, v) || !strchr(f[2], '/')) {
		mismatch(CHK_INPUT, line, in_phase ? "malformed record" :
			 "record outside a phase");
		return;
	}
	if (!strncmp(f[2], NO_HASH "/", strlen(NO_HASH) + 1)) {
		n_nohash++;
		f[2] += strlen(NO_HASH);	/* "/src/dest" */
	}
	c = find_conn(f[2]);
	switch (f[0][0]) {
	case 'I':
		on_init(c, v, line);
		break;
	case 'A':
		on_alpha(c, v, line);
		break;
	case 'R':
		on_reduction(c, v, line);
		break;
	case 'L':
		on_loss(c, rto, ts, v, line);
		break;
	case 'U':
		n_undo++;
		check_fallback(c, line);
		c->loss.valid = false;
		break;
	case 'F':
		n_fallback++;
		check_fallback(c, line);
		c->fell_back = true;
		break;
	}
}

static void read_records(FILE *in)
{
	char buf[1024], line[1024];
	char *f[MAX_FIELDS + 4];

	while (fgets(buf, sizeof(buf), in)) {
		int n = 0;

		line_no++;
		buf[strcspn(buf, "\n")] = '\0';
		snprintf(line, sizeof(line), "%s", buf);
		for (char *t = strtok(buf, " "); t && n < MAX_FIELDS + 4;
		     t = strtok(NULL, " "))
			f[n++] = t;
		if (!n)
			continue;
		if (!strcmp(f[0], "P")) {
			on_phase_start(f, n, line);
		} else if (!strcmp(f[0], "E")) {
			on_phase_end(f, n, line);
		} else if (!strcmp(f[0], "?")) {
			/* a tcp_dctcp event the guest could not convert */
			phase.records += in_phase;
			check(CHK_INPUT, false, line, "unconvertible event");
		} else {
			phase.records += in_phase;
			on_event(f, n, line);
		}
	}
	if (in_phase)
		mismatch(CHK_INPUT, "(end of input)", "phase %s never ended", phase.name);
}

int main(int argc, char **argv)
{
	unsigned long min_events = 10000, events;
	int opt, test = 0, failed = 0;
	FILE *in = stdin;

	while ((opt = getopt(argc, argv, "m:")) != -1) {
		switch (opt) {
		case 'm':
			min_events = strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: dctcp_oracle [-m MIN_EVENTS] [RECORDS]\n");
			return 2;
		}
	}
	if (optind < argc) {
		in = fopen(argv[optind], "r");
		if (!in) {
			fprintf(stderr, "dctcp_oracle: %s: %s\n", argv[optind], strerror(errno));
			return 2;
		}
	}

	printf("TAP version 13\n1..%d\n", NR_CHECKS + 1);
	read_records(in);
	events = n_init + n_alpha + n_red + n_recovery + n_rto + n_undo + n_fallback;
	printf("# %lu phases, %lu events: init %lu, alpha update %lu (%lu with marks), ",
	       n_phases, events, n_init, n_alpha, n_alpha_marked);
	printf("CE reduction %lu, loss %lu (recovery %lu, rto %lu, clamped %lu), ",
	       n_red, n_recovery + n_rto, n_recovery, n_rto, n_clamp);
	printf("undo %lu, fallback %lu\n", n_undo, n_fallback);
	if (n_nohash)
		printf("# %lu events without a socket hash (random pool not ready): %s\n",
		       n_nohash, "connections told apart by addresses and ports");

	for (int c = 0; c < NR_CHECKS; c++) {
		printf("# %s: %lu checked, %lu mismatches\n", check_desc[c],
		       checked[c], mismatches[c]);
		if (mismatches[c] || (c != CHK_FALLBACK && c != CHK_ONCE && !checked[c])) {
			printf("not ok %d - %s\n", ++test, check_desc[c]);
			failed++;
		} else {
			printf("ok %d - %s\n", ++test, check_desc[c]);
		}
	}
	if (events < min_events) {
		printf("not ok %d - at least %lu events: %lu\n", ++test, min_events, events);
		failed++;
	} else {
		printf("ok %d - at least %lu events: %lu\n", ++test, min_events, events);
	}
	return failed ? 1 : 0;
}
