/* SPDX-License-Identifier: Apache-2.0 */
/*
 * svsub --scl FILE [--ied NAME]: every received stream checked against the SCL control block it belongs to.
 *
 * Expected streams: without --ied, every control block of the file that has an SMV address; with --ied NAME,
 * what NAME takes (sv_scl subscriptions: ExtRef, LSVS, IEDName; a data-bound SCL 2003 ExtRef is satisfied by
 * any of its candidate blocks), or, when NAME takes nothing and publishes, NAME's own blocks. A received stream
 * (APPID, svID) belongs to the block of the file with its svID (the expected ones first, the one with its APPID
 * first); a stream whose svID no block has, or whose block NAME does not take, is unexpected.
 * Checks per frame (a few compares, no allocation): APPID, destination MAC, VLAN (tagged, id, priority),
 * confRev, datSet (present as SmvOpts says, the dataset's reference), noASDU (nofASDU), smpRate (present as
 * SmvOpts says, the block's value), smpMod (SmpPerSec/SecPerSmp sent), the seqData length of the dataset. Each
 * mismatch is counted with the first received value and the frame it came in. At the end, a requirement none
 * of whose blocks came is "missing". The SCL file's own errors (sv_scl diagnostics) about the blocks in scope
 * are listed with file:line; a block without an address is not expected (it is on no network).
 */
#ifndef SVSUB_SCL_H
#define SVSUB_SCL_H

#include <stdint.h>
#include <stdio.h>

#include "sv_codec.h"
#include "sv_scl.h"
#include "svsub_track.h"

struct sv_json;
struct svsub_scl;

/* Builds the expectations of @scl (kept, not copied: it must outlive the checker) for @ied (NULL: the whole
 * file). 0, -ENOENT (no IED of that name: @msg says which exist), -ENOMEM. */
int svsub_scl_create(struct svsub_scl **out, const struct sv_scl *scl, const char *ied, char *msg, size_t size);
void svsub_scl_destroy(struct svsub_scl *c);

/* Dataset rules (APPID, svID -> the block's dataset) of the expected blocks, for the tracker. Returns how many
 * were written into @rules (at most @max). */
unsigned svsub_scl_dataset_rules(const struct svsub_scl *c, struct svsub_dataset_rule *rules, unsigned max);

/* APPIDs and destination MACs of the expected blocks (the live receive filter), at most @max each. */
unsigned svsub_scl_appids(const struct svsub_scl *c, uint16_t *appids, unsigned max);
unsigned svsub_scl_groups(const struct svsub_scl *c, uint8_t (*macs)[6], unsigned max);

/* One decoded frame after the tracker (@res as svsub_track_frame() filled it). @vlan_oob/@oob_id/@oob_pcp: a tag
 * the receive path took out of the frame (svsub_frame), else @vlan_oob false. */
void svsub_scl_frame(struct svsub_scl *c, struct svsub_tracker *t, const struct sv_view *v,
		     const struct svsub_sample_result *res, uint64_t frame_index, bool vlan_oob, uint16_t oob_id,
		     uint8_t oob_pcp);

/* Mismatches counted (every check, every stream), requirements missing, unexpected streams. */
struct svsub_scl_counts {
	uint64_t mismatches;
	unsigned missing, unexpected, errors, expected;
};
void svsub_scl_counts(const struct svsub_scl *c, struct svsub_scl_counts *n);

/* "scl": {...} into the open JSON object, and the text block. */
int svsub_scl_json(const struct svsub_scl *c, struct sv_json *j);
int svsub_scl_print(const struct svsub_scl *c, FILE *f);

#endif /* SVSUB_SCL_H */
