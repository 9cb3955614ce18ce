// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer target for svtrace's reader of Open vSwitch database replies (bpf/svtrace_ovsdb.c): any
 * byte string is a bridge found, not found, or refused with a reason, without reading out of bounds;
 * what it says fits the input.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "svtrace_ovsdb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "up0", "vm1p", "eth7", "" };
	struct svtrace_ovs_iface ifs[4];
	struct svtrace_ovs_bridge br;
	char why[96];

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int err = svtrace_ovsdb_parse((const char *)data, size, names[i], &br, ifs, 4, why, sizeof(why));

		if (err != 0 && err != -ESRCH && err != -EPROTO && err != -EBADMSG)
			abort();
		if ((err == -EPROTO || err == -EBADMSG) && (!why[0] || strlen(why) >= sizeof(why)))
			abort();
		if (err)
			continue;
		/* an interface costs at least ["uuid",""] twice over in a reply */
		if (br.nifaces > size / 8 || br.nlong > br.nifaces || strlen(br.name) >= sizeof(br.name))
			abort();
		for (unsigned k = 0; k < br.nifaces - br.nlong && k < 4; k++)
			if (strlen(ifs[k].name) > 15 || strlen(ifs[k].type) >= sizeof(ifs[k].type))
				abort();
	}
	return 0;
}
