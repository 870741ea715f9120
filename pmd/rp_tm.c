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
#include "rp_obj.h"

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

void
rp_tm_destroy(struct rp_srq *srq)
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

int
rp_tm_create(struct rp_srq *srq, struct rp_ctrl_srq *c)
{
	struct rp_dev *dev = srq->dev;
	char name[32];
	struct rp_tm *tm;
	int64_t off;
	int ret;

	if (c->max_num_tags == 0 || c->max_num_tags > RP_TM_MAX_TAGS ||
	    c->max_ops == 0 || c->max_ops > RP_TM_MAX_OPS)
		return -EINVAL;
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
	rp_tm_destroy(srq);
	return ret;
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
	struct rp_cqe cqe = { .wr_id = op->wr_id };
	bool in_sync;

	/* Every op carries the software count: explicit or inherited (D1). */
	if (op->flags & IBV_OPS_TM_SYNC)
		tm->sw_cnt = op->unexp_cnt;
	in_sync = tm_in_sync(tm);
	if (in_sync)
		rp_tm_list_sync(&tm->list);
	switch (op->opcode) {
	case IBV_WR_TAG_ADD:
		cqe.opcode = IBV_WC_TM_ADD;
		cqe.status = tm_add(srq, op, in_sync);
		break;
	case IBV_WR_TAG_DEL:
		cqe.opcode = IBV_WC_TM_DEL;
		cqe.status = tm_del(srq, op);
		break;
	case IBV_WR_TAG_SYNC:
		cqe.opcode = IBV_WC_TM_SYNC;
		cqe.status = IBV_WC_SUCCESS;
		break;
	default:
		cqe.opcode = IBV_WC_TM_ADD;
		cqe.status = IBV_WC_GENERAL_ERR;
		break;
	}
	rp_stat_inc(srq->dev, RP_STAT_TM_OPS);
	/* Unsignalled ops complete silently, unless they fail. */
	if (!(op->flags & IBV_OPS_SIGNALED) && cqe.status == IBV_WC_SUCCESS)
		return;
	if (!in_sync)
		cqe.wc_flags |= IBV_WC_TM_SYNC_REQ;
	rp_cq_post(srq->dev, srq->cq, &cqe);
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

static void
tm_cqe_match(const struct rp_qp *qp, const struct rp_tm_slot *slot,
	     struct rp_cqe *cqe)
{
	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = slot->recv_wr_id;
	cqe->status = IBV_WC_SUCCESS;
	cqe->opcode = IBV_WC_TM_RECV;
	cqe->qp_num = qp->qpn;
	cqe->src_qp = qp->dest_qpn;
	cqe->tm_tag = slot->tag;
	cqe->tm_priv = slot->priv;
}

/*
 * The second CQE of a two-CQE match: DATA_VALID alone, and no tag (the
 * MATCH CQE gave it; mlx5 and rdma-core's test report 0 here).
 */
static void
tm_cqe_data(const struct rp_qp *qp, const struct rp_tm_slot *slot,
	    struct rp_cqe *cqe)
{
	tm_cqe_match(qp, slot, cqe);
	cqe->wc_flags = IBV_WC_TM_DATA_VALID;
	cqe->tm_tag = 0;
	cqe->tm_priv = 0;
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
		tm_cqe_match(qp, slot, &cqe);
		cqe.wc_flags = IBV_WC_TM_MATCH;
		rp_cq_post(qp->dev, qp->rcq, &cqe);
		tm_rndv_start(qp, idx, &tmh, &rvh);
		return 0;
	}
	if (!only) {
		/* D2: report the match now, DATA_VALID when all is placed. */
		tm_cqe_match(qp, slot, &cqe);
		cqe.wc_flags = IBV_WC_TM_MATCH;
		rp_cq_post(qp->dev, qp->rcq, &cqe);
		r->tm_match_sent = true;
	}
	return 0;
}

/*
 * The message in qp->resp.rcv ended: placed in full (status SUCCESS, at
 * its last packet) or not (an error status; pkt may be NULL).
 */
void
rp_tm_recv_done(struct rp_qp *qp, const struct rp_pkt *pkt, uint32_t status)
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
		tm_cqe_match(qp, slot, &cqe);
		cqe.status = status;
		cqe.byte_len = r->offset;
		if (status == IBV_WC_SUCCESS) {
			if (r->tm_incomplete) {
				cqe.status = IBV_WC_TM_RNDV_INCOMPLETE;
				cqe.wc_flags = IBV_WC_TM_MATCH;
			} else if (r->tm_match_sent) {
				tm_cqe_data(qp, slot, &cqe);
				cqe.byte_len = r->offset;
			} else {
				cqe.wc_flags = IBV_WC_TM_MATCH |
					IBV_WC_TM_DATA_VALID;
			}
		}
		/* Free before the CQE is seen: the slot may be reused then. */
		tm_slot_free(tm, r->idx);
	} else {
		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = r->wqe.wr_id;
		cqe.status = status;
		cqe.qp_num = qp->qpn;
		cqe.src_qp = qp->dest_qpn;
		cqe.byte_len = r->offset;
		if (r->kind == RP_RCV_SRQ_NO_TAG) {
			cqe.opcode = IBV_WC_TM_NO_TAG;
		} else {
			/* Unexpected: no MATCH, tag 0, as mlx5 (TM-13). */
			cqe.opcode = IBV_WC_TM_RECV;
			if (tm->unexp - tm->sw_cnt > RP_TM_SYNC_LAG)
				cqe.wc_flags |= IBV_WC_TM_SYNC_REQ;
		}
	}
	if (pkt != NULL && status == IBV_WC_SUCCESS)
		rp_resp_cqe_from_pkt(&cqe, qp, pkt);
	rp_cq_post(qp->dev, qp->rcq, &cqe);
}

/* ---------------------------------------------------------- rendezvous */

static void
tm_rndv_fail(struct rp_qp *qp, struct rp_rndv *rv, uint32_t status)
{
	struct rp_tm *tm = qp->srq->tm;
	struct rp_cqe cqe;

	tm_cqe_match(qp, &tm->slot[rv->tag], &cqe);
	cqe.status = status;
	tm_slot_free(tm, rv->tag);
	rv->busy = false;
	qp->nr_rndv--;
	rp_cq_post(qp->dev, qp->rcq, &cqe);
}

/* An internal WQE of the QP retired (rp_comp_send_cqe). */
void
rp_tm_wqe_done(struct rp_qp *qp, const struct rp_send_wqe *w,
	       const struct rp_swqe *s, uint32_t status)
{
	struct rp_rndv *rv;
	struct rp_tm *tm;
	struct rp_cqe cqe;

	RTE_SET_USED(w);
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
	tm_cqe_data(qp, &tm->slot[rv->tag], &cqe);
	cqe.byte_len = rv->len;
	tm_slot_free(tm, rv->tag);
	rp_cq_post(qp->dev, qp->rcq, &cqe);
}

/* The QP drops its queues (RESET, destroy): end every rendezvous. */
void
rp_tm_qp_abort(struct rp_qp *qp, uint32_t status)
{
	if (qp->rndv == NULL)
		return;
	for (uint32_t i = 0; i < RP_TM_RNDV_PER_QP; i++) {
		struct rp_rndv *rv = &qp->rndv[i];

		if (!rv->busy)
			continue;
		if (rv->fin) {
			rv->busy = false;
			qp->nr_rndv--;
		} else {
			tm_rndv_fail(qp, rv, status);
		}
	}
}
