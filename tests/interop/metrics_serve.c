// SPDX-License-Identifier: Apache-2.0
/*
 * A metrics test server: registers every family of configs/prometheus/metrics.txt with synthetic series (the
 * health and server families through libsv itself), serves them with sv_metrics_server on --listen while a
 * writer thread updates the counters and histograms at full speed, the way a tool's packet thread would.
 * Used by metrics_http.py (scrapes, promtool, abuse), metrics_prometheus.sh (a real Prometheus) and phase 2's
 * comparisons. Streams (rows with svid, appid) appear while it runs: half at start, the rest during the first
 * second; past --max-rows they fold into the overflow row.
 *
 * stdout: "listening ADDR" once serving; at the end (--duration, SIGINT or SIGTERM) "final {json}" with the
 * totals a scrape after the end must show, then "linger scraped|timeout|interrupted". stderr: the writer's
 * rate. Exit 0, 1 on failure, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sv_clock.h"
#include "sv_log.h"
#include "sv_metrics.h"
#include "sv_metrics_http.h"
#include "sv_stats.h"

#define MAX_STATIC 4096
#define MAX_HIST 64
#define MAX_ROWS 4096

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct server_state {
	uint64_t cnt[MAX_STATIC];	/* static counter and gauge series */
	unsigned ncnt;
	struct sv_stats *hist[MAX_HIST];
	unsigned nhist;
	int t1t2b_vnet0;		/* index of svkit_hop_latency_seconds{hop="T1-T2b",port="vnet0"} */
	/* the stream table */
	unsigned rows_total, rows_published;
	uint64_t base[MAX_ROWS];
	char svid[MAX_ROWS][24];
	size_t svid_len[MAX_ROWS];
	unsigned ncols;
	int stop_writer;
	uint64_t iterations;
};

static unsigned rows_count(void *ctx)
{
	struct server_state *s = ctx;

	return __atomic_load_n(&s->rows_published, __ATOMIC_ACQUIRE);
}

static int rows_labels(void *ctx, unsigned row, const char **val, size_t *len, char *buf, size_t size)
{
	struct server_state *s = ctx;

	val[0] = s->svid[row];
	len[0] = s->svid_len[row];
	len[1] = (size_t)snprintf(buf, size, "0x%04x", 0x4000 + row);
	val[1] = buf;
	return 0;
}

static void rows_values(void *ctx, unsigned row, uint64_t *v)
{
	struct server_state *s = ctx;
	uint64_t b = sv_metrics_load_u64(&s->base[row]);

	for (unsigned c = 0; c < s->ncols; c++)
		v[c] = b;
}

static const struct sv_metrics_table_ops rows_ops = { rows_count, rows_labels, rows_values };

/* Synthetic values of a label the stream table does not give. */
static const char *const *values_for(const char *label, unsigned *n)
{
	static const char *const hop[] = { "T1-T2a", "T2a-T2b", "T1-T2b" }, *const port[] = { "vnet0", "vnet1" },
				 *const reason[] = { "NETFILTER_DROP", "ring_full" }, *const error[] = { "length", "tag" },
				 *const table[] = { "track", "streams" },
				 *const flag[] = { "invalid", "questionable", "test", "derived" },
				 *const cause[] = { "runqueue", "preempted" }, *const other[] = { "x" };
	static const struct {
		const char *name;
		const char *const *v;
		unsigned n;
	} known[] = { { "hop", hop, 3 },     { "port", port, 2 },   { "reason", reason, 2 }, { "error", error, 2 },
		      { "table", table, 2 }, { "flag", flag, 4 },   { "cause", cause, 2 } };

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(label, known[i].name)) {
			*n = known[i].n;
			return known[i].v;
		}
	*n = 1;
	return other;
}

/* Every combination of synthetic values of labels [from, n): calls add(values) for each. */
static int each_combo(unsigned from, unsigned n, char **labels, const char **vals,
		      int (*add)(void *ctx, const char **vals), void *ctx)
{
	unsigned k;
	const char *const *v;
	int err;

	if (from == n)
		return add(ctx, vals);
	v = values_for(labels[from], &k);
	for (unsigned i = 0; i < k; i++) {
		vals[from] = v[i];
		err = each_combo(from + 1, n, labels, vals, add, ctx);
		if (err)
			return err;
	}
	return 0;
}

struct add_ctx {
	struct server_state *s;
	struct sv_metrics_family *f;
	enum sv_metric_type type;
	struct sv_metrics_table *t;
	const char *name;
	unsigned nlabels;
};

static int add_static(void *arg, const char **vals)
{
	struct add_ctx *a = arg;
	struct server_state *s = a->s;

	if (a->type == SV_METRIC_HISTOGRAM) {
		if (s->nhist == MAX_HIST)
			return -ENOSPC;
		s->hist[s->nhist] = malloc(sizeof(struct sv_stats));
		if (!s->hist[s->nhist])
			return -ENOMEM;
		sv_stats_init(s->hist[s->nhist]);
		if (!strcmp(a->name, "svkit_hop_latency_seconds") && !strcmp(vals[0], "T1-T2b") &&
		    !strcmp(vals[1], "vnet0"))
			s->t1t2b_vnet0 = (int)s->nhist;
		return sv_metrics_add_hist(a->f, vals, s->hist[s->nhist++]);
	}
	if (a->type == SV_METRIC_INFO)
		return sv_metrics_add_value(a->f, vals, (struct sv_metrics_value){ .kind = SV_METRICS_V_U64, .u = 1 });
	if (s->ncnt == MAX_STATIC)
		return -ENOSPC;
	return sv_metrics_add_u64(a->f, vals, &s->cnt[s->ncnt++]);
}

static int add_column(void *arg, const char **vals)
{
	struct add_ctx *a = arg;
	int col = sv_metrics_table_column(a->t, a->f, a->nlabels > 2 ? vals + 2 : NULL);

	if (col < 0)
		return col;
	a->s->ncols = (unsigned)col + 1;
	return 0;
}

static int parse_type(const char *s, enum sv_metric_type *t)
{
	static const char *const names[] = { "counter", "gauge", "histogram", "info" };

	for (unsigned i = 0; i < 4; i++)
		if (!strcmp(s, names[i])) {
			*t = (enum sv_metric_type)i;
			return 0;
		}
	return -EINVAL;
}

/* Registers every catalogue family: those libsv registers itself (health: already there; the server's
 * svkit_metrics_*: at start) are skipped. */
static int load_catalogue(const char *path, struct sv_metrics *m, struct server_state *s, struct sv_metrics_table *t)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned lineno = 0;
	int err = 0;

	if (!f) {
		fprintf(stderr, "metrics_serve: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[128], type_s[16], unit[32], labels_s[256], tools[64], *help, *tok, *save = NULL;
		char *labels[SV_METRICS_MAX_LABELS];
		const char *vals[SV_METRICS_MAX_LABELS];
		struct add_ctx a = { .s = s, .t = t };
		int used = 0;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || !line[0])
			continue;
		if (sscanf(line, "%127s %15s %31s %255s %63s %n", name, type_s, unit, labels_s, tools, &used) != 5 ||
		    parse_type(type_s, &a.type)) {
			fprintf(stderr, "metrics_serve: %s:%u: bad line\n", path, lineno);
			err = -EINVAL;
			break;
		}
		help = line + used;
		if (!strncmp(name, "svkit_metrics_", 14))
			continue;
		a.nlabels = 0;
		if (strcmp(labels_s, "-"))
			for (tok = strtok_r(labels_s, ",", &save); tok && a.nlabels < SV_METRICS_MAX_LABELS;
			     tok = strtok_r(NULL, ",", &save))
				labels[a.nlabels++] = tok;
		a.name = name;
		a.f = sv_metrics_family(m, name, a.type, strcmp(unit, "-") ? unit : NULL, help, a.nlabels,
					(const char *const *)labels);
		if (!a.f && errno == EEXIST)
			continue; /* libsv's health family */
		if (!a.f) {
			fprintf(stderr, "metrics_serve: %s:%u: %s refused: %s\n", path, lineno, name, strerror(errno));
			err = -errno;
			break;
		}
		if (a.nlabels >= 2 && !strcmp(labels[0], "svid") && !strcmp(labels[1], "appid"))
			err = each_combo(2, a.nlabels, labels, vals, add_column, &a);
		else
			err = each_combo(0, a.nlabels, labels, vals, add_static, &a);
		if (err) {
			fprintf(stderr, "metrics_serve: %s:%u: %s: %s\n", path, lineno, name, strerror(-err));
			break;
		}
	}
	fclose(f);
	return err;
}

static void *writer(void *arg)
{
	struct server_state *s = arg;
	uint64_t k = 0, x = 88172645463325252ull;

	while (!__atomic_load_n(&s->stop_writer, __ATOMIC_RELAXED)) {
		unsigned rows = s->rows_published;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sv_metrics_inc(&s->base[k % rows], 1);
		if (s->ncnt)
			sv_metrics_inc(&s->cnt[k % s->ncnt], 1);
		if (s->nhist)
			sv_stats_add(s->hist[k % s->nhist], (int64_t)(20000 + (x % 400000))); /* 20..420 us */
		/* the rest of the streams appear during the first second or so */
		if (rows < s->rows_total && k % 20000 == 19999)
			__atomic_store_n(&s->rows_published, rows + 1, __ATOMIC_RELEASE);
		k++;
		sv_metrics_store_u64(&s->iterations, k);
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: metrics_serve --catalogue FILE [--listen ADDR:PORT] [--streams N] [--max-rows N]\n"
		   "       [--duration S] [--linger S] [--max-connections N] [--idle-timeout S] [--request-timeout-ms MS]\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' },	     { "catalogue", required_argument, NULL, 'c' },
		{ "streams", required_argument, NULL, 's' },	     { "max-rows", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },	     { "linger", required_argument, NULL, 'g' },
		{ "max-connections", required_argument, NULL, 'n' }, { "idle-timeout", required_argument, NULL, 'i' },
		{ "request-timeout-ms", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const char *const stream_labels[] = { "svid", "appid" };
	struct sv_metrics_server_cfg cfg = { 0 };
	const char *listen = "127.0.0.1:0", *catalogue = NULL;
	double duration = 0, linger = 10;
	unsigned streams = 8, max_rows = 256;
	struct server_state *s = calloc(1, sizeof(*s));
	struct sv_metrics_health health = { 0 };
	struct sv_metrics_server *srv = NULL;
	struct sv_metrics *m = NULL;
	struct sv_metrics_table *t;
	struct sigaction sa = { .sa_handler = on_signal };
	pthread_t th;
	char addr[96];
	int64_t t0, t1;
	uint64_t sum = 0;
	int c, err, rc = 1;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'l': listen = optarg; break;
		case 'c': catalogue = optarg; break;
		case 's': streams = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'r': max_rows = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'd': duration = strtod(optarg, NULL); break;
		case 'g': linger = strtod(optarg, NULL); break;
		case 'n': cfg.max_connections = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'i': cfg.idle_timeout_s = (unsigned)strtoul(optarg, NULL, 10); break;
		case 't': cfg.request_timeout_ms = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'h': usage(stdout); free(s); return 0;
		default: usage(stderr); free(s); return 2;
		}
	}
	if (!catalogue || !streams || streams > MAX_ROWS || !s) {
		usage(stderr);
		free(s);
		return 2;
	}
	sv_log_set(sv_log_stderr, "metrics_serve", SV_LOG_INFO);
	for (unsigned i = 0; i < streams; i++) {
		/* svIDs are octet strings from the wire: quotes, backslashes, a newline, Latin-1 octets */
		static const char *const odd[] = { "MU01", "q\"uote\\back\nnl", "\xc3\xa9t\xe9" };

		if (i < 3)
			s->svid_len[i] = strlen(strcpy(s->svid[i], odd[i]));
		else
			s->svid_len[i] = (size_t)snprintf(s->svid[i], sizeof(s->svid[i]), "SV%03u", i);
	}
	s->rows_total = streams;
	s->rows_published = (streams + 1) / 2;
	s->t1t2b_vnet0 = -1;
	if (sv_metrics_create(&m, 0))
		goto out_free;
	t = sv_metrics_table_new(m, 2, stream_labels, max_rows, &rows_ops, s);
	if (sv_metrics_add_health(m, "metrics_serve", "testhost", &health) || !t || load_catalogue(catalogue, m, s, t))
		goto out_free;
	health.events_lost = 1;
	err = sv_metrics_server_start(&srv, m, listen, &cfg);
	if (err)
		goto out_free;
	sv_metrics_server_address(srv, addr, sizeof(addr));
	printf("listening %s\n", addr);
	fflush(stdout);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	t0 = sv_clock_now_ns(SV_CLOCK_MONOTONIC);
	if (pthread_create(&th, NULL, writer, s)) {
		sv_metrics_server_stop(srv);
		goto out_free;
	}
	while (!stop_flag && (duration <= 0 || sv_clock_now_ns(SV_CLOCK_MONOTONIC) - t0 < (int64_t)(duration * 1e9)))
		usleep(20000);
	__atomic_store_n(&s->stop_writer, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	t1 = sv_clock_now_ns(SV_CLOCK_MONOTONIC);
	fprintf(stderr, "metrics_serve: writer %" PRIu64 " iterations in %.2f s: %.0f/s\n", s->iterations,
		(double)(t1 - t0) / 1e9, (double)s->iterations / ((double)(t1 - t0) / 1e9));
	for (unsigned i = 0; i < s->rows_published; i++)
		sum += s->base[i];
	printf("final {\"sub_frames_sum\": %" PRIu64 ", \"streams\": %u, \"hop_count\": %" PRIu64
	       ", \"writer_iterations\": %" PRIu64 "}\n",
	       sum, s->rows_published, s->t1t2b_vnet0 >= 0 ? s->hist[s->t1t2b_vnet0]->count : 0, s->iterations);
	fflush(stdout);
	stop_flag = 0;
	err = sv_metrics_server_linger(srv, (int64_t)(linger * 1e9), 1, &stop_flag);
	printf("linger %s\n", !err ? "scraped" : err == -ETIMEDOUT ? "timeout" : "interrupted");
	fflush(stdout);
	sv_metrics_server_stop(srv);
	rc = 0;
out_free:
	sv_metrics_destroy(m);
	for (unsigned i = 0; i < s->nhist; i++)
		free(s->hist[i]);
	free(s);
	return rc;
}
