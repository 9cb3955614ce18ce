// SPDX-License-Identifier: Apache-2.0
/*
 * Codec unit tests: encode->decode round trips over every optional-field combination, 1 to 8 ASDUs and long
 * BER lengths; one hand-built frame per named error with the offset it must report; the template fast path.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "sv_codec.h"
#include "sv_dataset.h"

/* ---- a tiny BER frame builder, independent of the encoder under test ---- */

struct buf {
	uint8_t d[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	assert_true(b->n + n <= sizeof(b->d));
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void put8(struct buf *b, uint8_t x)
{
	put(b, &x, 1);
}

static void put_len(struct buf *b, size_t n)
{
	if (n < 0x80) {
		put8(b, (uint8_t)n);
	} else if (n < 0x100) {
		put8(b, 0x81);
		put8(b, (uint8_t)n);
	} else {
		put8(b, 0x82);
		put8(b, (uint8_t)(n >> 8));
		put8(b, (uint8_t)n);
	}
}

static void tlv(struct buf *b, uint8_t tag, const void *p, size_t n)
{
	put8(b, tag);
	put_len(b, n);
	put(b, p, n);
}

/* ASDU knobs: NULL/negative means "default" or "absent" as noted. */
struct asdu_spec {
	const char *svid;     /* default "MU01" */
	const char *datset;   /* absent when NULL */
	int smpcnt_len;	      /* default 2 */
	int confrev_len;      /* default 4 */
	int refrtm_len;	      /* absent when 0 */
	int smpsynch_len;     /* default 1; -1 absent */
	int smprate_len;      /* absent when 0 */
	int seqdata_len;      /* default 64; -1 absent */
	int smpmod_len;	      /* absent when 0 */
	int gmid_len;	      /* absent when 0 */
	bool no_svid;
	bool no_smpcnt;
	bool no_confrev;
	bool swap_cnt_rev;    /* confRev before smpCnt */
	const uint8_t *extra; /* raw octets appended inside the ASDU */
	size_t extra_len;
	uint16_t smpcnt;
	uint8_t smpsynch;
};

static void build_asdu(struct buf *out, const struct asdu_spec *s)
{
	static const uint8_t zeros[256];
	uint8_t cnt[4] = { 0 }, rev[4] = { 0, 0, 0, 1 };
	struct buf a = { .n = 0 };
	int cl = s->smpcnt_len ? s->smpcnt_len : 2;
	int rl = s->confrev_len ? s->confrev_len : 4;

	cnt[cl - 2] = (uint8_t)(s->smpcnt >> 8);
	cnt[cl - 1] = (uint8_t)s->smpcnt;
	if (!s->no_svid)
		tlv(&a, 0x80, s->svid ? s->svid : "MU01", strlen(s->svid ? s->svid : "MU01"));
	if (s->datset)
		tlv(&a, 0x81, s->datset, strlen(s->datset));
	if (s->swap_cnt_rev)
		tlv(&a, 0x83, rev, (size_t)rl);
	if (!s->no_smpcnt)
		tlv(&a, 0x82, cnt, (size_t)cl);
	if (!s->no_confrev && !s->swap_cnt_rev)
		tlv(&a, 0x83, rev + 4 - rl, (size_t)rl);
	if (s->refrtm_len)
		tlv(&a, 0x84, zeros, (size_t)s->refrtm_len);
	if (s->smpsynch_len >= 0) {
		uint8_t ss[2] = { 0, s->smpsynch ? s->smpsynch : 2 };
		int sl = s->smpsynch_len ? s->smpsynch_len : 1;

		tlv(&a, 0x85, ss + 2 - sl, (size_t)sl);
	}
	if (s->smprate_len)
		tlv(&a, 0x86, "\x00\x50\x00", (size_t)s->smprate_len);
	if (s->seqdata_len >= 0)
		tlv(&a, 0x87, zeros, s->seqdata_len ? (size_t)s->seqdata_len : 64);
	if (s->smpmod_len)
		tlv(&a, 0x88, "\x00\x01\x00", (size_t)s->smpmod_len);
	if (s->gmid_len)
		tlv(&a, 0x89, zeros, (size_t)s->gmid_len);
	if (s->extra)
		put(&a, s->extra, s->extra_len);
	tlv(out, 0x30, a.d, a.n);
}

struct frame_spec {
	int nasdu;	     /* ASDUs built; default 1 */
	int noasdu;	     /* value written; default nasdu */
	int noasdu_len;	     /* default 1 */
	const uint8_t *security;
	size_t security_len;
	bool no_noasdu;
	bool no_seqasdu;
	int length_delta;    /* added to the true SV Length */
	int length_abs;	     /* SV Length written as is when non-zero */
	bool untagged;
	const uint8_t *trailer;
	size_t trailer_len;
	struct asdu_spec asdu;
};

/* Builds the frame; returns offsets of interesting places through @marks (may be NULL). */
struct marks {
	size_t sv;    /* APPID */
	size_t apdu;  /* 0x60 */
	size_t seq;   /* 0xA2 */
	size_t asdu0; /* first 0x30 */
};

static void build_frame(struct buf *f, const struct frame_spec *s, struct marks *m)
{
	struct buf seq = { .n = 0 }, pdu = { .n = 0 }, apdu = { .n = 0 };
	int nasdu = s->nasdu ? s->nasdu : 1;
	int noasdu = s->noasdu ? s->noasdu : nasdu;
	size_t hdr, seq_rel;

	for (int i = 0; i < nasdu; i++) {
		struct asdu_spec a = s->asdu;

		a.smpcnt = (uint16_t)(a.smpcnt + i);
		build_asdu(&seq, &a);
	}
	if (!s->no_noasdu) {
		uint8_t n[3] = { (uint8_t)(noasdu >> 16), (uint8_t)(noasdu >> 8), (uint8_t)noasdu };
		int nl = s->noasdu_len ? s->noasdu_len : 1;

		if (nl > 3)
			tlv(&pdu, 0x80, "\x00\x00\x00\x01", (size_t)nl);
		else
			tlv(&pdu, 0x80, n + 3 - nl, (size_t)nl);
	}
	if (s->security)
		put(&pdu, s->security, s->security_len);
	seq_rel = pdu.n;
	if (!s->no_seqasdu)
		tlv(&pdu, 0xA2, seq.d, seq.n);
	tlv(&apdu, 0x60, pdu.d, pdu.n);

	f->n = 0;
	put(f, "\x01\x0c\xcd\x04\x00\x01\x02\x00\x00\x00\x00\x01", 12);
	if (!s->untagged)
		put(f, "\x81\x00\x80\x05", 4); /* PCP 4, VID 5 */
	put(f, "\x88\xba", 2);
	hdr = f->n;
	{
		size_t len = s->length_abs ? (size_t)s->length_abs : 8 + apdu.n + (size_t)s->length_delta;
		uint8_t h[8] = { 0x40, 0x00, (uint8_t)(len >> 8), (uint8_t)len, 0, 0, 0, 0 };

		put(f, h, 8);
	}
	put(f, apdu.d, apdu.n);
	if (s->trailer)
		put(f, s->trailer, s->trailer_len);
	if (m) {
		m->sv = hdr;
		m->apdu = hdr + 8;
		/* 0x60 + its length octets */
		m->seq = m->apdu + 1 + (pdu.n < 0x80 ? 1 : pdu.n < 0x100 ? 2 : 3) + seq_rel;
		m->asdu0 = m->seq + 1 + (seq.n < 0x80 ? 1 : seq.n < 0x100 ? 2 : 3);
	}
}

static struct sv_view view; /* large: keep off the stack */

/* ---- decode of the baseline and of each option ---- */

static void test_baseline(void **state)
{
	struct frame_spec s = { .asdu = { .smpcnt = 1234, .smprate_len = 2 } };
	struct sv_codec_error e = { 0 };
	struct buf f;
	struct marks m;

	(void)state;
	build_frame(&f, &s, &m);
	assert_int_equal(sv_codec_decode(f.d, f.n, &view, &e), 0);
	assert_true(view.vlan);
	assert_int_equal(view.vlan_pcp, 4);
	assert_int_equal(view.vlan_id, 5);
	assert_int_equal(view.appid, 0x4000);
	assert_int_equal(view.length, f.n - m.sv);
	assert_int_equal(view.noASDU, 1);
	assert_null(view.security);
	assert_false(view.simulated);
	assert_int_equal(view.asdu[0].svID_len, 4);
	assert_memory_equal(view.asdu[0].svID, "MU01", 4);
	assert_int_equal(view.asdu[0].smpCnt, 1234);
	assert_int_equal(view.asdu[0].confRev, 1);
	assert_int_equal(view.asdu[0].smpSynch, 2);
	assert_int_equal(view.asdu[0].present, SV_HAS_SMPRATE);
	assert_int_equal(view.asdu[0].smpRate, 80);
	assert_int_equal(view.asdu[0].seqData_len, 64);
	assert_int_equal(sv_asdu_nchannels(&view.asdu[0]), 8);
	assert_int_equal(view.asdu[0].offset, m.asdu0);
	assert_int_equal(view.trailer_len, 0);
	assert_int_equal(view.redundancy, SV_RED_NONE);
}

static void test_unsigned_fields(void **state)
{
	struct frame_spec s = { .asdu = { .smpcnt = 0xFFFF, .smpsynch = 0xC8 } };
	struct buf f;

	(void)state;
	build_frame(&f, &s, NULL);
	assert_int_equal(sv_codec_decode(f.d, f.n, &view, NULL), 0);
	assert_int_equal(view.asdu[0].smpCnt, 65535);
	assert_int_equal(view.asdu[0].smpSynch, 200);
}

static void test_never_writes_input(void **state)
{
	struct frame_spec s = { .nasdu = 3, .asdu = { .datset = "LD0/LLN0$PhsMeas1", .refrtm_len = 8 } };
	struct buf f, copy;

	(void)state;
	build_frame(&f, &s, NULL);
	copy = f;
	assert_int_equal(sv_codec_decode(f.d, f.n, &view, NULL), 0);
	assert_memory_equal(f.d, copy.d, f.n);
	/* the view points into the input */
	assert_ptr_equal(view.frame, f.d);
	assert_true(view.asdu[2].svID > f.d && view.asdu[2].svID < f.d + f.n);
}

/* ---- one row per error name ---- */

static const uint8_t ext_8a[] = { 0x8A, 0x01, 0x01 };
static const uint8_t ext_dup_svid[] = { 0x80, 0x01, 'X' };
static const uint8_t sec_prim[] = { 0x81, 0x04, 0xde, 0xad, 0xbe, 0xef };

enum where { AT_FIXED, AT_SV, AT_APDU, AT_SEQ, AT_ASDU0, AT_END };

struct err_case {
	const char *name;
	struct frame_spec spec;
	int code;
	enum where where;
	int delta; /* offset = base(where) + delta */
	void (*mutate)(struct buf *f, const struct marks *m);
	size_t truncate_to; /* 0: whole frame */
};

static void mut_apdu_tag(struct buf *f, const struct marks *m)
{
	f->d[m->apdu] = 0x61;
}

static void mut_indefinite(struct buf *f, const struct marks *m)
{
	f->d[m->apdu + 1] = 0x80;
}

static void mut_ber5(struct buf *f, const struct marks *m)
{
	/* first ASDU's svID length octet -> 0x85 (five length octets) */
	f->d[m->asdu0 + 3] = 0x85;
}

static void mut_svid_overrun(struct buf *f, const struct marks *m)
{
	f->d[m->asdu0 + 3] = 0x7f;
}

static void mut_not_sv(struct buf *f, const struct marks *m)
{
	(void)m;
	f->d[16] = 0x08;
	f->d[17] = 0x00;
}

static void mut_hsr(struct buf *f, const struct marks *m)
{
	(void)m;
	f->d[16] = 0x89;
	f->d[17] = 0x2f;
}

static void mut_asdu_tag(struct buf *f, const struct marks *m)
{
	f->d[m->asdu0] = 0x31;
}

static void mut_svid_charset(struct buf *f, const struct marks *m)
{
	f->d[m->asdu0 + 5] = 0x7f;
}

static void mut_vlan_et(struct buf *f, const struct marks *m)
{
	(void)m;
	f->d[12] = 0x81;
	f->d[13] = 0x00;
}

static char long_id[140];

static const struct err_case err_cases[] = {
	{ "eth_truncated", { 0 }, SV_E_ETH_TRUNCATED, AT_FIXED, 13, NULL, 13 },
	{ "vlan_truncated", { 0 }, SV_E_VLAN_TRUNCATED, AT_FIXED, 16, mut_vlan_et, 16 },
	{ "hsr_truncated", { 0 }, SV_E_HSR_TRUNCATED, AT_FIXED, 20, mut_hsr, 20 },
	{ "not_sv", { 0 }, SV_E_NOT_SV, AT_FIXED, 16, mut_not_sv, 0 },
	{ "header_truncated", { 0 }, SV_E_HEADER_TRUNCATED, AT_SV, 0, NULL, 22 },
	{ "length_too_small", { .length_abs = 9 }, SV_E_LENGTH_TOO_SMALL, AT_SV, 2, NULL, 0 },
	{ "length_exceeds_frame", { .length_delta = 20 }, SV_E_LENGTH_EXCEEDS_FRAME, AT_SV, 2, NULL, 0 },
	{ "apdu_tag", { 0 }, SV_E_APDU_TAG, AT_APDU, 0, mut_apdu_tag, 0 },
	{ "ber_length indefinite", { 0 }, SV_E_BER_LENGTH, AT_APDU, 1, mut_indefinite, 0 },
	{ "ber_length 5 octets", { 0 }, SV_E_BER_LENGTH, AT_ASDU0, 3, mut_ber5, 0 },
	{ "overrun", { 0 }, SV_E_OVERRUN, AT_ASDU0, 3, mut_svid_overrun, 0 },
	{ "apdu_length (Length 10 short)", { .length_delta = -10 }, SV_E_APDU_LENGTH, AT_APDU, 1, NULL, 0 },
	{ "noasdu_missing", { .no_noasdu = true }, SV_E_NOASDU_MISSING, AT_APDU, 2, NULL, 0 },
	{ "noasdu_width", { .noasdu_len = 4 }, SV_E_NOASDU_WIDTH, AT_APDU, 2, NULL, 0 },
	{ "noasdu_range zero", { .noasdu = -1 }, SV_E_NOASDU_RANGE, AT_APDU, 4, NULL, 0 },
	{ "seqasdu_missing", { .no_seqasdu = true, .security = sec_prim, .security_len = 6 },
	  SV_E_SEQASDU_MISSING, AT_SEQ, 0, NULL, 0 },
	{ "apdu_unknown_field (2 securities)", { .security = (const uint8_t *)"\x81\x01\x00\x81\x01\x00",
						  .security_len = 6 }, SV_E_APDU_UNKNOWN_FIELD, AT_APDU, 8, NULL, 0 },
	{ "asdu_tag", { 0 }, SV_E_ASDU_TAG, AT_ASDU0, 0, mut_asdu_tag, 0 },
	{ "asdu_count (noASDU 2, 1 ASDU)", { .noasdu = 2 }, SV_E_ASDU_COUNT, AT_END, 0, NULL, 0 },
	{ "asdu_count (noASDU 1, 2 ASDUs)", { .nasdu = 2, .noasdu = 1 }, SV_E_ASDU_COUNT, AT_FIXED, -1, NULL, 0 },
	{ "svid_missing", { .asdu = { .no_svid = true } }, SV_E_SVID_MISSING, AT_ASDU0, 2, NULL, 0 },
	{ "svid_length empty", { .asdu = { .svid = "" } }, SV_E_SVID_LENGTH, AT_ASDU0, 2, NULL, 0 },
	{ "svid_length 130", { .asdu = { .svid = long_id } }, SV_E_SVID_LENGTH, AT_ASDU0, 3, NULL, 0 },
	{ "svid_charset", { 0 }, SV_E_SVID_CHARSET, AT_ASDU0, 4, mut_svid_charset, 0 },
	{ "datset_charset", { .asdu = { .datset = "LD0\tX" } }, SV_E_DATSET_CHARSET, AT_ASDU0, 10, NULL, 0 },
	{ "smpcnt_missing", { .asdu = { .no_smpcnt = true } }, SV_E_SMPCNT_MISSING, AT_ASDU0, 8, NULL, 0 },
	{ "smpcnt_width 3", { .asdu = { .smpcnt_len = 3 } }, SV_E_SMPCNT_WIDTH, AT_ASDU0, 8, NULL, 0 },
	{ "confrev_missing", { .asdu = { .no_confrev = true } }, SV_E_CONFREV_MISSING, AT_ASDU0, 12, NULL, 0 },
	{ "confrev_width 3", { .asdu = { .confrev_len = 3 } }, SV_E_CONFREV_WIDTH, AT_ASDU0, 12, NULL, 0 },
	{ "refrtm_width 7", { .asdu = { .refrtm_len = 7 } }, SV_E_REFRTM_WIDTH, AT_ASDU0, 18, NULL, 0 },
	{ "smpsynch_missing", { .asdu = { .smpsynch_len = -1 } }, SV_E_SMPSYNCH_MISSING, AT_ASDU0, 18, NULL, 0 },
	{ "smpsynch_width 2", { .asdu = { .smpsynch_len = 2 } }, SV_E_SMPSYNCH_WIDTH, AT_ASDU0, 18, NULL, 0 },
	{ "smprate_width 3", { .asdu = { .smprate_len = 3 } }, SV_E_SMPRATE_WIDTH, AT_ASDU0, 21, NULL, 0 },
	{ "seqdata_missing", { .asdu = { .seqdata_len = -1 } }, SV_E_SEQDATA_MISSING, AT_END, 0, NULL, 0 },
	{ "smpmod_width 1", { .asdu = { .smpmod_len = 1 } }, SV_E_SMPMOD_WIDTH, AT_ASDU0, 87, NULL, 0 },
	{ "gmidentity_width 6", { .asdu = { .gmid_len = 6 } }, SV_E_GMID_WIDTH, AT_ASDU0, 87, NULL, 0 },
	{ "field_order (confRev first)", { .asdu = { .swap_cnt_rev = true } }, SV_E_FIELD_ORDER, AT_ASDU0, 8, NULL, 0 },
	{ "field_order (svID again)", { .asdu = { .extra = ext_dup_svid, .extra_len = 3 } }, SV_E_FIELD_ORDER,
	  AT_ASDU0, 87, NULL, 0 },
	{ "asdu_unknown_field [10]", { .asdu = { .extra = ext_8a, .extra_len = 3 } }, SV_E_ASDU_UNKNOWN_FIELD,
	  AT_ASDU0, 87, NULL, 0 },
};

static void test_errors(void **state)
{
	(void)state;
	memset(long_id, 'A', 130);
	for (size_t i = 0; i < sizeof(err_cases) / sizeof(err_cases[0]); i++) {
		const struct err_case *c = &err_cases[i];
		struct frame_spec s = c->spec;
		struct sv_codec_error e = { .code = -1, .offset = 0xffffffff };
		struct buf f;
		struct marks m;
		size_t base = 0, len;
		int r;

		if (s.noasdu == -1)
			s.noasdu = 0x100; /* written as one octet 0x00 below */
		build_frame(&f, &s, &m);
		if (c->spec.noasdu == -1)
			f.d[m.apdu + 4] = 0; /* noASDU value octet -> 0 */
		if (c->mutate)
			c->mutate(&f, &m);
		len = c->truncate_to ? c->truncate_to : f.n;
		switch (c->where) {
		case AT_FIXED:
			base = 0;
			break;
		case AT_SV:
			base = m.sv;
			break;
		case AT_APDU:
			base = m.apdu;
			break;
		case AT_SEQ:
			base = m.seq;
			break;
		case AT_ASDU0:
			base = m.asdu0;
			break;
		case AT_END:
			base = f.n;
			break;
		}
		r = sv_codec_decode(f.d, len, &view, &e);
		if (r != -EBADMSG || e.code != c->code)
			fail_msg("case '%s': got %d %s, want %s", c->name, r, sv_codec_strerror(e.code),
				 sv_codec_strerror(c->code));
		/* AT_FIXED with delta -1: "some offset" (checked only to lie inside the frame) */
		if (c->where == AT_FIXED && c->delta == -1) {
			if (e.offset >= len)
				fail_msg("case '%s': offset %u outside frame", c->name, e.offset);
			continue;
		}
		if (e.offset != base + (size_t)c->delta)
			fail_msg("case '%s': offset %u, want %zu", c->name, e.offset, base + (size_t)c->delta);
	}
}

static void test_every_error_named(void **state)
{
	const char *src = getenv("SVKIT_SRC");

	(void)state;
	if (src) {
		/* docs/errors.md is the users' list: every name must be in it */
		static char doc[16384];
		char path[512];
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), "%s/docs/errors.md", src);
		f = fopen(path, "r");
		assert_non_null(f);
		n = fread(doc, 1, sizeof(doc) - 1, f);
		doc[n] = 0;
		fclose(f);
		for (int e = 1; e < SV_E__COUNT; e++) {
			char key[64];

			snprintf(key, sizeof(key), "| `%s` |", sv_codec_strerror(e));
			if (!strstr(doc, key))
				fail_msg("docs/errors.md lacks %s", key);
		}
	}
	assert_string_equal(sv_codec_strerror(SV_OK), "ok");
	assert_string_equal(sv_codec_strerror(-1), "unknown");
	assert_string_equal(sv_codec_strerror(SV_E__COUNT), "unknown");
	for (int e = 1; e < SV_E__COUNT; e++) {
		assert_non_null(sv_codec_strerror(e));
		assert_string_not_equal(sv_codec_strerror(e), "unknown");
		for (int f = 1; f < e; f++)
			assert_string_not_equal(sv_codec_strerror(e), sv_codec_strerror(f));
	}
}

/* ---- encode -> decode round trips over shapes ---- */

static const uint8_t gmid[8] = { 0x00, 0x19, 0xfb, 0xff, 0xfe, 0x00, 0x11, 0x22 };
static const uint8_t refr[8] = { 0x66, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x0a };
static uint8_t seqdata[SV_MAX_ASDU][64];

static void fill_view(struct sv_view *v, unsigned nasdu, unsigned opts, bool vlan, unsigned svid_len,
		      uint8_t sec_tag)
{
	static const uint8_t dst[6] = { 0x01, 0x0c, 0xcd, 0x04, 0x01, 0xff }, src[6] = { 2, 0, 0, 0, 0, 9 };
	static char idbuf[SV_MAX_ID_LEN + 1];
	static const uint8_t sec[3] = { 1, 2, 3 };

	memset(v, 0, sizeof(*v));
	memset(idbuf, 'x', sizeof(idbuf) - 1);
	memcpy(idbuf, "MU", 2);
	v->dst = dst;
	v->src = src;
	v->vlan = vlan;
	v->vlan_pcp = 4;
	v->vlan_id = 0xabc;
	v->appid = 0x4fff;
	v->simulated = opts & 32;
	v->noASDU = (uint16_t)nasdu;
	if (sec_tag) {
		v->security_tag = sec_tag;
		v->security = sec;
		v->security_len = 3;
	}
	for (unsigned i = 0; i < nasdu; i++) {
		struct sv_asdu *a = &v->asdu[i];

		for (unsigned k = 0; k < 64; k++)
			seqdata[i][k] = (uint8_t)(i * 7 + k);
		a->svID = (const uint8_t *)idbuf;
		a->svID_len = (uint16_t)svid_len;
		a->smpCnt = (uint16_t)(3990 + i);
		a->confRev = 0x80000001u;
		a->smpSynch = (uint8_t)(i == 1 ? 200 : 2);
		a->seqData = seqdata[i];
		a->seqData_len = 64;
		a->present = (uint8_t)(opts & 31);
		a->datSet = (const uint8_t *)"LD0/LLN0$PhsMeas1";
		a->datSet_len = 17;
		a->refrTm = refr;
		a->smpRate = 80;
		a->smpMod = 1;
		a->gmIdentity = gmid;
	}
}

static struct sv_view want;

static void compare_views(const struct sv_view *a, const struct sv_view *b)
{
	assert_memory_equal(a->dst, b->dst, 6);
	assert_memory_equal(a->src, b->src, 6);
	assert_int_equal(a->vlan, b->vlan);
	if (a->vlan) {
		assert_int_equal(a->vlan_pcp, b->vlan_pcp);
		assert_int_equal(a->vlan_id, b->vlan_id);
	}
	assert_int_equal(a->appid, b->appid);
	assert_int_equal(a->simulated, b->simulated);
	assert_int_equal(a->noASDU, b->noASDU);
	assert_int_equal(a->security_tag, b->security_tag);
	assert_int_equal(a->security_len, b->security_len);
	if (a->security_len)
		assert_memory_equal(a->security, b->security, a->security_len);
	for (unsigned i = 0; i < a->noASDU; i++) {
		const struct sv_asdu *x = &a->asdu[i], *y = &b->asdu[i];

		assert_int_equal(x->present, y->present);
		assert_int_equal(x->svID_len, y->svID_len);
		assert_memory_equal(x->svID, y->svID, x->svID_len);
		assert_int_equal(x->smpCnt, y->smpCnt);
		assert_int_equal(x->confRev, y->confRev);
		assert_int_equal(x->smpSynch, y->smpSynch);
		assert_int_equal(x->seqData_len, y->seqData_len);
		assert_memory_equal(x->seqData, y->seqData, x->seqData_len);
		if (x->present & SV_HAS_DATSET) {
			assert_int_equal(x->datSet_len, y->datSet_len);
			assert_memory_equal(x->datSet, y->datSet, x->datSet_len);
		}
		if (x->present & SV_HAS_REFRTM)
			assert_memory_equal(x->refrTm, y->refrTm, 8);
		if (x->present & SV_HAS_SMPRATE)
			assert_int_equal(x->smpRate, y->smpRate);
		if (x->present & SV_HAS_SMPMOD)
			assert_int_equal(x->smpMod, y->smpMod);
		if (x->present & SV_HAS_GMIDENTITY)
			assert_memory_equal(x->gmIdentity, y->gmIdentity, 8);
	}
}

static void roundtrip(unsigned nasdu, unsigned opts, bool vlan, unsigned svid_len, uint8_t sec_tag)
{
	static uint8_t buf[16384], buf2[16384];
	struct sv_codec_error e;
	int n, n2;

	fill_view(&want, nasdu, opts, vlan, svid_len, sec_tag);
	n = sv_codec_encode(&want, buf, sizeof(buf));
	assert_true(n >= 60);
	if (sv_codec_decode(buf, (size_t)n, &view, &e))
		fail_msg("nasdu %u opts %#x vlan %d: %s at %u", nasdu, opts, vlan, sv_codec_strerror(e.code), e.offset);
	compare_views(&want, &view);
	/* decode -> encode gives the same octets */
	n2 = sv_codec_encode(&view, buf2, sizeof(buf2));
	assert_int_equal(n, n2);
	assert_memory_equal(buf, buf2, (size_t)n);
}

static void test_roundtrip_shapes(void **state)
{
	(void)state;
	for (unsigned nasdu = 1; nasdu <= 8; nasdu++)
		for (unsigned opts = 0; opts < 64; opts++)
			roundtrip(nasdu, opts, opts & 1, 4, 0);
	/* long svID forces long-form lengths everywhere */
	roundtrip(8, 31, true, SV_MAX_ID_LEN, 0);
	roundtrip(1, 0, false, SV_MAX_ID_LEN, 0);
	roundtrip(2, 0, true, 1, 0x81);
	roundtrip(3, 31, true, 16, 0xA1);
	/* 13 ASDUs (QUT-style) and a jumbo frame of 100 */
	roundtrip(13, 0, true, 8, 0);
	roundtrip(100, 0, false, 8, 0);
}

static void test_long_lengths_on_wire(void **state)
{
	static uint8_t buf[2048];
	int n;

	(void)state;
	fill_view(&want, 8, 0, true, 16, 0);
	n = sv_codec_encode(&want, buf, sizeof(buf));
	assert_true(n > 0);
	/* savPdu and seqASDU over 255 octets: 0x82 two-octet lengths */
	assert_int_equal(buf[26], 0x60);
	assert_int_equal(buf[27], 0x82);
	assert_int_equal(sv_codec_decode(buf, (size_t)n, &view, NULL), 0);
}

static void test_encode_rejects(void **state)
{
	static uint8_t buf[2048];

	(void)state;
	fill_view(&want, 1, 0, true, 4, 0);
	assert_int_equal(sv_codec_encode(&want, buf, 40), -ENOSPC);
	want.asdu[0].svID_len = 0;
	assert_int_equal(sv_codec_encode(&want, buf, sizeof(buf)), -EINVAL);
	fill_view(&want, 1, 0, true, 4, 0);
	want.noASDU = 0;
	assert_int_equal(sv_codec_encode(&want, buf, sizeof(buf)), -EINVAL);
	fill_view(&want, 1, 0, true, 4, 0x99);
	assert_int_equal(sv_codec_encode(&want, buf, sizeof(buf)), -EINVAL);
}

/* ---- trailers: padding, PRP, HSR ---- */

static void test_prp_trailer(void **state)
{
	static uint8_t buf[2048];
	int n;

	(void)state;
	fill_view(&want, 1, 0, true, 4, 0);
	want.redundancy = SV_RED_PRP;
	want.red_lan = 0xB;
	want.red_seq = 0xBEEF;
	n = sv_codec_encode(&want, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(sv_codec_decode(buf, (size_t)n, &view, NULL), 0);
	assert_int_equal(view.trailer_len, 6);
	assert_int_equal(view.redundancy, SV_RED_PRP);
	assert_int_equal(view.red_lan, 0xB);
	assert_int_equal(view.red_seq, 0xBEEF);
	assert_int_equal(view.red_lsdu_size, n - 18);
}

static void test_hsr_tag(void **state)
{
	static uint8_t buf[2048];
	int n;

	(void)state;
	fill_view(&want, 2, 0, false, 4, 0);
	want.redundancy = SV_RED_HSR;
	want.red_lan = 1;
	want.red_seq = 77;
	n = sv_codec_encode(&want, buf, sizeof(buf));
	assert_true(n > 0);
	assert_int_equal(sv_codec_decode(buf, (size_t)n, &view, NULL), 0);
	assert_int_equal(view.redundancy, SV_RED_HSR);
	assert_int_equal(view.red_seq, 77);
	assert_int_equal(view.red_lan, 1);
	compare_views(&want, &view);
}

static void test_padding_not_pdu(void **state)
{
	struct frame_spec s = { .asdu = { .seqdata_len = 1 }, .untagged = true,
				.trailer = (const uint8_t *)"\0\0\0\0\0\0\0\0\0\0", .trailer_len = 10 };
	struct buf f;

	(void)state;
	build_frame(&f, &s, NULL);
	assert_int_equal(sv_codec_decode(f.d, f.n, &view, NULL), 0);
	assert_int_equal(view.trailer_len, 10);
	assert_int_equal(view.redundancy, SV_RED_NONE);
	assert_int_equal(view.pdu_end, f.n - 10);
}

static void test_qinq(void **state)
{
	struct frame_spec s = { 0 };
	struct buf f, g = { .n = 0 };

	(void)state;
	build_frame(&f, &s, NULL);
	put(&g, f.d, 12);
	put(&g, "\x88\xa8\x00\x64", 4);
	put(&g, f.d + 12, f.n - 12);
	assert_int_equal(sv_codec_decode(g.d, g.n, &view, NULL), 0);
	assert_true(view.vlan);
	assert_int_equal(view.vlan_id, 5);
	assert_int_equal(view.sv_offset, 22);
}

/* ---- template ---- */

static void test_template(void **state)
{
	static struct sv_template t;
	int32_t vals[8];
	uint32_t q[8];

	(void)state;
	fill_view(&want, 2, SV_HAS_REFRTM, true, 10, 0);
	assert_int_equal(sv_template_init(&t, &want), 0);
	assert_int_equal(t.nchannels, 8);
	for (int i = 0; i < 8; i++) {
		vals[i] = -1000000 * i - 7;
		q[i] = (uint32_t)i | SV_Q_DERIVED;
	}
	sv_template_set_smpcnt(&t, 0, 3999);
	sv_template_set_smpcnt(&t, 1, 0);
	sv_template_set_values(&t, 1, vals, q);
	sv_template_set_refrtm(&t, 1, 1700000000123456789LL, 0x0a);
	assert_int_equal(sv_codec_decode(t.frame, t.len, &view, NULL), 0);
	assert_int_equal(view.asdu[0].smpCnt, 3999);
	assert_int_equal(view.asdu[1].smpCnt, 0);
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(sv_asdu_value(&view.asdu[1], i), vals[i]);
		assert_int_equal(sv_asdu_quality(&view.asdu[1], i), q[i]);
	}
	assert_int_equal(view.asdu[1].refrTm[7], 0x0a);
	/* within one fraction LSB (2^-24 s ~ 60 ns) */
	assert_true(llabs(sv_utctime_get(view.asdu[1].refrTm) - 1700000000123456789LL) < 60);
	/* values only: qualities unchanged */
	vals[0] = 42;
	sv_template_set_values(&t, 1, vals, NULL);
	assert_int_equal(sv_codec_decode(t.frame, t.len, &view, NULL), 0);
	assert_int_equal(sv_asdu_value(&view.asdu[1], 0), 42);
	assert_int_equal(sv_asdu_quality(&view.asdu[1], 3), q[3]);
}

static void test_template_rejects(void **state)
{
	static struct sv_template t;

	(void)state;
	fill_view(&want, SV_TEMPLATE_MAX_ASDU + 1, 0, true, 4, 0);
	assert_int_equal(sv_template_init(&t, &want), -ENOSPC);
	fill_view(&want, 2, 0, true, 4, 0);
	want.asdu[1].seqData_len = 12;
	assert_int_equal(sv_template_init(&t, &want), -EINVAL);
}

static void test_utctime(void **state)
{
	static const int64_t cases[] = { 0, 1, 999999999, 1000000000, 1700000000000000000LL, 1700000000999999999LL };
	uint8_t b[8];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sv_utctime_put(b, cases[i], 0);
		assert_true(sv_utctime_get(b) <= cases[i] + 60 && sv_utctime_get(b) >= cases[i] - 60);
		/* never rounds into the next second */
		assert_int_equal(sv_be32(b), (uint32_t)(cases[i] / 1000000000));
	}
}

/* ---- the shape-remembering decoder ---- */

static struct sv_view full_view;

static void test_decoder(void **state)
{
	static struct sv_template t[2];
	struct sv_decoder *d;
	struct sv_codec_error e1, e2;
	uint64_t hits, full;
	int32_t vals[8] = { 0 };
	uint32_t q[8] = { 0 };

	(void)state;
	assert_int_equal(sv_decoder_create(&d), 0);
	/* two streams of different shapes, interleaved: after one full decode each, all hits */
	fill_view(&want, 1, SV_HAS_SMPRATE, true, 16, 0);
	assert_int_equal(sv_template_init(&t[0], &want), 0);
	fill_view(&want, 2, SV_HAS_REFRTM | SV_HAS_DATSET, false, 5, 0);
	want.appid = 0x4001;
	assert_int_equal(sv_template_init(&t[1], &want), 0);
	for (int i = 0; i < 200; i++) {
		struct sv_template *x = &t[i & 1];

		vals[i % 8] = i * 1000 - 77;
		sv_template_set_smpcnt(x, 0, (uint16_t)i);
		sv_template_set_values(x, 0, vals, q);
		sv_template_set_refrtm(x, 0, 1700000000000000000LL + i, 0);
		assert_int_equal(sv_decoder_decode(d, x->frame, x->len, &view, &e1), 0);
		assert_int_equal(sv_codec_decode(x->frame, x->len, &full_view, &e2), 0);
		compare_views(&full_view, &view);
		assert_ptr_equal(view.asdu[0].seqData, full_view.asdu[0].seqData);
		assert_int_equal(view.asdu[0].smpCnt, i);
		assert_int_equal(sv_asdu_value(&view.asdu[0], (unsigned)i % 8), vals[i % 8]);
	}
	sv_decoder_counts(d, &hits, &full);
	assert_int_equal(full, 2);
	assert_int_equal(hits, 198);
	/* a structural change (confRev) is decoded fully and gives the new value */
	t[0].frame[t[0].smpcnt_off[0] + 2 + 2 + 3] ^= 0x01;
	assert_int_equal(sv_decoder_decode(d, t[0].frame, t[0].len, &view, &e1), 0);
	assert_int_equal(view.asdu[0].confRev, 0x80000000u);
	sv_decoder_counts(d, &hits, &full);
	assert_int_equal(full, 3);
	/* a broken frame of a known shape still fails with the full decoder's error */
	t[0].frame[t[0].smpcnt_off[0] - 2] = 0x8A;
	assert_int_equal(sv_decoder_decode(d, t[0].frame, t[0].len, &view, &e1), -EBADMSG);
	assert_int_equal(sv_codec_decode(t[0].frame, t[0].len, &full_view, &e2), -EBADMSG);
	assert_int_equal(e1.code, e2.code);
	assert_int_equal(e1.offset, e2.offset);
	sv_decoder_destroy(d);
}

static void test_read_channels(void **state)
{
	int32_t v[8];
	uint32_t q[8];

	(void)state;
	fill_view(&want, 1, 0, true, 4, 0);
	for (unsigned k = 0; k < 8; k++) {
		sv_put_be32(seqdata[0] + 8 * k, (uint32_t)(-(int32_t)k * 123456789));
		sv_put_be32(seqdata[0] + 8 * k + 4, 0x2000u | k);
	}
	assert_int_equal(sv_asdu_read_channels(&want.asdu[0], v, q, 8), 8);
	for (unsigned k = 0; k < 8; k++) {
		assert_int_equal(v[k], -(int32_t)k * 123456789);
		assert_int_equal(q[k], 0x2000u | k);
		assert_int_equal(v[k], sv_asdu_value(&want.asdu[0], k));
	}
	/* max caps the count; odd counts take the scalar tail */
	assert_int_equal(sv_asdu_read_channels(&want.asdu[0], v, q, 5), 5);
	want.asdu[0].seqData_len = 12; /* not INT32+q pairs */
	assert_int_equal(sv_asdu_read_channels(&want.asdu[0], v, q, 8), 0);
}

/* ---- datasets and quality ---- */

static void test_quality(void **state)
{
	char s[256];

	(void)state;
	assert_int_equal(sv_quality_validity(0), SV_VALIDITY_GOOD);
	assert_int_equal(sv_quality_validity(1), SV_VALIDITY_INVALID);
	assert_int_equal(sv_quality_validity(2), SV_VALIDITY_INVALID);
	assert_int_equal(sv_quality_validity(3), SV_VALIDITY_QUESTIONABLE);
	assert_int_equal(sv_quality_validity(SV_Q_DERIVED | SV_Q_TEST), SV_VALIDITY_GOOD);
	sv_quality_format(SV_Q_DERIVED | SV_Q_TEST | 2, s, sizeof(s));
	assert_string_equal(s, "invalid|test|derived");
	sv_quality_format(0, s, sizeof(s));
	assert_string_equal(s, "good");
	/* truncation never overflows */
	assert_true(sv_quality_format(0xffffffffu, s, 8) > 8);
	assert_int_equal(strlen(s), 7);
}

static void test_profiles(void **state)
{
	static const struct {
		const char *name;
		uint32_t rate;
		uint16_t asdus;
		uint32_t fps;
	} t[] = {
		{ "9-2le-50hz", 4000, 1, 4000 },      { "9-2LE-60HZ", 4800, 1, 4800 },
		{ "9-2le-256-50hz", 12800, 8, 1600 }, { "9-2le-256-60hz", 15360, 8, 1920 },
		{ "F4800S2I4U4", 4800, 2, 2400 },     { "f14400s6i4u4", 14400, 6, 2400 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct sv_profile *p = sv_profile_find(t[i].name);

		assert_non_null(p);
		assert_int_equal(p->sample_rate, t[i].rate);
		assert_int_equal(p->asdus_per_frame, t[i].asdus);
		assert_int_equal(sv_profile_frame_rate(p), t[i].fps);
		assert_int_equal(sv_sample_rate(p->smp_rate, p->smp_mod != 0, p->smp_mod, p->nominal_hz ? p->nominal_hz : 50),
				 t[i].rate);
	}
	assert_null(sv_profile_find("nope"));
	assert_int_equal(sv_sample_rate(80, false, 0, 50), 4000);
	assert_int_equal(sv_sample_rate(80, false, 0, 60), 4800);
	assert_int_equal(sv_sample_rate(4800, true, 1, 50), 4800);
	assert_int_equal(sv_sample_rate(2, true, 2, 50), 0);
	assert_int_equal(sv_sample_rate(0, false, 0, 50), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_baseline),	 cmocka_unit_test(test_unsigned_fields),
		cmocka_unit_test(test_never_writes_input), cmocka_unit_test(test_errors),
		cmocka_unit_test(test_every_error_named), cmocka_unit_test(test_roundtrip_shapes),
		cmocka_unit_test(test_long_lengths_on_wire), cmocka_unit_test(test_encode_rejects),
		cmocka_unit_test(test_prp_trailer),	 cmocka_unit_test(test_hsr_tag),
		cmocka_unit_test(test_padding_not_pdu),	 cmocka_unit_test(test_qinq),
		cmocka_unit_test(test_template),	 cmocka_unit_test(test_template_rejects),
		cmocka_unit_test(test_utctime),		 cmocka_unit_test(test_quality),
		cmocka_unit_test(test_profiles),	 cmocka_unit_test(test_decoder),
		cmocka_unit_test(test_read_channels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
