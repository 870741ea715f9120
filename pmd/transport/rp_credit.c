/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * End-to-end credits (IBTA 9.7.7.2), both ends.
 *
 * A responder's positive ACK says how many receive WQEs are posted
 * (rp_credit_code()); a requester sends no message that takes one beyond
 * that count (rp_req.c).  When it has used them all and everything is
 * acknowledged, no ACK will come to say more: IBTA lets it send one
 * message anyway (the "limited WQE"), which the responder answers with an
 * RNR NAK if the application has still posted nothing, and the requester
 * then waits the RNR timer (640 us at perftest's and testpmd's
 * min_rnr_timer 12) and sends again.  A receiver that reposts a little
 * later than its peer sends, on events say, paid one RNR NAK and a
 * resend every few hundred messages: ~540 in 3 s of 64 B send_bw between
 * the two hosts, on a lossless link.
 *
 * So the two ends meet half way:
 *  - a responder whose ACK said "none posted" watches its receive queue
 *    for RP_CREDIT_WATCH_US, and when the application has posted
 *    RP_CREDIT_BATCH WQEs, or fewer that one more pass did not add to
 *    (a program that posts one at a time), sends the ACK again,
 *    with the new count: a duplicate ACK of the last PSN, which changes
 *    nothing but the count for a requester and is dropped by one that
 *    takes no counts (rxe);
 *  - a requester out of credits with nothing unacknowledged waits
 *    RP_CREDIT_WAIT_US for that count before it sends the limited WQE.
 * A peer that sends no such update costs the wait once per stall, against
 * an RNR NAK's timer and resend; a peer that gives no counts (rxe, an
 * SRQ) is not limited at all.
 */

#include <rte_cycles.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_transport.h"
#include "rp_psn.h"

/* The responder watches its queue this long after announcing zero: a
 * step per pass for a QP that is otherwise quiet. */
#define RP_CREDIT_WATCH_US	10000u
/* ... and says more once this many are posted (or its whole queue). */
#define RP_CREDIT_BATCH		8u
/* The requester waits this long for that before the limited WQE. */
#define RP_CREDIT_WAIT_US	100u

static inline uint64_t
credit_us(uint32_t us)
{
	return rte_get_timer_hz() / 1000000u * us;
}

/* Receive WQEs posted and not taken, or -1 if the count means nothing. */
static int64_t
credit_posted(struct rp_qp *qp)
{
	uint32_t posted;

	if (qp->srq != NULL || qp->type != IBV_QPT_RC || qp->rq == NULL)
		return -1;
	/* A0: pairs with the shim's release of the RQ producer index; the
	 * index is the application's: one beyond the ring says nothing. */
	posted = rp_load_acquire(&qp->rq->prod) - qp->rq_cons;
	if (posted > qp->rq_size)
		return -1;
	/* the message being received holds the first of them */
	if (posted != 0 && qp->resp.rcv.active &&
	    qp->resp.rcv.kind == RP_RCV_RQ)
		posted--;
	return posted;
}

/*
 * A positive ACK's credit count: the receive WQEs posted and not yet
 * taken, rounded down to the AETH's code.  An SRQ's are shared with other
 * QPs: no count (C9-151), as for UC.
 */
uint8_t
rp_credit_code(struct rp_qp *qp)
{
	int64_t posted = credit_posted(qp);

	return posted < 0 ? RP_AETH_CREDIT_INVALID :
		rp_aeth_credit_code((uint32_t)posted);
}

/* Responder: a positive ACK with `code` went out. */
void
rp_credit_sent(struct rp_qp *qp, uint8_t code)
{
	if (code == RP_AETH_CREDIT_INVALID || rp_aeth_credits(code) != 0) {
		qp->resp.credit_watch = 0;
		return;
	}
	qp->resp.credit_watch = rte_get_timer_cycles() +
		credit_us(RP_CREDIT_WATCH_US);
	qp->resp.credit_seen = 0;
}

/*
 * Responder, each step of a watching QP: the update once the application
 * has posted a batch; the watch ends with it or with its time.
 */
bool
rp_credit_step(struct rp_qp *qp, uint64_t now)
{
	int64_t posted;

	if (likely(qp->resp.credit_watch == 0))
		return false;
	/* READ responses go before an ACK of a later PSN, and an owed ACK
	 * carries the count itself. */
	if (qp->resp.ack_owed || qp->resp.rd_tail != qp->resp.rd_head)
		return false;
	posted = credit_posted(qp);
	if (posted > 0 && (posted >= RP_CREDIT_BATCH ||
			   posted == qp->resp.credit_seen)) {
		rp_stat_inc(qp->dev, RP_STAT_CREDIT_UPDATE);
		/* the last PSN received in order, acknowledged again */
		rp_resp_send_ack(qp, RP_AETH_CREDIT_INVALID,
				 rp_psn_add(qp->resp.epsn, RP_PSN_MASK));
		qp->resp.credit_watch = 0;
		return true;
	}
	qp->resp.credit_seen = posted > 0 ? (uint32_t)posted : 0;
	if (posted < 0 || now >= qp->resp.credit_watch)
		qp->resp.credit_watch = 0;
	return false;
}

/*
 * Requester out of credits with nothing unacknowledged: true when the
 * limited WQE may go, after the wait for an update.
 */
bool
rp_credit_probe(struct rp_qp *qp)
{
	uint64_t now = rte_get_timer_cycles();

	if (qp->req.credit_wait == 0) {
		qp->req.credit_wait = now + credit_us(RP_CREDIT_WAIT_US);
		return false;
	}
	if (now < qp->req.credit_wait)
		return false;
	qp->req.credit_wait = 0;
	rp_stat_inc(qp->dev, RP_STAT_CREDIT_PROBE);
	return true;
}

/* Requester: an ACK gave a count (code, not INVALID). */
void
rp_credit_got(struct rp_qp *qp, uint8_t code)
{
	qp->req.credits = true;
	qp->req.csn_limit = qp->comp.csn_acked + rp_aeth_credits(code);
	/* Room again: a later stall waits afresh. */
	if ((int32_t)(qp->req.csn - qp->req.csn_limit) < 0)
		qp->req.credit_wait = 0;
}
