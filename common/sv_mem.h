/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory set-up for the per-packet path.
 */
#ifndef SV_MEM_H
#define SV_MEM_H

#include <stddef.h>
#include <stdint.h>

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

#endif /* SV_MEM_H */
