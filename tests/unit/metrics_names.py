#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""configs/prometheus/metrics.txt against everything that names a metric (issue 32): the list itself follows the
naming rules, docs/metrics.md documents exactly its series, and every metric the rules and the Grafana dashboard
query is in it (recording-rule names are defined by the rules); the dashboard is valid JSON whose every panel
queries something. Stdlib only. Prints PASS/FAIL lines; exit 0 or 1."""
import json
import os
import re
import sys

SRC = os.environ.get("SVKIT_SRC", os.path.join(os.path.dirname(__file__), "..", ".."))
PROM = os.path.join(SRC, "configs", "prometheus")
NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
TOKEN = re.compile(r"\bsvkit[_:][a-zA-Z0-9_:]*")
failures = 0


def report(ok, what):
    global failures
    print(("PASS: " if ok else "FAIL: ") + what)
    failures += not ok


def load_catalogue():
    fams, problems = {}, []
    with open(os.path.join(PROM, "metrics.txt"), encoding="utf-8") as f:
        for n, ln in enumerate(f, 1):
            if ln.startswith("#") or not ln.strip():
                continue
            cols = ln.split(None, 5)
            if len(cols) < 6:
                problems.append(f"line {n}: fewer than 6 columns")
                continue
            name, typ, unit, labels, tools, _help = cols
            labels = [] if labels == "-" else labels.split(",")
            if not NAME.match(name) or not name.startswith("svkit_") or ":" in name:
                problems.append(f"{name}: not an svkit_ name")
            if typ not in ("counter", "gauge", "histogram", "info"):
                problems.append(f"{name}: type {typ}")
            if re.search(r"_(total|bucket|sum|count|created|info)$", name):
                problems.append(f"{name}: reserved suffix")
            if unit != "-" and not name.endswith("_" + unit):
                problems.append(f"{name}: does not end in _{unit}")
            if typ == "histogram" and unit != "seconds":
                problems.append(f"{name}: histograms are in seconds")
            if re.search(r"_(ms|us|ns|milliseconds|microseconds|nanoseconds|sec|kb|mb)(_|$)", name):
                problems.append(f"{name}: not a base unit")
            if any(not LABEL.match(x) or x.startswith("__") or x == "le" for x in labels) or len(set(labels)) != len(labels):
                problems.append(f"{name}: labels {labels}")
            if not set(tools.split(",")) <= {"pub", "sub", "trace"}:
                problems.append(f"{name}: tools {tools}")
            if name in fams:
                problems.append(f"{name}: listed twice")
            fams[name] = (typ, labels)
    return fams, problems


def series_names(fams):
    out = {}
    for name, (typ, _) in fams.items():
        if typ == "counter":
            out[name + "_total"] = name
        elif typ == "info":
            out[name + "_info"] = name
        elif typ == "histogram":
            for s in ("_bucket", "_sum", "_count"):
                out[name + s] = name
        else:
            out[name] = name
    return out


def rule_exprs():
    """(recorded names, [exprs]) of svkit-rules.yaml: its rules are one `record:`/`alert:` line and one `expr:`
    line each (checked: every rule has an expr)."""
    recorded, exprs, rules = set(), [], 0
    with open(os.path.join(PROM, "svkit-rules.yaml"), encoding="utf-8") as f:
        for ln in f:
            m = re.match(r"\s*- (record|alert): (\S+)", ln)
            if m:
                rules += 1
                if m.group(1) == "record":
                    recorded.add(m.group(2))
            m = re.match(r"\s*expr: (.*)$", ln)
            if m:
                exprs.append(m.group(1))
    return recorded, exprs, rules


def main():
    fams, problems = load_catalogue()
    report(not problems and len(fams) > 50, f"metrics.txt: {len(fams)} families follow the naming rules {problems}")
    series = series_names(fams)

    with open(os.path.join(SRC, "docs", "metrics.md"), encoding="utf-8") as f:
        doc = f.read()
    in_doc = set(re.findall(r"`(svkit_[a-z0-9_]+)`", doc))
    undocumented = sorted(set(series) - in_doc)
    unknown = sorted(n for n in in_doc if n not in series and n not in fams)
    report(not undocumented and not unknown,
           f"docs/metrics.md documents every series of metrics.txt and no other (missing {undocumented}, "
           f"unknown {unknown})")

    recorded, exprs, rules = rule_exprs()
    bad = sorted({t for e in exprs for t in TOKEN.findall(e)
                  if not (t in series or (t.startswith("svkit:") and t in recorded))})
    report(rules == len(exprs) and rules > 10 and not bad,
           f"svkit-rules.yaml: {rules} rules, every metric they read is in metrics.txt (unknown: {bad})")

    path = os.path.join(PROM, "grafana-dashboard.json")
    try:
        with open(path, encoding="utf-8") as f:
            dash = json.load(f)
        report(True, "grafana-dashboard.json is JSON")
    except (OSError, ValueError) as e:
        report(False, f"grafana-dashboard.json: {e}")
        return 1
    panels, queries = [], []
    stack = list(dash.get("panels", []))
    while stack:
        p = stack.pop()
        stack.extend(p.get("panels", []))
        if p.get("type") == "row":
            continue
        panels.append(p)
        qs = [t.get("expr", "") for t in p.get("targets", [])]
        if not qs or not all(qs):
            report(False, f"panel '{p.get('title')}' has a target without a query")
        queries += qs
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            queries.append(v["query"]["query"] if isinstance(v.get("query"), dict) else v.get("query", ""))
    bad = sorted({t for q in queries for t in TOKEN.findall(q)
                  if not (t in series or (t.startswith("svkit:") and t in recorded))})
    named = all(TOKEN.search(q) or re.search(r"\bup\b", q) for q in queries)
    report(not bad and named, f"dashboard: {len(panels)} panels, {len(queries)} queries, every metric in metrics.txt "
           f"(unknown: {bad})")
    kinds = {p["type"] for p in panels}
    used = {t for q in queries for t in TOKEN.findall(q)}
    report("heatmap" in kinds and "svkit_hop_latency_seconds_bucket" in used and "svkit_trace_late_frames_total" in used
           and any("histogram_quantile(0.99" in q for q in queries) and "svkit_sub_lost_samples_total" in used,
           "dashboard has the latency heatmap, percentiles, losses and why-late counts by cause")
    ids = [p.get("id") for p in panels]
    report(len(ids) == len(set(ids)) and dash.get("uid"), "dashboard: uid set, panel ids unique")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
