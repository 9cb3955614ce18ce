// SPDX-License-Identifier: Apache-2.0
/* svreport's outputs walk one table of sections (report/svreport_out.h), in one order: every section named,
 * and each written by some format. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "svreport_out.h"

/* The table is in the report's order: every entry is its own section (a designated initializer left out
 * would leave a hole with no name). */
static void test_table_whole(void **state)
{
	(void)state;
	for (unsigned s = 0; s < SVR_SEC__COUNT; s++)
		assert_non_null(svr_sections[s].name);
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
		cmocka_unit_test(test_table_whole),
		cmocka_unit_test(test_every_section_emitted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
