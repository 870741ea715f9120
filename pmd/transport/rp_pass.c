/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pass over a QP, above its requester, responder and completer: the
 * doorbells that put QPs on the active list, a QP's step, and for a QP in
 * ERR its flush (an error is a state, recorded by rp_qp_error() below
 * them and flushed here, in order, as rxe does); sends drained before a
 * destroy.
 */

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_transport.h"
#include "rp_psn.h"
#include "rp_xmit.h"

/*
 * The doorbell bits rung since the last pass: their QPs join the active
 * list.  Only words up to the highest QP index in use, only arenas with
 * QPs: a few loads when nothing was posted.
 */
void
rp_qp_bells(struct rp_dev *dev)
{
	const struct rp_shard *sh = rp_sh(dev);
	bool all = dev->nr_shards == 1;
	uint32_t words = (dev->qp_hi + 63) / 64;

	for (uint32_t k = 0; k < dev->nr_bell_arenas; k++) {
		uint32_t arena = dev->bell_arena[k];
		uint64_t *bell = dev->arena[arena].bell;

		for (uint32_t w = 0; w < words; w++) {
			uint64_t bits;

			uint64_t own = all ? ~UINT64_C(0) : sh->bell_own[w];

			if ((rp_load_relaxed(&bell[w]) & own) == 0)
				continue;
			/* acquire: pairs with the poster's release of the
			 * bit, after its release of prod.  Several shards
			 * take only their own QPs' bits of a word. */
			bits = all ? __atomic_exchange_n(&bell[w], 0,
							 __ATOMIC_ACQUIRE) :
				__atomic_fetch_and(&bell[w], ~own,
						   __ATOMIC_ACQUIRE) & own;
			while (bits != 0) {
				struct rp_qp *qp =
					dev->qp[w * 64 + rte_bsf64(bits)];

				bits &= bits - 1;
				/* an arena rings its own QPs only */
				if (qp != NULL && qp->arena == arena)
					rp_qp_wake(qp);
			}
		}
	}
}

/* Nothing to do until a doorbell, a packet or a control request. */
static bool
qp_idle(const struct rp_qp *qp)
{
	return qp->comp.deadline == 0 && !qp->req.rnr_wait &&
		!qp->sqd_notify && !qp->req.inprog &&
		qp->req.head == qp->sq_prod && qp->comp.tail == qp->sq_prod &&
		!qp->resp.ack_owed && qp->resp.rd_tail == qp->resp.rd_head &&
		qp->resp.nak_held == RP_NAK_HELD_NONE;
}

/*
 * A QP's turn in the lcore's pass: requester, responder and retransmit
 * timer, or for a QP in error its flush.  *quiet: the step left it with
 * nothing to do, and it may leave the active list.
 */
bool
rp_qp_step(struct rp_qp *qp, uint64_t now, bool *quiet)
{
	bool busy;

	if (qp->flushing) {
		/* What the application posted since is flushed too. */
		rp_req_ingest(qp);
		busy = rp_qp_flush(qp);
		/* A NAK still owed for want of the peer's MAC. */
		busy |= rp_resp_step(qp);
		*quiet = !busy && !qp->resp.ack_owed;
		return busy;
	}
	/*
	 * Responder first: READ responses and ACKs still owed leave before
	 * the requests posted since, so the peer's completions (and the
	 * requests that answer them) do not wait behind ours.  Measured:
	 * +10 to 80 % 64 B SEND rate, on events and inline.
	 */
	busy = rp_resp_step(qp);
	busy |= rp_req_step(qp);
	if (qp->comp.deadline != 0 && now >= qp->comp.deadline)
		busy |= rp_comp_timer(qp, now);
	/* An error recorded in this pass is flushed in the next one: the
	 * lcore must not nap (or block) before it. */
	busy |= qp->flushing;
	*quiet = !qp->flushing && qp_idle(qp);
	return busy;
}

/*
 * The one flush path: complete what a QP holds, in order.  Busy if it
 * completed anything.
 *  - The message being received: an RQ WQE stays in the RQ (flushed with
 *    it below); one taken from an SRQ (or held by UC), or a tagged buffer,
 *    is the QP's to complete.
 *  - Send WQEs of the private ring from the completer's tail: the first
 *    with the status rp_qp_error() recorded, the rest with WR_FLUSH_ERR;
 *    internal ones through their owner's hook (which ends the rendezvous
 *    they serve).
 *  - `app`: the application's WQEs complete (ERR), RQ included; else
 *    (RESET, destroy) they go without completions, as ibv_modify_qp(3)
 *    says, and only what the QP borrowed is given back.
 */
bool
rp_qp_flush_wqes(struct rp_qp *qp, bool app)
{
	struct rp_rcv_state *r = &qp->resp.rcv;
	bool busy = false;

	if ((r->active && r->kind != RP_RCV_RQ) || r->held) {
		r->active = true;
		r->held = false;
		rp_cqe_recv(qp, NULL, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV,
			    r->offset);
		busy = true;
	}
	r->active = false;
	if (!app)
		qp->err_status = IBV_WC_WR_FLUSH_ERR;
	while (qp->comp.tail != qp->sq_prod) {
		uint32_t idx = qp->comp.tail++;

		if (app || rp_swqe(qp, idx)->internal)
			rp_cqe_send(qp, idx, qp->err_status);
		qp->err_status = IBV_WC_WR_FLUSH_ERR;
		busy = true;
	}
	qp->req.head = qp->req.hi = qp->comp.tail;
	qp->req.inprog = false;
	return busy;
}

/* At most this many packets go out as a QP is destroyed. */
#define RP_QP_DRAIN_PKTS	16384u
/* Passes without progress (the port's queue full) before giving up. */
#define RP_QP_DRAIN_STALLS	64u

/*
 * Destroying a UD or UC QP in RTS first sends the WQEs the application
 * posted: their completion says only that they are on the wire, and rxe
 * sends them before ibv_post_send returns (its requester runs in the
 * caller), so a program may post its datagrams and destroy the QP at once
 * (mckey -s -o).  Bounded: no answer is awaited, at most
 * RP_QP_DRAIN_PKTS packets, and a stalled port ends it.  RC's sends are
 * not sent: unacknowledged, nothing could retransmit or complete them
 * (IBTA: a destroyed QP's outstanding WQEs are lost; an application waits
 * for its completions, as rping and perftest do).  On the control path,
 * other shards paused: their QPs' packets leave from this lcore's queue.
 */
void
rp_qp_drain_unreliable(struct rp_qp *qp)
{
	uint32_t start = qp->req.psn, stalls = 0;

	if ((qp->type != IBV_QPT_UD && qp->type != IBV_QPT_UC) ||
	    qp->state != IBV_QPS_RTS || qp->flushing)
		return;
	while (!qp->flushing &&
	       (rp_req_ingest(qp) != 0 || qp->req.head != qp->sq_prod ||
		qp->req.inprog) &&
	       rp_psn_diff(qp->req.psn, start) < (int32_t)RP_QP_DRAIN_PKTS) {
		if (rp_req_step(qp))
			stalls = 0;
		else if (!rp_port_flush(rp_pq(qp->dev)) &&
			 ++stalls >= RP_QP_DRAIN_STALLS)
			break;
	}
	if (qp->req.head != qp->sq_prod || qp->req.inprog)
		RP_QP_LOG(rp_logtype, DEBUG, qp->qpn,
			  "%u send WQEs not sent before a destroy",
			  qp->sq_prod - qp->req.head);
	rp_port_flush(rp_pq(qp->dev));
}

/*
 * Before an address handle of PD @pdn goes: the UD sends posted through
 * it leave first (rxe and mlx5 copy the address into the WQE, so a
 * program may destroy the AH right after posting, as mckey does before
 * it destroys the QP).  Control path: a scan of the QP table.
 */
void
rp_qp_drain_pd(struct rp_dev *dev, uint32_t pdn)
{
	for (uint32_t i = 0; i < RP_MAX_QP; i++) {
		struct rp_qp *qp = dev->qp[i];

		if (qp != NULL && qp->type == IBV_QPT_UD && qp->pdn == pdn &&
		    (rp_load_acquire(&qp->sq->prod) != qp->app_ingest ||
		     qp->req.head != qp->sq_prod))
			rp_qp_drain_unreliable(qp);
	}
}

/*
 * The lcore, each pass over a QP in ERR (after it copied in what the
 * application posted since): complete everything outstanding, the RQ's
 * WQEs too.  Busy if any.
 */
bool
rp_qp_flush(struct rp_qp *qp)
{
	uint32_t rq_prod = rp_load_acquire(&qp->rq->prod);
	bool busy = rp_qp_flush_wqes(qp, true);

	if (qp->srq != NULL) {
		/*
		 * SRQ buffers are not the QP's to flush.  IBTA 11.6.3.1: the
		 * last WQE of the SRQ this QP will touch is done.
		 */
		if (!qp->last_wqe_sent) {
			qp->last_wqe_sent = true;
			rp_async_push(qp->dev, IBV_EVENT_QP_LAST_WQE_REACHED,
				      qp->qpn);
		}
		return busy;
	}
	if (rq_prod - qp->rq_cons > qp->rq_size)
		return busy;	/* corrupt index: nothing sane to flush */
	while (qp->rq_cons != rq_prod) {
		rp_cqe_rq_flush(qp);
		busy = true;
	}
	return busy;
}
