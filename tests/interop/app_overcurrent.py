#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""svsub --app overcurrent (ANSI 50) on the real captures, and svsub -c FILE.

Usage: app_overcurrent.py fault|normal|config
Environment (set by CTest): SVKIT_BUILD, SVKIT_SRC, SVKIT_SHARED. Exit 0 pass, 1 fail, 77 skip.

fault:  sv92le_omicron_50hz_fault_Z1_seapath.pcap (currents 0 until smpCnt 1094, then a three-phase
        fault up to ~28 kA, one fault): exactly one trip, phases ABC, fault_smpCnt >= 1094 and the deciding
        smpCnt within one cycle (80 samples at 4000 Hz) of 1094.
normal: every other real capture (DINA 60 Hz ~281 A peaks, QUT 13-stream, Omicron Z3 pre-fault) at the
        default pickup, nominal 50 and 60 Hz: no trip; one summary line per stream.
config: configs/sub-overcurrent.yaml loads (--print-config), the command line overrides it, it runs the
        app offline; an unknown key is reported as file:line:column with exit 2.
"""
import json
import os
import subprocess
import sys
import tempfile

SKIP = 77
BUILD = os.environ.get("SVKIT_BUILD", "build")
SRC = os.environ.get("SVKIT_SRC", ".")
SHARED = os.environ.get("SVKIT_SHARED", "")
SVSUB = os.path.join(BUILD, "subscriber", "svsub")
FAULT_START = 1094  # SOURCES.md: currents are 0 until smpCnt 1094
CYCLE = 80          # samples per cycle, 4000 Hz / 50 Hz
WRAP = 4000

failures = []


def check(cond, what):
    print(("PASS: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def capture(name):
    for d in (os.path.join(SHARED, "captures") if SHARED else None, os.path.join(SRC, "tests", "data")):
        if d and os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    return None


def run(args):
    p = subprocess.run([SVSUB] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
    events = []
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            events.append(json.loads(line))
    return p.returncode, events, p.stderr


def check_fault_trip(events, label):
    trips = [e for e in events if e.get("event") == "trip"]
    check(len(trips) == 1, "%s: exactly one trip for the one fault (got %d)" % (label, len(trips)))
    if not trips:
        return
    t = trips[0]
    print("  trip: phases %s smpCnt %d fault_smpCnt %d processing_ns %d" %
          (t["phases"], t["smpCnt"], t["fault_smpCnt"], t["processing_ns"]))
    check(t["svID"] == "AA1J1Q01A1MU0102", "%s: svID" % label)
    check(t["phases"] == "ABC", "%s: phases ABC (got %s)" % (label, t["phases"]))
    check(FAULT_START <= t["fault_smpCnt"] < FAULT_START + CYCLE,
          "%s: fault_smpCnt %d not before the fault (%d)" % (label, t["fault_smpCnt"], FAULT_START))
    delay = (t["smpCnt"] - FAULT_START) % WRAP
    check(0 <= delay <= CYCLE, "%s: decided %d samples after the fault's start (<= %d)" % (label, delay, CYCLE))
    for k in ("fault_sample_ns", "decision_ns", "processing_ns", "trip_rx_ns", "fault_rx_ns"):
        check(isinstance(t.get(k), int), "%s: %s present" % (label, k))
    check(t["decision_ns"] >= t["trip_rx_ns"] >= t["fault_rx_ns"], "%s: times ordered" % label)


def t_fault():
    f = capture("sv92le_omicron_50hz_fault_Z1_seapath.pcap")
    if not f:
        print("SKIP: fault capture absent")
        return SKIP
    rc, ev, err = run(["--read", f, "--app", "overcurrent", "-q"])
    check(rc == 0, "svsub --app overcurrent exit 0 (%d) %s" % (rc, err.strip()))
    check_fault_trip(ev, "Z1 default")
    summ = [e for e in ev if e.get("event") == "summary"]
    check(len(summ) == 1 and summ[0]["trips"] == 1 and summ[0]["samples_per_cycle"] == CYCLE,
          "Z1: summary line (1 trip, 80 samples/cycle)")
    # Above the fault current: no trip at all.
    rc, ev, err = run(["--read", f, "--app", "overcurrent", "--pickup", "50000", "-q"])
    check(rc == 0 and not [e for e in ev if e.get("event") == "trip"], "Z1: no trip with pickup 50 kA")
    # The summary still comes, on stderr, with the app's lines on stdout.
    rc, ev, err = run(["--read", f, "--app", "overcurrent"])
    check(rc == 0 and "stream appid 0x4000" in err and len([e for e in ev if e.get("event") == "trip"]) == 1,
          "Z1: text summary on stderr, trip lines on stdout")
    return 0


def t_normal():
    names = ["sv92le_60hz_vlan1_normal_dina.pcap", "sv92le_omicron_50hz_fault_Z3_seapath_short.pcap",
             "qutzss_sv13asdu_goose_attack_delete_971a.pcap", "qutzss_sv13asdu_goose_attack_inject_9311a.pcap",
             "qutzss_sv13asdu_goose_attack_modify_9411a.pcap"]
    found = [n for n in names if capture(n)]
    if not found:
        print("SKIP: captures absent")
        return SKIP
    for n in found:
        for hz in ("50", "60"):
            rc, ev, err = run(["--read", capture(n), "--app", "overcurrent", "--nominal-hz", hz, "-q"])
            trips = [e for e in ev if e.get("event") == "trip"]
            summ = [e for e in ev if e.get("event") == "summary"]
            check(rc == 0 and not trips and summ, "%s nominal %s Hz: no trip at 1000 A (%d), %d streams" %
                  (n, hz, len(trips), len(summ)))
    d = capture("sv92le_60hz_vlan1_normal_dina.pcap")
    if d:
        # The DINA load (~198 A RMS) is measured: it trips at 150 A, and the DFT ran on 80 samples/cycle.
        rc, ev, err = run(["--read", d, "--app", "overcurrent", "--nominal-hz", "60", "--pickup", "150", "-q"])
        trips = [e for e in ev if e.get("event") == "trip"]
        check(len(trips) == 1 and all(190 < a < 205 for a in trips[0]["rms_a"]),
              "DINA: load ~198 A RMS trips a 150 A pickup once")
    return 0


def t_config():
    cfg = os.path.join(SRC, "configs", "sub-overcurrent.yaml")
    p = subprocess.run([SVSUB, "-c", cfg, "--print-config"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=30)
    check(p.returncode == 0 and 'app: "overcurrent"' in p.stdout and 'interface: "eth1"' in p.stdout,
          "sub-overcurrent.yaml loads and prints (rc %d) %s" % (p.returncode, p.stderr.strip()))
    with tempfile.TemporaryDirectory() as tmp:
        again = os.path.join(tmp, "again.yaml")
        with open(again, "w") as f:
            f.write(p.stdout)
        q = subprocess.run([SVSUB, "-c", again, "--print-config"], stdout=subprocess.PIPE, text=True, timeout=30)
        check(q.returncode == 0 and q.stdout == p.stdout, "--print-config output loads back to the same")
        bad = os.path.join(tmp, "bad.yaml")
        with open(bad, "w") as f:
            f.write("app: overcurrent\npickup: 1000\n  # comment\nmax_stream: 4\n")
        q = subprocess.run([SVSUB, "-c", bad, "--print-config"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=30)
        check(q.returncode == 2 and (bad + ":4:1:") in q.stderr and "max_stream" in q.stderr,
              "unknown key: file:line:col error, exit 2 (%s)" % q.stderr.strip())
        bad2 = os.path.join(tmp, "bad2.yaml")
        with open(bad2, "w") as f:
            f.write("pickup: -5\n")
        q = subprocess.run([SVSUB, "-c", bad2, "--print-config"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=30)
        check(q.returncode == 2 and (bad2 + ":1:") in q.stderr, "out-of-range pickup rejected with position")
    # The command line overrides the file.
    p = subprocess.run([SVSUB, "-c", cfg, "--pickup", "2500", "--nominal-hz", "60", "--print-config"],
                       stdout=subprocess.PIPE, text=True, timeout=30)
    check("pickup: 2500" in p.stdout and "nominal_hz: 60" in p.stdout, "options override the file")
    f = capture("sv92le_omicron_50hz_fault_Z1_seapath.pcap")
    if f:
        # The file names an interface; --read on the command line replaces it as the source.
        rc, ev, err = run(["-c", cfg, "--read", f, "-q"])
        check(rc == 0, "-c sub-overcurrent.yaml --read FILE runs (%d) %s" % (rc, err.strip()))
        check_fault_trip(ev, "Z1 via config")
        rc, ev, err = run(["-c", cfg, "--read", f, "--pickup", "50000", "-q"])
        check(rc == 0 and not [e for e in ev if e.get("event") == "trip"], "config + --pickup override: no trip")
    return 0


def main():
    if not os.access(SVSUB, os.X_OK):
        print("FAIL: %s not built" % SVSUB)
        return 1
    tests = {"fault": t_fault, "normal": t_normal, "config": t_config}
    if len(sys.argv) != 2 or sys.argv[1] not in tests:
        print(__doc__)
        return 2
    rc = tests[sys.argv[1]]()
    if rc == SKIP:
        return SKIP
    if failures:
        print("FAIL: %d check(s) failed" % len(failures))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
