// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for what sv_metrics parses or escapes from outside: the --metrics ADDR:PORT argument, an
 * HTTP Accept header (the HTTP parsing itself is libmicrohttpd's), and label values made of any octets (svIDs
 * from the wire) rendered in both formats. Properties: a parsed address has a family and length that fit; the
 * exposition of any svID is valid UTF-8, every sample line is `NAME{svid="..."} 1` whose value is closed by the
 * first unescaped quote with only \\, \" and \n escapes and no raw newline inside, and decoding the escapes gives
 * back the octets (read as ISO 8859-1): distinct svIDs give distinct series.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sv_metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct row {
	const uint8_t *v;
	size_t len;
};

static unsigned one(void *ctx)
{
	(void)ctx;
	return 1;
}

static int labels(void *ctx, unsigned r, const char **val, size_t *len, char *buf, size_t size)
{
	const struct row *x = ctx;

	(void)r;
	(void)buf;
	(void)size;
	val[0] = (const char *)x->v;
	len[0] = x->len;
	return 0;
}

static void values(void *ctx, unsigned r, uint64_t *v)
{
	(void)ctx;
	(void)r;
	v[0] = 1;
}

/* Valid UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
static int utf8_ok(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		uint8_t c = p[i];
		size_t k;
		uint32_t cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			k = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			k = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			k = 3, cp = c & 0x07;
		else
			return 0;
		for (size_t j = 1; j <= k; j++) {
			if (i + j >= n || (p[i + j] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (p[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += k + 1;
	}
	return 1;
}

/* Finds `prefix` in the text, reads the escaped value up to the closing quote, checks and decodes it. */
static void check_sample(const char *t, size_t n, const char *prefix, const uint8_t *want, size_t want_len)
{
	const char *p = memmem(t, n, prefix, strlen(prefix)), *end = t + n;
	size_t got = 0;

	if (!p)
		abort();
	for (p += strlen(prefix); p < end && *p != '"'; p++) {
		uint32_t cp;

		if (*p == '\n')
			abort(); /* a raw newline inside a label value */
		if (*p == '\\') {
			p++;
			if (p >= end || (*p != '\\' && *p != '"' && *p != 'n'))
				abort();
			cp = *p == 'n' ? '\n' : (uint8_t)*p;
		} else if ((uint8_t)*p >= 0x80) {
			/* U+0080..U+00FF only: two octets C2/C3 xx */
			if ((uint8_t)p[0] != 0xc2 && (uint8_t)p[0] != 0xc3)
				abort();
			cp = ((uint32_t)((uint8_t)p[0] & 0x1f) << 6) | ((uint8_t)p[1] & 0x3f);
			p++;
		} else {
			cp = (uint8_t)*p;
		}
		if (got >= want_len || cp != want[got])
			abort(); /* decoding does not give the octets back */
		got++;
	}
	if (p + 5 > end || memcmp(p, "\"} 1\n", 5) || got != (want_len < SV_METRICS_LABEL_MAX ? want_len : SV_METRICS_LABEL_MAX))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct sv_metrics_table_ops ops = { one, labels, values };
	static const char *const names[] = { "svid" };
	char *s;

	if (!size)
		return 0;
	s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 3) {
	case 0: {
		struct sockaddr_storage ss;
		socklen_t len = 0;
		const char *why = NULL;

		if (!sv_metrics_addr_parse(s, &ss, &len, &why)) {
			if (!((ss.ss_family == AF_INET && len == sizeof(struct sockaddr_in)) ||
			      (ss.ss_family == AF_INET6 && len == sizeof(struct sockaddr_in6))))
				abort();
		} else if (!why) {
			abort();
		}
		break;
	}
	case 1: {
		enum sv_metrics_format f = sv_metrics_format_for_accept(s);

		if (f != SV_METRICS_TEXT_004 && f != SV_METRICS_OPENMETRICS)
			abort();
		break;
	}
	default: {
		struct row r = { data + 1, size - 1 > 512 ? 512 : size - 1 };
		struct sv_metrics *m;
		struct sv_metrics_family *f;
		struct sv_metrics_table *t;
		struct sv_metrics_text txt = { 0 };

		if (sv_metrics_create(&m, 0))
			break;
		f = sv_metrics_family(m, "svkit_f", SV_METRIC_COUNTER, NULL, "f", 1, names);
		t = sv_metrics_table_new(m, 1, names, 4, &ops, &r);
		if (!f || !t || sv_metrics_table_column(t, f, NULL) < 0)
			abort();
		for (int fmt = 0; fmt < 2; fmt++) {
			if (sv_metrics_render(m, (enum sv_metrics_format)fmt, &txt, NULL))
				abort();
			if (!utf8_ok((const uint8_t *)txt.p, txt.len))
				abort();
			check_sample(txt.p, txt.len, "svkit_f_total{svid=\"", r.v, r.len);
		}
		sv_metrics_text_free(&txt);
		sv_metrics_destroy(m);
		break;
	}
	}
	free(s);
	return 0;
}
