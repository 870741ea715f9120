/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An id's QP (see cm.c): rdma_create_qp, rdma_create_qp_ex and
 * rdma_destroy_qp, with the CQs and completion channels librdmacm makes
 * when the caller gives none.  The QP is left in INIT (UD: in RTS), as
 * librdmacm leaves it; the connection moves it on (cm_proto.c).
 */

#include <errno.h>
#include <string.h>

#include "cm.h"
#include "cm_proto.h"

/* ----------------------------------------------------- exported: QPs */

/*
 * The CQs librdmacm creates for an id when the caller gives none: each on
 * a completion channel of its own with the id as context, as
 * rdma_get_send_comp() and rdma_get_recv_comp() of <rdma/rdma_verbs.h>
 * expect.  rdma_destroy_qp() destroys the id's CQs and channels, whoever
 * made them (rsockets leave theirs to it).
 */
static void
cm_destroy_cqs(struct rdma_cm_id *id)
{
	if (id->recv_cq != NULL) {
		ibv_destroy_cq(id->recv_cq);
		if (id->send_cq != NULL && id->send_cq != id->recv_cq) {
			ibv_destroy_cq(id->send_cq);
			id->send_cq = NULL;
		}
		id->recv_cq = NULL;
	}
	if (id->recv_cq_channel != NULL) {
		ibv_destroy_comp_channel(id->recv_cq_channel);
		if (id->send_cq_channel != NULL &&
		    id->send_cq_channel != id->recv_cq_channel) {
			ibv_destroy_comp_channel(id->send_cq_channel);
			id->send_cq_channel = NULL;
		}
		id->recv_cq_channel = NULL;
	}
}

static int
cm_create_cq(struct rdma_cm_id *id, uint32_t size, struct ibv_cq **cq,
	     struct ibv_comp_channel **chan)
{
	if (size == 0)
		return 0;
	*chan = ibv_create_comp_channel(id->verbs);
	if (*chan == NULL)
		return -1;
	*cq = ibv_create_cq(id->verbs, (int)size, id, *chan, 0);
	return *cq != NULL ? 0 : -1;
}

CM_EXPORT int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct cm_id *c = cm_id(id);
	struct ibv_qp_attr a = { 0 };
	struct ibv_qp *qp;
	int mask, ret;

	if (c == NULL || attr == NULL || id->verbs == NULL || id->qp != NULL) {
		errno = EINVAL;
		return -1;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->pd = id->pd != NULL ? id->pd : c->dev->pd;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (attr->pd->context != id->verbs ||
	    (id->recv_cq != NULL && attr->recv_cq != NULL &&
	     id->recv_cq != attr->recv_cq) ||
	    (id->send_cq != NULL && attr->send_cq != NULL &&
	     id->send_cq != attr->send_cq)) {
		errno = EINVAL;
		return -1;
	}
	if ((attr->recv_cq == NULL && id->recv_cq == NULL &&
	     cm_create_cq(id, attr->cap.max_recv_wr, &id->recv_cq,
			  &id->recv_cq_channel) != 0) ||
	    (attr->send_cq == NULL && id->send_cq == NULL &&
	     cm_create_cq(id, attr->cap.max_send_wr, &id->send_cq,
			  &id->send_cq_channel) != 0))
		goto err_cq;
	if (attr->send_cq == NULL)
		attr->send_cq = id->send_cq;
	if (attr->recv_cq == NULL)
		attr->recv_cq = id->recv_cq;
	if (attr->srq == NULL)
		attr->srq = id->srq;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (qp == NULL)
		goto err_cq;
	a.qp_state = IBV_QPS_INIT;
	a.port_num = CM_PORT;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = RDMA_UDP_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	ret = ibv_modify_qp(qp, &a, mask);
	if (ret == 0 && qp->qp_type == IBV_QPT_UD) {
		/* librdmacm makes UD QPs ready to send at once. */
		a.qp_state = IBV_QPS_RTR;
		ret = ibv_modify_qp(qp, &a, IBV_QP_STATE);
		if (ret == 0) {
			/* UD PSNs are only ever checked by nobody. */
			a.qp_state = IBV_QPS_RTS;
			a.sq_psn = 0;
			ret = ibv_modify_qp(qp, &a, IBV_QP_STATE |
					    IBV_QP_SQ_PSN);
		}
	}
	if (ret != 0) {
		ibv_destroy_qp(qp);
		errno = ret;
		goto err_cq;
	}
	id->pd = qp->pd;
	id->qp = qp;
	return 0;
err_cq:
	ret = errno;
	cm_destroy_cqs(id);
	errno = ret;
	return -1;
}

CM_EXPORT int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex ax;
	int ret;

	if (id == NULL || qp_init_attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	memset(&ax, 0, sizeof(ax));
	memcpy(&ax, qp_init_attr, sizeof(*qp_init_attr));
	ax.comp_mask = pd != NULL ? IBV_QP_INIT_ATTR_PD : 0;
	ax.pd = pd;
	ret = rdma_create_qp_ex(id, &ax);
	if (ret == 0) {
		qp_init_attr->cap = ax.cap;
		qp_init_attr->send_cq = ax.send_cq;
		qp_init_attr->recv_cq = ax.recv_cq;
	}
	return ret;
}

CM_EXPORT void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct cm_id *c = cm_id(id);

	if (c == NULL || id->qp == NULL)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	cm_destroy_cqs(id);
}
