#!/bin/bash
# svpub's pcap back-end against Wireshark's SV dissector (label interop, no root needed):
# 1 s of configs/pub-9-2le-50hz.yaml gives exactly 4000 frames, smpCnt 0..3999 in order, every frame
# decodes without expert errors, and every channel value equals the configured waveform within 1 LSB.
# Then the command line around files: --print-config needs no interface; -w with -i or -x is a usage error
# whatever the order; -w without an end (--duration or a count) is refused; bad option values name the
# option; config rules name file:line:column; a file that cannot be created is one message with the right
# reason; and (root: a 512 KiB tmpfs) a full disk ends the run with exit 1 and one message naming the file.
set -u
BUILD=${SVKIT_BUILD:-build}
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
SVPUB=$BUILD/publisher/svpub
command -v tshark >/dev/null || { echo "SKIP: tshark not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
[ -x "$SVPUB" ] || { echo "FAIL: $SVPUB not built"; exit 1; }
TMP=$(mktemp -d /tmp/pub_pcap_tshark.XXXXXX)
trap 'mountpoint -q "$TMP/full" && umount "$TMP/full"; rm -rf "$TMP"' EXIT

"$SVPUB" -c "$SRC/configs/pub-9-2le-50hz.yaml" -w "$TMP/pub.pcap" -d 1 -q --json >"$TMP/sum.json" 2>"$TMP/err" ||
	{ echo "FAIL: svpub exited $?"; cat "$TMP/err"; exit 1; }
"$SVPUB" -c "$SRC/configs/pub-9-2le-50hz.yaml" -w "$TMP/pub.pcap" --print-config >"$TMP/cfg.yaml" ||
	{ echo "FAIL: --print-config"; exit 1; }
tshark -r "$TMP/pub.pcap" -o sv.decode_data_as_phsmeas:TRUE -T fields -E separator=';' \
	-e frame.time_epoch -e sv.appid -e sv.svID -e sv.smpCnt -e sv.smpSynch -e sv.meas_value -e _ws.expert \
	>"$TMP/fields.txt" 2>"$TMP/tshark.err" || { echo "FAIL: tshark"; cat "$TMP/tshark.err"; exit 1; }

python3 - "$TMP/fields.txt" "$TMP/sum.json" <<'PY'
import json, math, sys
rows = [l.rstrip('\n').split(';') for l in open(sys.argv[1])]
summary = json.load(open(sys.argv[2]))
errs = []
if len(rows) != 4000:
    errs.append(f"{len(rows)} frames, 4000 expected")
if summary["frames"] != 4000:
    errs.append(f"summary frames {summary['frames']}")
# configs/pub-9-2le-50hz.yaml
I = [100.0] * 3; IA = [-30, -150, 90]; V = [63508.0] * 3; VA = [0, -120, 120]
t0 = None
maxdev = 0
for n, r in enumerate(rows[:4000]):
    ts, appid, svid, cnt, synch, vals, expert = r
    if int(cnt) != n:
        errs.append(f"frame {n}: smpCnt {cnt}"); break
    if appid != "0x4000" or svid != "MU0101" or synch != "2":
        errs.append(f"frame {n}: appid {appid} svid {svid} smpSynch {synch}"); break
    if expert:
        errs.append(f"frame {n}: tshark expert info: {expert}"); break
    t = float(ts)
    if t0 is None:
        t0 = t
        if abs(t0 - round(t0)) > 1e-6:
            errs.append(f"first frame at {t0}, not at the top of a second")
    if abs((t - t0) - n / 4000) > 2e-6:
        errs.append(f"frame {n}: timestamp {t - t0} s after the first, {n/4000} expected"); break
    got = [int(x) for x in vals.split(',')]
    th = 2 * math.pi * 50 * n / 4000
    xi = [math.sqrt(2) * I[p] * math.sin(th + math.radians(IA[p])) / 0.001 for p in range(3)]
    xv = [math.sqrt(2) * V[p] * math.sin(th + math.radians(VA[p])) / 0.01 for p in range(3)]
    want = xi + [sum(xi)] + xv + [sum(xv)]
    for c in range(8):
        d = abs(got[c] - want[c])
        maxdev = max(maxdev, d)
        if d > 1.0:
            errs.append(f"frame {n} channel {c}: {got[c]}, waveform {want[c]:.2f}"); break
if errs:
    print("FAIL: " + "; ".join(errs[:5])); sys.exit(1)
print(f"PASS: 4000 frames, smpCnt 0..3999, tshark decodes all, values within {maxdev:.3f} LSB of the waveform")
PY
rc=$?
grep -q "^streams:" "$TMP/cfg.yaml" || { echo "FAIL: --print-config output"; exit 1; }
[ $rc -eq 0 ] || exit $rc

fail() { echo "FAIL: $*"; exit 1; }
# expect RC PATTERN CMD...: exit code RC and stderr matching the extended regex PATTERN
expect() {
	local want=$1 pat=$2 rc
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
	[ $rc -eq "$want" ] || fail "$*: exit $rc, $want expected: $(head -3 "$TMP/err")"
	[ -z "$pat" ] || grep -Eq -- "$pat" "$TMP/err" || fail "$*: stderr does not say /$pat/: $(head -3 "$TMP/err")"
}
# --print-config without an interface (the --help example), with and without a config
expect 0 '' "$SVPUB" -c "$SRC/configs/pub-61869-9-f4800.yaml" --print-config
grep -Eq "profile: \"?F4800S2I4U4" "$TMP/out" || fail "--print-config of pub-61869-9-f4800.yaml: $(head -5 "$TMP/out")"
expect 0 '' "$SVPUB" --print-config
grep -q "^streams:" "$TMP/out" || fail "--print-config alone printed no streams"
# contradictory outputs, in either order: usage error, nothing written
expect 2 'contradicts --interface lo' "$SVPUB" -w "$TMP/c.pcap" -i lo -d 1
expect 2 'contradicts --interface lo' "$SVPUB" -i lo -w "$TMP/c.pcap" -d 1
expect 2 'contradicts --af-xdp' "$SVPUB" -x -w "$TMP/c.pcap" -d 1
[ ! -e "$TMP/c.pcap" ] || fail "a refused command line wrote $TMP/c.pcap"
# a file needs an end; a count is one
expect 2 'needs an end: give --duration' "$SVPUB" -w "$TMP/c.pcap"
expect 0 '' "$SVPUB" -w "$TMP/c.pcap" -q -s 'streams[0].count=10' --json
[ "$(tshark -r "$TMP/c.pcap" 2>/dev/null | wc -l)" -eq 10 ] || fail "count=10 into a file: not 10 frames"
python3 - "$TMP/out" <<'PY' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))["per_stream"][0]
# DESIGN's words: svID as svsub writes it; "dropped" is the kernel's, svpub says outage / tx_errors
if s.get("svID") != "svpub01" or "svid" in s or "dropped" in s or s.get("outage") != 0 or s.get("tx_errors") != 0:
    print(f"FAIL: per_stream keys: {s}"); sys.exit(1)
PY
# option values name the option and the range; config rules name file:line:column
expect 2 '^svpub: --duration \(-d\): -1 is out of range 0\.\.' "$SVPUB" -d -1 -w "$TMP/c.pcap"
printf 'streams:\n  - svid: X\n    profile: F4800\n' >"$TMP/bad.yaml"
expect 2 "bad.yaml:3:14: streams\[0\].profile: unknown profile" "$SVPUB" -c "$TMP/bad.yaml" -w "$TMP/c.pcap" -d 1
# a file that cannot be created: one message, with the system's reason
for ext in pcap pcapng; do
	expect 1 "/nonexistent/dir/x.$ext: cannot create: .*No such file or directory" "$SVPUB" -w "/nonexistent/dir/x.$ext" -d 1 -q
	[ "$(grep -c 'error:' "$TMP/err")" -eq 1 ] || fail "-w /nonexistent/dir/x.$ext: not one error message: $(cat "$TMP/err")"
done
# a full disk: exit 1 (a runtime failure), one message naming the file and the reason
if [ "$(id -u)" -eq 0 ] && mkdir "$TMP/full" && mount -t tmpfs -o size=512k svkit-full "$TMP/full"; then
	for ext in pcap pcapng; do
		rm -f "$TMP/full/"*
		reason='No space left on device'
		expect 1 "$TMP/full/p.$ext: write failed: $reason" "$SVPUB" -w "$TMP/full/p.$ext" -d 1 -q
		[ "$(grep -c 'error:' "$TMP/err")" -eq 1 ] || fail "full disk, .$ext: not one error message: $(cat "$TMP/err")"
	done
	umount "$TMP/full"
else
	echo "note: not root or no tmpfs: the full-disk case is not run"
fi
echo "PASS: command line: --print-config without an interface, -w with -i/-x refused, -w needs an end, option and config errors located, file errors once with the reason, full disk exit 1"
