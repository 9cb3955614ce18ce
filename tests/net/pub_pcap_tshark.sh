#!/bin/bash
# svpub's pcap back-end against Wireshark's SV dissector (label interop, no root needed):
# 1 s of configs/pub-9-2le-50hz.yaml gives exactly 4000 frames, smpCnt 0..3999 in order, every frame
# decodes without expert errors, and every channel value equals the configured waveform within 1 LSB.
set -u
BUILD=${SVKIT_BUILD:-build}
SRC=${SVKIT_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
SVPUB=$BUILD/publisher/svpub
command -v tshark >/dev/null || { echo "SKIP: tshark not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
[ -x "$SVPUB" ] || { echo "FAIL: $SVPUB not built"; exit 1; }
TMP=$(mktemp -d /tmp/pub_pcap_tshark.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

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
exit $rc
