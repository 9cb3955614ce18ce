// SPDX-License-Identifier: Apache-2.0
/* svpub: schedule arithmetic for every preset, signal values against closed forms, config rules (and where
 * they point in the file), frame sizes against the template and the MTU, the transmit-error messages, and
 * the engine end to end into a pcap file (read back with sv_pcap + sv_codec). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sv_clock.h"
#include "sv_codec.h"
#include "sv_dataset.h"
#include "sv_log.h"
#include "sv_pcap.h"
#include "svpub_config.h"
#include "svpub_engine.h"
#include "svpub_signal.h"
#include "svpub_tx.h"

/* Every preset: frame k's first smpCnt is (k*asdus) mod rate, the first frame of every second has
 * smpCnt 0, deadlines are strictly increasing with spacing within 1 ns of the period, the deadline is
 * the last ASDU's sample instant, and nothing drifts after many seconds. */
static void test_schedule_presets(void **state)
{
	(void)state;
	for (unsigned pi = 0; pi < sv_profiles_count; pi++) {
		const struct sv_profile *pr = &sv_profiles[pi];
		uint32_t rate = pr->sample_rate, asdus = pr->asdus_per_frame, fps = rate / asdus;
		const int64_t start = 1700000000; /* a TAI second */
		const uint64_t ks[] = { 0, fps - 2, fps - 1, fps, fps + 1, 3 * fps - 1, 3 * fps, 86400ull * fps * 365 };

		for (unsigned i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
			uint64_t k = ks[i];
			uint64_t n = k * asdus;
			int64_t sec;
			uint32_t cnt;
			int64_t d = sv_frame_deadline_ns(start, k, rate, asdus);

			svpub_sample_split(start, n, rate, &sec, &cnt);
			assert_int_equal(cnt, (uint32_t)(n % rate));
			assert_int_equal(cnt, sv_frame_first_smpcnt(k, rate, asdus));
			assert_true(sec == start + (int64_t)(k / fps));
			if (k % fps == 0) {
				assert_int_equal(cnt, 0); /* top of the second */
				assert_true(svpub_sample_ns(start, n, rate) == sec * SV_NSEC_PER_SEC);
			}
			if (k % fps == fps - 1)
				assert_int_equal(cnt + asdus - 1, rate - 1); /* last frame ends the second */
			/* deadline = instant of the last ASDU */
			assert_true(d == svpub_sample_ns(start, n + asdus - 1, rate));
			if (k) {
				int64_t prev = sv_frame_deadline_ns(start, k - 1, rate, asdus);
				int64_t period = (int64_t)asdus * SV_NSEC_PER_SEC / rate;

				assert_true(d > prev);
				assert_true(llabs(d - prev - period) <= 1);
			}
			/* index_at finds this frame from its own deadline */
			assert_true(sv_frame_index_at(start, d, rate, asdus) == k);
		}
		/* a year later the schedule is still on the second exactly */
		assert_true(sv_frame_deadline_ns(start, 86400ull * 365 * fps, rate, asdus) ==
			    (start + 86400ll * 365) * SV_NSEC_PER_SEC + sv_sample_offset_ns(asdus - 1, rate));
	}
}

static struct svpub_config cfg;

static void cfg_one(const char *profile)
{
	struct sv_cfg_error err;

	assert_int_equal(svpub_config_init(&cfg), 0);
	snprintf(cfg.streams[0].profile, sizeof(cfg.streams[0].profile), "%s", profile);
	cfg.backend = SVPUB_BACKEND_PCAP;
	snprintf(cfg.output, sizeof(cfg.output), "/tmp/x.pcap");
	assert_int_equal(svpub_config_resolve(&cfg, &err), 0);
}

static double lsb_i(double a_rms, double cycles, double deg)
{
	return M_SQRT2 * a_rms * sin(2 * M_PI * cycles + deg * M_PI / 180) / SV_CURRENT_LSB_A;
}

static void test_signal_sine(void **state)
{
	struct svpub_signal sig;
	int32_t v[8];
	uint32_t q[8];
	struct svpub_signal_cfg *s;

	(void)state;
	cfg_one("9-2le-60hz");
	s = &cfg.streams[0].signal;
	assert_true(s->frequency == 60.0); /* nominal of the profile */
	s->current[0] = 1000;
	s->current[1] = 500;
	s->current[2] = 0;
	s->nharmonics = 1;
	s->harmonics[0].order = 5;
	s->harmonics[0].magnitude = 0.2;
	s->harmonics[0].angle = 30;
	assert_int_equal(svpub_signal_init(&sig, &cfg.streams[0], 0), 0);
	for (uint64_t n = 0; n < 4800 * 2; n += 37) {
		double t = (double)n / 4800;
		double ia = 0, ib = 0, sum = 0;
		double cyc = 60.0 * t;
		double x[3];

		assert_false(svpub_signal_sample(&sig, n, v, q));
		for (int p = 0; p < 3; p++) {
			double ph = 2 * M_PI * cyc + s->current_angle[p] * M_PI / 180;

			x[p] = M_SQRT2 * s->current[p] * (sin(ph) + 0.2 * sin(5 * ph + M_PI / 6)) / SV_CURRENT_LSB_A;
			sum += x[p];
		}
		ia = x[0];
		ib = x[1];
		assert_true(fabs(v[0] - ia) <= 0.5 + 1e-6);
		assert_true(fabs(v[1] - ib) <= 0.5 + 1e-6);
		assert_int_equal(v[2], 0);
		assert_true(fabs(v[3] - sum) <= 0.5 + 1e-6); /* In = residual sum */
		double pv = 2 * M_PI * cyc; /* voltage a at 0 degrees, with the same harmonic */
		double va = M_SQRT2 * s->voltage[0] * (sin(pv) + 0.2 * sin(5 * pv + M_PI / 6)) / SV_VOLTAGE_LSB_V;

		assert_true(fabs(v[4] - va) <= 0.5 + 1e-6);
		for (int c = 0; c < 8; c++)
			assert_int_equal(q[c], 0);
	}
	svpub_signal_free(&sig);
}

static void test_signal_events(void **state)
{
	struct svpub_signal sig;
	int32_t v[8];
	uint32_t q[8];
	struct svpub_signal_cfg *s;

	(void)state;
	cfg_one("9-2le-50hz");
	s = &cfg.streams[0].signal;
	s->nevents = 4;
	s->events[0] = (struct svpub_event_cfg){ .at = 0.5, .duration = 0.1, .type = SVPUB_EV_FAULT, .phases = "b",
						 .current_factor = 10, .voltage_factor = 0.25, .frequency = 50 };
	s->events[1] = (struct svpub_event_cfg){ .at = 1.0, .type = SVPUB_EV_FREQUENCY, .phases = "abc",
						 .frequency = 49.0, .current_factor = 1, .voltage_factor = 1 };
	s->events[2] = (struct svpub_event_cfg){ .at = 1.2, .duration = 0.05, .type = SVPUB_EV_QUALITY,
						 .phases = "an", .quality = SV_Q_TEST | 1 };
	s->events[3] = (struct svpub_event_cfg){ .at = 1.5, .duration = 0.25, .type = SVPUB_EV_STOP, .phases = "abc" };
	assert_int_equal(svpub_signal_init(&sig, &cfg.streams[0], 0), 0);

	/* phase continuity: cycles(t) = 50 t before 1 s, 50 + 49 (t - 1) after */
	assert_true(fabs(svpub_signal_cycles(&sig, 0.75) - 37.5) < 1e-9);
	assert_true(fabs(svpub_signal_cycles(&sig, 1.25) - (50 + 49 * 0.25)) < 1e-9);

	for (uint64_t n = 0; n < 4000 * 2; n += 13) {
		double t = n / 4000.0;
		double cyc = t < 1.0 ? 50 * t : 50 + 49 * (t - 1);
		bool fault = t >= 0.5 && t < 0.6;
		bool stop = t >= 1.5 && t < 1.75;
		bool qual = t >= 1.2 && t < 1.25;
		double ib = lsb_i(100, cyc, -150) * (fault ? 10 : 1);
		double ia = lsb_i(100, cyc, -30);
		double vb = M_SQRT2 * 63508 * sin(2 * M_PI * cyc - 2 * M_PI / 3) / SV_VOLTAGE_LSB_V * (fault ? 0.25 : 1);

		assert_int_equal(svpub_signal_sample(&sig, n, v, q), stop);
		assert_true(fabs(v[0] - ia) <= 0.5 + 1e-6);
		assert_true(fabs(v[1] - ib) <= 0.5 + 1e-6);
		assert_true(fabs(v[5] - vb) <= 0.5 + 1e-6);
		assert_int_equal(q[0], qual ? (SV_Q_TEST | 1) : 0);
		assert_int_equal(q[4], qual ? (SV_Q_TEST | 1) : 0);
		assert_int_equal(q[3], qual ? (SV_Q_TEST | 1) : 0);
		assert_int_equal(q[1], 0);
	}
	svpub_signal_free(&sig);
}

/* The period table of a stationary sine: used when the waveform repeats within PERIOD_MAX_SAMPLES
 * (50 Hz at 4000/s: 80 samples; 60 Hz at 4800/s: 80; 50 Hz at 4800/s: 96), not with noise, a frequency
 * event or an aperiodic frequency; its values equal the per-sample computation, and fault events (which
 * change the values) still follow the closed form. */
static void test_signal_period_table(void **state)
{
	struct svpub_signal sig;
	int32_t v[8], w[8];
	uint32_t q[8];
	struct svpub_signal_cfg *s;
	static const struct {
		const char *profile;
		double f, noise;
		uint32_t period_n;
	} cases[] = {
		{ "9-2le-50hz", 0, 0, 80 },	  { "9-2le-60hz", 0, 0, 80 }, { "F4800S2I4U4", 0, 0, 96 },
		{ "9-2le-50hz", 49.9, 0, 0 },	  { "9-2le-50hz", 0, 0.5, 0 }, { "F14400S6I4U4", 0, 0, 288 },
		{ "9-2le-256-50hz", 50.5, 0, 0 },
	};

	(void)state;
	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		cfg_one(cases[c].profile);
		s = &cfg.streams[0].signal;
		if (cases[c].f)
			s->frequency = cases[c].f;
		s->current_noise = cases[c].noise;
		assert_int_equal(svpub_signal_init(&sig, &cfg.streams[0], 0), 0);
		assert_int_equal(sig.period_n, cases[c].period_n);
		assert_true((sig.period_values != NULL) == (cases[c].period_n != 0));
		svpub_signal_free(&sig);
	}

	cfg_one("9-2le-50hz");
	s = &cfg.streams[0].signal;
	s->nharmonics = 1;
	s->harmonics[0] = (struct svpub_harmonic_cfg){ .order = 3, .magnitude = 0.1, .angle = 45 };
	s->nevents = 2;
	s->events[0] = (struct svpub_event_cfg){ .at = 0.5, .duration = 0.1, .type = SVPUB_EV_FAULT, .phases = "b",
						 .current_factor = 10, .voltage_factor = 0.25, .frequency = 50 };
	s->events[1] = (struct svpub_event_cfg){ .at = 0.55, .duration = 0.1, .type = SVPUB_EV_QUALITY,
						 .phases = "a", .quality = SV_Q_TEST };
	assert_int_equal(svpub_signal_init(&sig, &cfg.streams[0], 0), 0);
	assert_int_equal(sig.period_n, 80);
	for (uint64_t n = 0; n < 4000 * 3 + 7; n++) {
		int32_t *table = sig.period_values;
		double t = n / 4000.0, cyc = 50 * t;
		bool fault = t >= 0.5 && t < 0.6;
		double ib = M_SQRT2 * 100 *
			    (sin(2 * M_PI * cyc - 150 * M_PI / 180) + 0.1 * sin(3 * (2 * M_PI * cyc - 150 * M_PI / 180) + M_PI / 4)) /
			    SV_CURRENT_LSB_A * (fault ? 10 : 1);

		svpub_signal_sample(&sig, n, v, q);
		assert_true(fabs(v[1] - ib) <= 0.5 + 1e-6);
		assert_int_equal(q[0], t >= 0.55 && t < 0.65 ? SV_Q_TEST : 0);
		/* the same sample without the table */
		sig.period_values = NULL;
		svpub_signal_sample(&sig, n, w, q);
		sig.period_values = table;
		for (int ch = 0; ch < 8; ch++)
			assert_true(abs(v[ch] - w[ch]) <= 1); /* both within 0.5 LSB of the closed form */
	}
	svpub_signal_free(&sig);
}

static void test_signal_noise(void **state)
{
	struct svpub_signal sig, sig2;
	int32_t v[8], v2[8];
	uint32_t q[8];
	double sum = 0, sum2 = 0;
	const unsigned N = 20000;

	(void)state;
	cfg_one("9-2le-50hz");
	for (int p = 0; p < 3; p++)
		cfg.streams[0].signal.current[p] = 0;
	cfg.streams[0].signal.current_noise = 2.0; /* A -> 2000 LSB */
	cfg.streams[0].signal.seed = 42;
	assert_int_equal(svpub_signal_init(&sig, &cfg.streams[0], 0), 0);
	assert_int_equal(svpub_signal_init(&sig2, &cfg.streams[0], 0), 0);
	for (unsigned n = 0; n < N; n++) {
		svpub_signal_sample(&sig, n, v, q);
		sum += v[0];
		sum2 += (double)v[0] * v[0];
	}
	double mean = sum / N, sd = sqrt(sum2 / N - mean * mean);

	assert_true(fabs(mean) < 60);	      /* 3 sigma of the mean: 3 * 2000 / sqrt(20000) = 42 */
	assert_true(fabs(sd - 2000) < 60);    /* 3 %% */
	/* deterministic: same seed, same sample, in any order */
	svpub_signal_sample(&sig, 12345, v, q);
	svpub_signal_sample(&sig2, 1, v2, q);
	svpub_signal_sample(&sig2, 12345, v2, q);
	assert_memory_equal(v, v2, sizeof(v));
	/* another seed changes it */
	cfg.streams[0].signal.seed = 43;
	svpub_signal_free(&sig2);
	assert_int_equal(svpub_signal_init(&sig2, &cfg.streams[0], 0), 0);
	svpub_signal_sample(&sig2, 12345, v2, q);
	assert_true(v[0] != v2[0]);
	svpub_signal_free(&sig);
	svpub_signal_free(&sig2);
}

static void test_config_rules(void **state)
{
	struct sv_cfg_error err;

	(void)state;
	assert_int_equal(svpub_config_init(&cfg), 0);
	/* default: one 9-2LE 50 Hz stream on af_packet, which needs an interface to run, not to be printed */
	assert_int_equal(cfg.nstreams, 1);
	assert_string_equal(cfg.streams[0].profile, "9-2le-50hz");
	assert_int_equal(svpub_config_resolve(&cfg, &err), 0);
	assert_int_equal(svpub_config_check_output(&cfg, &err), -EINVAL);
	assert_non_null(strstr(err.text, "--interface"));
	cfg.backend = SVPUB_BACKEND_PCAP;
	assert_int_equal(svpub_config_check_output(&cfg, &err), -EINVAL);
	assert_non_null(strstr(err.text, "--write"));
	snprintf(cfg.output, sizeof(cfg.output), "/tmp/x.pcap");
	/* a file is written unpaced: it needs an end */
	assert_int_equal(svpub_config_check_output(&cfg, &err), -EINVAL);
	assert_non_null(strstr(err.text, "--duration"));
	cfg.streams[0].count = 10;
	assert_int_equal(svpub_config_check_output(&cfg, &err), 0);
	cfg.streams[0].count = 0;
	cfg.duration = 0.5;
	assert_int_equal(svpub_config_check_output(&cfg, &err), 0);
	snprintf(cfg.streams[0].profile, sizeof(cfg.streams[0].profile), "nope");
	assert_int_equal(svpub_config_resolve(&cfg, &err), -EINVAL);
	assert_non_null(strstr(err.text, "streams[0].profile"));
	snprintf(cfg.streams[0].profile, sizeof(cfg.streams[0].profile), "9-2le-50hz");
	cfg.streams[0].asdus = 3; /* 4000 % 3 != 0 */
	assert_int_equal(svpub_config_resolve(&cfg, &err), -EINVAL);
	assert_non_null(strstr(err.text, "multiple"));
	cfg.streams[0].asdus = 0;
	cfg.streams[0].signal.nevents = 1;
	snprintf(cfg.streams[0].signal.events[0].phases, 8, "ax");
	assert_int_equal(svpub_config_resolve(&cfg, &err), -EINVAL);
	assert_non_null(strstr(err.text, "streams[0].signal.events[0].phases"));
	snprintf(cfg.streams[0].signal.events[0].phases, 8, "an");
	assert_int_equal(svpub_config_resolve(&cfg, &err), 0);
}

/* Rules checked after loading still name file:line:column when the file holds the offending value (want
 * starts with ':'), and do not when an override replaced it. A rule of several keys points at the one the file
 * holds. */
#define ID10 "MU01LD0123"
#define ID120 ID10 ID10 ID10 ID10 ID10 ID10 ID10 ID10 ID10 ID10 ID10 ID10
static void test_config_rule_positions(void **state)
{
	static const struct {
		const char *yaml, *set, *want;
	} cases[] = {
		{ "streams:\n  - svid: A\n    profile: F4800\n", NULL, ":3:14: streams[0].profile: unknown profile" },
		{ "streams:\n  - svid: A\n  - profile: 9-2le-60hz\n    signal:\n      events:\n        - type: quality\n"
		  "        - type: fault\n          phases: abx\n",
		  NULL, ":8:19: streams[1].signal.events[1].phases: phases are letters" },
		{ "streams:\n  - profile: F4800S2I4U4\n", "streams[0].profile=nope", "streams[0].profile: unknown profile" },
		/* issue 27: rules that had no position */
		{ "streams: []\n", NULL, ":1:10: streams: at least one stream is needed" },
		{ "streams:\n  - sample_rate: 70000\n", NULL, ":2:18: streams[0].sample_rate: 70000 samples/s: smpCnt is 16 bits" },
		{ "streams:\n  - smp_synch: 0\n    sample_rate: 0x11170\n", NULL,
		  ":3:18: streams[0].sample_rate: 70000 samples/s: smpCnt is 16 bits" },
		{ "streams:\n  - sample_rate: 8000\n", "streams[0].sample_rate=70000", "streams[0].sample_rate: 70000 samples/s" },
		{ "streams:\n  - profile: 9-2le-60hz\n    asdus: 7\n", NULL, ":3:12: streams[0].asdus: the sample rate (4800/s)" },
		{ "streams:\n  - asdus: 7\n", "streams[0].sample_rate=4950", ":2:12: streams[0].asdus: the sample rate (4950/s)" },
		{ "streams:\n  - sample_rate: 4010\n", NULL, ":2:18: streams[0].sample_rate: 4010 samples/s is no whole number" },
		{ "streams:\n  - profile: F4800S2I4U4\n    sample_rate: 65536\n", NULL,
		  ":3:18: streams[0].sample_rate: 65536 samples/s: smpRate is 16 bits" },
		{ "streams:\n  - svid: A\n  - svid: \"M\\u00dc01\"\n", NULL,
		  ":3:11: streams[1].svid: svID is a VisibleString (IEC 61850-9-2: printable ASCII 0x20..0x7E): octet 2 is 0xC3" },
		{ "streams:\n  - datset: \"LD0\\tX\"\n", NULL, ":2:13: streams[0].datset: datSet is a VisibleString" },
		{ "streams:\n  - asdus: 16\n", NULL, ":2:12: streams[0].asdus: a frame of 16 ASDUs is 1541 octets" },
		{ "streams:\n  - profile: 9-2le-256-50hz\n    svid: " ID120 "\n", NULL, ":3:11: streams[0].svid: a frame of 8 ASDUs is" },
		{ "streams:\n  - signal:\n      source: replay\n", NULL,
		  ":3:15: streams[0].signal.source: source replay needs a capture file" },
	};
	char path[64];

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_pub_cfg_%d.yaml", (int)getpid());
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sv_cfg_error err;
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs(cases[i].yaml, f);
		fclose(f);
		assert_int_equal(svpub_config_init(&cfg), 0);
		assert_int_equal(sv_config_load_file(svpub_config_table, &cfg, path, &err), 0);
		if (cases[i].set)
			assert_int_equal(sv_config_set(svpub_config_table, &cfg, cases[i].set, &err), 0);
		if (svpub_config_resolve_file(&cfg, path, &err) != -EINVAL)
			fail_msg("case %u: accepted", i);
		if (!strstr(err.text, cases[i].want))
			fail_msg("case %u: '%s' does not contain '%s'", i, err.text, cases[i].want);
		if (cases[i].want[0] != ':')
			assert_int_equal(err.line, 0); /* the file says something else: no position in it */
		else
			assert_int_equal(strncmp(err.text, path, strlen(path)), 0);
	}
	unlink(path);
}

/* The rules svpub checks once the config is loaded, one row each (overrides applied to the defaults): what
 * passes, and what is refused with the key and the reason. */
static void test_config_rule_table(void **state)
{
	static const struct {
		const char *set[4];
		const char *want; /* NULL: accepted */
	} cases[] = {
		{ { NULL }, NULL },
		/* the frame within the template (SV_TEMPLATE_MAX_FRAME): 16 ASDUs of the default svID do not fit */
		{ { "streams[0].asdus=16" }, "streams[0].asdus: a frame of 16 ASDUs is 1541 octets, over the 1536 of svpub's "
					     "frame buffer (and over a 1500-octet MTU): 15 ASDUs fit" },
		{ { "streams[0].asdus=16", "streams[0].svid=A" }, NULL },
		{ { "streams[0].asdus=15", "streams[0].sample_rate=6000" }, NULL },
		{ { "streams[0].asdus=16", "streams[0].svid=A", "streams[0].refrtm=true" }, "15 ASDUs fit" },
		/* svID and datSet are VisibleStrings: 0x20..0x7E */
		{ { "streams[0].svid=MU\t01" }, "streams[0].svid: svID is a VisibleString (IEC 61850-9-2: printable ASCII "
						"0x20..0x7E): octet 3 is 0x09" },
		{ { "streams[0].svid=M\xc3\x9c" "01" }, "streams[0].svid: svID is a VisibleString" },
		{ { "streams[0].svid= ~MU01~ " }, NULL },
		{ { "streams[0].datset=LD0/LLN0$D\x7f" }, "streams[0].datset: datSet is a VisibleString (IEC 61850-9-2: printable "
							 "ASCII 0x20..0x7E): octet 11 is 0x7F" },
		{ { "streams[0].datset=LD0/LLN0$PhsMeas1" }, NULL },
		/* smpCnt: 16 bits, restarted every second whatever smpSynch says */
		{ { "streams[0].sample_rate=70000" }, "streams[0].sample_rate: 70000 samples/s: smpCnt is 16 bits" },
		{ { "streams[0].sample_rate=70000", "streams[0].smp_synch=0" }, "(smpSynch 0): at most 65536 samples/s" },
		{ { "streams[0].sample_rate=65536", "streams[0].smprate=false" }, NULL },
		/* smpRate: a whole number of samples per nominal period (smpMod 0), 16 bits */
		{ { "streams[0].sample_rate=4010" }, "streams[0].sample_rate: 4010 samples/s is no whole number of samples "
						     "per 50 Hz period" },
		{ { "streams[0].sample_rate=4010", "streams[0].smprate=false" }, NULL },
		{ { "streams[0].profile=F4800S2I4U4", "streams[0].sample_rate=65536" },
		  "streams[0].sample_rate: 65536 samples/s: smpRate is 16 bits and cannot carry 65536 (samples per second" },
		{ { "streams[0].profile=F4800S2I4U4", "streams[0].sample_rate=65534" }, NULL },
		{ { "streams[0].profile=9-2le-60hz", "streams[0].asdus=7" }, "streams[0].asdus: the sample rate (4800/s) must "
									    "be a multiple of the ASDUs per frame (7)" },
		{ { "streams[0].signal.source=replay" }, "streams[0].signal.replay: source replay needs a capture file" },
		{ { "streams[1].asdus=16" }, "streams[1].asdus: a frame of 16 ASDUs is 1541" },
		{ { "streams[1].svid=B", "streams[1].asdus=16", "streams[1].sample_rate=4800" }, NULL },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sv_cfg_error err;
		int ret;

		assert_int_equal(svpub_config_init(&cfg), 0);
		for (unsigned k = 0; k < 4 && cases[i].set[k]; k++)
			if (sv_config_set(svpub_config_table, &cfg, cases[i].set[k], &err))
				fail_msg("case %u: %s: %s", i, cases[i].set[k], err.text);
		ret = svpub_config_resolve(&cfg, &err);
		if (!cases[i].want && ret)
			fail_msg("case %u: refused: %s", i, err.text);
		if (cases[i].want && (ret != -EINVAL || !strstr(err.text, cases[i].want)))
			fail_msg("case %u: got %d '%s', want '%s'", i, ret, err.text, cases[i].want);
		if (!ret) /* what resolve accepts, the engine can build */
			for (unsigned k = 0; k < cfg.nstreams; k++) {
				static struct sv_template t;
				static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };

				assert_int_equal(svpub_stream_template(&cfg.streams[k], mac, &t), 0);
				assert_int_equal(t.len, svpub_stream_frame_len(&cfg.streams[k]));
			}
	}
}

/* The frames the engine builds are the size the config rules measure, for every preset and field. */
static void test_stream_frame_len(void **state)
{
	static struct sv_view v;
	static struct sv_template t;
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 1 };
	struct sv_cfg_error err;

	(void)state;
	for (unsigned pi = 0; pi < sv_profiles_count; pi++) {
		for (unsigned variant = 0; variant < 4; variant++) {
			assert_int_equal(svpub_config_init(&cfg), 0);
			snprintf(cfg.streams[0].profile, sizeof(cfg.streams[0].profile), "%s", sv_profiles[pi].name);
			cfg.streams[0].refrtm = variant & 1;
			cfg.streams[0].vlan_id = variant & 2 ? -1 : 7;
			if (variant == 3)
				snprintf(cfg.streams[0].datset, sizeof(cfg.streams[0].datset), "MU01LD0/LLN0$PhsMeas1");
			assert_int_equal(svpub_config_resolve(&cfg, &err), 0);
			assert_int_equal(svpub_stream_template(&cfg.streams[0], mac, &t), 0);
			assert_int_equal(t.len, svpub_stream_frame_len(&cfg.streams[0]));
			assert_int_equal(sv_codec_decode(t.frame, t.len, &v, NULL), 0);
			assert_int_equal(v.noASDU, svpub_stream_asdus(&cfg.streams[0]));
			assert_int_equal(v.vlan, variant & 2 ? 0 : 1);
		}
	}
}

/* Frames over the interface's MTU are refused before the run (the kernel takes MTU + 14, + 4 when tagged). */
static void test_tx_frame_len(void **state)
{
	static const struct {
		uint32_t mtu;
		unsigned len;
		bool tagged;
		int want;
	} cases[] = {
		{ 1500, 1514, false, 0 },    { 1500, 1515, false, -EMSGSIZE }, { 1500, 1518, true, 0 },
		{ 1500, 1519, true, -EMSGSIZE }, { 9000, 1541, true, 0 },	       { 0, 60000, false, 0 },
		{ 1280, 1295, true, 0 },     { 1280, 1299, false, -EMSGSIZE },
	};
	struct svpub_tx tx;

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&tx, 0, sizeof(tx));
		tx.mtu = cases[i].mtu;
		if (svpub_tx_check_frame_len(&tx, "eth9", "MU01", cases[i].len, cases[i].tagged) != cases[i].want)
			fail_msg("case %u: mtu %u len %u", i, cases[i].mtu, cases[i].len);
	}
}

/* Transmit errors: said at once, then at most once a second while they last, "stopped" a second after the
 * last, and what is left at the end of the run; counted per errno. */
static char logged[16][512];
static enum sv_log_level logged_level[16];
static unsigned nlogged;

static void log_capture(enum sv_log_level level, const char *msg, void *ctx)
{
	(void)ctx;
	if (nlogged < 16) {
		snprintf(logged[nlogged], sizeof(logged[0]), "%s", msg);
		logged_level[nlogged] = level;
	}
	nlogged++;
}

static void test_tx_errlog(void **state)
{
	static const struct {
		int64_t t_ms;
		int err;	  /* a frame refused with it before the report; 0: none */
		unsigned n;	  /* how many */
		bool final;
		const char *want; /* the message this report call logs; NULL: none */
	} steps[] = {
		{ 0, ENOBUFS, 3, false, "transmit errors on svtest0: the kernel refuses frames: No buffer space available (ENOBUFS" },
		{ 300, ENOBUFS, 2, false, NULL },
		{ 999, 0, 0, false, NULL },
		{ 1000, ENOBUFS, 1, false, "transmit errors on svtest0: 3 more frames refused in the last 1.0 s (latest: "
					   "ENOBUFS, No buffer space available), 6 since they began" },
		{ 1500, 0, 0, false, NULL },
		{ 1999, 0, 0, false, NULL },
		{ 2000, 0, 0, false, "transmit errors on svtest0 stopped: 6 frames refused over 1.000 s (this run: ENOBUFS 6)" },
		{ 2500, 0, 0, false, NULL },
		{ 3000, EMSGSIZE, 1, false, "(EMSGSIZE; the frame is over the interface's MTU)" },
		{ 3200, ENOBUFS, 1, false, NULL },
		{ 3300, 0, 0, true, "transmit errors on svtest0: 2 frames refused over 0.200 s, the last 0.100 s before the end "
				    "of the run (this run: ENOBUFS 7, EMSGSIZE 1)" },
	};
	struct svpub_tx_errlog l;
	char buf[128];

	(void)state;
	memset(&l, 0, sizeof(l));
	sv_log_set(log_capture, NULL, SV_LOG_DEBUG);
	for (unsigned i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		nlogged = 0;
		for (unsigned k = 0; k < steps[i].n; k++)
			svpub_tx_errlog_add(&l, steps[i].err);
		svpub_tx_errlog_report(&l, "svtest0", steps[i].t_ms * 1000000, steps[i].final);
		if (!steps[i].want && nlogged)
			fail_msg("step %u: unexpected '%s'", i, logged[0]);
		if (steps[i].want && (nlogged != 1 || !strstr(logged[0], steps[i].want)))
			fail_msg("step %u: %u messages, '%s', want '%s'", i, nlogged, nlogged ? logged[0] : "", steps[i].want);
	}
	/* errors every 10 ms for 10 s: one message at the start, one a second after, one when they stop */
	memset(&l, 0, sizeof(l));
	nlogged = 0;
	for (int64_t t = 0; t < 12 * SV_NSEC_PER_SEC; t += 10000000) {
		if (t < 10 * SV_NSEC_PER_SEC)
			svpub_tx_errlog_add(&l, ENOBUFS);
		svpub_tx_errlog_report(&l, "svtest0", t, false);
	}
	assert_in_range(nlogged, 11, 12);
	assert_non_null(strstr(logged[nlogged - 1], "stopped: 1000 frames refused over 9.990 s"));
	assert_int_equal(logged_level[nlogged - 1], SV_LOG_INFO);
	assert_int_equal(logged_level[1], SV_LOG_WARN);
	/* per errno: the first four, then "other" */
	memset(&l, 0, sizeof(l));
	svpub_tx_errlog_format(&l, buf, sizeof(buf));
	assert_string_equal(buf, "");
	for (int e = 1; e <= 6; e++)
		svpub_tx_errlog_add(&l, e == 1 ? ENOBUFS : e == 2 ? EMSGSIZE : e == 3 ? EINVAL : e == 4 ? EFAULT : EIO);
	svpub_tx_errlog_add(&l, ENOBUFS);
	svpub_tx_errlog_format(&l, buf, sizeof(buf));
	assert_string_equal(buf, "ENOBUFS 2, EMSGSIZE 1, EINVAL 1, EFAULT 1, other errnos 2");
	assert_int_equal(l.total, 7);
	sv_log_set(NULL, NULL, SV_LOG_ERR);
}

/* Events count from the start of publishing, not from the top of the second: a run starting at smpCnt 2737
 * (0.68425 s into the second) with a quality event at 0.5 s for 0.1 s flags exactly the 400 samples
 * 2000..2399 after its first one; a frequency step at 0.25 s happens 1000 samples after the first one. */
static void test_signal_events_from_start(void **state)
{
	struct svpub_signal sig;
	int32_t v[8];
	uint32_t q[8];
	struct svpub_signal_cfg *s;
	static const uint64_t firsts[] = { 0, 2737, 4000 * 5 + 3999 };

	(void)state;
	for (unsigned c = 0; c < sizeof(firsts) / sizeof(firsts[0]); c++) {
		uint64_t n0 = firsts[c], flagged = 0, first_flagged = UINT64_MAX, last_flagged = 0;

		cfg_one("9-2le-50hz");
		s = &cfg.streams[0].signal;
		s->nevents = 2;
		s->events[0] = (struct svpub_event_cfg){ .at = 0.5, .duration = 0.1, .type = SVPUB_EV_QUALITY,
							 .phases = "a", .quality = 1 };
		s->events[1] = (struct svpub_event_cfg){ .at = 0.25, .type = SVPUB_EV_FREQUENCY, .phases = "abc",
							 .frequency = 51.0 };
		assert_int_equal(svpub_signal_init(&sig, &cfg.streams[0], 0), 0);
		assert_int_equal(svpub_signal_set_start(&sig, svpub_sample_ns(0, n0, 4000)), 0);
		for (uint64_t n = n0; n < n0 + 4000 * 2; n++) {
			svpub_signal_sample(&sig, n, v, q);
			if (q[0]) {
				flagged++;
				if (first_flagged == UINT64_MAX)
					first_flagged = n;
				last_flagged = n;
			}
		}
		assert_int_equal(flagged, 400);
		assert_int_equal(first_flagged, n0 + 2000);
		assert_int_equal(last_flagged, n0 + 2399);
		/* 50 Hz up to start + 0.25 s, 51 Hz after, phase-continuous */
		double t0 = n0 / 4000.0;

		assert_true(fabs(svpub_signal_cycles(&sig, t0 + 0.25) - 50 * (t0 + 0.25)) < 1e-9);
		assert_true(fabs(svpub_signal_cycles(&sig, t0 + 0.75) - (50 * (t0 + 0.25) + 51 * 0.5)) < 1e-9);
		svpub_signal_free(&sig);
	}
}

/* The engine into a pcap file, 1 s per preset: exactly rate/asdus frames, smpCnt from 0 continuous by
 * asdus, timestamps = deadlines (last ASDU instant), second-aligned, values = the waveform. */
static void test_engine_pcap_presets(void **state)
{
	static struct sv_view v;
	char path[64];

	(void)state;
	snprintf(path, sizeof(path), "/tmp/test_pub_%d.pcap", (int)getpid());
	for (unsigned pi = 0; pi < sv_profiles_count; pi++) {
		const struct sv_profile *pr = &sv_profiles[pi];
		struct sv_cfg_error err;
		struct svpub *p;
		struct sv_pcap_reader *r;
		struct sv_pcap_pkt pkt;
		struct svpub_signal sig;
		volatile sig_atomic_t stop = 0;
		uint64_t frames = 0;
		int64_t t0 = 0;
		uint32_t rate = pr->sample_rate, asdus = pr->asdus_per_frame;

		assert_int_equal(svpub_config_init(&cfg), 0);
		snprintf(cfg.streams[0].profile, sizeof(cfg.streams[0].profile), "%s", pr->name);
		cfg.backend = SVPUB_BACKEND_PCAP;
		snprintf(cfg.output, sizeof(cfg.output), "%s", path);
		cfg.duration = 1.0;
		cfg.status = false;
		cfg.streams[0].vlan_id = 5;
		cfg.streams[0].refrtm = true;
		assert_int_equal(svpub_config_resolve(&cfg, &err), 0);
		assert_int_equal(svpub_create(&p, &cfg), 0);
		assert_int_equal(svpub_run(p, &stop), 0);
		assert_int_equal(svpub_destroy(p), 0);
		assert_int_equal(svpub_signal_init(&sig, &cfg.streams[0], 0), 0);

		assert_int_equal(sv_pcap_open_read(&r, path), 0);
		while (sv_pcap_next(r, &pkt) == 1) {
			int32_t want[8];
			uint32_t q[8];

			assert_int_equal(sv_codec_decode(pkt.data, pkt.caplen, &v, NULL), 0);
			assert_int_equal(v.noASDU, asdus);
			assert_true(v.vlan && v.vlan_id == 5 && v.vlan_pcp == 4);
			assert_int_equal(v.appid, 0x4000);
			if (!frames) {
				t0 = pkt.ts_ns - sv_sample_offset_ns(asdus - 1, rate);
				assert_int_equal(t0 % SV_NSEC_PER_SEC, 0); /* starts at the top of a second */
			}
			for (unsigned a = 0; a < asdus; a++) {
				uint64_t n = frames * asdus + a;

				assert_int_equal(v.asdu[a].smpCnt, n % rate);
				assert_int_equal(v.asdu[a].smpSynch, 2);
				assert_true(v.asdu[a].present & SV_HAS_REFRTM);
				svpub_signal_sample(&sig, n, want, q);
				for (unsigned c = 0; c < 8; c++)
					assert_int_equal(sv_asdu_value(&v.asdu[a], c), want[c]);
			}
			assert_true(pkt.ts_ns == t0 + sv_sample_offset_ns((uint32_t)(frames * asdus + asdus - 1), rate));
			frames++;
		}
		sv_pcap_close_read(r);
		svpub_signal_free(&sig);
		if (frames != rate / asdus)
			fail_msg("%s: %llu frames, %u expected", pr->name, (unsigned long long)frames, rate / asdus);
	}
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_schedule_presets), cmocka_unit_test(test_signal_sine),
		cmocka_unit_test(test_signal_events),	 cmocka_unit_test(test_signal_noise),
		cmocka_unit_test(test_signal_period_table),
		cmocka_unit_test(test_config_rules),	 cmocka_unit_test(test_config_rule_positions),
		cmocka_unit_test(test_config_rule_table), cmocka_unit_test(test_stream_frame_len),
		cmocka_unit_test(test_tx_frame_len),	 cmocka_unit_test(test_tx_errlog),
		cmocka_unit_test(test_signal_events_from_start),
		cmocka_unit_test(test_engine_pcap_presets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
