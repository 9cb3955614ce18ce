#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""SCL in: svpub --scl publishes what the file says, svsub --scl checks it, tshark sees the file's values.

Usage: scl_interop.py pubsub|mismatch|tshark|shape|ied
Environment (set by CTest): SVKIT_BUILD, SVKIT_SHARED. Exit 0 pass, 1 fail, 77 skip.

pubsub:   svpub --scl locamation_vmu.scd --svcb MU01/MSVCB01 -w FILE, svsub --read FILE --scl the same file:
          0 mismatches, 0 missing, 0 unexpected; the file's error (MU02 has no SMV address, line 534) listed;
          svpub without --svcb refuses the file with that file:line; --print-config loads back identically.
mismatch: modified copies of the file (generated here): confRev 2, the dataset cut by its last FCDA pair, APPID
          0x4001, a VLAN priority 6, and a second block given an address: each mismatch named with the expected
          and the received value (confRev, dataset_length, appid, vlan_priority), the block that never came
          "missing"; exit status 0 (a report, not a failure).
tshark:   Wireshark's dissector shows svID MU0101, APPID 0x4000, confRev 1, noASDU 1, dst 01:0c:cd:04:00:01, VLAN 0
          priority 4, no datSet/smpRate/refrTm (SmvOpts), 8 values per ASDU.
shape:    a copy of openscd_data_binding_smv.scd without synchSourceId (which svpub cannot send): svpub publishes
          its currrentOnly block (3 currents + 3 qualities, 24 octets, smpRate and datSet sent), svsub checks it
          clean and reads 3 values; tshark agrees on svID, datSet, smpRate.
ied:      svsub --scl openscd_later_binding_smv_lsvs.scd --ied SMV_Subscriber2 on the locamation stream: the
          block SMV_Subscriber2 takes (currrentOnly, svID firstSMV, APPID 0x0001) is missing, MU0101 unexpected;
          --ied NOBODY is a usage error naming the file.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
BUILD = os.environ.get("SVKIT_BUILD", "build")
SHARED = os.environ.get("SVKIT_SHARED", "")
SVPUB = os.path.join(BUILD, "publisher", "svpub")
SVSUB = os.path.join(BUILD, "subscriber", "svsub")
SCL = os.path.join(SHARED, "scl") if SHARED else ""
VMU = os.path.join(SCL, "locamation_vmu.scd")

failures = []


def check(cond, what):
    print(("PASS: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, **kw)


def publish(tmp, scl, extra, name="pub.pcap"):
    out = os.path.join(tmp, name)
    p = run([SVPUB, "--scl", scl, "-w", out, "-d", "0.25", "-q"] + extra)
    check(p.returncode == 0, "svpub --scl %s %s: exit 0 (%s)" % (os.path.basename(scl), " ".join(extra),
                                                                  p.stderr.strip()[-300:]))
    return out


def sub_json(pcap, scl, extra=()):
    p = run([SVSUB, "--read", pcap, "--scl", scl, "--json"] + list(extra))
    if p.returncode != 0:
        check(False, "svsub --scl %s: exit %d: %s" % (scl, p.returncode, p.stderr[-300:]))
        return None
    return json.loads(p.stdout)


def mismatches(scl_json):
    return {(s["svID"], m["check"]): m for s in scl_json["streams"] for m in s["mismatches"]}


def t_pubsub(tmp):
    p = run([SVPUB, "--scl", VMU, "-w", os.path.join(tmp, "x.pcap"), "-d", "0.1"])
    check(p.returncode == 2 and "locamation_vmu.scd:534: error" in p.stderr and "no SMV address" in p.stderr,
          "svpub --scl without --svcb refuses MU02/MSVCB01 with file:line (%s)" % p.stderr.strip()[:200])
    pcap = publish(tmp, VMU, ["--svcb", "MU01/MSVCB01"])
    d = sub_json(pcap, VMU)
    if not d:
        return
    s = d["scl"]
    check(s["expected"] == 1 and s["mismatches"] == 0 and not s["missing"] and s["unexpected"] == 0,
          "svsub --scl on svpub's stream: 1 expected, 0 mismatches, 0 missing, 0 unexpected (%s)"
          % {k: s[k] for k in ("expected", "mismatches", "missing", "unexpected")})
    check(any(":534: error:" in e and "MU02" in e for e in s["errors"]), "the file's error is listed with its line")
    st = d["streams"][0]
    check(st["quality"]["dataset"] == "PhsMeas1" and st["quality"]["dataset_source"] == "declared",
          "the stream is read with the block's dataset PhsMeas1 (%s)" % st["quality"]["dataset"])
    # --print-config shows the effective streams and loads back identically
    a = run([SVPUB, "--scl", VMU, "--svcb", "MU01/MSVCB01", "--print-config"])
    cfg = os.path.join(tmp, "pc.yaml")
    with open(cfg, "w") as f:
        f.write(a.stdout)
    b = run([SVPUB, "-c", cfg, "--print-config"])
    check(a.returncode == 0 and a.stdout == b.stdout and 'svid: "MU0101"' in a.stdout and "appid: 0x4000" in a.stdout,
          "--print-config of an SCL stream loads back identically")
    # a key of the configuration file overrides the SCL's
    with open(os.path.join(tmp, "ov.yaml"), "w") as f:
        f.write("scl:\n  file: %s\n  svcb: MU01/MSVCB01\nstreams:\n  - conf_rev: 7\n" % VMU)
    c = run([SVPUB, "-c", os.path.join(tmp, "ov.yaml"), "--print-config"])
    check(c.returncode == 0 and "conf_rev: 7" in c.stdout and 'svid: "MU0101"' in c.stdout,
          "streams[0].conf_rev in the YAML file overrides the SCL's confRev, the rest stays the SCL's")


def modify(tmp, name, fn):
    with open(VMU) as f:
        text = f.read()
    out = os.path.join(tmp, name)
    with open(out, "w") as f:
        f.write(fn(text))
    return out


def t_mismatch(tmp):
    pcap = publish(tmp, VMU, ["--svcb", "MU01/MSVCB01"])
    first_ln0 = lambda t, a, b: t.replace(a, b, 1)
    cases = [
        ("confrev.scd", lambda t: first_ln0(t, 'confRev="1" smvID="MU0101"', 'confRev="2" smvID="MU0101"'),
         "confRev", "2", "1"),
        ("dataset.scd", lambda t: re.sub(r'\s*<FCDA ldInst="MU01" prefix="V01N"[^>]*daName="instMag.i"[^>]*/>\s*'
                                        r'<FCDA ldInst="MU01" prefix="V01N"[^>]*daName="q"[^>]*/>', "", t, count=1),
         "dataset_length", "56 octets (PhsMeas1, 14 members)", "64 octets"),
        ("appid.scd", lambda t: t.replace('<P type="APPID">4000</P>', '<P type="APPID">4001</P>'),
         "appid", "0x4001", "0x4000"),
        ("prio.scd", lambda t: first_ln0(t, '<P type="VLAN-PRIORITY">4</P>\n\t\t\t\t\t\t<P type="APPID">4000',
                                        '<P type="VLAN-PRIORITY">6</P>\n\t\t\t\t\t\t<P type="APPID">4000'),
         "vlan_priority", "6", "4"),
    ]
    for name, fn, check_name, exp, got in cases:
        scl = modify(tmp, name, fn)
        d = sub_json(pcap, scl)
        if not d:
            continue
        m = mismatches(d["scl"])
        mm = m.get(("MU0101", check_name))
        check(mm is not None and mm["expected"] == exp and mm["received"] == got and mm["frames"] == 1000,
              "%s: %s mismatch named, expected %s received %s in every frame (%s)" % (name, check_name, exp, got, mm))
        text = run([SVSUB, "--read", pcap, "--scl", scl]).stdout
        check("%s mismatch: expected %s, received %s" % (check_name, exp, got) in text,
              "%s: the text summary says it" % name)
    # MU02 given an address: expected, and it never comes
    scl = modify(tmp, "mu02.scd", lambda t: t.replace(
        "\t\t\t</ConnectedAP>\n\t\t</SubNetwork>",
        '\t\t\t\t<SMV ldInst="MU02" cbName="MSVCB01"><Address><P type="MAC-Address">01-0C-CD-04-00-02</P>'
        '<P type="APPID">4002</P></Address></SMV>\n\t\t\t</ConnectedAP>\n\t\t</SubNetwork>', 1))
    d = sub_json(pcap, scl)
    if d:
        miss = d["scl"]["missing"]
        check(len(miss) == 1 and miss[0]["svcb"] == ["T_VMU_Alliander/MU02/LLN0.MSVCB01"] and miss[0]["appid"] == 0x4002
              and d["scl"]["expected"] == 2, "a block given an address that never comes is missing (%s)" % miss)


def t_tshark(tmp):
    if not shutil.which("tshark"):
        print("SKIP: tshark not installed")
        sys.exit(SKIP)
    pcap = publish(tmp, VMU, ["--svcb", "MU01/MSVCB01"])
    fields = ["eth.dst", "vlan.id", "vlan.priority", "sv.appid", "sv.noASDU", "sv.svID", "sv.confRev", "sv.smpSynch",
              "sv.datSet", "sv.smpRate", "sv.refrTm", "sv.meas_value"]
    cmd = ["tshark", "-r", pcap, "-o", "sv.decode_data_as_phsmeas:TRUE", "-T", "fields", "-E", "occurrence=a",
           "-E", "aggregator=|"]
    for f in fields:
        cmd += ["-e", f]
    out = run(cmd).stdout.splitlines()
    rows = [dict(zip(fields, l.split("\t"))) for l in out if l.strip()]
    check(len(rows) == 1000, "tshark decodes the 1000 frames of 0.25 s (%d)" % len(rows))
    bad = [r for r in rows if not (r["eth.dst"] == "01:0c:cd:04:00:01" and r["vlan.id"] == "0" and
                                   r["vlan.priority"] == "4" and int(r["sv.appid"], 16) == 0x4000 and
                                   r["sv.noASDU"] == "1" and r["sv.svID"] == "MU0101" and r["sv.confRev"] == "1" and
                                   r["sv.datSet"] == "" and r["sv.smpRate"] == "" and r["sv.refrTm"] == "" and
                                   len(r["sv.meas_value"].split("|")) == 8)]
    check(rows and not bad, "every frame carries the SCL's MAC, VLAN 0/4, APPID 0x4000, svID MU0101, confRev 1, "
          "noASDU 1, no optional field (SmvOpts), 8 values (%d differ: %s)" % (len(bad), bad[:1]))


def t_shape(tmp):
    src = os.path.join(SCL, "openscd_data_binding_smv.scd")
    with open(src) as f:
        text = f.read()
    scl = os.path.join(tmp, "binding.scd")
    with open(scl, "w") as f:
        f.write(text.replace(' synchSourceId="true"', ""))
    p = run([SVPUB, "--scl", src, "--svcb", "CurrentTransformer/currrentOnly", "-w", os.path.join(tmp, "r.pcap"),
             "-d", "0.1"])
    check(p.returncode == 2 and "synchSourceId" in p.stderr and ":171:" in p.stderr,
          "svpub refuses a block whose SmvOpts it cannot honour, with file:line (%s)" % p.stderr.strip()[:160])
    pcap = publish(tmp, scl, ["--svcb", "CurrentTransformer/currrentOnly"])
    d = sub_json(pcap, scl, ["--ied", "SMV_Publisher"])
    if not d:
        return
    s = d["scl"]
    check(s["mismatches"] == 0 and s["unexpected"] == 0 and len(s["missing"]) == 2,
          "currrentOnly checked clean; the publisher's two other blocks with addresses missing (%s)"
          % [m["svcb"] for m in s["missing"]])
    p = run([SVSUB, "--read", pcap, "--scl", scl, "--jsonl"])
    line = json.loads(p.stdout.splitlines()[0])
    check(len(line["values"]) == 3 and len(line["quality"]) == 3 and line["datSet"] ==
          "SMV_PublisherCurrentTransformer/LLN0$currrentOnlysDataSet" and line["smpRate"] == 80,
          "3 currents + 3 qualities read with the block's dataset, datSet and smpRate sent (%s)"
          % {k: line[k] for k in ("values", "datSet", "smpRate")})
    if shutil.which("tshark"):
        t = run(["tshark", "-r", pcap, "-c", "1", "-T", "fields", "-e", "sv.svID", "-e", "sv.datSet", "-e", "sv.smpRate"])
        check(t.stdout.strip().split("\t") == ["firstSMV", "SMV_PublisherCurrentTransformer/LLN0$currrentOnlysDataSet",
                                                "80"], "tshark: svID, datSet and smpRate as the file says (%s)"
              % t.stdout.strip())


def t_ied(tmp):
    pcap = publish(tmp, VMU, ["--svcb", "MU01/MSVCB01"])
    lsvs = os.path.join(SCL, "openscd_later_binding_smv_lsvs.scd")
    d = sub_json(pcap, lsvs, ["--ied", "SMV_Subscriber2"])
    if d:
        s = d["scl"]
        check(len(s["missing"]) == 1 and s["missing"][0]["svcb"] == ["SMV_Publisher/CurrentTransformer/LLN0.currrentOnly"]
              and s["missing"][0]["svID"] == "firstSMV" and s["missing"][0]["appid"] == 1,
              "SMV_Subscriber2's stream (ExtRef/LSVS: currrentOnly) named missing (%s)" % s["missing"])
        check(s["unexpected"] == 1 and s["streams"][0]["svcb"] is None, "MU0101 is unexpected for SMV_Subscriber2")
    p = run([SVSUB, "--read", pcap, "--scl", lsvs, "--ied", "NOBODY"])
    check(p.returncode == 2 and "NOBODY" in p.stderr and "openscd_later_binding_smv_lsvs.scd" in p.stderr,
          "--ied NOBODY: usage error naming the file (%s)" % p.stderr.strip()[:160])


def main():
    which = sys.argv[1] if len(sys.argv) > 1 else "pubsub"
    if not os.path.exists(VMU):
        print("SKIP: %s not found (SVKIT_SHARED)" % VMU)
        return SKIP
    if not (os.access(SVPUB, os.X_OK) and os.access(SVSUB, os.X_OK)):
        print("SKIP: svpub/svsub not built")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="scl_interop.")
    try:
        {"pubsub": t_pubsub, "mismatch": t_mismatch, "tshark": t_tshark, "shape": t_shape, "ied": t_ied}[which](tmp)
    finally:
        shutil.rmtree(tmp)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
