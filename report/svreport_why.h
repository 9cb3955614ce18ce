/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svreport's why late by cause: svtrace's WHY records (one per hop of a late frame, its time split into
 * causes that add up to it, sv_record.h), gathered into frames (a frame's hops come one after another in
 * its file), summed over the run (common/sv_why.h: the dominant cause of each frame, every cause's total,
 * the share named) and the worst frames kept; shown by its section (text, JSON, HTML: a stacked bar per
 * frame) after the feeders' waits. Private to svreport (svreport_private.h holds the state in struct svr).
 */
#ifndef SVREPORT_WHY_H
#define SVREPORT_WHY_H

#include <stdbool.h>
#include <stdint.h>

#include "sv_record.h"
#include "sv_why.h"

#define SVR_MAX_WHY 32		/* the worst decomposed frames kept (their bars) */

struct svr_why_frame {
	uint32_t stream;		/* global stream, UINT32_MAX unknown */
	int16_t guest;			/* -1 none */
	uint32_t tai_sec;
	uint16_t smp_cnt;
	unsigned n;			/* hops: T1-T2a, T2a-T2b */
	int64_t total_ns;		/* the hops' time */
	struct sv_rec_why hop[2];
};

struct svr_why {
	struct sv_why_tally tally;	/* every frame */
	uint64_t records;		/* WHY records read */
	uint64_t orphans;		/* hops that did not fit a frame (more than two in a row): counted apart */
	struct svr_why_frame cur;	/* the frame being gathered */
	bool have_cur, done;
	unsigned nworst;
	struct svr_why_frame worst[SVR_MAX_WHY];	/* worst first after svr_why_finish */
};

struct svr;
/* A WHY record of global stream @stream (UINT32_MAX unknown) and guest @guest (-1 none). */
void svr_why_record(struct svr *r, uint32_t stream, int guest, const struct sv_rec_why *y);
/* The last frame gathered, the lists sorted (once: every emitter may call it). */
struct svr_why *svr_why_finish(struct svr *r);

#endif /* SVREPORT_WHY_H */
