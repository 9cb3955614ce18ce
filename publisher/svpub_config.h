/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svpub's configuration: the structs and the one key table (sv_config.h) that loads them from YAML,
 * overrides them from the command line and prints them. svpub_config_resolve() fills what is derived
 * (per-stream defaults that depend on the stream's index or profile) and checks cross-key rules.
 */
#ifndef SVPUB_CONFIG_H
#define SVPUB_CONFIG_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "sv_codec.h"
#include "sv_config.h"
#include "sv_dataset.h"
#include "sv_metrics.h"

#define SVPUB_MAX_STREAMS 256
#define SVPUB_MAX_EVENTS 16
#define SVPUB_MAX_HARMONICS 8
#define SVPUB_PATH_LEN 256
/* members of a declared dataset: INT32 + Quality pairs, 16 channels at most */
#define SVPUB_MAX_MEMBERS 32

enum svpub_backend { SVPUB_BACKEND_AF_PACKET, SVPUB_BACKEND_AF_XDP, SVPUB_BACKEND_PCAP };
enum svpub_clock { SVPUB_CLOCK_TAI, SVPUB_CLOCK_REALTIME };
enum svpub_late { SVPUB_LATE_SEND, SVPUB_LATE_SKIP };
enum svpub_source { SVPUB_SOURCE_SINE, SVPUB_SOURCE_REPLAY };
enum svpub_tristate { SVPUB_AUTO, SVPUB_ON, SVPUB_OFF };
enum svpub_xdp_mode { SVPUB_XDP_AUTO, SVPUB_XDP_SKB, SVPUB_XDP_NATIVE };
/* How AF_PACKET transmit stamps name their frame: a key per frame in SCM_TS_OPT_ID (Linux 6.13+), or the
 * socket's own count of the frames it numbered; auto: the first where the kernel takes it. */
enum svpub_ts_key { SVPUB_TS_KEY_AUTO, SVPUB_TS_KEY_CMSG, SVPUB_TS_KEY_COUNTED };

/* Scripted events (the signal's "test set" features). Times are seconds from the start of publishing:
 * the instant of the first sample sent (paced runs start mid-second; files at the top of a second). */
enum svpub_event_type {
	SVPUB_EV_FAULT,	    /* currents x current_factor, voltages x voltage_factor on @phases */
	SVPUB_EV_FREQUENCY, /* frequency becomes @frequency from @at on (phase-continuous) */
	SVPUB_EV_QUALITY,   /* quality word ORed with @quality on @phases' channels */
	SVPUB_EV_STOP,	    /* the stream sends nothing (smpCnt keeps counting with time) */
};

struct svpub_event_cfg {
	double at;	 /* s */
	double duration; /* s; 0 = until the end */
	int type;	 /* enum svpub_event_type */
	char phases[8];	 /* subset of "abcn" */
	double current_factor;
	double voltage_factor;
	double frequency;
	uint32_t quality;
};

struct svpub_harmonic_cfg {
	uint32_t order;
	double magnitude; /* fraction of the fundamental */
	double angle;	  /* degrees, added to the phase's angle x order */
};

struct svpub_signal_cfg {
	int source; /* enum svpub_source */
	double frequency; /* Hz; 0 = the profile's nominal frequency (50 when it has none) */
	double current[3]; /* A rms, phases a b c */
	double current_angle[3]; /* degrees */
	double voltage[3]; /* V rms */
	double voltage_angle[3];
	double current_noise; /* A, standard deviation of added Gaussian noise */
	double voltage_noise; /* V */
	uint64_t seed;
	unsigned nharmonics;
	struct svpub_harmonic_cfg harmonics[SVPUB_MAX_HARMONICS];
	unsigned nevents;
	struct svpub_event_cfg events[SVPUB_MAX_EVENTS];
	char replay[SVPUB_PATH_LEN]; /* capture to replay (source: replay) */
	char replay_svid[SV_MAX_ID_LEN + 1]; /* which stream of it; empty = the first SV stream */
};

struct svpub_stream_cfg {
	char svid[SV_MAX_ID_LEN + 1]; /* empty: "svpubNN" */
	uint16_t appid;		      /* 0: 0x4000 + index */
	uint8_t dst[6];		      /* 00:..:00: 01:0c:cd:04:HH:LL with HHLL = index */
	uint8_t src[6];		      /* 00:..:00: the interface's address */
	int32_t vlan_id;	      /* -1 untagged; 0 priority-tagged */
	uint8_t vlan_priority;
	uint32_t so_priority; /* SO_PRIORITY of the stream's socket (the host's traffic class) */
	uint32_t conf_rev;
	uint8_t smp_synch;
	bool simulation;
	char datset[SV_MAX_ID_LEN + 1]; /* empty: no datSet field */
	bool refrtm;
	bool smprate;	 /* send smpRate */
	int smpmod;	 /* enum svpub_tristate: auto = when the profile's smpMod is not 0 */
	char profile[32];
	uint32_t sample_rate; /* 0: the profile's */
	uint16_t asdus;	      /* 0: the profile's */
	uint64_t count;	      /* frames, 0 = unlimited */
	/* the dataset (none: the profile's, 9-2LE PhsMeas1): INT32 + Quality pairs, each INT32 carrying the signal
	 * channel its name says (TCTR/Amp: a current, TVTR/Vol: a voltage, phase from the LN; sv_dataset_guess)
	 * at its scale */
	unsigned nmembers;
	struct sv_dataset_cfg_member members[SVPUB_MAX_MEMBERS];
	struct svpub_signal_cfg signal;
};

/* scl: the streams of an SCL file's merging unit (svpub --scl FILE [--ied NAME] [--svcb LD/NAME]). */
struct svpub_scl_cfg {
	char file[SVPUB_PATH_LEN];
	char ied[65];
	char svcb[SVPUB_PATH_LEN]; /* LD/NAME[,LD/NAME...]: those blocks only; empty: every block of the IED */
};

struct svpub_af_packet_cfg {
	bool qdisc_bypass;
	bool timestamps;   /* SO_TIMESTAMPING TX stamps */
	bool hw_timestamps; /* try SIOCSHWTSTAMP first */
	int ts_key;	   /* enum svpub_ts_key */
	bool txtime;	   /* SO_TXTIME launch time (needs the etf qdisc) */
	uint32_t txtime_lead_us; /* launch time = deadline; the frame is handed this much earlier */
	uint32_t sndbuf;
};

struct svpub_af_xdp_cfg {
	uint32_t queue;
	int mode; /* enum svpub_xdp_mode */
	bool zerocopy;
	int tx_metadata; /* enum svpub_tristate: TX timestamps through XDP TX metadata */
	uint32_t frames; /* UMEM frames */
};

struct svpub_config {
	char interface[IFNAMSIZ];
	int backend; /* enum svpub_backend */
	char output[SVPUB_PATH_LEN];
	int clock; /* enum svpub_clock */
	int32_t cpu;
	uint32_t priority;
	bool mlockall;
	double duration; /* s, 0 = until stopped */
	char record[SVPUB_PATH_LEN];
	uint32_t record_size_mib; /* a new part of the record every N MiB, 0 one file */
	char record_keep[16];	/* rotated parts kept: "all" or a count (sv_record_parse_keep) */
	uint32_t record_flush_ms; /* a partial block is written after N ms (sv_record_tick), 0 never */
	uint32_t record_sync_ms; /* fdatasync period, 0 never */
	uint32_t record_min_free_mib; /* free-space floor of the record's filesystem, 0 none */
	bool soak;		/* --soak: intervals and flight-recorder windows instead of per-frame records */
	uint32_t soak_interval_s, flight_seconds, soak_late_us, flight_rate; /* sv_soak.h */
	char host[SV_METRICS_HOST_SIZE];	/* --host: the records' and metrics' host name ("" gethostname) */
	char metrics[SV_METRICS_ADDR_SIZE];	/* --metrics ADDR:PORT ("" off) */
	double metrics_linger;			/* --metrics-linger S */
	int late_policy; /* enum svpub_late */
	uint32_t late_threshold_us;
	bool unpaced;
	uint32_t batch; /* unpaced: frames per send call */
	bool status;
	struct svpub_af_packet_cfg af_packet;
	struct svpub_af_xdp_cfg af_xdp;
	struct svpub_scl_cfg scl;
	unsigned nstreams;
	struct svpub_stream_cfg streams[SVPUB_MAX_STREAMS];
};

/* The options svpub.c's hook handles (struct sv_cfg_opt.id, sv_cli.h). */
enum svpub_opt {
	SVPUB_OPT_INTERFACE = 1, /* -i: also leaves the pcap back-end */
	SVPUB_OPT_WRITE,	 /* -w: the pcap back-end */
	SVPUB_OPT_AF_XDP,	 /* -x */
	SVPUB_OPT_SVCB,		 /* --svcb: adds to scl.svcb */
	SVPUB_OPT_JSON,		 /* -j */
	SVPUB_OPT_VERBOSE,	 /* -v */
};

/* Every key and every option of svpub (sv_config.h, sv_cli.h). */
extern const struct sv_cfg_key svpub_config_table[];
extern const char *const svpub_backend_names[];
extern const char *const svpub_event_names[];

/* Defaults (one 9-2LE 50 Hz stream). 0 or -EINVAL (table bug). */
int svpub_config_init(struct svpub_config *c);

/* Fills derived values of every stream (svID, APPID, MAC, frequency) and checks what one key cannot: at least
 * one stream, profile names, rate % asdus, rate <= 65536 (smpCnt), smpRate's range and unit, svID and datSet
 * VisibleStrings, the frame within the template (svpub_stream_frame_len), replay file for replay, event phases. Not the output (--print-config
 * needs none): svpub_config_check_output(). Returns 0 or -EINVAL with @err->text set (err->path: the key). */
int svpub_config_resolve(struct svpub_config *c, struct sv_cfg_error *err);

/* The same; when the offending value comes from the YAML file @file (NULL: none), @err names its
 * file:line:column as the loader's errors do. */
int svpub_config_resolve_file(struct svpub_config *c, const char *file, struct sv_cfg_error *err);

/* Where the frames go: a file for pcap, an interface for live back-ends, and an end (duration or every
 * stream's count) for a file, which is written unpaced. 0 or -EINVAL with @err->text set. */
int svpub_config_check_output(const struct svpub_config *c, struct sv_cfg_error *err);

/* Fills @c's streams from the blocks @c->scl names in @scl (svID, APPID, MAC, VLAN, confRev, datSet, SmvOpts,
 * smpRate/smpMod as profile and rate, nofASDU, the dataset's members and scales), replacing its list. 0, or
 * -EINVAL with "file:line: why" in @msg: a block of the file's errors (no SMV address, a dataset that does not
 * resolve, a duplicate APPID), or one svpub cannot send (security, gmIdentity, SecPerSmp, a dataset that is
 * not INT32 + Quality pairs); the IED or a block not found. */
struct sv_scl;
int svpub_config_from_scl(struct svpub_config *c, const struct sv_scl *scl, char *msg, size_t size);

/* The channels of a stream with members: for each INT32 + Quality pair, the signal channel (0..7: Ia Ib Ic In
 * Va Vb Vc Vn) in @map and the factor from 9-2LE LSBs to its scale in @conv. Returns the number of pairs, 0
 * without members (the profile's 8 channels), or -EINVAL with @msg set (not pairs, a member no channel fits). */
int svpub_stream_channels(const struct svpub_stream_cfg *s, uint8_t *map, double *conv, char *msg, size_t size);

/* The profile, sample rate and ASDUs per frame of a resolved stream. */
const struct sv_profile *svpub_stream_profile(const struct svpub_stream_cfg *s);
uint32_t svpub_stream_rate(const struct svpub_stream_cfg *s);
uint32_t svpub_stream_asdus(const struct svpub_stream_cfg *s);
/* Nominal frequency for the signal and for smpMod 0 (samples per period). */
double svpub_stream_nominal_hz(const struct svpub_stream_cfg *s);

/* The frame of resolved stream @s, encoded once into @t (values zero); its source address is the stream's
 * src, else @if_mac. 0, -EINVAL (a field the encoder refuses) or -ENOSPC (over SV_TEMPLATE_MAX_FRAME octets
 * or SV_TEMPLATE_MAX_ASDU ASDUs): svpub_config_resolve() refuses such streams. */
int svpub_stream_template(const struct svpub_stream_cfg *s, const uint8_t if_mac[6], struct sv_template *t);

/* How many octets a frame of resolved stream @s takes (Ethernet header and tag included, no FCS), whatever the
 * template holds; -EINVAL when it cannot be encoded. */
int svpub_stream_frame_len(const struct svpub_stream_cfg *s);

#endif /* SVPUB_CONFIG_H */
