/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion modes: how a measuring thread waits for its CQ.
 *
 *   poll    ibv_poll_cq in a loop
 *   event   ibv_req_notify_cq, poll once more, block in ibv_get_cq_event
 *   epoll   the same on a non-blocking channel, blocking in epoll_wait
 *   hybrid  poll for hybrid_us, then as "event"
 *
 * A waiter that blocks is woken at the end of a run by the flush
 * completions of its QPs, which the run moves to the error state.
 */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <rte_cycles.h>

#include <rte_common.h>

#include "rtp.h"

#define RTP_ACK_BATCH	64	/* CQ events acknowledged at a time */

int
rtp_waiter_init(struct rtp_waiter *w, struct rtp_side *s,
		enum rtp_wait_mode mode, uint32_t hybrid_us)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fl;

	memset(w, 0, sizeof(*w));
	w->mode = mode;
	w->hybrid_us = hybrid_us;
	w->cq = s->cq;
	w->ch = s->ch;
	w->epfd = -1;
	if (mode != RTP_WAIT_EPOLL)
		return 0;
	fl = fcntl(s->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(s->ch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (w->epfd < 0)
		return -errno;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, s->ch->fd, &ev) < 0) {
		int ret = -errno;

		close(w->epfd);
		w->epfd = -1;
		return ret;
	}
	return 0;
}

void
rtp_waiter_fini(struct rtp_waiter *w)
{
	if (w->unacked != 0)
		ibv_ack_cq_events(w->cq, (unsigned int)w->unacked);
	w->unacked = 0;
	if (w->epfd >= 0)
		close(w->epfd);
	w->epfd = -1;
}

static int
waiter_poll(struct rtp_waiter *w, struct ibv_wc *wc, int n)
{
	int got = ibv_poll_cq(w->cq, n, wc);

	w->polls++;
	if (got > 0)
		w->cqes += (uint64_t)got;
	return got < 0 ? -EIO : got;
}

/* Take one CQ event from the channel: blocking, or through epoll. */
static int
waiter_event(struct rtp_waiter *w, double timeout)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	if (w->mode == RTP_WAIT_EPOLL) {
		struct epoll_event ev;
		int ms = timeout > 0 ? (int)(timeout * 1000) : -1;

		for (;;) {
			int r = epoll_wait(w->epfd, &ev, 1, ms);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return -errno;
			if (r == 0)
				return -ETIMEDOUT;
			if (ibv_get_cq_event(w->ch, &cq, &cq_ctx) == 0)
				break;
			if (errno != EAGAIN)
				return -errno;
		}
	} else if (ibv_get_cq_event(w->ch, &cq, &cq_ctx) != 0) {
		return -errno;
	}
	w->events++;
	w->armed = false;
	if (++w->unacked >= RTP_ACK_BATCH) {
		ibv_ack_cq_events(w->cq, (unsigned int)w->unacked);
		w->unacked = 0;
	}
	return 0;
}

int
rtp_wait_cq(struct rtp_waiter *w, struct ibv_wc *wc, int n,
	    const volatile bool *abort, double timeout)
{
	uint64_t hz = rte_get_tsc_hz();
	uint64_t t0 = rte_get_tsc_cycles();
	uint64_t limit = timeout > 0 ? (uint64_t)(timeout * hz) : UINT64_MAX;
	uint64_t spin = w->mode == RTP_WAIT_HYBRID ?
		hz / 1000000 * w->hybrid_us : 0;
	int got;

	for (;;) {
		uint64_t dt;

		got = waiter_poll(w, wc, n);
		if (got != 0)
			return got;
		if (abort != NULL && *abort)
			return 0;
		dt = rte_get_tsc_cycles() - t0;
		if (dt > limit)
			return -ETIMEDOUT;
		if (w->mode == RTP_WAIT_POLL ||
		    (w->mode == RTP_WAIT_HYBRID && dt < spin))
			continue;
		/* Arm, then look again: a CQE that came before the arm
		 * raises no event. */
		if (!w->armed) {
			if (ibv_req_notify_cq(w->cq, 0) != 0)
				return -EIO;
			w->armed = true;
			continue;
		}
		got = waiter_event(w, timeout);
		if (got < 0)
			return got;
	}
}
