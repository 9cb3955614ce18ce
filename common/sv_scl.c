// SPDX-License-Identifier: Apache-2.0
/* SCL import through libxml2: see sv_scl.h for what is read and how safely. */
#include "sv_scl.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#define SCL_NS "http://www.iec.ch/61850/2003/SCL"

struct ctx {
	struct sv_scl *s;
	xmlDocPtr doc;
	xmlNodePtr root, templates;
	unsigned cap_cb, cap_sub, cap_diag;
	int oom;
};

/* ---- small XML helpers ---- */

static bool is_el(const xmlNode *n, const char *name)
{
	return n && n->type == XML_ELEMENT_NODE && n->ns && n->ns->href &&
	       !strcmp((const char *)n->ns->href, SCL_NS) && (!name || !strcmp((const char *)n->name, name));
}

/* First child element @name (SCL namespace) of @n, after @after when not NULL. */
static xmlNodePtr kid(const xmlNode *n, const char *name, const xmlNode *after)
{
	const xmlNode *c = after ? after->next : (n ? n->children : NULL);

	for (; c; c = c->next)
		if (is_el(c, name))
			return (xmlNodePtr)c;
	return NULL;
}

#define FOR_KIDS(c, parent, name) for (xmlNodePtr c = kid(parent, name, NULL); c; c = kid(parent, name, c))
/* Every LDevice of IED @ied, whatever its AccessPoint and Server. */
#define FOR_LDS(ld, ied) FOR_KIDS(ap_, ied, "AccessPoint") FOR_KIDS(srv_, ap_, "Server") FOR_KIDS(ld, srv_, "LDevice")

/* Attribute @name of @n into @buf (empty when absent). Returns true when present. */
static bool attr(const xmlNode *n, const char *name, char *buf, size_t size)
{
	xmlChar *v = xmlGetNoNsProp(n, (const xmlChar *)name);

	if (!v) {
		if (size)
			buf[0] = '\0';
		return false;
	}
	snprintf(buf, size, "%s", (const char *)v);
	xmlFree(v);
	return true;
}

static bool attr_is(const xmlNode *n, const char *name, const char *value)
{
	char buf[256];

	attr(n, name, buf, sizeof(buf));
	return !strcmp(buf, value);
}

/* Element text without surrounding blanks. */
static void text(const xmlNode *n, char *buf, size_t size)
{
	xmlChar *v = xmlNodeGetContent(n);
	const char *p = v ? (const char *)v : "";
	size_t len;

	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	len = strlen(p);
	while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\n' || p[len - 1] == '\r'))
		len--;
	snprintf(buf, size, "%.*s", (int)(len < size ? len : size - 1), p);
	xmlFree(v);
}

static unsigned line_of(const xmlNode *n)
{
	long l = n ? xmlGetLineNo(n) : 0;

	return l > 0 ? (unsigned)l : 0;
}

/* ---- results ---- */

static void *grow(struct ctx *c, void *arr, unsigned n, unsigned *cap, size_t elem)
{
	void *p;

	if (n < *cap)
		return arr;
	p = realloc(arr, (size_t)(*cap ? *cap * 2 : 16) * elem);
	if (!p) {
		c->oom = 1;
		return NULL;
	}
	*cap = *cap ? *cap * 2 : 16;
	return p;
}

__attribute__((format(printf, 5, 0))) static void diag_v(struct ctx *c, enum sv_scl_severity sev, int cb,
							    unsigned line, const char *fmt, va_list ap)
{
	struct sv_scl *s = c->s;
	struct sv_scl_diag *d, *arr = grow(c, s->diag, s->ndiag, &c->cap_diag, sizeof(*d));

	if (!arr)
		return;
	s->diag = arr;
	d = &s->diag[s->ndiag++];
	d->severity = (uint8_t)sev;
	d->cb = cb;
	d->line = line;
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
}

/* A problem at element @at. */
__attribute__((format(printf, 5, 6))) static void diag(struct ctx *c, enum sv_scl_severity sev, int cb,
						       const xmlNode *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_v(c, sev, cb, line_of(at), fmt, ap);
	va_end(ap);
}

/* A problem at line @line. */
__attribute__((format(printf, 5, 6))) static void diag_at(struct ctx *c, enum sv_scl_severity sev, int cb,
							  unsigned line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diag_v(c, sev, cb, line, fmt, ap);
	va_end(ap);
}

int sv_scl_diag_format(const struct sv_scl *s, const struct sv_scl_diag *d, char *buf, size_t size)
{
	return snprintf(buf, size, "%s:%u: %s: %s", s->file, d->line,
			d->severity == SV_SCL_ERROR ? "error" : "warning", d->msg);
}

/* ---- strict numbers ---- */

static bool parse_u(const char *t, int base, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!t[0] || t[0] == '-' || t[0] == '+' || t[0] == ' ')
		return false;
	errno = 0;
	v = strtoul(t, &end, base);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static bool parse_d(const char *t, double *out)
{
	char *end;

	if (!t[0])
		return false;
	errno = 0;
	*out = strtod(t, &end);
	return !errno && !*end && isfinite(*out);
}

static bool parse_mac(const char *t, uint8_t mac[6])
{
	unsigned v[6];
	char tail;

	if (strlen(t) != 17 || sscanf(t, "%2x-%2x-%2x-%2x-%2x-%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
				      &tail) != 6)
		return false;
	for (int i = 0; i < 6; i++) {
		if (t[3 * i + 2] != '-' && i < 5)
			return false;
		mac[i] = (uint8_t)v[i];
	}
	for (size_t i = 0; i < 17; i++)
		if (i % 3 != 2 && !((t[i] >= '0' && t[i] <= '9') || (t[i] >= 'a' && t[i] <= 'f') ||
				    (t[i] >= 'A' && t[i] <= 'F')))
			return false;
	return true;
}

/* ---- the IED model ---- */

static xmlNodePtr find_ied(struct ctx *c, const char *name)
{
	FOR_KIDS(ied, c->root, "IED")
		if (attr_is(ied, "name", name))
			return ied;
	return NULL;
}

/* LDevice @inst of @ied (any AccessPoint's Server). */
static xmlNodePtr find_ld(const xmlNode *ied, const char *inst)
{
	FOR_LDS(ld, ied)
		if (attr_is(ld, "inst", inst))
			return ld;
	return NULL;
}

/* The LD name IEC 61850-7-2 gives: ldName, else IED name + inst. */
static void ld_name(const xmlNode *ied, const xmlNode *ld, char *buf, size_t size)
{
	char iname[SV_SCL_NAME_LEN], inst[SV_SCL_NAME_LEN];

	if (attr(ld, "ldName", buf, size) && buf[0])
		return;
	attr(ied, "name", iname, sizeof(iname));
	attr(ld, "inst", inst, sizeof(inst));
	snprintf(buf, size, "%s%s", iname, inst);
}

/* LN0 (lnClass LLN0) or LN prefix/lnClass/inst of @ld. */
static xmlNodePtr find_ln(const xmlNode *ld, const char *prefix, const char *cls, const char *inst)
{
	if (!strcmp(cls, "LLN0"))
		return kid(ld, "LN0", NULL);
	FOR_KIDS(ln, ld, "LN") {
		char p[SV_SCL_NAME_LEN], k[16], i[16];

		attr(ln, "prefix", p, sizeof(p));
		attr(ln, "lnClass", k, sizeof(k));
		attr(ln, "inst", i, sizeof(i));
		if (!strcmp(p, prefix ? prefix : "") && !strcmp(k, cls) && !strcmp(i, inst ? inst : ""))
			return ln;
	}
	return NULL;
}

static xmlNodePtr find_type(struct ctx *c, const char *kind, const char *id)
{
	FOR_KIDS(t, c->templates, kind)
		if (attr_is(t, "id", id))
			return t;
	return NULL;
}

/* Child of @t (a DOType or DAType) named @name, of element kind DO/SDO/DA/BDA. */
static xmlNodePtr find_named(const xmlNode *t, const char *const *kinds, const char *name)
{
	for (xmlNodePtr c = t ? t->children : NULL; c; c = c->next) {
		if (!is_el(c, NULL))
			continue;
		for (unsigned k = 0; kinds[k]; k++)
			if (!strcmp((const char *)c->name, kinds[k]) && attr_is(c, "name", name))
				return c;
	}
	return NULL;
}

static const char *const DO_KINDS[] = { "DO", "SDO", NULL };
static const char *const DA_KINDS[] = { "DA", "BDA", NULL };

static int da_type_of(const char *btype)
{
	static const struct {
		const char *b;
		int t;
	} map[] = {
		{ "BOOLEAN", SV_DA_BOOLEAN }, { "INT8", SV_DA_INT8 },	    { "INT16", SV_DA_INT16 },
		{ "INT32", SV_DA_INT32 },     { "INT64", SV_DA_INT64 },	    { "INT8U", SV_DA_INT8U },
		{ "INT16U", SV_DA_INT16U },   { "INT32U", SV_DA_INT32U },   { "FLOAT32", SV_DA_FLOAT32 },
		{ "FLOAT64", SV_DA_FLOAT64 }, { "Quality", SV_DA_QUALITY }, { "Timestamp", SV_DA_TIMESTAMP },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].b, btype))
			return map[i].t;
	return -1;
}

/* A value of the LN instance (DOI/SDI/DAI path) or else of the type (DOType DA / DAType BDA defaults). */
static bool inst_val(const xmlNode *ln, const char *const *path, unsigned n, char *buf, size_t size)
{
	const xmlNode *cur = ln;

	for (unsigned i = 0; i < n && cur; i++) {
		const xmlNode *next = NULL;

		for (xmlNodePtr c = cur->children; c && !next; c = c->next)
			if ((is_el(c, i == 0 ? "DOI" : "SDI") || (i == n - 1 && is_el(c, "DAI"))) &&
			    attr_is(c, "name", path[i]))
				next = c;
		cur = next;
	}
	if (!cur || !is_el(cur, "DAI"))
		return false;
	FOR_KIDS(v, cur, "Val") {
		text(v, buf, size);
		return buf[0] != '\0';
	}
	return false;
}

static bool type_val(struct ctx *c, const xmlNode *lntype, const char *const *path, unsigned n, char *buf,
		     size_t size)
{
	const xmlNode *cur = find_named(lntype, DO_KINDS, path[0]);
	char id[SV_SCL_NAME_LEN * 2];

	for (unsigned i = 1; i < n && cur; i++) {
		xmlNodePtr t;

		attr(cur, "type", id, sizeof(id));
		t = find_type(c, is_el(cur, "DO") || is_el(cur, "SDO") ? "DOType" : "DAType", id);
		cur = t ? find_named(t, is_el(cur, "DO") || is_el(cur, "SDO") ? (const char *const[]){ "SDO", "DA", NULL }
									       : DA_KINDS,
				     path[i])
			: NULL;
	}
	if (!cur)
		return false;
	FOR_KIDS(v, cur, "Val") {
		text(v, buf, size);
		return buf[0] != '\0';
	}
	return false;
}

/* A value of LN @ln (lnType @lntype) at @path: the instance's, else the type's default. */
static bool ln_val(struct ctx *c, const xmlNode *ln, const xmlNode *lntype, const char *const *path, unsigned n,
		   char *buf, size_t size)
{
	return inst_val(ln, path, n, buf, size) || (lntype && type_val(c, lntype, path, n, buf, size));
}

/* IEC 61850-7-3 multiplier letter to a power of ten. */
static bool multiplier_pow(const char *m, int *p)
{
	static const struct {
		const char *m;
		int p;
	} tab[] = { { "", 0 },	{ "y", -24 }, { "z", -21 }, { "a", -18 }, { "f", -15 }, { "p", -12 }, { "n", -9 },
		    { "\xc2\xb5", -6 }, { "u", -6 }, { "m", -3 }, { "c", -2 }, { "d", -1 }, { "da", 1 }, { "h", 2 },
		    { "k", 3 }, { "M", 6 }, { "G", 9 }, { "T", 12 }, { "P", 15 }, { "E", 18 }, { "Z", 21 }, { "Y", 24 } };

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcmp(tab[i].m, m)) {
			*p = tab[i].p;
			return true;
		}
	return false;
}

/* An ASG rating's value in base units (setMag.i or .f, times the units' multiplier): 0 when absent. */
static double rating(struct ctx *c, const xmlNode *ln, const xmlNode *lntype, const char *dobj)
{
	char v[64], m[16];
	double x;
	int p = 0;
	const char *pi[] = { dobj, "setMag", "i" }, *pf[] = { dobj, "setMag", "f" }, *pm[] = { dobj, "units", "multiplier" };

	if (!(ln_val(c, ln, lntype, pi, 3, v, sizeof(v)) || ln_val(c, ln, lntype, pf, 3, v, sizeof(v))) ||
	    !parse_d(v, &x) || x <= 0)
		return 0;
	if (ln_val(c, ln, lntype, pm, 3, m, sizeof(m)) && !multiplier_pow(m, &p))
		return 0;
	return x * pow(10, p);
}

/* An ING setting (ARtgSec, VRtgSec): 0 when absent. */
static double setting(struct ctx *c, const xmlNode *ln, const xmlNode *lntype, const char *dobj)
{
	const char *path[] = { dobj, "setVal" };
	char v[64];
	double x;

	return ln_val(c, ln, lntype, path, 2, v, sizeof(v)) && parse_d(v, &x) && x > 0 ? x : 0;
}

/* ---- datasets ---- */

struct fcda {
	char ld[SV_SCL_NAME_LEN], prefix[SV_SCL_NAME_LEN], cls[16], inst[16], dobj[128], da[128], fc[8];
};

static void fcda_read(const xmlNode *n, struct fcda *f)
{
	attr(n, "ldInst", f->ld, sizeof(f->ld));
	attr(n, "prefix", f->prefix, sizeof(f->prefix));
	attr(n, "lnClass", f->cls, sizeof(f->cls));
	attr(n, "lnInst", f->inst, sizeof(f->inst));
	attr(n, "doName", f->dobj, sizeof(f->dobj));
	attr(n, "daName", f->da, sizeof(f->da));
	attr(n, "fc", f->fc, sizeof(f->fc));
}

struct member_ctx {
	struct ctx *c;
	int cb;
	const xmlNode *at;   /* the FCDA, for messages */
	const xmlNode *ln;   /* its LN instance */
	const xmlNode *lntype;
	const struct fcda *f;
	struct sv_dataset *ds;
	uint16_t *hz;
};

/* Adds the leaf @da (a DA or BDA element, bType known) named @name; @in_svc_do: the DO has an sVC. */
static int add_leaf(struct member_ctx *m, const xmlNode *da, const char *name, const char *btype)
{
	struct sv_ds_member *mem;
	int t = da_type_of(btype), err;
	double scale = 1;
	uint8_t src = SV_SCALE_NONE;

	if (t < 0) {
		diag(m->c, SV_SCL_ERROR, m->cb, m->at,
		     "%s: FCDA member %s is a %s, which svkit cannot carry in an SV dataset (BOOLEAN, INT8..INT64, "
		     "INT8U..INT32U, FLOAT32, FLOAT64, Quality, Timestamp)", m->c->s->cb[m->cb].ref, name, btype);
		return -EINVAL;
	}
	(void)da;
	if (t != SV_DA_QUALITY && t != SV_DA_TIMESTAMP && t != SV_DA_FLOAT32 && t != SV_DA_FLOAT64 &&
	    t != SV_DA_BOOLEAN) {
		const char *ps[] = { m->f->dobj, "sVC", "scaleFactor" }, *po[] = { m->f->dobj, "sVC", "offset" };
		char v[64];
		double off;

		if (ln_val(m->c, m->ln, m->lntype, ps, 3, v, sizeof(v))) {
			if (!parse_d(v, &scale) || scale == 0) {
				diag(m->c, SV_SCL_ERROR, m->cb, m->at, "%s: %s.sVC.scaleFactor '%s' is not a number other than 0",
				     m->c->s->cb[m->cb].ref, m->f->dobj, v);
				return -EINVAL;
			}
			src = SV_SCALE_SCL_SVC;
			if (ln_val(m->c, m->ln, m->lntype, po, 3, v, sizeof(v)) && (!parse_d(v, &off) || off != 0)) {
				diag(m->c, SV_SCL_ERROR, m->cb, m->at,
				     "%s: %s.sVC.offset is %s: svkit scales values as i x scaleFactor only (an offset "
				     "other than 0 is not supported)", m->c->s->cb[m->cb].ref, m->f->dobj, v);
				return -EINVAL;
			}
		} else if (t == SV_DA_INT32 && (!strcmp(m->f->cls, "TCTR") || !strcmp(m->f->cls, "TVTR"))) {
			/* IEC 61869-9 / UCA 9-2LE fix the LSB of instMag.i */
			scale = !strcmp(m->f->cls, "TCTR") ? SV_CURRENT_LSB_A : SV_VOLTAGE_LSB_V;
			src = SV_SCALE_92LE;
		}
	}
	err = sv_dataset_add(m->ds, name, (enum sv_da_type)t, scale);
	if (err) {
		diag(m->c, SV_SCL_ERROR, m->cb, m->at, "%s: the dataset has more than %d members or 65535 octets",
		     m->c->s->cb[m->cb].ref, SV_DS_MAX_MEMBERS);
		return err;
	}
	mem = &m->ds->m[m->ds->nmembers - 1];
	mem->scale_src = src;
	if (t == SV_DA_QUALITY || t == SV_DA_TIMESTAMP)
		return 0;
	if (!strcmp(m->f->cls, "TCTR") || !strcmp(m->f->cls, "TVTR")) {
		bool ct = !strcmp(m->f->cls, "TCTR");
		double pri = rating(m->c, m->ln, m->lntype, ct ? "ARtg" : "VRtg");
		double sec = setting(m->c, m->ln, m->lntype, ct ? "ARtgSec" : "VRtgSec");
		double rat = rating(m->c, m->ln, m->lntype, "Rat");
		double hz = rating(m->c, m->ln, m->lntype, "HzRtg");

		snprintf(mem->unit, sizeof(mem->unit), "%s", ct ? "A" : "V");
		if (pri > 0 && sec > 0) {
			mem->primary = pri;
			mem->secondary = sec;
			mem->ratio_src = SV_RATIO_RATINGS;
		} else if (rat > 0) {
			mem->primary = rat;
			mem->secondary = 1;
			mem->ratio_src = SV_RATIO_RAT;
		}
		if (hz >= 1 && hz <= 1000 && !*m->hz)
			*m->hz = (uint16_t)lround(hz);
	}
	return 0;
}

/* Adds every leaf under @node (a DA/BDA of bType Struct: its DAType's BDAs, in order), or @node itself. */
static int add_da(struct member_ctx *m, const xmlNode *node, const char *name, unsigned depth)
{
	char btype[32], type[SV_SCL_NAME_LEN * 2], sub[SV_DS_NAME_LEN + 64];
	xmlNodePtr t;
	int err;

	attr(node, "bType", btype, sizeof(btype));
	if (strcmp(btype, "Struct"))
		return add_leaf(m, node, name, btype);
	attr(node, "type", type, sizeof(type));
	t = find_type(m->c, "DAType", type);
	if (!t || depth > 8) {
		diag(m->c, SV_SCL_ERROR, m->cb, m->at, "%s: %s: DAType '%s' does not resolve", m->c->s->cb[m->cb].ref,
		     name, type);
		return -ENOENT;
	}
	FOR_KIDS(b, t, "BDA") {
		char bn[SV_SCL_NAME_LEN];

		attr(b, "name", bn, sizeof(bn));
		snprintf(sub, sizeof(sub), "%s.%s", name, bn);
		err = add_da(m, b, sub, depth + 1);
		if (err)
			return err;
	}
	return 0;
}

/* Every attribute of DOType @dt with functional constraint @fc (SDOs recursively), in type order. */
static int add_do(struct member_ctx *m, const xmlNode *dt, const char *name, unsigned depth)
{
	char sub[SV_DS_NAME_LEN + 64], n[SV_SCL_NAME_LEN], fc[8], type[SV_SCL_NAME_LEN * 2];
	int err;

	for (xmlNodePtr e = dt->children; e; e = e->next) {
		if (is_el(e, "DA")) {
			attr(e, "fc", fc, sizeof(fc));
			if (strcmp(fc, m->f->fc))
				continue;
			attr(e, "name", n, sizeof(n));
			snprintf(sub, sizeof(sub), "%s.%s", name, n);
			err = add_da(m, e, sub, 0);
		} else if (is_el(e, "SDO")) {
			xmlNodePtr st;

			attr(e, "type", type, sizeof(type));
			attr(e, "name", n, sizeof(n));
			st = find_type(m->c, "DOType", type);
			if (!st || depth > 8)
				continue;
			snprintf(sub, sizeof(sub), "%s.%s", name, n);
			err = add_do(m, st, sub, depth + 1);
		} else {
			continue;
		}
		if (err)
			return err;
	}
	return 0;
}

static int add_fcda(struct ctx *c, int cbi, const xmlNode *ied, const xmlNode *fnode, struct sv_dataset *ds,
		    uint16_t *hz)
{
	const char *ref = c->s->cb[cbi].ref;
	struct member_ctx m = { .c = c, .cb = cbi, .at = fnode, .ds = ds, .hz = hz };
	char lntype_id[SV_SCL_NAME_LEN * 2], path[256], name[SV_DS_NAME_LEN + 300], tid[SV_SCL_NAME_LEN * 2];
	const xmlNode *ld, *cur;
	struct fcda f;
	char *save = NULL, *tok;

	fcda_read(fnode, &f);
	m.f = &f;
	ld = find_ld(ied, f.ld);
	m.ln = ld ? find_ln(ld, f.prefix, f.cls, f.inst) : NULL;
	if (!m.ln) {
		diag(c, SV_SCL_ERROR, cbi, fnode, "%s: FCDA %s/%s%s%s does not resolve: no such logical %s", ref, f.ld,
		     f.prefix, f.cls, f.inst, ld ? "node" : "device");
		return -ENOENT;
	}
	attr(m.ln, "lnType", lntype_id, sizeof(lntype_id));
	m.lntype = find_type(c, "LNodeType", lntype_id);
	if (!m.lntype || !f.dobj[0]) {
		diag(c, SV_SCL_ERROR, cbi, fnode, "%s: FCDA %s/%s%s%s.%s does not resolve: %s", ref, f.ld, f.prefix, f.cls,
		     f.inst, f.dobj, m.lntype ? "no doName" : "its LNodeType does not exist");
		return -ENOENT;
	}
	/* doName: DO[.SDO...] */
	snprintf(path, sizeof(path), "%s", f.dobj);
	cur = m.lntype;
	for (tok = strtok_r(path, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		xmlNodePtr d = find_named(cur, DO_KINDS, tok);

		if (d) {
			attr(d, "type", tid, sizeof(tid));
			d = find_type(c, "DOType", tid);
		}
		if (!d) {
			diag(c, SV_SCL_ERROR, cbi, fnode, "%s: FCDA %s/%s%s%s.%s does not resolve: no data object '%s'", ref,
			     f.ld, f.prefix, f.cls, f.inst, f.dobj, tok);
			return -ENOENT;
		}
		cur = d;
	}
	/* the member name: [prefix]lnClass[inst].DO[.DA] (the LD is the dataset's) */
	snprintf(name, sizeof(name), "%s%s%s.%s", f.prefix, f.cls, f.inst, f.dobj);
	if (!f.da[0])
		return add_do(&m, cur, name, 0);
	snprintf(path, sizeof(path), "%s", f.da);
	save = NULL;
	for (tok = strtok_r(path, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		xmlNodePtr d = find_named(cur, DA_KINDS, tok);
		char bt[32];

		if (!d) {
			diag(c, SV_SCL_ERROR, cbi, fnode, "%s: FCDA %s/%s%s%s.%s.%s does not resolve: no attribute '%s'", ref,
			     f.ld, f.prefix, f.cls, f.inst, f.dobj, f.da, tok);
			return -ENOENT;
		}
		snprintf(name + strlen(name), sizeof(name) - strlen(name), ".%s", tok);
		attr(d, "bType", bt, sizeof(bt));
		cur = d;
		if (!strcmp(bt, "Struct")) {
			char *next = save && *save ? save : NULL;

			if (!next) /* the whole struct */
				break;
			attr(d, "type", tid, sizeof(tid));
			cur = find_type(c, "DAType", tid);
			if (!cur) {
				diag(c, SV_SCL_ERROR, cbi, fnode, "%s: FCDA %s.%s: DAType '%s' does not resolve", ref, f.dobj, f.da,
				     tid);
				return -ENOENT;
			}
		} else if (save && *save) {
			diag(c, SV_SCL_ERROR, cbi, fnode, "%s: FCDA %s.%s does not resolve: '%s' has no attributes", ref,
			     f.dobj, f.da, tok);
			return -ENOENT;
		}
	}
	name[SV_DS_NAME_LEN - 1] = '\0'; /* names are for people; the order is what counts */
	return add_da(&m, cur, name, 0);
}

/* ---- control blocks ---- */

static bool opt_true(const xmlNode *opts, const char *name)
{
	return opts && (attr_is(opts, name, "true") || attr_is(opts, name, "1"));
}

static void read_address(struct ctx *c, int cbi, const xmlNode *smv, const char *subnet)
{
	struct sv_scl_cb *cb = &c->s->cb[cbi];
	const xmlNode *addr = kid(smv, "Address", NULL);
	bool mac = false, appid = false;

	cb->addr_line = line_of(smv);
	snprintf(cb->subnet, sizeof(cb->subnet), "%s", subnet);
	cb->vlan_id = 0;	/* absent: priority-tagged */
	cb->vlan_priority = 4;	/* IEC 61850-9-2 default user priority */
	FOR_KIDS(p, addr, "P") {
		char type[32], v[64];
		unsigned long u;

		attr(p, "type", type, sizeof(type));
		text(p, v, sizeof(v));
		if (!strcmp(type, "MAC-Address")) {
			if (!parse_mac(v, cb->mac))
				goto bad;
			mac = true;
		} else if (!strcmp(type, "APPID")) {
			if (strlen(v) != 4 || !parse_u(v, 16, 0xffff, &u))
				goto bad;
			cb->appid = (uint16_t)u;
			appid = true;
		} else if (!strcmp(type, "VLAN-ID")) {
			if (strlen(v) != 3 || !parse_u(v, 16, 0xfff, &u))
				goto bad;
			cb->vlan_id = (uint16_t)u;
		} else if (!strcmp(type, "VLAN-PRIORITY")) {
			if (strlen(v) != 1 || !parse_u(v, 10, 7, &u))
				goto bad;
			cb->vlan_priority = (uint8_t)u;
		}
		continue;
bad:
		diag(c, SV_SCL_ERROR, cbi, p, "%s: SMV address P type=\"%s\" is '%s': not a valid %s", cb->ref, type, v,
		     type);
		cb->bad |= SV_SCL_BAD_ADDRESS;
		return;
	}
	if (!mac || !appid) {
		diag(c, SV_SCL_ERROR, cbi, smv, "%s: the SMV address has no %s", cb->ref, !mac ? "MAC-Address" : "APPID");
		cb->bad |= SV_SCL_BAD_ADDRESS;
		return;
	}
	cb->has_address = true;
	if (!(cb->mac[0] & 1) && cb->multicast)
		diag(c, SV_SCL_WARNING, cbi, smv, "%s: multicast=\"true\" but MAC-Address %02X-%02X-%02X-%02X-%02X-%02X "
		     "is not a group address", cb->ref, cb->mac[0], cb->mac[1], cb->mac[2], cb->mac[3], cb->mac[4],
		     cb->mac[5]);
	if (cb->appid < 0x4000 || cb->appid > 0x7fff)
		diag(c, SV_SCL_WARNING, cbi, smv, "%s: APPID 0x%04X is outside the SV range 0x4000-0x7FFF (IEC 61850-9-2 "
		     "Annex C)", cb->ref, cb->appid);
}

static void find_address(struct ctx *c, int cbi)
{
	struct sv_scl_cb *cb = &c->s->cb[cbi];
	const xmlNode *comm = kid(c->root, "Communication", NULL);

	FOR_KIDS(sn, comm, "SubNetwork") {
		char subnet[SV_SCL_NAME_LEN];

		attr(sn, "name", subnet, sizeof(subnet));
		FOR_KIDS(cap, sn, "ConnectedAP") {
			if (!attr_is(cap, "iedName", cb->ied))
				continue;
			FOR_KIDS(smv, cap, "SMV") {
				if (attr_is(smv, "ldInst", cb->ld) && attr_is(smv, "cbName", cb->name)) {
					read_address(c, cbi, smv, subnet);
					return;
				}
			}
		}
	}
	cb->bad |= SV_SCL_BAD_ADDRESS;
}

static bool u_attr(struct ctx *c, int cbi, const xmlNode *n, const char *name, bool required, unsigned long max,
		   unsigned long def, unsigned long *out)
{
	char v[32];

	if (!attr(n, name, v, sizeof(v))) {
		*out = def;
		if (!required)
			return true;
		diag(c, SV_SCL_ERROR, cbi, n, "%s: SampledValueControl has no %s", c->s->cb[cbi].ref, name);
	} else if (parse_u(v, 10, max, out)) {
		return true;
	} else {
		diag(c, SV_SCL_ERROR, cbi, n, "%s: %s=\"%s\" is not an integer in 0..%lu", c->s->cb[cbi].ref, name, v, max);
	}
	c->s->cb[cbi].bad |= SV_SCL_BAD_ATTR;
	return false;
}

static void read_cb(struct ctx *c, const xmlNode *ied, const xmlNode *ld, const xmlNode *ln0, const xmlNode *svc)
{
	struct sv_scl *s = c->s;
	struct sv_scl_cb *cb, *arr = grow(c, s->cb, s->ncb, &c->cap_cb, sizeof(*cb));
	const xmlNode *opts = kid(svc, "SmvOpts", NULL), *dsn = NULL;
	char mod[32], ldn[SV_SCL_NAME_LEN * 2];
	unsigned long u;
	int cbi;

	if (!arr)
		return;
	s->cb = arr;
	cbi = (int)s->ncb++;
	cb = &s->cb[cbi];
	memset(cb, 0, sizeof(*cb));
	attr(ied, "name", cb->ied, sizeof(cb->ied));
	attr(ld, "inst", cb->ld, sizeof(cb->ld));
	attr(svc, "name", cb->name, sizeof(cb->name));
	snprintf(cb->ref, sizeof(cb->ref), "%s/%s/LLN0.%s", cb->ied, cb->ld, cb->name);
	cb->line = line_of(svc);
	if (!attr(svc, "smvID", cb->svid, sizeof(cb->svid)) || !cb->svid[0]) {
		diag(c, SV_SCL_ERROR, cbi, svc, "%s: SampledValueControl has no smvID", cb->ref);
		cb->bad |= SV_SCL_BAD_ATTR;
	}
	if (u_attr(c, cbi, svc, "confRev", false, 0xffffffffUL, 0, &u))
		cb->conf_rev = (uint32_t)u;
	if (u_attr(c, cbi, svc, "smpRate", true, 0xffff, 0, &u))
		cb->smp_rate = (uint16_t)u;
	if (u_attr(c, cbi, svc, "nofASDU", true, 0xffff, 1, &u))
		cb->nof_asdu = (uint16_t)u;
	if (!cb->nof_asdu && !(cb->bad & SV_SCL_BAD_ATTR)) {
		diag(c, SV_SCL_ERROR, cbi, svc, "%s: nofASDU=\"0\": a frame carries at least one ASDU", cb->ref);
		cb->bad |= SV_SCL_BAD_ATTR;
	}
	cb->smp_mod = SV_SMPMOD_PER_PERIOD;
	if (attr(svc, "smpMod", mod, sizeof(mod))) {
		if (!strcmp(mod, "SmpPerSec"))
			cb->smp_mod = SV_SMPMOD_PER_SECOND;
		else if (!strcmp(mod, "SecPerSmp"))
			cb->smp_mod = SV_SMPMOD_SECONDS_PER_SAMPLE;
		else if (strcmp(mod, "SmpPerPeriod")) {
			diag(c, SV_SCL_ERROR, cbi, svc, "%s: smpMod=\"%s\" is not SmpPerPeriod, SmpPerSec or SecPerSmp", cb->ref,
			     mod);
			cb->bad |= SV_SCL_BAD_ATTR;
		}
	}
	cb->multicast = !attr_is(svc, "multicast", "false");
	if (opt_true(opts, "refreshTime"))
		cb->opts |= SV_SCL_OPT_REFRTM;
	if (opt_true(opts, "sampleSynchronized"))
		cb->opts |= SV_SCL_OPT_SMPSYNCH;
	if (opt_true(opts, "sampleRate"))
		cb->opts |= SV_SCL_OPT_SMPRATE;
	if (opt_true(opts, "dataSet") || opt_true(opts, "dataRef"))
		cb->opts |= SV_SCL_OPT_DATSET;
	if (opt_true(opts, "security"))
		cb->opts |= SV_SCL_OPT_SECURITY;
	if (opt_true(opts, "synchSourceId"))
		cb->opts |= SV_SCL_OPT_SYNCHSRC;
	find_address(c, cbi);
	if (!(cb->bad & SV_SCL_BAD_ADDRESS) && !cb->has_address)
		cb->bad |= SV_SCL_BAD_ADDRESS;
	if ((cb->bad & SV_SCL_BAD_ADDRESS) && !cb->addr_line)
		diag(c, SV_SCL_ERROR, cbi, svc,
		     "%s: no SMV address: Communication has no SMV ldInst=\"%s\" cbName=\"%s\" under a ConnectedAP of IED "
		     "%s, so the block is on no network", cb->ref, cb->ld, cb->name, cb->ied);
	/* the dataset */
	sv_dataset_init(&cb->ds, "");
	if (!attr(svc, "datSet", cb->datset, sizeof(cb->datset)) || !cb->datset[0]) {
		diag(c, SV_SCL_ERROR, cbi, svc, "%s: SampledValueControl has no datSet", cb->ref);
		cb->bad |= SV_SCL_BAD_DATASET;
		return;
	}
	ld_name(ied, ld, ldn, sizeof(ldn));
	snprintf(cb->datset_ref, sizeof(cb->datset_ref), "%.64s/LLN0$%.59s", ldn, cb->datset);
	FOR_KIDS(d, ln0, "DataSet")
		if (attr_is(d, "name", cb->datset))
			dsn = d;
	if (!dsn) {
		diag(c, SV_SCL_ERROR, cbi, svc, "%s: datSet=\"%s\" does not resolve: LN0 of %s/%s has no DataSet of that "
		     "name", cb->ref, cb->datset, cb->ied, cb->ld);
		cb->bad |= SV_SCL_BAD_DATASET;
		return;
	}
	snprintf(cb->ds.name, sizeof(cb->ds.name), "%.63s", cb->datset);
	FOR_KIDS(f, dsn, "FCDA") {
		if (add_fcda(c, cbi, ied, f, &cb->ds, &cb->nominal_hz)) {
			cb->bad |= SV_SCL_BAD_DATASET;
			sv_dataset_init(&cb->ds, cb->datset);
			return;
		}
	}
	if (!cb->ds.nmembers) {
		diag(c, SV_SCL_ERROR, cbi, dsn, "%s: DataSet %s has no FCDA", cb->ref, cb->datset);
		cb->bad |= SV_SCL_BAD_DATASET;
	}
}

static void read_cbs(struct ctx *c)
{
	FOR_KIDS(ied, c->root, "IED")
		FOR_LDS(ld, ied) {
			xmlNodePtr ln0 = kid(ld, "LN0", NULL);

			FOR_KIDS(svc, ln0, "SampledValueControl")
				read_cb(c, ied, ld, ln0, svc);
				}
}

/* The file's nominal frequency when it states one (its VoltageLevels agree on nomFreq). */
static unsigned file_nominal_hz(struct ctx *c)
{
	unsigned hz = 0;

	FOR_KIDS(st, c->root, "Substation")
		FOR_KIDS(vl, st, "VoltageLevel") {
			char v[16];
			unsigned long u;

			if (!attr(vl, "nomFreq", v, sizeof(v)))
				continue;
			if (!parse_u(v, 10, 1000, &u) || (hz && hz != u))
				return 0;
			hz = (unsigned)u;
		}
	return hz;
}

static void check_duplicates(struct ctx *c)
{
	struct sv_scl *s = c->s;

	for (unsigned i = 0; i < s->ncb; i++) {
		for (unsigned j = 0; j < i; j++) {
			struct sv_scl_cb *a = &s->cb[j], *b = &s->cb[i];

			if (!a->has_address || !b->has_address || a->appid != b->appid || strcmp(a->subnet, b->subnet))
				continue;
			a->bad |= SV_SCL_BAD_DUP_APPID;
			b->bad |= SV_SCL_BAD_DUP_APPID;
			diag_at(c, SV_SCL_ERROR, (int)i, b->addr_line, "%s: APPID 0x%04X on subnetwork %s is also %s's (line "
				"%u): APPIDs are unique on a subnetwork", b->ref, b->appid, b->subnet, a->ref, a->addr_line);
		}
	}
}

/* ---- subscriptions ---- */

static int cb_index(const struct sv_scl *s, const char *ied, const char *ld, const char *name)
{
	for (unsigned i = 0; i < s->ncb; i++)
		if (!strcmp(s->cb[i].ied, ied) && !strcmp(s->cb[i].ld, ld) && !strcmp(s->cb[i].name, name))
			return (int)i;
	return -1;
}

static void add_sub(struct ctx *c, const char *ied, const xmlNode *at, enum sv_scl_via via, const uint16_t *cand,
		    unsigned n)
{
	struct sv_scl *s = c->s;
	struct sv_scl_sub *e, *arr;

	for (unsigned i = 0; i < s->nsub; i++) {
		e = &s->sub[i];
		if (!strcmp(e->ied, ied) && e->ncand == n && !memcmp(e->cand, cand, n * sizeof(*cand)))
			return;
	}
	arr = grow(c, s->sub, s->nsub, &c->cap_sub, sizeof(*e));
	if (!arr)
		return;
	s->sub = arr;
	e = &s->sub[s->nsub++];
	memset(e, 0, sizeof(*e));
	snprintf(e->ied, sizeof(e->ied), "%s", ied);
	e->line = line_of(at);
	e->via = (uint8_t)via;
	e->ncand = (uint8_t)n;
	memcpy(e->cand, cand, n * sizeof(*cand));
}

/* Does DataSet @ds carry the data an ExtRef names? */
static bool ds_carries(const xmlNode *ds, const struct fcda *x)
{
	FOR_KIDS(f, ds, "FCDA") {
		struct fcda y;
		size_t a, b;

		fcda_read(f, &y);
		if (strcmp(x->ld, y.ld) || strcmp(x->prefix, y.prefix) || strcmp(x->cls, y.cls) ||
		    strcmp(x->inst, y.inst) || strcmp(x->dobj, y.dobj))
			continue;
		a = strlen(x->da);
		b = strlen(y.da);
		if (!a || !b || (a <= b && !strncmp(x->da, y.da, a) && (y.da[a] == '.' || !y.da[a])) ||
		    (b < a && !strncmp(x->da, y.da, b) && x->da[b] == '.'))
			return true;
	}
	return false;
}

static void extref(struct ctx *c, const char *me, const xmlNode *e)
{
	struct sv_scl *s = c->s;
	char st[16], src_ied[SV_SCL_NAME_LEN], cbn[SV_SCL_NAME_LEN], sld[SV_SCL_NAME_LEN];
	bool is_smv, other = false;
	uint16_t cand[SV_SCL_MAX_CAND];
	unsigned n = 0;
	struct fcda x;
	xmlNodePtr ied;

	attr(e, "serviceType", st, sizeof(st));
	if (st[0] && strcmp(st, "SMV"))
		return;
	is_smv = !strcmp(st, "SMV");
	if (!attr(e, "iedName", src_ied, sizeof(src_ied)) || !src_ied[0])
		return; /* not bound yet (later binding) */
	fcda_read(e, &x);
	if (attr(e, "srcCBName", cbn, sizeof(cbn)) && cbn[0]) {
		int i;

		if (!attr(e, "srcLDInst", sld, sizeof(sld)) || !sld[0])
			snprintf(sld, sizeof(sld), "%s", x.ld);
		i = cb_index(s, src_ied, sld, cbn);
		if (i >= 0) {
			cand[0] = (uint16_t)i;
			add_sub(c, me, e, SV_SCL_VIA_EXTREF, cand, 1);
		} else if (is_smv) {
			diag(c, SV_SCL_ERROR, -1, e, "IED %s: ExtRef names SampledValueControl %s/%s/LLN0.%s, which the file "
			     "does not define", me, src_ied, sld, cbn);
		}
		return;
	}
	ied = find_ied(c, src_ied);
	FOR_LDS(ld, ied)
		for (xmlNodePtr ln = ld->children; ln; ln = ln->next) {
			if (!is_el(ln, "LN0") && !is_el(ln, "LN"))
				continue;
			for (xmlNodePtr cb = ln->children; cb; cb = cb->next) {
				char dsname[SV_SCL_NAME_LEN], ldi[SV_SCL_NAME_LEN], nm[SV_SCL_NAME_LEN];
				xmlNodePtr ds = NULL;
				int i;

				if (!is_el(cb, "SampledValueControl") && !is_el(cb, "GSEControl") &&
				    !is_el(cb, "ReportControl") && !is_el(cb, "LogControl"))
					continue;
				attr(cb, "datSet", dsname, sizeof(dsname));
				FOR_KIDS(d, ln, "DataSet")
					if (attr_is(d, "name", dsname))
						ds = d;
				if (!ds || !ds_carries(ds, &x))
					continue;
				if (!is_el(cb, "SampledValueControl")) {
					other = true;
					continue;
				}
				attr(ld, "inst", ldi, sizeof(ldi));
				attr(cb, "name", nm, sizeof(nm));
				i = cb_index(s, src_ied, ldi, nm);
				if (i >= 0 && n < SV_SCL_MAX_CAND)
					cand[n++] = (uint16_t)i;
			}
		}
	if (n && (is_smv || !other))
		add_sub(c, me, e, SV_SCL_VIA_EXTREF, cand, n);
	else if (!n && is_smv)
		diag(c, SV_SCL_ERROR, -1, e, "IED %s: ExtRef serviceType=\"SMV\" takes %s/%s%s%s.%s%s%s, which no "
		     "SampledValueControl of %s carries", me, x.ld, x.prefix, x.cls, x.inst, x.dobj, x.da[0] ? "." : "",
		     x.da, src_ied);
}

static void lsvs(struct ctx *c, const char *me, const xmlNode *ln)
{
	const char *path[] = { "SvCBRef", "setSrcRef" };
	char ref[SV_SCL_REF_LEN], *slash, *dot;
	uint16_t cand;

	if (!inst_val(ln, path, 2, ref, sizeof(ref)))
		return; /* not configured */
	slash = strchr(ref, '/');
	dot = slash ? strrchr(slash, '.') : NULL;
	if (slash && dot) {
		*slash = '\0';
		*dot = '\0';
		FOR_KIDS(ied, c->root, "IED")
			FOR_LDS(ld, ied) {
				char ldn[SV_SCL_NAME_LEN * 2], iname[SV_SCL_NAME_LEN], inst[SV_SCL_NAME_LEN];
				int i;

				ld_name(ied, ld, ldn, sizeof(ldn));
				if (strcmp(ldn, ref))
					continue;
				attr(ied, "name", iname, sizeof(iname));
				attr(ld, "inst", inst, sizeof(inst));
				i = cb_index(c->s, iname, inst, dot + 1);
				if (i >= 0 && !strcmp(slash + 1, "LLN0")) {
					cand = (uint16_t)i;
					add_sub(c, me, ln, SV_SCL_VIA_LSVS, &cand, 1);
					return;
				}
					}
		*slash = '/';
		*dot = '.';
	}
	diag(c, SV_SCL_ERROR, -1, ln, "IED %s: LSVS SvCBRef.setSrcRef '%s' names no SampledValueControl of the file", me,
	     ref);
}

static void read_subscriptions(struct ctx *c)
{
	FOR_KIDS(ied, c->root, "IED") {
		char me[SV_SCL_NAME_LEN];

		attr(ied, "name", me, sizeof(me));
		FOR_LDS(ld, ied)
			for (xmlNodePtr ln = ld->children; ln; ln = ln->next) {
				if (!is_el(ln, "LN0") && !is_el(ln, "LN"))
					continue;
				FOR_KIDS(in, ln, "Inputs")
					FOR_KIDS(e, in, "ExtRef")
						extref(c, me, e);
				if (is_el(ln, "LN") && attr_is(ln, "lnClass", "LSVS"))
					lsvs(c, me, ln);
			}
	}
	/* receivers a control block lists itself */
	for (unsigned i = 0; i < c->s->ncb; i++) {
		const struct sv_scl_cb *cb = &c->s->cb[i];
		xmlNodePtr ied = find_ied(c, cb->ied), ld = ied ? find_ld(ied, cb->ld) : NULL, ln0 = kid(ld, "LN0", NULL);

		FOR_KIDS(svc, ln0, "SampledValueControl") {
			if (!attr_is(svc, "name", cb->name))
				continue;
			FOR_KIDS(in, svc, "IEDName") {
				char who[SV_SCL_NAME_LEN];
				uint16_t cand = (uint16_t)i;

				text(in, who, sizeof(who));
				if (who[0])
					add_sub(c, who, in, SV_SCL_VIA_IEDNAME, &cand, 1);
			}
		}
	}
}

/* ---- loading ---- */

__attribute__((format(printf, 4, 5))) static void fail(struct sv_scl_error *err, const char *file, unsigned line,
						      const char *fmt, ...)
{
	char msg[SV_SCL_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (err) {
		err->line = line;
		if (line)
			snprintf(err->text, sizeof(err->text), "%s:%u: %s", file, line, msg);
		else
			snprintf(err->text, sizeof(err->text), "%s: %s", file, msg);
	}
}

static int check_edition(struct ctx *c, struct sv_scl_error *err)
{
	char ver[32], rev[32], rel[32];
	bool has_ver = attr(c->root, "version", ver, sizeof(ver));

	attr(c->root, "revision", rev, sizeof(rev));
	attr(c->root, "release", rel, sizeof(rel));
	if (!has_ver) {
		snprintf(c->s->edition, sizeof(c->s->edition), "2003");
		return 0;
	}
	if (!strcmp(ver, "2007") && (!strcmp(rev, "A") || !strcmp(rev, "B") || !strcmp(rev, "C")) &&
	    strspn(rel, "0123456789") == strlen(rel) && strlen(rel) <= 2) {
		snprintf(c->s->edition, sizeof(c->s->edition), "2007%s%s", rev, rel);
		return 0;
	}
	fail(err, c->s->file, line_of(c->root),
	     "unknown SCL edition: version=\"%s\" revision=\"%s\" release=\"%s\"; svkit reads 2003 (no version) and 2007 "
	     "revisions A, B and C (IEC 61850-6 Ed 1, 2, 2.1)", ver, rev, rel);
	return -EINVAL;
}

/* The line of "<!DOCTYPE" for the message (libxml2 keeps no line for a DTD node); 0 when not found as such
 * (another encoding). */
static unsigned doctype_line(const char *buf, size_t len)
{
	const char *p = memmem(buf, len, "<!DOCTYPE", 9);
	unsigned line = 1;

	if (!p)
		return 0;
	for (const char *q = buf; q < p; q++)
		line += *q == '\n';
	return line;
}

int sv_scl_load_mem(struct sv_scl **out, const void *buf, size_t len, const char *name, struct sv_scl_error *err)
{
	struct ctx c = { 0 };
	xmlParserCtxtPtr pc;
	int ret = 0;

	*out = NULL;
	if (err)
		memset(err, 0, sizeof(*err));
	if (len > SV_SCL_MAX_BYTES || len > INT32_MAX) {
		fail(err, name, 0, "%zu octets: over the %u MiB an SCL file may have here", len, SV_SCL_MAX_BYTES >> 20);
		return -EFBIG;
	}
	c.s = calloc(1, sizeof(*c.s));
	if (!c.s)
		return -ENOMEM;
	snprintf(c.s->file, sizeof(c.s->file), "%s", name);
	pc = xmlNewParserCtxt();
	if (!pc) {
		ret = -ENOMEM;
		goto out_free;
	}
	/* NONET: no network; no NOENT: entities stay unexpanded; no DTDLOAD; libxml2's limits kept (no HUGE);
	 * NOERROR/NOWARNING: libxml2 prints nothing, the error is read back below. */
	c.doc = xmlCtxtReadMemory(pc, buf, (int)len, name, NULL,
				  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES);
	if (!c.doc) {
		const xmlError *e = xmlCtxtGetLastError(pc);
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", e && e->message ? e->message : "not XML");
		msg[strcspn(msg, "\n")] = '\0';
		fail(err, name, e ? (unsigned)e->line : 0, "not well-formed XML: %s", msg);
		ret = -EBADMSG;
		goto out_ctxt;
	}
	if (c.doc->intSubset || c.doc->extSubset) {
		fail(err, name, doctype_line(buf, len), "a DOCTYPE: SCL is defined by an XML Schema and "
		     "has none; refused (entities are never expanded here)");
		ret = -EINVAL;
		goto out_doc;
	}
	c.root = xmlDocGetRootElement(c.doc);
	if (!is_el(c.root, "SCL")) {
		fail(err, name, line_of(c.root), "not an SCL file: the root element is %s%s%s, not SCL in namespace %s",
		     c.root ? (const char *)c.root->name : "absent",
		     c.root && c.root->ns ? " in namespace " : "", c.root && c.root->ns ? (const char *)c.root->ns->href : "",
		     SCL_NS);
		ret = -EINVAL;
		goto out_doc;
	}
	ret = check_edition(&c, err);
	if (ret)
		goto out_doc;
	c.templates = kid(c.root, "DataTypeTemplates", NULL);
	read_cbs(&c);
	if (!c.oom) {
		unsigned hz = file_nominal_hz(&c);

		for (unsigned i = 0; i < c.s->ncb; i++)
			if (!c.s->cb[i].nominal_hz)
				c.s->cb[i].nominal_hz = (uint16_t)hz;
		check_duplicates(&c);
	}
	if (!c.oom)
		read_subscriptions(&c);
	if (c.oom)
		ret = -ENOMEM;
out_doc:
	xmlFreeDoc(c.doc);
out_ctxt:
	xmlFreeParserCtxt(pc);
out_free:
	if (ret) {
		sv_scl_free(c.s);
		return ret;
	}
	*out = c.s;
	return 0;
}

int sv_scl_load(struct sv_scl **out, const char *path, struct sv_scl_error *err)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd, ret;

	*out = NULL;
	if (err)
		memset(err, 0, sizeof(*err));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		fail(err, path, 0, "%s", strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		fail(err, path, 0, "%s", strerror(-ret));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		fail(err, path, 0, "not a regular file");
		goto out_close;
	}
	if (st.st_size > (off_t)SV_SCL_MAX_BYTES) {
		ret = -EFBIG;
		fail(err, path, 0, "%lld octets: over the %u MiB an SCL file may have here", (long long)st.st_size,
		     SV_SCL_MAX_BYTES >> 20);
		goto out_close;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out_close;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			fail(err, path, 0, "read: %s", n < 0 ? strerror(errno) : "the file shrank while read");
			goto out_free;
		}
		got += (size_t)n;
	}
	ret = sv_scl_load_mem(out, buf, got, path, err);
out_free:
	free(buf);
out_close:
	close(fd);
	return ret;
}

void sv_scl_free(struct sv_scl *s)
{
	if (!s)
		return;
	free(s->cb);
	free(s->sub);
	free(s->diag);
	free(s);
}

int sv_scl_find_cb(const struct sv_scl *s, const char *ied, const char *ld_name)
{
	char buf[SV_SCL_REF_LEN], *a, *b;

	snprintf(buf, sizeof(buf), "%s", ld_name);
	a = strchr(buf, '/');
	if (!a)
		return -1;
	*a++ = '\0';
	b = strchr(a, '/');
	if (b) { /* IED/LD/NAME */
		*b++ = '\0';
		if (ied && strcmp(ied, buf))
			return -1;
		for (unsigned i = 0; i < s->ncb; i++)
			if (!strcmp(s->cb[i].ied, buf) && !strcmp(s->cb[i].ld, a) && !strcmp(s->cb[i].name, b))
				return (int)i;
		return -1;
	}
	for (unsigned i = 0; i < s->ncb; i++)
		if ((!ied || !strcmp(s->cb[i].ied, ied)) && !strcmp(s->cb[i].ld, buf) && !strcmp(s->cb[i].name, a))
			return (int)i;
	return -1;
}

unsigned sv_scl_publishers(const struct sv_scl *s, const char **first)
{
	unsigned n = 0;

	*first = NULL;
	for (unsigned i = 0; i < s->ncb; i++) {
		bool seen = false;

		for (unsigned j = 0; j < i && !seen; j++)
			seen = !strcmp(s->cb[j].ied, s->cb[i].ied);
		if (seen)
			continue;
		if (!n)
			*first = s->cb[i].ied;
		n++;
	}
	return n;
}
