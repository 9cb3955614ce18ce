#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Abuse of a tool's metrics port (run by metrics_abuse.sh in the tool's namespace): usage: metrics_abuse.py HOST
PORT. In order: 200 requests for wrong paths (404), 50 POSTs (405), 5 requests with a 100 kB header (refused), a
client trickling a request for 12 s while others scrape (each answered within a second), 1000 connections at once
held for 3 s, then a scrape that must be answered. Prints what it did as PASS/FAIL lines and, last, one line
'abuse {json}' with the counts it expects the tool to have counted. Exit 0 or 1."""
import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "interop"))
from metrics_http import http, samples  # noqa: E402  (the interop test's client)

failures = 0


def report(ok, what):
    global failures
    print(("PASS: " if ok else "FAIL: ") + what, flush=True)
    failures += not ok


def scrape(host, port, timeout=5.0):
    st, _, body = http(host, port, timeout=timeout)
    if st != 200:
        raise RuntimeError(f"status {st}")
    return samples(body.decode())


def drops(host, port):
    """svsub's kernel drops as its metrics say (copied once a second: read after 1.2 s)."""
    time.sleep(1.2)
    s = scrape(host, port)
    return sum(v for k, v in s.items() if k.startswith("svkit_sub_rx_dropped_frames_total{"))


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    d0 = drops(host, port)
    time.sleep(5)
    quiet = drops(host, port) - d0
    print(f"   quiet: {quiet:.0f} frames dropped at svsub's socket in ~6 s without abuse", flush=True)
    d0 = drops(host, port)
    n404 = sum(http(host, port, p)[0] == 404 for p in ["/", "/x", "/metrics/../etc"] * 66 + ["/a", "/b"])
    report(n404 == 200, f"200 wrong paths: {n404} answered 404")
    n405 = sum(http(host, port, "/metrics", method="POST")[0] == 405 for _ in range(50))
    report(n405 == 50, f"50 POSTs: {n405} answered 405")
    refused = 0
    for _ in range(5):
        try:
            st = http(host, port, headers={"X-Big": "a" * 100000})[0]
        except (ConnectionError, socket.timeout):
            st = "closed"
        refused += st in (413, 431, "closed")
    report(refused == 5, f"5 requests with a 100 kB header refused ({refused})")
    slow = socket.create_connection((host, port))
    slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    slow.settimeout(0.05)
    t0, worst, closed = time.monotonic(), 0.0, None
    while time.monotonic() - t0 < 12:
        ta = time.monotonic()
        scrape(host, port)
        worst = max(worst, time.monotonic() - ta)
        try:
            slow.sendall(b"X")
            if slow.recv(4096) == b"":
                closed = time.monotonic() - t0
                break
        except socket.timeout:
            pass
        except OSError:
            closed = time.monotonic() - t0
            break
        time.sleep(0.3)
    slow.close()
    report(worst < 1.0, f"a client trickling a request: scrapes answered meanwhile (slowest {worst * 1000:.0f} ms), "
           f"it was shut down after {closed if closed is None else round(closed, 1)} s")
    socks = []
    for _ in range(1000):
        k = socket.socket()
        k.setblocking(False)
        k.connect_ex((host, port))
        socks.append(k)
    time.sleep(3)
    for k in socks:
        k.close()
    s, t1 = None, time.monotonic()
    while time.monotonic() - t1 < 20 and s is None:
        try:
            s = scrape(host, port, timeout=2.0)
        except (OSError, RuntimeError):
            time.sleep(0.2)
    report(s is not None, f"1000 connections held 3 s: served again {time.monotonic() - t1:.1f} s after")
    during = drops(host, port) - d0
    print(f"   abuse: {during:.0f} frames dropped at svsub's socket during the abuse", flush=True)
    print("abuse " + json.dumps({"404": n404, "405": n405, "slow_closed": closed is not None, "quiet_drops": quiet,
                                 "abuse_drops": during}), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
