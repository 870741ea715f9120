/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completer: consumes ACKs, NAKs, READ responses and ATOMIC ACKNOWLEDGEs
 * for a requester, retires send WQEs in order into the send CQ, and
 * drives recovery: go-back-N on a sequence NAK, a delayed retry on an RNR
 * NAK, an error completion when the retry counts run out.  The
 * retransmit timer, its probes and timeouts: rp_comp_timer.c.
 */

#include <string.h>

#include <rte_cycles.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_comp.h"
#include "rp_time.h"
#include "rp_transport.h"
#include "rp_psn.h"
#include "rp_xmit.h"

/* IBTA 9.7.5.2.8 RNR timer encoding, in units of 10 us. */
static const uint32_t rp_rnr_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
	16384, 24576, 32768, 49152,
};

/*
 * The window follows loss (additive increase, multiplicative decrease):
 * go-back-N resends everything after a lost packet, so a window of
 * RP_WINDOW packets under 10% loss resends some 25 packets per packet
 * delivered.  A loss (a sequence NAK, a READ response missing) halves
 * it, once per window of packets sent, an early resend at each probe
 * (rp_comp_probe_cut()); each window's worth of packets acknowledged widens
 * it by one.
 */
#define RP_CWND_MIN	8u

static void
comp_cut(struct rp_qp *qp)
{
	uint32_t w = rp_qp_window(qp);

	if (qp->comp.cwnd != 0 &&
	    rp_psn_diff(qp->comp.una, qp->comp.recover_psn) < 0) {
		/* This window was cut already.  By a probe, which cuts no
		 * rate (a silence may be the peer's CPU, not a loss): the
		 * loss this NAK shows is the rate's all the same.  (A
		 * probe before the first NAK, under load, left a paced
		 * QP's loss uncut.) */
		if (qp->comp.probe_cut) {
			qp->comp.probe_cut = false;
			rp_dcqcn_loss(qp);
		}
		return;
	}
	qp->comp.cwnd = RTE_MAX(w / 2, RP_CWND_MIN);
	qp->comp.ssthresh = qp->comp.cwnd;
	qp->comp.cwnd_acc = 0;
	qp->comp.recover_psn = qp->req.max_psn;
	qp->comp.probe_cut = false;
	qp->comp.one_out = false;
	rp_dcqcn_loss(qp);
}

/*
 * A probe: the silence went on.  The resend is what is in flight (RFC
 * 5681's FlightSize, not the window), halved at each probe of the stall,
 * down to RP_CWND_MIN.  Halving the window once per window resent a
 * 64-packet message whole at every probe: toward a peer that was only
 * slow (the kernel's rxe in an emulated guest, ib_send_bw -q 4) three
 * probes put 192 duplicates per QP in its queue, each answered as a new
 * packet would be, ahead of the QP's next packets, until a QP ran out of
 * retries.  A loss is repaired by the first packets resent all the same,
 * and slow start sends the rest; a late answer undoes the cut
 * (comp_probe_answered()).
 */
void
rp_comp_probe_cut(struct rp_qp *qp)
{
	int32_t d = rp_psn_diff(qp->req.max_psn, qp->comp.una);
	uint32_t flight = d > 0 ? (uint32_t)d : 0;
	uint32_t w = RTE_MIN(rp_qp_window(qp), flight) / 2;

	qp->comp.cwnd = RTE_MAX(w, RP_CWND_MIN);
	if (qp->comp.probes == 1)
		qp->comp.ssthresh = qp->comp.cwnd;
	qp->comp.cwnd_acc = 0;
	qp->comp.recover_psn = qp->req.max_psn;
	qp->comp.probe_cut = true;
}

/*
 * A timeout: nothing of the window came back.  The receiver is dropping
 * all of it (a peer that cannot keep up: the kernel's rxe in an emulated
 * guest took 4 QPs' windows resent every 67 ms, dropped them again, and
 * a QP ran out of retries while the peer still answered the others).  As
 * TCP after its retransmission timeout (RFC 5681, 3.1): the resend is the
 * smallest window, on every timeout, and the window grows back by slow
 * start (doubling a round trip) up to half of what it was.
 */
void
rp_comp_restart(struct rp_qp *qp)
{
	if (qp->comp.cwnd == 0 ||
	    rp_psn_diff(qp->comp.una, qp->comp.recover_psn) >= 0)
		qp->comp.ssthresh = RTE_MAX(rp_qp_window(qp) / 2,
					    RP_CWND_MIN);
	qp->comp.cwnd = RP_CWND_MIN;
	qp->comp.cwnd_acc = 0;
	qp->comp.recover_psn = qp->req.max_psn;
	qp->comp.probe_cut = false;
	qp->comp.one_out = false;
	rp_stat_inc(qp->dev, RP_STAT_CWND_RESTART);
	rp_dcqcn_loss(qp);
}

static void
comp_grow(struct rp_qp *qp, uint32_t acked)
{
	if (qp->comp.cwnd == 0)
		return;
	if (qp->comp.cwnd < qp->comp.ssthresh) {
		/* slow start: a packet more for each acknowledged */
		qp->comp.cwnd = RTE_MIN(qp->comp.cwnd + acked,
					qp->comp.ssthresh);
		return;
	}
	qp->comp.cwnd_acc += acked;
	while (qp->comp.cwnd_acc >= qp->comp.cwnd && qp->comp.cwnd != 0) {
		qp->comp.cwnd_acc -= qp->comp.cwnd;
		if (++qp->comp.cwnd >= RP_WINDOW)
			qp->comp.cwnd = 0;
	}
}

/* The sample running ends now. */
static void
comp_rtt_take(struct rp_qp *qp)
{
	uint64_t rtt = rte_get_timer_cycles() - qp->comp.rtt_tsc;
	uint64_t seed = rp_load_relaxed(&qp->dev->rtt_seed);

	qp->comp.rtt_tsc = 0;
	/* RFC 6298's gains: 1/4 for the deviation, 1/8 for the mean */
	if (qp->comp.srtt == 0) {
		qp->comp.srtt = rtt;
		qp->comp.rttvar = rtt / 2;
	} else {
		uint64_t dev = rtt > qp->comp.srtt ? rtt - qp->comp.srtt :
			qp->comp.srtt - rtt;

		qp->comp.rttvar = qp->comp.rttvar - qp->comp.rttvar / 4 +
			dev / 4;
		qp->comp.srtt = qp->comp.srtt - qp->comp.srtt / 8 + rtt / 8;
	}
	rp_store_relaxed(&qp->dev->rtt_seed,
			 seed == 0 ? rtt : seed - seed / 8 + rtt / 8);
}

/* Everything before `una` is acknowledged: end a sample it covers. */
static void
comp_rtt_acked(struct rp_qp *qp)
{
	if (qp->comp.rtt_tsc != 0 &&
	    rp_psn_diff(qp->comp.una, qp->comp.rtt_psn) >= 0)
		comp_rtt_take(qp);
}

bool
rp_comp_outstanding(const struct rp_qp *qp)
{
	return qp->comp.tail != qp->req.hi || qp->req.inprog;
}

/*
 * The probes of a stall were answered (`now`).  A resend reaches a
 * healthy peer and comes back within about a round trip: so a later
 * answer is the peer's first since its silence, the silence was its
 * scheduling (its engine's CPU given to a program for a slice, 1-3 ms
 * between the two hosts), not loss, and the probe resent what had
 * arrived.  As TCP after a spurious timeout (RFC 3522, Eifel): the
 * probe's cut of the window is undone, and probes wait twice the
 * silence from now on (probe_floor, up to RP_PROBE_FLOOR_MAX_US).  An
 * answer in time was a loss repaired: the learned wait halves.  After
 * a probe of one packet (rp_comp_timer.c), only if the ACK took that
 * packet alone (una one past where it stood: the peer lacked it).  An
 * ACK of more may be the peer's backlog, as it came back to its CPU just
 * then (a stall of two probes, the first unanswered), and not the
 * probe's answer; taken for a loss it made the path lossy, and the next
 * stall's probe went back N (between the hosts, 193 duplicates of a
 * 64 KiB write_bw on a lossless link).  Whether the peer lacked
 * something then tells the next stall, if there is one
 * (comp_probe_one()).
 */
#define RP_PROBE_LATE_US	100u	/* an answer later than this, and 2 RTTs
					 * (10% loss in one process: 95% within
					 * 33 us, the latest 211) */
#define RP_PROBE_FLOOR_MAX_US	8000u

static void
comp_probe_answered(struct rp_qp *qp, uint64_t now)
{
	uint64_t late_min = rp_us_cycles(RP_PROBE_LATE_US);
	uint64_t late = RTE_MAX(2 * qp->comp.srtt, late_min);
	uint64_t silence;
	bool one;

	if (qp->comp.probe_tsc == 0)
		return;		/* a timeout followed: rp_comp_timer() */
	one = qp->comp.one_last;
	qp->comp.one_last = false;
	if (now - qp->comp.probe_tsc <= late) {
		if (one && qp->comp.una != rp_psn_add(qp->comp.one_una, 1))
			return;	/* the next stall's probe judges */
		qp->comp.loss_tsc = now;	/* a loss it repaired */
		qp->comp.probe_floor /= 2;
		if (qp->comp.probe_floor < late_min)
			qp->comp.probe_floor = 0;
		return;
	}
	rp_stat_inc(qp->dev, RP_STAT_PROBE_LATE);
	silence = 2 * (now - qp->comp.quiet_tsc);
	silence = RTE_MIN(silence, rp_us_cycles(RP_PROBE_FLOOR_MAX_US));
	qp->comp.probe_floor = RTE_MAX(qp->comp.probe_floor, silence);
	qp->comp.cwnd = qp->comp.undo_cwnd;
	qp->comp.ssthresh = qp->comp.undo_ssthresh;
}

/* Progress was made: reset the retry budget and restart the timer. */
static void
comp_progress(struct rp_qp *qp)
{
	uint64_t now = rte_get_timer_cycles();

	if (unlikely(qp->comp.probes != 0))
		comp_probe_answered(qp, now);
	if (unlikely(qp->comp.one_out) && qp->comp.one_acks < 2)
		qp->comp.one_acks++;
	qp->comp.quiet_tsc = now;
	qp->comp.retry_left = qp->retry_cnt;
	qp->comp.rnr_left = qp->rnr_retry;
	qp->comp.probes = 0;
	qp->comp.backoff = 0;
	qp->comp.heard = false;
	qp->comp.tx_full = false;
	if (rp_comp_outstanding(qp))
		rp_req_arm_timer(qp);
	else
		qp->comp.deadline = 0;
}

/*
 * Everything before `psn` is acknowledged: move the window's base.  True
 * if it moved (progress, even inside one large message).
 */
static bool
comp_acked(struct rp_qp *qp, uint32_t psn)
{
	if (rp_psn_diff(psn, qp->comp.una) <= 0 ||
	    rp_psn_diff(psn, qp->req.max_psn) > 0)
		return false;
	comp_grow(qp, (uint32_t)rp_psn_diff(psn, qp->comp.una));
	qp->comp.una = psn;
	comp_rtt_acked(qp);
	if (qp->comp.one_out && rp_psn_diff(psn, qp->comp.one_psn) >= 0)
		qp->comp.one_out = false;	/* it all arrived */
	return true;
}

/* Where a READ lost responses resumes: its first missing one. */
uint32_t
rp_comp_rd_resume(const struct rp_qp *qp, const struct rp_swqe *s)
{
	int32_t k = rp_psn_diff(qp->comp.rd_psn, s->first_psn);

	return k > 0 && k < (int32_t)s->npkts ? qp->comp.rd_psn : s->first_psn;
}

/*
 * Retire WQEs whose last PSN is before `psn` (strictly: before when
 * `inclusive` is false, up to and including it otherwise).  Stops at a
 * READ, which only its responses complete; passing one is an implicit
 * NAK of its responses unless `rd_owed` (they are still to come).
 */
static uint32_t
comp_retire_rd(struct rp_qp *qp, uint32_t psn, bool inclusive, bool rd_owed)
{
	uint32_t n = 0;

	/*
	 * WQEs past req.head were sent before a rewind: an ACK that covers
	 * them (the responder had them) retires them without a resend.
	 */
	while (qp->comp.tail != qp->req.hi) {
		struct rp_swqe *s = rp_swqe(qp, qp->comp.tail);
		uint32_t last = rp_psn_add(s->first_psn, s->npkts - 1);
		int32_t d = rp_psn_diff(psn, last);

		if (s->state == RP_SWQE_NEW || s->state == RP_SWQE_DONE ||
		    (inclusive ? d < 0 : d <= 0))
			break;
		if (rp_wr_is_rd_atomic(s->opcode)) {
			/* An ACK past an unanswered READ or atomic: its
			 * responses were lost (implicit NAK, IBTA 9.7.5.1.5).
			 * Ask once from the first missing one; later ACKs say
			 * the same. */
			if (!qp->comp.rd_retried && !rd_owed) {
				qp->comp.rd_retried = true;
				rp_req_rewind(qp, rp_comp_rd_resume(qp, s));
			}
			break;
		}
		if (rp_wr_takes_rwqe(s->opcode))
			qp->comp.csn_acked++;
		rp_cqe_send(qp, qp->comp.tail++, IBV_WC_SUCCESS);
		n++;
	}
	if ((int32_t)(qp->comp.tail - qp->req.head) > 0) {
		/* Retired past the resend point: resume after them. */
		RP_QP_LOG(rp_logtype_comp, DEBUG, qp->qpn,
			  "ack psn %u retired past head %u to %u", psn,
			  qp->req.head, qp->comp.tail);
		qp->req.head = qp->comp.tail;
		qp->req.inprog = false;
		/* Nothing is sent and unretired now: no READ outstanding.
		 * (A rewind dropped the counts of the READs retired here.) */
		qp->req.rd_out = 0;
		rp_sr_rd_ans_reset(qp);
		qp->req.psn = qp->comp.tail != qp->req.hi ?
			rp_swqe(qp, qp->comp.tail)->first_psn : qp->req.max_psn;
	}
	if (qp->comp.tail != qp->req.hi) {
		struct rp_swqe *s = rp_swqe(qp, qp->comp.tail);

		if (rp_wr_is_rd_atomic(s->opcode) &&
		    rp_psn_diff(qp->comp.rd_psn, s->first_psn) < 0)
			qp->comp.rd_psn = s->first_psn;
		if (s->state != RP_SWQE_NEW)
			comp_acked(qp, s->first_psn);
	} else {
		comp_acked(qp, qp->req.max_psn);
	}
	return n;
}

static uint32_t
comp_retire(struct rp_qp *qp, uint32_t psn, bool inclusive)
{
	return comp_retire_rd(qp, psn, inclusive, false);
}

static void
comp_error(struct rp_qp *qp, uint32_t psn, uint32_t status)
{
	comp_retire(qp, psn, false);
	RP_QP_LOG(rp_logtype_comp, DEBUG, qp->qpn, "error status %u at psn %u",
		  status, psn);
	switch (status) {
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_INV_RD_REQ_ERR:
		/* The peer's error, NAKed: the CQE reports it here, and the
		 * peer's responder raises the event on its side. */
		rp_qp_error(qp, status);
		break;
	default:
		/* Retries exhausted, bad response, local protection. */
		rp_qp_error_event(qp, status, IBV_EVENT_QP_FATAL);
		break;
	}
}

/*
 * An ACK's credit count (IBTA 9.7.7.2): receive WQEs the responder had
 * posted beyond the messages it acknowledges, which are retired by now.
 * An older ACK (out of order) could only lower the limit: harmless.
 */
static void
comp_credits(struct rp_qp *qp, uint8_t code)
{
	if (code == RP_AETH_CREDIT_INVALID) {
		qp->req.credits = false;
		return;
	}
	qp->req.credits = true;
	qp->req.csn_limit = qp->comp.csn_acked + rp_aeth_credits(code);
}

/* The completion status each NAK code reports. */
static uint32_t
comp_nak_status(uint8_t syn)
{
	switch (syn) {
	case RP_AETH_NAK_INVALID_REQ:
		return IBV_WC_REM_INV_REQ_ERR;
	case RP_AETH_NAK_REM_ACCESS:
		return IBV_WC_REM_ACCESS_ERR;
	case RP_AETH_NAK_REM_OP:
		return IBV_WC_REM_OP_ERR;
	case RP_AETH_NAK_INVALID_RD:
		return IBV_WC_REM_INV_RD_REQ_ERR;
	default:
		return IBV_WC_BAD_RESP_ERR;
	}
}

/*
 * A selective NAK of `psn` that says the responder had generation `echo`
 * (RP_BTH_RG): the last resend of `psn` is still on its way if it went
 * with a later generation than any the responder had seen (rp_sr.c).
 * Under a link's order, a packet of its generation or later that came
 * before this NAK means that resend was lost.
 */
static bool
comp_rg_in_flight(const struct rp_qp *qp, uint32_t psn, uint8_t echo)
{
	uint32_t slot = psn % RP_RG_SLOTS;

	return echo != 0 && qp->comp.rg_psn[slot] == psn &&
	       qp->comp.rg_gen[slot] != 0 &&
	       !rp_rg_since(echo, qp->comp.rg_gen[slot]);
}

/*
 * A NAK names the request it answers by PSN.  One older than the oldest
 * request still outstanding answers a duplicate (a delayed resend the
 * responder ran again after its memory was gone): it ends nothing here.
 * A requester drops a response it no longer expects (rxe's check_psn).
 */
static bool
comp_nak_stale(struct rp_qp *qp, uint32_t psn)
{
	const struct rp_swqe *s;

	if (rp_comp_outstanding(qp)) {
		s = rp_swqe(qp, qp->comp.tail);
		if (s->state != RP_SWQE_NEW &&
		    rp_psn_diff(psn, s->first_psn) >= 0)
			return false;
	}
	rp_stat_inc(qp->dev, RP_STAT_RX_DUP);
	return true;
}

/*
 * A PSN past the first a selective NAK asks for alone (RP_SR_ONE, or a
 * bit of its map): nothing acknowledged, nothing to go back to; an old
 * one finds no packet to send.  Not while its last resend is on its way
 * (the NAK's generation says).  The window as for the first.
 */
static void
comp_nak_one(struct rp_qp *qp, uint32_t psn, uint8_t rg)
{
	if (comp_rg_in_flight(qp, psn, rg)) {
		rp_stat_inc(qp->dev, RP_STAT_SR_NAK_EARLY);
		return;
	}
	if (rp_req_resend_one(qp, psn) && qp->cc.limited)
		comp_cut(qp);
}

/* The PSNs a selective NAK's map asks for too (RP_BTH_NB), in order. */
static void
comp_nak_map(struct rp_qp *qp, uint32_t psn, uint32_t map, uint8_t rg)
{
	for (; map != 0; map &= map - 1)
		comp_nak_one(qp, rp_psn_add(psn, 1u + (uint32_t)rte_bsf32(map)),
			     rg);
}

static void
comp_ack(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	uint8_t syn = rp_pkt_aeth_syn(pkt);
	uint32_t psn = pkt->psn, map = 0;

	if (syn != RP_AETH_CREDIT_INVALID)
		RP_QP_LOG(rp_logtype_comp, DEBUG, qp->qpn,
			  "syndrome 0x%02x psn %u (tail %u head %u psn %u)",
			  syn, psn, qp->comp.tail, qp->req.head, qp->req.psn);

	switch (syn & RP_AETH_TYPE_MASK) {
	case RP_AETH_ACK:
		/* Partial ACKs of a large message are progress too ('|':
		 * both must run, no short circuit).  A peer that keeps what
		 * it owes sent every response before this ACK: those of a
		 * READ it passes that are missing were lost, and are asked
		 * for alone, not with every READ after them. */
		if ((comp_retire_rd(qp, psn, true, rp_sr_rd_on(qp)) != 0) |
		    comp_acked(qp, rp_psn_add(psn, 1)))
			comp_progress(qp);
		/* only a READ at the tail can miss responses (the walk
		 * stops there): no walk for every ACK of SENDs and WRITEs */
		if (rp_sr_rd_tail(qp))
			rp_sr_rd_ask(qp, rp_psn_add(psn, 1),
				     rp_sr_rd_after(qp, 1, 2), 0);
		comp_credits(qp, syn & RP_AETH_CREDIT_INVALID);
		break;
	case RP_AETH_RNR_NAK:
		rp_stat_inc(qp->dev, RP_STAT_RX_RNR_NAK);
		if ((comp_retire(qp, psn, false) != 0) | comp_acked(qp, psn))
			comp_progress(qp);
		if (qp->comp.rnr_left == 0) {
			comp_error(qp, psn, IBV_WC_RNR_RETRY_EXC_ERR);
			break;
		}
		if (qp->rnr_retry != 7)	/* 7 means retry for ever */
			qp->comp.rnr_left--;
		rp_req_rewind(qp, psn);
		qp->req.rnr_wait = true;
		qp->req.rnr_until = rte_get_timer_cycles() +
			rte_get_timer_hz() / 100000 * rp_rnr_10us[syn & 0x1f];
		rp_req_arm_timer(qp);
		break;
	case RP_AETH_NAK:
		rp_stat_inc(qp->dev, RP_STAT_RX_NAK);
		switch (syn) {
		case RP_AETH_NAK_PSN_SEQ:
			qp->comp.loss_tsc = rte_get_timer_cycles();
			if (pkt->sr & RP_SR_ON)
				qp->comp.sr_loss_tsc = qp->comp.loss_tsc;
			/* its map (RP_BTH_NB): the PSNs after it missing
			 * too, asked for once the first is answered */
			if ((pkt->sr & (RP_SR_ON | RP_SR_NB)) ==
			    (RP_SR_ON | RP_SR_NB) &&
			    qp->dev->cfg.selective_retx)
				map = rp_pkt_aeth_msn(pkt);
			if ((pkt->sr & (RP_SR_ON | RP_SR_ONE)) ==
			    (RP_SR_ON | RP_SR_ONE)) {
				/* One missing PSN past the first (rp_sr.c) */
				if (qp->dev->cfg.selective_retx)
					comp_nak_one(qp, psn, pkt->rg);
				break;
			}
			/* The responder NAKs a gap once: resume from it now,
			 * the timer is the last resort.  A selective NAK may
			 * pass READs whose responses are still queued at the
			 * responder (it NAKs a gap at once, and keeps its
			 * READ queue): no implicit NAK of those. */
			if ((comp_retire_rd(qp, psn, false,
					    (pkt->sr & RP_SR_ON) &&
					    qp->dev->cfg.selective_retx) != 0) |
			    comp_acked(qp, psn))
				comp_progress(qp);
			/* A selective NAK (rp_sr.c): the responder kept what
			 * followed, only that packet is missing.  It asks
			 * again while packets keep coming without it: not
			 * while the last resend is on its way, as the NAK's
			 * generation tells (comp_rg_in_flight()), or from a
			 * responder that echoes none, within a round trip of
			 * that resend.  A loss
			 * repaired so halves the window only while CNPs
			 * say the path is congested (DCQCN paces the QP):
			 * as IRN (SIGCOMM'18), a loss without that signal
			 * leaves it, since halving it under random loss
			 * kept 0.15-0.18 of the lossless rate; a probe, a
			 * timeout or going back N still cut. */
			if ((pkt->sr & RP_SR_ON) && qp->dev->cfg.selective_retx) {
				uint64_t now = rte_get_timer_cycles();

				qp->comp.peer_sr = true;
				if (pkt->rg != 0 ?
				    comp_rg_in_flight(qp, psn, pkt->rg) :
				    psn == qp->comp.sr_psn &&
				    now - qp->comp.sr_tsc < qp->comp.srtt) {
					rp_stat_inc(qp->dev, RP_STAT_SR_NAK_EARLY);
					break;
				}
				if (rp_req_resend_one(qp, psn)) {
					qp->comp.sr_psn = psn;
					qp->comp.sr_tsc = now;
					if (qp->cc.limited)
						comp_cut(qp);
					break;
				}
			}
			/* going back N sends the map's PSNs too */
			map = 0;
			comp_cut(qp);
			rp_req_rewind(qp, psn);
			break;
		default:
			if (!comp_nak_stale(qp, psn))
				comp_error(qp, psn, comp_nak_status(syn));
			break;
		}
		if (map != 0)
			comp_nak_map(qp, psn, map, pkt->rg);
		break;
	default:
		/* Reserved syndrome: ignore, the timer recovers. */
		break;
	}
}

/*
 * The WQE a READ response (or an ATOMIC ACKNOWLEDGE, `atomic`) answers:
 * the oldest, a READ or ATOMIC WRITE (an atomic) that expects this PSN.
 * NULL for a response to nothing outstanding, a duplicate (counted), or
 * one past a lost response, which is then asked for again, once per gap
 * (the rest of a burst still arriving says the same).
 */
static struct rp_swqe *
comp_resp_wqe(struct rp_qp *qp, const struct rp_pkt *pkt, bool atomic)
{
	struct rp_swqe *s;
	int32_t d;

	/* Responses come in order: anything before this one is acked, and
	 * a READ passed lost its responses (implicit NAK).  From a peer that
	 * keeps what it owes (rp_sr_read.c) they are asked for alone below,
	 * the READs between not asked again: going back N resent 400
	 * windows of READs in a cell of 2,048 under 10% loss. */
	comp_retire_rd(qp, pkt->psn, false,
		       !atomic && rp_sr_rd_on(qp) && (pkt->sr & RP_SR_ON));
	if (qp->comp.tail == qp->req.hi)
		return NULL;
	s = rp_swqe(qp, qp->comp.tail);
	if ((atomic ? !rp_wr_is_atomic(s->opcode) :
	     s->opcode != IBV_WR_RDMA_READ &&
	     s->opcode != IBV_WR_ATOMIC_WRITE) || s->state == RP_SWQE_NEW ||
	    s->state == RP_SWQE_DONE)
		return NULL;
	d = rp_psn_diff(pkt->psn, qp->comp.rd_psn);
	if (d < 0) {
		rp_stat_inc(qp->dev, RP_STAT_RX_DUP);
		return NULL;
	}
	if (d > 0) {
		/* A response was lost: ask again from it, once per gap (the
		 * rest of the burst still arriving says the same); or, toward
		 * a responder that keeps what it owes, place this one and ask
		 * for the missing ones alone (rp_sr_read.c). */
		rp_stat_inc(qp->dev, RP_STAT_RX_OUT_OF_SEQ);
		qp->comp.loss_tsc = rte_get_timer_cycles();
		if (!atomic && rp_sr_rd_on(qp) && rp_sr_rd_keep(qp, pkt)) {
			/* a READ's first response ends its sample */
			if (qp->comp.rtt_tsc != 0 && qp->comp.rtt_rd &&
			    rp_psn_add(pkt->psn, 1) == qp->comp.rtt_psn)
				comp_rtt_take(qp);
			/* the window as a selective NAK leaves it (above) */
			if (qp->cc.limited)
				comp_cut(qp);
			return NULL;
		}
		if (!qp->comp.rd_retried) {
			qp->comp.rd_retried = true;
			comp_cut(qp);
			rp_req_rewind(qp, rp_comp_rd_resume(qp, s));
		}
		return NULL;
	}
	return s;
}

/*
 * A READ or atomic at the tail completed: retire what follows it that is
 * acknowledged, by the responses' PSNs or, from a peer that keeps what it
 * owes, by an ACK that came past the READ while a response was missing
 * (comp_ack() left those WQEs for now).
 */
static void
comp_retire_after_rd(struct rp_qp *qp)
{
	bool sel = rp_sr_rd_on(qp);

	comp_retire_rd(qp, sel && rp_psn_diff(qp->comp.una,
					      qp->comp.rd_psn) > 0 ?
		       qp->comp.una : qp->comp.rd_psn, false, sel);
}

/* One request of max_rd_atomic answered: the WQE at the tail completes. */
static void
comp_rd_atomic_done(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	qp->comp.rd_psn = rp_psn_add(pkt->psn, 1);
	qp->comp.rd_retried = false;
	comp_acked(qp, qp->comp.rd_psn);
	/* A request a rewind had uncounted may complete before its resend:
	 * never wrap (a wrapped count stalls every READ). */
	if (qp->req.rd_out > 0)
		qp->req.rd_out--;
	rp_cqe_send(qp, qp->comp.tail++, IBV_WC_SUCCESS);
	comp_retire_after_rd(qp);
	comp_progress(qp);
}

/* Response `k` of the READ at the tail is in place: take it. */
static void
comp_rd_took(struct rp_qp *qp, struct rp_swqe *s, uint32_t k)
{
	qp->comp.rd_psn = rp_psn_add(s->first_psn, k + 1);
	qp->comp.rd_retried = false;
	comp_acked(qp, qp->comp.rd_psn);
	if (k == s->npkts - 1 || (k + 1) % RP_READ_SEG == 0) {
		/* One request answered.  A READ a rewind had uncounted may
		 * complete before its resend: never wrap (a wrapped count
		 * stalls every READ). */
		if (qp->req.rd_out > 0)
			qp->req.rd_out--;
		rp_sr_rd_seg_taken(qp, rp_psn_add(s->first_psn, k));
	}
	if (k == s->npkts - 1) {
		rp_cqe_send(qp, qp->comp.tail++, IBV_WC_SUCCESS);
		comp_retire_after_rd(qp);
	}
	comp_progress(qp);
}

/* Take the READ responses placed past a gap now filled (rp_sr_read.c). */
static void
comp_rd_advance(struct rp_qp *qp)
{
	while (!qp->flushing && qp->comp.tail != qp->req.hi) {
		struct rp_swqe *s = rp_swqe(qp, qp->comp.tail);
		int32_t k = rp_psn_diff(qp->comp.rd_psn, s->first_psn);

		if (s->opcode != IBV_WR_RDMA_READ ||
		    s->state == RP_SWQE_NEW || s->state == RP_SWQE_DONE ||
		    k < 0 || k >= (int32_t)s->npkts ||
		    !rp_sr_rd_take(qp, qp->comp.rd_psn))
			break;
		comp_rd_took(qp, s, (uint32_t)k);
	}
}

static void
comp_read_resp(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	const struct rp_send_wqe *w;
	struct rp_swqe *s;
	uint32_t off, k;

	/* A responder that keeps what it owes (rp_sr_read.c) */
	if (unlikely(pkt->sr & RP_SR_ON) && qp->sr != NULL)
		qp->comp.peer_sr = true;
	s = comp_resp_wqe(qp, pkt, false);
	if (s == NULL)
		return;
	if (s->opcode == IBV_WR_ATOMIC_WRITE) {
		/* Its answer: a READ response ONLY, empty, with an ACK
		 * (IBTA 1.5, as rxe sends it). */
		if (pkt->opcode != RP_OP_READ_RESP_ONLY || pkt->paylen != 0 ||
		    (rp_pkt_aeth_syn(pkt) & RP_AETH_TYPE_MASK) != RP_AETH_ACK) {
			comp_error(qp, pkt->psn, IBV_WC_BAD_RESP_ERR);
			return;
		}
		comp_rd_atomic_done(qp, pkt);
		return;
	}
	k = (uint32_t)rp_psn_diff(pkt->psn, s->first_psn);
	if (k >= s->npkts) {
		comp_error(qp, pkt->psn, IBV_WC_BAD_RESP_ERR);
		return;
	}
	if (!rp_comp_rd_fits(qp, s, k, pkt)) {
		comp_error(qp, pkt->psn, IBV_WC_BAD_RESP_ERR);
		return;
	}
	off = k * qp->mtu;
	w = rp_sq_wqe(qp, qp->comp.tail);
	if (pkt->paylen != 0 &&
	    rp_sge_copy_in_pkt(qp->dev, s->pdn, (const struct rp_sge *)(w + 1),
			       w->num_sge, off,
			       rp_pkt_payload(pkt), pkt->paylen) != 0) {
		comp_error(qp, pkt->psn, IBV_WC_LOC_PROT_ERR);
		return;
	}
	comp_rd_took(qp, s, k);
}

/*
 * Does READ response `pkt`, packet `k` of READ `s`, fit it?  Opcode
 * position and size must fit the READ's requests exactly: each starts at
 * an RP_READ_SEG boundary or where it was asked again (there the old
 * request's MIDDLE may come first), and ends at the next boundary or the
 * READ's end.  Once asked again mid-way, a late response to an earlier
 * request (a FIRST where that one started) may still come, whatever the
 * latest restart; and toward a responder that keeps, a run asked for
 * alone (rp_sr_read.c) starts with a FIRST and ends with a LAST anywhere.
 */
bool
rp_comp_rd_fits(const struct rp_qp *qp, const struct rp_swqe *s, uint32_t k,
		const struct rp_pkt *pkt)
{
	uint64_t off = (uint64_t)k * qp->mtu;
	uint32_t want = s->length > off ?
		(uint32_t)RTE_MIN((uint64_t)qp->mtu, s->length - off) : 0;
	bool seg_end = k == s->npkts - 1 || (k + 1) % RP_READ_SEG == 0;
	bool sr = rp_sr_rd_on(qp);

	if (k % RP_READ_SEG == 0 ? !(pkt->mask & RP_M_FIRST) :
	    k != s->rd_restart && !s->rd_midway && !sr &&
	    (pkt->mask & RP_M_FIRST))
		return false;
	if (seg_end ? !(pkt->mask & RP_M_LAST) :
	    (pkt->mask & RP_M_LAST) && !sr)
		return false;
	return pkt->paylen == want;
}

/*
 * An ATOMIC ACKNOWLEDGE: the original value goes into the WQE's local SGE
 * (8 bytes, host order, as rxe writes it) and the atomic completes.
 */
static void
comp_atomic_ack(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	const struct rp_send_wqe *w;
	struct rp_swqe *s;
	uint64_t orig;

	/* An atomic at the tail expects its answer at comp.rd_psn, its only
	 * PSN; a later atomic's answer says this one's was lost. */
	s = comp_resp_wqe(qp, pkt, true);
	if (s == NULL)
		return;
	if ((rp_pkt_aeth_syn(pkt) & RP_AETH_TYPE_MASK) != RP_AETH_ACK) {
		comp_error(qp, pkt->psn, IBV_WC_BAD_RESP_ERR);
		return;
	}
	w = rp_sq_wqe(qp, qp->comp.tail);
	orig = rp_pkt_atmack_orig(pkt);
	if (rp_sge_copy_in(qp->dev, s->pdn, (const struct rp_sge *)(w + 1),
			   w->num_sge, 0, (const uint8_t *)&orig,
			   sizeof(orig)) != 0) {
		comp_error(qp, pkt->psn, IBV_WC_LOC_PROT_ERR);
		return;
	}
	comp_rd_atomic_done(qp, pkt);
}

void
rp_comp_input(struct rp_qp *qp, const struct rp_pkt *pkt)
{
	if (qp->type != IBV_QPT_RC || qp->flushing ||
	    (qp->state != IBV_QPS_RTS && qp->state != IBV_QPS_SQD))
		return;
	/* Responses for PSNs never sent are bogus: drop them. */
	if (rp_psn_diff(pkt->psn, qp->req.max_psn) >= 0) {
		rp_stat_inc(qp->dev, RP_STAT_RX_OUT_OF_SEQ);
		return;
	}
	qp->comp.heard = true;	/* progress or not: the peer runs */
	if (pkt->mask & RP_M_READ)
		comp_read_resp(qp, pkt);
	else if (pkt->mask & RP_M_ATOMIC)
		comp_atomic_ack(qp, pkt);
	else if (pkt->opcode == RP_OP_ACK)
		comp_ack(qp, pkt);
	if (unlikely(rp_sr_rd_ahead(qp)))
		comp_rd_advance(qp);
}
