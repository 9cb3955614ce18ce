/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading and writing captures.
 *
 * Reading goes through libpcap, which reads both classic pcap (microsecond or nanosecond magic) and pcapng.
 * Files are opened with nanosecond precision (pcap_open_offline_with_tstamp_precision), so a nanosecond
 * file keeps every digit and a microsecond file is scaled by libpcap. Only Ethernet (DLT_EN10MB) is read:
 * SV is a layer-2 protocol and svkit's codec decodes whole Ethernet frames; any other link type is refused
 * at open with an error naming it.
 *
 * Writing: classic pcap through libpcap's dumper (nanosecond magic 0xa1b23c4d), or pcapng written here
 * (libpcap 1.10 has no pcapng writer): one Section Header Block, one Interface Description Block with
 * if_tsresol = 9 (nanoseconds), then one Enhanced Packet Block per frame. Both open in Wireshark/tshark.
 *
 * Timestamps are int64_t nanoseconds since the epoch of whatever clock the capture used (usually REALTIME,
 * i.e. UTC); the library does not know which and callers should say so where they report it.
 * The library never prints: failures return -errno and say why through sv_log().
 */
#ifndef SV_PCAP_H
#define SV_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sv_pcap_reader;
struct sv_pcap_writer;

/* One packet from a capture; @data points into the reader and is valid until the next call. */
struct sv_pcap_pkt {
	const uint8_t *data;
	uint32_t caplen;  /* octets in @data */
	uint32_t origlen; /* octets on the wire (caplen < origlen: the capture truncated it) */
	int64_t ts_ns;	  /* capture timestamp, ns since the epoch of the capture's clock (clamped: below) */
	uint64_t index;	  /* 1-based packet number in the file, as Wireshark numbers frames */
};

enum sv_pcap_format {
	SV_PCAP_FORMAT_PCAP = 0, /* classic libpcap, nanosecond magic */
	SV_PCAP_FORMAT_PCAPNG,
};

/*
 * Opens @path for reading ("-" is stdin). Returns 0 and sets *@r, or:
 * -ENOENT/-EACCES/... when the file cannot be opened, -EINVAL when it is not a capture libpcap reads,
 * -EPROTONOSUPPORT when its link type is not Ethernet. Each failure is logged with the file name.
 */
int sv_pcap_open_read(struct sv_pcap_reader **r, const char *path);

/* Reads the next packet. Returns 1 with *@pkt filled, 0 at the end of the file, -EIO on a read error
 * (a truncated or corrupt file; logged, and kept for sv_pcap_read_error()). No allocation. */
int sv_pcap_next(struct sv_pcap_reader *r, struct sv_pcap_pkt *pkt);

/* Why the read stopped before the end of the file ("read error after packet N: <libpcap's reason>"), or
 * NULL while sv_pcap_next() has not failed. Valid until sv_pcap_close_read(). */
const char *sv_pcap_read_error(const struct sv_pcap_reader *r);

/*
 * Timestamps are kept within +-SV_PCAP_TS_MAX_NS (2^62 ns: 1823..2116), so that the difference of any two
 * never overflows an int64_t. A file time beyond (a pcapng timestamp is 64 bits in the interface's unit,
 * plus if_tsoffset seconds: up to ~2^64 us) is clamped to the bound and counted: sv_pcap_ts_clamped().
 */
#define SV_PCAP_TS_MAX_NS (INT64_C(1) << 62)
uint64_t sv_pcap_ts_clamped(const struct sv_pcap_reader *r);
/* @sec seconds + @nsec nanoseconds as ns, clamped as above (then ++*@clamped). Checked arithmetic. */
int64_t sv_pcap_ts_ns(int64_t sec, int64_t nsec, uint64_t *clamped);

/* Resolution of the file's own timestamps in ns (1000 for a microsecond pcap, 1 for nanosecond pcap or
 * a pcapng interface with if_tsresol 9), 0 when unknown. Digits below it in ts_ns are zeros, not data. */
uint32_t sv_pcap_resolution_ns(const struct sv_pcap_reader *r);

/* "pcap" or "pcapng"; "unknown" when read from stdin (not peeked). */
const char *sv_pcap_format_name(const struct sv_pcap_reader *r);

void sv_pcap_close_read(struct sv_pcap_reader *r);

/*
 * Creates @path (truncating it) for writing Ethernet frames in @format, with snapshot length @snaplen
 * (0: 262144). @ifname (may be NULL) is recorded in the pcapng interface block. Returns 0 or -errno.
 */
int sv_pcap_open_write(struct sv_pcap_writer **w, const char *path, enum sv_pcap_format format,
		       uint32_t snaplen, const char *ifname);

/* Picks pcapng for names ending in ".pcapng" or ".ntar", pcap otherwise. */
enum sv_pcap_format sv_pcap_format_for_path(const char *path);

/* Appends one frame. @caplen octets of @data are written (cut to the snapshot length); @origlen is the
 * length on the wire (>= caplen). Buffered stdio: no allocation per frame. Returns 0 or -errno. */
int sv_pcap_write(struct sv_pcap_writer *w, const uint8_t *data, uint32_t caplen, uint32_t origlen,
		  int64_t ts_ns);

/* Flushes buffered frames to the file. Returns 0 or -errno. */
int sv_pcap_flush(struct sv_pcap_writer *w);

/* Flushes and closes. Returns 0 or the first write error seen (-errno); @w is freed in every case. */
int sv_pcap_close_write(struct sv_pcap_writer *w);

#endif /* SV_PCAP_H */
