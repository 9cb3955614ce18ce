// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for the YAML configuration mechanism (sv_config) through svpub's table, the largest one,
 * and svsub's (nested lists: datasets[].members[], built into dataset descriptions by svsub_config_datasets):
 * any text loads or fails with a file:line:column error, and a loaded config prints and reloads.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sv_config.h"
#include "svapp.h"
#include "svpub_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct svpub_config c;
	struct sv_cfg_error err;
	FILE *out;

	if (svpub_config_init(&c))
		abort();
	static struct svsub_file_config sc;
	static struct svsub_dataset_rule rules[SVSUB_CFG_MAX_DATASETS];
	char key[64], msg[256];
	unsigned n;

	if (sv_config_load_string(svpub_config_table, &c, (const char *)data, size, "fuzz.yaml", &err) == 0) {
		(void)svpub_config_resolve(&c, &err);
		out = fopen("/dev/null", "w");
		if (out) {
			sv_config_print(svpub_config_table, &c, out);
			fclose(out);
		}
	}
	if (svsub_config_init(&sc))
		abort();
	if (sv_config_load_string(svsub_config_table, &sc, (const char *)data, size, "fuzz.yaml", &err) == 0) {
		if (svsub_config_datasets(&sc, rules, &n, key, sizeof(key), msg, sizeof(msg)) == 0 &&
		    n > sc.ndatasets)
			abort();
		out = fopen("/dev/null", "w");
		if (out) {
			sv_config_print(svsub_config_table, &sc, out);
			fclose(out);
		}
	}
	return 0;
}
