/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librdmacm's API (see cm.h) on the IB CM protocol (cm_proto.c): ids,
 * their lookups and the exported rdma_* functions that create, connect
 * and destroy them.  Their addresses and ports are in cm_addr.c, event
 * channels and events in cm_event.c, an id's QP in cm_qp.c.
 *
 * Addresses are AF_INET or AF_INET6; inside they are GIDs, as RoCEv2
 * devices hold them (IPv4 as ::ffff:a.b.c.d), and an id uses the GID of
 * its own address: index 0 for IPv4, 1 link-local, 2.. the configured
 * IPv6 ones.  Active side: rdma_resolve_addr and rdma_resolve_route pick
 * the rocepmd device on the destination's subnet and fill the route from
 * its GID table; rdma_connect sends a REQ whose private data starts with
 * RDMA CM's IP header (version 4 or 6), a REP moves the QP
 * to RTR and RTS and is answered by an RTU.  Passive side: a REQ for a
 * listening port becomes a new id and a CONNECT_REQUEST event;
 * rdma_accept moves the QP and sends the REP, the RTU brings ESTABLISHED.
 * rdma_disconnect sends a DREQ, answered by a DREP; both sides get
 * DISCONNECTED.  UD ids resolve the peer's QPN and Q_Key by SIDR.
 * Requests that expect an answer are retransmitted every CM_RETRY_MS up
 * to CM_MAX_RETRIES times, then fail with an event.
 */

#include <errno.h>
#include <stdlib.h>

#include "cm.h"
#include "cm_proto.h"
#include "rocepmd_verbs.h"

struct cm_id_list cm_ids = TAILQ_HEAD_INITIALIZER(cm_ids);

/*
 * Connections that ended here, by the peer's (communication ID, CA GUID):
 * a late duplicate of their REQ must not start a new one.  IBTA's
 * timewait state, kept as a ring of the most recent ones.
 */
#define CM_STALE	256u
static struct {
	uint32_t remote_id;
	uint64_t guid;
} cm_stale[CM_STALE];
static unsigned int cm_stale_next;

static void
cm_stale_add(uint32_t remote_id, uint64_t guid)
{
	cm_stale[cm_stale_next].remote_id = remote_id;
	cm_stale[cm_stale_next].guid = guid;
	cm_stale_next = (cm_stale_next + 1) % CM_STALE;
}

bool
cm_stale_has(uint32_t remote_id, uint64_t guid)
{
	for (unsigned int i = 0; i < CM_STALE; i++)
		if (cm_stale[i].remote_id == remote_id &&
		    cm_stale[i].guid == guid && guid != 0)
			return true;
	return false;
}

struct cm_id *
cm_id(struct rdma_cm_id *id)
{
	return (struct cm_id *)id;
}

struct cm_chan *
cm_chan(struct rdma_event_channel *ch)
{
	return (struct cm_chan *)ch;
}

/* ------------------------------------------------------ id lookups */

struct cm_id *
cm_find_local(uint32_t local_id)
{
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm_ids, link)
		if (c->local_id == local_id && c->state != CM_S_IDLE &&
		    c->state != CM_S_LISTEN)
			return c;
	return NULL;
}

struct cm_id *
cm_find_remote(uint32_t remote_id, uint64_t guid)
{
	struct cm_id *c;

	TAILQ_FOREACH(c, &cm_ids, link)
		if (c->remote_id == remote_id && c->remote_guid == guid &&
		    c->state >= CM_S_REQ_RCVD)
			return c;
	return NULL;
}

/* ---------------------------------------------------- exported: ids */

struct cm_id *
cm_id_new(struct cm_chan *ch, void *context, enum rdma_port_space ps,
	  enum ibv_qp_type qp_type)
{
	struct cm_id *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->id.channel = &ch->ch;
	c->id.context = context;
	c->id.ps = ps;
	c->id.qp_type = qp_type;
	c->chan = ch;
	c->state = CM_S_IDLE;
	c->path.mtu = IBV_MTU_1024;
	pthread_cond_init(&c->acked, NULL);
	ch->nr_ids++;
	TAILQ_INSERT_TAIL(&cm_ids, c, link);
	return c;
}

/*
 * An id on channel, or, without one, a synchronous id on a channel of its
 * own (librdmacm's rdma_create_id2): its calls wait for their own event.
 */
int
cm_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
	     void *context, enum rdma_port_space ps, enum ibv_qp_type qpt)
{
	struct rdma_event_channel *own = NULL;
	struct cm_id *c;
	int ret;

	if (id == NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((ps != RDMA_PS_TCP && ps != RDMA_PS_UDP) ||
	    (qpt != IBV_QPT_RC && qpt != IBV_QPT_UC && qpt != IBV_QPT_UD)) {
		/* RDMA_PS_IPOIB and RDMA_PS_IB need an IB fabric; no XRC. */
		errno = EPROTONOSUPPORT;
		return -1;
	}
	ret = rocepmd_verbs_boot();
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	if (channel == NULL) {
		own = rdma_create_event_channel();
		if (own == NULL)
			return -1;
		channel = own;
	}
	pthread_mutex_lock(&cm_lock);
	ret = cm_dev_open_all();
	c = ret == 0 ? cm_id_new(cm_chan(channel), context, ps, qpt) : NULL;
	if (c != NULL)
		c->ucma.sync = own != NULL;
	pthread_mutex_unlock(&cm_lock);
	if (c == NULL) {
		if (own != NULL)
			rdma_destroy_event_channel(own);
		errno = ret < 0 ? -ret : ENOMEM;
		return -1;
	}
	*id = &c->id;
	return 0;
}

CM_EXPORT int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
	       void *context, enum rdma_port_space ps)
{
	return cm_create_id(channel, id, context, ps,
			    ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC);
}

CM_EXPORT int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cm_id *c = cm_id(id);
	struct cm_chan *own = NULL;

	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* librdmacm acks the event a synchronous call left on the id. */
	if (id->event != NULL) {
		rdma_ack_cm_event(id->event);
		id->event = NULL;
	}
	pthread_mutex_lock(&cm_lock);
	/* librdmacm: wait for the events already handed out to be acked. */
	cm_drop_queued_on(c->chan, c);
	cm_drop_queued_on(c->req_chan, c);
	while (c->events_out != 0)
		pthread_cond_wait(&c->acked, &cm_lock);
	if ((c->state == CM_S_ESTABLISHED || c->state == CM_S_REP_SENT) &&
	    !c->sidr) {
		/* Tell the peer, once, as the kernel's rdma_destroy_id does. */
		cm_build_dreq(c);
		cm_send(c->dev, c->sgid_index, &id->route.addr.addr.ibaddr.dgid,
			c->mad);
	}
	cm_will_drop(c);
	cm_mc_leave_all(c);	/* as the kernel's rdma_destroy_id */
	if (c->remote_guid != 0 && !c->sidr)
		cm_stale_add(c->remote_id, c->remote_guid);
	if (c->bound)
		cm_agent_claim(cm_service_id(c->id.ps, c->port), false);
	TAILQ_REMOVE(&cm_ids, c, link);
	if (c->chan != NULL) {
		c->chan->nr_ids--;
		if (c->ucma.sync)
			own = c->chan;
	}
	pthread_mutex_unlock(&cm_lock);
	if (own != NULL)
		rdma_destroy_event_channel(&own->ch);
	pthread_cond_destroy(&c->acked);
	free(c->ep_qp_attr);
	free(id->route.path_rec);
	free(c);
	return 0;
}

/* ------------------------------------------- exported: connections */

CM_EXPORT int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cm_id *c = cm_id(id);
	int ret;

	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (c->state != CM_S_ROUTE_RESOLVED) {
		ret = -EINVAL;
	} else if (id->ps == RDMA_PS_UDP) {
		ret = cm_send_sidr_req(c, conn_param);
		if (ret == 0)
			c->state = CM_S_SIDR_REQ_SENT;
	} else {
		ret = cm_send_req(c, conn_param);
		if (ret == 0)
			c->state = CM_S_REQ_SENT;
	}
	pthread_mutex_unlock(&cm_lock);
	return cm_errno_complete(c, ret);
}

CM_EXPORT int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *conn_param)
{
	struct cm_id *c = cm_id(id);
	bool wait = false;
	int ret;

	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (c->state == CM_S_SIDR_REQ_RCVD) {
		ret = cm_send_sidr_rep(c, conn_param, CM_SIDR_OK);
		if (ret == 0)
			c->state = CM_S_ESTABLISHED;
	} else if (c->state == CM_S_REQ_RCVD) {
		ret = cm_send_rep(c, conn_param);
		if (ret == 0) {
			c->state = CM_S_REP_SENT;
			cm_will_set(c);
		}
		wait = true;	/* for ESTABLISHED; UD has nothing to wait */
	} else {
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&cm_lock);
	return wait ? cm_errno_complete(c, ret) : cm_errno(ret);
}

CM_EXPORT int
rdma_reject(struct rdma_cm_id *id, const void *private_data,
	    uint8_t private_data_len)
{
	struct cm_id *c = cm_id(id);
	int ret = 0;

	if (c == NULL || private_data_len > 148 ||
	    (private_data_len != 0 && private_data == NULL)) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (c->state == CM_S_REQ_RCVD) {
		cm_send_rej(c->dev, c->sgid_index,
			    &id->route.addr.addr.ibaddr.dgid, c->tid,
			    0, c->remote_id, CM_REJ_MSG_REQ,
			    CM_REJ_CONSUMER_DEFINED, private_data,
			    private_data_len);
		cm_stale_add(c->remote_id, c->remote_guid);
		c->state = CM_S_IDLE;
	} else if (c->state == CM_S_SIDR_REQ_RCVD) {
		ret = cm_send_sidr_rep(c, NULL, CM_SIDR_REJECT);
		c->state = CM_S_IDLE;
	} else {
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&cm_lock);
	return cm_errno(ret);
}

CM_EXPORT int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct cm_id *c = cm_id(id);
	bool wait = false;
	int ret = 0;

	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	switch (c->state) {
	case CM_S_ESTABLISHED:
	case CM_S_REP_SENT:
		if (c->sidr) {
			c->state = CM_S_DISCONNECTED;
			break;
		}
		/* The kernel's rdma_disconnect: QP to error, then DREQ. */
		cm_will_drop(c);
		cm_qp_to_err(c);
		cm_build_dreq(c);
		ret = cm_send_armed(c, &id->route.addr.addr.ibaddr.dgid);
		if (ret == 0)
			c->state = CM_S_DREQ_SENT;
		wait = true;
		break;
	case CM_S_DREQ_SENT:
	case CM_S_DISCONNECTED:
		/* Already on its way; a synchronous id takes its event. */
		wait = c->chan != NULL && cm_has_event(c->chan, c);
		break;
	default:
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&cm_lock);
	return wait ? cm_errno_complete(c, ret) : cm_errno(ret);
}

CM_EXPORT int
rdma_establish(struct rdma_cm_id *id)
{
	struct cm_id *c = cm_id(id);
	int ret = 0;

	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	if (c->state != CM_S_ESTABLISHED)
		ret = -EINVAL;
	pthread_mutex_unlock(&cm_lock);
	return cm_errno(ret);
}

CM_EXPORT int
rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	struct cm_id *c = cm_id(id);

	(void)event;
	if (c == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* RTUs are retransmitted until answered: nothing to shortcut. */
	return 0;
}
