// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "svtrace_ovsdb.h"

/* One transact, three selects: result[0] the bridges, [1] the ports, [2] the interfaces (RFC 7047 §5.2). */
static const char request[] =
	"{\"id\":1,\"method\":\"transact\",\"params\":[\"Open_vSwitch\","
	"{\"op\":\"select\",\"table\":\"Bridge\",\"where\":[],\"columns\":[\"name\",\"ports\",\"datapath_type\"]},"
	"{\"op\":\"select\",\"table\":\"Port\",\"where\":[],\"columns\":[\"_uuid\",\"interfaces\"]},"
	"{\"op\":\"select\",\"table\":\"Interface\",\"where\":[],\"columns\":[\"_uuid\",\"name\",\"type\"]}]}";

const char *svtrace_ovsdb_request(void)
{
	return request;
}

/* ---- a bounded JSON reader: values as a flat array of tokens, each knowing where its subtree ends ---- */

enum { J_OBJ = 1, J_ARR, J_STR, J_PRIM };

struct jtok {
	uint8_t type;
	uint32_t start, end;	/* J_STR: the octets between the quotes; others: the whole value */
	uint32_t next;		/* index of the first token after this value's subtree */
};

#define J_DEPTH_MAX 32

struct jparse {
	const char *s;
	size_t len, pos;
	struct jtok *t;
	uint32_t n, max;
};

static void skip_ws(struct jparse *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n' ||
				   p->s[p->pos] == '\r'))
		p->pos++;
}

static int jvalue(struct jparse *p, unsigned depth);

static int jstring(struct jparse *p, uint32_t *start, uint32_t *end)
{
	p->pos++;	/* the opening quote */
	*start = (uint32_t)p->pos;
	while (p->pos < p->len) {
		unsigned char c = (unsigned char)p->s[p->pos];

		if (c == '"') {
			*end = (uint32_t)p->pos++;
			return 0;
		}
		if (c < 0x20)
			return -EBADMSG;
		if (c == '\\') {
			if (p->pos + 1 >= p->len)
				return -EBADMSG;
			if (p->s[p->pos + 1] == 'u') {
				for (unsigned i = 2; i < 6; i++) {
					char h = p->pos + i < p->len ? p->s[p->pos + i] : 0;

					if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
						return -EBADMSG;
				}
				p->pos += 6;
				continue;
			}
			if (!strchr("\"\\/bfnrt", p->s[p->pos + 1]) || !p->s[p->pos + 1])
				return -EBADMSG;
			p->pos += 2;
			continue;
		}
		p->pos++;
	}
	return -EBADMSG;
}

static int jnew(struct jparse *p, uint8_t type, uint32_t start)
{
	if (p->n >= p->max)
		return -E2BIG;
	p->t[p->n] = (struct jtok){ .type = type, .start = start };
	return (int)p->n++;
}

/* A string token at the opening quote under p->pos. */
static int jstrtok(struct jparse *p)
{
	uint32_t a, b;
	int k = jnew(p, J_STR, 0), err;

	if (k < 0)
		return k;
	err = jstring(p, &a, &b);
	if (err)
		return err;
	p->t[k].start = a;
	p->t[k].end = b;
	p->t[k].next = p->n;
	return 0;
}

static int jcontainer(struct jparse *p, unsigned depth, bool obj)
{
	int me = jnew(p, obj ? J_OBJ : J_ARR, (uint32_t)p->pos), err;
	char close = obj ? '}' : ']';
	bool first = true;

	if (me < 0)
		return me;
	p->pos++;
	for (;;) {
		skip_ws(p);
		if (p->pos >= p->len)
			return -EBADMSG;
		if (p->s[p->pos] == close && first) {
			p->pos++;
			break;
		}
		if (obj) {
			if (p->s[p->pos] != '"')
				return -EBADMSG;
			err = jstrtok(p);
			if (err)
				return err;
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return -EBADMSG;
			p->pos++;
		}
		err = jvalue(p, depth + 1);
		if (err)
			return err;
		first = false;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			break;
		}
		return -EBADMSG;
	}
	p->t[me].end = (uint32_t)p->pos;
	p->t[me].next = p->n;
	return 0;
}

static int jvalue(struct jparse *p, unsigned depth)
{
	int me;

	if (depth > J_DEPTH_MAX)
		return -EBADMSG;
	skip_ws(p);
	if (p->pos >= p->len)
		return -EBADMSG;
	switch (p->s[p->pos]) {
	case '{':
		return jcontainer(p, depth, true);
	case '[':
		return jcontainer(p, depth, false);
	case '"':
		return jstrtok(p);
	default:
		/* numbers, true, false, null: their octets are checked only as far as svtrace reads them */
		me = jnew(p, J_PRIM, (uint32_t)p->pos);
		if (me < 0)
			return me;
		while (p->pos < p->len && strchr("-+.0123456789eEtruefalsn", p->s[p->pos]) && p->s[p->pos])
			p->pos++;
		if (p->pos == p->t[me].start)
			return -EBADMSG;
		p->t[me].end = (uint32_t)p->pos;
		p->t[me].next = p->n;
		return 0;
	}
}

/* String token @i decoded into @buf (NUL-terminated); -ENAMETOOLONG when it does not fit, -EBADMSG not a
 * string. \u escapes outside ASCII become '?': no name svtrace compares with has them. */
static int jstr(const struct jparse *p, uint32_t i, char *buf, size_t size)
{
	const struct jtok *t = &p->t[i];
	size_t o = 0;

	if (t->type != J_STR)
		return -EBADMSG;
	for (uint32_t k = t->start; k < t->end; k++) {
		char c = p->s[k];

		if (c == '\\') {
			c = p->s[++k];
			switch (c) {
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				unsigned v = (unsigned)strtoul((char[5]){ p->s[k + 1], p->s[k + 2], p->s[k + 3], p->s[k + 4], 0 },
							      NULL, 16);

				c = v && v < 0x80 ? (char)v : '?';
				k += 4;
				break;
			}
			default: break;	/* " \ / */
			}
		}
		if (o + 1 >= size)
			return -ENAMETOOLONG;
		buf[o++] = c;
	}
	if (!size)
		return -ENAMETOOLONG;
	buf[o] = 0;
	return 0;
}

static bool jstreq(const struct jparse *p, uint32_t i, const char *s)
{
	char buf[256];

	return !jstr(p, i, buf, sizeof(buf)) && !strcmp(buf, s);
}

/* Value of @key in object @obj, or -1. */
static int jget(const struct jparse *p, int obj, const char *key)
{
	if (obj < 0 || p->t[obj].type != J_OBJ)
		return -1;
	for (uint32_t k = (uint32_t)obj + 1; k < p->t[obj].next;) {
		uint32_t v = p->t[k].next;

		if (v >= p->t[obj].next)
			return -1;
		if (jstreq(p, k, key))
			return (int)v;
		k = p->t[v].next;
	}
	return -1;
}

/* The @n-th element of array @arr, or -1. */
static int jat(const struct jparse *p, int arr, unsigned n)
{
	if (arr < 0 || p->t[arr].type != J_ARR)
		return -1;
	for (uint32_t k = (uint32_t)arr + 1; k < p->t[arr].next; k = p->t[k].next)
		if (!n--)
			return (int)k;
	return -1;
}

/* The uuid string token of an OVSDB <uuid> (["uuid", "..."]), or -1. */
static int juuid(const struct jparse *p, int v)
{
	int tag = jat(p, v, 0), id = jat(p, v, 1);

	if (tag < 0 || id < 0 || !jstreq(p, (uint32_t)tag, "uuid") || p->t[id].type != J_STR)
		return -1;
	return id;
}

static bool jsame(const struct jparse *p, int a, int b)
{
	size_t la = p->t[a].end - p->t[a].start, lb = p->t[b].end - p->t[b].start;

	return la == lb && !memcmp(p->s + p->t[a].start, p->s + p->t[b].start, la);
}

/* An OVSDB set of uuids is ["set", [<uuid>...]], or a single <uuid>: element @n's uuid token, or -1. */
static int jset_uuid(const struct jparse *p, int v, unsigned n)
{
	int tag = jat(p, v, 0);

	if (tag >= 0 && jstreq(p, (uint32_t)tag, "set"))
		return juuid(p, jat(p, jat(p, v, 1), n));
	return n ? -1 : juuid(p, v);
}

/* The row of table @rows whose uuid-set column @col holds uuid token @u, or -1. */
static int row_holding(const struct jparse *p, int rows, const char *col, int u)
{
	for (unsigned r = 0;; r++) {
		int row = jat(p, rows, r), x;

		if (row < 0)
			return -1;
		for (unsigned n = 0; (x = jset_uuid(p, jget(p, row, col), n)) >= 0; n++)
			if (jsame(p, x, u))
				return row;
	}
}

/* The row of @rows whose _uuid is uuid token @u, or -1. */
static int row_by_uuid(const struct jparse *p, int rows, int u)
{
	for (unsigned r = 0;; r++) {
		int row = jat(p, rows, r), x;

		if (row < 0)
			return -1;
		x = juuid(p, jget(p, row, "_uuid"));
		if (x >= 0 && jsame(p, x, u))
			return row;
	}
}

static int say(char *why, size_t size, int err, const char *fmt, const char *arg)
{
	if (why && size)
		snprintf(why, size, fmt, arg);
	return err;
}

static int parse_tokens(struct jparse *p, const char *iface, struct svtrace_ovs_bridge *br,
			struct svtrace_ovs_iface *ifaces, unsigned max, char *why, size_t why_size)
{
	int err = jvalue(p, 0), res, rows[3], row, u, bridge = -1, v;
	char text[128];

	if (err == -E2BIG)
		return say(why, why_size, -EBADMSG, "%s", "reply too large to read");
	if (err)
		return say(why, why_size, -EBADMSG, "%s", "not JSON");
	if (p->t[0].type != J_OBJ)
		return say(why, why_size, -EBADMSG, "%s", "reply is not a JSON-RPC object");
	v = jget(p, 0, "error");
	if (v >= 0 && !(p->t[v].type == J_PRIM && p->s[p->t[v].start] == 'n')) {
		if (jstr(p, (uint32_t)v, text, sizeof(text)))
			snprintf(text, sizeof(text), "%.*s", (int)(p->t[v].end - p->t[v].start > 100 ? 100 :
				 p->t[v].end - p->t[v].start), p->s + p->t[v].start);
		return say(why, why_size, -EPROTO, "%s", text);
	}
	res = jget(p, 0, "result");
	for (unsigned i = 0; i < 3; i++) {
		int op = jat(p, res, i), e = jget(p, op, "error");

		if (e >= 0 && !jstr(p, (uint32_t)e, text, sizeof(text)))
			return say(why, why_size, -EPROTO, "%s", text);
		rows[i] = jget(p, op, "rows");
		if (rows[i] < 0 || p->t[rows[i]].type != J_ARR)
			return say(why, why_size, -EBADMSG, "%s", "no rows in the transaction's result");
	}
	/* interface -> its port -> the bridge holding that port */
	for (unsigned r = 0; (row = jat(p, rows[2], r)) >= 0; r++) {
		v = jget(p, row, "name");
		if (v >= 0 && jstreq(p, (uint32_t)v, iface))
			break;
	}
	u = row >= 0 ? juuid(p, jget(p, row, "_uuid")) : -1;
	row = u >= 0 ? row_holding(p, rows[1], "interfaces", u) : -1;
	u = row >= 0 ? juuid(p, jget(p, row, "_uuid")) : -1;
	bridge = u >= 0 ? row_holding(p, rows[0], "ports", u) : -1;
	if (bridge < 0)
		return -ESRCH;
	memset(br, 0, sizeof(*br));
	v = jget(p, bridge, "name");
	if (v < 0 || jstr(p, (uint32_t)v, br->name, sizeof(br->name)))
		snprintf(br->name, sizeof(br->name), "?");
	v = jget(p, bridge, "datapath_type");
	if (v < 0 || jstr(p, (uint32_t)v, br->datapath_type, sizeof(br->datapath_type)) || !br->datapath_type[0])
		snprintf(br->datapath_type, sizeof(br->datapath_type), "system");
	/* every port of the bridge, every interface of each port (a bond's port has several) */
	for (unsigned n = 0; (u = jset_uuid(p, jget(p, bridge, "ports"), n)) >= 0; n++) {
		int port = row_by_uuid(p, rows[1], u), x;

		for (unsigned m = 0; port >= 0 && (x = jset_uuid(p, jget(p, port, "interfaces"), m)) >= 0; m++) {
			int ifr = row_by_uuid(p, rows[2], x);
			struct svtrace_ovs_iface one = { "", "" };

			if (ifr < 0)
				continue;
			br->nifaces++;
			v = jget(p, ifr, "name");
			if (v < 0 || jstr(p, (uint32_t)v, one.name, sizeof(one.name))) {
				br->nlong++;
				continue;
			}
			v = jget(p, ifr, "type");
			if (v >= 0 && jstr(p, (uint32_t)v, one.type, sizeof(one.type)))
				snprintf(one.type, sizeof(one.type), "?");
			if (br->nifaces - br->nlong <= max)
				ifaces[br->nifaces - br->nlong - 1] = one;
		}
	}
	return 0;
}

int svtrace_ovsdb_parse(const char *json, size_t len, const char *iface, struct svtrace_ovs_bridge *br,
			struct svtrace_ovs_iface *ifaces, unsigned max, char *why, size_t why_size)
{
	/* at most one token per two octets ("1," or "[]"), plus one */
	struct jparse p = { .s = json, .len = len, .max = len / 2 + 2 };
	int err;

	if (why && why_size)
		why[0] = 0;
	if (len > SVTRACE_OVSDB_REPLY_MAX)
		return say(why, why_size, -EBADMSG, "%s", "reply too large");
	p.t = malloc(p.max * sizeof(*p.t));
	if (!p.t)
		return -ENOMEM;
	err = parse_tokens(&p, iface, br, ifaces, max, why, why_size);
	free(p.t);
	return err;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Where a reply being read stands: whether one whole JSON value has come (its brackets, outside
 * strings, balance), scanning each octet once. */
struct vscan {
	size_t pos;
	int depth;
	bool str, esc, started;
};

static bool value_complete(struct vscan *v, const char *buf, size_t len)
{
	for (; v->pos < len; v->pos++) {
		char c = buf[v->pos];

		if (v->str) {
			if (v->esc)
				v->esc = false;
			else if (c == '\\')
				v->esc = true;
			else if (c == '"')
				v->str = false;
			continue;
		}
		if (c == '"') {
			v->str = true;
		} else if (c == '{' || c == '[') {
			v->depth++;
			v->started = true;
		} else if (c == '}' || c == ']') {
			v->depth--;
		}
		if (v->started && v->depth <= 0) {
			v->pos++;
			return true;
		}
	}
	return false;
}

int svtrace_ovsdb_bridge_of(const char *db, const char *iface, int timeout_ms, struct svtrace_ovs_bridge *br,
			    struct svtrace_ovs_iface *ifaces, unsigned max, char *why, size_t why_size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = 0, cap = 64 << 10, off = 0;
	int64_t end = now_ms() + timeout_ms;
	struct vscan vs = { 0 };
	char *buf = NULL, *nb;
	int fd, err;

	if (strncmp(db, "unix:", 5) || strlen(db + 5) >= sizeof(sa.sun_path) || !db[5])
		return -EINVAL;
	memcpy(sa.sun_path, db + 5, strlen(db + 5));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		goto out_close;
	}
	while (off < sizeof(request) - 1) {
		ssize_t w = send(fd, request + off, sizeof(request) - 1 - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			err = w < 0 ? -errno : -EIO;
			goto out_close;
		}
		off += (size_t)w;
	}
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto out_close;
	}
	while (!value_complete(&vs, buf, len)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = end - now_ms();
		ssize_t r;

		if (left <= 0) {
			err = -ETIMEDOUT;
			goto out_free;
		}
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : -ETIMEDOUT;
			goto out_free;
		}
		if (len == cap) {
			if (cap >= SVTRACE_OVSDB_REPLY_MAX) {
				err = say(why, why_size, -EBADMSG, "%s", "reply too large");
				goto out_free;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				err = -ENOMEM;
				goto out_free;
			}
			buf = nb;
			cap *= 2;
		}
		r = recv(fd, buf + len, cap - len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r < 0 ? -errno : say(why, why_size, -EBADMSG, "%s", "the database closed the connection");
			goto out_free;
		}
		len += (size_t)r;
	}
	err = svtrace_ovsdb_parse(buf, vs.pos, iface, br, ifaces, max, why, why_size);
out_free:
	free(buf);
out_close:
	close(fd);
	return err;
}
