// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's hosts (issue 32: a fleet of hypervisors, one report): the guests each host's records name, kept apart
 * when two hosts name one the same (two hypervisors' "vnet0"), and the "hosts" section: per host its tools, its
 * clock (flagged when not synchronised), its guests with the hops the outputs compare, and the whole cluster.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "svreport_out.h"
#include "svreport_private.h"

int svr_guest_new(struct svr *r, const struct fileio *f, const char *name)
{
	unsigned g = r->nguests;

	if (g >= SVR_MAX_GUESTS)
		return -1;
	snprintf(r->guests[g], sizeof(r->guests[0]), "%s", name);
	snprintf(r->guest_host[g], sizeof(r->guest_host[0]), "%s", f->info.host);
	snprintf(r->guest_tool[g], sizeof(r->guest_tool[0]), "%s", f->info.tool);
	r->nguests++;
	return (int)g;
}

/* Guest @g is @name as qualified by its own host ("HOST:NAME"). */
static bool qualified_as(const struct svr *r, unsigned g, const char *name)
{
	size_t hl = strlen(r->guest_host[g]);

	return !strncmp(r->guests[g], r->guest_host[g], hl) && r->guests[g][hl] == ':' &&
	       !strcmp(r->guests[g] + hl + 1, name);
}

int svr_guest_by_host(struct svr *r, const struct fileio *f, const char *name)
{
	char q[64];
	bool clash = false;

	snprintf(q, sizeof(q), "%.31s:%.31s", f->info.host, name);
	for (unsigned g = 0; g < r->nguests; g++)
		if (!strcmp(r->guests[g], q) && !strcmp(r->guest_host[g], f->info.host))
			return (int)g;
	for (unsigned g = 0; g < r->nguests; g++) {
		bool same_tool = !strcmp(r->guest_tool[g], f->info.tool);

		if (!strcmp(r->guests[g], name)) {
			/* the same name from the same host, or from another tool (svsub's --guest vm1 and svtrace's
			 * port vm1: one guest, that is the join), is this guest */
			if (!strcmp(r->guest_host[g], f->info.host) || !same_tool)
				return (int)g;
			/* another host's records of the same tool: two guests, each named by its host */
			char own[64];

			snprintf(own, sizeof(own), "%.31s:%.31s", r->guest_host[g], name);
			memcpy(r->guests[g], own, sizeof(own));
			clash = true;
		} else if (same_tool && qualified_as(r, g, name)) {
			clash = true;
		}
	}
	return svr_guest_new(r, f, clash ? q : name);
}

/* ---- the "hosts" section: per host, then the cluster ---------------------------------------------------- */

#define MAX_HOSTS SVR_MAX_FILES

/* The hosts of the files, in the order their first file was given; returns how many. */
static unsigned hosts_of(const struct svr *r, const char **host)
{
	unsigned n = 0;

	for (unsigned i = 0; i < svr_nfiles(r); i++) {
		const char *h = svr_file(r, i)->host;
		unsigned k = 0;

		while (k < n && strcmp(host[k], h))
			k++;
		if (k == n && n < MAX_HOSTS)
			host[n++] = h;
	}
	return n;
}

/* A host's clock as its files say it: synchronised when every file was (sv_clock_sync_ok at start and in
 * every SYNC record); else why not, into @why. */
static bool host_synced(const struct svr *r, const char *host, char *why, size_t size)
{
	bool unsync = false, error = false, tai_unset = false;

	for (unsigned i = 0; i < svr_nfiles(r); i++) {
		const struct svr_file_info *fi = svr_file(r, i);

		if (strcmp(fi->host, host) || fi->sync_ok)
			continue;
		unsync |= fi->sync.unsync;
		error |= !fi->sync.unsync;
		tai_unset |= fi->tai_unset;
	}
	snprintf(why, size, "%s%s%s", unsync ? "STA_UNSYNC" : "", error ? (unsync ? ", state error" : "state error") : "",
		 tai_unset ? ", TAI offset unset" : "");
	return !unsync && !error && !tai_unset;
}

/* The tools that recorded on @host, "svtrace, svsub". */
static void host_tools(const struct svr *r, const char *host, char *buf, size_t size, unsigned *files)
{
	size_t len = 0;

	buf[0] = '\0';
	*files = 0;
	for (unsigned i = 0; i < svr_nfiles(r); i++) {
		const struct svr_file_info *fi = svr_file(r, i);

		if (strcmp(fi->host, host))
			continue;
		(*files)++;
		if (!strstr(buf, fi->tool) && len + strlen(fi->tool) + 3 < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", fi->tool);
	}
}

/* One compared hop summed over guests: counts added, the worst guest's p99. */
struct agg {
	uint64_t count, lost, missing;
	int64_t p99;
	unsigned guests;
	bool has_lat, unsync;
};

static void agg_add(struct agg *a, const struct svr_hop *h, bool unsync)
{
	a->count += h->count;
	a->lost += h->lost;
	a->missing += h->missing;
	if (h->lat.count && (!a->has_lat || h->lat.p99 > a->p99)) {
		a->p99 = h->lat.p99;
		a->has_lat = true;
	}
	a->guests++;
	a->unsync |= unsync;
}

/* Walks every guest of @host (NULL: every guest) and compared hop with data; @fn per row (may be NULL) and
 * the sums per compared hop into @sum. */
typedef void hosts_row_fn(struct svr_out *o, unsigned g, unsigned k, const struct svr_hop *h, bool unsync);
static void hosts_walk(struct svr_out *o, const char *host, hosts_row_fn *fn, struct agg sum[SVR_NCOMPARE])
{
	memset(sum, 0, SVR_NCOMPARE * sizeof(*sum));
	for (unsigned g = 0; g < svr_nguests(o->r); g++) {
		if (host && strcmp(o->r->guest_host[g], host))
			continue;
		for (unsigned k = 0; k < SVR_NCOMPARE; k++) {
			struct svr_hop h;
			bool unsync;

			if (svr_hop_get(o->r, svr_compare_hops[k][0], svr_compare_hops[k][1], (int)g, -1, &h))
				continue;
			unsync = svr_hop_unsync(&o->e->clock, &h);
			if (fn)
				fn(o, g, k, &h, unsync);
			agg_add(&sum[k], &h, unsync);
		}
	}
}

static void hop_name(unsigned k, char *buf, size_t size)
{
	snprintf(buf, size, "%s-%s", sv_point_name(svr_compare_hops[k][0]), sv_point_name(svr_compare_hops[k][1]));
}

/* ---- text ---- */

static void text_row(FILE *f, const char *who, const char *hop, uint64_t count, uint64_t lost, uint64_t missing,
		     int64_t p99, bool unsync)
{
	fprintf(f, "    %-22s %-8s frames %-10" PRIu64 " lost %-8" PRIu64 " missing %-8" PRIu64 " p99 %" PRId64 " us%s\n",
		who, hop, count, lost, missing, p99 / 1000, unsync ? " (clocks not synchronised: not judged)" : "");
}

static void text_guest_row(struct svr_out *o, unsigned g, unsigned k, const struct svr_hop *h, bool unsync)
{
	char hop[16];

	hop_name(k, hop, sizeof(hop));
	text_row(o->f, svr_guest_name(o->r, g), hop, h->count, h->lost, h->missing, h->lat.p99, unsync);
}

static void text_sums(FILE *f, const char *who, const struct agg sum[SVR_NCOMPARE])
{
	char hop[16];

	for (unsigned k = 0; k < SVR_NCOMPARE; k++) {
		if (!sum[k].guests)
			continue;
		hop_name(k, hop, sizeof(hop));
		text_row(f, who, hop, sum[k].count, sum[k].lost, sum[k].missing, sum[k].p99, sum[k].unsync);
	}
}

void svr_text_hosts(struct svr_out *o)
{
	const char *host[MAX_HOSTS];
	unsigned n = hosts_of(o->r, host), nunsync = 0;
	struct agg sum[SVR_NCOMPARE];
	char why[64], tools[64];

	if (n < 2)
		return; /* one host: the report is its view */
	fprintf(o->f, "\nHosts (%u; p99 of several guests: the worst guest's):\n", n);
	for (unsigned i = 0; i < n; i++) {
		unsigned files;
		bool ok = host_synced(o->r, host[i], why, sizeof(why));

		host_tools(o->r, host[i], tools, sizeof(tools), &files);
		nunsync += !ok;
		fprintf(o->f, "  %s: %s (%u file%s), clock %s%s%s\n", host[i], tools, files, files == 1 ? "" : "s",
			ok ? "synchronised" : "NOT SYNCHRONISED (", ok ? "" : why, ok ? "" : ")");
		hosts_walk(o, host[i], text_guest_row, sum);
	}
	hosts_walk(o, NULL, NULL, sum);
	fprintf(o->f, "  cluster: %u hosts, %u with a clock not synchronised\n", n, nunsync);
	text_sums(o->f, "all guests", sum);
}

/* ---- JSON ---- */

static void json_hop(struct sv_json *j, unsigned k, uint64_t count, uint64_t lost, uint64_t missing, int64_t p99,
		     bool has_lat, bool unsync)
{
	char hop[16];

	hop_name(k, hop, sizeof(hop));
	sv_json_object_begin(j);
	sv_json_kv_str(j, "hop", hop);
	sv_json_kv_uint(j, "count", count);
	sv_json_kv_uint(j, "lost", lost);
	sv_json_kv_uint(j, "missing", missing);
	if (has_lat)
		sv_json_kv_int(j, "p99_ns", p99);
	else
		sv_json_kv_null(j, "p99_ns");
	sv_json_kv_bool(j, "clocks_unsynchronised", unsync);
	sv_json_object_end(j);
}

static void json_sums(struct sv_json *j, const char *key, const struct agg sum[SVR_NCOMPARE])
{
	sv_json_key(j, key);
	sv_json_array_begin(j);
	for (unsigned k = 0; k < SVR_NCOMPARE; k++)
		if (sum[k].guests)
			json_hop(j, k, sum[k].count, sum[k].lost, sum[k].missing, sum[k].p99, sum[k].has_lat,
				 sum[k].unsync);
	sv_json_array_end(j);
}

void svr_json_hosts(struct svr_out *o)
{
	const char *host[MAX_HOSTS];
	unsigned n = hosts_of(o->r, host);
	struct sv_json *j = o->j;
	struct agg sum[SVR_NCOMPARE];
	char why[64], tools[64];

	sv_json_key(j, "hosts");
	sv_json_object_begin(j);
	sv_json_key(j, "hosts");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < n; i++) {
		unsigned files;
		bool ok = host_synced(o->r, host[i], why, sizeof(why));

		host_tools(o->r, host[i], tools, sizeof(tools), &files);
		sv_json_object_begin(j);
		sv_json_kv_str(j, "host", host[i]);
		sv_json_kv_str(j, "tools", tools);
		sv_json_kv_uint(j, "files", files);
		sv_json_kv_bool(j, "clock_synchronised", ok);
		sv_json_kv_str(j, "clock_problem", ok ? NULL : why);
		sv_json_key(j, "guests");
		sv_json_array_begin(j);
		for (unsigned g = 0; g < svr_nguests(o->r); g++) {
			if (strcmp(o->r->guest_host[g], host[i]))
				continue;
			sv_json_object_begin(j);
			sv_json_kv_str(j, "guest", svr_guest_name(o->r, g));
			sv_json_key(j, "hops");
			sv_json_array_begin(j);
			for (unsigned k = 0; k < SVR_NCOMPARE; k++) {
				struct svr_hop h;

				if (!svr_hop_get(o->r, svr_compare_hops[k][0], svr_compare_hops[k][1], (int)g, -1, &h))
					json_hop(j, k, h.count, h.lost, h.missing, h.lat.p99, h.lat.count != 0,
						 svr_hop_unsync(&o->e->clock, &h));
			}
			sv_json_array_end(j);
			sv_json_object_end(j);
		}
		sv_json_array_end(j);
		hosts_walk(o, host[i], NULL, sum);
		json_sums(j, "hops", sum);
		sv_json_object_end(j);
	}
	sv_json_array_end(j);
	sv_json_key(j, "cluster");
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "hosts", n);
	sv_json_key(j, "unsynchronised_hosts");
	sv_json_array_begin(j);
	for (unsigned i = 0; i < n; i++)
		if (!host_synced(o->r, host[i], why, sizeof(why)))
			sv_json_string(j, host[i]);
	sv_json_array_end(j);
	hosts_walk(o, NULL, NULL, sum);
	json_sums(j, "hops", sum);
	sv_json_object_end(j);
	sv_json_object_end(j);
}
