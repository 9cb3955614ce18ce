// SPDX-License-Identifier: Apache-2.0
/*
 * The wire rules' readers on one frame set, verdict for verdict: (1) libsv's codec (sv_codec_decode), (2) svsub's
 * XDP program bpf/sv_xdp.bpf.c, (3) bpf/sv_parse.h's walk compiled as host C, (4) the same walk compiled for BPF
 * in an XDP wrapper (sv_parse_xdp.bpf.c). (2) and (4) run through BPF_PROG_TEST_RUN: built with WIRE_BPF, as
 * root. svtrace's tracepoint programs have no test run; they run (3)'s code on a copy of the frame, as (4) does.
 *
 * Frames: untagged, 802.1Q, QinQ (802.1ad + 802.1Q, two 802.1Q), 802.1ad alone, HSR (alone, behind one or two
 * tags), PRP trailer, a 129-octet svID, 8 ASDUs, security, datSet, long-form BER lengths (0x81..0x84), wrong
 * tags and lengths, not-SV frames, every prefix of a QinQ + HSR frame (cut at every stage), and the frames of
 * the real captures in $SVKIT_SHARED/captures (skipped without them). Each frame is parsed from a buffer of its
 * exact length, so a sanitizer build catches a read past it.
 *
 * Required:
 *  - one link-layer class (cut in the EtherType, a tag or the HSR tag; not SV; SV header cut; SV header whole)
 *    from the codec (its error name), sv_parse_l2 on the host, sv_xdp (its counters) and the BPF walk;
 *  - the codec accepts a frame => the walk says SV with the codec's APPID, first svID and smpCnt, and the
 *    codec's VLAN and HSR fields;
 *  - a prefix: the walk says SV exactly when it holds the first ASDU's smpCnt, with the whole frame's values;
 *  - host and BPF walks fill struct sv_parse identically; sv_xdp checks the APPID the walk read (allow-list);
 *  - each named frame gets the verdicts its row says.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sv_codec.h"
#include "sv_parse.h"
#include "sv_pcap.h"
#ifdef WIRE_AFP
#include "svrx_private.h"
/* libpcap's classic BPF interpreter (pcap/bpf.h, whose struct bpf_insn is sock_filter's layout, would clash
 * with linux/bpf.h's in the WIRE_BPF build) */
unsigned int bpf_filter(const struct sock_filter *pc, const unsigned char *p, unsigned int wirelen,
			unsigned int buflen);
#endif

#ifdef WIRE_BPF
#include <linux/bpf.h>

#include "sv_parse_xdp.skel.h"
#include "sv_xdp_test.h"
#endif

_Static_assert(sizeof(struct sv_parse) == 44, "struct sv_parse drifted from bpf/sv_parse.h");

static unsigned checked, checked_bpf;

/* ---- the link-layer class, as each reader tells it ---- */

enum l2class { C_ETH, C_TAG, C_HSR, C_NOT_SV, C_HDR_SHORT, C_SV, C__N };
static const char *const class_name[C__N] = { "cut-in-ethertype", "cut-in-vlan-tag", "cut-in-hsr-tag", "not-sv",
					       "sv-header-cut", "sv" };

static enum l2class codec_class(int code)
{
	switch (code) {
	case SV_E_ETH_TRUNCATED:
		return C_ETH;
	case SV_E_VLAN_TRUNCATED:
		return C_TAG;
	case SV_E_HSR_TRUNCATED:
		return C_HSR;
	case SV_E_NOT_SV:
		return C_NOT_SV;
	case SV_E_HEADER_TRUNCATED:
		return C_HDR_SHORT;
	default:
		return C_SV;
	}
}

static enum l2class parse_class(const struct sv_parse *p)
{
	switch (p->verdict) {
	case SV_PARSE_L2_SHORT:
		return p->short_in == SV_PARSE_SHORT_HSR ? C_HSR : p->short_in == SV_PARSE_SHORT_TAG ? C_TAG : C_ETH;
	case SV_PARSE_NOT_SV:
		return C_NOT_SV;
	case SV_PARSE_HDR_SHORT:
		return C_HDR_SHORT;
	default:
		return C_SV;
	}
}

/* ---- the frame set ---- */

struct frame {
	char name[96];
	uint8_t b[2048];
	uint32_t len;
	/* the row's expectations; has_want 0 for prefixes and captures */
	int has_want;
	uint32_t walk;		/* sv_parse_frame's verdict */
	int codec;		/* SV_OK or SV_E_* */
	uint16_t appid, smpcnt;	/* for walk == SV_PARSE_SV */
	uint8_t svid[SV_MAX_ID_LEN];
	uint32_t svid_len;
};

#define MAX_ROWS 64
static struct frame rows[MAX_ROWS];
static unsigned nrows;
static struct sv_view view; /* large: off the stack */
static uint8_t seqdata[8][64];
static char long_svid[SV_MAX_ID_LEN + 1];

static const uint8_t mac_dst[6] = { 0x01, 0x0c, 0xcd, 0x04, 0x00, 0x01 };
static const uint8_t mac_src[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t security[10] = { 0x30, 0x08, 1, 2, 3, 4, 5, 6, 7, 8 };

/* A 9-2LE-like view: @nasdu ASDUs, smpCnt 1000, 1001, ..., 802.1Q VID 5 PCP 4 when @vlan. */
static struct sv_view *view_of(unsigned nasdu, const char *svid, int vlan)
{
	memset(&view, 0, sizeof(view));
	view.dst = mac_dst;
	view.src = mac_src;
	view.vlan = vlan != 0;
	view.vlan_pcp = 4;
	view.vlan_id = 5;
	view.appid = 0x4000;
	view.noASDU = (uint16_t)nasdu;
	for (unsigned i = 0; i < nasdu; i++) {
		struct sv_asdu *a = &view.asdu[i];

		a->svID = (const uint8_t *)svid;
		a->svID_len = (uint16_t)strlen(svid);
		a->smpCnt = (uint16_t)(1000 + i);
		a->confRev = 1;
		a->smpSynch = SV_SMPSYNCH_GLOBAL;
		a->seqData = seqdata[i];
		a->seqData_len = sizeof(seqdata[i]);
	}
	return &view;
}

/* Encodes @v as a new row expected to be SV for every reader. */
static struct frame *row(const char *name, const struct sv_view *v)
{
	struct frame *f = &rows[nrows++];
	int n;

	if (nrows > MAX_ROWS) {
		fprintf(stderr, "FAIL wire_verdicts: more than %d rows\n", MAX_ROWS);
		exit(1);
	}
	snprintf(f->name, sizeof(f->name), "%s", name);
	n = sv_codec_encode(v, f->b, sizeof(f->b));
	if (n < 0) {
		fprintf(stderr, "FAIL wire_verdicts: encoding '%s': %s\n", name, strerror(-n));
		exit(1);
	}
	f->len = (uint32_t)n;
	f->has_want = 1;
	f->walk = SV_PARSE_SV;
	f->codec = SV_OK;
	f->appid = v->appid;
	f->smpcnt = v->asdu[0].smpCnt;
	f->svid_len = v->asdu[0].svID_len;
	memcpy(f->svid, v->asdu[0].svID, f->svid_len);
	return f;
}

static struct frame *row_like(const char *name, const struct frame *from)
{
	struct frame *f = &rows[nrows++];

	*f = *from;
	snprintf(f->name, sizeof(f->name), "%s", name);
	return f;
}

static void insert(struct frame *f, uint32_t at, const uint8_t *p, uint32_t n)
{
	memmove(f->b + at + n, f->b + at, f->len - at);
	memcpy(f->b + at, p, n);
	f->len += n;
}

/* A VLAN tag in front of the frame's first EtherType / TPID. */
static struct frame *tag(struct frame *f, uint16_t tpid, uint16_t tci)
{
	uint8_t t[SV_VLAN_TAG_LEN] = { (uint8_t)(tpid >> 8), (uint8_t)tpid, (uint8_t)(tci >> 8), (uint8_t)tci };

	insert(f, SV_ETH_ADDRS_LEN, t, sizeof(t));
	return f;
}

static struct frame *expect(struct frame *f, uint32_t walk, int codec)
{
	f->walk = walk;
	f->codec = codec;
	return f;
}

/* Where things are in an untagged single-ASDU frame of view_of(1, "MU01", 0) (short-form lengths). */
enum {
	AT_APPID = SV_ETH_HLEN,
	AT_LENGTH = AT_APPID + 2,
	AT_SAVPDU = AT_APPID + SV_HEADER_LEN,
	AT_NOASDU = AT_SAVPDU + 2,
	AT_SEQASDU = AT_NOASDU + 3,
	AT_ASDU = AT_SEQASDU + 2,
	AT_SVID = AT_ASDU + 2,
	AT_SMPCNT = AT_SVID + 2 + 4,
};

/* The savPdu's length (short form at AT_SAVPDU + 1) rewritten in the long form with @nb octets. */
static struct frame *widen_savpdu_len(struct frame *f, unsigned nb)
{
	uint8_t l = f->b[AT_SAVPDU + 1], w[SV_BER_MAX_LEN_OCTETS] = { 0 };
	uint16_t length = (uint16_t)(f->b[AT_LENGTH] << 8 | f->b[AT_LENGTH + 1]);

	w[nb - 1] = l;
	f->b[AT_SAVPDU + 1] = (uint8_t)(SV_BER_LONG | nb);
	insert(f, AT_SAVPDU + 2, w, nb);
	length = (uint16_t)(length + nb);
	f->b[AT_LENGTH] = (uint8_t)(length >> 8);
	f->b[AT_LENGTH + 1] = (uint8_t)length;
	return f;
}

static void build_rows(void)
{
	struct frame *base, *f;

	for (unsigned i = 0; i < SV_MAX_ID_LEN; i++)
		long_svid[i] = (char)('A' + i % 26);
	/* link-layer forms */
	base = row("untagged", view_of(1, "MU01", 0));
	row("802.1Q", view_of(1, "MU01", 1));
	tag(row("QinQ 802.1ad + 802.1Q", view_of(1, "MU01", 1)), SV_ETH_P_8021AD, 100);
	tag(row("QinQ 802.1Q + 802.1Q", view_of(1, "MU01", 1)), SV_ETH_P_8021Q, 100);
	tag(row("802.1ad alone", view_of(1, "MU01", 0)), SV_ETH_P_8021AD, 100);
	view_of(1, "MU01", 0)->redundancy = SV_RED_HSR;
	view.red_lan = 1;
	view.red_seq = 77;
	row("HSR", &view);
	view.vlan = true;
	row("802.1Q + HSR", &view);
	tag(row("802.1ad + 802.1Q + HSR", &view), SV_ETH_P_8021AD, 100);
	view_of(1, "MU01", 1)->redundancy = SV_RED_PRP;
	view.red_lan = SV_PRP_LAN_B;
	view.red_seq = 0xBEEF;
	row("802.1Q + PRP trailer", &view);
	view.vlan = false;
	row("PRP trailer", &view);
	/* the savPdu */
	row("svID of 129 octets", view_of(1, long_svid, 1));
	tag(row("8 ASDUs, QinQ", view_of(8, "MU01", 1)), SV_ETH_P_8021AD, 100);
	view_of(1, "MU01", 1)->security = security;
	view.security_len = sizeof(security);
	view.security_tag = SV_TAG_SECURITY_C;
	row("security [1] constructed", &view);
	view_of(1, "MU01", 0)->asdu[0].datSet = (const uint8_t *)"LD0/LLN0$PhsMeas1";
	view.asdu[0].datSet_len = 17;
	view.asdu[0].present |= SV_HAS_DATSET;
	row("datSet", &view);
	widen_savpdu_len(row_like("savPdu length 0x81 (not minimal)", base), 1);
	widen_savpdu_len(row_like("savPdu length 0x82", base), 2);
	widen_savpdu_len(row_like("savPdu length 0x83", base), 3);
	widen_savpdu_len(row_like("savPdu length 0x84", base), 4);
	/* not SV: the same verdict everywhere, whatever follows */
	f = expect(row_like("IPv4", base), SV_PARSE_NOT_SV, SV_E_NOT_SV);
	f->b[SV_ETH_ADDRS_LEN] = 0x08;
	f->b[SV_ETH_ADDRS_LEN + 1] = 0x00;
	f = expect(row("GOOSE behind 802.1Q", view_of(1, "MU01", 1)), SV_PARSE_NOT_SV, SV_E_NOT_SV);
	f->b[SV_ETH_HLEN + 2] = 0x88;
	f->b[SV_ETH_HLEN + 3] = 0xB8;
	f = tag(tag(row_like("802.1Q outside 802.1ad", base), SV_ETH_P_8021AD, 100), SV_ETH_P_8021Q, 5);
	expect(f, SV_PARSE_NOT_SV, SV_E_NOT_SV);
	f = tag(tag(row("three tags", view_of(1, "MU01", 1)), SV_ETH_P_8021Q, 6), SV_ETH_P_8021AD, 100);
	expect(f, SV_PARSE_NOT_SV, SV_E_NOT_SV);
	/* SV, savPdu not walkable: wrong tags and lengths */
	f = expect(row_like("Length 9", base), SV_PARSE_PDU_BAD, SV_E_LENGTH_TOO_SMALL);
	f->b[AT_LENGTH] = 0;
	f->b[AT_LENGTH + 1] = 9;
	expect(row_like("savPdu tag 0x61", base), SV_PARSE_PDU_BAD, SV_E_APDU_TAG)->b[AT_SAVPDU] = 0x61;
	expect(row_like("savPdu length indefinite", base), SV_PARSE_PDU_BAD, SV_E_BER_LENGTH)->b[AT_SAVPDU + 1] =
		SV_BER_LONG;
	expect(row_like("noASDU tag 0x82", base), SV_PARSE_PDU_BAD, SV_E_NOASDU_MISSING)->b[AT_NOASDU] = 0x82;
	expect(row_like("seqASDU tag 0xA3", base), SV_PARSE_PDU_BAD, SV_E_SEQASDU_MISSING)->b[AT_SEQASDU] = 0xA3;
	expect(row_like("ASDU tag 0x31", base), SV_PARSE_PDU_BAD, SV_E_ASDU_TAG)->b[AT_ASDU] = 0x31;
	expect(row_like("svID tag 0x81", base), SV_PARSE_PDU_BAD, SV_E_SVID_MISSING)->b[AT_SVID] = SV_TAG_DATSET;
	expect(row_like("svID length 0", base), SV_PARSE_PDU_BAD, SV_E_SVID_LENGTH)->b[AT_SVID + 1] = 0;
	expect(row_like("svID length 5 octets", base), SV_PARSE_PDU_BAD, SV_E_BER_LENGTH)->b[AT_SVID + 1] = 0x85;
	expect(row_like("smpCnt tag 0x83", base), SV_PARSE_PDU_BAD, SV_E_SMPCNT_MISSING)->b[AT_SMPCNT] = 0x83;
	expect(row_like("smpCnt of 3 octets", base), SV_PARSE_PDU_BAD, SV_E_SMPCNT_WIDTH)->b[AT_SMPCNT + 1] = 3;
	/* 80 81 81 'A'...: the length's last octet, found through the codec's view of the valid frame */
	f = row("svID of 130 octets", view_of(1, long_svid, 0));
	if (sv_codec_decode(f->b, f->len, &view, NULL)) {
		fprintf(stderr, "FAIL wire_verdicts: the 129-octet svID frame does not decode\n");
		exit(1);
	}
	f->b[view.asdu[0].svID - f->b - 1] = SV_MAX_ID_LEN + 1;
	expect(f, SV_PARSE_PDU_BAD, SV_E_SVID_LENGTH);
	/* SV for the walk (it reads structure, not characters), an error for the codec */
	f = expect(row_like("svID with 0x7F", base), SV_PARSE_SV, SV_E_SVID_CHARSET);
	f->b[AT_SVID + 3] = 0x7f;
	f->svid[1] = 0x7f;
}

/* ---- the BPF readers ---- */

#ifdef WIRE_BPF
static struct sv_xdp_bpf *xdp, *xdp_allow;
static struct sv_parse_xdp_bpf *walker;

static int test_run(int prog_fd, const uint8_t *b, uint32_t len, __u32 *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = b, .data_size_in = len, .repeat = 1);
	int err = bpf_prog_test_run_opts(prog_fd, &o);

	*retval = o.retval;
	return err;
}

/* sv_xdp's verdict on @b as a class: with no socket in its XSKMAP, a frame it would redirect counts NO_SOCKET. */
static int xdp_class(struct sv_xdp_bpf *s, const uint8_t *b, uint32_t len, uint64_t d[SV_XDP_CNT__MAX])
{
	uint64_t before[SV_XDP_CNT__MAX], after[SV_XDP_CNT__MAX];
	__u32 ret = 0;
	int err;

	sv_xdp_test_counters(s, before);
	err = test_run(bpf_program__fd(s->progs.sv_xdp_redirect), b, len, &ret);
	if (err)
		return -1;
	sv_xdp_test_counters(s, after);
	for (int k = 0; k < SV_XDP_CNT__MAX; k++)
		d[k] = after[k] - before[k];
	if (ret != XDP_PASS)
		return -2;
	return 0;
}

/* (2) and (4) on one frame; @host: the host walk's result (from a zeroed struct). */
static void check_bpf(const char *name, const uint8_t *b, uint32_t len, const struct sv_parse *host)
{
	uint64_t d[SV_XDP_CNT__MAX];
	struct sv_parse bpf = { 0 };
	enum l2class want = parse_class(host), got;
	__u32 zero = 0, ret = 0, appid, one = 1;
	int fd = bpf_map__fd(walker->maps.result);

	if (len < SV_ETH_HLEN)	/* the least BPF_PROG_TEST_RUN takes for XDP */
		return;
	checked_bpf++;
	/* (4) the walk in BPF */
	CHECK(!bpf_map_update_elem(fd, &zero, &bpf, BPF_ANY), "%s: clearing the result", name);
	CHECK(!test_run(bpf_program__fd(walker->progs.sv_parse_run), b, len, &ret) && ret == XDP_PASS,
	      "%s: sv_parse_xdp test run failed (ret %u)", name, ret);
	CHECK(!bpf_map_lookup_elem(fd, &zero, &bpf), "%s: reading the result", name);
	CHECK(!memcmp(&bpf, host, sizeof(bpf)),
	      "%s: BPF walk differs from host: verdict %u/%u appid %#x/%#x smpcnt %u/%u smp_pos %u/%u tags %u/%u",
	      name, bpf.verdict, host->verdict, bpf.appid, host->appid, bpf.smpcnt, host->smpcnt, bpf.smp_pos,
	      host->smp_pos, bpf.ntags, host->ntags);
	/* (2) sv_xdp: TRUNCATED (cut before the SV EtherType), PASS_NOT_SV, TRUNCATED + NO_SOCKET (SV header
	 * cut: handed to user space to be named), NO_SOCKET (redirected with a socket) */
	if (xdp_class(xdp, b, len, d)) {
		CHECK(0, "%s: sv_xdp test run failed or did not pass", name);
		return;
	}
	if (d[SV_XDP_CNT_PASS_NOT_SV] == 1 && d[SV_XDP_CNT_TRUNCATED] == 0 && d[SV_XDP_CNT_NO_SOCKET] == 0)
		got = C_NOT_SV;
	else if (d[SV_XDP_CNT_TRUNCATED] == 1 && d[SV_XDP_CNT_NO_SOCKET] == 0 && d[SV_XDP_CNT_PASS_NOT_SV] == 0)
		got = C_ETH; /* any cut before the SV EtherType */
	else if (d[SV_XDP_CNT_TRUNCATED] == 1 && d[SV_XDP_CNT_NO_SOCKET] == 1)
		got = C_HDR_SHORT;
	else if (d[SV_XDP_CNT_NO_SOCKET] == 1 && d[SV_XDP_CNT_TRUNCATED] == 0 && d[SV_XDP_CNT_PASS_NOT_SV] == 0)
		got = C_SV;
	else
		got = C__N;
	if (want == C_TAG || want == C_HSR)
		want = C_ETH;
	CHECK(got == want, "%s: sv_xdp says %s, the walk %s", name, got < C__N ? class_name[got] : "(counters?)",
	      class_name[want]);
	if (want != C_SV)
		return;
	/* its allow-list sees the APPID the walk read: allowed alone in the list, refused when another is */
	appid = host->appid;
	fd = bpf_map__fd(xdp_allow->maps.sv_xdp_appids);
	CHECK(!bpf_map_update_elem(fd, &appid, &one, BPF_ANY), "%s: allow-list", name);
	CHECK(!xdp_class(xdp_allow, b, len, d) && d[SV_XDP_CNT_NO_SOCKET] == 1 && d[SV_XDP_CNT_NOT_ALLOWED] == 0,
	      "%s: sv_xdp refused APPID %#x with it in its allow-list", name, appid);
	bpf_map_delete_elem(fd, &appid);
	appid ^= 1;
	CHECK(!bpf_map_update_elem(fd, &appid, &one, BPF_ANY), "%s: allow-list", name);
	CHECK(!xdp_class(xdp_allow, b, len, d) && d[SV_XDP_CNT_NOT_ALLOWED] == 1,
	      "%s: sv_xdp took APPID %#x with only %#x in its allow-list", name, host->appid, appid);
	bpf_map_delete_elem(fd, &appid);
}
#endif

/* ---- svsub's AF_PACKET socket filter (classic BPF, run by libpcap's interpreter), with svsub_rx ---- */
#ifdef WIRE_AFP

/* The filter takes what the walk calls SV (a frame cut inside the SV header too, for the decoder to name);
 * with an allow-list, only a whole header whose APPID is in it. */
static void check_afp(const char *name, const uint8_t *b, uint32_t len, const struct sv_parse *l2)
{
	struct sock_filter f[64];
	uint16_t appid[1];
	int n;

	n = svrx_afp_filter(NULL, 0, f, 64);
	CHECK(n > 0, "%s: the AF_PACKET filter does not build: %d", name, n);
	if (n <= 0)
		return;
	CHECK(!bpf_filter(f, b, len, len) == !(l2->verdict >= SV_PARSE_HDR_SHORT),
	      "%s: the AF_PACKET filter %s it, the walk says %u", name,
	      bpf_filter(f, b, len, len) ? "takes" : "drops", l2->verdict);
	appid[0] = l2->verdict == SV_PARSE_HDR ? l2->appid : 0x4000;
	n = svrx_afp_filter(appid, 1, f, 64);
	CHECK(n > 0 && !bpf_filter(f, b, len, len) == !(l2->verdict == SV_PARSE_HDR),
	      "%s: the AF_PACKET filter with APPID %#x allowed disagrees with the walk (%u)", name, appid[0],
	      l2->verdict);
	appid[0] ^= 1;
	n = svrx_afp_filter(appid, 1, f, 64);
	CHECK(n > 0 && !bpf_filter(f, b, len, len),
	      "%s: the AF_PACKET filter takes it with only APPID %#x allowed", name, appid[0]);
}
#else
static void check_afp(const char *name, const uint8_t *b, uint32_t len, const struct sv_parse *l2)
{
	(void)name, (void)b, (void)len, (void)l2;
}
#endif

/* ---- (1) + (3) on one frame, then the BPF readers ---- */

/* Checks @b (@len octets); @want: the row's expectations, or NULL. Leaves the host walk in *@out. */
static void check(const char *name, const uint8_t *b, uint32_t len, const struct frame *want, struct sv_parse *out)
{
	struct sv_codec_error err = { .code = SV_OK };
	struct sv_parse l2 = { 0 }, w = { 0 };
	uint32_t n = len > SV_ETH_ADDRS_LEN ? len - SV_ETH_ADDRS_LEN : 0;
	uint8_t *copy = malloc(len ? len : 1);
	int code;

	if (!copy) {
		CHECK(0, "%s: out of memory", name);
		return;
	}
	memcpy(copy, b, len);
	checked++;
	code = sv_codec_decode(copy, len, &view, &err) ? err.code : SV_OK;
	sv_parse_l2(copy + (len > SV_ETH_ADDRS_LEN ? SV_ETH_ADDRS_LEN : len), n, &l2);
	sv_parse_frame(copy + (len > SV_ETH_ADDRS_LEN ? SV_ETH_ADDRS_LEN : len), n, &w);
	CHECK(codec_class(code) == parse_class(&l2), "%s: the codec says %s (%s), sv_parse_l2 %s", name,
	      class_name[codec_class(code)], sv_codec_strerror(code), class_name[parse_class(&l2)]);
	CHECK(parse_class(&w) == parse_class(&l2) && (l2.verdict == SV_PARSE_HDR) == (w.verdict >= SV_PARSE_HDR),
	      "%s: sv_parse_frame's link layer (%u) differs from sv_parse_l2's (%u)", name, w.verdict, l2.verdict);
	if (code == SV_OK) {
		const struct sv_asdu *a = &view.asdu[0];

		CHECK(w.verdict == SV_PARSE_SV, "%s: the codec accepts it, the walk says %u", name, w.verdict);
		CHECK(w.appid == view.appid && w.smpcnt == a->smpCnt && w.svid_len == a->svID_len &&
			      SV_ETH_ADDRS_LEN + w.svid_pos == (uint32_t)(a->svID - copy) &&
			      SV_ETH_ADDRS_LEN + w.sv_pos == view.sv_offset,
		      "%s: walk APPID %#x svID %u@%u smpCnt %u, codec %#x %u@%td %u", name, w.appid, w.svid_len,
		      w.svid_pos, w.smpcnt, view.appid, a->svID_len, a->svID - copy - SV_ETH_ADDRS_LEN, a->smpCnt);
		CHECK(view.vlan == (w.tpid == SV_ETH_P_8021Q) && (!view.vlan || (w.tci & SV_VLAN_VID_MASK) == view.vlan_id),
		      "%s: VLAN: codec %d/%u, walk tpid %#x tci %#x", name, view.vlan, view.vlan_id, w.tpid, w.tci);
		CHECK((view.redundancy == SV_RED_HSR) == (w.hsr == 1) &&
			      (!w.hsr || (w.hsr_seq == view.red_seq && w.hsr_path_size >> 12 == view.red_lan)),
		      "%s: HSR: codec %u seq %u, walk %u seq %u", name, view.redundancy, view.red_seq, w.hsr,
		      w.hsr_seq);
	}
	if (want) {
		CHECK(code == want->codec, "%s: the codec says %s, want %s", name, sv_codec_strerror(code),
		      sv_codec_strerror(want->codec));
		CHECK(w.verdict == want->walk, "%s: the walk says %u, want %u", name, w.verdict, want->walk);
		if (want->walk == SV_PARSE_SV && w.verdict == SV_PARSE_SV)
			CHECK(w.appid == want->appid && w.smpcnt == want->smpcnt && w.svid_len == want->svid_len &&
				      !memcmp(copy + SV_ETH_ADDRS_LEN + w.svid_pos, want->svid, want->svid_len),
			      "%s: walk APPID %#x smpCnt %u svID %u octets, want %#x %u %u", name, w.appid, w.smpcnt,
			      w.svid_len, want->appid, want->smpcnt, want->svid_len);
	}
	check_afp(name, copy, len, &l2);
	free(copy);
	*out = w;
#ifdef WIRE_BPF
	if (xdp)
		check_bpf(name, b, len, &w);
#endif
}

/* Every prefix of @f: each reader stops at the same stage; the walk is SV from the first prefix that holds
 * the first ASDU's smpCnt on, with the whole frame's values. Returns the classes met (a bit each). */
static unsigned check_prefixes(const struct frame *f)
{
	struct sv_parse whole, p;
	unsigned met = 0;
	char name[160];

	check(f->name, f->b, f->len, NULL, &whole);
	for (uint32_t cut = 0; cut < f->len; cut++) {
		snprintf(name, sizeof(name), "%s cut to %u octets", f->name, cut);
		check(name, f->b, cut, NULL, &p);
		met |= 1u << parse_class(&p);
		if (cut >= SV_ETH_ADDRS_LEN + whole.smp_pos + SV_SMPCNT_LEN)
			CHECK(p.verdict == SV_PARSE_SV && p.smpcnt == whole.smpcnt && p.appid == whole.appid &&
				      p.svid_pos == whole.svid_pos && p.svid_len == whole.svid_len,
			      "%s: the walk says %u (smpCnt %u), the whole frame SV (%u)", name, p.verdict, p.smpcnt,
			      whole.smpcnt);
		else
			CHECK(p.verdict != SV_PARSE_SV, "%s: SV without the whole smpCnt", name);
	}
	return met;
}

/* The frames of the pcaps in @dir (up to 2000 a file); -1 if @dir cannot be read. */
static long check_pcap_dir(const char *dir)
{
	char path[8192], name[8400];
	struct dirent *de;
	long frames = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		struct sv_pcap_reader *r;
		struct sv_pcap_pkt pkt;
		struct sv_parse p;
		size_t nl = strlen(de->d_name);
		unsigned sv = 0, k = 0;

		if (nl < 6 || strcmp(de->d_name + nl - 5, ".pcap"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (sv_pcap_open_read(&r, path)) {
			CHECK(0, "%s: cannot read", path);
			continue;
		}
		while (k < 2000 && sv_pcap_next(r, &pkt) == 1) {
			snprintf(name, sizeof(name), "%s frame %llu", de->d_name, (unsigned long long)pkt.index);
			check(name, pkt.data, pkt.caplen, NULL, &p);
			sv += p.verdict == SV_PARSE_SV;
			k++;
		}
		sv_pcap_close_read(r);
		CHECK(sv > 0, "%s: no SV frame found in %u frames", de->d_name, k);
		printf("  %s: %u frames, %u SV for the walk\n", de->d_name, k, sv);
		frames += k;
	}
	closedir(d);
	return frames;
}

/* The real captures ($SVKIT_SHARED/captures) and the synthetic edge cases beside them. -1 without them. */
static long check_captures(void)
{
	const char *shared = getenv("SVKIT_SHARED");
	char dir[4096];
	long a, b;

	if (!shared)
		return -1;
	snprintf(dir, sizeof(dir), "%s/captures", shared);
	a = check_pcap_dir(dir);
	if (a < 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s/captures/synthetic", shared);
	b = check_pcap_dir(dir);
	return a + (b > 0 ? b : 0);
}

int main(void)
{
	struct sv_parse p;
	unsigned met;
	long caps;
	int skip_bpf = 0;

#ifdef WIRE_BPF
	if (geteuid() != 0) {
		skip_bpf = 1;
	} else {
		libbpf_set_print(sv_xdp_test_quiet);
		xdp = sv_xdp_test_load(0);
		xdp_allow = sv_xdp_test_load(1);
		walker = sv_parse_xdp_bpf__open_and_load();
		if (!xdp || !xdp_allow || !walker) {
			printf("FAIL wire_verdicts: loading sv_xdp / sv_parse_xdp: %s\n", strerror(errno));
			return 1;
		}
	}
#else
	skip_bpf = 1;
#endif
	build_rows();
	for (unsigned i = 0; i < nrows; i++)
		check(rows[i].name, rows[i].b, rows[i].len, &rows[i], &p);
	printf("%s rows: %u named frames\n", failures ? "FAIL" : "PASS", nrows);
	/* every stage of a frame with every link-layer element: 802.1ad + 802.1Q + HSR, 8 ASDUs */
	view_of(8, "MU01", 1)->redundancy = SV_RED_HSR;
	view.red_seq = 9;
	met = check_prefixes(tag(row("QinQ + HSR, 8 ASDUs", &view), SV_ETH_P_8021AD, 100));
	CHECK(met == (((1u << C__N) - 1) & ~(1u << C_NOT_SV)), "prefixes met classes %#x, not every cut stage", met);
	printf("%s prefixes: every cut of a %u-octet QinQ + HSR frame\n", failures ? "FAIL" : "PASS",
	       rows[nrows - 1].len);
	caps = check_captures();
	if (caps < 0)
		printf("SKIP captures: no $SVKIT_SHARED/captures\n");
	else
		printf("%s captures: %ld frames\n", failures ? "FAIL" : "PASS", caps);
#ifdef WIRE_BPF
	if (xdp) {
		sv_xdp_bpf__destroy(xdp);
		sv_xdp_bpf__destroy(xdp_allow);
		sv_parse_xdp_bpf__destroy(walker);
	}
#endif
	printf("%s wire_verdicts: %u frames through the codec and sv_parse.h on the host, %u through sv_xdp and "
	       "sv_parse.h in BPF%s\n", failures ? "FAIL" : skip_bpf ? "PASS (host part)" : "PASS", checked,
	       checked_bpf, skip_bpf ? " (BPF part skipped: not root or not built)" : "");
	if (failures)
		return 1;
#ifdef WIRE_BPF
	if (skip_bpf) {
		printf("SKIP wire_verdicts: BPF_PROG_TEST_RUN needs root\n");
		return 77;
	}
#endif
	return 0;
}
