/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective retransmission of READ responses: the requester's half
 * (guides/congestion).
 *
 * IBTA's requester takes READ responses in PSN order only: one lost
 * response drops every later one, and the READ is asked again from it,
 * with every READ after it (go-back-N), and the window halves.  Toward a
 * rocepmd responder that marks its READ responses RP_BTH_SR (it keeps
 * what it owes, rp_resp.c), the requester here places a response that
 * comes past a lost one where it belongs (the bytes of a READ are
 * undefined until it completes), remembers it by PSN, and asks for each
 * run of missing responses alone: a READ request at the first missing PSN
 * for just their bytes, marked RP_BTH_SR_ONE ("these only", which the
 * responder queues behind what it still owes instead of dropping that).
 * The completer takes the placed responses in order once the gap before
 * them is filled (rp_comp.c).  A run asked for whose answer is lost too
 * is asked again by the stall's probe; the stall's last probe and the
 * timer go back N as before.
 */

#include <string.h>

#include <rte_cycles.h>

#include "rp_log.h"
#include "rp_psn.h"
#include "rp_transport.h"

/* Runs asked for at most per response or probe: a burst's worth. */
#define RP_SR_RD_ASK_MAX	16u

static bool
sr_rd_has(const struct rp_sr *sr, uint32_t psn)
{
	return sr->rd_got[psn % RP_SR_WIN] == (psn | RP_SR_RD_SET);
}

/* True if `psn` was placed; it is forgotten (the completer takes it). */
bool
rp_sr_rd_take(struct rp_qp *qp, uint32_t psn)
{
	struct rp_sr *sr = qp->sr;

	if (sr == NULL || !sr_rd_has(sr, psn))
		return false;
	sr->rd_got[psn % RP_SR_WIN] = 0;
	return true;
}

/* Anything placed past the next expected response? */
bool
rp_sr_rd_ahead(const struct rp_qp *qp)
{
	int32_t d;

	if (qp->sr == NULL)
		return false;
	d = rp_psn_diff(qp->sr->rd_hi, qp->comp.rd_psn);
	return d > 0 && d <= (int32_t)RP_SR_WIN;
}

/* Going back N: what was asked for alone may be asked for again. */
void
rp_sr_rd_forget(struct rp_qp *qp)
{
	if (qp->sr != NULL)
		memset(qp->sr->rd_asked, 0, sizeof(qp->sr->rd_asked));
}

/*
 * READ requests answered whole past a gap (rp_sr_rd_answered()): none.
 * The requester recounts what it has outstanding (going back N, a QP
 * flushed), so none is counted twice.
 */
void
rp_sr_rd_ans_reset(struct rp_qp *qp)
{
	struct rp_sr *sr = qp->sr;

	if (sr == NULL || sr->rd_ans_n == 0)
		return;
	memset(sr->rd_ans, 0, sizeof(sr->rd_ans));
	sr->rd_ans_n = 0;
}

/*
 * Response `k` of the READ `s` was placed past a gap: if every response
 * of its request (the RP_READ_SEG segment it is in) not yet taken is
 * placed now, the responder has sent them all and freed the resources
 * the request held (max_dest_rd_atomic's, IBTA 9.7.5.3), so it stops
 * counting against max_rd_atomic, although the completer takes it only
 * once the gap before it is filled: 64 B READs under 10 % loss each way
 * were held to a window of 16 a round trip (guides/congestion).
 * Responses come in order, so the ones after `k` are looked at first:
 * one look, but once a request.
 */
static void
sr_rd_seg_placed(struct rp_qp *qp, const struct rp_swqe *s, uint32_t k)
{
	struct rp_sr *sr = qp->sr;
	uint32_t k0 = k - k % RP_READ_SEG;
	uint32_t end = RTE_MIN(k0 + RP_READ_SEG, s->npkts);
	uint32_t last = rp_psn_add(s->first_psn, end - 1);
	uint32_t psn = rp_psn_add(s->first_psn, k);
	uint32_t from = rp_psn_add(s->first_psn, k0), p;

	if (sr->rd_ans[last % RP_SR_WIN] == (last | RP_SR_RD_SET))
		return;
	for (p = rp_psn_add(psn, 1); rp_psn_diff(p, last) <= 0;
	     p = rp_psn_add(p, 1))
		if (!sr_rd_has(sr, p))
			return;
	if (rp_psn_diff(from, qp->comp.rd_psn) < 0)
		from = qp->comp.rd_psn;
	for (p = from; rp_psn_diff(p, psn) < 0; p = rp_psn_add(p, 1))
		if (!sr_rd_has(sr, p))
			return;
	sr->rd_ans[last % RP_SR_WIN] = last | RP_SR_RD_SET;
	sr->rd_ans_n++;
	rp_stat_inc(qp->dev, RP_STAT_SR_RD_ANSWERED);
}

/* The completer took the last response of a request at `last`: it
 * counted against max_rd_atomic until now, or was answered past a gap. */
void
rp_sr_rd_seg_taken(struct rp_qp *qp, uint32_t last)
{
	struct rp_sr *sr = qp->sr;

	if (sr == NULL || sr->rd_ans_n == 0)
		return;
	if (sr->rd_ans[last % RP_SR_WIN] == (last | RP_SR_RD_SET)) {
		sr->rd_ans[last % RP_SR_WIN] = 0;
		sr->rd_ans_n--;
	}
	if (qp->req.rd_out == 0)
		rp_sr_rd_ans_reset(qp);	/* nothing in flight: none left */
}

/*
 * The READ in flight that `psn` answers, and its packet index `*k`,
 * looked for from the WQE `*idx` on (the completer's tail or an earlier
 * answer's: the WQEs' PSNs grow with their index), where `*idx` is left:
 * a walk over a window's PSNs walks its WQEs once, not once a PSN.
 */
static struct rp_swqe *
sr_rd_wqe(struct rp_qp *qp, uint32_t psn, uint32_t *idx, uint32_t *k)
{
	for (uint32_t i = *idx; i != qp->req.hi; i++) {
		struct rp_swqe *s = rp_swqe(qp, i);
		int32_t d = rp_psn_diff(psn, s->first_psn);

		if (s->state == RP_SWQE_NEW || d < 0)
			return NULL;	/* not sent, or before it: none */
		*idx = i;
		if (d >= (int32_t)s->npkts)
			continue;
		if (s->opcode != IBV_WR_RDMA_READ || s->state == RP_SWQE_DONE)
			return NULL;
		*k = (uint32_t)d;
		return s;
	}
	return NULL;
}

/*
 * Ask again for the responses missing from the next expected one up to
 * `upto` (not included): each run alone, within one request's segment.
 * A response asked for already is asked again once `after` cycles have
 * passed since (0: at once, a probe; UINT64_MAX: never, rp_sr_rd_after()),
 * or if it was asked for before the time `before` (a timer's cycles; 0:
 * none), whose answer came (sr_rd_ask_time()).  Returns the requests sent.
 */
uint32_t
rp_sr_rd_ask(struct rp_qp *qp, uint32_t upto, uint64_t after,
	     uint64_t before)
{
	struct rp_sr *sr = qp->sr;
	uint32_t p = qp->comp.rd_psn, asked = 0, idx = qp->comp.tail;
	uint64_t now = rte_get_timer_cycles();

	while (rp_psn_diff(p, upto) < 0 && asked < RP_SR_RD_ASK_MAX &&
	       rp_psn_diff(p, qp->comp.rd_psn) < (int32_t)RP_SR_WIN) {
		const struct rp_swqe *s;
		uint32_t k, n = 0;
		bool re, early;

		if (sr_rd_has(sr, p)) {
			p = rp_psn_add(p, 1);
			continue;
		}
		s = sr_rd_wqe(qp, p, &idx, &k);
		re = s != NULL &&
		     sr->rd_asked[p % RP_SR_WIN] == (p | RP_SR_RD_SET);
		early = re && now - sr->rd_ask_tsc[p % RP_SR_WIN] <= after;
		if (s == NULL ||
		    (early && sr->rd_ask_tsc[p % RP_SR_WIN] >= before)) {
			p = rp_psn_add(p, 1);
			continue;
		}
		do {
			n++;
		} while (k + n < s->npkts && (k + n) % RP_READ_SEG != 0 &&
			 rp_psn_diff(rp_psn_add(p, n), upto) < 0 &&
			 !sr_rd_has(sr, rp_psn_add(p, n)));
		if (!rp_req_read_again(qp, p, n))
			break;	/* no room now: the probe asks */
		for (uint32_t j = 0; j < n; j++) {
			uint32_t q = rp_psn_add(p, j);

			sr->rd_asked[q % RP_SR_WIN] = q | RP_SR_RD_SET;
			sr->rd_ask_tsc[q % RP_SR_WIN] = now;
		}
		if (early)
			rp_stat_inc(qp->dev, RP_STAT_SR_RD_ORDER);
		else if (re && after != 0)
			rp_stat_inc(qp->dev, RP_STAT_SR_RD_REASKED);
		asked++;
		p = rp_psn_add(p, n);
	}
	return asked;
}

/*
 * When the response `psn`, which came past a gap, was asked for (0: it
 * was not).  The responder answers the runs asked for in the order asked,
 * before the READs it queued (rp_resp_rd.c), and the frames come in the
 * order sent: so when an answer comes, every run asked for before it and
 * still missing was lost, its ask or its answer (RFC 8985's rule, by the
 * order of the asks), and is asked again at once.  Waiting 1.5 round
 * trips for it held the window for the 19 % of asks lost under 10 % loss
 * each way, and a READ's round trip is mostly the queue of responses
 * ahead of an answer: 130-400 us in one process (guides/congestion).
 */
static uint64_t
sr_rd_ask_time(const struct rp_sr *sr, uint32_t psn)
{
	return sr->rd_asked[psn % RP_SR_WIN] == (psn | RP_SR_RD_SET) ?
		sr->rd_ask_tsc[psn % RP_SR_WIN] : 0;
}

/*
 * A READ response past the next expected one (`pkt`): place it and ask
 * for the missing ones before it.  False if it cannot be kept (not a
 * READ's, past the window, a size or position that does not fit): the
 * caller goes back N.
 */
bool
rp_sr_rd_keep(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	struct rp_sr *sr = qp->sr;
	const struct rp_send_wqe *w;
	struct rp_swqe *s;
	uint32_t idx = qp->comp.tail, k, off;

	if (rp_psn_diff(pkt->psn, qp->comp.rd_psn) >= (int32_t)RP_SR_WIN)
		return false;
	if (sr_rd_has(sr, pkt->psn)) {
		rp_stat_inc(qp->dev, RP_STAT_RX_DUP);
		return true;
	}
	s = sr_rd_wqe(qp, pkt->psn, &idx, &k);
	if (s == NULL)
		return false;
	if (!rp_comp_rd_fits(qp, s, k, pkt))
		return false;
	off = k * qp->mtu;
	w = rp_sq_wqe(qp, idx);
	if (pkt->paylen != 0 &&
	    rp_sge_copy_in_pkt(qp->dev, s->pdn, (const struct rp_sge *)(w + 1),
			       w->num_sge, off, rp_pkt_payload(pkt),
			       pkt->paylen) != 0)
		return false;	/* the in-order pass reports it */
	sr->rd_got[pkt->psn % RP_SR_WIN] = pkt->psn | RP_SR_RD_SET;
	if (!rp_sr_rd_ahead(qp) ||
	    rp_psn_diff(rp_psn_add(pkt->psn, 1), sr->rd_hi) > 0)
		sr->rd_hi = rp_psn_add(pkt->psn, 1);	/* stale, or passed */
	rp_stat_inc(qp->dev, RP_STAT_SR_RD_KEPT);
	sr_rd_seg_placed(qp, s, k);
	qp->comp.sr_loss_tsc = rte_get_timer_cycles();	/* a loss before it */
	/* The responder answers a run asked for alone before the READs it
	 * queued (rp_resp_rd.c): within about a round trip.  One and a half
	 * of them passed while later responses kept coming, the ask or its
	 * answer was lost. */
	rp_sr_rd_ask(qp, pkt->psn, rp_sr_rd_after(qp, 3, 2),
		     sr_rd_ask_time(sr, pkt->psn));
	return true;
}

