/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Why late, summed: the decomposition of late frames (WHY records, sv_record.h struct sv_rec_why: one per
 * hop, its time split into causes that add up to it) told per frame and over a run, in the words svtrace
 * and svreport share: a frame's dominant cause (the run queue with the task that held the CPU named), the
 * causes' totals, the share of the late time that went to named causes (all but "unexplained"), the one-line
 * "of 47 late frames: 44 steal, 2 runqueue behind stress-ng (SCHED_FIFO 90), 1 unexplained", and the JSON
 * of a hop and of the totals (svtrace(8) and svreport(1) describe the keys). Pure computation, no
 * allocation: a tally is a plain struct the caller zeroes.
 */
#ifndef SV_WHY_H
#define SV_WHY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_json.h"
#include "sv_record.h"

/* A frame's dominant cause: the cause with the most time over its hops; for the run queue and ksoftirqd's
 * deferral, the holder (the task that ran longest meanwhile, from the hop with the largest share). */
#define SV_WHY_POLICY_UNKNOWN 255	/* sv_rec_why.holder_policy: the holder's policy was not known */

struct sv_why_dom {
	unsigned cause;			/* enum sv_rec_why_cause */
	char holder_comm[16];		/* "" none */
	uint8_t holder_policy, holder_prio;
};

#define SV_WHY_TALLY_DOMS 64	/* distinct dominant causes told apart; more go to "other" */
#define SV_WHY_LINE_DOMS 6	/* in the one-line summary; the rest as "other" */

struct sv_why_dom_count {
	struct sv_why_dom d;
	uint64_t frames;
};

struct sv_why_tally {
	uint64_t frames;			/* frames added */
	int64_t late_ns;			/* their hops' time, summed */
	int64_t ns[SV_REC_WHY_SLOTS];		/* by cause, summed */
	struct sv_why_dom_count dom[SV_WHY_TALLY_DOMS];		/* by dominant cause, most frequent first after sv_why_tally_sort */
	unsigned ndom;
	uint64_t dom_other;			/* frames whose dominant cause found no room */
};

/* The dominant cause of the frame whose hops are @h[0..n) into *@d. Returns its time (ns), 0 when the hops
 * hold no time at all (then d->cause is unexplained). */
int64_t sv_why_dominant(const struct sv_rec_why *h, unsigned n, struct sv_why_dom *d);

/* One late frame (its hops @h[0..n)) into @t. */
void sv_why_tally_add(struct sv_why_tally *t, const struct sv_rec_why *h, unsigned n);
/* Dominant causes, most frequent first (ties: by cause number). */
void sv_why_tally_sort(struct sv_why_tally *t);

/* The share of the late time that went to named causes (all but unexplained), 0..1; 0 with no time. */
double sv_why_named_share(const struct sv_why_tally *t);

/* "runqueue behind stress-ng (SCHED_FIFO 90)", "steal" into @buf. */
void sv_why_dom_format(const struct sv_why_dom *d, char *buf, size_t n);
/* After sv_why_tally_sort: "of 47 late frames: 44 steal, 2 runqueue behind stress-ng (SCHED_FIFO 90), 1
 * unexplained" into @buf (cut to @n, NUL-terminated): the SV_WHY_LINE_DOMS most frequent, then "N other". */
void sv_why_tally_format(const struct sv_why_tally *t, char *buf, size_t n);

/* One hop as a JSON object: from, to, hop_ns, causes (the non-zero ones by name, ns), unexplained_ns,
 * holder (pid, comm, policy, prio, ns; null none), carrier (tid, comm; null: a softirq), cpu, faults,
 * flags (names). @from/@to: the points' names. */
void sv_why_json_hop(struct sv_json *j, const struct sv_rec_why *h, const char *from, const char *to);
/* The run's totals (after sv_why_tally_sort) as the members of the current object: why_frames,
 * why_late_ns, why_named_ns, why_named_share, why_totals (every cause by name, ns), why_dominant (a list:
 * cause, holder, policy, prio, frames; other). */
void sv_why_json_totals(struct sv_json *j, const struct sv_why_tally *t);

#endif /* SV_WHY_H */
