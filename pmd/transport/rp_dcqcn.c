/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN's reaction point (Zhu et al., SIGCOMM'15; RoCEv2 A17.9): a QP that
 * receives CNPs sends at a rate, cut at each CNP by alpha/2 (alpha: how
 * often CNPs came lately) and recovered by a timer and a byte counter in
 * three stages (fast recovery towards the rate before the cut, then
 * additive, then hyper increase of that target).  The parameters are
 * the port's dcqcn_* keys, with ConnectX's defaults.
 *
 * A QP that never received a CNP is not limited: one branch per packet
 * (qp->cc.limited) and nothing else.  A limited QP is paced: each packet
 * it sends pushes its next send time by the packet's time at the rate;
 * the requester waits for it (rp_req_step), the lcore's nap ends at it
 * (lcore_deadline).  Time is evaluated lazily: a QP's periods that
 * passed are applied when it next sends or receives a CNP.
 */

#include <errno.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "rp_atomic.h"
#include "rp_psn.h"
#include "rp_time.h"
#include "rp_transport.h"

/* alpha and its g are Q10; rpg_gd 11: a cut takes rate * alpha / 2 */
#define DC_ONE		1024u
#define DC_GD		11
/* events applied at once after a long quiet: more reach the line rate */
#define DC_EVENTS_MAX	64u
/* a paced QP may catch up at most this many packets' time at once */
#define DC_BURST_PKTS	4u
/* after a loss, the additive and hyper steps are at most these shares
 * of the rate that lost (rp_dcqcn_loss()) */
#define DC_LOSS_AI_SHIFT	7
#define DC_LOSS_HAI_SHIFT	3
/* and at least these shares of the configured steps */
#define DC_LOSS_FLOOR_SHIFT	4

/* The port's rate in kbit/s: its link speed, or 100 Gbit/s unknown. */
static uint32_t
dc_line_kbps(const struct rp_dev *dev)
{
	uint32_t mbps = rp_load_relaxed(&dev->ctl->link_speed);

	if (mbps == 0 || mbps > 1000000)
		mbps = 100000;
	return mbps * 1000;
}

/* (g/1024)^k in Q10, by squaring: a long quiet decays alpha at once. */
static uint32_t
dc_pow(uint32_t g, uint64_t k)
{
	uint32_t r = DC_ONE;

	while (k != 0 && r != 0) {
		if (k & 1)
			r = r * g / DC_ONE;
		g = g * g / DC_ONE;
		k >>= 1;
	}
	return r;
}

/* One rate increase event (timer or byte counter). */
static void
dc_increase(struct rp_qp *qp)
{
	const struct rp_dcqcn_cfg *c = &qp->dev->cfg.dcqcn;
	struct rp_dcqcn *cc = &qp->cc;
	uint32_t line = dc_line_kbps(qp->dev);
	uint32_t t = cc->t_events, bc = cc->bc_events, f = c->threshold;
	uint64_t target = cc->target_kbps;
	uint64_t ai = (uint64_t)c->ai_mbps * 1000, hai = c->hai_mbps * 1000ull;

	if (cc->loss_kbps != 0) {
		uint64_t a = RTE_MIN(ai, cc->loss_kbps >> DC_LOSS_AI_SHIFT);
		uint64_t h = RTE_MIN(hai, cc->loss_kbps >> DC_LOSS_HAI_SHIFT);

		ai = RTE_MAX(a, ai >> DC_LOSS_FLOOR_SHIFT);
		hai = RTE_MAX(h, hai >> DC_LOSS_FLOOR_SHIFT);
	}
	if (t > f && bc > f)		/* hyper increase */
		target += (uint64_t)(RTE_MIN(t, bc) - f) * hai;
	else if (t >= f || bc >= f)	/* additive increase */
		target += ai;
	/* else fast recovery: halfway back to the target */
	cc->target_kbps = (uint32_t)RTE_MIN(target, (uint64_t)line);
	cc->rate_kbps = (uint32_t)(((uint64_t)cc->rate_kbps +
				    cc->target_kbps) / 2);
	rp_stat_inc(qp->dev, RP_STAT_DCQCN_INCREASE);
	if (cc->rate_kbps / 2 > cc->loss_kbps)
		cc->loss_kbps = 0;	/* past twice the loss: it moved */
	if (cc->rate_kbps >= line - line / 128) {
		/* back at the line: no longer paced */
		cc->limited = false;
		cc->rate_kbps = line;
	}
}

/* Apply the alpha periods and increase timer events that passed. */
static void
dc_catch_up(struct rp_qp *qp, uint64_t now)
{
	const struct rp_dcqcn_cfg *c = &qp->dev->cfg.dcqcn;
	struct rp_dcqcn *cc = &qp->cc;

	if (now >= cc->alpha_next) {
		uint64_t per = rp_us_cycles(c->alpha_us);
		uint64_t k = 1 + (now - cc->alpha_next) / per;

		cc->alpha_next += k * per;
		if (cc->cnp_seen) {
			/* a CNP in the period: alpha rises */
			cc->alpha = cc->alpha * c->g / DC_ONE + (DC_ONE - c->g);
			cc->cnp_seen = false;
			k--;
		}
		cc->alpha = cc->alpha * dc_pow(c->g, k) / DC_ONE;
	}
	if (now >= cc->inc_next) {
		uint64_t per = rp_us_cycles(c->time_reset_us);
		uint64_t k = 1 + (now - cc->inc_next) / per;

		cc->inc_next += k * per;
		for (uint64_t i = 0; i < RTE_MIN(k, DC_EVENTS_MAX) &&
		     cc->limited; i++) {
			cc->t_events++;
			dc_increase(qp);
		}
	}
}

/* A cut (a CNP's, a loss's): the recovery's counters start again. */
static void
dc_recovery_restart(struct rp_dcqcn *cc, const struct rp_dcqcn_cfg *c,
		    uint64_t now)
{
	cc->t_events = cc->bc_events = 0;
	cc->bytes = 0;
	cc->inc_next = now + rp_us_cycles(c->time_reset_us);
}

void
rp_dcqcn_cnp(struct rp_qp *qp)
{
	const struct rp_dcqcn_cfg *c = &qp->dev->cfg.dcqcn;
	struct rp_dcqcn *cc = &qp->cc;
	uint64_t now = rte_get_timer_cycles();
	uint32_t keep, floor;

	if (!c->on)
		return;
	if (!cc->limited) {
		/* the first CNP of a congestion episode: from the line */
		cc->limited = true;
		cc->rate_kbps = cc->target_kbps = dc_line_kbps(qp->dev);
		cc->loss_kbps = 0;
		cc->alpha = c->initial_alpha;
		cc->alpha_next = now + rp_us_cycles(c->alpha_us);
		cc->cut_next = 0;
		cc->next_tx = now;
	} else {
		dc_catch_up(qp, now);
		if (!cc->limited) {	/* the catch-up reached the line */
			rp_dcqcn_cnp(qp);
			return;
		}
	}
	cc->cnp_seen = true;
	if (now < cc->cut_next)
		return;		/* one cut per reduce_us */
	cc->cut_next = now + rp_us_cycles(c->reduce_us);
	cc->target_kbps = cc->rate_kbps;
	keep = (uint32_t)((uint64_t)cc->rate_kbps * c->min_dec_fac / 100);
	cc->rate_kbps -= (uint32_t)((uint64_t)cc->rate_kbps * cc->alpha >>
				    DC_GD);
	floor = RTE_MAX(keep, c->min_rate_mbps * 1000);
	cc->rate_kbps = RTE_MAX(cc->rate_kbps, floor);
	dc_recovery_restart(cc, c, now);
	rp_stat_inc(qp->dev, RP_STAT_DCQCN_CUT);
}

/*
 * A loss while CNPs pace the QP: past the marks, a port dropped.  DCQCN
 * assumes a fabric without loss (PFC) and has no answer to it; on
 * ordinary Ethernet the drop says the marks did not hold the queue, at
 * a bottleneck far below the line (a CNP cuts by alpha/2, and alpha,
 * the share of periods with a CNP, stays small when marks come in
 * bursts).  The rate halves and the target with it: fast recovery
 * would bring back the rate that dropped within F timer periods.
 * Alpha starts again, so that the CNPs that follow cut hard.  And the
 * increases that follow are steps in proportion to the rate that lost
 * (DC_LOSS_*_SHIFT), until the rate is twice it: DCQCN's absolute steps
 * (5 Mbit/s a timer period, 50 hyper) are made for a bottleneck near
 * the line, and at a port 1/66 of it brought the drop back in a few
 * milliseconds (guides/congestion).  Steps that shrink with each loss
 * have a floor (DC_LOSS_FLOOR_SHIFT), so that frequent losses cannot
 * ratchet the rate down to dcqcn_min_rate_mbps.  A QP that no CNP
 * limited is left alone: random loss is not congestion (IRN,
 * SIGCOMM'18), and the window answers it (rp_comp.c).
 */
void
rp_dcqcn_loss(struct rp_qp *qp)
{
	const struct rp_dcqcn_cfg *c = &qp->dev->cfg.dcqcn;
	struct rp_dcqcn *cc = &qp->cc;
	uint64_t now;

	if (!c->on || !cc->limited)
		return;
	now = rte_get_timer_cycles();
	dc_catch_up(qp, now);
	if (!cc->limited)
		return;		/* the catch-up reached the line */
	cc->loss_kbps = cc->rate_kbps;
	cc->alpha = c->initial_alpha;
	cc->rate_kbps = RTE_MAX(cc->rate_kbps / 2, c->min_rate_mbps * 1000);
	cc->target_kbps = cc->rate_kbps;
	dc_recovery_restart(cc, c, now);
	rp_stat_inc(qp->dev, RP_STAT_DCQCN_LOSS_CUT);
}

bool
rp_dcqcn_pace(struct rp_qp *qp)
{
	struct rp_dcqcn *cc = &qp->cc;
	uint64_t now = rte_get_timer_cycles();

	dc_catch_up(qp, now);
	if (!cc->limited || now >= cc->next_tx) {
		cc->waiting = false;
		return true;
	}
	if (!cc->waiting)	/* once per wait, not per pass */
		rp_stat_inc(qp->dev, RP_STAT_DCQCN_PACED);
	cc->waiting = true;
	return false;
}

/* A packet's time at the QP's rate, in TSC cycles. */
static inline uint64_t
dc_pkt_cycles(const struct rp_dcqcn *cc, uint32_t bytes)
{
	return (uint64_t)bytes * 8 * rte_get_timer_hz() /
		((uint64_t)cc->rate_kbps * 1000);
}

/*
 * How long a limited QP's rate will hold the packet after one of `bytes`
 * back, from now: the same sum rp_dcqcn_charge() makes (0: it may go at
 * once).  The requester asks for an ACK on a packet followed by a long
 * hold (rp_req.c).
 */
uint64_t
rp_dcqcn_hold(const struct rp_qp *qp, uint32_t bytes)
{
	const struct rp_dcqcn *cc = &qp->cc;
	uint64_t now = rte_get_timer_cycles(), next;

	if (!cc->limited)
		return 0;
	next = cc->next_tx + dc_pkt_cycles(cc, bytes);
	return next > now ? next - now : 0;
}

void
rp_dcqcn_charge(struct rp_qp *qp, uint32_t bytes)
{
	const struct rp_dcqcn_cfg *c = &qp->dev->cfg.dcqcn;
	struct rp_dcqcn *cc = &qp->cc;
	uint64_t now = rte_get_timer_cycles();
	/* the packet's time at the rate, in TSC cycles */
	uint64_t t = dc_pkt_cycles(cc, bytes);
	uint64_t earliest = now - RTE_MIN(now, DC_BURST_PKTS * t);
	uint64_t ev;

	cc->next_tx = RTE_MAX(cc->next_tx, earliest) + t;
	cc->bytes += bytes;
	if (cc->bytes < c->byte_reset)
		return;
	ev = cc->bytes / c->byte_reset;
	cc->bytes %= c->byte_reset;
	for (uint64_t i = 0; i < RTE_MIN(ev, DC_EVENTS_MAX) && cc->limited;
	     i++) {
		cc->bc_events++;
		dc_increase(qp);
	}
}

int
rp_dcqcn_query(struct rp_dev *dev, struct rp_ctrl_qp_cc *o)
{
	const struct rp_qp *qp = rp_qp_get(dev, o->qpn);
	const struct rp_dcqcn *cc;
	int32_t d;

	if (qp == NULL || (qp->type != IBV_QPT_RC && qp->type != IBV_QPT_UC))
		return -EINVAL;
	cc = &qp->cc;
	d = rp_psn_diff(qp->req.psn, qp->comp.una);
	o->window = rp_qp_window(qp);
	o->in_flight = qp->type == IBV_QPT_RC && d > 0 ? (uint32_t)d : 0;
	o->srtt_us = (uint32_t)rp_cycles_us(qp->comp.srtt);
	o->probe_wait_us = (uint32_t)rp_cycles_us(qp->comp.probe_floor);
	o->limited = cc->limited;
	o->rate_mbps = (cc->limited ? cc->rate_kbps :
			dc_line_kbps(dev)) / 1000;
	o->target_mbps = (cc->limited ? cc->target_kbps :
			  dc_line_kbps(dev)) / 1000;
	o->alpha = cc->alpha;
	return 0;
}
