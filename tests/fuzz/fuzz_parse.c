// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for bpf/sv_parse.h, the frame walk both BPF programs run (here as host C, on the input's exact
 * octets: a read past them is an ASan report). Properties beyond "no crash, no UB":
 *  - sv_parse_frame and sv_parse_l2 agree on the link layer, and with the codec (its error names the same stage);
 *  - every position the walk reports lies inside the window, svID's length within 1..129;
 *  - the codec accepts a frame that fits in the walk's window => the walk says SV with the codec's APPID, first
 *    svID and smpCnt (and with the codec's values whenever it says SV of a frame the codec accepts).
 */
#include <stdint.h>
#include <stdlib.h>

#include "sv_codec.h"
#include "sv_parse.h"

static struct sv_view v;

/* The codec's error, as the stage sv_parse names (enum sv_parse_verdict, SV_PARSE_HDR for any later one). */
static uint32_t codec_stage(int code)
{
	switch (code) {
	case SV_E_ETH_TRUNCATED:
	case SV_E_VLAN_TRUNCATED:
	case SV_E_HSR_TRUNCATED:
		return SV_PARSE_L2_SHORT;
	case SV_E_NOT_SV:
		return SV_PARSE_NOT_SV;
	case SV_E_HEADER_TRUNCATED:
		return SV_PARSE_HDR_SHORT;
	default:
		return SV_PARSE_HDR;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sv_codec_error e = { .code = SV_OK };
	struct sv_parse l2 = { 0 }, w = { 0 };
	uint32_t n = size > SV_ETH_ADDRS_LEN ? (uint32_t)(size - SV_ETH_ADDRS_LEN) : 0, stage;
	const uint8_t *win = data + (size > SV_ETH_ADDRS_LEN ? SV_ETH_ADDRS_LEN : size);
	int code;

	if (size > 65535)
		return 0;
	code = sv_codec_decode(data, size, &v, &e) ? e.code : SV_OK;
	sv_parse_l2(win, n, &l2);
	sv_parse_frame(win, n, &w);
	stage = l2.verdict > SV_PARSE_HDR ? SV_PARSE_HDR : l2.verdict;
	if (l2.verdict > SV_PARSE_HDR || (w.verdict >= SV_PARSE_HDR) != (l2.verdict == SV_PARSE_HDR) ||
	    (w.verdict < SV_PARSE_HDR && w.verdict != l2.verdict) || codec_stage(code) != stage)
		abort();
	if (l2.verdict == SV_PARSE_L2_SHORT && l2.short_in == SV_PARSE_SHORT_HSR && code != SV_E_HSR_TRUNCATED)
		abort();
	if (l2.verdict >= SV_PARSE_HDR_SHORT && l2.sv_pos > n)
		abort();
	if (w.verdict == SV_PARSE_SV &&
	    (w.sv_pos + SV_HEADER_LEN > n || w.svid_len < 1 || w.svid_len > SV_MAX_ID_LEN ||
	     w.svid_pos + w.svid_len >= n || w.smp_pos + SV_SMPCNT_LEN > n || w.smp_pos > SV_PARSE_WINDOW))
		abort();
	if (code == SV_OK && n <= SV_PARSE_WINDOW && w.verdict != SV_PARSE_SV)
		abort();
	if (code == SV_OK && w.verdict == SV_PARSE_SV &&
	    (w.appid != v.appid || w.smpcnt != v.asdu[0].smpCnt ||
	     w.svid_len != v.asdu[0].svID_len || win + w.svid_pos != v.asdu[0].svID))
		abort();
	return 0;
}
