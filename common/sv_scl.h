/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SCL import (IEC 61850-6: SCD, CID, ICD, SED files): the Sampled Value control blocks a file defines, their
 * network addresses, their datasets as sv_dataset descriptions, and which IED takes which stream.
 *
 * The XML goes through libxml2 (never a hand-written parser), read safely: the file is read whole up to
 * SV_SCL_MAX_BYTES, no network (XML_PARSE_NONET), entities are never substituted (no XML_PARSE_NOENT) and a
 * document with a DOCTYPE is refused (SCL is defined by an XML Schema; a DTD only serves entity tricks),
 * libxml2's own depth and size limits stay on (no XML_PARSE_HUGE). Every line number is libxml2's
 * (xmlGetLineNo, XML_PARSE_BIG_LINES). The library never prints: libxml2's messages are suppressed and the
 * error is returned.
 *
 * What is read, per SampledValueControl (IED/LDevice/LN0):
 *  - smvID, datSet, confRev, smpRate, smpMod (absent: SmpPerPeriod; SCL 2003 has none), nofASDU, multicast,
 *    SmvOpts (refreshTime, sampleSynchronized, sampleRate, dataSet / 2003's dataRef, security, synchSourceId);
 *  - its SMV address (Communication/SubNetwork/ConnectedAP[iedName]/SMV[ldInst, cbName]): MAC-Address, APPID,
 *    VLAN-ID (absent: 0, priority-tagged), VLAN-PRIORITY (absent: 4), and the subnetwork;
 *  - its DataSet's FCDAs expanded to data attributes (a DO-level FCDA gives every attribute of its functional
 *    constraint, in type order), each an sv_dataset member of the attribute's bType; a value's scale is the
 *    DO's sVC.scaleFactor (the LN's DOI, else the type's default), else 9-2LE's 1 mA (TCTR) / 10 mV (TVTR)
 *    for an INT32, else 1; its ratio from TCTR ARtg/ARtgSec, TVTR VRtg/VRtgSec, else Rat;
 *  - the nominal frequency: HzRtg of the dataset's TCTR/TVTR, else the file's one VoltageLevel nomFreq.
 * Subscriptions (who takes which stream): ExtRefs with serviceType SMV or without one (srcCBName names the
 * block; SCL 2003 binds data only: every SV block whose dataset carries the data is a candidate, the IED
 * takes one of them), LSVS SvCBRef.setSrcRef, and the block's IEDName list.
 *
 * Problems of the file are reported, never guessed around: a fatal one (not XML, not SCL, an unknown edition,
 * a DOCTYPE, too large) fails the load with file:line; the others are diagnostics with their line, attached to
 * the control block they make unusable (flags in sv_scl_cb.bad): no SMV address, a datSet or FCDA that does
 * not resolve, a bType SV cannot carry, a duplicate APPID on one subnet, an attribute out of range.
 */
#ifndef SV_SCL_H
#define SV_SCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sv_codec.h"
#include "sv_dataset.h"

#define SV_SCL_MAX_BYTES (64u << 20) /* a large station's SCD is tens of MiB */
#define SV_SCL_NAME_LEN 65	     /* IED names, LD instances, CB names (61850-6 allows 64) */
#define SV_SCL_REF_LEN 200	     /* "IED/LD/LLN0.CB" */
#define SV_SCL_MSG_LEN 400
#define SV_SCL_MAX_CAND 8	     /* control blocks one data-bound ExtRef may come from */

/* SmvOpts: which optional fields the block sends (IEC 61850-9-2 §8.5.2). */
enum {
	SV_SCL_OPT_REFRTM = 1u << 0,	/* refreshTime: refrTm */
	SV_SCL_OPT_SMPSYNCH = 1u << 1,	/* sampleSynchronized (always sent since Ed 2) */
	SV_SCL_OPT_SMPRATE = 1u << 2,	/* sampleRate: smpRate (and smpMod when not SmpPerPeriod) */
	SV_SCL_OPT_DATSET = 1u << 3,	/* dataSet (2003: dataRef): datSet */
	SV_SCL_OPT_SECURITY = 1u << 4,	/* security */
	SV_SCL_OPT_SYNCHSRC = 1u << 5,	/* synchSourceId: gmIdentity */
};

/* Why a control block cannot be used as it is (sv_scl_cb.bad). */
enum {
	SV_SCL_BAD_ADDRESS = 1u << 0,	/* no SMV address, or a malformed one: not on the network */
	SV_SCL_BAD_DATASET = 1u << 1,	/* datSet or an FCDA does not resolve, or a member SV cannot carry */
	SV_SCL_BAD_DUP_APPID = 1u << 2, /* another block of its subnetwork has its APPID */
	SV_SCL_BAD_ATTR = 1u << 3,	/* a control block attribute missing or out of range */
};

enum sv_scl_severity { SV_SCL_ERROR = 0, SV_SCL_WARNING };

/* One problem of the file, with its line (libxml2's). */
struct sv_scl_diag {
	uint8_t severity; /* enum sv_scl_severity */
	int cb;		  /* the control block it concerns (index), -1: none */
	unsigned line;
	char msg[SV_SCL_MSG_LEN];
};

struct sv_scl_cb {
	char ied[SV_SCL_NAME_LEN];
	char ld[SV_SCL_NAME_LEN];   /* LDevice inst */
	char name[SV_SCL_NAME_LEN]; /* cbName */
	char ref[SV_SCL_REF_LEN];   /* "IED/LD/LLN0.name", for messages */
	unsigned line;		    /* of the SampledValueControl element */
	char svid[SV_MAX_ID_LEN + 1];
	char datset[SV_SCL_NAME_LEN];	      /* the DataSet's name */
	char datset_ref[SV_MAX_ID_LEN + 1]; /* what datSet carries: "<LD name>/LLN0$<DataSet>" (9-2 §8.5.2) */
	uint32_t conf_rev;
	uint16_t smp_rate;
	uint16_t smp_mod; /* SV_SMPMOD_*: SmpPerPeriod 0, SmpPerSec 1, SecPerSmp 2 */
	uint16_t nof_asdu;
	bool multicast;
	uint8_t opts;	     /* SV_SCL_OPT_* */
	uint16_t nominal_hz; /* 0: the file does not say */
	/* SMV address */
	bool has_address;
	unsigned addr_line;
	char subnet[SV_SCL_NAME_LEN];
	uint8_t mac[6];
	uint16_t appid;
	uint16_t vlan_id;
	uint8_t vlan_priority;
	uint8_t bad; /* SV_SCL_BAD_* */
	struct sv_dataset ds; /* the members; nmembers 0 when BAD_DATASET */
};

/* "IED takes one of these control blocks" (one ExtRef, LSVS or IEDName entry; duplicates merged). */
enum sv_scl_via { SV_SCL_VIA_EXTREF = 0, SV_SCL_VIA_LSVS, SV_SCL_VIA_IEDNAME };

struct sv_scl_sub {
	char ied[SV_SCL_NAME_LEN];
	unsigned line;
	uint8_t via; /* enum sv_scl_via */
	uint8_t ncand;
	uint16_t cand[SV_SCL_MAX_CAND]; /* control block indices; one unless data-bound */
};

struct sv_scl {
	char file[256];
	char edition[32]; /* "2003", "2007A", "2007B4", ... */
	unsigned ncb;
	struct sv_scl_cb *cb;
	unsigned nsub;
	struct sv_scl_sub *sub;
	unsigned ndiag;
	struct sv_scl_diag *diag;
};

/* A load that failed: where and why. */
struct sv_scl_error {
	unsigned line; /* 0: not about one line (I/O, size) */
	char text[SV_SCL_MSG_LEN + 300]; /* "file:line: msg", ready to print */
};

/* Loads @path. Returns 0 with *@out set (sv_scl_free), or -errno: -ENOENT/-EACCES.. (cannot read), -EFBIG (over
 * SV_SCL_MAX_BYTES), -EBADMSG (not well-formed XML), -EINVAL (not SCL, unknown edition, DOCTYPE), -ENOMEM; @err
 * says which and where. */
int sv_scl_load(struct sv_scl **out, const char *path, struct sv_scl_error *err);
/* The same from memory; @name is the file name in messages. */
int sv_scl_load_mem(struct sv_scl **out, const void *buf, size_t len, const char *name, struct sv_scl_error *err);
void sv_scl_free(struct sv_scl *s);

/* Writes diagnostic @d as "file:line: error: msg" into @buf (snprintf semantics). */
int sv_scl_diag_format(const struct sv_scl *s, const struct sv_scl_diag *d, char *buf, size_t size);

/* The control block "LD/NAME" (or "IED/LD/NAME") of IED @ied (NULL: any): its index, or -1. */
int sv_scl_find_cb(const struct sv_scl *s, const char *ied, const char *ld_name);

/* IEDs that own at least one SampledValueControl, for messages: their number, the first name in @first. */
unsigned sv_scl_publishers(const struct sv_scl *s, const char **first);

#endif /* SV_SCL_H */
