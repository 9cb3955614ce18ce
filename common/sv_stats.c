// SPDX-License-Identifier: Apache-2.0
/* The histogram type, percentiles, printers, serialisation: see sv_stats.h for the contract. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "sv_json.h"
#include "sv_stats.h"

_Static_assert(SV_STATS_BUCKETS == 3712, "bucket count follows from SV_STATS_SUB_BITS = 6");
_Static_assert(SV_STATS_SERIALIZED_MAX < 65000, "a serialised histogram fits one HIST record");

void sv_stats_bucket_range(uint32_t idx, unsigned sub_bits, int64_t *lo, int64_t *hi)
{
	uint32_t q = idx >> sub_bits, r = idx & ((1u << sub_bits) - 1);

	if (q <= 1) { /* the exact buckets below 2 << sub_bits */
		*lo = *hi = idx;
		return;
	}
	*lo = (int64_t)((((uint64_t)1 << sub_bits) + r) << (q - 1));
	/* unsigned: the top bucket ends at INT64_MAX */
	*hi = (int64_t)((uint64_t)*lo + ((uint64_t)1 << (q - 1)) - 1);
}

int64_t sv_stats_bucket_lo(uint32_t idx)
{
	int64_t lo, hi;

	sv_stats_bucket_range(idx, SV_STATS_SUB_BITS, &lo, &hi);
	return lo;
}

int64_t sv_stats_bucket_hi(uint32_t idx)
{
	int64_t lo, hi;

	sv_stats_bucket_range(idx, SV_STATS_SUB_BITS, &lo, &hi);
	return hi;
}

void sv_stats_init(struct sv_stats *h)
{
	memset(h, 0, sizeof(*h));
	h->min = INT64_MAX;
}

void sv_stats_reset(struct sv_stats *h)
{
	memset(h->bucket, 0, h->top * sizeof(h->bucket[0]));
	memset(h, 0, offsetof(struct sv_stats, bucket));
	h->min = INT64_MAX;
}

void sv_stats_add_n(struct sv_stats *h, int64_t v, uint64_t n)
{
	uint32_t idx;
	unsigned __int128 sum;

	if (!n)
		return;
	if (v < 0) {
		h->negative += n;
		if (v < h->negative_min)
			h->negative_min = v;
		return;
	}
	idx = sv_stats_index(v);
	h->bucket[idx] += n;
	if (idx >= h->top)
		h->top = idx + 1;
	h->count += n;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	sum = ((unsigned __int128)h->sum_hi << 64 | h->sum_lo) + (unsigned __int128)(uint64_t)v * n;
	h->sum_lo = (uint64_t)sum;
	h->sum_hi = (uint64_t)(sum >> 64);
}

int sv_stats_merge(struct sv_stats *dst, const struct sv_stats *src)
{
	unsigned __int128 sum;
	uint32_t i;

	if (dst->count + src->count < dst->count || dst->negative + src->negative < dst->negative)
		return -EOVERFLOW;
	for (i = 0; i < src->top; i++)
		dst->bucket[i] += src->bucket[i];
	if (src->top > dst->top)
		dst->top = src->top;
	if (src->count) {
		if (src->min < dst->min)
			dst->min = src->min;
		if (src->max > dst->max)
			dst->max = src->max;
	}
	dst->count += src->count;
	sum = ((unsigned __int128)dst->sum_hi << 64 | dst->sum_lo) +
	      ((unsigned __int128)src->sum_hi << 64 | src->sum_lo);
	dst->sum_lo = (uint64_t)sum;
	dst->sum_hi = (uint64_t)(sum >> 64);
	dst->negative += src->negative;
	if (src->negative_min < dst->negative_min)
		dst->negative_min = src->negative_min;
	return 0;
}

double sv_stats_mean(const struct sv_stats *h)
{
	if (!h->count)
		return 0;
	return ((double)h->sum_hi * 18446744073709551616.0 + (double)h->sum_lo) / (double)h->count;
}

/*
 * Nearest rank ceil(q/100 * n), 1-based. q is taken to 1e-6 of a percent in integers: in doubles,
 * 99.9 / 100 * 1000 is 999.0000000000001 and ceil() would pick rank 1000 instead of 999.
 */
static int rank_of(double q, uint64_t n, uint64_t *rank)
{
	unsigned __int128 num;
	uint64_t qm, r;

	if (!(q >= 0 && q <= 100))
		return -EINVAL;
	qm = (uint64_t)llround(q * 1e6); /* parts per 10^8 */
	num = (unsigned __int128)qm * n;
	r = (uint64_t)((num + 100000000 - 1) / 100000000);
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	*rank = r;
	return 0;
}

int sv_stats_percentile(const struct sv_stats *h, double q, int64_t *value, int64_t *err_ns)
{
	uint64_t rank, cum = 0;
	int64_t lo, hi;
	uint32_t i;
	int err;

	err = rank_of(q, h->count ? h->count : 1, &rank);
	if (err)
		return err;
	if (!h->count)
		return -ENODATA;
	if (rank == 1 || rank == h->count) {
		*value = rank == 1 ? h->min : h->max;
		if (err_ns)
			*err_ns = 0;
		return 0;
	}
	for (i = 0; i < h->top; i++) {
		cum += h->bucket[i];
		if (cum >= rank)
			break;
	}
	if (i >= h->top) /* cannot happen with a consistent histogram */
		i = h->top - 1;
	lo = sv_stats_bucket_lo(i);
	hi = sv_stats_bucket_hi(i);
	if (lo < h->min)
		lo = h->min;
	if (hi > h->max)
		hi = h->max;
	if (hi < lo) /* inconsistent (hand-edited) histogram: stay within [min, max] */
		hi = lo;
	*value = lo + (hi - lo) / 2;
	if (err_ns)
		*err_ns = (hi - lo + 1) / 2;
	return 0;
}

void sv_stats_summarize(const struct sv_stats *h, struct sv_stats_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->negative = h->negative;
	if (!h->count)
		return;
	s->count = h->count;
	s->min = h->min;
	s->max = h->max;
	sv_stats_percentile(h, 50, &s->p50, &s->p50_err);
	sv_stats_percentile(h, 99, &s->p99, &s->p99_err);
	sv_stats_percentile(h, 99.9, &s->p999, &s->p999_err);
	sv_stats_percentile(h, 99.99, &s->p9999, &s->p9999_err);
	s->exact = false;
}

/* ---- Exact percentiles ------------------------------------------------------------------------ */

static void swap_i64(int64_t *a, int64_t *b)
{
	int64_t t = *a;

	*a = *b;
	*b = t;
}

static void sift_down(int64_t *v, size_t root, size_t n)
{
	for (;;) {
		size_t c = 2 * root + 1;

		if (c >= n)
			return;
		if (c + 1 < n && v[c + 1] > v[c])
			c++;
		if (v[root] >= v[c])
			return;
		swap_i64(&v[root], &v[c]);
		root = c;
	}
}

static void heap_sort(int64_t *v, size_t n)
{
	size_t i;

	if (n < 2)
		return;
	for (i = n / 2; i-- > 0;)
		sift_down(v, i, n);
	for (i = n - 1; i > 0; i--) {
		swap_i64(&v[0], &v[i]);
		sift_down(v, 0, i);
	}
}

static void insertion_sort(int64_t *v, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		int64_t x = v[i];

		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Quicksort on the smaller side by recursion (depth <= log2 n), loop on the larger; heapsort when the
 * depth budget runs out (adversarial input), insertion sort for short ranges. */
static void intro_sort(int64_t *v, size_t n, unsigned depth)
{
	while (n > 16) {
		size_t i, j, mid = (n - 1) / 2;
		int64_t pivot;

		if (!depth--) {
			heap_sort(v, n);
			return;
		}
		/* median of three into v[mid] */
		if (v[mid] < v[0])
			swap_i64(&v[mid], &v[0]);
		if (v[n - 1] < v[0])
			swap_i64(&v[n - 1], &v[0]);
		if (v[n - 1] < v[mid])
			swap_i64(&v[n - 1], &v[mid]);
		pivot = v[mid];
		/* Hoare partition: equal keys split evenly, so all-equal input is O(n log n). */
		i = 0;
		j = n - 1;
		for (;;) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i >= j)
				break;
			swap_i64(&v[i], &v[j]);
			i++;
			j--;
		}
		/* [0, j] <= pivot <= [j+1, n); Hoare with a floor-middle pivot keeps j < n - 1 */
		if (j + 1 < n - (j + 1)) {
			intro_sort(v, j + 1, depth);
			v += j + 1;
			n -= j + 1;
		} else {
			intro_sort(v + j + 1, n - (j + 1), depth);
			n = j + 1;
		}
	}
	insertion_sort(v, n);
}

void sv_stats_sort_i64(int64_t *v, size_t n)
{
	unsigned depth = 0;
	size_t m;

	for (m = n; m; m >>= 1)
		depth += 2;
	intro_sort(v, n, depth);
}

int sv_stats_exact_percentile(const int64_t *sorted, size_t n, double q, int64_t *value)
{
	uint64_t rank;
	int err;

	err = rank_of(q, n ? n : 1, &rank);
	if (err)
		return err;
	if (!n)
		return -ENODATA;
	*value = sorted[rank - 1];
	return 0;
}

int sv_stats_exact_summary(int64_t *v, size_t n, struct sv_stats_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->exact = true;
	if (!n)
		return -ENODATA;
	sv_stats_sort_i64(v, n);
	s->count = n;
	s->min = v[0];
	s->max = v[n - 1];
	sv_stats_exact_percentile(v, n, 50, &s->p50);
	sv_stats_exact_percentile(v, n, 99, &s->p99);
	sv_stats_exact_percentile(v, n, 99.9, &s->p999);
	sv_stats_exact_percentile(v, n, 99.99, &s->p9999);
	return 0;
}

/* ---- Formatting ------------------------------------------------------------------------------- */

int sv_stats_format_ns(int64_t ns, char *buf, size_t size)
{
	static const struct {
		double div;
		const char *unit;
	} units[] = { { 1e3, "us" }, { 1e6, "ms" }, { 1e9, "s" } };
	const char *sign = ns < 0 ? "-" : "";
	double a;
	unsigned i;

	if (ns == INT64_MIN)
		return snprintf(buf, size, "-9.22e+09s");
	if (ns < 0)
		ns = -ns;
	if (ns < 1000)
		return snprintf(buf, size, "%s%" PRId64 "ns", sign, ns);
	a = (double)ns;
	for (i = 0; i < 2; i++) {
		/* 999.6us must not print as "1e+03us": move to the next unit once %.3g would round up */
		if (a < 999.5 * units[i].div)
			return snprintf(buf, size, "%s%.3g%s", sign, a / units[i].div, units[i].unit);
	}
	if (a < 999.5e9)
		return snprintf(buf, size, "%s%.3gs", sign, a / 1e9);
	return snprintf(buf, size, "%s%.0fs", sign, a / 1e9);
}

int sv_stats_summary_format(const struct sv_stats_summary *s, char *buf, size_t size)
{
	char v[7][24];
	const char *approx = s->exact ? "" : "~";
	int n;

	if (!s->count) {
		n = snprintf(buf, size, "count=0");
	} else {
		sv_stats_format_ns(s->min, v[0], sizeof(v[0]));
		sv_stats_format_ns(s->p50, v[1], sizeof(v[1]));
		sv_stats_format_ns(s->p99, v[2], sizeof(v[2]));
		sv_stats_format_ns(s->p999, v[3], sizeof(v[3]));
		sv_stats_format_ns(s->p9999, v[4], sizeof(v[4]));
		sv_stats_format_ns(s->max, v[5], sizeof(v[5]));
		n = snprintf(buf, size, "count=%" PRIu64 " min=%s p50=%s%s p99=%s%s p999=%s%s p9999=%s%s max=%s",
			     s->count, v[0], s->p50_err ? approx : "", v[1], s->p99_err ? approx : "", v[2],
			     s->p999_err ? approx : "", v[3], s->p9999_err ? approx : "", v[4], v[5]);
	}
	if (s->negative && n >= 0) {
		size_t used = (size_t)n < size ? (size_t)n : (size ? size - 1 : 0);
		int m = snprintf(buf + used, size > used ? size - used : 0, " negative=%" PRIu64, s->negative);

		if (m > 0)
			n += m;
	}
	return n;
}

static int print_stars(FILE *f, uint64_t val, uint64_t val_max, int width)
{
	int num_stars, num_spaces, i;
	bool need_plus;

	num_stars = val_max ? (int)((double)(val < val_max ? val : val_max) * width / (double)val_max) : 0;
	num_spaces = width - num_stars;
	need_plus = val > val_max;
	for (i = 0; i < num_stars; i++)
		if (fputc('*', f) == EOF)
			return -EIO;
	for (i = 0; i < num_spaces; i++)
		if (fputc(' ', f) == EOF)
			return -EIO;
	if (need_plus && fputc('+', f) == EOF)
		return -EIO;
	return 0;
}

int sv_stats_print_log2(const struct sv_stats *h, FILE *f, int64_t unit_ns, const char *label)
{
	uint64_t slots[64] = { 0 }, val_max = 0;
	int idx_max = -1, i, stars, width;
	uint32_t b;

	if (unit_ns <= 0)
		unit_ns = 1;
	if (!label)
		label = unit_ns >= 1000000 ? "msecs" : unit_ns >= 1000 ? "usecs" : "nsecs";
	for (b = 0; b < h->top; b++) {
		uint64_t v;
		int slot;

		if (!h->bucket[b])
			continue;
		/* midpoint of the bucket, scaled; slot as in libbpf-tools' log2(): 0 and 1 -> 0 */
		v = (uint64_t)(sv_stats_bucket_lo(b) + (sv_stats_bucket_hi(b) - sv_stats_bucket_lo(b)) / 2) /
		    (uint64_t)unit_ns;
		slot = v < 2 ? 0 : 63 - __builtin_clzll(v);
		slots[slot] += h->bucket[b];
	}
	for (i = 0; i < 64; i++) {
		if (slots[i])
			idx_max = i;
		if (slots[i] > val_max)
			val_max = slots[i];
	}
	if (idx_max < 0)
		return 0;
	stars = idx_max <= 32 ? 40 : 20;
	width = idx_max <= 32 ? 10 : 20;
	if (fprintf(f, "%*s%-*s : count    distribution\n", idx_max <= 32 ? 5 : 15, "",
		    idx_max <= 32 ? 19 : 29, label) < 0)
		return -EIO;
	for (i = 0; i <= idx_max; i++) {
		uint64_t low = (1ULL << (i + 1)) >> 1, high = (i == 63) ? UINT64_MAX : (1ULL << (i + 1)) - 1;

		if (low == high)
			low -= 1;
		if (fprintf(f, "%*" PRIu64 " -> %-*" PRIu64 " : %-8" PRIu64 " |", width, low, width, high,
			    slots[i]) < 0)
			return -EIO;
		if (print_stars(f, slots[i], val_max, stars))
			return -EIO;
		if (fputs("|\n", f) == EOF)
			return -EIO;
	}
	return 0;
}

int sv_stats_summary_json(struct sv_json *j, const struct sv_stats_summary *s)
{
	static const char *const keys[6] = { "min", "p50", "p99", "p999", "p9999", "max" };
	const int64_t vals[6] = { s->min, s->p50, s->p99, s->p999, s->p9999, s->max };
	static const char *const ekeys[4] = { "p50_err", "p99_err", "p999_err", "p9999_err" };
	const int64_t evals[4] = { s->p50_err, s->p99_err, s->p999_err, s->p9999_err };
	unsigned i;

	sv_json_object_begin(j);
	sv_json_kv_uint(j, "count", s->count);
	for (i = 0; i < 6; i++) {
		if (s->count)
			sv_json_kv_int(j, keys[i], vals[i]);
		else
			sv_json_kv_null(j, keys[i]);
	}
	if (s->count && !s->exact) {
		sv_json_kv_bool(j, "exact", false);
		for (i = 0; i < 4; i++)
			sv_json_kv_int(j, ekeys[i], evals[i]);
	}
	if (s->negative)
		sv_json_kv_uint(j, "negative", s->negative);
	return sv_json_object_end(j);
}

int sv_stats_json(struct sv_json *j, const struct sv_stats *h)
{
	struct sv_stats_summary s;

	sv_stats_summarize(h, &s);
	return sv_stats_summary_json(j, &s);
}

int sv_stats_buckets_json(struct sv_json *j, const struct sv_stats *h)
{
	sv_json_array_begin(j);
	for (uint32_t b = 0; b < h->top; b++) {
		if (!h->bucket[b])
			continue;
		sv_json_array_begin(j);
		sv_json_int(j, sv_stats_bucket_lo(b));
		sv_json_int(j, sv_stats_bucket_hi(b));
		sv_json_uint(j, h->bucket[b]);
		sv_json_array_end(j);
	}
	return sv_json_array_end(j);
}

/* ---- Serialisation ---------------------------------------------------------------------------- */

#define SER_VERSION 1

struct wcur {
	uint8_t *p;
	size_t left;
	bool overflow;
};

static void put_u8(struct wcur *c, uint8_t v)
{
	if (!c->left) {
		c->overflow = true;
		return;
	}
	*c->p++ = v;
	c->left--;
}

static void put_varint(struct wcur *c, uint64_t v)
{
	while (v >= 0x80) {
		put_u8(c, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put_u8(c, (uint8_t)v);
}

static uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

ssize_t sv_stats_serialize(const struct sv_stats *h, uint8_t *buf, size_t cap)
{
	struct wcur c = { buf, cap, false };
	uint32_t i, nnz = 0;
	int64_t prev = -1;

	for (i = 0; i < h->top; i++)
		nnz += h->bucket[i] != 0;
	put_u8(&c, SER_VERSION);
	put_u8(&c, SV_STATS_SUB_BITS);
	put_varint(&c, h->count);
	put_varint(&c, zigzag(h->min));
	put_varint(&c, zigzag(h->max));
	put_varint(&c, h->sum_lo);
	put_varint(&c, h->sum_hi);
	put_varint(&c, h->negative);
	put_varint(&c, zigzag(h->negative_min));
	put_varint(&c, nnz);
	for (i = 0; i < h->top && !c.overflow; i++) {
		if (!h->bucket[i])
			continue;
		put_varint(&c, (uint64_t)((int64_t)i - prev - 1));
		put_varint(&c, h->bucket[i]);
		prev = i;
	}
	if (c.overflow)
		return -ENOSPC;
	return (ssize_t)(cap - c.left);
}

struct rcur {
	const uint8_t *p;
	size_t left;
	bool bad;
};

static uint8_t get_u8(struct rcur *c)
{
	if (!c->left) {
		c->bad = true;
		return 0;
	}
	c->left--;
	return *c->p++;
}

static uint64_t get_varint(struct rcur *c)
{
	uint64_t v = 0;
	unsigned shift;

	for (shift = 0; shift < 64 && !c->bad; shift += 7) {
		uint8_t b = get_u8(c);

		/* the 10th octet may only carry the top bit */
		if (shift == 63 && b > 1) {
			c->bad = true;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

int sv_stats_deserialize(struct sv_stats *h, const uint8_t *buf, size_t len)
{
	struct rcur c = { buf, len, false };
	uint64_t nnz, total = 0, n;
	int64_t idx = -1;
	unsigned __int128 sum, lo_bound, hi_bound;
	uint32_t first = 0, last = 0;

	sv_stats_init(h);
	if (get_u8(&c) != SER_VERSION || get_u8(&c) != SV_STATS_SUB_BITS)
		goto bad;
	h->count = get_varint(&c);
	h->min = unzigzag(get_varint(&c));
	h->max = unzigzag(get_varint(&c));
	h->sum_lo = get_varint(&c);
	h->sum_hi = get_varint(&c);
	h->negative = get_varint(&c);
	h->negative_min = unzigzag(get_varint(&c));
	nnz = get_varint(&c);
	if (c.bad || nnz > SV_STATS_BUCKETS)
		goto bad;
	for (n = 0; n < nnz; n++) {
		uint64_t delta = get_varint(&c), cnt = get_varint(&c);

		if (c.bad || delta >= SV_STATS_BUCKETS || !cnt)
			goto bad;
		idx += (int64_t)delta + 1;
		if (idx >= SV_STATS_BUCKETS || total + cnt < total)
			goto bad;
		total += cnt;
		h->bucket[idx] = cnt;
		if (n == 0)
			first = (uint32_t)idx;
		last = (uint32_t)idx;
	}
	if (c.left || total != h->count)
		goto bad;
	if ((h->negative == 0) != (h->negative_min == 0) || h->negative_min > 0)
		goto bad;
	sum = (unsigned __int128)h->sum_hi << 64 | h->sum_lo;
	if (!h->count) {
		if (h->min != INT64_MAX || h->max != 0 || sum)
			goto bad;
		return 0;
	}
	if (h->min < 0 || h->min > h->max || sv_stats_index(h->min) != first || sv_stats_index(h->max) != last)
		goto bad;
	lo_bound = (unsigned __int128)(uint64_t)h->min * h->count;
	hi_bound = (unsigned __int128)(uint64_t)h->max * h->count;
	if (sum < lo_bound || sum > hi_bound)
		goto bad;
	h->top = last + 1;
	return 0;
bad:
	sv_stats_init(h);
	return -EBADMSG;
}

/* ---- Counters --------------------------------------------------------------------------------- */

void sv_counters_add(struct sv_counters *dst, const struct sv_counters *src)
{
	dst->frames += src->frames;
	dst->samples += src->samples;
	dst->lost += src->lost;
	dst->duplicate += src->duplicate;
	dst->reordered += src->reordered;
	dst->late += src->late;
	dst->dropped += src->dropped;
	dst->errors += src->errors;
}

int sv_counters_json(struct sv_json *j, const struct sv_counters *c)
{
	sv_json_object_begin(j);
	sv_json_kv_uint(j, "frames", c->frames);
	sv_json_kv_uint(j, "samples", c->samples);
	sv_json_kv_uint(j, "lost", c->lost);
	sv_json_kv_uint(j, "duplicate", c->duplicate);
	sv_json_kv_uint(j, "reordered", c->reordered);
	sv_json_kv_uint(j, "late", c->late);
	sv_json_kv_uint(j, "dropped", c->dropped);
	sv_json_kv_uint(j, "errors", c->errors);
	return sv_json_object_end(j);
}

int sv_counters_format(const struct sv_counters *c, char *buf, size_t size)
{
	return snprintf(buf, size,
			"frames=%" PRIu64 " samples=%" PRIu64 " lost=%" PRIu64 " duplicate=%" PRIu64
			" reordered=%" PRIu64 " late=%" PRIu64 " dropped=%" PRIu64 " errors=%" PRIu64,
			c->frames, c->samples, c->lost, c->duplicate, c->reordered, c->late, c->dropped,
			c->errors);
}
