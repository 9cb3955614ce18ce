/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The IEC 61850-9-2 Sampled Values wire format, written once: EtherTypes and tags in front of the SV header, the
 * 8-octet SV header, the ASN.1 tags of savPdu and ASDU, the fixed widths and the limits.
 *
 * Included by both BPF programs (through sv_parse.h, the frame walk they share) and by libsv's codec
 * (common/sv_codec.h re-exports it). It lives here, in bpf/, beside the programs it is shared with, as the
 * layout wants every header a BPF program shares with user space; libsv has bpf/ on its include path.
 * Constants and __u-typed layouts only: no pointers, no bit-fields (big-endian fields are __u16 as read off the
 * wire; the sizes are checked where the file is compiled).
 *
 * Frame: dst(6) src(6) [VLAN tag(4) [VLAN tag(4)]] [HSR tag(6)] 0x88BA | SV header(8) | savPdu | [padding] [PRP RCT(6)]
 * savPdu 0x60 { noASDU 0x80, [security 0x81|0xA1], seqASDU 0xA2 { ASDU 0x30 { svID 0x80, [datSet 0x81],
 *   smpCnt 0x82(2), confRev 0x83(4), [refrTm 0x84(8)], smpSynch 0x85(1), [smpRate 0x86(2)], seqData 0x87(n),
 *   [smpMod 0x88(2)], [gmIdentity 0x89(8)] } ... } }             (IEC 61850-9-2 Ed 2.1 §8.5, Annex A)
 */
#ifndef SV_WIRE_H
#define SV_WIRE_H

#ifndef __bpf__
#include <linux/types.h>	/* BPF programs have the __u types from vmlinux.h */
#endif

/* ---- EtherTypes (IEEE registry) ---- */
#define SV_ETH_P_SV 0x88BA	/* IEC 61850-9-2 §8.2 */
#define SV_ETH_P_8021Q 0x8100	/* C-tag (IEEE 802.1Q §9.5) */
#define SV_ETH_P_8021AD 0x88A8	/* S-tag (IEEE 802.1Q §9.5, 802.1ad): the outer tag of QinQ */
#define SV_ETH_P_HSR 0x892F	/* HSR tag (IEC 62439-3 §5.5) */
#define SV_PRP_SUFFIX 0x88FB	/* last two octets of a PRP redundancy control trailer (IEC 62439-3 §4.1.10) */

/*
 * In front of the SV EtherType, in this order, each optional: an outer VLAN tag (802.1ad or 802.1Q), an inner
 * 802.1Q tag (so QinQ is 802.1ad + 802.1Q, or two 802.1Q tags), then an HSR tag. A PRP trailer is at the end
 * of the frame and changes nothing at its start. Anything else in front of the SV EtherType: not SV.
 */
#define SV_ETH_ADDRS_LEN 12	/* destination and source MAC: the first EtherType or TPID follows */
#define SV_ETH_HLEN 14
#define SV_VLAN_MAX_TAGS 2

struct sv_wire_vlan {		/* VLAN tag */
	__u16 tpid;		/* SV_ETH_P_8021AD (outer only) or SV_ETH_P_8021Q */
	__u16 tci;		/* PCP(3) DEI(1) VID(12) */
};
#define SV_VLAN_TAG_LEN 4
#define SV_VLAN_VID_MASK 0x0fff

struct sv_wire_hsr {		/* HSR tag */
	__u16 ethertype;	/* SV_ETH_P_HSR */
	__u16 path_size;	/* PathId(4) LSDU_size(12) */
	__u16 seq;		/* SeqNr */
};				/* then the encapsulated EtherType */
#define SV_HSR_TAG_LEN 6

struct sv_wire_prp {		/* PRP redundancy control trailer: the last six octets of the frame */
	__u16 seq;		/* SeqNr */
	__u16 lan_size;		/* LanId(4): 0xA or 0xB, LSDU_size(12) */
	__u16 suffix;		/* SV_PRP_SUFFIX */
};
#define SV_PRP_RCT_LEN 6
#define SV_PRP_LAN_A 0xA
#define SV_PRP_LAN_B 0xB

/* ---- SV header (IEC 61850-9-2 §8.5.2): after the SV EtherType ---- */
struct sv_wire_header {
	__u16 appid;
	__u16 length;		/* octets from APPID to the end of savPdu */
	__u16 reserved1;	/* bit 15: simulated ("S", Ed 2 §5.3.3.4) */
	__u16 reserved2;
};
#define SV_HEADER_LEN 8
#define SV_MIN_LENGTH (SV_HEADER_LEN + 2)	/* the header and the smallest savPdu (tag, length 0) */
#define SV_RESERVED1_SIMULATED 0x8000

/* ---- ASN.1 BER (IEC 61850-9-2 Annex A, §8.5.3 Table 14): every tag is one octet ---- */
enum sv_wire_tag {
	SV_TAG_SAVPDU = 0x60,		/* [APPLICATION 0] IMPLICIT SEQUENCE */
	SV_TAG_NOASDU = 0x80,		/* [0] INTEGER (1..65535) */
	SV_TAG_SECURITY = 0x81,		/* [1] ANY OPTIONAL (IEC 62351-6), primitive */
	SV_TAG_SECURITY_C = 0xA1,	/* ... or constructed */
	SV_TAG_SEQASDU = 0xA2,		/* [2] SEQUENCE OF ASDU */
	SV_TAG_ASDU = 0x30,		/* SEQUENCE */
	SV_TAG_SVID = 0x80,		/* [0] VisibleString */
	SV_TAG_DATSET = 0x81,		/* [1] VisibleString OPTIONAL */
	SV_TAG_SMPCNT = 0x82,		/* [2] OCTET STRING (SIZE(2)) */
	SV_TAG_CONFREV = 0x83,		/* [3] OCTET STRING (SIZE(4)) */
	SV_TAG_REFRTM = 0x84,		/* [4] UtcTime OPTIONAL */
	SV_TAG_SMPSYNCH = 0x85,		/* [5] OCTET STRING (SIZE(1)) */
	SV_TAG_SMPRATE = 0x86,		/* [6] OCTET STRING (SIZE(2)) OPTIONAL */
	SV_TAG_SEQDATA = 0x87,		/* [7] Data */
	SV_TAG_SMPMOD = 0x88,		/* [8] OCTET STRING (SIZE(2)) OPTIONAL */
	SV_TAG_GMID = 0x89,		/* [9] OCTET STRING (SIZE(8)) OPTIONAL */
};

/* BER definite lengths (X.690 §8.1.3): below 0x80 the length itself, else 0x80 | the number of length octets
 * that follow. 0x80 alone (indefinite) never appears in SV; more than 4 octets cannot describe a frame. */
#define SV_BER_LONG 0x80
#define SV_BER_MAX_LEN_OCTETS 4

/* Fixed widths of ASDU fields (Table 14). */
#define SV_SMPCNT_LEN 2
#define SV_CONFREV_LEN 4
#define SV_REFRTM_LEN 8
#define SV_SMPSYNCH_LEN 1
#define SV_SMPRATE_LEN 2
#define SV_SMPMOD_LEN 2
#define SV_GMIDENTITY_LEN 8

/* svID and datSet are VisibleString; 9-2 limits them to 129 octets (the MSVCB name length). */
#define SV_MAX_ID_LEN 129

_Static_assert(sizeof(struct sv_wire_vlan) == SV_VLAN_TAG_LEN, "VLAN tag");
_Static_assert(sizeof(struct sv_wire_hsr) == SV_HSR_TAG_LEN, "HSR tag");
_Static_assert(sizeof(struct sv_wire_prp) == SV_PRP_RCT_LEN, "PRP trailer");
_Static_assert(sizeof(struct sv_wire_header) == SV_HEADER_LEN, "SV header");

#endif /* SV_WIRE_H */
