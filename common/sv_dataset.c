// SPDX-License-Identifier: Apache-2.0
#include "sv_dataset.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sv_codec.h" /* sv_utctime_get */
#include "sv_config.h"

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

const struct sv_cfg_key sv_dataset_member_keys[] = {
	SV_CFG_KEY_STRING(struct sv_dataset_cfg_member, name, "name", "", "the data attribute, e.g. TCTR1.Amp.instMag.i"),
	SV_CFG_KEY_ENUM(struct sv_dataset_cfg_member, type, "type", sv_da_type_names, "INT32",
			"BOOLEAN, INT8, INT16, INT32, INT64, INT8U, INT16U, INT32U, FLOAT32, FLOAT64, Quality, Timestamp"),
	SV_CFG_KEY_DOUBLE(struct sv_dataset_cfg_member, scale, "scale", -1e12, 1e12, "1",
			  "a value's primary units (A, V, ...) per LSB; not 0"),
	SV_CFG_KEY_END,
};

const char *const sv_da_type_names[] = {
	[SV_DA_BOOLEAN] = "BOOLEAN", [SV_DA_INT8] = "INT8",	  [SV_DA_INT16] = "INT16",
	[SV_DA_INT32] = "INT32",     [SV_DA_INT64] = "INT64",	  [SV_DA_INT8U] = "INT8U",
	[SV_DA_INT16U] = "INT16U",   [SV_DA_INT32U] = "INT32U",	  [SV_DA_FLOAT32] = "FLOAT32",
	[SV_DA_FLOAT64] = "FLOAT64", [SV_DA_QUALITY] = "Quality", [SV_DA_TIMESTAMP] = "Timestamp",
	[SV_DA__COUNT] = NULL,
};

unsigned sv_da_type_size(enum sv_da_type t)
{
	static const uint8_t size[SV_DA__COUNT] = {
		[SV_DA_BOOLEAN] = 1, [SV_DA_INT8] = 1,	  [SV_DA_INT16] = 2,   [SV_DA_INT32] = 4,
		[SV_DA_INT64] = 8,   [SV_DA_INT8U] = 1,	  [SV_DA_INT16U] = 2,  [SV_DA_INT32U] = 4,
		[SV_DA_FLOAT32] = 4, [SV_DA_FLOAT64] = 8, [SV_DA_QUALITY] = 4, [SV_DA_TIMESTAMP] = 8,
	};

	return (unsigned)t < SV_DA__COUNT ? size[t] : 0;
}

void sv_dataset_init(struct sv_dataset *ds, const char *name)
{
	memset(ds, 0, sizeof(*ds));
	snprintf(ds->name, sizeof(ds->name), "%s", name ? name : "");
}

const char *sv_scale_source_name(enum sv_scale_source s)
{
	switch (s) {
	case SV_SCALE_GIVEN:
		return "given";
	case SV_SCALE_92LE:
		return "9-2LE";
	case SV_SCALE_SCL_SVC:
		return "SCL sVC";
	case SV_SCALE_NONE:
		return "none";
	}
	return "unknown";
}

const char *sv_ratio_source_name(enum sv_ratio_source s)
{
	switch (s) {
	case SV_RATIO_NONE:
		return "not stated";
	case SV_RATIO_RATINGS:
		return "SCL ratings";
	case SV_RATIO_RAT:
		return "SCL Rat";
	case SV_RATIO_GIVEN:
		return "given";
	}
	return "unknown";
}

static char phase_of_prefix(const char *p, size_t n)
{
	if (n >= 2 && (p[n - 2] == 'L' || p[n - 2] == 'l') && p[n - 1] >= '1' && p[n - 1] <= '3')
		return (char)('A' + (p[n - 1] - '1'));
	if (n >= 3 && !strncasecmp(p + n - 3, "RES", 3))
		return 'N';
	if (n >= 1) {
		char c = (char)toupper((unsigned char)p[n - 1]);

		if (c == 'A' || c == 'B' || c == 'C' || c == 'N')
			return c;
	}
	return 0;
}

void sv_dataset_guess(const char *name, char unit[4], char *phase)
{
	const char *dot = strchr(name, '.');
	size_t ln_len = dot ? (size_t)(dot - name) : strlen(name);
	const char *cls = NULL;

	unit[0] = '\0';
	*phase = 0;
	for (size_t i = 0; i + 4 <= ln_len; i++) {
		if (!strncmp(name + i, "TCTR", 4) || !strncmp(name + i, "TVTR", 4)) {
			cls = name + i;
			break;
		}
	}
	if (cls)
		snprintf(unit, 4, "%s", cls[1] == 'C' ? "A" : "V");
	else if (strstr(name, ".Amp") || strstr(name, ".A.") || strstr(name, "AmpSv"))
		snprintf(unit, 4, "A");
	else if (strstr(name, ".Vol") || strstr(name, ".PhV.") || strstr(name, "VolSv"))
		snprintf(unit, 4, "V");
	if (!cls)
		return;
	*phase = phase_of_prefix(name, (size_t)(cls - name));
	if (!*phase && cls + 4 < name + ln_len) {
		/* 9-2LE numbers the instances: TCTR1..3 phases A..C, TCTR4 neutral */
		unsigned inst = 0;

		for (const char *p = cls + 4; p < name + ln_len && isdigit((unsigned char)*p); p++)
			inst = inst * 10 + (unsigned)(*p - '0');
		if (inst >= 1 && inst <= 4)
			*phase = "ABCN"[inst - 1];
	}
}

int sv_dataset_add(struct sv_dataset *ds, const char *name, enum sv_da_type type, double scale)
{
	unsigned size = sv_da_type_size(type), i = ds->nmembers;
	struct sv_ds_member *m = &ds->m[i];
	bool value = type != SV_DA_QUALITY && type != SV_DA_TIMESTAMP;

	if (!size || strlen(name) >= SV_DS_NAME_LEN || (value && (!isfinite(scale) || scale == 0)))
		return -EINVAL;
	if (i >= SV_DS_MAX_MEMBERS || ds->len + size > UINT16_MAX)
		return -ENOSPC;
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name);
	m->type = (uint8_t)type;
	m->offset = ds->len;
	m->quality = -1;
	m->scale = value ? scale : 1;
	m->primary = m->secondary = 1;
	if (value)
		sv_dataset_guess(name, m->unit, &m->phase);
	if (type == SV_DA_QUALITY) {
		/* it qualifies the values since the previous Quality member */
		int prev = ds->nquality ? ds->quality_off[ds->nquality - 1] : -1;

		for (unsigned v = ds->nvalues; v-- > 0 && ds->m[ds->value[v]].offset > prev;)
			ds->m[ds->value[v]].quality = (int8_t)ds->nquality;
		ds->quality_member[ds->nquality] = (uint8_t)i;
		ds->quality_off[ds->nquality++] = ds->len;
		/* a regular layout (instMag.i, q, instMag.i, q ...) lets the quality scan step without a table */
		if (ds->nquality == 2)
			ds->quality_stride = (uint16_t)(ds->quality_off[1] - ds->quality_off[0]);
		else if (ds->nquality > 2 && ds->quality_off[ds->nquality - 1] - ds->quality_off[ds->nquality - 2] !=
						     ds->quality_stride)
			ds->quality_stride = 0;
	} else if (value) {
		ds->value[ds->nvalues++] = (uint8_t)i;
	}
	ds->len = (uint16_t)(ds->len + size);
	ds->nmembers++;
	return 0;
}

/* UCA 9-2LE PhsMeas1 (IEC 61850-9-2LE §5.3.2), also the IEC 61869-9 4I4U profiles. */
static void build_92le(struct sv_dataset *ds)
{
	static const char *const obj[SV_92LE_CHANNELS] = { "TCTR1.Amp", "TCTR2.Amp", "TCTR3.Amp", "TCTR4.Amp",
							   "TVTR1.Vol", "TVTR2.Vol", "TVTR3.Vol", "TVTR4.Vol" };
	char name[SV_DS_NAME_LEN];

	sv_dataset_init(ds, "9-2le");
	for (unsigned c = 0; c < SV_92LE_CHANNELS; c++) {
		snprintf(name, sizeof(name), "%s.instMag.i", obj[c]);
		sv_dataset_add(ds, name, SV_DA_INT32, c < 4 ? SV_CURRENT_LSB_A : SV_VOLTAGE_LSB_V);
		ds->m[ds->nmembers - 1].scale_src = SV_SCALE_92LE;
		snprintf(name, sizeof(name), "%s.q", obj[c]);
		sv_dataset_add(ds, name, SV_DA_QUALITY, 1);
	}
}

int sv_dataset_profile(struct sv_dataset *ds, const char *name)
{
	if (!strcasecmp(name, "9-2le")) {
		build_92le(ds);
		return 0;
	}
	return -ENOENT;
}

static struct sv_dataset ds_92le;
static pthread_once_t ds_92le_once = PTHREAD_ONCE_INIT;

static void ds_92le_build(void)
{
	build_92le(&ds_92le);
}

const struct sv_dataset *sv_dataset_92le(void)
{
	pthread_once(&ds_92le_once, ds_92le_build);
	return &ds_92le;
}

static uint64_t be_n(const uint8_t *p, unsigned n)
{
	uint64_t x = 0;

	for (unsigned i = 0; i < n; i++)
		x = x << 8 | p[i];
	return x;
}

void sv_dataset_member(const struct sv_dataset *ds, const uint8_t *seqData, unsigned i, struct sv_da_value *v)
{
	const struct sv_ds_member *m = &ds->m[i];
	const uint8_t *p = seqData + m->offset;
	unsigned size = sv_da_type_size((enum sv_da_type)m->type);
	uint64_t raw = be_n(p, size);

	v->type = m->type;
	switch ((enum sv_da_type)m->type) {
	case SV_DA_BOOLEAN:
		v->i = raw != 0; /* 0 false, anything else true (9-2 Table 14) */
		break;
	case SV_DA_INT8:
		v->i = (int8_t)raw;
		break;
	case SV_DA_INT16:
		v->i = (int16_t)raw;
		break;
	case SV_DA_INT32:
		v->i = (int32_t)raw;
		break;
	case SV_DA_INT64:
		v->i = (int64_t)raw;
		break;
	case SV_DA_FLOAT32: {
		uint32_t w = (uint32_t)raw;
		float f;

		memcpy(&f, &w, sizeof(f));
		v->f = f;
		break;
	}
	case SV_DA_FLOAT64:
		memcpy(&v->f, &raw, sizeof(v->f));
		break;
	case SV_DA_TIMESTAMP:
		v->t_ns = sv_utctime_get(p);
		break;
	default: /* unsigned integers, Quality */
		v->u = raw;
		break;
	}
}

double sv_dataset_channel(const struct sv_dataset *ds, const uint8_t *seqData, unsigned c)
{
	struct sv_da_value v;

	sv_dataset_member(ds, seqData, ds->value[c], &v);
	switch ((enum sv_da_type)v.type) {
	case SV_DA_FLOAT32:
	case SV_DA_FLOAT64:
		return v.f;
	case SV_DA_INT8U:
	case SV_DA_INT16U:
	case SV_DA_INT32U:
		return (double)v.u;
	default:
		return (double)v.i;
	}
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
