/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "overcurrent": instantaneous phase overcurrent protection, ANSI 50 (IEC 60255-151 definite-time
 * element with no intentional delay), per stream.
 *
 * Measurement: per phase A, B, C (channels 0, 1, 2: 9-2LE / IEC 61869-9 put the currents first), the
 * RMS of the fundamental from a one-cycle DFT (svapp_dft, N = rate / nominal_hz samples). The DFT
 * rejects DC offset and harmonics, which an instantaneous-value comparator would not.
 *
 * Pickup and trip: a phase is over pickup on a sample when its RMS >= pickup. A trip is decided on the
 * trip_samples-th CONSECUTIVE sample over pickup of any phase (default: a quarter cycle, 20 samples at
 * 80 samples/cycle: enough to ride through a single corrupt sample that the DFT smears, short enough
 * that a fault of twice the pickup, whose one-cycle RMS crosses the pickup about half a cycle after
 * inception, trips within 0.75 cycle, and the 20 kA fault of the Omicron capture within a third of a
 * cycle). The trip names every phase over pickup at the decision. fault_smpCnt is the first sample over
 * pickup of the episode (no phase over pickup before it).
 * Reset: once every phase has fallen below dropoff_ratio x pickup (default 95 %: hysteresis so a
 * current hovering at the pickup does not chatter); a later fault trips again.
 *
 * Blocking (IEC 61850-7-4 Annex / 61850-9-2 quality handling): a sample whose phase currents carry
 * validity invalid or questionable, or (unless no_block_test) the test flag or the frame's simulation
 * bit, pollutes the one-cycle window: decisions are blocked from that sample until N clean samples have
 * passed, the pickup counters restart, and the blocked samples are counted. A gap (lost samples) or a
 * counter restart empties the window: no decision until it is full again.
 *
 * Output: one JSON line per trip/reset on the configured FILE (stdout in svsub), one "summary" line at
 * stop. Per sample: no allocation; the line is written only on a trip or reset.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_clock.h"
#include "sv_dataset.h"
#include "sv_json.h"
#include "svapp.h"

#define NPH 3

struct oc_stream {
	uint32_t rate;	     /* rate the window was set for; 0 not yet */
	unsigned n;	     /* samples per cycle; 0: unsupported rate */
	unsigned trip_n;     /* consecutive samples over pickup to trip */
	unsigned block_left; /* samples still blocked */
	unsigned over[NPH];  /* consecutive samples over pickup */
	bool episode;	     /* some phase over pickup since the last time none was */
	bool tripped;	     /* latched until drop-off */
	uint16_t fault_smpCnt;
	bool fault_has_time;
	int64_t fault_rx_ns, fault_sample_ns;
	/* fault inception: the first sample of the run of samples that depart from the one a cycle before
	 * (|x[n] - x[n-N]| over a tenth of the pickup's peak on some phase), when it began within a cycle of the
	 * pickup */
	bool departing, has_inception, episode_inception;
	uint16_t inception_smpCnt;
	int64_t inception_ns;
	unsigned since_inception;
	uint64_t trips, resets, blocked, not_ready, unsupported;
	double cosv[SVAPP_DFT_MAX_N], sinv[SVAPP_DFT_MAX_N];
	struct svapp_dft dft[NPH];
};

struct oc {
	struct svapp_params p;
	FILE *out;
	struct sv_json j;
	uint64_t trips, streams;
};

static int oc_start(void **ctx, const struct svapp_params *p, FILE *out)
{
	struct oc *o;

	if (!(p->pickup_a > 0) || !(p->dropoff_ratio > 0 && p->dropoff_ratio <= 1) || !(p->current_lsb_a >= 0))
		return -EINVAL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->p = *p;
	if (!o->p.nominal_hz)
		o->p.nominal_hz = 50;
	o->out = out;
	sv_json_init(&o->j, out, 0);
	*ctx = o;
	return 0;
}

static int oc_stream_new(void *ctx, struct svapp_stream *s)
{
	struct oc *o = ctx;
	struct oc_stream *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	s->priv = st;
	o->streams++;
	return 0;
}

static void oc_stream_free(void *ctx, struct svapp_stream *s)
{
	struct oc *o = ctx;
	struct oc_stream *st = s->priv;
	struct sv_json *j = &o->j;

	if (!st)
		return;
	sv_json_object_begin(j);
	sv_json_kv_str(j, "event", "summary");
	sv_json_kv_str(j, "app", "overcurrent");
	sv_json_kv_str(j, "svID", s->svID);
	sv_json_kv_uint(j, "appid", s->appid);
	sv_json_kv_uint(j, "trips", st->trips);
	sv_json_kv_uint(j, "resets", st->resets);
	sv_json_kv_uint(j, "blocked_samples", st->blocked);
	sv_json_kv_uint(j, "not_ready_samples", st->not_ready);
	sv_json_kv_uint(j, "unsupported_samples", st->unsupported);
	if (st->n)
		sv_json_kv_uint(j, "samples_per_cycle", st->n);
	else
		sv_json_kv_null(j, "samples_per_cycle");
	sv_json_kv_uint(j, "trip_samples", st->trip_n);
	sv_json_kv_bool(j, "tripped", st->tripped);
	sv_json_object_end(j);
	sv_json_end(j);
	free(st);
	s->priv = NULL;
}

static void oc_stop(void *ctx)
{
	struct oc *o = ctx;

	fflush(o->out);
	free(o);
}

static void setup_window(struct oc *o, struct oc_stream *st, uint32_t rate)
{
	st->rate = rate;
	st->n = svapp_samples_per_cycle(rate, o->p.nominal_hz);
	st->trip_n = o->p.trip_samples ? o->p.trip_samples : (st->n ? (st->n + 3) / 4 : 1);
	if (st->n) {
		svapp_dft_tables(st->n, st->cosv, st->sinv);
		for (unsigned ph = 0; ph < NPH; ph++)
			svapp_dft_init(&st->dft[ph], st->n, st->cosv, st->sinv);
	}
	memset(st->over, 0, sizeof(st->over));
	st->episode = false;
}

static void kv_time(struct sv_json *j, const char *key, bool valid, int64_t ns)
{
	if (valid)
		sv_json_kv_int(j, key, ns);
	else
		sv_json_kv_null(j, key);
}

static void emit_trip(struct oc *o, struct svapp_stream *s, struct oc_stream *st, const struct svapp_sample *x,
		      const double *rms)
{
	struct sv_json *j = &o->j;
	char phases[NPH + 1];
	unsigned np = 0;
	int64_t now_mono = sv_clock_gettime_ns(CLOCK_MONOTONIC);
	int64_t processing = now_mono - x->proc_start_mono_ns;
	int64_t decision;

	for (unsigned ph = 0; ph < NPH; ph++)
		if (st->over[ph])
			phases[np++] = (char)('A' + ph);
	phases[np] = '\0';
	/* Live: the decision instant on the receive clock (TAI). A capture: its timeline, i.e. the deciding
	 * sample's receive time plus the processing measured here. */
	decision = o->p.rx_clock_tai ? sv_clock_now_ns(SV_CLOCK_TAI) : x->rx_ns + processing;

	sv_json_object_begin(j);
	sv_json_kv_str(j, "event", "trip");
	sv_json_kv_str(j, "app", "overcurrent");
	sv_json_kv_str(j, "svID", s->svID);
	sv_json_kv_uint(j, "appid", s->appid);
	sv_json_kv_str(j, "phases", phases);
	sv_json_kv_uint(j, "smpCnt", x->smpCnt);
	sv_json_kv_uint(j, "fault_smpCnt", st->fault_smpCnt);
	sv_json_kv_uint(j, "samples_to_trip",
			sv_smpcnt_distance(st->fault_smpCnt, x->smpCnt, s->stats && s->stats->wrap ?
					   s->stats->wrap : 65536));
	kv_time(j, "fault_sample_ns", st->fault_has_time, st->fault_sample_ns);
	sv_json_kv_int(j, "fault_rx_ns", st->fault_rx_ns);
	kv_time(j, "trip_sample_ns", x->has_sample_time, x->sample_ns);
	sv_json_kv_int(j, "trip_rx_ns", x->rx_ns);
	sv_json_kv_int(j, "decision_ns", decision);
	sv_json_kv_str(j, "decision_clock", o->p.rx_clock_tai ? "tai" : "capture");
	/* Fault inception (sample time) to decision: what a relay's operate time means. */
	kv_time(j, "fault_to_decision_ns", st->fault_has_time, decision - st->fault_sample_ns);
	sv_json_kv_int(j, "rx_to_decision_ns", decision - x->rx_ns);
	sv_json_kv_int(j, "processing_ns", processing);
	sv_json_key(j, "rms_a");
	sv_json_array_begin(j);
	for (unsigned ph = 0; ph < NPH; ph++)
		sv_json_double(j, rms[ph]);
	sv_json_array_end(j);
	sv_json_kv_double(j, "pickup_a", o->p.pickup_a);
	sv_json_kv_uint(j, "trip_samples", st->trip_n);
	sv_json_kv_bool(j, "simulated", x->simulated);
	if (st->episode_inception)
		sv_json_kv_uint(j, "inception_smpCnt", st->inception_smpCnt);
	else
		sv_json_kv_null(j, "inception_smpCnt");
	sv_json_object_end(j);
	sv_json_end(j);
	fflush(o->out);
	if (s->hooks && s->hooks->trip) {
		struct svapp_trip t = {
			.pickup_smpCnt = st->fault_smpCnt,
			.trip_smpCnt = x->smpCnt,
			.inception_smpCnt = st->inception_smpCnt,
			.has_inception = st->episode_inception,
			.pickup_ns = st->fault_has_time ? st->fault_sample_ns : st->fault_rx_ns,
			.trip_ns = x->has_sample_time ? x->sample_ns : x->rx_ns,
			.inception_ns = st->inception_ns,
		};

		snprintf(t.phases, sizeof(t.phases), "%s", phases);
		s->hooks->trip(s->hooks->ctx, s, &t);
	}
}

static void emit_reset(struct oc *o, struct svapp_stream *s, const struct svapp_sample *x)
{
	struct sv_json *j = &o->j;

	sv_json_object_begin(j);
	sv_json_kv_str(j, "event", "reset");
	sv_json_kv_str(j, "app", "overcurrent");
	sv_json_kv_str(j, "svID", s->svID);
	sv_json_kv_uint(j, "appid", s->appid);
	sv_json_kv_uint(j, "smpCnt", x->smpCnt);
	sv_json_kv_int(j, "rx_ns", x->rx_ns);
	sv_json_object_end(j);
	sv_json_end(j);
}

static bool sample_blocks(const struct oc *o, const struct svapp_sample *x)
{
	if (x->simulated && !o->p.no_block_test)
		return true;
	for (unsigned ph = 0; ph < NPH; ph++) {
		uint32_t q = x->quality[ph];

		if (sv_quality_validity(q) != SV_VALIDITY_GOOD)
			return true;
		if ((q & SV_Q_TEST) && !o->p.no_block_test)
			return true;
	}
	return false;
}

static void oc_sample(void *ctx, struct svapp_stream *s, const struct svapp_sample *x)
{
	struct oc *o = ctx;
	struct oc_stream *st = s->priv;
	double rms[NPH];
	bool any_over = false, all_below = true;

	if (x->nch < NPH) {
		st->unsupported++;
		return;
	}
	if (x->rate != st->rate)
		setup_window(o, st, x->rate);
	if (!st->n) {
		st->unsupported++; /* rate unknown yet, or not a usable number of samples per cycle */
		return;
	}
	if (x->lost_before || x->resync) {
		/* The window would mix samples across a hole: start it again. */
		for (unsigned ph = 0; ph < NPH; ph++)
			svapp_dft_reset(&st->dft[ph]);
		memset(st->over, 0, sizeof(st->over));
		st->episode = false;
	}
	{
		bool depart = false;

		for (unsigned ph = 0; ph < NPH; ph++) {
			/* amperes: --current-lsb when given, else the dataset's scale of the channel */
			double lsb = o->p.current_lsb_a > 0 ? o->p.current_lsb_a : x->dataset->m[x->dataset->value[ph]].scale;
			struct svapp_dft *d = &st->dft[ph];
			double a = x->values[ph] * lsb;

			/* the sample a cycle before is the one this push replaces */
			if (svapp_dft_ready(d) && fabs(a - d->win[d->pos]) > 0.1 * M_SQRT2 * o->p.pickup_a)
				depart = true;
			svapp_dft_push(d, a);
		}
		if (depart && !st->departing) {
			st->departing = true;
			st->has_inception = true;
			st->inception_smpCnt = x->smpCnt;
			st->inception_ns = x->has_sample_time ? x->sample_ns : x->rx_ns;
			st->since_inception = 0;
		} else if (!depart) {
			st->departing = false;
		}
		st->since_inception++;
	}
	if (sample_blocks(o, x))
		st->block_left = st->n; /* this sample stays in the window for n samples */
	if (st->block_left) {
		st->block_left--;
		st->blocked++;
		memset(st->over, 0, sizeof(st->over));
		st->episode = false;
		return;
	}
	if (!svapp_dft_ready(&st->dft[0])) {
		st->not_ready++;
		return;
	}
	for (unsigned ph = 0; ph < NPH; ph++) {
		rms[ph] = svapp_dft_rms(&st->dft[ph]);
		if (rms[ph] >= o->p.pickup_a) {
			if (!st->episode) {
				st->episode = true;
				/* an inception within the last cycle is this fault's */
				st->episode_inception = st->has_inception && st->since_inception <= st->n;
				st->fault_smpCnt = x->smpCnt;
				st->fault_rx_ns = x->rx_ns;
				st->fault_has_time = x->has_sample_time;
				st->fault_sample_ns = x->sample_ns;
			}
			st->over[ph]++;
			any_over = true;
		} else {
			st->over[ph] = 0;
		}
		if (rms[ph] >= o->p.pickup_a * o->p.dropoff_ratio)
			all_below = false;
	}
	if (!any_over)
		st->episode = false;
	if (st->tripped) {
		if (all_below) {
			st->tripped = false;
			st->resets++;
			emit_reset(o, s, x);
		}
		return;
	}
	for (unsigned ph = 0; ph < NPH; ph++) {
		if (st->over[ph] >= st->trip_n) {
			st->tripped = true;
			st->trips++;
			o->trips++;
			emit_trip(o, s, st, x, rms);
			return;
		}
	}
}

const struct svapp_ops svapp_overcurrent_ops = {
	.name = "overcurrent",
	.help = "ANSI 50 instantaneous phase overcurrent on the one-cycle DFT RMS: one JSON line per trip",
	.start = oc_start,
	.stream_new = oc_stream_new,
	.sample = oc_sample,
	.stream_free = oc_stream_free,
	.stop = oc_stop,
};
