/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Levelled logging for libsv. The library never prints: it calls the callback the program installs
 * (none installed: messages are dropped). Nothing on a per-packet path logs; it counts instead, or
 * goes through sv_log_ratelimit().
 */
#ifndef SV_LOG_H
#define SV_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

enum sv_log_level {
	SV_LOG_ERR = 0,
	SV_LOG_WARN,
	SV_LOG_INFO,
	SV_LOG_DEBUG,
};

typedef void (*sv_log_fn)(enum sv_log_level level, const char *msg, void *ctx);

/* Installs @fn (NULL: drop everything) and the most verbose level passed to it. Not thread-safe against
 * concurrent sv_log() calls: install once at start. */
void sv_log_set(sv_log_fn fn, void *ctx, enum sv_log_level max_level);

/* Formats and passes one message (without trailing newline) to the callback. */
void sv_log(enum sv_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sv_vlog(enum sv_log_level level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* A ready-made callback for programs: "prog: level: msg\n" on stderr. @ctx is the program name
 * (const char *), or NULL. */
void sv_log_stderr(enum sv_log_level level, const char *msg, void *ctx);

/* Rate limiter for rare per-packet conditions: true at most @burst times per @interval_ns of the
 * monotonic clock @now_ns; counts what it suppressed. */
struct sv_ratelimit {
	int64_t interval_ns;
	uint32_t burst;
	uint32_t used;
	int64_t window_start_ns;
	uint64_t suppressed;
};
bool sv_log_ratelimit(struct sv_ratelimit *rl, int64_t now_ns);

#define sv_err(...) sv_log(SV_LOG_ERR, __VA_ARGS__)
#define sv_warn(...) sv_log(SV_LOG_WARN, __VA_ARGS__)
#define sv_info(...) sv_log(SV_LOG_INFO, __VA_ARGS__)
#define sv_dbg(...) sv_log(SV_LOG_DEBUG, __VA_ARGS__)

#endif /* SV_LOG_H */
