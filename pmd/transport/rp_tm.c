/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * TM-SRQ: verbs tag matching on the engine lcore (ibv_post_srq_ops(3),
 * shared/spec/tag-matching.md).
 *
 *  - List operations arrive on a ring the application fills; ADD lists a
 *    tagged buffer in its slot, DEL unlists it (IBV_WC_TM_ERR if a message
 *    consumed it first), SYNC reports the software's unexpected count.
 *  - The first packet of every SEND to a QP on the TM-SRQ is matched by
 *    its TMH: EAGER data lands in the tagged buffer (MATCH, DATA_VALID),
 *    RNDV starts a READ of the sender's buffer on that QP and a FIN after
 *    it, anything unmatched goes to an untagged SRQ buffer as unexpected,
 *    NO_TAG and FIN as IBV_WC_TM_NO_TAG.
 *  - A tag slot goes back to the application (struct rp_tm_free) once no
 *    CQE will name it any more.
 *
 * Everything runs on the lcore that owns the device: no locks.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_malloc.h>

#include <infiniband/tm_types.h>
#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_transport.h"

/* Counts compare modulo 2^16, as the hardware counters of mlx5 do (TM-19). */
#define RP_TM_CNT(v)		((uint16_t)(v))
/* Unexpected messages software may lag behind before a SYNC is asked. */
#define RP_TM_SYNC_LAG		0x3fffu

static uint32_t rp_tm_serial;	/* unique rte_hash names (control path) */

static uint64_t
tm_ops_bytes(const struct rp_tm *tm)
{
	return RP_WQ_HDR_SIZE + (uint64_t)tm->ops_size * sizeof(struct rp_tm_op);
}

static uint64_t
tm_free_bytes(const struct rp_tm *tm)
{
	return RP_TM_FREE_HDR_SIZE + (uint64_t)tm->free_size * sizeof(uint32_t);
}

static void
tm_destroy(struct rp_srq *srq)
{
	struct rp_tm *tm = srq->tm;

	if (tm == NULL)
		return;
	if (tm->ops != NULL)
		rp_region_free(srq->dev, tm->ops_off, tm_ops_bytes(tm));
	if (tm->free != NULL)
		rp_region_free(srq->dev, tm->free_off, tm_free_bytes(tm));
	rp_tm_list_fini(&tm->list);
	rte_free(tm->slot);
	rte_free(tm);
	srq->tm = NULL;
}

static int
tm_create(struct rp_srq *srq, struct rp_ctrl_srq *c)
{
	struct rp_dev *dev = srq->dev;
	char name[32];
	struct rp_tm *tm;
	int64_t off;
	int ret;

	tm = rte_zmalloc("rp_tm", sizeof(*tm), RTE_CACHE_LINE_SIZE);
	if (tm == NULL)
		return -ENOMEM;
	srq->tm = tm;
	tm->max_tags = c->max_num_tags;
	tm->max_ops = c->max_ops;
	tm->ops_size = rte_align32pow2(c->max_ops);
	tm->free_size = rte_align32pow2(c->max_num_tags);
	tm->slot = rte_zmalloc("rp_tm_slot", sizeof(*tm->slot) * tm->max_tags,
			       RTE_CACHE_LINE_SIZE);
	if (tm->slot == NULL) {
		ret = -ENOMEM;
		goto err;
	}
	snprintf(name, sizeof(name), "rp_tm_%u_%u", dev->id, rp_tm_serial++);
	ret = rp_tm_list_init(&tm->list, tm->max_tags, name);
	if (ret < 0)
		goto err;
	off = rp_region_alloc(dev, tm_ops_bytes(tm));
	if (off < 0) {
		ret = (int)off;
		goto err;
	}
	tm->ops_off = off;
	tm->ops = rp_region_ptr(dev, off);
	tm->op = (struct rp_tm_op *)((uint8_t *)tm->ops + RP_WQ_HDR_SIZE);
	off = rp_region_alloc(dev, tm_free_bytes(tm));
	if (off < 0) {
		ret = (int)off;
		goto err;
	}
	tm->free_off = off;
	tm->free = rp_region_ptr(dev, off);

	c->max_num_tags = tm->max_tags;
	c->max_ops = tm->max_ops;
	c->ops_size = tm->ops_size;
	c->ops_off = tm->ops_off;
	c->free_size = tm->free_size;
	c->free_off = tm->free_off;
	return 0;

err:
	tm_destroy(srq);
	return ret;
}

static const struct rp_qp_ops rp_tm_qp_ops;

/*
 * A TM-SRQ: an SRQ (rp_srq.c), then the tag matcher's state on it, and
 * its hooks, which the QPs created on it take over.
 */
int
rp_tm_srq_create(struct rp_dev *dev, struct rp_ctrl_srq *c)
{
	struct rp_cq *cq = c->cqn >= 0 ? rp_cq_get(dev, (uint32_t)c->cqn) : NULL;
	struct rp_srq *srq;
	int ret;

	if (cq == NULL)
		return -EINVAL;	/* the CQ is mandatory (TM-2) */
	if (c->max_num_tags == 0 || c->max_num_tags > RP_TM_MAX_TAGS ||
	    c->max_ops == 0 || c->max_ops > RP_TM_MAX_OPS)
		return -EINVAL;
	ret = rp_srq_create(dev, c);
	if (ret < 0)
		return ret;
	srq = rp_srq_get(dev, c->srqn);
	ret = tm_create(srq, c);
	if (ret < 0) {
		rp_srq_destroy(dev, c);
		return ret;
	}
	srq->cq = cq;
	srq->ops = &rp_tm_qp_ops;
	cq->nr_qp++;	/* the CQ is in use while the SRQ is */
	dev->tm_srq[dev->nr_tm_srq++] = srq;
	return 0;
}

int
rp_tm_srq_destroy(struct rp_dev *dev, struct rp_ctrl_srq *c)
{
	struct rp_srq *srq = rp_srq_get(dev, c->srqn);

	if (srq == NULL || srq->tm == NULL)
		return rp_srq_destroy(dev, c);
	if (srq->nr_qp != 0)
		return -EBUSY;
	for (uint32_t i = 0; i < dev->nr_tm_srq; i++) {
		if (dev->tm_srq[i] == srq) {
			dev->tm_srq[i] = dev->tm_srq[--dev->nr_tm_srq];
			break;
		}
	}
	srq->cq->nr_qp--;
	tm_destroy(srq);
	return rp_srq_destroy(dev, c);
}

/* Give a tag slot back to the application. */
static void
tm_slot_free(struct rp_tm *tm, uint32_t idx)
{
	tm->slot[idx].state = RP_TAG_FREE;
	tm->free->idx[tm->free_prod & (tm->free_size - 1)] = idx;
	tm->free_prod++;
	/* R0: pairs with the shim's acquire of prod before it reads idx[]. */
	rp_store_release(&tm->free->prod, tm->free_prod);
}

static bool
tm_in_sync(const struct rp_tm *tm)
{
	return RP_TM_CNT(tm->sw_cnt) == RP_TM_CNT(tm->unexp);
}

/* ADD: list the buffer under its handle's slot. */
static uint32_t
tm_add(struct rp_srq *srq, const struct rp_tm_op *op, bool in_sync)
{
	struct rp_tm *tm = srq->tm;
	uint32_t idx = RP_TM_HANDLE_IDX(op->handle);
	struct rp_tm_slot *slot;

	if (idx >= tm->max_tags || tm->slot[idx].state != RP_TAG_FREE ||
	    op->num_sge > 1) {
		RP_LOG_RL(rp_logtype, ERR, "srq 0x%x: ADD with bad handle 0x%x",
			  srq->srqn, op->handle);
		return IBV_WC_GENERAL_ERR;
	}
	slot = &tm->slot[idx];
	if (rp_tm_list_add(&tm->list, idx, op->tag, op->mask, in_sync) < 0)
		return IBV_WC_GENERAL_ERR;
	slot->handle = op->handle;
	slot->state = RP_TAG_LISTED;
	slot->recv_wr_id = op->recv_wr_id;
	slot->num_sge = (uint8_t)op->num_sge;
	slot->sge = op->sge;
	if (op->num_sge == 0)
		slot->sge.length = 0;
	return IBV_WC_SUCCESS;
}

/* DEL: unlist, unless a message consumed the tag first (TM-8). */
static uint32_t
tm_del(struct rp_srq *srq, const struct rp_tm_op *op)
{
	struct rp_tm *tm = srq->tm;
	uint32_t idx = RP_TM_HANDLE_IDX(op->handle);

	if (idx >= tm->max_tags || tm->slot[idx].handle != op->handle ||
	    tm->slot[idx].state != RP_TAG_LISTED)
		return IBV_WC_TM_ERR;
	rp_tm_list_del(&tm->list, idx);
	tm_slot_free(tm, idx);
	return IBV_WC_SUCCESS;
}

static void
tm_op_exec(struct rp_srq *srq, const struct rp_tm_op *op)
{
	struct rp_tm *tm = srq->tm;
	uint32_t opcode, status;
	bool in_sync;

	/* Every op carries the software count: explicit or inherited (D1). */
	if (op->flags & IBV_OPS_TM_SYNC)
		tm->sw_cnt = op->unexp_cnt;
	in_sync = tm_in_sync(tm);
	if (in_sync)
		rp_tm_list_sync(&tm->list);
	switch (op->opcode) {
	case IBV_WR_TAG_ADD:
		opcode = IBV_WC_TM_ADD;
		status = tm_add(srq, op, in_sync);
		break;
	case IBV_WR_TAG_DEL:
		opcode = IBV_WC_TM_DEL;
		status = tm_del(srq, op);
		break;
	case IBV_WR_TAG_SYNC:
		opcode = IBV_WC_TM_SYNC;
		status = IBV_WC_SUCCESS;
		break;
	default:
		opcode = IBV_WC_TM_ADD;
		status = IBV_WC_GENERAL_ERR;
		break;
	}
	rp_stat_inc(srq->dev, RP_STAT_TM_OPS);
	/* Unsignalled ops complete silently, unless they fail. */
	if (!(op->flags & IBV_OPS_SIGNALED) && status == IBV_WC_SUCCESS)
		return;
	rp_cqe_tm_op(srq, op->wr_id, opcode, status,
		     in_sync ? 0 : IBV_WC_TM_SYNC_REQ);
}

/* Execute the list operations the application queued.  Busy if any. */
bool
rp_tm_ops_poll(struct rp_srq *srq)
{
	struct rp_tm *tm = srq->tm;
	/* A0: pairs with the shim's release of prod after writing ops. */
	uint32_t prod = rp_load_acquire(&tm->ops->prod);
	uint32_t n = 0;

	if (prod == tm->ops_cons)
		return false;
	if (prod - tm->ops_cons > tm->ops_size) {
		rp_srq_corrupt(srq, "op ring producer index", prod);
		return false;
	}
	while (tm->ops_cons != prod && n++ < RP_TM_OPS_BUDGET) {
		struct rp_tm_op op;

		/* Copy before use: the application owns the ring memory. */
		memcpy(&op, &tm->op[tm->ops_cons & (tm->ops_size - 1)],
		       sizeof(op));
		tm->ops_cons++;
		/* R1: pairs with the shim's acquire of cons: the slot is free
		 * before the op's CQE can be seen. */
		rp_store_release(&tm->ops->cons, tm->ops_cons);
		tm_op_exec(srq, &op);
	}
	return true;
}

/* ------------------------------------------------------------ receive */

/*
 * The headers of a message's first packet, copied out (the payload need
 * not be aligned), and its TMH opcode: NO_TAG if unusable (D5).
 */
static uint8_t
tmh_op(const struct rp_pkt *pkt, struct ibv_tmh *tmh, struct ibv_rvh *rvh)
{
	const uint8_t *p = rp_pkt_payload(pkt);

	memset(tmh, 0, sizeof(*tmh));
	memset(rvh, 0, sizeof(*rvh));
	if (pkt->paylen < RP_TMH_SIZE)
		return IBV_TMH_NO_TAG;
	/*
	 * The reserved bytes are not checked: mlx5 ignores them, and
	 * rdma-core's own test sends them non-zero.
	 */
	memcpy(tmh, p, sizeof(*tmh));
	switch (tmh->opcode) {
	case IBV_TMH_EAGER:
	case IBV_TMH_FIN:
		return tmh->opcode;
	case IBV_TMH_RNDV:
		/* A rendezvous request needs its RVH. */
		if (pkt->paylen < RP_TMH_SIZE + RP_RVH_SIZE)
			return IBV_TMH_NO_TAG;
		memcpy(rvh, p + RP_TMH_SIZE, sizeof(*rvh));
		return IBV_TMH_RNDV;
	default:
		return IBV_TMH_NO_TAG;
	}
}

/* A rendezvous matched: READ the sender's buffer into the tagged one. */
static void
tm_rndv_start(struct rp_qp *qp, uint32_t idx, const struct ibv_tmh *tmh,
	      const struct ibv_rvh *rvh)
{
	struct rp_tm_slot *slot = &qp->srq->tm->slot[idx];
	struct rp_send_wqe w = {
		.opcode = IBV_WR_RDMA_READ,
		.num_sge = 1,
		.remote_addr = rte_be_to_cpu_64(rvh->va),
		.rkey = rte_be_to_cpu_32(rvh->rkey),
		.length = rte_be_to_cpu_32(rvh->len),
	};
	struct rp_sge sge = {
		.addr = slot->sge.addr,
		.length = w.length,
		.lkey = slot->sge.lkey,
	};
	struct rp_rndv *rv = NULL;
	uint32_t i;

	for (i = 0; i < RP_TM_RNDV_PER_QP; i++) {
		if (!qp->rndv[i].busy) {
			rv = &qp->rndv[i];
			break;
		}
	}
	/* rp_tm_recv_first() checked nr_rndv: a free entry exists. */
	RTE_VERIFY(rv != NULL);
	rv->busy = true;
	rv->fin = false;
	rv->tag = idx;
	rv->len = w.length;
	memcpy(rv->hdr, tmh, RP_TMH_SIZE);
	memcpy(rv->hdr + RP_TMH_SIZE, rvh, RP_RVH_SIZE);
	qp->nr_rndv++;
	/* The reserve holds one internal WQE per rendezvous: cannot fail. */
	RTE_VERIFY(rp_req_post_internal(qp, &w, &sge, sizeof(sge),
					qp->srq->pdn, i) == 0);
	rp_stat_inc(qp->dev, RP_STAT_TM_RNDV);
}

/*
 * First packet of a SEND on a TM-SRQ: decide where the message goes and
 * set up qp->resp.rcv for it.  -EAGAIN: no buffer (or no rendezvous
 * room) now; the caller answers with an RNR NAK and nothing changed.
 */
int
rp_tm_recv_first(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	struct rp_srq *srq = qp->srq;
	struct rp_tm *tm = srq->tm;
	struct rp_rcv_state *r = &qp->resp.rcv;
	struct ibv_tmh tmh;
	struct ibv_rvh rvh;
	uint8_t op = tmh_op(pkt, &tmh, &rvh);
	bool only = (pkt->mask & RP_M_ONLY) == RP_M_ONLY;
	struct rp_tm_slot *slot;
	struct rp_cqe cqe;
	uint32_t idx;

	r->tm_rndv = false;
	r->tm_incomplete = false;
	r->tm_match_sent = false;
	if (op == IBV_TMH_NO_TAG || op == IBV_TMH_FIN) {
		/* Never matched, never unexpected (TM-11). */
		if (!rp_srq_take(srq, r))
			return -EAGAIN;
		r->kind = RP_RCV_SRQ_NO_TAG;
		rp_stat_inc(qp->dev, RP_STAT_TM_NO_TAG);
		return 0;
	}
	idx = rp_tm_list_match(&tm->list, rte_be_to_cpu_64(tmh.tag));
	/* A rendezvous is offloaded only as one packet, with room for it. */
	if (idx != RP_TM_NONE && op == IBV_TMH_RNDV &&
	    (!only || qp->nr_rndv >= RP_TM_RNDV_PER_QP)) {
		if (only)
			return -EAGAIN;
		idx = RP_TM_NONE;
	}
	if (idx == RP_TM_NONE) {
		/* Unexpected: the whole message, headers too (TM-13). */
		if (!rp_srq_take(srq, r))
			return -EAGAIN;
		r->kind = RP_RCV_SRQ;
		tm->unexp++;
		rp_stat_inc(qp->dev, RP_STAT_TM_UNEXPECTED);
		return 0;
	}

	slot = &tm->slot[idx];
	rp_tm_list_del(&tm->list, idx);
	slot->state = RP_TAG_BUSY;
	slot->tag = rte_be_to_cpu_64(tmh.tag);
	slot->priv = rte_be_to_cpu_32(tmh.app_ctx);
	rp_stat_inc(qp->dev, RP_STAT_TM_MATCHED);
	r->kind = RP_RCV_TAG;
	r->idx = idx;
	r->wqe.wr_id = slot->recv_wr_id;
	r->wqe.num_sge = slot->num_sge;
	r->sge[0] = slot->sge;
	r->pdn = srq->pdn;
	r->offset = 0;
	r->skip = RP_TMH_SIZE;
	r->active = true;
	if (op == IBV_TMH_RNDV) {
		if (rte_be_to_cpu_32(rvh.len) > slot->sge.length) {
			/* Too big: software finishes it from the request. */
			r->tm_incomplete = true;
			r->skip = 0;
			return 0;
		}
		r->tm_rndv = true;
		r->skip = pkt->paylen;	/* the READ brings the data */
		rp_cqe_tm_tag(&cqe, qp, slot);
		cqe.wc_flags = IBV_WC_TM_MATCH;
		rp_cq_post(qp->dev, qp->rcq, &cqe);
		tm_rndv_start(qp, idx, &tmh, &rvh);
		return 0;
	}
	if (!only) {
		/* D2: report the match now, DATA_VALID when all is placed. */
		rp_cqe_tm_tag(&cqe, qp, slot);
		cqe.wc_flags = IBV_WC_TM_MATCH;
		rp_cq_post(qp->dev, qp->rcq, &cqe);
		r->tm_match_sent = true;
	}
	return 0;
}

/*
 * The message in qp->resp.rcv ended: placed in full (status SUCCESS, at
 * its last packet) or not (an error status; pkt NULL when flushed).
 * The recv_done hook (rp_cqe_recv).
 */
static void
tm_recv_done(struct rp_qp *qp, const struct rp_pkt *pkt, uint32_t status)
{
	struct rp_rcv_state *r = &qp->resp.rcv;
	struct rp_tm *tm = qp->srq->tm;
	struct rp_cqe cqe;

	r->active = false;
	if (r->kind == RP_RCV_TAG) {
		struct rp_tm_slot *slot = &tm->slot[r->idx];

		/* The READ in flight owns the slot now (tm_rndv_start). */
		if (r->tm_rndv)
			return;
		rp_cqe_tm_tag(&cqe, qp, slot);
		cqe.status = status;
		cqe.byte_len = r->offset;
		if (status == IBV_WC_SUCCESS) {
			if (r->tm_incomplete) {
				cqe.status = IBV_WC_TM_RNDV_INCOMPLETE;
				cqe.wc_flags = IBV_WC_TM_MATCH;
			} else if (r->tm_match_sent) {
				rp_cqe_tm_data(&cqe, qp, slot);
				cqe.byte_len = r->offset;
			} else {
				cqe.wc_flags = IBV_WC_TM_MATCH |
					IBV_WC_TM_DATA_VALID;
			}
		}
		/* Free before the CQE is seen: the slot may be reused then. */
		tm_slot_free(tm, r->idx);
	} else {
		rp_cqe_tm_recv(&cqe, qp, status);
		if (r->kind != RP_RCV_SRQ_NO_TAG &&
		    tm->unexp - tm->sw_cnt > RP_TM_SYNC_LAG)
			cqe.wc_flags |= IBV_WC_TM_SYNC_REQ;
	}
	if (pkt != NULL && status == IBV_WC_SUCCESS)
		rp_cqe_from_pkt(&cqe, qp, pkt);
	rp_cq_post(qp->dev, qp->rcq, &cqe);
}

/* ---------------------------------------------------------- rendezvous */

static void
tm_rndv_fail(struct rp_qp *qp, struct rp_rndv *rv, uint32_t status)
{
	struct rp_tm *tm = qp->srq->tm;
	struct rp_cqe cqe;

	rp_cqe_tm_tag(&cqe, qp, &tm->slot[rv->tag]);
	cqe.status = status;
	tm_slot_free(tm, rv->tag);
	rv->busy = false;
	qp->nr_rndv--;
	rp_cq_post(qp->dev, qp->rcq, &cqe);
}

/*
 * An internal WQE of the QP retired, or was flushed: the wqe_done hook
 * (rp_cqe_send).  Every rendezvous in flight has one (its READ, then its
 * FIN), so the flush of the send queue ends every rendezvous too.
 */
static void
tm_wqe_done(struct rp_qp *qp, const struct rp_swqe *s, uint32_t status)
{
	struct rp_rndv *rv;
	struct rp_tm *tm;
	struct rp_cqe cqe;

	if (qp->rndv == NULL || s->cookie >= RP_TM_RNDV_PER_QP)
		return;
	rv = &qp->rndv[s->cookie];
	if (!rv->busy)
		return;
	if (rv->fin) {
		/* FIN delivered (or flushed): the rendezvous is over. */
		rv->busy = false;
		qp->nr_rndv--;
		return;
	}
	if (status != IBV_WC_SUCCESS) {
		tm_rndv_fail(qp, rv, status);
		return;
	}
	/* Data placed: FIN to the sender (TMH and RVH, opcode FIN), then
	 * DATA_VALID (TM-14). */
	{
		struct rp_send_wqe fw = {
			.opcode = IBV_WR_SEND,
			.flags = RP_WQE_INLINE,
			.length = sizeof(rv->hdr),
		};
		uint8_t fin[sizeof(rv->hdr)];

		memcpy(fin, rv->hdr, sizeof(fin));
		fin[0] = IBV_TMH_FIN;	/* struct ibv_tmh.opcode */
		rv->fin = true;
		if (rp_req_post_internal(qp, &fw, fin, sizeof(fin), qp->pdn,
					 s->cookie) != 0) {
			/* The READ's slot just retired: cannot happen. */
			RP_QP_LOG(rp_logtype, ERR, qp->qpn, "no room for a FIN");
			rv->busy = false;
			qp->nr_rndv--;
		}
	}
	tm = qp->srq->tm;
	rp_cqe_tm_data(&cqe, qp, &tm->slot[rv->tag]);
	cqe.byte_len = rv->len;
	tm_slot_free(tm, rv->tag);
	rp_cq_post(qp->dev, qp->rcq, &cqe);
}

static const struct rp_qp_ops rp_tm_qp_ops = {
	.wqe_done = tm_wqe_done,
	.recv_done = tm_recv_done,
};
