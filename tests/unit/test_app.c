// SPDX-License-Identifier: Apache-2.0
/* svapp: one-cycle DFT against closed-form sines; the ANSI 50 overcurrent element (pickup boundary,
 * N-sample delay, blocking on quality / test / simulated, reset and re-trip); the svsub config table. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sv_clock.h"
#include "sv_dataset.h"
#include "svapp.h"

#define DEG (M_PI / 180.0)

static double wrap_pi(double a)
{
	while (a > M_PI)
		a -= 2 * M_PI;
	while (a <= -M_PI)
		a += 2 * M_PI;
	return a;
}

struct dft_case {
	unsigned n;
	double amp, phi_deg, dc, h3, h5; /* harmonics as fractions of amp */
};

static void run_dft_case(const struct dft_case *c, unsigned samples)
{
	static double cosv[SVAPP_DFT_MAX_N], sinv[SVAPP_DFT_MAX_N];
	static struct svapp_dft d;
	double w = 2 * M_PI / c->n, rms_want = c->amp / M_SQRT2;
	unsigned k;

	svapp_dft_tables(c->n, cosv, sinv);
	assert_int_equal(svapp_dft_init(&d, c->n, cosv, sinv), 0);
	for (k = 0; k < samples; k++) {
		double t = w * k + c->phi_deg * DEG;
		double x = c->amp * (cos(t) + c->h3 * cos(3 * t + 0.7) + c->h5 * sin(5 * t)) + c->dc;

		svapp_dft_push(&d, x);
		assert_true(svapp_dft_ready(&d) == (k + 1 >= c->n));
	}
	k = samples - 1;
	assert_true(fabs(svapp_dft_rms(&d) - rms_want) <= 1e-3 * rms_want);
	assert_true(fabs(wrap_pi(svapp_dft_angle(&d) - (w * k + c->phi_deg * DEG))) <= 0.1 * DEG);
}

static void test_dft_sines(void **state)
{
	static const struct dft_case cases[] = {
		{ 80, 1000, 0, 0, 0, 0 },      { 80, 28000, 30, 0, 0, 0 },   { 80, 1.5, -120, 0, 0, 0 },
		{ 96, 5000, 179.9, 0, 0, 0 },  { 256, 100, 45, 0, 0, 0 },    { 288, 7e6, -90, 0, 0, 0 },
		{ 80, 1000, 10, 300, 0, 0 },   /* DC offset (fault transient) rejected */
		{ 80, 1000, 60, 0, 0.2, 0.1 }, /* 3rd and 5th harmonics rejected */
		{ 96, 2000, -45, -50, 0.3, 0.15 },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_dft_case(&cases[i], cases[i].n);	      /* exactly one cycle */
		run_dft_case(&cases[i], cases[i].n * 3 + 17); /* any later sample */
	}
}

static void test_dft_long_run(void **state)
{
	/* Millions of recursive updates (with a 20 kA transient in between): no accumulated drift. */
	static const struct dft_case c = { 80, 1000, 20, 0, 0, 0 };

	(void)state;
	run_dft_case(&c, 2000003);
}

static void test_dft_not_ready_and_reset(void **state)
{
	static double cosv[80], sinv[80];
	static struct svapp_dft d;

	(void)state;
	assert_int_equal(svapp_dft_init(&d, 3, cosv, sinv), -EINVAL);
	assert_int_equal(svapp_dft_init(&d, SVAPP_DFT_MAX_N + 1, cosv, sinv), -EINVAL);
	svapp_dft_tables(80, cosv, sinv);
	assert_int_equal(svapp_dft_init(&d, 80, cosv, sinv), 0);
	for (unsigned k = 0; k < 79; k++)
		svapp_dft_push(&d, 100.0 * cos(2 * M_PI * k / 80));
	assert_false(svapp_dft_ready(&d));
	svapp_dft_push(&d, 100.0);
	assert_true(svapp_dft_ready(&d));
	svapp_dft_reset(&d);
	assert_false(svapp_dft_ready(&d));
	assert_true(svapp_dft_rms(&d) == 0.0);
	assert_int_equal(svapp_samples_per_cycle(4000, 50), 80);
	assert_int_equal(svapp_samples_per_cycle(4800, 60), 80);
	assert_int_equal(svapp_samples_per_cycle(14400, 50), 288);
	assert_int_equal(svapp_samples_per_cycle(0, 50), 0);
	assert_int_equal(svapp_samples_per_cycle(100, 50), 0);
}

/* ---- overcurrent through the application interface ---- */

struct oc_run {
	const struct svapp_ops *ops;
	void *ctx;
	FILE *out;
	struct svsub_stream_stats stats;
	struct svapp_stream s;
	struct svapp_sample x;
	uint32_t k; /* absolute sample number */
};

static void oc_open(struct oc_run *r, const struct svapp_params *p)
{
	memset(r, 0, sizeof(*r));
	r->ops = svapp_find("overcurrent");
	assert_non_null(r->ops);
	r->out = tmpfile();
	assert_non_null(r->out);
	assert_int_equal(r->ops->start(&r->ctx, p, r->out), 0);
	r->stats.rate = 4000;
	r->stats.wrap = 4000;
	strcpy(r->stats.svID, "MU01");
	r->s.stats = &r->stats;
	r->s.svID = r->stats.svID;
	r->s.appid = 0x4000;
	assert_int_equal(r->ops->stream_new(r->ctx, &r->s), 0);
	r->x.rate = 4000;
	r->x.nch = 8;
	r->x.dataset = sv_dataset_92le(); /* its scale: 1 mA per LSB */
	r->x.smpSynch = 2;
}

/* @n samples of three-phase currents of @rms_a A RMS (1 mA/LSB), quality @q on phases A..C. */
static void oc_feed(struct oc_run *r, unsigned n, double rms_a, uint32_t q, bool simulated)
{
	for (unsigned i = 0; i < n; i++, r->k++) {
		double t = 2 * M_PI * 50.0 * r->k / 4000.0;

		r->x.smpCnt = (uint16_t)(r->k % 4000);
		r->x.rx_ns = (int64_t)r->k * 250000;
		r->x.has_sample_time = true;
		r->x.sample_ns = r->x.rx_ns - 1000;
		r->x.simulated = simulated;
		for (unsigned ph = 0; ph < 3; ph++) {
			r->x.values[ph] = (int32_t)lround(rms_a * M_SQRT2 * 1000.0 * cos(t - ph * 2 * M_PI / 3));
			r->x.quality[ph] = q;
		}
		r->ops->sample(r->ctx, &r->s, &r->x);
	}
}

struct trip_info {
	unsigned trips, resets;
	long smpCnt, fault_smpCnt; /* of the last trip */
	char phases[8];
};

static void oc_close(struct oc_run *r, struct trip_info *ti)
{
	char line[2048];

	r->ops->stream_free(r->ctx, &r->s);
	r->ops->stop(r->ctx);
	memset(ti, 0, sizeof(*ti));
	ti->smpCnt = ti->fault_smpCnt = -1;
	rewind(r->out);
	while (fgets(line, sizeof(line), r->out)) {
		char *p;

		if (strstr(line, "\"event\":\"reset\""))
			ti->resets++;
		if (!strstr(line, "\"event\":\"trip\""))
			continue;
		ti->trips++;
		p = strstr(line, "\"smpCnt\":");
		assert_non_null(p);
		ti->smpCnt = strtol(p + 9, NULL, 10);
		p = strstr(line, "\"fault_smpCnt\":");
		assert_non_null(p);
		ti->fault_smpCnt = strtol(p + 15, NULL, 10);
		p = strstr(line, "\"phases\":\"");
		assert_non_null(p);
		sscanf(p + 10, "%7[A-C]", ti->phases);
		assert_non_null(strstr(line, "\"processing_ns\":"));
		assert_non_null(strstr(line, "\"fault_sample_ns\":"));
		assert_non_null(strstr(line, "\"decision_ns\":"));
	}
	fclose(r->out);
}

static void params(struct svapp_params *p)
{
	svapp_params_init(p);
}

static void test_oc_pickup_boundary(void **state)
{
	struct svapp_params p;
	struct oc_run r;
	struct trip_info ti;

	(void)state;
	params(&p);
	oc_open(&r, &p);
	oc_feed(&r, 4000, 999.0, 0, false); /* 0.1 % under pickup for a second: never */
	oc_close(&r, &ti);
	assert_int_equal(ti.trips, 0);

	oc_open(&r, &p);
	oc_feed(&r, 4000, 1001.0, 0, false); /* 0.1 % over: trips */
	oc_close(&r, &ti);
	assert_int_equal(ti.trips, 1);
	assert_string_equal(ti.phases, "ABC");

	p.pickup_a = 250.0; /* the pickup option is honoured */
	oc_open(&r, &p);
	oc_feed(&r, 4000, 260.0, 0, false);
	oc_close(&r, &ti);
	assert_int_equal(ti.trips, 1);
}

static void test_oc_n_sample_delay(void **state)
{
	static const unsigned ns[] = { 0, 1, 5, 20, 80 };
	struct svapp_params p;
	struct oc_run r;
	struct trip_info ti;

	(void)state;
	for (unsigned i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		unsigned want = ns[i] ? ns[i] : 20; /* default: a quarter cycle of 80 */

		params(&p);
		p.trip_samples = ns[i];
		oc_open(&r, &p);
		/* Over pickup from the first sample: the first decision is on the 80th (window full). */
		oc_feed(&r, 400, 5000.0, 0, false);
		oc_close(&r, &ti);
		assert_int_equal(ti.trips, 1);
		assert_int_equal(ti.fault_smpCnt, 79);
		assert_int_equal(ti.smpCnt - ti.fault_smpCnt, want - 1); /* the N-th sample over pickup */
	}
}

static void test_oc_step_fault_within_cycle(void **state)
{
	static const double amps[] = { 2000, 5000, 20000 };
	struct svapp_params p;
	struct oc_run r;
	struct trip_info ti;

	(void)state;
	for (unsigned i = 0; i < 3; i++) {
		params(&p);
		oc_open(&r, &p);
		oc_feed(&r, 400, 200.0, 0, false); /* load */
		oc_feed(&r, 400, amps[i], 0, false); /* fault at sample 400 */
		oc_close(&r, &ti);
		assert_int_equal(ti.trips, 1);
		assert_true(ti.fault_smpCnt >= 400); /* never before the fault */
		assert_true(ti.smpCnt - 400 <= 80);  /* within one cycle of it */
		assert_string_equal(ti.phases, "ABC");
	}
}

static void test_oc_blocking(void **state)
{
	struct {
		uint32_t q;
		bool sim, no_block_test;
		unsigned trips;
	} cases[] = {
		{ 0x1, false, false, 0 },	    /* invalid (Ed 2.1 numbering) */
		{ 0x2, false, false, 0 },	    /* invalid (older numbering) */
		{ 0x3, false, false, 0 },	    /* questionable */
		{ 0x3, false, true, 0 },	    /* questionable blocks even when tests are allowed */
		{ SV_Q_TEST, false, false, 0 },	    /* test */
		{ SV_Q_TEST, false, true, 1 },	    /* ... unless told otherwise */
		{ 0, true, false, 0 },		    /* simulated */
		{ 0, true, true, 1 },
		{ SV_Q_DERIVED | SV_Q_OVERFLOW, false, false, 1 }, /* detail flags with validity good: no block */
	};
	struct svapp_params p;
	struct oc_run r;
	struct trip_info ti;

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		params(&p);
		p.no_block_test = cases[i].no_block_test;
		oc_open(&r, &p);
		oc_feed(&r, 800, 20000.0, cases[i].q, cases[i].sim);
		oc_close(&r, &ti);
		assert_int_equal(ti.trips, cases[i].trips);
	}

	/* One invalid sample in a fault: blocked until it has left the one-cycle window, then trips. */
	params(&p);
	oc_open(&r, &p);
	oc_feed(&r, 400, 100.0, 0, false);
	oc_feed(&r, 10, 20000.0, 0, false);
	oc_feed(&r, 1, 20000.0, 0x1, false); /* sample 410 */
	oc_feed(&r, 400, 20000.0, 0, false);
	oc_close(&r, &ti);
	assert_int_equal(ti.trips, 1);
	assert_true(ti.fault_smpCnt >= 410 + 80);
	assert_int_equal(ti.smpCnt - ti.fault_smpCnt, 19);
}

static void test_oc_reset_and_retrip(void **state)
{
	struct svapp_params p;
	struct oc_run r;
	struct trip_info ti;

	(void)state;
	params(&p);
	oc_open(&r, &p);
	oc_feed(&r, 400, 100.0, 0, false);
	oc_feed(&r, 400, 8000.0, 0, false); /* fault 1 */
	oc_feed(&r, 400, 960.0, 0, false);  /* above 95 % of pickup: stays tripped, no second trip */
	oc_feed(&r, 400, 100.0, 0, false);  /* cleared: reset */
	oc_feed(&r, 400, 8000.0, 0, false); /* fault 2 at sample 1600 */
	oc_close(&r, &ti);
	assert_int_equal(ti.trips, 2);
	assert_int_equal(ti.resets, 1);
	assert_true(ti.fault_smpCnt >= 1600 && ti.smpCnt - 1600 <= 80);
}

static void test_oc_gap_restarts_window(void **state)
{
	struct svapp_params p;
	struct oc_run r;
	struct trip_info ti;

	(void)state;
	params(&p);
	oc_open(&r, &p);
	oc_feed(&r, 400, 5000.0, 0, false);
	oc_close(&r, &ti);
	assert_int_equal(ti.trips, 1);

	/* A gap every 50 samples: the window never fills, no decision on mixed windows. */
	oc_open(&r, &p);
	for (unsigned i = 0; i < 20; i++) {
		r.x.lost_before = true;
		oc_feed(&r, 1, 5000.0, 0, false);
		r.x.lost_before = false;
		oc_feed(&r, 49, 5000.0, 0, false);
	}
	oc_close(&r, &ti);
	assert_int_equal(ti.trips, 0);
}

/* ---- the dataset decides how samples read: tracker -> svapp_frame -> overcurrent (issue 27) ---------- */

enum enc { ENC_92LE, ENC_INT32_Q, ENC_FLOAT32_Q, ENC_FLOAT32, ENC_UNKNOWN };

struct ds_app_case {
	const char *name;
	enum enc enc;
	double scale;	    /* the declared channels' scale (A per LSB) */
	double current_lsb; /* --current-lsb, 0: the dataset's */
	double lsb;	    /* A per LSB of what is encoded */
	bool trips;
};

static const struct ds_app_case ds_app_cases[] = {
	{ "9-2LE assumed (64 octets): 1 mA per LSB", ENC_92LE, 0, 0, 0.001, true },
	{ "9-2LE, --current-lsb overrides its scale", ENC_92LE, 0, 0.002, 0.002, true },
	{ "INT32 + Quality declared, 10 mA per LSB", ENC_INT32_Q, 0.01, 0, 0.01, true },
	{ "FLOAT32 + Quality declared, amperes", ENC_FLOAT32_Q, 1, 0, 1, true },
	{ "FLOAT32 declared without quality", ENC_FLOAT32, 1, 0, 1, true },
	{ "24 octets undeclared: no channels, no decision", ENC_UNKNOWN, 0, 0, 1, false },
};

/* three phases of @a amperes peak at sample @k (50 Hz, 4000/s) into @seq as @enc says */
static uint16_t ds_app_encode(enum enc enc, double lsb, double amp, uint32_t k, uint8_t *seq)
{
	uint16_t len = 0;

	for (unsigned ph = 0; ph < 3; ph++) {
		double x = amp * cos(2 * M_PI * 50.0 * k / 4000.0 - ph * 2 * M_PI / 3) / lsb;
		float f = (float)x;
		uint32_t w;

		switch (enc) {
		case ENC_92LE:
		case ENC_INT32_Q:
			sv_put_be32(seq + len, (uint32_t)(int32_t)lround(x));
			sv_put_be32(seq + len + 4, 0);
			len += 8;
			break;
		case ENC_FLOAT32_Q:
		case ENC_FLOAT32:
		case ENC_UNKNOWN:
			memcpy(&w, &f, 4);
			sv_put_be32(seq + len, w);
			len += 4;
			if (enc != ENC_FLOAT32) {
				sv_put_be32(seq + len, enc == ENC_UNKNOWN ? 0x0a0a0a0a : 0); /* as a q: invalid */
				len += 4;
			}
			break;
		}
	}
	if (enc == ENC_92LE) {
		memset(seq + len, 0, 64 - len); /* In, voltages */
		len = 64;
	} else if (enc == ENC_UNKNOWN) {
		len = 24;
	}
	return len;
}

static void test_dataset_to_app(void **state)
{
	long ref = -1; /* the first case's trip */

	(void)state;
	for (unsigned k = 0; k < sizeof(ds_app_cases) / sizeof(ds_app_cases[0]); k++) {
		const struct ds_app_case *tc = &ds_app_cases[k];
		static struct svsub_dataset_rule rule;
		static struct sv_view v;
		struct svsub_track_cfg cfg = { 0 };
		struct svsub_sample_result res;
		struct svapp_params p;
		struct svsub_tracker *t;
		struct svapp_counts n;
		struct svapp *app;
		uint8_t seq[64];
		char line[1024];
		long trip_smpcnt = -1;
		FILE *out = tmpfile();

		print_message("case: %s\n", tc->name);
		memset(&rule, 0, sizeof(rule));
		rule.appid = -1;
		sv_dataset_init(&rule.ds, "declared");
		for (unsigned ph = 0; ph < 3 && tc->enc != ENC_92LE && tc->enc != ENC_UNKNOWN; ph++) {
			assert_int_equal(sv_dataset_add(&rule.ds, "i", tc->enc == ENC_INT32_Q ? SV_DA_INT32 : SV_DA_FLOAT32,
							tc->scale), 0);
			if (tc->enc != ENC_FLOAT32)
				assert_int_equal(sv_dataset_add(&rule.ds, "q", SV_DA_QUALITY, 1), 0);
		}
		if (rule.ds.nmembers) {
			cfg.datasets = &rule;
			cfg.ndatasets = 1;
		}
		assert_int_equal(svsub_track_create(&t, &cfg), 0);
		svapp_params_init(&p);
		p.current_lsb_a = tc->current_lsb;
		assert_non_null(out);
		assert_int_equal(svapp_create(&app, "overcurrent", &p, out), 0);
		memset(&v, 0, sizeof(v));
		v.appid = 0x4000;
		v.noASDU = 1;
		v.asdu[0].svID = (const uint8_t *)"MU01";
		v.asdu[0].svID_len = 4;
		v.asdu[0].smpSynch = SV_SMPSYNCH_GLOBAL;
		v.asdu[0].present = SV_HAS_SMPRATE;
		v.asdu[0].smpRate = 80;
		v.asdu[0].seqData = seq;
		/* 0.1 s at 100 A RMS, then 3 kA RMS (pickup 1 kA) */
		for (uint32_t i = 0; i < 800; i++) {
			int64_t rx = 1000 * SV_NSEC_PER_SEC + (int64_t)i * 250000 + 50000;

			v.asdu[0].smpCnt = (uint16_t)i;
			v.asdu[0].seqData_len = ds_app_encode(tc->enc, tc->lsb, (i < 400 ? 100 : 3000) * M_SQRT2, i, seq);
			svsub_track_frame(t, &v, rx, &res);
			svapp_frame(app, t, &v, &res, rx);
		}
		svapp_counts(app, &n);
		assert_int_equal(n.delivered, 800);
		svapp_destroy(app);
		svsub_track_destroy(t);
		rewind(out);
		while (fgets(line, sizeof(line), out)) {
			char *q = strstr(line, "\"event\":\"trip\"");

			if (q && (q = strstr(line, "\"smpCnt\":")))
				trip_smpcnt = strtol(q + 9, NULL, 10);
		}
		fclose(out);
		/* the same currents in every encoding: the same decision, a few samples into the fault */
		print_message("  trip at smpCnt %ld\n", trip_smpcnt);
		if (tc->trips) {
			assert_true(trip_smpcnt > 400 && trip_smpcnt < 400 + 80);
			if (ref < 0)
				ref = trip_smpcnt;
			assert_int_equal(trip_smpcnt, ref);
		} else {
			assert_int_equal(trip_smpcnt, -1);
		}
	}
}

static void test_registry_and_config(void **state)
{
	struct svsub_file_config c;
	struct sv_cfg_error err;
	static const char good[] = "app: overcurrent\npickup: 1500\ntrip_samples: 10\nnominal_hz: 60\n"
				   "backend: af_packet\nblock_test: false\n";
	static const char bad[] = "app: overcurrent\npickupp: 1500\n";

	(void)state;
	assert_ptr_equal(svapp_find("overcurrent"), &svapp_overcurrent_ops);
	assert_ptr_equal(svapp_find("phasor"), &svapp_phasor_ops);
	assert_null(svapp_find("nope"));
	assert_null(svapp_find(NULL));
	assert_int_equal(svsub_config_init(&c), 0);
	assert_true(c.pickup == 1000.0 && c.block_test && c.nominal_hz == 50);
	assert_int_equal(sv_config_load_string(svsub_config_table, &c, good, strlen(good), "t.yaml", &err), 0);
	assert_string_equal(c.app, "overcurrent");
	assert_true(c.pickup == 1500.0 && c.trip_samples == 10 && c.nominal_hz == 60 && !c.block_test);
	assert_int_equal(c.backend, SVSUB_CFG_AF_PACKET);
	assert_int_equal(sv_config_load_string(svsub_config_table, &c, bad, strlen(bad), "t.yaml", &err),
			 -EINVAL);
	assert_int_equal(err.line, 2);
	assert_non_null(strstr(err.text, "t.yaml:2:"));
}

/* One source for the ranges: a value is accepted on the command line (the table's row, sv_cli) exactly when
 * it is accepted in a file (load + svsub_config_check), and --help / the messages name the same range. */
static const struct range_case {
	const char *key, *value;
	bool ok;
} range_cases[] = {
	{ "wrap", "0", true },		   { "wrap", "1", false },	     { "wrap", "2", true },
	{ "wrap", "65536", true },	   { "wrap", "65537", false },	     { "wrap", "-1", false },
	{ "resync_run", "0", true },	   { "resync_run", "1", false },     { "resync_run", "2", true },
	{ "reorder_window", "0", true },   { "reorder_window", "65536", false },
	{ "duration", "0", true },	   { "duration", "0.5", true },	     { "duration", "-1", false },
	{ "max_latency_ms", "0", true },   { "max_latency_ms", "1000", false },
	{ "trip_samples", "0", true },	   { "max_streams", "0", false },    { "nominal_hz", "1001", false },
};

/* Makes @path (a mkstemp template) an empty temporary file's name. */
static void temp_file(char *path)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
}

/* Writes @text to @path and loads it as svsub does (defaults, the file, svsub_config_check). */
static int load_text(const char *path, const char *text, struct svsub_file_config *c, struct sv_cfg_error *err)
{
	FILE *f = fopen(path, "w");
	int rc;

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(svsub_config_init(c), 0);
	rc = sv_config_load_file(svsub_config_table, c, path, err);
	return rc ? rc : svsub_config_check(c, path, err->text, sizeof(err->text));
}

static void test_config_ranges_one_source(void **state)
{
	char path[] = "/tmp/test_app_cfg_XXXXXX", range[64];
	struct svsub_file_config c;
	struct sv_cfg_error err;

	(void)state;
	temp_file(path);
	for (size_t i = 0; i < sizeof(range_cases) / sizeof(range_cases[0]); i++) {
		const struct range_case *tc = &range_cases[i];
		char text[128];

		print_message("%s: %s\n", tc->key, tc->value);
		snprintf(text, sizeof(text), "nominal_hz: 60\n%s: %s\n", tc->key, tc->value);
		assert_int_equal(svsub_config_init(&c), 0);
		assert_int_equal(sv_config_set_value(svsub_config_table, &c, tc->key, tc->value, &err) == 0, tc->ok);
		assert_int_equal(load_text(path, text, &c, &err) == 0, tc->ok);
		if (!tc->ok)
			assert_non_null(strstr(err.text, ":2:")); /* file:line:column of the value */
	}

	/* the hole at 1, said the same way everywhere */
	assert_int_equal(sv_config_format_range(sv_config_find_key(svsub_config_table, "wrap"), range, sizeof(range)), 0);
	assert_string_equal(range, "0 or 2..65536");
	assert_int_equal(sv_config_format_range(sv_config_find_key(svsub_config_table, "resync_run"), range,
						sizeof(range)), 0);
	assert_string_equal(range, "0 or 2..65536");
	assert_int_equal(sv_config_format_range(sv_config_find_key(svsub_config_table, "max_streams"), range,
						sizeof(range)), 0);
	assert_string_equal(range, "1..1048576");
	assert_null(sv_config_find_key(svsub_config_table, "nope"));
	assert_int_equal(svsub_config_init(&c), 0);
	c.wrap = 7;
	assert_int_equal(sv_config_set_value(svsub_config_table, &c, "wrap", "1", &err), -EINVAL);
	assert_string_equal(err.msg, "1 is out of range 0 or 2..65536");
	assert_int_equal(c.wrap, 7); /* unchanged on error */
	assert_int_equal(sv_config_set_value(svsub_config_table, &c, "wrap", "4800", &err), 0);
	assert_int_equal(c.wrap, 4800);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "# comment\nwrap:   1\n");
	fclose(f);
	assert_int_equal(svsub_config_init(&c), 0);
	assert_int_equal(sv_config_load_file(svsub_config_table, &c, path, &err), -EINVAL);
	assert_int_equal(strncmp(err.text, path, strlen(path)), 0);
	assert_string_equal(err.text + strlen(path), ":2:9: wrap: 1 is out of range 0 or 2..65536");
	unlink(path);
}

/* datasets: in the file only; every fault named with file:line:column and the key path. */
static const struct dsc_case {
	const char *name, *yaml;
	const char *error;	/* NULL: loads; else a part of the message, after "file:" */
	unsigned nrules;
	uint16_t len0;		/* the first rule's seqData length (0: none) */
} dsc_cases[] = {
	{ "a profile", "datasets:\n  - svid: MU01\n    profile: 9-2le\n", NULL, 1, 64 },
	{ "members", "datasets:\n  - appid: 0x4001\n    members:\n      - {name: A.mag.i, type: INT32}\n"
		     "      - {name: A.t, type: Timestamp}\n", NULL, 1, 12 },
	{ "none", "datasets:\n  - svid: X\n    profile: none\n", NULL, 1, 0 },
	{ "no datasets", "wrap: 0\n", NULL, 0, 0 },
	{ "an unknown profile", "datasets:\n  - profile: 9-2lx\n", ":2:14: datasets[0].profile: '9-2lx' is not one of", 0,
	  0 },
	{ "profile and members", "datasets:\n  - profile: 9-2le\n    members:\n      - {type: INT8}\n",
	  ":2:14: datasets[0].profile: a profile or members, not both", 0, 0 },
	{ "neither", "datasets:\n  - svid: MU01\n", ":2:5: datasets[0]: neither a profile nor members", 0, 0 },
	{ "a scale of 0", "datasets:\n  - members:\n      - {type: INT8}\n      - {type: INT8, scale: 0}\n",
	  ":4:29: datasets[0].members[1].scale: a value's scale must not be 0", 0, 0 },
	{ "an unknown type", "datasets:\n  - members:\n      - {type: FLOAT128}\n",
	  ":3:16: datasets[0].members[0].type: 'FLOAT128' is not one of", 0, 0 },
	{ "an APPID out of range", "datasets:\n  - appid: 65536\n    profile: 9-2le\n",
	  ":2:12: datasets[0].appid: 65536 is out of range -1..65535", 0, 0 },
	{ "an unknown key", "datasets:\n  - profil: 9-2le\n", ":2:5: datasets[0].profil: unknown key", 0, 0 },
};

static void test_config_datasets(void **state)
{
	static struct svsub_file_config c;
	static struct svsub_dataset_rule rules[SVSUB_CFG_MAX_DATASETS];
	char path[] = "/tmp/test_app_ds_XXXXXX", key[64], msg[256];
	struct sv_cfg_error err;

	(void)state;
	temp_file(path);
	for (size_t i = 0; i < sizeof(dsc_cases) / sizeof(dsc_cases[0]); i++) {
		const struct dsc_case *tc = &dsc_cases[i];
		unsigned n = 99;
		int rc;

		print_message("case: %s\n", tc->name);
		rc = load_text(path, tc->yaml, &c, &err);
		if (tc->error) {
			assert_int_equal(rc, -EINVAL);
			print_message("  %s\n", err.text);
			assert_non_null(strstr(err.text, tc->error));
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(svsub_config_datasets(&c, rules, &n, key, sizeof(key), msg, sizeof(msg)), 0);
		assert_int_equal(n, tc->nrules);
		if (n) {
			assert_int_equal(rules[0].none, tc->len0 == 0);
			assert_int_equal(rules[0].ds.len, tc->len0);
		}
	}
	/* more than the table holds */
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs("datasets:\n", f);
	for (unsigned i = 0; i <= SVSUB_CFG_MAX_DATASETS; i++)
		fprintf(f, "  - {svid: S%u, profile: none}\n", i);
	fclose(f);
	assert_int_equal(svsub_config_init(&c), 0);
	assert_int_equal(sv_config_load_file(svsub_config_table, &c, path, &err), -EINVAL);
	assert_non_null(strstr(err.text, "more than 16 elements"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dft_sines),
		cmocka_unit_test(test_dft_long_run),
		cmocka_unit_test(test_dft_not_ready_and_reset),
		cmocka_unit_test(test_oc_pickup_boundary),
		cmocka_unit_test(test_oc_n_sample_delay),
		cmocka_unit_test(test_oc_step_fault_within_cycle),
		cmocka_unit_test(test_oc_blocking),
		cmocka_unit_test(test_oc_reset_and_retrip),
		cmocka_unit_test(test_oc_gap_restarts_window),
		cmocka_unit_test(test_dataset_to_app),
		cmocka_unit_test(test_registry_and_config),
		cmocka_unit_test(test_config_ranges_one_source),
		cmocka_unit_test(test_config_datasets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
