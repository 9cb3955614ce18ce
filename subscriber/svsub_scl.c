/* SPDX-License-Identifier: Apache-2.0 */
/* svsub --scl: received streams against their SCL control blocks (svsub_scl.h). */
#include "svsub_scl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sv_json.h"

#define MAX_STREAMS 4096 /* streams checked; later ones are counted, not checked */

enum check {
	CK_APPID,
	CK_DST,
	CK_VLAN,
	CK_VLAN_ID,
	CK_VLAN_PRIO,
	CK_CONFREV,
	CK_DATSET,
	CK_NOASDU,
	CK_SMPRATE,
	CK_SMPMOD,
	CK_DSLEN,
	CK__COUNT
};

/* The names the summary and the JSON use. */
static const char *const check_name[CK__COUNT] = {
	[CK_APPID] = "appid",	    [CK_DST] = "dst_mac",	   [CK_VLAN] = "vlan_tag",
	[CK_VLAN_ID] = "vlan_id",   [CK_VLAN_PRIO] = "vlan_priority", [CK_CONFREV] = "confRev",
	[CK_DATSET] = "datSet",	    [CK_NOASDU] = "nofASDU",	   [CK_SMPRATE] = "smpRate",
	[CK_SMPMOD] = "smpMod",	    [CK_DSLEN] = "dataset_length",
};

struct mismatch {
	uint64_t count;
	uint64_t first_frame;
	char got[SV_MAX_ID_LEN + 8];
};

struct stream {
	int cb; /* -2 not seen, -1 unexpected */
	struct mismatch m[CK__COUNT];
};

struct req {
	unsigned line;
	uint8_t via, ncand;
	uint16_t cand[SV_SCL_MAX_CAND];
};

struct svsub_scl {
	const struct sv_scl *scl;
	char ied[SV_SCL_NAME_LEN];
	bool own; /* --ied NAME takes nothing: its own blocks are expected */
	unsigned nreq;
	struct req *req;
	bool *expected; /* per block */
	bool *received; /* per block */
	struct stream *st;
	struct svsub_tracker *track;
	uint64_t unchecked; /* frames of streams past MAX_STREAMS */
};

static bool cb_on_network(const struct sv_scl_cb *cb)
{
	return cb->has_address && !(cb->bad & SV_SCL_BAD_ADDRESS);
}

int svsub_scl_create(struct svsub_scl **out, const struct sv_scl *scl, const char *ied, char *msg, size_t size)
{
	struct svsub_scl *c = calloc(1, sizeof(*c));
	bool known = false;

	if (!c)
		return -ENOMEM;
	c->scl = scl;
	c->req = calloc(scl->nsub + scl->ncb + 1, sizeof(*c->req));
	c->expected = calloc(scl->ncb + 1, sizeof(bool));
	c->received = calloc(scl->ncb + 1, sizeof(bool));
	c->st = calloc(MAX_STREAMS, sizeof(*c->st));
	if (!c->req || !c->expected || !c->received || !c->st) {
		svsub_scl_destroy(c);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < MAX_STREAMS; i++)
		c->st[i].cb = -2;
	snprintf(c->ied, sizeof(c->ied), "%s", ied ? ied : "");
	if (ied) {
		for (unsigned i = 0; i < scl->nsub; i++) {
			const struct sv_scl_sub *s = &scl->sub[i];

			if (strcmp(s->ied, ied))
				continue;
			known = true;
			c->req[c->nreq].line = s->line;
			c->req[c->nreq].via = s->via;
			c->req[c->nreq].ncand = s->ncand;
			memcpy(c->req[c->nreq].cand, s->cand, sizeof(s->cand));
			c->nreq++;
		}
		for (unsigned i = 0; i < scl->ncb; i++)
			known |= !strcmp(scl->cb[i].ied, ied);
		c->own = !c->nreq;
	}
	for (unsigned i = 0; i < scl->ncb && (!ied || c->own); i++) {
		if (ied && strcmp(scl->cb[i].ied, ied))
			continue;
		c->req[c->nreq].line = scl->cb[i].line;
		c->req[c->nreq].ncand = 1;
		c->req[c->nreq].cand[0] = (uint16_t)i;
		c->nreq++;
	}
	if (ied && !known) {
		const char *first;
		unsigned n = sv_scl_publishers(scl, &first);

		snprintf(msg, size, "%s: no IED %s takes or publishes Sampled Values%s%s%s", scl->file, ied,
			 n ? " (IEDs with SV control blocks: " : "", n ? first : "", n > 1 ? ", ..." : n ? ")" : "");
		svsub_scl_destroy(c);
		return -ENOENT;
	}
	for (unsigned r = 0; r < c->nreq; r++)
		for (unsigned k = 0; k < c->req[r].ncand; k++)
			c->expected[c->req[r].cand[k]] = cb_on_network(&scl->cb[c->req[r].cand[k]]);
	*out = c;
	return 0;
}

void svsub_scl_destroy(struct svsub_scl *c)
{
	if (!c)
		return;
	free(c->req);
	free(c->expected);
	free(c->received);
	free(c->st);
	free(c);
}

unsigned svsub_scl_dataset_rules(const struct svsub_scl *c, struct svsub_dataset_rule *rules, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->scl->ncb && n < max; i++) {
		const struct sv_scl_cb *cb = &c->scl->cb[i];

		if (!c->expected[i] || !cb->ds.nmembers)
			continue;
		memset(&rules[n], 0, sizeof(rules[n]));
		rules[n].appid = cb->appid;
		snprintf(rules[n].svID, sizeof(rules[n].svID), "%s", cb->svid);
		rules[n].ds = cb->ds;
		n++;
	}
	return n;
}

unsigned svsub_scl_appids(const struct svsub_scl *c, uint16_t *appids, unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->scl->ncb; i++) {
		bool dup = false;

		if (!c->expected[i])
			continue;
		for (unsigned k = 0; k < n; k++)
			dup |= appids[k] == c->scl->cb[i].appid;
		if (!dup && n < max)
			appids[n++] = c->scl->cb[i].appid;
	}
	return n;
}

unsigned svsub_scl_groups(const struct svsub_scl *c, uint8_t (*macs)[6], unsigned max)
{
	unsigned n = 0;

	for (unsigned i = 0; i < c->scl->ncb; i++) {
		bool dup = false;

		if (!c->expected[i] || !(c->scl->cb[i].mac[0] & 1))
			continue;
		for (unsigned k = 0; k < n; k++)
			dup |= !memcmp(macs[k], c->scl->cb[i].mac, 6);
		if (!dup && n < max)
			memcpy(macs[n++], c->scl->cb[i].mac, 6);
	}
	return n;
}

/* The block of stream (@appid, @svID): expected ones first, its APPID first; -1 none. */
static int match(const struct svsub_scl *c, uint16_t appid, const char *svid)
{
	int best = -1, score = -1;

	for (unsigned i = 0; i < c->scl->ncb; i++) {
		const struct sv_scl_cb *cb = &c->scl->cb[i];
		int sc;

		if (strcmp(cb->svid, svid))
			continue;
		sc = (c->expected[i] ? 4 : 0) + (cb_on_network(cb) && cb->appid == appid ? 2 : 0) + cb_on_network(cb);
		if (sc > score) {
			score = sc;
			best = (int)i;
		}
	}
	return best;
}

__attribute__((format(printf, 4, 5))) static void miss(struct stream *s, enum check k, uint64_t frame,
						       const char *fmt, ...)
{
	struct mismatch *m = &s->m[k];
	va_list ap;

	if (m->count++)
		return;
	m->first_frame = frame;
	va_start(ap, fmt);
	vsnprintf(m->got, sizeof(m->got), fmt, ap);
	va_end(ap);
}

void svsub_scl_frame(struct svsub_scl *c, struct svsub_tracker *t, const struct sv_view *v,
		     const struct svsub_sample_result *res, uint64_t frame_index, bool vlan_oob, uint16_t oob_id,
		     uint8_t oob_pcp)
{
	bool tagged = v->vlan || vlan_oob;
	uint16_t vid = v->vlan ? v->vlan_id : oob_id;
	uint8_t pcp = v->vlan ? v->vlan_pcp : oob_pcp;

	c->track = t;
	for (unsigned i = 0; i < v->noASDU; i++) {
		const struct sv_asdu *a = &v->asdu[i];
		const struct svsub_stream_stats *ss;
		const struct sv_scl_cb *cb;
		struct stream *s;
		int idx = res[i].stream;

		if (idx < 0)
			continue;
		if (idx >= MAX_STREAMS) {
			c->unchecked++;
			continue;
		}
		s = &c->st[idx];
		if (s->cb == -2) {
			ss = svsub_track_stream(t, (unsigned)idx);
			s->cb = ss ? match(c, ss->appid, ss->svID) : -1;
			if (s->cb >= 0 && !c->expected[s->cb])
				s->cb = -1; /* a block of the file, but not one the IED takes */
			if (s->cb >= 0)
				c->received[s->cb] = true;
		}
		if (s->cb < 0)
			continue;
		cb = &c->scl->cb[s->cb];
		if (v->appid != cb->appid)
			miss(s, CK_APPID, frame_index, "0x%04X", v->appid);
		if (memcmp(v->dst, cb->mac, 6))
			miss(s, CK_DST, frame_index, "%02X-%02X-%02X-%02X-%02X-%02X", v->dst[0], v->dst[1], v->dst[2],
			     v->dst[3], v->dst[4], v->dst[5]);
		if (!tagged)
			miss(s, CK_VLAN, frame_index, "untagged");
		else if (vid != cb->vlan_id)
			miss(s, CK_VLAN_ID, frame_index, "%u", vid);
		if (tagged && pcp != cb->vlan_priority)
			miss(s, CK_VLAN_PRIO, frame_index, "%u", pcp);
		if (a->confRev != cb->conf_rev)
			miss(s, CK_CONFREV, frame_index, "%" PRIu32, a->confRev);
		if (!!(a->present & SV_HAS_DATSET) != !!(cb->opts & SV_SCL_OPT_DATSET))
			miss(s, CK_DATSET, frame_index, "%s", a->present & SV_HAS_DATSET ? "present" : "absent");
		else if ((a->present & SV_HAS_DATSET) &&
			 (a->datSet_len != strlen(cb->datset_ref) || memcmp(a->datSet, cb->datset_ref, a->datSet_len)))
			miss(s, CK_DATSET, frame_index, "%.*s", (int)a->datSet_len, (const char *)a->datSet);
		if (v->noASDU != cb->nof_asdu)
			miss(s, CK_NOASDU, frame_index, "%u", v->noASDU);
		if (!!(a->present & SV_HAS_SMPRATE) != !!(cb->opts & SV_SCL_OPT_SMPRATE))
			miss(s, CK_SMPRATE, frame_index, "%s", a->present & SV_HAS_SMPRATE ? "present" : "absent");
		else if ((a->present & SV_HAS_SMPRATE) && a->smpRate != cb->smp_rate)
			miss(s, CK_SMPRATE, frame_index, "%u", a->smpRate);
		/* smpMod absent means SmpPerPeriod (IEC 61850-9-2 §8.5.2) */
		if ((a->present & SV_HAS_SMPMOD ? a->smpMod : SV_SMPMOD_PER_PERIOD) != cb->smp_mod)
			miss(s, CK_SMPMOD, frame_index, "%u", a->present & SV_HAS_SMPMOD ? a->smpMod : 0);
		if (cb->ds.nmembers && a->seqData_len != cb->ds.len)
			miss(s, CK_DSLEN, frame_index, "%u octets", a->seqData_len);
	}
}

static void expected_value(const struct sv_scl_cb *cb, enum check k, char *buf, size_t size)
{
	switch (k) {
	case CK_APPID:
		snprintf(buf, size, "0x%04X", cb->appid);
		break;
	case CK_DST:
		snprintf(buf, size, "%02X-%02X-%02X-%02X-%02X-%02X", cb->mac[0], cb->mac[1], cb->mac[2], cb->mac[3],
			 cb->mac[4], cb->mac[5]);
		break;
	case CK_VLAN:
		snprintf(buf, size, "tagged");
		break;
	case CK_VLAN_ID:
		snprintf(buf, size, "%u", cb->vlan_id);
		break;
	case CK_VLAN_PRIO:
		snprintf(buf, size, "%u", cb->vlan_priority);
		break;
	case CK_CONFREV:
		snprintf(buf, size, "%" PRIu32, cb->conf_rev);
		break;
	case CK_DATSET:
		snprintf(buf, size, "%s", cb->opts & SV_SCL_OPT_DATSET ? cb->datset_ref : "absent");
		break;
	case CK_NOASDU:
		snprintf(buf, size, "%u", cb->nof_asdu);
		break;
	case CK_SMPRATE:
		if (cb->opts & SV_SCL_OPT_SMPRATE)
			snprintf(buf, size, "%u", cb->smp_rate);
		else
			snprintf(buf, size, "absent");
		break;
	case CK_SMPMOD:
		snprintf(buf, size, "%u", cb->smp_mod);
		break;
	case CK_DSLEN:
		snprintf(buf, size, "%u octets (%s, %u members)", cb->ds.len, cb->datset, cb->ds.nmembers);
		break;
	default:
		buf[0] = '\0';
	}
}

static bool req_received(const struct svsub_scl *c, const struct req *r)
{
	for (unsigned k = 0; k < r->ncand; k++)
		if (c->received[r->cand[k]])
			return true;
	return false;
}

static bool req_on_network(const struct svsub_scl *c, const struct req *r)
{
	for (unsigned k = 0; k < r->ncand; k++)
		if (c->expected[r->cand[k]])
			return true;
	return false;
}

/* A diagnostic concerns the checks when it is about a block in scope, or about no block (the file's). */
static bool diag_in_scope(const struct svsub_scl *c, const struct sv_scl_diag *d)
{
	if (d->cb < 0)
		return !c->ied[0] || strstr(d->msg, c->ied) != NULL;
	for (unsigned r = 0; r < c->nreq; r++)
		for (unsigned k = 0; k < c->req[r].ncand; k++)
			if (c->req[r].cand[k] == d->cb)
				return true;
	return false;
}

void svsub_scl_counts(const struct svsub_scl *c, struct svsub_scl_counts *n)
{
	memset(n, 0, sizeof(*n));
	for (unsigned i = 0; i < MAX_STREAMS; i++) {
		if (c->st[i].cb == -1)
			n->unexpected++;
		for (unsigned k = 0; k < CK__COUNT; k++)
			n->mismatches += c->st[i].m[k].count != 0;
	}
	for (unsigned r = 0; r < c->nreq; r++)
		if (req_on_network(c, &c->req[r]))
			n->missing += !req_received(c, &c->req[r]);
	for (unsigned i = 0; i < c->scl->ncb; i++)
		n->expected += c->expected[i];
	for (unsigned i = 0; i < c->scl->ndiag; i++)
		n->errors += c->scl->diag[i].severity == SV_SCL_ERROR && diag_in_scope(c, &c->scl->diag[i]);
}

static void req_names(const struct svsub_scl *c, const struct req *r, char *buf, size_t size)
{
	buf[0] = '\0';
	for (unsigned k = 0; k < r->ncand; k++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s (svID %s, APPID 0x%04X)", k ? " or " : "",
			 c->scl->cb[r->cand[k]].ref, c->scl->cb[r->cand[k]].svid, c->scl->cb[r->cand[k]].appid);
}

int svsub_scl_json(const struct svsub_scl *c, struct sv_json *j)
{
	const struct sv_scl *scl = c->scl;
	struct svsub_scl_counts n;
	char buf[1024];

	svsub_scl_counts(c, &n);
	sv_json_key(j, "scl");
	sv_json_object_begin(j);
	sv_json_kv_str(j, "file", scl->file);
	sv_json_kv_str(j, "edition", scl->edition);
	sv_json_kv_str(j, "ied", c->ied[0] ? c->ied : NULL);
	sv_json_kv_uint(j, "expected", n.expected);
	sv_json_kv_uint(j, "mismatches", n.mismatches);
	sv_json_key(j, "errors");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < scl->ndiag; i++) {
		if (!diag_in_scope(c, &scl->diag[i]))
			continue;
		sv_scl_diag_format(scl, &scl->diag[i], buf, sizeof(buf));
		sv_json_string(j, buf);
	}
	sv_json_array_end(j);
	sv_json_key(j, "streams");
	sv_json_array_begin(j);
	for (unsigned i = 0; c->track && i < MAX_STREAMS && i < svsub_track_count(c->track); i++) {
		const struct svsub_stream_stats *ss = svsub_track_stream(c->track, i);
		const struct stream *s = &c->st[i];

		if (s->cb == -2 || !ss)
			continue;
		sv_json_object_begin(j);
		sv_json_kv_uint(j, "appid", ss->appid);
		sv_json_kv_str(j, "svID", ss->svID);
		sv_json_kv_str(j, "svcb", s->cb >= 0 ? scl->cb[s->cb].ref : NULL);
		sv_json_kv_bool(j, "expected", s->cb >= 0);
		sv_json_key(j, "mismatches");
		sv_json_array_begin(j);
		for (unsigned k = 0; s->cb >= 0 && k < CK__COUNT; k++) {
			if (!s->m[k].count)
				continue;
			expected_value(&scl->cb[s->cb], (enum check)k, buf, sizeof(buf));
			sv_json_object_begin(j);
			sv_json_kv_str(j, "check", check_name[k]);
			sv_json_kv_str(j, "expected", buf);
			sv_json_kv_str(j, "received", s->m[k].got);
			sv_json_kv_uint(j, "frames", s->m[k].count);
			sv_json_kv_uint(j, "first_frame", s->m[k].first_frame);
			sv_json_object_end(j);
		}
		sv_json_array_end(j);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
	sv_json_key(j, "missing");
	sv_json_array_begin(j);
	for (unsigned r = 0; r < c->nreq; r++) {
		const struct req *q = &c->req[r];

		if (!req_on_network(c, q) || req_received(c, q))
			continue;
		sv_json_object_begin(j);
		sv_json_key(j, "svcb");
		sv_json_array_begin(j);
		for (unsigned k = 0; k < q->ncand; k++)
			sv_json_string(j, scl->cb[q->cand[k]].ref);
		sv_json_array_end(j);
		sv_json_kv_str(j, "svID", scl->cb[q->cand[0]].svid);
		sv_json_kv_uint(j, "appid", scl->cb[q->cand[0]].appid);
		sv_json_kv_uint(j, "line", q->line);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
	sv_json_kv_uint(j, "unexpected", n.unexpected);
	sv_json_kv_uint(j, "unchecked_frames", c->unchecked);
	sv_json_object_end(j);
	return sv_json_error(j);
}

int svsub_scl_print(const struct svsub_scl *c, FILE *f)
{
	const struct sv_scl *scl = c->scl;
	struct svsub_scl_counts n;
	char buf[1024], exp[256];

	svsub_scl_counts(c, &n);
	fprintf(f, "SCL %s (edition %s%s%s): %u streams expected, %" PRIu64 " mismatches, %u missing, %u "
		"unexpected, %u errors in the file\n", scl->file, scl->edition, c->ied[0] ? ", IED " : "", c->ied,
		n.expected, n.mismatches, n.missing, n.unexpected, n.errors);
	for (unsigned i = 0; i < scl->ndiag; i++) {
		if (!diag_in_scope(c, &scl->diag[i]))
			continue;
		sv_scl_diag_format(scl, &scl->diag[i], buf, sizeof(buf));
		fprintf(f, "  %s\n", buf);
	}
	for (unsigned i = 0; c->track && i < MAX_STREAMS && i < svsub_track_count(c->track); i++) {
		const struct svsub_stream_stats *ss = svsub_track_stream(c->track, i);
		const struct stream *s = &c->st[i];

		if (s->cb == -2 || !ss)
			continue;
		if (s->cb < 0) {
			fprintf(f, "  unexpected stream: svID %s APPID 0x%04X: %s\n", ss->svID, ss->appid,
				match(c, ss->appid, ss->svID) >= 0 ? "its block is in the file, but not taken" :
				"no control block of the file has this svID");
			continue;
		}
		for (unsigned k = 0; k < CK__COUNT; k++) {
			if (!s->m[k].count)
				continue;
			expected_value(&scl->cb[s->cb], (enum check)k, exp, sizeof(exp));
			fprintf(f, "  %s (svID %s): %s mismatch: expected %s, received %s (%" PRIu64 " frames, first "
				"frame %" PRIu64 ")\n", scl->cb[s->cb].ref, ss->svID, check_name[k], exp, s->m[k].got,
				s->m[k].count, s->m[k].first_frame);
		}
	}
	for (unsigned r = 0; r < c->nreq; r++) {
		if (!req_on_network(c, &c->req[r]) || req_received(c, &c->req[r]))
			continue;
		req_names(c, &c->req[r], buf, sizeof(buf));
		fprintf(f, "  missing: %s never came (%s:%u)\n", buf, scl->file, c->req[r].line);
	}
	return ferror(f) ? -EIO : 0;
}
