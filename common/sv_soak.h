/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The tools' soak mode (issue 29): their options, and the interval summaries (sv_interval.h) and flight recorder
 * (sv_flight.h) of one record writer opened, ticked and closed together, the same way in every tool.
 *
 * A tool in soak mode writes, instead of one EVENT record per frame, per interval the INTERVAL and HIST records
 * of its keys, and per-frame EVENT records only in the flight recorder's windows around a trigger (a frame over
 * the latency threshold, a loss, a drop, a change, a counter restart). Its per-packet path calls sv_interval_*
 * and sv_flight_push / sv_flight_trigger directly (no allocation, no logging); its loop calls sv_soak_tick().
 *
 * Times: the intervals are placed by the caller's TAI times; the flight recorder's times are the record file's
 * clock, which must be TAI (the tools' live records are): sv_soak_tick() converts the loop's MONOTONIC time
 * with sv_interval's conversion, re-measured, so that a step of the host's clock moves both alike.
 */
#ifndef SV_SOAK_H
#define SV_SOAK_H

#include <stdbool.h>
#include <stdint.h>

#include "sv_flight.h"
#include "sv_interval.h"
#include "sv_json.h"
#include "sv_record.h"

#define SV_SOAK_INTERVAL_S_DEFAULT "10"
#define SV_SOAK_FLIGHT_S_DEFAULT "2"
#define SV_SOAK_LATE_US_DEFAULT "1000"
#define SV_SOAK_FLIGHT_RATE_DEFAULT "64000"	/* 8 streams x 4000 frames/s, two points each */

/* The soak keys of a tool's config struct (each tool's table holds them under these names). */
struct sv_soak_opts {
	bool on;		/* soak */
	uint32_t interval_s;	/* soak_interval_s */
	uint32_t flight_s;	/* flight_seconds: N before and after a trigger */
	uint32_t late_us;	/* soak_late_us: a latency over it is late, and a trigger */
	uint32_t flight_rate;	/* flight_rate: EVENT records a second the ring holds N seconds of */
};
#define SV_SOAK_OPTS_OF(c)                                                                            \
	((struct sv_soak_opts){ .on = (c)->soak, .interval_s = (c)->soak_interval_s,                  \
				.flight_s = (c)->flight_seconds, .late_us = (c)->soak_late_us,        \
				.flight_rate = (c)->flight_rate })
/* Their rows in a tool's config table (sv_config.h and sv_cli.h included): struct @T holds bool soak and
 * uint32_t soak_interval_s, flight_seconds, soak_late_us, flight_rate. */
#define SV_SOAK_CFG_ROWS(T)                                                                           \
	SV_CFG_KEY_BOOL(T, soak, "soak", "false",                                                     \
			"soak mode, with --record: per interval one INTERVAL record per stream and point "  \
			"and the latency histograms (HIST), and per-frame records only in flight-recorder " \
			"windows around an anomaly (late frame, loss, drop, change, counter restart); "     \
			"bounded to ~100 MB a day",                                                          \
			SV_OPT("soak", 0, NULL)),                                                           \
	SV_CFG_KEY_UINT(T, soak_interval_s, "soak_interval_s", 1, 3600, SV_SOAK_INTERVAL_S_DEFAULT,  \
			"soak: the interval, seconds; intervals begin at multiples of it on the TAI scale " \
			"on every host",                                                                     \
			SV_OPT("soak-interval", 0, "S")),                                                   \
	SV_CFG_KEY_UINT(T, flight_seconds, "flight_seconds", 1, 60, SV_SOAK_FLIGHT_S_DEFAULT,         \
			"soak: the flight recorder keeps the last S seconds of per-frame records, and a "   \
			"window holds S seconds before its trigger and S after",                            \
			SV_OPT("flight-seconds", 0, "S")),                                                  \
	SV_CFG_KEY_UINT(T, soak_late_us, "soak_late_us", 1, 100000000, SV_SOAK_LATE_US_DEFAULT,       \
			"soak: a latency over US is late (counted) and opens a window",                     \
			SV_OPT("soak-late-us", 0, "US")),                                                   \
	SV_CFG_KEY_UINT(T, flight_rate, "flight_rate", 1000, 10000000, SV_SOAK_FLIGHT_RATE_DEFAULT,  \
			"soak: per-frame records a second (every stream and point) the flight recorder's "  \
			"ring is sized for (64 octets each; at most 64 MiB)",                               \
			SV_OPT("flight-rate", 0, "N"))

struct sv_soak {
	struct sv_interval *iv;
	struct sv_flight *fl;
	int64_t late_ns;	/* the latency threshold */
	uint64_t unkeyed;	/* entries the tool could not give a key (the key table was full): it counts them */
};

struct sv_soak_cfg {
	struct sv_record_writer *w;	/* TAI clock (not owned) */
	const struct sv_soak_opts *o;
	unsigned max_keys;		/* the interval key table */
	uint32_t key_events_per_s;	/* EVENT records a second of one window's key (a stream's frames x its
					 * points): what a window costs, for the budgets */
};

/* Opens both at @now_mono_ns (CLOCK_MONOTONIC). 0, or -errno from sv_interval_open / sv_flight_open
 * (nothing left open). */
int sv_soak_open(struct sv_soak *s, const struct sv_soak_cfg *cfg, int64_t now_mono_ns);

/* From the tool's loop: both ticks (intervals closed, windows written). Returns the first writer error. */
int sv_soak_tick(struct sv_soak *s, int64_t now_mono_ns);

struct sv_soak_stats {
	struct sv_interval_stats iv;
	struct sv_flight_stats fl;
	uint64_t unkeyed;	/* sv_soak.unkeyed */
};

/* Writes what is open (intervals with flag LAST, windows TRUNCATED) and frees both; counts into @st (NULL: not
 * wanted). A soak never opened (s->iv NULL) is a no-op. Returns the first writer error. */
int sv_soak_close(struct sv_soak *s, int64_t now_mono_ns, struct sv_soak_stats *st);

/* "soak": {...} in a tool's --json summary: intervals, records, windows kept, merged, not kept per class... */
void sv_soak_stats_json(struct sv_json *j, const struct sv_soak_stats *st);
/* One line for stderr: "12 intervals (96 INTERVAL, 24 HIST), 2 windows (1 loss, ...), 0 not kept". */
int sv_soak_stats_format(const struct sv_soak_stats *st, char *buf, size_t size);

#endif /* SV_SOAK_H */
