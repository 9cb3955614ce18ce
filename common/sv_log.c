// SPDX-License-Identifier: Apache-2.0
#include "sv_log.h"

#include <stdio.h>

static sv_log_fn log_fn;
static void *log_ctx;
static enum sv_log_level log_max = SV_LOG_INFO;

void sv_log_set(sv_log_fn fn, void *ctx, enum sv_log_level max_level)
{
	log_fn = fn;
	log_ctx = ctx;
	log_max = max_level;
}

void sv_vlog(enum sv_log_level level, const char *fmt, va_list ap)
{
	char buf[1024];

	if (!log_fn || level > log_max)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	log_fn(level, buf, log_ctx);
}

void sv_log(enum sv_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sv_vlog(level, fmt, ap);
	va_end(ap);
}

void sv_log_stderr(enum sv_log_level level, const char *msg, void *ctx)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };
	const char *prog = ctx;

	if (prog)
		fprintf(stderr, "%s: %s: %s\n", prog, names[level], msg);
	else
		fprintf(stderr, "%s: %s\n", names[level], msg);
}

bool sv_log_ratelimit(struct sv_ratelimit *rl, int64_t now_ns)
{
	if (now_ns - rl->window_start_ns >= rl->interval_ns) {
		rl->window_start_ns = now_ns;
		rl->used = 0;
	}
	if (rl->used < rl->burst) {
		rl->used++;
		return true;
	}
	rl->suppressed++;
	return false;
}
