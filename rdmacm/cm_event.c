/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Event channels and events of the RDMA CM (see cm.c): an event channel
 * is an EFD_SEMAPHORE eventfd and a queue, each event counted on its id
 * until acked; a synchronous id's calls wait for their own event
 * (cm_complete).  The exported rdma_create_event_channel,
 * rdma_destroy_event_channel, rdma_get_cm_event, rdma_ack_cm_event,
 * rdma_migrate_id and rdma_event_str.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cm.h"
#include "cm_proto.h"

/* ----------------------------------------------------------- events */

/* An event of id c, on channel ch (c's own, or its listener's). */
int
cm_event_push_on(struct cm_chan *ch, struct cm_id *c,
		 enum rdma_cm_event_type type, int status,
		 struct cm_id *listen, const void *priv, size_t priv_len)
{
	struct cm_event *e;
	const uint64_t one = 1;

	if (ch == NULL)
		return -ENOTCONN;	/* orphaned by its channel's destruction */
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		CM_LOG(ERR, "out of memory: event %s lost",
			 rdma_event_str(type));
		return -ENOMEM;
	}
	e->ev.id = &c->id;
	e->ev.listen_id = listen != NULL ? &listen->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	e->owner = c;
	if (priv != NULL && priv_len != 0) {
		priv_len = RTE_MIN(priv_len, sizeof(e->priv));
		memcpy(e->priv, priv, priv_len);
		e->ev.param.conn.private_data = e->priv;
		e->ev.param.conn.private_data_len = (uint8_t)RTE_MIN(priv_len,
								     255u);
	}
	c->events_out++;
	TAILQ_INSERT_TAIL(&ch->queue, e, link);
	if (write(ch->ch.fd, &one, sizeof(one)) != sizeof(one))
		CM_LOG(ERR, "cannot signal the event channel: %s",
			 strerror(errno));
	return 0;
}

int
cm_event_push(struct cm_id *c, enum rdma_cm_event_type type, int status,
	      struct cm_id *listen, const void *priv, size_t priv_len)
{
	return cm_event_push_on(c->chan, c, type, status, listen, priv,
				priv_len);
}

struct cm_event *
cm_event_last(struct cm_chan *ch)
{
	return TAILQ_LAST(&ch->queue, cm_event_list);
}

bool
cm_has_event(const struct cm_chan *ch, const struct cm_id *c)
{
	const struct cm_event *e;

	TAILQ_FOREACH(e, &ch->queue, link)
		if (e->owner == c)
			return true;
	return false;
}

/* Free an event nobody will ack, and let its id be destroyed. */
static void
cm_event_drop(struct cm_event *e)
{
	if (--e->owner->events_out == 0)
		pthread_cond_broadcast(&e->owner->acked);
	free(e);
}

/* Drop the events of id c queued on ch, not yet taken. */
void
cm_drop_queued_on(struct cm_chan *ch, struct cm_id *c)
{
	struct cm_event *e, *next;

	if (ch == NULL)
		return;
	for (e = TAILQ_FIRST(&ch->queue); e != NULL; e = next) {
		next = TAILQ_NEXT(e, link);
		if (e->owner == c || e->ev.id == &c->id) {
			TAILQ_REMOVE(&ch->queue, e, link);
			/* Its eventfd count stays: get_cm_event skips it. */
			cm_event_drop(e);
		}
	}
}

/*
 * A synchronous id's call waits for its event (librdmacm's ucma_complete):
 * the previous one acked, the new one left in id->event, its failure as
 * errno.  An O_NONBLOCK channel gives EAGAIN, and the caller (rsockets)
 * completes later.
 */
int
cm_complete(struct cm_id *c)
{
	struct rdma_cm_event *ev;

	if (!c->ucma.sync)
		return 0;
	if (c->id.event != NULL) {
		rdma_ack_cm_event(c->id.event);
		c->id.event = NULL;
	}
	if (rdma_get_cm_event(c->id.channel, &c->id.event) != 0)
		return -1;
	ev = c->id.event;
	if (ev->status == 0)
		return 0;
	errno = ev->event == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED :
		ev->status < 0 ? -ev->status : ev->status;
	return -1;
}

/* ------------------------------------------- exported: event channels */

CM_EXPORT struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct cm_chan *ch = calloc(1, sizeof(*ch));

	if (ch == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (ch->ch.fd < 0) {
		free(ch);
		return NULL;
	}
	TAILQ_INIT(&ch->queue);
	return &ch->ch;
}

CM_EXPORT void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cm_chan *ch = cm_chan(channel);
	struct cm_event *e;
	struct cm_id *c;

	if (ch == NULL)
		return;
	pthread_mutex_lock(&cm_lock);
	if (ch->nr_ids != 0) {
		/*
		 * librdmacm lets the channel go with ids still on it (qperf
		 * never destroys its listener).  Those ids are orphaned: their
		 * events are dropped, a listener answers no more requests.
		 */
		CM_LOG(DEBUG, "event channel destroyed with %u id(s) on it",
			 ch->nr_ids);
		TAILQ_FOREACH(c, &cm_ids, link) {
			if (c->chan != ch)
				continue;
			if (c->state == CM_S_LISTEN)
				c->state = CM_S_IDLE;
			c->chan = NULL;
		}
	}
	while ((e = TAILQ_FIRST(&ch->queue)) != NULL) {
		TAILQ_REMOVE(&ch->queue, e, link);
		cm_event_drop(e);
	}
	TAILQ_FOREACH(c, &cm_ids, link)
		if (c->req_chan == ch)
			c->req_chan = NULL;
	ch->closing = true;
	if (ch->readers != 0) {
		/* A thread still waits in rdma_get_cm_event(): it frees. */
		pthread_mutex_unlock(&cm_lock);
		return;
	}
	pthread_mutex_unlock(&cm_lock);
	close(ch->ch.fd);
	free(ch);
}

/*
 * The channel was destroyed under a thread that waits on it (rping's CM
 * thread, at the end of every run).  With librdmacm that thread's read()
 * of the closed rdma_cm file never returns, and the program ends around
 * it; returning an error instead makes such a thread report a failure
 * (rping exits 255).  So the last waiter frees the channel and waits for
 * ever.  Called with cm_lock held; never returns.
 */
static _Noreturn void
cm_chan_orphan_reader(struct cm_chan *ch)
{
	if (--ch->readers == 0) {
		close(ch->ch.fd);
		free(ch);
	}
	pthread_mutex_unlock(&cm_lock);
	for (;;)
		pause();
}

/* --------------------------------------------------- exported: events */

CM_EXPORT int
rdma_get_cm_event(struct rdma_event_channel *channel,
		  struct rdma_cm_event **event)
{
	struct cm_chan *ch = cm_chan(channel);
	struct cm_event *e;
	uint64_t v;

	if (ch == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	ch->readers++;
	pthread_mutex_unlock(&cm_lock);
	for (;;) {
		ssize_t n;
		int err;

		/* Blocking unless the application made the fd O_NONBLOCK. */
		n = read(ch->ch.fd, &v, sizeof(v));
		err = errno;
		pthread_mutex_lock(&cm_lock);
		if (ch->closing)
			cm_chan_orphan_reader(ch);
		if (n != sizeof(v)) {
			ch->readers--;
			pthread_mutex_unlock(&cm_lock);
			errno = err;	/* EAGAIN, EINTR */
			return -1;
		}
		e = TAILQ_FIRST(&ch->queue);
		if (e != NULL) {
			TAILQ_REMOVE(&ch->queue, e, link);
			ch->readers--;
			if (e->mc != NULL)
				cm_mc_taken(e);
		}
		pthread_mutex_unlock(&cm_lock);
		if (e != NULL)
			break;
		/* The event's id was destroyed before delivery: next. */
	}
	if (e->mc != NULL)
		cm_mc_deliver(e);	/* the QP joins the group */
	*event = &e->ev;
	return 0;
}

CM_EXPORT int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cm_event *e = (struct cm_event *)event;

	if (e == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (e->mc != NULL)
		cm_mc_acked(e);
	if (--e->owner->events_out == 0)
		pthread_cond_broadcast(&e->owner->acked);
	pthread_mutex_unlock(&cm_lock);
	free(e);
	return 0;
}

/*
 * To another channel, or, without one, to a channel of its own: the id
 * becomes synchronous (rsockets' accepted ids are).  A synchronous id's
 * own channel goes with the move.
 */
CM_EXPORT int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cm_id *c = cm_id(id);
	struct rdma_event_channel *own = NULL;
	struct cm_chan *old = NULL;

	if (c == NULL || (channel == NULL && c->ucma.sync)) {
		errno = EINVAL;
		return -1;
	}
	if (channel == NULL) {
		own = rdma_create_event_channel();
		if (own == NULL)
			return -1;
		channel = own;
	}
	if (c->ucma.sync && id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	pthread_mutex_lock(&cm_lock);
	while (c->events_out != 0)
		pthread_cond_wait(&c->acked, &cm_lock);
	if (c->chan != NULL) {
		c->chan->nr_ids--;
		if (c->ucma.sync)
			old = c->chan;
	}
	c->chan = cm_chan(channel);
	c->chan->nr_ids++;
	c->ucma.sync = own != NULL;
	id->channel = channel;
	pthread_mutex_unlock(&cm_lock);
	if (old != NULL)
		rdma_destroy_event_channel(&old->ch);
	return 0;
}

CM_EXPORT const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < RTE_DIM(names) && names[event] != NULL)
		return names[event];
	return "UNKNOWN EVENT";
}
