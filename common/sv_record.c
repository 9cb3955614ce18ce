// SPDX-License-Identifier: Apache-2.0
/* The record format: writer, reader, CSV export. Contract in sv_record.h, layout in
 * docs/record-format.md. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "sv_config.h"
#include "sv_json.h"
#include "sv_log.h"
#include "sv_record.h"
#include "sv_stats.h"

#ifndef SVKIT_VERSION
#define SVKIT_VERSION ""
#endif

/* ---- Names ------------------------------------------------------------------------------------ */

static const char *const kind_names[SV_REC_KIND_MAX] = {
	[SV_REC_STREAM] = "stream", [SV_REC_NAME] = "name",	[SV_REC_EVENT] = "event",
	[SV_REC_SUMMARY] = "summary", [SV_REC_HIST] = "hist", [SV_REC_DROP] = "drop",
	[SV_REC_THREAD] = "thread", [SV_REC_SYNC] = "sync",	[SV_REC_END] = "end",
	[SV_REC_UNWRITTEN] = "unwritten", [SV_REC_INTERVAL] = "interval", [SV_REC_WINDOW] = "window",
	[SV_REC_CLOCK] = "clock", [SV_REC_WHY] = "why",
};

const char *sv_rec_kind_name(unsigned kind)
{
	if (kind >= SV_REC_KIND_MAX || !kind_names[kind])
		return "unknown";
	return kind_names[kind];
}

static const char *const point_names[SV_POINT_COUNT] = { "Ts", "T0", "T1", "T2a", "T2b", "T3", "T4" };

const char *sv_point_name(unsigned point)
{
	if (point == SV_POINT_NONE)
		return "none";
	if (point >= SV_POINT_COUNT)
		return "unknown";
	return point_names[point];
}

int sv_point_parse(const char *name, enum sv_point *out)
{
	unsigned i;

	for (i = 0; name && i < SV_POINT_COUNT; i++) {
		if (!strcmp(name, point_names[i])) {
			*out = (enum sv_point)i;
			return 0;
		}
	}
	return -EINVAL;
}

int sv_hop_format(unsigned from, unsigned to, char *buf, size_t size)
{
	if (from == SV_POINT_NONE)
		return snprintf(buf, size, "%s", sv_point_name(to));
	return snprintf(buf, size, "%s-%s", sv_point_name(from), sv_point_name(to));
}

static const char *const ts_names[SV_TS_COUNT] = { "none",     "scheduled", "user", "software",
						   "hardware", "xdp_meta",  "bpf" };

const char *sv_ts_source_name(unsigned src)
{
	return src < SV_TS_COUNT ? ts_names[src] : "unknown";
}

int sv_ts_source_parse(const char *name, enum sv_ts_source *out)
{
	unsigned i;

	for (i = 0; name && i < SV_TS_COUNT; i++) {
		if (!strcmp(name, ts_names[i])) {
			*out = (enum sv_ts_source)i;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *const t2_names[SV_T2_COUNT] = { "none", "scheduled", "handoff", "sample", "software",
						   "refrtm" };

const char *sv_t2_kind_name(unsigned kind)
{
	return kind < SV_T2_COUNT ? t2_names[kind] : "unknown";
}

static const char *const flag_names[] = { "late",	"skipped", "duplicate", "dropped",   "reordered",
					  "simulation", "quality", "gap",	"not_synced" };
_Static_assert(sizeof(flag_names) / sizeof(flag_names[0]) == 9, "one name per SV_REC_F_* bit");

int sv_rec_flags_format(unsigned flags, char *buf, size_t size)
{
	size_t used = 0;
	unsigned i;
	int total = 0;

	if (size)
		buf[0] = '\0';
	for (i = 0; i < 16; i++) {
		const char *name;
		int n;

		if (!(flags & (1u << i)))
			continue;
		name = i < sizeof(flag_names) / sizeof(flag_names[0]) ? flag_names[i] : "unknown";
		n = snprintf(buf + used, size > used ? size - used : 0, "%s%s", total ? "|" : "", name);
		if (n < 0)
			return n;
		total += n;
		used = (size_t)total < size ? (size_t)total : (size ? size - 1 : 0);
	}
	return total;
}

const char *sv_rec_reason_name(unsigned reason)
{
	switch (reason) {
	case SV_REASON_NONE:
		return "none";
	case SV_REASON_DEADLINE_MISSED:
		return "deadline_missed";
	case SV_REASON_TX_RING_FULL:
		return "tx_ring_full";
	case SV_REASON_TX_ERROR:
		return "tx_error";
	case SV_REASON_DECODE_ERROR:
		return "decode_error";
	case SV_REASON_FILTERED:
		return "filtered";
	case SV_REASON_RING_OVERFLOW:
		return "ring_overflow";
	case SV_REASON_STALE:
		return "stale";
	case SV_REASON_MISSING:
		return "missing";
	default:
		return NULL;
	}
}

const char *sv_rec_window_class_name(unsigned cls)
{
	static const char *const names[SV_WINDOW_CLASSES] = { "latency", "loss", "drop", "change", "restart" };

	if (cls == SV_WINDOW_CLASS_NONE)
		return "none";
	return cls < SV_WINDOW_CLASSES ? names[cls] : "unknown";
}

const char *sv_sched_policy_name(unsigned p)
{
	switch (p) {
	case 0:
		return "SCHED_OTHER";
	case 1:
		return "SCHED_FIFO";
	case 2:
		return "SCHED_RR";
	case 3:
		return "SCHED_BATCH";
	case 5:
		return "SCHED_IDLE";
	case 6:
		return "SCHED_DEADLINE";
	}
	return "unknown";
}

const char *sv_rec_wait_cause_name(unsigned cause)
{
	static const char *const names[] = { "unknown", "runqueue", "preempted", "blocked", "irq" };

	return cause < sizeof(names) / sizeof(names[0]) ? names[cause] : "unknown";
}

const char *sv_rec_why_cause_name(unsigned cause)
{
	static const char *const names[SV_WHY_NR] = {
		"steal", "irq_timer", "irq_ipi", "irq_device", "softirq_hi", "softirq_timer", "softirq_net_tx",
		"softirq_net_rx", "softirq_block", "softirq_irq_poll", "softirq_tasklet", "softirq_sched",
		"softirq_hrtimer", "softirq_rcu", "ksoftirqd", "qdisc", "backlog", "runqueue", "blocked", "running",
		"carried", "unexplained",
	};

	return cause < SV_WHY_NR ? names[cause] : "unknown";
}

#define SV_RECORD_ERR_NAME(e, n, d) [SV_RECORD_E_##e] = n,
#define SV_RECORD_ERR_DESC(e, n, d) [SV_RECORD_E_##e] = d,
static const char *const err_names[SV_RECORD_E_COUNT] = { [SV_RECORD_OK] = "ok",
							  SV_RECORD_ERRORS(SV_RECORD_ERR_NAME) };
static const char *const err_descs[SV_RECORD_E_COUNT] = { [SV_RECORD_OK] = "no error",
							  SV_RECORD_ERRORS(SV_RECORD_ERR_DESC) };

const char *sv_record_errname(enum sv_record_err e)
{
	return (unsigned)e < SV_RECORD_E_COUNT ? err_names[e] : "unknown";
}

const char *sv_record_errdesc(enum sv_record_err e)
{
	return (unsigned)e < SV_RECORD_E_COUNT ? err_descs[e] : "unknown error";
}

/* ---- CRC-32C ---------------------------------------------------------------------------------- */

static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ (0x82F63B78u & -(c & 1));
		crc_table[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			crc_table[j][i] = (crc_table[j - 1][i] >> 8) ^ crc_table[0][crc_table[j - 1][i] & 0xff];
}

static uint32_t crc32c_sw(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w ^= crc;
		crc = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^ crc_table[5][(w >> 16) & 0xff] ^
		      crc_table[4][(w >> 24) & 0xff] ^ crc_table[3][(w >> 32) & 0xff] ^
		      crc_table[2][(w >> 40) & 0xff] ^ crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

uint32_t sv_crc32c(uint32_t crc, const void *buf, size_t len)
{
	crc = ~crc;
#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2"))
		return ~crc32c_hw(crc, buf, len);
#endif
	pthread_once(&crc_once, crc_init);
	return ~crc32c_sw(crc, buf, len);
}

/* ---- Writer ----------------------------------------------------------------------------------- */

static const uint16_t fixed_size[SV_REC_KIND_MAX] = {
	[SV_REC_STREAM] = sizeof(struct sv_rec_stream), [SV_REC_NAME] = sizeof(struct sv_rec_name),
	[SV_REC_EVENT] = sizeof(struct sv_rec_event),	[SV_REC_SUMMARY] = sizeof(struct sv_rec_summary),
	[SV_REC_HIST] = 0 /* variable */,		[SV_REC_DROP] = sizeof(struct sv_rec_drop),
	[SV_REC_THREAD] = sizeof(struct sv_rec_thread), [SV_REC_SYNC] = sizeof(struct sv_rec_sync),
	[SV_REC_END] = sizeof(struct sv_rec_end),	[SV_REC_UNWRITTEN] = sizeof(struct sv_rec_unwritten),
	[SV_REC_INTERVAL] = 0 /* short or long */,	[SV_REC_WINDOW] = sizeof(struct sv_rec_window),
	[SV_REC_CLOCK] = sizeof(struct sv_rec_clock),	[SV_REC_WHY] = sizeof(struct sv_rec_why),
};

/* A kind this version reads (a number without a name is skipped like a newer one's). */
static bool kind_known(unsigned kind)
{
	return kind < SV_REC_KIND_MAX && kind_names[kind];
}

/* The size a record of a known fixed-layout kind may have (not HIST: its length says). */
static bool kind_size_ok(unsigned kind, unsigned size)
{
	if (kind == SV_REC_INTERVAL)
		return size == SV_REC_INTERVAL_SHORT || size == sizeof(struct sv_rec_interval);
	return size == fixed_size[kind];
}

#define BLK_HDR sizeof(struct sv_rec_block_header)
#define HIST_MAX_RECORD 65528u /* largest multiple of 8 a u16 size holds */
#define STRETCHES_LOGGED 20	/* stretches of failed writes said through sv_log; the rest are counted */

struct sv_record_writer {
	int fd;
	char *path;
	uint32_t block_max;
	uint64_t rotate_bytes;
	uint32_t rotate_keep;
	enum sv_clock_id clock;
	clockid_t cid;
	struct sv_rec_file_header hdr; /* template of every part's header */
	uint8_t *buf;		       /* block header + payload */
	size_t used;		       /* payload octets */
	uint32_t nrec;		       /* records in the block */
	uint64_t part_bytes;	       /* octets of the current part on disk */
	uint64_t part_records;	       /* records of the current part on disk */
	bool in_rotate;
	bool created;		       /* the path did not exist: this writer made it */
	struct sv_rec_stream *streams;
	uint8_t *defined;
	struct sv_rec_name *names;
	unsigned nnames;
	struct sv_record_writer_stats st;
	/* A full disk (sv_record.h "Full disk"): */
	bool need_header;	       /* the part's header is not on disk yet (no room when it began) */
	bool closing;		       /* the part's last blocks: they may use the reserve, whatever the floor */
	bool below_floor;	       /* free space under min_free at the last check: blocks held back */
	uint64_t reserve;	       /* octets kept allocated past the part's end (0: none) */
	uint64_t min_free;
	uint32_t kept;		       /* rotated parts of this run on disk: path.1 .. path.kept */
	struct sv_rec_unwritten gap;   /* the stretch of dropped blocks going on (gap.blocks != 0) */
	int64_t last_ok_ns;	       /* the file's clock: the last block written, or the part's start */
	uint32_t carried;	       /* records at the head of the buffer re-made after a dropped block */
	uint8_t *redo_stream;	       /* per stream index: its STREAM record was in a dropped block */
	uint8_t *redo_name;	       /* per name-table slot: the same for its NAME record */
	/* Time bounds, on the caller's tick clock (sv_record_tick): */
	int64_t flush_ns, sync_ns;
	int64_t pending_since;	       /* first tick that saw the buffer hold records; INT64_MIN: none */
	int64_t last_sync;	       /* INT64_MIN: never */
	int64_t next_space;	       /* next floor check; INT64_MIN: not scheduled yet */
	bool unsynced;		       /* blocks written since the last fdatasync */
	int64_t (*now)(void *ctx);     /* cfg.now: the writer's times from the caller (a simulated run) */
	void *now_ctx;
};

static int64_t writer_now(const struct sv_record_writer *w)
{
	if (w->now)
		return w->now(w->now_ctx);
	return sv_clock_gettime_ns(w->cid);
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = src ? strnlen(src, size - 1) : 0;

	memset(dst, 0, size);
	if (n)
		memcpy(dst, src, n);
}

static void sync_to_rec(struct sv_rec_sync *r, const struct sv_clock_sync *s, int64_t t_ns)
{
	memset(r, 0, sizeof(*r));
	r->kind = SV_REC_SYNC;
	r->size = sizeof(*r);
	r->status = s->status;
	r->t_ns = t_ns;
	r->maxerror_ns = s->maxerror_ns;
	r->esterror_ns = s->esterror_ns;
	r->offset_ns = s->offset_ns;
	r->freq_ppb = s->freq_ppb;
	r->tai_offset_s = s->tai_offset_s;
	r->state = s->state;
	r->unsync = s->unsync;
	r->tai_unset = s->tai_unset;
}

static bool name_same(const struct sv_rec_name *a, const struct sv_rec_name *b)
{
	return a->name_kind == b->name_kind && a->id == b->id && a->netns == b->netns;
}

static int writer_start_part(struct sv_record_writer *w);
static int writer_rotate(struct sv_record_writer *w);
static int writer_open_file(struct sv_record_writer *w);
static void writer_space_check(struct sv_record_writer *w);

/* The errors a full disk gives (a quota, RLIMIT_FSIZE): the writer drops and counts, it does not fail. */
static bool space_errno(int e)
{
	return e == ENOSPC || e == EDQUOT || e == EFBIG;
}

static const char *errno_name(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "?";
}

/*
 * Room for @len octets at @off that leaves the reserve past them allocated (fallocate KEEP_SIZE: the file's
 * size does not change, and a range already allocated costs nothing). 0, or -errno: ENOSPC drops the
 * block and keeps the reserve for the part's end. The part's last blocks (closing) write into it.
 */
static int writer_alloc(struct sv_record_writer *w, uint64_t off, uint64_t len)
{
	if (!w->reserve || w->closing)
		return 0;
	if (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)(len + w->reserve)) == 0)
		return 0;
	if (space_errno(errno))
		return -errno;
	/* no preallocation here (EOPNOTSUPP: the filesystem; ENODEV: not a file): blocks go as they come */
	w->reserve = 0;
	w->st.reserve = false;
	return 0;
}

/* The part's header at offset 0, with room for @more octets and the reserve after it. */
static int writer_header(struct sv_record_writer *w, uint64_t more)
{
	struct sv_rec_file_header *h = &w->hdr;
	int err = writer_alloc(w, 0, sizeof(*h) + more);

	if (!err)
		err = write_all(w->fd, h, sizeof(*h));
	if (err) {
		/* nothing half-written stays: the next try starts the file again */
		if (ftruncate(w->fd, 0) == 0)
			lseek(w->fd, 0, SEEK_SET);
		return err;
	}
	w->need_header = false;
	w->part_bytes = sizeof(*h);
	w->st.bytes += sizeof(*h);
	return 0;
}

/* The block in w->buf onto the disk, or -errno with the part cut back to its last good block. */
static int writer_write_block(struct sv_record_writer *w)
{
	size_t len = BLK_HDR + w->used;
	int err;

	if (w->below_floor && !w->closing)
		return -ENOSPC;
	if (w->fd < 0) {
		/* a rotation could not create the next part: try again */
		err = writer_open_file(w);
		if (err)
			return err;
		w->need_header = true;
	}
	if (w->need_header) {
		err = writer_header(w, len);
		if (err)
			return err;
	}
	err = writer_alloc(w, w->part_bytes, len);
	if (err)
		return err; /* nothing written */
	err = write_all(w->fd, w->buf, len);
	if (err && ftruncate(w->fd, (off_t)w->part_bytes) == 0) {
		lseek(w->fd, (off_t)w->part_bytes, SEEK_SET);
		writer_alloc(w, w->part_bytes, 0); /* the reserve, freed by the cut */
	}
	return err;
}

static void gap_widen(int64_t *lo, int64_t *hi, int64_t v)
{
	if (!*lo || v < *lo)
		*lo = v;
	if (!*hi || v > *hi)
		*hi = v;
}

/* An EVENT of a dropped block: counted, its times widen the stretch's. */
static void gap_event(struct sv_record_writer *w, const uint8_t *p)
{
	struct sv_rec_event ev;
	const struct sv_rec_stream *s;

	memcpy(&ev, p, sizeof(ev));
	w->gap.events++;
	w->st.lost_events++;
	if (ev.asdu == 0 && ev.point < SV_POINT_COUNT) {
		w->gap.frames[ev.point]++;
		w->st.lost_frames[ev.point]++;
	}
	if (ev.t_ns)
		gap_widen(&w->gap.t_min_ns, &w->gap.t_max_ns, ev.t_ns);
	s = ev.stream < SV_REC_MAX_STREAMS && w->defined[ev.stream] ? &w->streams[ev.stream] : NULL;
	if (s && s->sample_rate && ev.tai_sec && ev.smp_cnt < s->sample_rate && !(ev.flags & SV_REC_F_NOT_SYNCED))
		gap_widen(&w->gap.ts_min_ns, &w->gap.ts_max_ns,
			  sv_sample_time_ns(ev.tai_sec, ev.smp_cnt, s->sample_rate));
}

/*
 * The block in w->buf could not be written (@e, positive): its records are counted into the stretch (the
 * caller's records only: the UNWRITTEN record and the definitions at its head are made again, and so are
 * the STREAM and NAME records it held, marked here).
 */
static void writer_drop_block(struct sv_record_writer *w, int e)
{
	const uint8_t *p = w->buf + BLK_HDR;
	size_t pos = 0;

	w->st.write_errors++;
	if (!w->gap.blocks) {
		memset(&w->gap, 0, sizeof(w->gap));
		w->gap.t_first_ns = w->last_ok_ns;
		w->st.stretches++;
		w->st.pending = true;
		if (w->st.stretches <= STRETCHES_LOGGED)
			sv_warn("record %s: cannot write a block of %u records: %s (%s)%s: records are counted as not "
				"written, each later block is tried%s",
				w->path, w->nrec - w->carried, strerror(e), errno_name(e),
				w->below_floor ? ", free space below the floor" : "",
				w->st.stretches == STRETCHES_LOGGED ? " (further stretches are counted, not logged)" : "");
	}
	w->gap.blocks++;
	w->gap.err = e;
	w->gap.t_last_ns = writer_now(w);
	if (w->below_floor) {
		w->gap.flags |= SV_REC_UNWRITTEN_F_FLOOR;
		w->st.floor_blocks++;
	}
	if (!w->st.first_errno)
		w->st.first_errno = e;
	w->st.last_errno = e;
	while (pos < w->used) {
		struct sv_rec_hdr h;

		memcpy(&h, p + pos, sizeof(h));
		if (h.kind == SV_REC_STREAM) {
			struct sv_rec_stream s;

			memcpy(&s, p + pos, sizeof(s));
			w->redo_stream[s.stream] = 1;
		} else if (h.kind == SV_REC_NAME) {
			struct sv_rec_name n;

			memcpy(&n, p + pos, sizeof(n));
			for (unsigned i = 0; i < w->nnames; i++)
				if (name_same(&w->names[i], &n))
					w->redo_name[i] = 1;
		} else if (h.kind != SV_REC_UNWRITTEN && h.kind != SV_REC_END) { /* not the writer's own */
			w->gap.records++;
			w->st.lost_records++;
			if (h.kind == SV_REC_EVENT)
				gap_event(w, p + pos);
		}
		pos += h.size;
	}
	w->gap.total = w->st.lost_records;
}

/* The record at @slot becomes part of the block: kind and size stamped, counted in the block. */
static void writer_put(struct sv_record_writer *w, uint8_t *slot, unsigned kind, size_t size)
{
	struct sv_rec_hdr h;

	memcpy(&h, slot, sizeof(h));
	h.kind = (uint8_t)kind;
	h.size = (uint16_t)size;
	memcpy(slot, &h, sizeof(h));
	w->used += size;
	w->nrec++;
}

/* One record re-made at the head of the emptied buffer (no flush: it was just emptied; not the caller's,
 * so not counted as accepted). */
static bool writer_carry_one(struct sv_record_writer *w, unsigned kind, const void *rec, size_t size)
{
	uint8_t *slot = w->buf + BLK_HDR + w->used;

	if (w->used + size > w->block_max)
		return false;
	memcpy(slot, rec, size);
	writer_put(w, slot, kind, size);
	return true;
}

/* After a dropped block: the stretch's UNWRITTEN record, then the definitions the dropped blocks held, so
 * that whatever block reaches the disk next says what is missing and defines what follows it. */
static void writer_carry(struct sv_record_writer *w)
{
	writer_carry_one(w, SV_REC_UNWRITTEN, &w->gap, sizeof(w->gap));
	for (unsigned i = 0; i < SV_REC_MAX_STREAMS; i++) {
		if (!w->redo_stream[i])
			continue;
		if (!writer_carry_one(w, SV_REC_STREAM, &w->streams[i], sizeof(w->streams[i])))
			w->st.lost_records++; /* only if a block held nothing but definitions */
		w->redo_stream[i] = 0;
	}
	for (unsigned i = 0; i < w->nnames; i++) {
		if (!w->redo_name[i])
			continue;
		if (!writer_carry_one(w, SV_REC_NAME, &w->names[i], sizeof(w->names[i])))
			w->st.lost_records++;
		w->redo_name[i] = 0;
	}
	w->carried = w->nrec;
}

/* A block reached the disk after a stretch of dropped ones: its UNWRITTEN record is in the file. */
static void writer_gap_closed(struct sv_record_writer *w)
{
	if (w->st.stretches <= STRETCHES_LOGGED)
		sv_warn("record %s: %s: %" PRIu64 " records (%" PRIu64 " events) in %u blocks were not written (%s) "
			"over %.3f s",
			w->path, w->closing ? "the part's end is written into its space reserve" : "writing again",
			w->gap.records, w->gap.events, w->gap.blocks, errno_name(w->gap.err),
			(double)(w->gap.t_last_ns - w->gap.t_first_ns) / 1e9);
	w->gap.blocks = 0;
	w->st.pending = false;
}

/* Writes the pending block. On failure the block's records are lost (counted: writer_drop_block) and the
 * part is cut back to its last good block, so the file stays readable. */
static int writer_flush(struct sv_record_writer *w)
{
	struct sv_rec_block_header bh;
	int err;

	if (!w->nrec)
		return 0;
	bh.magic = SV_REC_BLOCK_MAGIC;
	bh.len = (uint32_t)w->used;
	bh.records = w->nrec;
	bh.crc32c = sv_crc32c(sv_crc32c(0, &bh, 12), w->buf + BLK_HDR, w->used);
	memcpy(w->buf, &bh, BLK_HDR);
	err = writer_write_block(w);
	if (err) {
		writer_drop_block(w, -err);
	} else {
		w->part_bytes += BLK_HDR + w->used;
		w->part_records += w->nrec;
		w->st.bytes += BLK_HDR + w->used;
		w->st.blocks++;
		w->unsynced = true;
		w->last_ok_ns = writer_now(w); /* one clock read a block */
		if (w->gap.blocks)
			writer_gap_closed(w);
	}
	w->used = 0;
	w->nrec = 0;
	w->carried = 0;
	w->pending_since = INT64_MIN;
	if (err)
		writer_carry(w);
	if (!err && w->rotate_bytes && !w->in_rotate && w->part_bytes >= w->rotate_bytes)
		err = writer_rotate(w);
	return err;
}

/* Room for @size octets in the block, flushing first if needed. Returns the slot or NULL (errno). */
static uint8_t *writer_reserve(struct sv_record_writer *w, size_t size, int *err)
{
	*err = 0;
	if (w->used + size > w->block_max) {
		*err = writer_flush(w);
		/* a failed flush emptied the buffer (but for what it carries): the record itself can still go */
	}
	return w->buf + BLK_HDR + w->used;
}

static void writer_commit(struct sv_record_writer *w, uint8_t *slot, unsigned kind, size_t size)
{
	writer_put(w, slot, kind, size);
	w->st.records++;
}

static int writer_append(struct sv_record_writer *w, unsigned kind, const void *rec, size_t size)
{
	int err;
	uint8_t *slot = writer_reserve(w, size, &err);

	memcpy(slot, rec, size);
	writer_commit(w, slot, kind, size);
	return err;
}

/* Opens (truncates) the path, noting whether it was created here: a failed start removes only a file this
 * writer made, never what the user named (a device, a symlink, their data). Rotation renames the path, so
 * it needs a regular file (-EINVAL: a record rotated "to /dev/null" would move the device node). */
static int writer_open_file(struct sv_record_writer *w)
{
	struct stat st;

	w->fd = open(w->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	w->created = w->fd >= 0;
	if (w->fd < 0 && errno == EEXIST)
		w->fd = open(w->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0)
		return -errno;
	if (fstat(w->fd, &st) || (w->rotate_bytes && !S_ISREG(st.st_mode))) {
		close(w->fd);
		w->fd = -1;
		return -EINVAL;
	}
	if (!S_ISREG(st.st_mode)) {
		w->reserve = 0; /* a device, a pipe: nothing to reserve */
		w->st.reserve = false;
	}
	return 0;
}

/* Header, reserve, then the stream and name tables so the part reads alone. No room for the header is
 * not an error: it goes with the first block that fits (need_header). */
static int writer_start_part(struct sv_record_writer *w)
{
	struct sv_rec_file_header *h = &w->hdr;
	unsigned i;
	int err, first = 0;

	h->part_start_ns = writer_now(w);
	h->crc32c = sv_crc32c(0, h, offsetof(struct sv_rec_file_header, crc32c));
	w->last_ok_ns = h->part_start_ns;
	w->part_bytes = 0;
	w->part_records = 0;
	w->st.parts++;
	err = writer_header(w, 0);
	if (err && !space_errno(-err))
		return err;
	if (err) {
		/* the tables below go into the buffer: the first block that fits carries the header */
		w->need_header = true;
		sv_warn("record %s: no room for part %u's header: %s (%s): records are counted until space returns",
			w->path, h->part, strerror(-err), errno_name(-err));
	}
	for (i = 0; i < SV_REC_MAX_STREAMS; i++) {
		if (!w->defined[i])
			continue;
		err = writer_append(w, SV_REC_STREAM, &w->streams[i], sizeof(w->streams[i]));
		if (err && !first)
			first = err;
	}
	for (i = 0; i < w->nnames; i++) {
		err = writer_append(w, SV_REC_NAME, &w->names[i], sizeof(w->names[i]));
		if (err && !first)
			first = err;
	}
	return first;
}

/* The part's last blocks, written into its reserve: the pending block, then END (after the UNWRITTEN
 * record and definitions a dropped last block leaves at the head of the buffer). */
static int writer_end_part(struct sv_record_writer *w, bool rotated)
{
	struct sv_rec_end end;
	int err, e2;

	w->closing = true;
	err = writer_flush(w);
	memset(&end, 0, sizeof(end));
	end.rotated = rotated;
	end.t_ns = writer_now(w);
	end.records = w->part_records + w->nrec; /* what precedes END in the file */
	end.lost_records = w->st.lost_records;
	writer_append(w, SV_REC_END, &end, sizeof(end));
	e2 = writer_flush(w);
	w->closing = false;
	return err ? err : e2;
}

static void writer_sync(struct sv_record_writer *w)
{
	w->unsynced = false;
	if (w->fd < 0)
		return;
	if (fdatasync(w->fd) == 0) {
		w->st.syncs++;
		return;
	}
	if (!w->st.sync_errors++)
		sv_warn("record %s: fdatasync: %s (%s): blocks written before may not be on the disk",
			w->path, strerror(errno), errno_name(errno));
}

/* The part ends: its reserve is given back (a truncate to its size frees what lies past it), and with a
 * sync period it is made durable. */
static void writer_release(struct sv_record_writer *w)
{
	if (w->fd < 0)
		return;
	if (w->reserve && ftruncate(w->fd, (off_t)w->part_bytes))
		sv_warn("record %s: cannot release the space reserve: %s", w->path, strerror(errno));
	if (w->sync_ns && w->unsynced)
		writer_sync(w);
}

int sv_record_parse_keep(const char *s, uint32_t *keep)
{
	uint64_t v;

	if (!s)
		return -EINVAL;
	if (!strcmp(s, "all")) {
		*keep = SV_REC_KEEP_ALL;
		return 0;
	}
	if (sv_parse_uint64(s, &v) || v > SV_REC_KEEP_MAX)
		return -EINVAL;
	*keep = (uint32_t)v;
	return 0;
}

int sv_record_check_keep(const char *s, char *msg, size_t n)
{
	uint32_t keep;

	if (!sv_record_parse_keep(s, &keep))
		return 0;
	snprintf(msg, n, "'%.100s' is not " SV_REC_KEEP_SYNTAX, s);
	return -EINVAL;
}

int sv_record_cfg_opts(struct sv_record_writer_cfg *cfg, const struct sv_record_opts *o)
{
	uint32_t k;

	if (sv_record_parse_keep(o->keep ? o->keep : SV_REC_KEEP_DEFAULT, &k))
		return -EINVAL;
	cfg->rotate_bytes = (uint64_t)o->size_mib << 20;
	cfg->rotate_keep = k;
	cfg->flush_ns = (int64_t)o->flush_ms * 1000000;
	cfg->sync_ns = (int64_t)o->sync_ms * 1000000;
	cfg->min_free_bytes = (uint64_t)o->min_free_mib << 20;
	if (o->host)
		cfg->host = o->host;
	return 0;
}

int sv_record_part_path(char *buf, size_t size, const char *path, unsigned n)
{
	if (snprintf(buf, size, "%s.%u", path, n) >= (int)size)
		return -ENAMETOOLONG;
	return 0;
}

static int writer_rotate(struct sv_record_writer *w)
{
	size_t plen = strlen(w->path) + 16;
	char *from = malloc(plen), *to = malloc(plen);
	uint32_t n;
	int err, e;

	/* allocation here is per rotation (minutes apart), not per record */
	if (!from || !to) {
		err = -ENOMEM;
		goto out_free;
	}
	w->in_rotate = true;
	err = writer_end_part(w, true);
	writer_release(w);
	close(w->fd);
	w->fd = -1;
	/* path.(n-1) -> path.n ... path -> path.1, n = the parts kept after this one: over rotate_keep the
	 * oldest is overwritten; only the parts this run wrote (and the floor left) are moved */
	n = w->kept < w->rotate_keep ? w->kept + 1 : w->rotate_keep;
	for (uint32_t i = n; i > 1; i--) {
		sv_record_part_path(from, plen, w->path, i - 1);
		sv_record_part_path(to, plen, w->path, i);
		if (rename(from, to) && errno != ENOENT && !err)
			err = -errno;
	}
	if (w->kept >= n)
		w->st.parts_deleted++; /* path.n was overwritten, or the part itself goes (keep 0) */
	w->kept = n;
	if (w->rotate_keep) {
		sv_record_part_path(to, plen, w->path, 1);
		if (rename(w->path, to) && !err)
			err = -errno;
	} else if (unlink(w->path) && !err) {
		err = -errno;
	}
	w->hdr.part++;
	e = writer_open_file(w);
	if (e) {
		/* counted as unwritten until a later block can create it (writer_write_block) */
		sv_warn("record %s: cannot create part %u: %s", w->path, w->hdr.part, strerror(-e));
		w->st.parts++;
		w->need_header = true;
		w->part_bytes = 0;
		w->part_records = 0;
		if (!err)
			err = e;
		goto out_rot;
	}
	e = writer_start_part(w);
	if (e && !err)
		err = e;
	writer_space_check(w);
out_rot:
	w->in_rotate = false;
out_free:
	free(from);
	free(to);
	return err;
}

/*
 * Free space of the file's filesystem against the floor (f_bavail: what an unprivileged writer may still
 * use, root's reserve left to the system). Below it, the oldest rotated parts of this run are deleted one
 * by one (never the live part, never another run's); still below, blocks are held back (dropped and
 * counted, flag FLOOR) until a later check finds room.
 */
static void writer_space_check(struct sv_record_writer *w)
{
	struct statvfs sv;
	uint64_t avail = 0;
	bool below;

	if (!w->min_free || w->fd < 0)
		return;
	for (;;) {
		char part[4096];

		if (fstatvfs(w->fd, &sv))
			return; /* cannot tell: as before */
		avail = (uint64_t)sv.f_bavail * sv.f_frsize;
		w->st.free_bytes = (int64_t)avail;
		if (avail >= w->min_free || !w->kept)
			break;
		if (sv_record_part_path(part, sizeof(part), w->path, w->kept))
			break;
		if (unlink(part) && errno != ENOENT) {
			sv_warn("record %s: free space %" PRIu64 " MiB below the floor of %" PRIu64 " MiB: cannot delete "
				"the oldest part %s: %s", w->path, avail >> 20, w->min_free >> 20, part, strerror(errno));
			break;
		}
		w->kept--;
		w->st.parts_deleted++;
		w->st.floor_deleted++;
		sv_warn("record %s: free space %" PRIu64 " MiB below the floor of %" PRIu64 " MiB: deleted the oldest "
			"part %s", w->path, avail >> 20, w->min_free >> 20, part);
	}
	below = avail < w->min_free;
	if (below && !w->below_floor)
		sv_warn("record %s: free space %" PRIu64 " MiB below the floor of %" PRIu64 " MiB and no older part left "
			"to delete: blocks are held back (counted as not written) until there is room",
			w->path, avail >> 20, w->min_free >> 20);
	else if (!below && w->below_floor)
		sv_warn("record %s: free space %" PRIu64 " MiB back above the floor: writing again", w->path, avail >> 20);
	w->below_floor = below;
}

static void writer_free(struct sv_record_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	free(w->path);
	free(w->buf);
	free(w->streams);
	free(w->defined);
	free(w->names);
	free(w->redo_stream);
	free(w->redo_name);
	free(w);
}

int sv_record_writer_open(struct sv_record_writer **wp, const struct sv_record_writer_cfg *cfg)
{
	struct sv_record_writer *w;
	struct sv_rec_file_header *h;
	struct sv_clock_sync sync;
	struct sv_clock_xlate x;
	char host[65];
	int err;

	*wp = NULL;
	if (!cfg || !cfg->path || !*cfg->path || !cfg->tool || strlen(cfg->tool) > 15 ||
	    (unsigned)cfg->clock >= SV_CLOCK_COUNT || cfg->flush_ns < 0 || cfg->sync_ns < 0)
		return -EINVAL;
	if (cfg->block_bytes && (cfg->block_bytes < SV_REC_BLOCK_MIN || cfg->block_bytes > SV_REC_BLOCK_LIMIT ||
				 cfg->block_bytes % 8))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->block_max = cfg->block_bytes ? cfg->block_bytes : SV_REC_BLOCK_DEFAULT;
	w->rotate_bytes = cfg->rotate_bytes;
	w->rotate_keep = cfg->rotate_keep;
	if (w->rotate_bytes && w->rotate_bytes < 2ull * w->block_max + SV_REC_HEADER_SIZE) {
		err = -EINVAL;
		goto out_free;
	}
	w->clock = cfg->clock;
	if (cfg->clock == SV_CLOCK_PHC)
		w->cid = cfg->phc_cid;
	else
		sv_clock_posix_id(cfg->clock, &w->cid);
	w->flush_ns = cfg->flush_ns;
	w->sync_ns = cfg->sync_ns;
	w->now = cfg->now;
	w->now_ctx = cfg->now_ctx;
	w->min_free = cfg->min_free_bytes;
	w->pending_since = w->last_sync = w->next_space = INT64_MIN;
	/* the part's last full block, then a block of UNWRITTEN + END, rounded to pages */
	w->reserve = cfg->no_reserve ? 0
				     : (2 * BLK_HDR + w->block_max + sizeof(struct sv_rec_unwritten) +
					sizeof(struct sv_rec_end) + 4095) & ~(uint64_t)4095;
	w->st.reserve = w->reserve != 0;
	w->st.free_bytes = -1;
	w->st.min_free_bytes = w->min_free;
	w->st.rotate_keep = w->rotate_keep;
	w->st.flush_ns = w->flush_ns;
	w->st.sync_ns = w->sync_ns;
	w->path = strdup(cfg->path);
	w->buf = malloc(BLK_HDR + w->block_max);
	w->streams = calloc(SV_REC_MAX_STREAMS, sizeof(*w->streams));
	w->defined = calloc(SV_REC_MAX_STREAMS, 1);
	w->names = calloc(SV_REC_MAX_NAMES, sizeof(*w->names));
	w->redo_stream = calloc(SV_REC_MAX_STREAMS, 1);
	w->redo_name = calloc(SV_REC_MAX_NAMES, 1);
	if (!w->path || !w->buf || !w->streams || !w->defined || !w->names || !w->redo_stream || !w->redo_name) {
		err = -ENOMEM;
		goto out_free;
	}
	if (writer_now(w) < 0) { /* a stale PHC clockid */
		err = -EINVAL;
		goto out_free;
	}

	h = &w->hdr;
	memcpy(h->magic, SV_REC_MAGIC, 8);
	h->version_major = SV_REC_VERSION_MAJOR;
	h->version_minor = SV_REC_VERSION_MINOR;
	h->header_size = SV_REC_HEADER_SIZE;
	h->clock = (uint8_t)cfg->clock;
	h->block_max = w->block_max;
	if (getrandom(&h->run_id, sizeof(h->run_id), GRND_NONBLOCK) != sizeof(h->run_id))
		h->run_id = (uint64_t)sv_clock_gettime_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 40);
	h->start_ns = writer_now(w);
	h->start_realtime_ns = w->now ? h->start_ns : sv_clock_gettime_ns(CLOCK_REALTIME);
	h->pid = (uint32_t)getpid();
	h->phc_index = cfg->clock == SV_CLOCK_PHC ? cfg->phc_index : -1;
	if (cfg->sync) {
		sync = *cfg->sync;
	} else if (sv_clock_sync_read(&sync)) {
		/* no adjtimex (seccomp?): say unsynchronised rather than pretend */
		memset(&sync, 0, sizeof(sync));
		sync.unsync = true;
		sync.tai_unset = true;
		sync.state = 5;
	}
	sync_to_rec(&h->sync, &sync, h->start_ns);
	h->tai_offset_s = sync.tai_offset_s;
	if (w->now && cfg->clock == SV_CLOCK_TAI)
		h->start_realtime_ns -= (int64_t)sync.tai_offset_s * SV_NSEC_PER_SEC; /* the simulated run's UTC */
	if (sync.tai_unset)
		h->flags |= SV_REC_FH_TAI_UNSET;
	if (sync.unsync)
		h->flags |= SV_REC_FH_UNSYNC;
	if (cfg->clock == SV_CLOCK_TAI) {
		h->flags |= SV_REC_FH_TO_TAI;
	} else if (!cfg->no_to_tai && sv_clock_xlate_measure(&x, w->cid, CLOCK_TAI, 16) == 0) {
		h->to_tai_ns = x.offset_ns;
		h->to_tai_gap_ns = x.gap_ns;
		h->flags |= SV_REC_FH_TO_TAI;
	}
	copy_str(h->tool, sizeof(h->tool), cfg->tool);
	copy_str(h->tool_version, sizeof(h->tool_version), cfg->tool_version ? cfg->tool_version : SVKIT_VERSION);
	if (cfg->host) {
		copy_str(h->host, sizeof(h->host), cfg->host);
	} else {
		memset(host, 0, sizeof(host));
		if (gethostname(host, sizeof(host) - 1))
			strcpy(host, "unknown");
		copy_str(h->host, sizeof(h->host), host);
	}

	err = writer_open_file(w);
	if (err)
		goto out_free;
	err = writer_start_part(w);
	if (err)
		goto out_unlink;
	writer_space_check(w);
	*wp = w;
	return 0;

out_unlink:
	if (w->created)
		unlink(w->path);
out_free:
	writer_free(w);
	return err;
}

static bool stream_ok(const struct sv_record_writer *w, uint32_t stream)
{
	return stream == SV_REC_STREAM_NONE || (stream < SV_REC_MAX_STREAMS && w->defined[stream]);
}

static bool svid_ok(const char *svid, size_t *len)
{
	const char *nul = memchr(svid, '\0', SV_REC_SVID_SIZE);

	if (!nul || nul == svid || nul - svid > 129)
		return false;
	*len = (size_t)(nul - svid);
	return true;
}

int sv_record_define_stream(struct sv_record_writer *w, const struct sv_rec_stream *s)
{
	struct sv_rec_stream *t;
	size_t len;

	if (s->stream >= SV_REC_MAX_STREAMS || !svid_ok(s->svid, &len))
		return -EINVAL;
	t = &w->streams[s->stream];
	*t = *s;
	/* canonical: NUL padding after the svID, length field consistent */
	memset(t->svid + len, 0, SV_REC_SVID_SIZE - len);
	t->svid_len = (uint8_t)len;
	t->kind = SV_REC_STREAM;
	t->point = 0;
	t->size = sizeof(*t);
	w->defined[s->stream] = 1;
	return writer_append(w, SV_REC_STREAM, t, sizeof(*t));
}

int sv_record_define_name(struct sv_record_writer *w, const struct sv_rec_name *n)
{
	struct sv_rec_name *t = NULL;
	unsigned i;

	if (n->name_kind < SV_REC_NAME_IFINDEX || n->name_kind > SV_REC_NAME_DROP_REASON ||
	    !memchr(n->name, '\0', sizeof(n->name)))
		return -EINVAL;
	for (i = 0; i < w->nnames; i++) {
		if (name_same(&w->names[i], n)) {
			t = &w->names[i];
			break;
		}
	}
	if (!t) {
		if (w->nnames >= SV_REC_MAX_NAMES)
			return -ENOSPC;
		t = &w->names[w->nnames++];
	}
	*t = *n;
	t->kind = SV_REC_NAME;
	t->size = sizeof(*t);
	memset(t->reserved, 0, sizeof(t->reserved));
	return writer_append(w, SV_REC_NAME, t, sizeof(*t));
}

int sv_record_write_event(struct sv_record_writer *w, const struct sv_rec_event *ev)
{
	if (ev->point >= SV_POINT_COUNT || ev->ts_src >= SV_TS_COUNT || ev->t2_kind >= SV_T2_COUNT ||
	    (ev->flags & ~SV_REC_F_ALL) || !stream_ok(w, ev->stream))
		return -EINVAL;
	return writer_append(w, SV_REC_EVENT, ev, sizeof(*ev));
}

static bool hop_ok(unsigned from, unsigned to)
{
	return to < SV_POINT_COUNT && (from < SV_POINT_COUNT || from == SV_POINT_NONE);
}

int sv_record_write_summary(struct sv_record_writer *w, const struct sv_rec_summary *s)
{
	if (!hop_ok(s->from_point, s->point) || !stream_ok(w, s->stream))
		return -EINVAL;
	return writer_append(w, SV_REC_SUMMARY, s, sizeof(*s));
}

int sv_record_write_drop(struct sv_record_writer *w, const struct sv_rec_drop *d)
{
	if ((d->point >= SV_POINT_COUNT && d->point != SV_POINT_NONE) || !stream_ok(w, d->stream) ||
	    !memchr(d->reason_name, '\0', sizeof(d->reason_name)))
		return -EINVAL;
	return writer_append(w, SV_REC_DROP, d, sizeof(*d));
}

int sv_record_write_thread(struct sv_record_writer *w, const struct sv_rec_thread *t)
{
	struct sv_rec_thread c;

	if (t->point >= SV_POINT_COUNT || !stream_ok(w, t->stream) || t->cause > SV_WAIT_IRQ)
		return -EINVAL;
	/* comm from the kernel is 16 octets and NUL-terminated; make sure of it */
	c = *t;
	c.feeder_comm[15] = '\0';
	c.holder_comm[15] = '\0';
	return writer_append(w, SV_REC_THREAD, &c, sizeof(c));
}

/* The causes of @y add up to its hop, none negative (no overflow whatever a file holds). */
static bool why_sum_ok(const struct sv_rec_why *y)
{
	uint64_t sum = 0;
	int64_t hop;

	if (__builtin_sub_overflow(y->t_to_ns, y->t_from_ns, &hop) || hop < 0)
		return false;
	for (unsigned i = 0; i < SV_REC_WHY_SLOTS; i++) {
		if (y->ns[i] < 0 || y->ns[i] > hop)
			return false;
		sum += (uint64_t)y->ns[i];
		if (sum > (uint64_t)hop)
			return false;
	}
	return sum == (uint64_t)hop && y->holder_ns >= 0 &&
	       (uint64_t)y->holder_ns <= (uint64_t)y->ns[SV_WHY_RUNQUEUE] + (uint64_t)y->ns[SV_WHY_KSOFTIRQD];
}

int sv_record_write_why(struct sv_record_writer *w, const struct sv_rec_why *y)
{
	struct sv_rec_why c;

	if (!hop_ok(y->from_point, y->point) || y->from_point == SV_POINT_NONE || !stream_ok(w, y->stream) ||
	    (y->flags & ~SV_REC_WHY_F_ALL) || !why_sum_ok(y))
		return -EINVAL;
	c = *y;
	c.carrier_comm[15] = '\0';
	c.holder_comm[15] = '\0';
	return writer_append(w, SV_REC_WHY, &c, sizeof(c));
}

int sv_record_write_hist(struct sv_record_writer *w, const struct sv_rec_hist *hdr, const struct sv_stats *h)
{
	struct sv_rec_hist rh;
	uint8_t *slot;
	size_t cap, size;
	ssize_t n;
	int err, ferr = 0;

	if (!hop_ok(hdr->from_point, hdr->point) || !stream_ok(w, hdr->stream))
		return -EINVAL;
	for (;;) {
		slot = writer_reserve(w, sizeof(rh) + 8, &err);
		if (err && !ferr)
			ferr = err;
		cap = w->block_max - w->used - sizeof(rh);
		if (cap > HIST_MAX_RECORD - sizeof(rh))
			cap = HIST_MAX_RECORD - sizeof(rh);
		n = sv_stats_serialize(h, slot + sizeof(rh), cap);
		if (n >= 0)
			break;
		if (!w->nrec) /* cannot happen: SV_STATS_SERIALIZED_MAX fits an empty block */
			return -E2BIG;
		err = writer_flush(w);
		if (err && !ferr)
			ferr = err;
	}
	size = (sizeof(rh) + (size_t)n + 7) & ~(size_t)7;
	memset(slot + sizeof(rh) + n, 0, size - sizeof(rh) - (size_t)n);
	rh = *hdr;
	rh.len = (uint32_t)n;
	rh.reserved0 = 0;
	memcpy(slot, &rh, sizeof(rh));
	writer_commit(w, slot, SV_REC_HIST, size);
	return ferr;
}

int sv_record_write_sync(struct sv_record_writer *w, const struct sv_clock_sync *s, int64_t t_ns)
{
	struct sv_clock_sync now;
	struct sv_rec_sync r;
	int err;

	if (!s) {
		err = sv_clock_sync_read(&now);
		if (err)
			return err;
		s = &now;
	}
	sync_to_rec(&r, s, t_ns ? t_ns : writer_now(w));
	return writer_append(w, SV_REC_SYNC, &r, sizeof(r));
}

/* The field checks of the soak kinds, shared by the writer (refuses) and the reader (drops): NULL when fine,
 * else the name of the bad field. Stream definitions are checked apart (each side has its table). */
static const char *interval_bad(const struct sv_rec_interval *iv)
{
	if (!hop_ok(iv->from_point, iv->point))
		return "interval.point";
	if (iv->flags & ~SV_REC_INTERVAL_F_ALL)
		return "interval.flags";
	if (!iv->period_ms)
		return "interval.period_ms";
	if ((uint64_t)iv->drop_count[0] + iv->drop_count[1] > iv->dropped)
		return "interval.drop_count";
	return NULL;
}

static const char *window_bad(const struct sv_rec_window *win)
{
	bool summary = win->flags & SV_REC_WINDOW_F_SUMMARY;

	if (win->flags & ~SV_REC_WINDOW_F_ALL)
		return "window.flags";
	if (summary ? win->cls != SV_WINDOW_CLASS_NONE : win->cls >= SV_WINDOW_CLASSES)
		return "window.cls";
	if (win->classes >= 1u << SV_WINDOW_CLASSES || (!summary && !(win->classes & (1u << win->cls))))
		return "window.classes";
	if (win->point >= SV_POINT_COUNT && win->point != SV_POINT_NONE)
		return "window.point";
	if (!summary && (win->stream == SV_REC_STREAM_NONE || win->t_start_ns > win->t_end_ns))
		return "window.span";
	return NULL;
}

static const char *clock_bad(const struct sv_rec_clock *c)
{
	if (c->clock >= SV_CLOCK_COUNT)
		return "clock.clock";
	if (c->flags & ~SV_REC_CLOCK_F_ALL)
		return "clock.flags";
	if ((int64_t)((uint64_t)c->new_to_tai_ns - (uint64_t)c->old_to_tai_ns) != c->step_ns || c->gap_ns < 0 ||
	    c->threshold_ns < 0)
		return "clock.step";
	return NULL;
}

int sv_record_write_interval(struct sv_record_writer *w, const struct sv_rec_interval *iv)
{
	static const uint8_t zero[sizeof(*iv) - SV_REC_INTERVAL_SHORT];
	const uint8_t *tail = (const uint8_t *)iv + SV_REC_INTERVAL_SHORT;

	if (interval_bad(iv) || !stream_ok(w, iv->stream))
		return -EINVAL;
	/* most intervals lose, drop and restart nothing: 56 octets instead of 104 (sv_record.h) */
	return writer_append(w, SV_REC_INTERVAL, iv,
			     memcmp(tail, zero, sizeof(zero)) ? sizeof(*iv) : SV_REC_INTERVAL_SHORT);
}

int sv_record_write_window(struct sv_record_writer *w, const struct sv_rec_window *win)
{
	if (window_bad(win) || !stream_ok(w, win->stream))
		return -EINVAL;
	return writer_append(w, SV_REC_WINDOW, win, sizeof(*win));
}

int sv_record_write_clock(struct sv_record_writer *w, const struct sv_rec_clock *c)
{
	if (clock_bad(c))
		return -EINVAL;
	return writer_append(w, SV_REC_CLOCK, c, sizeof(*c));
}

void sv_rec_summary_fill(struct sv_rec_summary *s, const struct sv_stats *h)
{
	struct sv_stats_summary sum;

	sv_stats_summarize(h, &sum);
	s->count = sum.count;
	s->min = sum.min;
	s->p50 = sum.p50;
	s->p99 = sum.p99;
	s->p999 = sum.p999;
	s->p9999 = sum.p9999;
	s->max = sum.max;
	s->p50_err = sum.p50_err;
	s->p99_err = sum.p99_err;
	s->p999_err = sum.p999_err;
	s->p9999_err = sum.p9999_err;
	s->negative = sum.negative;
}

int sv_record_flush(struct sv_record_writer *w)
{
	return writer_flush(w);
}

int sv_record_tick(struct sv_record_writer *w, int64_t now_ns)
{
	int err = 0;

	if (!w)
		return 0;
	if (w->min_free) {
		if (w->next_space == INT64_MIN)
			w->next_space = now_ns + SV_REC_SPACE_CHECK_NS; /* checked at open */
		else if (now_ns >= w->next_space) {
			writer_space_check(w);
			w->next_space = now_ns + SV_REC_SPACE_CHECK_NS;
		}
	}
	if (w->flush_ns) {
		/* records appended after the last tick waited at most one tick period more than this says */
		if (!w->nrec) {
			w->pending_since = INT64_MIN;
		} else if (w->pending_since == INT64_MIN) {
			w->pending_since = now_ns;
		} else if (now_ns - w->pending_since >= w->flush_ns) {
			w->st.timed_flushes++;
			err = writer_flush(w);
		}
	}
	if (w->sync_ns && w->unsynced && (w->last_sync == INT64_MIN || now_ns - w->last_sync >= w->sync_ns)) {
		writer_sync(w);
		w->last_sync = now_ns;
	}
	return err;
}

void sv_record_writer_get_stats(const struct sv_record_writer *w, struct sv_record_writer_stats *st)
{
	*st = w->st;
}

int sv_record_writer_close_stats(struct sv_record_writer *w, struct sv_record_writer_stats *st)
{
	int err;

	if (!w) {
		if (st)
			memset(st, 0, sizeof(*st));
		return 0;
	}
	w->in_rotate = true; /* the last part ends here, whatever its size */
	err = writer_end_part(w, false);
	writer_release(w);
	if (w->fd >= 0 && close(w->fd) && !err)
		err = -errno;
	w->fd = -1;
	if (st)
		*st = w->st;
	writer_free(w);
	return err;
}

int sv_record_writer_close(struct sv_record_writer *w)
{
	return sv_record_writer_close_stats(w, NULL);
}

/* "T0 1200 frames, T4 3 frames" into @buf: the frames per point not written. */
static void frames_format(const struct sv_record_writer_stats *st, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned p = 0; p < SV_POINT_COUNT && used < size; p++) {
		int n;

		if (!st->lost_frames[p])
			continue;
		n = snprintf(buf + used, size - used, "%s%s %" PRIu64 " frames", used ? ", " : "", sv_point_name(p),
			     st->lost_frames[p]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

int sv_record_stats_format(const struct sv_record_writer_stats *st, char *buf, size_t size)
{
	char frames[160], kept[64];
	int e = st->last_errno;

	if (st->rotate_keep == SV_REC_KEEP_ALL)
		snprintf(kept, sizeof(kept), "all parts kept");
	else
		snprintf(kept, sizeof(kept), "%u rotated parts kept", st->rotate_keep);
	if (!sv_record_stats_incomplete(st))
		return snprintf(buf, size, "%" PRIu64 " records, %" PRIu64 " blocks, %u part%s (%s, %" PRIu64
				" deleted%s): every record written%s",
				st->records, st->blocks, st->parts, st->parts == 1 ? "" : "s", kept, st->parts_deleted,
				st->floor_deleted ? " for the free-space floor" : "",
				st->write_errors ? " (after failed writes that held no record)" : "");
	frames_format(st, frames, sizeof(frames));
	return snprintf(buf, size,
			"%" PRIu64 " of %" PRIu64 " records NOT WRITTEN (%" PRIu64 " events%s%s) in %" PRIu64
			" stretch%s, %" PRIu64 " failed writes: %s (%s)%s%s; %s%s; %u part%s (%s, %" PRIu64 " deleted)%s",
			st->lost_records, st->records, st->lost_events, frames[0] ? ": " : "", frames, st->stretches,
			st->stretches == 1 ? "" : "es", st->write_errors, e ? strerror(e) : "no error",
			e ? errno_name(e) : "-", st->first_errno && st->first_errno != e ? ", first " : "",
			st->first_errno && st->first_errno != e ? errno_name(st->first_errno) : "",
			st->pending ? "the last stretch is NOT in the file (no room came back, no reserve)"
				    : "each stretch is in the file (UNWRITTEN records) and END counts them",
			st->floor_blocks ? ", blocks held back below the free-space floor" : "", st->parts,
			st->parts == 1 ? "" : "s", kept, st->parts_deleted,
			st->sync_errors ? "; fdatasync FAILED: blocks may not be on the disk" : "");
}

void sv_record_stats_json(struct sv_json *j, const char *path, const struct sv_record_writer_stats *st)
{
	if (!st) {
		sv_json_null(j);
		return;
	}
	sv_json_object_begin(j);
	sv_json_kv_str(j, "path", path);
	sv_json_kv_bool(j, "complete", !sv_record_stats_incomplete(st));
	sv_json_kv_uint(j, "records", st->records);
	sv_json_kv_uint(j, "bytes", st->bytes);
	sv_json_kv_uint(j, "blocks", st->blocks);
	sv_json_kv_uint(j, "parts", st->parts);
	sv_json_kv_uint(j, "parts_deleted", st->parts_deleted);
	sv_json_kv_uint(j, "parts_deleted_for_floor", st->floor_deleted);
	sv_json_kv_uint(j, "unwritten_records", st->lost_records);
	sv_json_kv_uint(j, "unwritten_events", st->lost_events);
	sv_json_key(j, "unwritten_frames");
	sv_json_object_begin(j);
	for (unsigned p = 0; p < SV_POINT_COUNT; p++)
		if (st->lost_frames[p])
			sv_json_kv_uint(j, sv_point_name(p), st->lost_frames[p]);
	sv_json_object_end(j);
	sv_json_kv_uint(j, "stretches", st->stretches);
	sv_json_kv_uint(j, "failed_writes", st->write_errors);
	sv_json_kv_uint(j, "held_back_by_floor", st->floor_blocks);
	sv_json_kv_str(j, "errno", st->last_errno ? errno_name(st->last_errno) : NULL);
	sv_json_kv_str(j, "error", st->last_errno ? strerror(st->last_errno) : NULL);
	sv_json_kv_str(j, "first_errno", st->first_errno ? errno_name(st->first_errno) : NULL);
	sv_json_kv_bool(j, "last_stretch_in_file", !st->pending);
	sv_json_kv_bool(j, "space_reserve", st->reserve);
	/* what happens on a full disk (docs/decisions.md): dropped blocks are counted, later ones tried */
	sv_json_kv_str(j, "policy", "keep_trying");
	if (st->rotate_keep == SV_REC_KEEP_ALL)
		sv_json_kv_str(j, "keep", "all");
	else
		sv_json_kv_uint(j, "keep", st->rotate_keep);
	sv_json_kv_uint(j, "min_free_bytes", st->min_free_bytes);
	if (st->free_bytes >= 0)
		sv_json_kv_int(j, "free_bytes", st->free_bytes);
	else
		sv_json_kv_null(j, "free_bytes");
	sv_json_kv_uint(j, "flush_ms", (uint64_t)(st->flush_ns / 1000000));
	sv_json_kv_uint(j, "timed_flushes", st->timed_flushes);
	sv_json_kv_uint(j, "sync_ms", (uint64_t)(st->sync_ns / 1000000));
	sv_json_kv_uint(j, "syncs", st->syncs);
	sv_json_kv_uint(j, "sync_errors", st->sync_errors);
	sv_json_object_end(j);
}

/* ---- Reader ----------------------------------------------------------------------------------- */

struct sv_record_reader {
	FILE *f;
	bool own;
	char *name;
	struct sv_rec_file_header hdr;
	bool header_ok;
	uint8_t *blk;
	size_t blk_len, blk_pos;
	uint64_t blk_off;	/* file offset of the payload */
	uint64_t off;		/* file offset of the next block */
	uint64_t part_records;
	bool ended;
	enum sv_record_err err;
	uint64_t err_off;
	const char *err_detail;
	int err_errno;
	uint64_t skipped;
	struct sv_record_reader_damage dmg;	/* what resynchronisation stepped over, records dropped */
	unsigned nlogged;			/* damage messages logged (reader_log_ok) */
	uint64_t probe_bytes;			/* octets read checking false block magics (reader_scan) */
	struct sv_rec_stream *streams;
	uint8_t *defined;
	struct sv_rec_name *names;
	unsigned nnames;
	struct sv_stats *scratch;
	bool to_tai_ok;		/* the conversion in force: the header's, then each CLOCK record's of the */
	int64_t to_tai_ns;	/* file's own clock */
};

static int reader_fail(struct sv_record_reader *r, enum sv_record_err e, uint64_t off, const char *detail)
{
	r->err = e;
	r->err_off = off;
	r->err_detail = detail;
	return e == SV_RECORD_E_IO ? -EIO : -EBADMSG;
}

/* Reads up to @len octets; returns how many (short only at EOF) or -1 on a read error. */
static ssize_t read_full(struct sv_record_reader *r, void *buf, size_t len)
{
	size_t n = fread(buf, 1, len, r->f);

	if (n < len && ferror(r->f)) {
		r->err_errno = errno;
		return -1;
	}
	return (ssize_t)n;
}

static bool str_terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static int reader_check_header(struct sv_record_reader *r)
{
	struct sv_rec_file_header *h = &r->hdr;
	ssize_t n = read_full(r, h, sizeof(*h));

	if (n < 0)
		return reader_fail(r, SV_RECORD_E_IO, 0, NULL);
	if (n >= 8 && memcmp(h->magic, SV_REC_MAGIC, 8))
		return reader_fail(r, SV_RECORD_E_BAD_MAGIC, 0, NULL);
	if ((size_t)n < sizeof(*h))
		return reader_fail(r, SV_RECORD_E_HEADER_TRUNCATED, (uint64_t)n, NULL);
	if (h->version_major != SV_REC_VERSION_MAJOR)
		return reader_fail(r, SV_RECORD_E_VERSION, offsetof(struct sv_rec_file_header, version_major),
				   NULL);
	if (sv_crc32c(0, h, offsetof(struct sv_rec_file_header, crc32c)) != h->crc32c)
		return reader_fail(r, SV_RECORD_E_HEADER_CRC, offsetof(struct sv_rec_file_header, crc32c), NULL);
	if (h->header_size != SV_REC_HEADER_SIZE)
		return reader_fail(r, SV_RECORD_E_HEADER_FIELD, offsetof(struct sv_rec_file_header, header_size),
				   "header_size");
	if (h->clock >= SV_CLOCK_COUNT)
		return reader_fail(r, SV_RECORD_E_HEADER_FIELD, offsetof(struct sv_rec_file_header, clock),
				   "clock");
	if (h->block_max < SV_REC_BLOCK_MIN || h->block_max > SV_REC_BLOCK_LIMIT || h->block_max % 8)
		return reader_fail(r, SV_RECORD_E_HEADER_FIELD, offsetof(struct sv_rec_file_header, block_max),
				   "block_max");
	if (h->flags & ~7u)
		return reader_fail(r, SV_RECORD_E_HEADER_FIELD, offsetof(struct sv_rec_file_header, flags),
				   "flags");
	if (!str_terminated(h->tool, sizeof(h->tool)) || !str_terminated(h->tool_version, sizeof(h->tool_version)))
		return reader_fail(r, SV_RECORD_E_HEADER_FIELD, offsetof(struct sv_rec_file_header, tool), "tool");
	if (!str_terminated(h->host, sizeof(h->host)))
		return reader_fail(r, SV_RECORD_E_HEADER_FIELD, offsetof(struct sv_rec_file_header, host), "host");
	r->off = sizeof(*h);
	r->header_ok = true;
	r->to_tai_ok = h->flags & SV_REC_FH_TO_TAI;
	r->to_tai_ns = h->to_tai_ns;
	return 0;
}

static int reader_init(struct sv_record_reader **rp, FILE *f, bool own, const char *name)
{
	struct sv_record_reader *r = calloc(1, sizeof(*r));
	int err;

	*rp = NULL;
	if (!r) {
		if (own)
			fclose(f);
		return -ENOMEM;
	}
	r->f = f;
	r->own = own;
	r->name = strdup(name ? name : "(stream)");
	r->streams = calloc(SV_REC_MAX_STREAMS, sizeof(*r->streams));
	r->defined = calloc(SV_REC_MAX_STREAMS, 1);
	r->names = calloc(SV_REC_MAX_NAMES, sizeof(*r->names));
	r->scratch = malloc(sizeof(*r->scratch));
	if (!r->name || !r->streams || !r->defined || !r->names || !r->scratch) {
		sv_record_reader_close(r);
		return -ENOMEM;
	}
	*rp = r;
	err = reader_check_header(r);
	if (err)
		return err;
	r->blk = malloc(r->hdr.block_max);
	if (!r->blk) {
		sv_record_reader_close(r);
		*rp = NULL;
		return -ENOMEM;
	}
	return 0;
}

int sv_record_reader_open(struct sv_record_reader **r, const char *path)
{
	FILE *f = fopen(path, "rbe");

	*r = NULL;
	if (!f)
		return -errno;
	return reader_init(r, f, true, path);
}

int sv_record_reader_open_fp(struct sv_record_reader **r, FILE *f, const char *name)
{
	return reader_init(r, f, false, name);
}

void sv_record_reader_close(struct sv_record_reader *r)
{
	if (!r)
		return;
	if (r->own && r->f)
		fclose(r->f);
	free(r->name);
	free(r->blk);
	free(r->streams);
	free(r->defined);
	free(r->names);
	free(r->scratch);
	free(r);
}

const struct sv_rec_file_header *sv_record_reader_header(const struct sv_record_reader *r)
{
	return &r->hdr;
}

/* A block fault found by block_read(): what, where, and how much of the block could be read. */
struct blk_fault {
	enum sv_record_err err;
	uint64_t off;
	const char *detail;
	bool header_ok;		/* magic and a plausible length (len may still be the damaged field) */
};

static int blk_fault(struct blk_fault *ft, enum sv_record_err e, uint64_t off, const char *detail)
{
	ft->err = e;
	ft->off = off;
	ft->detail = detail;
	return -1;
}

static bool block_len_ok(const struct sv_record_reader *r, uint32_t len)
{
	return len && len % 8 == 0 && len <= r->hdr.block_max;
}

/*
 * Walks the record framing of the @len payload octets in r->blk (the block at @at): each size is a multiple of
 * 8 within the block, fixed kinds have their size, a HIST its length. Returns how many records, or -1 with
 * the fault in *ft. A valid CRC does not prove a valid writer: nothing is handed out before this passed.
 */
static int64_t block_frame(const struct sv_record_reader *r, uint64_t at, uint32_t len, struct blk_fault *ft)
{
	size_t pos = 0;
	int64_t count = 0;

	while (pos < len) {
		struct sv_rec_hdr h;
		uint64_t roff = at + sizeof(struct sv_rec_block_header) + pos;

		if (len - pos < sizeof(h))
			return blk_fault(ft, SV_RECORD_E_RECORD_SIZE, roff, "record header");
		memcpy(&h, r->blk + pos, sizeof(h));
		if (h.size < 8 || h.size % 8 || h.size > len - pos)
			return blk_fault(ft, SV_RECORD_E_RECORD_SIZE, roff, sv_rec_kind_name(h.kind));
		if (h.kind == 0)
			return blk_fault(ft, SV_RECORD_E_RECORD_FIELD, roff, "kind 0");
		if (kind_known(h.kind)) {
			if (h.kind == SV_REC_HIST) {
				struct sv_rec_hist rh;

				if (h.size < sizeof(rh))
					return blk_fault(ft, SV_RECORD_E_RECORD_SIZE, roff, "hist");
				memcpy(&rh, r->blk + pos, sizeof(rh));
				if (rh.len > h.size - sizeof(rh) || h.size - sizeof(rh) - rh.len >= 8)
					return blk_fault(ft, SV_RECORD_E_RECORD_SIZE, roff, "hist len");
			} else if (!kind_size_ok(h.kind, h.size)) {
				return blk_fault(ft, SV_RECORD_E_RECORD_SIZE, roff, sv_rec_kind_name(h.kind));
			}
		}
		pos += h.size;
		count++;
	}
	return count;
}

/*
 * Reads and checks the block at @at (the stream is positioned there): framing, CRC, record sizes and
 * count. 1 = loaded into r->blk, 0 = end of file at @at, -1 = fault (in *ft). Never calls reader_fail,
 * so resynchronisation can use it to probe candidate offsets.
 */
static int block_read(struct sv_record_reader *r, uint64_t at, struct sv_rec_block_header *bh,
		      struct blk_fault *ft)
{
	int64_t count;
	ssize_t n;

	ft->header_ok = false;
	n = read_full(r, bh, sizeof(*bh));
	if (n < 0)
		return blk_fault(ft, SV_RECORD_E_IO, at, NULL);
	if (n == 0)
		return 0;
	if (r->ended)
		return blk_fault(ft, SV_RECORD_E_AFTER_END, at, NULL);
	if ((size_t)n < sizeof(*bh))
		return blk_fault(ft, SV_RECORD_E_BLOCK_TRUNCATED, at, "block header");
	if (bh->magic != SV_REC_BLOCK_MAGIC)
		return blk_fault(ft, SV_RECORD_E_BLOCK_MAGIC, at, NULL);
	if (!block_len_ok(r, bh->len))
		return blk_fault(ft, SV_RECORD_E_BLOCK_LENGTH, at + 4, NULL);
	ft->header_ok = true;
	n = read_full(r, r->blk, bh->len);
	if (n < 0)
		return blk_fault(ft, SV_RECORD_E_IO, at + sizeof(*bh), NULL);
	if ((size_t)n < bh->len)
		return blk_fault(ft, SV_RECORD_E_BLOCK_TRUNCATED, at + sizeof(*bh) + (uint64_t)n, "payload");
	if (sv_crc32c(sv_crc32c(0, bh, 12), r->blk, bh->len) != bh->crc32c)
		return blk_fault(ft, SV_RECORD_E_BLOCK_CRC, at, NULL);
	count = block_frame(r, at, bh->len, ft);
	if (count < 0)
		return -1;
	if ((uint64_t)count != bh->records)
		return blk_fault(ft, SV_RECORD_E_RECORD_COUNT, at + 8, NULL);
	return 1;
}

static int reader_seek(struct sv_record_reader *r, uint64_t off)
{
	if (off > INT64_MAX || fseeko(r->f, (off_t)off, SEEK_SET))
		return -1;
	return 0;
}

#define SV_RECORD_DAMAGE_LOGGED 100	/* per reader: a file of garbage must not flood the log */

/* True for the first SV_RECORD_DAMAGE_LOGGED damages of a reader (skips and dropped records), which are
 * logged; later ones are only counted. @more: the note for the last one logged. */
static bool reader_log_ok(struct sv_record_reader *r, const char **more)
{
	if (r->nlogged >= SV_RECORD_DAMAGE_LOGGED)
		return false;
	*more = ++r->nlogged == SV_RECORD_DAMAGE_LOGGED ? " (further damage is counted, not logged)" : "";
	return true;
}

/* Damage @e found at @off: the first and the last of a reader are kept (struct sv_record_reader_damage). */
static void reader_damage_at(struct sv_record_reader *r, enum sv_record_err e, uint64_t off)
{
	if (r->dmg.first_err == SV_RECORD_OK) {
		r->dmg.first_err = e;
		r->dmg.first_offset = off;
	}
	r->dmg.last_err = e;
	r->dmg.last_offset = off;
}

/* Counts and reports (once, through sv_log, at the block's offset @from) the damaged stretch [@from, @to)
 * the reader steps over; @tail: nothing valid follows, @to is the end of the file.
 * @records: what the skipped block's header claimed (-1: unreadable); @complete: that is all it lost. */
static void reader_skip(struct sv_record_reader *r, const struct blk_fault *ft, uint64_t from, uint64_t to,
			int64_t records, bool complete, bool tail)
{
	struct sv_record_reader_damage *d = &r->dmg;
	const uint64_t hdr = sizeof(struct sv_rec_block_header);
	uint64_t room = to - from > hdr ? to - from - hdr : 0;
	const char *more;
	char lost[48], where[48];

	/* a count is believed only as far as the octets stepped over could hold it (records are >= 8 octets) */
	if (records > 0 && (uint64_t)records > room / 8) {
		records = -1;
		complete = false;
	}
	reader_damage_at(r, ft->err, from);
	d->blocks_skipped++;
	d->octets_skipped += to - from;
	if (records > 0)
		d->records_lost += (uint64_t)records;
	if (!complete)
		d->skips_uncounted++;
	if (!reader_log_ok(r, &more))
		return;
	if (complete)
		snprintf(lost, sizeof(lost), "%" PRId64 " records lost", records);
	else if (records > 0)
		snprintf(lost, sizeof(lost), "at least %" PRId64 " records lost", records);
	else
		snprintf(lost, sizeof(lost), "records lost unknown");
	if (tail)
		snprintf(where, sizeof(where), " to the end of the file");
	else
		snprintf(where, sizeof(where), ", reading on at offset %" PRIu64, to);
	sv_warn("%s: offset %" PRIu64 ": %s: %s%s%s%s: skipped %" PRIu64 " octets (%s)%s%s", r->name, from,
		sv_record_errname(ft->err), sv_record_errdesc(ft->err), ft->detail ? " (" : "",
		ft->detail ? ft->detail : "", ft->detail ? ")" : "", to - from, lost, where, more);
}

/* Faults a reader steps over when it finds the next block; the others end the read. A partial block header
 * is the end of the file (nothing can follow it); a short payload is a crash's last block unless a valid
 * block turns up after it (then its length field was the damage). */
static bool fault_skippable(const struct blk_fault *ft)
{
	switch (ft->err) {
	case SV_RECORD_E_BLOCK_MAGIC:
	case SV_RECORD_E_BLOCK_LENGTH:
	case SV_RECORD_E_BLOCK_CRC:
	case SV_RECORD_E_RECORD_SIZE:
	case SV_RECORD_E_RECORD_COUNT:
	case SV_RECORD_E_RECORD_FIELD: /* only block_read's "kind 0": a framing fault */
		return true;
	case SV_RECORD_E_BLOCK_TRUNCATED:
		return ft->header_ok;
	default:
		return false;
	}
}

#define SV_RECORD_PROBE_FACTOR 16

/*
 * Scans 8-aligned offsets from @from for the first block that passes every check of block_read() (magic,
 * length, CRC-32C, framing): the block header has no checksum of its own, so a magic alone is not trusted.
 * Memory stays r->blk. Returns 1 and *found, 0 when none up to the end of the file (or the stream cannot
 * seek, or false magics used up the probe budget), -1 on a read error (r->err_errno set).
 */
static int reader_scan(struct sv_record_reader *r, uint64_t from, uint64_t *found)
{
	uint64_t pos = from;

	for (;;) {
		ssize_t n;
		size_t i;
		bool probed = false;

		if (reader_seek(r, pos))
			return 0;
		n = read_full(r, r->blk, r->hdr.block_max);
		if (n < 0)
			return -1;
		for (i = 0; i + 8 <= (size_t)n; i += 8) {
			struct sv_rec_block_header bh;
			struct blk_fault ft;
			uint32_t magic;
			int ret;

			memcpy(&magic, r->blk + i, 4);
			if (magic != SV_REC_BLOCK_MAGIC)
				continue;
			if (reader_seek(r, pos + i))
				return 0;
			ret = block_read(r, pos + i, &bh, &ft);
			if (ret > 0) {
				*found = pos + i;
				return 1;
			}
			if (ret < 0 && ft.err == SV_RECORD_E_IO)
				return -1;
			/* a false magic (payload data): go on after it; block_read overwrote the window. Probes
			 * of crafted magics could re-read block_max octets every 8 octets: their total is held
			 * to a multiple of the file read so far, so the scan stays linear in the file size. */
			r->probe_bytes += sizeof(bh) + (ft.header_ok ? bh.len : 0);
			if (r->probe_bytes > SV_RECORD_PROBE_FACTOR * (pos + i + r->hdr.block_max))
				return 0;
			pos += i + 8;
			probed = true;
			break;
		}
		if (probed)
			continue;
		if ((size_t)n < r->hdr.block_max)
			return 0;
		pos += (uint64_t)n;
	}
}

/* Size of the file, or 0 when the stream cannot tell (a pipe). */
static uint64_t reader_file_end(struct sv_record_reader *r)
{
	off_t end;

	if (fseeko(r->f, 0, SEEK_END))
		return 0;
	end = ftello(r->f);
	return end > 0 ? (uint64_t)end : 0;
}

/*
 * The block at @at failed on its magic alone (its header was read whole): its record count is believed when
 * its length leads exactly to @end (the next valid block, or the end of the file) and the framing of its
 * payload counts that many records. Returns the count, or -1. Reads the payload into r->blk (the caller
 * seeks where reading goes on).
 */
static int64_t magic_only_count(struct sv_record_reader *r, uint64_t at, const struct sv_rec_block_header *bh,
				const struct blk_fault *ft, uint64_t end)
{
	struct blk_fault ff;
	int64_t n;

	if (ft->err != SV_RECORD_E_BLOCK_MAGIC || !block_len_ok(r, bh->len) || at + sizeof(*bh) + bh->len != end ||
	    reader_seek(r, at + sizeof(*bh)) || read_full(r, r->blk, bh->len) != (ssize_t)bh->len)
		return -1;
	n = block_frame(r, at, bh->len, &ff);
	return n >= 0 && (uint64_t)n == bh->records ? n : -1;
}

/*
 * Nothing valid follows the damaged block at @at (@ft, header @bh as far as it was read): the rest of the file
 * is lost. It is counted as one skip to the end of the file, with the records the block's header declares
 * where something confirms them: a header with magic and plausible length whose block reaches the end of
 * the file (a damaged last block; a crash's partial one), or, only the magic damaged, a payload that ends
 * at the end of the file and whose framing counts that many records. A header followed by more octets than
 * its block gives a lower bound; no readable header, an unknown count. Then the reader fails with @ft: the
 * records before are used.
 */
static int reader_tail(struct sv_record_reader *r, uint64_t at, const struct sv_rec_block_header *bh,
		       const struct blk_fault *ft)
{
	const uint64_t eof = reader_file_end(r);
	int64_t records = -1;
	bool complete = false;

	if (ft->header_ok) {
		records = bh->records;
		complete = at + sizeof(*bh) + bh->len >= eof;
	} else if (eof > at) {
		records = magic_only_count(r, at, bh, ft, eof);
		complete = records >= 0;
	}
	/* a stream that cannot tell its end (a pipe): the skip is counted, its size and records unknown */
	reader_skip(r, ft, at, eof > at ? eof : at, eof > at ? records : -1, eof > at && complete, true);
	return reader_fail(r, ft->err, ft->off, ft->detail);
}

/*
 * The block at @at is damaged (@ft): find where reading goes on, count and report what is stepped over,
 * and position the stream there (r->off). First the block's own length, when its header looks intact and
 * it leads to the end of the file or to another plausible block header (one skip, the header's record
 * count); else a scan for the next block that checks out completely (one skip however many blocks it
 * crosses, record count a lower bound). Returns 0, or reader_fail() with the original fault when nothing
 * valid follows (a damaged last block, a crash's partial block: the records before are still used).
 */
static int reader_resync(struct sv_record_reader *r, uint64_t at, const struct sv_rec_block_header *bh,
			 const struct blk_fault *ft)
{
	/* a count is believed only from a header with magic and a plausible length (and see reader_skip) */
	int64_t records = ft->header_ok ? (int64_t)bh->records : -1;
	uint64_t next, found;
	int ret;

	if (ft->header_ok && ft->err != SV_RECORD_E_BLOCK_TRUNCATED) {
		struct sv_rec_block_header nh;
		ssize_t n;

		next = at + sizeof(*bh) + bh->len;
		/* a framing fault stopped block_read inside the payload: seek to the next header */
		if (reader_seek(r, next))
			return reader_fail(r, ft->err, ft->off, ft->detail);
		n = read_full(r, &nh, sizeof(nh));
		if (n < 0)
			return reader_fail(r, SV_RECORD_E_IO, next, NULL);
		if (n == 0 || (n == sizeof(nh) && nh.magic == SV_REC_BLOCK_MAGIC && block_len_ok(r, nh.len))) {
			reader_skip(r, ft, at, next, records, records >= 0, false);
			r->off = next;
			return reader_seek(r, next) ? reader_fail(r, ft->err, ft->off, ft->detail) : 0;
		}
	}
	ret = reader_scan(r, at + 8, &found);
	if (ret < 0)
		return reader_fail(r, SV_RECORD_E_IO, at, NULL);
	if (ret == 0)
		return reader_tail(r, at, bh, ft);
	if (ft->err == SV_RECORD_E_BLOCK_TRUNCATED) {
		/* not the end of the file after all: the length was the damage */
		const struct blk_fault lf = { SV_RECORD_E_BLOCK_LENGTH, at + 4, "past a later valid block", true };

		reader_skip(r, &lf, at, found, records, false, false);
	} else if (!ft->header_ok && (records = magic_only_count(r, at, bh, ft, found)) >= 0) {
		reader_skip(r, ft, at, found, records, true, false);
	} else {
		reader_skip(r, ft, at, found, records, false, false);
	}
	r->off = found;
	return reader_seek(r, found) ? reader_fail(r, ft->err, ft->off, ft->detail) : 0;
}

/* Loads the next good block, stepping over damaged ones (reader_resync). 1 = loaded, 0 = EOF. */
static int reader_load_block(struct sv_record_reader *r)
{
	for (;;) {
		struct sv_rec_block_header bh;
		struct blk_fault ft;
		uint64_t at = r->off;
		int ret;

		ret = block_read(r, at, &bh, &ft);
		if (ret == 0)
			return 0;
		if (ret > 0) {
			r->blk_len = bh.len;
			r->blk_pos = 0;
			r->blk_off = at + sizeof(bh);
			r->off = at + sizeof(bh) + bh.len;
			return 1;
		}
		/* a partial block header: the end of the file, what it held unknown */
		if (ft.err == SV_RECORD_E_BLOCK_TRUNCATED && !ft.header_ok)
			return reader_tail(r, at, &bh, &ft);
		if (!fault_skippable(&ft))
			return reader_fail(r, ft.err, ft.off, ft.detail);
		ret = reader_resync(r, at, &bh, &ft);
		if (ret)
			return ret;
	}
}

static bool reader_stream_ok(const struct sv_record_reader *r, uint32_t stream)
{
	return stream == SV_REC_STREAM_NONE || (stream < SV_REC_MAX_STREAMS && r->defined[stream]);
}

static bool point_ok(unsigned p, bool none_ok)
{
	return p < SV_POINT_COUNT || (none_ok && p == SV_POINT_NONE);
}

/* Field checks of one record; NULL when fine, else the name of the bad field. */
static const char *reader_check_fields(struct sv_record_reader *r, struct sv_rec *o, bool *stream_undef)
{
	size_t len;

	*stream_undef = false;
	switch (o->kind) {
	case SV_REC_STREAM:
		if (o->u.stream.stream >= SV_REC_MAX_STREAMS)
			return "stream.stream";
		if (!svid_ok(o->u.stream.svid, &len) || len != o->u.stream.svid_len)
			return "stream.svid";
		return NULL;
	case SV_REC_NAME:
		if (o->u.name.name_kind < SV_REC_NAME_IFINDEX || o->u.name.name_kind > SV_REC_NAME_DROP_REASON)
			return "name.name_kind";
		if (!str_terminated(o->u.name.name, sizeof(o->u.name.name)))
			return "name.name";
		return NULL;
	case SV_REC_EVENT:
		if (!point_ok(o->u.event.point, false))
			return "event.point";
		if (o->u.event.ts_src >= SV_TS_COUNT)
			return "event.ts_src";
		if (o->u.event.t2_kind >= SV_T2_COUNT)
			return "event.t2_kind";
		if (o->u.event.flags & ~SV_REC_F_ALL)
			return "event.flags";
		*stream_undef = !reader_stream_ok(r, o->u.event.stream);
		return NULL;
	case SV_REC_SUMMARY: {
		const struct sv_rec_summary *s = &o->u.summary;

		if (!point_ok(s->point, false) || !point_ok(s->from_point, true))
			return "summary.point";
		if (s->count && !(s->min <= s->p50 && s->p50 <= s->p99 && s->p99 <= s->p999 &&
				  s->p999 <= s->p9999 && s->p9999 <= s->max))
			return "summary.percentiles";
		*stream_undef = !reader_stream_ok(r, s->stream);
		return NULL;
	}
	case SV_REC_HIST:
		if (!point_ok(o->u.hist.point, false) || !point_ok(o->u.hist.from_point, true))
			return "hist.point";
		if (sv_stats_deserialize(r->scratch, o->hist_data, o->u.hist.len))
			return "hist.data";
		*stream_undef = !reader_stream_ok(r, o->u.hist.stream);
		return NULL;
	case SV_REC_DROP:
		if (!point_ok(o->u.drop.point, true))
			return "drop.point";
		if (!str_terminated(o->u.drop.reason_name, sizeof(o->u.drop.reason_name)))
			return "drop.reason_name";
		*stream_undef = !reader_stream_ok(r, o->u.drop.stream);
		return NULL;
	case SV_REC_THREAD:
		if (!point_ok(o->u.thread.point, false))
			return "thread.point";
		if (o->u.thread.cause > SV_WAIT_IRQ)
			return "thread.cause";
		if (!str_terminated(o->u.thread.feeder_comm, 16) || !str_terminated(o->u.thread.holder_comm, 16))
			return "thread.comm";
		*stream_undef = !reader_stream_ok(r, o->u.thread.stream);
		return NULL;
	case SV_REC_WHY:
		if (!point_ok(o->u.why.point, false) || !point_ok(o->u.why.from_point, false))
			return "why.point";
		if (o->u.why.flags & ~SV_REC_WHY_F_ALL)
			return "why.flags";
		if (!why_sum_ok(&o->u.why))
			return "why.ns";
		if (!str_terminated(o->u.why.carrier_comm, 16) || !str_terminated(o->u.why.holder_comm, 16))
			return "why.comm";
		*stream_undef = !reader_stream_ok(r, o->u.why.stream);
		return NULL;
	case SV_REC_SYNC:
		if (o->u.sync.unsync > 1 || o->u.sync.tai_unset > 1)
			return "sync.flags";
		return NULL;
	case SV_REC_UNWRITTEN: {
		const struct sv_rec_unwritten *u = &o->u.unwritten;

		if (u->err < 0 || (u->flags & ~SV_REC_UNWRITTEN_F_ALL) || u->ts_min_ns > u->ts_max_ns ||
		    u->t_min_ns > u->t_max_ns || u->events > u->records || u->records > u->total)
			return "unwritten.counts";
		return NULL;
	}
	case SV_REC_INTERVAL:
		*stream_undef = !reader_stream_ok(r, o->u.interval.stream);
		return interval_bad(&o->u.interval);
	case SV_REC_WINDOW:
		*stream_undef = !reader_stream_ok(r, o->u.window.stream);
		return window_bad(&o->u.window);
	case SV_REC_CLOCK:
		return clock_bad(&o->u.clock);
	case SV_REC_END:
		if (o->u.end.rotated > 1)
			return "end.rotated";
		/* after a skipped block the reader saw fewer records than the writer wrote, never more */
		if (r->dmg.blocks_skipped ? o->u.end.records < r->part_records
					  : o->u.end.records != r->part_records)
			return "end.records";
		return NULL;
	default:
		return NULL;
	}
}

static void reader_enter(struct sv_record_reader *r, const struct sv_rec *o)
{
	unsigned i;

	if (o->kind == SV_REC_STREAM) {
		r->streams[o->u.stream.stream] = o->u.stream;
		r->defined[o->u.stream.stream] = 1;
	} else if (o->kind == SV_REC_NAME) {
		for (i = 0; i < r->nnames; i++) {
			if (name_same(&r->names[i], &o->u.name)) {
				r->names[i] = o->u.name;
				return;
			}
		}
		if (r->nnames < SV_REC_MAX_NAMES)
			r->names[r->nnames++] = o->u.name;
	} else if (o->kind == SV_REC_END) {
		r->ended = true;
	} else if (o->kind == SV_REC_CLOCK && o->u.clock.clock == r->hdr.clock) {
		/* the file's own clock measured against TAI again (a step): later times convert with it */
		r->to_tai_ok = true;
		r->to_tai_ns = o->u.clock.new_to_tai_ns;
	}
}

/*
 * A record of a valid block that cannot be handed out (@e at @roff, @detail: the field or the kind): a field
 * out of range (counted invalid), or a stream with no STREAM record (counted orphaned: its definition was in
 * a skipped block, was invalid, or never written). It alone is dropped, counted and reported (each invalid
 * one, the first orphan), and the read goes on: a bad value never costs the blocks after it.
 */
static void reader_drop(struct sv_record_reader *r, enum sv_record_err e, uint64_t roff, const char *detail)
{
	const bool orphan = e == SV_RECORD_E_STREAM_UNDEFINED;
	const char *more;

	reader_damage_at(r, e, roff);
	if (!orphan)
		r->dmg.records_invalid++;
	else if (r->dmg.records_orphaned++)
		return; /* the first orphan is said; the others are its stream's */
	if (!reader_log_ok(r, &more))
		return;
	sv_warn("%s: offset %" PRIu64 ": %s: %s (%s): %s%s", r->name, roff, sv_record_errname(e),
		sv_record_errdesc(e), detail,
		orphan ? "records of streams whose STREAM record is lost, invalid or missing are dropped (counted)"
		       : "record dropped (counted), reading on", more);
}

int sv_record_reader_next(struct sv_record_reader *r, struct sv_rec *out)
{
	for (;;) {
		struct sv_rec_hdr h;
		const char *bad;
		bool undef = false;
		uint64_t roff;
		int ret;

		if (r->err != SV_RECORD_OK)
			return r->err == SV_RECORD_E_IO ? -EIO : -EBADMSG;
		if (r->blk_pos >= r->blk_len) {
			ret = reader_load_block(r);
			if (ret <= 0)
				return ret;
		}
		roff = r->blk_off + r->blk_pos;
		memcpy(&h, r->blk + r->blk_pos, sizeof(h));
		if (!kind_known(h.kind)) {
			/* a newer minor version's kind: skip it, the size says how far */
			r->skipped++;
			r->part_records++;
			r->blk_pos += h.size;
			continue;
		}
		if (r->ended)
			return reader_fail(r, SV_RECORD_E_AFTER_END, roff, NULL);
		memset(out, 0, sizeof(*out));
		out->kind = (enum sv_rec_kind)h.kind;
		out->offset = roff;
		if (h.kind == SV_REC_HIST) {
			memcpy(&out->u.hist, r->blk + r->blk_pos, sizeof(out->u.hist));
			out->hist_data = r->blk + r->blk_pos + sizeof(out->u.hist);
		} else {
			memcpy(&out->u, r->blk + r->blk_pos, h.size);
		}
		bad = NULL;
		if (r->nnames >= SV_REC_MAX_NAMES && h.kind == SV_REC_NAME) {
			unsigned i;
			bool known = false;

			for (i = 0; i < r->nnames; i++)
				known |= name_same(&r->names[i], &out->u.name);
			if (!known)
				bad = "name table full";
		}
		if (!bad)
			bad = reader_check_fields(r, out, &undef);
		if (bad || undef) {
			/* the block checked out, so its framing holds: this record alone is dropped */
			reader_drop(r, bad ? SV_RECORD_E_RECORD_FIELD : SV_RECORD_E_STREAM_UNDEFINED, roff,
				    bad ? bad : sv_rec_kind_name(h.kind));
			r->part_records++;
			r->blk_pos += h.size;
			continue;
		}
		reader_enter(r, out);
		r->blk_pos += h.size;
		if (h.kind != SV_REC_END)
			r->part_records++;
		return 1;
	}
}

enum sv_record_err sv_record_reader_err(const struct sv_record_reader *r, uint64_t *offset)
{
	if (offset)
		*offset = r->err_off;
	return r->err;
}

int sv_record_reader_strerror(const struct sv_record_reader *r, char *buf, size_t size)
{
	if (r->err == SV_RECORD_OK)
		return snprintf(buf, size, "%s: no error", r->name);
	if (r->err == SV_RECORD_E_IO)
		return snprintf(buf, size, "%s: offset %" PRIu64 ": io: %s", r->name, r->err_off,
				strerror(r->err_errno ? r->err_errno : EIO));
	return snprintf(buf, size, "%s: offset %" PRIu64 ": %s: %s%s%s%s", r->name, r->err_off,
			sv_record_errname(r->err), sv_record_errdesc(r->err), r->err_detail ? " (" : "",
			r->err_detail ? r->err_detail : "", r->err_detail ? ")" : "");
}

bool sv_record_reader_clean_end(const struct sv_record_reader *r)
{
	return r->ended;
}

uint64_t sv_record_reader_skipped(const struct sv_record_reader *r)
{
	return r->skipped;
}

void sv_record_reader_get_damage(const struct sv_record_reader *r, struct sv_record_reader_damage *d)
{
	*d = r->dmg;
}

const struct sv_rec_stream *sv_record_reader_stream(const struct sv_record_reader *r, uint32_t stream)
{
	if (stream >= SV_REC_MAX_STREAMS || !r->defined[stream])
		return NULL;
	return &r->streams[stream];
}

const char *sv_record_reader_name(const struct sv_record_reader *r, unsigned name_kind, uint32_t id,
				  uint32_t netns)
{
	unsigned i;

	for (i = 0; i < r->nnames; i++) {
		const struct sv_rec_name *n = &r->names[i];

		if (n->name_kind == name_kind && n->id == id && n->netns == netns)
			return n->name;
	}
	return NULL;
}

bool sv_record_reader_to_tai(const struct sv_record_reader *r, int64_t t_ns, int64_t *t_tai_ns)
{
	if (!r->to_tai_ok)
		return false;
	*t_tai_ns = t_ns + r->to_tai_ns;
	return true;
}

/* ---- CSV -------------------------------------------------------------------------------------- */

/* RFC 4180 field: quoted when it holds a comma, quote, CR or LF; quotes doubled. */
static int csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n"))
		return fputs(s, out) == EOF ? -EIO : 0;
	if (fputc('"', out) == EOF)
		return -EIO;
	for (; *s; s++) {
		if (*s == '"' && fputc('"', out) == EOF)
			return -EIO;
		if (fputc(*s, out) == EOF)
			return -EIO;
	}
	return fputc('"', out) == EOF ? -EIO : 0;
}

int sv_record_csv_header(FILE *out)
{
	return fputs("tool,host,point,stream,svid,appid,tai_sec,smp_cnt,ts_ns,t_ns,t_tai_ns,ts_src,t2_ns,t2_kind,"
		     "ifindex,ifname,netns,guest,flags,reason,cpu,tid,asdu,nasdu,frame_len,quality,seq\n",
		     out) == EOF
		       ? -EIO
		       : 0;
}

int sv_record_csv_event(FILE *out, const struct sv_record_reader *r, const struct sv_rec_event *ev)
{
	const struct sv_rec_stream *s = sv_record_reader_stream(r, ev->stream);
	const char *ifname = ev->ifindex ? sv_record_reader_name(r, SV_REC_NAME_IFINDEX, ev->ifindex, ev->netns)
					 : NULL;
	char flags[128], num[32];
	int64_t tai;
	int err = 0;

	sv_rec_flags_format(ev->flags, flags, sizeof(flags));
	err |= csv_field(out, r->hdr.tool);
	err |= fputc(',', out) == EOF;
	err |= csv_field(out, r->hdr.host);
	if (fprintf(out, ",%s,", sv_point_name(ev->point)) < 0)
		return -EIO;
	if (ev->stream != SV_REC_STREAM_NONE && fprintf(out, "%" PRIu32, ev->stream) < 0)
		return -EIO;
	err |= fputc(',', out) == EOF;
	if (s)
		err |= csv_field(out, s->svid);
	err |= fputc(',', out) == EOF;
	if (s && fprintf(out, "%u", s->appid) < 0)
		return -EIO;
	if (ev->tai_sec)
		fprintf(out, ",%" PRIu32 ",%u,", ev->tai_sec, ev->smp_cnt);
	else
		fprintf(out, ",,%u,", ev->smp_cnt);
	if (ev->tai_sec && s && s->sample_rate && ev->smp_cnt < s->sample_rate)
		fprintf(out, "%" PRId64, sv_sample_time_ns(ev->tai_sec, ev->smp_cnt, s->sample_rate));
	fprintf(out, ",%" PRId64 ",", ev->t_ns);
	if (sv_record_reader_to_tai(r, ev->t_ns, &tai))
		fprintf(out, "%" PRId64, tai);
	fprintf(out, ",%s,", sv_ts_source_name(ev->ts_src));
	if (ev->t2_kind != SV_T2_NONE)
		fprintf(out, "%" PRId64, ev->t2_ns);
	fprintf(out, ",%s,%" PRIu32 ",", sv_t2_kind_name(ev->t2_kind), ev->ifindex);
	if (ifname)
		err |= csv_field(out, ifname);
	fprintf(out, ",%" PRIu32 ",", ev->netns);
	if (ev->guest != SV_REC_GUEST_NONE)
		fprintf(out, "%u", ev->guest);
	snprintf(num, sizeof(num), "%u", ev->reason);
	if (fprintf(out, ",%s,%s,%u,%" PRIu32 ",%u,%u,%u,%" PRIu32 ",%" PRIu32 "\n", flags, num, ev->cpu,
		    ev->tid, ev->asdu, ev->nasdu, ev->frame_len, ev->quality, ev->seq) < 0)
		return -EIO;
	return err || ferror(out) ? -EIO : 0;
}

int sv_record_export_csv(struct sv_record_reader *r, FILE *out)
{
	struct sv_rec rec;
	int ret;

	if (sv_record_csv_header(out))
		return -EIO;
	while ((ret = sv_record_reader_next(r, &rec)) > 0) {
		if (rec.kind != SV_REC_EVENT)
			continue;
		if (sv_record_csv_event(out, r, &rec.u.event))
			return -EIO;
	}
	if (ret < 0)
		return ret;
	return fflush(out) ? -EIO : 0;
}
