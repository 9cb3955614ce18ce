// SPDX-License-Identifier: Apache-2.0
/* Metrics registry and exposition (OpenMetrics 1.0.0, Prometheus text 0.0.4): see sv_metrics.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "sv_clock.h"
#include "sv_metrics.h"
#include "sv_record.h"
#include "sv_stats.h"

const int64_t sv_metrics_hist_edge_ns[SV_METRICS_HIST_EDGES] = {
	10000,	   25000,    50000,    100000,	 150000,   200000,   250000,	300000,	  400000,
	500000,	   1000000,  2000000,  4000000,	 10000000, 25000000, 50000000, 100000000,
};
const char *const sv_metrics_hist_edge_le[SV_METRICS_HIST_EDGES] = {
	"1e-05", "2.5e-05", "5e-05", "0.0001", "0.00015", "0.0002", "0.00025", "0.0003", "0.0004",
	"0.0005", "0.001",  "0.002", "0.004",  "0.01",	  "0.025",  "0.05",    "0.1",
};

/* sv_stats bucket index -> exported bucket, for every index up to the one past the last edge (beyond: +Inf). */
static uint8_t hist_map[(64u - SV_STATS_SUB_BITS) * SV_STATS_SUB_COUNT];
static uint32_t hist_map_n;
static pthread_once_t hist_map_once = PTHREAD_ONCE_INIT;

static void hist_map_init(void)
{
	unsigned e = 0;

	hist_map_n = sv_stats_index(sv_metrics_hist_edge_ns[SV_METRICS_HIST_EDGES - 1]) + 1;
	for (uint32_t i = 0; i < hist_map_n; i++) {
		int64_t hi = sv_stats_bucket_hi(i);

		while (e < SV_METRICS_HIST_EDGES && hi > sv_metrics_hist_edge_ns[e])
			e++;
		hist_map[i] = (uint8_t)e;
	}
}

int64_t sv_metrics_hist_edge_lo_ns(unsigned i)
{
	uint32_t idx;

	if (i >= SV_METRICS_HIST_EDGES)
		return -1;
	idx = sv_stats_index(sv_metrics_hist_edge_ns[i]);
	if (sv_stats_bucket_hi(idx) == sv_metrics_hist_edge_ns[i])
		return sv_metrics_hist_edge_ns[i] + 1;
	return sv_stats_bucket_lo(idx);
}

void sv_metrics_hist_add(struct sv_metrics_hist *out, const struct sv_stats *h)
{
	uint32_t top = __atomic_load_n(&h->top, __ATOMIC_RELAXED), n;
	uint64_t hi1, lo, hi2;
	unsigned __int128 sum;

	pthread_once(&hist_map_once, hist_map_init);
	if (top > SV_STATS_BUCKETS)
		top = SV_STATS_BUCKETS;
	n = top < hist_map_n ? top : hist_map_n;
	for (uint32_t i = 0; i < n; i++)
		out->bucket[hist_map[i]] += sv_metrics_load_u64(&h->bucket[i]);
	for (uint32_t i = n; i < top; i++)
		out->bucket[SV_METRICS_HIST_EDGES] += sv_metrics_load_u64(&h->bucket[i]);
	/* the high word changes only when the low one wraps: read until both belong together */
	do {
		hi1 = sv_metrics_load_u64(&h->sum_hi);
		lo = sv_metrics_load_u64(&h->sum_lo);
		hi2 = sv_metrics_load_u64(&h->sum_hi);
	} while (hi1 != hi2);
	sum = ((unsigned __int128)out->sum_hi << 64 | out->sum_lo) + ((unsigned __int128)hi1 << 64 | lo);
	out->sum_lo = (uint64_t)sum;
	out->sum_hi = (uint64_t)(sum >> 64);
}

/* ---- Registry ------------------------------------------------------------------------------------ */

enum src_kind { SRC_U64, SRC_NS, SRC_VALUE, SRC_FN, SRC_HIST, SRC_HIST_FN };

struct series {
	char *labels;		/* rendered pairs a="x",b="y" (no braces); "" without labels */
	size_t labels_len;
	enum src_kind kind;
	union {
		const uint64_t *u64;
		const int64_t *ns;
		struct sv_metrics_value v;
		struct {
			int (*fn)(void *ctx, struct sv_metrics_value *v);
			void *ctx;
		} fn;
		const struct sv_stats *h;
		struct {
			void (*fn)(void *ctx, struct sv_metrics_hist *out);
			void *ctx;
		} hfn;
	};
};

struct column {
	struct sv_metrics_table *t;
	unsigned index;		/* in the table's values() */
	char *extra;		/* rendered pairs of the extra labels, with a leading comma; "" when none */
	size_t extra_len;
	/* per row (max_rows + 1): its sample line up to the value, `name_total{labels} `, made at its first
	 * scrape (labels never change), so that a row costs a copy and a number per scrape */
	char **line;
	size_t *line_len;
};

struct sv_metrics_family {
	struct sv_metrics *m;
	char *name, *unit, *help;
	enum sv_metric_type type;
	unsigned nlabels;
	char *label[SV_METRICS_MAX_LABELS];
	struct series *series;
	unsigned nseries, cap;
	struct column *col;
	unsigned ncol, capcol;
};

struct sv_metrics_table {
	struct sv_metrics *m;
	unsigned nlabels;
	char *label[SV_METRICS_MAX_LABELS];
	unsigned max_rows;
	struct sv_metrics_table_ops ops;
	void *ctx;
	unsigned ncols;
	bool *col_gauge;	/* per column: left out of the overflow row */
	/* scrape-thread state, allocated at the first render */
	char **row_labels;	/* max_rows + 1 (the last: overflow) */
	size_t *row_labels_len;
	uint64_t *vals;		/* (max_rows + 1) x ncols */
	uint64_t *tmp;		/* ncols */
	unsigned rows;		/* rows rendered this scrape (<= max_rows) */
	bool overflow;		/* rows past max_rows this scrape */
};

struct sv_metrics {
	unsigned max_series, nseries;
	struct sv_metrics_family **fam;
	unsigned nfam, capfam;
	struct sv_metrics_table **tab;
	unsigned ntab, captab;
	bool frozen;
	int finished;		/* atomic: release store, acquire load */
	uint64_t finished_u64;	/* svkit_run_finished's value */
	int64_t start_realtime_ns;
};

int sv_metrics_create(struct sv_metrics **out, unsigned max_series)
{
	struct sv_metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->max_series = max_series ? max_series : SV_METRICS_MAX_SERIES_DEFAULT;
	*out = m;
	return 0;
}

static void table_free(struct sv_metrics_table *t)
{
	for (unsigned i = 0; i < t->nlabels; i++)
		free(t->label[i]);
	if (t->row_labels)
		for (unsigned r = 0; r <= t->max_rows; r++)
			free(t->row_labels[r]);
	free(t->row_labels);
	free(t->row_labels_len);
	free(t->vals);
	free(t->tmp);
	free(t->col_gauge);
	free(t);
}

void sv_metrics_destroy(struct sv_metrics *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < m->nfam; i++) {
		struct sv_metrics_family *f = m->fam[i];

		for (unsigned j = 0; j < f->nseries; j++)
			free(f->series[j].labels);
		for (unsigned j = 0; j < f->ncol; j++) {
			struct column *c = &f->col[j];

			for (unsigned r = 0; c->line && r <= c->t->max_rows; r++)
				free(c->line[r]);
			free(c->line);
			free(c->line_len);
			free(c->extra);
		}
		for (unsigned j = 0; j < f->nlabels; j++)
			free(f->label[j]);
		free(f->series);
		free(f->col);
		free(f->name);
		free(f->unit);
		free(f->help);
		free(f);
	}
	for (unsigned i = 0; i < m->ntab; i++)
		table_free(m->tab[i]);
	free(m->fam);
	free(m->tab);
	free(m);
}

void sv_metrics_finish(struct sv_metrics *m)
{
	__atomic_store_n(&m->finished_u64, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&m->finished, 1, __ATOMIC_RELEASE);
}

bool sv_metrics_finished(const struct sv_metrics *m)
{
	return __atomic_load_n(&m->finished, __ATOMIC_ACQUIRE);
}

static bool name_ok(const char *s, bool colon)
{
	if (!s || !*s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' || (colon && *s == ':')))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
		      (colon && *s == ':')))
			return false;
	return true;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* HELP: printable ASCII, one line (the escaping rules then stay trivial in both formats). */
static bool help_ok(const char *s)
{
	if (!s)
		return false;
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

static bool label_names_ok(unsigned n, const char *const *names, bool no_le)
{
	if (n > SV_METRICS_MAX_LABELS || (n && !names))
		return false;
	for (unsigned i = 0; i < n; i++) {
		if (!name_ok(names[i], false) || !strncmp(names[i], "__", 2) || (no_le && !strcmp(names[i], "le")))
			return false;
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(names[i], names[j]))
				return false;
	}
	return true;
}

static int grow(void **p, unsigned *cap, unsigned need, size_t elem)
{
	void *q;
	unsigned c;

	if (need <= *cap)
		return 0;
	c = *cap ? *cap * 2 : 8;
	while (c < need)
		c *= 2;
	q = realloc(*p, (size_t)c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

static int reserve_series(struct sv_metrics *m, unsigned n)
{
	if (m->frozen)
		return -EBUSY;
	if (n > m->max_series - m->nseries)
		return -ENOSPC;
	m->nseries += n;
	return 0;
}

struct sv_metrics_family *sv_metrics_family(struct sv_metrics *m, const char *name, enum sv_metric_type type,
					    const char *unit, const char *help, unsigned nlabels,
					    const char *const *label_names)
{
	static const char *const reserved[] = { "_total", "_bucket", "_sum", "_count", "_created", "_info" };
	struct sv_metrics_family *f;
	char suffix[64];
	int err = -EINVAL;

	if (m->frozen) {
		errno = EBUSY;
		return NULL;
	}
	if (!name_ok(name, true) || !help_ok(help) || type > SV_METRIC_INFO ||
	    !label_names_ok(nlabels, label_names, true))
		goto out_err;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (ends_with(name, reserved[i]))
			goto out_err;
	if (unit) {
		if (!name_ok(unit, false) || strlen(unit) + 2 > sizeof(suffix))
			goto out_err;
		snprintf(suffix, sizeof(suffix), "_%s", unit);
		if (!ends_with(name, suffix) || type == SV_METRIC_INFO)
			goto out_err;
	}
	if (type == SV_METRIC_HISTOGRAM && (!unit || strcmp(unit, "seconds")))
		goto out_err;
	for (unsigned i = 0; i < m->nfam; i++)
		if (!strcmp(m->fam[i]->name, name)) {
			err = -EEXIST;
			goto out_err;
		}
	err = -ENOMEM;
	if (grow((void **)&m->fam, &m->capfam, m->nfam + 1, sizeof(*m->fam)))
		goto out_err;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto out_err;
	f->m = m;
	f->type = type;
	f->nlabels = nlabels;
	f->name = strdup(name);
	f->help = strdup(help);
	f->unit = unit ? strdup(unit) : NULL;
	if (!f->name || !f->help || (unit && !f->unit))
		goto out_free;
	for (unsigned i = 0; i < nlabels; i++)
		if (!(f->label[i] = strdup(label_names[i])))
			goto out_free;
	m->fam[m->nfam++] = f;
	return f;

out_free:
	for (unsigned i = 0; i < nlabels; i++)
		free(f->label[i]);
	free(f->name);
	free(f->help);
	free(f->unit);
	free(f);
out_err:
	errno = -err;
	return NULL;
}

/* ---- Text output ------------------------------------------------------------------------------- */

void sv_metrics_text_free(struct sv_metrics_text *t)
{
	free(t->p);
	t->p = NULL;
	t->len = t->cap = 0;
}

/* Sticky errors: the renderer checks once at the end. */
struct out {
	struct sv_metrics_text *t;
	int err;
};

static bool reserve(struct out *o, size_t n)
{
	struct sv_metrics_text *t = o->t;
	size_t max = t->max ? t->max : (size_t)64 << 20, c;
	char *p;

	if (o->err)
		return false;
	if (t->cap - t->len >= n)
		return true;
	if (n > max - t->len) {
		o->err = -E2BIG;
		return false;
	}
	c = t->cap ? t->cap : 4096;
	while (c - t->len < n)
		c *= 2;
	if (c > max)
		c = max;
	p = realloc(t->p, c);
	if (!p) {
		o->err = -ENOMEM;
		return false;
	}
	t->p = p;
	t->cap = c;
	return true;
}

static void put(struct out *o, const char *s, size_t n)
{
	if (!reserve(o, n))
		return;
	memcpy(o->t->p + o->t->len, s, n);
	o->t->len += n;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void putch(struct out *o, char c)
{
	if (!reserve(o, 1))
		return;
	o->t->p[o->t->len++] = c;
}

static void put_u128(struct out *o, unsigned __int128 v)
{
	char buf[48];
	size_t i = sizeof(buf);

	do {
		buf[--i] = (char)('0' + (unsigned)(v % 10));
		v /= 10;
	} while (v);
	put(o, buf + i, sizeof(buf) - i);
}

static void put_u64(struct out *o, uint64_t v)
{
	char buf[24];
	size_t i = sizeof(buf);

	do { /* 64-bit divisions: put_u128's would call __udivti3 per digit, on every sample of a scrape */
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(o, buf + i, sizeof(buf) - i);
}

/* ns as seconds, exactly: "0.000123", "5", "-0.5". */
static void put_ns128(struct out *o, bool neg, unsigned __int128 ns)
{
	unsigned frac = (unsigned)(ns % 1000000000u);
	char digits[10];
	int n = 9;

	if (neg && ns)
		putch(o, '-');
	put_u128(o, ns / 1000000000u);
	if (!frac)
		return;
	for (int i = 8; i >= 0; i--, frac /= 10)
		digits[i] = (char)('0' + frac % 10);
	while (digits[n - 1] == '0')
		n--;
	putch(o, '.');
	put(o, digits, (size_t)n);
}

static void put_ns(struct out *o, int64_t ns)
{
	put_ns128(o, ns < 0, ns < 0 ? (unsigned __int128)(-(ns + 1)) + 1 : (unsigned __int128)ns);
}

static void put_double(struct out *o, double d)
{
	char buf[40];

	if (isnan(d)) {
		puts_(o, "NaN");
		return;
	}
	if (isinf(d)) {
		puts_(o, d > 0 ? "+Inf" : "-Inf");
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	puts_(o, buf);
}

static void put_value(struct out *o, const struct sv_metrics_value *v)
{
	switch (v->kind) {
	case SV_METRICS_V_U64:
		put_u64(o, v->u);
		break;
	case SV_METRICS_V_NS:
		put_ns(o, v->ns);
		break;
	default:
		put_double(o, v->d);
		break;
	}
}

/*
 * A label value: '\\', '"', '\n' escaped (both formats); bytes >= 0x80 as U+0080..U+00FF in UTF-8 (two octets);
 * anything else as it is (the formats allow every other code point). At most SV_METRICS_LABEL_MAX octets in.
 */
static void put_label_value(struct out *o, const char *s, size_t n)
{
	if (n > SV_METRICS_LABEL_MAX)
		n = SV_METRICS_LABEL_MAX;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\\' || c == '"') {
			putch(o, '\\');
			putch(o, (char)c);
		} else if (c == '\n') {
			put(o, "\\n", 2);
		} else if (c >= 0x80) {
			putch(o, (char)(0xc0 | (c >> 6)));
			putch(o, (char)(0x80 | (c & 0x3f)));
		} else {
			putch(o, (char)c);
		}
	}
}

/* Pairs name="value",... into a new string (*out, *len). Returns 0 or -ENOMEM. */
static int render_pairs(unsigned n, char *const *names, const char *const *val, const size_t *len, bool lead_comma,
			char **res, size_t *res_len)
{
	struct sv_metrics_text t = { 0 };
	struct out o = { &t, 0 };

	for (unsigned i = 0; i < n; i++) {
		if (i || lead_comma)
			putch(&o, ',');
		puts_(&o, names[i]);
		put(&o, "=\"", 2);
		put_label_value(&o, val[i], len ? len[i] : strlen(val[i]));
		putch(&o, '"');
	}
	putch(&o, '\0');
	if (o.err) {
		sv_metrics_text_free(&t);
		return o.err;
	}
	*res = t.p;
	*res_len = t.len - 1;
	return 0;
}

/* ---- Series -------------------------------------------------------------------------------------- */

static bool kind_fits(enum sv_metric_type type, enum src_kind kind)
{
	switch (type) {
	case SV_METRIC_COUNTER:
	case SV_METRIC_GAUGE:
		return kind == SRC_U64 || kind == SRC_NS || kind == SRC_VALUE || kind == SRC_FN;
	case SV_METRIC_HISTOGRAM:
		return kind == SRC_HIST || kind == SRC_HIST_FN;
	default:
		return kind == SRC_VALUE;
	}
}

static int add_series(struct sv_metrics_family *f, const char *const *values, struct series *s)
{
	struct sv_metrics *m = f->m;
	int err;

	if (m->frozen)
		return -EBUSY;
	if (!kind_fits(f->type, s->kind) || (f->nlabels && !values))
		return -EINVAL;
	for (unsigned i = 0; i < f->nlabels; i++)
		if (!values[i] || strlen(values[i]) > SV_METRICS_LABEL_MAX)
			return -EINVAL;
	err = render_pairs(f->nlabels, f->label, values, NULL, false, &s->labels, &s->labels_len);
	if (err)
		return err;
	for (unsigned i = 0; i < f->nseries; i++)
		if (!strcmp(f->series[i].labels, s->labels)) {
			err = -EEXIST;
			goto out_free;
		}
	err = grow((void **)&f->series, &f->cap, f->nseries + 1, sizeof(*f->series));
	if (err)
		goto out_free;
	err = reserve_series(m, f->type == SV_METRIC_HISTOGRAM ? SV_METRICS_HIST_SERIES : 1);
	if (err)
		goto out_free;
	f->series[f->nseries++] = *s;
	return 0;

out_free:
	free(s->labels);
	return err;
}

int sv_metrics_add_u64(struct sv_metrics_family *f, const char *const *values, const uint64_t *src)
{
	struct series s = { .kind = SRC_U64, .u64 = src };

	return src ? add_series(f, values, &s) : -EINVAL;
}

int sv_metrics_add_ns(struct sv_metrics_family *f, const char *const *values, const int64_t *src)
{
	struct series s = { .kind = SRC_NS, .ns = src };

	return src ? add_series(f, values, &s) : -EINVAL;
}

int sv_metrics_add_value(struct sv_metrics_family *f, const char *const *values, struct sv_metrics_value v)
{
	struct series s = { .kind = SRC_VALUE, .v = v };

	return add_series(f, values, &s);
}

int sv_metrics_add_fn(struct sv_metrics_family *f, const char *const *values,
		      int (*fn)(void *ctx, struct sv_metrics_value *v), void *ctx)
{
	struct series s = { .kind = SRC_FN, .fn = { fn, ctx } };

	return fn ? add_series(f, values, &s) : -EINVAL;
}

int sv_metrics_add_hist(struct sv_metrics_family *f, const char *const *values, const struct sv_stats *h)
{
	struct series s = { .kind = SRC_HIST, .h = h };

	return h ? add_series(f, values, &s) : -EINVAL;
}

int sv_metrics_add_hist_fn(struct sv_metrics_family *f, const char *const *values,
			   void (*fn)(void *ctx, struct sv_metrics_hist *out), void *ctx)
{
	struct series s = { .kind = SRC_HIST_FN, .hfn = { fn, ctx } };

	return fn ? add_series(f, values, &s) : -EINVAL;
}

/* ---- Tables ---------------------------------------------------------------------------------------- */

struct sv_metrics_table *sv_metrics_table_new(struct sv_metrics *m, unsigned nlabels,
					      const char *const *label_names, unsigned max_rows,
					      const struct sv_metrics_table_ops *ops, void *ctx)
{
	struct sv_metrics_table *t;
	int err = -EINVAL;

	if (m->frozen) {
		errno = EBUSY;
		return NULL;
	}
	if (!nlabels || !label_names_ok(nlabels, label_names, true) || !max_rows || max_rows > m->max_series || !ops ||
	    !ops->count || !ops->labels || !ops->values)
		goto out_err;
	err = -ENOMEM;
	if (grow((void **)&m->tab, &m->captab, m->ntab + 1, sizeof(*m->tab)))
		goto out_err;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto out_err;
	t->m = m;
	t->nlabels = nlabels;
	t->max_rows = max_rows;
	t->ops = *ops;
	t->ctx = ctx;
	for (unsigned i = 0; i < nlabels; i++)
		if (!(t->label[i] = strdup(label_names[i]))) {
			table_free(t);
			goto out_err;
		}
	m->tab[m->ntab++] = t;
	return t;

out_err:
	errno = -err;
	return NULL;
}

int sv_metrics_table_column(struct sv_metrics_table *t, struct sv_metrics_family *f, const char *const *extra)
{
	struct sv_metrics *m = t->m;
	unsigned nextra;
	bool *g;
	int err;
	struct column c = { .t = t, .index = t->ncols };

	if (m->frozen)
		return -EBUSY;
	if (f->m != m || (f->type != SV_METRIC_COUNTER && f->type != SV_METRIC_GAUGE) || f->nlabels < t->nlabels)
		return -EINVAL;
	for (unsigned i = 0; i < t->nlabels; i++)
		if (strcmp(f->label[i], t->label[i]))
			return -EINVAL;
	nextra = f->nlabels - t->nlabels;
	if (nextra && !extra)
		return -EINVAL;
	for (unsigned i = 0; i < nextra; i++)
		if (!extra[i] || strlen(extra[i]) > SV_METRICS_LABEL_MAX)
			return -EINVAL;
	for (unsigned i = 0; i < f->ncol; i++)
		if (f->col[i].t == t && !nextra)
			return -EEXIST;
	err = render_pairs(nextra, f->label + t->nlabels, extra, NULL, true, &c.extra, &c.extra_len);
	if (err)
		return err;
	for (unsigned i = 0; i < f->ncol; i++)
		if (f->col[i].t == t && !strcmp(f->col[i].extra, c.extra)) {
			err = -EEXIST;
			goto out_free;
		}
	err = grow((void **)&f->col, &f->capcol, f->ncol + 1, sizeof(*f->col));
	if (err)
		goto out_free;
	g = realloc(t->col_gauge, (t->ncols + 1) * sizeof(*g));
	if (!g) {
		err = -ENOMEM;
		goto out_free;
	}
	t->col_gauge = g;
	err = reserve_series(m, t->max_rows + 1);
	if (err)
		goto out_free;
	g[t->ncols++] = f->type == SV_METRIC_GAUGE;
	f->col[f->ncol++] = c;
	return (int)c.index;

out_free:
	free(c.extra);
	return err;
}

static int table_alloc(struct sv_metrics_table *t)
{
	size_t rows = (size_t)t->max_rows + 1, ncols = t->ncols ? t->ncols : 1;
	static const char *const overflow[SV_METRICS_MAX_LABELS] = { "overflow", "overflow", "overflow", "overflow",
								      "overflow", "overflow", "overflow", "overflow" };

	t->row_labels = calloc(rows, sizeof(*t->row_labels));
	t->row_labels_len = calloc(rows, sizeof(*t->row_labels_len));
	t->vals = calloc(rows * ncols, sizeof(*t->vals));
	t->tmp = calloc(ncols, sizeof(*t->tmp));
	if (!t->row_labels || !t->row_labels_len || !t->vals || !t->tmp)
		return -ENOMEM;
	return render_pairs(t->nlabels, t->label, overflow, NULL, false, &t->row_labels[t->max_rows],
			    &t->row_labels_len[t->max_rows]);
}

/* Reads every row once: values of the first max_rows, the sum of the others into the overflow row. */
static void table_read(struct sv_metrics_table *t)
{
	unsigned n = t->ops.count(t->ctx), shown = n < t->max_rows ? n : t->max_rows;
	uint64_t *ov = t->vals + (size_t)t->max_rows * t->ncols;

	for (unsigned r = 0; r < shown; r++) {
		if (!t->row_labels[r]) {
			const char *val[SV_METRICS_MAX_LABELS] = { 0 };
			size_t len[SV_METRICS_MAX_LABELS] = { 0 };
			char buf[512];
			bool ok;

			ok = !t->ops.labels(t->ctx, r, val, len, buf, sizeof(buf));
			for (unsigned i = 0; ok && i < t->nlabels; i++)
				ok = val[i] != NULL;
			if (ok)
				render_pairs(t->nlabels, t->label, val, len, false, &t->row_labels[r],
					     &t->row_labels_len[r]);
		}
		t->ops.values(t->ctx, r, t->vals + (size_t)r * t->ncols);
	}
	t->rows = shown;
	t->overflow = n > t->max_rows;
	memset(ov, 0, t->ncols * sizeof(*ov));
	for (unsigned r = t->max_rows; r < n; r++) {
		t->ops.values(t->ctx, r, t->tmp);
		for (unsigned c = 0; c < t->ncols; c++)
			if (!t->col_gauge[c] && t->tmp[c] != SV_METRICS_ABSENT)
				ov[c] += t->tmp[c];
	}
}

/* ---- Rendering ------------------------------------------------------------------------------------ */

static const char *sample_suffix(enum sv_metric_type type)
{
	return type == SV_METRIC_COUNTER ? "_total" : type == SV_METRIC_INFO ? "_info" : "";
}

/* "# HELP": OpenMetrics escapes '\\', '\n' and '"'; 0.0.4 only the first two (help is printable ASCII). */
static void put_help(struct out *o, const char *s, enum sv_metrics_format fmt)
{
	for (; *s; s++) {
		if (*s == '\\' || (*s == '"' && fmt == SV_METRICS_OPENMETRICS))
			putch(o, '\\');
		putch(o, *s);
	}
}

static void put_meta(struct out *o, const struct sv_metrics_family *f, enum sv_metrics_format fmt)
{
	static const char *const tname[] = { "counter", "gauge", "histogram", "info" };

	if (fmt == SV_METRICS_OPENMETRICS) {
		puts_(o, "# TYPE ");
		puts_(o, f->name);
		putch(o, ' ');
		puts_(o, tname[f->type]);
		putch(o, '\n');
		if (f->unit) {
			puts_(o, "# UNIT ");
			puts_(o, f->name);
			putch(o, ' ');
			puts_(o, f->unit);
			putch(o, '\n');
		}
		puts_(o, "# HELP ");
		puts_(o, f->name);
	} else {
		puts_(o, "# HELP ");
		puts_(o, f->name);
		puts_(o, sample_suffix(f->type));
	}
	putch(o, ' ');
	put_help(o, f->help, fmt);
	putch(o, '\n');
	if (fmt != SV_METRICS_OPENMETRICS) {
		puts_(o, "# TYPE ");
		puts_(o, f->name);
		puts_(o, sample_suffix(f->type));
		putch(o, ' ');
		puts_(o, f->type == SV_METRIC_INFO ? "gauge" : tname[f->type]);
		putch(o, '\n');
	}
}

/* name[suffix]{labels[,extra]} — braces only when there is a label. */
static void put_name_labels(struct out *o, const struct sv_metrics_family *f, const char *suffix, const char *labels,
			    size_t labels_len, const char *extra, size_t extra_len)
{
	puts_(o, f->name);
	puts_(o, suffix);
	if (labels_len + extra_len) {
		putch(o, '{');
		put(o, labels, labels_len);
		put(o, extra, extra_len);
		putch(o, '}');
	}
	putch(o, ' ');
}

static void put_hist(struct out *o, const struct sv_metrics_family *f, const struct series *s)
{
	struct sv_metrics_hist h;
	uint64_t cum = 0;
	const char *sep = s->labels_len ? "," : "";

	memset(&h, 0, sizeof(h));
	if (s->kind == SRC_HIST)
		sv_metrics_hist_add(&h, s->h);
	else
		s->hfn.fn(s->hfn.ctx, &h);
	for (unsigned i = 0; i <= SV_METRICS_HIST_EDGES; i++) {
		cum += h.bucket[i];
		puts_(o, f->name);
		puts_(o, "_bucket{");
		put(o, s->labels, s->labels_len);
		puts_(o, sep);
		puts_(o, "le=\"");
		puts_(o, i < SV_METRICS_HIST_EDGES ? sv_metrics_hist_edge_le[i] : "+Inf");
		puts_(o, "\"} ");
		put_u64(o, cum);
		putch(o, '\n');
	}
	put_name_labels(o, f, "_sum", s->labels, s->labels_len, "", 0);
	put_ns128(o, false, (unsigned __int128)h.sum_hi << 64 | h.sum_lo);
	putch(o, '\n');
	put_name_labels(o, f, "_count", s->labels, s->labels_len, "", 0);
	put_u64(o, cum);
	putch(o, '\n');
}

static void put_series(struct out *o, const struct sv_metrics_family *f, const struct series *s)
{
	struct sv_metrics_value v;

	switch (s->kind) {
	case SRC_HIST:
	case SRC_HIST_FN:
		put_hist(o, f, s);
		return;
	case SRC_U64:
		v.kind = SV_METRICS_V_U64;
		v.u = sv_metrics_load_u64(s->u64);
		break;
	case SRC_NS:
		v.kind = SV_METRICS_V_NS;
		v.ns = __atomic_load_n(s->ns, __ATOMIC_RELAXED);
		break;
	case SRC_VALUE:
		v = s->v;
		break;
	case SRC_FN:
		if (s->fn.fn(s->fn.ctx, &v))
			return;
		break;
	}
	if (f->type == SV_METRIC_INFO) {
		v.kind = SV_METRICS_V_U64;
		v.u = 1;
	}
	put_name_labels(o, f, sample_suffix(f->type), s->labels, s->labels_len, "", 0);
	put_value(o, &v);
	putch(o, '\n');
}

static void put_row(struct out *o, const struct sv_metrics_family *f, struct column *c, unsigned r)
{
	const struct sv_metrics_table *t = c->t;
	uint64_t v = t->vals[(size_t)r * t->ncols + c->index];

	if (!t->row_labels[r] || v == SV_METRICS_ABSENT)
		return;
	if (!c->line[r]) {
		struct sv_metrics_text line = { 0 };
		struct out lo = { &line, 0 };

		put_name_labels(&lo, f, sample_suffix(f->type), t->row_labels[r], t->row_labels_len[r], c->extra,
				c->extra_len);
		if (lo.err) {
			sv_metrics_text_free(&line);
			o->err = lo.err;
			return;
		}
		c->line[r] = line.p;
		c->line_len[r] = line.len;
	}
	put(o, c->line[r], c->line_len[r]);
	put_u64(o, v);
	putch(o, '\n');
}

static void put_column(struct out *o, const struct sv_metrics_family *f, struct column *c)
{
	for (unsigned r = 0; r < c->t->rows; r++)
		put_row(o, f, c, r);
	if (c->t->overflow && f->type != SV_METRIC_GAUGE)
		put_row(o, f, c, c->t->max_rows);
}

int sv_metrics_render(struct sv_metrics *m, enum sv_metrics_format fmt, struct sv_metrics_text *out, bool *final)
{
	struct out o = { out, 0 };
	bool fin = sv_metrics_finished(m);

	if (!m->frozen) {
		for (unsigned i = 0; i < m->ntab; i++) {
			int err = table_alloc(m->tab[i]);

			if (err)
				return err;
		}
		for (unsigned i = 0; i < m->nfam; i++)
			for (unsigned j = 0; j < m->fam[i]->ncol; j++) {
				struct column *c = &m->fam[i]->col[j];

				c->line = calloc((size_t)c->t->max_rows + 1, sizeof(*c->line));
				c->line_len = calloc((size_t)c->t->max_rows + 1, sizeof(*c->line_len));
				if (!c->line || !c->line_len)
					return -ENOMEM;
			}
		m->frozen = true;
	}
	out->len = 0;
	for (unsigned i = 0; i < m->ntab; i++)
		table_read(m->tab[i]);
	for (unsigned i = 0; i < m->nfam; i++) {
		struct sv_metrics_family *f = m->fam[i];

		put_meta(&o, f, fmt);
		for (unsigned j = 0; j < f->nseries; j++)
			put_series(&o, f, &f->series[j]);
		for (unsigned j = 0; j < f->ncol; j++)
			put_column(&o, f, &f->col[j]);
	}
	if (fmt == SV_METRICS_OPENMETRICS)
		puts_(&o, "# EOF\n");
	if (final)
		*final = fin;
	return o.err;
}

const char *sv_metrics_content_type(enum sv_metrics_format fmt)
{
	return fmt == SV_METRICS_OPENMETRICS ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
					     : "text/plain; version=0.0.4; charset=utf-8";
}

/* ---- Accept ----------------------------------------------------------------------------------------- */

static const char *skip_ows(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *find_char(const char *p, const char *end, char c)
{
	for (; p < end; p++)
		if (*p == c)
			return p;
	return NULL;
}

/* "q=" value in thousandths: 0, 0.5, 1, 1.000; -1 when malformed. */
static int parse_q(const char *p, const char *end)
{
	int q, digits = 0;

	if (p >= end || (*p != '0' && *p != '1'))
		return -1;
	q = (*p++ - '0') * 1000;
	if (p < end && *p == '.') {
		int scale = 100;

		for (p++; p < end && *p >= '0' && *p <= '9' && digits < 3; p++, digits++, scale /= 10)
			q += (*p - '0') * scale;
	}
	return p == end && q <= 1000 ? q : -1;
}

enum sv_metrics_format sv_metrics_format_for_accept(const char *accept)
{
	int q_om = 0, q_text = 0;
	const char *p = accept;

	if (!accept)
		return SV_METRICS_TEXT_004;
	while (*p) {
		const char *e = strchr(p, ','), *t, *te, *sc;
		int q = 1000;

		if (!e)
			e = p + strlen(p);
		t = skip_ows(p, e);
		sc = find_char(t, e, ';');
		te = sc ? sc : e;
		while (te > t && (te[-1] == ' ' || te[-1] == '\t'))
			te--;
		/* parameters: only q matters (a version other than ours is still OpenMetrics / text) */
		for (const char *a = sc; a && a < e;) {
			const char *ae = find_char(a + 1, e, ';'), *n = skip_ows(a + 1, ae ? ae : e);
			const char *ve = ae ? ae : e;

			while (ve > n && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			if (ve - n >= 2 && (n[0] == 'q' || n[0] == 'Q') && n[1] == '=')
				q = parse_q(n + 2, ve);
			a = ae;
		}
		if (q > 0) {
			size_t len = (size_t)(te - t);

			if (len == 28 && !strncasecmp(t, "application/openmetrics-text", len) && q > q_om)
				q_om = q;
			else if (len == 10 && !strncasecmp(t, "text/plain", len) && q > q_text)
				q_text = q;
		}
		p = *e ? e + 1 : e;
	}
	return q_om > 0 && q_om >= q_text ? SV_METRICS_OPENMETRICS : SV_METRICS_TEXT_004;
}

/* ---- ADDR:PORT ------------------------------------------------------------------------------------ */

int sv_metrics_addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len, const char **why)
{
	char host[80];
	const char *colon, *port_s, *h;
	size_t hlen;
	unsigned long port = 0;
	struct addrinfo hints = { 0 }, *ai = NULL;
	const char *reason = NULL;

	if (!s || !*s) {
		reason = "empty address (expected IPv4:PORT or [IPv6]:PORT)";
		goto out_bad;
	}
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':') {
			reason = "an IPv6 address is written [ADDR]:PORT";
			goto out_bad;
		}
		h = s + 1;
		hlen = (size_t)(close - h);
		port_s = close + 2;
		hints.ai_family = AF_INET6;
	} else {
		colon = strrchr(s, ':');
		if (!colon) {
			reason = "no port (expected IPv4:PORT or [IPv6]:PORT)";
			goto out_bad;
		}
		if (memchr(s, ':', (size_t)(colon - s))) {
			reason = "an IPv6 address must be in brackets: [ADDR]:PORT";
			goto out_bad;
		}
		h = s;
		hlen = (size_t)(colon - s);
		port_s = colon + 1;
		hints.ai_family = AF_INET;
	}
	if (!hlen) {
		reason = "no address: say which one to listen on (0.0.0.0:PORT or [::]:PORT for all)";
		goto out_bad;
	}
	if (hlen >= sizeof(host)) {
		reason = "address too long";
		goto out_bad;
	}
	if (!*port_s || strlen(port_s) > 5) {
		reason = "port must be 0..65535";
		goto out_bad;
	}
	for (const char *p = port_s; *p; p++) {
		if (*p < '0' || *p > '9') {
			reason = "port must be a decimal number 0..65535";
			goto out_bad;
		}
		port = port * 10 + (unsigned long)(*p - '0');
	}
	if (port > 65535) {
		reason = "port must be 0..65535";
		goto out_bad;
	}
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	if (memchr(host, '\0', hlen) || strpbrk(host, " \t[]")) {
		reason = "not a numeric address";
		goto out_bad;
	}
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	hints.ai_socktype = SOCK_STREAM;
	if (getaddrinfo(host, port_s, &hints, &ai) || !ai || ai->ai_addrlen > sizeof(*ss)) {
		if (ai)
			freeaddrinfo(ai);
		reason = hints.ai_family == AF_INET ? "not a numeric IPv4 address (host names are not looked up)"
						    : "not a numeric IPv6 address";
		goto out_bad;
	}
	/* inet_aton-style short forms ("1.2", "0x7f.1") are not what a user means: insist on dotted quads */
	if (hints.ai_family == AF_INET) {
		struct in_addr a;

		if (inet_pton(AF_INET, host, &a) != 1) {
			freeaddrinfo(ai);
			reason = "not a dotted-quad IPv4 address";
			goto out_bad;
		}
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;

out_bad:
	if (why)
		*why = reason;
	return -EINVAL;
}

int sv_metrics_check_addr(const char *value, char *msg, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why = NULL;

	if (!value[0])
		return 0;
	if (strlen(value) >= SV_METRICS_ADDR_SIZE) {
		snprintf(msg, n, "longer than %d octets", SV_METRICS_ADDR_SIZE - 1);
		return -EINVAL;
	}
	if (sv_metrics_addr_parse(value, &ss, &len, &why)) {
		snprintf(msg, n, "%s", why ? why : "not IPv4:PORT or [IPv6]:PORT");
		return -EINVAL;
	}
	return 0;
}

const char *sv_metrics_host(const char *name, char *buf, size_t size)
{
	if (name && name[0])
		return name;
	if (!size)
		return "";
	memset(buf, 0, size);
	if (gethostname(buf, size - 1))
		snprintf(buf, size, "unknown");
	return buf;
}

/* ---- Health ------------------------------------------------------------------------------------------ */

/* The clock state, read with adjtimex at each scrape; @ctx says which value. */
enum clock_value { CLOCK_SYNCHRONISED, CLOCK_MAXERROR, CLOCK_ESTERROR, CLOCK_TAI_OFFSET };

static int clock_value(void *ctx, struct sv_metrics_value *v)
{
	struct sv_clock_sync s;

	if (sv_clock_sync_read(&s))
		return -1;
	v->kind = SV_METRICS_V_NS;
	switch ((enum clock_value)(uintptr_t)ctx) {
	case CLOCK_SYNCHRONISED:
		v->kind = SV_METRICS_V_U64;
		v->u = sv_clock_sync_ok(&s);
		break;
	case CLOCK_MAXERROR:
		v->ns = s.maxerror_ns;
		break;
	case CLOCK_ESTERROR:
		v->ns = s.esterror_ns;
		break;
	default:
		v->ns = (int64_t)s.tai_offset_s * SV_NSEC_PER_SEC;
		break;
	}
	return 0;
}

int sv_metrics_add_health(struct sv_metrics *m, const char *tool, const char *host,
			  const struct sv_metrics_health *h)
{
	static const char *const build_labels[] = { "tool", "version", "host" };
	static const struct {
		const char *name, *help;
		size_t off;
	} counters[] = {
		{ "svkit_events_lost", "Events the tool's kernel side produced and user space never got (per tool: "
				       "docs/metrics.md)", offsetof(struct sv_metrics_health, events_lost) },
		{ "svkit_ring_overflows", "Frames lost because a receive or transmit ring was full",
		  offsetof(struct sv_metrics_health, ring_overflows) },
		{ "svkit_record_records", "Records accepted by the record writer",
		  offsetof(struct sv_metrics_health, record_records) },
		{ "svkit_record_written_bytes", "Octets the record writer wrote to disk, all parts",
		  offsetof(struct sv_metrics_health, record_bytes) },
		{ "svkit_record_write_errors", "Record blocks that failed to write (disk full, I/O error)",
		  offsetof(struct sv_metrics_health, record_write_errors) },
		{ "svkit_record_lost_records", "Records lost in blocks that failed to write",
		  offsetof(struct sv_metrics_health, record_lost_records) },
	};
	static const struct {
		const char *name, *unit, *help;
		enum clock_value which;
	} clock[] = {
		{ "svkit_clock_synchronised", NULL,
		  "1 when adjtimex says the clock is synchronised (no STA_UNSYNC, TAI offset set, state not "
		  "TIME_ERROR)", CLOCK_SYNCHRONISED },
		{ "svkit_clock_maxerror_seconds", "seconds", "The kernel's maximum error bound of the clock (adjtimex "
							      "maxerror)", CLOCK_MAXERROR },
		{ "svkit_clock_esterror_seconds", "seconds", "The kernel's estimated error of the clock (adjtimex "
							      "esterror)", CLOCK_ESTERROR },
		{ "svkit_clock_tai_offset_seconds", "seconds", "TAI - UTC as the kernel knows it; 0 = unset "
								"(CLOCK_TAI is then 37 s off)", CLOCK_TAI_OFFSET },
	};
	const char *bv[] = { tool, SVKIT_VERSION, host };
	struct sv_metrics_family *f;
	struct timespec ts;
	int err;

	if (!tool || !host || !h)
		return -EINVAL;
	f = sv_metrics_family(m, "svkit_build", SV_METRIC_INFO, NULL,
			      "The tool, its version and the host name its records carry", 3, build_labels);
	if (!f)
		return -errno;
	err = sv_metrics_add_value(f, bv, (struct sv_metrics_value){ .kind = SV_METRICS_V_U64, .u = 1 });
	if (err)
		return err;
	clock_gettime(CLOCK_REALTIME, &ts);
	m->start_realtime_ns = sv_timespec_to_ns(&ts);
	f = sv_metrics_family(m, "svkit_process_start_time_seconds", SV_METRIC_GAUGE, "seconds",
			      "When the tool started (set up its metrics), seconds since the Unix epoch", 0, NULL);
	if (!f)
		return -errno;
	err = sv_metrics_add_ns(f, NULL, &m->start_realtime_ns);
	if (err)
		return err;
	f = sv_metrics_family(m, "svkit_run_finished", SV_METRIC_GAUGE, NULL,
			      "1 once the run has ended: every total is final (the tool serves one more scrape)", 0,
			      NULL);
	if (!f)
		return -errno;
	err = sv_metrics_add_u64(f, NULL, &m->finished_u64);
	if (err)
		return err;
	for (size_t i = 0; i < sizeof(clock) / sizeof(clock[0]); i++) {
		f = sv_metrics_family(m, clock[i].name, SV_METRIC_GAUGE, clock[i].unit, clock[i].help, 0, NULL);
		if (!f)
			return -errno;
		err = sv_metrics_add_fn(f, NULL, clock_value, (void *)(uintptr_t)clock[i].which);
		if (err)
			return err;
	}
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		const char *unit = ends_with(counters[i].name, "_bytes") ? "bytes" : NULL;

		f = sv_metrics_family(m, counters[i].name, SV_METRIC_COUNTER, unit, counters[i].help, 0, NULL);
		if (!f)
			return -errno;
		err = sv_metrics_add_u64(f, NULL, (const uint64_t *)((const char *)h + counters[i].off));
		if (err)
			return err;
	}
	return 0;
}

void sv_metrics_health_record_stats(struct sv_metrics_health *h, const struct sv_record_writer_stats *st)
{
	if (!h || !st)
		return;
	sv_metrics_store_u64(&h->record_records, st->records);
	sv_metrics_store_u64(&h->record_bytes, st->bytes);
	sv_metrics_store_u64(&h->record_write_errors, st->write_errors);
	sv_metrics_store_u64(&h->record_lost_records, st->lost_records);
}

void sv_metrics_health_record(struct sv_metrics_health *h, const struct sv_record_writer *w)
{
	struct sv_record_writer_stats st;

	if (!w)
		return;
	sv_record_writer_get_stats(w, &st);
	sv_metrics_health_record_stats(h, &st);
}
