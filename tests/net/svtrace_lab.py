#!/usr/bin/env python3
"""Helpers for svtrace's network tests (no third-party modules).

  send IF STREAMS RATE SECONDS [--vlan VID] [--tags TPID:VID,...] [--svid-len N] [--appid A]
                                                             AF_PACKET sender of 9-2LE frames, paced per ms;
                                                             stream k: APPID 0x4000 + k (or A for all),
                                                             destination MAC 01:0C:CD:04:00:k, behind 802.1Q
                                                             VID (PCP 4) or the tags listed, outer first
                                                             (--tags 0x88a8:100,0x8100:7: QinQ); prints the
                                                             number of frames sent per stream
  recv IF SECONDS                                            AF_PACKET receiver of 0x88BA; prints the count
                                                             ("listening" on stderr once bound)
  recdump FILE                                               an svkit record file (docs/record-format.md) as
                                                             one JSON object: NAME records, SUMMARY records,
                                                             EVENT counts per (point, guest, flags, reason),
                                                             DROP counts per (point, guest, reason name), END,
                                                             STREAM definitions (the last one per stream)
Only a development stand-in for svpub/svsub: the final tests use them when they are built.
"""
import socket, struct, sys, time

ETH_P_ALL = 3
ETH_P_SV = 0x88BA


def ber_len(n):
    if n < 0x80:
        return bytes([n])
    if n < 0x100:
        return bytes([0x81, n])
    return bytes([0x82, n >> 8, n & 0xFF])


def tlv(tag, body):
    return bytes([tag]) + ber_len(len(body)) + body


def frame(appid, svid, smpcnt, tags=(), mac_lo=None):
    asdu = (tlv(0x80, svid) + tlv(0x82, struct.pack(">H", smpcnt)) + tlv(0x83, struct.pack(">I", 1)) +
            tlv(0x85, b"\x02") + tlv(0x87, bytes(64)))
    pdu = tlv(0x60, tlv(0x80, b"\x01") + tlv(0xA2, tlv(0x30, asdu)))
    sv = struct.pack(">HHHH", appid, 8 + len(pdu), 0, 0) + pdu
    dst = bytes([0x01, 0x0C, 0xCD, 0x04, 0x00, (appid if mac_lo is None else mac_lo) & 0xFF])
    src = bytes([0x02, 0, 0, 0, 0, 1])
    return dst + src + b"".join(struct.pack(">HH", tpid, (4 << 13) | vid) for tpid, vid in tags) + \
        struct.pack(">H", ETH_P_SV) + sv


def send(args):
    ifname, streams, rate, seconds = args[0], int(args[1]), int(args[2]), float(args[3])
    tags = ()
    svid_len = 0
    if "--vlan" in args:
        tags = ((0x8100, int(args[args.index("--vlan") + 1])),)
    if "--tags" in args:
        tags = tuple((int(t.split(":")[0], 0), int(t.split(":")[1])) for t in args[args.index("--tags") + 1].split(","))
    if "--svid-len" in args:
        svid_len = int(args[args.index("--svid-len") + 1])
    appid = None
    if "--appid" in args:
        appid = int(args[args.index("--appid") + 1], 0)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    svids = []
    for k in range(streams):
        base = ("svtraceMU%02d" % k).encode()
        if svid_len > len(base):
            base = base + b"x" * (svid_len - len(base))
        svids.append(base)
    total = int(rate * seconds)
    sent = 0
    t0 = time.monotonic()
    per_ms = rate / 1000.0
    while sent < total:
        due = min(total, int((time.monotonic() - t0) * 1000.0 * per_ms) + 1)
        while sent < due:
            cnt = sent % rate
            for k in range(streams):
                s.send(frame(0x4000 + k if appid is None else appid, svids[k], cnt, tags, k))
            sent += 1
        time.sleep(0.0005)
    print(sent)


def recv(args):
    ifname, seconds = args[0], float(args[1])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_SV))
    s.bind((ifname, ETH_P_SV))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.settimeout(0.2)
    print("listening", file=sys.stderr, flush=True)
    n = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            s.recv(2048)
            n += 1
        except socket.timeout:
            pass
    print(n)


def recdump(args):
    """Independent of the C reader: the layout of common/sv_record.h, CRCs not checked."""
    import collections, json
    data = open(args[0], "rb").read()
    if data[:8] != b"SVREC\r\n\x1a":
        raise SystemExit("recdump: %s: not an svkit record file" % args[0])
    out = {"names": [], "summaries": [], "events": collections.Counter(), "drops": collections.Counter(),
           "end": None, "kinds": collections.Counter(), "streams": {}, "threads": collections.Counter(),
           "whys": []}
    pos = 256
    while pos + 16 <= len(data):
        magic, blen, nrec, _crc = struct.unpack_from("<IIII", data, pos)
        if magic != 0x4B425653:
            raise SystemExit("recdump: bad block magic at %d" % pos)
        r, end = pos + 16, pos + 16 + blen
        while r < end:
            kind, point, size = struct.unpack_from("<BBH", data, r)
            out["kinds"][kind] += 1
            if kind == 1:
                stream, appid = struct.unpack_from("<IH", data, r + 4)
                vlan, = struct.unpack_from("<H", data, r + 20)
                svid_len = data[r + 23]
                out["streams"][stream] = {"stream": stream, "appid": appid, "vlan": None if vlan == 0xFFFF else vlan,
                                          "svid": data[r + 32:r + 32 + svid_len].decode(errors="replace")}
            elif kind == 2:
                nk, ident, netns = struct.unpack_from("<B3xII", data, r + 4)
                name = data[r + 16:r + 80].split(b"\0")[0].decode()
                out["names"].append({"kind": nk, "id": ident, "netns": netns, "name": name})
            elif kind == 3:
                guest, flags, reason = struct.unpack_from("<HHH", data, r + 40)
                ts_src = data[r + 30]
                out["events"]["%d/%d/%d/%d/%d" % (point, guest, flags, reason, ts_src)] += 1
            elif kind == 4:
                stream, frm, guest, tai, period, count, frames, samples, lost = struct.unpack_from(
                    "<IBxHIIxxxxQQQQ", data, r + 4)
                dropped = struct.unpack_from("<Q", data, r + 80)[0]
                out["summaries"].append({"point": point, "from": frm, "stream": stream, "guest": guest,
                                         "period_ms": period, "count": count, "frames": frames,
                                         "lost": lost, "dropped": dropped})
            elif kind == 6:
                reason = struct.unpack_from("<H", data, r + 30)[0]
                guest = struct.unpack_from("<H", data, r + 40)[0]
                name = data[r + 48:r + 80].split(b"\0")[0].decode()
                out["drops"]["%d/%d/%s/%d" % (point, guest, name, reason)] += 1
            elif kind == 7:
                # THREAD: waits over 2 ms by "feeder kind/holder/policy/prio" (feeder kind: its name before '/')
                wait_ns, = struct.unpack_from("<q", data, r + 16)
                holder_policy, holder_prio = data[r + 40], data[r + 41]
                feeder = data[r + 48:r + 64].split(b"\0")[0].decode(errors="replace")
                holder = data[r + 64:r + 80].split(b"\0")[0].decode(errors="replace")
                if wait_ns > 2000000:
                    out["threads"]["%s/%s/%d/%d" % (feeder.split("/")[0], holder, holder_policy, holder_prio)] += 1
            elif kind == 14:
                # WHY: one hop of a late frame, its causes (ns by cause number) that add up to it
                stream, t_from, t_to, tai, smp, frm = struct.unpack_from("<IqqIHB", data, r + 4)
                guest, cpu, flags, carrier, holder_pid = struct.unpack_from("<HHIII", data, r + 32)
                holder_policy, holder_prio, faults = struct.unpack_from("<BBH", data, r + 48)
                holder_ns, = struct.unpack_from("<q", data, r + 88)
                ns = list(struct.unpack_from("<24q", data, r + 96))
                out["whys"].append({"stream": stream, "from": frm, "to": point, "hop_ns": t_to - t_from,
                                    "smp_cnt": smp, "guest": guest, "cpu": cpu, "flags": flags,
                                    "carrier_tid": carrier, "holder_pid": holder_pid,
                                    "holder_comm": data[r + 72:r + 88].split(b"\0")[0].decode(errors="replace"),
                                    "holder_policy": holder_policy, "holder_prio": holder_prio,
                                    "holder_ns": holder_ns, "ns": ns})
            elif kind == 9:
                rotated, t_ns, records, lost = struct.unpack_from("<IqQQ", data, r + 4)
                out["end"] = {"rotated": rotated, "records": records, "lost_records": lost}
            if size == 0:
                raise SystemExit("recdump: record of size 0 at %d" % r)
            r += size
        pos = end
    out["kinds"] = dict(out["kinds"])
    out["events"] = dict(out["events"])
    out["drops"] = dict(out["drops"])
    out["threads"] = dict(out["threads"])
    out["streams"] = list(out["streams"].values())
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    {"send": send, "recv": recv, "recdump": recdump}[sys.argv[1]](sys.argv[2:])
