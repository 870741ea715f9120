/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Out-of-band exchange of the two-process topology, over TCP as perftest
 * does: the client sends the run (mode, settings, its QPs), the server
 * answers with its QPs once they are ready to receive; at the end the
 * client says it is done and the server answers with what it counted.
 * Messages are fixed-size structures (both ends are this program); what
 * arrives is bounded before use (rtp_oob_hello_check).
 */

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "rtp.h"

int
rtp_oob_listen(uint16_t port)
{
	struct sockaddr_in6 a = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	int one = 1, zero = 0;
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* IPv4 clients too (mapped addresses) */
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 4) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Accept one client, waiting up to 200 ms: the fd, 0 if none, -errno. */
int
rtp_oob_accept(int lfd)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int one = 1;
	int fd;

	if (poll(&p, 1, 200) <= 0)
		return 0;
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Connect to HOST:port, retrying while the server is not up yet. */
int
rtp_oob_connect(const char *host, uint16_t port, double timeout)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	};
	struct timespec pause = { .tv_nsec = 100000000 };
	struct addrinfo *res, *ai;
	char serv[8];
	int one = 1;
	int err = -ECONNREFUSED;

	snprintf(serv, sizeof(serv), "%u", port);
	for (double waited = 0; waited <= timeout; waited += 0.1) {
		int r = getaddrinfo(host, serv, &hints, &res);

		if (r != 0)
			return -EHOSTUNREACH;
		for (ai = res; ai != NULL; ai = ai->ai_next) {
			int fd = socket(ai->ai_family,
					ai->ai_socktype | SOCK_CLOEXEC, 0);

			if (fd < 0)
				continue;
			if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
				freeaddrinfo(res);
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
					   sizeof(one));
				return fd;
			}
			err = -errno;
			close(fd);
		}
		freeaddrinfo(res);
		nanosleep(&pause, NULL);
	}
	return err;
}

int
rtp_oob_send(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Read exactly len bytes; timeout in seconds (0: wait for ever).  0, or
 * -ETIMEDOUT, -ECONNRESET (the peer closed) or another -errno.
 */
int
rtp_oob_recv(int fd, void *buf, size_t len, double timeout)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint8_t *d = buf;

	while (len > 0) {
		ssize_t n;

		if (timeout > 0) {
			int r = poll(&p, 1, (int)(timeout * 1000));

			if (r == 0)
				return -ETIMEDOUT;
			if (r < 0 && errno != EINTR)
				return -errno;
			if (r < 0)
				continue;
		}
		n = recv(fd, d, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		d += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A hello from the network: every field bounded, the mode runnable. */
int
rtp_oob_hello_check(struct rtp_oob_hello *h, const struct rtp_mode **mode,
		    struct rtp_settings *set, char *err, size_t len)
{
	h->mode[sizeof(h->mode) - 1] = '\0';
	if (h->magic != RTP_OOB_MAGIC) {
		snprintf(err, len, "not a %s client (bad magic)", RTP_NAME);
		return -EPROTO;
	}
	*mode = rtp_mode_find(h->mode);
	if (*mode == NULL || (*mode)->unsupported != NULL) {
		snprintf(err, len, "mode '%s' cannot run here", h->mode);
		return -ENOTSUP;
	}
	if (h->size < 1 || h->size > RTP_MAX_SIZE || h->depth < 1 ||
	    h->depth > RTP_MAX_DEPTH || h->qps < 1 || h->qps > RTP_MAX_QPS ||
	    h->wait >= RTP_WAIT_MAX || h->hybrid_us > 1000000 ||
	    !(h->timeout >= 0.01 && h->timeout <= 3600)) {
		snprintf(err, len, "settings out of range");
		return -EINVAL;
	}
	rtp_settings_default(set);
	set->size = h->size;
	set->depth = h->depth;
	set->qps = h->qps;
	set->wait = (enum rtp_wait_mode)h->wait;
	set->hybrid_us = h->hybrid_us;
	set->timeout = h->timeout;
	return 0;
}
