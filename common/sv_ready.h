/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Telling whoever started a long-running tool that it is ready, and that it stops: machines read this, not
 * the tool's human-readable stderr (whose wording may change).
 *
 *  - systemd (Type=notify): with NOTIFY_SOCKET set, READY=1, STATUS=... and STOPPING=1 datagrams to that
 *    AF_UNIX socket (a path, or '@' for the abstract namespace), the sd_notify(3) protocol written out
 *    here (docs/decisions.md: no libsystemd);
 *  - scripts, tests, the lab (--ready-file PATH): PATH appears, atomically (written under a temporary
 *    name in the same directory, then renamed), holding the same lines (READY=1, MAINPID=, STATUS=) once
 *    the tool is ready; it is removed when the tool stops (sv_ready_stopping) and, whatever the path out,
 *    at exit.
 *
 * "Ready" is each tool's own moment: svsub when its sockets are bound and the XDP program attached, svtrace
 * when its programs are attached, svpub when its socket is open and the first deadline armed.
 * Nothing here is on a per-packet path. Functions return 0 or -errno; the library prints nothing.
 */
#ifndef SV_READY_H
#define SV_READY_H

#include <signal.h>

/* How every long-running tool stops: SIGINT and SIGTERM set *@stop (no SA_RESTART: a wait in progress
 * returns EINTR and the loop sees it; the tool then flushes and says its final statistics); SIGXFSZ is
 * ignored (a file size limit is a full disk: EFBIG, counted, sv_record.h). 0 or -errno. */
int sv_ready_signals(volatile sig_atomic_t *stop);

/* Remembers @ready_file (NULL: none; the string must outlive the run) and arranges its removal at exit.
 * 0, or -ENAMETOOLONG. */
int sv_ready_init(const char *ready_file);

/* The tool is ready: the ready file (if any) created with the lines READY=1, MAINPID=, STATUS=@status, then
 * the same to NOTIFY_SOCKET (if set). 0, or the -errno of what failed (the other was still tried). */
int sv_ready_set(const char *status);

/* STATUS=@status to NOTIFY_SOCKET (systemctl status shows it); 0 when unset. 0 or -errno. */
int sv_ready_status(const char *status);

/* The tool stops: STOPPING=1 (and STATUS=@status, NULL: none) to NOTIFY_SOCKET, the ready file removed.
 * Called again, does nothing more. 0 or -errno. */
int sv_ready_stopping(const char *status);

/* Sends @msg ("READY=1\nSTATUS=...") to the socket NOTIFY_SOCKET names, as sd_notify(3) does. 0 also when
 * NOTIFY_SOCKET is unset; -EINVAL for an address that is neither a path nor '@'-abstract; else -errno. */
int sv_notify(const char *msg);

#endif /* SV_READY_H */
