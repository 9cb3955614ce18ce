/* SPDX-License-Identifier: Apache-2.0 */
/*
 * THE record format: every svkit tool (svpub, svsub, svtrace) writes it, svreport reads it.
 * Full description: docs/record-format.md. In short:
 *
 *   file   := file_header(256 B) block*            (little-endian; all sizes multiples of 8)
 *   block  := block_header(16 B) record+           (CRC-32C over header fields + payload)
 *   record := {u8 kind, u8 point, u16 size, ...}   (fixed size per kind; HIST is length-prefixed,
 *                                                  INTERVAL has a short and a long form)
 *
 * The file header says which clock every timestamp of the file is on, the host, the tool, the host's
 * sync state at start (adjtimex) and how to convert the file's clock to TAI. Streams are defined
 * in-band (STREAM records: index -> APPID, svID, rate, ASDUs/frame); per-frame records carry the 32-bit
 * index. A file is self-contained: after rotation the new part starts with the header and the whole
 * stream and name tables again.
 *
 * Writer: one per thread (not thread-safe), all memory allocated at open (one block buffer plus the
 * stream/name tables), sv_record_write_*() is a bounds check and a memcpy into the block buffer; a full
 * block is checksummed and written with write(2) (no fsync). Close flushes and appends an END record.
 *
 * Reader: one pass, bounded memory (one block buffer of block_max <= 4 MiB plus the tables), checks
 * everything; a fault is a named error (sv_record_errname) with the file offset where it was found. A
 * damaged block is stepped over when the next block can be found, a record with a bad field in a valid
 * block is dropped alone, damage at the end of the file is counted (sv_record_reader_get_damage).
 */
#ifndef SV_RECORD_H
#define SV_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "sv_clock.h"

struct sv_stats;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "sv_record: the record structs are the little-endian wire layout; add byte swapping first"
#endif

#define SV_REC_MAGIC "SVREC\r\n\x1a"	/* 8 octets; \r\n\x1a catch text-mode mangling */
#define SV_REC_VERSION_MAJOR 1		/* readers refuse other majors */
#define SV_REC_VERSION_MINOR 2		/* new kinds/fields in reserved space; readers skip unknown kinds.
					 * 1: UNWRITTEN records; 2: INTERVAL, WINDOW, CLOCK (soak mode), WHY */
#define SV_REC_HEADER_SIZE 256
#define SV_REC_BLOCK_MAGIC 0x4b425653u	/* "SVBK" */
#define SV_REC_MAX_STREAMS 1024		/* stream indexes 0..1023 */
#define SV_REC_MAX_NAMES 1024
#define SV_REC_STREAM_NONE 0xFFFFFFFFu	/* a record not tied to a known stream */
#define SV_REC_GUEST_NONE 0xFFFFu
#define SV_REC_BLOCK_MIN (64u * 1024)	/* a HIST record always fits */
#define SV_REC_BLOCK_DEFAULT (256u * 1024)
#define SV_REC_BLOCK_LIMIT (4u * 1024 * 1024)
#define SV_REC_SVID_SIZE 136		/* 129 octets (IEC 61850-9-2 svID limit) + NUL + padding */

/* Record kinds (values are the format: never renumber). */
enum sv_rec_kind {
	SV_REC_STREAM = 1,	/* stream definition: index -> APPID, svID, rate, ASDUs */
	SV_REC_NAME = 2,	/* name table entry: ifindex/guest/netns/drop reason -> name */
	SV_REC_EVENT = 3,	/* one frame (or sample) seen at one point */
	SV_REC_SUMMARY = 4,	/* per-second counts + latency key percentiles of one hop */
	SV_REC_HIST = 5,	/* per-second serialised sv_stats histogram of one hop */
	SV_REC_DROP = 6,	/* a frame freed by the kernel / dropped by a tool, with the reason */
	SV_REC_THREAD = 7,	/* why late: the feeder thread waited while another held the CPU */
	SV_REC_SYNC = 8,	/* host sync state (adjtimex) at a point in time */
	SV_REC_END = 9,		/* last record of a cleanly closed file part */
	SV_REC_UNWRITTEN = 10,	/* records the writer could not write (full disk): how many, when, why */
	SV_REC_INTERVAL = 11,	/* soak: one interval's counters and worst frame of one (stream, hop, guest) */
	SV_REC_WINDOW = 12,	/* soak: a flight-recorder window (its trigger, span, what it kept) */
	SV_REC_CLOCK = 13,	/* soak: the tool's clock -> TAI conversion measured again (a step) */
	SV_REC_WHY = 14,	/* why late: one hop of one late frame, its time split by cause */
	SV_REC_KIND_MAX
};
const char *sv_rec_kind_name(unsigned kind);	/* "stream", "event", ...; "unknown" */

/* Measurement points (DESIGN.md "Words and names"). */
enum sv_point {
	SV_POINT_TS = 0,	/* sample time from smpCnt (synchronised stream) */
	SV_POINT_T0 = 1,	/* publisher transmit timestamp */
	SV_POINT_T1 = 2,	/* hypervisor ingress */
	SV_POINT_T2A = 3,	/* hypervisor egress toward one guest */
	SV_POINT_T2B = 4,	/* taken by the guest's feeder (vhost / QEMU / lab consumer) */
	SV_POINT_T3 = 5,	/* guest kernel receive */
	SV_POINT_T4 = 6,	/* guest application got the sample */
	SV_POINT_COUNT,
	SV_POINT_NONE = 0xFF,	/* summary of one point, no hop */
};
/* "Ts", "T0", "T1", "T2a", "T2b", "T3", "T4"; "none" for SV_POINT_NONE, "unknown" otherwise. */
const char *sv_point_name(unsigned point);
/* Exact (case-sensitive) parse of the names above. Returns 0 or -EINVAL. */
int sv_point_parse(const char *name, enum sv_point *out);
/* "T1-T2a" into @buf (hop names join two points). */
int sv_hop_format(unsigned from, unsigned to, char *buf, size_t size);

/* Where a timestamp came from. */
enum sv_ts_source {
	SV_TS_NONE = 0,
	SV_TS_SCHEDULED = 1,	/* the planned instant, not a measurement */
	SV_TS_USER = 2,		/* clock_gettime() in user space */
	SV_TS_SOFTWARE = 3,	/* kernel software stamp (SO_TIMESTAMPING SOFTWARE) */
	SV_TS_HARDWARE = 4,	/* NIC hardware stamp */
	SV_TS_XDP_META = 5,	/* XDP rx metadata (bpf_xdp_metadata_rx_timestamp) */
	SV_TS_BPF = 6,		/* bpf_ktime_get_*() in a BPF program */
	SV_TS_COUNT
};
/* "none", "scheduled", "user", "software", "hardware", "xdp_meta", "bpf". */
const char *sv_ts_source_name(unsigned src);
int sv_ts_source_parse(const char *name, enum sv_ts_source *out);

/* What the second timestamp (t2_ns) of an event is. */
enum sv_t2_kind {
	SV_T2_NONE = 0,
	SV_T2_SCHEDULED = 1,	/* svpub: the frame's deadline */
	SV_T2_HANDOFF = 2,	/* svpub: when the frame was handed to the kernel / ring */
	SV_T2_SAMPLE = 3,	/* the sample time Ts computed from (tai_sec, smpCnt) */
	SV_T2_SOFTWARE = 4,	/* a software stamp kept beside a hardware one */
	SV_T2_REFRTM = 5,	/* refrTm carried in the ASDU */
	SV_T2_COUNT
};
const char *sv_t2_kind_name(unsigned kind); /* "none", "scheduled", "handoff", "sample", "software", "refrtm" */

/* Event flags. */
#define SV_REC_F_LATE (1u << 0)		/* past its deadline / latency budget */
#define SV_REC_F_SKIPPED (1u << 1)	/* publisher skipped this frame (reason) */
#define SV_REC_F_DUPLICATE (1u << 2)	/* smpCnt seen before */
#define SV_REC_F_DROPPED (1u << 3)	/* dropped here (reason) */
#define SV_REC_F_REORDERED (1u << 4)	/* arrived after a later smpCnt */
#define SV_REC_F_SIMULATION (1u << 5)	/* S bit set (IEC 61850-9-2 Ed 2 §5.3.3.4) */
#define SV_REC_F_QUALITY (1u << 6)	/* some channel's validity is not good */
#define SV_REC_F_GAP (1u << 7)		/* samples were lost just before this one */
#define SV_REC_F_NOT_SYNCED (1u << 8)	/* smpSynch != 2: tai_sec is not meaningful */
#define SV_REC_F_ALL 0x01FFu
/* "late|dropped" into @buf ("" when 0). Returns snprintf's value. */
int sv_rec_flags_format(unsigned flags, char *buf, size_t size);

/*
 * Reason codes (event.reason, drop.reason): values < 0x8000 are the kernel's enum skb_drop_reason of the
 * recording host (numbering changes between kernels: the writer adds NAME records of kind
 * SV_REC_NAME_DROP_REASON for the values it uses); values >= 0x8000 are svkit's own.
 */
enum sv_rec_reason {
	SV_REASON_NONE = 0,
	SV_REASON_SVKIT = 0x8000,
	SV_REASON_DEADLINE_MISSED = 0x8001,	/* publisher woke too late; frame skipped */
	SV_REASON_TX_RING_FULL = 0x8002,	/* no room in the TX ring / socket buffer */
	SV_REASON_TX_ERROR = 0x8003,		/* send failed */
	SV_REASON_DECODE_ERROR = 0x8004,	/* malformed frame */
	SV_REASON_FILTERED = 0x8005,		/* not a stream we follow */
	SV_REASON_RING_OVERFLOW = 0x8006,	/* RX/ring buffer overflow (AF_XDP, BPF ringbuf) */
	SV_REASON_STALE = 0x8007,		/* too old to be useful (latency budget) */
	SV_REASON_MISSING = 0x8008,		/* seen upstream, never at this point within the tool's timeout (svtrace) */
};
/* Name of an svkit reason ("deadline_missed"...), or NULL for kernel values / unknown. */
const char *sv_rec_reason_name(unsigned reason);

/* ---- Records: the structs ARE the little-endian layout (checked with _Static_assert) --------- */

/* Common first 4 octets: the writer sets kind and size; the caller sets point where it applies. */
#define SV_REC_HDR_FIELDS \
	uint8_t kind;	\
	uint8_t point;	\
	uint16_t size

struct sv_rec_hdr {
	SV_REC_HDR_FIELDS;
};

/* Host sync state (sv_clock_sync as stored). 64 octets. Also embedded in the file header. */
struct sv_rec_sync {
	SV_REC_HDR_FIELDS;	/* point unused (0) */
	uint32_t status;	/* timex.status */
	int64_t t_ns;		/* when read, on the file's clock */
	int64_t maxerror_ns;
	int64_t esterror_ns;
	int64_t offset_ns;
	int64_t freq_ppb;
	int32_t tai_offset_s;	/* 0 = unset: TAI == REALTIME */
	int32_t state;		/* adjtimex return value */
	uint8_t unsync;		/* STA_UNSYNC */
	uint8_t tai_unset;
	uint8_t reserved[6];
};

struct sv_rec_file_header {
	char magic[8];			/* SV_REC_MAGIC */
	uint16_t version_major;
	uint16_t version_minor;
	uint16_t header_size;		/* SV_REC_HEADER_SIZE */
	uint8_t clock;			/* enum sv_clock_id of EVERY timestamp in the file */
	uint8_t flags;			/* SV_REC_FH_* */
	uint32_t part;			/* 0 = first file of the run, then 1, 2, ... at each rotation */
	uint32_t block_max;		/* largest block payload; readers size their buffer by it */
	uint64_t run_id;		/* random; the same in every part of one run */
	int64_t start_ns;		/* run start, on `clock` */
	int64_t part_start_ns;		/* this part's start, on `clock` */
	int64_t start_realtime_ns;	/* run start on CLOCK_REALTIME (for humans) */
	int64_t to_tai_ns;		/* TAI = t + to_tai_ns (valid with SV_REC_FH_TO_TAI) */
	int64_t to_tai_gap_ns;		/* sv_clock_xlate gap: uncertainty is half of it */
	int32_t tai_offset_s;		/* TAI - UTC at start (0 = unset) */
	uint32_t pid;
	struct sv_rec_sync sync;	/* host sync state at start (kind = SV_REC_SYNC) */
	char tool[16];			/* "svpub", NUL-padded */
	char tool_version[16];
	char host[64];			/* gethostname() */
	int32_t phc_index;		/* /dev/ptpN when clock is PHC, else -1 */
	uint8_t reserved[8];
	uint32_t crc32c;		/* CRC-32C of octets 0..251 */
};
#define SV_REC_FH_TO_TAI (1u << 0)	/* to_tai_ns is valid */
#define SV_REC_FH_TAI_UNSET (1u << 1)	/* host TAI offset was 0 at start: TAI == REALTIME */
#define SV_REC_FH_UNSYNC (1u << 2)	/* host clock unsynchronised at start */

struct sv_rec_block_header {
	uint32_t magic;		/* SV_REC_BLOCK_MAGIC */
	uint32_t len;		/* payload octets: > 0, multiple of 8, <= block_max */
	uint32_t records;	/* records in the payload */
	uint32_t crc32c;	/* CRC-32C of (magic, len, records) then the payload */
};

/* STREAM: 176 octets. Re-defining an index replaces it (confRev change, ...). */
struct sv_rec_stream {
	SV_REC_HDR_FIELDS;	/* point unused */
	uint32_t stream;	/* index used by the other records, < SV_REC_MAX_STREAMS */
	uint16_t appid;
	uint16_t asdus;		/* ASDUs per frame */
	uint32_t sample_rate;	/* samples per second (0 unknown) */
	uint32_t conf_rev;
	uint16_t vlan;		/* VLAN id, 0xFFFF untagged */
	uint8_t smp_synch;	/* as last seen/sent: 0 none, 1 local, 2 global */
	uint8_t svid_len;	/* 1..129 */
	uint8_t dst_mac[6];
	uint16_t flags;		/* SV_REC_F_SIMULATION if the S bit is set */
	char svid[SV_REC_SVID_SIZE]; /* VisibleString, NUL-terminated and NUL-padded */
	uint32_t smp_wrap;	/* smpCnt modulus: rate for synchronised streams, 65536 otherwise */
	uint32_t reserved;
};

/* NAME: 80 octets. */
enum sv_rec_name_kind {
	SV_REC_NAME_IFINDEX = 1,	/* id = ifindex in netns `netns` */
	SV_REC_NAME_GUEST = 2,		/* id = guest/egress index */
	SV_REC_NAME_NETNS = 3,		/* id = netns inode */
	SV_REC_NAME_DROP_REASON = 4,	/* id = kernel skb_drop_reason value */
};
struct sv_rec_name {
	SV_REC_HDR_FIELDS;	/* point unused */
	uint8_t name_kind;	/* enum sv_rec_name_kind */
	uint8_t reserved[3];
	uint32_t id;
	uint32_t netns;		/* for IFINDEX: netns inode (0 = the tool's own) */
	char name[64];		/* NUL-terminated */
};

/* EVENT: 64 octets. One frame (first ASDU) or one sample seen at `point`. */
struct sv_rec_event {
	SV_REC_HDR_FIELDS;	/* point = enum sv_point */
	uint32_t stream;	/* stream index or SV_REC_STREAM_NONE */
	int64_t t_ns;		/* the point's timestamp, on the file's clock */
	int64_t t2_ns;		/* second timestamp (meaning: t2_kind), on the file's clock; 0 if none */
	uint32_t tai_sec;	/* TAI second of the sample (join key; 0 = unknown) */
	uint16_t smp_cnt;	/* smpCnt (of the first ASDU for a frame) */
	uint8_t ts_src;		/* enum sv_ts_source of t_ns */
	uint8_t t2_kind;	/* enum sv_t2_kind */
	uint32_t ifindex;	/* port the point was observed on (0 none) */
	uint32_t netns;		/* netns inode of ifindex (0 = the tool's own / unknown) */
	uint16_t guest;		/* guest / egress index, SV_REC_GUEST_NONE */
	uint16_t flags;		/* SV_REC_F_* */
	uint16_t reason;	/* enum sv_rec_reason / kernel drop reason when DROPPED or SKIPPED */
	uint16_t cpu;
	uint32_t tid;		/* thread that handled it (0 unknown) */
	uint8_t asdu;		/* ASDU index within the frame (0 for a frame record) */
	uint8_t nasdu;		/* ASDUs in the frame (0 unknown) */
	uint16_t frame_len;	/* octets on the wire (0 unknown) */
	uint32_t quality;	/* OR of the channels' quality words (svsub), else 0 */
	uint32_t seq;		/* producer's frame number (svpub: k; svtrace: correlation id), 0 none */
};
/* svtrace's "missing" marker: no drop, the frame was seen upstream and never at this point (its smpCnt is
 * that old frame's, written when the frame was given up on). */
static inline bool sv_rec_event_missing(const struct sv_rec_event *ev)
{
	return (ev->flags & SV_REC_F_DROPPED) && ev->reason == SV_REASON_MISSING;
}

/* SUMMARY: 184 octets. One period (normally 1 s) of one hop (from -> point) of one stream. */
struct sv_rec_summary {
	SV_REC_HDR_FIELDS;	/* point = hop end */
	uint32_t stream;
	uint8_t from_point;	/* hop start; SV_POINT_NONE: counts at `point` only, no latency */
	uint8_t reserved0;
	uint16_t guest;
	uint32_t tai_sec;	/* the period starts at this TAI second */
	uint32_t period_ms;	/* length of the period (1000) */
	uint32_t reserved1;
	uint64_t count;		/* latency values (0: the percentiles are meaningless) */
	uint64_t frames, samples, lost, duplicate, reordered, late, dropped, errors; /* sv_counters */
	int64_t min, p50, p99, p999, p9999, max;	/* ns */
	int64_t p50_err, p99_err, p999_err, p9999_err;	/* bucket error bounds, 0 = exact */
	uint64_t negative;	/* negative latencies seen (clock problem) */
};

/* HIST: 24 octets + `len` octets of sv_stats_serialize() output, zero-padded to a multiple of 8. */
struct sv_rec_hist {
	SV_REC_HDR_FIELDS;	/* point = hop end */
	uint32_t stream;
	uint8_t from_point;
	uint8_t reserved0;
	uint16_t guest;
	uint32_t tai_sec;
	uint32_t len;		/* serialised histogram octets that follow */
	uint32_t period_ms;
};

/* DROP: 80 octets. */
struct sv_rec_drop {
	SV_REC_HDR_FIELDS;	/* point where it was dropped (nearest), or SV_POINT_NONE */
	uint32_t stream;
	int64_t t_ns;
	uint64_t location;	/* kernel text address (kfree_skb location) or 0 */
	uint32_t tai_sec;
	uint16_t smp_cnt;
	uint16_t reason;	/* kernel skb_drop_reason or SV_REASON_* */
	uint32_t ifindex;
	uint32_t netns;
	uint16_t guest;
	uint16_t cpu;
	uint32_t tid;
	char reason_name[32];	/* "NETFILTER_DROP", "deadline_missed", ...; NUL-terminated */
};

/* THREAD ("why late" attribution, svtrace): 96 octets. */
enum sv_rec_wait_cause {
	SV_WAIT_UNKNOWN = 0,
	SV_WAIT_RUNQUEUE = 1,	/* runnable, another thread held the CPU */
	SV_WAIT_PREEMPTED = 2,	/* was running, got preempted */
	SV_WAIT_BLOCKED = 3,	/* slept (lock, I/O) */
	SV_WAIT_IRQ = 4,	/* hard/soft interrupts on its CPU */
};
const char *sv_rec_wait_cause_name(unsigned cause); /* "unknown", "runqueue", "preempted", "blocked", "irq" */
/* A scheduling policy (THREAD records' feeder/holder policy, SCHED_* numbers) as the kernel spells it:
 * "SCHED_OTHER", "SCHED_FIFO", ..., "unknown". */
const char *sv_sched_policy_name(unsigned policy);
struct sv_rec_thread {
	SV_REC_HDR_FIELDS;	/* point that was late (T2b for a vhost feeder) */
	uint32_t stream;
	int64_t t_ns;		/* wait start, on the file's clock */
	int64_t wait_ns;	/* how long the feeder waited */
	uint32_t tai_sec;	/* the sample that was late (0 unknown) */
	uint16_t smp_cnt;
	uint16_t cpu;		/* CPU it waited for */
	uint32_t feeder_tid;
	uint32_t holder_pid;	/* tid that held the CPU (0 idle/unknown) */
	uint8_t holder_policy;	/* SCHED_OTHER 0, FIFO 1, RR 2, BATCH 3, IDLE 5, DEADLINE 6 */
	uint8_t holder_prio;	/* rt priority, or nice + 20 for SCHED_OTHER */
	uint8_t feeder_policy;
	uint8_t feeder_prio;
	uint32_t cause;		/* enum sv_rec_wait_cause */
	char feeder_comm[16];
	char holder_comm[16];
	uint16_t guest;
	uint16_t reserved;
	uint32_t ifindex;
	int64_t holder_run_ns;	/* how long the holder ran during the wait (0 unknown) */
};

/*
 * WHY: 288 octets (minor 2). One hop of one late frame (svtrace: T1-T2a and T2a-T2b of a late copy), its time
 * split into causes that add up to it: ns[0] + ... + ns[SV_REC_WHY_SLOTS - 1] = t_to_ns - t_from_ns (the
 * reader checks it). Each instant of the hop goes to one cause, first match wins (docs/record-format.md,
 * docs/decisions.md "svtrace: why late, cause by cause"): blocked (the carrier slept), steal, hard IRQ,
 * softirq (other than the frame's own), queueing (qdisc, backlog, ksoftirqd deferral), run queue (holder
 * named), running, carried (its own softirq), unexplained. The causes' order is svtrace's
 * (bpf/svtrace_why.h SVTRACE_WHY_*, the same numbers); the last slots are 0 until a later minor names them.
 */
enum sv_rec_why_cause {
	SV_WHY_STEAL = 0,	/* the vCPU did not run (the hypervisor's steal clock) */
	SV_WHY_IRQ_TIMER = 1,	/* hard IRQ: the local timer */
	SV_WHY_IRQ_IPI = 2,	/* hard IRQ: reschedule, call function, irq_work IPIs */
	SV_WHY_IRQ_DEVICE = 3,	/* hard IRQ: device interrupts */
	SV_WHY_SOFTIRQ = 4,	/* + the softirq's number: HI 4, TIMER 5, NET_TX 6, NET_RX 7, BLOCK 8, IRQ_POLL 9,
				 * TASKLET 10, SCHED 11, HRTIMER 12, RCU 13 */
	SV_WHY_KSOFTIRQD = 14,	/* the backlog waited while ksoftirqd waited on the run queue */
	SV_WHY_QDISC = 15,	/* queued in the egress port's qdisc */
	SV_WHY_BACKLOG = 16,	/* queued in a receive backlog */
	SV_WHY_RUNQUEUE = 17,	/* the carrier was runnable, another task ran (holder_*) */
	SV_WHY_BLOCKED = 18,	/* the carrier slept */
	SV_WHY_RUNNING = 19,	/* the carrier ran */
	SV_WHY_CARRIED = 20,	/* the frame's own softirq (or forwarding thread) */
	SV_WHY_UNEXPLAINED = 21,
	SV_WHY_NR = 22
};
#define SV_REC_WHY_SLOTS 24
/* "steal", "irq_timer", "irq_ipi", "irq_device", "softirq_hi" .. "softirq_rcu", "ksoftirqd", "qdisc", "backlog",
 * "runqueue", "blocked", "running", "carried", "unexplained"; "unknown" otherwise. */
const char *sv_rec_why_cause_name(unsigned cause);
#define SV_REC_WHY_F_PARTIAL 0x1u	/* a timeline did not reach back to the hop's start: that part unexplained */
#define SV_REC_WHY_F_STEAL_RQ 0x2u	/* steal from the run queue's booking: it may be placed up to a tick late */
#define SV_REC_WHY_F_QDISC 0x4u		/* the frame's qdisc stamp was found */
#define SV_REC_WHY_F_RX 0x8u		/* its guest-side receive stamp was found */
#define SV_REC_WHY_F_CPUS 0x10u		/* the hop crossed CPUs */
#define SV_REC_WHY_F_HOP_LATE 0x80u	/* this hop alone was over the threshold */
#define SV_REC_WHY_F_ALL 0x9fu
struct sv_rec_why {
	SV_REC_HDR_FIELDS;	/* point = the hop's end (T2a, T2b, ...) */
	uint32_t stream;
	int64_t t_from_ns;	/* the hop's start, on the file's clock */
	int64_t t_to_ns;	/* its end */
	uint32_t tai_sec;	/* the frame's sample (0 unknown) */
	uint16_t smp_cnt;
	uint8_t from_point;	/* the hop's start (T1, T2a, ...) */
	uint8_t reserved0;
	uint16_t guest;		/* egress port's guest (SV_REC_GUEST_NONE) */
	uint16_t cpu;		/* the CPU of the hop's last carrier (where it was taken) */
	uint32_t flags;		/* SV_REC_WHY_F_* */
	uint32_t carrier_tid;	/* the thread that carried the frame at the hop's end (0: a softirq) */
	uint32_t holder_pid;	/* the task that ran longest while the carrier waited (0 none) */
	uint8_t holder_policy;	/* SCHED_* number, as THREAD's; 255: not known (the holder was gone) */
	uint8_t holder_prio;	/* rt priority, or nice + 20 */
	uint16_t faults;	/* page faults the carrier took in the hop (marks: their time is in the causes) */
	uint32_t reserved1;
	char carrier_comm[16];
	char holder_comm[16];
	int64_t holder_ns;	/* the holder's part of ns[SV_WHY_RUNQUEUE] + ns[SV_WHY_KSOFTIRQD] */
	int64_t ns[SV_REC_WHY_SLOTS];	/* by enum sv_rec_why_cause */
};

/* END: 32 octets. Last record of a part closed by sv_record_writer_close() or by rotation. */
struct sv_rec_end {
	SV_REC_HDR_FIELDS;	/* point unused */
	uint32_t rotated;	/* 1: another part follows, 0: the run ended */
	int64_t t_ns;
	uint64_t records;	/* records in this part before END (all kinds) */
	uint64_t lost_records;	/* records the writer could not write (I/O errors) since run start */
};

/*
 * UNWRITTEN: 120 octets (minor version 1). A stretch of blocks the writer could not write (a full disk, an
 * I/O error, free space below the writer's floor): their records were dropped and counted here. Written
 * first in the next block that reaches the disk (space came back), or with the part's END (the writer
 * keeps a space reserve for that), so a reader knows what is missing, where, and why. The definitions
 * (STREAM, NAME) of a dropped block are written again after it: they are not lost. Readers of minor
 * version 0 skip it.
 */
#define SV_REC_UNWRITTEN_F_FLOOR (1u << 0)	/* some blocks were held back by the free-space floor */
#define SV_REC_UNWRITTEN_F_ALL 0x1u
struct sv_rec_unwritten {
	SV_REC_HDR_FIELDS;	/* point unused */
	int32_t err;		/* errno of the last failed write (ENOSPC...); ENOSPC for the floor */
	int64_t t_first_ns;	/* the file's clock: the last block written before the stretch (or part start) */
	int64_t t_last_ns;	/* the file's clock: the last block that failed */
	int64_t ts_min_ns;	/* TAI: earliest sample time (Ts) of the EVENT records not written (0 none known) */
	int64_t ts_max_ns;	/* TAI: latest */
	int64_t t_min_ns;	/* the file's clock: earliest t_ns of the EVENT records not written (0 none) */
	int64_t t_max_ns;	/* the file's clock: latest */
	uint64_t records;	/* records not written in this stretch (all kinds but re-written definitions) */
	uint64_t events;	/* EVENT records among them (every ASDU) */
	uint64_t total;		/* records not written since the run started (END's lost_records so far) */
	uint32_t frames[8];	/* EVENT records of ASDU 0 (one a frame) not written, per point (index = point) */
	uint32_t blocks;	/* blocks dropped in this stretch */
	uint32_t flags;		/* SV_REC_UNWRITTEN_F_* */
};

/*
 * INTERVAL (minor version 2): one interval of a soak (sv_interval.h) for one (stream, hop, guest): its counters and
 * its worst frame. Intervals are aligned on the TAI scale (tai_sec is a multiple of the period on every host),
 * so the intervals of svpub, svtrace and every svsub of one soak line up without joining frames. Two sizes:
 * 56 octets when every counter of the long part is 0 (the usual case), else 104; the reader hands both out
 * in this struct (the long part zero in the short form). Counters are exact for the interval; a counter past
 * UINT32_MAX stays there (flag SATURATED). The interval's latencies are in the HIST record of its (hop, guest)
 * (stream SV_REC_STREAM_NONE, same tai_sec and period_ms).
 */
#define SV_REC_INTERVAL_F_FIRST (1u << 0)	/* the run started inside it: it was not observed whole */
#define SV_REC_INTERVAL_F_LAST (1u << 1)	/* the run stopped inside it */
#define SV_REC_INTERVAL_F_STEP (1u << 2)	/* the tool's clock was stepped while it was open (CLOCK record) */
#define SV_REC_INTERVAL_F_STRAYS (1u << 3)	/* holds entries whose own interval was already written */
#define SV_REC_INTERVAL_F_WORST (1u << 4)	/* worst_* describe a frame (a latency was counted) */
#define SV_REC_INTERVAL_F_WHY (1u << 5)		/* the worst frame has a why-late record in the file */
#define SV_REC_INTERVAL_F_SATURATED (1u << 6)	/* some counter passed UINT32_MAX (held there) */
#define SV_REC_INTERVAL_F_ALL 0x7Fu
#define SV_REC_INTERVAL_SHORT 56u		/* size of the short form */
struct sv_rec_interval {
	SV_REC_HDR_FIELDS;	/* point = hop end (or the point counted) */
	uint8_t from_point;	/* hop start; SV_POINT_NONE: counts at `point` only, no latency */
	uint8_t flags;		/* SV_REC_INTERVAL_F_* */
	uint16_t guest;		/* guest / egress index, SV_REC_GUEST_NONE */
	uint32_t stream;	/* stream index */
	uint32_t tai_sec;	/* the interval starts at this TAI second, a multiple of the period */
	uint32_t period_ms;	/* its length (the soak interval) */
	uint32_t frames;	/* frames seen (duplicates and reordered ones included) */
	uint32_t samples;	/* samples (ASDUs) in them */
	uint32_t count;		/* latency values counted (they are in the (hop, guest) HIST) */
	uint32_t late;		/* frames over the tool's latency threshold or deadline */
	uint32_t worst_tai_sec;	/* the worst frame (largest latency): its sample's TAI second */
	int64_t worst_ns;	/* its latency */
	uint16_t worst_smp_cnt;	/* its smpCnt (with stream and worst_tai_sec: the join key) */
	uint16_t strays;	/* entries counted here whose own interval was already written (saturating) */
	uint32_t reserved;
	/* the long form only (0 in the short one) */
	uint32_t lost;		/* samples never received (smpCnt gaps) */
	uint32_t missing;	/* frames seen upstream and never here (svtrace) */
	uint32_t dropped;	/* frames dropped, every reason */
	uint32_t duplicate;
	uint32_t reordered;
	uint32_t outliers;	/* latencies past the tool's limit, kept out of the histogram */
	uint32_t errors;	/* decode / validation errors */
	uint16_t restarts;	/* sample-counter restarts */
	uint16_t changes;	/* confRev, quality or simulation changes */
	uint16_t drop_reason[2]; /* the most frequent drop reasons (as event.reason; 0 none) */
	uint32_t drop_count[2];	/* their counts; dropped minus both is the other reasons' */
	uint32_t reserved2;
};

/* The trigger classes of flight-recorder windows (values are the format). Each has its own budget. */
enum sv_rec_window_class {
	SV_WINDOW_LATENCY = 0,	/* a frame over the latency threshold */
	SV_WINDOW_LOSS = 1,	/* lost samples, missing frames */
	SV_WINDOW_DROP = 2,	/* a dropped frame */
	SV_WINDOW_CHANGE = 3,	/* confRev, quality or simulation changed */
	SV_WINDOW_RESTART = 4,	/* the sample counter restarted */
	SV_WINDOW_CLASSES,
	SV_WINDOW_CLASS_NONE = 0xFF, /* no trigger: the run's closing counts (SV_REC_WINDOW_F_SUMMARY) */
};
/* "latency", "loss", "drop", "change", "restart"; "none"; "unknown" otherwise. */
const char *sv_rec_window_class_name(unsigned cls);

/*
 * WINDOW (minor version 2): a flight-recorder window (sv_flight.h), written after the EVENT records it kept:
 * those of `stream` (and `guest`, with the guest-less points' own) whose t_ns lies in [t_start_ns, t_end_ns].
 * Windows of other keys may interleave with them. The counts of windows not kept (budget, busy) are the
 * run's so far; a last record with flag SUMMARY gives them at the end when a window was refused after the
 * last one kept.
 */
#define SV_REC_WINDOW_F_CUT (1u << 0)		/* merged triggers reached the length cap: it ends there */
#define SV_REC_WINDOW_F_SHORT (1u << 1)		/* the ring did not reach back to trigger - pre */
#define SV_REC_WINDOW_F_LOST (1u << 2)		/* some records of its span were overwritten before written */
#define SV_REC_WINDOW_F_TRUNCATED (1u << 3)	/* the run ended before the window's end */
#define SV_REC_WINDOW_F_SUMMARY (1u << 4)	/* not a window: the counts of windows not kept, at the end */
#define SV_REC_WINDOW_F_ALL 0x1Fu
struct sv_rec_window {
	SV_REC_HDR_FIELDS;	/* point = the triggering frame's point (SV_POINT_NONE with SUMMARY) */
	uint8_t cls;		/* enum sv_rec_window_class of its first trigger */
	uint8_t classes;	/* bit (1 << class) of every trigger merged into it */
	uint16_t guest;		/* the window's guest; SV_REC_GUEST_NONE: every guest of the stream */
	uint32_t stream;	/* the window's stream (SV_REC_STREAM_NONE only with SUMMARY) */
	uint32_t flags;		/* SV_REC_WINDOW_F_* */
	int64_t t_trigger_ns;	/* the first trigger, on the file's clock */
	int64_t t_start_ns;	/* the span held, on the file's clock: from trigger - pre (later: SHORT) */
	int64_t t_end_ns;	/* to the last trigger + post (capped: CUT; earlier: TRUNCATED) */
	int64_t value;		/* the first trigger's measure: latency (ns), samples lost, drop reason, ... */
	uint32_t trigger_tai_sec; /* the triggering frame's join key (0: none) */
	uint16_t trigger_smp_cnt;
	uint16_t triggers;	/* triggers merged into it, the first included (saturating) */
	uint32_t id;		/* 1, 2, ...: windows kept in the run (0 with SUMMARY) */
	uint32_t records;	/* EVENT records written for it */
	uint32_t lost;		/* EVENT records of its span overwritten in the ring before they were written */
	uint32_t busy;		/* triggers not kept so far because every window slot was open */
	uint32_t dropped[8];	/* windows not kept so far by the budget, per class (index = class) */
};

/*
 * CLOCK (minor version 2): the conversion of the tool's clock (`clock`, normally MONOTONIC) to TAI, measured
 * at start (flag INITIAL) and again periodically; a change beyond the threshold is a step of the host's TAI
 * (a PTP or NTP step; MONOTONIC is never stepped) and is written with flag STEP. From this record on,
 * TAI = t + new_to_tai_ns for times on `clock`; a file whose own clock is `clock` converts with it
 * (sv_record_reader_to_tai).
 */
#define SV_REC_CLOCK_F_INITIAL (1u << 0)	/* the run's first measurement (old = new) */
#define SV_REC_CLOCK_F_STEP (1u << 1)		/* the conversion moved beyond the threshold */
#define SV_REC_CLOCK_F_ALL 0x3u
struct sv_rec_clock {
	SV_REC_HDR_FIELDS;	/* point unused */
	uint8_t clock;		/* enum sv_clock_id of the converted clock */
	uint8_t flags;		/* SV_REC_CLOCK_F_* */
	uint16_t reserved0;
	int64_t t_ns;		/* when measured, on `clock` */
	int64_t old_to_tai_ns;	/* TAI = t + old_to_tai_ns before this record */
	int64_t new_to_tai_ns;	/* ... and from this record on */
	int64_t step_ns;	/* new - old */
	int64_t gap_ns;		/* width of the new measurement: its uncertainty is half of it */
	int64_t threshold_ns;	/* a move beyond this was a step */
	int32_t tai_offset_s;	/* the kernel's TAI - UTC then (0 unset) */
	uint32_t reserved;
};

/* The layout is the format: any change here is a new major version. */
_Static_assert(sizeof(struct sv_rec_hdr) == 4, "record header");
_Static_assert(sizeof(struct sv_rec_sync) == 64, "SYNC record");
_Static_assert(sizeof(struct sv_rec_file_header) == SV_REC_HEADER_SIZE, "file header");
_Static_assert(offsetof(struct sv_rec_file_header, sync) == 80, "file header sync");
_Static_assert(offsetof(struct sv_rec_file_header, crc32c) == 252, "file header crc");
_Static_assert(sizeof(struct sv_rec_block_header) == 16, "block header");
_Static_assert(sizeof(struct sv_rec_stream) == 176, "STREAM record");
_Static_assert(offsetof(struct sv_rec_stream, svid) == 32, "STREAM svid");
_Static_assert(sizeof(struct sv_rec_name) == 80, "NAME record");
_Static_assert(sizeof(struct sv_rec_event) == 64, "EVENT record");
_Static_assert(offsetof(struct sv_rec_event, tai_sec) == 24, "EVENT tai_sec");
_Static_assert(offsetof(struct sv_rec_event, seq) == 60, "EVENT seq");
_Static_assert(sizeof(struct sv_rec_summary) == 184, "SUMMARY record");
_Static_assert(offsetof(struct sv_rec_summary, min) == 96, "SUMMARY min");
_Static_assert(sizeof(struct sv_rec_hist) == 24, "HIST record header");
_Static_assert(sizeof(struct sv_rec_drop) == 80, "DROP record");
_Static_assert(sizeof(struct sv_rec_thread) == 96, "THREAD record");
_Static_assert(sizeof(struct sv_rec_end) == 32, "END record");
_Static_assert(sizeof(struct sv_rec_unwritten) == 120, "UNWRITTEN record");
_Static_assert(offsetof(struct sv_rec_unwritten, frames) == 80, "UNWRITTEN frames");
_Static_assert(sizeof(struct sv_rec_why) == 288, "WHY record");
_Static_assert(offsetof(struct sv_rec_why, ns) == 96, "WHY ns");
_Static_assert(sizeof(struct sv_rec_interval) == 104, "INTERVAL record (long form)");
_Static_assert(offsetof(struct sv_rec_interval, lost) == SV_REC_INTERVAL_SHORT, "INTERVAL short form");
_Static_assert(offsetof(struct sv_rec_interval, worst_ns) == 40, "INTERVAL worst_ns");
_Static_assert(sizeof(struct sv_rec_window) == 104, "WINDOW record");
_Static_assert(offsetof(struct sv_rec_window, dropped) == 72, "WINDOW dropped");
_Static_assert(SV_WINDOW_CLASSES <= 8, "WINDOW dropped[] holds every class");
_Static_assert(sizeof(struct sv_rec_clock) == 64, "CLOCK record");

/* ---- Writer --------------------------------------------------------------------------------- */

struct sv_record_writer;

#define SV_REC_KEEP_ALL UINT32_MAX	/* rotate_keep: no part is deleted by the count (the floor may) */
#define SV_REC_KEEP_MAX 1000000u	/* largest count the tools accept (--record-keep N) */

#define SV_REC_KEEP_SYNTAX "a number of parts (0..1000000) or all"	/* for the tools' messages */

/*
 * The record keys the three tools share (svpub: -s KEY=V; svsub: -c FILE and --record-*; svtrace:
 * --record-*), with their defaults as the config tables write them. Bounded by default: 16 rotated parts
 * of 1 GiB besides the live file, and a floor of 256 MiB of free space under which the oldest parts of the
 * run are deleted and then blocks held back (docs/decisions.md "records on a full disk").
 */
#define SV_REC_SIZE_MIB_DEFAULT "1024"	/* record_size_mib: a new part every N MiB, 0 = one file */
#define SV_REC_KEEP_DEFAULT "16"	/* record_keep: rotated parts kept, or all */
#define SV_REC_FLUSH_MS_DEFAULT "1000"	/* record_flush_ms: a partial block is written after it waited this */
#define SV_REC_FLUSH_MS_MAX 3600000u
#define SV_REC_SYNC_MS_DEFAULT "0"	/* record_sync_ms: fdatasync period, 0 = never */
#define SV_REC_SYNC_MS_MAX 3600000u
#define SV_REC_MIN_FREE_MIB_DEFAULT "256" /* record_min_free_mib: free-space floor, 0 = none */
#define SV_REC_MIN_FREE_MIB_MAX (1u << 24)
#define SV_REC_SPACE_CHECK_NS (10 * 1000000000LL) /* the floor is checked this often (sv_record_tick) */

/* The tools' --record-keep / record_keep: "all" (SV_REC_KEEP_ALL) or a count 0..SV_REC_KEEP_MAX.
 * 0, or -EINVAL (@keep unchanged). */
int sv_record_parse_keep(const char *s, uint32_t *keep);
/* The same as the config tables' check of record_keep (struct sv_cfg_key.check): -EINVAL with "'x' is not
 * " SV_REC_KEEP_SYNTAX in @msg. */
int sv_record_check_keep(const char *s, char *msg, size_t n);

/* Rotated part @n (1 = the newest before the live file) of the record @path: "PATH.N". 0, or
 * -ENAMETOOLONG. The one naming the writer and svreport share. */
int sv_record_part_path(char *buf, size_t size, const char *path, unsigned n);

struct sv_record_writer_cfg {
	const char *path;		/* the live file; rotated parts are path.1 (newest) .. path.keep */
	const char *tool;		/* "svpub", ... (<= 15 chars) */
	const char *tool_version;	/* NULL: SVKIT_VERSION if defined, else "" */
	enum sv_clock_id clock;		/* the clock of EVERY timestamp the caller writes */
	clockid_t phc_cid;		/* clock PHC only: the PHC's clockid (sv_phc.cid) */
	int32_t phc_index;		/* clock PHC only: N of /dev/ptpN */
	uint32_t block_bytes;		/* buffer = max block payload; 0 = SV_REC_BLOCK_DEFAULT;
					 * SV_REC_BLOCK_MIN..SV_REC_BLOCK_LIMIT */
	uint64_t rotate_bytes;		/* start a new part when a part reaches this size (exceeded by at
					 * most one block); 0 = never. >= 2 * block_bytes */
	uint32_t rotate_keep;		/* rotated parts kept besides the live file (0 = delete each,
					 * SV_REC_KEEP_ALL = every one) */
	/* Time bounds, driven by sv_record_tick() (0 = off): */
	int64_t flush_ns;		/* a block that holds records is written once it waited this long */
	int64_t sync_ns;		/* fdatasync(2) at most this often while blocks were written */
	uint64_t min_free_bytes;	/* free-space floor of the file's filesystem (0 = none): checked at
					 * open, at each rotation and every SV_REC_SPACE_CHECK_NS of ticks */
	bool no_reserve;		/* do not keep the space reserve for the part's last block and END */
	/* Optional overrides (tests, replay): NULL/0 = measure now. */
	const struct sv_clock_sync *sync;
	const char *host;
	bool no_to_tai;			/* do not measure clock -> TAI (to_tai stays invalid) */
	/* The writer's own times (header, END, UNWRITTEN), for synthetic or replayed records whose times are not
	 * now (a simulated soak): called with @now_ctx, returns a time on the file's clock. NULL: read it. */
	int64_t (*now)(void *now_ctx);
	void *now_ctx;
};

/*
 * Creates (truncates) cfg->path, writes the header. Measures the host sync state and, when the clock is
 * not TAI, the conversion to TAI (stored in every part's header). Returns 0 and *w, or -errno
 * (-EINVAL bad cfg or rotation asked of a path that is not a regular file, open(2)'s or write(2)'s errno,
 * -ENOMEM). On failure a file created here is removed; a path that existed (a device, a symlink) is left.
 * A full disk (ENOSPC, EDQUOT, EFBIG) is not a failure: the writer opens, says so (sv_log warning) and
 * counts what it cannot write until space returns (see "Full disk" below).
 *
 * Full disk: a block that cannot be written is dropped and its records counted (by kind, and frames per
 * point), never retried or held: the writer keeps accepting records and tries each later block. The
 * first block that reaches the disk again starts with an UNWRITTEN record (struct sv_rec_unwritten) for
 * the stretch, and the STREAM/NAME definitions the dropped blocks held. Where fallocate(2) works, each
 * part keeps a reserve of disk space past its end (one block + UNWRITTEN + END): a block is written only
 * when the reserve stays whole, so the part's last block, the UNWRITTEN record and the END record land
 * even on a full disk; the reserve is released when the part ends. Each stretch is said once through
 * sv_log (warning at its start, notice when writing resumes); the counts are in the stats.
 */
int sv_record_writer_open(struct sv_record_writer **w, const struct sv_record_writer_cfg *cfg);

/* The tools' record keys, as their config tables hold them. */
struct sv_record_opts {
	uint32_t size_mib;		/* record_size_mib */
	const char *keep;		/* record_keep: SV_REC_KEEP_SYNTAX (NULL: SV_REC_KEEP_DEFAULT) */
	uint32_t flush_ms;		/* record_flush_ms */
	uint32_t sync_ms;		/* record_sync_ms */
	uint32_t min_free_mib;		/* record_min_free_mib */
	const char *host;		/* the header's host name (--host), NULL: gethostname() */
};
/* @o into @cfg (rotate_bytes, rotate_keep, flush_ns, sync_ns, min_free_bytes, host). 0, or -EINVAL when
 * o->keep is not SV_REC_KEEP_SYNTAX (@cfg unchanged). */
int sv_record_cfg_opts(struct sv_record_writer_cfg *cfg, const struct sv_record_opts *o);
/* The options of a tool config struct that holds the record keys under their own names. */
#define SV_REC_OPTS_OF(c)                                                                            \
	((struct sv_record_opts){ .size_mib = (c)->record_size_mib, .keep = (c)->record_keep,         \
				  .flush_ms = (c)->record_flush_ms, .sync_ms = (c)->record_sync_ms,   \
				  .min_free_mib = (c)->record_min_free_mib })
/* Their rows in the tool's config table (sv_config.h, which the table's file includes): struct @T holds
 * uint32_t record_size_mib, record_flush_ms, record_sync_ms, record_min_free_mib and char record_keep[16];
 * @what names the record option in the help ("record", "--record"); @O is SV_REC_OPTS to give each key its
 * option (--record-size, --record-keep, ...: svsub, svtrace), SV_REC_NO_OPTS for keys alone (svpub -s). */
#define SV_REC_OPTS(opt) opt
#define SV_REC_NO_OPTS(opt)
#define SV_REC_CFG_ROWS(T, what, O)                                                                    \
	SV_CFG_KEY_UINT(T, record_size_mib, "record_size_mib", 0, 1 << 20, SV_REC_SIZE_MIB_DEFAULT,        \
			what ": a new part every N MiB (FILE newest, then FILE.1 ...); 0 = one file",       \
			O(SV_OPT("record-size", 0, "N"))),                                                  \
	SV_CFG_KEY_STRING(T, record_keep, "record_keep", SV_REC_KEEP_DEFAULT,                               \
			  what ": rotated parts kept besides FILE, the oldest deleted first: a number "       \
			  "(0..1000000) or all (then only the free-space floor deletes)",                   \
			  .check = sv_record_check_keep, O(SV_OPT("record-keep", 0, "N|all"))),             \
	SV_CFG_KEY_UINT(T, record_flush_ms, "record_flush_ms", 0, SV_REC_FLUSH_MS_MAX,                     \
			SV_REC_FLUSH_MS_DEFAULT,                                                           \
			what ": write a partial block once its records waited N ms (a killed process loses " \
			"at most that); 0 = only full blocks",                                              \
			O(SV_OPT("record-flush-ms", 0, "N"))),                                              \
	SV_CFG_KEY_UINT(T, record_sync_ms, "record_sync_ms", 0, SV_REC_SYNC_MS_MAX, SV_REC_SYNC_MS_DEFAULT, \
			what ": fdatasync every N ms, for a host that may lose power (it may delay the loop " \
			"by the disk's latency); 0 = never",                                                \
			O(SV_OPT("record-sync-ms", 0, "N"))),                                               \
	SV_CFG_KEY_UINT(T, record_min_free_mib, "record_min_free_mib", 0, SV_REC_MIN_FREE_MIB_MAX,          \
			SV_REC_MIN_FREE_MIB_DEFAULT,                                                       \
			what ": free-space floor (MiB) of the record's filesystem: below it the run's oldest " \
			"parts are deleted, then blocks held back (counted); 0 = none",                     \
			O(SV_OPT("record-min-free", 0, "N")))

/* Defines (or redefines) stream @s->stream. Kept in the writer's table and repeated at the start of
 * every later part. Returns 0, -EINVAL (index >= SV_REC_MAX_STREAMS, svid empty or > 129 octets or not
 * NUL-terminated in svid[]), or a flush error. */
int sv_record_define_stream(struct sv_record_writer *w, const struct sv_rec_stream *s);
/* Adds a name-table entry (same kind+id+netns replaces). -ENOSPC past SV_REC_MAX_NAMES. */
int sv_record_define_name(struct sv_record_writer *w, const struct sv_rec_name *n);

/*
 * Per-packet path: copy one record into the block buffer (kind and size are set by the writer, the rest
 * is the caller's). No allocation, no logging; a write(2) (and fallocate(2) for the reserve) only when
 * the block is full.
 * Returns 0, -EINVAL (invalid point/stream/source: nothing written), or the -errno of a failed block
 * write (that block's records are lost and counted; later writes go on).
 */
int sv_record_write_event(struct sv_record_writer *w, const struct sv_rec_event *ev);
int sv_record_write_summary(struct sv_record_writer *w, const struct sv_rec_summary *s);
int sv_record_write_drop(struct sv_record_writer *w, const struct sv_rec_drop *d);
int sv_record_write_thread(struct sv_record_writer *w, const struct sv_rec_thread *t);
/* WHY: also -EINVAL when the causes do not add up to the hop (or one is negative), or a flag is unknown. */
int sv_record_write_why(struct sv_record_writer *w, const struct sv_rec_why *y);
/* HIST: @h->... are serialised into the block buffer. @hdr gives point/stream/from/guest/tai/period. */
int sv_record_write_hist(struct sv_record_writer *w, const struct sv_rec_hist *hdr, const struct sv_stats *h);
/* SYNC: the state @s (NULL: read it now) stamped @t_ns on the file's clock (0: now). */
int sv_record_write_sync(struct sv_record_writer *w, const struct sv_clock_sync *s, int64_t t_ns);
/* Soak records (sv_interval.h and sv_flight.h write them). INTERVAL goes out in its short form when every field of
 * the long part is 0. -EINVAL: a point, flag, class or stream out of range, period 0, drop counts above
 * `dropped`, a window ending before it starts, a clock step that is not new - old. */
int sv_record_write_interval(struct sv_record_writer *w, const struct sv_rec_interval *iv);
int sv_record_write_window(struct sv_record_writer *w, const struct sv_rec_window *win);
int sv_record_write_clock(struct sv_record_writer *w, const struct sv_rec_clock *c);

/* Fills a summary record's counters and percentiles from a histogram (the caller sets the rest). */
void sv_rec_summary_fill(struct sv_rec_summary *s, const struct sv_stats *h);

/* Writes the buffered block now (if any). Returns 0 or -errno. */
int sv_record_flush(struct sv_record_writer *w);

/*
 * The time bounds, from the tool's loop with a time it already holds (@now_ns: any clock, the same one at
 * every call; no clock read here): writes the block once its records waited cfg.flush_ns (a killed
 * process then loses at most that much plus the loop's period), fdatasync(2)s every cfg.sync_ns, checks
 * the free-space floor every SV_REC_SPACE_CHECK_NS (fstatvfs). No system call unless one of them is due.
 * NULL is a no-op. Returns 0 or the -errno of a failed write (counted as any other).
 */
int sv_record_tick(struct sv_record_writer *w, int64_t now_ns);

struct sv_record_writer_stats {
	uint64_t records;	/* accepted by write/define calls */
	uint64_t bytes;		/* written to disk, all parts */
	uint64_t blocks;
	uint32_t parts;		/* files started (1 + rotations) */
	uint64_t write_errors;	/* blocks that could not be written (full disk, I/O error, floor) */
	uint64_t lost_records;	/* records never written (definitions are written again: not counted) */
	uint64_t lost_events;	/* EVENT records among them */
	uint64_t lost_frames[SV_POINT_COUNT];	/* EVENT records of ASDU 0 among them, per point */
	uint64_t stretches;	/* runs of failed blocks (one UNWRITTEN record each) */
	bool pending;		/* the last stretch is not in the file yet (space has not come back) */
	int first_errno;	/* why the first / last block could not be written (positive errno, 0 none) */
	int last_errno;
	uint64_t floor_blocks;	/* blocks held back because free space was below the floor */
	uint64_t parts_deleted;	/* rotated parts removed: the oldest beyond rotate_keep, or for the floor */
	uint64_t floor_deleted;	/* of those, removed to keep the free-space floor */
	uint64_t timed_flushes;	/* partial blocks written by the flush period */
	uint64_t syncs;		/* fdatasync calls (record_sync_ms) */
	uint64_t sync_errors;	/* fdatasync failures: data written before may not be on the disk */
	bool reserve;		/* a space reserve is kept past the end (fallocate works on this filesystem) */
	int64_t free_bytes;	/* free space at the last floor check (-1: not checked) */
	uint64_t min_free_bytes; /* the floor (0 none) */
	uint32_t rotate_keep;	/* as configured */
	int64_t flush_ns, sync_ns;
};
void sv_record_writer_get_stats(const struct sv_record_writer *w, struct sv_record_writer_stats *st);

/* Flush, END record, close. Always frees @w. Returns 0 or the first error of the run's last flush. */
int sv_record_writer_close(struct sv_record_writer *w);
/* The same, and the final counts into @st (NULL: not wanted) after the last block and END: what a tool
 * prints in its summary. */
int sv_record_writer_close_stats(struct sv_record_writer *w, struct sv_record_writer_stats *st);

/* True when some record of the run was not written (the tools then exit with status 1). */
static inline bool sv_record_stats_incomplete(const struct sv_record_writer_stats *st)
{
	return st->lost_records || st->pending || st->sync_errors;
}
/*
 * The tools' summary line after "record FILE: ": "20000 records in 5 blocks, 1 part: every record
 * written" or "1234 of 20000 records not written (1200 events: T0 1200 frames) in 2 stretches of 5
 * blocks: No space left on device (ENOSPC), last stretch not in the file (no space came back)...".
 * Returns snprintf's value.
 */
int sv_record_stats_format(const struct sv_record_writer_stats *st, char *buf, size_t size);
struct sv_json;
/* The "record" member of the tools' --json summaries: an object (path, counts, errno, policy), or null
 * when @st is NULL (no --record). */
void sv_record_stats_json(struct sv_json *j, const char *path, const struct sv_record_writer_stats *st);

/* ---- Reader --------------------------------------------------------------------------------- */

/* X-macro: (ENUM, "name", "meaning"). Named errors of the reader; docs/record-format.md lists them. */
#define SV_RECORD_ERRORS(X)                                                                           \
	X(IO, "io", "read error from the file")                                                       \
	X(HEADER_TRUNCATED, "header_truncated", "file shorter than its 256-octet header")             \
	X(BAD_MAGIC, "bad_magic", "not an svkit record file (magic is not SVREC)")                    \
	X(VERSION, "version", "unsupported major version")                                            \
	X(HEADER_CRC, "header_crc", "file header checksum mismatch")                                  \
	X(HEADER_FIELD, "header_field", "file header field out of range")                             \
	X(BLOCK_TRUNCATED, "block_truncated", "file ends inside a block (writer killed mid-write?)")  \
	X(BLOCK_MAGIC, "block_magic", "block does not start with SVBK")                               \
	X(BLOCK_LENGTH, "block_length", "block length 0, not a multiple of 8, or above block_max")    \
	X(BLOCK_CRC, "block_crc", "block checksum mismatch (corrupted)")                              \
	X(RECORD_SIZE, "record_size", "record size wrong for its kind or past the end of its block")  \
	X(RECORD_COUNT, "record_count", "block's record count differs from its content")              \
	X(RECORD_FIELD, "record_field", "record field out of range")                                  \
	X(STREAM_UNDEFINED, "stream_undefined", "record uses a stream index with no STREAM record")   \
	X(AFTER_END, "after_end", "data after the END record")

enum sv_record_err {
	SV_RECORD_OK = 0,
#define SV_RECORD_ERR_ENUM(e, n, d) SV_RECORD_E_##e,
	SV_RECORD_ERRORS(SV_RECORD_ERR_ENUM)
#undef SV_RECORD_ERR_ENUM
	SV_RECORD_E_COUNT
};
const char *sv_record_errname(enum sv_record_err e);	/* "block_crc" */
const char *sv_record_errdesc(enum sv_record_err e);	/* the meaning */

struct sv_record_reader;

/* One record as read. The union member is selected by `kind`; for HIST, `hist_data` points to
 * u.hist.len serialised octets valid until the next sv_record_reader_next(). Unknown kinds of a newer
 * minor version are skipped by the reader (counted), never returned. */
struct sv_rec {
	enum sv_rec_kind kind;
	uint64_t offset;		/* file offset of the record */
	union {
		struct sv_rec_hdr hdr;
		struct sv_rec_stream stream;
		struct sv_rec_name name;
		struct sv_rec_event event;
		struct sv_rec_summary summary;
		struct sv_rec_hist hist;
		struct sv_rec_drop drop;
		struct sv_rec_thread thread;
		struct sv_rec_sync sync;
		struct sv_rec_end end;
		struct sv_rec_unwritten unwritten;
		struct sv_rec_why why;
		struct sv_rec_interval interval;	/* the short form reads with its long part 0 */
		struct sv_rec_window window;
		struct sv_rec_clock clock;
	} u;
	const uint8_t *hist_data;
};

/* Opens @path and validates the header. Returns 0 and *r, or -errno (open), -EBADMSG (header: see
 * sv_record_reader_err; *r is still returned so the caller can format the error, then close it), -ENOMEM. */
int sv_record_reader_open(struct sv_record_reader **r, const char *path);
/* Same on an open stream (fmemopen() for fuzzing; not closed by the reader). @name is for messages. */
int sv_record_reader_open_fp(struct sv_record_reader **r, FILE *f, const char *name);
void sv_record_reader_close(struct sv_record_reader *r);

const struct sv_rec_file_header *sv_record_reader_header(const struct sv_record_reader *r);

/*
 * Next record, in file order. STREAM and NAME records are also entered in the reader's tables before
 * they are returned. Returns 1 (got one), 0 (end of file at a block boundary or after END), -EBADMSG
 * (format fault: sv_record_reader_err() names it, the reader stays failed) or -EIO. Damaged blocks with a
 * valid block after them are skipped, and records of valid blocks with a field out of range or an
 * undefined stream are dropped, not faults (see struct sv_record_reader_damage); finding the next block
 * seeks, so on a stream that cannot seek (a pipe) the damage stays a fault.
 */
int sv_record_reader_next(struct sv_record_reader *r, struct sv_rec *out);

/* The last error and the file offset where it was found. */
enum sv_record_err sv_record_reader_err(const struct sv_record_reader *r, uint64_t *offset);
/* "FILE: offset 4096: block_crc: block checksum mismatch (corrupted)". Returns snprintf's value. */
int sv_record_reader_strerror(const struct sv_record_reader *r, char *buf, size_t size);
/* True when the part ended with an END record (the writer closed or rotated it). */
bool sv_record_reader_clean_end(const struct sv_record_reader *r);
/* Records of unknown kinds skipped so far. */
uint64_t sv_record_reader_skipped(const struct sv_record_reader *r);

/*
 * Damage read past so far. A block that fails its checks (block_magic, block_length, block_crc,
 * record_size, record_count, or a short payload followed by a valid block) does not end the read when the
 * next block can be found: at the damaged block's own length if its header has the magic and a plausible
 * length (<= block_max) and that offset is the end of the file or holds another such header; else by
 * scanning 8-aligned offsets for the next block that passes every check (magic, length, CRC-32C, framing).
 * When no valid block follows, the original fault is the reader's error as before (a crash's partial last
 * block stays block_truncated) and the rest of the file is counted as one more skip. A record of a valid
 * block with a field out of range, or whose stream has no STREAM record, is dropped alone and counted.
 * The first 100 damages of a reader are reported through sv_log() at SV_LOG_WARN ("FILE: offset N:
 * block_crc: ...: skipped K octets (R records lost), reading on at offset M" / "... to the end of the
 * file"; "FILE: offset N: record_field: ... (event.point): record dropped (counted), reading on"). The file
 * header is never skipped: its faults fail sv_record_reader_open().
 */
struct sv_record_reader_damage {
	uint64_t blocks_skipped;	/* skips (a scan across several damaged blocks counts one; damage
					 * at the end of the file, one) */
	uint64_t octets_skipped;	/* file octets stepped over, block headers included */
	uint64_t records_lost;		/* record counts of the skipped blocks' headers, where believable */
	uint64_t skips_uncounted;	/* skips whose loss is not all in records_lost (header unreadable,
					 * found by scanning, garbage after a block at the end): records_lost is
					 * then a lower bound */
	uint64_t records_orphaned;	/* records of valid blocks whose stream has no STREAM record (it was
					 * skipped, invalid or never written): dropped, counted here */
	uint64_t records_invalid;	/* records of valid blocks with a field out of range (record_field):
					 * dropped, counted here */
	enum sv_record_err first_err;	/* the first damage (SV_RECORD_OK: none): a skip's fault,
					 * record_field or stream_undefined */
	uint64_t first_offset;		/* file offset of the first skipped block or dropped record */
	enum sv_record_err last_err;
	uint64_t last_offset;
};
void sv_record_reader_get_damage(const struct sv_record_reader *r, struct sv_record_reader_damage *d);

/* Lookups in the tables built so far (NULL when absent). */
const struct sv_rec_stream *sv_record_reader_stream(const struct sv_record_reader *r, uint32_t stream);
const char *sv_record_reader_name(const struct sv_record_reader *r, unsigned name_kind, uint32_t id,
				  uint32_t netns);

/* The file's timestamp @t_ns on the TAI scale via the conversion in force: the header's to_tai, replaced by
 * each CLOCK record read so far whose clock is the file's; false when not convertible. */
bool sv_record_reader_to_tai(const struct sv_record_reader *r, int64_t t_ns, int64_t *t_tai_ns);

/* ---- CSV export (pandas: pd.read_csv) ------------------------------------------------------- */

/*
 * Columns (RFC 4180, comma, header line, integers in decimal, empty = unknown):
 *   tool,host,point,stream,svid,appid,tai_sec,smp_cnt,ts_ns,t_ns,t_tai_ns,ts_src,t2_ns,t2_kind,
 *   ifindex,ifname,netns,guest,flags,reason,cpu,tid,asdu,nasdu,frame_len,quality,seq
 * ts_ns = sample time from (tai_sec, smp_cnt, rate) when tai_sec != 0 and the rate is known;
 * t_tai_ns = t_ns converted with the header's to_tai (empty when not convertible).
 * sv_record_export_csv() reads @r to its end writing one row per EVENT (other kinds update the tables).
 * Returns 0, the reader's error, or -EIO on a write failure.
 */
int sv_record_csv_header(FILE *out);
int sv_record_csv_event(FILE *out, const struct sv_record_reader *r, const struct sv_rec_event *ev);
int sv_record_export_csv(struct sv_record_reader *r, FILE *out);

/* CRC-32C (Castagnoli), as used by the format. Exposed for tests and tools. */
uint32_t sv_crc32c(uint32_t crc, const void *buf, size_t len);

#endif /* SV_RECORD_H */
