/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Out-of-band exchange of the two-process topology, over TCP as perftest
 * does: the client sends the run (mode, settings, its QPs), the server
 * answers with its QPs once they are ready to receive; at the end the
 * client says it is done and the server answers with what it counted.
 * Messages are fixed-size structures (both ends are this program); what
 * arrives is bounded before use (rtp_oob_hello_check).
 * Then both halves of a run over it: the client's hello and done (for
 * rtp_run), the server's serving of one client (rtp_serve_one).
 */

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- the client's half of a run ---------------------------------------- */

/*
 * The run to the server, its QPs back (run->cli.remote) once they are
 * ready to receive; run->cli.local filled.  0, or the run failed.  An
 * own_resources mode's client calls it with its local[0] filled.
 */
int
rtp_remote_hello(struct rtp_run *run)
{
	const int fd = run->oob;
	struct rtp_oob_hello h = {
		.magic = RTP_OOB_MAGIC,
		.size = run->set.size,
		.depth = run->set.depth,
		.qps = run->set.qps,
		.wait = run->set.wait,
		.hybrid_us = run->set.hybrid_us,
		.timeout = run->set.timeout,
	};
	struct rtp_oob_reply r;
	int ret;

	memset(h.mode, 0, sizeof(h.mode));
	snprintf(h.mode, sizeof(h.mode), "%s", run->mode->name);
	memcpy(h.ep, run->cli.local, sizeof(h.ep));
	ret = rtp_oob_send(fd, &h, sizeof(h));
	if (ret == 0)
		ret = rtp_oob_recv(fd, &r, sizeof(r), run->set.timeout);
	if (ret < 0)
		return rtp_fail(run, ret, "exchange with the server");
	r.msg[sizeof(r.msg) - 1] = '\0';
	if (r.magic != RTP_OOB_MAGIC)
		return rtp_fail(run, -EPROTO, "server reply");
	if (r.status < 0) {
		snprintf(run->err, sizeof(run->err), "server: %.100s", r.msg);
		return rtp_fail(run, r.status, "server");
	}
	memcpy(run->cli.remote, r.ep, sizeof(run->cli.remote));
	run->hello_ok = true;
	return 0;
}

/* The run is over: the server stops and says what it counted. */
int
rtp_remote_done(struct rtp_run *run, int status)
{
	struct rtp_oob_done d = { .magic = RTP_OOB_MAGIC, .status = status };
	int ret = rtp_oob_send(run->oob, &d, sizeof(d));

	if (ret == 0)
		ret = rtp_oob_recv(run->oob, &d, sizeof(d), run->set.timeout);
	if (ret == 0 && d.magic != RTP_OOB_MAGIC)
		ret = -EPROTO;
	if (ret < 0)
		return rtp_fail(run, ret, "end of run with the server");
	run->srv_fig = d.fig;
	run->received = d.fig.received;
	run->srv.cpu_ns = d.fig.cpu_ns;
	return d.status < 0 ? rtp_fail(run, d.status, "server") : 0;
}

/* ---- the server's half: one client served ------------------------------ */

/*
 * Serve one client (--server): the settings it sends, our QPs back, the
 * server thread of its mode until it says it is done (or quit is raised).
 */
int
rtp_serve_one(int fd, const volatile bool *quit)
{
	struct rtp_oob_reply r = { .magic = RTP_OOB_MAGIC };
	struct rtp_oob_hello h = { .magic = 0 };
	struct rtp_oob_done d;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct rtp_run *run = calloc(1, sizeof(*run));
	const struct rtp_mode *mode = NULL;
	struct rtp_settings set;
	pthread_t srv;
	bool srv_up = false;
	int ret = run == NULL ? -ENOMEM : 0;

	if (ret == 0)
		ret = rtp_oob_recv(fd, &h, sizeof(h), 10);
	if (ret == 0)
		ret = rtp_oob_hello_check(&h, &mode, &set, r.msg,
					  sizeof(r.msg));
	if (ret == 0) {
		/* this process's --cpus-server, not the client's */
		set.cpus_srv_set = rtp.params.set.cpus_srv_set;
		set.cpus_srv = rtp.params.set.cpus_srv;
		run->mode = mode;
		run->set = set;
		run->oob = -1;
		memcpy(run->srv.remote, h.ep, sizeof(run->srv.remote));
	}
	if (ret == 0 && mode->own_resources) {
		ret = mode->remote_open != NULL ? mode->remote_open(run) :
			rtp_fail(run, -ENOTSUP, mode->name);
	} else if (ret == 0) {
		ret = rtp_side_open(&run->srv, 0, &set, run);
		if (ret == 0)
			ret = rtp_side_connect(&run->srv, run);
		if (ret == 0)
			ret = rtp_waiter_init(&run->srv.w, &run->srv,
					      set.wait, set.hybrid_us);
	}
	if (ret == 0)
		rtp_counters_snap(&run->c0);
	if (ret == 0) {
		ret = rtp_server_start(run, &srv);
		srv_up = ret == 0;
	}
	if (run != NULL && r.msg[0] == '\0')
		snprintf(r.msg, sizeof(r.msg), "%s", run->err);
	r.status = ret;
	if (srv_up)
		memcpy(r.ep, run->srv.local, sizeof(r.ep));
	if (ret != -ECONNRESET && ret != -ETIMEDOUT)
		rtp_oob_send(fd, &r, sizeof(r));
	if (srv_up) {
		while (!*quit && poll(&p, 1, 200) == 0)
			;
		if (!*quit)
			rtp_oob_recv(fd, &d, sizeof(d), set.timeout);
		run->stop = true;
		rtp_side_flush(&run->srv);
		pthread_join(srv, NULL);
		rtp_counters_snap(&run->c1);
		if (rtp.params.counters)
			rtp_counters_line(stdout, "server", &run->c0,
					  &run->c1);
		d = (struct rtp_oob_done){
			.magic = RTP_OOB_MAGIC,
			.status = run->srv_err,
			.fig = rtp_figures_srv(run),
		};
		rtp_oob_send(fd, &d, sizeof(d));
		ret = run->srv_err;
	}
	printf("SERVED %s size %u qps %u received %" PRIu64 " %s%s\n",
	       mode != NULL ? mode->name : "-", h.size, h.qps,
	       run != NULL ? run->received : 0,
	       ret == 0 ? "ok" : "error: ", ret == 0 ? "" :
	       (r.msg[0] != '\0' ? r.msg : strerror(-ret)));
	fflush(stdout);
	if (run != NULL) {
		if (mode != NULL && mode->own_resources &&
		    mode->remote_close != NULL)
			mode->remote_close(run);
		rtp_side_close(&run->srv);
		free(run);
	}
	close(fd);
	return ret;
}
