/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * librdmacm's endpoint API (rdma_create_ep(3), rdma_get_request(3)), as
 * rdma_server, rdma_client and rdma_xserver use it: synchronous ids
 * (cm_create_id() without a channel) whose calls wait for their own event,
 * with the QP made by the endpoint call.  The data calls of
 * <rdma/rdma_verbs.h> (rdma_post_send, rdma_get_recv_comp, rdma_reg_msgs,
 * ...) are static inline in the header, on the id's pd, qp, CQs and
 * channels, which rdma_create_qp() fills as librdmacm does.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "cm.h"

/* A listening endpoint: bound; its requests get QPs like qp_init_attr. */
static int
cm_ep_passive(struct cm_id *c, struct rdma_addrinfo *res, struct ibv_pd *pd,
	      struct ibv_qp_init_attr *qp_init_attr)
{
	if (rdma_bind_addr(&c->id, res->ai_src_addr) != 0)
		return -1;
	if (pd != NULL)
		c->id.pd = pd;
	if (qp_init_attr != NULL) {
		c->ep_qp_attr = malloc(sizeof(*c->ep_qp_attr));
		if (c->ep_qp_attr == NULL) {
			errno = ENOMEM;
			return -1;
		}
		*c->ep_qp_attr = *qp_init_attr;
		c->ep_qp_attr->qp_type = res->ai_qp_type;
	}
	return 0;
}

/* A connecting endpoint: address and route resolved, its QP created. */
static int
cm_ep_active(struct cm_id *c, struct rdma_addrinfo *res, struct ibv_pd *pd,
	     struct ibv_qp_init_attr *qp_init_attr)
{
	if (res->ai_dst_addr == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (rdma_resolve_addr(&c->id, res->ai_src_addr, res->ai_dst_addr,
			      2000) != 0 ||
	    rdma_resolve_route(&c->id, 2000) != 0)
		return -1;
	if (qp_init_attr != NULL) {
		qp_init_attr->qp_type = res->ai_qp_type;
		if (rdma_create_qp(&c->id, pd, qp_init_attr) != 0)
			return -1;
	}
	return 0;
}

CM_EXPORT int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
	       struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	int ret;

	if (id == NULL || res == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (cm_create_id(NULL, &cid, NULL, res->ai_port_space,
			 res->ai_qp_type) != 0)
		return -1;
	ret = (res->ai_flags & RAI_PASSIVE) ?
		cm_ep_passive((struct cm_id *)cid, res, pd, qp_init_attr) :
		cm_ep_active((struct cm_id *)cid, res, pd, qp_init_attr);
	if (ret != 0) {
		int err = errno;

		rdma_destroy_ep(cid);
		errno = err;
		return -1;
	}
	*id = cid;
	return 0;
}

CM_EXPORT void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id == NULL)
		return;
	if (id->qp != NULL)
		rdma_destroy_qp(id);
	if (id->srq != NULL)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

/*
 * The next connection request of a synchronous listener, as a new id
 * whose QP is made like the listening endpoint's; the request stays in
 * (*id)->event.  A failure leaves the event in listen->event.
 */
CM_EXPORT int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cm_id *l = (struct cm_id *)listen;
	struct rdma_cm_event *ev;

	if (l == NULL || id == NULL || !l->ucma.sync) {
		errno = EINVAL;
		return -1;
	}
	if (listen->event != NULL) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &ev) != 0)
		return -1;
	if (ev->event == RDMA_CM_EVENT_REJECTED) {
		errno = ECONNREFUSED;
		goto err;
	}
	if (ev->status != 0) {
		errno = ev->status < 0 ? -ev->status : ev->status;
		goto err;
	}
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		errno = EINVAL;
		goto err;
	}
	if (l->ep_qp_attr != NULL) {
		struct ibv_qp_init_attr attr = *l->ep_qp_attr;

		if (rdma_create_qp(ev->id, listen->pd, &attr) != 0)
			goto err;
	}
	*id = ev->id;
	(*id)->event = ev;
	return 0;
err:
	listen->event = ev;
	return -1;
}
