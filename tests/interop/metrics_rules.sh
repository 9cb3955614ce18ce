#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The shipped Prometheus files with Debian's promtool: the cluster scrape config and the rules check, and the
# rules' unit tests pass (configs/prometheus/tests). Prints PASS/FAIL/SKIP; exit 77 when promtool is absent.
set -u
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v promtool >/dev/null || { echo "SKIP: promtool not installed (Debian package prometheus)"; exit 77; }
cd "$SRC/configs/prometheus" || exit 1
rc=0
check() {
	local what=$1
	shift
	if out=$("$@" 2>&1); then
		echo "PASS: $what"
	else
		echo "FAIL: $what"
		echo "$out" | sed 's/^/   /'
		rc=1
	fi
}
check "promtool check config prometheus.yaml (cluster scrape example)" promtool check config prometheus.yaml
check "promtool check rules svkit-rules.yaml (lint included)" promtool check rules svkit-rules.yaml
check "promtool test rules: every alert before, while and after it fires" promtool test rules tests/svkit-rules.test.yaml
exit $rc
