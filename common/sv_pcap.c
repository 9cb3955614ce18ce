/* SPDX-License-Identifier: Apache-2.0 */
/* Captures in and out: libpcap for reading (pcap and pcapng) and classic pcap writing; pcapng writing here. */
#include "sv_pcap.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_log.h"

#define SV_PCAP_DEFAULT_SNAPLEN 262144u

struct sv_pcap_reader {
	pcap_t *p;
	uint64_t index;
	uint32_t resolution_ns;
	bool pcapng;
	bool peeked;	/* header read by us (not for stdin): format and resolution known */
	uint64_t ts_clamped;
	char path[256];
	char error[PCAP_ERRBUF_SIZE + 64]; /* why the read stopped early, "" while it has not */
};

/* pcapng block types and options (draft-ietf-opsawg-pcapng §4). */
#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_IDB 0x00000001u
#define PCAPNG_EPB 0x00000006u
#define PCAPNG_BOM 0x1A2B3C4Du
#define PCAPNG_OPT_END 0
#define PCAPNG_OPT_SHB_USERAPPL 4
#define PCAPNG_OPT_IF_NAME 2
#define PCAPNG_OPT_IF_TSRESOL 9

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t x;

	memcpy(&x, p, 4);
	return swap ? __builtin_bswap32(x) : x;
}

static uint16_t rd16(const uint8_t *p, bool swap)
{
	uint16_t x;

	memcpy(&x, p, 2);
	return swap ? __builtin_bswap16(x) : x;
}

static uint32_t tsresol_to_ns(uint8_t v)
{
	if (v & 0x80) { /* negative power of two */
		unsigned e = v & 0x7f;

		if (e >= 30)
			return 1;
		return (uint32_t)((1000000000ull + (1ull << e) / 2) >> e) ?: 1;
	}
	if (v >= 9)
		return 1;
	uint32_t ns = 1;

	for (unsigned i = v; i < 9; i++)
		ns *= 10;
	return ns;
}

/*
 * libpcap does not tell the file's own timestamp resolution once it has scaled to nanoseconds, so read it
 * from the header: the classic magic, or if_tsresol of the first pcapng interface (default 10^-6).
 */
static void peek_resolution(struct sv_pcap_reader *r, const uint8_t *b, size_t n)
{
	if (n < 4)
		return;
	uint32_t magic = rd32(b, false);

	switch (magic) {
	case 0xa1b2c3d4u:
	case 0xd4c3b2a1u:
		r->resolution_ns = 1000;
		return;
	case 0xa1b23c4du:
	case 0x4d3cb2a1u:
		r->resolution_ns = 1;
		return;
	case PCAPNG_SHB:
		break;
	default:
		return;
	}
	r->pcapng = true;
	if (n < 12)
		return;
	bool swap = rd32(b + 8, false) != PCAPNG_BOM;
	uint32_t shb_len = rd32(b + 4, swap);

	if (shb_len < 28 || (size_t)shb_len + 20 > n)
		return;
	const uint8_t *idb = b + shb_len;
	uint32_t idb_len = rd32(idb + 4, swap);

	if (rd32(idb, swap) != PCAPNG_IDB || idb_len < 20 || (size_t)shb_len + idb_len > n)
		return;
	r->resolution_ns = 1000; /* if_tsresol absent: microseconds */
	const uint8_t *o = idb + 16, *end = idb + idb_len - 4;

	while (o + 4 <= end) {
		uint16_t code = rd16(o, swap), len = rd16(o + 2, swap);

		if (code == PCAPNG_OPT_END || o + 4 + len > end)
			break;
		if (code == PCAPNG_OPT_IF_TSRESOL && len >= 1)
			r->resolution_ns = tsresol_to_ns(o[4]);
		o += 4 + ((len + 3u) & ~3u);
	}
}

int sv_pcap_open_read(struct sv_pcap_reader **out, const char *path)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct sv_pcap_reader *r;
	FILE *f;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	snprintf(r->path, sizeof(r->path), "%s", path);
	if (strcmp(path, "-") == 0) {
		f = stdin;
	} else {
		f = fopen(path, "rb");
		if (!f) {
			err = -errno;
			sv_err("%s: cannot open: %s", path, strerror(errno));
			goto out_free;
		}
		uint8_t head[4096];
		size_t n = fread(head, 1, sizeof(head), f);

		peek_resolution(r, head, n);
		r->peeked = true;
		if (fseek(f, 0, SEEK_SET) != 0) {
			err = -errno;
			sv_err("%s: cannot seek: %s", path, strerror(errno));
			fclose(f);
			goto out_free;
		}
	}
	/* On success pcap_close() closes @f; on failure it stays ours (as in pcap_open_offline()). */
	r->p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!r->p) {
		err = -EINVAL;
		sv_err("%s: not a capture file libpcap reads: %s", path, errbuf);
		if (f != stdin)
			fclose(f);
		goto out_free;
	}
	int dlt = pcap_datalink(r->p);

	if (dlt != DLT_EN10MB) {
		const char *name = pcap_datalink_val_to_name(dlt);

		err = -EPROTONOSUPPORT;
		sv_err("%s: link type %d (%s) is not Ethernet; SV is read from Ethernet captures only "
		       "(capture on the interface, not on 'any')", path, dlt, name ? name : "unknown");
		goto out_close;
	}
	*out = r;
	return 0;

out_close:
	pcap_close(r->p);
out_free:
	free(r);
	return err;
}

int sv_pcap_next(struct sv_pcap_reader *r, struct sv_pcap_pkt *pkt)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int rc = pcap_next_ex(r->p, &h, &data);

	if (rc == PCAP_ERROR_BREAK)
		return 0;
	if (rc != 1) {
		snprintf(r->error, sizeof(r->error), "read error after packet %llu: %s", (unsigned long long)r->index,
			 pcap_geterr(r->p));
		sv_err("%s: %s", r->path, r->error);
		return -EIO;
	}
	pkt->data = data;
	pkt->caplen = h->caplen;
	pkt->origlen = h->len;
	/* Opened with nanosecond precision: tv_usec holds nanoseconds. */
	pkt->ts_ns = sv_pcap_ts_ns((int64_t)h->ts.tv_sec, (int64_t)h->ts.tv_usec, &r->ts_clamped);
	pkt->index = ++r->index;
	return 1;
}

int64_t sv_pcap_ts_ns(int64_t sec, int64_t nsec, uint64_t *clamped)
{
	int64_t ns;

	/* A pcapng timestamp is 64 bits in the interface's own unit (and if_tsoffset adds seconds): in
	 * nanoseconds it need not fit an int64_t (UBSan found 2^64 - 1 us). */
	if (__builtin_mul_overflow(sec, (int64_t)1000000000, &ns) || __builtin_add_overflow(ns, nsec, &ns) ||
	    ns > SV_PCAP_TS_MAX_NS || ns < -SV_PCAP_TS_MAX_NS) {
		(*clamped)++;
		return sec < 0 ? -SV_PCAP_TS_MAX_NS : SV_PCAP_TS_MAX_NS;
	}
	return ns;
}

uint64_t sv_pcap_ts_clamped(const struct sv_pcap_reader *r)
{
	return r->ts_clamped;
}

const char *sv_pcap_read_error(const struct sv_pcap_reader *r)
{
	return r->error[0] ? r->error : NULL;
}

uint32_t sv_pcap_resolution_ns(const struct sv_pcap_reader *r)
{
	return r->resolution_ns;
}

const char *sv_pcap_format_name(const struct sv_pcap_reader *r)
{
	if (!r->peeked)
		return "unknown";
	return r->pcapng ? "pcapng" : "pcap";
}

void sv_pcap_close_read(struct sv_pcap_reader *r)
{
	if (!r)
		return;
	pcap_close(r->p);
	free(r);
}

/* ------------------------------------------------------------------------------------------------ */

struct sv_pcap_writer {
	enum sv_pcap_format format;
	uint32_t snaplen;
	int err; /* first error, sticky */
	pcap_t *dead;
	pcap_dumper_t *dumper;
	FILE *f; /* pcapng */
	char path[256];
};

enum sv_pcap_format sv_pcap_format_for_path(const char *path)
{
	size_t n = strlen(path);

	if ((n >= 7 && strcmp(path + n - 7, ".pcapng") == 0) || (n >= 5 && strcmp(path + n - 5, ".ntar") == 0))
		return SV_PCAP_FORMAT_PCAPNG;
	return SV_PCAP_FORMAT_PCAP;
}

static void ng_put(struct sv_pcap_writer *w, const void *p, size_t n)
{
	if (!w->err && fwrite(p, 1, n, w->f) != n)
		w->err = -(errno ?: EIO);
}

static void ng_put32(struct sv_pcap_writer *w, uint32_t x)
{
	ng_put(w, &x, 4);
}

static void ng_put_opt(struct sv_pcap_writer *w, uint16_t code, const void *val, uint16_t len)
{
	static const uint8_t zero[4];
	uint16_t hdr[2] = { code, len };

	ng_put(w, hdr, 4);
	ng_put(w, val, len);
	ng_put(w, zero, (4u - (len & 3u)) & 3u);
}

static size_t opt_size(size_t len)
{
	return 4 + ((len + 3u) & ~(size_t)3u);
}

static int ng_write_headers(struct sv_pcap_writer *w, const char *ifname)
{
	static const char appl[] = "svkit " SVKIT_VERSION;
	uint16_t applen = (uint16_t)strlen(appl);
	uint16_t iflen = ifname ? (uint16_t)strnlen(ifname, 64) : 0;
	uint8_t tsresol = 9;
	uint32_t shb_len = 28 + (uint32_t)opt_size(applen) + 4;
	uint32_t idb_len = 20 + (uint32_t)opt_size(1) + (iflen ? (uint32_t)opt_size(iflen) : 0) + 4;
	int64_t section_len = -1;
	uint16_t ver[2] = { 1, 0 };
	uint16_t link[2] = { 1 /* LINKTYPE_ETHERNET */, 0 };

	ng_put32(w, PCAPNG_SHB);
	ng_put32(w, shb_len);
	ng_put32(w, PCAPNG_BOM);
	ng_put(w, ver, 4);
	ng_put(w, &section_len, 8);
	ng_put_opt(w, PCAPNG_OPT_SHB_USERAPPL, appl, applen);
	ng_put32(w, PCAPNG_OPT_END);
	ng_put32(w, shb_len);

	ng_put32(w, PCAPNG_IDB);
	ng_put32(w, idb_len);
	ng_put(w, link, 4);
	ng_put32(w, w->snaplen);
	if (iflen)
		ng_put_opt(w, PCAPNG_OPT_IF_NAME, ifname, iflen);
	ng_put_opt(w, PCAPNG_OPT_IF_TSRESOL, &tsresol, 1);
	ng_put32(w, PCAPNG_OPT_END);
	ng_put32(w, idb_len);
	return w->err;
}

int sv_pcap_open_write(struct sv_pcap_writer **out, const char *path, enum sv_pcap_format format,
		       uint32_t snaplen, const char *ifname)
{
	struct sv_pcap_writer *w;
	int err;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->format = format;
	w->snaplen = snaplen ? snaplen : SV_PCAP_DEFAULT_SNAPLEN;
	snprintf(w->path, sizeof(w->path), "%s", path);

	if (format == SV_PCAP_FORMAT_PCAP) {
		w->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, (int)w->snaplen,
								PCAP_TSTAMP_PRECISION_NANO);
		if (!w->dead) {
			err = -ENOMEM;
			goto out_free;
		}
		w->dumper = pcap_dump_open(w->dead, path);
		if (!w->dumper) {
			err = -EIO;
			sv_err("%s: cannot create: %s", path, pcap_geterr(w->dead));
			goto out_close_dead;
		}
		*out = w;
		return 0;
	}
	if (format != SV_PCAP_FORMAT_PCAPNG) {
		err = -EINVAL;
		goto out_free;
	}
	w->f = fopen(path, "wb");
	if (!w->f) {
		err = -errno;
		sv_err("%s: cannot create: %s", path, strerror(errno));
		goto out_free;
	}
	err = ng_write_headers(w, ifname);
	if (err) {
		sv_err("%s: write failed: %s", path, strerror(-err));
		fclose(w->f);
		goto out_free;
	}
	*out = w;
	return 0;

out_close_dead:
	pcap_close(w->dead);
out_free:
	free(w);
	return err;
}

int sv_pcap_write(struct sv_pcap_writer *w, const uint8_t *data, uint32_t caplen, uint32_t origlen,
		  int64_t ts_ns)
{
	if (w->err)
		return w->err;
	if (caplen > w->snaplen)
		caplen = w->snaplen;
	if (origlen < caplen)
		origlen = caplen;

	if (w->format == SV_PCAP_FORMAT_PCAP) {
		struct pcap_pkthdr h = {
			.caplen = caplen,
			.len = origlen,
		};
		int64_t sec = ts_ns / 1000000000, nsec = ts_ns % 1000000000;

		if (nsec < 0) {
			nsec += 1000000000;
			sec--;
		}
		h.ts.tv_sec = (time_t)sec;
		h.ts.tv_usec = (suseconds_t)nsec; /* nanosecond dumper: the field carries ns */
		errno = 0;
		pcap_dump((u_char *)w->dumper, &h, data);
		if (ferror(pcap_dump_file(w->dumper)))
			w->err = -(errno ?: EIO); /* the failed fwrite's reason (ENOSPC), not a blanket EIO */
		return w->err;
	}

	static const uint8_t zero[4];
	uint32_t pad = (4u - (caplen & 3u)) & 3u;
	uint32_t blen = 32 + caplen + pad;
	uint64_t ts = (uint64_t)ts_ns; /* if_tsresol 9: units of 1 ns since 1970 */
	uint32_t b[7] = { PCAPNG_EPB, blen, 0, (uint32_t)(ts >> 32), (uint32_t)ts, caplen, origlen };

	ng_put(w, b, sizeof(b));
	ng_put(w, data, caplen);
	ng_put(w, zero, pad);
	ng_put32(w, blen);
	return w->err;
}

int sv_pcap_flush(struct sv_pcap_writer *w)
{
	if (w->err)
		return w->err;
	if (w->format == SV_PCAP_FORMAT_PCAP) {
		errno = 0;
		if (pcap_dump_flush(w->dumper) != 0)
			w->err = -(errno ?: EIO);
	} else if (fflush(w->f) != 0) {
		w->err = -(errno ?: EIO);
	}
	return w->err;
}

int sv_pcap_close_write(struct sv_pcap_writer *w)
{
	int err;

	if (!w)
		return 0;
	sv_pcap_flush(w);
	err = w->err;
	if (w->format == SV_PCAP_FORMAT_PCAP) {
		pcap_dump_close(w->dumper);
		pcap_close(w->dead);
	} else if (fclose(w->f) != 0 && !err) {
		err = -(errno ?: EIO);
	}
	if (err)
		sv_err("%s: write failed: %s", w->path, strerror(-err));
	free(w);
	return err;
}
