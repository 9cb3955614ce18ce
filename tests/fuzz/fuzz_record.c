// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the record reader (svreport reads files copied from other hosts): any byte string
 * opens or fails with a named error, iterates to an end or a named error (stepping over damaged blocks,
 * with counts that fit the input), and exports to CSV without crashing, leaking or reading out of bounds.
 * The soak kinds (INTERVAL, WINDOW, CLOCK) it hands out hold the rules the reader checks (seeds: a record with
 * every soak kind, tests/fuzz/seeds/record_soak.svrec, and one of format 1.1, tests/data/record-v1.1.svrec).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sv_record.h"
#include "sv_stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a reader says it stepped over or dropped must fit in the input: each skip covers >= 8 octets after
 * the 256-octet header (a tail at least one), no count comes from a header that could not hold it, each
 * dropped record is >= 8 octets, and any damage names its first and last place inside the input. */
static void check_damage(const struct sv_record_reader *r, size_t size)
{
	struct sv_record_reader_damage d;
	bool any;

	sv_record_reader_get_damage(r, &d);
	any = d.blocks_skipped || d.records_invalid || d.records_orphaned;
	if (d.octets_skipped > size || d.blocks_skipped * 8 > size || d.records_lost > size / 8 ||
	    d.records_invalid + d.records_orphaned > size / 8 || d.skips_uncounted > d.blocks_skipped ||
	    (any && (d.first_offset < SV_REC_HEADER_SIZE || d.last_offset < d.first_offset ||
		     d.last_offset >= size || d.first_err == SV_RECORD_OK)) ||
	    (!any && d.first_err != SV_RECORD_OK) || (!d.blocks_skipped && d.octets_skipped))
		abort();
}

/* What the reader hands out of the soak kinds satisfies the rules it checks (else it was to be dropped). */
static void check_soak(const struct sv_rec *rec)
{
	switch (rec->kind) {
	case SV_REC_INTERVAL: {
		const struct sv_rec_interval *iv = &rec->u.interval;

		if (!iv->period_ms || (uint64_t)iv->drop_count[0] + iv->drop_count[1] > iv->dropped ||
		    (iv->flags & ~SV_REC_INTERVAL_F_ALL) || iv->point >= SV_POINT_COUNT)
			abort();
		break;
	}
	case SV_REC_WINDOW: {
		const struct sv_rec_window *w = &rec->u.window;

		if (!(w->flags & SV_REC_WINDOW_F_SUMMARY) &&
		    (w->cls >= SV_WINDOW_CLASSES || w->t_start_ns > w->t_end_ns || w->stream == SV_REC_STREAM_NONE))
			abort();
		break;
	}
	case SV_REC_CLOCK:
		if (rec->u.clock.clock >= SV_CLOCK_COUNT ||
		    (int64_t)((uint64_t)rec->u.clock.new_to_tai_ns - (uint64_t)rec->u.clock.old_to_tai_ns) !=
			    rec->u.clock.step_ns)
			abort();
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sv_stats h;
	struct sv_record_reader *r = NULL;
	struct sv_rec rec;
	char msg[256];
	FILE *f, *out;
	int n = 0, err;

	/* the serialized histogram parser sees raw bytes too */
	(void)sv_stats_deserialize(&h, data, size);
	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "rb");
	if (!f)
		return 0;
	out = fopen("/dev/null", "w");
	err = sv_record_reader_open_fp(&r, f, "fuzz");
	if (r) {
		sv_record_reader_strerror(r, msg, sizeof(msg));
		if (!err) {
			while ((err = sv_record_reader_next(r, &rec)) == 1 && n++ < 100000) {
				int64_t tai;

				if (rec.kind == SV_REC_EVENT && out)
					sv_record_csv_event(out, r, &rec.u.event);
				check_soak(&rec);
				(void)sv_record_reader_to_tai(r, 0, &tai); /* a CLOCK record may have moved it */
			}
			if (err < 0)
				sv_record_reader_strerror(r, msg, sizeof(msg));
			check_damage(r, size);
		}
		sv_record_reader_close(r);
	}
	if (out)
		fclose(out);
	fclose(f);
	return 0;
}
