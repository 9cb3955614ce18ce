/* SPDX-License-Identifier: Apache-2.0 */
/* svsub --comtrade: disturbance and range records (svsub_comtrade.h). */
#include "svsub_comtrade.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sv_json.h"

#define QLEN 256	  /* records waiting for the writer */
#define MAX_FILES 64	  /* names kept for the summary */
#define F_GAP 1u	  /* samples were lost just before this one */

enum { ST_PICKUP, ST_TRIP, ST_INCEPTION, ST_MISSING, ST_FIXED };

struct ent {
	int64_t t_ns;
	uint16_t smpCnt;
	uint16_t flags;
	uint32_t pad;
};

struct ct_stream {
	struct svsub_comtrade *c;
	char svid[SV_MAX_ID_LEN + 1];
	uint16_t appid;
	const struct sv_dataset *ds;
	unsigned nch;
	uint32_t rate, wrap;
	size_t stride;
	unsigned cap, head, count;
	uint8_t *ring, *out;
	atomic_int out_busy;
	/* the record being filled (receive thread) and the one handed over (writer) */
	bool armed, is_range, has_t0, range_done;
	int64_t t0, start_ns, end_ns;
	struct svapp_trip trip;
	struct {
		unsigned n;
		bool is_range, cut_short;
		struct svapp_trip trip;
		int64_t start_ns;
	} job;
};

struct svsub_comtrade {
	struct svsub_comtrade_cfg cfg;
	char dir[512];
	struct svapp_hooks hooks;
	struct ct_stream *q[QLEN];
	atomic_uint qhead, qtail;
	sem_t sem;
	pthread_t writer;
	atomic_bool stop;
	struct ct_stream **streams;
	unsigned nstreams, cap_streams;
	/* counters: written by the writer, read at the end; dropped by the receive thread */
	atomic_ulong written, failed, dropped, missing;
	atomic_int last_errno;
	char files[MAX_FILES][720];
	unsigned nfiles;
};

static struct ent *ent_at(const struct ct_stream *s, const uint8_t *buf, unsigned i)
{
	return (struct ent *)(void *)(buf + (size_t)i * s->stride);
}

static double *ent_v(struct ent *e)
{
	return (double *)(void *)(e + 1);
}

static uint32_t *ent_q(const struct ct_stream *s, struct ent *e)
{
	return (uint32_t *)(void *)(ent_v(e) + s->nch);
}

/* ---- receive thread ---- */

static int hook_stream_new(void *ctx, struct svapp_stream *as)
{
	struct svsub_comtrade *c = ctx;
	struct ct_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->c = c;
	snprintf(s->svid, sizeof(s->svid), "%s", as->svID);
	s->appid = as->appid;
	as->hook_priv = s;
	if (c->nstreams == c->cap_streams) {
		unsigned cap = c->cap_streams ? 2 * c->cap_streams : 16;
		struct ct_stream **p = realloc(c->streams, cap * sizeof(*p));

		if (!p) {
			free(s);
			as->hook_priv = NULL;
			return -ENOMEM;
		}
		c->streams = p;
		c->cap_streams = cap;
	}
	c->streams[c->nstreams++] = s;
	return 0;
}

/* The ring, once the stream's rate and dataset are known (its first usable sample). */
static bool stream_setup(struct ct_stream *s, const struct svapp_sample *x)
{
	const struct svsub_comtrade_cfg *cfg = &s->c->cfg;
	double span = cfg->pre_s + cfg->post_s + 0.5;

	if (s->ring)
		return true;
	if (!x->rate || !x->nch || !x->dataset)
		return false;
	if (cfg->range && cfg->range_to_s - cfg->range_from_s + 0.1 > span)
		span = cfg->range_to_s - cfg->range_from_s + 0.1;
	s->ds = x->dataset;
	s->nch = x->nch > SV_CT_MAX_ANALOG ? SV_CT_MAX_ANALOG : x->nch;
	s->rate = x->rate;
	s->stride = sizeof(struct ent) + s->nch * (sizeof(double) + sizeof(uint32_t));
	s->stride = (s->stride + 7) & ~(size_t)7;
	s->cap = (unsigned)(span * x->rate) + 2;
	s->ring = malloc(s->stride * s->cap);
	s->out = malloc(s->stride * s->cap);
	if (!s->ring || !s->out) {
		free(s->ring);
		free(s->out);
		s->ring = s->out = NULL;
		return false;
	}
	return true;
}

/* Copies the ring's entries from @start_ns on into the out buffer and posts it. */
static void hand_over(struct ct_stream *s, int64_t start_ns, bool is_range, bool cut_short)
{
	struct svsub_comtrade *c = s->c;
	unsigned first = (s->head + s->cap - s->count) % s->cap, n = 0, h, t;

	if (atomic_load(&s->out_busy)) {
		atomic_fetch_add(&c->dropped, 1);
		return;
	}
	for (unsigned k = 0; k < s->count; k++) {
		const struct ent *e = ent_at(s, s->ring, (first + k) % s->cap);

		if (e->t_ns < start_ns)
			continue;
		memcpy(ent_at(s, s->out, n++), e, s->stride);
	}
	h = atomic_load(&c->qhead);
	t = atomic_load(&c->qtail);
	if (!n || h - t >= QLEN) {
		atomic_fetch_add(&c->dropped, 1);
		return;
	}
	s->job.n = n;
	s->job.is_range = is_range;
	s->job.cut_short = cut_short;
	s->job.trip = s->trip;
	s->job.start_ns = start_ns;
	atomic_store(&s->out_busy, 1);
	c->q[h % QLEN] = s;
	atomic_store(&c->qhead, h + 1);
	sem_post(&c->sem);
}

static void hook_sample(void *ctx, struct svapp_stream *as, const struct svapp_sample *x)
{
	struct ct_stream *s = as->hook_priv;
	struct ent *e;
	int64_t t;

	(void)ctx;
	if (!s || !stream_setup(s, x))
		return;
	t = x->has_sample_time ? x->sample_ns : x->rx_ns;
	s->wrap = as->stats && as->stats->wrap ? as->stats->wrap : 65536;
	e = ent_at(s, s->ring, s->head);
	e->t_ns = t;
	e->smpCnt = x->smpCnt;
	e->flags = x->lost_before || x->resync ? F_GAP : 0;
	for (unsigned c = 0; c < s->nch; c++) {
		ent_v(e)[c] = x->values[c];
		ent_q(s, e)[c] = x->quality[c];
	}
	s->head = (s->head + 1) % s->cap;
	if (s->count < s->cap)
		s->count++;
	if (!s->has_t0) {
		s->has_t0 = true;
		s->t0 = t;
	}
	if (s->armed && t >= s->end_ns) {
		s->armed = false;
		hand_over(s, s->start_ns, false, false);
	}
	if (s->c->cfg.range && !s->range_done &&
	    t >= s->t0 + (int64_t)(s->c->cfg.range_to_s * 1e9) - (int64_t)(1e9 / s->rate)) {
		s->range_done = true;
		memset(&s->trip, 0, sizeof(s->trip));
		hand_over(s, s->t0 + (int64_t)(s->c->cfg.range_from_s * 1e9), true, false);
	}
}

static void hook_trip(void *ctx, struct svapp_stream *as, const struct svapp_trip *tr)
{
	struct svsub_comtrade *c = ctx;
	struct ct_stream *s = as->hook_priv;
	int64_t end;

	if (!s || !s->ring || s->armed)
		return; /* a second trip within a record is in that record (TRIP stays 1) */
	s->trip = *tr;
	s->start_ns = tr->pickup_ns - (int64_t)(c->cfg.pre_s * 1e9);
	end = tr->pickup_ns + (int64_t)(c->cfg.post_s * 1e9);
	s->end_ns = end > tr->trip_ns ? end : tr->trip_ns;
	s->armed = true;
}

/* ---- writer thread ---- */

static void sanitize(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	for (; *src && n + 1 < size; src++)
		dst[n++] = (char)((*src >= 'A' && *src <= 'Z') || (*src >= 'a' && *src <= 'z') ||
				  (*src >= '0' && *src <= '9') || *src == '-' ? *src : '_');
	dst[n] = '\0';
}

static int64_t to_utc(const struct svsub_comtrade *c, int64_t t)
{
	return c->cfg.live ? t - c->cfg.tai_offset_ns : t;
}

static void channel_ids(const struct ct_stream *s, struct sv_ct_record *r)
{
	for (unsigned i = 0; i < s->nch; i++) {
		const struct sv_ds_member *m = &s->ds->m[s->ds->value[i]];
		struct sv_ct_analog *a = &r->an[i];
		unsigned dup = 0;

		if (m->unit[0] && m->phase)
			snprintf(a->id, sizeof(a->id), "%s%c", m->unit[0] == 'A' ? "I" : m->unit, m->phase);
		else
			snprintf(a->id, sizeof(a->id), "%.63s", m->name);
		for (unsigned k = 0; k < i; k++)
			dup += !strcmp(r->an[k].id, a->id) || (strlen(r->an[k].id) > strlen(a->id) &&
							       !strncmp(r->an[k].id, a->id, strlen(a->id)) &&
							       r->an[k].id[strlen(a->id)] == '_');
		if (dup) {
			size_t l = strlen(a->id);

			snprintf(a->id + (l < 58 ? l : 58), 6, "_%u", dup + 1);
		}
		snprintf(a->ph, sizeof(a->ph), "%c", m->phase ? m->phase : ' ');
		if (!m->phase)
			a->ph[0] = '\0';
		snprintf(a->ccbm, sizeof(a->ccbm), "%.63s", m->name);
		snprintf(a->uu, sizeof(a->uu), "%s", m->unit);
		a->a = s->c->cfg.format == SV_CT_FLOAT32 ? 1 : m->scale;
		a->b = 0;
		a->primary = m->primary > 0 ? m->primary : 1;
		a->secondary = m->secondary > 0 ? m->secondary : 1;
	}
	r->nan = s->nch;
	snprintf(r->dig[ST_PICKUP].id, SV_CT_ID_LEN, "PICKUP");
	snprintf(r->dig[ST_TRIP].id, SV_CT_ID_LEN, "TRIP");
	snprintf(r->dig[ST_INCEPTION].id, SV_CT_ID_LEN, "INCEPTION");
	snprintf(r->dig[ST_MISSING].id, SV_CT_ID_LEN, "MISSING");
	r->ndig = ST_FIXED;
	for (unsigned i = 0; i < s->nch && r->ndig + 2 <= SV_CT_MAX_DIGITAL; i++) {
		char id[SV_CT_ID_LEN];

		snprintf(id, sizeof(id), "%s", r->an[i].id);
		snprintf(r->dig[r->ndig++].id, SV_CT_ID_LEN, "%.40s_INVALID", id);
		snprintf(r->dig[r->ndig++].id, SV_CT_ID_LEN, "%.40s_TEST", id);
	}
}

/* Rows: the entries, and between two entries that the smpCnt says are apart, the missing samples. */
struct rows {
	uint32_t n;
	uint64_t missing;
};

static int write_dat(FILE *f, const struct ct_stream *s, struct sv_ct_record *r, int64_t t_first, struct rows *rw,
		     bool count_only)
{
	const struct svapp_trip *tr = &s->job.trip;
	uint8_t dig[SV_CT_MAX_DIGITAL];
	double none[SV_CT_MAX_ANALOG] = { 0 };
	uint32_t n = 0;
	int err = 0;

	rw->missing = 0;
	for (unsigned k = 0; k < s->job.n && !err; k++) {
		struct ent *e = ent_at(s, s->out, k);
		uint32_t gap = 0;

		if (k) {
			const struct ent *p = ent_at(s, s->out, k - 1);

			gap = (uint32_t)((e->smpCnt + s->wrap - p->smpCnt) % s->wrap);
			gap = gap ? gap - 1 : 0;
		}
		for (uint32_t g = 0; g <= gap && !err; g++) {
			bool miss = g < gap;
			int64_t t = e->t_ns - (int64_t)(gap - g) * 1000000000LL / (int64_t)s->rate;
			int64_t dt = t - t_first;

			n++;
			rw->missing += miss;
			if (count_only)
				continue;
			memset(dig, 0, sizeof(dig));
			if (!s->job.is_range) {
				dig[ST_PICKUP] = t >= tr->pickup_ns;
				dig[ST_TRIP] = t >= tr->trip_ns;
				dig[ST_INCEPTION] = tr->has_inception && t >= tr->inception_ns;
			}
			dig[ST_MISSING] = miss;
			for (unsigned i = 0; !miss && i < s->nch && ST_FIXED + 2 * i + 1 < r->ndig; i++) {
				uint32_t q = ent_q(s, e)[i];

				dig[ST_FIXED + 2 * i] = sv_quality_validity(q) != SV_VALIDITY_GOOD;
				dig[ST_FIXED + 2 * i + 1] = (q & SV_Q_TEST) != 0;
			}
			if (r->format == SV_CT_FLOAT32 && !miss) {
				/* FLOAT32 holds primary values (a = 1) */
				double scaled[SV_CT_MAX_ANALOG];

				for (unsigned i = 0; i < s->nch; i++)
					scaled[i] = ent_v(e)[i] * s->ds->m[s->ds->value[i]].scale;
				err = sv_ct_write_row(f, r, n, (uint32_t)((dt + 500) / 1000), scaled, miss, dig);
			} else {
				err = sv_ct_write_row(f, r, n, (uint32_t)((dt + 500) / 1000), miss ? none : ent_v(e), miss,
						      dig);
			}
		}
	}
	rw->n = n;
	return err;
}

static void minmax(const struct ct_stream *s, struct sv_ct_record *r)
{
	for (unsigned i = 0; i < s->nch; i++) {
		double lo = INFINITY, hi = -INFINITY;

		for (unsigned k = 0; k < s->job.n; k++) {
			double v = ent_v(ent_at(s, s->out, k))[i] * (r->format == SV_CT_FLOAT32 ? s->ds->m[s->ds->value[i]].scale : 1);

			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
		}
		r->an[i].min = isfinite(lo) ? lo : 0;
		r->an[i].max = isfinite(hi) ? hi : 0;
	}
}

static void write_hdr(FILE *f, const struct svsub_comtrade *c, const struct ct_stream *s, const struct sv_ct_record *r,
		      const struct rows *rw)
{
	const struct svapp_trip *tr = &s->job.trip;

	fprintf(f, "svkit svsub disturbance record (IEEE C37.111-2013)\r\n");
	fprintf(f, "stream: svID %s, APPID 0x%04X, dataset %s; source: %s\r\n", s->svid, s->appid, s->ds->name,
		c->cfg.source ? c->cfg.source : "?");
	if (s->job.is_range)
		fprintf(f, "record: a time range from %.6f s to %.6f s after the stream's first sample\r\n",
			c->cfg.range_from_s, c->cfg.range_to_s);
	else
		fprintf(f, "trigger: the protection's pickup (first sample over pickup), smpCnt %u; trip (deciding sample) "
			"smpCnt %u, status channel TRIP; fault inception %s%u%s, status channel INCEPTION; phases %s; window "
			"%.3f s before the trigger, %.3f s after%s\r\n", tr->pickup_smpCnt, tr->trip_smpCnt,
			tr->has_inception ? "smpCnt " : "not told (", tr->has_inception ? tr->inception_smpCnt : 0,
			tr->has_inception ? "" : ")", tr->phases, c->cfg.pre_s, c->cfg.post_s,
			s->job.cut_short ? " (cut short: the run ended)" : "");
	fprintf(f, "samples: %u rows at %.17g/s, %" PRIu64 " of them lost on the network: their rows keep their number "
		"and time, carry the %s missing-data marker and MISSING = 1\r\n", rw->n, r->rate, rw->missing,
		r->format == SV_CT_FLOAT32 ? "NaN (FLOAT32)" : r->format == SV_CT_ASCII ? "empty-field" : "0x80000000");
	fprintf(f, "time: UTC; ");
	if (!c->cfg.live)
		fprintf(f, "the capture's clock, taken as UTC; its synchronisation is not in the file: tmq_code F\r\n");
	else if (!c->cfg.tai_offset_ns)
		fprintf(f, "samples stamped on CLOCK_TAI, whose offset to UTC is unset on this host (CLOCK_TAI = "
			"CLOCK_REALTIME): times are REALTIME, not converted, tmq_code F\r\n");
	else
		fprintf(f, "samples stamped on CLOCK_TAI, UTC = TAI - %" PRId64 " s; clock %s, maximum error %" PRId64
			" ns: tmq_code %c\r\n", c->cfg.tai_offset_ns / 1000000000, c->cfg.clock_synchronised ?
			"synchronised" : "NOT synchronised", c->cfg.max_error_ns, r->tmq);
	for (unsigned i = 0; i < r->nan; i++) {
		const struct sv_ds_member *m = &s->ds->m[s->ds->value[i]];

		fprintf(f, "channel %s (%s): %.17g %s per count (scale from %s), ratio %.17g/%.17g (%s), values primary\r\n",
			r->an[i].id, m->name, m->scale, m->unit[0] ? m->unit : "units", sv_scale_source_name(m->scale_src),
			r->an[i].primary, r->an[i].secondary, sv_ratio_source_name(m->ratio_src));
	}
}

static void note_file(struct svsub_comtrade *c, const char *path)
{
	if (c->nfiles < MAX_FILES)
		snprintf(c->files[c->nfiles++], sizeof(c->files[0]), "%s", path);
}

static int write_record(struct svsub_comtrade *c, struct ct_stream *s)
{
	static struct sv_ct_record r; /* the writer thread's only */
	char base[700], name[720], when[64], id[80];
	const char *ext[] = { ".cfg", ".dat", ".hdr" };
	FILE *f[3] = { NULL, NULL, NULL };
	int64_t t_first = ent_at(s, s->out, 0)->t_ns, utc = to_utc(c, t_first);
	struct rows rw;
	time_t tt = (time_t)(utc / 1000000000);
	struct tm tm;
	int err = 0;
	unsigned nf = c->cfg.cff ? 1 : 3;

	memset(&r, 0, sizeof(r));
	snprintf(r.station, sizeof(r.station), "svkit");
	snprintf(r.device, sizeof(r.device), "svsub %.50s", s->svid);
	r.format = c->cfg.format;
	channel_ids(s, &r);
	r.lf = c->cfg.nominal_hz ? c->cfg.nominal_hz : 50;
	r.rate = s->rate;
	write_dat(NULL, s, &r, t_first, &rw, true);
	r.nsamples = rw.n;
	r.start_utc_ns = utc;
	r.trigger_utc_ns = s->job.is_range ? utc : to_utc(c, s->job.trip.pickup_ns);
	r.tmq = c->cfg.live && c->cfg.tai_offset_ns && c->cfg.clock_synchronised ? sv_ct_tmq(c->cfg.max_error_ns) : 'F';
	r.leapsec = c->cfg.live && c->cfg.tai_offset_ns ? 0 : 3;
	minmax(s, &r);
	gmtime_r(&tt, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%S", &tm);
	sanitize(id, sizeof(id), s->svid);
	snprintf(base, sizeof(base), "%s/%s_%04X_%s_%06lldZ_%s", c->dir, id, s->appid, when,
		 (long long)((utc % 1000000000 + 1000000000) % 1000000000 / 1000), s->job.is_range ? "range" : "trip");
	errno = 0;
	for (unsigned i = 0; i < nf && !err; i++) {
		snprintf(name, sizeof(name), "%s%s", base, c->cfg.cff ? ".cff" : ext[i]);
		f[i] = fopen(name, "wb");
		if (!f[i])
			err = -errno;
	}
	if (!err && c->cfg.cff)
		fputs("--- file type: CFG ---\r\n", f[0]);
	if (!err)
		err = sv_ct_write_cfg(f[0], &r);
	if (!err && c->cfg.cff) {
		fputs("--- file type: HDR ---\r\n", f[0]);
		write_hdr(f[0], c, s, &r, &rw);
		if (r.format == SV_CT_ASCII)
			fputs("--- file type: DAT ASCII ---\r\n", f[0]);
		else
			fprintf(f[0], "--- file type: DAT BINARY: %zu ---\r\n", (size_t)sv_ct_row_size(&r) * rw.n);
	}
	if (!err)
		err = write_dat(c->cfg.cff ? f[0] : f[1], s, &r, t_first, &rw, false);
	if (!err && !c->cfg.cff)
		write_hdr(f[2], c, s, &r, &rw);
	for (unsigned i = 0; i < nf; i++) {
		if (f[i] && (ferror(f[i]) | fflush(f[i]) | fsync(fileno(f[i]))) && !err)
			err = -(errno ? errno : EIO);
		if (f[i] && fclose(f[i]) && !err)
			err = -(errno ? errno : EIO);
	}
	if (err) {
		/* no half record left behind: a reader would take it for a whole one */
		for (unsigned i = 0; i < nf; i++) {
			snprintf(name, sizeof(name), "%s%s", base, c->cfg.cff ? ".cff" : ext[i]);
			unlink(name);
		}
		fprintf(stderr, "svsub: --comtrade: %s: %s: record of %s lost (receiving goes on)\n", base, strerror(-err),
			s->svid);
		atomic_store(&c->last_errno, -err);
		atomic_fetch_add(&c->failed, 1);
		return err;
	}
	snprintf(name, sizeof(name), "%s%s", base, c->cfg.cff ? ".cff" : ".cfg");
	note_file(c, name);
	atomic_fetch_add(&c->missing, rw.missing);
	atomic_fetch_add(&c->written, 1);
	return 0;
}

static void *writer_main(void *arg)
{
	struct svsub_comtrade *c = arg;

	for (;;) {
		unsigned t = atomic_load(&c->qtail);

		if (t == atomic_load(&c->qhead)) {
			if (atomic_load(&c->stop))
				break;
			while (sem_wait(&c->sem) && errno == EINTR)
				;
			continue;
		}
		write_record(c, c->q[t % QLEN]);
		atomic_store(&c->q[t % QLEN]->out_busy, 0);
		atomic_store(&c->qtail, t + 1);
	}
	return NULL;
}

/* ---- lifecycle ---- */

int svsub_comtrade_create(struct svsub_comtrade **out, const struct svsub_comtrade_cfg *cfg)
{
	struct svsub_comtrade *c;
	struct stat st;
	int err;

	if (!(cfg->pre_s >= 0 && cfg->post_s >= 0 && cfg->pre_s + cfg->post_s <= SVSUB_CT_MAX_RANGE_S) ||
	    (cfg->range && !(cfg->range_from_s >= 0 && cfg->range_to_s > cfg->range_from_s &&
			     cfg->range_to_s - cfg->range_from_s <= SVSUB_CT_MAX_RANGE_S)))
		return -EINVAL;
	if (stat(cfg->dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (access(cfg->dir, W_OK | X_OK))
		return -errno;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->cfg = *cfg;
	snprintf(c->dir, sizeof(c->dir), "%s", cfg->dir);
	c->cfg.dir = c->dir;
	c->hooks.ctx = c;
	c->hooks.stream_new = hook_stream_new;
	c->hooks.sample = hook_sample;
	c->hooks.trip = hook_trip;
	if (sem_init(&c->sem, 0, 0)) {
		free(c);
		return -errno;
	}
	err = pthread_create(&c->writer, NULL, writer_main, c);
	if (err) {
		sem_destroy(&c->sem);
		free(c);
		return -err;
	}
	*out = c;
	return 0;
}

const struct svapp_hooks *svsub_comtrade_hooks(struct svsub_comtrade *c)
{
	return &c->hooks;
}

int svsub_comtrade_close(struct svsub_comtrade *c)
{
	int ret;

	if (!c)
		return 0;
	/* records still open: what there is, said to be cut short */
	for (unsigned i = 0; i < c->nstreams; i++) {
		struct ct_stream *s = c->streams[i];

		while (atomic_load(&s->out_busy))
			usleep(1000); /* the end of the run, not the packet path */
		if (s->armed) {
			s->armed = false;
			hand_over(s, s->start_ns, false, true);
		} else if (c->cfg.range && s->has_t0 && !s->range_done) {
			s->range_done = true;
			memset(&s->trip, 0, sizeof(s->trip));
			hand_over(s, s->t0 + (int64_t)(c->cfg.range_from_s * 1e9), true, true);
		}
	}
	atomic_store(&c->stop, true);
	sem_post(&c->sem);
	pthread_join(c->writer, NULL);
	sem_destroy(&c->sem);
	ret = atomic_load(&c->failed) ? -EIO : 0;
	return ret;
}

void svsub_comtrade_counts(struct svsub_comtrade *c, struct svsub_comtrade_counts *n)
{
	n->written = atomic_load(&c->written);
	n->dropped = atomic_load(&c->dropped);
	n->failed = atomic_load(&c->failed);
	n->samples_missing = atomic_load(&c->missing);
	n->last_errno = atomic_load(&c->last_errno);
}

void svsub_comtrade_print(struct svsub_comtrade *c, FILE *f)
{
	struct svsub_comtrade_counts n;

	svsub_comtrade_counts(c, &n);
	fprintf(f, "COMTRADE (%s, %s): %" PRIu64 " records written, %" PRIu64 " dropped (writer busy), %" PRIu64
		" failed%s%s%s, %" PRIu64 " lost samples marked missing in them\n", c->dir,
		sv_ct_format_names[c->cfg.format], n.written, n.dropped, n.failed, n.failed ? " (" : "",
		n.failed ? strerror(n.last_errno) : "", n.failed ? ")" : "", n.samples_missing);
	for (unsigned i = 0; i < c->nfiles; i++)
		fprintf(f, "  %s\n", c->files[i]);
}

int svsub_comtrade_json(struct svsub_comtrade *c, struct sv_json *j)
{
	struct svsub_comtrade_counts n;

	svsub_comtrade_counts(c, &n);
	sv_json_key(j, "comtrade");
	sv_json_object_begin(j);
	sv_json_kv_str(j, "dir", c->dir);
	sv_json_kv_str(j, "format", sv_ct_format_names[c->cfg.format]);
	sv_json_kv_uint(j, "written", n.written);
	sv_json_kv_uint(j, "dropped", n.dropped);
	sv_json_kv_uint(j, "failed", n.failed);
	sv_json_kv_str(j, "error", n.failed ? strerror(n.last_errno) : NULL);
	sv_json_kv_uint(j, "samples_missing", n.samples_missing);
	sv_json_key(j, "files");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < c->nfiles; i++)
		sv_json_string(j, c->files[i]);
	sv_json_array_end(j);
	sv_json_object_end(j);
	return sv_json_error(j);
}

void svsub_comtrade_free(struct svsub_comtrade *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->nstreams; i++) {
		free(c->streams[i]->ring);
		free(c->streams[i]->out);
		free(c->streams[i]);
	}
	free(c->streams);
	free(c);
}
