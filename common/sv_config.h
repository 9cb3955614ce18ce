/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One table drives a program's configuration (STYLE.md 9, after linuxptp's config_tab): each key is one
 * row {name, type, range, default, field offset, help}. The same table
 *  - loads a YAML file through libyaml (sv_config_load_file), errors naming file:line:column;
 *  - applies command-line overrides "key=value" (sv_config_set), keys as dotted paths;
 *  - prints the effective configuration as YAML that loads back to the same values (sv_config_print);
 *  - prints the reference of every key for --help (sv_config_help);
 *  - finds where a key path is in a YAML file (sv_config_locate), for errors found after loading.
 * Unknown keys, duplicate keys, wrong YAML node kinds, bad numbers and out-of-range values are errors.
 * Nested mappings are SV_CFG_SECTION rows; a YAML sequence of mappings (e.g. one per stream) is an
 * SV_CFG_LIST row over a fixed array in the target struct (no allocation: bounded by the row's count).
 *
 * Path syntax (overrides, error messages): "clock", "af_packet.qdisc_bypass", "streams[2].svid",
 * "streams[*].vlan_id" (every element present). "streams[N]..." with N equal to the current count appends
 * an element initialised from the defaults.
 *
 * Scalars (strict, STYLE.md 10): integers are decimal or 0x-hex, no leading '+', no spaces, no octal;
 * doubles are strtod syntax without nan/inf; booleans true/false/yes/no/on/off; MAC addresses
 * xx:xx:xx:xx:xx:xx or xx-xx-xx-xx-xx-xx; enums are one of the row's names (case-sensitive).
 */
#ifndef SV_CONFIG_H
#define SV_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum sv_cfg_type {
	SV_CFG_BOOL,	/* bool */
	SV_CFG_INT,	/* signed integer of size 1, 2, 4 or 8 */
	SV_CFG_UINT,	/* unsigned integer of size 1, 2, 4 or 8 */
	SV_CFG_DOUBLE,	/* double */
	SV_CFG_STRING,	/* char[size], NUL-terminated; longer values are errors */
	SV_CFG_ENUM,	/* int holding the index into names[] */
	SV_CFG_MAC,	/* uint8_t[6] */
	SV_CFG_DOUBLES, /* double[count]: a YAML sequence of exactly count numbers, or one number for all */
	SV_CFG_SECTION, /* nested mapping described by sub[], fields relative to offset */
	SV_CFG_LIST,	/* sequence of mappings: count elements of size bytes at offset, number at count_offset */
	SV_CFG_CLI,	/* command line only (sv_cli.h): an option, or a heading of --help; not a key */
};

/* Row flags (struct sv_cfg_key.flags): rules of integer keys the range cannot say. */
#define SV_CFG_ZERO 0x1u /* 0 is accepted besides min..max (0 = automatic): "0 or 2..65536" */
#define SV_CFG_POW2 0x2u /* a power of two (besides 0 with SV_CFG_ZERO) */

/*
 * The command-line side of a row (sv_cli.h generates getopt_long, --help and --features from it). On a key
 * row: the option that sets the key (--NAME ARG, or a flag that sets it to true / @value). On an SV_CFG_CLI
 * row: an option that is not a key (--help, -c FILE, --read ...), which may set a key path (@key) that is
 * not at the top level or needs a fixed value.
 */
struct sv_cfg_opt {
	const char *name;  /* long option; NULL: none */
	int short_name;	   /* the short option's letter, or 0 */
	const char *arg;   /* the argument's name in --help ("FILE"); NULL: a flag */
	const char *value; /* a flag's value for its key (NULL: "true") */
	const char *key;   /* SV_CFG_CLI: the key path the option sets; NULL: none */
	int id;		   /* > 0: the program's hook sees the option (sv_cli_prog.option); < 0: sv_cli's own */
	unsigned flags;	   /* SV_OPT_* (sv_cli.h) */
};

struct sv_cfg_key {
	const char *name;
	enum sv_cfg_type type;
	size_t offset;
	size_t size;		     /* field size; element size for SV_CFG_LIST */
	double min, max;	     /* numbers (each element of SV_CFG_DOUBLES); ignored when min > max */
	const char *def;	     /* default in scalar syntax ("1", "[1, 2, 3]" for DOUBLES); NULL = zero/empty;
				      * for SV_CFG_LIST the number of default elements ("1") */
	const char *help;
	const char *const *names;    /* SV_CFG_ENUM: NULL-terminated */
	const struct sv_cfg_key *sub; /* SV_CFG_SECTION, SV_CFG_LIST: table ended by a row with name NULL */
	unsigned count;		     /* SV_CFG_DOUBLES: elements; SV_CFG_LIST: maximum elements */
	size_t count_offset;	     /* SV_CFG_LIST: offset of the unsigned element count */
	unsigned flags;		     /* SV_CFG_ZERO, SV_CFG_POW2 */
	/* A rule of the value's text that the type and range cannot say (NULL: none), checked before it is
	 * stored, in a file and on the command line alike: 0, or -EINVAL with what is wrong in @msg. */
	int (*check)(const char *value, char *msg, size_t n);
	struct sv_cfg_opt opt;	     /* the command line; all zero: no option */
};

#define SV_CFG_FSIZE(type, field) sizeof(((type *)0)->field)
/* min > max: no range check */

/* Row builders; @T is the struct the table describes. What follows the help designates more fields:
 * .flags = SV_CFG_ZERO, .check = fn, the option that sets the key: SV_OPT("duration", 'd', "S") (sv_cli.h). */
#define SV_CFG_KEY_BOOL(T, f, n, d, h, ...) { .name = n, .type = SV_CFG_BOOL, .offset = offsetof(T, f), \
	.size = SV_CFG_FSIZE(T, f), .min = 1, .max = 0, .def = d, .help = h, __VA_ARGS__ }
#define SV_CFG_KEY_INT(T, f, n, lo, hi, d, h, ...) { .name = n, .type = SV_CFG_INT, .offset = offsetof(T, f), \
	.size = SV_CFG_FSIZE(T, f), .min = lo, .max = hi, .def = d, .help = h, __VA_ARGS__ }
#define SV_CFG_KEY_UINT(T, f, n, lo, hi, d, h, ...) { .name = n, .type = SV_CFG_UINT, .offset = offsetof(T, f), \
	.size = SV_CFG_FSIZE(T, f), .min = lo, .max = hi, .def = d, .help = h, __VA_ARGS__ }
#define SV_CFG_KEY_DOUBLE(T, f, n, lo, hi, d, h, ...) { .name = n, .type = SV_CFG_DOUBLE, \
	.offset = offsetof(T, f), .size = SV_CFG_FSIZE(T, f), .min = lo, .max = hi, .def = d, .help = h, __VA_ARGS__ }
#define SV_CFG_KEY_STRING(T, f, n, d, h, ...) { .name = n, .type = SV_CFG_STRING, .offset = offsetof(T, f), \
	.size = SV_CFG_FSIZE(T, f), .min = 1, .max = 0, .def = d, .help = h, __VA_ARGS__ }
#define SV_CFG_KEY_ENUM(T, f, n, nm, d, h, ...) { .name = n, .type = SV_CFG_ENUM, .offset = offsetof(T, f), \
	.size = SV_CFG_FSIZE(T, f), .min = 1, .max = 0, .def = d, .help = h, .names = nm, __VA_ARGS__ }
#define SV_CFG_KEY_MAC(T, f, n, d, h, ...) { .name = n, .type = SV_CFG_MAC, .offset = offsetof(T, f), \
	.size = SV_CFG_FSIZE(T, f), .min = 1, .max = 0, .def = d, .help = h, __VA_ARGS__ }
#define SV_CFG_KEY_DOUBLES(T, f, n, lo, hi, d, h, ...) { .name = n, .type = SV_CFG_DOUBLES, \
	.offset = offsetof(T, f), .size = SV_CFG_FSIZE(T, f), .min = lo, .max = hi, .def = d, .help = h, \
	.count = SV_CFG_FSIZE(T, f) / sizeof(double), __VA_ARGS__ }
#define SV_CFG_KEY_SECTION(T, f, n, tab, h, ...) { .name = n, .type = SV_CFG_SECTION, .offset = offsetof(T, f), \
	.size = SV_CFG_FSIZE(T, f), .min = 1, .max = 0, .help = h, .sub = tab, __VA_ARGS__ }
#define SV_CFG_KEY_LIST(T, f, cnt, n, tab, d, h, ...) { .name = n, .type = SV_CFG_LIST, .offset = offsetof(T, f), \
	.size = sizeof(((T *)0)->f[0]), .min = 1, .max = 0, .def = d, .help = h, .sub = tab, \
	.count = SV_CFG_FSIZE(T, f) / sizeof(((T *)0)->f[0]), .count_offset = offsetof(T, cnt), __VA_ARGS__ }
#define SV_CFG_KEY_END { .name = NULL }

/* A key row's option (after its help): --@l, -@s (0: none), taking @a (NULL: a flag that sets the key to
 * true); SV_OPT_ID with @i > 0 also calls the program's hook after the key is set (sv_cli.h). */
#define SV_OPT(l, s, a) .opt = { .name = l, .short_name = s, .arg = a }
#define SV_OPT_ID(l, s, a, i) .opt = { .name = l, .short_name = s, .arg = a, .id = i }

/* Where and what went wrong. line/column are 1-based; 0 when the error has no position (overrides). */
struct sv_cfg_error {
	char file[128];
	unsigned line;
	unsigned column;
	char path[128]; /* the key path, e.g. "streams[1].appid"; empty when not about one key */
	char msg[256];	/* what is wrong, without the position */
	char text[640]; /* "file:line:column: path: msg", ready to print */
};

/* Sets every key of @tab in @obj to its default (lists get their default number of elements).
 * Returns 0, or -EINVAL when a default does not parse (a table bug; @err says which). */
int sv_config_defaults(const struct sv_cfg_key *tab, void *obj, struct sv_cfg_error *err);

/* Loads YAML from @path over @obj (call sv_config_defaults first: absent keys keep their value; a list
 * present in the file replaces the whole list, each element starting from the defaults).
 * Returns 0, -ENOENT/-EACCES... (cannot open), or -EINVAL with @err filled. */
int sv_config_load_file(const struct sv_cfg_key *tab, void *obj, const char *path, struct sv_cfg_error *err);

/* The same over a configuration that came from elsewhere (svpub --scl): a list in the file does not replace
 * the list, its element N overrides the keys it names of element N (elements past the list's keep theirs,
 * new ones start from the defaults). */
int sv_config_load_file_over(const struct sv_cfg_key *tab, void *obj, const char *path, struct sv_cfg_error *err);

/* Same from memory; @name is used as the file name in errors. */
int sv_config_load_string(const struct sv_cfg_key *tab, void *obj, const char *text, size_t len,
			  const char *name, struct sv_cfg_error *err);

/* Where @path is in the YAML file @file: the 1-based line and column of the node's first character (for
 * "key: value", of the value), as the load errors print them. @path has the syntax above without "[*]";
 * an index may also pick an element of a sequence of numbers ("streams[0].signal.current[2]"). No table
 * is needed: only the file is read. With @value not NULL the node must moreover be a scalar holding exactly
 * @value, so that a rule checked after overrides (sv_config_set) points into the file only when the file
 * holds the offending value. Returns 0; -ENOENT when the file has no such node (or holds another value
 * there); -EINVAL for a malformed @path or a file that is not YAML; -ENOMEM; -errno when @file cannot be
 * opened.
 * *@line and *@column are 0 unless 0 is returned. */
int sv_config_locate(const char *file, const char *path, const char *value, unsigned *line, unsigned *column);

/* Sets the key at @path (the syntax above) to @value, as sv_config_set does "path=value". */
int sv_config_set_value(const struct sv_cfg_key *tab, void *obj, const char *path, const char *value,
			struct sv_cfg_error *err);

/* Applies one "path=value" override. For SV_CFG_DOUBLES the value is "[a, b, c]" or one number; for a
 * list path without a key ("streams[3]") nothing but the append happens. Returns 0 or -EINVAL. */
int sv_config_set(const struct sv_cfg_key *tab, void *obj, const char *assignment, struct sv_cfg_error *err);

/* Writes the effective configuration as YAML that sv_config_load_* reads back to the same values
 * (doubles printed to round-trip exactly). Returns 0 or -EIO. */
int sv_config_print(const struct sv_cfg_key *tab, const void *obj, FILE *f);

/* The value of the scalar key at @path ("scl.file"; no list elements) in @obj, as text into @buf: the
 * dump's syntax without a string's quotes (escapes kept). 0, -ENOENT (no such scalar key), -ENOSPC. */
int sv_config_get(const struct sv_cfg_key *tab, const void *obj, const char *path, char *buf, size_t n);

/* Writes one line per key ("  streams[].signal.frequency  double 40..70 (50)  help"); command-line rows
 * (SV_CFG_CLI) are not keys: sv_cli_help writes them. */
void sv_config_help(const struct sv_cfg_key *tab, FILE *f);

/* The row of @tab (one level: no dotted path) whose name is @name, or NULL with errno ENOENT. */
const struct sv_cfg_key *sv_config_find_key(const struct sv_cfg_key *tab, const char *name);
/* The same for a path through sections ("scl.file"; no list elements), or NULL with errno ENOENT. */
const struct sv_cfg_key *sv_config_find_path(const struct sv_cfg_key *tab, const char *path);

/* Writes @k's range "min..max" ("0 or min..max" with SV_CFG_ZERO) into @buf as the out-of-range messages,
 * sv_config_help and --help print it (%.15g). Returns 0, or -ENOENT with @buf empty when the row has no
 * range (min > max). */
int sv_config_format_range(const struct sv_cfg_key *k, char *buf, size_t n);

/* Writes the values @k takes into @buf: an enum's names ("a|b|c"), else its range (sv_config_format_range)
 * with ", a power of two" for SV_CFG_POW2. Returns 0, or -ENOENT with @buf empty when it says nothing. */
int sv_config_format_values(const struct sv_cfg_key *k, char *buf, size_t n);

/* Strict scalar parsers used by the table, for programs' own options. 0 or -EINVAL / -ERANGE. */
int sv_parse_int64(const char *s, int64_t *out);
int sv_parse_uint64(const char *s, uint64_t *out);
int sv_parse_double(const char *s, double *out);
int sv_parse_bool(const char *s, bool *out);
int sv_parse_mac(const char *s, uint8_t mac[6]);

#endif /* SV_CONFIG_H */
