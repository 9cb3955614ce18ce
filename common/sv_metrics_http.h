/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The metrics HTTP server (--metrics ADDR:PORT): GET /metrics of one sv_metrics registry, served by
 * libmicrohttpd on a thread of its own. A library apart from libsv (sv_metrics_http, linking libmicrohttpd):
 * programs that serve no metrics, and svreport, carry no dependency on it.
 *
 * What it serves: GET or HEAD /metrics (a query string is ignored); 404 for any other path, 405 (with Allow)
 * for any other method. The format follows the Accept header (sv_metrics_format_for_accept): OpenMetrics
 * for Prometheus, the 0.0.4 text otherwise (curl, a browser). It exposes no control: it should listen on
 * the management network only.
 *
 * The packet path is never touched: the server thread renders from the registry (reads only) into a buffer
 * it owns, and is created SCHED_OTHER with every signal blocked, whatever the tool's own threads run at
 * (a SCHED_FIFO tool does not hand its priority to its scrapes; SIGINT still reaches the tool).
 *
 * Bounds (struct sv_metrics_server_cfg): at most max_connections open at once (more are accepted and closed
 * at once, counted); request headers above conn_memory are refused by libmicrohttpd (431); a connection idle
 * for idle_timeout_s is closed; a request must be answered within request_timeout_ms of the connection's
 * opening or of its previous response, else the connection is shut down (a client that trickles a byte at a
 * time, or does not read its response, cannot hold a slot longer); one rendered text at most max_text octets
 * (500 past it), and one copy of it per connection being answered. A slow client never delays another: one
 * thread multiplexes every connection with epoll, and nothing in it blocks.
 *
 * The server counts what it did, in the registry (svkit_metrics_http_requests_total{code},
 * svkit_metrics_http_connections_total{result="accepted"|"refused"}, svkit_metrics_http_deadline_closes_total,
 * svkit_metrics_scrape_duration_seconds, svkit_metrics_response_bytes), and in sv_metrics_server_get_stats().
 */
#ifndef SV_METRICS_HTTP_H
#define SV_METRICS_HTTP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_metrics.h"

struct sv_metrics_server_cfg {
	unsigned max_connections;	/* open at once; 0: 16 */
	unsigned idle_timeout_s;	/* 0: 10 */
	unsigned request_timeout_ms;	/* 0: 10000 (Prometheus's default scrape timeout) */
	size_t conn_memory;		/* per connection, request headers included; 0: 16 KiB */
	size_t max_text;		/* one rendered scrape; 0: 64 MiB */
};

struct sv_metrics_server_stats {
	uint64_t accepted;		/* connections */
	uint64_t refused;		/* over max_connections */
	uint64_t deadline_closes;	/* shut down past request_timeout_ms */
	uint64_t ok, not_found, bad_method, errors; /* responses 200, 404, 405, 500 */
	uint64_t final_scrapes;		/* 200 responses rendered after sv_metrics_finish(), fully sent */
	uint64_t open;			/* connections open now */
};

struct sv_metrics_server;

/*
 * Listens on @addr (sv_metrics_addr_parse syntax), registers the server's own metrics in @m, freezes @m and
 * starts the thread. Errors are logged (sv_log) saying what and where, and returned: -EINVAL (bad address,
 * or registration), -EADDRINUSE, -EADDRNOTAVAIL, -EACCES, -ENOMEM, ... @cfg may be NULL (defaults).
 */
int sv_metrics_server_start(struct sv_metrics_server **s, struct sv_metrics *m, const char *addr,
			    const struct sv_metrics_server_cfg *cfg);

/* The address listened on, with the port chosen for port 0: "127.0.0.1:43117", "[::1]:9101". */
int sv_metrics_server_address(const struct sv_metrics_server *s, char *buf, size_t size);

/*
 * End of the run: marks @m finished (sv_metrics_finish) and waits until @scrapes (0: 1) scrapes rendered
 * after that have been fully sent, or @max_ns has passed, or *@stop (may be NULL) becomes non-zero (a
 * second ^C). The tool calls it after its packet threads have stopped and before sv_metrics_server_stop(),
 * so that Prometheus gets the final totals. Returns 0 (scraped), -ETIMEDOUT or -EINTR.
 */
int sv_metrics_server_linger(struct sv_metrics_server *s, int64_t max_ns, unsigned scrapes,
			     volatile sig_atomic_t *stop);

/* A copy of the counters (any thread). */
void sv_metrics_server_get_stats(struct sv_metrics_server *s, struct sv_metrics_server_stats *st);

/* Stops the thread, closes every connection and the socket, frees. NULL is a no-op. */
void sv_metrics_server_stop(struct sv_metrics_server *s);

/* ---- A tool's run: registry, health, server (the keys of SV_METRICS_CFG_ROWS) --------------------------- */

struct sv_metrics_run {
	struct sv_metrics *m;		/* the tool registers its families here between init and serve */
	struct sv_metrics_server *srv;
	struct sv_metrics_health health; /* the tool stores its health counters here (relaxed stores) */
	char address[96];		/* what the server listens on, port resolved ("" before serve) */
};

/* Creates the registry and registers the health families (sv_metrics_add_health) for @tool on @host.
 * Returns 0 or -errno (@r is then empty: sv_metrics_run_free() is still fine). */
int sv_metrics_run_init(struct sv_metrics_run *r, const char *tool, const char *host);
/* Starts serving on @addr (sv_metrics_server_start: errors logged) and fills r->address. 0 or -errno. */
int sv_metrics_run_serve(struct sv_metrics_run *r, const char *addr);
/* The end of the run (the packet threads stopped, every counter final): marks the registry finished and,
 * with @linger_s > 0 and a server, waits for one scrape of the final totals, at most @linger_s seconds or until
 * *@stop becomes non-zero (the caller clears it first: a second ^C); says so (sv_log info) and, unscraped, warns.
 * Returns sv_metrics_server_linger's result, or 0 (no linger). */
int sv_metrics_run_end(struct sv_metrics_run *r, double linger_s, volatile sig_atomic_t *stop);
/* Stops the server and frees the registry. */
void sv_metrics_run_free(struct sv_metrics_run *r);

#endif /* SV_METRICS_HTTP_H */
