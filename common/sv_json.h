/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small streaming JSON writer to a FILE* (RFC 8259). No allocation: the nesting stack is inside
 * struct sv_json (SV_JSON_MAX_DEPTH levels). Commas and the key/value alternation are automatic; misuse
 * (a value in an object without a key, a key in an array, closing the wrong container, nesting too deep)
 * sets a sticky error and makes every later call a no-op, so a program checks once, at sv_json_end().
 *
 * Output is compact by default (one line: what --jsonl needs); SV_JSON_PRETTY indents by two spaces.
 * Strings: '"' and '\\' escaped, control characters as \b \f \n \r \t or \u00XX, every byte >= 0x7F
 * as \u00XX (so the output is pure ASCII, whatever bytes a frame carried: svIDs from the wire are
 * untrusted). Doubles: shortest "%.17g"-style round-trip form; NaN and infinities become null.
 *
 *	struct sv_json j;
 *	sv_json_init(&j, stdout, 0);
 *	sv_json_object_begin(&j);
 *	sv_json_kv_str(&j, "svID", "MU01");
 *	sv_json_key(&j, "latency");
 *	sv_stats_json(&j, &hist);
 *	sv_json_object_end(&j);
 *	err = sv_json_end(&j);		// writes "\n"; 0 or the first error
 */
#ifndef SV_JSON_H
#define SV_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SV_JSON_MAX_DEPTH 32

enum sv_json_flags {
	SV_JSON_PRETTY = 1u << 0, /* newlines and two-space indentation */
};

struct sv_json {
	FILE *f;
	unsigned flags;
	int err;		/* 0, or the first error: -EINVAL misuse, -E2BIG too deep, -EIO write */
	unsigned depth;		/* open containers */
	bool need_comma;	/* a value was written at this level */
	bool after_key;		/* a key was written, its value is due */
	uint8_t stack[SV_JSON_MAX_DEPTH]; /* '{' or '[' per level */
};

/* Starts a document on @f (not owned: never closed). Several documents may follow each other on the
 * same struct after sv_json_end() (JSON lines). */
void sv_json_init(struct sv_json *j, FILE *f, unsigned flags);

int sv_json_object_begin(struct sv_json *j);
int sv_json_object_end(struct sv_json *j);
int sv_json_array_begin(struct sv_json *j);
int sv_json_array_end(struct sv_json *j);

/* A key inside an object; @key is escaped like a string. */
int sv_json_key(struct sv_json *j, const char *key);

/* Values. NULL @s writes null. sv_json_string_n writes exactly @len bytes (may contain NUL -> \u0000). */
int sv_json_string(struct sv_json *j, const char *s);
int sv_json_string_n(struct sv_json *j, const char *s, size_t len);
int sv_json_int(struct sv_json *j, int64_t v);
int sv_json_uint(struct sv_json *j, uint64_t v);
int sv_json_double(struct sv_json *j, double v);
int sv_json_bool(struct sv_json *j, bool v);
int sv_json_null(struct sv_json *j);

/* key + value in one call. */
int sv_json_kv_str(struct sv_json *j, const char *key, const char *s);
int sv_json_kv_int(struct sv_json *j, const char *key, int64_t v);
int sv_json_kv_uint(struct sv_json *j, const char *key, uint64_t v);
int sv_json_kv_double(struct sv_json *j, const char *key, double v);
int sv_json_kv_bool(struct sv_json *j, const char *key, bool v);
int sv_json_kv_null(struct sv_json *j, const char *key);

/*
 * Ends a document: checks that every container is closed and a value was written, writes "\n" and
 * fflush()es. Returns 0 or the first error (-EINVAL misuse or unclosed containers, -E2BIG too deep,
 * -EIO write failure). Resets the struct for the next document (JSON lines).
 */
int sv_json_end(struct sv_json *j);

/* The sticky error so far (0 = none). */
static inline int sv_json_error(const struct sv_json *j)
{
	return j->err;
}

/* Writes @len bytes of @s escaped as a JSON string body (without the quotes) into @f. Returns 0 or
 * -EIO. Exposed for CSV/other writers that want the same escaping. */
int sv_json_escape(FILE *f, const char *s, size_t len);

#endif /* SV_JSON_H */
