/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder: executes incoming requests.  RC: PSN check (duplicate,
 * in order, ahead), opcode sequence check, SEND into receive WQEs, RDMA
 * WRITE, READ, atomics and ATOMIC WRITE against rkeys (what READs and
 * atomics owe: rp_resp_rd.c), ACK/NAK generation.
 * UD: Q_Key check and delivery with the 40-byte GRH area.
 */

#include <string.h>

#include <rte_common.h>
#include <rte_ip.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_transport.h"
#include "rp_psn.h"
#include "rp_resp.h"
#include "rp_xmit.h"

/*
 * An ACK or NAK to send later, from rp_resp_step(): it replaces one owed
 * already, which it covers (ACKs are cumulative; a NAK's PSN is the
 * expected one, so it acknowledges everything before).
 */
static void
resp_owe_ack(struct rp_qp *qp, uint8_t syn, uint32_t psn)
{
	qp->resp.ack_owed = true;
	qp->resp.ack_syn = syn;
	qp->resp.ack_psn = psn;
}

/*
 * A positive ACK's credit count (IBTA 9.7.7.2): the receive WQEs posted
 * and not yet taken, rounded down to the AETH's code.  An SRQ's are
 * shared with other QPs: no count (C9-151), as for UC.  The producer
 * index is the application's: one beyond the ring says nothing.
 */
static uint8_t
resp_credit_code(struct rp_qp *qp)
{
	uint32_t posted;

	if (qp->srq != NULL || qp->type != IBV_QPT_RC || qp->rq == NULL)
		return RP_AETH_CREDIT_INVALID;
	posted = rp_load_acquire(&qp->rq->prod) - qp->rq_cons;
	if (posted > qp->rq_size)
		return RP_AETH_CREDIT_INVALID;
	/* the message being received holds the first of them */
	if (posted != 0 && qp->resp.rcv.active &&
	    qp->resp.rcv.kind == RP_RCV_RQ)
		posted--;
	return rp_aeth_credit_code(posted);
}

/*
 * An ACK sent now would let the requester start more messages that take a
 * receive than the last one did: the program posted receives since.
 */
static bool
resp_credits_grown(struct rp_qp *qp)
{
	uint8_t code = resp_credit_code(qp);

	return code != RP_AETH_CREDIT_INVALID &&
	       (int32_t)(qp->rq_cons + rp_aeth_credits(code) -
			 qp->resp.cred_lim) > 0;
}

/*
 * Send an ACK or NAK now, or, while the peer's MAC is unknown, owe it
 * (ARP is asked again on every responder step until it answers; a
 * duplicate request from the peer meanwhile only updates what is owed).
 * `map`: a selective NAK's map of the PSNs after it also missing, in the
 * MSN field (RP_BTH_NB), or RP_NAK_NO_MAP.
 */
static void
resp_send_aeth(struct rp_qp *qp, uint8_t syn, uint32_t psn, uint32_t map)
{
	struct rte_mbuf *m;
	uint8_t *bth;
	uint8_t sr = (psn & RP_ACK_SR ? RP_SR_ON : 0) |
		(psn & RP_ACK_SR_ONE ? RP_SR_ONE : 0);

	if (!rp_xmit_ready(qp)) {
		resp_owe_ack(qp, syn, psn);
		return;
	}
	/*
	 * Newer than anything owed, which it covers; but a NAK carries no
	 * credit count, and its requester keeps the last ACK's limit.  Under
	 * loss, a selective NAK (rp_sr.c) went in nearly every pass and took
	 * the place of the ACK owed, whose count alone told of the receives
	 * posted since: between two af_packet ports under 10 % loss, 64 B
	 * SENDs were held for credits 45,000-59,000 times in 100,000
	 * messages (credit_held), and their stalls drew probes
	 * (guides/congestion).  Such an ACK stays owed, and goes on the
	 * QP's step, after the NAK (a NAK owed while the MAC was unknown
	 * does not: this one covers it).  Toward a requester without
	 * selective retransmission (rxe, a NIC) nothing changes.
	 */
	if (!(sr != 0 && qp->resp.ack_owed &&
	      (syn & RP_AETH_TYPE_MASK) == RP_AETH_NAK &&
	      (qp->resp.ack_syn & RP_AETH_TYPE_MASK) == RP_AETH_ACK &&
	      resp_credits_grown(qp)))
		qp->resp.ack_owed = false;
	if (syn == RP_AETH_CREDIT_INVALID) {
		syn = resp_credit_code(qp);
		if (syn != RP_AETH_CREDIT_INVALID)
			qp->resp.cred_lim = qp->rq_cons +
				rp_aeth_credits(syn);
	}
	m = rp_xmit_alloc(qp, &qp->addr, qp->dest_qpn, RP_OP_ACK, 0, 0,
			  psn & RP_PSN_MASK, 0, &bth);
	if (m == NULL)
		return;
	if (sr != 0) {
		rp_bth_set_sr(bth, sr);
		rp_bth_set_rg(bth, qp->resp.rg_seen);
	}
	if (map != RP_NAK_NO_MAP)
		rp_bth_set_nb(bth);
	rp_aeth_set(rp_xmit_hdr(bth, RP_OP_ACK, RP_HDR_AETH), syn,
		    map != RP_NAK_NO_MAP ? map : qp->resp.msn);
	rp_xmit_send(qp, &qp->addr, m);
	rp_stat_inc(qp->dev, RP_STAT_TX_ACK);
}

/* Anything the responder sends goes after the selective NAK it holds
 * (rp_sr.c): PSN order. */
void
rp_resp_send_ack(struct rp_qp *qp, uint8_t syn, uint32_t psn)
{
	rp_sr_nak_flush(qp);
	resp_send_aeth(qp, syn, psn, RP_NAK_NO_MAP);
}

/* A selective NAK of `psn` (with RP_ACK_SR, RP_ACK_SR_ONE) and its map. */
void
rp_resp_send_nak_map(struct rp_qp *qp, uint32_t psn, uint32_t map)
{
	resp_send_aeth(qp, RP_AETH_NAK_PSN_SEQ, psn, map);
}

/*
 * Take the next receive WQE into qp->resp.rcv; false if there is none, or
 * if the application's ring is corrupt: then the QP is in ERR (the caller
 * tells by resp_no_rwqe()).
 */
static bool
resp_take_rwqe(struct rp_qp *qp)
{
	struct rp_rcv_state *r = &qp->resp.rcv;
	const struct rp_recv_wqe *w;
	uint32_t prod;

	if (qp->srq != NULL) {
		r->kind = RP_RCV_SRQ;
		/* UC: the WQE an aborted message took serves the next one. */
		if (r->held) {
			r->held = false;
			r->offset = 0;
			r->skip = 0;
			r->active = true;
			return true;
		}
		return rp_srq_take(qp->srq, r);
	}
	/* A0: pairs with the shim's release of the RQ producer index. */
	prod = rp_load_acquire(&qp->rq->prod);
	/* Untrusted: more than the ring holds is no index at all. */
	if (prod - qp->rq_cons > qp->rq_size) {
		RP_QP_LOG(rp_logtype_resp, ERR, qp->qpn,
			  "corrupt RQ producer index %u (consumed %u, size %u)",
			  prod, qp->rq_cons, qp->rq_size);
		rp_qp_error_event(qp, IBV_WC_WR_FLUSH_ERR, IBV_EVENT_QP_FATAL);
		return false;
	}
	if (prod == qp->rq_cons)
		return false;
	w = rp_rq_wqe(qp, qp->rq_cons);
	/* Copy before use: the application owns the ring memory. */
	memcpy(&r->wqe, w, sizeof(r->wqe));
	r->kind = RP_RCV_RQ;
	r->idx = qp->rq_cons;
	if (r->wqe.num_sge > qp->caps.max_recv_sge) {
		/* A malformed WQE: it completes in error, the QP with it. */
		RP_QP_LOG(rp_logtype_resp, ERR, qp->qpn,
			  "receive WQE %u has %u SGEs, max %u", r->idx,
			  r->wqe.num_sge, qp->caps.max_recv_sge);
		r->active = true;
		rp_cqe_recv(qp, NULL, IBV_WC_LOC_QP_OP_ERR, IBV_WC_RECV, 0);
		rp_qp_error_event(qp, IBV_WC_WR_FLUSH_ERR, IBV_EVENT_QP_FATAL);
		return false;
	}
	memcpy(r->sge, w + 1, sizeof(r->sge[0]) * r->wqe.num_sge);
	r->pdn = qp->pdn;
	r->offset = 0;
	r->skip = 0;
	r->active = true;
	return true;
}

/* No receive WQE taken: wait for one (RNR), or the ring was corrupt. */
static enum rp_resp_res
resp_no_rwqe(const struct rp_qp *qp)
{
	return qp->state == IBV_QPS_ERR ? RP_RESP_ERR_OP : RP_RESP_RNR;
}

/*
 * The SEND in qp->resp.rcv ended: placed in full (SUCCESS, at its last
 * packet) or not (an error status).
 */
static void
resp_rcv_finish(struct rp_qp *qp, const struct rp_pkt *pkt, uint32_t status)
{
	rp_cqe_recv(qp, pkt, status, IBV_WC_RECV, qp->resp.rcv.offset);
}

static enum rp_resp_res
resp_send(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	struct rp_rcv_state *r = &qp->resp.rcv;
	const uint8_t *pay = rp_pkt_payload(pkt);
	uint32_t len = pkt->paylen;
	uint32_t skip;
	int ret;

	if (pkt->mask & RP_M_FIRST) {
		if (qp->srq != NULL && qp->srq->tm != NULL) {
			/* Tag matching decides where the message goes. */
			if (rp_tm_recv_first(qp, pkt) < 0)
				return RP_RESP_RNR;
		} else if (!resp_take_rwqe(qp)) {
			return resp_no_rwqe(qp);
		}
	} else if (!r->active) {
		return RP_RESP_ERR_INV_REQ;
	}
	/* TM: the TMH of a matched message is not placed. */
	skip = RTE_MIN(r->skip, len);
	r->skip = 0;
	ret = rp_sge_copy_in_pkt(qp->dev, r->pdn, r->sge, r->wqe.num_sge,
				 r->offset, pay + skip, len - skip);
	if (ret != 0) {
		/*
		 * Too long for the buffer: the request's fault, class C, NAK
		 * "invalid request".  A bad lkey in the WQE: the responder's
		 * own (local protection), NAK "remote operational error", as
		 * rxe and mlx5 answer it (IBTA 9.7.5.2.8).
		 */
		resp_rcv_finish(qp, pkt, ret == -EMSGSIZE ?
				IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_PROT_ERR);
		return ret == -EMSGSIZE ? RP_RESP_ERR_INV_REQ : RP_RESP_ERR_OP;
	}
	r->offset += len - skip;
	if (pkt->mask & RP_M_LAST) {
		/* SEND with Invalidate: the key goes before the CQE says so. */
		if ((pkt->mask & RP_M_IETH) &&
		    rp_key_invalidate(qp, rp_pkt_ieth_rkey(pkt)) < 0)
			return RP_RESP_ERR_INV_REQ;
		resp_rcv_finish(qp, pkt, IBV_WC_SUCCESS);
		qp->resp.msn++;
	}
	return RP_RESP_OK;
}

static enum rp_resp_res
resp_write(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	uint32_t len = pkt->paylen;
	struct rp_mr *mr;
	int ret;

	if (pkt->mask & RP_M_FIRST) {
		uint64_t va = rp_pkt_reth_va(pkt);
		uint32_t dlen = rp_pkt_reth_len(pkt);

		/* An operation the QP does not enable is an invalid
		 * request, not an access violation (rxe's check_op_valid). */
		if (!(qp->access & IBV_ACCESS_REMOTE_WRITE))
			return RP_RESP_ERR_INV_REQ;
		if (dlen != 0 &&
		    rp_rkey_lookup(qp, rp_pkt_reth_rkey(pkt), va, dlen,
				   IBV_ACCESS_REMOTE_WRITE) == NULL)
			return RP_RESP_ERR_ACCESS;
		qp->resp.wr_rkey = rp_pkt_reth_rkey(pkt);
		qp->resp.wr_va = va;
		qp->resp.wr_left = dlen;
		qp->resp.wr_total = dlen;
	} else if (!(rp_opcode[qp->resp.last_op].mask & RP_M_WRITE)) {
		return RP_RESP_ERR_INV_REQ;
	}
	/* With immediate, a receive WQE is needed before writing anything. */
	if ((pkt->mask & RP_M_RWQE) && !qp->resp.rcv.active &&
	    !resp_take_rwqe(qp))
		return resp_no_rwqe(qp);
	if (len > qp->resp.wr_left)
		return RP_RESP_ERR_INV_REQ;
	if ((pkt->mask & RP_M_LAST) && len != qp->resp.wr_left)
		return RP_RESP_ERR_INV_REQ;
	if (len != 0) {
		/*
		 * Every packet against the MR as it is now: deregistered, or
		 * its slot taken by a new registration (another key) since
		 * the FIRST, the rest is refused.  Deregistration runs on
		 * this lcore, between packets: no lock needed.
		 */
		mr = rp_rkey_lookup(qp, qp->resp.wr_rkey, qp->resp.wr_va, len,
				    IBV_ACCESS_REMOTE_WRITE);
		if (mr == NULL)
			return RP_RESP_ERR_ACCESS;
		ret = rp_mem_write(qp->dev, mr, qp->resp.wr_va,
				   rp_pkt_payload(pkt), len, true);
		if (ret != 0)
			return resp_mem_res(ret);
		qp->resp.wr_va += len;
		qp->resp.wr_left -= len;
	}
	if (pkt->mask & RP_M_LAST) {
		if (pkt->mask & RP_M_IMMDT)
			rp_cqe_recv(qp, pkt, IBV_WC_SUCCESS,
				    IBV_WC_RECV_RDMA_WITH_IMM, qp->resp.wr_total);
		qp->resp.msn++;
	}
	return RP_RESP_OK;
}

/*
 * A positive ACK for `psn`, owed: the QP's step in the same pass sends
 * one ACK for the last request of the burst that asked for one (ACKs are
 * cumulative), after the READ responses queued for earlier requests,
 * which an ACK must not overtake (the requester would take it for an
 * implicit NAK of those READs and resend them).  Measured: 64 B SENDs
 * 1.2 to 1.6 times the rate on events, 1.7 to 2.2 times with inline
 * passes (guides/experiments_close_to_wire, issue 14).
 */
static void
resp_ack(struct rp_qp *qp, uint32_t psn)
{
	resp_owe_ack(qp, RP_AETH_CREDIT_INVALID, psn);
}

/* Everything up to the expected PSN, acknowledged on the QP's step. */
void
rp_resp_ack_now(struct rp_qp *qp)
{
	resp_ack(qp, rp_psn_add(qp->resp.epsn, RP_PSN_MASK));
}

/* Opcode sequence (IBTA 9.8.3.1): a FIRST must be followed by MIDDLEs
 * and a LAST of the same operation, and nothing else may interleave. */
static bool
resp_seq_ok(const struct rp_qp *qp, const struct rp_pkt *pkt)
{
	uint32_t prev = rp_opcode[qp->resp.last_op].mask;
	bool in_msg = (prev & (RP_M_FIRST | RP_M_MIDDLE)) &&
		!(prev & RP_M_LAST) && (prev & (RP_M_SEND | RP_M_WRITE));

	if (in_msg) {
		if (pkt->mask & RP_M_FIRST)
			return false;
		return (pkt->mask & prev & (RP_M_SEND | RP_M_WRITE)) != 0;
	}
	return (pkt->mask & RP_M_FIRST) != 0;
}

/* Payload size rules: FIRST and MIDDLE carry exactly one MTU. */
static bool
resp_len_ok(const struct rp_qp *qp, const struct rp_pkt *pkt)
{
	if (pkt->paylen > qp->mtu)
		return false;
	if ((pkt->mask & (RP_M_FIRST | RP_M_MIDDLE)) &&
	    !(pkt->mask & RP_M_LAST) && pkt->paylen != qp->mtu)
		return false;
	return true;
}

static void
resp_ud(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	struct rp_rcv_state *r = &qp->resp.rcv;
	uint8_t grh[RP_GRH_SIZE];
	int ret;

	if (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS &&
	    qp->state != IBV_QPS_SQD)
		return;
	/* C10-15: the Q_Key must match, else the datagram is dropped. */
	if (rp_pkt_deth_qkey(pkt) != qp->qkey) {
		rp_stat_inc(qp->dev, RP_STAT_RX_BAD_QKEY);
		return;
	}
	if (!resp_take_rwqe(qp)) {
		rp_stat_inc(qp->dev, RP_STAT_RX_NO_RWQE);
		return;
	}
	/* The GRH area: for RoCEv2 over IPv4 the IPv4 header sits in its
	 * last 20 bytes; over IPv6 it holds the IPv6 header.  wc.sl says
	 * which (RP_CQE_SL_ROCE_*, rp_cqe_recv). */
	memset(grh, 0, sizeof(grh));
	if (pkt->ipver == 4)
		memcpy(grh + 20, pkt->frame + pkt->l3_off, 20);
	else
		memcpy(grh, pkt->frame + pkt->l3_off, RP_GRH_SIZE);
	ret = rp_sge_copy_in(qp->dev, r->pdn, r->sge, r->wqe.num_sge, 0, grh,
			     RP_GRH_SIZE);
	if (ret == 0 && pkt->paylen != 0)
		ret = rp_sge_copy_in_pkt(qp->dev, r->pdn, r->sge,
					 r->wqe.num_sge, RP_GRH_SIZE,
					 rp_pkt_payload(pkt), pkt->paylen);
	if (ret != 0) {
		resp_rcv_finish(qp, pkt, ret == -EMSGSIZE ?
				IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_PROT_ERR);
		return;
	}
	rp_cqe_recv(qp, pkt, IBV_WC_SUCCESS, IBV_WC_RECV,
		    pkt->paylen + RP_GRH_SIZE);
}

static void
resp_fail(struct rp_qp *qp, const struct rp_pkt *pkt, enum rp_resp_res res)
{
	RP_QP_LOG(rp_logtype_resp, DEBUG, qp->qpn,
		  "op 0x%02x psn %u len %u: result %d (epsn %u last_op 0x%02x)",
		  pkt->opcode, pkt->psn, pkt->paylen, res, qp->resp.epsn,
		  qp->resp.last_op);
	switch (res) {
	case RP_RESP_RNR:
		rp_stat_inc(qp->dev, RP_STAT_TX_RNR_NAK);
		rp_resp_send_ack(qp, RP_AETH_RNR_NAK | qp->min_rnr_timer,
				 pkt->psn);
		break;
	case RP_RESP_GONE:
		/* No NAK: to the peer, as a QP destroyed a moment early
		 * (rp_serve destroys it when it hears of the death); the
		 * DREQ the process left (rp_gsi.c) tells it why. */
		rp_qp_error(qp, IBV_WC_WR_FLUSH_ERR);
		break;
	case RP_RESP_ERR_ACCESS:
		/* IBTA 9.9.3.1.3 class C: NAK, and the responder QP enters
		 * the error state too (as rxe does). */
		rp_resp_send_ack(qp, RP_AETH_NAK_REM_ACCESS, pkt->psn);
		rp_qp_error_event(qp, IBV_WC_WR_FLUSH_ERR,
				  IBV_EVENT_QP_ACCESS_ERR);
		break;
	case RP_RESP_ERR_INV_REQ:
	case RP_RESP_ERR_OP:
		rp_resp_send_ack(qp, res == RP_RESP_ERR_OP ?
				 RP_AETH_NAK_REM_OP : RP_AETH_NAK_INVALID_REQ,
				 pkt->psn);
		if (qp->resp.rcv.active)
			resp_rcv_finish(qp, pkt, IBV_WC_REM_INV_REQ_ERR);
		/* Invalid request: class C, as an access violation; a remote
		 * operational error is this QP's own failure. */
		rp_qp_error_event(qp, IBV_WC_WR_FLUSH_ERR,
				  res == RP_RESP_ERR_OP ? IBV_EVENT_QP_FATAL :
				  IBV_EVENT_QP_ACCESS_ERR);
		break;
	default:
		break;
	}
}

/*
 * The first request executed in RTR establishes the connection
 * (IBV_EVENT_COMM_EST, once: the application may then move to RTS).
 */
static void
resp_comm_est(struct rp_qp *qp)
{
	if (qp->state != IBV_QPS_RTR || qp->resp.comm_est)
		return;
	qp->resp.comm_est = true;
	rp_async_push(qp->dev, IBV_EVENT_COMM_EST, qp->qpn);
}

/*
 * Forget a message in progress: UC drops what a loss interrupted.  Its
 * receive WQE serves the next message: an RQ's stays in the RQ, an SRQ's
 * is held (it was already taken off the SRQ).
 */
static void
resp_uc_abort(struct rp_qp *qp)
{
	struct rp_rcv_state *r = &qp->resp.rcv;

	if (r->active && r->kind != RP_RCV_RQ)
		r->held = true;
	r->active = false;
	qp->resp.last_op = RP_OP_SEND_ONLY;
}

/*
 * UC (IBTA 9.8.4): no ACK, NAK or RNR.  A PSN gap or an invalid packet
 * drops the message in progress; the next FIRST or ONLY starts afresh.
 */
static void
resp_uc(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	enum rp_resp_res res;

	if (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS &&
	    qp->state != IBV_QPS_SQD && qp->state != IBV_QPS_SQE)
		return;
	if (pkt->psn != qp->resp.epsn) {
		rp_stat_inc(qp->dev, RP_STAT_RX_OUT_OF_SEQ);
		resp_uc_abort(qp);
	}
	qp->resp.epsn = rp_psn_add(pkt->psn, 1);
	if (!resp_seq_ok(qp, pkt) || !resp_len_ok(qp, pkt)) {
		resp_uc_abort(qp);
		return;
	}
	if (pkt->mask & RP_M_SEND)
		res = resp_send(qp, pkt);
	else
		res = resp_write(qp, pkt);
	if (res != RP_RESP_OK) {
		resp_uc_abort(qp);
		return;
	}
	qp->resp.last_op = pkt->opcode;
	resp_comm_est(qp);
}

void
rp_resp_input(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	int32_t d;

	if (qp->type == IBV_QPT_UD) {
		resp_ud(qp, pkt);
		return;
	}
	if (qp->type == IBV_QPT_UC) {
		resp_uc(qp, pkt);
		return;
	}
	if (qp->state != IBV_QPS_RTR && qp->state != IBV_QPS_RTS &&
	    qp->state != IBV_QPS_SQD && qp->state != IBV_QPS_SQE)
		return;

	/* A rocepmd requester with selective retransmission (rp_sr.c): as
	 * its latest request says. */
	qp->resp.peer_sr = (pkt->sr & (RP_SR_ON | RP_SR_ONE)) != 0;
	qp->resp.peer_nb = qp->resp.peer_sr && (pkt->sr & RP_SR_NB);
	if (pkt->rg != 0)
		qp->resp.rg_seen = pkt->rg;
	d = rp_psn_diff(pkt->psn, qp->resp.epsn);
	if (d > 0 && qp->sr != NULL && rp_sr_keep(qp, pkt, d)) {
		rp_stat_inc(qp->dev, RP_STAT_RX_OUT_OF_SEQ);
		if ((pkt->sr & RP_SR_ONE) && !(pkt->mask & RP_M_READ))
			rp_sr_report(qp, pkt->psn);	/* a tail probe */
		else if (!(pkt->mask & RP_M_READ) || !rp_sr_rd_early(qp, pkt))
			rp_sr_gaps(qp, pkt->psn);
		return;
	}
	if (d > 0) {
		/*
		 * C9-91: a gap: one sequence NAK, and the rest dropped.  Once
		 * more if the requester is seen going back (a PSN below the
		 * highest dropped since the NAK): it took the NAK and the
		 * resent epsn was lost again, which no later packet of its
		 * would report.
		 */
		rp_stat_inc(qp->dev, RP_STAT_RX_OUT_OF_SEQ);
		RP_DP_LOG(rp_logtype_resp, "qp 0x%06x: gap: psn %u epsn %u nak_sent %d",
			  qp->qpn, pkt->psn, qp->resp.epsn, qp->resp.nak_sent);
		/* After a selective NAK, a packet not kept: the requester
		 * must go back N for it (rp_sr.c). */
		if (!qp->resp.nak_sent || qp->resp.nak_sr ||
		    rp_psn_diff(pkt->psn, qp->resp.oos_psn) < 0) {
			qp->resp.nak_sent = true;
			qp->resp.nak_sr = false;
			qp->resp.oos_psn = pkt->psn;
			rp_stat_inc(qp->dev, RP_STAT_TX_NAK_SEQ);
			rp_resp_send_ack(qp, RP_AETH_NAK_PSN_SEQ, qp->resp.epsn);
		} else {
			qp->resp.oos_psn = pkt->psn;
		}
		return;
	}
	if (d < 0) {
		/* C9-98..C9-102: duplicates are ACKed; READs re-executed,
		 * atomics answered from the replay cache. */
		rp_stat_inc(qp->dev, RP_STAT_RX_DUP);
		if (pkt->mask & RP_M_READ)
			(void)rp_resp_read(qp, pkt, true);
		else if (pkt->mask & RP_M_ATOMIC)
			rp_resp_atomic_dup(qp, pkt);
		else if (pkt->mask & RP_M_ATOMIC_WRITE)
			(void)rp_resp_atomic_write(qp, pkt, true);
		else
			resp_ack(qp, rp_psn_add(qp->resp.epsn, RP_PSN_MASK));
		if (unlikely(pkt->sr & RP_SR_ONE) && qp->sr != NULL &&
		    qp->sr->n != 0 && !(pkt->mask & RP_M_READ))
			rp_sr_report(qp, pkt->psn);
		return;
	}
	if (rp_resp_execute(qp, pkt) && unlikely(qp->sr != NULL) &&
	    qp->sr->n != 0) {
		rp_sr_drain(qp);
		if (unlikely(pkt->sr & RP_SR_ONE) && qp->sr->n != 0 &&
		    !(pkt->mask & RP_M_READ))
			rp_sr_report(qp, pkt->psn);
	}
}

/* The request at the expected PSN done: the next is expected. */
static void
resp_done(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	qp->resp.last_op = pkt->opcode;
	qp->resp.epsn = rp_psn_add(qp->resp.epsn, 1);
	qp->resp.nak_sent = false;
	resp_comm_est(qp);
}

/*
 * A READ request kept past a gap and answered when it came
 * (rp_sr_rd_early()), whose turn has come: done as if executed now, the
 * expected PSN past its `npkts` responses', nothing sent again.
 */
void
rp_resp_read_passed(struct rp_qp *qp, const struct rp_pkt *pkt,
		    uint32_t npkts)
{
	qp->resp.epsn = rp_psn_add(pkt->psn, npkts - 1);
	qp->resp.msn++;
	resp_done(qp, pkt);
}

/*
 * Execute a request at the expected PSN (from the wire, or kept by
 * rp_sr.c); false if it failed (the QP's error or a NAK is on its way).
 */
bool
rp_resp_execute(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	enum rp_resp_res res;

	if (!resp_seq_ok(qp, pkt) || !resp_len_ok(qp, pkt)) {
		resp_fail(qp, pkt, RP_RESP_ERR_INV_REQ);
		return false;
	}
	if (pkt->mask & RP_M_SEND)
		res = resp_send(qp, pkt);
	else if (pkt->mask & RP_M_WRITE)
		res = resp_write(qp, pkt);
	else if (pkt->mask & RP_M_READ)
		res = rp_resp_read(qp, pkt, false);
	else if (pkt->mask & RP_M_ATOMIC_WRITE)
		res = rp_resp_atomic_write(qp, pkt, false);
	else
		res = rp_resp_atomic(qp, pkt);
	if (res != RP_RESP_OK) {
		resp_fail(qp, pkt, res);
		return false;
	}
	resp_done(qp, pkt);
	/* READs, atomics and ATOMIC WRITEs are acknowledged by their
	 * responses. */
	if (pkt->ackreq &&
	    !(pkt->mask & (RP_M_READ | RP_M_ATOMIC | RP_M_ATOMIC_WRITE)))
		resp_ack(qp, pkt->psn);
	return true;
}
