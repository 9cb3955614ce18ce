#!/bin/sh
# Runs one libFuzzer target briefly on a seed corpus made from the real captures (or the bundled one).
# usage: run_fuzz.sh FUZZER SECONDS [SEED...]
# A seed ending in .pcap gives one seed per frame; "svpub-record:SVPUB" makes a record file with svpub;
# anything else is copied into the corpus as it is (configs, records).
# Exit status: the fuzzer's (non-zero when it found a crash, a leak, UB or a broken property).
set -eu
fuzzer=$1
secs=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
dir=$(dirname "$0")
pcaps=""
for s in "$@"; do
	case "$s" in
	*.pcap) pcaps="$pcaps $s" ;;
	svpub-record:*)
		svpub=${s#svpub-record:}
		[ -x "$svpub" ] && "$svpub" -q -w "$work/seed.pcap" -d 0.01 -r "$work/corpus/seed.rec" >/dev/null 2>&1 ;;
	*) [ -f "$s" ] && cp "$s" "$work/corpus/" ;;
	esac
done
rm -f "$work/seed.pcap"
if [ -n "$pcaps" ]; then
	# shellcheck disable=SC2086
	python3 "$dir/make_seeds.py" "$work/corpus" $pcaps
fi
rc=0
# -rss_limit and -timeout catch runaway memory and loops; the property checks abort() on violations.
"$fuzzer" -max_total_time="$secs" -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 \
	-artifact_prefix="$work/" "$work/corpus" >"$work/log" 2>&1 || rc=$?
tail -n 8 "$work/log"
if [ "$rc" -ne 0 ]; then
	echo "FAIL: $fuzzer exited $rc; the input that broke it:" >&2
	grep -A3 -E 'ERROR|SUMMARY|Test unit written' "$work/log" | head -n 20 >&2
	for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -f "$a" ] && od -A d -t x1 "$a" | head -n 20 >&2
	done
fi
[ "$rc" -eq 0 ] || exit 1
