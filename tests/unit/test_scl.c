/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SCL import (common/sv_scl.h): every real file of shared/scl imports with the streams written down here
 * after reading the files (not derived from the importer), and the faults of a file are named with its
 * file:line: a block without an SMV address, a dataset that does not resolve, a duplicate APPID on one
 * subnetwork, an unknown edition, a DOCTYPE (entity expansion), XML that is not well-formed.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sv_scl.h"

static char scl_dir[512];

static int setup(void **state)
{
	const char *shared = getenv("SVKIT_SHARED");

	(void)state;
	snprintf(scl_dir, sizeof(scl_dir), "%s/scl", shared && shared[0] ? shared : "../shared");
	return 0;
}

static struct sv_scl *load(const char *file)
{
	char path[700];
	struct sv_scl *s = NULL;
	struct sv_scl_error err;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", scl_dir, file);
	rc = sv_scl_load(&s, path, &err);
	if (rc == -ENOENT)
		return NULL;
	if (rc)
		fail_msg("%s", err.text);
	return s;
}

/* What one file defines, as read from the file by hand. */
struct want_cb {
	const char *ref, *svid, *datset_ref;
	bool usable;	 /* has an address and a dataset that resolves */
	const char *mac; /* "" when no address */
	uint16_t appid, vlan_id;
	uint8_t vlan_prio;
	uint32_t conf_rev;
	uint16_t smp_rate, smp_mod, nof_asdu;
	uint8_t opts;
	unsigned nmembers; /* 0 when the dataset does not resolve */
	uint16_t len;
	double scale0; /* first member's scale */
	unsigned line; /* of the SampledValueControl */
};

static void check_cb(const struct sv_scl *s, const struct want_cb *w)
{
	int i = -1;
	char mac[20];

	for (unsigned k = 0; k < s->ncb; k++)
		if (!strcmp(s->cb[k].ref, w->ref))
			i = (int)k;
	if (i < 0)
		fail_msg("%s: no control block %s", s->file, w->ref);
	const struct sv_scl_cb *cb = &s->cb[i];

	assert_string_equal(cb->svid, w->svid);
	assert_string_equal(cb->datset_ref, w->datset_ref);
	assert_int_equal(cb->line, w->line);
	assert_int_equal(!cb->bad, w->usable);
	assert_int_equal(cb->conf_rev, w->conf_rev);
	assert_int_equal(cb->smp_rate, w->smp_rate);
	assert_int_equal(cb->smp_mod, w->smp_mod);
	assert_int_equal(cb->nof_asdu, w->nof_asdu);
	assert_int_equal(cb->opts, w->opts);
	assert_int_equal(cb->has_address, w->mac[0] != '\0');
	if (cb->has_address) {
		snprintf(mac, sizeof(mac), "%02X-%02X-%02X-%02X-%02X-%02X", cb->mac[0], cb->mac[1], cb->mac[2], cb->mac[3],
			 cb->mac[4], cb->mac[5]);
		assert_string_equal(mac, w->mac);
		assert_int_equal(cb->appid, w->appid);
		assert_int_equal(cb->vlan_id, w->vlan_id);
		assert_int_equal(cb->vlan_priority, w->vlan_prio);
	}
	assert_int_equal(cb->ds.nmembers, w->nmembers);
	assert_int_equal(cb->ds.len, w->len);
	if (w->nmembers)
		assert_true(fabs(cb->ds.m[0].scale - w->scale0) < 1e-12);
}

/* A diagnostic of @s at @line whose message holds @needle. */
static bool has_diag(const struct sv_scl *s, unsigned line, const char *needle)
{
	for (unsigned i = 0; i < s->ndiag; i++)
		if (s->diag[i].line == line && strstr(s->diag[i].msg, needle))
			return true;
	return false;
}

/* The subscriptions of @ied, as "ref|ref" per entry (candidates), joined with ";" in file order. */
static void subs_of(const struct sv_scl *s, const char *ied, char *out, size_t size)
{
	out[0] = '\0';
	for (unsigned i = 0; i < s->nsub; i++) {
		if (strcmp(s->sub[i].ied, ied))
			continue;
		if (out[0])
			strncat(out, ";", size - strlen(out) - 1);
		for (unsigned k = 0; k < s->sub[i].ncand; k++) {
			if (k)
				strncat(out, "|", size - strlen(out) - 1);
			strncat(out, s->cb[s->sub[i].cand[k]].ref, size - strlen(out) - 1);
		}
	}
}

#define OPT_SYNCH SV_SCL_OPT_SMPSYNCH
#define OPT_RATE_DS_SRC (SV_SCL_OPT_SMPRATE | SV_SCL_OPT_DATSET | SV_SCL_OPT_SYNCHSRC)

static void test_locamation(void **state)
{
	static const struct want_cb mu01 = { "T_VMU_Alliander/MU01/LLN0.MSVCB01", "MU0101",
		"T_VMU_AllianderMU01/LLN0$PhsMeas1", true, "01-0C-CD-04-00-01", 0x4000, 0, 4, 1, 80, 0, 1, OPT_SYNCH,
		16, 64, 0.001, 80 };
	static const struct want_cb mu02 = { "T_VMU_Alliander/MU02/LLN0.MSVCB01", "MU0101",
		"T_VMU_AllianderMU02/LLN0$PhsMeas1", false, "", 0, 0, 0, 1, 80, 0, 1, OPT_SYNCH, 16, 64, 0.001, 534 };
	struct sv_scl *s = load("locamation_vmu.scd");
	char subs[512];

	(void)state;
	if (!s)
		skip();
	assert_string_equal(s->edition, "2007B4");
	assert_int_equal(s->ncb, 2);
	check_cb(s, &mu01);
	check_cb(s, &mu02);
	/* PhsMeas1: I01A..I01N TCTR AmpSv, V01A..V01N TVTR VolSv, instMag.i + q, sVC 0.001 and 0.01 */
	const struct sv_dataset *ds = &s->cb[0].ds;

	assert_string_equal(ds->m[0].name, "I01ATCTR1.AmpSv.instMag.i");
	assert_int_equal(ds->m[1].type, SV_DA_QUALITY);
	assert_string_equal(ds->m[8].name, "V01ATVTR1.VolSv.instMag.i");
	assert_true(fabs(ds->m[8].scale - 0.01) < 1e-12);
	assert_int_equal(ds->m[0].scale_src, SV_SCALE_SCL_SVC);
	assert_string_equal(ds->m[0].unit, "A");
	assert_int_equal(ds->m[6].phase, 'N');
	assert_string_equal(ds->m[14].unit, "V");
	assert_int_equal(ds->m[14].phase, 'N');
	assert_int_equal(s->cb[0].nominal_hz, 50); /* HzRtg */
	assert_true(has_diag(s, 534, "no SMV address"));
	subs_of(s, "SIP_Client", subs, sizeof(subs)); /* the blocks' IEDName lists */
	assert_string_equal(subs, "T_VMU_Alliander/MU01/LLN0.MSVCB01;T_VMU_Alliander/MU02/LLN0.MSVCB01");
	sv_scl_free(s);
}

static void test_data_binding(void **state)
{
	static const struct want_cb want[] = {
		{ "SMV_Publisher/CurrentTransformer/LLN0.fullSmv", "smv3",
		  "SMV_PublisherCurrentTransformer/LLN0$fullSmvsDataSet", true, "01-0C-CD-04-00-02", 0x0003, 0, 4, 1, 80,
		  0, 1, OPT_RATE_DS_SRC, 12, 48, 0.001, 162 },
		{ "SMV_Publisher/CurrentTransformer/LLN0.fullSmv2", "smv3",
		  "SMV_PublisherCurrentTransformer/LLN0$fullSmvsDataSet", false, "", 0, 0, 0, 1, 80, 0, 1,
		  OPT_RATE_DS_SRC, 12, 48, 0.001, 165 },
		{ "SMV_Publisher/CurrentTransformer/LLN0.voltageOnly", "smv2",
		  "SMV_PublisherCurrentTransformer/LLN0$voltageOnlysDataSet", true, "01-0C-CD-04-00-01", 0x0002, 0, 4, 1,
		  80, 0, 1, OPT_RATE_DS_SRC, 6, 24, 0.01, 168 },
		{ "SMV_Publisher/CurrentTransformer/LLN0.currrentOnly", "firstSMV",
		  "SMV_PublisherCurrentTransformer/LLN0$currrentOnlysDataSet", true, "01-0C-CD-04-00-00", 0x0001, 0, 4, 1,
		  80, 0, 1, OPT_RATE_DS_SRC, 6, 24, 0.001, 171 },
	};
	struct sv_scl *s = load("openscd_data_binding_smv.scd");
	char subs[512];

	(void)state;
	if (!s)
		skip();
	assert_int_equal(s->ncb, 4);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		check_cb(s, &want[i]);
	assert_true(has_diag(s, 165, "no SMV address"));
	assert_true(has_diag(s, 53, "outside the SV range")); /* APPID 0x0003: a warning */
	subs_of(s, "SMV_Subscriber1", subs, sizeof(subs));
	assert_string_equal(subs, "SMV_Publisher/CurrentTransformer/LLN0.fullSmv");
	subs_of(s, "SMV_Subscriber2", subs, sizeof(subs));
	assert_string_equal(subs, "SMV_Publisher/CurrentTransformer/LLN0.fullSmv");
	assert_int_equal(s->cb[0].nominal_hz, 50); /* VoltageLevel nomFreq */
	sv_scl_free(s);
}

static void test_2003(void **state)
{
	static const uint8_t opts = SV_SCL_OPT_SMPRATE | SV_SCL_OPT_DATSET | SV_SCL_OPT_SMPSYNCH; /* dataRef */
	static const struct want_cb want[] = {
		{ "SMV_Publisher/CurrentTransformer/LLN0.fullSmv", "smv3",
		  "SMV_PublisherCurrentTransformer/LLN0$fullSmvsDataSet", true, "01-0C-CD-04-00-02", 0x0003, 0, 4, 1, 80,
		  0, 1, opts, 12, 48, 0.001, 107 },
		{ "SMV_Publisher/CurrentTransformer/LLN0.voltageOnly", "smv2",
		  "SMV_PublisherCurrentTransformer/LLN0$voltageOnlysDataSet", true, "01-0C-CD-04-00-01", 0x0002, 0, 4, 1,
		  80, 0, 1, opts, 6, 24, 0.01, 110 },
		{ "SMV_Publisher/CurrentTransformer/LLN0.currentOnly", "firstSMV",
		  "SMV_PublisherCurrentTransformer/LLN0$currentOnlysDataSet", true, "01-0C-CD-04-00-00", 0x0001, 0, 4, 1,
		  80, 0, 1, opts, 6, 24, 0.001, 113 },
	};
	struct sv_scl *s = load("openscd_later_binding_smv_2003.scd");
	char subs[512];

	(void)state;
	if (!s)
		skip();
	assert_string_equal(s->edition, "2003");
	assert_int_equal(s->ncb, 3);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		check_cb(s, &want[i]);
	/* SCL 2003 binds data, not blocks: L1 TCTR data is in fullSmv and currentOnly, L1 TVTR in fullSmv and
	 * voltageOnly; the IED takes one of each pair */
	subs_of(s, "SMV_Subscriber", subs, sizeof(subs));
	assert_string_equal(subs, "SMV_Publisher/CurrentTransformer/LLN0.fullSmv|SMV_Publisher/CurrentTransformer/LLN0."
				  "currentOnly;SMV_Publisher/CurrentTransformer/LLN0.fullSmv|SMV_Publisher/"
				  "CurrentTransformer/LLN0.voltageOnly");
	sv_scl_free(s);
}

static void test_lsvs(void **state)
{
	struct sv_scl *s = load("openscd_later_binding_smv_lsvs.scd");
	char subs[512];
	unsigned usable = 0;

	(void)state;
	if (!s)
		skip();
	/* five publishers of three blocks each; only SMV_Publisher's have addresses, and their datasets name
	 * TCTR/TVTR instances 2 and 3 where the LDs have only instance 1 */
	assert_int_equal(s->ncb, 15);
	for (unsigned i = 0; i < s->ncb; i++)
		usable += !s->cb[i].bad;
	assert_int_equal(usable, 0);
	assert_true(s->cb[0].has_address && (s->cb[0].bad & SV_SCL_BAD_DATASET));
	assert_true(has_diag(s, 433, "does not resolve"));
	assert_true(has_diag(s, 523, "no SMV address"));
	subs_of(s, "SMV_Subscriber", subs, sizeof(subs)); /* LSVS SvCBRef */
	assert_string_equal(subs, "SMV_Publisher2/CurrentTransformer/LLN0.fullSmv;SMV_Publisher2/CurrentTransformer/"
				  "LLN0.voltageOnly");
	subs_of(s, "SMV_Subscriber2", subs, sizeof(subs)); /* ExtRef srcCBName, and LSVS: one entry */
	assert_string_equal(subs, "SMV_Publisher/CurrentTransformer/LLN0.currrentOnly");
	subs_of(s, "SMV_Subscriber3", subs, sizeof(subs)); /* unbound ExtRefs only */
	assert_string_equal(subs, "");
	subs_of(s, "SMV_Subscriber7", subs, sizeof(subs)); /* an empty LSVS reference is not configured */
	assert_string_equal(subs, "SMV_Publisher/CurrentTransformer/LLN0.currrentOnly");
	sv_scl_free(s);
}

static void test_sampledvaluecontrol(void **state)
{
	static const struct want_cb want[] = {
		{ "IED2/CBSW/LLN0.MSVCB01", "some/reference", "IED2CBSW/LLN0$GooseDataSet1", false, "", 0, 0, 0, 1, 80, 0,
		  1, 0, 0, 0, 0, 183 },
		{ "IED3/MU01/LLN0.MSVCB01", "IED3_SMVID", "IED3MU01/LLN0$PhsMeas1", true, "01-0C-CD-04-00-20", 0x4002, 7, 4,
		  1, 80, 0, 1, 0, 16, 64, 0.001, 310 },
	};
	struct sv_scl *s = load("openscd_sampledvaluecontrol.scd");
	char subs[512];

	(void)state;
	if (!s)
		skip();
	assert_int_equal(s->ncb, 2);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		check_cb(s, &want[i]);
	assert_false(s->cb[1].multicast);
	assert_int_equal(s->cb[1].ds.m[0].scale_src, SV_SCALE_92LE); /* sVC without a value */
	assert_true(has_diag(s, 173, "Dbpos"));
	/* IED1's ExtRef on XSWI2.Pos.q is carried by a GOOSE block too: not an SV subscription */
	subs_of(s, "IED1", subs, sizeof(subs));
	assert_string_equal(subs, "");
	sv_scl_free(s);
}

/* ---- faults of a file, named with file:line ---- */

#define HEAD "<?xml version=\"1.0\"?>\n<SCL xmlns=\"http://www.iec.ch/61850/2003/SCL\" version=\"2007\" revision=\"B\" release=\"4\">\n"
/* one publisher with two blocks; %s: the Communication section, then the second block's datSet */
#define BODY                                                                                                    \
	"<IED name=\"P\"><AccessPoint name=\"AP\"><Server><LDevice inst=\"LD\"><LN0 lnClass=\"LLN0\" inst=\"\" "  \
	"lnType=\"T0\">\n"                                                                                      \
	"<DataSet name=\"DS\"><FCDA ldInst=\"LD\" prefix=\"\" lnClass=\"TCTR\" lnInst=\"1\" doName=\"Amp\" "      \
	"fc=\"MX\"/></DataSet>\n"                                                                               \
	"<SampledValueControl name=\"A\" smvID=\"SA\" datSet=\"DS\" confRev=\"1\" smpRate=\"80\" "                \
	"nofASDU=\"1\"><SmvOpts/></SampledValueControl>\n"                                                      \
	"<SampledValueControl name=\"B\" smvID=\"SB\" datSet=\"%s\" confRev=\"1\" smpRate=\"80\" "                \
	"nofASDU=\"1\"><SmvOpts/></SampledValueControl>\n"                                                      \
	"</LN0><LN lnClass=\"TCTR\" inst=\"1\" prefix=\"\" lnType=\"T1\"/></LDevice></Server></AccessPoint></IED>\n" \
	"<DataTypeTemplates><LNodeType id=\"T0\" lnClass=\"LLN0\"/><LNodeType id=\"T1\" lnClass=\"TCTR\">"         \
	"<DO name=\"Amp\" type=\"SAV\"/></LNodeType><DOType id=\"SAV\" cdc=\"SAV\"><DA name=\"instMag\" "          \
	"bType=\"Struct\" type=\"AV\" fc=\"MX\"/><DA name=\"q\" bType=\"Quality\" fc=\"MX\"/></DOType>"            \
	"<DAType id=\"AV\"><BDA name=\"i\" bType=\"INT32\"/></DAType></DataTypeTemplates></SCL>\n"

#define SMV(cb, appid)                                                                                          \
	"<SMV ldInst=\"LD\" cbName=\"" cb "\"><Address><P type=\"MAC-Address\">01-0C-CD-04-00-01</P>"             \
	"<P type=\"APPID\">" appid "</P></Address></SMV>\n"

static struct sv_scl *load_text(const char *comm, const char *datset_b, struct sv_scl_error *err, int *rc)
{
	char buf[8192];
	struct sv_scl *s = NULL;
	int n = snprintf(buf, sizeof(buf), HEAD "<Communication><SubNetwork name=\"PB\">\n"
						"<ConnectedAP iedName=\"P\" apName=\"AP\">\n%s</ConnectedAP></SubNetwork>"
						"</Communication>\n" BODY, comm, datset_b);

	*rc = sv_scl_load_mem(&s, buf, (size_t)n, "t.scd", err);
	return s;
}

static void test_fault_no_address(void **state)
{
	struct sv_scl_error err;
	int rc;
	struct sv_scl *s = load_text(SMV("A", "4000"), "DS", &err, &rc);

	(void)state;
	assert_int_equal(rc, 0);
	assert_int_equal(s->ncb, 2);
	assert_int_equal(s->cb[0].bad, 0);
	assert_true(s->cb[1].bad & SV_SCL_BAD_ADDRESS);
	/* the second SampledValueControl: head 1-2, Communication 3-6, IED 7, DataSet 8, A 9, B 10 */
	assert_true(has_diag(s, s->cb[1].line, "no SMV address"));
	assert_int_equal(s->cb[1].line, 10);
	/* DO-level FCDA Amp[MX]: instMag.i then q; 9-2LE scale for a TCTR INT32 without sVC */
	assert_int_equal(s->cb[0].ds.nmembers, 2);
	assert_string_equal(s->cb[0].ds.m[0].name, "TCTR1.Amp.instMag.i");
	assert_int_equal(s->cb[0].ds.m[0].scale_src, SV_SCALE_92LE);
	sv_scl_free(s);
}

static void test_fault_dataset(void **state)
{
	struct sv_scl_error err;
	int rc;
	struct sv_scl *s = load_text(SMV("A", "4000") SMV("B", "4001"), "NOPE", &err, &rc);
	char text[800];

	(void)state;
	assert_int_equal(rc, 0);
	assert_true(s->cb[1].bad & SV_SCL_BAD_DATASET);
	assert_false(s->cb[1].bad & SV_SCL_BAD_ADDRESS);
	assert_true(has_diag(s, 11, "datSet=\"NOPE\" does not resolve"));
	for (unsigned i = 0; i < s->ndiag; i++)
		if (s->diag[i].line == 11) {
			sv_scl_diag_format(s, &s->diag[i], text, sizeof(text));
			assert_non_null(strstr(text, "t.scd:11: error: P/LD/LLN0.B: datSet"));
		}
	sv_scl_free(s);
}

static void test_fault_dup_appid(void **state)
{
	struct sv_scl_error err;
	int rc;
	struct sv_scl *s = load_text(SMV("A", "4000") SMV("B", "4000"), "DS", &err, &rc);

	(void)state;
	assert_int_equal(rc, 0);
	assert_true(s->cb[0].bad & SV_SCL_BAD_DUP_APPID);
	assert_true(s->cb[1].bad & SV_SCL_BAD_DUP_APPID);
	assert_true(has_diag(s, 6, "APPID 0x4000 on subnetwork PB is also P/LD/LLN0.A's (line 5)"));
	sv_scl_free(s);
}

static void test_fault_bad_address(void **state)
{
	struct sv_scl_error err;
	int rc;
	struct sv_scl *s = load_text("<SMV ldInst=\"LD\" cbName=\"A\"><Address><P type=\"MAC-Address\">01-0C-CD-04-0-1</P>"
				     "<P type=\"APPID\">4000</P></Address></SMV>\n", "DS", &err, &rc);

	(void)state;
	assert_int_equal(rc, 0);
	assert_true(s->cb[0].bad & SV_SCL_BAD_ADDRESS);
	assert_true(has_diag(s, 5, "MAC-Address"));
	sv_scl_free(s);
}

struct fatal_case {
	const char *what, *text;
	int rc;
	unsigned line;
	const char *needle;
};

static void test_fatal(void **state)
{
	static const struct fatal_case cases[] = {
		{ "unknown edition", "<?xml version=\"1.0\"?>\n\n<SCL xmlns=\"http://www.iec.ch/61850/2003/SCL\" "
				     "version=\"2031\" revision=\"Z\"/>\n", -EINVAL, 3, "unknown SCL edition" },
		{ "not SCL", "<?xml version=\"1.0\"?>\n<svkit/>\n", -EINVAL, 2, "not an SCL file" },
		{ "SCL without its namespace", "<SCL version=\"2007\" revision=\"B\"/>", -EINVAL, 1, "not an SCL file" },
		{ "not well-formed", "<?xml version=\"1.0\"?>\n<SCL xmlns=\"http://www.iec.ch/61850/2003/SCL\">\n<IED>\n"
				     "</SCL>\n", -EBADMSG, 5, "not well-formed XML" },
		/* entities: never expanded, and a DTD is refused whatever it declares */
		{ "DOCTYPE with entities", "<?xml version=\"1.0\"?>\n<!DOCTYPE SCL [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b "
					   "\"&a;&a;&a;&a;&a;&a;&a;&a;\">]>\n<SCL xmlns=\"http://www.iec.ch/61850/2003/"
					   "SCL\"><Header id=\"&b;\"/></SCL>\n", -EINVAL, 2, "DOCTYPE" },
		{ "external entity", "<?xml version=\"1.0\"?>\n<!DOCTYPE SCL [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>"
				     "\n<SCL xmlns=\"http://www.iec.ch/61850/2003/SCL\">&x;</SCL>\n", -EINVAL, 2,
		  "DOCTYPE" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct sv_scl *s = (struct sv_scl *)1;
		struct sv_scl_error err;
		int rc = sv_scl_load_mem(&s, cases[i].text, strlen(cases[i].text), "f.scd", &err);

		print_message("%s: %s\n", cases[i].what, err.text);
		assert_int_equal(rc, cases[i].rc);
		assert_null(s);
		assert_int_equal(err.line, cases[i].line);
		assert_non_null(strstr(err.text, cases[i].needle));
		assert_int_equal(strncmp(err.text, "f.scd:", 6), 0);
	}
}

static void test_missing_file(void **state)
{
	struct sv_scl *s;
	struct sv_scl_error err;

	(void)state;
	assert_int_equal(sv_scl_load(&s, "/nonexistent/x.scd", &err), -ENOENT);
	assert_non_null(strstr(err.text, "/nonexistent/x.scd: No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_locamation),
		cmocka_unit_test(test_data_binding),
		cmocka_unit_test(test_2003),
		cmocka_unit_test(test_lsvs),
		cmocka_unit_test(test_sampledvaluecontrol),
		cmocka_unit_test(test_fault_no_address),
		cmocka_unit_test(test_fault_dataset),
		cmocka_unit_test(test_fault_dup_appid),
		cmocka_unit_test(test_fault_bad_address),
		cmocka_unit_test(test_fatal),
		cmocka_unit_test(test_missing_file),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
