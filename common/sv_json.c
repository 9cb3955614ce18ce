// SPDX-License-Identifier: Apache-2.0
/* Streaming JSON writer: see sv_json.h for the contract. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sv_json.h"

void sv_json_init(struct sv_json *j, FILE *f, unsigned flags)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->flags = flags;
}

static int json_fail(struct sv_json *j, int err)
{
	if (!j->err)
		j->err = err;
	return j->err;
}

static void json_put(struct sv_json *j, const char *s, size_t len)
{
	if (j->err)
		return;
	if (len && fwrite(s, 1, len, j->f) != len)
		json_fail(j, -EIO);
}

static void json_puts(struct sv_json *j, const char *s)
{
	json_put(j, s, strlen(s));
}

static void json_indent(struct sv_json *j)
{
	unsigned i;

	if (!(j->flags & SV_JSON_PRETTY))
		return;
	json_put(j, "\n", 1);
	for (i = 0; i < j->depth; i++)
		json_put(j, "  ", 2);
}

/* Everything that is a value (scalar or container start) goes through here first: it checks the
 * grammar and writes the separator. */
static int json_pre_value(struct sv_json *j)
{
	if (j->err)
		return j->err;
	if (j->depth == 0) {
		/* one top-level value per document */
		if (j->need_comma)
			return json_fail(j, -EINVAL);
		return 0;
	}
	if (j->stack[j->depth - 1] == '{') {
		if (!j->after_key)
			return json_fail(j, -EINVAL);
		j->after_key = false;
		return 0;
	}
	if (j->need_comma)
		json_put(j, ",", 1);
	json_indent(j);
	return j->err;
}

int sv_json_escape(FILE *f, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char buf[256];
	size_t n = 0, i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (n > sizeof(buf) - 8) {
			if (fwrite(buf, 1, n, f) != n)
				return -EIO;
			n = 0;
		}
		switch (c) {
		case '"':
			buf[n++] = '\\';
			buf[n++] = '"';
			continue;
		case '\\':
			buf[n++] = '\\';
			buf[n++] = '\\';
			continue;
		case '\b':
			buf[n++] = '\\';
			buf[n++] = 'b';
			continue;
		case '\f':
			buf[n++] = '\\';
			buf[n++] = 'f';
			continue;
		case '\n':
			buf[n++] = '\\';
			buf[n++] = 'n';
			continue;
		case '\r':
			buf[n++] = '\\';
			buf[n++] = 'r';
			continue;
		case '\t':
			buf[n++] = '\\';
			buf[n++] = 't';
			continue;
		default:
			break;
		}
		if (c < 0x20 || c >= 0x7f) {
			/* Bytes, not code points: an svID from the wire is not known to be UTF-8, and emitting
			 * its raw bytes could make the whole document invalid. */
			buf[n++] = '\\';
			buf[n++] = 'u';
			buf[n++] = '0';
			buf[n++] = '0';
			buf[n++] = hex[c >> 4];
			buf[n++] = hex[c & 15];
		} else {
			buf[n++] = (char)c;
		}
	}
	if (n && fwrite(buf, 1, n, f) != n)
		return -EIO;
	return 0;
}

static void json_put_string(struct sv_json *j, const char *s, size_t len)
{
	json_put(j, "\"", 1);
	if (!j->err && sv_json_escape(j->f, s, len))
		json_fail(j, -EIO);
	json_put(j, "\"", 1);
}

static int json_post_value(struct sv_json *j)
{
	j->need_comma = true;
	return j->err;
}

static int json_begin(struct sv_json *j, char c)
{
	if (json_pre_value(j))
		return j->err;
	if (j->depth >= SV_JSON_MAX_DEPTH)
		return json_fail(j, -E2BIG);
	json_put(j, &c, 1);
	j->stack[j->depth++] = (uint8_t)c;
	j->need_comma = false;
	j->after_key = false;
	return j->err;
}

static int json_close(struct sv_json *j, char open, char close)
{
	bool empty;

	if (j->err)
		return j->err;
	if (!j->depth || j->stack[j->depth - 1] != (uint8_t)open || j->after_key)
		return json_fail(j, -EINVAL);
	empty = !j->need_comma;
	j->depth--;
	if (!empty)
		json_indent(j);
	json_put(j, &close, 1);
	j->need_comma = true;
	j->after_key = false;
	return j->err;
}

int sv_json_object_begin(struct sv_json *j)
{
	return json_begin(j, '{');
}

int sv_json_object_end(struct sv_json *j)
{
	return json_close(j, '{', '}');
}

int sv_json_array_begin(struct sv_json *j)
{
	return json_begin(j, '[');
}

int sv_json_array_end(struct sv_json *j)
{
	return json_close(j, '[', ']');
}

int sv_json_key(struct sv_json *j, const char *key)
{
	if (j->err)
		return j->err;
	if (!key || !j->depth || j->stack[j->depth - 1] != '{' || j->after_key)
		return json_fail(j, -EINVAL);
	if (j->need_comma)
		json_put(j, ",", 1);
	json_indent(j);
	json_put_string(j, key, strlen(key));
	json_put(j, (j->flags & SV_JSON_PRETTY) ? ": " : ":", (j->flags & SV_JSON_PRETTY) ? 2 : 1);
	j->after_key = true;
	return j->err;
}

int sv_json_string_n(struct sv_json *j, const char *s, size_t len)
{
	if (!s)
		return sv_json_null(j);
	if (json_pre_value(j))
		return j->err;
	json_put_string(j, s, len);
	return json_post_value(j);
}

int sv_json_string(struct sv_json *j, const char *s)
{
	return sv_json_string_n(j, s, s ? strlen(s) : 0);
}

static int json_raw_value(struct sv_json *j, const char *text)
{
	if (json_pre_value(j))
		return j->err;
	json_puts(j, text);
	return json_post_value(j);
}

int sv_json_int(struct sv_json *j, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return json_raw_value(j, buf);
}

int sv_json_uint(struct sv_json *j, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return json_raw_value(j, buf);
}

int sv_json_double(struct sv_json *j, double v)
{
	char buf[32];
	int prec;

	if (!isfinite(v))
		return json_raw_value(j, "null");
	/* Shortest precision that reads back to the same double. */
	for (prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return json_raw_value(j, buf);
}

int sv_json_bool(struct sv_json *j, bool v)
{
	return json_raw_value(j, v ? "true" : "false");
}

int sv_json_null(struct sv_json *j)
{
	return json_raw_value(j, "null");
}

int sv_json_kv_str(struct sv_json *j, const char *key, const char *s)
{
	sv_json_key(j, key);
	return sv_json_string(j, s);
}

int sv_json_kv_int(struct sv_json *j, const char *key, int64_t v)
{
	sv_json_key(j, key);
	return sv_json_int(j, v);
}

int sv_json_kv_uint(struct sv_json *j, const char *key, uint64_t v)
{
	sv_json_key(j, key);
	return sv_json_uint(j, v);
}

int sv_json_kv_double(struct sv_json *j, const char *key, double v)
{
	sv_json_key(j, key);
	return sv_json_double(j, v);
}

int sv_json_kv_bool(struct sv_json *j, const char *key, bool v)
{
	sv_json_key(j, key);
	return sv_json_bool(j, v);
}

int sv_json_kv_null(struct sv_json *j, const char *key)
{
	sv_json_key(j, key);
	return sv_json_null(j);
}

int sv_json_end(struct sv_json *j)
{
	int err;

	if (!j->err && (j->depth || j->after_key || !j->need_comma))
		json_fail(j, -EINVAL);
	if (!j->err) {
		json_put(j, "\n", 1);
		if (!j->err && fflush(j->f))
			json_fail(j, -EIO);
	}
	err = j->err;
	sv_json_init(j, j->f, j->flags);
	return err;
}
