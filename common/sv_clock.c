// SPDX-License-Identifier: Apache-2.0
/* Clocks, sample-time arithmetic and host sync state: see sv_clock.h for the contract. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/timex.h>
#include <unistd.h>

#include "sv_clock.h"

/* The kernel's dynamic POSIX clock id of an open PHC character device (include/linux/posix-timers.h). */
#define SV_FD_TO_CLOCKID(fd) ((~(clockid_t)(fd) << 3) | 3)

static const char *const clock_names[SV_CLOCK_COUNT] = {
	[SV_CLOCK_TAI] = "tai",
	[SV_CLOCK_REALTIME] = "realtime",
	[SV_CLOCK_MONOTONIC] = "monotonic",
	[SV_CLOCK_PHC] = "phc",
};

const char *sv_clock_name(enum sv_clock_id id)
{
	if ((unsigned)id >= SV_CLOCK_COUNT)
		return "unknown";
	return clock_names[id];
}

int sv_clock_parse(const char *name, enum sv_clock_id *out)
{
	unsigned i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < SV_CLOCK_COUNT; i++) {
		if (!strcasecmp(name, clock_names[i])) {
			*out = (enum sv_clock_id)i;
			return 0;
		}
	}
	return -EINVAL;
}

int sv_clock_posix_id(enum sv_clock_id id, clockid_t *out)
{
	switch (id) {
	case SV_CLOCK_TAI:
		*out = CLOCK_TAI;
		return 0;
	case SV_CLOCK_REALTIME:
		*out = CLOCK_REALTIME;
		return 0;
	case SV_CLOCK_MONOTONIC:
		*out = CLOCK_MONOTONIC;
		return 0;
	default:
		return -EINVAL;
	}
}

int64_t sv_clock_gettime_ns(clockid_t cid)
{
	struct timespec ts;

	if (clock_gettime(cid, &ts))
		return -errno;
	return sv_timespec_to_ns(&ts);
}

int64_t sv_clock_now_ns(enum sv_clock_id clock)
{
	clockid_t cid;

	if (sv_clock_posix_id(clock, &cid))
		return -EINVAL;
	return sv_clock_gettime_ns(cid);
}

int sv_clock_phc_open(struct sv_phc *phc, const char *dev)
{
	char path[64];
	int fd;

	phc->fd = -1;
	if (!dev || !*dev)
		return -EINVAL;
	if (dev[0] != '/') {
		if (snprintf(path, sizeof(path), "/dev/%s", dev) >= (int)sizeof(path))
			return -ENAMETOOLONG;
		dev = path;
	}
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	phc->fd = fd;
	phc->cid = SV_FD_TO_CLOCKID(fd);
	return 0;
}

void sv_clock_phc_close(struct sv_phc *phc)
{
	if (phc->fd >= 0)
		close(phc->fd);
	phc->fd = -1;
}

/* ---- Sample-time arithmetic ------------------------------------------------------------------- */

int sv_sample_align(int64_t t_rx_tai_ns, uint32_t smp_cnt, uint32_t rate, int64_t ahead_ns,
		    struct sv_sample_time *out)
{
	int64_t sec, t_sample, lat;

	if (!rate || smp_cnt >= rate || ahead_ns < 0 || ahead_ns >= SV_NSEC_PER_SEC)
		return -EINVAL;
	/*
	 * Latency is wanted in [-ahead, 1 s - ahead): t_sample in (t_rx - 1 s + ahead, t_rx + ahead].
	 * Take the second of (t_rx + ahead - offset(smp_cnt)): floor((t_rx + ahead - off) / 1e9) gives the
	 * largest sec with sec*1e9 + off <= t_rx + ahead, which is the one unique second in that window.
	 */
	sec = sv_ns_to_sec_floor(t_rx_tai_ns + ahead_ns - sv_sample_offset_ns(smp_cnt, rate));
	t_sample = sv_sample_time_ns(sec, smp_cnt, rate);
	lat = t_rx_tai_ns - t_sample;
	out->tai_sec = sec;
	out->t_sample_ns = t_sample;
	out->latency_ns = lat;
	return 0;
}

static bool frame_params_ok(uint32_t rate, uint32_t asdus)
{
	return rate && asdus && rate % asdus == 0;
}

int64_t sv_frame_deadline_ns(int64_t start_tai_sec, uint64_t k, uint32_t rate, uint32_t asdus)
{
	uint64_t last;

	if (!frame_params_ok(rate, asdus))
		return -EINVAL;
	last = k * asdus + (asdus - 1);
	return sv_sample_time_ns(start_tai_sec + (int64_t)(last / rate), (uint32_t)(last % rate), rate);
}

uint32_t sv_frame_first_smpcnt(uint64_t k, uint32_t rate, uint32_t asdus)
{
	if (!frame_params_ok(rate, asdus))
		return UINT32_MAX;
	return (uint32_t)((k * asdus) % rate);
}

uint64_t sv_frame_index_at(int64_t start_tai_sec, int64_t t_tai_ns, uint32_t rate, uint32_t asdus)
{
	int64_t rel, sec, within;
	uint64_t fps, k, last_in_sec;

	if (!frame_params_ok(rate, asdus))
		return UINT64_MAX;
	rel = t_tai_ns - start_tai_sec * SV_NSEC_PER_SEC;
	if (rel <= 0)
		return 0;
	fps = rate / asdus;
	sec = rel / SV_NSEC_PER_SEC;
	within = rel % SV_NSEC_PER_SEC;
	/*
	 * Deadline of frame j within a second: offset((j+1)*asdus - 1). The first j with
	 * floor(((j+1)a - 1) * 1e9 / rate) >= within is j = ceil((ceil(within * rate / 1e9) + 1) / a) - 1;
	 * compute it directly, then correct by one step either way for the floor.
	 */
	last_in_sec = ((uint64_t)within * rate + SV_NSEC_PER_SEC - 1) / SV_NSEC_PER_SEC; /* sample index */
	k = (last_in_sec + 1 + asdus - 1) / asdus;
	k = k ? k - 1 : 0;
	k += (uint64_t)sec * fps;
	while (k && sv_frame_deadline_ns(start_tai_sec, k - 1, rate, asdus) >= t_tai_ns)
		k--;
	while (sv_frame_deadline_ns(start_tai_sec, k, rate, asdus) < t_tai_ns)
		k++;
	return k;
}

uint64_t sv_smpcnt_gap(uint32_t prev, uint32_t cur, uint32_t step, uint32_t wrap, uint32_t rate,
		       int64_t elapsed_ns)
{
	uint64_t d, wraps = 0;

	if (!wrap || !step)
		return 0;
	d = sv_smpcnt_distance(prev, cur, wrap);
	if (elapsed_ns >= 0 && rate) {
		/* Samples the elapsed time accounts for (128-bit: elapsed can be days). Choose the reading of
		 * smpCnt closest to it: behind (d - wrap: reordered/duplicate), or d plus whole wraps. */
		unsigned __int128 expect = (unsigned __int128)(uint64_t)elapsed_ns * rate / SV_NSEC_PER_SEC;
		unsigned __int128 behind = (unsigned __int128)(wrap - d) + expect; /* |d - wrap - expect| */

		if (expect > d) {
			wraps = (uint64_t)((expect - d + wrap / 2) / wrap);
		} else if (d && behind < d - expect) {
			return 0;
		}
	} else if (sv_smpcnt_delta(prev, cur, wrap) <= 0) {
		return 0;
	}
	d += wraps * wrap;
	if (d <= step)
		return 0;
	return d - step;
}

/* ---- Host sync state -------------------------------------------------------------------------- */

static bool unsync_forced(void)
{
	const char *e = getenv("SVKIT_CLOCK_UNSYNC");

	return e && !strcmp(e, "1");
}

int sv_clock_sync_read(struct sv_clock_sync *out)
{
	struct timex tx;
	int st;

	memset(&tx, 0, sizeof(tx));
	memset(out, 0, sizeof(*out));
	st = adjtimex(&tx);
	if (st < 0)
		return -errno;
	out->state = st;
	out->status = (uint32_t)tx.status;
	out->unsync = (tx.status & STA_UNSYNC) != 0;
	out->tai_offset_s = tx.tai;
	out->tai_unset = tx.tai == 0;
	out->maxerror_ns = (int64_t)tx.maxerror * SV_NSEC_PER_USEC;
	out->esterror_ns = (int64_t)tx.esterror * SV_NSEC_PER_USEC;
	out->offset_ns = (tx.status & STA_NANO) ? (int64_t)tx.offset : (int64_t)tx.offset * SV_NSEC_PER_USEC;
	/* timex.freq is ppm with a 16-bit fractional part */
	out->freq_ppb = (int64_t)tx.freq * 1000 / 65536;
	/* A lab's "hosts" share one kernel and one clock: SVKIT_CLOCK_UNSYNC=1 makes this process see its clock as
	 * not synchronised (STA_UNSYNC), in its records, metrics and summaries alike (tests/net/report_hosts_lab) */
	if (unsync_forced()) {
		out->status |= STA_UNSYNC;
		out->unsync = true;
	}
	return 0;
}

static const char *sync_state_name(int state)
{
	switch (state) {
	case TIME_OK:
		return "ok";
	case TIME_INS:
		return "leap-insert";
	case TIME_DEL:
		return "leap-delete";
	case TIME_OOP:
		return "leap-in-progress";
	case TIME_WAIT:
		return "leap-wait";
	case TIME_ERROR:
		return "error";
	default:
		return "unknown";
	}
}

/* "16us", "1.5ms", "16s": the kernel's bounds are whole microseconds. */
static void fmt_err(char *buf, size_t size, int64_t ns)
{
	if (ns >= SV_NSEC_PER_SEC && ns % SV_NSEC_PER_SEC == 0)
		snprintf(buf, size, "%" PRId64 "s", ns / SV_NSEC_PER_SEC);
	else if (ns >= SV_NSEC_PER_MSEC)
		snprintf(buf, size, "%.3gms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%" PRId64 "us", ns / SV_NSEC_PER_USEC);
}

int sv_clock_sync_format(const struct sv_clock_sync *s, char *buf, size_t size)
{
	char maxe[24], este[24], tai[64];

	fmt_err(maxe, sizeof(maxe), s->maxerror_ns);
	fmt_err(este, sizeof(este), s->esterror_ns);
	if (s->tai_unset)
		snprintf(tai, sizeof(tai), "tai-utc UNSET (CLOCK_TAI == CLOCK_REALTIME)");
	else
		snprintf(tai, sizeof(tai), "tai-utc %" PRId32 "s", s->tai_offset_s);
	return snprintf(buf, size, "%s, maxerror %s, esterror %s, %s, state %s",
			s->unsync ? "UNSYNCHRONISED (STA_UNSYNC)" : "synchronised", maxe, este, tai,
			sync_state_name(s->state));
}

/* ---- Clock conversion ------------------------------------------------------------------------- */

int sv_clock_xlate_measure(struct sv_clock_xlate *x, clockid_t from, clockid_t to, unsigned samples)
{
	struct timespec a, b, c;
	int64_t best_gap = INT64_MAX, best_off = 0, best_at = 0;
	unsigned i;

	if (!samples)
		return -EINVAL;
	for (i = 0; i < samples; i++) {
		int64_t fa, fc, gap;

		if (clock_gettime(from, &a) || clock_gettime(to, &b) || clock_gettime(from, &c))
			return -errno;
		fa = sv_timespec_to_ns(&a);
		fc = sv_timespec_to_ns(&c);
		gap = fc - fa;
		if (gap < 0)
			continue;
		if (gap < best_gap) {
			int64_t mid = fa + gap / 2;

			best_gap = gap;
			best_off = sv_timespec_to_ns(&b) - mid;
			best_at = mid;
		}
	}
	if (best_gap == INT64_MAX)
		return -EAGAIN;
	x->from = from;
	x->to = to;
	x->offset_ns = best_off;
	x->gap_ns = best_gap;
	x->measured_from_ns = best_at;
	return 0;
}

int sv_clock_xlate_mono_to_tai(struct sv_clock_xlate *x)
{
	return sv_clock_xlate_measure(x, CLOCK_MONOTONIC, CLOCK_TAI, 16);
}
