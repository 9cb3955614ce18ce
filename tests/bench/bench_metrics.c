// SPDX-License-Identifier: Apache-2.0
/*
 * Cost of a metrics scrape at 8 and at 256 streams (issue 32: "within a small factor"). The registry is the size
 * of a real one: the health families, svsub's 15 per-stream families (20 columns with the quality flags),
 * 14 hop histograms (svtrace's 3 hops x 4 ports and svsub's 2), 30 static counters. Streams carry values of
 * realistic size (counters around 10^9, histograms filled over 20..420 us).
 *   render: sv_metrics_render() to OpenMetrics, 8 and 256 streams interleaved, medians of ROUNDS renders (the
 *           server thread's work) and of the per-round ratios;
 *   http:   a GET /metrics through sv_metrics_server on 127.0.0.1 (connect, request, whole response), median.
 * Prints "figure: NAME VALUE UNIT" lines (tests/bench/metrics.bench).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sv_metrics.h"
#include "sv_metrics_http.h"
#include "sv_stats.h"

#define ROUNDS 301
#define HTTP_ROUNDS 101
#define COLS 20
#define HISTS 14

struct bench {
	unsigned n;
	uint64_t v[256][COLS];
	char svid[256][16];
	struct sv_stats *h[HISTS];
	uint64_t counters[30];
	struct sv_metrics_health health;
};

static unsigned b_count(void *ctx)
{
	return ((struct bench *)ctx)->n;
}

static int b_labels(void *ctx, unsigned row, const char **val, size_t *len, char *buf, size_t size)
{
	struct bench *b = ctx;

	val[0] = b->svid[row];
	len[0] = strlen(b->svid[row]);
	len[1] = (size_t)snprintf(buf, size, "0x%04x", 0x4000 + row);
	val[1] = buf;
	return 0;
}

static void b_values(void *ctx, unsigned row, uint64_t *v)
{
	struct bench *b = ctx;

	for (unsigned c = 0; c < COLS; c++)
		v[c] = sv_metrics_load_u64(&b->v[row][c]);
}

static const struct sv_metrics_table_ops ops = { b_count, b_labels, b_values };

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static struct sv_metrics *build(struct bench *b, unsigned n)
{
	static const char *const stream[] = { "svid", "appid" }, *const flag[] = { "svid", "appid", "flag" },
				 *const hop[] = { "hop", "port" }, *const kinds[] = { "invalid", "questionable", "test",
										"derived" };
	static const char *const per_stream[] = { "svkit_sub_frames", "svkit_sub_samples", "svkit_sub_lost_samples",
						  "svkit_sub_duplicate_samples", "svkit_sub_out_of_order_samples",
						  "svkit_sub_smpcnt_restarts", "svkit_sub_confrev_changes",
						  "svkit_sub_smpsynch_changes", "svkit_sub_simulated_frames",
						  "svkit_sub_decode_errors", "svkit_sub_samples_not_good",
						  "svkit_sub_latency_rejected_samples" };
	struct sv_metrics *m;
	struct sv_metrics_family *f;
	struct sv_metrics_table *t;
	char name[64];
	uint64_t x = 1;

	b->n = n;
	if (sv_metrics_create(&m, 0) || sv_metrics_add_health(m, "svsub", "bench", &b->health))
		exit(1);
	t = sv_metrics_table_new(m, 2, stream, 256, &ops, b);
	for (size_t i = 0; i < sizeof(per_stream) / sizeof(per_stream[0]); i++) {
		f = sv_metrics_family(m, per_stream[i], SV_METRIC_COUNTER, NULL, "a per-stream counter", 2, stream);
		if (!f || sv_metrics_table_column(t, f, NULL) < 0)
			exit(1);
	}
	f = sv_metrics_family(m, "svkit_sub_quality_flags", SV_METRIC_COUNTER, NULL, "flags", 3, flag);
	for (unsigned k = 0; k < 4; k++)
		if (sv_metrics_table_column(t, f, &kinds[k]) < 0)
			exit(1);
	for (unsigned k = 0; k < 2; k++) {
		f = sv_metrics_family(m, k ? "svkit_sub_stream_clock_synchronised" : "svkit_sub_confrev", SV_METRIC_GAUGE,
				      NULL, "a per-stream gauge", 2, stream);
		if (!f || sv_metrics_table_column(t, f, NULL) < 0)
			exit(1);
	}
	f = sv_metrics_family(m, "svkit_hop_latency_seconds", SV_METRIC_HISTOGRAM, "seconds", "hop latency", 2, hop);
	for (unsigned i = 0; i < HISTS; i++) {
		char p[16];
		const char *hv[2] = { i < 12 ? (i % 3 == 0 ? "T1-T2a" : i % 3 == 1 ? "T2a-T2b" : "T1-T2b") : i == 12 ? "Ts-T3" : "T3-T4", p };

		snprintf(p, sizeof(p), "vnet%u", i / 3);
		b->h[i] = malloc(sizeof(struct sv_stats));
		sv_stats_init(b->h[i]);
		for (unsigned k = 0; k < 100000; k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			sv_stats_add(b->h[i], (int64_t)(20000 + (x >> 33) % 400000));
		}
		if (sv_metrics_add_hist(f, hv, b->h[i]))
			exit(1);
	}
	for (unsigned i = 0; i < 30; i++) {
		snprintf(name, sizeof(name), "svkit_bench_counter_%u", i);
		f = sv_metrics_family(m, name, SV_METRIC_COUNTER, NULL, "a tool counter", 0, NULL);
		b->counters[i] = 123456789ull * (i + 1);
		if (!f || sv_metrics_add_u64(f, NULL, &b->counters[i]))
			exit(1);
	}
	for (unsigned r = 0; r < 256; r++) {
		snprintf(b->svid[r], sizeof(b->svid[r]), "MU%03u", r);
		for (unsigned c = 0; c < COLS; c++)
			b->v[r][c] = 1000000000ull + r * 7919 + c;
	}
	return m;
}

/* Renders @a and @b alternately (the machine's load then falls on both alike): medians in *ua, *ub and the
 * median of the per-round ratios b/a. */
static double render_pair(struct sv_metrics *a, struct sv_metrics *b, double *ua, double *ub, size_t *bytes_a,
			  size_t *bytes_b)
{
	static int64_t ta[ROUNDS], tb[ROUNDS], ratio[ROUNDS];
	struct sv_metrics_text txa = { 0 }, txb = { 0 };

	for (int i = 0; i < ROUNDS; i++) {
		int64_t t0 = now_ns(), t1, t2;

		if (sv_metrics_render(a, SV_METRICS_OPENMETRICS, &txa, NULL))
			exit(1);
		t1 = now_ns();
		if (sv_metrics_render(b, SV_METRICS_OPENMETRICS, &txb, NULL))
			exit(1);
		t2 = now_ns();
		ta[i] = t1 - t0;
		tb[i] = t2 - t1;
		ratio[i] = (tb[i] * 1000) / (ta[i] ? ta[i] : 1);
	}
	*bytes_a = txa.len;
	*bytes_b = txb.len;
	sv_metrics_text_free(&txa);
	sv_metrics_text_free(&txb);
	qsort(ta, ROUNDS, sizeof(ta[0]), cmp_i64);
	qsort(tb, ROUNDS, sizeof(tb[0]), cmp_i64);
	qsort(ratio, ROUNDS, sizeof(ratio[0]), cmp_i64);
	*ua = (double)ta[ROUNDS / 2] / 1000.0;
	*ub = (double)tb[ROUNDS / 2] / 1000.0;
	return (double)ratio[ROUNDS / 2] / 1000.0;
}

static double http_us(struct sv_metrics *m)
{
	static int64_t t[HTTP_ROUNDS];
	static char buf[1 << 16];
	struct sv_metrics_server *srv;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char addr[64];
	const char req[] = "GET /metrics HTTP/1.1\r\nHost: b\r\nAccept: application/openmetrics-text\r\n"
			   "Connection: close\r\n\r\n";

	if (sv_metrics_server_start(&srv, m, "127.0.0.1:0", NULL))
		exit(1);
	sv_metrics_server_address(srv, addr, sizeof(addr));
	sa.sin_port = htons((uint16_t)atoi(strrchr(addr, ':') + 1));
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (int i = 0; i < HTTP_ROUNDS; i++) {
		int64_t t0 = now_ns();
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
		    write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1))
			exit(1);
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
		t[i] = now_ns() - t0;
	}
	sv_metrics_server_stop(srv);
	qsort(t, HTTP_ROUNDS, sizeof(t[0]), cmp_i64);
	return (double)t[HTTP_ROUNDS / 2] / 1000.0;
}

int main(void)
{
	static struct bench b8, b256, c8, c256; /* the server registers its own families: registries of their own */
	struct sv_metrics *m8 = build(&b8, 8), *m256 = build(&b256, 256), *s8 = build(&c8, 8), *s256 = build(&c256, 256);
	struct sv_metrics_hist h;
	size_t bytes8, bytes256;
	double r8, r256, h8, h256, ratio;
	int64_t t0;

	ratio = render_pair(m8, m256, &r8, &r256, &bytes8, &bytes256);
	t0 = now_ns();
	for (int i = 0; i < 10000; i++) {
		memset(&h, 0, sizeof(h));
		sv_metrics_hist_add(&h, b8.h[i % HISTS]);
	}
	printf("figure: metrics_hist_convert_ns %.0f ns (one sv_stats histogram of 20..420 us to the 17 buckets)\n",
	       (double)(now_ns() - t0) / 10000);
	printf("figure: metrics_scrape_8_us %.1f us (render, %zu octets: 8 streams x 20 columns, 14 hop histograms, "
	       "health)\n", r8, bytes8);
	printf("figure: metrics_scrape_256_us %.1f us (render, %zu octets: 256 streams)\n", r256, bytes256);
	printf("figure: metrics_scrape_ratio_256_8 %.1f x (render cost, 256 streams / 8: median of interleaved pairs)\n",
	       ratio);
	h8 = http_us(s8);
	h256 = http_us(s256);
	printf("figure: metrics_http_scrape_8_us %.1f us (GET /metrics on 127.0.0.1, connect to last octet)\n", h8);
	printf("figure: metrics_http_scrape_256_us %.1f us\n", h256);
	printf("figure: metrics_http_ratio_256_8 %.1f x\n", h256 / h8);
	sv_metrics_destroy(m8);
	sv_metrics_destroy(m256);
	sv_metrics_destroy(s8);
	sv_metrics_destroy(s256);
	for (unsigned i = 0; i < HISTS; i++) {
		free(b8.h[i]);
		free(b256.h[i]);
		free(c8.h[i]);
		free(c256.h[i]);
	}
	return 0;
}
