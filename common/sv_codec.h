/* SPDX-License-Identifier: Apache-2.0 */
/*
 * IEC 61850-9-2 Sampled Values codec: a whole Ethernet frame <-> a read-only view.
 *
 * Decoding is strict, bounds-checked, allocation-free and never writes into the frame: the view points
 * into the caller's buffer, which must outlive it. Every failure is one named error (sv_codec_strerror)
 * with the byte offset, counted from the first byte of the frame, where the fault was found.
 * The names are the contract with users and tests; docs/errors.md lists them.
 *
 * The wire format (EtherTypes, tags, widths, limits) is bpf/sv_wire.h, shared with the BPF programs; what may
 * stand in front of the SV EtherType is walked by bpf/sv_parse.h's sv_parse_l2, the code svsub's XDP program and
 * svtrace run.
 */
#ifndef SV_CODEC_H
#define SV_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_wire.h"

/* Implementation limit of one view: a 9000-byte jumbo frame holds at most ~450 minimal ASDUs. */
#define SV_MAX_ASDU 512

/* X-macro: one row per decode error, (ENUM, "name", "what it means"). Keep docs/errors.md in step. */
#define SV_CODEC_ERRORS(X)                                                                            \
	X(ETH_TRUNCATED, "eth_truncated", "frame shorter than the Ethernet header")                   \
	X(VLAN_TRUNCATED, "vlan_truncated", "frame ends inside the 802.1Q tag")                       \
	X(HSR_TRUNCATED, "hsr_truncated", "frame ends inside the HSR tag")                            \
	X(NOT_SV, "not_sv", "EtherType is not 0x88BA (not an SV frame)")                             \
	X(HEADER_TRUNCATED, "header_truncated", "frame ends inside the 8-octet SV header")            \
	X(LENGTH_TOO_SMALL, "length_too_small", "SV Length is below the header and an empty savPdu")  \
	X(LENGTH_EXCEEDS_FRAME, "length_exceeds_frame", "SV Length runs past the end of the frame")   \
	X(APDU_TAG, "apdu_tag", "savPdu does not start with tag 0x60")                               \
	X(BER_LENGTH, "ber_length", "malformed BER length (indefinite, over 4 octets or truncated)")  \
	X(OVERRUN, "overrun", "an element's length runs past its parent")                            \
	X(APDU_LENGTH, "apdu_length", "savPdu does not end where SV Length says")                     \
	X(NOASDU_MISSING, "noasdu_missing", "savPdu has no noASDU [0]")                               \
	X(NOASDU_WIDTH, "noasdu_width", "noASDU is not a 1..3 octet INTEGER")                         \
	X(NOASDU_RANGE, "noasdu_range", "noASDU outside 1..65535")                                    \
	X(SEQASDU_MISSING, "seqasdu_missing", "savPdu has no seqASDU [2]")                            \
	X(APDU_UNKNOWN_FIELD, "apdu_unknown_field", "unexpected, repeated or out-of-order savPdu field")\
	X(ASDU_TAG, "asdu_tag", "seqASDU holds something other than an ASDU SEQUENCE (0x30)")         \
	X(ASDU_COUNT, "asdu_count", "number of ASDUs differs from noASDU")                            \
	X(ASDU_LIMIT, "asdu_limit", "more ASDUs than one view holds (SV_MAX_ASDU)")                   \
	X(SVID_MISSING, "svid_missing", "ASDU has no svID [0]")                                       \
	X(SVID_LENGTH, "svid_length", "svID empty or longer than 129 octets")                         \
	X(SVID_CHARSET, "svid_charset", "svID is not a VisibleString (0x20..0x7E)")                   \
	X(DATSET_LENGTH, "datset_length", "datSet longer than 129 octets")                            \
	X(DATSET_CHARSET, "datset_charset", "datSet is not a VisibleString (0x20..0x7E)")             \
	X(SMPCNT_MISSING, "smpcnt_missing", "ASDU has no smpCnt [2]")                                 \
	X(SMPCNT_WIDTH, "smpcnt_width", "smpCnt is not exactly 2 octets")                             \
	X(CONFREV_MISSING, "confrev_missing", "ASDU has no confRev [3]")                              \
	X(CONFREV_WIDTH, "confrev_width", "confRev is not exactly 4 octets")                          \
	X(REFRTM_WIDTH, "refrtm_width", "refrTm is not exactly 8 octets")                             \
	X(SMPSYNCH_MISSING, "smpsynch_missing", "ASDU has no smpSynch [5]")                           \
	X(SMPSYNCH_WIDTH, "smpsynch_width", "smpSynch is not exactly 1 octet")                        \
	X(SMPRATE_WIDTH, "smprate_width", "smpRate is not exactly 2 octets")                          \
	X(SEQDATA_MISSING, "seqdata_missing", "ASDU has no seqData [7]")                              \
	X(SMPMOD_WIDTH, "smpmod_width", "smpMod is not exactly 2 octets")                             \
	X(GMID_WIDTH, "gmidentity_width", "gmIdentity is not exactly 8 octets")                       \
	X(FIELD_ORDER, "field_order", "a known ASDU field out of the standard's order, or repeated")    \
	X(ASDU_UNKNOWN_FIELD, "asdu_unknown_field", "a field the ASDU definition does not have")

enum sv_codec_err {
	SV_OK = 0,
#define SV_X_ENUM(e, name, text) SV_E_##e,
	SV_CODEC_ERRORS(SV_X_ENUM)
#undef SV_X_ENUM
	SV_E__COUNT
};

/* "smpcnt_width" etc.; "ok" for SV_OK; "unknown" outside the range. */
const char *sv_codec_strerror(int err);
/* One-sentence description for people. */
const char *sv_codec_describe(int err);

struct sv_codec_error {
	int code;	 /* enum sv_codec_err */
	uint32_t offset; /* byte offset from the start of the frame where the fault is */
};

/* Which optional ASDU fields are present (sv_asdu.present). */
enum {
	SV_HAS_DATSET = 1u << 0,
	SV_HAS_REFRTM = 1u << 1,
	SV_HAS_SMPRATE = 1u << 2,
	SV_HAS_SMPMOD = 1u << 3,
	SV_HAS_GMIDENTITY = 1u << 4,
};

/* smpSynch values (IEC 61850-9-2 Ed 2.1 Table 15): 5..254 are local-area clocks by identity. */
enum {
	SV_SMPSYNCH_NONE = 0,
	SV_SMPSYNCH_LOCAL = 1,
	SV_SMPSYNCH_GLOBAL = 2,
};

/* smpMod values. */
enum {
	SV_SMPMOD_PER_PERIOD = 0,
	SV_SMPMOD_PER_SECOND = 1,
	SV_SMPMOD_SECONDS_PER_SAMPLE = 2,
};

/* One ASDU, fields as on the wire (IEC 61850-9-2 names). Pointers point into the frame. */
struct sv_asdu {
	const uint8_t *svID;	   /* not NUL-terminated */
	const uint8_t *datSet;	   /* NULL when absent */
	const uint8_t *refrTm;	   /* 8 octets, or NULL */
	const uint8_t *seqData;	   /* may have length 0 */
	const uint8_t *gmIdentity; /* 8 octets, or NULL */
	uint32_t confRev;
	uint16_t svID_len;
	uint16_t datSet_len;
	uint16_t seqData_len;
	uint16_t smpCnt;
	uint16_t smpRate; /* valid when present & SV_HAS_SMPRATE */
	uint16_t smpMod;  /* valid when present & SV_HAS_SMPMOD */
	uint8_t smpSynch; /* unsigned: 0xC8 is 200 */
	uint8_t present;  /* SV_HAS_* */
	uint16_t offset;  /* offset of the ASDU's 0x30 tag in the frame */
};

/* Redundancy information found around the SV PDU. */
enum sv_redundancy {
	SV_RED_NONE = 0,
	SV_RED_PRP, /* PRP redundancy control trailer (RCT) after the PDU */
	SV_RED_HSR, /* HSR tag before the SV EtherType */
};

/* A decoded frame. Filled by sv_codec_decode(); only asdu[0 .. noASDU-1] are valid. */
struct sv_view {
	const uint8_t *frame;
	uint32_t frame_len;
	const uint8_t *dst; /* 6 octets */
	const uint8_t *src; /* 6 octets */
	bool vlan;	    /* an 802.1Q tag was in the frame bytes (the inner one of two tags) */
	uint8_t vlan_pcp;
	uint8_t vlan_dei;
	uint16_t vlan_id;
	uint16_t appid;
	uint16_t length; /* SV Length: APPID .. end of savPdu */
	uint16_t reserved1;
	uint16_t reserved2;
	bool simulated;	 /* Reserved1 bit 15 */
	uint16_t noASDU; /* equals the number of ASDUs (checked) */
	const uint8_t *security; /* contents of security [1], or NULL */
	uint16_t security_len;
	uint8_t security_tag;	/* 0x81 primitive or 0xA1 constructed, 0 when absent */
	uint32_t sv_offset;	/* offset of APPID */
	uint32_t pdu_end;	/* offset just past the savPdu (= sv_offset + length) */
	uint32_t trailer_len;	/* octets after pdu_end: padding, redundancy trailer */
	uint8_t redundancy;	/* enum sv_redundancy */
	uint8_t red_lan;	/* PRP LanId (0xA = LAN A, 0xB = LAN B) or HSR path id */
	uint16_t red_seq;	/* PRP/HSR sequence number */
	uint16_t red_lsdu_size; /* PRP LSDU_size or HSR LSDU size, as carried */
	struct sv_asdu asdu[SV_MAX_ASDU];
};

/*
 * Decodes one whole Ethernet frame (no FCS) into @v. Returns 0, or -EBADMSG with @err (may be NULL) set;
 * an Ethernet frame that is not SV gives -EBADMSG with code SV_E_NOT_SV. @v's contents are unspecified
 * after an error. O(frame length), no allocation, never writes to @frame.
 */
int sv_codec_decode(const uint8_t *frame, size_t len, struct sv_view *v, struct sv_codec_error *err);

/* True when two views of the same frame buffer say the same thing: every header field, and per ASDU every
 * field and pointer (smpRate/smpMod only where present). For checking one decoder against another. */
bool sv_codec_view_equal(const struct sv_view *a, const struct sv_view *b);

/*
 * Encodes @v (frame/pdu offsets, trailer fields and the ASDUs' offset are ignored; lengths are computed
 * in minimal BER form; Length is computed) into @buf. @v->dst, @v->src must be set. noASDU ASDUs are taken
 * from asdu[]. A PRP trailer is appended when @v->redundancy is SV_RED_PRP (red_seq, red_lan; LSDU size is
 * computed); Ethernet padding is added up to 60 octets. Returns the frame length, or -EINVAL (bad field,
 * e.g. width) or -ENOSPC (@cap too small).
 */
int sv_codec_encode(const struct sv_view *v, uint8_t *buf, size_t cap);

/* Sequence-of-(INT32 value, 32-bit quality) view of seqData: 9-2LE and IEC 61869-9 datasets. */
static inline unsigned sv_asdu_nchannels(const struct sv_asdu *a)
{
	return (a->seqData_len % 8 == 0) ? a->seqData_len / 8u : 0;
}

/* Big-endian loads and stores of unaligned octets (one load/store and a byte swap on x86 and arm64). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define sv__swap16(x) __builtin_bswap16(x)
#define sv__swap32(x) __builtin_bswap32(x)
#else
#define sv__swap16(x) (x)
#define sv__swap32(x) (x)
#endif
static inline uint32_t sv_be32(const uint8_t *p)
{
	uint32_t x;

	__builtin_memcpy(&x, p, 4);
	return sv__swap32(x);
}

static inline uint16_t sv_be16(const uint8_t *p)
{
	uint16_t x;

	__builtin_memcpy(&x, p, 2);
	return sv__swap16(x);
}

static inline void sv_put_be16(uint8_t *p, uint16_t x)
{
	x = sv__swap16(x);
	__builtin_memcpy(p, &x, 2);
}

static inline void sv_put_be32(uint8_t *p, uint32_t x)
{
	x = sv__swap32(x);
	__builtin_memcpy(p, &x, 4);
}

/* Channel @i of seqData (i < sv_asdu_nchannels()): value and quality. */
static inline int32_t sv_asdu_value(const struct sv_asdu *a, unsigned i)
{
	return (int32_t)sv_be32(a->seqData + 8u * i);
}

static inline uint32_t sv_asdu_quality(const struct sv_asdu *a, unsigned i)
{
	return sv_be32(a->seqData + 8u * i + 4u);
}

/* IEC 61850 UtcTime (refrTm, 8.1.3.7 of 8-1): 4 octets seconds since 1970-01-01 UTC, 3 octets fraction
 * of a second (x 2^-24), 1 octet TimeQuality. @ns_utc is nanoseconds since the epoch on UTC. */
void sv_utctime_put(uint8_t out[8], int64_t ns_utc, uint8_t time_quality);
int64_t sv_utctime_get(const uint8_t in[8]);

/*
 * All channels of seqData at once, in host order: @values[i] and @quality[i] for i < the returned count
 * (min(sv_asdu_nchannels(a), max)). What an application normally wants; on x86-64 it swaps four words per
 * instruction group (SSE2, part of the base ISA) instead of one.
 */
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
static inline unsigned sv_asdu_read_channels(const struct sv_asdu *a, int32_t *values, uint32_t *quality,
					     unsigned max)
{
	unsigned n = sv_asdu_nchannels(a), i = 0;
	const uint8_t *d = a->seqData;

	if (n > max)
		n = max;
#if defined(__SSE2__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	for (; i + 4 <= n; i += 4, d += 32) {
		__m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)d);
		__m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(d + 16));

		/* byte swap of each 32-bit word: swap the bytes of each 16-bit half, then the halves */
		x0 = _mm_or_si128(_mm_slli_epi16(x0, 8), _mm_srli_epi16(x0, 8));
		x1 = _mm_or_si128(_mm_slli_epi16(x1, 8), _mm_srli_epi16(x1, 8));
		x0 = _mm_shufflehi_epi16(_mm_shufflelo_epi16(x0, 0xB1), 0xB1);
		x1 = _mm_shufflehi_epi16(_mm_shufflelo_epi16(x1, 0xB1), 0xB1);
		/* x0 = v0 q0 v1 q1, x1 = v2 q2 v3 q3: de-interleave */
		_mm_storeu_si128((__m128i *)(void *)(values + i),
				 _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(x0), _mm_castsi128_ps(x1), 0x88)));
		_mm_storeu_si128((__m128i *)(void *)(quality + i),
				 _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(x0), _mm_castsi128_ps(x1), 0xDD)));
	}
#endif
	for (; i < n; i++, d += 8) {
		values[i] = (int32_t)sv_be32(d);
		quality[i] = sv_be32(d + 4);
	}
	return n;
}

/*
 * Publishing fast path. A template is one encoded frame of a stream plus the offsets of what changes per
 * frame; IEC 61850-9-2 fixes the widths of smpCnt, refrTm and the dataset, so per frame only those octets
 * are rewritten, in place, and no length changes.
 */
#define SV_TEMPLATE_MAX_ASDU 16
#define SV_TEMPLATE_MAX_FRAME 1536

struct sv_template {
	uint8_t frame[SV_TEMPLATE_MAX_FRAME];
	uint16_t len;
	uint16_t noASDU;
	uint16_t nchannels; /* INT32 + quality pairs per ASDU (seqData_len / 8) */
	uint16_t prp_off;   /* offset of the PRP sequence number, 0 without PRP */
	uint16_t smpcnt_off[SV_TEMPLATE_MAX_ASDU];
	uint16_t seqdata_off[SV_TEMPLATE_MAX_ASDU];
	uint16_t refrtm_off[SV_TEMPLATE_MAX_ASDU]; /* 0 when the ASDU has no refrTm */
};

/*
 * Encodes @v once into @t and records the patch offsets. Every ASDU's seqData must be 8 * n octets with the
 * same n (its content is the initial values). Returns 0, -EINVAL (shape not templatable, see
 * sv_codec_encode) or -ENOSPC (frame over SV_TEMPLATE_MAX_FRAME, over SV_TEMPLATE_MAX_ASDU ASDUs).
 */
int sv_template_init(struct sv_template *t, const struct sv_view *v);

static inline void sv_template_set_smpcnt(struct sv_template *t, unsigned asdu, uint16_t smpCnt)
{
	sv_put_be16(t->frame + t->smpcnt_off[asdu], smpCnt);
}

/* Channel values (and qualities unless @quality is NULL) of one ASDU; t->nchannels entries each. */
static inline void sv_template_set_values(struct sv_template *t, unsigned asdu, const int32_t *values,
					  const uint32_t *quality)
{
	uint8_t *p = t->frame + t->seqdata_off[asdu];
	unsigned n = t->nchannels;

	if (quality) {
		for (unsigned i = 0; i < n; i++, p += 8) {
			sv_put_be32(p, (uint32_t)values[i]);
			sv_put_be32(p + 4, quality[i]);
		}
	} else {
		for (unsigned i = 0; i < n; i++, p += 8)
			sv_put_be32(p, (uint32_t)values[i]);
	}
}

/* No-op on an ASDU without refrTm. */
static inline void sv_template_set_refrtm(struct sv_template *t, unsigned asdu, int64_t ns_utc,
					  uint8_t time_quality)
{
	if (t->refrtm_off[asdu])
		sv_utctime_put(t->frame + t->refrtm_off[asdu], ns_utc, time_quality);
}

static inline void sv_template_set_prp_seq(struct sv_template *t, uint16_t seq)
{
	if (t->prp_off)
		sv_put_be16(t->frame + t->prp_off, seq);
}

/*
 * A decoder that remembers the shapes of the streams it sees. A stream sends the same octets frame after
 * frame except smpCnt, refrTm, seqData and a PRP sequence number, none of which has a validity rule of its
 * own. sv_decoder_decode() compares a frame with the last fully decoded and validated frame of the same shape
 * (every other octet equal, same length); on a match it copies that view and reads only the changing fields,
 * which gives exactly what sv_codec_decode() would (checked by the fuzz target). Anything else goes through
 * sv_codec_decode() and, when it decodes, is remembered. 256 shapes in 64 sets of four (first in, first out),
 * the set chosen by a hash of destination MAC, APPID and length: more streams than that, or a collision,
 * only cost full decodes. Not thread-safe: one decoder per thread.
 */
struct sv_decoder;

/* Allocates a decoder (about 9 MiB, written once; nothing is allocated per frame). 0 or -ENOMEM. */
int sv_decoder_create(struct sv_decoder **d);
void sv_decoder_destroy(struct sv_decoder *d);
/* Same contract as sv_codec_decode(). */
int sv_decoder_decode(struct sv_decoder *d, const uint8_t *frame, size_t len, struct sv_view *v,
		      struct sv_codec_error *err);
/* Frames decoded from a remembered shape, and through the full decoder. */
void sv_decoder_counts(const struct sv_decoder *d, uint64_t *hits, uint64_t *full);

#endif /* SV_CODEC_H */
