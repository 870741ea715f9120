/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queue pairs: creation, modification, query and destruction.
 *
 * The engine owns the QP state machine: it validates every transition and
 * its required and optional attributes.  The shim converts the attributes,
 * refuses what it cannot express (alternate paths, resizing), keeps the
 * state the application last set in ibv_qp.state (the engine may also move
 * a QP to ERR on its own; ibv_query_qp() asks it), and maps the two work
 * queues the engine returns.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "shim.h"

/* The attributes an rp_qp_attr carries. */
#define SHIM_QP_ATTR_MASK (IBV_QP_STATE | IBV_QP_CUR_STATE | \
	IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_ACCESS_FLAGS | \
	IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_AV | \
	IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | \
	IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC | \
	IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | \
	IBV_QP_DEST_QPN)

/* ibv_create_qp_ex() comp_mask and send_ops_flags rocepmd accepts. */
#define SHIM_QP_INIT_MASK (IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS | \
	IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
#define SHIM_QP_SEND_OPS (IBV_QP_EX_WITH_RDMA_WRITE | \
	IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND | \
	IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
	IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
	IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_SEND_WITH_INV | \
	IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV | \
	IBV_QP_EX_WITH_ATOMIC_WRITE)

/* ---------------------------------------------------------- attributes */

static int
shim_qp_attr_to_rp(struct rp_qp_attr *r, const struct ibv_qp_attr *a,
		   int attr_mask)
{
	uint32_t mask = (uint32_t)attr_mask;
	int ret;

	/* With one path there is nothing to migrate to: MIGRATED is a no-op. */
	if (mask & IBV_QP_PATH_MIG_STATE) {
		if (a->path_mig_state != IBV_MIG_MIGRATED)
			return -EINVAL;
		mask &= ~(uint32_t)IBV_QP_PATH_MIG_STATE;
	}
	if (mask & ~(uint32_t)SHIM_QP_ATTR_MASK)
		return -EINVAL;		/* ALT_PATH, CAP, RATE_LIMIT */
	if ((mask & IBV_QP_PORT) && a->port_num != SHIM_PORT)
		return -EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return -EINVAL;

	memset(r, 0, sizeof(*r));
	if (mask & IBV_QP_AV) {
		ret = shim_av_from_ah_attr(&r->av, &a->ah_attr);
		if (ret < 0)
			return ret;
	}
	r->attr_mask = mask;
	r->qp_state = a->qp_state;
	r->cur_qp_state = a->cur_qp_state;
	r->path_mtu = a->path_mtu;
	r->qkey = a->qkey;
	r->rq_psn = a->rq_psn;
	r->sq_psn = a->sq_psn;
	r->dest_qp_num = a->dest_qp_num;
	r->qp_access_flags = (uint32_t)a->qp_access_flags;
	r->pkey_index = a->pkey_index;
	r->port_num = a->port_num;
	r->timeout = a->timeout;
	r->retry_cnt = a->retry_cnt;
	r->rnr_retry = a->rnr_retry;
	r->min_rnr_timer = a->min_rnr_timer;
	r->max_rd_atomic = a->max_rd_atomic;
	r->max_dest_rd_atomic = a->max_dest_rd_atomic;
	r->en_sqd_async_notify = a->en_sqd_async_notify;
	return 0;
}

static void
shim_qp_attr_from_rp(struct ibv_qp_attr *a, const struct rp_qp_attr *r)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = (enum ibv_qp_state)r->qp_state;
	a->cur_qp_state = (enum ibv_qp_state)r->cur_qp_state;
	a->path_mtu = (enum ibv_mtu)r->path_mtu;
	a->path_mig_state = IBV_MIG_MIGRATED;
	a->qkey = r->qkey;
	a->rq_psn = r->rq_psn;
	a->sq_psn = r->sq_psn;
	a->dest_qp_num = r->dest_qp_num;
	a->qp_access_flags = (int)r->qp_access_flags;
	shim_av_to_ah_attr(&a->ah_attr, &r->av);
	a->pkey_index = r->pkey_index;
	a->en_sqd_async_notify = r->en_sqd_async_notify;
	a->sq_draining = r->sq_draining;
	a->max_rd_atomic = r->max_rd_atomic;
	a->max_dest_rd_atomic = r->max_dest_rd_atomic;
	a->min_rnr_timer = r->min_rnr_timer;
	a->port_num = r->port_num;
	a->timeout = r->timeout;
	a->retry_cnt = r->retry_cnt;
	a->rnr_retry = r->rnr_retry;
}

/* ------------------------------------------------------------- QP table */

/*
 * The context's QPs by QPN, for the asynchronous events the engine names
 * by number: indexed by the low 16 bits, the full QPN compared (QPNs carry
 * a generation in their high bits).
 */

/* The QP of a QPN, or NULL.  Called with ctx->qp_lock held. */
struct shim_qp *
shim_qp_lookup(struct shim_context *ctx, uint32_t qpn)
{
	struct shim_qp *qp = ctx->qp_tab[SHIM_QPN_IDX(qpn)];

	return qp != NULL && qp->qpn == qpn ? qp : NULL;
}

static int
shim_qp_insert(struct shim_context *ctx, struct shim_qp *qp)
{
	struct shim_qp **slot = &ctx->qp_tab[SHIM_QPN_IDX(qp->qpn)];
	int ret = 0;

	pthread_mutex_lock(&ctx->qp_lock);
	if (*slot != NULL)
		ret = -EEXIST;
	else
		*slot = qp;
	pthread_mutex_unlock(&ctx->qp_lock);
	return ret;
}

static void
shim_qp_remove(struct shim_context *ctx, struct shim_qp *qp)
{
	struct shim_qp **slot = &ctx->qp_tab[SHIM_QPN_IDX(qp->qpn)];

	pthread_mutex_lock(&ctx->qp_lock);
	if (*slot == qp)
		*slot = NULL;
	pthread_mutex_unlock(&ctx->qp_lock);
}

/* -------------------------------------------------------------- create */

static int
shim_qp_init_check(struct ibv_context *ibctx,
		   const struct ibv_qp_init_attr_ex *a)
{
	switch (a->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || a->pd == NULL ||
	    a->pd->context != ibctx)
		return -EINVAL;
	if (a->comp_mask & ~(uint32_t)SHIM_QP_INIT_MASK)
		return -EOPNOTSUPP;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    a->create_flags != 0)
		return -EOPNOTSUPP;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (a->send_ops_flags & ~(uint64_t)SHIM_QP_SEND_OPS))
		return -EOPNOTSUPP;
	if (a->send_cq == NULL || a->recv_cq == NULL ||
	    a->send_cq->context != ibctx || a->recv_cq->context != ibctx)
		return -EINVAL;
	if (a->srq != NULL && a->srq->context != ibctx)
		return -EINVAL;
	return 0;
}

/* Map one work queue: -EIO unless every number the engine gave is sane. */
int
shim_wq_map(struct shim_context *ctx, struct shim_wq *wq, uint64_t off,
	    uint32_t size, uint32_t stride, uint32_t min_stride)
{
	uint64_t len;

	if (!shim_is_pow2(size) || !shim_is_pow2(stride) ||
	    stride < min_stride)
		return -EIO;
	len = RP_WQ_HDR_SIZE + (uint64_t)size * stride;
	wq->hdr = shim_region_ptr(ctx, off, len);
	if (wq->hdr == NULL)
		return -EIO;
	wq->ent = (uint8_t *)wq->hdr + RP_WQ_HDR_SIZE;
	wq->size = size;
	wq->stride = stride;
	/* Our own index: nobody else writes it. */
	wq->prod = rp_load_relaxed(&wq->hdr->prod);
	wq->cons = rp_load_acquire(&wq->hdr->cons);
	shim_lock_init(&wq->lock);
	return 0;
}

/*
 * The capabilities to honour: what the engine granted, bounded by what
 * fits in a WQE slot, so that the post path can never overrun one.
 */
static void
shim_qp_caps(struct shim_qp *qp, const struct rp_qp_caps *g)
{
	uint32_t sq_room = qp->sq.stride - RP_SEND_WQE_HDR;
	uint32_t rq_room = qp->rq.stride - RP_RECV_WQE_HDR;

	qp->cap.max_send_wr = RTE_MIN(g->max_send_wr, qp->sq.size);
	qp->cap.max_recv_wr = RTE_MIN(g->max_recv_wr, qp->rq.size);
	qp->cap.max_send_sge = RTE_MIN(g->max_send_sge,
				       sq_room / (uint32_t)sizeof(struct rp_sge));
	qp->cap.max_send_sge = RTE_MIN(qp->cap.max_send_sge, RP_MAX_SGE);
	qp->cap.max_recv_sge = RTE_MIN(g->max_recv_sge,
				       rq_room / (uint32_t)sizeof(struct rp_sge));
	qp->cap.max_recv_sge = RTE_MIN(qp->cap.max_recv_sge, RP_MAX_SGE);
	qp->cap.max_inline_data = RTE_MIN(g->max_inline_data, sq_room);
	qp->cap.max_inline_data = RTE_MIN(qp->cap.max_inline_data,
					  RP_MAX_INLINE);
}

static void
shim_qp_engine_destroy(struct shim_context *ctx, uint32_t qpn)
{
	struct rp_ctrl_slot s = { .op = RP_CTRL_QP_DESTROY };

	s.u.qp.qpn = qpn;
	if (shim_ctrl(ctx, &s) < 0)
		SHIM_QP_LOG(WARNING, qpn, "cannot destroy after a failed create");
}

struct ibv_qp *
shim_create_qp_ex(struct ibv_context *ibctx, struct ibv_qp_init_attr_ex *attr)
{
	return shim_create_qp_flags(ibctx, attr, 0);
}

/* @flags: RP_QP_F_* (RP_QP_F_GSI: the CM's GSI agent, rp_gsi.c) */
struct ibv_qp *
shim_create_qp_flags(struct ibv_context *ibctx,
		     struct ibv_qp_init_attr_ex *attr, uint32_t flags)
{
	struct shim_context *ctx = shim_ctx(ibctx);
	struct rp_ctrl_slot s = { .op = RP_CTRL_QP_CREATE };
	struct rp_ctrl_qp_create *c = &s.u.qp_create;
	struct ibv_qp *ibqp;
	struct shim_qp *qp;
	int ret;

	ret = shim_qp_init_check(ibctx, attr);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}

	c->pdn = shim_pd(attr->pd)->pdn;
	c->qp_type = attr->qp_type;
	c->send_cqn = shim_cq(attr->send_cq)->cqn;
	c->recv_cqn = shim_cq(attr->recv_cq)->cqn;
	c->srqn = attr->srq != NULL ? (int32_t)shim_srq(attr->srq)->srqn : -1;
	c->sq_sig_all = attr->sq_sig_all != 0;
	c->caps.max_send_wr = attr->cap.max_send_wr;
	c->caps.max_recv_wr = attr->cap.max_recv_wr;
	c->caps.max_send_sge = attr->cap.max_send_sge;
	c->caps.max_recv_sge = attr->cap.max_recv_sge;
	c->caps.max_inline_data = attr->cap.max_inline_data;
	c->flags = flags;
	ret = shim_ctrl(ctx, &s);
	if (ret < 0)
		goto err_free;

	ret = shim_wq_map(ctx, &qp->sq, c->sq_off, c->sq_size, c->sq_stride,
			  RP_SEND_WQE_HDR);
	if (ret == 0)
		ret = shim_wq_map(ctx, &qp->rq, c->rq_off, c->rq_size,
				  c->rq_stride, RP_RECV_WQE_HDR);
	if (ret == 0) {
		qp->sq.bell = shim_region_ptr(ctx, c->bell_off,
					      sizeof(uint64_t));
		qp->sq.bell_bit = c->bell_bit;
		qp->rq.bell = qp->sq.bell;
		qp->rq.bell_bit = c->bell_bit;
		if (qp->sq.bell == NULL || c->bell_off % sizeof(uint64_t) != 0)
			ret = -EIO;
	}
	if (ret < 0) {
		SHIM_QP_LOG(ERR, c->qpn, "bad work queues: sq %u x %u at 0x%" PRIx64 ", rq %u x %u at 0x%" PRIx64,
			    c->sq_size, c->sq_stride, c->sq_off, c->rq_size,
			    c->rq_stride, c->rq_off);
		shim_qp_engine_destroy(ctx, c->qpn);
		goto err_free;
	}
	qp->ctx = ctx;
	qp->qpn = c->qpn;
	qp->comm_prefix = c->comm_prefix;
	qp->scq = shim_cq(attr->send_cq);
	qp->srq = attr->srq != NULL ? shim_srq(attr->srq) : NULL;
	/* A TM-SRQ's CQ takes the QP's receive completions (engine side). */
	qp->rcq = qp->srq != NULL && qp->srq->tm ? qp->srq->cq :
		shim_cq(attr->recv_cq);
	qp->sq_sig_all = attr->sq_sig_all != 0;
	shim_qp_caps(qp, &c->caps);
	attr->cap = qp->cap;		/* ibv_create_qp(3): the actual values */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		qp->ex_send = true;
		qp->send_ops_flags = attr->send_ops_flags;
		shim_qpx_ops_set(qp);
	}

	ibqp = &qp->qpx.qp_base;
	ibqp->context = ibctx;
	ibqp->qp_context = attr->qp_context;
	ibqp->pd = attr->pd;
	ibqp->send_cq = attr->send_cq;
	ibqp->recv_cq = attr->recv_cq;
	ibqp->srq = attr->srq;
	ibqp->handle = qp->qpn;
	ibqp->qp_num = qp->qpn;
	ibqp->state = IBV_QPS_RESET;
	ibqp->qp_type = attr->qp_type;
	pthread_mutex_init(&ibqp->mutex, NULL);
	pthread_cond_init(&ibqp->cond, NULL);
	ibqp->events_completed = 0;
	ret = shim_qp_insert(ctx, qp);
	if (ret < 0) {
		SHIM_QP_LOG(ERR, qp->qpn, "QPN already in use");
		shim_qp_engine_destroy(ctx, qp->qpn);
		pthread_cond_destroy(&ibqp->cond);
		pthread_mutex_destroy(&ibqp->mutex);
		ret = -EIO;
		goto err_free;
	}

	rp_fetch_add(&qp->scq->nr_qp, 1);
	rp_fetch_add(&qp->rcq->nr_qp, 1);
	if (qp->srq != NULL)
		rp_fetch_add(&qp->srq->nr_qp, 1);
	return ibqp;

err_free:
	free(qp);
	errno = -ret;
	return NULL;
}

SHIM_EXPORT struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_qp_init_attr_ex attr;
	struct ibv_qp *qp;

	memset(&attr, 0, sizeof(attr));
	attr.qp_context = init_attr->qp_context;
	attr.send_cq = init_attr->send_cq;
	attr.recv_cq = init_attr->recv_cq;
	attr.srq = init_attr->srq;
	attr.cap = init_attr->cap;
	attr.qp_type = init_attr->qp_type;
	attr.sq_sig_all = init_attr->sq_sig_all;
	attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr.pd = pd;
	qp = shim_create_qp_ex(pd->context, &attr);
	if (qp != NULL)
		init_attr->cap = attr.cap;
	return qp;
}

/* -------------------------------------------------------- modify/query */

SHIM_EXPORT int
ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct shim_qp *qp = shim_qp(ibqp);
	struct rp_ctrl_slot s = { .op = RP_CTRL_QP_MODIFY };
	int ret;

	ret = shim_qp_attr_to_rp(&s.u.qp.attr, attr, attr_mask);
	if (ret == 0) {
		s.u.qp.qpn = qp->qpn;
		ret = shim_ctrl(qp->ctx, &s);
	}
	if (ret < 0) {
		errno = -ret;
		return -ret;
	}
	if (attr_mask & IBV_QP_STATE) {
		ibqp->state = attr->qp_state;
		if (attr->qp_state == IBV_QPS_RESET) {
			/* The queues were emptied: follow the engine's indexes. */
			shim_lock(&qp->sq.lock);
			qp->sq.prod = rp_load_relaxed(&qp->sq.hdr->prod);
			shim_unlock(&qp->sq.lock);
			shim_lock(&qp->rq.lock);
			qp->rq.prod = rp_load_relaxed(&qp->rq.hdr->prod);
			shim_unlock(&qp->rq.lock);
		}
	}
	return 0;
}

SHIM_EXPORT int
ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int attr_mask,
	     struct ibv_qp_init_attr *init_attr)
{
	struct shim_qp *qp = shim_qp(ibqp);
	struct rp_ctrl_slot s = { .op = RP_CTRL_QP_QUERY };
	int ret;

	s.u.qp.qpn = qp->qpn;
	s.u.qp.attr.attr_mask = (uint32_t)attr_mask;
	ret = shim_ctrl(qp->ctx, &s);
	if (ret < 0) {
		errno = -ret;
		return -ret;
	}
	shim_qp_attr_from_rp(attr, &s.u.qp.attr);
	attr->cap = qp->cap;

	if (init_attr != NULL) {
		memset(init_attr, 0, sizeof(*init_attr));
		init_attr->qp_context = ibqp->qp_context;
		init_attr->send_cq = ibqp->send_cq;
		init_attr->recv_cq = ibqp->recv_cq;
		init_attr->srq = ibqp->srq;
		init_attr->cap = qp->cap;
		init_attr->qp_type = ibqp->qp_type;
		init_attr->sq_sig_all = qp->sq_sig_all;
	}

	if (attr_mask & IBV_QP_STATE)
		ibqp->state = attr->qp_state;
	return 0;
}

/* -------------------------------------------------------------- destroy */

SHIM_EXPORT int
ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct shim_qp *qp = shim_qp(ibqp);
	struct rp_ctrl_slot s = { .op = RP_CTRL_QP_DESTROY };
	int ret;

	/* No more asynchronous events are handed out for it. */
	shim_qp_remove(qp->ctx, qp);
	s.u.qp.qpn = qp->qpn;
	ret = shim_ctrl(qp->ctx, &s);
	if (ret < 0) {
		if (shim_qp_insert(qp->ctx, qp) < 0)
			SHIM_QP_LOG(ERR, qp->qpn, "cannot restore after a failed destroy");
		return -ret;
	}

	/* Every asynchronous event delivered for it must have been acked. */
	pthread_mutex_lock(&ibqp->mutex);
	while (ibqp->events_completed != qp->async_delivered)
		pthread_cond_wait(&ibqp->cond, &ibqp->mutex);
	pthread_mutex_unlock(&ibqp->mutex);

	rp_fetch_add(&qp->scq->nr_qp, UINT32_MAX);	/* -1 */
	rp_fetch_add(&qp->rcq->nr_qp, UINT32_MAX);
	if (qp->srq != NULL)
		rp_fetch_add(&qp->srq->nr_qp, UINT32_MAX);
	pthread_cond_destroy(&ibqp->cond);
	pthread_mutex_destroy(&ibqp->mutex);
	free(qp);
	return 0;
}

SHIM_EXPORT struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *ibqp)
{
	struct shim_qp *qp = shim_qp(ibqp);

	if (!qp->ex_send) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return &qp->qpx;
}
