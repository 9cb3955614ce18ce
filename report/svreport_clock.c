// SPDX-License-Identifier: Apache-2.0
/*
 * svreport's clock check: whether the files' clocks can be joined (one host, synchronised hosts, TAI
 * offsets set) and what the latencies say about them. See svreport.h.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "svreport_private.h"

static void add_reason(struct svr_clock *c, bool note, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void add_reason(struct svr_clock *c, bool note, const char *fmt, ...)
{
	va_list ap;
	unsigned *n = note ? &c->nnotes : &c->nreasons;
	char(*arr)[160] = note ? c->notes : c->reasons;

	if (*n >= 8)
		return;
	va_start(ap, fmt);
	vsnprintf(arr[*n], sizeof(arr[0]), fmt, ap);
	va_end(ap);
	for (unsigned i = 0; i < *n; i++)
		if (!strcmp(arr[i], arr[*n]))
			return;	/* the same host seen in several files */
	(*n)++;
}

void svr_clock_check(struct svr *r, struct svr_clock *c)
{
	bool any_unset = false, any_set = false;

	memset(c, 0, sizeof(*c));
	c->single_host = true;
	for (unsigned i = 1; i < r->nfiles; i++)
		if (strcmp(r->f[i]->info.host, r->f[0]->info.host))
			c->single_host = false;
	for (unsigned i = 0; i < r->nfiles; i++) {
		const struct svr_file_info *fi = &r->f[i]->info;

		if (fi->err && !fi->records)
			continue;
		if (!fi->to_tai)
			add_reason(c, false, "%s: timestamps on CLOCK_%s with no conversion to TAI", fi->path,
				   sv_clock_name(fi->clock));
		if (fi->tai_unset)
			any_unset = true;
		else
			any_set = true;
		if (!fi->sync_ok) {
			if (c->single_host)
				add_reason(c, true,
					   "host %s: clock not synchronised (%s%s); one host, one clock: intervals "
					   "stay valid",
					   fi->host, fi->sync.unsync ? "STA_UNSYNC" : "state error",
					   fi->tai_unset ? ", TAI offset unset" : "");
			else
				add_reason(c, false, "host %s (%s, %s): clock not synchronised (%s%s)", fi->host,
					   fi->tool, fi->path, fi->sync.unsync ? "STA_UNSYNC" : "state error",
					   fi->tai_unset ? ", TAI offset unset" : "");
		}
	}
	if (!c->single_host && any_unset && any_set)
		add_reason(c, false, "some hosts have their TAI offset set and others not: 37 s apart");
	if (r->tot.negative && c->single_host)
		/* one clock cannot disagree with itself: two tools' stamps of one frame out of order (svtrace's
		 * T2b is the free of the guest's copy, which a deferred free puts after the guest's receive) */
		add_reason(c, true, "%" PRIu64 " latencies below -%" PRId64 " ns on one clock: a later point "
			   "stamped before an earlier one (not a clock fault; see the hops' min)",
			   r->tot.negative, r->cfg.clock_tolerance_ns);
	else if (r->tot.negative)
		add_reason(c, false, "%" PRIu64 " latencies below -%" PRId64 " ns: the clocks disagree",
			   r->tot.negative, r->cfg.clock_tolerance_ns);
	if (r->tot.beyond_second)
		add_reason(c, false, "%" PRIu64 " latencies of 1 s or more: smpCnt aliases by seconds",
			   r->tot.beyond_second);
	if (r->pub_behind)
		add_reason(c, false,
			   "the publisher sent %" PRIu64 " frames 1 s or more after their sample time (up to %.1f s "
			   "behind its schedule: overloaded host?); later points cannot tell their second",
			   r->pub_behind, (double)r->pub_behind_max_ns / 1e9);
	if (r->tot.realigned)
		add_reason(c, true, "%" PRIu64 " events carried the TAI second of their own time, not of their "
			   "sample: re-derived", r->tot.realigned);
	c->ok = c->nreasons == 0;
}
