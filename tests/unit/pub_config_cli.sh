#!/bin/bash
# svpub's configuration rules through the command line (label unit, no privileges): a config that breaks a
# rule checked after loading is a usage error (exit 2) before anything runs, with --print-config too, and the
# message names the file:line:column of the offending value (the key alone when an override set it); every
# example config prints (--print-config) to YAML that loads back to the same output.
set -u
BUILD=${SVKIT_BUILD:-build}
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
SVPUB=$BUILD/publisher/svpub
[ -x "$SVPUB" ] || { echo "FAIL: $SVPUB not built"; exit 1; }
TMP=$(mktemp -d /tmp/pub_config_cli.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# refused: NAME YAML WANT [svpub options...]: exit 2 and WANT (a grep -F string) in stderr, with --print-config
# and with a run into a file (the rule holds before any frame is built)
refused() {
	local name=$1 yaml=$2 want=$3 rc mode
	shift 3
	printf '%b' "$yaml" >"$TMP/$name.yaml"
	want=${want//@F@/$TMP/$name.yaml}
	for mode in print run; do
		if [ $mode = print ]; then
			"$SVPUB" -c "$TMP/$name.yaml" "$@" --print-config >"$TMP/out" 2>"$TMP/err"; rc=$?
		else
			"$SVPUB" -c "$TMP/$name.yaml" "$@" -w "$TMP/x.pcap" -d 0.1 -q >"$TMP/out" 2>"$TMP/err"; rc=$?
		fi
		if [ $rc -ne 2 ] || ! grep -qF -- "$want" "$TMP/err" || [ -s "$TMP/out" ]; then
			fail "$name ($mode): exit $rc, stderr '$(cat "$TMP/err")', want exit 2 and '$want'"
		fi
	done
	[ -e "$TMP/x.pcap" ] && fail "$name: a capture was written" && rm -f "$TMP/x.pcap"
	echo "ok: $name: $(head -1 "$TMP/err")"
}

refused no_streams 'streams: []\n' 'svpub: @F@:1:10: streams: at least one stream is needed'
refused asdus16 'clock: tai\nstreams:\n  - asdus: 16\n' \
	'svpub: @F@:3:12: streams[0].asdus: a frame of 16 ASDUs is 1541 octets'
refused svid_utf8 'streams:\n  - svid: A\n  - svid: "Merging unit \\u00e9"\n' \
	'svpub: @F@:3:11: streams[1].svid: svID is a VisibleString (IEC 61850-9-2: printable ASCII 0x20..0x7E): octet 14 is 0xC3'
refused svid_tab 'streams:\n  - svid: "MU\\t01"\n' 'svpub: @F@:2:11: streams[0].svid: svID is a VisibleString'
refused datset_del 'streams:\n  - datset: "LD0/LLN0$\\x7f"\n' 'svpub: @F@:2:13: streams[0].datset: datSet is a VisibleString'
refused rate_synch2 'streams:\n  - sample_rate: 96000\n    smp_synch: 2\n' \
	'svpub: @F@:2:18: streams[0].sample_rate: 96000 samples/s: smpCnt is 16 bits and restarts at the top of every second (smpSynch 2): at most 65536 samples/s'
refused rate_hex 'streams:\n  - sample_rate: 0x17700\n' 'svpub: @F@:2:18: streams[0].sample_rate: 96000 samples/s'
refused rate_period 'streams:\n  - profile: 9-2le-60hz\n    sample_rate: 4850\n' \
	'svpub: @F@:3:18: streams[0].sample_rate: 4850 samples/s is no whole number of samples per 60 Hz period'
refused asdus_multiple 'streams:\n  - profile: F4800S2I4U4\n    asdus: 7\n' \
	'svpub: @F@:3:12: streams[0].asdus: the sample rate (4800/s) must be a multiple of the ASDUs per frame (7)'
refused replay 'streams:\n  - signal:\n      source: replay\n' \
	'svpub: @F@:3:15: streams[0].signal.source: source replay needs a capture file'
# an override holds the offending value: the key, and no position in a file that says something else
refused override 'streams:\n  - sample_rate: 8000\n' 'svpub: streams[0].sample_rate: 70000 samples/s' \
	-s 'streams[0].sample_rate=70000'
grep -qF "$TMP/override.yaml:" "$TMP/err" && fail "override: a position in a file that does not hold the value"
# the most that fits still runs
printf 'streams:\n  - svid: MU01\n    asdus: 16\n    sample_rate: 4800\n' >"$TMP/fits.yaml"
"$SVPUB" -c "$TMP/fits.yaml" -w "$TMP/fits.pcap" -d 0.1 -q 2>"$TMP/err" && [ -s "$TMP/fits.pcap" ] ||
	fail "16 ASDUs of a 4-character svID (1493 octets): $(cat "$TMP/err")"

# every example config prints, and what it prints loads back to the same
for f in "$SRC"/configs/pub-*.yaml; do
	"$SVPUB" -c "$f" -s af_packet.ts_key=counted --print-config >"$TMP/p1.yaml" 2>"$TMP/err" ||
		{ fail "$f: --print-config: $(cat "$TMP/err")"; continue; }
	"$SVPUB" -c "$TMP/p1.yaml" --print-config >"$TMP/p2.yaml" 2>"$TMP/err" && cmp -s "$TMP/p1.yaml" "$TMP/p2.yaml" ||
		fail "$f: the printed config does not load back to the same: $(cat "$TMP/err")"
	grep -q "ts_key: counted" "$TMP/p2.yaml" || fail "$f: af_packet.ts_key not printed"
done
[ $fails -eq 0 ] || { echo "FAIL: $fails checks"; exit 1; }
echo "PASS: 11 broken rules refused with exit 2 and file:line:column (the key alone for an override); 16 ASDUs that fit run; the example configs print and load back identically"
