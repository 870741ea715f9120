/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues: creation with their shared ring, the SRQ limit
 * event, and taking a receive WQE for a message of any QP attached.
 * A TM-SRQ is one of these with tag matching built on it (rp_tm.c).
 */

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_transport.h"

#define RP_SRQN_IDX(n)	((n) & 0xffffu)

struct rp_srq *
rp_srq_get(struct rp_dev *dev, uint32_t srqn)
{
	struct rp_srq *srq;

	if (RP_SRQN_IDX(srqn) >= RP_MAX_SRQ)
		return NULL;
	srq = dev->srq[RP_SRQN_IDX(srqn)];
	return srq != NULL && srq->srqn == srqn ? srq : NULL;
}

static uint64_t
srq_bytes(const struct rp_srq *srq)
{
	return RP_WQ_HDR_SIZE + (uint64_t)srq->size * srq->stride;
}

static void
srq_free(struct rp_dev *dev, struct rp_srq *srq)
{
	if (srq->wq != NULL)
		rp_region_free(dev, srq->off, srq_bytes(srq));
	rte_free(srq);
}

int
rp_srq_create(struct rp_dev *dev, struct rp_ctrl_srq *c)
{
	struct rp_srq *srq;
	uint32_t idx;
	int64_t off;
	int ret;

	if (c->pdn >= RP_MAX_PD || !dev->pd_used[c->pdn])
		return -EINVAL;
	if (c->type != RP_SRQ_BASIC && c->type != RP_SRQ_TM)
		return -EOPNOTSUPP;
	if (c->max_wr == 0 || c->max_wr > RP_MAX_SRQ_WR ||
	    c->max_sge > RP_MAX_SGE || c->srq_limit > c->max_wr)
		return -EINVAL;
	for (idx = 0; idx < RP_MAX_SRQ; idx++)
		if (dev->srq[idx] == NULL)
			break;
	if (idx == RP_MAX_SRQ)
		return -ENOMEM;
	srq = rte_zmalloc("rp_srq", sizeof(*srq), RTE_CACHE_LINE_SIZE);
	if (srq == NULL)
		return -ENOMEM;
	srq->dev = dev;
	srq->idx = idx;
	srq->pdn = c->pdn;
	srq->size = rte_align32pow2(c->max_wr);
	srq->max_sge = RTE_MAX(c->max_sge, 1u);
	srq->stride = rte_align32pow2(RP_RECV_WQE_HDR +
				      srq->max_sge * (uint32_t)sizeof(struct rp_sge));
	srq->max_sge = (srq->stride - RP_RECV_WQE_HDR) /
		(uint32_t)sizeof(struct rp_sge);
	srq->max_sge = RTE_MIN(srq->max_sge, RP_MAX_SGE);
	srq->max_wr = srq->size;
	srq->limit = c->srq_limit;
	srq->arena = dev->cur_arena;
	off = rp_region_alloc(dev, srq_bytes(srq));
	if (off < 0) {
		ret = (int)off;
		goto err_free;
	}
	srq->off = off;
	srq->wq = rp_region_ptr(dev, off);
	srq->buf = (uint8_t *)srq->wq + RP_WQ_HDR_SIZE;

	/* 15 bits: an SRQN stays positive where the ABI's int32_t -1 is none */
	dev->srq_gen[idx] = (dev->srq_gen[idx] + 1) & 0x7fff;
	srq->srqn = idx | (uint32_t)dev->srq_gen[idx] << 16;
	dev->srq[idx] = srq;
	dev->pd_refs[srq->pdn]++;

	c->srqn = srq->srqn;
	c->max_wr = srq->max_wr;
	c->max_sge = srq->max_sge;
	c->size = srq->size;
	c->stride = srq->stride;
	c->off = srq->off;
	return 0;

err_free:
	srq_free(dev, srq);
	return ret;
}

int
rp_srq_modify(struct rp_dev *dev, struct rp_ctrl_srq *c)
{
	struct rp_srq *srq = rp_srq_get(dev, c->srqn);

	if (srq == NULL)
		return -EINVAL;
	if (c->attr_mask & ~(uint32_t)(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return -EINVAL;
	/* No resizing (as most providers): the ring is shared memory. */
	if (c->attr_mask & IBV_SRQ_MAX_WR)
		return -EINVAL;
	if (c->attr_mask & IBV_SRQ_LIMIT) {
		if (c->srq_limit > srq->max_wr)
			return -EINVAL;
		srq->limit = c->srq_limit;
	}
	return 0;
}

int
rp_srq_query(struct rp_dev *dev, struct rp_ctrl_srq *c)
{
	struct rp_srq *srq = rp_srq_get(dev, c->srqn);

	if (srq == NULL)
		return -EINVAL;
	c->max_wr = srq->max_wr;
	c->max_sge = srq->max_sge;
	c->srq_limit = srq->limit;
	return 0;
}

int
rp_srq_destroy(struct rp_dev *dev, struct rp_ctrl_srq *c)
{
	struct rp_srq *srq = rp_srq_get(dev, c->srqn);

	if (srq == NULL)
		return -EINVAL;
	if (srq->nr_qp != 0)
		return -EBUSY;
	dev->srq[srq->idx] = NULL;
	dev->pd_refs[srq->pdn]--;
	srq_free(dev, srq);
	return 0;
}

/*
 * The application's ring is corrupt: the SRQ is broken (IBV_EVENT_SRQ_ERR,
 * once) and gives nothing until the ring makes sense again.
 */
void
rp_srq_corrupt(struct rp_srq *srq, const char *what, uint32_t val)
{
	if (srq->err)
		return;
	srq->err = true;
	RP_LOG(ERR, "srq 0x%x: corrupt %s %u", srq->srqn, what, val);
	rp_async_push(srq->dev, IBV_EVENT_SRQ_ERR, srq->srqn);
}

/*
 * Take the next receive WQE of the SRQ into `r`; false if there is none.
 * The WQE is copied, so its slot is free at once: QPs sharing the SRQ
 * finish their messages in any order.
 */
bool
rp_srq_take(struct rp_srq *srq, struct rp_rcv_state *r)
{
	/* A0: pairs with the shim's release of prod after writing WQEs. */
	uint32_t prod = rp_load_acquire(&srq->wq->prod);
	const struct rp_recv_wqe *w;

	if (prod - srq->cons > srq->size) {
		rp_srq_corrupt(srq, "producer index", prod);
		return false;
	}
	if (prod == srq->cons)
		return false;
	w = (const struct rp_recv_wqe *)(srq->buf +
			(size_t)(srq->cons & (srq->size - 1)) * srq->stride);
	/* Copy before use: the application owns the ring memory. */
	memcpy(&r->wqe, w, sizeof(r->wqe));
	if (r->wqe.num_sge > srq->max_sge) {
		/* No QP is to blame for a WQE of a queue they share. */
		rp_srq_corrupt(srq, "WQE SGE count", r->wqe.num_sge);
		return false;
	}
	memcpy(r->sge, w + 1, sizeof(r->sge[0]) * r->wqe.num_sge);
	r->idx = srq->cons;
	r->pdn = srq->pdn;
	r->offset = 0;
	r->skip = 0;
	r->active = true;
	srq->cons++;
	/* R0: pairs with the shim's acquire of cons when its ring is full. */
	rp_store_release(&srq->wq->cons, srq->cons);
	/* IBTA 10.2.9.3: fire once when fewer than the limit remain. */
	if (srq->limit != 0 && prod - srq->cons < srq->limit) {
		srq->limit = 0;
		rp_async_push(srq->dev, IBV_EVENT_SRQ_LIMIT_REACHED, srq->srqn);
	}
	return true;
}
