// SPDX-License-Identifier: Apache-2.0
/*
 * Interop generator: encodes N frames of random shapes with svkit's encoder (1 to 8 ASDUs, every optional
 * field on or off, VLAN or not, simulation bit, long svIDs that force long-form lengths, random values and
 * qualities), writes them to a pcap, and prints svkit's own decode of each ASDU as one line of
 * tab-separated fields for tshark_shapes.py to compare with Wireshark's dissector.
 * usage: sv_shapes OUT.pcap N SEED
 */
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sv_codec.h"

static uint64_t rng;

static uint32_t rnd(void)
{
	/* xorshift64*: deterministic per seed */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 2685821657736338717ull) >> 32);
}

static struct sv_view v, d;

int main(int argc, char **argv)
{
	static const char idchars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$/.-";
	static uint8_t ids[8][130], ds[8][130], data[8][64], refr[8][8], gm[8][8], buf[2048];
	static const uint8_t dst[6] = { 0x01, 0x0c, 0xcd, 0x04, 0x00, 0x01 }, src[6] = { 0x02, 0, 0, 0, 0, 0x42 };
	struct pcap_pkthdr h = { 0 };
	pcap_dumper_t *dump;
	pcap_t *dead;
	long n;

	if (argc != 4) {
		fprintf(stderr, "usage: sv_shapes OUT.pcap N SEED\n");
		return 2;
	}
	n = strtol(argv[2], NULL, 10);
	rng = strtoull(argv[3], NULL, 10) | 1;
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	dump = pcap_dump_open(dead, argv[1]);
	if (!dump) {
		fprintf(stderr, "sv_shapes: %s\n", pcap_geterr(dead));
		return 1;
	}
	for (long f = 0; f < n; f++) {
		int len;

		memset(&v, 0, sizeof(v));
		v.dst = dst;
		v.src = src;
		v.vlan = rnd() & 1;
		v.vlan_pcp = (uint8_t)(rnd() & 7);
		v.vlan_id = (uint16_t)(rnd() & 0xfff);
		v.appid = (uint16_t)(0x4000 + (rnd() & 0x3fff));
		v.simulated = (rnd() & 3) == 0;
		v.noASDU = (uint16_t)(1 + rnd() % 8);
		for (unsigned i = 0; i < v.noASDU; i++) {
			struct sv_asdu *a = &v.asdu[i];
			/* mostly short ids, sometimes long ones for long-form BER lengths */
			unsigned idl = (rnd() & 7) ? 1 + rnd() % 20 : 100 + rnd() % 30;
			unsigned dsl = 1 + rnd() % 40;

			for (unsigned k = 0; k < idl; k++)
				ids[i][k] = (uint8_t)idchars[rnd() % (sizeof(idchars) - 1)];
			for (unsigned k = 0; k < dsl; k++)
				ds[i][k] = (uint8_t)idchars[rnd() % (sizeof(idchars) - 1)];
			for (unsigned k = 0; k < 8; k++) {
				sv_put_be32(data[i] + 8 * k, rnd());
				sv_put_be32(data[i] + 8 * k + 4, rnd() & 0x3fff);
			}
			sv_utctime_put(refr[i], 1700000000000000000LL + (int64_t)rnd() * 1000, 0x0a);
			memcpy(gm[i], "\x00\x19\xfb\xff\xfe", 5);
			gm[i][5] = (uint8_t)rnd();
			gm[i][6] = (uint8_t)rnd();
			gm[i][7] = (uint8_t)rnd();
			a->svID = ids[i];
			a->svID_len = (uint16_t)idl;
			a->datSet = ds[i];
			a->datSet_len = (uint16_t)dsl;
			a->smpCnt = (uint16_t)rnd();
			a->confRev = rnd();
			a->smpSynch = (uint8_t)rnd();
			a->smpRate = (uint16_t)rnd();
			a->smpMod = (uint16_t)(rnd() % 3);
			a->refrTm = refr[i];
			a->gmIdentity = gm[i];
			a->seqData = data[i];
			a->seqData_len = 64;
			a->present = (uint8_t)(rnd() & 31);
		}
		len = sv_codec_encode(&v, buf, sizeof(buf));
		if (len < 0 || sv_codec_decode(buf, (size_t)len, &d, NULL)) {
			fprintf(stderr, "sv_shapes: frame %ld does not round-trip\n", f);
			return 1;
		}
		h.ts.tv_sec = 1700000000 + f;
		h.caplen = h.len = (bpf_u_int32)len;
		pcap_dump((u_char *)dump, &h, buf);
		/* one line per ASDU: frame appid length sim noASDU svID datSet smpCnt confRev smpSynch smpRate smpMod
		 * refrTm_ns gmIdentity values qualities (absent fields: empty) */
		for (unsigned i = 0; i < d.noASDU; i++) {
			const struct sv_asdu *a = &d.asdu[i];

			printf("%ld\t%u\t%u\t%d\t%u\t%.*s\t", f + 1, d.appid, d.length, d.simulated, d.noASDU, a->svID_len,
			       (const char *)a->svID);
			if (a->present & SV_HAS_DATSET)
				printf("%.*s\t", a->datSet_len, (const char *)a->datSet);
			else
				printf("\t");
			printf("%u\t%" PRIu32 "\t%u\t", a->smpCnt, a->confRev, a->smpSynch);
			if (a->present & SV_HAS_SMPRATE)
				printf("%u\t", a->smpRate);
			else
				printf("\t");
			if (a->present & SV_HAS_SMPMOD)
				printf("%u\t", a->smpMod);
			else
				printf("\t");
			if (a->present & SV_HAS_REFRTM)
				printf("%" PRId64 "\t", sv_utctime_get(a->refrTm));
			else
				printf("\t");
			if (a->present & SV_HAS_GMIDENTITY) {
				for (unsigned k = 0; k < 8; k++)
					printf("%02x", a->gmIdentity[k]);
				printf("\t");
			} else {
				printf("\t");
			}
			for (unsigned k = 0; k < sv_asdu_nchannels(a); k++)
				printf("%s%" PRId32, k ? "," : "", sv_asdu_value(a, k));
			printf("\t");
			for (unsigned k = 0; k < sv_asdu_nchannels(a); k++)
				printf("%s%" PRIu32, k ? "," : "", sv_asdu_quality(a, k));
			printf("\n");
		}
	}
	pcap_dump_close(dump);
	pcap_close(dead);
	return 0;
}
