/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory set-up for the per-packet path.
 */
#ifndef SV_MEM_H
#define SV_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Writes a zero into every page of zeroed (calloc'd) memory @p of @len octets, so that its pages are mapped
 * now and not by page faults on the per-packet path (a fault costs microseconds; the first frames of a
 * hundred new streams would take a thousand at once). Volatile: a memset of calloc'd memory may be elided.
 */
static inline void sv_prefault(void *p, size_t len)
{
	volatile uint8_t *b = p;

	for (size_t off = 0; off < len; off += 4096)
		b[off] = 0;
	if (len)
		b[len - 1] = 0;
}

/* calloc() of @n x @size octets, its pages touched now (sv_prefault): memory a module keeps for its whole life,
 * allocated at its start. Adds the octets to *@total (a module's memory figure). NULL (errno) on failure. */
static inline void *sv_calloc_prefaulted(size_t n, size_t size, size_t *total)
{
	void *p = calloc(n, size);

	if (p) {
		sv_prefault(p, n * size);
		*total += n * size;
	}
	return p;
}

#endif /* SV_MEM_H */
