/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Datasets carried in seqData and the preferred stream profiles:
 *  - UCA 9-2LE PhsMeas1: Ia Ib Ic In Va Vb Vc Vn, each INT32 instMag.i + 32-bit q (64 octets), 1 mA and 10 mV
 *    per LSB; 80 samples/cycle with 1 ASDU (MSVCB01) or 256 samples/cycle with 8 ASDUs (MSVCB02).
 *  - IEC 61869-9 preferred profiles F4800S2I4U4 and F14400S6I4U4 (same channel layout and scaling;
 *    2 and 6 ASDUs per frame, 2400 frames/s).
 * Quality: IEC 61850-7-3 §6.2 bits plus 9-2LE's derived bit.
 */
#ifndef SV_DATASET_H
#define SV_DATASET_H

#include <stdbool.h>
#include <stdint.h>

#include "sv_config.h" /* sv_dataset_member_keys */

#define SV_92LE_CHANNELS 8
#define SV_92LE_SEQDATA_LEN 64
#define SV_CURRENT_LSB_A 0.001 /* amperes per LSB (9-2LE, 61869-9) */
#define SV_VOLTAGE_LSB_V 0.01  /* volts per LSB */

/* Quality word bits (bit 0 = LSB of the big-endian word). */
#define SV_Q_VALIDITY_MASK 0x0003u
#define SV_Q_OVERFLOW 0x0004u
#define SV_Q_OUT_OF_RANGE 0x0008u
#define SV_Q_BAD_REFERENCE 0x0010u
#define SV_Q_OSCILLATORY 0x0020u
#define SV_Q_FAILURE 0x0040u
#define SV_Q_OLD_DATA 0x0080u
#define SV_Q_INCONSISTENT 0x0100u
#define SV_Q_INACCURATE 0x0200u
#define SV_Q_SUBSTITUTED 0x0400u /* source: 0 process, 1 substituted */
#define SV_Q_TEST 0x0800u
#define SV_Q_OPERATOR_BLOCKED 0x1000u
#define SV_Q_DERIVED 0x2000u
#define SV_Q_RESERVED_MASK 0xFFFFC000u

enum sv_validity {
	SV_VALIDITY_GOOD = 0,
	SV_VALIDITY_INVALID,
	SV_VALIDITY_QUESTIONABLE,
};

/* 0 good, 3 questionable; 1 and 2 both invalid: Ed 2.1 Table 21 numbers the bits in reverse of the
 * older editions, and both orders are in the field. */
static inline enum sv_validity sv_quality_validity(uint32_t q)
{
	switch (q & SV_Q_VALIDITY_MASK) {
	case 0:
		return SV_VALIDITY_GOOD;
	case 3:
		return SV_VALIDITY_QUESTIONABLE;
	default:
		return SV_VALIDITY_INVALID;
	}
}

const char *sv_validity_name(enum sv_validity v);

/* Writes the names of the set flags of @q ("invalid|test|derived", "good" when none) into @buf.
 * Returns the length written (snprintf semantics). */
int sv_quality_format(uint32_t q, char *buf, unsigned size);

/* A stream profile: rate, ASDUs per frame, channel layout, and the smpRate/smpMod it advertises. */
struct sv_profile {
	const char *name;	   /* "9-2le-50hz", "F4800S2I4U4", ... */
	const char *description;
	uint32_t sample_rate;	   /* samples per second */
	uint16_t asdus_per_frame;
	uint16_t nominal_hz;	   /* 50 or 60; 0 when the profile is not tied to one */
	uint16_t smp_rate;	   /* smpRate field value for this profile */
	uint16_t smp_mod;	   /* smpMod field value */
	uint8_t currents;
	uint8_t voltages;
};

extern const struct sv_profile sv_profiles[];
extern const unsigned sv_profiles_count;

/* Case-insensitive lookup by name; NULL with errno = ENOENT when unknown. */
const struct sv_profile *sv_profile_find(const char *name);

/* Frames per second of a profile. */
static inline uint32_t sv_profile_frame_rate(const struct sv_profile *p)
{
	return p->sample_rate / p->asdus_per_frame;
}

/*
 * A dataset description: what seqData holds, member by member, in order (IEC 61850-9-2 §8.6: the members
 * of the MSVCB's DataSet, each encoded at a fixed width and no tag). One mechanism for every source: the
 * YAML config (svsub `datasets:`), a named layout (9-2LE's PhsMeas1), and an SCL importer, which makes one
 * member per data attribute of the DataSet's FCDAs (IEC 61850-6 §9.3.8; a DO-level FCDA such as
 * TCTR1.Amp[MX] expands to its attributes in order: instMag.i then q, the common case).
 *
 * Widths: IEC 61850-9-2 Ed 2 Table 14, as libiec61850's SVPublisher_ASDU_add* writes them: BOOLEAN, INT8,
 * INT8U 1 octet; INT16, INT16U 2; INT32, INT32U, FLOAT32, Quality 4; INT64, FLOAT64, Timestamp 8 (UtcTime,
 * IEC 61850-8-1 §8.1.3.7). Big-endian, IEEE 754 floats. Type names are SCL's bType spellings.
 *
 * A Quality member qualifies the value members since the previous Quality member (FCDA order puts a DO's
 * q after its value attributes). Values (every member but Quality and Timestamp) are the "channels"
 * applications get; each has a scale to primary units (amperes, volts, ...: 9-2LE 0.001 and 0.01).
 * Reading is allocation-free and takes the offsets computed when the description was built; the caller
 * checks that seqData has exactly @len octets (sv_dataset_fits).
 */
enum sv_da_type {
	SV_DA_BOOLEAN = 0,
	SV_DA_INT8,
	SV_DA_INT16,
	SV_DA_INT32,
	SV_DA_INT64,
	SV_DA_INT8U,
	SV_DA_INT16U,
	SV_DA_INT32U,
	SV_DA_FLOAT32,
	SV_DA_FLOAT64,
	SV_DA_QUALITY,
	SV_DA_TIMESTAMP,
	SV_DA__COUNT
};

/* "BOOLEAN", "INT8", ..., "Quality", "Timestamp", NULL: index = enum sv_da_type (config enums use it). */
extern const char *const sv_da_type_names[];
/* Octets of @t in seqData; 0 outside the enum. */
unsigned sv_da_type_size(enum sv_da_type t);

#define SV_DS_MAX_MEMBERS 64
#define SV_DS_NAME_LEN 64

/* Where a value's scale came from (said in records and summaries: 9-2LE fixes 1 mA / 10 mV, an SCL file's sVC
 * may say otherwise). */
enum sv_scale_source {
	SV_SCALE_GIVEN = 0, /* the caller's (a YAML member's scale, a test) */
	SV_SCALE_92LE,	    /* UCA 9-2LE / IEC 61869-9: 1 mA (TCTR) and 10 mV (TVTR) per LSB */
	SV_SCALE_SCL_SVC,   /* the SCL file's sVC.scaleFactor of the data object */
	SV_SCALE_NONE,	    /* no scale known: 1 (floats, counters) */
};
/* "given", "9-2LE", "SCL sVC", "none". */
const char *sv_scale_source_name(enum sv_scale_source s);

/* Where an instrument transformer ratio came from (COMTRADE's primary and secondary fields). */
enum sv_ratio_source {
	SV_RATIO_NONE = 0, /* not stated: primary = secondary = 1 and the values are primary (PS = P) */
	SV_RATIO_RATINGS,  /* the SCL's TCTR ARtg / ARtgSec or TVTR VRtg / VRtgSec */
	SV_RATIO_RAT,	   /* the SCL's winding ratio Rat (primary = Rat, secondary = 1) */
	SV_RATIO_GIVEN,	   /* the caller's (YAML) */
};
/* "not stated", "SCL ratings", "SCL Rat", "given". */
const char *sv_ratio_source_name(enum sv_ratio_source s);

struct sv_ds_member {
	char name[SV_DS_NAME_LEN]; /* the data attribute, e.g. "TCTR1.Amp.instMag.i" */
	uint8_t type;		   /* enum sv_da_type */
	int8_t quality;		   /* a value's quality: index into quality_off[], -1 none */
	uint16_t offset;	   /* octets from the start of seqData */
	double scale;		   /* a value's primary units per LSB (1 for floats read as they are) */
	/* What a value measures, for records (COMTRADE channels) and svpub's signal: derived from the name by
	 * sv_dataset_add() (TCTR/Amp: "A", TVTR/Vol: "V"; the phase from the LN prefix or instance, 9-2LE's
	 * TCTR1..4 = A B C N), set by the SCL importer from the file. */
	char unit[4];		   /* SI unit of value x scale: "A", "V", "" unknown */
	char phase;		   /* 'A', 'B', 'C', 'N', 0 unknown */
	uint8_t scale_src;	   /* enum sv_scale_source */
	uint8_t ratio_src;	   /* enum sv_ratio_source */
	double primary, secondary; /* instrument transformer ratio (COMTRADE), 1 and 1 when not stated */
};

struct sv_dataset {
	char name[SV_DS_NAME_LEN]; /* "9-2le", or the configuration's */
	uint16_t len;		   /* octets of seqData the members fill */
	uint8_t nmembers;
	uint8_t nvalues;	   /* channels: members other than Quality and Timestamp */
	uint8_t nquality;
	uint8_t value[SV_DS_MAX_MEMBERS];	  /* member index of each channel */
	uint8_t quality_member[SV_DS_MAX_MEMBERS]; /* member index of each Quality member */
	uint16_t quality_off[SV_DS_MAX_MEMBERS];  /* and its offset: the per-sample quality check reads these */
	uint16_t quality_stride;		  /* the offsets are quality_off[0] + k * this (9-2LE: 8); 0 not */
	struct sv_ds_member m[SV_DS_MAX_MEMBERS];
};

/* Empties @ds and names it (cut to SV_DS_NAME_LEN - 1). */
void sv_dataset_init(struct sv_dataset *ds, const char *name);

/*
 * Appends a member. @scale applies to values (must be finite and not 0; ignored for Quality and
 * Timestamp). Returns 0, -EINVAL (unknown type, bad scale, @name longer than SV_DS_NAME_LEN - 1) or -ENOSPC
 * (SV_DS_MAX_MEMBERS members, or seqData over 65535 octets).
 */
int sv_dataset_add(struct sv_dataset *ds, const char *name, enum sv_da_type type, double scale);

/* What @name (an IEC 61850 reference: [prefix]lnClass[inst].DO.DA) measures: its unit ("A" for TCTR or Amp,
 * "V" for TVTR or Vol, else "") and its phase (the prefix's last letter A/B/C/N, L1/L2/L3, RES; else the LN
 * instance 1..4 as 9-2LE numbers them; else 0). */
void sv_dataset_guess(const char *name, char unit[4], char *phase);

/* A member as a configuration declares it (svsub datasets[].members[], svpub streams[].members[]): one row of
 * sv_dataset_member_keys each (name, type, scale), built with sv_dataset_add(). */
struct sv_dataset_cfg_member {
	char name[SV_DS_NAME_LEN]; /* the data attribute, e.g. TCTR1.Amp.instMag.i */
	int type;		   /* enum sv_da_type */
	double scale;		   /* primary units per LSB */
};
extern const struct sv_cfg_key sv_dataset_member_keys[];

/* Named layouts: "9-2le" (UCA 9-2LE PhsMeas1, also IEC 61869-9's F4800S2I4U4 and F14400S6I4U4: TCTR1..4.Amp
 * and TVTR1..4.Vol, instMag.i INT32 + q, 1 mA and 10 mV per LSB). 0 or -ENOENT. */
int sv_dataset_profile(struct sv_dataset *ds, const char *name);
/* The 9-2LE PhsMeas1 description, built once (what svsub assumes for a 64-octet seqData). */
const struct sv_dataset *sv_dataset_92le(void);

static inline bool sv_dataset_fits(const struct sv_dataset *ds, uint16_t seqData_len)
{
	return ds->nmembers && ds->len == seqData_len;
}

/* Quality member @k (< nquality) of a seqData that fits @ds. */
static inline uint32_t sv_dataset_quality(const struct sv_dataset *ds, const uint8_t *seqData, unsigned k)
{
	const uint8_t *p = seqData + ds->quality_off[k];

	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * The OR of every Quality member of a seqData that fits @ds: 0 (or only bits a caller ignores) says that no
 * member is anything but good, the common case, in one pass without a branch. A byte swap commutes with OR,
 * so the words are ORed as they lie and swapped once.
 */
static inline uint32_t sv_dataset_quality_or(const struct sv_dataset *ds, const uint8_t *seqData)
{
	unsigned n = ds->nquality;
	uint32_t raw = 0, w;

	if (ds->quality_stride) {
		const uint8_t *p = seqData + ds->quality_off[0];

		for (unsigned k = 0; k < n; k++, p += ds->quality_stride) {
			__builtin_memcpy(&w, p, 4);
			raw |= w;
		}
	} else {
		for (unsigned k = 0; k < n; k++) {
			__builtin_memcpy(&w, seqData + ds->quality_off[k], 4);
			raw |= w;
		}
	}
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(raw);
#else
	return raw;
#endif
}

/* One member, as its type says. */
struct sv_da_value {
	uint8_t type; /* enum sv_da_type */
	union {
		int64_t i;    /* BOOLEAN (0/1), INT8..INT64 */
		uint64_t u;   /* INT8U..INT32U, Quality */
		double f;     /* FLOAT32, FLOAT64 */
		int64_t t_ns; /* Timestamp: ns since 1970 UTC */
	};
};
void sv_dataset_member(const struct sv_dataset *ds, const uint8_t *seqData, unsigned i, struct sv_da_value *v);

/* Channel @c (< nvalues) as a number, before its scale (BOOLEAN 0/1). */
double sv_dataset_channel(const struct sv_dataset *ds, const uint8_t *seqData, unsigned c);
/* Its quality word, or 0 (good) when the dataset gives it none. */
static inline uint32_t sv_dataset_channel_quality(const struct sv_dataset *ds, const uint8_t *seqData, unsigned c)
{
	int8_t k = ds->m[ds->value[c]].quality;

	return k < 0 ? 0 : sv_dataset_quality(ds, seqData, (unsigned)k);
}

/*
 * Samples per second of a stream from what it states: smpMod 0 (or absent) means smpRate samples per
 * nominal period, 1 samples per second, 2 seconds per sample (rate 1/smpRate, rounded to 0 -> returns 0).
 * Returns 0 when it cannot be told.
 */
uint32_t sv_sample_rate(uint16_t smp_rate, bool has_smp_mod, uint16_t smp_mod, uint16_t nominal_hz);

#endif /* SV_DATASET_H */
