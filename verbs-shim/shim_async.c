/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events.
 *
 * context->async_fd is an eventfd in semaphore mode, readable while events
 * are queued, so applications may poll it or set O_NONBLOCK on it as they
 * do with the kernel's.  ibv_get_async_event() reads it once per event and
 * takes the oldest event from a per-context queue.
 *
 * Nothing produces events yet: shim_async_push() is the hook for the code
 * that will turn the engine's reports (QP fatal, CQ overflow, port state)
 * into events.  Delivered events are counted on their object, and the
 * destroy calls wait until they have been acknowledged, as libibverbs
 * does.
 */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "shim.h"

int
shim_async_init(struct shim_context *ctx)
{
	struct shim_async *a = &ctx->async;

	a->fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (a->fd < 0)
		return -errno;
	pthread_mutex_init(&a->lock, NULL);
	a->head = 0;
	a->tail = 0;
	return 0;
}

void
shim_async_fini(struct shim_context *ctx)
{
	struct shim_async *a = &ctx->async;

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
	default:
		/* Port and device events; SRQ and WQ events cannot occur. */
		break;
	}
}

SHIM_EXPORT int
ibv_get_async_event(struct ibv_context *ibctx, struct ibv_async_event *event)
{
	struct shim_async *a = &shim_ctx(ibctx)->async;
	uint64_t count;
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
		pthread_mutex_unlock(&a->lock);
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
	default:
		break;
	}
}
