/* SPDX-License-Identifier: Apache-2.0 */
/* svsub's one table: every configuration key (svsub -c FILE) and every option (common/sv_config.h, sv_cli.h). */
#include <errno.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#include "sv_cli.h"
#include "sv_metrics.h"
#include "sv_record.h"
#include "sv_soak.h"
#include "svapp.h"
#include "svrx.h" /* the receive keys' enums and limits */

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

/* svrx's enums, in their order (svrx.h) */
static const char *const xdp_mode_names[] = { "auto", "native", "skb", NULL };
static const char *const zerocopy_names[] = { "auto", "on", "off", NULL };
_Static_assert(SVRX_XDP_NATIVE == 1 && SVRX_XDP_SKB == 2 && SVRX_ON == 1 && SVRX_OFF == 2, "svrx's enums");
_Static_assert(SVRX_MAX_QUEUES * 4 - 1 == 63 && SVRX_MAX_APPIDS == 256 && SVRX_MAX_GROUPS == 64,
	       "the receive rows' ranges and help");

#define C struct svsub_file_config
const struct sv_cfg_key svsub_config_table[] = {
	SV_CLI_HEADING("Sources:"),
	SV_CFG_KEY_STRING(C, read, "read", "", "read a pcap or pcapng capture (Ethernet); '-' reads stdin",
			  SV_OPT_ID("read", 'r', "FILE", SVSUB_OPT_READ)),
	SV_CFG_KEY_STRING(C, interface, "interface", "", "receive live on IF",
			  SV_OPT_ID("interface", 'i', "IF", SVSUB_OPT_INTERFACE)),
	SV_CFG_KEY_ENUM(C, backend, "backend", svsub_cfg_backend_names, "af_xdp", "live receive back-end",
			SV_OPT_ID("backend", 0, "NAME", SVSUB_OPT_LIVE_ONLY)),
	SV_CFG_KEY_DOUBLE(C, duration, "duration", 0, 1e9, "0", "live: seconds to receive; 0 = until SIGINT/SIGTERM",
			  SV_OPT_ID("duration", 0, "S", SVSUB_OPT_LIVE_ONLY)),
	SV_CLI_HEADING("Outputs:"),
	SV_CFG_KEY_STRING(C, write, "write", "",
			  "save the SV frames with their receive time (.pcapng: pcapng, else pcap, ns); empty = no",
			  SV_OPT("write", 'w', "FILE")),
	SV_CFG_KEY_BOOL(C, json, "json", "false",
			"the final summary as one JSON object on stdout (with --jsonl or --app, whose JSON lines share "
			"stdout: one more line among them)",
			SV_OPT_ID("json", 0, NULL, SVSUB_OPT_JSON)),
	SV_CFG_KEY_BOOL(C, jsonl, "jsonl", "false",
			"one JSON object per ASDU on stdout (malformed frames: {frame, error, offset}); the text "
			"summary then goes to stderr",
			SV_OPT_ID("jsonl", 0, NULL, SVSUB_OPT_JSONL)),
	SV_CFG_KEY_BOOL(C, histograms, "histograms", "false",
			"add inter-arrival and latency histograms to the text summary", SV_OPT("histograms", 0, NULL)),
	SV_CFG_KEY_BOOL(C, quiet, "quiet", "false", "no text summary, no status lines", SV_OPT("quiet", 'q', NULL)),
	SV_CLI_OPT("verbose", 'v', NULL, SVSUB_OPT_VERBOSE, "log more on stderr"),
	SV_CLI_HEADING("Application (app):"),
	SV_CFG_KEY_STRING(C, app, "app", "",
			  "feed every accepted sample to NAME: overcurrent (ANSI 50, one JSON line per trip on stdout; "
			  "the text summary then goes to stderr), phasor; empty = none",
			  SV_OPT_ID("app", 0, "NAME", SVSUB_OPT_APP)),
	SV_CFG_KEY_DOUBLE(C, pickup, "pickup", 0.001, 1e7, "1000", "overcurrent: pickup per phase, primary A RMS",
			  SV_OPT("pickup", 0, "A")),
	SV_CFG_KEY_UINT(C, trip_samples, "trip_samples", 0, 65536, "0",
			"overcurrent: consecutive samples over pickup to trip; 0 = a quarter cycle (20 at 80 "
			"samples/cycle)",
			SV_OPT("trip-samples", 0, "N")),
	SV_CFG_KEY_DOUBLE(C, dropoff, "dropoff", 0.01, 1, "0.95",
			  "overcurrent: reset when every phase is below this x pickup", SV_OPT("dropoff", 0, "R")),
	SV_CFG_KEY_BOOL(C, block_test, "block_test", "true",
			"overcurrent: block on test quality and simulated samples"),
	SV_CLI_FLAG("no-block-test", 0, "block_test", "false",
		    "overcurrent: do not block on test quality or simulated samples"),
	SV_CFG_KEY_DOUBLE(C, current_lsb, "current_lsb", 0, 1e6, "0",
			  "amperes per LSB of the current channels; 0 = the dataset's scale (9-2LE: 0.001)",
			  SV_OPT("current-lsb", 0, "A")),
	SV_CLI_HEADING("Stream tracking:"),
	SV_CFG_KEY_UINT(C, nominal_hz, "nominal_hz", 1, 1000, "50",
			"nominal frequency: smpRate in samples per period, the DFT window", SV_OPT("nominal-hz", 0, "HZ")),
	SV_CFG_KEY_UINT(C, wrap, "wrap", 2, 65536, "0",
			"smpCnt wraps at N for every stream; 0 = stated, else learned",
			.flags = SV_CFG_ZERO, SV_OPT("wrap", 0, "N")),
	SV_CFG_KEY_UINT(C, max_streams, "max_streams", 1, 1 << 20, "256",
			"stream table size; more streams are counted as overflow. A slot is ~85 KiB of address space; "
			"memory is taken as streams come (live: mapped ahead of them, so that a new stream does not "
			"page-fault)",
			SV_OPT("max-streams", 0, "N")),
	SV_CFG_KEY_UINT(C, reorder_window, "reorder_window", 0, 65535, "0",
			"samples behind the newest that count as late/duplicate; 0 = wrap/2",
			SV_OPT("reorder-window", 0, "N")),
	SV_CFG_KEY_UINT(C, resync_run, "resync_run", 2, 65536, "0",
			"consecutive backward samples that confirm a counter restart; 0 = 8",
			.flags = SV_CFG_ZERO, SV_OPT("resync-run", 0, "N")),
	SV_CFG_KEY_DOUBLE(C, max_latency_ms, "max_latency_ms", 0, 999, "0",
			  "larger latencies are outliers (a frame held back, or a clock off by more): counted with the "
			  "largest and when (first, last), kept out of the latency histogram; 0 = 500",
			  SV_OPT("max-latency-ms", 0, "MS")),
	SV_CFG_KEY_DOUBLE(C, clock_tolerance_us, "clock_tolerance_us", 0, 4000, "20",
			  "negative latencies down to -US are clock granularity. The clock is declared not "
			  "synchronised, and the latency not reported, only on evidence about the clock: a latency "
			  "below -US (received before it was sampled), outliers in more than half of the samples (a "
			  "clock off shifts them all), or the host clock unsynchronised (adjtimex STA_UNSYNC) without "
			  "clock_trusted",
			  SV_OPT("clock-tolerance-us", 0, "US")),
	SV_CFG_KEY_BOOL(C, clock_trusted, "clock_trusted", "false",
			"live: treat the host clock as synchronised even when adjtimex reports it unsynchronised "
			"(publisher and subscriber share this clock: one host, netns tests); the other evidence still "
			"applies; the JSON summary says so (source.clock_trusted)",
			SV_OPT("clock-trusted", 0, NULL)),
	SV_CLI_HEADING("Records:"),
	SV_CFG_KEY_STRING(C, record, "record", "",
			  "per-sample records for svreport: T3 (receive) and, live with --app, T4 (the application has "
			  "returned from the frame's samples); no T4 without an app. A full disk never stops receiving or "
			  "the application: blocks that cannot be written are counted (stderr, --json record, the file's "
			  "UNWRITTEN and END records), later ones are tried; empty = none",
			  SV_OPT("record", 0, "FILE")),
	SV_REC_CFG_ROWS(C, "--record", SV_REC_OPTS),
	SV_SOAK_CFG_ROWS(C),
	SV_METRICS_HOST_CFG_ROW(C),
	SV_CLI_HEADING("Metrics for Prometheus (docs/metrics.md):"),
	SV_METRICS_CFG_ROWS(C),
	SV_CLI_HEADING("COMTRADE (IEEE C37.111-2013):"),
	SV_CFG_KEY_STRING(C, comtrade, "comtrade", "",
			  "write a record into DIR around each trip of --app overcurrent: trigger = the pickup (first "
			  "sample over pickup), status channels PICKUP, TRIP, INCEPTION, MISSING (lost samples, marked "
			  "as missing data) and per channel _INVALID/_TEST; times in UTC with tmq_code/leapsec from the "
			  "clock; written off the receive thread; empty = none",
			  SV_OPT("comtrade", 0, "DIR")),
	SV_CFG_KEY_ENUM(C, comtrade_format, "comtrade_format", comtrade_formats, "binary32",
			"the .dat: binary32 (raw counts x a), float32 (primary values), ascii",
			SV_OPT("comtrade-format", 0, "F")),
	SV_CFG_KEY_BOOL(C, comtrade_cff, "comtrade_cff", "false", "one .cff file per record instead of .cfg/.dat/.hdr",
			SV_OPT("comtrade-cff", 0, NULL)),
	SV_CFG_KEY_DOUBLE(C, comtrade_pre_ms, "comtrade_pre_ms", 0, 30000, "100", "record before the trigger, ms",
			  SV_OPT("comtrade-pre", 0, "MS")),
	SV_CFG_KEY_DOUBLE(C, comtrade_post_ms, "comtrade_post_ms", 0, 30000, "200",
			  "record after the trigger, ms (extended to the trip)", SV_OPT("comtrade-post", 0, "MS")),
	SV_CFG_KEY_STRING(C, comtrade_range, "comtrade_range", "",
			  "FROM,TO: also one record per stream of seconds FROM..TO after its first sample (at most 60 "
			  "s; without --app only this one); empty = none",
			  SV_OPT("comtrade-range", 0, "FROM,TO")),
	SV_CLI_HEADING("SCL (IEC 61850-6):"),
	SV_CFG_KEY_STRING(C, scl, "scl", "",
			  "check every stream against its control block in FILE (SCD, CID, ...): APPID, MAC, VLAN, "
			  "confRev, datSet, nofASDU, smpRate, smpMod, dataset length; streams expected and never seen "
			  "are missing. The blocks' datasets and scale factors read the values (after the "
			  "configuration's datasets); live, their APPIDs and groups go into the receive filter unless "
			  "--appid / --group are given; empty = none",
			  SV_OPT("scl", 0, "FILE")),
	SV_CFG_KEY_STRING(C, ied, "ied", "",
			  "expect the streams IED NAME takes (ExtRef, LSVS, IEDName), or publishes when it takes none; "
			  "empty = every block of the file that has an SMV address",
			  SV_OPT("ied", 0, "NAME")),
	SV_CFG_KEY_LIST(C, datasets, ndatasets, "datasets", dataset_table, "0",
			"what seqData holds, per stream (the first that matches); without one, 64 octets are 9-2LE "
			"and other lengths are not read"),
	SV_CLI_HEADING("Live receive:"),
	SV_CFG_KEY_STRING(C, interface_b, "interface_b", "",
			  "PRP (IEC 62439-3): also receive LAN B on IF; duplicates are discarded by their redundancy "
			  "trailer and counted per LAN; empty = none",
			  SV_OPT("interface-b", 0, "IF")),
	SV_CFG_KEY_ENUM(C, xdp_mode, "xdp_mode", xdp_mode_names, "auto", "af_xdp: auto (native, else skb), native or skb",
			SV_OPT("xdp-mode", 0, "MODE")),
	SV_CFG_KEY_ENUM(C, zerocopy, "zerocopy", zerocopy_names, "auto",
			"af_xdp: auto (zero-copy if the driver can, else copy), on, off", SV_OPT("zerocopy", 0, "WHEN")),
	SV_CFG_KEY_INT(C, queue, "queue", -1, 63, "-1", "af_xdp: bind rx queue N only; -1 = every rx queue",
		       SV_OPT("queue", 0, "N")),
	SV_CFG_KEY_UINT(C, umem_frames, "umem_frames", 256, 1048576, "0",
			"af_xdp: UMEM frames per socket; 0 = fit RLIMIT_MEMLOCK", .flags = SV_CFG_ZERO,
			SV_OPT("umem-frames", 0, "N")),
	SV_CFG_KEY_BOOL(C, need_wakeup, "need_wakeup", "true", "af_xdp: use XDP_USE_NEED_WAKEUP"),
	SV_CLI_FLAG("no-need-wakeup", 0, "need_wakeup", "false", "af_xdp: do not use XDP_USE_NEED_WAKEUP"),
	SV_CFG_KEY_UINT(C, busy_poll_us, "busy_poll_us", 0, 1000000, "0",
			"busy polling, us (af_xdp: SO_BUSY_POLL + SO_PREFER_BUSY_POLL; af_packet: spin on the ring); "
			"costs a core; 0 = off",
			SV_OPT("busy-poll", 0, "US")),
	SV_CLI_OPT_RANGE("appid", 0, "N", SVSUB_OPT_APPID, 0, 0xffff,
			 "receive only APPID N (up to 256 times; in the kernel)"),
	SV_CLI_OPT("group", 0, "MAC", SVSUB_OPT_GROUP,
		   "join this multicast group (up to 64 times; default: the whole SV range 01-0C-CD-04-00-00..01-FF "
		   "through all-multicast)"),
	SV_CFG_KEY_BOOL(C, promiscuous, "promiscuous", "false", "also put IF in promiscuous mode",
			SV_OPT("promiscuous", 0, NULL)),
	SV_CLI_HEADING("Configuration:"),
	SV_CLI_ROW_CONFIG('c'),
	SV_CLI_ROW_HELP_CONFIG,
	SV_CLI_ROW_READY_FILE,
	SV_CLI_ROWS_END,
};
#undef C

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
	char what[256], key[64];
	unsigned line, col, n;

	if (!svsub_config_datasets(c, rules, &n, key, sizeof(key), what, sizeof(what)))
		return 0;
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
