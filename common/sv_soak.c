// SPDX-License-Identifier: Apache-2.0
#include "sv_soak.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int sv_soak_open(struct sv_soak *s, const struct sv_soak_cfg *cfg, int64_t now_mono_ns)
{
	const struct sv_soak_opts *o = cfg->o;
	struct sv_interval_cfg ic = {
		.w = cfg->w,
		.interval_ns = (int64_t)o->interval_s * SV_NSEC_PER_SEC,
		.max_keys = cfg->max_keys,
		.tick_clock = CLOCK_MONOTONIC,
		.tick_clock_id = SV_CLOCK_MONOTONIC,
	};
	struct sv_flight_cfg fc = {
		.w = cfg->w,
		.events_per_s = o->flight_rate,
		.pre_ns = (int64_t)o->flight_s * SV_NSEC_PER_SEC,
		.key_events_per_s = cfg->key_events_per_s,
	};
	int err;

	memset(s, 0, sizeof(*s));
	s->late_ns = (int64_t)o->late_us * SV_NSEC_PER_USEC;
	/* a grace of at most the interval (sv_interval's rule): 1 s intervals close after half a second */
	if (ic.interval_ns <= SV_INTERVAL_GRACE_NS_DEFAULT)
		ic.grace_ns = ic.interval_ns / 2;
	err = sv_interval_open(&s->iv, &ic, now_mono_ns);
	if (err)
		return err;
	err = sv_flight_open(&s->fl, &fc);
	if (err) {
		sv_interval_close(s->iv, now_mono_ns, NULL);
		s->iv = NULL;
	}
	return err;
}

int sv_soak_tick(struct sv_soak *s, int64_t now_mono_ns)
{
	int err = sv_interval_tick(s->iv, now_mono_ns);
	int e = sv_flight_tick(s->fl, sv_interval_to_tai(s->iv, now_mono_ns));

	return err ? err : e;
}

int sv_soak_close(struct sv_soak *s, int64_t now_mono_ns, struct sv_soak_stats *st)
{
	struct sv_soak_stats dummy;
	int err, e;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	if (!s->iv)
		return 0;
	st->unkeyed = s->unkeyed;
	/* the windows first: their records go out before the last intervals, as a tick orders them */
	err = sv_flight_close(s->fl, sv_interval_to_tai(s->iv, now_mono_ns), &st->fl);
	e = sv_interval_close(s->iv, now_mono_ns, &st->iv);
	s->iv = NULL;
	s->fl = NULL;
	return err ? err : e;
}

static uint64_t not_kept(const struct sv_flight_stats *fl)
{
	uint64_t n = fl->busy;

	for (unsigned c = 0; c < SV_WINDOW_CLASSES; c++)
		n += fl->dropped[c];
	return n;
}

void sv_soak_stats_json(struct sv_json *j, const struct sv_soak_stats *st)
{
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "intervals", st->iv.intervals);
	sv_json_kv_uint(j, "interval_records", st->iv.records);
	sv_json_kv_uint(j, "hist_records", st->iv.hists);
	sv_json_kv_uint(j, "keys", st->iv.keys);
	sv_json_kv_uint(j, "strays", st->iv.strays);
	sv_json_kv_uint(j, "unkeyed", st->unkeyed);
	sv_json_kv_uint(j, "clock_steps", st->iv.steps);
	sv_json_kv_uint(j, "windows", st->fl.windows);
	sv_json_kv_uint(j, "window_records", st->fl.records);
	sv_json_kv_uint(j, "merged", st->fl.merged);
	sv_json_key(j, "not_kept");
	sv_json_object_begin(j);
	for (unsigned c = 0; c < SV_WINDOW_CLASSES; c++)
		sv_json_kv_uint(j, sv_rec_window_class_name(c), st->fl.dropped[c]);
	sv_json_kv_uint(j, "busy", st->fl.busy);
	sv_json_object_end(j);
	sv_json_kv_uint(j, "ring_lost", st->fl.lost);
	sv_json_kv_uint(j, "write_errors", st->iv.write_errors + st->fl.write_errors);
	sv_json_kv_uint(j, "memory", (uint64_t)(st->iv.memory + st->fl.memory));
	sv_json_object_end(j);
}

int sv_soak_stats_format(const struct sv_soak_stats *st, char *buf, size_t size)
{
	return snprintf(buf, size,
			"soak: %" PRIu64 " intervals (%" PRIu64 " INTERVAL, %" PRIu64 " HIST records), %" PRIu64
			" windows (%" PRIu64 " records, %" PRIu64 " triggers merged), %" PRIu64
			" windows not kept (budget or busy), %.1f MiB held",
			st->iv.intervals, st->iv.records, st->iv.hists, st->fl.windows, st->fl.records, st->fl.merged,
			not_kept(&st->fl), (double)(st->iv.memory + st->fl.memory) / 1048576.0);
}
