/* SPDX-License-Identifier: Apache-2.0 */
/* svsub applications: registry, delivery of accepted samples, one-cycle DFT. */
#include "svapp.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sv_clock.h"

static const struct svapp_ops *const registry[] = {
	&svapp_overcurrent_ops,
	&svapp_phasor_ops,
	NULL,
};

const struct svapp_ops *const *svapp_list(void)
{
	return registry;
}

const struct svapp_ops *svapp_find(const char *name)
{
	for (unsigned i = 0; name && registry[i]; i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}

void svapp_params_init(struct svapp_params *p)
{
	memset(p, 0, sizeof(*p));
	p->pickup_a = 1000.0;
	p->dropoff_ratio = 0.95;
	p->nominal_hz = 50;
	p->current_lsb_a = 0; /* the dataset's scale (9-2LE: 1 mA) */
}

struct svapp {
	const struct svapp_ops *ops;
	void *ctx;
	unsigned nstreams;		/* capacity (tracker's max_streams) */
	struct svapp_stream *streams;	/* by tracker index */
	uint8_t *state;			/* 0 unseen, 1 delivered, 2 refused by stream_new */
	struct svapp_counts n;
	struct svapp_sample x;		/* reused for every sample: no allocation per sample */
	const struct svapp_hooks *hooks;
};

int svapp_create(struct svapp **out, const char *name, const struct svapp_params *p, FILE *f)
{
	static const struct svapp_ops none = { .name = "none" };
	const struct svapp_ops *ops = name ? svapp_find(name) : &none;
	struct svapp *a;
	int err;

	if (!ops)
		return -ENOENT;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->ops = ops;
	a->nstreams = p->max_streams ? p->max_streams : SVSUB_TRACK_MAX_STREAMS_DEFAULT;
	a->streams = calloc(a->nstreams, sizeof(*a->streams));
	a->state = calloc(a->nstreams, 1);
	if (!a->streams || !a->state) {
		err = -ENOMEM;
		goto err_free;
	}
	a->hooks = p->hooks;
	err = ops->start ? ops->start(&a->ctx, p, f) : 0;
	if (err)
		goto err_free;
	*out = a;
	return 0;
err_free:
	free(a->streams);
	free(a->state);
	free(a);
	return err;
}

void svapp_destroy(struct svapp *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < a->nstreams; i++)
		if (a->state[i] == 1 && a->ops->stream_free)
			a->ops->stream_free(a->ctx, &a->streams[i]);
	if (a->ops->stop)
		a->ops->stop(a->ctx);
	free(a->streams);
	free(a->state);
	free(a);
}

void svapp_counts(const struct svapp *a, struct svapp_counts *c)
{
	*c = a->n;
}

void svapp_frame(struct svapp *a, struct svsub_tracker *t, const struct sv_view *v,
		 const struct svsub_sample_result *res, int64_t rx_ns)
{
	struct svapp_sample *x = &a->x;
	int64_t t0 = sv_clock_gettime_ns(CLOCK_MONOTONIC);

	for (unsigned i = 0; i < v->noASDU; i++) {
		const struct sv_asdu *as = &v->asdu[i];
		const struct svsub_sample_result *r = &res[i];
		struct svapp_stream *s;
		unsigned nch;

		if (r->stream < 0 || (unsigned)r->stream >= a->nstreams ||
		    !svsub_sample_accepted(r->verdict)) {
			a->n.withheld++;
			continue;
		}
		s = &a->streams[r->stream];
		if (a->state[r->stream] == 0) {
			/* svsub_track_stream() refreshes the errors count: once per stream only, not per sample. */
			s->stats = svsub_track_stream(t, (unsigned)r->stream);
			s->index = (unsigned)r->stream;
			s->appid = s->stats->appid;
			s->svID = s->stats->svID;
			s->hooks = a->hooks;
			a->state[r->stream] = 2;
			if (a->hooks && a->hooks->stream_new && a->hooks->stream_new(a->hooks->ctx, s))
				continue;
			if (a->ops->stream_new && a->ops->stream_new(a->ctx, s))
				continue;
			a->state[r->stream] = 1;
			a->n.streams++;
		}
		if (a->state[r->stream] != 1) {
			a->n.withheld++;
			continue;
		}
		/* the channels the dataset knows of; none when it is unknown (svsub_track.h) */
		nch = r->dataset ? r->dataset->nvalues : 0;
		if (nch > SVAPP_MAX_CHANNELS)
			nch = SVAPP_MAX_CHANNELS;
		x->smpCnt = as->smpCnt;
		x->smpSynch = as->smpSynch;
		x->simulated = v->simulated;
		x->lost_before = r->verdict == SVSUB_SAMPLE_AFTER_GAP;
		x->resync = r->verdict == SVSUB_SAMPLE_RESYNC;
		x->has_sample_time = r->has_latency;
		x->confRev = as->confRev;
		/* No smpRate: a synchronised stream counts samples within the second (IEC 61850-9-2 §8.5.2),
		 * so a learned or configured wrap is its rate. */
		x->rate = s->stats->rate || as->smpSynch ? svsub_stream_rate(s->stats) : 0;
		x->rx_ns = rx_ns;
		x->sample_ns = r->has_latency ? rx_ns - r->latency_ns : 0;
		x->proc_start_mono_ns = t0;
		x->nch = nch;
		x->dataset = r->dataset;
		for (unsigned c = 0; c < nch; c++) {
			x->values[c] = sv_dataset_channel(r->dataset, as->seqData, c);
			x->quality[c] = sv_dataset_channel_quality(r->dataset, as->seqData, c);
		}
		a->n.delivered++;
		if (a->hooks && a->hooks->sample)
			a->hooks->sample(a->hooks->ctx, s, x);
		if (a->ops->sample)
			a->ops->sample(a->ctx, s, x);
	}
}

/* ---- one-cycle DFT ---- */

unsigned svapp_samples_per_cycle(uint32_t rate, uint16_t nominal_hz)
{
	unsigned n;

	if (!rate || !nominal_hz)
		return 0;
	n = (rate + nominal_hz / 2u) / nominal_hz;
	return n >= 4 && n <= SVAPP_DFT_MAX_N ? n : 0;
}

void svapp_dft_tables(unsigned n, double *cosv, double *sinv)
{
	for (unsigned k = 0; k < n; k++) {
		double w = 2.0 * M_PI * (double)k / (double)n;

		cosv[k] = cos(w);
		sinv[k] = sin(w);
	}
}

int svapp_dft_init(struct svapp_dft *d, unsigned n, const double *cosv, const double *sinv)
{
	if (n < 4 || n > SVAPP_DFT_MAX_N)
		return -EINVAL;
	d->n = n;
	d->cosv = cosv;
	d->sinv = sinv;
	svapp_dft_reset(d);
	return 0;
}

void svapp_dft_reset(struct svapp_dft *d)
{
	d->pos = 0;
	d->filled = 0;
	d->cycles = 0;
	d->re = 0;
	d->im = 0;
	memset(d->win, 0, sizeof(d->win[0]) * d->n);
}

/*
 * X = sum over the window of x[k] e^{-j 2 pi k/N}, k the absolute index mod N: the newest sample
 * replaces the one N samples older at the same k, so X += (x_new - x_old) e^{-j 2 pi k/N}. For
 * x[k] = A cos(2 pi k/N + phi), X = (A N / 2) e^{j phi}.
 */
void svapp_dft_push(struct svapp_dft *d, double x)
{
	unsigned k = d->pos;
	double dx = x - d->win[k];

	d->win[k] = x;
	d->re += dx * d->cosv[k];
	d->im -= dx * d->sinv[k];
	if (d->filled < d->n)
		d->filled++;
	if (++d->pos == d->n) {
		d->pos = 0;
		if (++d->cycles >= SVAPP_DFT_REFRESH_CYCLES) {
			/* Exact recomputation, O(N) once per SVAPP_DFT_REFRESH_CYCLES cycles. */
			double re = 0, im = 0;

			for (unsigned i = 0; i < d->n; i++) {
				re += d->win[i] * d->cosv[i];
				im -= d->win[i] * d->sinv[i];
			}
			d->re = re;
			d->im = im;
			d->cycles = 0;
		}
	}
}

double svapp_dft_rms(const struct svapp_dft *d)
{
	/* |X| = A N / 2, RMS = A / sqrt 2. */
	return sqrt(d->re * d->re + d->im * d->im) * M_SQRT2 / (double)d->n;
}

double svapp_dft_angle(const struct svapp_dft *d)
{
	/* arg X is the phase at k = 0; the newest sample sits at k = pos - 1. */
	unsigned k = d->pos ? d->pos - 1 : d->n - 1;
	double a = atan2(d->im, d->re) + 2.0 * M_PI * (double)k / (double)d->n;

	a = fmod(a, 2.0 * M_PI);
	if (a > M_PI)
		a -= 2.0 * M_PI;
	else if (a <= -M_PI)
		a += 2.0 * M_PI;
	return a;
}
