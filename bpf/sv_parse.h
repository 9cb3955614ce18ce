/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The SV frame walk of both BPF programs (as xdp-tools' parsing_helpers.h serves its programs): svsub's XDP
 * program takes the link-layer part (sv_parse_l2), svtrace the whole walk to the first ASDU's smpCnt
 * (sv_parse_frame). It reads a byte window alone, never an skb or an xdp_md, so the same code also compiles as
 * host C: libsv's codec takes its link-layer walk from here, and tests call it directly (the tracer's
 * tracepoints have no BPF_PROG_TEST_RUN). The rules are sv_wire.h's.
 *
 * The window @w is the frame from its first EtherType or TPID on (offset SV_ETH_ADDRS_LEN: the MAC addresses
 * play no part), @n octets of it; positions in struct sv_parse count from there. Only w[0 .. n) is read, each
 * read as w[i & mask] after a check of i against n: bounded loads the verifier accepts on a buffer of at least
 * mask + 1 octets (SV_PARSE_L2_WINDOW for sv_parse_l2, SV_PARSE_WINDOW for sv_parse_frame). In BPF that buffer
 * is a map value: a variable offset into the stack would need CAP_PERFMON. Bounded loops only (two tags, four
 * length octets), no allocation.
 */
#ifndef SV_PARSE_H
#define SV_PARSE_H

#include "sv_wire.h"

#ifdef __bpf__
#define SV_PARSE_FN static __always_inline
#else
#define SV_PARSE_FN static inline
#endif

/* Octets sv_parse_l2 may read: two VLAN tags, an HSR tag, the SV EtherType and header (24), rounded up. */
#define SV_PARSE_L2_WINDOW 32
/* Octets sv_parse_frame reads at the most (a window cut there gives what fits: longer headers are
 * SV_PARSE_PDU_BAD). A power of two: the index mask. */
#define SV_PARSE_WINDOW 256
#define SV_PARSE_L2_MASK (SV_PARSE_L2_WINDOW - 1)
#define SV_PARSE_WMASK (SV_PARSE_WINDOW - 1)
_Static_assert(SV_VLAN_MAX_TAGS * SV_VLAN_TAG_LEN + SV_HSR_TAG_LEN + 2 + SV_HEADER_LEN <= SV_PARSE_L2_WINDOW,
	       "the link-layer walk reads beyond its window");

/* How far a walk got. Ordered: >= SV_PARSE_HDR_SHORT is an SV EtherType, >= SV_PARSE_HDR has appid/length. */
enum sv_parse_verdict {
	SV_PARSE_L2_SHORT = 0,	/* the window ends inside the EtherType, a VLAN tag or the HSR tag (short_in) */
	SV_PARSE_NOT_SV = 1,	/* EtherType at et_pos is not SV (after what sv_wire.h allows in front of it) */
	SV_PARSE_HDR_SHORT = 2,	/* SV EtherType; the window ends inside the 8-octet SV header */
	SV_PARSE_HDR = 3,	/* SV header read (sv_parse_l2 stops here) */
	SV_PARSE_PDU_BAD = 4,	/* savPdu not walkable to the first ASDU's smpCnt within the window */
	SV_PARSE_SV = 5,	/* appid, the first ASDU's svID and smpCnt found */
};

/* Where SV_PARSE_L2_SHORT stopped. */
enum sv_parse_short {
	SV_PARSE_SHORT_ETH = 0,	/* no whole EtherType */
	SV_PARSE_SHORT_TAG = 1,	/* a VLAN tag (or the EtherType after it) */
	SV_PARSE_SHORT_HSR = 2,	/* the HSR tag (or the EtherType after it) */
};

/*
 * The walk's result, shared with user space (tests read it from a map): __u types only. Fields past the
 * verdict's stage are unspecified. Wire values in host order.
 */
struct sv_parse {
	__u32 verdict;		/* enum sv_parse_verdict */
	__u16 short_in;		/* enum sv_parse_short, for SV_PARSE_L2_SHORT */
	__u16 ntags;		/* VLAN tags in the bytes: 0..2 */
	__u16 tpid;		/* the inner (last) tag's TPID, 0 without tags */
	__u16 tci;		/* its TCI */
	__u16 hsr;		/* 1: an HSR tag (hsr_path_size, hsr_seq) */
	__u16 hsr_path_size;	/* PathId(4) LSDU_size(12) */
	__u16 hsr_seq;
	__u16 appid;		/* from SV_PARSE_HDR */
	__u16 length;		/* SV Length, from SV_PARSE_HDR */
	__u16 smpcnt;		/* the first ASDU's, for SV_PARSE_SV */
	__u32 et_pos;		/* the last EtherType read: the SV one from SV_PARSE_HDR_SHORT on */
	__u32 sv_pos;		/* APPID, from SV_PARSE_HDR_SHORT */
	__u32 svid_pos;		/* the first ASDU's svID value, for SV_PARSE_SV */
	__u32 svid_len;		/* its length on the wire: 1..SV_MAX_ID_LEN */
	__u32 smp_pos;		/* its smpCnt value (2 octets) */
};

#define SV_PARSE_OFF(type, field) ((__u32)__builtin_offsetof(type, field))

SV_PARSE_FN __u16 sv_parse_be16(const __u8 *w, __u32 i, __u32 mask)
{
	return (__u16)((__u16)w[i & mask] << 8 | w[(i + 1) & mask]);
}

/*
 * The link layer's stages, each at a constant position: the walk's caller gives @i as a literal, so every read
 * of the window is at a constant offset once inlined. A variable offset (one register holding 0, 4 or 8 after
 * the tags) is refused by the verifier without CAP_PERFMON ("pointer arithmetic with it prohibited for
 * !root": its Spectre v1 rules want one limit per instruction), and svsub's XDP program must load with CAP_BPF
 * and CAP_NET_ADMIN alone. Six positions exist: 0, 1 or 2 tags, with or without the HSR tag. In BPF each octet
 * is an inline-asm load with the offset as an immediate: plain C loads at different constants would be merged
 * by the compiler into one load at a register offset (it sinks the code the stages share), which is what the
 * verifier refuses; an asm operand that must be an immediate cannot be merged that way.
 */
#ifdef __bpf__
#define SV_PARSE_OCTET_C(w, i)                                                               \
	({                                                                                   \
		__u32 v_;                                                                    \
		asm volatile("%0 = *(u8 *)(%1 + %2)" : "=r"(v_) : "r"(w), "i"(i));           \
		(__u8)v_;                                                                    \
	})
#else
#define SV_PARSE_OCTET_C(w, i) ((w)[i])
#endif

/* The big-endian 16 bits at the constant position @i. */
SV_PARSE_FN __u16 sv_parse_be16c(const __u8 *w, const __u32 i)
{
	return (__u16)((__u16)SV_PARSE_OCTET_C(w, i) << 8 | SV_PARSE_OCTET_C(w, i + 1));
}

/* The EtherType at @i is the last one before the SV header (tags and HSR tag read): APPID and Length. */
SV_PARSE_FN __u32 sv_parse_l2_sv(const __u8 *w, __u32 n, struct sv_parse *p, const __u32 i)
{
	p->et_pos = i;
	if (sv_parse_be16c(w, i) != SV_ETH_P_SV)
		return p->verdict = SV_PARSE_NOT_SV;
	p->sv_pos = i + 2;
	if (n < i + 2 + SV_HEADER_LEN)
		return p->verdict = SV_PARSE_HDR_SHORT;
	p->appid = sv_parse_be16c(w, i + 2 + SV_PARSE_OFF(struct sv_wire_header, appid));
	p->length = sv_parse_be16c(w, i + 2 + SV_PARSE_OFF(struct sv_wire_header, length));
	return p->verdict = SV_PARSE_HDR;
}

/* The EtherType at @i follows the VLAN tags: an HSR tag, or the SV EtherType. */
SV_PARSE_FN __u32 sv_parse_l2_hsr(const __u8 *w, __u32 n, struct sv_parse *p, const __u32 i)
{
	if (sv_parse_be16c(w, i) != SV_ETH_P_HSR)
		return sv_parse_l2_sv(w, n, p, i);
	if (n < i + SV_HSR_TAG_LEN + 2) {
		p->short_in = SV_PARSE_SHORT_HSR;
		return p->verdict = SV_PARSE_L2_SHORT;
	}
	p->hsr = 1;
	p->hsr_path_size = sv_parse_be16c(w, i + SV_PARSE_OFF(struct sv_wire_hsr, path_size));
	p->hsr_seq = sv_parse_be16c(w, i + SV_PARSE_OFF(struct sv_wire_hsr, seq));
	return sv_parse_l2_sv(w, n, p, i + SV_HSR_TAG_LEN);
}

/* The EtherType at @i is a VLAN tag's TPID (tag number @k, 0 the outer): its TCI. 0, or -1 when the window
 * ends inside the tag or the EtherType after it (p->verdict SV_PARSE_L2_SHORT). */
SV_PARSE_FN int sv_parse_l2_tag(const __u8 *w, __u32 n, struct sv_parse *p, const __u32 i, const __u16 k)
{
	if (n < i + SV_VLAN_TAG_LEN + 2) {
		p->short_in = SV_PARSE_SHORT_TAG;
		p->verdict = SV_PARSE_L2_SHORT;
		return -1;
	}
	p->ntags = k + 1;
	p->tpid = sv_parse_be16c(w, i);
	p->tci = sv_parse_be16c(w, i + SV_PARSE_OFF(struct sv_wire_vlan, tci));
	return 0;
}

/*
 * The link layer and the SV header: VLAN tags (an outer 802.1ad or 802.1Q, an inner 802.1Q), HSR tag,
 * EtherType, APPID and Length. Returns the verdict (also in p->verdict): SV_PARSE_L2_SHORT, SV_PARSE_NOT_SV,
 * SV_PARSE_HDR_SHORT or SV_PARSE_HDR.
 */
SV_PARSE_FN __u32 sv_parse_l2(const __u8 *w, __u32 n, struct sv_parse *p)
{
	const __u32 t = SV_VLAN_TAG_LEN;
	__u16 et;

	p->short_in = SV_PARSE_SHORT_ETH;
	p->ntags = 0;
	p->tpid = 0;
	p->tci = 0;
	p->hsr = 0;
	p->et_pos = 0;
	if (n > SV_PARSE_L2_WINDOW)
		n = SV_PARSE_L2_WINDOW;
	if (n < 2)
		return p->verdict = SV_PARSE_L2_SHORT;
	et = sv_parse_be16c(w, 0);
	if (et != SV_ETH_P_8021Q && et != SV_ETH_P_8021AD)
		return sv_parse_l2_hsr(w, n, p, 0);
	if (sv_parse_l2_tag(w, n, p, 0, 0))
		return p->verdict;
	if (sv_parse_be16c(w, t) != SV_ETH_P_8021Q)	/* an inner tag is a C-tag */
		return sv_parse_l2_hsr(w, n, p, t);
	if (sv_parse_l2_tag(w, n, p, t, 1))
		return p->verdict;
	return sv_parse_l2_hsr(w, n, p, 2 * t);
}

/* BER definite length at *@pos (X.690 §8.1.3: short form, or 1..4 length octets), within @n. 0 and *@pos past
 * it, or -1. */
SV_PARSE_FN int sv_parse_len(const __u8 *w, __u32 n, __u32 *pos, __u32 *len)
{
	const __u32 m = SV_PARSE_WMASK;
	__u32 i = *pos, k, nb, v = 0;
	__u8 b;

	if (i >= n)
		return -1;
	b = w[i & m];
	if (b < SV_BER_LONG) {
		*len = b;
		*pos = i + 1;
		return 0;
	}
	nb = b & ~SV_BER_LONG;
	if (nb == 0 || nb > SV_BER_MAX_LEN_OCTETS || i + nb >= n)
		return -1;
	for (k = 1; k <= SV_BER_MAX_LEN_OCTETS; k++)
		if (k <= nb)
			v = v << 8 | w[(i + k) & m];
	*len = v;
	*pos = i + 1 + nb;
	return 0;
}

/* The element at *@pos has tag @tag: 0 and *@pos at its value, *@len its length; else -1. */
SV_PARSE_FN int sv_parse_tag(const __u8 *w, __u32 n, __u32 *pos, __u8 tag, __u32 *len)
{
	__u32 i = *pos;

	if (i >= n || w[i & SV_PARSE_WMASK] != tag)
		return -1;
	*pos = i + 1;
	return sv_parse_len(w, n, pos, len);
}

/* Past a value of @len octets at *@pos; -1 if nothing of the window would be left after it (the walk always
 * needs another element). */
SV_PARSE_FN int sv_parse_skip(__u32 n, __u32 *pos, __u32 len)
{
	if (len >= n - *pos)
		return -1;
	*pos += len;
	return 0;
}

/*
 * The whole walk: sv_parse_l2, then savPdu [APPLICATION 0] { noASDU [0], security [1] OPTIONAL, seqASDU [2] {
 * ASDU { svID [0], datSet [1] OPTIONAL, smpCnt [2] ... } ... } } to the first ASDU's smpCnt (IEC 61850-9-2
 * §8.5.3, Annex A). Structure only: what a tracer needs to tell streams and frames apart, not the codec's
 * checks (svID's characters, the fields after smpCnt, lengths that end beyond the window). Only the first
 * ASDU is walked. Returns the verdict (also in p->verdict).
 */
SV_PARSE_FN __u32 sv_parse_frame(const __u8 *w, __u32 n, struct sv_parse *p)
{
	__u32 pos, len;

	if (sv_parse_l2(w, n, p) != SV_PARSE_HDR)
		return p->verdict;
	if (n > SV_PARSE_WINDOW)
		n = SV_PARSE_WINDOW;
	p->verdict = SV_PARSE_PDU_BAD;
	if (p->length < SV_MIN_LENGTH)
		return p->verdict;
	pos = p->sv_pos + SV_HEADER_LEN;
	if (sv_parse_tag(w, n, &pos, SV_TAG_SAVPDU, &len) ||
	    sv_parse_tag(w, n, &pos, SV_TAG_NOASDU, &len) || sv_parse_skip(n, &pos, len))
		return p->verdict;
	if (w[pos & SV_PARSE_WMASK] == SV_TAG_SECURITY || w[pos & SV_PARSE_WMASK] == SV_TAG_SECURITY_C) {
		pos++;
		if (sv_parse_len(w, n, &pos, &len) || sv_parse_skip(n, &pos, len))
			return p->verdict;
	}
	if (sv_parse_tag(w, n, &pos, SV_TAG_SEQASDU, &len) || sv_parse_tag(w, n, &pos, SV_TAG_ASDU, &len) ||
	    sv_parse_tag(w, n, &pos, SV_TAG_SVID, &len))
		return p->verdict;
	if (len == 0 || len > SV_MAX_ID_LEN)
		return p->verdict;
	p->svid_pos = pos;
	p->svid_len = len;
	if (sv_parse_skip(n, &pos, len))
		return p->verdict;
	if (w[pos & SV_PARSE_WMASK] == SV_TAG_DATSET) {
		pos++;
		if (sv_parse_len(w, n, &pos, &len) || sv_parse_skip(n, &pos, len))
			return p->verdict;
	}
	if (sv_parse_tag(w, n, &pos, SV_TAG_SMPCNT, &len) || len != SV_SMPCNT_LEN || n - pos < SV_SMPCNT_LEN)
		return p->verdict;
	p->smp_pos = pos;
	p->smpcnt = sv_parse_be16(w, pos, SV_PARSE_WMASK);
	return p->verdict = SV_PARSE_SV;
}

#endif /* SV_PARSE_H */
