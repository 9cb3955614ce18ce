// SPDX-License-Identifier: Apache-2.0
#include "svpub_signal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sv_clock.h"
#include "sv_codec.h"
#include "sv_log.h"
#include "sv_pcap.h"
#include "svpub_engine.h"

#define REPLAY_MAX_SAMPLES (16u << 20)
#define PERIOD_MAX_SAMPLES 4096u /* 128 KiB of table at most; 9-2LE: 80, F4800S2I4U4: 96 */

static int period_init(struct svpub_signal *sig);

static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

double svpub_signal_gauss(uint64_t key, uint64_t n, unsigned channel)
{
	uint64_t h = splitmix64(key ^ splitmix64(n * 16 + channel));
	/* Two 26-bit uniforms in (0, 1), Box-Muller. */
	double u1 = ((double)(h >> 38) + 0.5) / (double)(1ull << 26);
	double u2 = ((double)((h >> 12) & ((1ull << 26) - 1)) + 0.5) / (double)(1ull << 26);

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* The capture's sample rate: where smpCnt wraps (synchronised streams), else from the capture's timestamps
 * (frames evenly spread over the capture). 0 when neither tells. */
static uint32_t replay_rate(uint32_t max_cnt, bool wrapped, uint64_t samples, int64_t t_first_ns, int64_t t_last_ns,
			    uint64_t first_frame_samples)
{
	if (wrapped)
		return max_cnt + 1;
	if (t_last_ns > t_first_ns && samples > first_frame_samples)
		return (uint32_t)llround((double)(samples - first_frame_samples) * 1e9 / (double)(t_last_ns - t_first_ns));
	return 0;
}

static int replay_load(struct svpub_signal *sig, const struct svpub_stream_cfg *s)
{
	const struct svpub_signal_cfg *c = &s->signal;
	struct sv_pcap_reader *r;
	struct sv_pcap_pkt pkt;
	static struct sv_view v; /* 20 KiB: not on the stack; init is single-threaded */
	char svid[SV_MAX_ID_LEN + 1] = "";
	size_t cap = 0;
	int ret;
	/* the capture's rate */
	uint32_t max_cnt = 0, prev_cnt = 0, cap_rate;
	bool wrapped = false, any = false;
	int64_t t_first = 0, t_last = 0;
	uint64_t first_frame_samples = 0;

	ret = sv_pcap_open_read(&r, c->replay);
	if (ret)
		return ret;
	snprintf(svid, sizeof(svid), "%s", c->replay_svid);
	while ((ret = sv_pcap_next(r, &pkt)) == 1) {
		uint64_t before;

		if (sv_codec_decode(pkt.data, pkt.caplen, &v, NULL))
			continue;
		before = sig->replay_n;
		for (unsigned a = 0; a < v.noASDU; a++) {
			const struct sv_asdu *as = &v.asdu[a];

			if (!svid[0])
				snprintf(svid, sizeof(svid), "%.*s", (int)as->svID_len, (const char *)as->svID);
			if (strlen(svid) != as->svID_len || memcmp(svid, as->svID, as->svID_len))
				continue;
			if (sv_asdu_nchannels(as) != SVPUB_CHANNELS)
				continue;
			if (any && as->smpCnt < prev_cnt)
				wrapped = true;
			prev_cnt = as->smpCnt;
			if (as->smpCnt > max_cnt)
				max_cnt = as->smpCnt;
			any = true;
			if (sig->replay_n == cap) {
				size_t ncap = cap ? cap * 2 : 4096;
				void *nv, *nq;

				if (ncap > REPLAY_MAX_SAMPLES)
					goto done;
				nv = realloc(sig->replay_values, ncap * SVPUB_CHANNELS * sizeof(int32_t));
				if (nv)
					sig->replay_values = nv;
				nq = realloc(sig->replay_quality, ncap * SVPUB_CHANNELS * sizeof(uint32_t));
				if (nq)
					sig->replay_quality = nq;
				if (!nv || !nq) {
					ret = -ENOMEM;
					goto out;
				}
				cap = ncap;
			}
			for (unsigned ch = 0; ch < SVPUB_CHANNELS; ch++) {
				sig->replay_values[sig->replay_n * SVPUB_CHANNELS + ch] = sv_asdu_value(as, ch);
				sig->replay_quality[sig->replay_n * SVPUB_CHANNELS + ch] = sv_asdu_quality(as, ch);
			}
			sig->replay_n++;
		}
		if (sig->replay_n > before) {
			if (!t_first) {
				t_first = pkt.ts_ns;
				first_frame_samples = sig->replay_n;
			}
			t_last = pkt.ts_ns;
		}
	}
	if (ret < 0)
		goto out;
done:
	ret = 0;
	if (!sig->replay_n) {
		sv_err("%s: no SV samples with 8 channels%s%s", c->replay, svid[0] ? " for svID " : "", svid);
		ret = -EINVAL;
		goto out;
	}
	sv_info("replay: %llu samples of svID %s from %s", (unsigned long long)sig->replay_n, svid, c->replay);
	cap_rate = replay_rate(max_cnt, wrapped, sig->replay_n, t_first, t_last, first_frame_samples);
	/* Samples are replayed one for one: another rate changes the signal's speed and frequency. */
	if (cap_rate && (cap_rate > sig->rate + sig->rate / 100 || cap_rate + sig->rate / 100 < sig->rate))
		sv_warn("replay: %s: svID %s was sampled at %u samples/s, stream %s publishes %u samples/s: the "
			"capture plays %.3f times as fast (a %.0f Hz signal becomes %.1f Hz); samples are not resampled",
			c->replay, svid, cap_rate, s->svid, sig->rate, (double)sig->rate / cap_rate,
			svpub_stream_nominal_hz(s), svpub_stream_nominal_hz(s) * sig->rate / cap_rate);
out:
	sv_pcap_close_read(r);
	return ret;
}

/* Event times from the start of publishing @start_ns: the covered interval of every event, and the frequency
 * segments: (0, f0), then each frequency event in time order (insertion sort: at most SVPUB_MAX_EVENTS).
 * An event at t = 0 of a schedule starting at the top of the second replaces the base frequency. */
static void schedule_events(struct svpub_signal *sig, int64_t start_ns)
{
	const struct svpub_signal_cfg *c = sig->cfg;
	double start_s = (double)start_ns / 1e9;

	sig->start_ns = start_ns;
	for (unsigned e = 0; e < c->nevents; e++) {
		const struct svpub_event_cfg *ev = &c->events[e];

		sig->ev_from_ns[e] = start_ns + llround(ev->at * 1e9);
		sig->ev_to_ns[e] = ev->duration > 0 ? start_ns + llround((ev->at + ev->duration) * 1e9) : INT64_MAX;
	}
	sig->freq_at[0] = 0;
	sig->freq_hz[0] = c->frequency;
	sig->phase_at[0] = 0;
	sig->nfreq = 1;
	{
		const struct svpub_event_cfg *fe[SVPUB_MAX_EVENTS];
		unsigned nfe = 0;

		for (unsigned e = 0; e < c->nevents; e++) {
			unsigned j;

			if (c->events[e].type != SVPUB_EV_FREQUENCY)
				continue;
			for (j = nfe; j > 0 && fe[j - 1]->at > c->events[e].at; j--)
				fe[j] = fe[j - 1];
			fe[j] = &c->events[e];
			nfe++;
		}
		for (unsigned j = 0; j < nfe; j++) {
			unsigned i = sig->nfreq - 1;
			double at = start_s + fe[j]->at;

			if (at == sig->freq_at[i]) {
				sig->freq_hz[i] = fe[j]->frequency;
				continue;
			}
			sig->phase_at[i + 1] = sig->phase_at[i] + sig->freq_hz[i] * (at - sig->freq_at[i]);
			sig->freq_at[i + 1] = at;
			sig->freq_hz[i + 1] = fe[j]->frequency;
			sig->nfreq++;
		}
	}
}

int svpub_signal_init(struct svpub_signal *sig, const struct svpub_stream_cfg *s, unsigned index)
{
	const struct svpub_signal_cfg *c = &s->signal;

	memset(sig, 0, sizeof(*sig));
	sig->cfg = c;
	sig->rate = svpub_stream_rate(s);
	sig->key = splitmix64(c->seed ^ ((uint64_t)index << 32));
	for (int p = 0; p < 3; p++) {
		sig->amp_i[p] = M_SQRT2 * c->current[p] / SV_CURRENT_LSB_A;
		sig->amp_v[p] = M_SQRT2 * c->voltage[p] / SV_VOLTAGE_LSB_V;
		sig->phi_i[p] = c->current_angle[p] * M_PI / 180.0;
		sig->phi_v[p] = c->voltage_angle[p] * M_PI / 180.0;
	}
	sig->noise_i = c->current_noise / SV_CURRENT_LSB_A;
	sig->noise_v = c->voltage_noise / SV_VOLTAGE_LSB_V;

	schedule_events(sig, 0);
	if (c->source == SVPUB_SOURCE_REPLAY)
		return replay_load(sig, s);
	return period_init(sig);
}

int svpub_signal_set_start(struct svpub_signal *sig, int64_t start_ns)
{
	if (start_ns == sig->start_ns)
		return 0;
	schedule_events(sig, start_ns);
	if (sig->cfg->source == SVPUB_SOURCE_REPLAY)
		return 0;
	free(sig->period_values);
	sig->period_values = NULL;
	sig->period_n = 0;
	return period_init(sig);
}

void svpub_signal_free(struct svpub_signal *sig)
{
	free(sig->replay_values);
	free(sig->replay_quality);
	free(sig->period_values);
	sig->replay_values = NULL;
	sig->replay_quality = NULL;
	sig->period_values = NULL;
}

double svpub_signal_cycles(const struct svpub_signal *sig, double t_s)
{
	unsigned i = sig->nfreq - 1;

	while (i > 0 && t_s < sig->freq_at[i])
		i--;
	return sig->phase_at[i] + sig->freq_hz[i] * (t_s - sig->freq_at[i]);
}

static int32_t clamp_lsb(double x)
{
	if (x >= 2147483647.0)
		return INT32_MAX;
	if (x <= -2147483648.0)
		return INT32_MIN;
	return (int32_t)lrint(x);
}

static void sine_values(const struct svpub_signal *sig, uint64_t n, const double fi[3], const double fv[3],
			int32_t *values);

bool svpub_signal_sample(const struct svpub_signal *sig, uint64_t n, int32_t *values, uint32_t *quality)
{
	const struct svpub_signal_cfg *c = sig->cfg;
	/* ns after the top of the start second, as the schedule computes it; only events need it */
	int64_t t_ns = c->nevents ? svpub_sample_ns(0, n, sig->rate) : 0;
	double fi[3] = { 1, 1, 1 }, fv[3] = { 1, 1, 1 };
	bool stopped = false, faulted = false;

	for (unsigned ch = 0; ch < SVPUB_CHANNELS; ch++)
		quality[ch] = 0;
	for (unsigned e = 0; e < c->nevents; e++) {
		const struct svpub_event_cfg *ev = &c->events[e];

		if (ev->type == SVPUB_EV_FREQUENCY || t_ns < sig->ev_from_ns[e] || t_ns >= sig->ev_to_ns[e])
			continue;
		switch (ev->type) {
		case SVPUB_EV_STOP:
			stopped = true;
			break;
		case SVPUB_EV_FAULT:
			faulted = true;
			for (int p = 0; p < 3; p++) {
				if (strchr(ev->phases, 'a' + p)) {
					fi[p] *= ev->current_factor;
					fv[p] *= ev->voltage_factor;
				}
			}
			break;
		case SVPUB_EV_QUALITY:
			for (int p = 0; p < 4; p++) {
				if (strchr(ev->phases, "abcn"[p])) {
					quality[p] |= ev->quality;
					quality[p + 4] |= ev->quality;
				}
			}
			break;
		}
	}
	if (c->source == SVPUB_SOURCE_REPLAY) {
		const int32_t *rv = sig->replay_values + (n % sig->replay_n) * SVPUB_CHANNELS;
		const uint32_t *rq = sig->replay_quality + (n % sig->replay_n) * SVPUB_CHANNELS;

		for (unsigned ch = 0; ch < SVPUB_CHANNELS; ch++) {
			values[ch] = rv[ch];
			quality[ch] |= rq[ch];
		}
		return stopped;
	}
	if (sig->period_values && !faulted) {
		memcpy(values, sig->period_values + (n % sig->period_n) * SVPUB_CHANNELS,
		       SVPUB_CHANNELS * sizeof(*values));
		return stopped;
	}
	sine_values(sig, n, fi, fv, values);
	return stopped;
}

static void sine_values(const struct svpub_signal *sig, uint64_t n, const double fi[3], const double fv[3],
			int32_t *values)
{
	const struct svpub_signal_cfg *c = sig->cfg;
	double t = (double)n / sig->rate;
	double theta = 2.0 * M_PI * svpub_signal_cycles(sig, t);
	double sum_i = 0, sum_v = 0;

	for (int p = 0; p < 3; p++) {
		double ai = theta + sig->phi_i[p], av = theta + sig->phi_v[p];
		double xi = sin(ai), xv = sin(av);

		for (unsigned h = 0; h < c->nharmonics; h++) {
			const struct svpub_harmonic_cfg *hc = &c->harmonics[h];
			double psi = hc->angle * M_PI / 180.0;

			xi += hc->magnitude * sin(hc->order * ai + psi);
			xv += hc->magnitude * sin(hc->order * av + psi);
		}
		xi *= sig->amp_i[p] * fi[p];
		xv *= sig->amp_v[p] * fv[p];
		if (sig->noise_i > 0)
			xi += sig->noise_i * svpub_signal_gauss(sig->key, n, (unsigned)p);
		if (sig->noise_v > 0)
			xv += sig->noise_v * svpub_signal_gauss(sig->key, n, (unsigned)p + 4);
		values[p] = clamp_lsb(xi);
		values[p + 4] = clamp_lsb(xv);
		sum_i += xi;
		sum_v += xv;
	}
	values[3] = clamp_lsb(sum_i);
	values[7] = clamp_lsb(sum_v);
}

/* The period table of a stationary sine; leaves period_values NULL (computed per sample) otherwise. */
static int period_init(struct svpub_signal *sig)
{
	static const double one[3] = { 1, 1, 1 };
	const struct svpub_signal_cfg *c = sig->cfg;
	double f = sig->freq_hz[0];
	uint32_t pn = 0;

	if (c->source != SVPUB_SOURCE_SINE || sig->nfreq != 1 || sig->noise_i > 0 || sig->noise_v > 0 || !sig->rate)
		return 0;
	for (uint32_t p = 1; p <= PERIOD_MAX_SAMPLES && p <= sig->rate; p++) {
		double cyc = f * p / sig->rate;

		if (fabs(cyc - nearbyint(cyc)) < 1e-9 && nearbyint(cyc) >= 1) {
			pn = p;
			break;
		}
	}
	if (!pn)
		return 0; /* e.g. 49.9 Hz at 4000 samples/s: 40000 samples per period */
	sig->period_values = malloc((size_t)pn * SVPUB_CHANNELS * sizeof(*sig->period_values));
	if (!sig->period_values)
		return -ENOMEM;
	/* Sample p and sample p + k * pn are k whole cycles apart: the same angles, the same values. */
	for (uint32_t p = 0; p < pn; p++)
		sine_values(sig, p, one, one, sig->period_values + (size_t)p * SVPUB_CHANNELS);
	sig->period_n = pn;
	return 0;
}
