/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events.
 *
 * context->async_fd is an eventfd in semaphore mode (attached to a host: a
 * socket the host made, 8 bytes per event, rp_attach.h), readable while
 * events are queued for the context, so applications may poll it or set
 * O_NONBLOCK on it as they do with the kernel's.  ibv_get_async_event()
 * reads it once per event (8 bytes).
 *
 * The engine reports events in the device's event ring (struct
 * rp_async_ctl, rp_abi.h), one ring for every context open on the device:
 * each context registers its eventfd with the engine (RP_CTRL_ASYNC_REG),
 * which signals every registered fd once per event, and consumes the ring
 * with a private index that starts where its registration found the ring.
 * The ring's shared `cons` is the minimum of those indexes, kept by the
 * device's list below, so the engine reuses a slot only once every
 * context has taken it.  An event naming a QP or CQ of another context is
 * skipped (its fd count is consumed with it); port events go to all.
 *
 * shim_async_push() queues an event the shim itself raises; those are
 * delivered before the ring's.  Delivered events are counted on their
 * object, and the destroy calls wait until they have been acknowledged, as
 * libibverbs does.
 */

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "shim.h"

/* The contexts open on each device: who still needs which ring entry. */
static struct {
	pthread_mutex_t lock;
	struct shim_context *head;
} shim_async_devs[RP_MAX_PORTS] = {
	[0 ... RP_MAX_PORTS - 1] = { .lock = PTHREAD_MUTEX_INITIALIZER },
};

/*
 * Store the ring's cons: the oldest entry a context of the device has not
 * taken, or prod when none listens (the engine pushes nothing then).
 * Called with the device's list lock held, so the value only grows.
 */
static void
shim_async_cons_update(unsigned int dev, struct rp_async_ctl *ring)
{
	/* A1: pairs with R0 in rp_async_push(): a consistent prod. */
	uint32_t prod = rp_load_acquire(&ring->prod);
	uint32_t cons = prod;

	for (struct shim_context *c = shim_async_devs[dev].head; c != NULL;
	     c = c->async.next) {
		uint32_t mine = rp_load_relaxed(&c->async.cons);

		if (prod - mine > prod - cons)
			cons = mine;
	}
	/* R1: pairs with A0 in rp_async_push(): our copies of the entries
	 * before cons are done, the engine may reuse their slots. */
	rp_store_release(&ring->cons, cons);
}

int
shim_async_init(struct shim_context *ctx)
{
	struct shim_async *a = &ctx->async;
	struct rp_ctrl_slot s = { .op = RP_CTRL_ASYNC_REG };
	int ret;

	if (ctx->dev >= RP_MAX_PORTS)
		return -ENODEV;
	a->fd = -1;
	if (!shim_engine->engine_fds) {
		a->fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
		if (a->fd < 0)
			return -errno;
	}
	pthread_mutex_init(&a->lock, NULL);
	a->head = 0;
	a->tail = 0;
	a->next = NULL;

	pthread_mutex_lock(&shim_async_devs[ctx->dev].lock);
	s.u.async.fd = a->fd;
	ret = shim_ctrl(ctx, &s);
	if (ret == 0 && shim_engine->engine_fds) {
		/* The host made it: its socket, named by the id. */
		a->fd = s.u.async.fd;
		a->id = s.u.async.id;
		if (a->fd < 0) {
			s.op = RP_CTRL_ASYNC_UNREG;
			shim_ctrl(ctx, &s);
			ret = -EIO;
		}
	}
	if (ret == 0) {
		/* Events from here on are signalled on our fd. */
		rp_store_relaxed(&a->cons, s.u.async.prod);
		a->next = shim_async_devs[ctx->dev].head;
		shim_async_devs[ctx->dev].head = ctx;
	}
	pthread_mutex_unlock(&shim_async_devs[ctx->dev].lock);
	if (ret < 0) {
		SHIM_LOG(ERR, "%s: cannot register for asynchronous events: %s",
			 ctx->ctl->name, strerror(-ret));
		pthread_mutex_destroy(&a->lock);
		if (a->fd >= 0)
			close(a->fd);
		return ret;
	}
	return 0;
}

void
shim_async_fini(struct shim_context *ctx)
{
	struct shim_async *a = &ctx->async;
	struct rp_ctrl_slot s = { .op = RP_CTRL_ASYNC_UNREG };
	struct shim_context **pp;

	pthread_mutex_lock(&shim_async_devs[ctx->dev].lock);
	/* The engine stops writing the fd before we close it. */
	s.u.async.fd = a->fd;
	s.u.async.id = a->id;
	if (shim_ctrl(ctx, &s) < 0)
		SHIM_LOG(WARNING, "%s: asynchronous events: unregister failed",
			 ctx->ctl->name);
	for (pp = &shim_async_devs[ctx->dev].head; *pp != NULL;
	     pp = &(*pp)->async.next) {
		if (*pp == ctx) {
			*pp = a->next;
			break;
		}
	}
	shim_async_cons_update(ctx->dev, ctx->async_ring);
	pthread_mutex_unlock(&shim_async_devs[ctx->dev].lock);
	close(a->fd);
	pthread_mutex_destroy(&a->lock);
}

/*
 * Queue an event for the application.  `ev->element` must name an object
 * of this context that stays alive until the event is acknowledged.
 * Events beyond SHIM_ASYNC_EVENTS pending are dropped (and logged).
 */
void
shim_async_push(struct shim_context *ctx, const struct ibv_async_event *ev)
{
	struct shim_async *a = &ctx->async;
	const uint64_t one = 1;

	pthread_mutex_lock(&a->lock);
	if (a->tail - a->head >= SHIM_ASYNC_EVENTS) {
		pthread_mutex_unlock(&a->lock);
		SHIM_LOG(ERR, "%s: asynchronous event %s dropped: queue full",
			 ctx->ctl->name, ibv_event_type_str(ev->event_type));
		return;
	}
	a->ev[a->tail % SHIM_ASYNC_EVENTS] = *ev;
	a->tail++;
	pthread_mutex_unlock(&a->lock);

	/* Attached, the fd is a socket the host signals: a write would go
	 * to the host, not to our readers (no caller yet raises one). */
	if (shim_engine->engine_fds) {
		SHIM_LOG(ERR, "%s: asynchronous event %s queued unsignalled: attached to a host",
			 ctx->ctl->name, ibv_event_type_str(ev->event_type));
		return;
	}
	if (write(a->fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		SHIM_LOG(ERR, "%s: cannot signal an asynchronous event",
			 ctx->ctl->name);
}

/* Count a delivery on the object the event names (under its mutex). */
static void
shim_async_delivered(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct shim_cq *cq = shim_cq(ev->element.cq);

		pthread_mutex_lock(&cq->ibv.mutex);
		cq->async_delivered++;
		pthread_mutex_unlock(&cq->ibv.mutex);
		break;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct shim_qp *qp = shim_qp(ev->element.qp);

		pthread_mutex_lock(&qp->qpx.qp_base.mutex);
		qp->async_delivered++;
		pthread_mutex_unlock(&qp->qpx.qp_base.mutex);
		break;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct shim_srq *srq = shim_srq(ev->element.srq);

		pthread_mutex_lock(&srq->ibv.mutex);
		srq->async_delivered++;
		pthread_mutex_unlock(&srq->ibv.mutex);
		break;
	}
	default:
		/* Port and device events; WQ events cannot occur. */
		break;
	}
}

/*
 * Turn a ring entry into an event of this context: find the object it
 * names and count the delivery on it, under the table lock that destroy
 * takes to remove the object before it waits (so an object being
 * destroyed gets no new delivery).  False: not for this context.
 */
static bool
shim_async_resolve(struct shim_context *ctx, const struct rp_async_ev *rev,
		   struct ibv_async_event *event)
{
	memset(event, 0, sizeof(*event));
	event->event_type = (enum ibv_event_type)rev->type;
	switch (rev->type) {
	case IBV_EVENT_CQ_ERR: {
		struct shim_cq *cq;

		pthread_mutex_lock(&ctx->cq_lock);
		cq = shim_cq_lookup(ctx, rev->num);
		if (cq != NULL) {
			pthread_mutex_lock(&cq->ibv.mutex);
			cq->async_delivered++;
			pthread_mutex_unlock(&cq->ibv.mutex);
			event->element.cq = &cq->ibv;
		}
		pthread_mutex_unlock(&ctx->cq_lock);
		return cq != NULL;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct shim_qp *qp;

		pthread_mutex_lock(&ctx->qp_lock);
		qp = shim_qp_lookup(ctx, rev->num);
		if (qp != NULL) {
			pthread_mutex_lock(&qp->qpx.qp_base.mutex);
			qp->async_delivered++;
			pthread_mutex_unlock(&qp->qpx.qp_base.mutex);
			event->element.qp = &qp->qpx.qp_base;
		}
		pthread_mutex_unlock(&ctx->qp_lock);
		return qp != NULL;
	}
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
		/* Every context of the device hears of its port. */
		if (rev->num != SHIM_PORT)
			return false;
		event->element.port_num = (int)rev->num;
		return true;
	case IBV_EVENT_DEVICE_FATAL:
		return true;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct shim_srq *srq;

		pthread_mutex_lock(&ctx->srq_lock);
		srq = shim_srq_lookup(ctx, rev->num);
		if (srq != NULL) {
			pthread_mutex_lock(&srq->ibv.mutex);
			srq->async_delivered++;
			pthread_mutex_unlock(&srq->ibv.mutex);
			event->element.srq = &srq->ibv;
		}
		pthread_mutex_unlock(&ctx->srq_lock);
		return srq != NULL;
	}
	default:
		SHIM_LOG(WARNING, "%s: unknown asynchronous event %u (0x%x) skipped",
			 ctx->ctl->name, rev->type, rev->num);
		return false;
	}
}

SHIM_EXPORT int
ibv_get_async_event(struct ibv_context *ibctx, struct ibv_async_event *event)
{
	struct shim_context *ctx = shim_ctx(ibctx);
	struct shim_async *a = &ctx->async;
	struct rp_async_ctl *ring = ctx->async_ring;
	struct rp_async_ev rev;
	uint64_t count;
	uint32_t prod;
	ssize_t n;

	for (;;) {
		/* Blocks, or EAGAIN under O_NONBLOCK, or EINTR: as is. */
		n = read(a->fd, &count, sizeof(count));
		if (n != (ssize_t)sizeof(count)) {
			if (n >= 0)
				errno = EIO;
			return -1;
		}
		pthread_mutex_lock(&a->lock);
		if (a->head != a->tail) {
			*event = a->ev[a->head % SHIM_ASYNC_EVENTS];
			a->head++;
			pthread_mutex_unlock(&a->lock);
			shim_async_delivered(event);
			return 0;
		}
		/* A0: pairs with R0 in rp_async_push(): the engine published
		 * the entry before it wrote the count we just took. */
		prod = rp_load_acquire(&ring->prod);
		if (prod == a->cons || prod - a->cons > RP_ASYNC_EVENTS) {
			/* Never trust the peer's index: start over at prod. */
			if (prod != a->cons)
				SHIM_LOG(ERR, "%s: async ring index %u, ours %u: resynchronised",
					 ctx->ctl->name, prod, a->cons);
			rp_store_relaxed(&a->cons, prod);
			pthread_mutex_unlock(&a->lock);
			continue;
		}
		rev = ring->ev[a->cons % RP_ASYNC_EVENTS];
		rp_store_relaxed(&a->cons, a->cons + 1);
		pthread_mutex_unlock(&a->lock);

		pthread_mutex_lock(&shim_async_devs[ctx->dev].lock);
		shim_async_cons_update(ctx->dev, ring);
		pthread_mutex_unlock(&shim_async_devs[ctx->dev].lock);

		if (shim_async_resolve(ctx, &rev, event))
			return 0;
	}
}

SHIM_EXPORT void
ibv_ack_async_event(struct ibv_async_event *event)
{
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR: {
		struct ibv_cq *cq = event->element.cq;

		pthread_mutex_lock(&cq->mutex);
		cq->async_events_completed++;
		pthread_cond_broadcast(&cq->cond);
		pthread_mutex_unlock(&cq->mutex);
		break;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		struct ibv_qp *qp = event->element.qp;

		pthread_mutex_lock(&qp->mutex);
		qp->events_completed++;
		pthread_cond_broadcast(&qp->cond);
		pthread_mutex_unlock(&qp->mutex);
		break;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		struct ibv_srq *srq = event->element.srq;

		pthread_mutex_lock(&srq->mutex);
		srq->events_completed++;
		pthread_cond_broadcast(&srq->cond);
		pthread_mutex_unlock(&srq->mutex);
		break;
	}
	default:
		break;
	}
}
