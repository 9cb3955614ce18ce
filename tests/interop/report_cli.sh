#!/bin/bash
# svreport's command line: exit codes as the README and svreport(1) say (0 written, 1 a file that cannot be
# read, 2 usage), on records svpub writes: no arguments, a missing or foreign record, the same record twice, a
# budgets file missing (1) or wrong (2), a missing cyclictest file (1), --verdict-exit's NONE (0), and an --alias that renames nothing
# (said, exit 0).
set -u
B=${SVKIT_BUILD:-build}
SVPUB=$B/publisher/svpub
SVREPORT=$B/report/svreport
[ -x "$SVPUB" ] && [ -x "$SVREPORT" ] || { echo "SKIP: svpub or svreport not built"; exit 77; }
T=$(mktemp -d /tmp/svreport-cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: svreport cli: $*"; exit 1; }
expect() { # RC WHAT ARGS...
	local want=$1 what=$2 rc
	shift 2
	"$SVREPORT" "$@" >"$T/out" 2>"$T/err"; rc=$?
	[ $rc = "$want" ] || fail "$what: exit $rc, want $want: $(head -c 300 "$T/err")"
}
"$SVPUB" -q -w "$T/p.pcap" -d 0.05 -r "$T/p.rec" >/dev/null 2>&1 || fail "svpub could not write a record"
expect 0 "a record" "$T/p.rec"
expect 0 "--verdict-exit with nothing to check (NONE)" --verdict-exit "$T/p.rec"
grep -q "NONE" "$T/out" || fail "NONE verdict not printed: $(grep -i verdict "$T/out")"
expect 2 "no arguments"
expect 1 "a missing record" "$T/missing.rec"
expect 1 "a record of another kind" "$T/p.pcap"
expect 2 "the same record twice" "$T/p.rec" "$T/p.rec"
expect 1 "a missing budgets file" -b "$T/missing.yaml" "$T/p.rec"
grep -q "missing.yaml" "$T/err" || fail "missing budgets file not named: $(cat "$T/err")"
printf 'budgets:\n  - hop: T9-T1\n    max_us: 1\n' >"$T/bad.yaml"
expect 2 "a wrong budgets file" -b "$T/bad.yaml" "$T/p.rec"
grep -q "bad.yaml" "$T/err" || fail "wrong budgets file not named: $(cat "$T/err")"
expect 1 "a missing cyclictest file" -C "$T/missing.hist" "$T/p.rec"
expect 0 "an alias that names no guest" --alias nohost:vnet0=g1 "$T/p.rec"
grep -q "warning: --alias nohost:vnet0=g1: no record names a guest 'nohost:vnet0'" "$T/err" ||
	fail "an unused alias not said: $(cat "$T/err")"
expect 2 "an alias without a name" --alias =g1 "$T/p.rec"
echo "PASS: svreport cli: exit codes 0/1/2 as documented, NONE with --verdict-exit is 0"
