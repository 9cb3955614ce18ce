/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svsub --comtrade DIR: disturbance records (IEEE C37.111-2013) around each trip of --app overcurrent, and on
 * request one record of a time range per stream.
 *
 * The receive thread only copies each delivered sample into its stream's ring (allocated once per stream,
 * when it first delivers: pre + post + 0.5 s of samples, or the range) and, when a record is complete,
 * copies its window into the stream's second buffer and posts it to a writer thread: no allocation, no
 * system call but a sem_post, no disk on the per-packet path. The writer writes FILE.cfg/.dat/.hdr (or one
 * .cff) and, on a failure (a full disk), removes the partial files, counts the record as failed with its
 * errno and says so on stderr; receiving goes on. A record whose stream's buffer is still being written is
 * dropped and counted.
 *
 * Trigger: the protection's pickup (the first sample over pickup), as the .cfg's trigger time; status
 * channels PICKUP (from that sample), TRIP (from the deciding sample), INCEPTION (from the fault's first
 * sample when the application can tell it), MISSING (rows of samples lost on the network: they keep their
 * number and time and carry the format's missing-data marker) and per channel <id>_INVALID (validity not
 * good) and <id>_TEST. Window: pre before the trigger, post after it (extended to the trip).
 * Times: UTC. Live samples are stamped on CLOCK_TAI: UTC = TAI - the kernel's TAI offset, tmq_code from
 * adjtimex's maximum error; an unset offset (0) or an unsynchronised clock gives tmq_code F, said in the .hdr.
 * A capture's clock is taken as UTC with tmq_code F (its synchronisation is not in the file).
 */
#ifndef SVSUB_COMTRADE_H
#define SVSUB_COMTRADE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sv_comtrade.h"
#include "svapp.h"

struct svsub_comtrade_cfg {
	const char *dir;
	uint8_t format;		/* enum sv_ct_format */
	bool cff;		/* one .cff instead of .cfg + .dat + .hdr */
	double pre_s, post_s;	/* around the trigger; 0.1 and 0.2 */
	bool range;		/* a continuous record of [range_from_s, range_to_s) after each stream's first sample */
	double range_from_s, range_to_s;
	uint16_t nominal_hz;	/* the .cfg's line frequency */
	bool live;		/* samples on CLOCK_TAI (else a capture's clock, taken as UTC) */
	int64_t tai_offset_ns;	/* live: TAI - UTC (0: unset) */
	bool clock_synchronised; /* live: adjtimex says synchronised */
	int64_t max_error_ns;	/* live: adjtimex's maximum error */
	const char *source;	/* the capture or interface, for the .hdr */
};

#define SVSUB_CT_MAX_RANGE_S 60.0

struct svsub_comtrade;

/* 0, -ENOENT/-ENOTDIR/-EACCES (DIR not a writable directory), -ENOMEM, -EINVAL (windows). */
int svsub_comtrade_create(struct svsub_comtrade **out, const struct svsub_comtrade_cfg *cfg);
/* The hooks to pass in svapp_params.hooks. */
const struct svapp_hooks *svsub_comtrade_hooks(struct svsub_comtrade *c);
/* Ends the records still open (shorter than asked, said in their .hdr), waits for the writer, frees. Returns 0,
 * or -EIO when a record could not be written (counted, said). NULL is a no-op. */
int svsub_comtrade_close(struct svsub_comtrade *c);
/* Frees after svsub_comtrade_close() (the per-stream rings stay until then: the application's streams point
 * at them). NULL is a no-op. */
void svsub_comtrade_free(struct svsub_comtrade *c);

struct svsub_comtrade_counts {
	uint64_t written, dropped, failed, samples_missing;
	int last_errno;
};
void svsub_comtrade_counts(struct svsub_comtrade *c, struct svsub_comtrade_counts *n);
/* The files written, one line each ("DIR/NAME.cfg"), for the summary. */
void svsub_comtrade_print(struct svsub_comtrade *c, FILE *f);
struct sv_json;
int svsub_comtrade_json(struct svsub_comtrade *c, struct sv_json *j);

#endif /* SVSUB_COMTRADE_H */
