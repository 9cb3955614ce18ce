// SPDX-License-Identifier: Apache-2.0
/* COMTRADE 2013 configuration and data files (sv_comtrade.h). */
#include "sv_comtrade.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

const char *const sv_ct_format_names[] = { "BINARY32", "FLOAT32", "ASCII", NULL };

static void put_date(FILE *f, int64_t ns)
{
	int64_t sec = ns / 1000000000, rem = ns % 1000000000;
	time_t t;
	struct tm tm;

	if (rem < 0) {
		rem += 1000000000;
		sec--;
	}
	t = (time_t)sec;
	gmtime_r(&t, &tm);
	/* dd/mm/yyyy,hh:mm:ss.ssssss (C37.111-2013: day first, four-digit year) */
	fprintf(f, "%02d/%02d/%04d,%02d:%02d:%02d.%06lld\r\n", tm.tm_mday, tm.tm_mon + 1, tm.tm_year + 1900, tm.tm_hour,
		tm.tm_min, tm.tm_sec, (long long)(rem / 1000));
}

/* Commas would break the fields: names are written without them. */
static void put_field(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ',' || *s == '\r' || *s == '\n' ? '_' : *s, f);
}

int sv_ct_write_cfg(FILE *f, const struct sv_ct_record *r)
{
	put_field(f, r->station);
	fputc(',', f);
	put_field(f, r->device);
	fprintf(f, ",2013\r\n%u,%uA,%uD\r\n", r->nan + r->ndig, r->nan, r->ndig);
	for (unsigned i = 0; i < r->nan; i++) {
		const struct sv_ct_analog *a = &r->an[i];

		fprintf(f, "%u,", i + 1);
		put_field(f, a->id);
		fputc(',', f);
		put_field(f, a->ph);
		fputc(',', f);
		put_field(f, a->ccbm);
		fputc(',', f);
		put_field(f, a->uu);
		fprintf(f, ",%.17g,%.17g,0,%.17g,%.17g,%.17g,%.17g,P\r\n", a->a, a->b, a->min, a->max, a->primary,
			a->secondary);
	}
	for (unsigned i = 0; i < r->ndig; i++) {
		fprintf(f, "%u,", i + 1);
		put_field(f, r->dig[i].id);
		fputs(",,", f);
		put_field(f, r->dig[i].ccbm);
		fputs(",0\r\n", f);
	}
	fprintf(f, "%.17g\r\n1\r\n%.17g,%u\r\n", r->lf, r->rate, r->nsamples);
	put_date(f, r->start_utc_ns);
	put_date(f, r->trigger_utc_ns);
	fprintf(f, "%s\r\n1\r\n0,0\r\n%c,%u\r\n", sv_ct_format_names[r->format], r->tmq, r->leapsec);
	return ferror(f) ? -(errno ? errno : EIO) : 0;
}

unsigned sv_ct_row_size(const struct sv_ct_record *r)
{
	return r->format == SV_CT_ASCII ? 0 : 8 + 4 * r->nan + 2 * ((r->ndig + 15) / 16);
}

static void le32(uint8_t *p, uint32_t x)
{
	p[0] = (uint8_t)x;
	p[1] = (uint8_t)(x >> 8);
	p[2] = (uint8_t)(x >> 16);
	p[3] = (uint8_t)(x >> 24);
}

static int32_t clamp_raw(double x)
{
	double v = nearbyint(x);

	return v >= 2147483647.0 ? 2147483647 : v <= -2147483647.0 ? -2147483647 : (int32_t)v;
}

int sv_ct_write_row(FILE *f, const struct sv_ct_record *r, uint32_t n, uint32_t t_us, const double *raw,
		    bool missing, const uint8_t *dig)
{
	uint8_t row[8 + 4 * SV_CT_MAX_ANALOG + 2 * ((SV_CT_MAX_DIGITAL + 15) / 16)];
	unsigned off = 8;

	if (r->format == SV_CT_ASCII) {
		fprintf(f, "%u,%u", n, t_us);
		for (unsigned i = 0; i < r->nan; i++) {
			if (missing)
				fputc(',', f); /* an empty field: no data */
			else
				fprintf(f, ",%d", clamp_raw(raw[i]));
		}
		for (unsigned i = 0; i < r->ndig; i++)
			fprintf(f, ",%u", dig[i] ? 1u : 0u);
		fputs("\r\n", f);
		return ferror(f) ? -(errno ? errno : EIO) : 0;
	}
	le32(row, n);
	le32(row + 4, t_us);
	for (unsigned i = 0; i < r->nan; i++, off += 4) {
		uint32_t w;

		if (r->format == SV_CT_FLOAT32) {
			float v = missing ? NAN : (float)(raw[i] * r->an[i].a);

			memcpy(&w, &v, 4);
		} else {
			w = (uint32_t)(missing ? SV_CT_MISSING_B32 : clamp_raw(raw[i]));
		}
		le32(row + off, w);
	}
	for (unsigned i = 0; i < r->ndig; i += 16, off += 2) {
		unsigned word = 0;

		for (unsigned b = 0; b < 16 && i + b < r->ndig; b++)
			word |= (dig[i + b] ? 1u : 0u) << b;
		row[off] = (uint8_t)word;
		row[off + 1] = (uint8_t)(word >> 8);
	}
	return fwrite(row, 1, off, f) == off ? 0 : -(errno ? errno : EIO); /* ENOSPC: the disk is full */
}

char sv_ct_tmq(int64_t err_ns)
{
	/* C37.118: n in 1..B means the time is within 10^(n-10) s; 0 locked (not claimed here); F unreliable */
	double bound = 1e-9;

	if (err_ns < 0)
		return 'F';
	for (int n = 1; n <= 11; n++, bound *= 10)
		if ((double)err_ns * 1e-9 <= bound)
			return (char)(n < 10 ? '0' + n : 'A' + n - 10);
	return 'F';
}

/* ---- reading ---- */

struct cursor {
	const char *p, *end;
	unsigned line;
};

/* The next line into @buf (without CR/LF); false at the end. */
static bool next_line(struct cursor *c, char *buf, size_t size)
{
	size_t n = 0;

	if (c->p >= c->end)
		return false;
	c->line++;
	while (c->p < c->end && *c->p != '\n') {
		if (*c->p != '\r' && n + 1 < size)
			buf[n++] = *c->p;
		c->p++;
	}
	if (c->p < c->end)
		c->p++;
	buf[n] = '\0';
	return true;
}

/* Splits @line at commas into at most @max fields (in place). */
static unsigned split(char *line, char **fld, unsigned max)
{
	unsigned n = 0;

	fld[n++] = line;
	for (char *p = line; *p && n < max; p++) {
		if (*p == ',') {
			*p = '\0';
			fld[n++] = p + 1;
		}
	}
	return n;
}

static bool num(const char *s, double *out)
{
	char *end;

	while (*s == ' ')
		s++;
	if (!*s)
		return false;
	*out = strtod(s, &end);
	while (*end == ' ')
		end++;
	return !*end && isfinite(*out);
}

static bool parse_date(char *d, char *t, int64_t *ns)
{
	int day, mon, year, h, m;
	double s;
	struct tm tm = { 0 };

	if (sscanf(d, "%d/%d/%d", &day, &mon, &year) != 3 || !num(t + (strlen(t) > 6 ? 6 : strlen(t)), &s) ||
	    sscanf(t, "%d:%d:", &h, &m) != 2 || day < 1 || day > 31 || mon < 1 || mon > 12 || year < 1900 ||
	    year > 2200 || h < 0 || h > 23 || m < 0 || m > 59 || s < 0 || s >= 61)
		return false;
	tm.tm_mday = day;
	tm.tm_mon = mon - 1;
	tm.tm_year = year - 1900;
	tm.tm_hour = h;
	tm.tm_min = m;
	*ns = (int64_t)timegm(&tm) * 1000000000 + (int64_t)llround(s * 1e9);
	return true;
}

#define BAD(...)                                             \
	do {                                                 \
		snprintf(msg, size, "line %u: ", c.line);    \
		snprintf(msg + strlen(msg), size - strlen(msg), __VA_ARGS__); \
		goto out_bad;                                \
	} while (0)

int sv_ct_parse(struct sv_ct_data *out, const char *cfg, size_t cfg_len, const uint8_t *dat, size_t dat_len,
		char *msg, size_t size)
{
	struct cursor c = { cfg, cfg + cfg_len, 0 };
	struct sv_ct_record *r = &out->r;
	char line[512], *f[16];
	unsigned total, nr, na, nd;
	double x;

	memset(out, 0, sizeof(*out));
	if (!next_line(&c, line, sizeof(line)) || split(line, f, 16) < 2)
		BAD("no station line");
	snprintf(r->station, sizeof(r->station), "%s", f[0]);
	snprintf(r->device, sizeof(r->device), "%s", f[1]);
	if (!next_line(&c, line, sizeof(line)) || split(line, f, 16) != 3 || sscanf(f[0], "%u", &total) != 1 ||
	    sscanf(f[1], "%uA", &na) != 1 || sscanf(f[2], "%uD", &nd) != 1 || na + nd != total ||
	    na > SV_CT_MAX_ANALOG || nd > SV_CT_MAX_DIGITAL)
		BAD("channel counts TT,##A,##D missing, inconsistent or over %d/%d", SV_CT_MAX_ANALOG, SV_CT_MAX_DIGITAL);
	r->nan = na;
	r->ndig = nd;
	for (unsigned i = 0; i < na; i++) {
		struct sv_ct_analog *a = &r->an[i];

		if (!next_line(&c, line, sizeof(line)) || split(line, f, 16) < 13 || !num(f[5], &a->a) ||
		    !num(f[6], &a->b) || !num(f[8], &a->min) || !num(f[9], &a->max) || !num(f[10], &a->primary) ||
		    !num(f[11], &a->secondary))
			BAD("analog channel %u: not An,ch_id,ph,ccbm,uu,a,b,skew,min,max,primary,secondary,PS", i + 1);
		snprintf(a->id, sizeof(a->id), "%s", f[1]);
		snprintf(a->ph, sizeof(a->ph), "%s", f[2]);
		snprintf(a->ccbm, sizeof(a->ccbm), "%s", f[3]);
		snprintf(a->uu, sizeof(a->uu), "%s", f[4]);
	}
	for (unsigned i = 0; i < nd; i++) {
		if (!next_line(&c, line, sizeof(line)) || split(line, f, 16) < 2)
			BAD("status channel %u: not Dn,ch_id,ph,ccbm,y", i + 1);
		snprintf(r->dig[i].id, sizeof(r->dig[i].id), "%s", f[1]);
	}
	if (!next_line(&c, line, sizeof(line)) || !num(line, &r->lf))
		BAD("no line frequency");
	if (!next_line(&c, line, sizeof(line)) || sscanf(line, "%u", &nr) != 1 || nr != 1)
		BAD("nrates: svkit reads records of one sampling rate");
	if (!next_line(&c, line, sizeof(line)) || split(line, f, 16) != 2 || !num(f[0], &r->rate) || r->rate <= 0 ||
	    !num(f[1], &x) || x < 0 || x > 1e8)
		BAD("no samp,endsamp");
	r->nsamples = (uint32_t)x;
	if (!next_line(&c, line, sizeof(line)) || split(line, f, 16) != 2 || !parse_date(f[0], f[1], &r->start_utc_ns))
		BAD("first sample time is not dd/mm/yyyy,hh:mm:ss.ssssss");
	if (!next_line(&c, line, sizeof(line)) || split(line, f, 16) != 2 ||
	    !parse_date(f[0], f[1], &r->trigger_utc_ns))
		BAD("trigger time is not dd/mm/yyyy,hh:mm:ss.ssssss");
	if (!next_line(&c, line, sizeof(line)))
		BAD("no file type");
	for (unsigned k = 0;; k++) {
		if (!sv_ct_format_names[k])
			BAD("file type %s: svkit reads ASCII, BINARY32, FLOAT32", line);
		if (!strcasecmp(line, sv_ct_format_names[k])) {
			r->format = (uint8_t)k;
			break;
		}
	}
	{
		/* no more rows than the .dat can hold, whatever the .cfg announces */
		size_t fit = r->format == SV_CT_ASCII ? dat_len / 4 + 1 : dat_len / sv_ct_row_size(r);
		size_t rows = r->nsamples < fit ? r->nsamples : fit;

		out->t_s = calloc(rows ? rows : 1, sizeof(double));
		out->v = calloc((rows ? rows : 1) * (na ? na : 1), sizeof(double));
		out->d = calloc((rows ? rows : 1) * (nd ? nd : 1), 1);
		if (!out->t_s || !out->v || !out->d) {
			snprintf(msg, size, "out of memory for %zu rows", rows);
			sv_ct_data_free(out);
			return -ENOMEM;
		}
		if (rows < r->nsamples)
			r->nsamples = (uint32_t)rows; /* a short .dat: the rows it has */
	}
	if (r->format == SV_CT_ASCII) {
		const char *db = dat ? (const char *)dat : ""; /* no offset on a NULL (an empty .dat): UB */
		struct cursor d = { db, db + (dat ? dat_len : 0), 0 };
		char row[8192], *fl[2 + SV_CT_MAX_ANALOG + SV_CT_MAX_DIGITAL];

		while (out->n < r->nsamples && next_line(&d, row, sizeof(row))) {
			unsigned nf = split(row, fl, 2 + na + nd);

			if (nf != 2 + na + nd) {
				snprintf(msg, size, "data line %u: %u fields, %u expected", d.line, nf, 2 + na + nd);
				goto out_bad_nomsg;
			}
			for (unsigned i = 0; i < na; i++)
				out->v[(size_t)out->n * na + i] = num(fl[2 + i], &x) ? r->an[i].a * x + r->an[i].b : NAN;
			for (unsigned i = 0; i < nd; i++)
				out->d[(size_t)out->n * nd + i] = fl[2 + na + i][0] == '1';
			out->t_s[out->n] = out->n / r->rate;
			out->n++;
		}
	} else {
		unsigned rs = sv_ct_row_size(r);

		for (size_t off = 0; out->n < r->nsamples && off + rs <= dat_len; off += rs) {
			const uint8_t *p = dat + off + 8;

			for (unsigned i = 0; i < na; i++, p += 4) {
				uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
				double v;

				if (r->format == SV_CT_FLOAT32) {
					float fv;

					memcpy(&fv, &w, 4);
					v = isnan(fv) ? NAN : r->an[i].a * fv + r->an[i].b;
				} else {
					v = (int32_t)w == SV_CT_MISSING_B32 ? NAN : r->an[i].a * (int32_t)w + r->an[i].b;
				}
				out->v[(size_t)out->n * na + i] = v;
			}
			for (unsigned i = 0; i < nd; i++)
				out->d[(size_t)out->n * nd + i] = (p[(i / 16) * 2 + (i % 16) / 8] >> (i % 8)) & 1;
			out->t_s[out->n] = out->n / r->rate;
			out->n++;
		}
	}
	return 0;
out_bad:
out_bad_nomsg:
	sv_ct_data_free(out);
	return -EBADMSG;
}

void sv_ct_data_free(struct sv_ct_data *d)
{
	free(d->t_s);
	free(d->v);
	free(d->d);
	d->t_s = d->v = NULL;
	d->d = NULL;
}

static int slurp(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	int err = 0;

	if (!f)
		return -errno;
	if (fstat(fileno(f), &st) || st.st_size > (256 << 20)) {
		err = errno ? -errno : -EFBIG;
		goto out;
	}
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf) {
		err = -ENOMEM;
		goto out;
	}
	*len = fread(*buf, 1, (size_t)st.st_size, f);
	(*buf)[*len] = '\0';
out:
	fclose(f);
	return err;
}

int sv_ct_read(struct sv_ct_data *out, const char *path, char *msg, size_t size)
{
	size_t plen = strlen(path), clen = 0, dlen = 0;
	uint8_t *cfg = NULL, *dat = NULL;
	char other[4096];
	int err;

	msg[0] = '\0';
	if (plen > 4 && !strcasecmp(path + plen - 4, ".cff")) {
		const char *c, *d, *nl;

		err = slurp(path, &cfg, &clen);
		if (err)
			return err;
		c = strstr((const char *)cfg, "--- file type: CFG ---");
		d = strstr((const char *)cfg, "--- file type: DAT");
		nl = d ? memchr(d, '\n', clen - (size_t)(d - (const char *)cfg)) : NULL;
		if (!c || !d || !nl || d < c) {
			snprintf(msg, size, "not a .cff: no CFG and DAT sections");
			free(cfg);
			return -EBADMSG;
		}
		c = strchr(c, '\n');
		c = c ? c + 1 : d;
		{
			const char *cfg_end = strstr(c, "--- file type:");

			err = sv_ct_parse(out, c, (size_t)((cfg_end ? cfg_end : d) - c), (const uint8_t *)nl + 1,
					  clen - (size_t)(nl + 1 - (const char *)cfg), msg, size);
		}
		free(cfg);
		return err;
	}
	if (plen < 4 || plen >= sizeof(other) || strcasecmp(path + plen - 4, ".cfg")) {
		snprintf(msg, size, "a COMTRADE record is named by its .cfg or .cff");
		return -EINVAL;
	}
	err = slurp(path, &cfg, &clen);
	if (err)
		return err;
	snprintf(other, sizeof(other), "%.*s.dat", (int)(plen - 4), path);
	err = slurp(other, &dat, &dlen);
	if (err) {
		snprintf(msg, size, "%s: %s", other, strerror(-err));
		free(cfg);
		return err;
	}
	err = sv_ct_parse(out, (const char *)cfg, clen, dat, dlen, msg, size);
	free(cfg);
	free(dat);
	return err;
}
