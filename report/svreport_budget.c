// SPDX-License-Identifier: Apache-2.0
/*
 * Latency budgets (YAML through the shared sv_config table, errors with file:line:column) and the
 * verdict. A latency across clocks that disagree is not a measurement, so it can neither pass nor fail:
 * with one host whose records fail the clock check, nothing is evaluated; with several hosts, the hops
 * between two hosts are not evaluated and the hops within one host are. Then: FAIL when a budget is
 * exceeded or a guest received nothing while frames were lost toward it; else UNSYNCHRONISED when the
 * clock check failed; else NONE when nothing could be checked; else PASS.
 *
 *	budgets:
 *	  - hop: T0-T4        # any two points in order: Ts T0 T1 T2a T2b T3 T4
 *	    statistic: max    # min p50 p99 p999 p9999 max lost
 *	    limit: 250        # microseconds (frames for "lost")
 *	    guest: ""         # only this guest; "" = every guest
 *	clock_tolerance_us: 20
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sv_config.h"
#include "svreport.h"

static const char *const hop_names[] = {
	"Ts-T0", "Ts-T1", "Ts-T2a", "Ts-T2b", "Ts-T3", "Ts-T4", "T0-T1", "T0-T2a", "T0-T2b", "T0-T3", "T0-T4",
	"T1-T2a", "T1-T2b", "T1-T3", "T1-T4", "T2a-T2b", "T2a-T3", "T2a-T4", "T2b-T3", "T2b-T4", "T3-T4", NULL,
};
static const uint8_t hop_pts[21][2] = {
	{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {1, 2}, {1, 3}, {1, 4}, {1, 5}, {1, 6},
	{2, 3}, {2, 4}, {2, 5}, {2, 6}, {3, 4}, {3, 5}, {3, 6}, {4, 5}, {4, 6}, {5, 6},
};
static const char *const stat_names[] = {"min", "p50", "p99", "p999", "p9999", "max", "lost", NULL};

const char *svr_stat_name(unsigned s)
{
	return s < SVR_STAT_COUNT_ ? stat_names[s] : "unknown";
}

const char *svr_verdict_name(enum svr_verdict v)
{
	switch (v) {
	case SVR_PASS:
		return "PASS";
	case SVR_FAIL:
		return "FAIL";
	case SVR_UNSYNCHRONISED:
		return "UNSYNCHRONISED";
	case SVR_NONE:
		return "NONE";
	}
	return "FAIL";
}

struct bfile_budget {
	int hop;
	int stat;
	double limit;
	char guest[64];
};
struct bfile {
	unsigned n;
	struct bfile_budget b[SVR_MAX_BUDGETS];
	double clock_tolerance_us;
};

static const struct sv_cfg_key budget_tab[] = {
	SV_CFG_KEY_ENUM(struct bfile_budget, hop, "hop", hop_names, "T0-T4", "hop: two points in order"),
	SV_CFG_KEY_ENUM(struct bfile_budget, stat, "statistic", stat_names, "max", "statistic compared"),
	SV_CFG_KEY_DOUBLE(struct bfile_budget, limit, "limit", 0, 1e9, "0",
			  "limit in microseconds (frames for statistic lost)"),
	SV_CFG_KEY_STRING(struct bfile_budget, guest, "guest", "", "only this guest (empty: every guest)"),
	SV_CFG_KEY_END,
};
static const struct sv_cfg_key file_tab[] = {
	SV_CFG_KEY_LIST(struct bfile, b, n, "budgets", budget_tab, "0", "latency budgets"),
	SV_CFG_KEY_DOUBLE(struct bfile, clock_tolerance_us, "clock_tolerance_us", -1, 1e6, "-1",
			  "negative latencies down to this are clock granularity, not a clock fault"),
	SV_CFG_KEY_END,
};

void svr_budgets_default(struct svr_budgets *b)
{
	memset(b, 0, sizeof(*b));
	b->clock_tolerance_ns = -1;
	b->b[0] = (struct svr_budget){.from = SV_POINT_T0, .to = SV_POINT_T4, .stat = SVR_STAT_MAX, .limit = 250000};
	b->b[1] = (struct svr_budget){.from = SV_POINT_T1, .to = SV_POINT_T2B, .stat = SVR_STAT_MAX, .limit = 100000};
	b->b[2] = (struct svr_budget){.from = SV_POINT_T3, .to = SV_POINT_T4, .stat = SVR_STAT_MAX, .limit = 100000};
	b->n = 3;
}

int svr_budgets_load(struct svr_budgets *b, const char *path, char *errbuf, size_t errlen)
{
	struct sv_cfg_error err;
	struct bfile bf;
	int ret;

	memset(&err, 0, sizeof(err));
	ret = sv_config_defaults(file_tab, &bf, &err);
	if (!ret)
		ret = sv_config_load_file(file_tab, &bf, path, &err);
	if (ret) {
		if (ret == -EINVAL)
			snprintf(errbuf, errlen, "%s", err.text);
		else
			snprintf(errbuf, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	svr_budgets_default(b);
	/* a file without a budgets list keeps the defaults */
	if (bf.n) {
		b->n = bf.n;
		for (unsigned i = 0; i < bf.n; i++) {
			struct svr_budget *o = &b->b[i];

			memset(o, 0, sizeof(*o));
			o->from = hop_pts[bf.b[i].hop][0];
			o->to = hop_pts[bf.b[i].hop][1];
			o->stat = (unsigned)bf.b[i].stat;
			o->limit = o->stat == SVR_STAT_LOST ? (int64_t)bf.b[i].limit
							    : (int64_t)(bf.b[i].limit * 1000.0 + 0.5);
			snprintf(o->guest, sizeof(o->guest), "%s", bf.b[i].guest);
		}
	}
	if (bf.clock_tolerance_us >= 0)
		b->clock_tolerance_ns = (int64_t)(bf.clock_tolerance_us * 1000.0 + 0.5);
	return 0;
}

int64_t svr_summary_stat(const struct sv_stats_summary *s, unsigned stat, int64_t *err)
{
	*err = 0;
	switch (stat) {
	case SVR_STAT_MIN:
		return s->min;
	case SVR_STAT_P50:
		*err = s->p50_err;
		return s->p50;
	case SVR_STAT_P99:
		*err = s->p99_err;
		return s->p99;
	case SVR_STAT_P999:
		*err = s->p999_err;
		return s->p999;
	case SVR_STAT_P9999:
		*err = s->p9999_err;
		return s->p9999;
	case SVR_STAT_MAX:
		return s->max;
	}
	return 0;
}

static int64_t stat_value(const struct svr_hop *h, unsigned stat, int64_t *err)
{
	*err = 0;
	if (stat == SVR_STAT_LOST)
		return (int64_t)h->lost;
	return svr_summary_stat(&h->lat, stat, err);
}

void svr_evaluate(struct svr *r, const struct svr_budgets *b, struct svr_eval *e)
{
	uint64_t lost;
	int len;

	memset(e, 0, sizeof(*e));
	svr_clock_check(r, &e->clock);
	for (unsigned i = 0; i < b->n; i++) {
		const struct svr_budget *bu = &b->b[i];
		bool shared = bu->to <= SV_POINT_T1;
		unsigned ng = shared ? 1 : svr_nguests(r);

		for (unsigned g = 0; g < ng; g++) {
			struct svr_budget_result *res = &e->res[i][e->nres[i]];
			int guest = shared ? SVR_GUEST_SHARED : (int)g;
			struct svr_hop h;

			if (!shared && bu->guest[0] && strcmp(bu->guest, svr_guest_name(r, g)))
				continue;
			memset(res, 0, sizeof(*res));
			res->guest = guest;
			e->nres[i]++;
			if (svr_hop_get(r, bu->from, bu->to, guest, -1, &h) || (!h.count && bu->stat != SVR_STAT_LOST))
				continue;
			/* across hosts a loss is still judged (counting needs no clock), on one doubtful clock not */
			if (svr_hop_unsync(&e->clock, &h) && (e->clock.single_host || bu->stat != SVR_STAT_LOST)) {
				res->unsync = true;
				continue;
			}
			res->evaluated = true;
			res->value = stat_value(&h, bu->stat, &res->err);
			res->exact = h.lat.exact || bu->stat == SVR_STAT_LOST || bu->stat == SVR_STAT_MIN ||
				     bu->stat == SVR_STAT_MAX;
			res->pass = res->value <= bu->limit;
			e->evaluated++;
			if (!res->pass)
				e->failed++;
		}
	}
	for (unsigned g = 0; g < svr_nguests(r); g++)
		if (svr_guest_silent(r, g, &lost))
			e->silent++;
	svr_soak_evaluate(r, b, e);
	if (e->soak.verdict == SVR_FAIL && !e->failed && !e->silent) {
		/* a soak judged over its whole length fails the report whatever its windows' frames say */
		e->verdict = SVR_FAIL;
		snprintf(e->why, sizeof(e->why), "%s", e->soak.why);
	} else if (e->failed || e->silent) {
		e->verdict = SVR_FAIL;
		len = 0;
		if (e->failed)
			len = snprintf(e->why, sizeof(e->why), "%u of %u budget checks exceeded", e->failed,
				       e->evaluated);
		for (unsigned g = 0; g < svr_nguests(r) && len >= 0 && (size_t)len < sizeof(e->why); g++)
			if (svr_guest_silent(r, g, &lost))
				len += snprintf(e->why + len, sizeof(e->why) - (size_t)len,
						"%sguest %s received none of its frames (%" PRIu64 " lost)",
						len ? "; " : "", svr_guest_name(r, g), lost);
	} else if (!e->clock.ok) {
		e->verdict = SVR_UNSYNCHRONISED;
		snprintf(e->why, sizeof(e->why), "clock check failed: %s", e->clock.reasons[0]);
	} else if (!e->evaluated) {
		e->verdict = SVR_NONE;
		snprintf(e->why, sizeof(e->why), "no verdict: nothing to check (the records lack the hops the "
			 "budgets name)");
	} else {
		e->verdict = SVR_PASS;
		snprintf(e->why, sizeof(e->why), "%u budget checks within their limits", e->evaluated);
	}
}
