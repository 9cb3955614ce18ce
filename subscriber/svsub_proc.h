/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svsub's per-frame pipeline, shared by every receive source (capture file, AF_XDP, AF_PACKET):
 *     frame bytes + receive time + out-of-band VLAN  ->  decode  ->  stream tracker  ->  outputs
 * Outputs: one JSON line per ASDU (--jsonl; one per malformed frame), the frame saved to a capture
 * (--write), and the tracker's state for the final summary (svsub_summary.h).
 * A receive back-end fills a struct svsub_frame and calls svsub_proc_frame(); nothing else to know.
 *
 * Per-frame path: no allocation; stdio output only when the caller asked for JSON lines or a capture.
 */
#ifndef SVSUB_PROC_H
#define SVSUB_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sv_codec.h"
#include "sv_pcap.h"
#include "svsub_track.h"

/* Out-of-band 802.1Q tag (same values as svrx's enum svrx_vlan_state). */
enum svsub_vlan_oob {
	SVSUB_VLAN_OOB_UNKNOWN = 0, /* the receive path cannot tell */
	SVSUB_VLAN_OOB_NONE,	    /* no tag outside the frame bytes (a capture file: bytes are all) */
	SVSUB_VLAN_OOB_PRESENT,	    /* vlan_pcp / vlan_dei / vlan_id valid */
};

/* One received frame, from any source. */
struct svsub_frame {
	const uint8_t *data; /* whole Ethernet frame, no FCS */
	uint32_t len;	     /* octets in data */
	uint32_t wire_len;   /* octets on the wire (> len: the capture cut it), 0: = len */
	uint64_t index;	     /* 1-based number of the frame in its source (pcap: Wireshark's numbering) */
	int64_t rx_ns;	     /* receive time, ns on the source's clock */
	uint8_t vlan_oob;    /* enum svsub_vlan_oob */
	uint8_t ts_src;	     /* enum sv_ts_source of rx_ns; 0: the recorder's configured source */
	uint8_t vlan_pcp;
	uint8_t vlan_dei;
	uint16_t vlan_id;
};

struct svapp;
struct svsub_rec;
struct svsub_scl;

struct svsub_proc_cfg {
	FILE *jsonl;			/* one JSON object per ASDU / malformed frame, or NULL */
	struct svapp *app;		/* app: gets every accepted sample after tracking (svapp.h), or NULL */
	struct sv_pcap_writer *write;	/* save SV frames (decoded or not) with rx time, or NULL */
	struct svsub_track_cfg track;
	struct svsub_rec *rec;		/* per-sample T3/T4 records (svsub_rec.h), or NULL */
	int app_clock;			/* enum sv_clock_id read for T4 after the app returns (-1: no T4) */
	struct svsub_scl *scl;		/* --scl: every stream checked against its control block, or NULL */
};

struct svsub_proc;

/* Returns 0, -ENOMEM or -EINVAL (tracker configuration). */
int svsub_proc_create(struct svsub_proc **p, const struct svsub_proc_cfg *cfg);
void svsub_proc_destroy(struct svsub_proc *p);

/*
 * Processes one frame. Returns 1 for a decoded SV frame, 0 for a frame that is not SV (ignored, counted),
 * -EBADMSG for a malformed SV frame (counted by error name, reported in the JSON lines), -EIO when an
 * output failed (JSON lines or --write: the first failure is sticky, see svsub_proc_output_error(); not
 * the record, whose failures are counted and never stop the pipeline).
 */
int svsub_proc_frame(struct svsub_proc *p, const struct svsub_frame *f);

struct svsub_proc_counts {
	uint64_t frames;    /* every frame passed in */
	uint64_t sv;	    /* decoded SV frames */
	uint64_t malformed; /* SV EtherType, failed to decode */
	uint64_t not_sv;    /* other EtherTypes (GOOSE, ARP, ...) */
	uint64_t truncated; /* frames the capture cut (wire_len > len) */
	uint64_t prp;	    /* decoded frames with a PRP trailer */
	uint64_t hsr;	    /* decoded frames with an HSR tag */
};
void svsub_proc_counts(const struct svsub_proc *p, struct svsub_proc_counts *c);
/* The counters themselves, for a reader on another thread (metrics: one relaxed load per field). */
const struct svsub_proc_counts *svsub_proc_counters(const struct svsub_proc *p);

/* The tracker (for summaries, applications). */
struct svsub_tracker *svsub_proc_tracker(struct svsub_proc *p);

/* The view of the last frame svsub_proc_frame() decoded (valid until the next call), for applications. */
const struct sv_view *svsub_proc_last_view(const struct svsub_proc *p);
const struct svsub_sample_result *svsub_proc_last_results(const struct svsub_proc *p);

/* First output error (-EIO) or 0. Records are not an output here: what they could not write is counted
 * by the recorder (svsub_rec_close), it never stops the pipeline. */
int svsub_proc_output_error(const struct svsub_proc *p);

/* From the receive loop, once per pass with a time it holds (any clock, always the same): the record's
 * time bounds (svsub_rec_tick). No clock read, no syscall unless one is due. */
void svsub_proc_tick(struct svsub_proc *p, int64_t now_ns);

/* Writes @ns as "S.NNNNNNNNN" (seconds with 9 decimals; negative times keep their sign). */
void svsub_format_ts(int64_t ns, char *buf, size_t size);

#endif /* SVSUB_PROC_H */
