/* SPDX-License-Identifier: Apache-2.0 */
/*
 * "phasor": the one-cycle DFT phasor (RMS, angle) of every channel of every stream, one JSON line per
 * stream and second of samples (every `rate` delivered samples), in the channel's raw units (9-2LE: 1 mA
 * for currents, 10 mV for voltages). Angles in degrees are the phase at the newest sample; their
 * differences between channels are the usual phasor angles (e.g. A relative to B).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "sv_json.h"
#include "svapp.h"

#define PH_MAX_CH 8

struct ph_stream {
	uint32_t rate;
	unsigned n, nch;
	uint64_t count;
	double cosv[SVAPP_DFT_MAX_N], sinv[SVAPP_DFT_MAX_N];
	struct svapp_dft dft[PH_MAX_CH];
};

struct ph {
	uint16_t nominal_hz;
	struct sv_json j;
};

static int ph_start(void **ctx, const struct svapp_params *p, FILE *out)
{
	struct ph *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	o->nominal_hz = p->nominal_hz ? p->nominal_hz : 50;
	sv_json_init(&o->j, out, 0);
	*ctx = o;
	return 0;
}

static int ph_stream_new(void *ctx, struct svapp_stream *s)
{
	(void)ctx;
	s->priv = calloc(1, sizeof(struct ph_stream));
	return s->priv ? 0 : -ENOMEM;
}

static void ph_stream_free(void *ctx, struct svapp_stream *s)
{
	(void)ctx;
	free(s->priv);
	s->priv = NULL;
}

static void ph_stop(void *ctx)
{
	free(ctx);
}

static void ph_sample(void *ctx, struct svapp_stream *s, const struct svapp_sample *x)
{
	struct ph *o = ctx;
	struct ph_stream *st = s->priv;
	struct sv_json *j = &o->j;
	unsigned nch = x->nch < PH_MAX_CH ? x->nch : PH_MAX_CH;

	if (x->rate != st->rate || nch != st->nch) {
		st->rate = x->rate;
		st->nch = nch;
		st->n = svapp_samples_per_cycle(x->rate, o->nominal_hz);
		st->count = 0;
		if (st->n) {
			svapp_dft_tables(st->n, st->cosv, st->sinv);
			for (unsigned c = 0; c < nch; c++)
				svapp_dft_init(&st->dft[c], st->n, st->cosv, st->sinv);
		}
	}
	if (!st->n || !nch)
		return;
	if (x->lost_before || x->resync)
		for (unsigned c = 0; c < nch; c++)
			svapp_dft_reset(&st->dft[c]);
	for (unsigned c = 0; c < nch; c++)
		svapp_dft_push(&st->dft[c], (double)x->values[c]);
	if (++st->count % st->rate || !svapp_dft_ready(&st->dft[0]))
		return;
	sv_json_object_begin(j);
	sv_json_kv_str(j, "event", "phasor");
	sv_json_kv_str(j, "svID", s->svID);
	sv_json_kv_uint(j, "appid", s->appid);
	sv_json_kv_uint(j, "smpCnt", x->smpCnt);
	sv_json_kv_int(j, "rx_ns", x->rx_ns);
	sv_json_key(j, "rms");
	sv_json_array_begin(j);
	for (unsigned c = 0; c < nch; c++)
		sv_json_double(j, svapp_dft_rms(&st->dft[c]));
	sv_json_array_end(j);
	sv_json_key(j, "angle_deg");
	sv_json_array_begin(j);
	for (unsigned c = 0; c < nch; c++)
		sv_json_double(j, svapp_dft_angle(&st->dft[c]) * 180.0 / M_PI);
	sv_json_array_end(j);
	sv_json_object_end(j);
	sv_json_end(j);
}

const struct svapp_ops svapp_phasor_ops = {
	.name = "phasor",
	.help = "one-cycle DFT RMS and angle of every channel, one JSON line per stream per second",
	.start = ph_start,
	.stream_new = ph_stream_new,
	.sample = ph_sample,
	.stream_free = ph_stream_free,
	.stop = ph_stop,
};
