/* SPDX-License-Identifier: Apache-2.0 */
/* svsub's per-frame pipeline: decode, track, JSON lines, capture. */
#include "svsub_proc.h"
#include "svsub_rec.h"
#include "sv_clock.h"
#include "sv_mem.h"
#include "sv_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sv_json.h"
#include "svapp.h"
#include "svsub_scl.h"

/* Longest seqData / security field a frame can hold, as hex. */
#define HEX_MAX (2u * 65536u + 1u)

struct svsub_proc {
	struct svsub_proc_cfg cfg;
	struct sv_decoder *dec; /* remembers each stream's shape: a full walk only when it changes */
	struct svsub_tracker *track;
	struct svsub_proc_counts n;
	int out_err;
	struct sv_json json;
	bool last_ok;
	struct sv_view view;
	struct svsub_sample_result res[SV_MAX_ASDU];
	char hex[HEX_MAX];
};

int svsub_proc_create(struct svsub_proc **out, const struct svsub_proc_cfg *cfg)
{
	struct svsub_proc *p;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->cfg = *cfg;
	/* the per-frame scratch mapped now rather than on the first frames */
	sv_prefault(&p->view, sizeof(p->view));
	sv_prefault(p->res, sizeof(p->res));
	err = sv_decoder_create(&p->dec);
	if (err)
		goto out_free;
	err = svsub_track_create(&p->track, &cfg->track);
	if (err)
		goto out_decoder;
	if (cfg->jsonl)
		sv_json_init(&p->json, cfg->jsonl, 0);
	*out = p;
	return 0;

out_decoder:
	sv_decoder_destroy(p->dec);
out_free:
	free(p);
	return err;
}

void svsub_proc_destroy(struct svsub_proc *p)
{
	if (!p)
		return;
	sv_decoder_destroy(p->dec);
	svsub_track_destroy(p->track);
	free(p);
}

void svsub_format_ts(int64_t ns, char *buf, size_t size)
{
	uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	snprintf(buf, size, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "", u / 1000000000u, u % 1000000000u);
}

static const char *hex_of(struct svsub_proc *p, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (n > (HEX_MAX - 1) / 2)
		n = (HEX_MAX - 1) / 2;
	for (i = 0; i < n; i++) {
		p->hex[2 * i] = digits[b[i] >> 4];
		p->hex[2 * i + 1] = digits[b[i] & 15];
	}
	p->hex[2 * i] = '\0';
	return p->hex;
}

static void kv_hex_or_null(struct svsub_proc *p, const char *key, const uint8_t *b, size_t n)
{
	if (b)
		sv_json_kv_str(&p->json, key, hex_of(p, b, n));
	else
		sv_json_kv_null(&p->json, key);
}

static void json_end(struct svsub_proc *p)
{
	if (sv_json_end(&p->json) && !p->out_err)
		p->out_err = -EIO;
}

/* A member as its type reads: integers, floats, true/false, a Timestamp as "S.NNNNNNNNN" (UTC). */
static void json_member(struct svsub_proc *p, const struct sv_dataset *ds, const uint8_t *seqData, unsigned m)
{
	struct sv_da_value x;
	char ts[48];

	sv_dataset_member(ds, seqData, m, &x);
	switch ((enum sv_da_type)x.type) {
	case SV_DA_BOOLEAN:
		sv_json_bool(&p->json, x.i != 0);
		break;
	case SV_DA_FLOAT32:
	case SV_DA_FLOAT64:
		sv_json_double(&p->json, x.f);
		break;
	case SV_DA_TIMESTAMP:
		svsub_format_ts(x.t_ns, ts, sizeof(ts));
		sv_json_string(&p->json, ts);
		break;
	case SV_DA_INT8U:
	case SV_DA_INT16U:
	case SV_DA_INT32U:
	case SV_DA_QUALITY:
		sv_json_uint(&p->json, x.u);
		break;
	default:
		sv_json_int(&p->json, x.i);
		break;
	}
}

static void jsonl_asdus(struct svsub_proc *p, const struct svsub_frame *f, const struct sv_view *v)
{
	struct sv_json *j = &p->json;
	char ts[48], dst[18];
	bool oob = !v->vlan && f->vlan_oob == SVSUB_VLAN_OOB_PRESENT;

	svsub_format_ts(f->rx_ns, ts, sizeof(ts));
	snprintf(dst, sizeof(dst), "%02x:%02x:%02x:%02x:%02x:%02x", v->dst[0], v->dst[1], v->dst[2], v->dst[3],
		 v->dst[4], v->dst[5]);
	for (unsigned i = 0; i < v->noASDU; i++) {
		const struct sv_asdu *a = &v->asdu[i];
		const struct sv_dataset *ds = p->res[i].dataset;

		sv_json_object_begin(j);
		sv_json_kv_uint(j, "frame", f->index);
		sv_json_kv_str(j, "ts", ts);
		sv_json_kv_str(j, "dst", dst);
		if (v->vlan || oob) {
			sv_json_kv_uint(j, "vlan_id", v->vlan ? v->vlan_id : f->vlan_id);
			sv_json_kv_uint(j, "vlan_pcp", v->vlan ? v->vlan_pcp : f->vlan_pcp);
		} else {
			sv_json_kv_null(j, "vlan_id");
			sv_json_kv_null(j, "vlan_pcp");
		}
		sv_json_kv_uint(j, "appid", v->appid);
		sv_json_kv_bool(j, "simulated", v->simulated);
		sv_json_kv_uint(j, "noASDU", v->noASDU);
		sv_json_kv_uint(j, "asdu", i);
		sv_json_key(j, "svID");
		sv_json_string_n(j, (const char *)a->svID, a->svID_len);
		sv_json_key(j, "datSet");
		if (a->present & SV_HAS_DATSET)
			sv_json_string_n(j, (const char *)a->datSet, a->datSet_len);
		else
			sv_json_null(j);
		sv_json_kv_uint(j, "smpCnt", a->smpCnt);
		sv_json_kv_uint(j, "confRev", a->confRev);
		kv_hex_or_null(p, "refrTm", (a->present & SV_HAS_REFRTM) ? a->refrTm : NULL, SV_REFRTM_LEN);
		sv_json_kv_uint(j, "smpSynch", a->smpSynch);
		if (a->present & SV_HAS_SMPRATE)
			sv_json_kv_uint(j, "smpRate", a->smpRate);
		else
			sv_json_kv_null(j, "smpRate");
		if (a->present & SV_HAS_SMPMOD)
			sv_json_kv_uint(j, "smpMod", a->smpMod);
		else
			sv_json_kv_null(j, "smpMod");
		kv_hex_or_null(p, "gmIdentity", (a->present & SV_HAS_GMIDENTITY) ? a->gmIdentity : NULL,
			       SV_GMIDENTITY_LEN);
		if (ds) {
			/* every member but the Quality ones, in order, then the Quality words */
			sv_json_key(j, "values");
			sv_json_array_begin(j);
			for (unsigned m = 0; m < ds->nmembers; m++)
				if (ds->m[m].type != SV_DA_QUALITY)
					json_member(p, ds, a->seqData, m);
			sv_json_array_end(j);
			sv_json_key(j, "quality");
			sv_json_array_begin(j);
			for (unsigned k = 0; k < ds->nquality; k++)
				sv_json_uint(j, sv_dataset_quality(ds, a->seqData, k));
			sv_json_array_end(j);
			sv_json_kv_null(j, "seqData");
		} else {
			sv_json_kv_null(j, "values");
			sv_json_kv_null(j, "quality");
			sv_json_kv_str(j, "seqData", hex_of(p, a->seqData, a->seqData_len));
		}
		kv_hex_or_null(p, "security", v->security, v->security_len);
		if (v->redundancy == SV_RED_PRP || v->redundancy == SV_RED_HSR) {
			char lan[8];

			if (v->red_lan == 0xA || v->red_lan == 0xB)
				snprintf(lan, sizeof(lan), "%c", v->red_lan == 0xA ? 'A' : 'B');
			else
				snprintf(lan, sizeof(lan), "0x%x", v->red_lan);
			sv_json_key(j, v->redundancy == SV_RED_PRP ? "prp" : "hsr");
			sv_json_object_begin(j);
			sv_json_kv_uint(j, "seq", v->red_seq);
			sv_json_kv_str(j, v->redundancy == SV_RED_PRP ? "lan" : "path", lan);
			sv_json_kv_uint(j, "lsdu_size", v->red_lsdu_size);
			sv_json_object_end(j);
		}
		if (v->redundancy != SV_RED_PRP)
			sv_json_kv_null(j, "prp");
		sv_json_object_end(j);
		json_end(p);
	}
}

/* APPID of a frame that failed to decode, when its SV header is within the bytes; else -1. */
static int peek_appid(const uint8_t *b, uint32_t len)
{
	struct sv_parse l2 = { 0 };

	if (len <= SV_ETH_ADDRS_LEN)
		return -1;
	if (sv_parse_l2(b + SV_ETH_ADDRS_LEN, len - SV_ETH_ADDRS_LEN, &l2) >= SV_PARSE_HDR_SHORT &&
	    len - SV_ETH_ADDRS_LEN >= l2.sv_pos + 2)
		return sv_be16(b + SV_ETH_ADDRS_LEN + l2.sv_pos);
	return -1;
}

int svsub_proc_frame(struct svsub_proc *p, const struct svsub_frame *f)
{
	struct sv_codec_error err = { 0 };
	int rc;

	p->n.frames++;
	p->last_ok = false;
	if (f->wire_len > f->len)
		p->n.truncated++;
	rc = sv_decoder_decode(p->dec, f->data, f->len, &p->view, &err);
	if (rc && err.code == SV_E_NOT_SV) {
		p->n.not_sv++;
		return 0;
	}
	if (p->cfg.write &&
	    sv_pcap_write(p->cfg.write, f->data, f->len, f->wire_len ? f->wire_len : f->len, f->rx_ns) &&
	    !p->out_err)
		p->out_err = -EIO;
	if (rc) {
		p->n.malformed++;
		svsub_track_error(p->track, err.code, peek_appid(f->data, f->len));
		if (p->cfg.jsonl) {
			sv_json_object_begin(&p->json);
			sv_json_kv_uint(&p->json, "frame", f->index);
			sv_json_kv_str(&p->json, "error", sv_codec_strerror(err.code));
			sv_json_kv_uint(&p->json, "offset", err.offset);
			sv_json_object_end(&p->json);
			json_end(p);
		}
		return p->out_err ? p->out_err : -EBADMSG;
	}
	p->n.sv++;
	p->n.prp += p->view.redundancy == SV_RED_PRP;
	p->n.hsr += p->view.redundancy == SV_RED_HSR;
	svsub_track_frame(p->track, &p->view, f->rx_ns, p->res);
	p->last_ok = true;
	if (p->cfg.scl)
		svsub_scl_frame(p->cfg.scl, p->track, &p->view, p->res, f->index,
				f->vlan_oob == SVSUB_VLAN_OOB_PRESENT, f->vlan_id, f->vlan_pcp);
	if (p->cfg.app)
		svapp_frame(p->cfg.app, p->track, &p->view, p->res, f->rx_ns); /* app */
	if (p->cfg.rec) {
		/* T4: tracking and the application are done with this frame's samples (same clock as rx_ns) */
		int64_t t_app = p->cfg.app_clock >= 0 ? sv_clock_now_ns((enum sv_clock_id)p->cfg.app_clock) : 0;

		/* never an output error: a full disk is counted by the recorder and said at the end, while
		 * receiving and the application go on */
		svsub_rec_frame(p->cfg.rec, p->track, &p->view, p->res, f->rx_ns, f->ts_src, t_app);
	}
	if (p->cfg.jsonl)
		jsonl_asdus(p, f, &p->view);
	return p->out_err ? p->out_err : 1;
}

void svsub_proc_counts(const struct svsub_proc *p, struct svsub_proc_counts *c)
{
	*c = p->n;
}

const struct svsub_proc_counts *svsub_proc_counters(const struct svsub_proc *p)
{
	return &p->n;
}

struct svsub_tracker *svsub_proc_tracker(struct svsub_proc *p)
{
	return p->track;
}

const struct sv_view *svsub_proc_last_view(const struct svsub_proc *p)
{
	return p->last_ok ? &p->view : NULL;
}

const struct svsub_sample_result *svsub_proc_last_results(const struct svsub_proc *p)
{
	return p->last_ok ? p->res : NULL;
}

int svsub_proc_output_error(const struct svsub_proc *p)
{
	return p->out_err;
}

void svsub_proc_tick(struct svsub_proc *p, int64_t now_ns)
{
	svsub_rec_tick(p->cfg.rec, now_ns);
}
