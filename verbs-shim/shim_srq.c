/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues (ibv_create_srq(3), ibv_create_srq_ex(3)) and the
 * list operations of a tag-matching SRQ (ibv_post_srq_ops(3)).
 *
 * The receive ring is a work queue like a QP's RQ (shim_wq_post_recv()).
 * A TM-SRQ adds two rings in the device region: list operations, which
 * the shim produces, and the tag slots the engine gives back.  Tag handles
 * are chosen here, since ibv_post_srq_ops() returns them at once: a slot
 * index in the low 16 bits and a generation in the high 16 bits, bumped on
 * every reuse, so that a DEL of a consumed tag never removes a newer one.
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "shim.h"

/* The SRQ of an SRQN, or NULL.  Called with ctx->srq_lock held. */
struct shim_srq *
shim_srq_lookup(struct shim_context *ctx, uint32_t srqn)
{
	struct shim_srq *srq = ctx->srq_tab[SHIM_SRQN_IDX(srqn)];

	return srq != NULL && srq->srqn == srqn ? srq : NULL;
}

static int
shim_srq_insert(struct shim_context *ctx, struct shim_srq *srq)
{
	struct shim_srq **slot = &ctx->srq_tab[SHIM_SRQN_IDX(srq->srqn)];
	int ret = 0;

	pthread_mutex_lock(&ctx->srq_lock);
	if (*slot != NULL)
		ret = -EEXIST;
	else
		*slot = srq;
	pthread_mutex_unlock(&ctx->srq_lock);
	return ret;
}

static void
shim_srq_remove(struct shim_context *ctx, struct shim_srq *srq)
{
	struct shim_srq **slot = &ctx->srq_tab[SHIM_SRQN_IDX(srq->srqn)];

	pthread_mutex_lock(&ctx->srq_lock);
	if (*slot == srq)
		*slot = NULL;
	pthread_mutex_unlock(&ctx->srq_lock);
}

static int
shim_srq_engine_destroy(struct shim_context *ctx, uint32_t srqn)
{
	struct rp_ctrl_slot s = { .op = RP_CTRL_SRQ_DESTROY };

	s.u.srq.srqn = srqn;
	return shim_ctrl(ctx, &s);
}

/* Map the TM rings the engine returned and fill the slot stack. */
static int
shim_srq_tm_map(struct shim_context *ctx, struct shim_srq *srq,
		const struct rp_ctrl_srq *r)
{
	uint64_t len;

	if (r->max_num_tags == 0 || r->max_num_tags > RP_TM_MAX_TAGS ||
	    !shim_is_pow2(r->free_size) || r->free_size < r->max_num_tags ||
	    r->max_ops == 0 || r->max_ops > r->ops_size)
		return -EIO;
	if (shim_wq_map(ctx, &srq->ops, r->ops_off, r->ops_size,
			sizeof(struct rp_tm_op), sizeof(struct rp_tm_op)) < 0)
		return -EIO;
	len = RP_TM_FREE_HDR_SIZE + (uint64_t)r->free_size * sizeof(uint32_t);
	srq->free = shim_region_ptr(ctx, r->free_off, len);
	if (srq->free == NULL)
		return -EIO;
	srq->free_size = r->free_size;
	srq->free_cons = rp_load_relaxed(&srq->free->cons);
	srq->max_ops = r->max_ops;
	srq->max_tags = r->max_num_tags;
	srq->stack = malloc(sizeof(*srq->stack) * srq->max_tags);
	srq->gen = calloc(srq->max_tags, sizeof(*srq->gen));
	if (srq->stack == NULL || srq->gen == NULL)
		return -ENOMEM;
	/* Popped from the top: slot 0 first. */
	for (uint32_t i = 0; i < srq->max_tags; i++)
		srq->stack[i] = srq->max_tags - 1 - i;
	srq->nr_stack = srq->max_tags;
	return 0;
}

static void
shim_srq_free(struct shim_srq *srq)
{
	free(srq->stack);
	free(srq->gen);
	free(srq);
}

static int
shim_srq_check(struct ibv_context *ibctx, const struct ibv_srq_init_attr_ex *a,
	       uint32_t *type)
{
	const struct shim_context *ctx = shim_ctx(ibctx);
	const uint32_t tm_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
		IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
	enum ibv_srq_type t = (a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ?
		a->srq_type : IBV_SRQT_BASIC;

	if (a->comp_mask & ~(uint32_t)(tm_mask | IBV_SRQ_INIT_ATTR_XRCD))
		return -EINVAL;
	if (t == IBV_SRQT_XRC)
		return -EOPNOTSUPP;
	if (t != IBV_SRQT_BASIC && t != IBV_SRQT_TM)
		return -EINVAL;
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_PD) || a->pd == NULL ||
	    a->pd->context != ibctx)
		return -EINVAL;
	if (a->attr.max_wr == 0 || a->attr.max_wr > ctx->ctl->max_srq_wr ||
	    a->attr.max_sge > ctx->ctl->max_srq_sge ||
	    a->attr.srq_limit > a->attr.max_wr)
		return -EINVAL;
	*type = RP_SRQ_BASIC;
	if (t == IBV_SRQT_TM) {
		/* TM-2: a CQ, and (as mlx5) an extended one. */
		if ((a->comp_mask & tm_mask) != tm_mask || a->cq == NULL ||
		    a->cq->context != ibctx || !shim_cq(a->cq)->ex)
			return -EINVAL;
		if (a->tm_cap.max_num_tags == 0 ||
		    a->tm_cap.max_num_tags > ctx->ctl->tm_max_num_tags ||
		    a->tm_cap.max_ops == 0 ||
		    a->tm_cap.max_ops > ctx->ctl->tm_max_ops)
			return -EINVAL;
		*type = RP_SRQ_TM;
	}
	return 0;
}

struct ibv_srq *
shim_create_srq_ex(struct ibv_context *ibctx, struct ibv_srq_init_attr_ex *attr)
{
	struct shim_context *ctx = shim_ctx(ibctx);
	struct rp_ctrl_slot s = { .op = RP_CTRL_SRQ_CREATE };
	struct rp_ctrl_srq *c = &s.u.srq;
	struct shim_srq *srq;
	uint32_t type;
	int ret;

	ret = shim_srq_check(ibctx, attr, &type);
	if (ret < 0) {
		errno = -ret;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c->pdn = shim_pd(attr->pd)->pdn;
	c->type = type;
	c->cqn = type == RP_SRQ_TM ? (int32_t)shim_cq(attr->cq)->cqn : -1;
	c->max_wr = attr->attr.max_wr;
	c->max_sge = attr->attr.max_sge;
	c->srq_limit = attr->attr.srq_limit;
	c->max_num_tags = attr->tm_cap.max_num_tags;
	c->max_ops = attr->tm_cap.max_ops;
	ret = shim_ctrl(ctx, &s);
	if (ret < 0)
		goto err_free;

	srq->ctx = ctx;
	srq->srqn = c->srqn;
	srq->tm = type == RP_SRQ_TM;
	srq->max_sge = RTE_MIN(c->max_sge, RP_MAX_SGE);
	ret = shim_wq_map(ctx, &srq->wq, c->off, c->size, c->stride,
			  RP_RECV_WQE_HDR +
			  srq->max_sge * (uint32_t)sizeof(struct rp_sge));
	if (ret == 0 && srq->tm)
		ret = shim_srq_tm_map(ctx, srq, c);
	if (ret == 0)
		ret = shim_srq_insert(ctx, srq);
	if (ret < 0) {
		SHIM_LOG(ERR, "srq 0x%x: cannot map its rings (%d)", c->srqn, ret);
		(void)shim_srq_engine_destroy(ctx, c->srqn);
		goto err_free;
	}
	if (srq->tm) {
		srq->cq = shim_cq(attr->cq);
		rp_fetch_add(&srq->cq->nr_qp, 1);
	}
	shim_lock_init(&srq->ops.lock);

	srq->ibv.context = ibctx;
	srq->ibv.srq_context = attr->srq_context;
	srq->ibv.pd = attr->pd;
	srq->ibv.handle = srq->srqn;
	srq->ibv.events_completed = 0;
	pthread_mutex_init(&srq->ibv.mutex, NULL);
	pthread_cond_init(&srq->ibv.cond, NULL);
	/* ibv_create_srq(3): the actual values. */
	attr->attr.max_wr = RTE_MIN(c->max_wr, srq->wq.size);
	attr->attr.max_sge = srq->max_sge;
	if (srq->tm) {
		attr->tm_cap.max_num_tags = srq->max_tags;
		attr->tm_cap.max_ops = srq->max_ops;
	}
	return &srq->ibv;

err_free:
	shim_srq_free(srq);
	errno = ret == -EEXIST ? EIO : -ret;
	return NULL;
}

SHIM_EXPORT struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr)
{
	struct ibv_srq_init_attr_ex attr;
	struct ibv_srq *srq;

	memset(&attr, 0, sizeof(attr));
	attr.srq_context = srq_init_attr->srq_context;
	attr.attr = srq_init_attr->attr;
	attr.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	attr.pd = pd;
	srq = shim_create_srq_ex(pd->context, &attr);
	if (srq != NULL)
		srq_init_attr->attr = attr.attr;
	return srq;
}

SHIM_EXPORT int
ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *srq_attr,
	       int srq_attr_mask)
{
	struct shim_srq *srq = shim_srq(ibsrq);
	struct rp_ctrl_slot s = { .op = RP_CTRL_SRQ_MODIFY };
	int ret;

	s.u.srq.srqn = srq->srqn;
	s.u.srq.attr_mask = (uint32_t)srq_attr_mask;
	s.u.srq.max_wr = srq_attr->max_wr;
	s.u.srq.srq_limit = srq_attr->srq_limit;
	ret = shim_ctrl(srq->ctx, &s);
	if (ret < 0) {
		errno = -ret;
		return -ret;
	}
	return 0;
}

SHIM_EXPORT int
ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *srq_attr)
{
	struct shim_srq *srq = shim_srq(ibsrq);
	struct rp_ctrl_slot s = { .op = RP_CTRL_SRQ_QUERY };
	int ret;

	s.u.srq.srqn = srq->srqn;
	ret = shim_ctrl(srq->ctx, &s);
	if (ret < 0) {
		errno = -ret;
		return -ret;
	}
	srq_attr->max_wr = RTE_MIN(s.u.srq.max_wr, srq->wq.size);
	srq_attr->max_sge = srq->max_sge;
	srq_attr->srq_limit = s.u.srq.srq_limit;
	return 0;
}

SHIM_EXPORT int
ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct shim_srq *srq = shim_srq(ibsrq);
	int ret;

	if (rp_load_acquire(&srq->nr_qp) != 0)
		return EBUSY;
	/* No more asynchronous events are handed out for it. */
	shim_srq_remove(srq->ctx, srq);
	ret = shim_srq_engine_destroy(srq->ctx, srq->srqn);
	if (ret < 0) {
		if (shim_srq_insert(srq->ctx, srq) < 0)
			SHIM_LOG(ERR, "srq 0x%x: cannot restore after a failed destroy",
				 srq->srqn);
		return -ret;
	}
	/* Every asynchronous event delivered for it must have been acked. */
	pthread_mutex_lock(&ibsrq->mutex);
	while (ibsrq->events_completed != srq->async_delivered)
		pthread_cond_wait(&ibsrq->cond, &ibsrq->mutex);
	pthread_mutex_unlock(&ibsrq->mutex);

	if (srq->cq != NULL)
		rp_fetch_add(&srq->cq->nr_qp, UINT32_MAX);	/* -1 */
	pthread_cond_destroy(&ibsrq->cond);
	pthread_mutex_destroy(&ibsrq->mutex);
	shim_srq_free(srq);
	return 0;
}

int
shim_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct shim_srq *srq = shim_srq(ibsrq);

	return shim_wq_post_recv(&srq->wq, srq->max_sge, srq->ctx->dev, wr,
				 bad_wr);
}

int
shim_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	*srq_num = shim_srq(ibsrq)->srqn;
	return 0;
}

/* ------------------------------------------------ ibv_post_srq_ops() */

/* Take back the slots the engine freed.  Called under ops.lock. */
static void
shim_tm_reclaim(struct shim_srq *srq)
{
	/* A0: pairs with R0 in the engine's tm_slot_free(). */
	uint32_t prod = rp_load_acquire(&srq->free->prod);

	if (prod - srq->free_cons > srq->free_size) {
		/* Never trust the peer's index. */
		SHIM_LOG(ERR, "srq 0x%x: free ring index %u, ours %u",
			 srq->srqn, prod, srq->free_cons);
		return;
	}
	while (srq->free_cons != prod) {
		uint32_t idx = srq->free->idx[srq->free_cons &
					      (srq->free_size - 1)];

		srq->free_cons++;
		if (idx < srq->max_tags && srq->nr_stack < srq->max_tags)
			srq->stack[srq->nr_stack++] = idx;
	}
	/* R1: the entries are read before the engine reuses them. */
	rp_store_release(&srq->free->cons, srq->free_cons);
}

/* A handle for a new tag, or -ENOMEM.  Called under ops.lock. */
static int64_t
shim_tm_handle(struct shim_srq *srq)
{
	uint32_t idx;

	if (srq->nr_stack == 0)
		shim_tm_reclaim(srq);
	if (srq->nr_stack == 0)
		return -ENOMEM;
	idx = srq->stack[--srq->nr_stack];
	srq->gen[idx]++;
	return (int64_t)(idx | (uint32_t)srq->gen[idx] << 16);
}

/* Room for one more list operation: at most max_ops outstanding. */
static bool
shim_tm_op_room(struct shim_srq *srq)
{
	struct shim_wq *q = &srq->ops;

	if (q->prod - q->cons < srq->max_ops)
		return true;
	/* acquire: pairs with the engine's release of cons after its copy */
	q->cons = rp_load_acquire(&q->hdr->cons);
	return q->prod - q->cons < srq->max_ops;
}

static int
shim_tm_op_write(struct shim_srq *srq, struct ibv_ops_wr *op)
{
	struct rp_tm_op *o;
	int64_t h;

	if (op->flags & ~(uint32_t)(IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC))
		return EINVAL;
	switch (op->opcode) {
	case IBV_WR_TAG_ADD:
		if (op->tm.add.num_sge < 0 ||
		    (uint32_t)op->tm.add.num_sge > srq->ctx->ctl->tm_max_sge ||
		    (op->tm.add.num_sge > 0 && op->tm.add.sg_list == NULL))
			return EINVAL;
		break;
	case IBV_WR_TAG_DEL:
	case IBV_WR_TAG_SYNC:
		break;
	default:
		return EINVAL;
	}
	if (!shim_tm_op_room(srq))
		return ENOMEM;
	o = (struct rp_tm_op *)(srq->ops.ent + (size_t)(srq->ops.prod &
		(srq->ops.size - 1)) * srq->ops.stride);
	memset(o, 0, sizeof(*o));
	if (op->opcode == IBV_WR_TAG_ADD) {
		h = shim_tm_handle(srq);
		if (h < 0)
			return ENOMEM;	/* max_num_tags listed */
		op->tm.handle = (uint32_t)h;
		o->recv_wr_id = op->tm.add.recv_wr_id;
		o->tag = op->tm.add.tag;
		o->mask = op->tm.add.mask;
		o->num_sge = (uint16_t)op->tm.add.num_sge;
		if (op->tm.add.num_sge > 0) {
			o->sge.addr = op->tm.add.sg_list[0].addr;
			o->sge.length = op->tm.add.sg_list[0].length;
			o->sge.lkey = op->tm.add.sg_list[0].lkey;
		}
	}
	o->wr_id = op->wr_id;
	o->opcode = (uint8_t)op->opcode;
	o->flags = (uint8_t)op->flags;
	o->unexp_cnt = op->tm.unexpected_cnt;
	o->handle = op->tm.handle;
	srq->ops.prod++;
	return 0;
}

int
shim_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *op,
		  struct ibv_ops_wr **bad_op)
{
	struct shim_srq *srq = shim_srq(ibsrq);
	uint32_t first;
	bool posted;
	int ret = 0;

	if (!srq->tm) {
		*bad_op = op;
		return EOPNOTSUPP;
	}
	shim_lock(&srq->ops.lock);
	first = srq->ops.prod;
	for (; op != NULL; op = op->next) {
		ret = shim_tm_op_write(srq, op);
		if (ret != 0)
			break;
	}
	posted = srq->ops.prod != first;
	if (posted)
		/* release: the ops are written before the engine sees prod */
		rp_store_release(&srq->ops.hdr->prod, srq->ops.prod);
	shim_unlock(&srq->ops.lock);
	if (posted)
		shim_doorbell(srq->ctx->dev);
	if (ret != 0)
		*bad_op = op;
	return ret;
}
