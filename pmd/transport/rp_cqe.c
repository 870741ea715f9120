/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion builder: every CQE the engine posts is filled here, from the
 * work request it completes, and handed to rp_cq_post(), which only
 * publishes.  The completer, requester, responder, tag matcher and the
 * flush of a QP in ERR all complete through these functions, and none of
 * them through another: a completion's content has one author.
 *
 * What a QP does for someone else than its application (the internal
 * WQEs and tagged buffers of a TM-SRQ) completes through the hooks the
 * tag matcher installed (struct rp_qp_ops), so nothing here names it.
 */

#include <string.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_transport.h"

static uint32_t
wc_opcode(uint8_t wr_opcode)
{
	switch (wr_opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return IBV_WC_RDMA_WRITE;
	case IBV_WR_RDMA_READ:
		return IBV_WC_RDMA_READ;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return IBV_WC_COMP_SWAP;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return IBV_WC_FETCH_ADD;
	case IBV_WR_BIND_MW:
		return IBV_WC_BIND_MW;
	case IBV_WR_LOCAL_INV:
		return IBV_WC_LOCAL_INV;
	case IBV_WR_ATOMIC_WRITE:
		return IBV_WC_ATOMIC_WRITE;
	default:
		return IBV_WC_SEND;
	}
}

/*
 * Retire send WQE `idx` of the private ring with `status`: a CQE if it
 * is signaled or failed, nothing else if not; an internal WQE goes to
 * its owner's hook instead.
 */
void
rp_cqe_send(struct rp_qp *qp, uint32_t idx, uint32_t status)
{
	const struct rp_send_wqe *w = rp_sq_wqe(qp, idx);
	struct rp_swqe *s = rp_swqe(qp, idx);
	bool signaled = qp->sq_sig_all || (w->flags & RP_WQE_SIGNALED);
	struct rp_cqe cqe;

	s->state = RP_SWQE_DONE;
	if (s->internal) {
		qp->int_out--;
		if (qp->ops != NULL)
			qp->ops->wqe_done(qp, s, status);
		return;
	}
	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = w->wr_id;
	cqe.status = status;
	cqe.opcode = wc_opcode(w->opcode);
	cqe.qp_num = qp->qpn;
	/* What landed in the SGEs: READ data, an atomic's 8 bytes; an
	 * ATOMIC WRITE's 8 bytes sent (rxe reports the WQE's length). */
	if (status == IBV_WC_SUCCESS && rp_wr_is_rd_atomic(w->opcode))
		cqe.byte_len = s->length;
	/*
	 * Completions are in order: the application's slot of this WQE is
	 * free now, and must be before the CQE is seen (it may post again).
	 * R0: pairs with the shim's acquire of cons when its ring looks full.
	 */
	qp->app_cons++;
	rp_store_release(&qp->sq->cons, qp->app_cons);
	if (status == IBV_WC_SUCCESS && !signaled)
		return;
	rp_cq_left(qp->scq, qp->sq_prod - qp->comp.tail);
	rp_cq_post(qp->dev, qp->scq, &cqe);
}

/* The fields of a receive CQE the message's (last) packet gives. */
void
rp_cqe_from_pkt(struct rp_cqe *cqe, const struct rp_qp *qp,
		const struct rp_pkt *pkt)
{
	if (pkt->mask & RP_M_IMMDT) {
		cqe->imm_data = rp_pkt_imm(pkt);
		cqe->wc_flags |= IBV_WC_WITH_IMM;
	}
	if (pkt->mask & RP_M_IETH) {
		cqe->imm_data = rp_pkt_ieth_rkey(pkt);
		cqe->wc_flags |= IBV_WC_WITH_INV;
	}
	if (pkt->se)
		cqe->flags |= RP_CQE_SOLICITED;
	cqe->src_qp = qp->type == IBV_QPT_UD ? rp_pkt_deth_sqp(pkt) :
		qp->dest_qpn;
	cqe->pkey_index = 0;
}

/*
 * The message in qp->resp.rcv ended: placed in full (SUCCESS, `pkt` its
 * last packet) or not (an error status; pkt NULL when flushed).  Its
 * receive WQE completes; an RQ slot is given back first.
 */
void
rp_cqe_recv(struct rp_qp *qp, const struct rp_pkt *pkt, uint32_t status,
	    uint32_t opcode, uint32_t byte_len)
{
	struct rp_rcv_state *r = &qp->resp.rcv;
	struct rp_cqe cqe = {
		.wr_id = r->wqe.wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = qp->qpn,
	};

	/* On a TM-SRQ, SENDs are the tag matcher's to complete. */
	if (qp->ops != NULL && opcode == IBV_WC_RECV) {
		qp->ops->recv_done(qp, pkt, status);
		return;
	}
	r->active = false;
	if (r->kind == RP_RCV_RQ) {
		/* Free the slot before the CQE is seen: an application that
		 * polls it may post again at once, up to max_recv_wr.  (An
		 * SRQ slot was freed when it was taken.) */
		qp->rq_cons = r->idx + 1;
		rp_store_release(&qp->rq->cons, qp->rq_cons);
		/* the application's index: a wrong one only bounds less */
		rp_cq_left(qp->rcq, rp_load_relaxed(&qp->rq->prod) -
			   qp->rq_cons);
	}
	if (pkt != NULL && status == IBV_WC_SUCCESS) {
		/* UD: the GRH area holds the packet's IP header; wc.sl says
		 * which kind, as mlx5 reports it (UCX's ud_verbs reads it). */
		if (qp->type == IBV_QPT_UD) {
			cqe.wc_flags = IBV_WC_GRH;
			cqe.sl = RP_CQE_SL_ROCE_UDP | (pkt->ipver == 4 ?
				RP_CQE_SL_ROCE_IPV4 : RP_CQE_SL_ROCE_IPV6);
		}
		rp_cqe_from_pkt(&cqe, qp, pkt);
	}
	rp_cq_post(qp->dev, qp->rcq, &cqe);
}

/* Flush the RQ WQE at rq_cons (the caller checked there is one). */
void
rp_cqe_rq_flush(struct rp_qp *qp)
{
	const struct rp_recv_wqe *w = rp_rq_wqe(qp, qp->rq_cons);
	struct rp_cqe cqe = {
		.wr_id = rp_load_relaxed(&w->wr_id),
		.status = IBV_WC_WR_FLUSH_ERR,
		.opcode = IBV_WC_RECV,
		.qp_num = qp->qpn,
	};

	qp->rq_cons++;
	rp_store_release(&qp->rq->cons, qp->rq_cons);
	rp_cq_post(qp->dev, qp->rcq, &cqe);
}

/* ---------------------------------------------------- tag matching */

/* A TM CQE that names a tag slot: its buffer, tag and context. */
void
rp_cqe_tm_tag(struct rp_cqe *cqe, const struct rp_qp *qp,
	      const struct rp_tm_slot *slot)
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
void
rp_cqe_tm_data(struct rp_cqe *cqe, const struct rp_qp *qp,
	       const struct rp_tm_slot *slot)
{
	rp_cqe_tm_tag(cqe, qp, slot);
	cqe->wc_flags = IBV_WC_TM_DATA_VALID;
	cqe->tm_tag = 0;
	cqe->tm_priv = 0;
}

/* A message that went to an untagged SRQ buffer of a TM-SRQ. */
void
rp_cqe_tm_recv(struct rp_cqe *cqe, const struct rp_qp *qp, uint32_t status)
{
	const struct rp_rcv_state *r = &qp->resp.rcv;

	memset(cqe, 0, sizeof(*cqe));
	cqe->wr_id = r->wqe.wr_id;
	cqe->status = status;
	cqe->qp_num = qp->qpn;
	cqe->src_qp = qp->dest_qpn;
	cqe->byte_len = r->offset;
	/* Unexpected: no MATCH, tag 0, as mlx5 (TM-13). */
	cqe->opcode = r->kind == RP_RCV_SRQ_NO_TAG ? IBV_WC_TM_NO_TAG :
		IBV_WC_TM_RECV;
}

/* A list operation's CQE (ibv_post_srq_ops(3)), on the TM-SRQ's CQ. */
void
rp_cqe_tm_op(struct rp_srq *srq, uint64_t wr_id, uint32_t opcode,
	     uint32_t status, uint32_t wc_flags)
{
	struct rp_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
		.wc_flags = wc_flags,
	};

	rp_cq_post(srq->dev, srq->cq, &cqe);
}
