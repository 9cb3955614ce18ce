// SPDX-License-Identifier: Apache-2.0
/* The metrics HTTP server on libmicrohttpd: see sv_metrics_http.h for the contract. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "sv_clock.h"
#include "sv_log.h"
#include "sv_metrics_http.h"

#define CONN_MARGIN 8	/* libmicrohttpd's own limit, above ours: ours refuses (and counts) first */

struct conn {
	bool used;
	bool killed;
	int fd;
	int64_t t_start_ns;	/* opening, or the previous response sent (CLOCK_MONOTONIC) */
};

_Static_assert(sizeof(struct sv_metrics_server_stats) % sizeof(uint64_t) == 0, "stats are uint64_t only");

struct sv_metrics_server {
	struct sv_metrics *m;
	struct sv_metrics_server_cfg cfg;
	struct MHD_Daemon *d;
	int stop_fd;
	pthread_t thread;
	bool thread_started;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	struct sv_metrics_text txt;	/* the server thread's render buffer */
	struct conn *conns;
	unsigned nconns;
	/* written by the server thread only (sv_metrics_inc), read anywhere with relaxed loads */
	struct sv_metrics_server_stats st;
	int64_t scrape_ns;		/* the previous render's duration */
	uint64_t response_bytes;	/* the previous render's size */
	pthread_mutex_t lock;		/* linger's wait on final scrapes */
	pthread_cond_t cond;
	char final_marker, plain_marker; /* a request's con_cls: its text was rendered after the end or not */
};

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return sv_timespec_to_ns(&ts);
}

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct sv_metrics_server *s = cls;

	(void)addr;
	(void)len;
	if (s->st.open >= s->cfg.max_connections) {
		sv_metrics_inc(&s->st.refused, 1);
		return MHD_NO;
	}
	sv_metrics_inc(&s->st.accepted, 1);
	return MHD_YES;
}

static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe)
{
	struct sv_metrics_server *s = cls;
	struct conn *k = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

		for (unsigned i = 0; i < s->nconns; i++)
			if (!s->conns[i].used) {
				k = &s->conns[i];
				k->used = true;
				k->killed = false;
				k->fd = ci ? ci->connect_fd : -1;
				k->t_start_ns = mono_ns();
				*socket_context = k;
				break;
			}
		sv_metrics_inc(&s->st.open, 1);
		return;
	}
	if (k)
		k->used = false;
	*socket_context = NULL;
	sv_metrics_store_u64(&s->st.open, s->st.open - 1);
}

static void request_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			      enum MHD_RequestTerminationCode toe)
{
	struct sv_metrics_server *s = cls;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *k = ci ? ci->socket_context : NULL;

	if (k)
		k->t_start_ns = mono_ns();
	if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && *con_cls == &s->final_marker) {
		pthread_mutex_lock(&s->lock);
		sv_metrics_inc(&s->st.final_scrapes, 1);
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
	}
	*con_cls = NULL;
}

static enum MHD_Result respond(struct MHD_Connection *c, unsigned code, const char *type, const char *body,
			       size_t len, const char *allow)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type) != MHD_YES ||
	    (allow && MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow) != MHD_YES)) {
		MHD_destroy_response(r);
		return MHD_NO;
	}
	ret = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return ret;
}

/* Called once headers are in, then once per part of a body, then once the request is complete. A refusal is
 * queued at once (libmicrohttpd discards a body then, and closes the connection after the answer); a scrape waits
 * for the complete request, so that the connection can be kept alive for the next one (Prometheus reuses it). */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size,
			      void **con_cls)
{
	static const char not_found[] = "not found: the metrics are at GET /metrics\n";
	static const char bad_method[] = "method not allowed: GET /metrics\n";
	static const char failed[] = "metrics could not be rendered\n";
	struct sv_metrics_server *s = cls;
	const char *accept;
	enum sv_metrics_format fmt;
	bool final = false;
	int64_t t0;
	int err;

	(void)version;
	(void)upload_data;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		sv_metrics_inc(&s->st.bad_method, 1);
		return respond(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", bad_method,
			       sizeof(bad_method) - 1, "GET, HEAD");
	}
	if (strcmp(url, "/metrics")) {
		sv_metrics_inc(&s->st.not_found, 1);
		return respond(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found, sizeof(not_found) - 1,
			       NULL);
	}
	if (!*con_cls) {
		*con_cls = &s->plain_marker; /* headers in: answer once the request is complete */
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0; /* a GET with a body: ignored */
		return MHD_YES;
	}
	accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	fmt = sv_metrics_format_for_accept(accept);
	t0 = mono_ns();
	err = sv_metrics_render(s->m, fmt, &s->txt, &final);
	__atomic_store_n(&s->scrape_ns, mono_ns() - t0, __ATOMIC_RELAXED);
	if (err) {
		sv_metrics_inc(&s->st.errors, 1);
		return respond(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", failed,
			       sizeof(failed) - 1, NULL);
	}
	sv_metrics_store_u64(&s->response_bytes, s->txt.len);
	sv_metrics_inc(&s->st.ok, 1);
	*con_cls = final ? &s->final_marker : &s->plain_marker;
	return respond(c, MHD_HTTP_OK, sv_metrics_content_type(fmt), s->txt.p ? s->txt.p : "", s->txt.len, NULL);
}

/* Connections past their request deadline are shut down: libmicrohttpd sees the socket end and closes it. */
static void check_deadlines(struct sv_metrics_server *s)
{
	int64_t now = mono_ns(), limit = (int64_t)s->cfg.request_timeout_ms * SV_NSEC_PER_MSEC;

	for (unsigned i = 0; i < s->nconns; i++) {
		struct conn *k = &s->conns[i];

		if (!k->used || k->killed || k->fd < 0 || now - k->t_start_ns <= limit)
			continue;
		shutdown(k->fd, SHUT_RDWR);
		k->killed = true;
		sv_metrics_inc(&s->st.deadline_closes, 1);
	}
}

static void *server_main(void *arg)
{
	struct sv_metrics_server *s = arg;
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_EPOLL_FD);
	int epfd = di ? di->epoll_fd : -1;

	for (;;) {
		struct pollfd p[2] = { { .fd = epfd, .events = POLLIN }, { .fd = s->stop_fd, .events = POLLIN } };
		MHD_UNSIGNED_LONG_LONG to;
		int timeout = 1000;

		if (MHD_get_timeout(s->d, &to) == MHD_YES && to < (MHD_UNSIGNED_LONG_LONG)timeout)
			timeout = (int)to;
		if (s->st.open && timeout > 100)
			timeout = 100; /* deadline checks */
		if (poll(p, 2, timeout) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		MHD_run(s->d);
		check_deadlines(s);
	}
	return NULL;
}

static int register_own(struct sv_metrics_server *s)
{
	static const char *const code_label[] = { "code" }, *const result_label[] = { "result" };
	struct {
		const char *code;
		const uint64_t *src;
	} codes[] = { { "200", &s->st.ok }, { "404", &s->st.not_found }, { "405", &s->st.bad_method },
		      { "500", &s->st.errors } };
	struct sv_metrics_family *f;
	int err;

	f = sv_metrics_family(s->m, "svkit_metrics_http_requests", SV_METRIC_COUNTER, NULL,
			      "Requests answered by the metrics server, by HTTP status code", 1, code_label);
	if (!f)
		return -errno;
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		const char *v[] = { codes[i].code };

		err = sv_metrics_add_u64(f, v, codes[i].src);
		if (err)
			return err;
	}
	f = sv_metrics_family(s->m, "svkit_metrics_http_connections", SV_METRIC_COUNTER, NULL,
			      "Connections to the metrics server: accepted, or refused over the connection limit", 1,
			      result_label);
	if (!f)
		return -errno;
	err = sv_metrics_add_u64(f, (const char *const[]){ "accepted" }, &s->st.accepted);
	if (!err)
		err = sv_metrics_add_u64(f, (const char *const[]){ "refused" }, &s->st.refused);
	if (err)
		return err;
	f = sv_metrics_family(s->m, "svkit_metrics_http_deadline_closes", SV_METRIC_COUNTER, NULL,
			      "Connections shut down for not completing a request within the request timeout", 0, NULL);
	if (!f)
		return -errno;
	err = sv_metrics_add_u64(f, NULL, &s->st.deadline_closes);
	if (err)
		return err;
	f = sv_metrics_family(s->m, "svkit_metrics_scrape_duration_seconds", SV_METRIC_GAUGE, "seconds",
			      "Time the previous scrape took to render", 0, NULL);
	if (!f)
		return -errno;
	err = sv_metrics_add_ns(f, NULL, &s->scrape_ns);
	if (err)
		return err;
	f = sv_metrics_family(s->m, "svkit_metrics_response_bytes", SV_METRIC_GAUGE, "bytes",
			      "Size of the previous scrape's text", 0, NULL);
	if (!f)
		return -errno;
	return sv_metrics_add_u64(f, NULL, &s->response_bytes);
}

static int listen_on(struct sv_metrics_server *s, const char *addr, int *fd_out)
{
	const char *why = NULL;
	int fd, one = 1, err = sv_metrics_addr_parse(addr, &s->addr, &s->addrlen, &why);

	if (err) {
		sv_err("metrics: bad address '%s': %s", addr ? addr : "", why);
		return err;
	}
	fd = socket(s->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		sv_err("metrics: socket for %s: %s", addr, strerror(-err));
		return err;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&s->addr, s->addrlen) || listen(fd, 64)) {
		err = -errno;
		sv_err("metrics: cannot listen on %s: %s%s", addr, strerror(-err),
		       err == -EADDRNOTAVAIL ? " (no interface has that address)"
		       : err == -EACCES	     ? " (ports below 1024 need CAP_NET_BIND_SERVICE)"
					     : "");
		close(fd);
		return err;
	}
	s->addrlen = sizeof(s->addr);
	getsockname(fd, (struct sockaddr *)&s->addr, &s->addrlen);
	*fd_out = fd;
	return 0;
}

static void server_free(struct sv_metrics_server *s)
{
	if (s->d)
		MHD_stop_daemon(s->d);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	sv_metrics_text_free(&s->txt);
	free(s->conns);
	free(s);
}

int sv_metrics_server_start(struct sv_metrics_server **out, struct sv_metrics *m, const char *addr,
			    const struct sv_metrics_server_cfg *cfg)
{
	struct sv_metrics_server *s = calloc(1, sizeof(*s));
	pthread_condattr_t ca;
	pthread_attr_t attr;
	struct sched_param sp = { 0 };
	sigset_t all, old;
	int fd = -1, err;

	if (!s)
		return -ENOMEM;
	s->stop_fd = -1;
	s->m = m;
	if (cfg)
		s->cfg = *cfg;
	if (!s->cfg.max_connections)
		s->cfg.max_connections = 16;
	if (!s->cfg.idle_timeout_s)
		s->cfg.idle_timeout_s = 10;
	if (!s->cfg.request_timeout_ms)
		s->cfg.request_timeout_ms = 10000;
	if (!s->cfg.conn_memory)
		s->cfg.conn_memory = 16384;
	s->txt.max = s->cfg.max_text;
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	s->nconns = s->cfg.max_connections + CONN_MARGIN;
	s->conns = calloc(s->nconns, sizeof(*s->conns));
	if (!s->conns) {
		err = -ENOMEM;
		goto out_free;
	}
	err = register_own(s);
	if (err) {
		sv_err("metrics: cannot register the server's own metrics: %s", strerror(-err));
		goto out_free;
	}
	err = listen_on(s, addr, &fd);
	if (err)
		goto out_free;
	s->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->stop_fd < 0) {
		err = -errno;
		goto out_close;
	}
	s->d = MHD_start_daemon(MHD_USE_EPOLL, 0, accept_policy, s, handle, s, MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)(s->cfg.max_connections + CONN_MARGIN),
				MHD_OPTION_CONNECTION_TIMEOUT, s->cfg.idle_timeout_s,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, s->cfg.conn_memory, MHD_OPTION_NOTIFY_COMPLETED,
				request_completed, s, MHD_OPTION_NOTIFY_CONNECTION, notify_connection, s,
				MHD_OPTION_END);
	if (!s->d) {
		err = -EIO;
		sv_err("metrics: libmicrohttpd did not start on %s", addr);
		goto out_close;
	}
	fd = -1; /* the daemon's now: MHD_stop_daemon closes it */
	/* Freeze the registry now: a registration racing the first scrape would be a bug, make it an error. */
	err = sv_metrics_render(m, SV_METRICS_TEXT_004, &s->txt, NULL);
	if (err) {
		sv_err("metrics: first render failed: %s", strerror(-err));
		goto out_free;
	}
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &sp);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&s->thread, &attr, server_main, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		sv_err("metrics: cannot start the server thread: %s", strerror(-err));
		goto out_free;
	}
	pthread_setname_np(s->thread, "svkit-metrics");
	s->thread_started = true;
	*out = s;
	return 0;

out_close:
	if (fd >= 0)
		close(fd);
out_free:
	server_free(s);
	return err;
}

int sv_metrics_server_address(const struct sv_metrics_server *s, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN + 32], port[8];

	if (getnameinfo((const struct sockaddr *)&s->addr, s->addrlen, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV))
		return -EINVAL;
	return snprintf(buf, size, s->addr.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

int sv_metrics_server_linger(struct sv_metrics_server *s, int64_t max_ns, unsigned scrapes,
			     volatile sig_atomic_t *stop)
{
	int64_t deadline = mono_ns() + (max_ns > 0 ? max_ns : 0);
	int ret = 0;

	sv_metrics_finish(s->m);
	if (!scrapes)
		scrapes = 1;
	pthread_mutex_lock(&s->lock);
	while (sv_metrics_load_u64(&s->st.final_scrapes) < scrapes) {
		int64_t now = mono_ns(), until = now + 100 * SV_NSEC_PER_MSEC;
		struct timespec ts;

		if (stop && *stop) {
			ret = -EINTR;
			break;
		}
		if (now >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		ts = sv_ns_to_timespec(until < deadline ? until : deadline);
		pthread_cond_timedwait(&s->cond, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return ret;
}

void sv_metrics_server_get_stats(struct sv_metrics_server *s, struct sv_metrics_server_stats *st)
{
	const uint64_t *src = (const uint64_t *)&s->st;
	uint64_t *dst = (uint64_t *)st;

	for (size_t i = 0; i < sizeof(*st) / sizeof(uint64_t); i++)
		dst[i] = sv_metrics_load_u64(&src[i]);
}

void sv_metrics_server_stop(struct sv_metrics_server *s)
{
	uint64_t one = 1;

	if (!s)
		return;
	if (s->thread_started) {
		if (write(s->stop_fd, &one, sizeof(one)) != sizeof(one))
			sv_warn("metrics: stop signal: %s", strerror(errno));
		pthread_join(s->thread, NULL);
	}
	server_free(s);
}

/* ---- A tool's run -------------------------------------------------------------------------------------- */

int sv_metrics_run_init(struct sv_metrics_run *r, const char *tool, const char *host)
{
	int err;

	memset(r, 0, sizeof(*r));
	err = sv_metrics_create(&r->m, 0);
	if (err)
		return err;
	err = sv_metrics_add_health(r->m, tool, host, &r->health);
	if (err)
		goto out_destroy;
	return 0;
out_destroy:
	sv_metrics_destroy(r->m);
	r->m = NULL;
	return err;
}

int sv_metrics_run_serve(struct sv_metrics_run *r, const char *addr)
{
	int err = sv_metrics_server_start(&r->srv, r->m, addr, NULL);

	if (err)
		return err;
	err = sv_metrics_server_address(r->srv, r->address, sizeof(r->address));
	return err < 0 ? err : 0;
}

int sv_metrics_run_end(struct sv_metrics_run *r, double linger_s, volatile sig_atomic_t *stop)
{
	if (!r->m)
		return 0;
	int err;

	sv_metrics_finish(r->m);
	if (!r->srv || linger_s <= 0)
		return 0;
	sv_info("metrics: serving the final totals until scraped (at most %g s; ^C ends)", linger_s);
	err = sv_metrics_server_linger(r->srv, (int64_t)(linger_s * 1e9), 1, stop);
	if (err == -ETIMEDOUT)
		sv_warn("metrics: not scraped within --metrics-linger %g s: Prometheus lacks the last totals", linger_s);
	return err;
}

void sv_metrics_run_free(struct sv_metrics_run *r)
{
	sv_metrics_server_stop(r->srv);
	r->srv = NULL;
	sv_metrics_destroy(r->m);
	r->m = NULL;
}
