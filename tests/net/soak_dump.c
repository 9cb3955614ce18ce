// SPDX-License-Identifier: Apache-2.0
/*
 * A soak record (and its rotated parts before it: FILE.N ... FILE.1, FILE) as JSON lines, for the soak tests'
 * checks: STREAM, INTERVAL (every counter), HIST (its count), WINDOW, CLOCK and EVENT records (in soak mode
 * only the flight recorder's windows hold events), then one line with the reader's end state.
 * Usage: soak_dump FILE
 * Exit: 0 read to the end, 1 a read error (said on stderr), 2 usage.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_record.h"
#include "sv_stats.h"

static struct sv_stats hist;

static void dump(const struct sv_rec *rec)
{
	const struct sv_rec_interval *iv = &rec->u.interval;
	const struct sv_rec_window *w = &rec->u.window;
	const struct sv_rec_event *e = &rec->u.event;
	const struct sv_rec_hist *h = &rec->u.hist;
	const struct sv_rec_clock *c = &rec->u.clock;

	switch (rec->kind) {
	case SV_REC_STREAM:
		printf("{\"k\":\"stream\",\"stream\":%u,\"svid\":\"%s\",\"appid\":%u,\"rate\":%u}\n", rec->u.stream.stream,
		       rec->u.stream.svid, rec->u.stream.appid, rec->u.stream.sample_rate);
		break;
	case SV_REC_INTERVAL:
		printf("{\"k\":\"interval\",\"stream\":%u,\"from\":%u,\"point\":%u,\"guest\":%u,\"flags\":%u,"
		       "\"tai_sec\":%u,\"period_ms\":%u,\"frames\":%u,\"samples\":%u,\"count\":%u,\"late\":%u,"
		       "\"lost\":%u,\"missing\":%u,\"dropped\":%u,\"duplicate\":%u,\"reordered\":%u,\"outliers\":%u,"
		       "\"errors\":%u,\"restarts\":%u,\"changes\":%u,\"strays\":%u,\"worst_ns\":%" PRId64
		       ",\"worst_tai_sec\":%u,\"worst_smp_cnt\":%u,\"drop_reason\":[%u,%u],\"drop_count\":[%u,%u]}\n",
		       iv->stream, iv->from_point, iv->point, iv->guest, iv->flags, iv->tai_sec, iv->period_ms, iv->frames,
		       iv->samples, iv->count, iv->late, iv->lost, iv->missing, iv->dropped, iv->duplicate, iv->reordered,
		       iv->outliers, iv->errors, iv->restarts, iv->changes, iv->strays, iv->worst_ns, iv->worst_tai_sec,
		       iv->worst_smp_cnt, iv->drop_reason[0], iv->drop_reason[1], iv->drop_count[0], iv->drop_count[1]);
		break;
	case SV_REC_HIST:
		sv_stats_init(&hist);
		if (sv_stats_deserialize(&hist, rec->hist_data, h->len))
			hist.count = UINT64_MAX;
		printf("{\"k\":\"hist\",\"stream\":%u,\"from\":%u,\"point\":%u,\"guest\":%u,\"tai_sec\":%u,"
		       "\"period_ms\":%u,\"count\":%" PRIu64 ",\"max\":%" PRId64 "}\n",
		       h->stream, h->from_point, h->point, h->guest, h->tai_sec, h->period_ms, hist.count, hist.max);
		break;
	case SV_REC_WINDOW:
		printf("{\"k\":\"window\",\"cls\":%u,\"classes\":%u,\"point\":%u,\"stream\":%u,\"guest\":%u,\"flags\":%u,"
		       "\"t_trigger_ns\":%" PRId64 ",\"t_start_ns\":%" PRId64 ",\"t_end_ns\":%" PRId64
		       ",\"value\":%" PRId64 ",\"tai_sec\":%u,\"smp_cnt\":%u,\"triggers\":%u,\"id\":%u,"
		       "\"records\":%u,\"lost\":%u,\"busy\":%u,\"dropped\":[%u,%u,%u,%u,%u]}\n",
		       w->cls, w->classes, w->point, w->stream, w->guest, w->flags, w->t_trigger_ns, w->t_start_ns,
		       w->t_end_ns, w->value, w->trigger_tai_sec, w->trigger_smp_cnt, w->triggers, w->id, w->records,
		       w->lost, w->busy, w->dropped[0], w->dropped[1], w->dropped[2], w->dropped[3], w->dropped[4]);
		break;
	case SV_REC_CLOCK:
		printf("{\"k\":\"clock\",\"clock\":%u,\"flags\":%u,\"t_ns\":%" PRId64 ",\"step_ns\":%" PRId64
		       ",\"to_tai_ns\":%" PRId64 "}\n",
		       c->clock, c->flags, c->t_ns, c->step_ns, c->new_to_tai_ns);
		break;
	case SV_REC_EVENT:
		printf("{\"k\":\"event\",\"stream\":%u,\"point\":%u,\"guest\":%u,\"t_ns\":%" PRId64 ",\"t2_ns\":%" PRId64
		       ",\"tai_sec\":%u,\"smp_cnt\":%u,\"flags\":%u,\"reason\":%u}\n",
		       e->stream, e->point, e->guest, e->t_ns, e->t2_ns, e->tai_sec, e->smp_cnt, e->flags, e->reason);
		break;
	default:
		break;
	}
}

/* One part; returns 0 read to its end, 1 an error (said). */
static int dump_part(const char *path)
{
	struct sv_record_reader *r;
	struct sv_rec rec;
	char msg[512];
	int ret;

	ret = sv_record_reader_open(&r, path);
	if (ret) {
		if (r) {
			sv_record_reader_strerror(r, msg, sizeof(msg));
			fprintf(stderr, "soak_dump: %s\n", msg);
			sv_record_reader_close(r);
		} else {
			fprintf(stderr, "soak_dump: %s: %s\n", path, strerror(-ret));
		}
		return 1;
	}
	while ((ret = sv_record_reader_next(r, &rec)) == 1)
		dump(&rec);
	if (ret < 0) {
		sv_record_reader_strerror(r, msg, sizeof(msg));
		fprintf(stderr, "soak_dump: %s\n", msg);
	}
	printf("{\"k\":\"end\",\"part\":\"%s\",\"clean\":%s,\"error\":%s}\n", path,
	       sv_record_reader_clean_end(r) ? "true" : "false", ret < 0 ? "true" : "false");
	sv_record_reader_close(r);
	return ret < 0;
}

int main(int argc, char **argv)
{
	char part[4096];
	int n = 0, fail = 0;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: soak_dump FILE\n");
		return 2;
	}
	/* the rotated parts, oldest first */
	for (;;) {
		snprintf(part, sizeof(part), "%s.%d", argv[1], n + 1);
		f = fopen(part, "rb");
		if (!f)
			break;
		fclose(f);
		n++;
	}
	for (; n > 0; n--) {
		snprintf(part, sizeof(part), "%s.%d", argv[1], n);
		fail |= dump_part(part);
	}
	fail |= dump_part(argv[1]);
	return fail;
}
