// SPDX-License-Identifier: Apache-2.0
#include "svpub_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sv_cli.h"
#include "sv_record.h"
#include "sv_soak.h"
#include "sv_scl.h"
#include "svpub_signal.h" /* SVPUB_CHANNELS */

const char *const svpub_backend_names[] = { "af_packet", "af_xdp", "pcap", NULL };
static const char *const clock_names[] = { "tai", "realtime", NULL };
static const char *const late_names[] = { "send", "skip", NULL };
static const char *const source_names[] = { "sine", "replay", NULL };
static const char *const tristate_names[] = { "auto", "on", "off", NULL };
static const char *const xdp_mode_names[] = { "auto", "skb", "native", NULL };
static const char *const ts_key_names[] = { "auto", "cmsg", "counted", NULL };
const char *const svpub_event_names[] = { "fault", "frequency", "quality", "stop", NULL };

#define E struct svpub_event_cfg
static const struct sv_cfg_key event_table[] = {
	SV_CFG_KEY_DOUBLE(E, at, "at", 0, 1e9, "0", "start, seconds from the start of publishing"),
	SV_CFG_KEY_DOUBLE(E, duration, "duration", 0, 1e9, "0", "seconds; 0 = until the end"),
	SV_CFG_KEY_ENUM(E, type, "type", svpub_event_names, "fault", "what happens"),
	SV_CFG_KEY_STRING(E, phases, "phases", "abc", "phases concerned: letters of abcn"),
	SV_CFG_KEY_DOUBLE(E, current_factor, "current_factor", 0, 1000, "1", "fault: currents multiplied by"),
	SV_CFG_KEY_DOUBLE(E, voltage_factor, "voltage_factor", 0, 10, "1", "fault: voltages multiplied by"),
	SV_CFG_KEY_DOUBLE(E, frequency, "frequency", 1, 1000, "50", "frequency: the new frequency, Hz"),
	SV_CFG_KEY_UINT(E, quality, "quality", 0, 0xffffffff, "0x1",
			"quality: bits ORed into the quality words (IEC 61850-7-3 order, 0x1 = invalid)"),
	SV_CFG_KEY_END,
};
#undef E

#define H struct svpub_harmonic_cfg
static const struct sv_cfg_key harmonic_table[] = {
	SV_CFG_KEY_UINT(H, order, "order", 2, 63, "3", "harmonic order"),
	SV_CFG_KEY_DOUBLE(H, magnitude, "magnitude", 0, 1, "0.1", "fraction of the fundamental"),
	SV_CFG_KEY_DOUBLE(H, angle, "angle", -360, 360, "0", "degrees, added to order x the phase's angle"),
	SV_CFG_KEY_END,
};
#undef H

#define G struct svpub_signal_cfg
static const struct sv_cfg_key signal_table[] = {
	SV_CFG_KEY_ENUM(G, source, "source", source_names, "sine", "three-phase sine, or replay of a capture"),
	SV_CFG_KEY_DOUBLE(G, frequency, "frequency", 0, 1000, "0", "Hz; 0 = the profile's nominal frequency"),
	SV_CFG_KEY_DOUBLES(G, current, "current", 0, 1e6, "[100, 100, 100]", "phase currents, A rms"),
	SV_CFG_KEY_DOUBLES(G, current_angle, "current_angle", -360, 360, "[-30, -150, 90]", "degrees"),
	SV_CFG_KEY_DOUBLES(G, voltage, "voltage", 0, 1e7, "[63508, 63508, 63508]",
			   "phase-to-neutral voltages, V rms (110 kV system)"),
	SV_CFG_KEY_DOUBLES(G, voltage_angle, "voltage_angle", -360, 360, "[0, -120, 120]", "degrees"),
	SV_CFG_KEY_DOUBLE(G, current_noise, "current_noise", 0, 1e6, "0", "Gaussian noise, A (std deviation)"),
	SV_CFG_KEY_DOUBLE(G, voltage_noise, "voltage_noise", 0, 1e7, "0", "Gaussian noise, V (std deviation)"),
	SV_CFG_KEY_UINT(G, seed, "seed", 1, 0, "1", "noise seed (same seed, same samples)"),
	SV_CFG_KEY_LIST(G, harmonics, nharmonics, "harmonics", harmonic_table, "0", "added harmonics"),
	SV_CFG_KEY_LIST(G, events, nevents, "events", event_table, "0", "scripted events"),
	SV_CFG_KEY_STRING(G, replay, "replay", "", "replay: capture file (pcap/pcapng)"),
	SV_CFG_KEY_STRING(G, replay_svid, "replay_svid", "", "replay: svID to take; empty = the first stream"),
	SV_CFG_KEY_END,
};
#undef G

#define S struct svpub_stream_cfg
static const struct sv_cfg_key stream_table[] = {
	SV_CFG_KEY_STRING(S, svid, "svid", "", "svID; empty = svpubNN"),
	SV_CFG_KEY_UINT(S, appid, "appid", 0, 0xffff, "0x0", "APPID (SV range 0x4000-0x7fff); 0 = 0x4000 + index"),
	SV_CFG_KEY_MAC(S, dst, "dst", "00:00:00:00:00:00",
		       "destination MAC; 00:..:00 = 01:0c:cd:04:00:00 + index"),
	SV_CFG_KEY_MAC(S, src, "src", "00:00:00:00:00:00", "source MAC; 00:..:00 = the interface's"),
	SV_CFG_KEY_INT(S, vlan_id, "vlan_id", -1, 4095, "0", "802.1Q VID; -1 = untagged, 0 = priority-tagged"),
	SV_CFG_KEY_UINT(S, vlan_priority, "vlan_priority", 0, 7, "4", "802.1Q PCP"),
	SV_CFG_KEY_UINT(S, so_priority, "so_priority", 0, 15, "0", "SO_PRIORITY of the stream's socket"),
	SV_CFG_KEY_UINT(S, conf_rev, "conf_rev", 0, 0xffffffff, "1", "confRev"),
	SV_CFG_KEY_UINT(S, smp_synch, "smp_synch", 0, 255, "2",
			"smpSynch: 0 none, 1 local, 2 global (smpCnt 0 at the top of each second)"),
	SV_CFG_KEY_BOOL(S, simulation, "simulation", "false", "set the simulation bit (Reserved1 bit 15)"),
	SV_CFG_KEY_STRING(S, datset, "datset", "", "datSet; empty = field absent"),
	SV_CFG_KEY_BOOL(S, refrtm, "refrtm", "false", "send refrTm (sample time, UTC)"),
	SV_CFG_KEY_BOOL(S, smprate, "smprate", "true", "send smpRate"),
	SV_CFG_KEY_ENUM(S, smpmod, "smpmod", tristate_names, "auto", "send smpMod; auto = when the profile's is not 0"),
	SV_CFG_KEY_STRING(S, profile, "profile", "9-2le-50hz",
			  "9-2le-50hz, 9-2le-60hz, 9-2le-256-50hz, 9-2le-256-60hz, F4800S2I4U4, F14400S6I4U4"),
	SV_CFG_KEY_UINT(S, sample_rate, "sample_rate", 0, 1000000, "0", "samples/s; 0 = the profile's"),
	SV_CFG_KEY_UINT(S, asdus, "asdus", 0, SV_TEMPLATE_MAX_ASDU, "0", "ASDUs per frame; 0 = the profile's"),
	SV_CFG_KEY_UINT(S, count, "count", 1, 0, "0",
			"frames to send, counted from the first one sent (mid-second when paced); 0 = unlimited"),
	SV_CFG_KEY_LIST(S, members, nmembers, "members", sv_dataset_member_keys, "0",
			"the dataset: INT32 + Quality pairs in seqData order (TCTRn.Amp / TVTRn.Vol names pick the "
			"channel); none = the profile's 9-2LE PhsMeas1"),
	SV_CFG_KEY_SECTION(S, signal, "signal", signal_table, "what the samples carry"),
	SV_CFG_KEY_END,
};
#undef S

#define L struct svpub_scl_cfg
static const struct sv_cfg_key scl_table[] = {
	SV_CFG_KEY_STRING(L, file, "file", "",
			  "SCL file (SCD, CID, ...) whose merging unit's streams replace streams[]: svID, APPID, MAC, "
			  "VLAN, confRev, datSet, SmvOpts, smpRate/smpMod, nofASDU, the dataset and its sVC scale "
			  "factors (the configuration's keys and -s override them); empty = none"),
	SV_CFG_KEY_STRING(L, ied, "ied", "", "the merging unit; empty = the file's one IED with SV control blocks"),
	SV_CFG_KEY_STRING(L, svcb, "svcb", "", "LD/NAME[,LD/NAME...]: only these blocks; empty = every block of the IED"),
	SV_CFG_KEY_END,
};
#undef L

#define P struct svpub_af_packet_cfg
static const struct sv_cfg_key af_packet_table[] = {
	SV_CFG_KEY_BOOL(P, qdisc_bypass, "qdisc_bypass", "true", "PACKET_QDISC_BYPASS (off for txtime/tc)"),
	SV_CFG_KEY_BOOL(P, timestamps, "timestamps", "true", "SO_TIMESTAMPING transmit timestamps"),
	SV_CFG_KEY_BOOL(P, hw_timestamps, "hw_timestamps", "true", "try hardware stamps (SIOCSHWTSTAMP) first"),
	SV_CFG_KEY_ENUM(P, ts_key, "ts_key", ts_key_names, "auto",
			"how a stamp names its frame: cmsg = a key per frame (SCM_TS_OPT_ID, Linux 6.13+), counted = "
			"the socket's count; auto = cmsg where the kernel takes it"),
	SV_CFG_KEY_BOOL(P, txtime, "txtime", "false", "SO_TXTIME launch time at the deadline (etf qdisc)"),
	SV_CFG_KEY_UINT(P, txtime_lead_us, "txtime_lead_us", 0, 100000, "500",
			"txtime: frames are handed over this early"),
	SV_CFG_KEY_UINT(P, sndbuf, "sndbuf", 0, 1 << 30, "4194304", "SO_SNDBUF bytes (0 = system default)"),
	SV_CFG_KEY_END,
};
#undef P

#define X struct svpub_af_xdp_cfg
static const struct sv_cfg_key af_xdp_table[] = {
	SV_CFG_KEY_UINT(X, queue, "queue", 0, 1023, "0", "TX queue"),
	SV_CFG_KEY_ENUM(X, mode, "mode", xdp_mode_names, "auto", "copy-mode binding: skb or driver (native)"),
	SV_CFG_KEY_BOOL(X, zerocopy, "zerocopy", "false", "ask for zero-copy (fails where the driver lacks it)"),
	SV_CFG_KEY_ENUM(X, tx_metadata, "tx_metadata", tristate_names, "auto",
			"TX timestamps through XDP TX metadata (Linux 6.8+; copy mode: the kernel's software stamp)"),
	SV_CFG_KEY_UINT(X, frames, "frames", 64, 65536, "2048", "UMEM chunks (4096 bytes each)"),
	SV_CFG_KEY_END,
};
#undef X

#define C struct svpub_config
const struct sv_cfg_key svpub_config_table[] = {
	SV_CLI_ROW_CONFIG('c'),
	SV_CFG_KEY_STRING(C, interface, "interface", "", "network interface to publish on (af_packet, af_xdp)",
			  SV_OPT_ID("interface", 'i', "IF", SVPUB_OPT_INTERFACE)),
	SV_CFG_KEY_ENUM(C, backend, "backend", svpub_backend_names, "af_packet", "transmit back-end"),
	SV_CLI_OPT("af-xdp", 'x', NULL, SVPUB_OPT_AF_XDP, "use the AF_XDP back-end on the interface"),
	SV_CFG_KEY_STRING(C, output, "output", "",
			  "pcap back-end: write a capture (.pcap or .pcapng) instead, timestamps = scheduled times, "
			  "not paced (needs duration or streams[].count; not with an interface)",
			  SV_OPT_ID("write", 'w', "FILE.pcap", SVPUB_OPT_WRITE)),
	SV_CFG_KEY_ENUM(C, clock, "clock", clock_names, "tai", "clock of the deadlines and timestamps"),
	SV_CFG_KEY_INT(C, cpu, "cpu", -1, 1023, "-1", "pin the scheduler thread to this CPU; -1 = no"),
	SV_CFG_KEY_UINT(C, priority, "priority", 0, 99, "0", "SCHED_FIFO priority; 0 = normal scheduling"),
	SV_CFG_KEY_BOOL(C, mlockall, "mlockall", "false", "lock memory (no page faults while pacing)"),
	SV_CFG_KEY_DOUBLE(C, duration, "duration", 0, 1e9, "0", "seconds to publish; 0 = until SIGINT/SIGTERM",
			  SV_OPT("duration", 'd', "S")),
	SV_CFG_KEY_STRING(C, record, "record", "",
			  "per-frame records (svkit record format, svreport reads them); their parts, flushes and "
			  "free-space floor: the record_* keys. A full disk never stops publishing: blocks that cannot "
			  "be written are counted (summary, --json, the file's UNWRITTEN and END records) and later "
			  "ones tried; empty = none",
			  SV_OPT("record", 'r', "FILE")),
	SV_REC_CFG_ROWS(C, "record", SV_REC_NO_OPTS),
	SV_SOAK_CFG_ROWS(C),
	SV_METRICS_HOST_CFG_ROW(C),
	SV_METRICS_CFG_ROWS(C),
	SV_CFG_KEY_ENUM(C, late_policy, "late", late_names, "send",
			"a frame past its deadline by more than late_threshold_us: send it late, or skip it"),
	SV_CFG_KEY_UINT(C, late_threshold_us, "late_threshold_us", 0, 1000000, "100", "when a frame is late"),
	SV_CFG_KEY_BOOL(C, unpaced, "unpaced", "false", "send as fast as possible (throughput tests)",
			SV_OPT("unpaced", 'u', NULL)),
	SV_CFG_KEY_UINT(C, batch, "batch", 1, 1024, "64", "unpaced: frames per send call"),
	SV_CFG_KEY_BOOL(C, status, "status", "true", "one status line per second on stderr"),
	SV_CLI_FLAG("quiet", 'q', "status", "false", "no status line per second"),
	SV_CFG_KEY_SECTION(C, af_packet, "af_packet", af_packet_table, "AF_PACKET back-end"),
	SV_CFG_KEY_SECTION(C, af_xdp, "af_xdp", af_xdp_table, "AF_XDP back-end"),
	SV_CFG_KEY_SECTION(C, scl, "scl", scl_table, "streams from an SCL file (IEC 61850-6)"),
	SV_CLI_ROW("scl", 0, "FILE", "scl.file", NULL, 0, SV_OPT_EARLY, NULL),
	SV_CLI_ROW("ied", 0, "NAME", "scl.ied", NULL, 0, SV_OPT_EARLY, NULL),
	SV_CLI_ROW("svcb", 0, "LD/NAME", NULL, NULL, SVPUB_OPT_SVCB, SV_OPT_EARLY,
		   "only this control block (repeat, or LD/A,LD/B; adds to scl.svcb)"),
	SV_CFG_KEY_LIST(C, streams, nstreams, "streams", stream_table, "1", "the streams to publish"),
	SV_CLI_OPT("set", 's', "KEY=VALUE", SV_CLI_SET,
		   "override any key (--help-config), e.g. streams[0].svid=MU01, streams[*].vlan_id=-1"),
	SV_CLI_OPT("json", 'j', NULL, SVPUB_OPT_JSON, "final summary as one JSON object on stdout"),
	SV_CLI_OPT("verbose", 'v', NULL, SVPUB_OPT_VERBOSE, "more messages"),
	SV_CLI_ROW_READY_FILE,
	SV_CLI_ROW_HELP_CONFIG,
	SV_CLI_ROWS_END,
};
#undef C

int svpub_config_init(struct svpub_config *c)
{
	struct sv_cfg_error err;

	memset(c, 0, sizeof(*c));
	return sv_config_defaults(svpub_config_table, c, &err);
}

const struct sv_profile *svpub_stream_profile(const struct svpub_stream_cfg *s)
{
	return sv_profile_find(s->profile);
}

uint32_t svpub_stream_rate(const struct svpub_stream_cfg *s)
{
	const struct sv_profile *p = svpub_stream_profile(s);

	return s->sample_rate ? s->sample_rate : (p ? p->sample_rate : 0);
}

uint32_t svpub_stream_asdus(const struct svpub_stream_cfg *s)
{
	const struct sv_profile *p = svpub_stream_profile(s);

	return s->asdus ? s->asdus : (p ? p->asdus_per_frame : 0);
}

double svpub_stream_nominal_hz(const struct svpub_stream_cfg *s)
{
	const struct sv_profile *p = svpub_stream_profile(s);

	return p && p->nominal_hz ? p->nominal_hz : 50.0;
}

/* smpMod as sent (the field present), and smpRate's unit: per second when smpMod 1 is sent, else per
 * nominal period (IEC 61850-9-2 Ed 2.1 §8.5.2: smpMod 0, the default when absent). */
static bool stream_smpmod(const struct svpub_stream_cfg *s, const struct sv_profile *prof)
{
	return s->smpmod == SVPUB_ON || (s->smpmod == SVPUB_AUTO && prof->smp_mod != 0);
}

static uint32_t stream_smprate(const struct svpub_stream_cfg *s, const struct sv_profile *prof, uint32_t rate)
{
	if (stream_smpmod(s, prof) && prof->smp_mod == 1)
		return rate;
	return prof->nominal_hz ? rate / prof->nominal_hz : rate;
}

/* Stream @s's frame as an encoder view (20 KiB, static: setup is single-threaded). seqData is zero. */
static const struct sv_view *stream_view(const struct svpub_stream_cfg *s, const uint8_t if_mac[6])
{
	static struct sv_view v;
	static const uint8_t zero[6];
	static uint8_t seq[SV_TEMPLATE_MAX_ASDU][SVPUB_MAX_MEMBERS * 4];
	static uint8_t refr[SV_REFRTM_LEN];
	const struct sv_profile *prof = svpub_stream_profile(s);
	uint32_t rate = svpub_stream_rate(s), asdus = svpub_stream_asdus(s), smprate = stream_smprate(s, prof, rate);
	bool smpmod = stream_smpmod(s, prof);

	memset(&v, 0, sizeof(v));
	v.dst = s->dst;
	v.src = memcmp(s->src, zero, 6) ? s->src : if_mac;
	v.vlan = s->vlan_id >= 0;
	v.vlan_id = (uint16_t)(s->vlan_id >= 0 ? s->vlan_id : 0);
	v.vlan_pcp = s->vlan_priority;
	v.appid = s->appid;
	v.simulated = s->simulation;
	v.noASDU = (uint16_t)(asdus < SV_TEMPLATE_MAX_ASDU ? asdus : SV_TEMPLATE_MAX_ASDU);
	for (unsigned a = 0; a < v.noASDU; a++) {
		struct sv_asdu *as = &v.asdu[a];

		as->svID = (const uint8_t *)s->svid;
		as->svID_len = (uint16_t)strlen(s->svid);
		if (s->datset[0]) {
			as->datSet = (const uint8_t *)s->datset;
			as->datSet_len = (uint16_t)strlen(s->datset);
			as->present |= SV_HAS_DATSET;
		}
		as->confRev = s->conf_rev;
		as->smpSynch = s->smp_synch;
		if (s->refrtm) {
			as->refrTm = refr;
			as->present |= SV_HAS_REFRTM;
		}
		if (s->smprate) {
			as->smpRate = (uint16_t)(smprate > 0xffff ? 0xffff : smprate); /* over: refused by resolve */
			as->present |= SV_HAS_SMPRATE;
		}
		if (smpmod) {
			as->smpMod = prof->smp_mod;
			as->present |= SV_HAS_SMPMOD;
		}
		as->seqData = seq[a];
		as->seqData_len = s->nmembers ? (uint16_t)(s->nmembers * 4) : SVPUB_CHANNELS * 8;
	}
	return &v;
}

int svpub_stream_template(const struct svpub_stream_cfg *s, const uint8_t if_mac[6], struct sv_template *t)
{
	return sv_template_init(t, stream_view(s, if_mac));
}

int svpub_stream_frame_len(const struct svpub_stream_cfg *s)
{
	static const uint8_t mac[6];
	/* Any frame of up to SV_TEMPLATE_MAX_ASDU ASDUs of 129-octet IDs fits. */
	static uint8_t buf[SV_TEMPLATE_MAX_ASDU * 512 + 256];

	return sv_codec_encode(stream_view(s, mac), buf, sizeof(buf));
}

/* ---- rules checked after loading (resolve) ---- */

#define RULE_PLACES 10

/* A broken rule: the message, and where in the file it may point (best first). */
struct rule {
	struct sv_cfg_error *err;
	unsigned n;
	struct {
		char path[128];
		char value[SV_MAX_ID_LEN + 1];
		bool any; /* any node at path (a sequence, an empty list): no value to compare */
	} at[RULE_PLACES];
};

/* Sets the message: "@path: msg" without a position (error_position() adds one). Returns -EINVAL. */
__attribute__((format(printf, 3, 4))) static int broken(struct rule *r, const char *path, const char *fmt, ...)
{
	struct sv_cfg_error *err = r->err;
	va_list ap;

	snprintf(err->path, sizeof(err->path), "%s", path);
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	snprintf(err->text, sizeof(err->text), "%s: %s", err->path, err->msg);
	err->line = err->column = 0;
	return -EINVAL;
}

/* The file may hold the offending value @value (NULL: any node) at @path: a place to point at. */
static void place(struct rule *r, const char *path, const char *value)
{
	if (r->n == RULE_PLACES)
		return;
	snprintf(r->at[r->n].path, sizeof(r->at[r->n].path), "%s", path);
	snprintf(r->at[r->n].value, sizeof(r->at[r->n].value), "%s", value ? value : "");
	r->at[r->n].any = !value;
	r->n++;
}

/* The same for stream @i's key @key. */
static void place_s(struct rule *r, unsigned i, const char *key, const char *value)
{
	char path[128];

	snprintf(path, sizeof(path), "streams[%u].%s", i, key);
	place(r, path, value);
}

/* A number as the file may write it: decimal or 0x-hex (sv_config's syntax). */
static void place_s_uint(struct rule *r, unsigned i, const char *key, uint64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%" PRIu64, v);
	place_s(r, i, key, num);
	snprintf(num, sizeof(num), "0x%" PRIx64, v);
	place_s(r, i, key, num);
	snprintf(num, sizeof(num), "0x%" PRIX64, v);
	place_s(r, i, key, num);
}

/* svID and datSet are VisibleStrings (IEC 61850-9-2 §8.5.2: printable ASCII 0x20..0x7E): stream @i's key @key
 * (the field @what) holding @id. 0, or -EINVAL naming the first other octet. */
static int visible_rule(struct rule *r, unsigned i, const char *key, const char *what, const char *id)
{
	char path[128];

	for (int k = 0; id[k]; k++) {
		if ((unsigned char)id[k] >= 0x20 && (unsigned char)id[k] <= 0x7e)
			continue;
		place_s(r, i, key, id);
		snprintf(path, sizeof(path), "streams[%u].%s", i, key);
		return broken(r, path, "%s is a VisibleString (IEC 61850-9-2: printable ASCII 0x20..0x7E): octet %d is "
				       "0x%02X", what, k + 1, (unsigned char)id[k]);
	}
	return 0;
}

/* How many ASDUs of stream @s fit a frame of SV_TEMPLATE_MAX_FRAME octets (0: not one). */
static unsigned asdus_that_fit(struct svpub_stream_cfg *s)
{
	uint16_t was = s->asdus;
	unsigned a;

	for (a = SV_TEMPLATE_MAX_ASDU; a > 0; a--) {
		int len;

		s->asdus = (uint16_t)a;
		len = svpub_stream_frame_len(s);
		if (len > 0 && len <= SV_TEMPLATE_MAX_FRAME)
			break;
	}
	s->asdus = was;
	return a;
}

static int stream_rules(struct svpub_stream_cfg *s, unsigned i, struct rule *r)
{
	static const uint8_t zero[6];
	const struct sv_profile *p = svpub_stream_profile(s);
	uint32_t rate, asdus;
	char path[128];
	int err, len;

	if (!p) {
		place_s(r, i, "profile", s->profile);
		snprintf(path, sizeof(path), "streams[%u].profile", i);
		return broken(r, path, "unknown profile: 9-2le-50hz, 9-2le-60hz, 9-2le-256-50hz, 9-2le-256-60hz, "
				       "F4800S2I4U4 or F14400S6I4U4 (see --help-config)");
	}
	rate = svpub_stream_rate(s);
	asdus = svpub_stream_asdus(s);
	if (rate % asdus) {
		place_s_uint(r, i, "asdus", s->asdus);
		place_s_uint(r, i, "sample_rate", s->sample_rate);
		place_s(r, i, "profile", s->profile);
		snprintf(path, sizeof(path), "streams[%u].asdus", i);
		return broken(r, path, "the sample rate (%u/s) must be a multiple of the ASDUs per frame (%u)", rate, asdus);
	}
	/* svpub restarts smpCnt at the top of every second whatever smpSynch says (svpub_engine.h), and smpCnt
	 * is INT16U (IEC 61850-9-2 §8.5.2): more samples a second would wrap it mid-second. */
	if (rate > 65536) {
		place_s_uint(r, i, "sample_rate", s->sample_rate);
		snprintf(path, sizeof(path), "streams[%u].sample_rate", i);
		return broken(r, path, "%u samples/s: smpCnt is 16 bits and restarts at the top of every second "
				       "(smpSynch %u): at most 65536 samples/s", rate, s->smp_synch);
	}
	if (s->smprate) {
		bool per_second = stream_smpmod(s, p) && p->smp_mod == 1;

		snprintf(path, sizeof(path), "streams[%u].sample_rate", i);
		if (!per_second && p->nominal_hz && rate % p->nominal_hz) {
			place_s_uint(r, i, "sample_rate", s->sample_rate);
			return broken(r, path, "%u samples/s is no whole number of samples per %u Hz period, which smpRate "
					       "carries (smpMod 0): a multiple of %u, or smprate: false", rate,
				      p->nominal_hz, p->nominal_hz);
		}
		if (stream_smprate(s, p, rate) > 0xffff) {
			place_s_uint(r, i, "sample_rate", s->sample_rate);
			return broken(r, path, "%u samples/s: smpRate is 16 bits and cannot carry %u (samples per %s): at "
					       "most 65535 samples/s, or smprate: false", rate, stream_smprate(s, p, rate),
				      per_second ? "second, smpMod 1" : "period");
		}
	}
	if (!s->svid[0])
		snprintf(s->svid, sizeof(s->svid), "svpub%02u", i + 1);
	err = visible_rule(r, i, "svid", "svID", s->svid);
	if (!err)
		err = visible_rule(r, i, "datset", "datSet", s->datset);
	if (err)
		return err;
	if (!s->appid)
		s->appid = (uint16_t)(0x4000 + i);
	if (!memcmp(s->dst, zero, 6)) {
		static const uint8_t base[6] = { 0x01, 0x0c, 0xcd, 0x04, 0x00, 0x00 };

		memcpy(s->dst, base, 6);
		s->dst[4] = (uint8_t)(i >> 8);
		s->dst[5] = (uint8_t)i;
	}
	len = svpub_stream_frame_len(s);
	if (len < 0 || len > SV_TEMPLATE_MAX_FRAME) {
		place_s_uint(r, i, "asdus", s->asdus);
		place_s(r, i, "svid", s->svid);
		place_s(r, i, "profile", s->profile);
		snprintf(path, sizeof(path), "streams[%u].asdus", i);
		if (len < 0)
			return broken(r, path, "a frame of this stream cannot be encoded: %s", strerror(-len));
		return broken(r, path, "a frame of %u ASDUs is %d octets, over the %d of svpub's frame buffer (and over "
				       "a 1500-octet MTU): %u ASDUs fit, or a shorter svID (%zu characters) or datSet, or "
				       "no refrtm", asdus, len, SV_TEMPLATE_MAX_FRAME, asdus_that_fit(s),
			      strlen(s->svid));
	}
	if (s->nmembers) {
		uint8_t map[SVPUB_MAX_MEMBERS];
		double conv[SVPUB_MAX_MEMBERS];
		char msg[200];

		if (svpub_stream_channels(s, map, conv, msg, sizeof(msg)) < 0) {
			place_s(r, i, "members", NULL);
			snprintf(path, sizeof(path), "streams[%u].members", i);
			return broken(r, path, "%s", msg);
		}
	}
	if (!s->signal.frequency)
		s->signal.frequency = svpub_stream_nominal_hz(s);
	if (s->signal.source == SVPUB_SOURCE_REPLAY && !s->signal.replay[0]) {
		place_s(r, i, "signal.source", "replay");
		snprintf(path, sizeof(path), "streams[%u].signal.replay", i);
		return broken(r, path, "source replay needs a capture file");
	}
	for (unsigned e = 0; e < s->signal.nevents; e++) {
		const char *ph = s->signal.events[e].phases;

		if (ph[strspn(ph, "abcn")]) {
			char key[48];

			snprintf(key, sizeof(key), "signal.events[%u].phases", e);
			place_s(r, i, key, ph);
			snprintf(path, sizeof(path), "streams[%u].%s", i, key);
			return broken(r, path, "phases are letters of \"abcn\"");
		}
	}
	return 0;
}

static int resolve(struct svpub_config *c, struct rule *r)
{
	int err;

	memset(r->err, 0, sizeof(*r->err));
	r->n = 0;
	/* record_keep: checked by its row (sv_record_check_keep) */
	if (!c->nstreams) {
		place(r, "streams", NULL); /* only the file can empty the list (--set appends) */
		return broken(r, "streams", "at least one stream is needed");
	}
	for (unsigned i = 0; i < c->nstreams; i++) {
		err = stream_rules(&c->streams[i], i, r);
		if (err)
			return err;
	}
	return 0;
}

int svpub_config_check_output(const struct svpub_config *c, struct sv_cfg_error *err)
{
	memset(err, 0, sizeof(*err));
	if (c->backend == SVPUB_BACKEND_PCAP && !c->output[0]) {
		snprintf(err->text, sizeof(err->text), "output: the pcap back-end needs a file (--write FILE)");
		return -EINVAL;
	}
	if (c->backend != SVPUB_BACKEND_PCAP && !c->interface[0]) {
		snprintf(err->text, sizeof(err->text),
			 "interface: the %s back-end needs an interface (--interface IF), or use --write FILE.pcap",
			 svpub_backend_names[c->backend]);
		return -EINVAL;
	}
	/* soak: sample times on TAI place the intervals, the windows' times are the record's (its clock) */
	if (c->soak && (!c->record[0] || c->clock != SVPUB_CLOCK_TAI || c->unpaced || c->backend == SVPUB_BACKEND_PCAP)) {
		snprintf(err->text, sizeof(err->text),
			 "soak: needs --record FILE, clock tai and a paced run on an interface (not unpaced, not "
			 "--write)");
		return -EINVAL;
	}
	/* A file is written as fast as the disk takes it: without an end it fills the disk in minutes. */
	if (c->backend == SVPUB_BACKEND_PCAP && c->duration <= 0) {
		for (unsigned i = 0; i < c->nstreams; i++) {
			if (!c->streams[i].count) {
				snprintf(err->text, sizeof(err->text),
					 "output %s: a file needs an end: give --duration S (or streams[%u].count; "
					 "files are written unpaced, as fast as the disk takes them)",
					 c->output, i);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* ---- positions of resolve errors in the file ---- */

/* Adds to @err the position of the first place of @r that @file holds (the offending value there: an override
 * may have replaced it), and names that place's key. */
static void error_position(const char *file, const struct rule *r, struct sv_cfg_error *err)
{
	unsigned line, column;

	if (!file)
		return;
	for (unsigned k = 0; k < r->n; k++) {
		if (sv_config_locate(file, r->at[k].path, r->at[k].any ? NULL : r->at[k].value, &line, &column))
			continue;
		snprintf(err->file, sizeof(err->file), "%s", file);
		snprintf(err->path, sizeof(err->path), "%s", r->at[k].path);
		err->line = line;
		err->column = column;
		snprintf(err->text, sizeof(err->text), "%s:%u:%u: %s: %s", err->file, err->line, err->column,
			 err->path, err->msg);
		return;
	}
}

int svpub_config_resolve_file(struct svpub_config *c, const char *file, struct sv_cfg_error *err)
{
	struct rule r = { .err = err };
	int ret = resolve(c, &r);

	if (ret)
		error_position(file, &r, err);
	return ret;
}

int svpub_config_resolve(struct svpub_config *c, struct sv_cfg_error *err)
{
	return svpub_config_resolve_file(c, NULL, err);
}

int svpub_stream_channels(const struct svpub_stream_cfg *s, uint8_t *map, double *conv, char *msg, size_t size)
{
	unsigned n = 0;

	if (!s->nmembers)
		return 0;
	if (s->nmembers % 2) {
		snprintf(msg, size, "%u members: svpub sends INT32 + Quality pairs", s->nmembers);
		return -EINVAL;
	}
	for (unsigned m = 0; m < s->nmembers; m += 2, n++) {
		const struct sv_dataset_cfg_member *v = &s->members[m], *q = &s->members[m + 1];
		char unit[4], phase;
		const char *at;

		if (v->type != SV_DA_INT32 || q->type != SV_DA_QUALITY) {
			snprintf(msg, size, "members %u and %u (%s, %s) are %s and %s: svpub sends INT32 + Quality pairs", m,
				 m + 1, v->name, q->name, sv_da_type_names[v->type], sv_da_type_names[q->type]);
			return -EINVAL;
		}
		if (!(v->scale > 0)) {
			snprintf(msg, size, "member %u (%s): scale %g: svpub needs a positive scale", m, v->name, v->scale);
			return -EINVAL;
		}
		sv_dataset_guess(v->name, unit, &phase);
		at = strchr("ABCN", phase ? phase : '?');
		if (!unit[0] || !at) {
			snprintf(msg, size, "member %u (%s): no signal channel fits it (a TCTR/Amp current or a TVTR/Vol "
				 "voltage of phase A, B, C or N, named [prefix]TCTRn.Amp...)", m, v->name);
			return -EINVAL;
		}
		map[n] = (uint8_t)((unit[0] == 'A' ? 0 : 4) + (at - "ABCN"));
		conv[n] = (unit[0] == 'A' ? SV_CURRENT_LSB_A : SV_VOLTAGE_LSB_V) / v->scale;
	}
	return (int)n;
}

/* The blocks @c->scl.svcb names, or every block of the IED, into @sel; their number, or -EINVAL. */
static int scl_select(const struct svpub_config *c, const struct sv_scl *scl, const char *ied, int *sel,
		      unsigned max, char *msg, size_t size)
{
	char list[SVPUB_PATH_LEN], *save = NULL;
	unsigned n = 0;

	if (!c->scl.svcb[0]) {
		for (unsigned i = 0; i < scl->ncb && n < max; i++)
			if (!strcmp(scl->cb[i].ied, ied))
				sel[n++] = (int)i;
		return (int)n;
	}
	snprintf(list, sizeof(list), "%s", c->scl.svcb);
	for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int i = sv_scl_find_cb(scl, ied, t);

		if (i < 0) {
			snprintf(msg, size, "%s: IED %s has no SampledValueControl %s (scl.svcb: LD/NAME)", scl->file, ied,
				 t);
			return -EINVAL;
		}
		if (n < max)
			sel[n++] = i;
	}
	return (int)n;
}

static int scl_stream(struct svpub_stream_cfg *st, const struct sv_scl *scl, int ci, char *msg, size_t size)
{
	const struct sv_scl_cb *cb = &scl->cb[ci];
	const char *why = NULL;

	if (cb->bad) {
		/* the file's own words, with their line */
		for (unsigned d = 0; d < scl->ndiag; d++) {
			if (scl->diag[d].cb == ci && scl->diag[d].severity == SV_SCL_ERROR) {
				sv_scl_diag_format(scl, &scl->diag[d], msg, size);
				snprintf(msg + strlen(msg), size - strlen(msg), "; svpub cannot publish it (choose others with "
					 "--svcb LD/NAME)");
				return -EINVAL;
			}
		}
		why = "the file describes it incompletely";
	} else if (cb->opts & SV_SCL_OPT_SECURITY) {
		why = "SmvOpts security: svpub does not sign frames (IEC 62351-6)";
	} else if (cb->opts & SV_SCL_OPT_SYNCHSRC) {
		why = "SmvOpts synchSourceId: svpub sends no gmIdentity";
	} else if (cb->smp_mod == SV_SMPMOD_SECONDS_PER_SAMPLE) {
		why = "smpMod SecPerSmp: svpub publishes at least one sample a second";
	} else if (cb->ds.nmembers > SVPUB_MAX_MEMBERS) {
		why = "its dataset has more members than svpub sends (32)";
	} else if (cb->smp_mod == SV_SMPMOD_PER_PERIOD && cb->nominal_hz && cb->nominal_hz != 50 &&
		   cb->nominal_hz != 60) {
		why = "a nominal frequency other than 50 or 60 Hz";
	}
	if (why) {
		snprintf(msg, size, "%s:%u: %s: %s", scl->file, cb->line, cb->ref, why);
		return -EINVAL;
	}
	snprintf(st->svid, sizeof(st->svid), "%s", cb->svid);
	st->appid = cb->appid;
	memcpy(st->dst, cb->mac, 6);
	st->vlan_id = cb->vlan_id;
	st->vlan_priority = cb->vlan_priority;
	st->conf_rev = cb->conf_rev;
	snprintf(st->datset, sizeof(st->datset), "%s", cb->opts & SV_SCL_OPT_DATSET ? cb->datset_ref : "");
	st->refrtm = cb->opts & SV_SCL_OPT_REFRTM;
	st->smprate = cb->opts & SV_SCL_OPT_SMPRATE;
	st->smpmod = SVPUB_AUTO; /* sent when not SmpPerPeriod */
	if (cb->smp_mod == SV_SMPMOD_PER_SECOND) {
		snprintf(st->profile, sizeof(st->profile), "F4800S2I4U4");
		st->sample_rate = cb->smp_rate;
	} else {
		unsigned hz = cb->nominal_hz ? cb->nominal_hz : 50; /* said by svpub when the file is silent */

		snprintf(st->profile, sizeof(st->profile), "9-2le-%uhz", hz);
		st->sample_rate = (uint32_t)cb->smp_rate * hz;
	}
	st->asdus = cb->nof_asdu;
	st->nmembers = cb->ds.nmembers;
	for (unsigned m = 0; m < cb->ds.nmembers; m++) {
		snprintf(st->members[m].name, sizeof(st->members[m].name), "%s", cb->ds.m[m].name);
		st->members[m].type = cb->ds.m[m].type;
		st->members[m].scale = cb->ds.m[m].scale;
	}
	return 0;
}

int svpub_config_from_scl(struct svpub_config *c, const struct sv_scl *scl, char *msg, size_t size)
{
	static struct svpub_config defaults; /* one stream's defaults (setup: single-threaded) */
	int sel[SVPUB_MAX_STREAMS], n, err;
	const char *ied = c->scl.ied[0] ? c->scl.ied : NULL;

	if (!ied) {
		unsigned np = sv_scl_publishers(scl, &ied);

		if (np != 1) {
			snprintf(msg, size, "%s: %s: choose the merging unit with --ied NAME (scl.ied)%s%s", scl->file,
				 np ? "several IEDs have SV control blocks" : "no IED has an SV control block",
				 np ? ", e.g. " : "", np ? ied : "");
			return -EINVAL;
		}
	}
	n = scl_select(c, scl, ied, sel, SVPUB_MAX_STREAMS, msg, size);
	if (n < 0)
		return n;
	if (!n) {
		snprintf(msg, size, "%s: IED %s has no SampledValueControl", scl->file, ied);
		return -EINVAL;
	}
	if (svpub_config_init(&defaults))
		return -EINVAL;
	for (int k = 0; k < n; k++) {
		c->streams[k] = defaults.streams[0];
		err = scl_stream(&c->streams[k], scl, sel[k], msg, size);
		if (err)
			return err;
	}
	c->nstreams = (unsigned)n;
	return 0;
}
