/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svtrace's streams: BPF hands out a small id per stream (map "streams", keyed by APPID + the whole svID,
 * svtrace.h); user space learns each id's identity once, the first time the id comes up, gives it the
 * index of svtrace_corr's statistics, applies the --svid filter, says when an svID is longer than BPF
 * keeps, defines the stream in the record, and learns its sample rate from the smpCnt wrap.
 *
 * The table is a plain array indexed by BPF id (no allocation, nothing to free): the per-copy lookup
 * (svtrace_streams_of) is an inline array access, on the hop log's path of ~64000 copies a second. Where
 * an id's identity comes from is the caller's (@key_of: BPF's map in svtrace, a table in the tests).
 */
#ifndef SVTRACE_STREAMS_H
#define SVTRACE_STREAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_rate.h"
#include "svtrace.h"

struct svtrace_corr;
struct svtrace_rec;

#define SVTRACE_STREAM_UNRESOLVED (-1)	/* identity not looked up yet */
#define SVTRACE_STREAM_FILTERED (-2)	/* filtered out (--svid), or no room in svtrace_corr */

/* A BPF stream id as user space knows it. */
struct svtrace_stream {
	int corr;		/* svtrace_corr's index, or SVTRACE_STREAM_UNRESOLVED / _FILTERED */
	uint16_t vlan_tci;	/* the first VLAN tag a copy carried (svtrace_copy.vlan_tci), 0 none */
	struct sv_rate rl;	/* its wrap and rate, learned from the counts in arrival order */
};

/* Where an id's identity comes from: 0 and *@key, or -ENOENT (not there: counted in unknown). */
typedef int svtrace_stream_key_fn(void *ctx, uint32_t id, struct svtrace_stream_key *key);

struct svtrace_streams {
	struct svtrace_stream s[SVTRACE_MAX_STREAMS];		/* by BPF id */
	uint32_t nids;			/* BPF ids below this may be in use */
	uint64_t unknown;		/* ids asked for and not found by key_of */
	uint16_t svid_wire_len[SVTRACE_MAX_STREAMS];	/* by svtrace_corr index; > SVTRACE_SVID_MAX: truncated */
	const char *svid;		/* --svid (NULL: every stream) */
	struct svtrace_corr *corr;
	struct svtrace_rec *rec;	/* stream definitions go there (NULL: no record) */
	svtrace_stream_key_fn *key_of;
	void *key_ctx;
};

/* Every id unresolved. @svid (kept, not copied) NULL or the --svid filter; @rec may be NULL. */
void svtrace_streams_init(struct svtrace_streams *ss, struct svtrace_corr *corr, struct svtrace_rec *rec,
			  const char *svid, svtrace_stream_key_fn *key_of, void *key_ctx);

/* Resolves id @id (< SVTRACE_MAX_STREAMS) through key_of. NULL when it is filtered out or unknown. */
struct svtrace_stream *svtrace_streams_first(struct svtrace_streams *ss, uint32_t id);

/* Id @id resolved with the identity @key already read (BPF's map walked by the caller); raises nids.
 * NULL when @id is out of range or the stream filtered out. */
struct svtrace_stream *svtrace_streams_key(struct svtrace_streams *ss, uint32_t id,
					   const struct svtrace_stream_key *key);

/* Per copy: a known id is one array access; the first time, svtrace_streams_first(). NULL: not traced. */
static inline struct svtrace_stream *svtrace_streams_of(struct svtrace_streams *ss, uint32_t id)
{
	if (id >= SVTRACE_MAX_STREAMS)
		return NULL;
	if (ss->s[id].corr >= 0)
		return &ss->s[id];
	return svtrace_streams_first(ss, id);
}

/* One copy's smpCnt, in arrival order, to libsv's learner (sv_rate_observe(): the rules every tool
 * shares): the record's stream definition follows each change of the rate. */
void svtrace_streams_learn(struct svtrace_streams *ss, struct svtrace_stream *s, uint16_t smp);

/* The stream's rate for aligning a sample to its second: the learned one, else the smallest nominal rate
 * (IEC 61869-9 / 9-2LE) above every smpCnt seen, else 65536 (sv_rate_guess()). */
uint32_t svtrace_streams_rate(const struct svtrace_stream *s);

#endif /* SVTRACE_STREAMS_H */
