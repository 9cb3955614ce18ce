/* SPDX-License-Identifier: Apache-2.0 */
/*
 * COMTRADE (IEEE C37.111-2013 / IEC 60255-24:2013): the configuration (.cfg) and data (.dat) of one record,
 * written (svsub --comtrade) and read back (svreport's plot). Formats: ASCII, BINARY32, FLOAT32; .cfg + .dat
 * (+ .hdr) or one .cff. The library writes only to the FILE it is given and never prints.
 *
 * Written as:
 *  - line 1 "station,device,2013"; analog channels "An,ch_id,ph,ccbm,uu,a,b,skew,min,max,primary,secondary,P"
 *    (values are primary quantities: PS = P); status channels "Dn,ch_id,ph,ccbm,0";
 *  - one sampling rate; the first sample's and the trigger's date and time in UTC, microseconds (the .dat
 *    timestamps are then microseconds from the first sample, timemult 1); time_code and local_code 0 (UTC);
 *    tmq_code (IEEE C37.118 time quality: 0 locked, 1..B error bound 10^(n-10) s, F unreliable) and leapsec;
 *  - BINARY32: raw counts with a = the scale (primary units per count), b = 0; FLOAT32: primary values, a = 1;
 *    ASCII: raw counts like BINARY32.
 * Missing samples (lost on the network) keep their row, number and timestamp, and say they are missing: the
 * marker the standard gives the format (IEEE C37.111-2013, data file clause: the most negative value,
 * 0x8000 in BINARY16 and 0x80000000 in BINARY32; an empty field in ASCII), a quiet NaN in FLOAT32, and the
 * status channel the caller gives for it set to 1. Real values are clamped to -2147483647 so that no value
 * reads as the marker.
 */
#ifndef SV_COMTRADE_H
#define SV_COMTRADE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum sv_ct_format { SV_CT_BINARY32 = 0, SV_CT_FLOAT32, SV_CT_ASCII };
/* "BINARY32", "FLOAT32", "ASCII", NULL (index = enum sv_ct_format). */
extern const char *const sv_ct_format_names[];

#define SV_CT_MAX_ANALOG 64
#define SV_CT_MAX_DIGITAL 96
#define SV_CT_ID_LEN 64
#define SV_CT_MISSING_B32 INT32_MIN

struct sv_ct_analog {
	char id[SV_CT_ID_LEN];	 /* "IA" */
	char ph[4];		 /* "A" */
	char ccbm[SV_CT_ID_LEN]; /* the data attribute */
	char uu[8];		 /* "A", "V" */
	double a, b;		 /* value = a x raw + b */
	double min, max;	 /* of the raw values in the file */
	double primary, secondary;
};

struct sv_ct_digital {
	char id[SV_CT_ID_LEN];
	char ccbm[SV_CT_ID_LEN];
};

struct sv_ct_record {
	char station[SV_CT_ID_LEN], device[SV_CT_ID_LEN];
	unsigned nan, ndig;
	struct sv_ct_analog an[SV_CT_MAX_ANALOG];
	struct sv_ct_digital dig[SV_CT_MAX_DIGITAL];
	double lf;	     /* line frequency, Hz */
	double rate;	     /* samples per second */
	uint32_t nsamples;
	int64_t start_utc_ns, trigger_utc_ns;
	uint8_t format;	     /* enum sv_ct_format */
	char tmq;	     /* '0'..'9', 'A', 'B', 'F' */
	uint8_t leapsec;     /* 0 none in the record, 1 added, 2 subtracted, 3 no leap second capability */
};

/* The .cfg text of @r (CRLF line ends). 0 or -EIO. */
int sv_ct_write_cfg(FILE *f, const struct sv_ct_record *r);
/* One .dat row: sample @n (1-based), @t_us from the first sample, raw values (@missing: this row has none),
 * status bits @dig (one byte per status channel, 0/1). BINARY32/ASCII take @raw as counts, FLOAT32 writes
 * raw x a. 0 or -EIO. */
int sv_ct_write_row(FILE *f, const struct sv_ct_record *r, uint32_t n, uint32_t t_us, const double *raw,
		    bool missing, const uint8_t *dig);
/* Octets of one binary row (0 for ASCII). */
unsigned sv_ct_row_size(const struct sv_ct_record *r);

/* ---- reading (svreport) ---- */

/* A record read back: the .cfg and every analog value in primary units (NaN where missing). */
struct sv_ct_data {
	struct sv_ct_record r;
	uint32_t n;	  /* rows read */
	double *t_s;	  /* n: seconds from the first sample (the sample rate's, not the timestamps') */
	double *v;	  /* n x r.nan, row-major */
	uint8_t *d;	  /* n x r.ndig */
};

/* Parses the .cfg text @cfg and the .dat bytes @dat (ASCII or binary as the .cfg says). Bounded: at most
 * SV_CT_MAX_ANALOG/DIGITAL channels, the rows the .cfg announces and the .dat holds. 0, -EBADMSG with
 * "line N: why" in @msg, -ENOMEM. */
int sv_ct_parse(struct sv_ct_data *out, const char *cfg, size_t cfg_len, const uint8_t *dat, size_t dat_len,
		char *msg, size_t size);
/* Reads FILE.cfg and FILE.dat, or one .cff. 0, -errno, -EBADMSG (@msg: why). */
int sv_ct_read(struct sv_ct_data *out, const char *path, char *msg, size_t size);
void sv_ct_data_free(struct sv_ct_data *d);

/* IEEE C37.118 time quality code for a clock error bound of @err_ns (< 0: unknown or unreliable -> 'F'). */
char sv_ct_tmq(int64_t err_ns);

#endif /* SV_COMTRADE_H */
