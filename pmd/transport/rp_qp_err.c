/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the requester, responder and completer reach on a QP, below them:
 * its lookup by number, the path MTU, the error state and its event, and
 * SQ drained.  Nothing here calls up into them: an error is recorded here
 * and flushed by the pass (rp_pass.c).
 */

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_transport.h"

#define RP_QPN_IDX(n)	((n) & (RP_MAX_QP - 1))

struct rp_qp *
rp_qp_get(struct rp_dev *dev, uint32_t qpn)
{
	struct rp_qp *qp = dev->qp[RP_QPN_IDX(qpn)];

	return qp != NULL && qp->qpn == qpn ? qp : NULL;
}

uint32_t
rp_mtu_bytes(uint32_t ibv_mtu)
{
	return ibv_mtu >= IBV_MTU_256 && ibv_mtu <= IBV_MTU_4096 ?
		128u << ibv_mtu : 0;
}

/*
 * Move a QP to ERR: record the state and, if the WQE at the completer's
 * tail failed (`status` not a flush), its status.  Nothing completes
 * here: the lcore's next pass over the QP flushes it (rp_qp_flush), in
 * order, starting with that WQE.  Only the first error counts.
 */
void
rp_qp_error(struct rp_qp *qp, uint32_t status)
{
	if (qp->flushing)
		return;
	RP_QP_LOG(rp_logtype, DEBUG, qp->qpn, "to ERR (status %u)", status);
	qp->state = IBV_QPS_ERR;
	qp->flushing = true;
	/*
	 * W0: pairs with W1 in the shim's shim_wq_post_recv().  Our store of
	 * post_wake, the fence, the flush's load of the RQ's prod (a later
	 * pass); the poster's store of prod, its fence, its load of
	 * post_wake.  Either the flush finds the receive or the poster rings.
	 */
	rp_store_relaxed(&qp->rq->post_wake, 1u);
	rp_fence_seq_cst();
	qp->comp.deadline = 0;
	rp_sr_flush(qp);	/* kept requests are executed no more */
	/* No WQE outstanding: the error is the QP's, no WQE's. */
	qp->err_status = qp->comp.tail != qp->sq_prod ? status :
		IBV_WC_WR_FLUSH_ERR;
	rp_qp_wake(qp);
}

/*
 * rp_qp_error() for an error the application did not ask for, reported by
 * an affiliated asynchronous event (IBV_EVENT_QP_FATAL for a local or
 * transport error, IBV_EVENT_QP_ACCESS_ERR for a responder class C error)
 * when the QP enters ERR, not again while it is there.
 */
void
rp_qp_error_event(struct rp_qp *qp, uint32_t status, uint32_t event)
{
	bool first = !qp->flushing;

	rp_qp_error(qp, status);
	if (first)
		rp_async_push(qp->dev, event, qp->qpn);
}

/*
 * SQD with en_sqd_async_notify: once no send WQE is outstanding (every
 * started one retired, the requester starts no new one in SQD), report
 * IBV_EVENT_SQ_DRAINED, once.
 */
void
rp_qp_sqd_check(struct rp_qp *qp)
{
	if (!qp->sqd_notify || qp->state != IBV_QPS_SQD)
		return;
	if (qp->comp.tail != qp->req.hi || qp->req.inprog)
		return;
	qp->sqd_notify = false;
	rp_async_push(qp->dev, IBV_EVENT_SQ_DRAINED, qp->qpn);
}
