// SPDX-License-Identifier: Apache-2.0
/* Readiness: sd_notify datagrams and the ready file (see sv_ready.h). */
#include "sv_ready.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static char ready_path[4096];
static bool ready_written, stopping, at_exit_set;
static volatile sig_atomic_t *stop_flag;

static void on_stop_signal(int sig)
{
	(void)sig;
	*stop_flag = 1;
}

int sv_ready_signals(volatile sig_atomic_t *stop)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	stop_flag = stop;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	signal(SIGXFSZ, SIG_IGN);
	return 0;
}

int sv_notify(const char *msg)
{
	const char *e = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len, msglen = strlen(msg);
	socklen_t salen;
	ssize_t n;
	int fd, err = 0;

	if (!e || !*e)
		return 0;
	len = strlen(e);
	if ((e[0] != '/' && e[0] != '@') || len >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, e, len);
	if (e[0] == '@')
		sa.sun_path[0] = '\0'; /* the abstract namespace: the name is the bytes after the NUL, unterminated */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (e[0] == '/'));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	n = sendto(fd, msg, msglen, MSG_NOSIGNAL, (const struct sockaddr *)&sa, salen);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != msglen)
		err = -EMSGSIZE;
	close(fd);
	return err;
}

static void ready_remove(void)
{
	if (ready_written && ready_path[0])
		unlink(ready_path);
	ready_written = false;
}

int sv_ready_init(const char *ready_file)
{
	ready_path[0] = '\0';
	ready_written = stopping = false;
	if (!ready_file)
		return 0;
	if (strlen(ready_file) >= sizeof(ready_path))
		return -ENAMETOOLONG;
	snprintf(ready_path, sizeof(ready_path), "%s", ready_file);
	if (!at_exit_set && !atexit(ready_remove))
		at_exit_set = true;
	return 0;
}

/* @text into the ready file: a temporary name beside it, then rename(2): a reader sees all or nothing. */
static int ready_write(const char *text)
{
	char tmp[sizeof(ready_path) + 32];
	size_t len = strlen(text);
	int fd, err = 0;

	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", ready_path, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, ready_path))
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	ready_written = true;
	return 0;
}

int sv_ready_set(const char *status)
{
	char msg[1024];
	int err = 0, e;

	snprintf(msg, sizeof(msg), "READY=1\nMAINPID=%ld\nSTATUS=%s\n", (long)getpid(), status ? status : "ready");
	/* the file first: whoever hears READY=1 finds it there */
	if (ready_path[0] && !stopping) {
		e = ready_write(msg);
		if (e)
			err = e;
	}
	e = sv_notify(msg);
	if (e)
		err = e;
	return err;
}

int sv_ready_status(const char *status)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), "STATUS=%s", status);
	return sv_notify(msg);
}

int sv_ready_stopping(const char *status)
{
	char msg[1024];

	if (stopping)
		return 0;
	stopping = true;
	ready_remove();
	snprintf(msg, sizeof(msg), "STOPPING=1%s%s", status ? "\nSTATUS=" : "", status ? status : "");
	return sv_notify(msg);
}
