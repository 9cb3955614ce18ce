/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Soak mode's flight recorder: the last N seconds (default 2 s) of per-frame records (EVENT) in a ring in
 * memory, written to the record around a trigger (a frame over the latency threshold, a lost, missing or
 * dropped frame, a confRev/quality/simulation change, a counter restart): the N seconds before it and the N
 * after, as EVENT records, then a WINDOW record (docs/record-format.md "Soak records").
 *
 * A window holds one stream and one guest (with the guest-less points' events of that stream: svtrace's T1);
 * a trigger whose window would overlap an open window of the same key merges into it (its end moves, up to
 * a length cap). Each trigger class has its own budget of windows per hour (a token bucket: background noise
 * of one class cannot spend another's), the triggers past it are counted, not kept (each WINDOW record
 * carries the counts so far, and close writes a SUMMARY one when a count changed after the last window).
 * A window merged past (pre + post) is charged for its extra length, so the budget bounds bytes, not only
 * windows. The default budgets share a number of bytes a day among the classes; and whatever the budgets,
 * no window starts while the record's last 24 hours (all of its records: intervals too) plus that window
 * would pass a daily cap (100 MB: the soak's goal per tool), so the disk bound holds even where the
 * intervals' histograms are larger than planned.
 *
 * Memory: the ring (events_per_s x pre x 5/4 records of 64 octets, capped) and the window slots are
 * allocated and touched at open; nothing later. Per packet: sv_flight_push() copies one record into the
 * ring; sv_flight_trigger() looks at the open windows (at most max_open) and the class's bucket. Records are
 * written only by sv_flight_tick() (a bounded walk of the ring per open window) and sv_flight_close(), from
 * the tool's loop, so a window's records go out in ring order (time order) whatever merged into it.
 * Every time is on the record file's clock (the EVENT records' t_ns). Not thread-safe.
 */
#ifndef SV_FLIGHT_H
#define SV_FLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_clock.h"
#include "sv_record.h"

#define SV_FLIGHT_PRE_NS_DEFAULT (2 * SV_NSEC_PER_SEC)	/* N */
#define SV_FLIGHT_RING_MAX (1u << 20)			/* records (64 MiB): the ring's default cap */
#define SV_FLIGHT_SHARE_DEFAULT 40000000u		/* bytes a day the default budgets give windows */
#define SV_FLIGHT_DAY_CAP_DEFAULT 100000000u		/* the record's bytes a day past which no window starts */
#define SV_FLIGHT_OPEN_DEFAULT 8u			/* windows open at once */
#define SV_FLIGHT_SCAN_DEFAULT 16384u			/* ring records a tick walks per open window */
#define SV_FLIGHT_SETTLE_NS_DEFAULT (100 * SV_NSEC_PER_MSEC) /* frames of a window may arrive this late */
#define SV_FLIGHT_BUDGET_MAX 1000000u			/* 1000 windows an hour, in thousandths */

struct sv_flight;

struct sv_flight_cfg {
	struct sv_record_writer *w;	/* the records go there (not owned: closed by the caller after
					 * sv_flight_close) */
	uint32_t events_per_s;		/* EVENT records pushed per second, all streams: sizes the ring */
	uint32_t ring_max;		/* the ring's cap in records; 0: SV_FLIGHT_RING_MAX */
	int64_t pre_ns;			/* N before the trigger; 0: SV_FLIGHT_PRE_NS_DEFAULT */
	int64_t post_ns;		/* after it; 0: pre_ns */
	int64_t max_len_ns;		/* a window's length cap, merges included; 0: 2 x (pre + post) */
	/*
	 * The budget per class, in thousandths of a window per hour (1000: one an hour; 66: one in 15 hours).
	 * Each bucket holds an hour's worth (at least one window) and starts full. 0: share_per_day shared
	 * equally by the classes, a window costing key_events_per_s x (pre + post) records: D windows a day per
	 * class, the first at once, the others (D - 1) / 24 an hour (one an hour per class when
	 * key_events_per_s is 0).
	 */
	uint32_t budget_mwph[SV_WINDOW_CLASSES];
	uint32_t key_events_per_s;	/* EVENT records per second of one window's key (stream, guest) */
	uint64_t share_per_day;		/* 0: SV_FLIGHT_SHARE_DEFAULT */
	uint64_t day_cap;		/* 0: SV_FLIGHT_DAY_CAP_DEFAULT; UINT64_MAX: none */
	unsigned max_open;		/* 0: SV_FLIGHT_OPEN_DEFAULT */
	uint32_t scan_per_tick;		/* 0: SV_FLIGHT_SCAN_DEFAULT */
	int64_t settle_ns;		/* 0: SV_FLIGHT_SETTLE_NS_DEFAULT */
};

/* Allocates (and touches) the ring and the slots. 0 and *f, -EINVAL (cfg: no writer, no events_per_s,
 * a budget above SV_FLIGHT_BUDGET_MAX, a negative time), -ENOMEM. */
int sv_flight_open(struct sv_flight **f, const struct sv_flight_cfg *cfg);

/* Per packet: the record the tool would have written (its kind and size are the writer's). */
void sv_flight_push(struct sv_flight *f, const struct sv_rec_event *ev);

struct sv_flight_trigger {
	uint8_t cls;		/* enum sv_rec_window_class */
	uint8_t point;		/* the triggering frame's point (SV_POINT_NONE: none) */
	uint16_t guest;		/* the window's guest; SV_REC_GUEST_NONE: every guest of the stream */
	uint32_t stream;	/* the window's stream (required) */
	int64_t t_ns;		/* when, on the file's clock (the frame's t_ns) */
	uint32_t tai_sec;	/* the triggering frame's join key (0: none) */
	uint16_t smp_cnt;
	int64_t value;		/* its measure: latency (ns), samples lost, drop reason, ... */
};

/*
 * Per packet. Returns 1 (a window opened), 0 (merged into an open window), -ENOBUFS (the class's budget is
 * spent, or the daily cap would be passed: counted as a window not kept, once per would-be window), -EBUSY
 * (every slot open: counted), -EINVAL (class or point out of range, no stream).
 */
int sv_flight_trigger(struct sv_flight *f, const struct sv_flight_trigger *t);

/* From the tool's loop with a time it holds on the file's clock: writes what the open windows hold (at most
 * scan_per_tick ring records walked per window), ends the windows whose end + pre + settle passed (a trigger
 * up to pre after a window's end overlaps it, and merges) with their WINDOW record. Returns 0 or the first
 * writer error. */
int sv_flight_tick(struct sv_flight *f, int64_t now_ns);

struct sv_flight_stats {
	uint64_t pushed;	/* records pushed into the ring */
	uint64_t windows;	/* windows kept (WINDOW records, SUMMARY not counted) */
	uint64_t merged;	/* triggers merged into an open window */
	uint64_t dropped[SV_WINDOW_CLASSES]; /* would-be windows refused by the budget, per class */
	uint64_t capped;	/* of those, refused by the daily cap (the class had budget) */
	uint64_t busy;		/* triggers refused because every slot was open */
	uint64_t records;	/* EVENT records written for windows */
	uint64_t lost;		/* ring records passed over unread by a window's walk (overwritten first) */
	uint64_t write_errors;	/* records the writer refused or could not write */
	uint32_t ring;		/* the ring's size in records */
	uint32_t budget_mwph[SV_WINDOW_CLASSES]; /* the budgets in force */
	uint64_t window_bytes;	/* what one window of (pre + post) is planned to cost */
	size_t memory;		/* octets allocated at open (all of it) */
};
void sv_flight_get_stats(const struct sv_flight *f, struct sv_flight_stats *st);

/* Writes the open windows to the ring's head (flag TRUNCATED on those not at their end), then a SUMMARY
 * WINDOW record when windows were refused after the last one kept; frees @f (NULL: nothing). The final
 * counts into @st (NULL: not wanted). Returns 0 or the first writer error. */
int sv_flight_close(struct sv_flight *f, int64_t now_ns, struct sv_flight_stats *st);

#endif /* SV_FLIGHT_H */
