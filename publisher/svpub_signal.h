/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Signal sources: what a stream's samples carry.
 *
 * Sine: for phase p in {a, b, c} and the sample at t = n / rate seconds from the start second (the top of
 * the second the schedule counts from: smpCnt 0),
 *     x_p(t) = sqrt(2) * rms_p * F_p(t) * [ sin(theta(t) + phi_p)
 *                                          + sum_h m_h * sin(h * (theta(t) + phi_p) + psi_h) ] + noise
 *     theta(t) = 2 pi * integral_0^t f(u) du   (f piecewise constant: frequency events, phase-continuous)
 * F_p(t) = the fault factor while a fault event on p is active, else 1. The neutral channels are the
 * residual sums In = Ia + Ib + Ic, Vn = Va + Vb + Vc (of the noisy values). Values are rounded to the
 * nearest LSB (9-2LE: 1 mA, 10 mV) and clamped to INT32. Noise is Gaussian from a counter-based
 * generator keyed by (seed, stream index, n, channel): the same sample always gets the same noise,
 * whatever was skipped or sent late.
 *
 * Events are timed from the start of publishing (svpub_signal_set_start(): the first sample sent, which
 * is mid-second in a paced run): an event at @at with @duration covers the samples whose instant is in
 * [start + at, start + at + duration), compared in integer nanoseconds so that exactly duration * rate
 * samples are covered. Frequency events change f(t) at start + at.
 *
 * Replay: the samples of one stream of a capture, looped; events STOP and QUALITY still apply. A capture
 * sampled at another rate than the stream's plays at the wrong speed: svpub_signal_init() warns.
 * Channel layout: Ia Ib Ic In Va Vb Vc Vn (UCA 9-2LE PhsMeas1, IEC 61869-9 I4U4).
 */
#ifndef SVPUB_SIGNAL_H
#define SVPUB_SIGNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "svpub_config.h"

#define SVPUB_CHANNELS 8

struct svpub_signal {
	const struct svpub_signal_cfg *cfg;
	uint32_t rate;
	uint64_t key;	       /* noise key: seed mixed with the stream index */
	double amp_i[3], amp_v[3]; /* peak amplitudes in LSB */
	double phi_i[3], phi_v[3]; /* radians */
	double noise_i, noise_v;   /* LSB */
	int64_t start_ns;      /* start of publishing, ns after the top of the start second */
	int64_t ev_from_ns[SVPUB_MAX_EVENTS]; /* event e covers [from, to) ns after the top of the start second */
	int64_t ev_to_ns[SVPUB_MAX_EVENTS];
	unsigned nfreq;	       /* frequency events, sorted by time */
	double freq_at[SVPUB_MAX_EVENTS];
	double freq_hz[SVPUB_MAX_EVENTS];
	double phase_at[SVPUB_MAX_EVENTS]; /* cycles accumulated at freq_at[i] */
	int32_t *replay_values;		   /* replay: n * SVPUB_CHANNELS */
	uint32_t *replay_quality;
	uint64_t replay_n;
	/* Stationary sine (one frequency, no noise): the waveform repeats every period_n samples (f * period_n
	 * / rate is a whole number of cycles), so the values of one period are computed once; samples outside
	 * fault events are read from it instead of six sin() calls each (the per-frame cost in unpaced mode). */
	int32_t *period_values; /* period_n * SVPUB_CHANNELS, NULL when the signal is not periodic */
	uint32_t period_n;
};

/* Prepares @sig for stream @index of config @s (resolved). Replay reads the capture now (allocation
 * here, none per sample). Returns 0 or -errno (-EINVAL: capture without usable samples; logged). */
int svpub_signal_init(struct svpub_signal *sig, const struct svpub_stream_cfg *s, unsigned index);
void svpub_signal_free(struct svpub_signal *sig);

/* Times the events from @start_ns after the top of the start second (the instant of the first sample
 * published; 0 after init). Setup only: rebuilds the frequency segments and the period table (may
 * allocate). Returns 0 or -ENOMEM. */
int svpub_signal_set_start(struct svpub_signal *sig, int64_t start_ns);

/* Sample @n (n = 0 at the start second): SVPUB_CHANNELS values and qualities. Returns true when a STOP
 * event covers the sample (the frame is not sent). No allocation; safe on the per-frame path. */
bool svpub_signal_sample(const struct svpub_signal *sig, uint64_t n, int32_t *values, uint32_t *quality);

/* theta(t) / 2 pi: cycles of the fundamental since t = 0, the top of the start second (for tests). */
double svpub_signal_cycles(const struct svpub_signal *sig, double t_s);

/* The deterministic standard normal variate of (key, n, channel). */
double svpub_signal_gauss(uint64_t key, uint64_t n, unsigned channel);

#endif /* SVPUB_SIGNAL_H */
