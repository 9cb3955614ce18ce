// SPDX-License-Identifier: Apache-2.0
/*
 * Table-driven configuration: YAML (libyaml document API, for node marks), overrides, dump, help.
 * See sv_config.h for the contract. The library writes only to the FILE * it is given.
 */
#include "sv_config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <yaml.h>

#define PATH_MAX_LEN 128

static void pathf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Paths longer than the buffer are cut: they only appear in messages. */
static void pathf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

static const char *const type_names[] = {
	[SV_CFG_BOOL] = "bool",	    [SV_CFG_INT] = "int",	[SV_CFG_UINT] = "uint",
	[SV_CFG_DOUBLE] = "double", [SV_CFG_STRING] = "string", [SV_CFG_ENUM] = "enum",
	[SV_CFG_MAC] = "mac",	    [SV_CFG_DOUBLES] = "doubles", [SV_CFG_SECTION] = "section",
	[SV_CFG_LIST] = "list",	    [SV_CFG_CLI] = "option",
};

static void err_set(struct sv_cfg_error *err, const char *file, unsigned line, unsigned col, const char *path,
		    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void err_set(struct sv_cfg_error *err, const char *file, unsigned line, unsigned col, const char *path,
		    const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	err->column = col;
	snprintf(err->path, sizeof(err->path), "%s", path ? path : "");
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	if (line)
		snprintf(err->text, sizeof(err->text), "%s:%u:%u: %s%s%s", err->file, line, col, err->path,
			 err->path[0] ? ": " : "", err->msg);
	else
		snprintf(err->text, sizeof(err->text), "%s%s%s%s%s", err->file, err->file[0] ? ": " : "",
			 err->path, err->path[0] ? ": " : "", err->msg);
}

/* ---- strict scalar parsing ---- */

int sv_parse_int64(const char *s, int64_t *out)
{
	const char *p = s;
	char *end;
	bool neg = false;
	uint64_t u;
	int base = 10;

	if (!s || !*s)
		return -EINVAL;
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (p[0] == '0' && p[1] != '\0') {
		return -EINVAL; /* leading zero: octal in C, ambiguous for people */
	}
	if (!isxdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	u = strtoull(p, &end, base);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	if (neg) {
		if (u > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*out = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
	} else {
		if (u > (uint64_t)INT64_MAX)
			return -ERANGE;
		*out = (int64_t)u;
	}
	return 0;
}

int sv_parse_uint64(const char *s, uint64_t *out)
{
	const char *p = s;
	char *end;
	int base = 10;

	if (!s || !*s)
		return -EINVAL;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (p[0] == '0' && p[1] != '\0') {
		return -EINVAL;
	}
	if (!isxdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	*out = strtoull(p, &end, base);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	return 0;
}

int sv_parse_double(const char *s, double *out)
{
	char *end;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	/* strtod accepts "nan", "inf", "0x1p3": only plain decimal numbers are configuration values. */
	for (const char *p = s; *p; p++)
		if (!strchr("0123456789+-.eE", *p))
			return -EINVAL;
	errno = 0;
	*out = strtod(s, &end);
	if (*end || end == s)
		return -EINVAL;
	if (errno == ERANGE && fabs(*out) > 1.0)
		return -ERANGE;
	return 0;
}

int sv_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1", "True", "TRUE", "Yes", "On" };
	static const char *const no[] = { "false", "no", "off", "0", "False", "FALSE", "No", "Off" };

	for (unsigned i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

int sv_parse_mac(const char *s, uint8_t mac[6])
{
	char sep = 0;

	if (strlen(s) != 17)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		const char *p = s + 3 * i;
		unsigned v = 0;

		for (int j = 0; j < 2; j++) {
			char c = p[j];

			if (!isxdigit((unsigned char)c))
				return -EINVAL;
			v = v * 16 + (unsigned)(isdigit((unsigned char)c) ? c - '0' : (tolower((unsigned char)c) - 'a' + 10));
		}
		if (i < 5) {
			if (p[2] != ':' && p[2] != '-')
				return -EINVAL;
			if (sep && p[2] != sep)
				return -EINVAL;
			sep = p[2];
		}
		mac[i] = (uint8_t)v;
	}
	return 0;
}

/* ---- one key ---- */

/* Command-line rows (SV_CFG_CLI) are not keys: files, overrides, defaults and the dump pass them over. */
static bool is_key(const struct sv_cfg_key *k)
{
	return k->type != SV_CFG_CLI;
}

static bool has_range(const struct sv_cfg_key *k)
{
	return k->min <= k->max;
}

int sv_config_format_range(const struct sv_cfg_key *k, char *buf, size_t n)
{
	if (!has_range(k)) {
		buf[0] = '\0';
		return -ENOENT;
	}
	snprintf(buf, n, "%s%.15g..%.15g", k->flags & SV_CFG_ZERO ? "0 or " : "", k->min, k->max);
	return 0;
}

static int out_of_range(const struct sv_cfg_key *k, const char *s, char *msg, size_t n)
{
	char range[80];

	sv_config_format_range(k, range, sizeof(range));
	snprintf(msg, n, "%.100s is out of range %s", s, range[0] ? range : "of the field");
	return -EINVAL;
}

int sv_config_format_values(const struct sv_cfg_key *k, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	if (k->type == SV_CFG_ENUM) {
		for (int i = 0; k->names[i] && used < n; i++)
			used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? "|" : "", k->names[i]);
		return buf[0] ? 0 : -ENOENT;
	}
	if (sv_config_format_range(k, buf, n))
		return -ENOENT;
	if (k->flags & SV_CFG_POW2) {
		used = strlen(buf);
		snprintf(buf + used, n - used, ", a power of two");
	}
	return 0;
}

/* An integer's value against the row's range and rules; @msg (size @n) says what is wrong. */
static int check_integer(const struct sv_cfg_key *k, const char *s, double v, bool pow2_ok, char *msg, size_t n)
{
	if (v == 0 && (k->flags & SV_CFG_ZERO))
		return 0;
	if (has_range(k) && (v < k->min || v > k->max))
		return out_of_range(k, s, msg, n);
	if ((k->flags & SV_CFG_POW2) && !pow2_ok) {
		snprintf(msg, n, "%.100s is not a power of two", s);
		return -EINVAL;
	}
	return 0;
}

static int store_uint(void *field, size_t size, uint64_t v)
{
	switch (size) {
	case 1:
		if (v > UINT8_MAX)
			return -ERANGE;
		*(uint8_t *)field = (uint8_t)v;
		return 0;
	case 2:
		if (v > UINT16_MAX)
			return -ERANGE;
		*(uint16_t *)field = (uint16_t)v;
		return 0;
	case 4:
		if (v > UINT32_MAX)
			return -ERANGE;
		*(uint32_t *)field = (uint32_t)v;
		return 0;
	case 8:
		*(uint64_t *)field = v;
		return 0;
	}
	return -EINVAL;
}

static int store_int(void *field, size_t size, int64_t v)
{
	switch (size) {
	case 1:
		if (v < INT8_MIN || v > INT8_MAX)
			return -ERANGE;
		*(int8_t *)field = (int8_t)v;
		return 0;
	case 2:
		if (v < INT16_MIN || v > INT16_MAX)
			return -ERANGE;
		*(int16_t *)field = (int16_t)v;
		return 0;
	case 4:
		if (v < INT32_MIN || v > INT32_MAX)
			return -ERANGE;
		*(int32_t *)field = (int32_t)v;
		return 0;
	case 8:
		*(int64_t *)field = v;
		return 0;
	}
	return -EINVAL;
}

static uint64_t load_uint(const void *field, size_t size)
{
	switch (size) {
	case 1:
		return *(const uint8_t *)field;
	case 2:
		return *(const uint16_t *)field;
	case 4:
		return *(const uint32_t *)field;
	default:
		return *(const uint64_t *)field;
	}
}

static int64_t load_int(const void *field, size_t size)
{
	switch (size) {
	case 1:
		return *(const int8_t *)field;
	case 2:
		return *(const int16_t *)field;
	case 4:
		return *(const int32_t *)field;
	default:
		return *(const int64_t *)field;
	}
}

/* Writes a message into @msg (size 256) and returns -EINVAL on failure. */
static int parse_double_checked(const struct sv_cfg_key *k, const char *s, double *d, char *msg, size_t n)
{
	char range[80];
	int e = sv_parse_double(s, d);

	if (e) {
		snprintf(msg, n, "'%.200s' is not a number", s);
		return -EINVAL;
	}
	if (has_range(k) && (*d < k->min || *d > k->max)) {
		sv_config_format_range(k, range, sizeof(range));
		snprintf(msg, n, "%.100s is out of range %s", s, range);
		return -EINVAL;
	}
	return 0;
}

static void trim(char *s)
{
	size_t n = strlen(s);
	size_t i = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (isspace((unsigned char)s[i]))
		i++;
	memmove(s, s + i, n - i + 1);
}

/* Sets a scalar key (every type but SECTION and LIST) from text. DOUBLES accepts "[a, b]" or "a". */
static int set_scalar(const struct sv_cfg_key *k, void *base, const char *s, char *msg, size_t n)
{
	void *field = (char *)base + k->offset;
	int e;

	if (k->check && k->check(s, msg, n))
		return -EINVAL;
	switch (k->type) {
	case SV_CFG_BOOL: {
		bool b;

		if (sv_parse_bool(s, &b)) {
			snprintf(msg, n, "'%.200s' is not a boolean (true/false)", s);
			return -EINVAL;
		}
		*(bool *)field = b;
		return 0;
	}
	case SV_CFG_INT: {
		int64_t v;

		e = sv_parse_int64(s, &v);
		if (e == -EINVAL) {
			snprintf(msg, n, "'%.200s' is not an integer", s);
			return -EINVAL;
		}
		if (e || check_integer(k, s, (double)v, v > 0 && !(v & (v - 1)), msg, n))
			return e ? out_of_range(k, s, msg, n) : -EINVAL;
		if (store_int(field, k->size, v))
			return out_of_range(k, s, msg, n);
		return 0;
	}
	case SV_CFG_UINT: {
		uint64_t v;

		e = sv_parse_uint64(s, &v);
		if (e == -EINVAL) {
			snprintf(msg, n, "'%.200s' is not an unsigned integer", s);
			return -EINVAL;
		}
		if (e || check_integer(k, s, (double)v, v && !(v & (v - 1)), msg, n))
			return e ? out_of_range(k, s, msg, n) : -EINVAL;
		if (store_uint(field, k->size, v))
			return out_of_range(k, s, msg, n);
		return 0;
	}
	case SV_CFG_DOUBLE:
		return parse_double_checked(k, s, (double *)field, msg, n);
	case SV_CFG_STRING:
		if (strlen(s) >= k->size) {
			snprintf(msg, n, "string is %zu characters, at most %zu allowed", strlen(s), k->size - 1);
			return -EINVAL;
		}
		memcpy(field, s, strlen(s) + 1);
		return 0;
	case SV_CFG_ENUM:
		for (int i = 0; k->names[i]; i++) {
			if (!strcmp(k->names[i], s)) {
				*(int *)field = i;
				return 0;
			}
		}
		{
			char list[160] = "";
			size_t used = 0;

			for (int i = 0; k->names[i] && used < sizeof(list); i++)
				used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
							 k->names[i]);
			snprintf(msg, n, "'%.200s' is not one of: %s", s, list);
		}
		return -EINVAL;
	case SV_CFG_MAC:
		if (sv_parse_mac(s, field)) {
			snprintf(msg, n, "'%.200s' is not a MAC address (xx:xx:xx:xx:xx:xx)", s);
			return -EINVAL;
		}
		return 0;
	case SV_CFG_DOUBLES: {
		char buf[512];
		double vals[64];
		unsigned cnt = 0;
		char *save = NULL;
		size_t len = strlen(s);

		if (len >= sizeof(buf) || k->count > 64) {
			snprintf(msg, n, "value too long");
			return -EINVAL;
		}
		memcpy(buf, s, len + 1);
		trim(buf);
		len = strlen(buf);
		if (buf[0] != '[') {
			double d;

			if (parse_double_checked(k, buf, &d, msg, n))
				return -EINVAL;
			for (unsigned i = 0; i < k->count; i++)
				((double *)field)[i] = d;
			return 0;
		}
		if (buf[len - 1] != ']') {
			snprintf(msg, n, "'%.200s' is not a list [a, b, ...]", s);
			return -EINVAL;
		}
		buf[len - 1] = '\0';
		for (char *tok = strtok_r(buf + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			trim(tok);
			if (cnt >= k->count) {
				snprintf(msg, n, "more than %u values", k->count);
				return -EINVAL;
			}
			if (parse_double_checked(k, tok, &vals[cnt], msg, n))
				return -EINVAL;
			cnt++;
		}
		if (cnt != k->count) {
			snprintf(msg, n, "%u values given, %u expected", cnt, k->count);
			return -EINVAL;
		}
		memcpy(field, vals, cnt * sizeof(double));
		return 0;
	}
	case SV_CFG_SECTION:
	case SV_CFG_LIST:
	case SV_CFG_CLI:
		break;
	}
	snprintf(msg, n, "not a scalar key");
	return -EINVAL;
}

/* ---- defaults ---- */

static int defaults_rec(const struct sv_cfg_key *tab, void *base, const char *prefix, struct sv_cfg_error *err)
{
	char path[PATH_MAX_LEN];
	char msg[256];

	for (const struct sv_cfg_key *k = tab; k->name; k++) {
		void *field = (char *)base + k->offset;

		if (!is_key(k))
			continue;
		pathf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "", k->name);
		if (k->type == SV_CFG_SECTION) {
			if (defaults_rec(k->sub, field, path, err))
				return -EINVAL;
			continue;
		}
		if (k->type == SV_CFG_LIST) {
			uint64_t cnt = 0;

			memset(field, 0, k->size * k->count);
			if (k->def && (sv_parse_uint64(k->def, &cnt) || cnt > k->count)) {
				err_set(err, "defaults", 0, 0, path, "bad default count '%s'", k->def);
				return -EINVAL;
			}
			*(unsigned *)((char *)base + k->count_offset) = (unsigned)cnt;
			for (unsigned i = 0; i < cnt; i++) {
				char ep[PATH_MAX_LEN];

				pathf(ep, sizeof(ep), "%s[%u]", path, i);
				if (defaults_rec(k->sub, (char *)field + i * k->size, ep, err))
					return -EINVAL;
			}
			continue;
		}
		memset(field, 0, k->size);
		if (k->def && set_scalar(k, base, k->def, msg, sizeof(msg))) {
			err_set(err, "defaults", 0, 0, path, "bad default: %s", msg);
			return -EINVAL;
		}
	}
	return 0;
}

int sv_config_defaults(const struct sv_cfg_key *tab, void *obj, struct sv_cfg_error *err)
{
	return defaults_rec(tab, obj, "", err);
}

/* ---- YAML ---- */

struct yload {
	yaml_document_t *doc;
	const char *file;
	struct sv_cfg_error *err;
	bool merge; /* sv_config_load_file_over: list elements keep what they hold */
};

static int yerr(struct yload *y, const yaml_node_t *node, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int yerr(struct yload *y, const yaml_node_t *node, const char *path, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	err_set(y->err, y->file, (unsigned)node->start_mark.line + 1, (unsigned)node->start_mark.column + 1, path,
		"%s", msg);
	return -EINVAL;
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_SCALAR_NODE:
		return "a scalar";
	case YAML_SEQUENCE_NODE:
		return "a sequence";
	case YAML_MAPPING_NODE:
		return "a mapping";
	default:
		return "nothing";
	}
}

static const char *scalar_text(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

static int load_mapping(struct yload *y, const yaml_node_t *node, const struct sv_cfg_key *tab, void *base,
			const char *prefix);

static int load_value(struct yload *y, const yaml_node_t *val, const struct sv_cfg_key *k, void *base,
		      const char *path)
{
	char msg[256];
	void *field = (char *)base + k->offset;

	switch (k->type) {
	case SV_CFG_SECTION:
		if (val->type == YAML_SCALAR_NODE && !val->data.scalar.length)
			return 0; /* "section:" with nothing under it */
		if (val->type != YAML_MAPPING_NODE)
			return yerr(y, val, path, "expected a mapping, found %s", node_kind(val));
		return load_mapping(y, val, k->sub, field, path);
	case SV_CFG_LIST: {
		unsigned cnt = 0, had = *(unsigned *)((char *)base + k->count_offset);

		if (val->type != YAML_SEQUENCE_NODE)
			return yerr(y, val, path, "expected a sequence of mappings, found %s", node_kind(val));
		if (!y->merge)
			memset(field, 0, k->size * k->count);
		for (yaml_node_item_t *it = val->data.sequence.items.start; it < val->data.sequence.items.top; it++) {
			yaml_node_t *el = yaml_document_get_node(y->doc, *it);
			char ep[PATH_MAX_LEN];
			void *eb = (char *)field + cnt * k->size;

			pathf(ep, sizeof(ep), "%s[%u]", path, cnt);
			if (cnt >= k->count)
				return yerr(y, el, ep, "more than %u elements", k->count);
			if (el->type != YAML_MAPPING_NODE)
				return yerr(y, el, ep, "expected a mapping, found %s", node_kind(el));
			if ((!y->merge || cnt >= had) && defaults_rec(k->sub, eb, ep, y->err))
				return -EINVAL;
			if (load_mapping(y, el, k->sub, eb, ep))
				return -EINVAL;
			cnt++;
		}
		*(unsigned *)((char *)base + k->count_offset) = y->merge && had > cnt ? had : cnt;
		return 0;
	}
	case SV_CFG_DOUBLES:
		if (val->type == YAML_SEQUENCE_NODE) {
			unsigned i = 0;
			double vals[64];

			for (yaml_node_item_t *it = val->data.sequence.items.start; it < val->data.sequence.items.top;
			     it++, i++) {
				yaml_node_t *el = yaml_document_get_node(y->doc, *it);

				if (i >= k->count || i >= 64)
					return yerr(y, el, path, "more than %u values", k->count);
				if (el->type != YAML_SCALAR_NODE)
					return yerr(y, el, path, "expected a number, found %s", node_kind(el));
				if (parse_double_checked(k, scalar_text(el), &vals[i], msg, sizeof(msg)))
					return yerr(y, el, path, "%s", msg);
			}
			if (i != k->count)
				return yerr(y, val, path, "%u values given, %u expected", i, k->count);
			memcpy(field, vals, i * sizeof(double));
			return 0;
		}
		/* one number for every element */
		if (val->type != YAML_SCALAR_NODE)
			return yerr(y, val, path, "expected numbers, found %s", node_kind(val));
		if (set_scalar(k, base, scalar_text(val), msg, sizeof(msg)))
			return yerr(y, val, path, "%s", msg);
		return 0;
	default:
		if (val->type != YAML_SCALAR_NODE)
			return yerr(y, val, path, "expected a %s value, found %s", type_names[k->type], node_kind(val));
		if (set_scalar(k, base, scalar_text(val), msg, sizeof(msg)))
			return yerr(y, val, path, "%s", msg);
		return 0;
	}
}

static const struct sv_cfg_key *find_key(const struct sv_cfg_key *tab, const char *name, size_t len)
{
	for (const struct sv_cfg_key *k = tab; k->name; k++)
		if (is_key(k) && strlen(k->name) == len && !memcmp(k->name, name, len))
			return k;
	return NULL;
}

const struct sv_cfg_key *sv_config_find_key(const struct sv_cfg_key *tab, const char *name)
{
	const struct sv_cfg_key *k = find_key(tab, name, strlen(name));

	if (!k)
		errno = ENOENT;
	return k;
}

const struct sv_cfg_key *sv_config_find_path(const struct sv_cfg_key *tab, const char *path)
{
	for (;;) {
		size_t len = strcspn(path, ".");
		const struct sv_cfg_key *k = find_key(tab, path, len);

		if (k && !path[len])
			return k;
		if (!k || k->type != SV_CFG_SECTION) {
			errno = ENOENT;
			return NULL;
		}
		tab = k->sub;
		path += len + 1;
	}
}

static int load_mapping(struct yload *y, const yaml_node_t *node, const struct sv_cfg_key *tab, void *base,
			const char *prefix)
{
	for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(y->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(y->doc, p->value);
		const struct sv_cfg_key *k;
		char path[PATH_MAX_LEN];

		if (kn->type != YAML_SCALAR_NODE)
			return yerr(y, kn, prefix, "a key must be a scalar, found %s", node_kind(kn));
		pathf(path, sizeof(path), "%s%s%s", prefix, prefix[0] ? "." : "", scalar_text(kn));
		k = find_key(tab, scalar_text(kn), kn->data.scalar.length);
		if (!k)
			return yerr(y, kn, path, "unknown key '%s'", scalar_text(kn));
		for (yaml_node_pair_t *q = node->data.mapping.pairs.start; q < p; q++) {
			yaml_node_t *qk = yaml_document_get_node(y->doc, q->key);

			if (qk->type == YAML_SCALAR_NODE && !strcmp(scalar_text(qk), scalar_text(kn)))
				return yerr(y, kn, path, "duplicate key '%s' (first at line %zu)", scalar_text(kn),
					    qk->start_mark.line + 1);
		}
		if (load_value(y, vn, k, base, path))
			return -EINVAL;
	}
	return 0;
}

static int load_parser(const struct sv_cfg_key *tab, void *obj, yaml_parser_t *parser, const char *name,
		       struct sv_cfg_error *err, bool merge)
{
	yaml_document_t doc;
	yaml_node_t *root;
	struct yload y = { .doc = &doc, .file = name, .err = err, .merge = merge };
	int ret = 0;

	if (!yaml_parser_load(parser, &doc)) {
		err_set(err, name, (unsigned)parser->problem_mark.line + 1, (unsigned)parser->problem_mark.column + 1,
			"", "YAML syntax: %s%s%s", parser->problem ? parser->problem : "error",
			parser->context ? " " : "", parser->context ? parser->context : "");
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&doc);
	if (!root)
		goto out; /* empty file: defaults */
	if (root->type == YAML_SCALAR_NODE && !root->data.scalar.length)
		goto out;
	if (root->type != YAML_MAPPING_NODE) {
		ret = yerr(&y, root, "", "the top level must be a mapping, found %s", node_kind(root));
		goto out;
	}
	ret = load_mapping(&y, root, tab, obj, "");
	if (!ret) {
		/* A second document in the same file is almost certainly a mistake. */
		yaml_document_t doc2;

		if (yaml_parser_load(parser, &doc2)) {
			if (yaml_document_get_root_node(&doc2)) {
				yaml_node_t *r2 = yaml_document_get_root_node(&doc2);

				err_set(err, name, (unsigned)r2->start_mark.line + 1, (unsigned)r2->start_mark.column + 1,
					"", "more than one YAML document");
				ret = -EINVAL;
			}
			yaml_document_delete(&doc2);
		}
	}
out:
	yaml_document_delete(&doc);
	return ret;
}

int sv_config_load_string(const struct sv_cfg_key *tab, void *obj, const char *text, size_t len,
			  const char *name, struct sv_cfg_error *err)
{
	yaml_parser_t parser;
	int ret;

	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	ret = load_parser(tab, obj, &parser, name, err, false);
	yaml_parser_delete(&parser);
	return ret;
}

static int load_file(const struct sv_cfg_key *tab, void *obj, const char *path, struct sv_cfg_error *err,
		     bool merge)
{
	yaml_parser_t parser;
	FILE *f = fopen(path, "r");
	int ret;

	if (!f) {
		ret = -errno;
		err_set(err, path, 0, 0, "", "cannot open: %s", strerror(errno));
		return ret;
	}
	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		return -ENOMEM;
	}
	yaml_parser_set_input_file(&parser, f);
	ret = load_parser(tab, obj, &parser, path, err, merge);
	yaml_parser_delete(&parser);
	fclose(f);
	return ret;
}

int sv_config_load_file(const struct sv_cfg_key *tab, void *obj, const char *path, struct sv_cfg_error *err)
{
	return load_file(tab, obj, path, err, false);
}

int sv_config_load_file_over(const struct sv_cfg_key *tab, void *obj, const char *path, struct sv_cfg_error *err)
{
	return load_file(tab, obj, path, err, true);
}

/* ---- positions ---- */

/* The node at @path under @node (NULL: empty document). The whole path is checked, found or not, so that a
 * malformed one is -EINVAL whatever the file holds. 0, -ENOENT or -EINVAL. */
static int node_at(yaml_document_t *doc, yaml_node_t *node, const char *path, yaml_node_t **out)
{
	if (!*path)
		return -EINVAL;
	while (*path) {
		size_t len = strcspn(path, ".[");
		yaml_node_t *next = NULL;

		if (!len)
			return -EINVAL;
		if (node && node->type == YAML_MAPPING_NODE) {
			for (yaml_node_pair_t *p = node->data.mapping.pairs.start; p < node->data.mapping.pairs.top; p++) {
				yaml_node_t *kn = yaml_document_get_node(doc, p->key);

				if (kn && kn->type == YAML_SCALAR_NODE && kn->data.scalar.length == len &&
				    !memcmp(kn->data.scalar.value, path, len)) {
					next = yaml_document_get_node(doc, p->value);
					break;
				}
			}
		}
		node = next;
		path += len;
		while (*path == '[') {
			const char *close = strchr(path, ']');
			char num[24];
			size_t nl;
			uint64_t idx;

			if (!close)
				return -EINVAL;
			nl = (size_t)(close - path - 1);
			if (nl == 0 || nl >= sizeof(num))
				return -EINVAL;
			memcpy(num, path + 1, nl);
			num[nl] = '\0';
			if (sv_parse_uint64(num, &idx)) /* as sv_config_set; "[*]" names no single node */
				return -EINVAL;
			if (node && node->type == YAML_SEQUENCE_NODE &&
			    idx < (uint64_t)(node->data.sequence.items.top - node->data.sequence.items.start))
				node = yaml_document_get_node(doc, node->data.sequence.items.start[idx]);
			else
				node = NULL;
			path = close + 1;
		}
		if (*path == '.') {
			if (!*++path)
				return -EINVAL;
		} else if (*path) {
			return -EINVAL;
		}
	}
	if (!node)
		return -ENOENT;
	*out = node;
	return 0;
}

int sv_config_locate(const char *file, const char *path, const char *value, unsigned *line, unsigned *column)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *node;
	FILE *f;
	int ret;

	*line = *column = 0;
	if (!file || !path)
		return -EINVAL;
	f = fopen(file, "r");
	if (!f)
		return -errno;
	if (!yaml_parser_initialize(&parser)) {
		ret = -ENOMEM;
		goto out_close;
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		ret = -EINVAL;
		goto out_parser;
	}
	ret = node_at(&doc, yaml_document_get_root_node(&doc), path, &node);
	if (!ret && value && (node->type != YAML_SCALAR_NODE || strcmp(scalar_text(node), value)))
		ret = -ENOENT;
	if (!ret) {
		*line = (unsigned)node->start_mark.line + 1;
		*column = (unsigned)node->start_mark.column + 1;
	}
	yaml_document_delete(&doc);
out_parser:
	yaml_parser_delete(&parser);
out_close:
	fclose(f);
	return ret;
}

/* ---- overrides ---- */

static int set_path(const struct sv_cfg_key *tab, void *base, const char *path, const char *value,
		    const char *prefix, struct sv_cfg_error *err)
{
	const char *seg_end = path + strcspn(path, ".[");
	const struct sv_cfg_key *k = find_key(tab, path, (size_t)(seg_end - path));
	char here[PATH_MAX_LEN];
	char msg[256];

	pathf(here, sizeof(here), "%s%s%.*s", prefix, prefix[0] ? "." : "", (int)(seg_end - path), path);
	if (seg_end == path) {
		err_set(err, "--set", 0, 0, here, "empty key name");
		return -EINVAL;
	}
	if (!k) {
		err_set(err, "--set", 0, 0, here, "unknown key");
		return -EINVAL;
	}
	if (k->type == SV_CFG_LIST) {
		unsigned *cnt = (unsigned *)((char *)base + k->count_offset);
		const char *rest;
		uint64_t idx = 0;
		bool all = false;

		if (*seg_end != '[') {
			err_set(err, "--set", 0, 0, here, "a list: say which element, e.g. %s[0].key or %s[*].key",
				here, here);
			return -EINVAL;
		}
		rest = strchr(seg_end, ']');
		if (!rest) {
			err_set(err, "--set", 0, 0, here, "missing ']'");
			return -EINVAL;
		}
		if (rest - seg_end == 2 && seg_end[1] == '*') {
			all = true;
		} else {
			char num[24];
			size_t nl = (size_t)(rest - seg_end - 1);

			if (nl == 0 || nl >= sizeof(num)) {
				err_set(err, "--set", 0, 0, here, "bad element index");
				return -EINVAL;
			}
			memcpy(num, seg_end + 1, nl);
			num[nl] = '\0';
			if (sv_parse_uint64(num, &idx) || idx > *cnt || idx >= k->count) {
				err_set(err, "--set", 0, 0, here, "element index %s out of range 0..%u", num,
					*cnt < k->count ? *cnt : k->count - 1);
				return -EINVAL;
			}
		}
		rest++;
		if (*rest == '.')
			rest++;
		else if (*rest) {
			err_set(err, "--set", 0, 0, here, "expected '.' after ']'");
			return -EINVAL;
		}
		for (unsigned i = all ? 0 : (unsigned)idx; i < (all ? *cnt : (unsigned)idx + 1); i++) {
			void *eb = (char *)base + k->offset + i * k->size;
			char ep[PATH_MAX_LEN];

			pathf(ep, sizeof(ep), "%s[%u]", here, i);
			if (i == *cnt) { /* append */
				if (defaults_rec(k->sub, eb, ep, err))
					return -EINVAL;
				(*cnt)++;
			}
			if (*rest && set_path(k->sub, eb, rest, value, ep, err))
				return -EINVAL;
		}
		return 0;
	}
	if (k->type == SV_CFG_SECTION) {
		if (*seg_end != '.') {
			err_set(err, "--set", 0, 0, here, "a section: name one of its keys (%s.KEY)", here);
			return -EINVAL;
		}
		return set_path(k->sub, (char *)base + k->offset, seg_end + 1, value, here, err);
	}
	if (*seg_end) {
		err_set(err, "--set", 0, 0, here, "not a section or list");
		return -EINVAL;
	}
	if (set_scalar(k, base, value, msg, sizeof(msg))) {
		err_set(err, "--set", 0, 0, here, "%s", msg);
		return -EINVAL;
	}
	return 0;
}

int sv_config_set_value(const struct sv_cfg_key *tab, void *obj, const char *path, const char *value,
			struct sv_cfg_error *err)
{
	return set_path(tab, obj, path, value, "", err);
}

int sv_config_set(const struct sv_cfg_key *tab, void *obj, const char *assignment, struct sv_cfg_error *err)
{
	const char *eq = strchr(assignment, '=');
	char path[PATH_MAX_LEN];
	size_t n;

	if (!eq) {
		err_set(err, "--set", 0, 0, "", "'%.200s' is not KEY=VALUE", assignment);
		return -EINVAL;
	}
	n = (size_t)(eq - assignment);
	if (n >= sizeof(path)) {
		err_set(err, "--set", 0, 0, "", "key too long");
		return -EINVAL;
	}
	memcpy(path, assignment, n);
	path[n] = '\0';
	return set_path(tab, obj, path, eq + 1, "", err);
}

/* ---- dump ---- */

static void print_double(FILE *f, double d)
{
	char buf[40];

	/* Shortest of %.15g..%.17g that reads back to the same double. */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	fputs(buf, f);
}

static void print_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void print_scalar(FILE *f, const struct sv_cfg_key *k, const void *base)
{
	const void *field = (const char *)base + k->offset;

	switch (k->type) {
	case SV_CFG_BOOL:
		fputs(*(const bool *)field ? "true" : "false", f);
		break;
	case SV_CFG_INT:
		fprintf(f, "%" PRId64, load_int(field, k->size));
		break;
	case SV_CFG_UINT:
		/* Keys whose default is written in hex (APPIDs) print in hex. */
		if (k->def && k->def[0] == '0' && (k->def[1] == 'x' || k->def[1] == 'X'))
			fprintf(f, "0x%" PRIx64, load_uint(field, k->size));
		else
			fprintf(f, "%" PRIu64, load_uint(field, k->size));
		break;
	case SV_CFG_DOUBLE:
		print_double(f, *(const double *)field);
		break;
	case SV_CFG_STRING:
		print_string(f, field);
		break;
	case SV_CFG_ENUM: {
		int v = *(const int *)field;

		fputs(k->names[v], f);
		break;
	}
	case SV_CFG_MAC: {
		const uint8_t *m = field;

		fprintf(f, "\"%02x:%02x:%02x:%02x:%02x:%02x\"", m[0], m[1], m[2], m[3], m[4], m[5]);
		break;
	}
	case SV_CFG_DOUBLES:
		fputc('[', f);
		for (unsigned i = 0; i < k->count; i++) {
			if (i)
				fputs(", ", f);
			print_double(f, ((const double *)field)[i]);
		}
		fputc(']', f);
		break;
	default:
		break;
	}
}

int sv_config_get(const struct sv_cfg_key *tab, const void *obj, const char *path, char *buf, size_t n)
{
	const char *base = obj;
	FILE *f;
	size_t len;

	for (;;) {
		size_t seg = strcspn(path, ".");
		const struct sv_cfg_key *k = find_key(tab, path, seg);

		if (!k)
			return -ENOENT;
		if (k->type == SV_CFG_SECTION && path[seg] == '.') {
			base += k->offset;
			tab = k->sub;
			path += seg + 1;
			continue;
		}
		if (path[seg] || k->type == SV_CFG_SECTION || k->type == SV_CFG_LIST)
			return -ENOENT;
		f = fmemopen(buf, n, "w");
		if (!f)
			return -errno;
		print_scalar(f, k, base);
		if (fclose(f))
			return -ENOSPC;
		len = strnlen(buf, n);
		if (len >= n)
			return -ENOSPC;
		/* text, not YAML: a string or MAC without its quotes */
		if ((k->type == SV_CFG_STRING || k->type == SV_CFG_MAC) && len >= 2 && buf[0] == '"') {
			memmove(buf, buf + 1, len - 2);
			buf[len - 2] = '\0';
		}
		return 0;
	}
}

/* @dash: the first line of this mapping starts a sequence element ("- ") two columns left of @indent. */
static void print_rec(const struct sv_cfg_key *tab, const void *base, int indent, bool dash, FILE *f)
{
	for (const struct sv_cfg_key *k = tab; k->name; k++) {
		const void *field = (const char *)base + k->offset;

		if (!is_key(k))
			continue;
		if (dash)
			fprintf(f, "%*s- %s:", indent - 2, "", k->name);
		else
			fprintf(f, "%*s%s:", indent, "", k->name);
		dash = false;
		if (k->type == SV_CFG_SECTION) {
			fputc('\n', f);
			print_rec(k->sub, field, indent + 2, false, f);
		} else if (k->type == SV_CFG_LIST) {
			unsigned cnt = *(const unsigned *)((const char *)base + k->count_offset);

			if (!cnt) {
				fputs(" []\n", f);
				continue;
			}
			fputc('\n', f);
			for (unsigned i = 0; i < cnt; i++)
				print_rec(k->sub, (const char *)field + i * k->size, indent + 4, true, f);
		} else {
			fputc(' ', f);
			print_scalar(f, k, base);
			fputc('\n', f);
		}
	}
}

int sv_config_print(const struct sv_cfg_key *tab, const void *obj, FILE *f)
{
	print_rec(tab, obj, 0, false, f);
	return ferror(f) ? -EIO : 0;
}

/* ---- help ---- */

static void help_rec(const struct sv_cfg_key *tab, const char *prefix, FILE *f)
{
	for (const struct sv_cfg_key *k = tab; k->name; k++) {
		char path[PATH_MAX_LEN];
		char range[80];

		if (!is_key(k))
			continue;
		pathf(path, sizeof(path), "%s%s%s%s", prefix, prefix[0] ? "." : "", k->name,
			 k->type == SV_CFG_LIST ? "[]" : "");
		if (k->type == SV_CFG_SECTION || k->type == SV_CFG_LIST) {
			fprintf(f, "  %-34s %s: %s\n", path, type_names[k->type], k->help ? k->help : "");
			help_rec(k->sub, path, f);
			continue;
		}
		sv_config_format_values(k, range, sizeof(range));
		fprintf(f, "  %-34s %s%s%s (default %s): %s\n", path, type_names[k->type], range[0] ? " " : "", range,
			k->def && k->def[0] ? k->def : "none", k->help ? k->help : "");
	}
}

void sv_config_help(const struct sv_cfg_key *tab, FILE *f)
{
	help_rec(tab, "", f);
}
