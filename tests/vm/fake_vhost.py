#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Stand-in for a QEMU process with vhost-net workers, for testing vm/hooks/qemu where there is
no vhost-net. Thread names are set with prctl(PR_SET_NAME) exactly as the kernel names them.

  fake_vhost.py threads N PIDFILE   this process plays QEMU: N threads named vhost-<own pid>
                                    (Linux >= 6.4 layout) and one thread named 'iothread'
  fake_vhost.py kthread QPID        a separate process named vhost-<QPID> (pre-6.4 layout, where
                                    the worker is a kernel thread outside QEMU)
Runs until SIGTERM/SIGINT. Writes PIDFILE only when every thread is named (the test waits on it)."""

import ctypes
import os
import signal
import sys
import threading

PR_SET_NAME = 15
libc = ctypes.CDLL(None, use_errno=True)


def set_name(name):
    if libc.prctl(PR_SET_NAME, name.encode(), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NAME)")


def main():
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if len(sys.argv) == 4 and sys.argv[1] == "threads":
        n = int(sys.argv[2], 10)
        ready = threading.Barrier(n + 2)

        def worker(name):
            set_name(name)
            ready.wait()
            stop.wait()

        names = ["vhost-%d" % os.getpid()] * n + ["iothread"]
        ts = [threading.Thread(target=worker, args=(nm,), daemon=True) for nm in names]
        for t in ts:
            t.start()
        ready.wait()
        tmp = sys.argv[3] + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % os.getpid())
        os.replace(tmp, sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "kthread":
        set_name("vhost-%d" % int(sys.argv[2], 10))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    while not stop.wait(0.5):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
