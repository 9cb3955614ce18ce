#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs every query of the Grafana dashboard (configs/prometheus/grafana-dashboard.json) on a live Prometheus at
one instant ($__rate_interval as 1m, the $instance/$hop/$port variables as .*): each must run without error and
return series. Usage: prom_dashboard.py DASHBOARD PROM_URL TIME [--allow-empty METRIC]... (a query over METRIC
may return nothing: the run made no such series). Prints FAIL lines and one PASS/FAIL summary; exit 0 or 1."""
import json
import sys
import urllib.parse
import urllib.request


def main():
    path, url, t = sys.argv[1:4]
    allow = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--allow-empty"]
    dash = json.load(open(path))
    stack, queries = list(dash["panels"]), []
    while stack:
        p = stack.pop()
        stack.extend(p.get("panels", []))
        queries += [(p["title"], x["expr"]) for x in p.get("targets", []) if x.get("expr")]
    bad = empty_ok = 0
    for title, q in queries:
        e = q.replace("$__rate_interval", "1m")
        for v in ("$instance", "$hop", "$port"):
            e = e.replace(v, ".*")
        u = url + "/api/v1/query?" + urllib.parse.urlencode({"query": e, "time": t})
        try:
            d = json.load(urllib.request.urlopen(u, timeout=10))
            n = len(d["data"]["result"]) if d["status"] == "success" else -1
        except Exception as ex:  # an HTTP 400 is a query Prometheus refused
            n, d = -1, {"error": str(ex)}
        if n == 0 and any(m in e for m in allow):
            empty_ok += 1
            continue
        if n < 1:
            bad += 1
            print(f"FAIL: dashboard query of '{title}' returned {n} series: {e} {d.get('error', '')}")
    print(("PASS" if not bad else "FAIL") + f": {len(queries) - bad} of {len(queries)} dashboard queries run on the live "
          f"Prometheus without error and return series" + (f" ({empty_ok} allowed empty: {allow})" if empty_ok else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
