/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion channels and CQ notification (spec/completion-channel.md).
 *
 * A channel is an eventfd in semaphore mode plus an event ring in the
 * device region (struct rp_chan_ctl).  When the engine fires an armed CQ it
 * pushes the CQN into the ring (release) and then writes 1 to the eventfd,
 * so channel->fd is readable exactly while events are queued and poll(),
 * select() and epoll work on it (CC-5).  ibv_get_cq_event() reads the fd
 * once per event, honouring O_NONBLOCK, and pops one CQN.  Attached to a
 * host, the fd is the host's (a socket it made, rp_attach.h) and an event
 * is 8 bytes on it rather than a count of 1: read the same way.
 *
 * Arming is a store into the CQ's arm word, no system call.  The shim
 * stores the arm then the application polls; the engine publishes a CQE
 * then loads the arm: with a full fence on both sides, either the poll sees
 * the CQE or the engine sees the arm (CC-4, no lost wake-up).
 *
 * Per CQ, the shim counts the events it delivered; ibv_destroy_cq() waits
 * until the application has acknowledged all of them (CC-8).  Events queued
 * for it but not yet read are removed from the ring, with their eventfd
 * counts, as the kernel unlinks them: the fd stays readable exactly while
 * events are queued.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim.h"

/* ----------------------------------------------------------------- arm */

int
shim_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct shim_cq *cq = shim_cq(ibcq);
	uint32_t want = solicited_only ? RP_CQ_ARM_SOL : RP_CQ_ARM_NEXT;
	uint32_t old;
	uint32_t new;

	/*
	 * A new sequence number, and the flags or-ed in: arming for any
	 * completion after solicited-only widens the arm (CC-3), the
	 * reverse keeps "any".  The engine claims the word with a
	 * compare-exchange, so this must be one too.
	 */
	old = rp_load_relaxed(&cq->ctl->arm);
	do {
		new = ((old & ~RP_CQ_ARM_MASK) + RP_CQ_ARM_SEQ_INC) |
		      (old & RP_CQ_ARM_MASK) | want;
	} while (!rp_cas(&cq->ctl->arm, &old, new));

	/*
	 * Dekker with the engine's publish: our arm store before the
	 * application's next load of a CQE owner word; peer: the engine's
	 * full fence between its owner store and its load of arm.
	 */
	rp_fence_seq_cst();
	/* A program that arms is about to wait, not poll: an inline
	 * engine's lcore takes the passes back now. */
	if (shim_engine->unassist != NULL)
		shim_engine->unassist(cq->ctx->dev);
	return 0;
}

/* ------------------------------------------------------------- channel */

SHIM_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *ibctx)
{
	struct shim_context *ctx = shim_ctx(ibctx);
	struct rp_ctrl_slot s = { .op = RP_CTRL_CHAN_CREATE };
	struct shim_chan *ch;
	int ret;

	ch = calloc(1, sizeof(*ch));
	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	/* Semaphore mode: one read per event keeps POLLIN while any is left.
	 * Attached, the host makes the fd (a socket: 8 bytes per event). */
	ch->ibv.fd = -1;
	if (!shim_engine->engine_fds) {
		ch->ibv.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
		if (ch->ibv.fd < 0) {
			ret = -errno;
			goto err_free;
		}
	}

	s.u.chan.fd = ch->ibv.fd;
	ret = shim_ctrl(ctx, &s);
	if (ret < 0)
		goto err_close;
	if (shim_engine->engine_fds)
		ch->ibv.fd = s.u.chan.fd;
	if (ch->ibv.fd < 0) {
		ret = -EIO;
		goto err_destroy;
	}
	ch->ctl = shim_region_ptr(ctx, s.u.chan.off, sizeof(*ch->ctl));
	if (ch->ctl == NULL) {
		SHIM_LOG(ERR, "channel %u: ring at 0x%" PRIx64 " is outside the region",
			 s.u.chan.chn, s.u.chan.off);
		ret = -EIO;
		goto err_destroy;
	}
	ch->ctx = ctx;
	ch->chn = s.u.chan.chn;
	ch->cons = rp_load_relaxed(&ch->ctl->cons);
	pthread_mutex_init(&ch->lock, NULL);
	ch->ibv.context = ibctx;
	ch->ibv.refcnt = 0;
	return &ch->ibv;

err_destroy:
	s.op = RP_CTRL_CHAN_DESTROY;
	shim_ctrl(ctx, &s);
err_close:
	if (ch->ibv.fd >= 0)
		close(ch->ibv.fd);
err_free:
	free(ch);
	errno = -ret;
	return NULL;
}

SHIM_EXPORT int
ibv_destroy_comp_channel(struct ibv_comp_channel *ibch)
{
	struct shim_chan *ch = shim_chan(ibch);
	struct ibv_context *ibctx = ibch->context;
	struct rp_ctrl_slot s = { .op = RP_CTRL_CHAN_DESTROY };
	int ret;

	pthread_mutex_lock(&ibctx->mutex);
	if (ibch->refcnt != 0) {
		pthread_mutex_unlock(&ibctx->mutex);
		return EBUSY;
	}
	s.u.chan.chn = ch->chn;
	s.u.chan.fd = ibch->fd;
	ret = shim_ctrl(ch->ctx, &s);
	pthread_mutex_unlock(&ibctx->mutex);
	if (ret < 0)
		return -ret;

	/* The engine no longer writes the fd: close it only now. */
	close(ibch->fd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	return 0;
}

/*
 * Take the oldest CQN from the event ring.
 * @return 0, or -EAGAIN when the ring is empty
 */
static int
shim_chan_pop(struct shim_chan *ch, uint32_t *cqn)
{
	uint32_t prod;
	uint32_t cons;

	pthread_mutex_lock(&ch->lock);
	cons = ch->cons;
	/* acquire: pairs with the engine's release of prod after ev[] */
	prod = rp_load_acquire(&ch->ctl->prod);
	if (prod == cons) {
		pthread_mutex_unlock(&ch->lock);
		return -EAGAIN;
	}
	if (prod - cons > RP_CHAN_EVENTS) {
		/* Never trust the peer's index: keep the newest entries. */
		SHIM_LOG(ERR, "channel %u: producer %u is %u ahead of %u",
			 ch->chn, prod, prod - cons, cons);
		cons = prod - RP_CHAN_EVENTS;
	}
	*cqn = rp_load_relaxed(&ch->ctl->ev[cons % RP_CHAN_EVENTS]);
	ch->cons = cons + 1;
	/* release: ev[] is read before the engine may reuse the slot */
	rp_store_release(&ch->ctl->cons, cons + 1);
	pthread_mutex_unlock(&ch->lock);
	return 0;
}

/*
 * The live CQ a CQN names on this channel, its delivered count raised;
 * NULL if it was destroyed with events pending (they are discarded).
 * Under cq_lock, so ibv_destroy_cq() removing the CQ from the table
 * orders every delivery before its wait for acknowledgements.
 */
static struct shim_cq *
shim_chan_deliver(struct shim_chan *ch, uint32_t cqn)
{
	struct shim_context *ctx = ch->ctx;
	struct shim_cq *cq;

	pthread_mutex_lock(&ctx->cq_lock);
	cq = shim_cq_lookup(ctx, cqn);
	if (cq != NULL && cq->chan == ch) {
		pthread_mutex_lock(&cq->ibv.mutex);
		cq->comp_delivered++;
		pthread_mutex_unlock(&cq->ibv.mutex);
	} else {
		cq = NULL;
	}
	pthread_mutex_unlock(&ctx->cq_lock);
	return cq;
}

SHIM_EXPORT int
ibv_get_cq_event(struct ibv_comp_channel *ibch, struct ibv_cq **cq_out,
		 void **cq_context)
{
	struct shim_chan *ch = shim_chan(ibch);
	struct shim_cq *cq;
	uint64_t count;
	uint32_t cqn;
	ssize_t n;

	for (;;) {
		/* Blocks, or EAGAIN under O_NONBLOCK, or EINTR: as is. */
		n = read(ibch->fd, &count, sizeof(count));
		if (n != (ssize_t)sizeof(count)) {
			if (n >= 0)
				errno = EIO;
			return -1;
		}
		if (shim_chan_pop(ch, &cqn) < 0) {
			SHIM_LOG(DEBUG, "channel %u: signalled with an empty ring",
				 ch->chn);
			continue;
		}
		cq = shim_chan_deliver(ch, cqn);
		if (cq == NULL) {
			SHIM_CQ_LOG(DEBUG, cqn, "event for a destroyed CQ dropped");
			continue;
		}
		*cq_out = &cq->ibv;
		*cq_context = cq->ibv.cq_context;
		return 0;
	}
}

SHIM_EXPORT void
ibv_ack_cq_events(struct ibv_cq *ibcq, unsigned int nevents)
{
	pthread_mutex_lock(&ibcq->mutex);
	ibcq->comp_events_completed += nevents;
	pthread_cond_broadcast(&ibcq->cond);
	pthread_mutex_unlock(&ibcq->mutex);
}

/*
 * Take one count from the channel's eventfd without ever blocking, whatever
 * O_NONBLOCK says (RWF_NOWAIT: eventfd honours it since Linux 5.12).
 * @return true if a count was taken
 */
static bool
shim_chan_take_count(struct shim_chan *ch)
{
	uint64_t count;
	struct iovec iov = { .iov_base = &count, .iov_len = sizeof(count) };

	/* Bounded: the engine writes the fd just after it publishes prod. */
	for (int tries = 0; tries < 1000; tries++) {
		ssize_t n = preadv2(ch->ibv.fd, &iov, 1, -1, RWF_NOWAIT);

		if (n == (ssize_t)sizeof(count))
			return true;
		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return false;
		sched_yield();
	}
	return false;
}

/*
 * Remove the events queued for a CQ being destroyed, as the kernel's
 * ib_uverbs_release_ucq() does (CC-8): the others keep their order, and
 * the eventfd loses one count per event removed, so the fd stays readable
 * exactly while events are queued.  Slots between cons and prod belong to
 * the consumer: the engine writes ev[] only at prod.  A count that cannot
 * be taken (a concurrent reader took it) is harmless: ibv_get_cq_event()
 * skips a count that finds the ring empty.
 */
static void
shim_chan_purge(struct shim_chan *ch, struct shim_cq *cq)
{
	uint32_t cqn = cq->cqn;
	uint32_t prod, cons, w, removed = 0;
	uint32_t arm;

	/* Disarm first, so the engine fires no new event for this CQ. */
	arm = rp_load_relaxed(&cq->ctl->arm);
	while ((arm & RP_CQ_ARM_MASK) != 0 &&
	       !rp_cas(&cq->ctl->arm, &arm, arm & ~RP_CQ_ARM_MASK))
		;
	rp_fence_seq_cst();

	pthread_mutex_lock(&ch->lock);
	cons = ch->cons;
	/* acquire: pairs with the engine's release of prod after ev[] */
	prod = rp_load_acquire(&ch->ctl->prod);
	if (prod - cons > RP_CHAN_EVENTS) {
		pthread_mutex_unlock(&ch->lock);
		return;		/* shim_chan_pop() reports and repairs it */
	}
	/* Compact towards prod, newest first, keeping the order. */
	w = prod;
	for (uint32_t i = prod; i != cons; i--) {
		uint32_t v = rp_load_relaxed(&ch->ctl->ev[(i - 1) % RP_CHAN_EVENTS]);

		if (v == cqn) {
			removed++;
			continue;
		}
		w--;
		rp_store_relaxed(&ch->ctl->ev[w % RP_CHAN_EVENTS], v);
	}
	if (removed != 0) {
		ch->cons = cons + removed;
		/* release: the slots are freed after they were read */
		rp_store_release(&ch->ctl->cons, ch->cons);
	}
	pthread_mutex_unlock(&ch->lock);
	while (removed-- != 0)
		if (!shim_chan_take_count(ch))
			SHIM_CQ_LOG(DEBUG, cqn, "a dropped event's count stays "
				    "on the channel");
}

/*
 * CC-8: drop the events queued, not yet read, for a CQ being destroyed
 * (ibv_destroy_cq() has removed it from the table: no more are delivered),
 * then wait until every event delivered for it has been acked.
 */
void
shim_cq_events_wait(struct shim_cq *cq)
{
	if (cq->chan != NULL)
		shim_chan_purge(cq->chan, cq);
	pthread_mutex_lock(&cq->ibv.mutex);
	while (cq->ibv.comp_events_completed != cq->comp_delivered ||
	       cq->ibv.async_events_completed != cq->async_delivered)
		pthread_cond_wait(&cq->ibv.cond, &cq->ibv.mutex);
	pthread_mutex_unlock(&cq->ibv.mutex);
}
