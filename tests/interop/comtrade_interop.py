#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""COMTRADE out: svsub --app overcurrent --comtrade on the Omicron Z1 fault, read back by a reader written here
from IEEE C37.111-2013 (not from svkit's writer), compared with the capture read here too (a pcap and BER walk
of its own).

Usage: comtrade_interop.py fault|formats|gap
Environment (set by CTest): SVKIT_BUILD, SVKIT_SRC. Exit 0 pass, 1 fail, 77 skip.

fault:   one record; every analog value equal to the capture's count times the channel's a (BINARY32: exact), the
         rows' times (sample number / rate, and the .dat timestamps) the capture's sample times, the trigger the
         first sample over pickup (the trip event's fault_smpCnt), 100 ms before it and 200 ms after it,
         status PICKUP/TRIP/INCEPTION rising at the pickup, trip and inception (smpCnt 1094) samples.
formats: FLOAT32, ASCII and a .cff hold the same values.
plot:    svreport --html --comtrade RECORD.cfg: the report holds the disturbance plot (three phase-current
         polylines, the trigger and the trip lines), and headless Chromium lays it out (skipped without it).
gap:     the capture with five frames cut out of the pre-fault window (a pcap written here): the record keeps the
         five rows, with the format's missing-data marker (0x80000000) and MISSING = 1, and every other row
         equal to the capture.
"""
import glob
import json
import os
import struct
import subprocess
import sys
import tempfile
import datetime

SKIP = 77
BUILD = os.environ.get("SVKIT_BUILD", "build")
SRC = os.environ.get("SVKIT_SRC", ".")
SVSUB = os.path.join(BUILD, "subscriber", "svsub")
Z1 = os.path.join(SRC, "tests", "data", "sv92le_omicron_50hz_fault_Z1_seapath.pcap")

failures = []


def check(cond, what):
    print(("PASS: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


# ---- the capture, read here: classic pcap, Ethernet, 802.1Q, SV BER ----

def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    endian, nano = {0xa1b2c3d4: ("<", False), 0xa1b23c4d: ("<", True)}[magic]
    off, pkts = 24, []
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(endian + "IIII", data[off:off + 16])
        pkts.append((sec * 10**9 + (frac if nano else frac * 1000), data[:24] if False else data[off + 16:off + 16 + incl],
                     data[off:off + 16]))
        off += 16 + incl
    return data[:24], pkts


def ber(buf, i):
    tag, ln = buf[i], buf[i + 1]
    i += 2
    if ln & 0x80:
        n = ln & 0x7f
        ln = int.from_bytes(buf[i:i + n], "big")
        i += n
    return tag, i, ln


def sv_samples(frame):
    """[(smpCnt, [8 INT32], [8 quality])] of one 9-2LE frame."""
    i = 12
    if frame[i:i + 2] == b"\x81\x00":
        i += 4
    assert frame[i:i + 2] == b"\x88\xba"
    i += 10                        # EtherType, APPID, Length, Reserved1, Reserved2
    tag, i, ln = ber(frame, i)     # savPdu 0x60
    out = []
    end = i + ln
    while i < end:
        tag, j, ln = ber(frame, i)
        if tag == 0xa2:            # seqASDU
            k = j
            while k < j + ln:
                t2, a, l2 = ber(frame, k)     # ASDU 0x30
                m, cnt, vals = a, None, None
                while m < a + l2:
                    t3, v, l3 = ber(frame, m)
                    if t3 == 0x82:
                        cnt = int.from_bytes(frame[v:v + 2], "big")
                    if t3 == 0x87:
                        vals = [struct.unpack(">iI", frame[v + 8 * c:v + 8 * c + 8]) for c in range(l3 // 8)]
                    m = v + l3
                out.append((cnt, [x[0] for x in vals], [x[1] for x in vals]))
                k = a + l2
        i = j + ln
    return out


# ---- a COMTRADE reader from IEEE C37.111-2013 (clause 7: configuration file; clause 8: data file) ----

def parse_time(d, t):
    day, mon, year = (int(x) for x in d.split("/"))
    hh, mm, ss = t.split(":")
    whole, _, frac = ss.partition(".")
    base = datetime.datetime(year, mon, day, int(hh), int(mm), int(whole), tzinfo=datetime.timezone.utc)
    return int(base.timestamp()) * 10**9 + int(frac.ljust(9, "0")[:9])


def read_cfg(lines):
    it = iter(lines)
    station, device, rev = next(it).split(",")[:3]
    tt, na, nd = next(it).split(",")
    na, nd = int(na.rstrip("A")), int(nd.rstrip("D"))
    assert int(tt) == na + nd
    an = []
    for _ in range(na):
        f = next(it).split(",")
        an.append(dict(id=f[1], ph=f[2], ccbm=f[3], uu=f[4], a=float(f[5]), b=float(f[6]), skew=float(f[7]),
                       min=float(f[8]), max=float(f[9]), primary=float(f[10]), secondary=float(f[11]), ps=f[12]))
    dg = [next(it).split(",")[1] for _ in range(nd)]
    lf = float(next(it))
    nrates = int(next(it))
    rates = [tuple(float(x) for x in next(it).split(",")) for _ in range(nrates)]
    start = parse_time(*next(it).split(","))
    trig = parse_time(*next(it).split(","))
    ft = next(it).strip().upper()
    timemult = float(next(it))
    time_code, local_code = next(it).split(",")
    tmq, leap = next(it).split(",")
    return dict(rev=rev, an=an, dg=dg, lf=lf, rates=rates, start=start, trig=trig, ft=ft, timemult=timemult,
                time_code=time_code, tmq=tmq, leap=int(leap))


def read_dat(cfg, dat):
    na, nd = len(cfg["an"]), len(cfg["dg"])
    n = int(cfg["rates"][0][1])
    rows = []
    if cfg["ft"] == "ASCII":
        for line in dat.decode().splitlines()[:n]:
            f = line.split(",")
            vals = [None if x == "" else int(x) for x in f[2:2 + na]]
            rows.append((int(f[1 - 1]), int(f[1]), vals, [int(x) for x in f[2 + na:2 + na + nd]]))
        return rows
    size = 8 + 4 * na + 2 * ((nd + 15) // 16)
    for k in range(n):
        r = dat[k * size:(k + 1) * size]
        num, ts = struct.unpack("<II", r[:8])
        if cfg["ft"] == "FLOAT32":
            vals = list(struct.unpack("<%df" % na, r[8:8 + 4 * na]))
            vals = [None if v != v else v for v in vals]
        else:  # BINARY32: the most negative value marks missing data
            vals = [None if v == -2**31 else v for v in struct.unpack("<%di" % na, r[8:8 + 4 * na])]
        words = struct.unpack("<%dH" % ((nd + 15) // 16), r[8 + 4 * na:])
        bits = [(words[i // 16] >> (i % 16)) & 1 for i in range(nd)]
        rows.append((num, ts, vals, bits))
    return rows


def read_record(path):
    if path.endswith(".cff"):
        text = open(path, "rb").read()
        cfg_start = text.index(b"--- file type: CFG ---") + len(b"--- file type: CFG ---\r\n")
        cfg_end = text.index(b"--- file type:", cfg_start)
        cfg = read_cfg(text[cfg_start:cfg_end].decode().splitlines())
        d = text.index(b"--- file type: DAT")
        dat = text[text.index(b"\n", d) + 1:]
    else:
        cfg = read_cfg(open(path).read().splitlines())
        dat = open(path[:-4] + ".dat", "rb").read()
    return cfg, read_dat(cfg, dat)


# ---- the checks ----

def run_svsub(capture, outdir, extra=()):
    p = subprocess.run([SVSUB, "--read", capture, "--app", "overcurrent", "--comtrade", outdir] + list(extra),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    trips = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{") and '"trip"' in l]
    return p, trips


def capture_samples(path):
    _, pkts = read_pcap(path)
    out = []
    for ts, frame, _ in pkts:
        for cnt, vals, q in sv_samples(frame):
            out.append((cnt, vals, q, ts))
    return out


def compare(cfg, rows, samples, trip, label, missing_cnts=()):
    rate = cfg["rates"][0][0]
    check(rate == 4000 and cfg["lf"] == 50 and cfg["rev"] == "2013" and cfg["time_code"] == "0",
          "%s: 4000 samples/s, 50 Hz, revision 2013, UTC" % label)
    check(cfg["tmq"] == "F" and cfg["leap"] == 3, "%s: a capture's clock is unreliable time (tmq F, leapsec 3)"
          % label)
    ids = [a["id"] for a in cfg["an"]]
    check(ids == ["IA", "IB", "IC", "IN", "VA", "VB", "VC", "VN"] and [a["uu"] for a in cfg["an"]] == ["A"] * 4 + ["V"] * 4,
          "%s: channels IA IB IC IN VA VB VC VN in A and V (%s)" % (label, ids))
    # the trigger: the first sample over pickup; pre 100 ms, post 200 ms
    trig_row = round((cfg["trig"] - cfg["start"]) * rate / 1e9)
    check(trig_row == 400 and len(rows) == 1201, "%s: 100 ms (400 rows) before the trigger, 1201 rows (%d, %d)"
          % (label, trig_row, len(rows)))
    check(cfg["trig"] == trip["fault_sample_ns"] // 1000 * 1000, "%s: trigger time = the pickup sample's time (%d vs %d)"
          % (label, cfg["trig"], trip["fault_sample_ns"]))
    # rows against the capture: the trigger row is the pickup's sample
    by_cnt = [i for i, s in enumerate(samples) if s[0] == trip["fault_smpCnt"]]
    # the pickup is in the capture's second second (smpCnt 1096..3999, 0..1095, 1096..)
    k0 = [i for i in by_cnt if i > 2000][0] - trig_row
    bad_val = bad_time = 0
    for n, (num, ts, vals, bits) in enumerate(rows):
        cnt, raw, q, _ = samples[k0 + n]
        if num != n + 1 or ts != round(n * 1e6 / rate):
            bad_time += 1
        if cnt in missing_cnts:
            if not (all(v is None for v in vals) and bits[cfg["dg"].index("MISSING")] == 1):
                bad_val += 1
            continue
        if bits[cfg["dg"].index("MISSING")]:
            bad_val += 1
        for c, a in enumerate(cfg["an"]):
            want = raw[c] * a["a"] + a["b"] if cfg["ft"] != "FLOAT32" else raw[c] * (0.001 if c < 4 else 0.01)
            got = vals[c] * a["a"] + a["b"] if cfg["ft"] != "FLOAT32" else vals[c]
            if cfg["ft"] == "FLOAT32":
                ok = abs(got - want) <= abs(want) * 2**-23 + 1e-9
            else:
                ok = vals[c] == raw[c] and got == want
            if not ok:
                bad_val += 1
    check(bad_val == 0, "%s: every value = the capture's count x a (+ b), lost rows marked (%d differ)" % (label, bad_val))
    check(bad_time == 0, "%s: sample numbers 1..N and .dat timestamps (n-1)/rate in us (%d differ)" % (label, bad_time))
    # status channels
    def rise(name):
        i = cfg["dg"].index(name)
        return next((n for n, r in enumerate(rows) if r[3][i]), None)
    cnt_at = lambda n: samples[k0 + n][0]
    check(rise("PICKUP") == trig_row and cnt_at(trig_row) == trip["fault_smpCnt"],
          "%s: PICKUP rises at the trigger, smpCnt %d" % (label, trip["fault_smpCnt"]))
    r = rise("TRIP")
    check(r is not None and cnt_at(r) == trip["smpCnt"], "%s: TRIP rises at the deciding sample, smpCnt %d (%s)"
          % (label, trip["smpCnt"], r and cnt_at(r)))
    r = rise("INCEPTION")
    check(r is not None and cnt_at(r) == 1094 == trip["inception_smpCnt"],
          "%s: INCEPTION rises at the fault's first sample, smpCnt 1094 (%s)" % (label, r and cnt_at(r)))


def t_fault(tmp):
    p, trips = run_svsub(Z1, tmp)
    check(p.returncode == 0 and len(trips) == 1, "svsub --app overcurrent --comtrade: exit 0, one trip (%d)" % p.returncode)
    cfgs = glob.glob(os.path.join(tmp, "*.cfg"))
    check(len(cfgs) == 1 and os.path.exists(cfgs[0][:-4] + ".dat") and os.path.exists(cfgs[0][:-4] + ".hdr"),
          "one record: .cfg, .dat, .hdr (%s)" % cfgs)
    if not cfgs or not trips:
        return
    cfg, rows = read_record(cfgs[0])
    compare(cfg, rows, capture_samples(Z1), trips[0], "BINARY32")
    hdr = open(cfgs[0][:-4] + ".hdr").read()
    check("trigger: the protection's pickup" in hdr and "scale from 9-2LE" in hdr and "ratio 1/1 (not stated)" in hdr,
          ".hdr says the trigger, the scale's and the ratio's sources")


def t_formats(tmp):
    samples = capture_samples(Z1)
    for fmt, extra in (("FLOAT32", ["--comtrade-format", "float32"]), ("ASCII", ["--comtrade-format", "ascii"]),
                       ("BINARY32 .cff", ["--comtrade-cff"])):
        d = tempfile.mkdtemp(dir=tmp)
        p, trips = run_svsub(Z1, d, extra)
        files = glob.glob(os.path.join(d, "*.cff" if "cff" in fmt else "*.cfg"))
        check(p.returncode == 0 and len(files) == 1 and trips, "%s: one record" % fmt)
        if files and trips:
            cfg, rows = read_record(files[0])
            compare(cfg, rows, samples, trips[0], fmt)


def write_pcap(path, header, pkts):
    with open(path, "wb") as f:
        f.write(header)
        for _, frame, rec in pkts:
            f.write(rec)
            f.write(frame)


def t_gap(tmp):
    header, pkts = read_pcap(Z1)
    with open(Z1, "rb") as f:
        header = f.read(24)
    cut = set(range(900, 905))  # inside the window, a cycle and more before the fault: the relay's DFT refills
    seen_wrap = [False]
    kept = []
    second = 0
    last = None
    for ts, frame, rec in pkts:
        cnt = sv_samples(frame)[0][0]
        if last is not None and cnt < last:
            second += 1
        last = cnt
        if second == 1 and cnt in cut:
            continue  # the pre-fault window of the fault's second
        kept.append((ts, frame, rec))
    check(len(kept) == len(pkts) - 5, "five frames cut (%d -> %d)" % (len(pkts), len(kept)))
    gap = os.path.join(tmp, "gap.pcap")
    write_pcap(gap, header, kept)
    p, trips = run_svsub(gap, tmp)
    cfgs = glob.glob(os.path.join(tmp, "*.cfg"))
    if not cfgs or not trips:
        check(False, "a record of the capture with a gap (%s)" % p.stderr[-300:])
        return
    cfg, rows = read_record(cfgs[0])
    compare(cfg, rows, capture_samples(Z1), trips[0], "gap", missing_cnts=cut)
    miss = [n for n, r in enumerate(rows) if r[3][cfg["dg"].index("MISSING")]]
    check(len(miss) == 5 and all(rows[n][2] == [None] * 8 for n in miss),
          "the five lost samples keep their rows, marked missing (0x80000000) and MISSING = 1 (%s)" % miss)


def t_plot(tmp):
    import shutil
    p, trips = run_svsub(Z1, tmp)
    cfgs = glob.glob(os.path.join(tmp, "*.cfg"))
    svpub = os.path.join(BUILD, "publisher", "svpub")
    svreport = os.path.join(BUILD, "report", "svreport")
    rec = os.path.join(tmp, "pub.rec")
    subprocess.run([svpub, "-q", "-w", os.path.join(tmp, "p.pcap"), "-d", "0.01", "-r", rec], capture_output=True)
    html = os.path.join(tmp, "r.html")
    r = subprocess.run([svreport, "-q", "--html", html, "--comtrade", cfgs[0], rec], capture_output=True, text=True)
    text = open(html).read() if os.path.exists(html) else ""
    sec = text[text.find("Disturbance record"):]
    check(r.returncode in (0, 1) and "Disturbance record" in text and sec.count("<polyline") == 3 and
          'class="trigger"' in sec and 'class="trip"' in sec,
          "svreport --comtrade: the HTML plots IA IB IC with the trigger and the trip marked (rc %d %s)"
          % (r.returncode, r.stderr[-200:]))
    bad = subprocess.run([svreport, "-q", "--html", html, "--comtrade", os.path.join(tmp, "none.cfg"), rec],
                         capture_output=True, text=True)
    check(bad.returncode == 1 and "none.cfg" in bad.stderr, "a record that cannot be read is said (%s)" % bad.stderr.strip())
    if not shutil.which("chromium"):
        print("SKIP: chromium absent: the layout is not checked")
        return
    d = tempfile.mkdtemp(dir=tmp)
    dom = subprocess.run(["timeout", "60", "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                          "--disable-background-networking", "--no-first-run", "--user-data-dir=" + d,
                          "--dump-dom", "file://" + html], capture_output=True, text=True).stdout
    check("Disturbance record" in dom and dom.count('class="trip"') == 1,
          "headless Chromium parses the report and keeps the disturbance plot")


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "fault"
    if not os.path.exists(Z1) or not os.access(SVSUB, os.X_OK):
        print("SKIP: %s or svsub absent" % Z1)
        return SKIP
    tmp = tempfile.mkdtemp(prefix="comtrade_interop.")
    try:
        {"fault": t_fault, "formats": t_formats, "gap": t_gap, "plot": t_plot}[which](tmp)
    finally:
        subprocess.run(["rm", "-rf", tmp])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
