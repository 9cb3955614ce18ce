/* SPDX-License-Identifier: Apache-2.0 */
/* svsub -c FILE: the configuration table (common/sv_config.h). */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "sv_record.h"
#include "svapp.h"

const char *const svsub_cfg_backend_names[] = { "af_xdp", "af_packet", NULL };
/* sv_ct_format's order */
static const char *const comtrade_formats[] = { "binary32", "float32", "ascii", NULL };

#define D struct svsub_cfg_dataset
static const struct sv_cfg_key dataset_table[] = {
	SV_CFG_KEY_STRING(D, svid, "svid", "", "the streams of this svID; empty = any"),
	SV_CFG_KEY_INT(D, appid, "appid", -1, 65535, "-1", "the streams of this APPID; -1 = any"),
	SV_CFG_KEY_STRING(D, name, "name", "", "its name in the summary; empty = the profile's, else the svid"),
	SV_CFG_KEY_STRING(D, profile, "profile", "",
			  "a named layout instead of members: 9-2le, or none (never read these streams' seqData)"),
	SV_CFG_KEY_LIST(D, members, nmembers, "members", sv_dataset_member_keys, "0", "the members in seqData order"),
	SV_CFG_KEY_END,
};
#undef D

#define C struct svsub_file_config
const struct sv_cfg_key svsub_config_table[] = {
	SV_CFG_KEY_STRING(C, read, "read", "", "capture file to read (offline); empty = receive on interface"),
	SV_CFG_KEY_STRING(C, interface, "interface", "", "network interface to receive on (live)"),
	SV_CFG_KEY_ENUM(C, backend, "backend", svsub_cfg_backend_names, "af_xdp", "live receive back-end"),
	SV_CFG_KEY_DOUBLE(C, duration, "duration", 0, 1e9, "0", "live: seconds to receive; 0 = until stopped"),
	SV_CFG_KEY_STRING(C, write, "write", "", "save received SV frames (.pcapng or pcap); empty = no"),
	SV_CFG_KEY_BOOL(C, json, "json", "false", "final summary as one JSON object on stdout"),
	SV_CFG_KEY_BOOL(C, jsonl, "jsonl", "false", "one JSON object per ASDU on stdout"),
	SV_CFG_KEY_BOOL(C, histograms, "histograms", "false", "histograms in the text summary"),
	SV_CFG_KEY_BOOL(C, quiet, "quiet", "false", "no text summary, no status lines"),
	SV_CFG_KEY_STRING(C, app, "app", "", "application fed with every accepted sample: overcurrent, phasor"),
	SV_CFG_KEY_DOUBLE(C, pickup, "pickup", 0.001, 1e7, "1000", "overcurrent: pickup, primary A RMS"),
	SV_CFG_KEY_UINT(C, trip_samples, "trip_samples", 0, 65536, "0",
			"overcurrent: consecutive samples over pickup to trip; 0 = a quarter cycle"),
	SV_CFG_KEY_DOUBLE(C, dropoff, "dropoff", 0.01, 1, "0.95", "overcurrent: reset below dropoff x pickup"),
	SV_CFG_KEY_BOOL(C, block_test, "block_test", "true",
			"overcurrent: block on test quality and simulated samples"),
	SV_CFG_KEY_DOUBLE(C, current_lsb, "current_lsb", 0, 1e6, "0",
			  "A per LSB of the current channels; 0 = the dataset's scale (9-2LE: 0.001)"),
	SV_CFG_KEY_UINT(C, nominal_hz, "nominal_hz", 1, 1000, "50",
			"nominal frequency: smpRate per period, DFT window"),
	SV_CFG_KEY_UINT(C, wrap, "wrap", 0, 65536, "0",
			"smpCnt wraps at this for every stream; 0 = stated, else learned; 1 is refused"),
	SV_CFG_KEY_UINT(C, max_streams, "max_streams", 1, 1 << 20, "256", "stream table size"),
	SV_CFG_KEY_UINT(C, reorder_window, "reorder_window", 0, 65535, "0", "late/duplicate window; 0 = wrap/2"),
	SV_CFG_KEY_UINT(C, resync_run, "resync_run", 0, 65536, "0",
			"consecutive backward samples confirming a counter restart; 0 = 8; 1 is refused"),
	SV_CFG_KEY_DOUBLE(C, max_latency_ms, "max_latency_ms", 0, 999, "0",
			  "larger latencies are outliers: counted apart, not in the histogram; 0 = 500"),
	SV_CFG_KEY_DOUBLE(C, clock_tolerance_us, "clock_tolerance_us", 0, 4000, "20",
			  "negative latencies down to -this are clock granularity; below, the clock is not synchronised"),
	SV_CFG_KEY_BOOL(C, clock_trusted, "clock_trusted", "false",
			"live: treat the host clock as synchronised whatever adjtimex says (publisher on the same clock)"),
	SV_REC_CFG_ROWS(C, "--record"),
	SV_CFG_KEY_STRING(C, comtrade, "comtrade", "",
			  "directory for COMTRADE records: one around each trip of --app overcurrent, and comtrade_range"),
	SV_CFG_KEY_ENUM(C, comtrade_format, "comtrade_format", comtrade_formats, "binary32",
			"the .dat: binary32 (raw counts x a), float32 (primary values), ascii"),
	SV_CFG_KEY_BOOL(C, comtrade_cff, "comtrade_cff", "false", "one .cff file per record instead of .cfg/.dat/.hdr"),
	SV_CFG_KEY_DOUBLE(C, comtrade_pre_ms, "comtrade_pre_ms", 0, 30000, "100", "record before the trigger (pickup), ms"),
	SV_CFG_KEY_DOUBLE(C, comtrade_post_ms, "comtrade_post_ms", 0, 30000, "200", "record after the trigger, ms"),
	SV_CFG_KEY_STRING(C, comtrade_range, "comtrade_range", "",
			  "FROM,TO: a continuous record per stream of these seconds after its first sample (at most 60 s)"),
	SV_CFG_KEY_STRING(C, scl, "scl", "",
			  "SCL file (SCD, CID, ...): check every stream against its control block; its datasets and "
			  "scales apply; empty = none"),
	SV_CFG_KEY_STRING(C, ied, "ied", "", "scl: the IED whose subscriptions are expected; empty = every block"),
	SV_CFG_KEY_LIST(C, datasets, ndatasets, "datasets", dataset_table, "0",
			"what seqData holds, per stream (the first that matches); without one, 64 octets are 9-2LE "
			"and other lengths are not read"),
	SV_CFG_KEY_END,
};
#undef C

/*
 * Keys whose 0 means "automatic" and whose smallest other value is above 1: the table's rows hold one
 * interval (0..max), these rows the values just above 0 that are refused. A wrap of 1 (every smpCnt 0) or a
 * "run" of 1 backward sample (every late sample a restart) would defeat the tracker.
 */
static const struct {
	const char *key;
	uint32_t min_nonzero;
} zero_auto_keys[] = {
	{ "wrap", 2 },
	{ "resync_run", 2 },
};

static uint32_t min_nonzero(const char *key)
{
	for (size_t i = 0; i < sizeof(zero_auto_keys) / sizeof(zero_auto_keys[0]); i++)
		if (!strcmp(zero_auto_keys[i].key, key))
			return zero_auto_keys[i].min_nonzero;
	return 0;
}

int svsub_config_range(const char *key, char *buf, size_t size)
{
	const struct sv_cfg_key *k = sv_config_find_key(svsub_config_table, key);
	uint32_t mz = min_nonzero(key);

	if (!k || sv_config_format_range(k, buf, size)) {
		snprintf(buf, size, "?");
		return -ENOENT;
	}
	if (mz && k->min == 0) {
		struct sv_cfg_key above = *k; /* the same row without the hole: "2..65536" */
		char range[64];

		above.min = mz;
		sv_config_format_range(&above, range, sizeof(range));
		snprintf(buf, size, "0 or %s", range);
	}
	return 0;
}

/* The rules the table cannot express; @msg gets "V is out of range RANGE" like sv_config's own. */
static int check_zero_auto(const struct svsub_file_config *c, const char **key, char *msg, size_t size)
{
	uint32_t keep;

	if (sv_record_parse_keep(c->record_keep, &keep)) {
		snprintf(msg, size, "'%s' is not " SV_REC_KEEP_SYNTAX, c->record_keep);
		*key = "record_keep";
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(zero_auto_keys) / sizeof(zero_auto_keys[0]); i++) {
		const struct sv_cfg_key *k = sv_config_find_key(svsub_config_table, zero_auto_keys[i].key);
		uint32_t v;
		char range[64];

		if (!k)
			continue;
		memcpy(&v, (const char *)c + k->offset, sizeof(v));
		if (v && v < zero_auto_keys[i].min_nonzero) {
			svsub_config_range(k->name, range, sizeof(range));
			snprintf(msg, size, "%u is out of range %s", v, range);
			*key = k->name;
			return -EINVAL;
		}
	}
	return 0;
}

int svsub_config_set_opt(struct svsub_file_config *c, const char *key, const char *value, char *msg,
			 size_t size)
{
	struct svsub_file_config tmp = *c;
	struct sv_cfg_error err = { 0 };
	char assignment[160];
	const char *bad;

	snprintf(assignment, sizeof(assignment), "%s=%s", key, value);
	if (sv_config_set(svsub_config_table, &tmp, assignment, &err)) {
		snprintf(msg, size, "%s", err.msg);
		return -EINVAL;
	}
	if (check_zero_auto(&tmp, &bad, msg, size))
		return -EINVAL;
	*c = tmp;
	return 0;
}

static int dataset_rule(const struct svsub_cfg_dataset *d, unsigned i, struct svsub_dataset_rule *r, char *key,
			size_t key_size, char *msg, size_t size)
{
	memset(r, 0, sizeof(*r));
	r->appid = d->appid;
	snprintf(r->svID, sizeof(r->svID), "%s", d->svid);
	if (d->profile[0] && d->nmembers) {
		snprintf(key, key_size, "datasets[%u].profile", i);
		snprintf(msg, size, "a profile or members, not both");
		return -EINVAL;
	}
	if (!d->profile[0] && !d->nmembers) {
		snprintf(key, key_size, "datasets[%u]", i);
		snprintf(msg, size, "neither a profile nor members");
		return -EINVAL;
	}
	if (!strcmp(d->profile, "none")) {
		r->none = true;
		return 0;
	}
	if (d->profile[0]) {
		if (sv_dataset_profile(&r->ds, d->profile)) {
			snprintf(key, key_size, "datasets[%u].profile", i);
			snprintf(msg, size, "'%s' is not one of: 9-2le, none", d->profile);
			return -EINVAL;
		}
	} else {
		sv_dataset_init(&r->ds, "");
		for (unsigned m = 0; m < d->nmembers; m++) {
			const struct sv_dataset_cfg_member *cm = &d->members[m];
			char auto_name[24];
			int err;

			snprintf(auto_name, sizeof(auto_name), "member%u", m);
			err = sv_dataset_add(&r->ds, cm->name[0] ? cm->name : auto_name, (enum sv_da_type)cm->type,
					     cm->scale);

			if (err) {
				snprintf(key, key_size, "datasets[%u].members[%u]%s", i, m, err == -EINVAL ? ".scale" : "");
				snprintf(msg, size, "%s", err == -EINVAL ? "a value's scale must not be 0"
									 : "the members fill more than 65535 octets");
				return -EINVAL;
			}
		}
	}
	_Static_assert(SV_DS_NAME_LEN == 64, "the precision below");
	snprintf(r->ds.name, sizeof(r->ds.name), "%.63s",
		 d->name[0] ? d->name : d->profile[0] ? d->profile : d->svid[0] ? d->svid : "declared");
	return 0;
}

int svsub_config_datasets(const struct svsub_file_config *c, struct svsub_dataset_rule *rules, unsigned *n,
			  char *key, size_t key_size, char *msg, size_t size)
{
	*n = 0;
	for (unsigned i = 0; i < c->ndatasets && i < SVSUB_CFG_MAX_DATASETS; i++) {
		int err = dataset_rule(&c->datasets[i], i, &rules[i], key, key_size, msg, size);

		if (err)
			return err;
		*n = i + 1;
	}
	return 0;
}

int svsub_config_check(const struct svsub_file_config *c, const char *path, char *msg, size_t size)
{
	static struct svsub_dataset_rule rules[SVSUB_CFG_MAX_DATASETS]; /* 86 KiB: not on the stack */
	const char *key = NULL;
	char what[256], dkey[64];
	unsigned line, col, n;

	if (!check_zero_auto(c, &key, what, sizeof(what))) {
		if (!svsub_config_datasets(c, rules, &n, dkey, sizeof(dkey), what, sizeof(what)))
			return 0;
		key = dkey;
	}
	if (!sv_config_locate(path, key, NULL, &line, &col))
		snprintf(msg, size, "%s:%u:%u: %s: %s", path, line, col, key, what);
	else
		snprintf(msg, size, "%s: %s: %s", path, key, what);
	return -EINVAL;
}

int svsub_config_init(struct svsub_file_config *c)
{
	struct sv_cfg_error err;

	memset(c, 0, sizeof(*c));
	return sv_config_defaults(svsub_config_table, c, &err);
}

const char *svsub_config_prescan(int argc, char **argv, bool *cli_source)
{
	const char *path = NULL;

	*cli_source = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			break;
		if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && i + 1 < argc)
			path = argv[++i];
		else if (!strncmp(a, "--config=", 9))
			path = a + 9;
		else if (!strncmp(a, "-c", 2) && a[2])
			path = a + 2;
		else if (!strcmp(a, "-r") || !strcmp(a, "-i") || !strcmp(a, "--read") || !strncmp(a, "--read=", 7) ||
			 !strcmp(a, "--interface") || !strncmp(a, "--interface=", 12) ||
			 (a[0] == '-' && (a[1] == 'r' || a[1] == 'i') && a[2]))
			*cli_source = true;
	}
	return path;
}
