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
 * Samples per second of a stream from what it states: smpMod 0 (or absent) means smpRate samples per
 * nominal period, 1 samples per second, 2 seconds per sample (rate 1/smpRate, rounded to 0 -> returns 0).
 * Returns 0 when it cannot be told.
 */
uint32_t sv_sample_rate(uint16_t smp_rate, bool has_smp_mod, uint16_t smp_mod, uint16_t nominal_hz);

#endif /* SV_DATASET_H */
