// SPDX-License-Identifier: Apache-2.0
/* Why late, summed: see sv_why.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_why.h"

static bool has_holder(unsigned cause)
{
	return cause == SV_WHY_RUNQUEUE || cause == SV_WHY_KSOFTIRQD;
}

int64_t sv_why_dominant(const struct sv_rec_why *h, unsigned n, struct sv_why_dom *d)
{
	int64_t sum[SV_REC_WHY_SLOTS] = { 0 }, best = 0, held = 0;
	const struct sv_rec_why *by = NULL;

	memset(d, 0, sizeof(*d));
	d->cause = SV_WHY_UNEXPLAINED;
	for (unsigned i = 0; i < n; i++)
		for (unsigned c = 0; c < SV_REC_WHY_SLOTS; c++)
			sum[c] += h[i].ns[c];
	/* the first of equals: the causes' precedence order is not their numbers', but any fixed choice will do */
	for (unsigned c = 0; c < SV_REC_WHY_SLOTS; c++) {
		if (sum[c] > best) {
			best = sum[c];
			d->cause = c;
		}
	}
	if (!best || !has_holder(d->cause))
		return best;
	for (unsigned i = 0; i < n; i++) {
		if (h[i].holder_pid && h[i].holder_ns > held) {
			held = h[i].holder_ns;
			by = &h[i];
		}
	}
	if (by) {
		memcpy(d->holder_comm, by->holder_comm, sizeof(d->holder_comm));
		d->holder_comm[sizeof(d->holder_comm) - 1] = 0;
		d->holder_policy = by->holder_policy;
		d->holder_prio = by->holder_prio;
	}
	return best;
}

static bool dom_eq(const struct sv_why_dom *a, const struct sv_why_dom *b)
{
	return a->cause == b->cause && !strcmp(a->holder_comm, b->holder_comm) && a->holder_policy == b->holder_policy &&
	       a->holder_prio == b->holder_prio;
}

void sv_why_tally_add(struct sv_why_tally *t, const struct sv_rec_why *h, unsigned n)
{
	struct sv_why_dom d;
	unsigned i;

	t->frames++;
	for (i = 0; i < n; i++) {
		t->late_ns += h[i].t_to_ns - h[i].t_from_ns;
		for (unsigned c = 0; c < SV_REC_WHY_SLOTS; c++)
			t->ns[c] += h[i].ns[c];
	}
	sv_why_dominant(h, n, &d);
	for (i = 0; i < t->ndom; i++) {
		if (dom_eq(&t->dom[i].d, &d)) {
			t->dom[i].frames++;
			return;
		}
	}
	if (t->ndom == SV_WHY_TALLY_DOMS) {
		t->dom_other++;
		return;
	}
	t->dom[t->ndom].d = d;
	t->dom[t->ndom++].frames = 1;
}

static int dom_cmp(const void *a, const void *b)
{
	const struct sv_why_dom_count *p = a, *q = b;

	if (p->frames != q->frames)
		return p->frames < q->frames ? 1 : -1;
	return (int)p->d.cause - (int)q->d.cause;
}

void sv_why_tally_sort(struct sv_why_tally *t)
{
	if (t->ndom > 1)
		qsort(t->dom, t->ndom, sizeof(t->dom[0]), dom_cmp);
}

double sv_why_named_share(const struct sv_why_tally *t)
{
	if (t->late_ns <= 0)
		return 0;
	return (double)(t->late_ns - t->ns[SV_WHY_UNEXPLAINED]) / (double)t->late_ns;
}

void sv_why_dom_format(const struct sv_why_dom *d, char *buf, size_t n)
{
	if (has_holder(d->cause) && d->holder_comm[0] && d->holder_policy == SV_WHY_POLICY_UNKNOWN)
		snprintf(buf, n, "%s behind %s", sv_rec_why_cause_name(d->cause), d->holder_comm);
	else if (has_holder(d->cause) && d->holder_comm[0])
		snprintf(buf, n, "%s behind %s (%s %u)", sv_rec_why_cause_name(d->cause), d->holder_comm,
			 sv_sched_policy_name(d->holder_policy), d->holder_prio);
	else
		snprintf(buf, n, "%s", sv_rec_why_cause_name(d->cause));
}

void sv_why_tally_format(const struct sv_why_tally *t, char *buf, size_t n)
{
	uint64_t other = t->dom_other;
	size_t len;
	char one[96];

	if (!n)
		return;
	snprintf(buf, n, "of %" PRIu64 " late frames:", t->frames);
	for (unsigned i = 0; i < t->ndom; i++) {
		if (i >= SV_WHY_LINE_DOMS) {
			other += t->dom[i].frames;
			continue;
		}
		sv_why_dom_format(&t->dom[i].d, one, sizeof(one));
		len = strlen(buf);
		snprintf(buf + len, n - len, "%s %" PRIu64 " %s", i ? "," : "", t->dom[i].frames, one);
	}
	len = strlen(buf);
	if (other)
		snprintf(buf + len, n - len, ", %" PRIu64 " other", other);
	else if (!t->frames)
		snprintf(buf + len, n - len, " none");
}

static const struct {
	uint32_t bit;
	const char *name;
} flag_names[] = {
	{ SV_REC_WHY_F_PARTIAL, "partial" }, { SV_REC_WHY_F_STEAL_RQ, "steal_rq" }, { SV_REC_WHY_F_QDISC, "qdisc" },
	{ SV_REC_WHY_F_RX, "rx" }, { SV_REC_WHY_F_CPUS, "cpus" }, { SV_REC_WHY_F_HOP_LATE, "hop_late" },
};

void sv_why_json_hop(struct sv_json *j, const struct sv_rec_why *h, const char *from, const char *to)
{
	sv_json_object_begin(j);
	sv_json_kv_str(j, "from", from);
	sv_json_kv_str(j, "to", to);
	sv_json_kv_int(j, "hop_ns", h->t_to_ns - h->t_from_ns);
	sv_json_key(j, "causes");
	sv_json_object_begin(j);
	for (unsigned c = 0; c < SV_WHY_NR; c++)
		if (h->ns[c] && c != SV_WHY_UNEXPLAINED)
			sv_json_kv_int(j, sv_rec_why_cause_name(c), h->ns[c]);
	sv_json_object_end(j);
	sv_json_kv_int(j, "unexplained_ns", h->ns[SV_WHY_UNEXPLAINED]);
	sv_json_key(j, "holder");
	if (h->holder_pid) {
		sv_json_object_begin(j);
		sv_json_kv_uint(j, "pid", h->holder_pid);
		sv_json_key(j, "comm");
		sv_json_string_n(j, h->holder_comm, strnlen(h->holder_comm, sizeof(h->holder_comm)));
		sv_json_kv_str(j, "policy", sv_sched_policy_name(h->holder_policy));
		sv_json_kv_uint(j, "prio", h->holder_prio);
		sv_json_kv_int(j, "ns", h->holder_ns);
		sv_json_object_end(j);
	} else {
		sv_json_null(j);
	}
	sv_json_key(j, "carrier");
	if (h->carrier_tid) {
		sv_json_object_begin(j);
		sv_json_kv_uint(j, "tid", h->carrier_tid);
		sv_json_key(j, "comm");
		sv_json_string_n(j, h->carrier_comm, strnlen(h->carrier_comm, sizeof(h->carrier_comm)));
		sv_json_object_end(j);
	} else {
		sv_json_null(j);
	}
	sv_json_kv_uint(j, "cpu", h->cpu);
	sv_json_kv_uint(j, "faults", h->faults);
	sv_json_key(j, "flags");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
		if (h->flags & flag_names[i].bit)
			sv_json_string(j, flag_names[i].name);
	sv_json_array_end(j);
	sv_json_object_end(j);
}

void sv_why_json_totals(struct sv_json *j, const struct sv_why_tally *t)
{
	sv_json_kv_uint(j, "why_frames", t->frames);
	sv_json_kv_int(j, "why_late_ns", t->late_ns);
	sv_json_kv_int(j, "why_named_ns", t->late_ns - t->ns[SV_WHY_UNEXPLAINED]);
	sv_json_kv_double(j, "why_named_share", sv_why_named_share(t));
	sv_json_key(j, "why_totals");
	sv_json_object_begin(j);
	for (unsigned c = 0; c < SV_WHY_NR; c++)
		sv_json_kv_int(j, sv_rec_why_cause_name(c), t->ns[c]);
	sv_json_object_end(j);
	sv_json_key(j, "why_dominant");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < t->ndom; i++) {
		const struct sv_why_dom *d = &t->dom[i].d;

		sv_json_object_begin(j);
		sv_json_kv_str(j, "cause", sv_rec_why_cause_name(d->cause));
		if (d->holder_comm[0]) {
			sv_json_kv_str(j, "holder", d->holder_comm);
			sv_json_kv_str(j, "holder_policy", sv_sched_policy_name(d->holder_policy));
			sv_json_kv_uint(j, "holder_prio", d->holder_prio);
		} else {
			sv_json_kv_null(j, "holder");
		}
		sv_json_kv_uint(j, "frames", t->dom[i].frames);
		sv_json_object_end(j);
	}
	if (t->dom_other) {
		sv_json_object_begin(j);
		sv_json_kv_str(j, "cause", "other");
		sv_json_kv_null(j, "holder");
		sv_json_kv_uint(j, "frames", t->dom_other);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
}
