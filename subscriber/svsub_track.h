/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Stream tracker: per stream (APPID, svID) counters, smpCnt continuity, quality, inter-arrival time and
 * latency, for svsub's live receive paths and --read alike.
 *
 * Streams. The key is (APPID, svID) of each ASDU, not of the frame: a frame may carry ASDUs of several
 * streams (the QUT dataset puts 13 svIDs with the same smpCnt in one frame) and then counts once toward
 * each stream it carries; a frame carrying several ASDUs of one stream (9-2LE 256 samples/cycle, IEC
 * 61869-9 F4800S2I4U4) counts once as a frame and once per ASDU as a sample. Streams live in a fixed
 * open-addressing table allocated by svsub_track_create(); nothing is allocated per frame. When the
 * table is full, samples of new streams are counted in streams_overflow and otherwise ignored.
 *
 * The wrap W of smpCnt and the stream's rate come from libsv's learner (sv_rate.h, its rules), in order of
 * precedence: configured (cfg.wrap != 0), stated by the stream (smpRate/smpMod, smpMod absent = per nominal
 * period, cfg.nominal_hz), learned at a confirmed counter restart (below) that came back near zero after
 * reaching a maximum M: W = M + 1; until then W = 65536 ("default"). A smpCnt >= a stated W proves the
 * statement wrong (libiec61850 wraps at 65535 whatever it states): counted in wrap_violations, and the
 * stream falls back to learning; one >= a learned W raises it.
 *
 * Continuity, per sample, with h the head (the most advanced smpCnt accepted so far) and
 * d = (smpCnt - h) mod W:
 *   - d == 1: in order. 1 < d < W - R: a gap: d - 1 samples are counted in `lost` (provisionally:
 *     a late arrival takes one back) and the head moves. Whole wraps smpCnt cannot show (an outage
 *     longer than a wrap) are counted:
 *       - exactly for a synchronised stream (smpSynch 2, W its rate, no evidence against the clock): a
 *         sample's absolute index is TAI second * W + smpCnt, the second taken from a fresh frame's receive
 *         time (received at most SVSUB_TRACK_FRESH_NS after its sample time, sv_sample_align()). The head's
 *         index is taken once from a fresh frame and carried by the samples counted since (a restart or a
 *         new W takes it again); a fresh sample whose index is d + n*W ahead of it is that far ahead, whatever
 *         the receive times in between and whatever d (1: an outage of whole seconds; >= W - R), after a
 *         silence of a quarter lap (250 ms; a flowing stream replayed slower than real time is not judged so);
 *       - else, when the rate is known, estimated from the elapsed receive time at the stream's pace (the
 *         positions the head moved per second of receive time since its first sample, once that is a lap:
 *         a replay faster than real time; before, the rate): after a silence of half a wrap the gap is the
 *         d + n*W closest to elapsed*pace; a sample behind the head (d >= W - R) after a silence of a
 *         quarter wrap that puts it closer ahead than behind is a gap of d (a burst of half a lap or more
 *         dropped at an overflowing socket), not a late sample nor a restart's first. Never for d == 1 (a
 *         stall: held-back frames in a burst). The n*W samples are also counted in lost_estimated.
 *   - d == 0, or d >= W - R (behind the head by b = W - d <= R, R the reorder window): the sample is late.
 *       - if that smpCnt was already received in the head's current lap: `duplicates`;
 *       - else if the head passed it (it was counted lost): `out_of_order`, and `lost` is decremented;
 *       - else (it lies before the stream's first sample): `out_of_order`.
 *     A late sample never moves the head. Duplicates are judged on the same lap only: the bitmap of
 *     received smpCnt is cleared for each position the head passes.
 *   - A counter restart is a run of cfg.resync_run (default 8) consecutive samples that continue
 *     each other (c, c+1, ...) while all lying behind the head: a publisher that restarted, or a wrap
 *     not yet learned. The run's samples, provisionally counted as late, are taken back; `resets` is
 *     incremented and the head moves to the run's end. If W is being learned and the run started within
 *     R of zero, W is learned as (maximum smpCnt seen) + 1 and the samples missed across that wrap are
 *     counted lost. This is RFC 3550 A.1's probation (MIN_SEQUENTIAL) applied to backward jumps only:
 *     an attacker injecting single frames with old smpCnt values (QUT 9311a) never produces such a run,
 *     so its frames are counted as duplicates instead of moving the head.
 *   R (cfg.reorder_window) defaults to W/2 (0): every position is then either ahead or behind, by the
 *   shortest distance. Counts are exact for any arrival order within R; lost is final once the head
 *   has moved R past a gap.
 *
 * PRP (IEC 62439-3 §4.1.10): a sample whose smpCnt was already received in the lap, arriving in a frame
 * whose redundancy trailer names the other LAN than the first copy, is the redundant copy: it is
 * discarded and counted in prp_discarded[lan], not as a duplicate. Received frames per LAN are counted
 * in prp_frames[lan].
 *
 * Dataset (how seqData's values and qualities read, sv_dataset.h): a stream takes the first of
 * cfg.datasets whose APPID and svID match it when it is first seen (declared; a rule may also say "none").
 * Without one, a seqData of the 9-2LE length (64 octets) is read as 9-2LE PhsMeas1 (assumed), any other
 * is unknown: its values and qualities are not read, the sample is counted in samples_uninterpreted, and
 * nothing is claimed about its quality. A declared dataset reads only samples of its length (else
 * samples_uninterpreted and dataset_mismatch). Quality counters go per Quality member.
 *
 * Latency (DESIGN.md "Ts"): for a sample of a stream with smpSynch = 2 and a known rate, Ts is
 * second + smpCnt/rate (sv_sample_align(), cfg.ahead_ns), and latency = t_rx - Ts. Each latency L is:
 *   - an outlier when L > cfg.max_latency_ns (default 500 ms): a frame that really was that late (a
 *     publisher starved for 0.7 s) or a receiver clock off by more than that; counted in latency_outliers
 *     with the largest and the receive times of the first and the last, not put in the histogram;
 *   - negative beyond the tolerance when L < -cfg.clock_tolerance_ns: received before it was sampled,
 *     which only a clock can explain; counted in latency_negative (most negative kept), not put in the
 *     histogram;
 *   - else put in the latency histogram (a small negative within the tolerance goes to its `negative`).
 * The stream's clock is declared not synchronised (clock_synchronised = false) on evidence about the clock
 * only, svsub_track_clock_verdict():
 *   1. a latency was computed while cfg.host_unsync said so (adjtimex STA_UNSYNC without --clock-trusted;
 *      host_unsync records it), or
 *   2. some latency was negative beyond the tolerance, or
 *   3. outliers are more than half of the samples that got a latency: a clock ahead or behind by more than
 *      max_latency shifts every sample, a starved publisher only those it held back.
 * A few late frames therefore keep the stream's latency: they are outliers, the rest stay in the histogram.
 * The per-sample has_latency of svsub_track_frame() applies rules 1 and 2 as known so far (rule 3 is a
 * judgement on the whole run). Samples of a smpSynch 2 stream that get no latency at all are counted by
 * why: latency_rate_unknown (rate not known yet), latency_no_sample_time.
 *
 * Not thread-safe: one tracker per receive thread.
 */
#ifndef SVSUB_TRACK_H
#define SVSUB_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_codec.h"
#include "sv_dataset.h"
#include "sv_rate.h"
#include "sv_stats.h"

#define SVSUB_TRACK_MAX_STREAMS_DEFAULT 256
#define SVSUB_TRACK_RESYNC_RUN_DEFAULT 8
#define SVSUB_TRACK_MAX_LATENCY_DEFAULT_NS 500000000LL
/* A frame received at most this long after its sample time places its sample in its TAI second (laps). */
#define SVSUB_TRACK_FRESH_NS 50000000LL
/* Quality is summarised per Quality member of the dataset, for the first 16 (9-2LE has 8). */
#define SVSUB_TRACK_QCHANNELS 16

/* A dataset declared for the streams it matches (svsub's `datasets:`); the first rule that matches a stream
 * when it is first seen applies to it. */
struct svsub_dataset_rule {
	int32_t appid;		      /* -1: any */
	char svID[SV_MAX_ID_LEN + 1]; /* "": any */
	bool none;		      /* never interpret the stream's seqData (not even as 9-2LE) */
	struct sv_dataset ds;	      /* unless none */
};

enum svsub_dataset_source {
	SVSUB_DS_UNKNOWN = 0, /* not declared, and no sample of the 9-2LE length: not interpreted */
	SVSUB_DS_ASSUMED,     /* not declared; 64-octet samples read as 9-2LE PhsMeas1 */
	SVSUB_DS_DECLARED,    /* a rule's dataset */
	SVSUB_DS_NONE,	      /* a rule said not to interpret it */
};

/* "unknown", "assumed", "declared", "none". */
const char *svsub_dataset_source_name(enum svsub_dataset_source s);

struct svsub_track_cfg {
	uint32_t max_streams;	  /* table capacity, 0: SVSUB_TRACK_MAX_STREAMS_DEFAULT */
	uint16_t nominal_hz;	  /* for smpMod 0 (samples per nominal period), 0: 50 */
	uint32_t wrap;		  /* force the smpCnt wrap (1..65536), 0: stated / learned */
	uint32_t reorder_window;  /* R in samples, 0: W/2 */
	uint32_t resync_run;	  /* consecutive samples confirming a counter restart, 0: 8 */
	int64_t max_latency_ns;	  /* larger latencies are outliers, 0: 500 ms */
	int64_t clock_tolerance_ns; /* negative latencies down to -this are clock granularity; 0: none */
	int64_t ahead_ns;	  /* sv_sample_align's @ahead_ns, 0: SV_SAMPLE_AHEAD_NS_DEFAULT */
	bool host_unsync;	  /* the receive clock is known unsynchronised (adjtimex) */
	bool no_prp_discard;	  /* count PRP copies as duplicates instead of discarding them */
	const struct svsub_dataset_rule *datasets; /* declared datasets (must outlive the tracker), or NULL */
	unsigned ndatasets;
	bool prefault;		  /* live receivers: no page fault on the per-packet path when a stream appears
				   * or its histograms reach a new range: the first SVSUB_TRACK_PREFAULT_STREAMS
				   * slots are written at create, and a helper thread keeps
				   * SVSUB_TRACK_POPULATE_AHEAD slots mapped past the streams in use (~85 KiB each) */
};

/* The stream table is max_streams slots of address space (MAP_NORESERVE), memory only where streams came. */
#define SVSUB_TRACK_PREFAULT_STREAMS 256
#define SVSUB_TRACK_POPULATE_AHEAD 64

/* Address space of a table of @max_streams slots (what svsub_track_create() reserves). */
size_t svsub_track_table_bytes(uint32_t max_streams);

struct svsub_track_mem {
	uint32_t max_streams;
	size_t slot_bytes;	/* one stream slot */
	size_t reserved_bytes;	/* address space of the table */
	uint32_t populated;	/* slots mapped ahead of use (cfg.prefault) */
	uint64_t unpopulated;	/* streams created in a slot that was not (their first frames page-faulted) */
	int populate_err;	/* -errno when the helper could not map (no MADV_POPULATE_WRITE: Linux < 5.14) */
};
struct svsub_tracker;
void svsub_track_memory(const struct svsub_tracker *t, struct svsub_track_mem *m);

/* Where a stream's W comes from: sv_rate.h's sources (named by sv_rate_source_name()). */
enum svsub_wrap_source {
	SVSUB_WRAP_DEFAULT = SV_RATE_DEFAULT, /* 65536 until learned */
	SVSUB_WRAP_STATED = SV_RATE_STATED,
	SVSUB_WRAP_LEARNED = SV_RATE_LEARNED,
	SVSUB_WRAP_CONFIGURED = SV_RATE_CONFIGURED,
};

/* What happened to one sample (ASDU). */
enum svsub_sample_verdict {
	SVSUB_SAMPLE_IN_ORDER = 0, /* first sample of the stream, next in sequence, or after a gap */
	SVSUB_SAMPLE_AFTER_GAP,	   /* accepted, and samples before it were lost */
	SVSUB_SAMPLE_LATE,	   /* out of order: arrived after a later one (it was counted lost) */
	SVSUB_SAMPLE_DUPLICATE,
	SVSUB_SAMPLE_PRP_COPY,	   /* the redundant PRP copy: discarded */
	SVSUB_SAMPLE_RESYNC,	   /* confirmed a counter restart; accepted */
	SVSUB_SAMPLE_IGNORED,	   /* stream table full */
};

/* The sample goes on to the application (and is a T4 in the records): in order, after a gap, or the
 * restart it confirmed; never a late one, a duplicate or the PRP copy. */
static inline bool svsub_sample_accepted(unsigned verdict)
{
	return verdict == SVSUB_SAMPLE_IN_ORDER || verdict == SVSUB_SAMPLE_AFTER_GAP || verdict == SVSUB_SAMPLE_RESYNC;
}

enum svsub_quality_kind {
	SVSUB_Q_INVALID = 0,
	SVSUB_Q_QUESTIONABLE,
	SVSUB_Q_TEST,
	SVSUB_Q_DERIVED,
	SVSUB_Q_KINDS,
};

/* Per-stream results (read-only for callers). Counters are cumulative since creation. */
struct svsub_stream_stats {
	uint16_t appid;
	uint16_t svID_len;
	char svID[SV_MAX_ID_LEN + 1]; /* NUL-terminated copy */
	struct sv_counters c;	      /* frames, samples, lost, duplicate, reordered (= out_of_order), errors */
	uint64_t lost_estimated;      /* of lost, whole laps counted from elapsed receive time (no sample times) */
	uint64_t resets;	      /* confirmed counter restarts */
	uint64_t wrap_violations;     /* smpCnt >= a stated or configured wrap */
	uint64_t confrev_changes;
	uint64_t smpsynch_changes;
	uint64_t simulated;	      /* frames with Reserved1 S bit (IEC 61850-9-2 Ed 2 §5.3.3.4) */
	uint64_t samples_not_good;    /* samples with any Quality member not good (validity != 0) */
	uint64_t quality[SVSUB_TRACK_QCHANNELS][SVSUB_Q_KINDS]; /* per Quality member, samples with the flag */
	const struct sv_dataset *dataset; /* how seqData is read (NULL: it is not) */
	uint8_t dataset_source;	      /* enum svsub_dataset_source */
	uint16_t nquality;	      /* Quality members of @dataset summarised in quality[] */
	uint64_t samples_uninterpreted; /* samples whose values and qualities were not read: no dataset known
					 * for them, or a seqData length other than the dataset's */
	uint64_t dataset_mismatch;    /* of those, samples of a declared dataset with another length */
	uint64_t prp_frames[2];	      /* frames per LAN A/B that carried a PRP trailer */
	uint64_t prp_discarded[2];    /* redundant copies discarded, by the LAN they came from */
	uint32_t confRev;	      /* last seen */
	uint8_t smpSynch;	      /* last seen */
	uint8_t wrap_source;	      /* enum svsub_wrap_source */
	uint32_t wrap;		      /* current W */
	uint32_t rate;		      /* samples per second, 0: unknown */
	uint16_t smpRate;	      /* last seen (0 when absent) */
	bool has_smpRate;
	uint16_t asdus_per_frame;     /* ASDUs of this stream in the last frame */
	uint16_t first_smpCnt, last_smpCnt;
	int64_t first_rx_ns, last_rx_ns;
	bool latency_possible;	      /* some sample had smpSynch 2 and a known rate */
	bool clock_synchronised;      /* latency_possible and no evidence against the clock (see above) */
	uint64_t latency_outliers;    /* latencies above max_latency_ns (not in the histogram) */
	int64_t latency_outlier_max;  /* the largest outlier (0 if none) */
	int64_t latency_outlier_first_rx_ns, latency_outlier_last_rx_ns; /* receive times of the first and
								  * last outliers (0 if none) */
	uint64_t latency_negative;    /* latencies below -clock_tolerance_ns (not in the histogram) */
	int64_t latency_negative_min; /* the most negative of them (0 if none) */
	uint64_t latency_rate_unknown; /* smpSynch 2 samples without a latency: the rate was not known yet
					* (smpRate absent and the smpCnt wrap not learned yet) */
	uint64_t latency_no_sample_time; /* smpSynch 2 samples whose smpCnt is >= the rate: no sample time */
	bool host_unsync;	      /* latencies computed while cfg.host_unsync said the host clock is not
				       * synchronised (one reason for clock_synchronised = false) */
	struct sv_stats latency;      /* t_rx - Ts, ns, accepted samples */
	struct sv_stats interarrival; /* t_rx difference between frames carrying the stream, ns */
};

struct svsub_tracker;

/* Per-ASDU result of svsub_track_frame(). */
struct svsub_sample_result {
	int stream;	     /* index for svsub_track_stream(), -1 when ignored */
	uint8_t verdict;     /* enum svsub_sample_verdict */
	bool has_latency;    /* latency_ns is valid: within the limits, and no evidence against the clock yet */
	int64_t latency_ns;
	const struct sv_dataset *dataset; /* how the ASDU's seqData reads (it fits), NULL: not interpreted */
	uint32_t quality;    /* OR of the sample's Quality members; 0 when it has none or is not interpreted */
};

/* Allocates the table. Returns 0, -EINVAL (bad cfg) or -ENOMEM. @cfg may be NULL (defaults). */
int svsub_track_create(struct svsub_tracker **t, const struct svsub_track_cfg *cfg);
void svsub_track_destroy(struct svsub_tracker *t);

/*
 * Accounts one decoded frame received at @t_rx_ns (the receive clock; TAI or UTC for latency). @res may
 * be NULL, or hold v->noASDU entries. Returns the number of ASDUs accounted to streams (< noASDU when
 * the table overflowed). O(noASDU), no allocation.
 */
int svsub_track_frame(struct svsub_tracker *t, const struct sv_view *v, int64_t t_rx_ns,
		      struct svsub_sample_result *res);

/*
 * Accounts a frame that failed to decode with @err (enum sv_codec_err). When the SV header was readable
 * (@appid >= 0) the error also counts in the `errors` of every stream of that APPID that exists by then
 * (the svID of a malformed frame cannot be trusted; a stream first seen later does not inherit earlier
 * errors). O(1). Frames that are not SV (SV_E_NOT_SV) should not be passed.
 */
void svsub_track_error(struct svsub_tracker *t, int err, int appid);

/* Number of streams, in order of first appearance. */
unsigned svsub_track_count(const struct svsub_tracker *t);
/* Stream @i (NULL past the end). The pointer stays valid until svsub_track_destroy(); its errors count and
 * clock_synchronised are brought up to date by this call. */
const struct svsub_stream_stats *svsub_track_stream(struct svsub_tracker *t, unsigned i);
/* The clock verdict on a stream's latencies so far (rules 1-3 above): false also when none was computed. */
bool svsub_track_clock_verdict(const struct svsub_stream_stats *s);
/* Rate of the stream for sample-time arithmetic and outage lengths: stated (smpRate), else the configured or
 * learned wrap (a synchronised smpCnt counts the samples of the second); 0 unknown. */
uint32_t svsub_stream_rate(const struct svsub_stream_stats *s);

/* Readers on another thread (the metrics server, svsub_metrics.c), which never write: the streams published
 * so far (acquire: their identity is in place), stream @i < that count as it is now (its errors and
 * clock_synchronised fields are not brought up to date: use the two below), and its malformed frames. */
unsigned svsub_track_count_published(const struct svsub_tracker *t);
const struct svsub_stream_stats *svsub_track_stream_peek(const struct svsub_tracker *t, unsigned i);
uint64_t svsub_track_stream_errors(const struct svsub_tracker *t, unsigned i);

/* Malformed frames by error (index enum sv_codec_err), frames total and ASDUs of streams that did not fit. */
const uint64_t *svsub_track_errors(const struct svsub_tracker *t);
uint64_t svsub_track_frames(const struct svsub_tracker *t);
uint64_t svsub_track_overflow(const struct svsub_tracker *t);

/* Marks (or clears) the receive clock as unsynchronised from now on (live: adjtimex changed). */
void svsub_track_set_host_unsync(struct svsub_tracker *t, bool unsync);

#endif /* SVSUB_TRACK_H */
