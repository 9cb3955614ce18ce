#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tools' --metrics against their own JSON summaries (issue 32, phase 2), without privileges: svsub reading a
capture and svpub writing one serve their metrics while they run and, with --metrics-linger, once more after the
end; that scrape (svkit_run_finished 1) must equal the --json summary exactly, series by series. Also: --host names
the host in svkit_build_info, a linger nobody scrapes ends at its bound and says so, a bad --metrics is a usage
error (exit 2) with the reason, an address in use a run-time one (exit 1). svtrace needs the lab: tests/net.
Prints PASS/FAIL/SKIP lines; exit 0, 1 or 77."""
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

BUILD = os.environ.get("SVKIT_BUILD", "build")
SRC = os.environ.get("SVKIT_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
SVSUB = os.path.join(BUILD, "subscriber", "svsub")
SVPUB = os.path.join(BUILD, "publisher", "svpub")
PCAP = os.path.join(SRC, "tests", "data", "sv92le_omicron_50hz_fault_Z1_seapath.pcap")
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
failures = 0


def report(ok, what):
    global failures
    print(("PASS: " if ok else "FAIL: ") + what, flush=True)
    failures += not ok


def parse(text):
    """{(name, frozenset(labels)): float}"""
    out = {}
    for ln in text.splitlines():
        if not ln or ln.startswith("#"):
            continue
        m = SAMPLE.match(ln)
        if not m:
            continue
        labels = frozenset(LABEL.findall(m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def get(series, name, **labels):
    return series.get((name, frozenset(labels.items())))


def start(cmd):
    """Runs @cmd; returns (process, metrics URL) once it says where it serves."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url, seen = None, []
    deadline = time.time() + 20
    while time.time() < deadline:
        ln = p.stderr.readline()
        if not ln:
            break
        seen.append(ln)
        m = re.search(r"metrics on (http://\S+)", ln)
        if m:
            url = m.group(1)
            break
    return p, url, seen


def final_scrape(url):
    """Scrapes until svkit_run_finished is 1 (the linger serves that scrape); returns the series."""
    deadline = time.time() + 30
    while time.time() < deadline:
        with urllib.request.urlopen(url, timeout=5) as r:
            s = parse(r.read().decode())
        if get(s, "svkit_run_finished") == 1:
            return s
        time.sleep(0.05)
    return None


def finish(p):
    out, err = p.communicate(timeout=60)
    return p.returncode, out, err


def check_svsub():
    host = "hv-test-%d" % os.getpid()
    t0 = time.time()
    p, url, _ = start([SVSUB, "--read", PCAP, "--json", "--metrics", "127.0.0.1:0", "--metrics-linger", "30",
                       "--host", host])
    if not url:
        p.kill()
        report(False, "svsub --metrics: no 'metrics on' line")
        return
    s = final_scrape(url)
    rc, out, err = finish(p)
    took = time.time() - t0
    report(rc == 0 and s is not None, f"svsub --read --metrics: exit {rc}, final scrape taken, ended {took:.1f} s "
           "after its start (the linger ends at the first final scrape, not at its 30 s bound)")
    if s is None or rc != 0:
        return
    report(took < 15, "svsub: the linger ended once scraped")
    j = json.loads(out)
    report(get(s, "svkit_build_info", tool="svsub", version=get_version(SVSUB), host=host) == 1,
           f"svsub: svkit_build_info carries --host {host}")
    keys = [("svkit_sub_frames_total", "frames"), ("svkit_sub_samples_total", "samples"),
            ("svkit_sub_lost_samples_total", "lost"), ("svkit_sub_lost_samples_estimated_total", "lost_estimated"),
            ("svkit_sub_duplicate_samples_total", "duplicates"),
            ("svkit_sub_out_of_order_samples_total", "out_of_order"), ("svkit_sub_smpcnt_restarts_total", "resets"),
            ("svkit_sub_confrev_changes_total", "confrev_changes"),
            ("svkit_sub_smpsynch_changes_total", "smpsynch_changes"),
            ("svkit_sub_simulated_frames_total", "simulated"), ("svkit_sub_decode_errors_total", "errors"),
            ("svkit_sub_confrev", "confRev")]
    bad, n = [], 0
    for st in j["streams"]:
        lab = {"svid": st["svID"], "appid": "0x%04x" % st["appid"]}
        for name, key in keys:
            n += 1
            if get(s, name, **lab) != st[key]:
                bad.append(f"{name}{lab}={get(s, name, **lab)} != {key}={st[key]}")
        n += 1
        if get(s, "svkit_sub_samples_not_good_total", **lab) != st["quality"]["samples_not_good"]:
            bad.append("samples_not_good")
        for flag in ("invalid", "questionable", "test", "derived"):
            n += 1
            want = sum(c[flag] for c in st["quality"]["channels"])
            if get(s, "svkit_sub_quality_flags_total", flag=flag, **lab) != want:
                bad.append(f"quality {flag}")
        n += 1
        want = st["latency_outliers"]["count"] + st["latency_negative"]["count"]
        if get(s, "svkit_sub_latency_rejected_samples_total", **lab) != want:
            bad.append("latency_rejected")
    for name, key in (("svkit_sub_non_sv_frames_total", "non_sv_frames"),
                      ("svkit_sub_truncated_frames_total", "truncated_frames"),
                      ("svkit_sub_streams_overflow_samples_total", "streams_overflow")):
        n += 1
        if get(s, name) != j[key]:
            bad.append(f"{name} {get(s, name)} != {j[key]}")
    for e, v in j["errors"].items():
        n += 1
        if get(s, "svkit_sub_malformed_frames_total", error=e) != v:
            bad.append(f"malformed {e}")
    lat = sum(st["latency_ns"]["count"] for st in j["streams"] if st["latency_ns"])
    n += 1
    if get(s, "svkit_hop_latency_seconds_count", hop="Ts-T3", port="read") != lat:
        bad.append(f"Ts-T3 count {get(s, 'svkit_hop_latency_seconds_count', hop='Ts-T3', port='read')} != {lat}")
    report(not bad and j["streams"], f"svsub: the final scrape equals the JSON summary: {n} series of "
           f"{len(j['streams'])} stream(s) ({j['streams'][0]['frames'] if j['streams'] else 0} frames)"
           + (": " + "; ".join(bad[:5]) if bad else ""))


def check_svpub():
    t0 = time.time()
    p, url, _ = start([SVPUB, "-w", "/dev/null", "-d", "1", "--json", "-s", "metrics=127.0.0.1:0",
                       "-s", "metrics_linger=30"])
    if not url:
        p.kill()
        report(False, "svpub --metrics: no 'metrics on' line")
        return
    s = final_scrape(url)
    rc, out, err = finish(p)
    report(rc == 0 and s is not None, f"svpub -w --metrics: exit {rc}, final scrape taken ({time.time() - t0:.1f} s)")
    if s is None or rc != 0:
        return
    j = json.loads(out)
    bad, n = [], 0
    for st in j["per_stream"]:
        lab = {"svid": st["svID"], "appid": "0x%04x" % st["appid"]}
        for name, key in (("svkit_pub_frames_total", "frames"), ("svkit_pub_late_frames_total", "late"),
                          ("svkit_pub_skipped_frames_total", "skipped"), ("svkit_pub_stopped_frames_total", "stopped"),
                          ("svkit_pub_outage_frames_total", "outage"), ("svkit_pub_tx_errors_total", "tx_errors")):
            n += 1
            if get(s, name, **lab) != st[key]:
                bad.append(f"{name}{lab}")
    for name, key in (("svkit_pub_overruns_total", "overruns"), ("svkit_pub_tx_timestamps_total", "tx_timestamps"),
                      ("svkit_pub_tx_timestamps_missing_total", "tx_timestamps_missing"),
                      ("svkit_pub_tx_timestamps_out_of_order_total", "tx_timestamps_out_of_order"),
                      ("svkit_events_lost_total", "tx_timestamps_missing")):
        n += 1
        if get(s, name) != j[key]:
            bad.append(name)
    n += 2
    if get(s, "svkit_hop_latency_seconds_count", hop="Ts-T0", port="/dev/null") != j["tx_lateness_ns"]["count"]:
        bad.append("Ts-T0 count")
    if get(s, "svkit_pub_wakeup_lateness_seconds_count") != j["lateness_ns"]["count"]:
        bad.append("wake-up lateness count")
    report(not bad, f"svpub: the final scrape equals the JSON summary: {n} series" + (": " + "; ".join(bad) if bad else ""))


def get_version(tool):
    return subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.split()[-1]


def check_errors():
    r = subprocess.run([SVSUB, "--read", PCAP, "--metrics", "localhost:9462"], capture_output=True, text=True)
    report(r.returncode == 2 and "--metrics" in r.stderr and "numeric" in r.stderr,
           f"svsub --metrics localhost:9462: exit {r.returncode} ({r.stderr.strip()[:120]})")
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    r = subprocess.run([SVSUB, "--read", PCAP, "-q", "--metrics", f"127.0.0.1:{port}"], capture_output=True, text=True)
    srv.close()
    report(r.returncode == 1 and "in use" in r.stderr.lower(),
           f"svsub --metrics on a port in use: exit {r.returncode} ({r.stderr.strip()[:120]})")
    t0 = time.time()
    r = subprocess.run([SVSUB, "--read", PCAP, "-q", "--metrics", "127.0.0.1:0", "--metrics-linger", "1"],
                       capture_output=True, text=True)
    took = time.time() - t0
    report(r.returncode == 0 and 0.9 < took < 10 and "not scraped" in r.stderr,
           f"svsub --metrics-linger 1, never scraped: exit {r.returncode} after {took:.1f} s, said so")


def main():
    for b in (SVSUB, SVPUB):
        if not os.access(b, os.X_OK):
            print(f"SKIP: {b} not built")
            return 77
    check_svsub()
    check_svpub()
    check_errors()
    print(("FAIL: %d checks" % failures) if failures else "PASS: the tools' metrics equal their summaries")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
