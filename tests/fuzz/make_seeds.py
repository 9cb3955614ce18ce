#!/usr/bin/env python3
"""Writes a seed corpus for the decoder fuzzer: the first frames of every capture given (classic pcap)."""
import os, struct, sys

def frames(path, limit):
    with open(path, 'rb') as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            return
        magic = struct.unpack('<I', hdr[:4])[0]
        endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
        n = 0
        while n < limit:
            rec = f.read(16)
            if len(rec) < 16:
                return
            _, _, incl, _ = struct.unpack(endian + 'IIII', rec)
            data = f.read(incl)
            if len(data) < incl:
                return
            n += 1
            yield data

def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seen = set()
    for path in sys.argv[2:]:
        for i, fr in enumerate(frames(path, 40)):
            if fr in seen:
                continue
            seen.add(fr)
            with open(os.path.join(out, '%s-%d' % (os.path.basename(path), i)), 'wb') as f:
                f.write(fr)
    print('%d seeds' % len(seen))

main()
