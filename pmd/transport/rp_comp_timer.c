/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completer, its retransmit timer: a stall's probes (one packet, a tail
 * probe, the READ responses missing, or back N) and its timeouts, as
 * rp_comp_timer() runs them on the QP's step.  rp_comp.c takes the
 * answers in.
 */

#include <rte_cycles.h>

#include <infiniband/verbs.h>

#include "rp_comp.h"
#include "rp_log.h"
#include "rp_time.h"
#include "rp_transport.h"
#include "rp_psn.h"
#include "rp_xmit.h"

/*
 * A probe or the timer goes back N: from the oldest unacknowledged PSN,
 * or from the first response missing of a READ at the tail (a NAK of a
 * later request moved una past it), or from the tail's start.
 */
static void
comp_go_back(struct rp_qp *qp)
{
	const struct rp_swqe *s;
	uint32_t from = qp->comp.una;

	if (!rp_comp_outstanding(qp))
		return;
	s = rp_swqe(qp, qp->comp.tail);
	if (s->opcode == IBV_WR_RDMA_READ && s->state != RP_SWQE_NEW &&
	    rp_psn_diff(rp_comp_rd_resume(qp, s), from) < 0)
		from = rp_comp_rd_resume(qp, s);
	rp_sr_rd_forget(qp);	/* everything is asked for again */
	qp->comp.one_out = false;
	if (!rp_req_rewind(qp, from))
		rp_req_rewind(qp, s->first_psn);
}

/* Just past the first READ response missing at the tail: a READ whose
 * responses have not begun starts at its first PSN (rd_psn moves to a
 * READ when what precedes it retires, or as its responses come). */
static uint32_t
comp_rd_first_missing(const struct rp_qp *qp)
{
	const struct rp_swqe *s = rp_swqe(qp, qp->comp.tail);

	return rp_psn_add(rp_psn_diff(qp->comp.rd_psn, s->first_psn) < 0 ?
			  s->first_psn : qp->comp.rd_psn, 1);
}

/*
 * A probe toward a peer not known to keep what follows a gap: the oldest
 * unacknowledged packet alone (rp_req_probe_one()), nothing cut, as TCP's
 * loss probe (RFC 8985) sends one segment.  A peer that was only slow (its
 * engine off its CPU for a slice) has the packets and answers with an ACK
 * of them all: one duplicate, where going back N resent half the flight
 * at each probe (193 packets a probe of a 64 KiB write_bw between the
 * hosts, each a duplicate the peer answered).  A peer that lost the tail
 * takes the packet in sequence and ACKs it alone: una moves, but not to
 * one_psn, and the next probe goes back N from there.  So a silence with
 * no answer costs a packet a probe, and a tail loss a round trip more.
 * Not while the path loses packets (a loss seen within the last
 * RP_PROBE_ONE_CLEAN_WAITS first probe waits): there a stall is likely a loss,
 * and one packet, lost or unanswered as often as any (19 % under 10 %
 * loss each way), made three probes fail in a row four times as often:
 * fm_loss10 kept 515-556 MB/s of 885-910, its QPs' timeouts 62-73 for
 * 14-17 (three runs each).  False then, or when the packet cannot go
 * alone (a READ, an atomic): the caller goes back N.
 */
#define RP_PROBE_ONE_CLEAN_WAITS	8u

/* The path lost a packet lately: within RP_PROBE_ONE_CLEAN_WAITS first
 * probe waits of now. */
static bool
comp_path_lossy(const struct rp_qp *qp, uint64_t now)
{
	uint64_t wait = RTE_MAX(4 * qp->comp.srtt,
				rp_us_cycles(qp->dev->cfg.probe_min_us));

	return qp->comp.loss_tsc != 0 &&
	       now - qp->comp.loss_tsc < RP_PROBE_ONE_CLEAN_WAITS * wait;
}

static bool
comp_probe_one(struct rp_qp *qp, uint64_t now)
{
	if (qp->comp.peer_sr)
		return false;	/* its tail probe (rp_req_tail_probe()) */
	if (comp_path_lossy(qp, now))
		return false;
	if (qp->comp.one_out && qp->comp.una != qp->comp.one_una &&
	    qp->comp.one_acks < 2) {
		/*
		 * One answer, then silence: the probe's, with the last PSN
		 * the peer has (a duplicate's ACK) or the packet it lacked,
		 * taken alone.  What follows is missing.  Answers that kept
		 * coming were the peer's backlog, ACKed as it came back to
		 * its CPU, until it left it again (between the hosts, such
		 * a stall went back N: 131 duplicates): one packet again.
		 */
		qp->comp.loss_tsc = now;
		return false;
	}
	if (!rp_req_probe_one(qp))
		return false;
	if (!qp->comp.one_out) {
		qp->comp.one_out = true;
		qp->comp.one_psn = qp->req.max_psn;
	}
	qp->comp.one_una = qp->comp.una;
	qp->comp.one_acks = 0;
	return true;
}

/*
 * Every packet sent is acknowledged and no READ or atomic is in flight,
 * whose data the PSNs do not tell whole (a READ's responses kept past a
 * gap, rp_comp_rd_resume()): the peer owes no answer.  The address resolved
 * (its rounds spend retries, rp_req_step()).
 */
static bool
comp_nothing_owed(const struct rp_qp *qp)
{
	if (qp->req.max_psn != qp->comp.una || !qp->addr_ok)
		return false;
	for (uint32_t i = qp->comp.tail; i != qp->req.hi; i++)
		if (rp_wr_is_rd_atomic(rp_swqe(qp, i)->opcode))
			return false;
	return true;
}

/* Retransmit timer.  Returns true if it did something. */
bool
rp_comp_timer(struct rp_qp *qp, uint64_t now)
{
	const struct rp_shard *sh = &qp->dev->sh[qp->shard];

	if (qp->comp.deadline == 0 || now < qp->comp.deadline)
		return false;
	if (sh->starved_lag != 0 && qp->comp.deadline > sh->starved_from &&
	    qp->comp.deadline - sh->starved_from <= sh->starved_lag) {
		/*
		 * It ran out while no pass could run: the CPU was not the
		 * engine's, and the answer may be waiting in the receive
		 * ring.  The timer counts the engine's time, not the wall's.
		 */
		qp->comp.deadline += sh->starved_lag;
		rp_stat_inc(qp->dev, RP_STAT_TIMER_STARVED);
		return false;
	}
	qp->comp.deadline = 0;
	if (qp->flushing || (!rp_comp_outstanding(qp) &&
	    qp->sq_prod == qp->comp.tail &&
	    rp_load_acquire(&qp->sq->prod) == qp->app_ingest))
		return false;
	if (qp->req.rnr_wait) {
		/* The responder asked for this silence (RNR NAK): the
		 * requester resends when it ends, the timer runs again. */
		rp_req_arm_timer(qp);
		return false;
	}
	if (comp_nothing_owed(qp)) {
		/*
		 * Everything sent is acknowledged: the silence is ours (no
		 * transmit room while other QPs filled the queue, the
		 * window, DCQCN's rate), and no answer is owed.  Neither a
		 * probe nor a retry: the timer stops, and the next packet
		 * sent starts it (req_sent()), its answer given the whole
		 * wait.  (Unresolved, the address's rounds still spend
		 * retries: rp_req_step().)
		 */
		rp_stat_inc(qp->dev, RP_STAT_TIMER_UNSENT);
		return false;
	}
	if (qp->comp.probes < rp_probe_max(qp) &&
	    (!rp_tx_room(qp->dev) || qp->comp.tx_full) &&
	    now - qp->comp.quiet_tsc < rp_req_timeout_cycles(qp)) {
		/*
		 * Our own packets wait to leave: the port's transmit queue
		 * is full (the peer, off its CPU, left its receive ring
		 * full, and the link's queue backed up to ours).  It cannot
		 * answer what has not left, and a probe could not leave
		 * either: going back N instead queued a flight again
		 * behind them (between the hosts, 64 duplicates of a 64 KiB
		 * write_bw on a lossless link).  The probe waits; the
		 * QP's timeout, from its last progress, does not: a port
		 * that never drains still ends in probes and retries.  The
		 * queue drained within the last wait: the frames at its
		 * tail just left, and their answer gets one wait more.
		 */
		qp->comp.tx_full = !rp_tx_room(qp->dev);
		if (qp->comp.tx_full)
			rp_stat_inc(qp->dev, RP_STAT_TIMER_TX_FULL);
		rp_req_arm_timer(qp);
		return false;
	}
	if (qp->comp.probes < rp_probe_max(qp) && qp->comp.srtt != 0 &&
	    qp->addr_ok) {
		/* Silence for a few round trips: resend early. */
		if (qp->comp.probes++ == 0) {
			qp->comp.undo_cwnd = qp->comp.cwnd;
			qp->comp.undo_ssthresh = qp->comp.ssthresh;
		}
		qp->comp.probe_tsc = now;
		qp->comp.one_last = false;
		rp_stat_inc(qp->dev, RP_STAT_PROBE);
		/* A peer that keeps what follows a gap: the last packet
		 * alone asks for every loss, or the READ responses missing
		 * are asked for alone, and nothing is cut; the stall's last
		 * probe goes back N.  On a path without recent loss only
		 * the first response missing is asked for: a responder
		 * only slow (its lcore off its CPU) answers it and streams
		 * the rest, where asking for the READ's whole runs drew 4
		 * of them again, 64 responses each, between the hosts; a
		 * loss it finds makes the path lossy for the next probe. */
		if (qp->comp.probes < rp_probe_max(qp) && rp_sr_rd_on(qp) &&
		    rp_comp_outstanding(qp) &&
		    rp_swqe(qp, qp->comp.tail)->opcode == IBV_WR_RDMA_READ &&
		    rp_sr_rd_ask(qp, comp_path_lossy(qp, now) ? qp->req.psn :
				 comp_rd_first_missing(qp), 0, 0) != 0) {
			rp_req_arm_timer(qp);
			return true;
		}
		if (qp->comp.probes < rp_probe_max(qp) &&
		    rp_req_tail_probe(qp)) {
			rp_stat_inc(qp->dev, RP_STAT_SR_TAIL_PROBE);
			rp_req_arm_timer(qp);
			return true;
		}
		/* Toward other peers every probe of a silence is one
		 * packet: a silent peer needs no more. */
		if (comp_probe_one(qp, now)) {
			qp->comp.one_last = true;
			rp_req_arm_timer(qp);
			return true;
		}
		rp_comp_probe_cut(qp);
		qp->comp.rd_retried = false;
		comp_go_back(qp);
		rp_req_arm_timer(qp);
		return true;
	}
	rp_stat_inc(qp->dev, RP_STAT_TIMEOUT);
	/* Not the peer's scheduling alone: its answer teaches nothing. */
	qp->comp.probe_tsc = 0;
	RP_QP_LOG(rp_logtype_comp, DEBUG, qp->qpn,
		  "timeout: tail %u head %u hi %u psn %u max_psn %u retry_left %u",
		  qp->comp.tail, qp->req.head, qp->req.hi, qp->req.psn,
		  qp->req.max_psn, qp->comp.retry_left);
	if (qp->comp.retry_left == 0) {
		RP_QP_LOG(rp_logtype_comp, INFO, qp->qpn,
			  "retry count exceeded");
		rp_qp_error_event(qp, IBV_WC_RETRY_EXC_ERR, IBV_EVENT_QP_FATAL);
		return true;
	}
	qp->comp.retry_left--;
	/*
	 * The peer answered since the timer started, the last progress or
	 * timeout (duplicates' ACKs, stale responses): it runs and is
	 * behind, not gone, and each resend adds to its queue.  The next
	 * round waits twice as long, as TCP's timer backs off (RFC 6298,
	 * 5.5), up to RP_RTO_STRETCH times the QP's timeout (rp_req.c);
	 * the retries are counted as ever.  A silent peer keeps the QP's
	 * timeout.
	 */
	if (qp->comp.heard && qp->comp.backoff < RP_RTO_BACKOFF_MAX) {
		qp->comp.backoff++;
		rp_stat_inc(qp->dev, RP_STAT_TIMER_BACKOFF);
	}
	qp->comp.heard = false;
	qp->comp.rd_retried = false;
	rp_xmit_reresolve(qp);
	rp_comp_restart(qp);
	/* Resume from the oldest unacknowledged PSN, not the message's
	 * start: a large message keeps what was acknowledged of it. */
	comp_go_back(qp);
	rp_req_arm_timer(qp);
	return true;
}
