// SPDX-License-Identifier: Apache-2.0
#include "svpub_config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "sv_record.h"

const char *const svpub_backend_names[] = { "af_packet", "af_xdp", "pcap", NULL };
static const char *const clock_names[] = { "tai", "realtime", NULL };
static const char *const late_names[] = { "send", "skip", NULL };
static const char *const source_names[] = { "sine", "replay", NULL };
static const char *const tristate_names[] = { "auto", "on", "off", NULL };
static const char *const xdp_mode_names[] = { "auto", "skb", "native", NULL };
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
	SV_CFG_KEY_SECTION(S, signal, "signal", signal_table, "what the samples carry"),
	SV_CFG_KEY_END,
};
#undef S

#define P struct svpub_af_packet_cfg
static const struct sv_cfg_key af_packet_table[] = {
	SV_CFG_KEY_BOOL(P, qdisc_bypass, "qdisc_bypass", "true", "PACKET_QDISC_BYPASS (off for txtime/tc)"),
	SV_CFG_KEY_BOOL(P, timestamps, "timestamps", "true", "SO_TIMESTAMPING transmit timestamps"),
	SV_CFG_KEY_BOOL(P, hw_timestamps, "hw_timestamps", "true", "try hardware stamps (SIOCSHWTSTAMP) first"),
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
	SV_CFG_KEY_STRING(C, interface, "interface", "", "network interface (af_packet, af_xdp)"),
	SV_CFG_KEY_ENUM(C, backend, "backend", svpub_backend_names, "af_packet", "transmit back-end"),
	SV_CFG_KEY_STRING(C, output, "output", "", "pcap back-end: file to write (.pcap or .pcapng)"),
	SV_CFG_KEY_ENUM(C, clock, "clock", clock_names, "tai", "clock of the deadlines and timestamps"),
	SV_CFG_KEY_INT(C, cpu, "cpu", -1, 1023, "-1", "pin the scheduler thread to this CPU; -1 = no"),
	SV_CFG_KEY_UINT(C, priority, "priority", 0, 99, "0", "SCHED_FIFO priority; 0 = normal scheduling"),
	SV_CFG_KEY_BOOL(C, mlockall, "mlockall", "false", "lock memory (no page faults while pacing)"),
	SV_CFG_KEY_DOUBLE(C, duration, "duration", 0, 1e9, "0", "seconds to publish; 0 = until stopped"),
	SV_CFG_KEY_STRING(C, record, "record", "", "per-frame record file; empty = none"),
	SV_REC_CFG_ROWS(C, "record"),
	SV_CFG_KEY_ENUM(C, late_policy, "late", late_names, "send",
			"a frame past its deadline by more than late_threshold_us: send it late, or skip it"),
	SV_CFG_KEY_UINT(C, late_threshold_us, "late_threshold_us", 0, 1000000, "100", "when a frame is late"),
	SV_CFG_KEY_BOOL(C, unpaced, "unpaced", "false", "send as fast as possible (throughput tests)"),
	SV_CFG_KEY_UINT(C, batch, "batch", 1, 1024, "64", "unpaced: frames per send call"),
	SV_CFG_KEY_BOOL(C, status, "status", "true", "one status line per second on stderr"),
	SV_CFG_KEY_SECTION(C, af_packet, "af_packet", af_packet_table, "AF_PACKET back-end"),
	SV_CFG_KEY_SECTION(C, af_xdp, "af_xdp", af_xdp_table, "AF_XDP back-end"),
	SV_CFG_KEY_LIST(C, streams, nstreams, "streams", stream_table, "1", "the streams to publish"),
	SV_CFG_KEY_END,
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

/* A rule broken by stream @i's key @key, whose value is @value (NULL: no single value to point at). */
static int rerr(struct sv_cfg_error *err, const char **bad, unsigned i, const char *key, const char *value,
		const char *msg)
{
	snprintf(err->path, sizeof(err->path), "streams[%u].%s", i, key);
	snprintf(err->msg, sizeof(err->msg), "%s", msg);
	snprintf(err->text, sizeof(err->text), "%s: %s", err->path, msg);
	err->line = err->column = 0;
	*bad = value;
	return -EINVAL;
}

static int resolve(struct svpub_config *c, struct sv_cfg_error *err, const char **bad)
{
	static const uint8_t zero[6];

	memset(err, 0, sizeof(*err));
	*bad = NULL;
	{
		uint32_t keep;

		if (sv_record_parse_keep(c->record_keep, &keep)) {
			snprintf(err->path, sizeof(err->path), "record_keep");
			snprintf(err->msg, sizeof(err->msg), "'%s' is not " SV_REC_KEEP_SYNTAX, c->record_keep);
			snprintf(err->text, sizeof(err->text), "%s: %s", err->path, err->msg);
			*bad = c->record_keep;
			return -EINVAL;
		}
	}
	if (!c->nstreams) {
		snprintf(err->text, sizeof(err->text), "streams: at least one stream is needed");
		return -EINVAL;
	}
	for (unsigned i = 0; i < c->nstreams; i++) {
		struct svpub_stream_cfg *s = &c->streams[i];
		const struct sv_profile *p = svpub_stream_profile(s);
		uint32_t rate, asdus;

		if (!p)
			return rerr(err, bad, i, "profile", s->profile,
				    "unknown profile: 9-2le-50hz, 9-2le-60hz, 9-2le-256-50hz, 9-2le-256-60hz, F4800S2I4U4 "
				    "or F14400S6I4U4 (see --help-config)");
		rate = svpub_stream_rate(s);
		asdus = svpub_stream_asdus(s);
		if (rate % asdus)
			return rerr(err, bad, i, "asdus", NULL, "the sample rate must be a multiple of the ASDUs per frame");
		if (rate > 65536 && s->smp_synch == SV_SMPSYNCH_GLOBAL)
			return rerr(err, bad, i, "sample_rate", NULL,
				    "smpCnt is 16 bits: at most 65536 samples/s with smpSynch 2");
		if (!s->svid[0])
			snprintf(s->svid, sizeof(s->svid), "svpub%02u", i + 1);
		if (!s->appid)
			s->appid = (uint16_t)(0x4000 + i);
		if (!memcmp(s->dst, zero, 6)) {
			static const uint8_t base[6] = { 0x01, 0x0c, 0xcd, 0x04, 0x00, 0x00 };

			memcpy(s->dst, base, 6);
			s->dst[4] = (uint8_t)(i >> 8);
			s->dst[5] = (uint8_t)i;
		}
		if (!s->signal.frequency)
			s->signal.frequency = svpub_stream_nominal_hz(s);
		if (s->signal.source == SVPUB_SOURCE_REPLAY && !s->signal.replay[0])
			return rerr(err, bad, i, "signal.replay", NULL, "source replay needs a capture file");
		for (unsigned e = 0; e < s->signal.nevents; e++) {
			const char *ph = s->signal.events[e].phases;
			char key[48];

			if (ph[strspn(ph, "abcn")]) {
				snprintf(key, sizeof(key), "signal.events[%u].phases", e);
				return rerr(err, bad, i, key, ph, "phases are letters of \"abcn\"");
			}
		}
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

/* Adds the position of @value at err->path in @file to @err, when the file holds that value there. */
static void error_position(const char *file, const char *value, struct sv_cfg_error *err)
{
	unsigned line, column;

	if (!file || !value || !err->path[0])
		return;
	/* Only when the file holds the offending value: an override (--set) may have replaced it. */
	if (sv_config_locate(file, err->path, value, &line, &column))
		return;
	snprintf(err->file, sizeof(err->file), "%s", file);
	err->line = line;
	err->column = column;
	snprintf(err->text, sizeof(err->text), "%s:%u:%u: %s: %s", err->file, err->line, err->column, err->path,
		 err->msg);
}

int svpub_config_resolve_file(struct svpub_config *c, const char *file, struct sv_cfg_error *err)
{
	const char *bad;
	int ret = resolve(c, err, &bad);

	if (ret)
		error_position(file, bad, err);
	return ret;
}

int svpub_config_resolve(struct svpub_config *c, struct sv_cfg_error *err)
{
	return svpub_config_resolve_file(c, NULL, err);
}
