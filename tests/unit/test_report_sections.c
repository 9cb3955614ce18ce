// SPDX-License-Identifier: Apache-2.0
/* svreport's outputs walk one table of sections (report/svreport_out.h): each format places every section it
 * has an emitter for exactly once, and none it has not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "svreport_out.h"

static void test_every_section_placed_once(void **state)
{
	static const char *const fmt[SVR_FMT__COUNT] = {"text", "JSON", "HTML"};

	(void)state;
	for (unsigned f = 0; f < SVR_FMT__COUNT; f++) {
		const struct svr_format_order *ord = &svr_format_order[f];
		unsigned placed[SVR_SEC__COUNT];

		memset(placed, 0, sizeof(placed));
		for (unsigned i = 0; i < ord->n; i++) {
			assert_true(ord->sec[i] < SVR_SEC__COUNT);
			placed[ord->sec[i]]++;
		}
		for (unsigned s = 0; s < SVR_SEC__COUNT; s++) {
			print_message("%s: %s: emitter %s, placed %u\n", fmt[f], svr_sections[s].name,
				      svr_sections[s].emit[f] ? "yes" : "no", placed[s]);
			assert_non_null(svr_sections[s].name);
			assert_int_equal(placed[s], svr_sections[s].emit[f] ? 1 : 0);
		}
	}
}

/* Every section says something in some format. */
static void test_every_section_emitted(void **state)
{
	(void)state;
	for (unsigned s = 0; s < SVR_SEC__COUNT; s++) {
		unsigned n = 0;

		for (unsigned f = 0; f < SVR_FMT__COUNT; f++)
			n += svr_sections[s].emit[f] != NULL;
		assert_true(n > 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_section_placed_once),
		cmocka_unit_test(test_every_section_emitted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
