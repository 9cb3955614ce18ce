/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svsub applications: how a protection or measurement function gets each stream's samples.
 *
 * svsub_proc calls svapp_frame() for every decoded frame after the stream tracker has judged its ASDUs.
 * svapp hands the application every sample the tracker ACCEPTED (in order, after a gap, or confirming a
 * counter restart), in arrival order, which is smpCnt order for an accepted sample: late samples,
 * duplicates, PRP copies and samples of streams that did not fit the table are not delivered (a
 * protection function must not see time run backwards). A gap is flagged on the sample after it
 * (lost_before) so estimators can restart their window.
 *
 * Per sample: no allocation, no logging. An application may allocate per stream in stream_new() (called
 * once, on the stream's first delivered sample), and in start().
 *
 * Registry: applications are looked up by name (svsub --app NAME); svapp_list() enumerates them.
 */
#ifndef SVAPP_H
#define SVAPP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sv_codec.h"
#include "sv_config.h"
#include "sv_dataset.h"
#include "sv_metrics.h"
#include "sv_scl.h"
#include "svsub_track.h"

/* Channels (the dataset's values) delivered per sample; 9-2LE has 8, IEC 61869-9 F14400S6I4U4 8. */
#define SVAPP_MAX_CHANNELS 32

/* A protection decision, for a disturbance recorder (svsub --comtrade). The trigger is the pickup: the first
 * sample over pickup; the trip (the deciding sample) and the fault inception (the first sample that departs
 * from the one a cycle before, when the application can tell) are marked as well. Times are sample times on
 * the source's clock (receive times when the stream has none). */
struct svapp_trip {
	uint16_t pickup_smpCnt, trip_smpCnt, inception_smpCnt;
	bool has_inception;
	int64_t pickup_ns, trip_ns, inception_ns;
	char phases[4];
};

/* What else sees the samples an application gets (svsub's COMTRADE recorder): per stream, once, then every
 * delivered sample before the application's, and the application's trips. Same rules as the application's
 * callbacks (no allocation per sample; stream_new may allocate). */
struct svapp_stream;
struct svapp_sample;
struct svapp_hooks {
	void *ctx;
	int (*stream_new)(void *ctx, struct svapp_stream *s);
	void (*sample)(void *ctx, struct svapp_stream *s, const struct svapp_sample *x);
	void (*trip)(void *ctx, struct svapp_stream *s, const struct svapp_trip *t);
};

/* Parameters of the shipped applications (svsub options / config keys). */
struct svapp_params {
	double pickup_a;       /* overcurrent: pickup, primary A RMS (default 1000) */
	uint32_t trip_samples; /* overcurrent: consecutive samples over pickup to trip, 0: a quarter cycle */
	double dropoff_ratio;  /* overcurrent: reset below ratio x pickup (default 0.95) */
	bool no_block_test;    /* do not block on test quality / simulated samples */
	uint16_t nominal_hz;   /* 50 or 60 (DFT window = rate / nominal_hz samples), 0: 50 */
	double current_lsb_a;  /* amperes per LSB of the current channels, 0: the dataset's scale (9-2LE 0.001) */
	uint32_t max_streams;  /* the tracker's table size (stream index bound), 0: default */
	bool rx_clock_tai;     /* rx_ns is on CLOCK_TAI now (live); false: a capture's timeline */
	const struct svapp_hooks *hooks; /* a recorder beside the application, or NULL */
};

void svapp_params_init(struct svapp_params *p);

/* One stream as seen by an application (owned by svapp; stable for the run). */
struct svapp_stream {
	unsigned index;				  /* tracker stream index (0..max_streams-1) */
	uint16_t appid;
	const char *svID;			  /* NUL-terminated */
	const struct svsub_stream_stats *stats;	  /* the tracker's view: rate, wrap, counters */
	void *priv;				  /* the application's per-stream state (stream_new) */
	void *hook_priv;			  /* the hooks' per-stream state */
	const struct svapp_hooks *hooks;	  /* svapp_params.hooks: applications report trips there */
};

/* One sample (ASDU) as delivered. Valid during the sample() call only. */
struct svapp_sample {
	uint16_t smpCnt;
	uint8_t smpSynch;
	bool simulated;		/* frame's simulation bit (IEC 61850-9-2 Ed 2 §5.3.3.4) */
	bool lost_before;	/* the tracker counted samples lost just before this one */
	bool resync;		/* this sample confirmed a counter restart */
	bool has_sample_time;	/* sample_ns is valid: synchronised stream (smpSynch 2), sane clock */
	uint32_t confRev;
	uint32_t rate;		/* samples per second, 0: unknown yet */
	int64_t rx_ns;		/* receive time on the source's clock */
	int64_t sample_ns;	/* sample time (second + smpCnt/rate) when has_sample_time */
	int64_t proc_start_mono_ns; /* CLOCK_MONOTONIC when svapp_frame() began on this frame */
	unsigned nch;		/* channels in values/quality (0: the stream's dataset is unknown) */
	const struct sv_dataset *dataset; /* what they were read with (names, scales), NULL when nch is 0 */
	double values[SVAPP_MAX_CHANNELS];    /* the dataset's values, before their scale (9-2LE: INT32) */
	uint32_t quality[SVAPP_MAX_CHANNELS]; /* each value's Quality member, 0 (good) when it has none */
};

struct svapp_ops {
	const char *name;
	const char *help; /* one line */
	/* Called once before the first frame. @out receives the application's events (JSON lines). */
	int (*start)(void **ctx, const struct svapp_params *p, FILE *out);
	/* Called once per stream, on its first delivered sample; may set s->priv. 0 or -errno (the stream
	 * is then not delivered). */
	int (*stream_new)(void *ctx, struct svapp_stream *s);
	void (*sample)(void *ctx, struct svapp_stream *s, const struct svapp_sample *x);
	/* Called once at the end; frees per-stream state too (every stream s with s->priv set is passed
	 * through stream_free first). */
	void (*stream_free)(void *ctx, struct svapp_stream *s);
	void (*stop)(void *ctx);
};

/* Registry. */
const struct svapp_ops *svapp_find(const char *name);
/* Names of the registered applications, NULL-terminated. */
const struct svapp_ops *const *svapp_list(void);

/* A running application bound to svsub's pipeline. */
struct svapp;

/* Returns 0, -ENOENT (no such application), -ENOMEM, or start()'s error. @name NULL: no application, only
 * @p->hooks get the samples (svsub --comtrade without --app). */
int svapp_create(struct svapp **a, const char *name, const struct svapp_params *p, FILE *out);
/* Calls stop() and frees. NULL is a no-op. */
void svapp_destroy(struct svapp *a);

/* Delivers the accepted ASDUs of one decoded frame (@res as filled by svsub_track_frame()). */
void svapp_frame(struct svapp *a, struct svsub_tracker *t, const struct sv_view *v,
		 const struct svsub_sample_result *res, int64_t rx_ns);

/* Samples delivered / streams seen / samples withheld (late, duplicate, PRP copy, overflow). */
struct svapp_counts {
	uint64_t delivered;
	uint64_t withheld;
	uint64_t streams;
};
void svapp_counts(const struct svapp *a, struct svapp_counts *c);

/*
 * One-cycle DFT phasor estimator (recursive, "sliding" form), one channel.
 * N = samples per nominal cycle. After N samples: rms = RMS of the fundamental (exact for a sine at the
 * nominal frequency, integer harmonics and DC rejected), angle = phase of the fundamental AT THE NEWEST
 * SAMPLE, radians in (-pi, pi]: x[n] = sqrt(2) * rms * cos(angle) for a pure sine.
 * The running sums are recomputed exactly from the window every SVAPP_DFT_REFRESH_CYCLES cycles so
 * rounding cannot accumulate over days of samples.
 */
#define SVAPP_DFT_MAX_N 1024
#define SVAPP_DFT_REFRESH_CYCLES 50

struct svapp_dft {
	unsigned n;	 /* window length */
	unsigned pos;	 /* index of the next sample, 0..n-1 */
	unsigned filled; /* samples in the window (<= n) */
	unsigned cycles; /* completed windows since the last refresh */
	double re, im;	 /* sum x[k] * exp(-j 2 pi k / n) over the window, k = absolute index mod n */
	const double *cosv, *sinv; /* n-entry tables (svapp_dft_tables) */
	double win[SVAPP_DFT_MAX_N];
};

/* Tables for N: @cosv/@sinv hold n entries each. */
void svapp_dft_tables(unsigned n, double *cosv, double *sinv);
/* Returns 0 or -EINVAL (n outside 4..SVAPP_DFT_MAX_N). Tables must outlive @d. */
int svapp_dft_init(struct svapp_dft *d, unsigned n, const double *cosv, const double *sinv);
/* Empties the window (after a gap). */
void svapp_dft_reset(struct svapp_dft *d);
void svapp_dft_push(struct svapp_dft *d, double x);
/* True once the window is full. */
static inline bool svapp_dft_ready(const struct svapp_dft *d)
{
	return d->filled >= d->n;
}
double svapp_dft_rms(const struct svapp_dft *d);
double svapp_dft_angle(const struct svapp_dft *d);

/* Samples per cycle for @rate and @nominal_hz (rounded); 0 when outside 4..SVAPP_DFT_MAX_N. */
unsigned svapp_samples_per_cycle(uint32_t rate, uint16_t nominal_hz);

/* The shipped applications. */
extern const struct svapp_ops svapp_overcurrent_ops; /* "overcurrent": ANSI 50, svapp_overcurrent.c */
extern const struct svapp_ops svapp_phasor_ops;	     /* "phasor": per-cycle RMS/angle, one line per second */

/*
 * svsub's configuration file (svsub -c FILE) and command line, through common/sv_config's table: most keys
 * are also an option of the same meaning (sv_cli.h); options given on the command line override the file.
 * Lives here (svapp_config.c) because svsub.c keeps only main() and what the options leave to it.
 */
enum svsub_cfg_backend { SVSUB_CFG_AF_XDP = 0, SVSUB_CFG_AF_PACKET };

/* The options svsub.c's hook handles (struct sv_cfg_opt.id, sv_cli.h). */
enum svsub_opt {
	SVSUB_OPT_READ = 1,  /* --read, --interface: a source on the command line replaces the file's */
	SVSUB_OPT_INTERFACE,
	SVSUB_OPT_LIVE_ONLY, /* --backend, --duration: with --interface only */
	SVSUB_OPT_JSON,	     /* --json, --jsonl: the command line's one replaces the file's other one */
	SVSUB_OPT_JSONL,
	SVSUB_OPT_APP,	     /* --app NAME: one of the applications */
	SVSUB_OPT_APPID,     /* --appid N, --group MAC: the receive filter, repeated */
	SVSUB_OPT_GROUP,
	SVSUB_OPT_VERBOSE,
};

/* datasets: what seqData holds per stream (sv_dataset.h), declared in the file only. */
#define SVSUB_CFG_MAX_DATASETS 16

struct svsub_cfg_dataset {
	char svid[SV_MAX_ID_LEN + 1]; /* "" any */
	int32_t appid;		      /* -1 any */
	char name[SV_DS_NAME_LEN];    /* "" the profile's, else the svID */
	char profile[16];	      /* "9-2le", "none", or "" with members */
	unsigned nmembers;
	struct sv_dataset_cfg_member members[SV_DS_MAX_MEMBERS];
};

struct svsub_file_config {
	char read[256];		/* capture to read instead of an interface */
	char interface[64];
	int backend;		/* enum svsub_cfg_backend */
	double duration;	/* seconds, 0: until stopped */
	char write[256];	/* pcap/pcapng of the received frames */
	bool json, jsonl, histograms, quiet;
	char app[32];		/* "" none */
	double pickup;		/* A RMS */
	uint32_t trip_samples;	/* 0: quarter cycle */
	double dropoff;		/* reset ratio */
	bool block_test;	/* block on test quality / simulated samples */
	double current_lsb;	/* A per LSB */
	uint32_t nominal_hz;
	uint32_t wrap;		/* 0: stated / learned */
	uint32_t max_streams;
	uint32_t reorder_window;
	uint32_t resync_run;
	double max_latency_ms;
	double clock_tolerance_us;
	bool clock_trusted;	/* treat the host clock as synchronised (adjtimex ignored) */
	char record[256];	/* per-sample records ("" none) */
	uint32_t record_size_mib; /* --record: a new part every N MiB, 0 one file */
	char record_keep[16];	/* --record: rotated parts kept, "all" or a count (sv_record_parse_keep) */
	uint32_t record_flush_ms; /* --record: a partial block is written after N ms, 0 never */
	uint32_t record_sync_ms; /* --record: fdatasync period, 0 never */
	uint32_t record_min_free_mib; /* --record: free-space floor, 0 none */
	bool soak;		/* --soak: intervals and flight-recorder windows instead of per-sample records */
	uint32_t soak_interval_s, flight_seconds, soak_late_us, flight_rate; /* sv_soak.h */
	char host[SV_METRICS_HOST_SIZE]; /* --host: the records' and metrics' host name ("" gethostname) */
	char metrics[SV_METRICS_ADDR_SIZE]; /* --metrics ADDR:PORT ("" off) */
	double metrics_linger;	/* --metrics-linger S */
	char comtrade[256];	/* --comtrade DIR: disturbance records ("" none) */
	int comtrade_format;	/* enum sv_ct_format */
	bool comtrade_cff;	/* one .cff per record */
	double comtrade_pre_ms, comtrade_post_ms;
	char comtrade_range[64]; /* "FROM,TO" seconds after each stream's first sample, "" none */
	char scl[256];		/* --scl: SCL file whose control blocks the streams are checked against */
	char ied[SV_SCL_NAME_LEN]; /* --ied: the IED whose subscriptions are expected ("" the whole file) */
	unsigned ndatasets;
	struct svsub_cfg_dataset datasets[SVSUB_CFG_MAX_DATASETS];
	/* live receive (svrx_config): the same values and meaning */
	char interface_b[64];	/* PRP LAN B ("" none) */
	int xdp_mode;		/* enum svrx_xdp_mode */
	int zerocopy;		/* enum svrx_tristate */
	int32_t queue;		/* -1: every rx queue */
	uint32_t umem_frames;	/* 0: fit RLIMIT_MEMLOCK */
	bool need_wakeup;
	uint32_t busy_poll_us;
	bool promiscuous;
};

extern const struct sv_cfg_key svsub_config_table[];
extern const char *const svsub_cfg_backend_names[];

/* Defaults. Returns 0 or -EINVAL (table bug). */
int svsub_config_init(struct svsub_file_config *c);

/* After a file was loaded into @c: every dataset builds (svsub_config_datasets). 0, or -EINVAL with
 * "path:line:column: key: what" in @msg. */
int svsub_config_check(const struct svsub_file_config *c, const char *path, char *msg, size_t size);

/*
 * The tracker's dataset rules from @c's datasets (@rules holds SVSUB_CFG_MAX_DATASETS): a profile or the
 * members in order. 0, or -EINVAL with the key path of the fault in @key (e.g. "datasets[1].members[2].scale")
 * and what is wrong in @msg (a profile that does not exist, both or neither of profile and members, a bad
 * member).
 */
int svsub_config_datasets(const struct svsub_file_config *c, struct svsub_dataset_rule *rules, unsigned *n,
			  char *key, size_t key_size, char *msg, size_t size);

#endif /* SVAPP_H */
