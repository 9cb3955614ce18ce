/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Live metrics for Prometheus: a bounded registry of metric families whose values are read, at scrape time,
 * from the tool's own counters and histograms, and its exposition as OpenMetrics 1.0.0 text or the classic
 * Prometheus text format 0.0.4. The HTTP server is in sv_metrics_http.h (its own library: only programs that
 * serve metrics link libmicrohttpd). docs/metrics.md names every metric the tools export.
 *
 * Life cycle (one thread sets it up; then one scrape thread renders):
 *	sv_metrics_create(&m, 0);
 *	f = sv_metrics_family(m, "svkit_sub_frames", SV_METRIC_COUNTER, NULL, "SV frames ...", 2, names);
 *	sv_metrics_add_u64(f, values, &counters.frames);		// static series: a pointer read at scrape
 *	t = sv_metrics_table_new(m, 2, names, 64, &ops, tracker);	// rows (streams) that appear at run time
 *	sv_metrics_table_column(t, f, NULL);
 *	sv_metrics_add_health(m, "svsub", host, &health);
 *	sv_metrics_server_start(...);		// freezes the registry: no registration after the first render
 *	... run ...
 *	sv_metrics_finish(m);			// after the last counter update: the totals are final
 *	sv_metrics_server_linger(...); sv_metrics_server_stop(...); sv_metrics_destroy(m);
 * Everything a series points at must outlive the server (stop it before freeing the tool's structures).
 *
 * The packet path does nothing new: it updates the counters and histograms it already keeps. The scrape
 * thread reads them without locks: a 64-bit counter with one relaxed atomic load (aligned 64-bit loads and
 * stores are single-copy atomic on x86-64 and arm64, so a value is never torn; the writer's plain
 * increments then race only formally, and a writer may use sv_metrics_inc() to be race-free at no cost).
 * What a scrape gets:
 *   - each series is one read of the tool's counter: between scrapes it never goes backwards (a single
 *     writer that only increments, and the coherence of one location);
 *   - a scrape is not a snapshot of one instant: two counters read microseconds apart may straddle a frame
 *     (frames counted, its samples not yet);
 *   - a histogram is converted from one read of each sv_stats bucket: its cumulative buckets are monotonic
 *     in le and `_count` is the +Inf bucket, always (both are sums of the same reads); `_sum` is read after
 *     the buckets and may include the few values added during the read (or miss one being added);
 *   - after sv_metrics_finish() (release) every value a scrape reads (acquire) is the final one.
 *
 * Histograms: sv_stats buckets (log-linear, 64 per power of two) are exported on fixed Prometheus buckets,
 * SV_METRICS_HIST_EDGES of them from 10 us to 100 ms (sv_metrics_hist_edge_ns), in seconds. An sv_stats bucket
 * [lo, hi] is counted in the first exported bucket whose edge is >= hi, so `le` never counts a value above
 * its edge: a value v counts in le=E only if v <= E (a budget alert never misses a late frame), and the
 * only values counted one bucket too high are those in [lo_E, E] where [lo_E, hi_E] is the sv_stats
 * bucket that straddles E: C(le=E) = N(v < lo_E). E - lo_E < the bucket width <= E/64 (1.6 %); for these
 * edges it is at most 0.68 % (sv_metrics_hist_edge_lo_ns, docs/metrics.md lists each).
 *
 * Labels: names are fixed per family; values are bytes (an svID is an arbitrary octet string on the wire):
 * '\\', '"' and newline are escaped as the formats say, bytes 0x80..0xFF are written as the characters
 * U+0080..U+00FF (ISO 8859-1: the string a JSON reader gets from the tools' --json, whose escaper writes
 * them as \u00XX), so every label value is valid UTF-8 and distinct bytes stay distinct.
 *
 * Bounds: the registry refuses a family, series or table past its maximum number of series (a histogram
 * counts as SV_METRICS_HIST_SERIES series, a table column as max_rows + 1). Rows of a table past its
 * max_rows are summed into one "overflow" row (gauges are left out of it), so the series stay bounded
 * whatever arrives. A rendered row keeps its sample lines up to the value (~80 octets a series): a scrape then
 * costs a copy and a number per series.
 *
 * The library never prints; registration errors are returned (-EINVAL, -EEXIST, -ENOSPC, -EBUSY, -ENOMEM).
 */
#ifndef SV_METRICS_H
#define SV_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct sv_stats;
struct sv_record_writer;

#define SV_METRICS_MAX_LABELS 8
#define SV_METRICS_LABEL_MAX 256	/* label value octets kept (an svID has at most 129) */
#define SV_METRICS_HIST_EDGES 17
#define SV_METRICS_HIST_SERIES (SV_METRICS_HIST_EDGES + 3) /* buckets, +Inf, _sum, _count */
#define SV_METRICS_ABSENT UINT64_MAX	/* a table gauge with no value now: its sample is left out */
#define SV_METRICS_MAX_SERIES_DEFAULT 20000u

/* Exported bucket edges (ns): 10, 25, 50, 100, 150, 200, 250, 300, 400, 500 us, 1, 2, 4, 10, 25, 50, 100 ms. */
extern const int64_t sv_metrics_hist_edge_ns[SV_METRICS_HIST_EDGES];
/* The edge's `le` label value as Go's strconv.FormatFloat(x, 'g', -1, 64) writes it ("1e-05", "0.0001"): the
 * same string in both formats, so a target that changes format keeps its series. */
extern const char *const sv_metrics_hist_edge_le[SV_METRICS_HIST_EDGES];
/* Lower end of the sv_stats bucket holding edge @i: C(le=edge) counts exactly the values < this (equal to
 * edge + 1 when the edge ends an sv_stats bucket: no error). */
int64_t sv_metrics_hist_edge_lo_ns(unsigned i);

enum sv_metric_type {
	SV_METRIC_COUNTER = 0,	/* name without _total: the samples get it */
	SV_METRIC_GAUGE,
	SV_METRIC_HISTOGRAM,	/* values in ns, exported in seconds: the name must end in _seconds */
	SV_METRIC_INFO,		/* value 1, identity in the labels: OpenMetrics info, a gauge NAME_info in 0.0.4 */
};

enum sv_metrics_format {
	SV_METRICS_TEXT_004 = 0,	/* text/plain; version=0.0.4 */
	SV_METRICS_OPENMETRICS,		/* application/openmetrics-text; version=1.0.0 */
};

/* A value read at scrape time. */
enum sv_metrics_vkind {
	SV_METRICS_V_U64 = 0,	/* an integer count */
	SV_METRICS_V_NS,	/* nanoseconds (signed), exported exactly in seconds */
	SV_METRICS_V_DOUBLE,
};
struct sv_metrics_value {
	enum sv_metrics_vkind kind;
	union {
		uint64_t u;
		int64_t ns;
		double d;
	};
};

/* A histogram as exported: counts per exported bucket (not cumulative), [i] for (edge[i-1], edge[i]] in the
 * sense above and [SV_METRICS_HIST_EDGES] above the last edge; the sum in ns (128 bits). */
struct sv_metrics_hist {
	uint64_t bucket[SV_METRICS_HIST_EDGES + 1];
	uint64_t sum_lo, sum_hi;
};

struct sv_metrics;
struct sv_metrics_family;
struct sv_metrics_table;

/* ---- Lock-free access for the tool's side ------------------------------------------------------ */

static inline uint64_t sv_metrics_load_u64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void sv_metrics_store_u64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Single-writer increment that a concurrent scrape may read: a relaxed load and store (a plain add in the
 * machine code, no locked instruction). Only one thread may write *@p. */
static inline void sv_metrics_inc(uint64_t *p, uint64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* ---- Registry ---------------------------------------------------------------------------------- */

/* @max_series 0: SV_METRICS_MAX_SERIES_DEFAULT. Returns 0, -EINVAL or -ENOMEM. */
int sv_metrics_create(struct sv_metrics **m, unsigned max_series);
/* NULL is a no-op. The server must be stopped first. */
void sv_metrics_destroy(struct sv_metrics *m);

/*
 * A metric family. @name: [a-zA-Z_:][a-zA-Z0-9_:]*, not ending in _total (counters get it), _bucket, _sum,
 * _count, _created or _info; with @unit (e.g. "seconds", "bytes"; NULL none) it must end in "_" unit.
 * Histograms must have unit "seconds". @help: one line (escaped as each format wants). @label_names:
 * [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__", no "le", no duplicates; at most SV_METRICS_MAX_LABELS.
 * Strings are copied. Returns the family (owned by @m), or NULL with errno EINVAL, EEXIST (same name),
 * EBUSY (already rendered) or ENOMEM.
 */
struct sv_metrics_family *sv_metrics_family(struct sv_metrics *m, const char *name, enum sv_metric_type type,
					    const char *unit, const char *help, unsigned nlabels,
					    const char *const *label_names);

/*
 * Static series of a family, one per set of label values (@values: one C string per label name; NULL when
 * the family has no labels). The source is read at every scrape:
 *   add_u64:   *@src, a uint64_t the tool updates (counter or gauge; relaxed load);
 *   add_ns:    *@src, int64_t nanoseconds exported in seconds (gauges);
 *   add_value: a constant (info families: any value, 1 is written);
 *   add_fn:    @fn(ctx, &v) on the scrape thread; it returns 0, or < 0 to leave the sample out this time;
 *   add_hist:  *@h, an sv_stats the tool keeps adding to (histogram families);
 *   add_hist_fn: @fn(ctx, out) fills a cleared struct sv_metrics_hist, e.g. with sv_metrics_hist_add() of
 *              several sv_stats (a hop's histogram summed over streams at scrape time).
 * Returns 0, -EINVAL (kind does not fit the family's type, bad values), -EEXIST (same label values),
 * -ENOSPC (max_series), -EBUSY or -ENOMEM.
 */
int sv_metrics_add_u64(struct sv_metrics_family *f, const char *const *values, const uint64_t *src);
int sv_metrics_add_ns(struct sv_metrics_family *f, const char *const *values, const int64_t *src);
int sv_metrics_add_value(struct sv_metrics_family *f, const char *const *values, struct sv_metrics_value v);
int sv_metrics_add_fn(struct sv_metrics_family *f, const char *const *values,
		      int (*fn)(void *ctx, struct sv_metrics_value *v), void *ctx);
int sv_metrics_add_hist(struct sv_metrics_family *f, const char *const *values, const struct sv_stats *h);
int sv_metrics_add_hist_fn(struct sv_metrics_family *f, const char *const *values,
			   void (*fn)(void *ctx, struct sv_metrics_hist *out), void *ctx);

/* Adds histogram @h, which another thread may be adding to, into @out (relaxed loads, see above). */
void sv_metrics_hist_add(struct sv_metrics_hist *out, const struct sv_stats *h);

/*
 * Rows that appear at run time (streams): the tool's own table, read through @ops on the scrape thread.
 *   count():  rows published so far; rows are only ever added, and a row's identity and counters must be
 *             in place before it is counted (the tool publishes its count with a release store, count()
 *             reads it with an acquire load). Bounded by the tool's table.
 *   labels(): the label values of @row, once per row (cached: they must never change): fill val[i], len[i]
 *             for the table's labels (bytes, any content); @buf/@size is scratch for formatting (an APPID).
 *             Returns 0, or < 0 to try again at the next scrape.
 *   values(): the row's current values, one per column in column order (relaxed loads); SV_METRICS_ABSENT
 *             leaves a gauge's sample out.
 * Rows past @max_rows are summed into one row whose label values are all "overflow" (an APPID label reads
 * "overflow", which no real APPID does), gauges left out; it appears once count() exceeds max_rows.
 * Returns the table (owned by @m), or NULL with errno EINVAL, ENOSPC, EBUSY, ENOMEM.
 */
struct sv_metrics_table_ops {
	unsigned (*count)(void *ctx);
	int (*labels)(void *ctx, unsigned row, const char **val, size_t *len, char *buf, size_t size);
	void (*values)(void *ctx, unsigned row, uint64_t *v);
};
struct sv_metrics_table *sv_metrics_table_new(struct sv_metrics *m, unsigned nlabels,
					      const char *const *label_names, unsigned max_rows,
					      const struct sv_metrics_table_ops *ops, void *ctx);
/*
 * A column: family @f (counter or gauge) whose first labels are the table's, in the same order; its further
 * labels take the fixed values @extra (NULL when there are none): e.g. family {svid, appid, flag} with
 * extra {"invalid"}. Returns the column's index in values() (0, 1, ...), or -EINVAL, -ENOSPC, -EBUSY, -ENOMEM.
 */
int sv_metrics_table_column(struct sv_metrics_table *t, struct sv_metrics_family *f, const char *const *extra);

/* ---- Health metrics every tool exports (docs/metrics.md "common") ------------------------------- */

/* Counters the tool copies here from the thread that owns them (relaxed stores: sv_metrics_store_u64). */
struct sv_metrics_health {
	uint64_t events_lost;		/* svtrace: ring-buffer events lost; others: see docs/metrics.md */
	uint64_t ring_overflows;	/* receive/transmit rings that overflowed (frames) */
	uint64_t record_records;	/* the record writer's counters (sv_metrics_health_record) */
	uint64_t record_bytes;
	uint64_t record_write_errors;
	uint64_t record_lost_records;
};

/*
 * Registers svkit_build_info{tool,version,host}, svkit_process_start_time_seconds (now, on CLOCK_REALTIME),
 * svkit_run_finished, the clock state read at each scrape with adjtimex (svkit_clock_synchronised,
 * svkit_clock_maxerror_seconds, svkit_clock_esterror_seconds, svkit_clock_tai_offset_seconds) and @h's
 * counters. @h must outlive the registry's use. Returns 0 or a registration error.
 */
int sv_metrics_add_health(struct sv_metrics *m, const char *tool, const char *host,
			  const struct sv_metrics_health *h);
/* Copies @w's counters (sv_record_writer_get_stats) into @h. Call from the thread that owns @w, e.g. once per
 * interval, and after the last sv_record_flush() before sv_record_writer_close(). NULL @w is a no-op. */
void sv_metrics_health_record(struct sv_metrics_health *h, const struct sv_record_writer *w);
/* The same from counters already read (sv_record_writer_close_stats: the final ones). NULL @h or @st: no-op. */
struct sv_record_writer_stats;
void sv_metrics_health_record_stats(struct sv_metrics_health *h, const struct sv_record_writer_stats *st);

/* The run has ended: every counter has its final value (call after the packet threads stopped). Sets
 * svkit_run_finished to 1 with a release store; a render that starts later reads the final totals. */
void sv_metrics_finish(struct sv_metrics *m);
bool sv_metrics_finished(const struct sv_metrics *m);

/* ---- Exposition ---------------------------------------------------------------------------------- */

/* A text buffer grown by the renderer up to @max octets (0: 64 MiB). Owned by the rendering thread. */
struct sv_metrics_text {
	char *p;
	size_t len, cap, max;
};
void sv_metrics_text_free(struct sv_metrics_text *t);

/*
 * Renders every family into @out (replacing its content). The first call freezes the registry. *@final
 * (may be NULL) is set when sv_metrics_finish() happened before the render started (its values are the
 * final totals). Returns 0, -E2BIG (past out->max) or -ENOMEM. One rendering thread at a time.
 */
int sv_metrics_render(struct sv_metrics *m, enum sv_metrics_format fmt, struct sv_metrics_text *out, bool *final);

/* The Content-Type of a format. */
const char *sv_metrics_content_type(enum sv_metrics_format fmt);

/* The format an HTTP Accept header asks for: OpenMetrics when application/openmetrics-text has a q > 0 not
 * below text/plain's; otherwise (absent, "*" "/" "*", malformed) the 0.0.4 text format. */
enum sv_metrics_format sv_metrics_format_for_accept(const char *accept);

/* ---- --metrics ADDR:PORT ------------------------------------------------------------------------- */

/*
 * Parses "IPv4:PORT" or "[IPv6]:PORT" (numeric addresses only: no host names, no DNS; an IPv6 scope as
 * "[fe80::1%eth0]:9101"; PORT 0..65535, 0 = any free port). Every address must be said: "0.0.0.0:PORT" or
 * "[::]:PORT" to listen on all of them. Returns 0, or -EINVAL with *@why (may be NULL) a static reason.
 */
int sv_metrics_addr_parse(const char *s, struct sockaddr_storage *ss, socklen_t *len, const char **why);

/* ---- The tools' keys: metrics (--metrics ADDR:PORT) and metrics_linger (--metrics-linger S) ---------- */

#define SV_METRICS_ADDR_SIZE 96		/* a tool config's char metrics[] */
#define SV_METRICS_LINGER_MAX_S 3600.0
/* The key's check (sv_config .check): "" (off) or sv_metrics_addr_parse's syntax. */
int sv_metrics_check_addr(const char *value, char *msg, size_t n);
/* Their rows in the tool's config table (sv_config.h, which the table's file includes): struct @T holds
 * char metrics[SV_METRICS_ADDR_SIZE] and double metrics_linger. */
#define SV_METRICS_CFG_ROWS(T)                                                                          \
	SV_CFG_KEY_STRING(T, metrics, "metrics", "",                                                        \
			  "serve live metrics for Prometheus on ADDR:PORT (GET /metrics; 127.0.0.1:9462, "       \
			  "[::1]:9462, 0.0.0.0:9462; numeric, port 0 any): it exposes no control, keep it on the " \
			  "management network (docs/metrics.md); empty = off",                                  \
			  .check = sv_metrics_check_addr, SV_OPT("metrics", 0, "ADDR:PORT")),                   \
	SV_CFG_KEY_DOUBLE(T, metrics_linger, "metrics_linger", 0, SV_METRICS_LINGER_MAX_S, "0",            \
			  "at the end, keep serving metrics until one scrape got the final totals, at most S "    \
			  "seconds (a second ^C ends it; set it above the scrape interval); 0 = stop at once",   \
			  SV_OPT("metrics-linger", 0, "S"))
/* The host-name key (--host NAME): the name the records' header and svkit_build_info carry, for hosts that
 * share one name (namespaces of a lab); struct @T holds char host[SV_METRICS_HOST_SIZE]. */
#define SV_METRICS_HOST_SIZE 64
#define SV_METRICS_HOST_CFG_ROW(T)                                                                      \
	SV_CFG_KEY_STRING(T, host, "host", "",                                                              \
			  "the host name the records and the metrics carry (svreport keeps hosts apart by it); "  \
			  "empty = this host's name (gethostname)", SV_OPT("host", 0, "NAME"))
/* @name, or gethostname() into @buf when @name is empty or NULL. Returns the name. */
const char *sv_metrics_host(const char *name, char *buf, size_t size);

#endif /* SV_METRICS_H */
