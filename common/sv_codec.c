// SPDX-License-Identifier: Apache-2.0
/*
 * IEC 61850-9-2 SV codec. The decoder walks the frame once with a cursor that never leaves the bytes its
 * parent element owns; each check has its own error name (docs/errors.md) and the offset of the octet
 * that broke it. Encoding writes minimal BER lengths (UCA TISSUE 1345) and the fixed widths of 9-2 Table 14.
 */
#include "sv_codec.h"
#include "sv_parse.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char *const err_names[] = {
	[SV_OK] = "ok",
#define SV_X_NAME(e, name, text) [SV_E_##e] = name,
	SV_CODEC_ERRORS(SV_X_NAME)
#undef SV_X_NAME
};

static const char *const err_texts[] = {
	[SV_OK] = "no error",
#define SV_X_TEXT(e, name, text) [SV_E_##e] = text,
	SV_CODEC_ERRORS(SV_X_TEXT)
#undef SV_X_TEXT
};

const char *sv_codec_strerror(int err)
{
	if (err < 0 || err >= SV_E__COUNT)
		return "unknown";
	return err_names[err];
}

const char *sv_codec_describe(int err)
{
	if (err < 0 || err >= SV_E__COUNT)
		return "unknown error";
	return err_texts[err];
}

struct cur {
	const uint8_t *base; /* frame start, for offsets */
	const uint8_t *p;
	const uint8_t *end;
};

struct tlv {
	const uint8_t *tag_at; /* position of the tag octet */
	const uint8_t *val;
	uint32_t len;
	uint8_t tag;
};

#define FAIL(e, at)                                                                                   \
	do {                                                                                          \
		if (err) {                                                                            \
			err->code = SV_E_##e;                                                         \
			err->offset = (uint32_t)((at) - frame);                                       \
		}                                                                                     \
		return -EBADMSG;                                                                      \
	} while (0)

/*
 * Reads one TLV inside [c->p, c->end). Tags are single-octet (every tag in 9-2 has a number below 31).
 * Returns 0, or the error code with *at set to the offending octet.
 */
static inline int tlv_next(struct cur *c, struct tlv *t, const uint8_t **at)
{
	const uint8_t *p = c->p;
	uint32_t len;

	t->tag_at = p;
	if (c->end - p < 2) {
		*at = p;
		return SV_E_OVERRUN;
	}
	t->tag = p[0];
	len = p[1];
	p += 2;
	if (len & 0x80) {
		unsigned n = len & 0x7f;

		/* 0x80 is the indefinite form, which fixed-size SV never uses; more than 4 octets cannot
		 * describe anything that fits in a frame. */
		if (n == 0 || n > 4 || (size_t)(c->end - p) < n) {
			*at = p - 1;
			return SV_E_BER_LENGTH;
		}
		len = 0;
		while (n--)
			len = len << 8 | *p++;
	}
	if ((size_t)(c->end - p) < len) {
		*at = t->tag_at + 1;
		return SV_E_OVERRUN;
	}
	t->val = p;
	t->len = len;
	c->p = p + len;
	return 0;
}

/* VisibleString: 0x20..0x7E. Eight octets at a time (SWAR); bytes >= 0x80 or < 0x20 or == 0x7F fail. */
static inline bool visible_string(const uint8_t *s, uint32_t n)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t x;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&x, s, 8);
		if (((x - 0x20 * ones) | (x + ones) | x) & highs)
			return false;
	}
	for (; n; s++, n--)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

/* Rank of an ASDU tag in the standard's order; 0 for tags the ASDU does not define. */
static inline unsigned asdu_rank(uint8_t tag)
{
	return (tag >= SV_TAG_SVID && tag <= SV_TAG_GMID) ? (unsigned)(tag - SV_TAG_SVID) + 1 : 0;
}

/*
 * The field at @t is not the mandatory @want. Tell apart: a field the ASDU does not define, a field that
 * is present further on (out of order), and a mandatory field that is simply missing.
 */
static int asdu_misplaced(const struct tlv *t, const uint8_t *asdu_end, uint8_t want, int missing_code,
			  const uint8_t **at)
{
	struct cur c = { .p = t->tag_at, .end = asdu_end };
	struct tlv x;
	const uint8_t *dummy;

	*at = t->tag_at;
	if (!t->val) /* end of the ASDU reached */
		return missing_code;
	if (!asdu_rank(t->tag))
		return SV_E_ASDU_UNKNOWN_FIELD;
	while (c.p < c.end && !tlv_next(&c, &x, &dummy))
		if (x.tag == want)
			return SV_E_FIELD_ORDER;
	return missing_code;
}

static inline int asdu_field(struct cur *c, struct tlv *t, const uint8_t **at)
{
	if (c->p == c->end) {
		t->tag = 0;
		t->val = NULL;
		t->tag_at = c->p;
		return 0;
	}
	return tlv_next(c, t, at);
}

static inline uint32_t be_n(const uint8_t *p, uint32_t n)
{
	uint32_t x = 0;

	while (n--)
		x = x << 8 | *p++;
	return x;
}

#define ASDU_NEXT()                                                                                   \
	do {                                                                                          \
		int e_ = asdu_field(&c, &t, &at);                                                     \
		if (e_) {                                                                             \
			code = e_;                                                                    \
			goto fail;                                                                    \
		}                                                                                     \
	} while (0)

#define ASDU_WANT(tagv, missing)                                                                      \
	do {                                                                                          \
		if (t.tag != (tagv)) {                                                                \
			code = asdu_misplaced(&t, c.end, (tagv), SV_E_##missing, &at);                \
			goto fail;                                                                    \
		}                                                                                     \
	} while (0)

/* Decodes the ASDU content [p, end) into @a: the general path, for every encoding BER allows, and the one
 * that names the error. */
static __attribute__((noinline, cold)) int decode_asdu_slow(const uint8_t *frame, const uint8_t *p, const uint8_t *end, struct sv_asdu *a,
		       struct sv_codec_error *err)
{
	struct cur c = { .p = p, .end = end };
	struct tlv t;
	const uint8_t *at = p;
	int code;

	a->present = 0;
	a->datSet = NULL;
	a->refrTm = NULL;
	a->gmIdentity = NULL;
	a->datSet_len = 0;

	ASDU_NEXT();
	ASDU_WANT(SV_TAG_SVID, SVID_MISSING);
	if (t.len == 0 || t.len > SV_MAX_ID_LEN) {
		code = SV_E_SVID_LENGTH;
		at = t.tag_at;
		goto fail;
	}
	if (!visible_string(t.val, t.len)) {
		code = SV_E_SVID_CHARSET;
		at = t.val;
		goto fail;
	}
	a->svID = t.val;
	a->svID_len = (uint16_t)t.len;

	ASDU_NEXT();
	if (t.tag == SV_TAG_DATSET) {
		if (t.len > SV_MAX_ID_LEN) {
			code = SV_E_DATSET_LENGTH;
			at = t.tag_at;
			goto fail;
		}
		if (!visible_string(t.val, t.len)) {
			code = SV_E_DATSET_CHARSET;
			at = t.val;
			goto fail;
		}
		a->datSet = t.val;
		a->datSet_len = (uint16_t)t.len;
		a->present |= SV_HAS_DATSET;
		ASDU_NEXT();
	}

	ASDU_WANT(SV_TAG_SMPCNT, SMPCNT_MISSING);
	if (t.len != 2) {
		code = SV_E_SMPCNT_WIDTH;
		at = t.tag_at;
		goto fail;
	}
	a->smpCnt = sv_be16(t.val);

	ASDU_NEXT();
	ASDU_WANT(SV_TAG_CONFREV, CONFREV_MISSING);
	if (t.len != 4) {
		code = SV_E_CONFREV_WIDTH;
		at = t.tag_at;
		goto fail;
	}
	a->confRev = sv_be32(t.val);

	ASDU_NEXT();
	if (t.tag == SV_TAG_REFRTM) {
		if (t.len != SV_REFRTM_LEN) {
			code = SV_E_REFRTM_WIDTH;
			at = t.tag_at;
			goto fail;
		}
		a->refrTm = t.val;
		a->present |= SV_HAS_REFRTM;
		ASDU_NEXT();
	}

	/* smpSynch is mandatory in 9-2 Ed 2 (OPTIONAL only in Wireshark's module). */
	ASDU_WANT(SV_TAG_SMPSYNCH, SMPSYNCH_MISSING);
	if (t.len != 1) {
		code = SV_E_SMPSYNCH_WIDTH;
		at = t.tag_at;
		goto fail;
	}
	a->smpSynch = t.val[0];

	ASDU_NEXT();
	if (t.tag == SV_TAG_SMPRATE) {
		if (t.len != 2) {
			code = SV_E_SMPRATE_WIDTH;
			at = t.tag_at;
			goto fail;
		}
		a->smpRate = sv_be16(t.val);
		a->present |= SV_HAS_SMPRATE;
		ASDU_NEXT();
	}

	ASDU_WANT(SV_TAG_SEQDATA, SEQDATA_MISSING);
	if (t.len > 0xffff) {
		code = SV_E_OVERRUN;
		at = t.tag_at;
		goto fail;
	}
	a->seqData = t.val;
	a->seqData_len = (uint16_t)t.len;

	if (c.p == c.end)
		return 0; /* the common 9-2LE case ends here */

	ASDU_NEXT();
	if (t.tag == SV_TAG_SMPMOD) {
		if (t.len != 2) {
			code = SV_E_SMPMOD_WIDTH;
			at = t.tag_at;
			goto fail;
		}
		a->smpMod = sv_be16(t.val);
		a->present |= SV_HAS_SMPMOD;
		ASDU_NEXT();
	}
	if (t.tag == SV_TAG_GMID) {
		if (t.len != SV_GMIDENTITY_LEN) {
			code = SV_E_GMID_WIDTH;
			at = t.tag_at;
			goto fail;
		}
		a->gmIdentity = t.val;
		a->present |= SV_HAS_GMIDENTITY;
		ASDU_NEXT();
	}
	if (t.val) {
		/* Anything left: a known field again (repeated or out of order) or an unknown one. 9-2 has
		 * no extension marker in the ASDU, so an unknown field is an error, not something to skip. */
		code = asdu_rank(t.tag) ? SV_E_FIELD_ORDER : SV_E_ASDU_UNKNOWN_FIELD;
		at = t.tag_at;
		goto fail;
	}
	return 0;

fail:
	if (err) {
		err->code = code;
		err->offset = (uint32_t)(at - frame);
	}
	return -EBADMSG;
}

/* A tag and its one-octet length, as one big-endian 16-bit word. */
#define TL(tag, len) ((uint16_t)((tag) << 8 | (len)))

/*
 * The fast path: the canonical encoding every publisher in the captures uses (short-form lengths, the fixed
 * widths as tag+length pairs compared 16 bits at a time). Anything else, valid or not, is handed to
 * decode_asdu_slow(), which starts over and either accepts it or names the error; the two must agree on
 * everything they both accept (the fuzz target cross-checks them with SV_CODEC_CROSSCHECK).
 */
static inline int decode_asdu_fast(const uint8_t *p, const uint8_t *end, struct sv_asdu *a)
{
	const uint8_t *q = p;
	uint32_t n;
	uint8_t present = 0;

	if (end - q < 2 || q[0] != SV_TAG_SVID)
		return -1;
	n = q[1];
	if (n == 0 || n >= 0x80 || (uint32_t)(end - q - 2) < n || !visible_string(q + 2, n))
		return -1;
	a->svID = q + 2;
	a->svID_len = (uint16_t)n;
	q += 2 + n;
	a->datSet = NULL;
	a->datSet_len = 0;
	a->refrTm = NULL;
	a->gmIdentity = NULL;
	if (end - q >= 2 && q[0] == SV_TAG_DATSET) {
		n = q[1];
		if (n >= 0x80 || (uint32_t)(end - q - 2) < n || !visible_string(q + 2, n))
			return -1;
		a->datSet = q + 2;
		a->datSet_len = (uint16_t)n;
		present |= SV_HAS_DATSET;
		q += 2 + n;
	}
	if (end - q < 10 || sv_be16(q) != TL(SV_TAG_SMPCNT, SV_SMPCNT_LEN) ||
	    sv_be16(q + 4) != TL(SV_TAG_CONFREV, SV_CONFREV_LEN))
		return -1;
	a->smpCnt = sv_be16(q + 2);
	a->confRev = sv_be32(q + 6);
	q += 10;
	if (end - q >= 10 && sv_be16(q) == TL(SV_TAG_REFRTM, SV_REFRTM_LEN)) {
		a->refrTm = q + 2;
		present |= SV_HAS_REFRTM;
		q += 10;
	}
	if (end - q < 3 || sv_be16(q) != TL(SV_TAG_SMPSYNCH, SV_SMPSYNCH_LEN))
		return -1;
	a->smpSynch = q[2];
	q += 3;
	if (end - q >= 4 && sv_be16(q) == TL(SV_TAG_SMPRATE, SV_SMPRATE_LEN)) {
		a->smpRate = sv_be16(q + 2);
		present |= SV_HAS_SMPRATE;
		q += 4;
	}
	if (end - q < 2 || q[0] != SV_TAG_SEQDATA)
		return -1;
	n = q[1];
	if (n < 0x80) {
		q += 2;
	} else if (n == 0x81 && end - q >= 3 && q[2] >= 0x80) {
		n = q[2];
		q += 3;
	} else {
		return -1;
	}
	if ((uint32_t)(end - q) < n)
		return -1;
	a->seqData = q;
	a->seqData_len = (uint16_t)n;
	q += n;
	if (q != end) {
		if (end - q >= 4 && sv_be16(q) == TL(SV_TAG_SMPMOD, SV_SMPMOD_LEN)) {
			a->smpMod = sv_be16(q + 2);
			present |= SV_HAS_SMPMOD;
			q += 4;
		}
		if (end - q >= 10 && sv_be16(q) == TL(SV_TAG_GMID, SV_GMIDENTITY_LEN)) {
			a->gmIdentity = q + 2;
			present |= SV_HAS_GMIDENTITY;
			q += 10;
		}
		if (q != end)
			return -1;
	}
	a->present = present;
	return 0;
}

/* PRP redundancy control trailer (IEC 62439-3 §4.1.10): SeqNr(16) LanId(4) LSDU_size(12) 0x88FB, the last
 * six octets of the frame. Recognised by the suffix and a LanId of A or B. */
static void detect_prp(struct sv_view *v)
{
	const uint8_t *r;
	const unsigned lan_at = offsetof(struct sv_wire_prp, lan_size);

	if (v->trailer_len < SV_PRP_RCT_LEN)
		return;
	r = v->frame + v->frame_len - SV_PRP_RCT_LEN;
	if (sv_be16(r + offsetof(struct sv_wire_prp, suffix)) != SV_PRP_SUFFIX)
		return;
	if ((r[lan_at] >> 4) != SV_PRP_LAN_A && (r[lan_at] >> 4) != SV_PRP_LAN_B)
		return;
	v->redundancy = SV_RED_PRP;
	v->red_seq = sv_be16(r + offsetof(struct sv_wire_prp, seq));
	v->red_lan = r[lan_at] >> 4;
	v->red_lsdu_size = sv_be16(r + lan_at) & 0x0fff;
}

/* The general path over the whole frame: every encoding BER allows, and the named errors. */
static __attribute__((noinline, cold)) int decode_slow(const uint8_t *frame, size_t len, struct sv_view *v,
							 struct sv_codec_error *err)
{
	const uint8_t *end = frame + len, *p, *apdu_end, *seq_end;
	struct cur c;
	struct tlv t;
	const uint8_t *at;
	uint32_t off, noasdu;
	struct sv_parse l2 = { 0 };
	unsigned n;
	int e;

	if (len < SV_ETH_HLEN)
		FAIL(ETH_TRUNCATED, frame + len);
	v->frame = frame;
	v->frame_len = (uint32_t)len;
	v->dst = frame;
	v->src = frame + 6;
	v->vlan = false;
	v->vlan_pcp = 0;
	v->vlan_dei = 0;
	v->vlan_id = 0;
	v->redundancy = SV_RED_NONE;
	v->red_lan = 0;
	v->red_seq = 0;
	v->red_lsdu_size = 0;
	/* VLAN tags, HSR tag, EtherType, SV header: the walk the BPF programs run (bpf/sv_parse.h). */
	sv_parse_l2(frame + SV_ETH_ADDRS_LEN,
		    len - SV_ETH_ADDRS_LEN > SV_PARSE_L2_WINDOW ? SV_PARSE_L2_WINDOW : (uint32_t)(len - SV_ETH_ADDRS_LEN),
		    &l2);
	switch (l2.verdict) {
	case SV_PARSE_L2_SHORT:
		if (l2.short_in == SV_PARSE_SHORT_HSR)
			FAIL(HSR_TRUNCATED, end);
		if (l2.short_in == SV_PARSE_SHORT_TAG)
			FAIL(VLAN_TRUNCATED, end);
		FAIL(ETH_TRUNCATED, end);
	case SV_PARSE_NOT_SV:
		FAIL(NOT_SV, frame + SV_ETH_ADDRS_LEN + l2.et_pos);
	case SV_PARSE_HDR_SHORT:
		FAIL(HEADER_TRUNCATED, frame + SV_ETH_ADDRS_LEN + l2.sv_pos);
	}
	/* The view's tag is the 802.1Q one, which carries the SV priority: the inner one of two. */
	if (l2.tpid == SV_ETH_P_8021Q) {
		v->vlan = true;
		v->vlan_pcp = (uint8_t)(l2.tci >> 13);
		v->vlan_dei = (uint8_t)((l2.tci >> 12) & 1);
		v->vlan_id = l2.tci & SV_VLAN_VID_MASK;
	}
	if (l2.hsr) {
		v->redundancy = SV_RED_HSR;
		v->red_lan = (uint8_t)(l2.hsr_path_size >> 12);
		v->red_lsdu_size = l2.hsr_path_size & 0x0fff;
		v->red_seq = l2.hsr_seq;
	}
	off = SV_ETH_ADDRS_LEN + l2.sv_pos;
	p = frame + off;
	v->sv_offset = off;
	v->appid = sv_be16(p);
	v->length = sv_be16(p + 2);
	v->reserved1 = sv_be16(p + 4);
	v->reserved2 = sv_be16(p + 6);
	v->simulated = (v->reserved1 & SV_RESERVED1_SIMULATED) != 0;
	/* 9-2 §5.3.3.3: Length counts from APPID to the end of the APDU; 2 octets is the smallest savPdu. */
	if (v->length < SV_MIN_LENGTH)
		FAIL(LENGTH_TOO_SMALL, p + 2);
	if (v->length > len - off)
		FAIL(LENGTH_EXCEEDS_FRAME, p + 2);
	v->pdu_end = off + v->length;
	v->trailer_len = (uint32_t)len - v->pdu_end;
	apdu_end = frame + v->pdu_end;

	c.p = p + SV_HEADER_LEN;
	c.end = end; /* the savPdu's own length is checked against Length below */
	if (c.p[0] != SV_TAG_SAVPDU)
		FAIL(APDU_TAG, c.p);
	e = tlv_next(&c, &t, &at);
	if (e == SV_E_BER_LENGTH)
		FAIL(BER_LENGTH, at);
	if (e || c.p != apdu_end)
		FAIL(APDU_LENGTH, t.tag_at + 1);

	/* savPdu content */
	c.p = t.val;
	c.end = apdu_end;
	if (c.p == c.end)
		FAIL(NOASDU_MISSING, c.p);
	if ((e = tlv_next(&c, &t, &at)))
		goto fail_code;
	if (t.tag != SV_TAG_NOASDU)
		FAIL(NOASDU_MISSING, t.tag_at);
	if (t.len < 1 || t.len > 3)
		FAIL(NOASDU_WIDTH, t.tag_at);
	if (t.val[0] & 0x80) /* INTEGER: a set top bit is negative */
		FAIL(NOASDU_RANGE, t.val);
	noasdu = be_n(t.val, t.len);
	if (noasdu < 1 || noasdu > 65535)
		FAIL(NOASDU_RANGE, t.val);
	v->noASDU = (uint16_t)noasdu;

	if (c.p == c.end)
		FAIL(SEQASDU_MISSING, c.p);
	if ((e = tlv_next(&c, &t, &at)))
		goto fail_code;
	v->security = NULL;
	v->security_len = 0;
	v->security_tag = 0;
	if (t.tag == SV_TAG_SECURITY || t.tag == SV_TAG_SECURITY_C) {
		/* IEC 62351-6: ANY, so primitive or constructed; carried opaque. */
		v->security = t.val;
		v->security_len = (uint16_t)t.len;
		v->security_tag = t.tag;
		if (c.p == c.end)
			FAIL(SEQASDU_MISSING, c.p);
		if ((e = tlv_next(&c, &t, &at)))
			goto fail_code;
	}
	if (t.tag != SV_TAG_SEQASDU) {
		if (t.tag == SV_TAG_NOASDU || t.tag == SV_TAG_SECURITY || t.tag == SV_TAG_SECURITY_C)
			FAIL(APDU_UNKNOWN_FIELD, t.tag_at);
		FAIL(SEQASDU_MISSING, t.tag_at);
	}
	if (c.p != c.end)
		FAIL(APDU_UNKNOWN_FIELD, c.p);

	/* seqASDU content: exactly noASDU ASDUs */
	seq_end = t.val + t.len;
	c.p = t.val;
	c.end = seq_end;
	for (n = 0; c.p < seq_end; n++) {
		if (*c.p != SV_TAG_ASDU)
			FAIL(ASDU_TAG, c.p);
		if (n == noasdu)
			FAIL(ASDU_COUNT, c.p);
		if (n == SV_MAX_ASDU)
			FAIL(ASDU_LIMIT, c.p);
		if ((e = tlv_next(&c, &t, &at)))
			goto fail_code;
		v->asdu[n].offset = (uint16_t)(t.tag_at - frame);
		if (decode_asdu_slow(frame, t.val, t.val + t.len, &v->asdu[n], err))
			return -EBADMSG;
	}
	if (n != noasdu)
		FAIL(ASDU_COUNT, seq_end);

	if (v->trailer_len)
		detect_prp(v);
	return 0;

fail_code:
	if (err) {
		err->code = e;
		err->offset = (uint32_t)(at - frame);
	}
	return -EBADMSG;
}

/* BER length at @p (short form, or 0x81/0x82 long forms) for the fast path; NULL for anything else. */
static inline const uint8_t *len_fast(const uint8_t *p, const uint8_t *end, uint32_t *n)
{
	if (p >= end)
		return NULL;
	if (p[0] < 0x80) {
		*n = p[0];
		return p + 1;
	}
	if (p[0] == 0x81 && end - p >= 2) {
		*n = p[1];
		return p + 2;
	}
	if (p[0] == 0x82 && end - p >= 3) {
		*n = sv_be16(p + 1);
		return p + 3;
	}
	return NULL;
}

/*
 * The fast path over the whole frame, for what publishers send: at most one 802.1Q tag, the canonical field
 * encodings. It returns -1 on anything else, valid or not; decode_slow() then starts over and either accepts
 * the frame or names the error. Both paths fill the view identically where both accept (the fuzz target
 * builds with SV_CODEC_CROSSCHECK and compares them on every input).
 */
static inline int decode_fast(const uint8_t *frame, size_t len, struct sv_view *v)
{
	const uint8_t *p, *apdu_end, *seq_end;
	uint32_t off = SV_ETH_HLEN, n, noasdu, k;
	uint16_t et;

	if (len < SV_ETH_HLEN + SV_MIN_LENGTH)
		return -1;
	et = sv_be16(frame + SV_ETH_ADDRS_LEN);
	v->vlan = false;
	v->vlan_pcp = 0;
	v->vlan_dei = 0;
	v->vlan_id = 0;
	if (et == SV_ETH_P_8021Q) {
		uint16_t tci = sv_be16(frame + SV_ETH_HLEN);

		v->vlan = true;
		v->vlan_pcp = (uint8_t)(tci >> 13);
		v->vlan_dei = (uint8_t)((tci >> 12) & 1);
		v->vlan_id = tci & SV_VLAN_VID_MASK;
		et = sv_be16(frame + SV_ETH_HLEN + 2);
		off = SV_ETH_HLEN + SV_VLAN_TAG_LEN;
	}
	if (et != SV_ETH_P_SV || len < off + SV_MIN_LENGTH)
		return -1;
	p = frame + off;
	v->frame = frame;
	v->frame_len = (uint32_t)len;
	v->dst = frame;
	v->src = frame + 6;
	v->sv_offset = off;
	v->appid = sv_be16(p);
	v->length = sv_be16(p + 2);
	v->reserved1 = sv_be16(p + 4);
	v->reserved2 = sv_be16(p + 6);
	v->simulated = (v->reserved1 & SV_RESERVED1_SIMULATED) != 0;
	if (v->length < SV_MIN_LENGTH || v->length > len - off)
		return -1;
	v->pdu_end = off + v->length;
	v->trailer_len = (uint32_t)len - v->pdu_end;
	apdu_end = p + v->length;
	p += SV_HEADER_LEN;
	if (p[0] != SV_TAG_SAVPDU || !(p = len_fast(p + 1, apdu_end, &n)) || p + n != apdu_end)
		return -1;
	/* noASDU 80 01 nn, 1 <= nn <= 127; no security field */
	if (apdu_end - p < 5 || p[0] != SV_TAG_NOASDU || p[1] != 1 || p[2] == 0 || p[2] >= 0x80 || p[3] != SV_TAG_SEQASDU)
		return -1;
	noasdu = p[2];
	if (!(p = len_fast(p + 4, apdu_end, &n)) || p + n != apdu_end)
		return -1;
	seq_end = apdu_end;
	for (k = 0; p < seq_end; k++) {
		const uint8_t *a;

		if (k == noasdu || p[0] != SV_TAG_ASDU || !(a = len_fast(p + 1, seq_end, &n)) || (uint32_t)(seq_end - a) < n)
			return -1;
		v->asdu[k].offset = (uint16_t)(p - frame);
		if (decode_asdu_fast(a, a + n, &v->asdu[k]))
			return -1;
		p = a + n;
	}
	if (k != noasdu)
		return -1;
	v->noASDU = (uint16_t)noasdu;
	v->security = NULL;
	v->security_len = 0;
	v->security_tag = 0;
	v->redundancy = SV_RED_NONE;
	v->red_lan = 0;
	v->red_seq = 0;
	v->red_lsdu_size = 0;
	if (v->trailer_len)
		detect_prp(v);
	return 0;
}

bool sv_codec_view_equal(const struct sv_view *a, const struct sv_view *b)
{
#define SAME(f)                                                                                       \
	do {                                                                                          \
		if (a->f != b->f)                                                                     \
			return false;                                                                 \
	} while (0)
	SAME(frame); SAME(frame_len); SAME(dst); SAME(src); SAME(vlan); SAME(vlan_pcp); SAME(vlan_dei); SAME(vlan_id);
	SAME(appid); SAME(length); SAME(reserved1); SAME(reserved2); SAME(simulated); SAME(noASDU); SAME(security);
	SAME(security_len); SAME(security_tag); SAME(sv_offset); SAME(pdu_end); SAME(trailer_len); SAME(redundancy);
	SAME(red_lan); SAME(red_seq); SAME(red_lsdu_size);
	for (unsigned i = 0; i < a->noASDU; i++) {
		SAME(asdu[i].svID); SAME(asdu[i].svID_len); SAME(asdu[i].datSet); SAME(asdu[i].datSet_len);
		SAME(asdu[i].smpCnt); SAME(asdu[i].confRev); SAME(asdu[i].refrTm); SAME(asdu[i].smpSynch);
		SAME(asdu[i].seqData); SAME(asdu[i].seqData_len); SAME(asdu[i].gmIdentity); SAME(asdu[i].present);
		SAME(asdu[i].offset);
		if (a->asdu[i].present & SV_HAS_SMPRATE)
			SAME(asdu[i].smpRate);
		if (a->asdu[i].present & SV_HAS_SMPMOD)
			SAME(asdu[i].smpMod);
	}
#undef SAME
	return true;
}

#ifdef SV_CODEC_CROSSCHECK
/* Fuzzing aid: the fast path must agree with the general one on everything it accepts. */
static void crosscheck(const uint8_t *frame, size_t len, const struct sv_view *a)
{
	static struct sv_view b;

	if (decode_slow(frame, len, &b, NULL) || !sv_codec_view_equal(a, &b))
		abort();
}
#endif

int sv_codec_decode(const uint8_t *frame, size_t len, struct sv_view *v, struct sv_codec_error *err)
{
	if (decode_fast(frame, len, v) == 0) {
#ifdef SV_CODEC_CROSSCHECK
		crosscheck(frame, len, v);
#endif
		return 0;
	}
	return decode_slow(frame, len, v, err);
}

/* ---- encoding ---- */

static inline unsigned ber_len_size(uint32_t n)
{
	return n < 0x80 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 4;
}

static inline unsigned tlv_size(uint32_t n)
{
	return 1 + ber_len_size(n) + n;
}

static inline uint8_t *put_len(uint8_t *p, uint32_t n)
{
	if (n < 0x80) {
		*p++ = (uint8_t)n;
	} else if (n < 0x100) {
		*p++ = 0x81;
		*p++ = (uint8_t)n;
	} else if (n < 0x10000) {
		*p++ = 0x82;
		*p++ = (uint8_t)(n >> 8);
		*p++ = (uint8_t)n;
	} else {
		*p++ = 0x83;
		*p++ = (uint8_t)(n >> 16);
		*p++ = (uint8_t)(n >> 8);
		*p++ = (uint8_t)n;
	}
	return p;
}

static inline uint8_t *put_tlv(uint8_t *p, uint8_t tag, const void *val, uint32_t n)
{
	*p++ = tag;
	p = put_len(p, n);
	if (n)
		memcpy(p, val, n);
	return p + n;
}

static uint32_t asdu_content_size(const struct sv_asdu *a)
{
	uint32_t n = tlv_size(a->svID_len) + tlv_size(2) + tlv_size(4) + tlv_size(1) + tlv_size(a->seqData_len);

	if (a->present & SV_HAS_DATSET)
		n += tlv_size(a->datSet_len);
	if (a->present & SV_HAS_REFRTM)
		n += tlv_size(SV_REFRTM_LEN);
	if (a->present & SV_HAS_SMPRATE)
		n += tlv_size(2);
	if (a->present & SV_HAS_SMPMOD)
		n += tlv_size(2);
	if (a->present & SV_HAS_GMIDENTITY)
		n += tlv_size(SV_GMIDENTITY_LEN);
	return n;
}

static int check_asdu(const struct sv_asdu *a)
{
	if (!a->svID || a->svID_len == 0 || a->svID_len > SV_MAX_ID_LEN || !visible_string(a->svID, a->svID_len))
		return -EINVAL;
	if ((a->present & SV_HAS_DATSET) &&
	    (a->datSet_len > SV_MAX_ID_LEN || (a->datSet_len && !a->datSet) ||
	     (a->datSet_len && !visible_string(a->datSet, a->datSet_len))))
		return -EINVAL;
	if ((a->present & SV_HAS_REFRTM) && !a->refrTm)
		return -EINVAL;
	if ((a->present & SV_HAS_GMIDENTITY) && !a->gmIdentity)
		return -EINVAL;
	if (a->seqData_len && !a->seqData)
		return -EINVAL;
	return 0;
}

static int encode(const struct sv_view *v, uint8_t *buf, size_t cap, struct sv_template *t)
{
	uint32_t asdu_sz[SV_MAX_ASDU];
	uint32_t seq_len = 0, pdu_content, apdu_len, length, hdr, total;
	uint8_t *p = buf;
	unsigned i;
	int err;

	if (!v->dst || !v->src || v->noASDU < 1 || v->noASDU > SV_MAX_ASDU)
		return -EINVAL;
	if (v->security_tag && v->security_tag != SV_TAG_SECURITY && v->security_tag != SV_TAG_SECURITY_C)
		return -EINVAL;
	for (i = 0; i < v->noASDU; i++) {
		if ((err = check_asdu(&v->asdu[i])))
			return err;
		asdu_sz[i] = asdu_content_size(&v->asdu[i]);
		seq_len += tlv_size(asdu_sz[i]);
	}
	pdu_content = tlv_size(v->noASDU < 0x80 ? 1 : v->noASDU < 0x8000 ? 2 : 3) + tlv_size(seq_len);
	if (v->security_tag)
		pdu_content += tlv_size(v->security_len);
	apdu_len = tlv_size(pdu_content);
	length = SV_HEADER_LEN + apdu_len;
	if (length > 0xffff)
		return -EINVAL;
	hdr = SV_ETH_HLEN + (v->vlan ? SV_VLAN_TAG_LEN : 0) + (v->redundancy == SV_RED_HSR ? SV_HSR_TAG_LEN : 0);
	total = hdr + length + (v->redundancy == SV_RED_PRP ? SV_PRP_RCT_LEN : 0);
	if (total < 60)
		total = 60;
	if (total > cap)
		return -ENOSPC;

	memcpy(p, v->dst, 6);
	memcpy(p + 6, v->src, 6);
	p += 12;
	if (v->vlan) {
		sv_put_be16(p, SV_ETH_P_8021Q);
		sv_put_be16(p + 2, (uint16_t)((v->vlan_pcp & 7) << 13 | (v->vlan_dei & 1) << 12 | (v->vlan_id & SV_VLAN_VID_MASK)));
		p += SV_VLAN_TAG_LEN;
	}
	if (v->redundancy == SV_RED_HSR) {
		/* LSDU size: octets after the HSR EtherType, through the end of the SV PDU */
		sv_put_be16(p, SV_ETH_P_HSR);
		sv_put_be16(p + 2, (uint16_t)((v->red_lan & 0xf) << 12 | ((length + 6) & 0xfff)));
		sv_put_be16(p + 4, v->red_seq);
		p += SV_HSR_TAG_LEN;
	}
	sv_put_be16(p, SV_ETH_P_SV);
	p += 2;
	sv_put_be16(p, v->appid);
	sv_put_be16(p + 2, (uint16_t)length);
	sv_put_be16(p + 4, (uint16_t)((v->reserved1 & ~SV_RESERVED1_SIMULATED) |
				       (v->simulated ? SV_RESERVED1_SIMULATED : 0)));
	sv_put_be16(p + 6, v->reserved2);
	p += SV_HEADER_LEN;

	*p++ = SV_TAG_SAVPDU;
	p = put_len(p, pdu_content);
	*p++ = SV_TAG_NOASDU;
	if (v->noASDU < 0x80) {
		*p++ = 1;
		*p++ = (uint8_t)v->noASDU;
	} else if (v->noASDU < 0x8000) {
		*p++ = 2;
		sv_put_be16(p, v->noASDU);
		p += 2;
	} else {
		*p++ = 3;
		*p++ = 0;
		sv_put_be16(p, v->noASDU);
		p += 2;
	}
	if (v->security_tag)
		p = put_tlv(p, v->security_tag, v->security, v->security_len);
	*p++ = SV_TAG_SEQASDU;
	p = put_len(p, seq_len);
	for (i = 0; i < v->noASDU; i++) {
		const struct sv_asdu *a = &v->asdu[i];
		uint8_t w[4];

		*p++ = SV_TAG_ASDU;
		p = put_len(p, asdu_sz[i]);
		p = put_tlv(p, SV_TAG_SVID, a->svID, a->svID_len);
		if (a->present & SV_HAS_DATSET)
			p = put_tlv(p, SV_TAG_DATSET, a->datSet, a->datSet_len);
		sv_put_be16(w, a->smpCnt);
		if (t)
			t->smpcnt_off[i] = (uint16_t)(p + 2 - buf);
		p = put_tlv(p, SV_TAG_SMPCNT, w, 2);
		sv_put_be32(w, a->confRev);
		p = put_tlv(p, SV_TAG_CONFREV, w, 4);
		if (t)
			t->refrtm_off[i] = 0;
		if (a->present & SV_HAS_REFRTM) {
			if (t)
				t->refrtm_off[i] = (uint16_t)(p + 2 - buf);
			p = put_tlv(p, SV_TAG_REFRTM, a->refrTm, SV_REFRTM_LEN);
		}
		p = put_tlv(p, SV_TAG_SMPSYNCH, &a->smpSynch, 1);
		if (a->present & SV_HAS_SMPRATE) {
			sv_put_be16(w, a->smpRate);
			p = put_tlv(p, SV_TAG_SMPRATE, w, 2);
		}
		if (t)
			t->seqdata_off[i] = (uint16_t)(p + 1 + ber_len_size(a->seqData_len) - buf);
		p = put_tlv(p, SV_TAG_SEQDATA, a->seqData, a->seqData_len);
		if (a->present & SV_HAS_SMPMOD) {
			sv_put_be16(w, a->smpMod);
			p = put_tlv(p, SV_TAG_SMPMOD, w, 2);
		}
		if (a->present & SV_HAS_GMIDENTITY)
			p = put_tlv(p, SV_TAG_GMID, a->gmIdentity, SV_GMIDENTITY_LEN);
	}
	if (t)
		t->prp_off = 0;
	if (v->redundancy == SV_RED_PRP) {
		uint32_t lsdu;

		/* The RCT is the last six octets: padding, if any, goes before it (IEC 62439-3 §4.1.10). */
		if ((uint32_t)(p - buf) + 6 < 60) {
			memset(p, 0, 60 - 6 - (uint32_t)(p - buf));
			p = buf + 60 - 6;
		}
		/* LSDU_size: from after the EtherType/TPID at offset 12 (less a VLAN tag) through the RCT */
		lsdu = (uint32_t)(p - buf) + SV_PRP_RCT_LEN - SV_ETH_HLEN - (v->vlan ? SV_VLAN_TAG_LEN : 0);

		if (t)
			t->prp_off = (uint16_t)(p - buf);
		sv_put_be16(p, v->red_seq);
		sv_put_be16(p + 2, (uint16_t)(((v->red_lan ? v->red_lan : 0xA) & 0xf) << 12 | (lsdu & 0xfff)));
		sv_put_be16(p + 4, SV_PRP_SUFFIX);
		p += 6;
	}
	if ((uint32_t)(p - buf) < total)
		memset(p, 0, total - (uint32_t)(p - buf)); /* Ethernet padding to the 60-octet minimum */
	return (int)total;
}

int sv_codec_encode(const struct sv_view *v, uint8_t *buf, size_t cap)
{
	return encode(v, buf, cap, NULL);
}

int sv_template_init(struct sv_template *t, const struct sv_view *v)
{
	uint16_t nch;
	int n;

	if (v->noASDU > SV_TEMPLATE_MAX_ASDU)
		return -ENOSPC;
	if (v->noASDU < 1)
		return -EINVAL;
	nch = v->asdu[0].seqData_len / 8;
	for (unsigned i = 0; i < v->noASDU; i++)
		if (v->asdu[i].seqData_len % 8 || v->asdu[i].seqData_len / 8 != nch)
			return -EINVAL;
	n = encode(v, t->frame, sizeof(t->frame), t);
	if (n < 0)
		return n;
	t->len = (uint16_t)n;
	t->noASDU = v->noASDU;
	t->nchannels = nch;
	return 0;
}

void sv_utctime_put(uint8_t out[8], int64_t ns_utc, uint8_t time_quality)
{
	int64_t sec = ns_utc / 1000000000;
	int64_t rem = ns_utc % 1000000000;
	uint32_t frac;

	if (rem < 0) {
		rem += 1000000000;
		sec--;
	}
	/* 24-bit binary fraction, rounded down so a time never moves into the next second */
	frac = (uint32_t)(((uint64_t)rem << 24) / 1000000000u);
	sv_put_be32(out, (uint32_t)sec);
	out[4] = (uint8_t)(frac >> 16);
	out[5] = (uint8_t)(frac >> 8);
	out[6] = (uint8_t)frac;
	out[7] = time_quality;
}

int64_t sv_utctime_get(const uint8_t in[8])
{
	uint32_t frac = (uint32_t)in[4] << 16 | (uint32_t)in[5] << 8 | in[6];

	/* round to nearest so put(get(x)) is stable */
	return (int64_t)sv_be32(in) * 1000000000 + (int64_t)((((uint64_t)frac * 1000000000u) + (1u << 23)) >> 24);
}

/* ---- the shape-remembering decoder ---- */

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* 256 shapes, 64 sets of 4 ways: the 64..128 streams of a busy process bus (one 9-2LE stream each per
 * merging unit) all stay remembered; 32 shapes made every frame of a 64-stream feed a full decode plus a
 * re-learn. A shape is ~36 KiB (views of up to SV_TEMPLATE_MAX_ASDU ASDUs): ~9.1 MiB, written once at
 * creation so that learning a new stream's shape never faults on the packet path. */
#define SHAPE_WAYS 4
#define SHAPE_SET_BITS 6
#define SHAPE_SETS (1u << SHAPE_SET_BITS)
#define SHAPE_SLOTS (SHAPE_SETS * SHAPE_WAYS)
#define SHAPE_CHUNKS (SV_TEMPLATE_MAX_FRAME / 16)

/*
 * A remembered frame: the 16-octet chunks that hold any octet that must not change, each with its expected
 * value and a mask of the octets that must match (smpCnt, refrTm, seqData and the PRP SeqNr are masked out).
 */
struct shape {
	uint8_t ref[SHAPE_CHUNKS][16] __attribute__((aligned(16)));
	uint8_t mask[SHAPE_CHUNKS][16] __attribute__((aligned(16)));
	uint16_t chunk_off[SHAPE_CHUNKS];
	uint16_t nchunk;
	uint16_t len;	      /* 0: empty slot */
	uint16_t prp_seq_off; /* 0: no PRP trailer */
	uint8_t optional;     /* some ASDU has datSet, refrTm or gmIdentity (pointers to rebase) */
	uint16_t smpcnt_off[SV_TEMPLATE_MAX_ASDU];
	struct sv_view head;  /* the view up to asdu[]; pointers hold offsets from the frame start */
	struct sv_asdu asdu[SV_TEMPLATE_MAX_ASDU];
};

/*
 * The ways of one set, in one cache line: a key per way, its tag (shape_tag()) and its length (a copy of the
 * shape's; 0: empty way), so that a frame is compared only with the shapes that can match it without
 * touching them, and the way to fill next (first in, first out: a hit writes nothing; with more streams in
 * one set than ways, LRU would thrash the same way).
 */
struct shape_set {
	uint64_t key[SHAPE_WAYS]; /* tag | length << 32 (0: empty) */
	uint8_t next;
} __attribute__((aligned(64)));

struct sv_decoder {
	uint64_t hits, full;
	struct shape_set set[SHAPE_SETS];
	struct shape slot[SHAPE_SLOTS];
};

int sv_decoder_create(struct sv_decoder **d)
{
	*d = aligned_alloc(64, (sizeof(**d) + 63) & ~(size_t)63);
	if (!*d)
		return -ENOMEM;
	memset(*d, 0, sizeof(**d));
	return 0;
}

void sv_decoder_destroy(struct sv_decoder *d)
{
	free(d);
}

void sv_decoder_counts(const struct sv_decoder *d, uint64_t *hits, uint64_t *full)
{
	*hits = d->hits;
	*full = d->full;
}

/* The tag of a frame: the last two octets of the destination MAC (01-0C-CD-04-xx-xx: the part that tells SV
 * groups apart) and the APPID (streams may share a group address); the set is picked by a multiplicative
 * hash of the tag and the length. Only a filter: a way is compared with the frame (shape_match(), every
 * fixed octet) only when its tag and length match, so a collision costs a compare, never a wrong view.
 * @len >= 24. */
static inline uint32_t shape_tag(const uint8_t *frame)
{
	bool tagged = frame[SV_ETH_ADDRS_LEN] == SV_ETH_P_8021Q >> 8 && frame[SV_ETH_ADDRS_LEN + 1] == (SV_ETH_P_8021Q & 0xff);
	unsigned appid_at = tagged ? SV_ETH_HLEN + SV_VLAN_TAG_LEN : SV_ETH_HLEN;

	return ((uint32_t)sv_be16(frame + 4) << 16) | sv_be16(frame + appid_at);
}

static inline unsigned shape_set_of(uint32_t tag, size_t len)
{
	return ((tag ^ (uint32_t)len) * 0x9E3779B1u) >> (32 - SHAPE_SET_BITS);
}

/* Pointer <-> offset from the frame start (NULL stays NULL, stored as offset 0: no field starts at 0). */
static inline const uint8_t *to_off(const uint8_t *p, const uint8_t *frame)
{
	return p ? (const uint8_t *)(uintptr_t)(p - frame) : NULL;
}

static inline const uint8_t *from_off(const uint8_t *off, const uint8_t *frame)
{
	return off ? frame + (uintptr_t)off : NULL;
}

/* Remembers a frame that decoded fully into @v. */
static void shape_learn(struct shape *sh, const uint8_t *frame, size_t len, const struct sv_view *v)
{
	uint8_t var[SV_TEMPLATE_MAX_FRAME];
	unsigned nchunks;

	sh->len = 0;
	if (len < 16 || len > SV_TEMPLATE_MAX_FRAME || v->noASDU > SV_TEMPLATE_MAX_ASDU)
		return;
	memset(var, 0, len);
	sh->optional = 0;
	for (unsigned i = 0; i < v->noASDU; i++) {
		const struct sv_asdu *a = &v->asdu[i];
		/* smpCnt's value: 2 octets after its tag, which follows svID or datSet */
		const uint8_t *cnt = (a->present & SV_HAS_DATSET) ? a->datSet + a->datSet_len + 2 : a->svID + a->svID_len + 2;

		if (cnt[-2] != SV_TAG_SMPCNT || cnt[-1] != 2)
			return; /* a non-canonical encoding: always decode fully */
		sh->smpcnt_off[i] = (uint16_t)(cnt - frame);
		memset(var + (cnt - frame), 1, 2);
		if (a->refrTm)
			memset(var + (a->refrTm - frame), 1, SV_REFRTM_LEN);
		if (a->seqData_len)
			memset(var + (a->seqData - frame), 1, a->seqData_len);
		if (a->present & (SV_HAS_DATSET | SV_HAS_REFRTM | SV_HAS_GMIDENTITY))
			sh->optional = 1;
	}
	sh->prp_seq_off = 0;
	if (v->redundancy == SV_RED_PRP) {
		sh->prp_seq_off = (uint16_t)(len - 6);
		memset(var + len - 6, 1, 2);
	}
	/* 16-octet chunks covering the frame (the last one overlapping), kept when they hold a fixed octet */
	nchunks = (unsigned)(len + 15) / 16;
	sh->nchunk = 0;
	for (unsigned c = 0; c < nchunks; c++) {
		unsigned off = c * 16 + 16 <= len ? c * 16 : (unsigned)len - 16;
		bool any = false;

		for (unsigned b = 0; b < 16; b++) {
			sh->mask[sh->nchunk][b] = var[off + b] ? 0 : 0xff;
			sh->ref[sh->nchunk][b] = var[off + b] ? 0 : frame[off + b];
			any |= !var[off + b];
		}
		if (any)
			sh->chunk_off[sh->nchunk++] = (uint16_t)off;
	}
	memcpy(&sh->head, v, offsetof(struct sv_view, asdu));
	memcpy(sh->asdu, v->asdu, v->noASDU * sizeof(v->asdu[0]));
	sh->head.frame = NULL;
	sh->head.dst = NULL;
	sh->head.src = NULL;
	sh->head.security = to_off(v->security, frame);
	for (unsigned i = 0; i < v->noASDU; i++) {
		struct sv_asdu *a = &sh->asdu[i];

		a->svID = to_off(a->svID, frame);
		a->datSet = to_off(a->datSet, frame);
		a->refrTm = to_off(a->refrTm, frame);
		a->seqData = to_off(a->seqData, frame);
		a->gmIdentity = to_off(a->gmIdentity, frame);
	}
	sh->len = (uint16_t)len;
}

static inline bool shape_match(const struct shape *sh, const uint8_t *frame)
{
#if defined(__SSE2__)
	__m128i acc = _mm_setzero_si128();

	for (unsigned k = 0; k < sh->nchunk; k++) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(frame + sh->chunk_off[k]));

		acc = _mm_or_si128(acc, _mm_and_si128(_mm_xor_si128(x, _mm_load_si128((const __m128i *)(const void *)sh->ref[k])),
						      _mm_load_si128((const __m128i *)(const void *)sh->mask[k])));
	}
	return _mm_movemask_epi8(_mm_cmpeq_epi8(acc, _mm_setzero_si128())) == 0xFFFF;
#else
	uint64_t acc = 0, x, r, m;

	for (unsigned k = 0; k < sh->nchunk; k++) {
		for (unsigned h = 0; h < 16; h += 8) {
			memcpy(&x, frame + sh->chunk_off[k] + h, 8);
			memcpy(&r, sh->ref[k] + h, 8);
			memcpy(&m, sh->mask[k] + h, 8);
			acc |= (x ^ r) & m;
		}
	}
	return !acc;
#endif
}

int sv_decoder_decode(struct sv_decoder *d, const uint8_t *frame, size_t len, struct sv_view *v,
		      struct sv_codec_error *err)
{
	struct shape_set *set = NULL;
	struct shape *sh = NULL;
	uint64_t key = 0;
	unsigned w = 0, first = 0;
	int rc;

	if (len >= 24) {
		uint32_t tag = shape_tag(frame);

		key = tag | (uint64_t)len << 32;
		first = shape_set_of(tag, len);
		set = &d->set[first];
		sh = &d->slot[first * SHAPE_WAYS];
		for (w = 0; w < SHAPE_WAYS; w++, sh++) {
			if (set->key[w] == key && shape_match(sh, frame))
				break;
		}
		if (w == SHAPE_WAYS) {
			w = set->next % SHAPE_WAYS;
			set->next = (uint8_t)(w + 1);
			sh = &d->slot[first * SHAPE_WAYS + w];
			goto full;
		}
		{
			unsigned n = sh->head.noASDU;

			__builtin_memcpy(v, &sh->head, offsetof(struct sv_view, asdu));
			v->frame = frame;
			v->dst = frame;
			v->src = frame + 6;
			if (v->security)
				v->security = from_off(v->security, frame);
			for (unsigned i = 0; i < n; i++) {
				struct sv_asdu *a = &v->asdu[i];

				*a = sh->asdu[i];
				a->svID = frame + (uintptr_t)a->svID;
				a->seqData = frame + (uintptr_t)a->seqData;
				if (sh->optional) {
					a->datSet = from_off(a->datSet, frame);
					a->refrTm = from_off(a->refrTm, frame);
					a->gmIdentity = from_off(a->gmIdentity, frame);
				}
				a->smpCnt = sv_be16(frame + sh->smpcnt_off[i]);
			}
			if (sh->prp_seq_off)
				v->red_seq = sv_be16(frame + sh->prp_seq_off);
			d->hits++;
			return 0;
		}
	}
full:
	d->full++;
	rc = sv_codec_decode(frame, len, v, err);
	if (rc == 0 && sh) {
		shape_learn(sh, frame, len, v);
		/* a frame shape_learn() declines leaves the way empty */
		set->key[w] = sh->len ? key : 0;
	}
	return rc;
}
