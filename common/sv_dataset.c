// SPDX-License-Identifier: Apache-2.0
#include "sv_dataset.h"

#include <errno.h>
#include <stdio.h>
#include <strings.h>

const struct sv_profile sv_profiles[] = {
	{ "9-2le-50hz", "UCA 9-2LE MSVCB01, 80 samples/cycle at 50 Hz, 1 ASDU", 4000, 1, 50, 80, 0, 4, 4 },
	{ "9-2le-60hz", "UCA 9-2LE MSVCB01, 80 samples/cycle at 60 Hz, 1 ASDU", 4800, 1, 60, 80, 0, 4, 4 },
	{ "9-2le-256-50hz", "UCA 9-2LE MSVCB02, 256 samples/cycle at 50 Hz, 8 ASDUs", 12800, 8, 50, 256, 0, 4, 4 },
	{ "9-2le-256-60hz", "UCA 9-2LE MSVCB02, 256 samples/cycle at 60 Hz, 8 ASDUs", 15360, 8, 60, 256, 0, 4, 4 },
	{ "F4800S2I4U4", "IEC 61869-9 protection profile, 4800 samples/s, 2 ASDUs", 4800, 2, 0, 4800, 1, 4, 4 },
	{ "F14400S6I4U4", "IEC 61869-9 metering profile, 14400 samples/s, 6 ASDUs", 14400, 6, 0, 14400, 1, 4, 4 },
};
const unsigned sv_profiles_count = sizeof(sv_profiles) / sizeof(sv_profiles[0]);

const struct sv_profile *sv_profile_find(const char *name)
{
	for (unsigned i = 0; i < sv_profiles_count; i++)
		if (!strcasecmp(sv_profiles[i].name, name))
			return &sv_profiles[i];
	errno = ENOENT;
	return NULL;
}

const char *sv_validity_name(enum sv_validity v)
{
	switch (v) {
	case SV_VALIDITY_GOOD:
		return "good";
	case SV_VALIDITY_INVALID:
		return "invalid";
	case SV_VALIDITY_QUESTIONABLE:
		return "questionable";
	}
	return "unknown";
}

int sv_quality_format(uint32_t q, char *buf, unsigned size)
{
	static const struct {
		uint32_t mask;
		const char *name;
	} flags[] = {
		{ SV_Q_OVERFLOW, "overflow" },	     { SV_Q_OUT_OF_RANGE, "outOfRange" },
		{ SV_Q_BAD_REFERENCE, "badReference" }, { SV_Q_OSCILLATORY, "oscillatory" },
		{ SV_Q_FAILURE, "failure" },	     { SV_Q_OLD_DATA, "oldData" },
		{ SV_Q_INCONSISTENT, "inconsistent" }, { SV_Q_INACCURATE, "inaccurate" },
		{ SV_Q_SUBSTITUTED, "substituted" },   { SV_Q_TEST, "test" },
		{ SV_Q_OPERATOR_BLOCKED, "operatorBlocked" }, { SV_Q_DERIVED, "derived" },
		{ SV_Q_RESERVED_MASK, "reserved" },
	};
	int n = snprintf(buf, size, "%s", sv_validity_name(sv_quality_validity(q)));

	for (unsigned i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		if (!(q & flags[i].mask))
			continue;
		n += snprintf(buf + ((unsigned)n < size ? (unsigned)n : size), (unsigned)n < size ? size - (unsigned)n : 0,
			      "|%s", flags[i].name);
	}
	return n;
}

uint32_t sv_sample_rate(uint16_t smp_rate, bool has_smp_mod, uint16_t smp_mod, uint16_t nominal_hz)
{
	if (!smp_rate)
		return 0;
	if (!has_smp_mod || smp_mod == 0)
		return nominal_hz ? (uint32_t)smp_rate * nominal_hz : 0;
	if (smp_mod == 1)
		return smp_rate;
	return 0; /* seconds per sample: slower than 1 Hz, no per-second counter */
}
