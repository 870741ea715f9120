/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Placement (guides/architecture, "Several lcores for one device"): a QP
 * joins the shard of its SRQ, else of its CQs, else the shard with the
 * fewest QPs; CQs and SRQs follow their QPs.  A QP that would join objects
 * of two shards moves the objects of one, with every QP that shares them,
 * to the other: a CQ is never written by two lcores.  QP 1's agents and UD
 * QPs in a multicast group live on shard 0, which receives what is not a
 * unicast RoCEv2 frame.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rp_atomic.h"
#include "rp_transport.h"

/* QPs of a shard: control writes, telemetry reads (relaxed). */
static void
qps_add(struct rp_shard *sh, int32_t d)
{
	rp_store_relaxed(&sh->nr_qp, sh->nr_qp + (uint32_t)d);
}

static inline uint32_t
cq_idx(const struct rp_cq *cq)
{
	return cq->cqn & (RP_MAX_CQ - 1);
}

/* A CQ joins shard `to`: an event moderation holds on its old shard's
 * list fires now (rp_cq_mod_release()). */
static void
cq_move(struct rp_dev *dev, struct rp_cq *cq, uint32_t to)
{
	if (cq->shard != to)
		rp_cq_mod_release(dev, cq, true);
	cq->shard = to;
}

/* Objects of one component, marked by index while it is gathered. */
struct comp_set {
	bool cq[RP_MAX_CQ];
	bool srq[RP_MAX_SRQ];
};

static void
set_qp_objs(struct comp_set *s, const struct rp_qp *qp)
{
	s->cq[cq_idx(qp->scq)] = true;
	s->cq[cq_idx(qp->rcq)] = true;
	if (qp->srq != NULL) {
		s->srq[qp->srq->idx] = true;
		if (qp->srq->cq != NULL)
			s->cq[cq_idx(qp->srq->cq)] = true;
	}
}

static bool
set_has_qp(const struct comp_set *s, const struct rp_qp *qp)
{
	return s->cq[cq_idx(qp->scq)] || s->cq[cq_idx(qp->rcq)] ||
		(qp->srq != NULL && s->srq[qp->srq->idx]);
}

/* Moves one QP: its active-list entry, its doorbell bit, the counts. */
static void
qp_move(struct rp_qp *qp, uint32_t to)
{
	struct rp_dev *dev = qp->dev;
	struct rp_shard *from = &dev->sh[qp->shard], *dst = &dev->sh[to];
	uint64_t bit = UINT64_C(1) << (qp->idx % 64);
	bool active = qp->active;

	if (qp->shard == to)
		return;
	if (active) {
		for (uint32_t i = 0; i < from->nr_active; i++)
			if (from->active[i] == qp) {
				from->active[i] =
					from->active[--from->nr_active];
				break;
			}
		qp->active = false;
	}
	from->bell_own[qp->idx / 64] &= ~bit;
	qps_add(from, -1);
	qp->shard = to;
	dst->bell_own[qp->idx / 64] |= bit;
	qps_add(dst, 1);
	if (active)
		rp_qp_wake(qp);
	rp_stat_inc(dev, RP_STAT_SHARD_MOVES);
}

/*
 * Moves the QPs of shard `from` that share, directly or through others,
 * a CQ or SRQ of set s to shard `to`, and their CQs and SRQs with them.
 */
static void
component_move(struct rp_dev *dev, struct comp_set *s, uint32_t from,
	       uint32_t to)
{
	bool again = true;

	while (again) {
		again = false;
		for (uint32_t i = 0; i < dev->qp_hi; i++) {
			struct rp_qp *qp = dev->qp[i];

			if (qp == NULL || qp->shard != from ||
			    !set_has_qp(s, qp))
				continue;
			set_qp_objs(s, qp);
			qp_move(qp, to);
			again = true;
		}
	}
	for (uint32_t i = 0; i < RP_MAX_CQ; i++)
		if (s->cq[i] && dev->cq[i] != NULL)
			cq_move(dev, dev->cq[i], to);
	for (uint32_t i = 0; i < RP_MAX_SRQ; i++)
		if (s->srq[i] && dev->srq[i] != NULL)
			dev->srq[i]->shard = to;
}

/*
 * The shard an object of a new QP already belongs to, or -1.  A CQ is
 * taken by its QPs, or by the TM-SRQ that completes into it.
 */
static int
cq_shard(const struct rp_dev *dev, const struct rp_cq *cq)
{
	if (cq->nr_qp != 0)
		return (int)cq->shard;
	for (uint32_t i = 0; i < dev->nr_tm_srq; i++)
		if (dev->tm_srq[i]->cq == cq)
			return (int)dev->tm_srq[i]->shard;
	return -1;
}

static int
srq_shard(const struct rp_srq *srq)
{
	if (srq == NULL)
		return -1;
	/* A TM-SRQ is served from creation (its list operations). */
	return srq->nr_qp != 0 || srq->tm != NULL ? (int)srq->shard : -1;
}

static uint32_t
least_loaded(const struct rp_dev *dev)
{
	uint32_t best = 0;

	for (uint32_t i = 1; i < dev->nr_shards; i++)
		if (dev->sh[i].nr_qp < dev->sh[best].nr_qp)
			best = i;
	return best;
}

/* Joins `to` with whatever component the objects of qp are in now. */
static void
join(struct rp_dev *dev, const struct rp_qp *qp, uint32_t to)
{
	int have[3] = { srq_shard(qp->srq), cq_shard(dev, qp->scq),
			cq_shard(dev, qp->rcq) };

	for (unsigned int k = 0; k < RTE_DIM(have); k++) {
		struct comp_set *s;

		if (have[k] < 0 || (uint32_t)have[k] == to)
			continue;
		s = calloc(1, sizeof(*s));
		if (s == NULL)
			continue;	/* left split: see the caller */
		set_qp_objs(s, qp);
		component_move(dev, s, (uint32_t)have[k], to);
		free(s);
		have[0] = srq_shard(qp->srq);
		have[1] = cq_shard(dev, qp->scq);
		have[2] = cq_shard(dev, qp->rcq);
	}
}

/*
 * A new QP's shard, before its CQs and SRQ count it (control, the other
 * shards waiting).  -ENOMEM if its objects could not be brought together.
 */
int
rp_shard_place(struct rp_dev *dev, struct rp_qp *qp)
{
	int to = -1;

	if (dev->nr_shards == 1) {
		qp->shard = 0;
		qps_add(&dev->sh[0], 1);
		return 0;
	}
	/* Shard 0 keeps what it has: QP 1's agents and groups' members
	 * must stay there, and a join never takes them away. */
	if (qp->gsi != NULL || srq_shard(qp->srq) == 0 ||
	    cq_shard(dev, qp->scq) == 0 || cq_shard(dev, qp->rcq) == 0)
		to = 0;
	if (to < 0)
		to = srq_shard(qp->srq);
	if (to < 0)
		to = cq_shard(dev, qp->scq);
	if (to < 0)
		to = cq_shard(dev, qp->rcq);
	if (to < 0)
		to = (int)least_loaded(dev);
	join(dev, qp, (uint32_t)to);
	if ((srq_shard(qp->srq) >= 0 && srq_shard(qp->srq) != to) ||
	    (cq_shard(dev, qp->scq) >= 0 && cq_shard(dev, qp->scq) != to) ||
	    (cq_shard(dev, qp->rcq) >= 0 && cq_shard(dev, qp->rcq) != to))
		return -ENOMEM;
	qp->shard = (uint32_t)to;
	cq_move(dev, qp->scq, (uint32_t)to);
	cq_move(dev, qp->rcq, (uint32_t)to);
	if (qp->srq != NULL) {
		qp->srq->shard = (uint32_t)to;
		if (qp->srq->cq != NULL)
			cq_move(dev, qp->srq->cq, (uint32_t)to);
	}
	qps_add(&dev->sh[to], 1);
	if (to != 0) {
		dev->sh[0].bell_own[qp->idx / 64] &=
			~(UINT64_C(1) << (qp->idx % 64));
		dev->sh[to].bell_own[qp->idx / 64] |=
			UINT64_C(1) << (qp->idx % 64);
	}
	return 0;
}

/* A QP goes: its doorbell bit back to shard 0. */
void
rp_shard_unplace(struct rp_qp *qp)
{
	struct rp_dev *dev = qp->dev;
	uint64_t bit = UINT64_C(1) << (qp->idx % 64);

	qps_add(&dev->sh[qp->shard], -1);
	dev->sh[qp->shard].bell_own[qp->idx / 64] &= ~bit;
	dev->sh[0].bell_own[qp->idx / 64] |= bit;
}

/* qp and everything it shares a CQ or SRQ with, to shard `to`. */
int
rp_shard_move_to(struct rp_qp *qp, uint32_t to)
{
	struct rp_dev *dev = qp->dev;
	struct comp_set *s;

	if (qp->shard == to)
		return 0;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	set_qp_objs(s, qp);
	component_move(dev, s, qp->shard, to);
	free(s);
	return 0;
}
