#!/usr/bin/env python3
"""Interop: frames of many shapes encoded by svkit, decoded by Wireshark's SV dissector (tshark), compared field
by field with svkit's own decode. usage: tshark_shapes.py SV_SHAPES_BINARY [N] [SEED]

tshark lists each field's occurrences per frame in ASDU order, skipping ASDUs where an optional field is absent,
so each field is compared as the per-frame sequence of its present values."""
import datetime, os, shutil, subprocess, sys, tempfile

FIELDS = ['frame.number', 'sv.appid', 'sv.length', 'sv.reserve1.s_bit', 'sv.noASDU', 'sv.svID', 'sv.datSet',
          'sv.smpCnt', 'sv.confRev', 'sv.smpSynch', 'sv.smpRate', 'sv.smpMod', 'sv.refrTm', 'sv.gmidentity',
          'sv.meas_value', 'sv.meas_quality']

def refrtm_ns(s):
    # "Nov 14, 2023 22:20:57.871884942 UTC"
    date, frac = s.replace(' UTC', '').rsplit('.', 1)
    t = datetime.datetime.strptime(date, '%b %d, %Y %H:%M:%S').replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp()) * 10**9 + int(frac.ljust(9, '0')[:9])

def main():
    gen = sys.argv[1]
    n = sys.argv[2] if len(sys.argv) > 2 else '300'
    seed = sys.argv[3] if len(sys.argv) > 3 else '1'
    if not shutil.which('tshark'):
        print('SKIP: tshark not installed')
        return 77
    tmp = tempfile.mkdtemp()
    try:
        pcap = os.path.join(tmp, 'shapes.pcap')
        ours = subprocess.run([gen, pcap, n, seed], check=True, capture_output=True, text=True).stdout
        cmd = ['tshark', '-r', pcap, '-o', 'sv.decode_data_as_phsmeas:TRUE', '-T', 'fields',
               '-E', 'occurrence=a', '-E', 'aggregator=|']
        for f in FIELDS:
            cmd += ['-e', f]
        theirs = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        expert = subprocess.run(['tshark', '-r', pcap, '-q', '-z', 'expert'], capture_output=True, text=True).stdout
    finally:
        shutil.rmtree(tmp)

    # svkit: one line per ASDU -> per frame
    frames = {}
    for line in ours.splitlines():
        c = line.split('\t')
        frames.setdefault(int(c[0]), []).append(c)
    errors = 0
    checked = 0

    def bad(frame, what, a, b):
        nonlocal errors
        errors += 1
        if errors <= 20:
            print('frame %d: %s: svkit %r, tshark %r' % (frame, what, a, b))

    tlines = [l for l in theirs.splitlines() if l.strip()]
    if len(tlines) != len(frames):
        print('FAIL: tshark decoded %d frames, svkit wrote %d' % (len(tlines), len(frames)))
        return 1
    for line in tlines:
        t = dict(zip(FIELDS, line.split('\t')))
        fn = int(t['frame.number'])
        asdus = frames[fn]
        a0 = asdus[0]
        def seq(name):
            v = t.get(name, '')
            return v.split('|') if v else []
        if int(t['sv.appid'], 16) != int(a0[1]): bad(fn, 'appid', a0[1], t['sv.appid'])
        if int(t['sv.length']) != int(a0[2]): bad(fn, 'length', a0[2], t['sv.length'])
        if (t['sv.reserve1.s_bit'] in ('1', 'True')) != (a0[3] == '1'): bad(fn, 'simulated', a0[3], t['sv.reserve1.s_bit'])
        if int(t['sv.noASDU']) != int(a0[4]): bad(fn, 'noASDU', a0[4], t['sv.noASDU'])
        cols = {'sv.svID': 5, 'sv.datSet': 6, 'sv.smpCnt': 7, 'sv.confRev': 8, 'sv.smpSynch': 9,
                'sv.smpRate': 10, 'sv.smpMod': 11, 'sv.refrTm': 12, 'sv.gmidentity': 13}
        for name, col in cols.items():
            mine = [a[col] for a in asdus if a[col] != '']
            other = seq(name)
            if name == 'sv.smpSynch':
                # Wireshark shows the one octet as a signed INTEGER (0xC8 -> -56): compare modulo 256
                other = [str(int(x) % 256) for x in other]
            elif name == 'sv.refrTm':
                if len(mine) != len(other) or any(abs(int(m) - refrtm_ns(o)) > 2 for m, o in zip(mine, other)):
                    bad(fn, name, mine, other)
                checked += len(mine)
                continue
            elif name == 'sv.gmidentity':
                other = ['%016x' % int(x, 16) for x in other]
            if mine != other:
                bad(fn, name, mine, other)
            checked += len(mine)
        vals = [v for a in asdus for v in a[14].split(',') if a[14]]
        quals = [str(int(q)) for a in asdus for q in a[15].split(',') if a[15]]
        if vals != seq('sv.meas_value'): bad(fn, 'values', vals[:4], seq('sv.meas_value')[:4])
        if quals != [str(int(x, 16)) for x in seq('sv.meas_quality')]: bad(fn, 'quality', quals[:4], seq('sv.meas_quality')[:4])
        checked += len(vals) + len(quals)
    if 'Malformed' in expert or 'Error' in expert:
        print('FAIL: tshark reports problems:\n' + expert)
        errors += 1
    nasdu = sum(len(a) for a in frames.values())
    print('%s: %d frames, %d ASDUs, %d field values compared, %d mismatches'
          % ('PASS' if not errors else 'FAIL', len(frames), nasdu, checked, errors))
    return 1 if errors else 0

sys.exit(main())
