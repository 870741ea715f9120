/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQ rings (engine side) and completion channels: publish a CQE, and fire
 * the CQ's channel when the application armed it.
 */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_time.h"
#include "rp_transport.h"
#include "rp_signal.h"

#define RP_CQN_IDX(n)	((n) & 0xffffu)

struct rp_cq *
rp_cq_get(struct rp_dev *dev, uint32_t cqn)
{
	struct rp_cq *cq;

	if (RP_CQN_IDX(cqn) >= RP_MAX_CQ)
		return NULL;
	cq = dev->cq[RP_CQN_IDX(cqn)];
	return cq != NULL && cq->cqn == cqn ? cq : NULL;
}

static struct rp_chan *
chan_get(struct rp_dev *dev, int chn)
{
	if (chn < 0 || (uint32_t)chn >= RP_MAX_CHAN || !dev->chan[chn].valid)
		return NULL;
	return &dev->chan[chn];
}

int
rp_cq_create(struct rp_dev *dev, struct rp_ctrl_cq *c)
{
	struct rp_chan *ch = NULL;
	struct rp_cq *cq;
	uint32_t idx, size;
	int64_t off;

	if (c->cqe == 0 || c->cqe >= RP_MAX_CQE)
		return -EINVAL;
	if (c->chan >= 0) {
		ch = chan_get(dev, c->chan);
		if (ch == NULL)
			return -EINVAL;
	}
	for (idx = 0; idx < RP_MAX_CQ; idx++)
		if (dev->cq[idx] == NULL)
			break;
	if (idx == RP_MAX_CQ)
		return -ENOMEM;
	size = rte_align32pow2(c->cqe + 1);
	off = rp_region_alloc(dev, RP_CQ_HDR_SIZE +
			      (uint64_t)size * sizeof(struct rp_cqe));
	if (off < 0)
		return (int)off;
	cq = rte_zmalloc("rp_cq", sizeof(*cq), RTE_CACHE_LINE_SIZE);
	if (cq == NULL) {
		rp_region_free(dev, off, RP_CQ_HDR_SIZE +
			       (uint64_t)size * sizeof(struct rp_cqe));
		return -ENOMEM;
	}
	/* 15 bits: a CQN stays positive where the ABI's int32_t -1 is none */
	dev->cq_gen[idx] = (dev->cq_gen[idx] + 1) & 0x7fff;
	cq->cqn = idx | (uint32_t)dev->cq_gen[idx] << 16;
	cq->size = size;
	cq->log2_size = rte_log2_u32(size);
	cq->chan = ch != NULL ? c->chan : -1;
	cq->adapt_left = UINT32_MAX;
	cq->arena = dev->cur_arena;
	cq->off = off;
	cq->ctl = rp_region_ptr(dev, off);
	cq->ring = (struct rp_cqe *)((uint8_t *)cq->ctl + RP_CQ_HDR_SIZE);
	if (ch != NULL)
		ch->nr_cq++;
	dev->cq[idx] = cq;
	c->cqn = cq->cqn;
	c->size = size;
	c->off = off;
	return 0;
}

/* A CQ destroyed in the pass that published into it (by control, at its
 * start): off the list of arms to check. */
static void
cq_notify_drop(struct rp_dev *dev, const struct rp_cq *cq)
{
	for (uint32_t s = 0; s < dev->nr_shards; s++) {
		struct rp_shard *sh = &dev->sh[s];

		for (uint32_t i = 0; i < sh->nr_notify; i++)
			if (sh->notify[i] == cq)
				sh->notify[i] = sh->notify[--sh->nr_notify];
	}
}

int
rp_cq_destroy(struct rp_dev *dev, struct rp_ctrl_cq *c)
{
	struct rp_cq *cq = rp_cq_get(dev, c->cqn);
	struct rp_chan *ch;

	if (cq == NULL)
		return -EINVAL;
	if (cq->nr_qp != 0)
		return -EBUSY;
	ch = chan_get(dev, cq->chan);
	if (ch != NULL)
		ch->nr_cq--;
	if (cq->notify_pend != 0)
		cq_notify_drop(dev, cq);
	rp_cq_mod_release(dev, cq, false);
	dev->cq[RP_CQN_IDX(cq->cqn)] = NULL;
	rp_region_free(dev, cq->off, RP_CQ_HDR_SIZE +
		       (uint64_t)cq->size * sizeof(struct rp_cqe));
	rte_free(cq);
	return 0;
}

/*
 * ibv_resize_cq(): a new ring of at least c->cqe entries, into which the
 * CQEs the application has not consumed move, in order, from index 0; the
 * old ring is freed.  The shim holds the CQ's poll lock meanwhile, and
 * this lcore posts no CQE during the move.  -EINVAL if they do not fit.
 */
int
rp_cq_resize(struct rp_dev *dev, struct rp_ctrl_cq *c)
{
	struct rp_cq *cq = rp_cq_get(dev, c->cqn);
	struct rp_cq_ctl *ctl;
	struct rp_cqe *ring;
	uint32_t size, cons, pending;
	int64_t off;

	if (cq == NULL || c->cqe == 0 || c->cqe >= RP_MAX_CQE)
		return -EINVAL;
	/* Untrusted: a cons ahead of prod or a lap behind is "full". */
	cons = rp_load_acquire(&cq->ctl->cons);
	pending = RTE_MIN(cq->prod - cons, cq->size);
	cons = cq->prod - pending;
	size = rte_align32pow2(c->cqe + 1);
	if (pending >= size)
		return -EINVAL;
	off = rp_region_alloc(dev, RP_CQ_HDR_SIZE +
			      (uint64_t)size * sizeof(struct rp_cqe));
	if (off < 0)
		return (int)off;
	ctl = rp_region_ptr(dev, off);
	ring = (struct rp_cqe *)((uint8_t *)ctl + RP_CQ_HDR_SIZE);
	memset(ctl, 0, RP_CQ_HDR_SIZE + (size_t)size * sizeof(struct rp_cqe));
	for (uint32_t i = 0; i < pending; i++) {
		ring[i] = cq->ring[(cons + i) & (cq->size - 1)];
		ring[i].owner = 1;	/* lap 0 of the new ring */
	}
	ctl->prod = pending;
	ctl->arm = rp_load_relaxed(&cq->ctl->arm);
	rp_region_free(dev, cq->off, RP_CQ_HDR_SIZE +
		       (uint64_t)cq->size * sizeof(struct rp_cqe));
	cq->off = off;
	cq->ctl = ctl;
	cq->ring = ring;
	cq->size = size;
	cq->log2_size = rte_log2_u32(size);
	cq->prod = pending;
	cq->ev_prod = pending;
	c->size = size;
	c->off = off;
	return 0;
}

/* Queue the CQ's event on its channel and wake the channel's readers. */
static void
chan_fire(struct rp_dev *dev, struct rp_cq *cq)
{
	struct rp_chan *ch = chan_get(dev, cq->chan);

	if (ch == NULL)
		return;
	/* A channel's CQs may be on several shards: one producer at a time. */
	rp_dev_shared_lock(dev);
	/* A2: pairs with R2 in the shim: a slot is free once it is consumed. */
	if (ch->prod - rp_load_acquire(&ch->ctl->cons) >= RP_CHAN_EVENTS) {
		/* Cannot happen with fewer armings than slots; never block. */
		rp_store_relaxed(&ch->ctl->dropped, ch->ctl->dropped + 1);
		rp_dev_shared_unlock(dev);
		return;
	}
	ch->ctl->ev[ch->prod % RP_CHAN_EVENTS] = cq->cqn;
	ch->prod++;
	/* R3: pairs with A3 in ibv_get_cq_event: entry before count. */
	rp_store_release(&ch->ctl->prod, ch->prod);
	rp_dev_shared_unlock(dev);
	rp_stat_inc(dev, RP_STAT_EVENTS);
	rp_sh(dev)->pass_signals++;
	/* Never blocks: an attached client's is our socket end, full when
	 * it does not read (the fd is readable, the event in its ring). */
	if (!rp_fd_signal(ch->fd, ch->sock) && errno != EAGAIN)
		RP_LOG_RL(rp_logtype_cq, ERR, "channel %ld: signal failed: %s",
			  (long)(ch - dev->chan), strerror(errno));
}

/* What a pass published into a CQ, for its arm (rp_cq.notify_pend). */
#define RP_CQ_PEND_ANY	1u
#define RP_CQ_PEND_SOL	2u		/* a solicited or error CQE */

/*
 * Adaptive moderation (cq_adapt_us): a CQ whose events carried at least
 * RP_CQ_ADAPT_MIN CQEs each, on average (EWMA over events, weight 1/4,
 * fixed point x RP_CQ_EV_SCALE), is a stream's: its program wakes for a
 * batch anyway, and each wake-up costs the lcore a system call and a
 * context switch on a CPU it may share.  A ping-pong's events carry one
 * or two CQEs and are never held.
 */
#define RP_CQ_EV_SCALE		8u
#define RP_CQ_ADAPT_MIN		8u

/* Claim the arm and fire: one event per arming. */
static void
cq_claim(struct rp_dev *dev, struct rp_cq *cq, bool solicited)
{
	uint32_t arm = rp_load_relaxed(&cq->ctl->arm);

	while ((arm & RP_CQ_ARM_NEXT) || ((arm & RP_CQ_ARM_SOL) && solicited)) {
		if (rp_cas(&cq->ctl->arm, &arm, arm & ~RP_CQ_ARM_MASK)) {
			uint32_t k = RTE_MIN(cq->prod - cq->ev_prod, 255u);

			chan_fire(dev, cq);
			cq->ev_prod = cq->prod;
			cq->ev_avg = cq->ev_avg - cq->ev_avg / 4 +
				k * RP_CQ_EV_SCALE / 4;
			break;
		}
	}
}

static inline bool
cq_moderated(const struct rp_cq *cq)
{
	return cq->mod_count > 1 || cq->mod_period != 0;
}

/*
 * A send window: every CQE the CQ holds is a send's, and each left at
 * least RP_CQ_ADAPT_MIN WQEs of its QP outstanding.  Its events carry
 * few CQEs when the messages are large (a 64 KiB WRITE takes longer than
 * the program's wake-up), yet the program has work in flight: its event
 * may wait as a stream's, until half the window has completed (the count
 * bound, cq_mod_due()), at most RP_CQ_ADAPT_SQ_MUL times cq_adapt_us, so
 * that an event of messages slower than cq_adapt_us carries several.  A
 * receive queue's depth says nothing of the sender's pace (a server with
 * many receives posted may serve a ping-pong): never held for it.
 */
#define RP_CQ_ADAPT_SQ_MUL	4u

static inline bool
cq_send_window(const struct rp_cq *cq)
{
	return !cq->adapt_rq && cq->adapt_left != UINT32_MAX &&
		cq->adapt_left >= RP_CQ_ADAPT_MIN;
}

/* Whether the arm's event may wait (adaptive moderation, above). */
static inline bool
cq_adapting(const struct rp_dev *dev, const struct rp_cq *cq, bool solicited)
{
	return !solicited && dev->cfg.cq_adapt_us != 0 &&
		(cq->ev_avg >= RP_CQ_ADAPT_MIN * RP_CQ_EV_SCALE ||
		 cq_send_window(cq));
}

/* Off its shard's list of held events (the caller clears mod_due). */
static void
cq_mod_unlist(struct rp_dev *dev, struct rp_cq *cq)
{
	struct rp_shard *sh = &dev->sh[cq->shard];

	for (uint32_t i = 0; i < sh->nr_mod_wait; i++)
		if (sh->mod_wait[i] == cq) {
			sh->mod_wait[i] = sh->mod_wait[--sh->nr_mod_wait];
			return;
		}
}

/*
 * A moderated CQ, armed for the n CQEs just published: whether its event
 * is due now (count reached, or period over).  If not, it is held on the
 * shard's list until then (rp_cq_mod_poll()); a full list holds nothing.
 */
static bool
cq_mod_due(struct rp_dev *dev, struct rp_cq *cq, uint32_t n, bool solicited)
{
	struct rp_shard *sh = &dev->sh[cq->shard];
	uint64_t now = rte_get_timer_cycles();
	bool mod = cq_moderated(cq);
	/* Adaptive: half the CQ at most (never an overrun for waiting), and
	 * no more than its QP has left outstanding, so that the program
	 * posts again while the rest is in flight (nothing left: now). */
	uint32_t count = mod ? cq->mod_count :
		RTE_MIN(cq->size / 2, cq->adapt_left);
	uint64_t period = mod ? cq->mod_period :
		rp_us_cycles(dev->cfg.cq_adapt_us) *
		(cq_send_window(cq) ? RP_CQ_ADAPT_SQ_MUL : 1);

	cq->mod_cqes += n;
	cq->mod_sol |= solicited;
	if ((count > 1 || !mod) && cq->mod_cqes >= count)
		return true;
	if (cq->mod_due != 0)
		return now >= cq->mod_due;
	if (sh->nr_mod_wait == RP_SHARD_MOD_WAIT) {
		rp_stat_inc(dev, RP_STAT_CQ_MOD_UNHELD);
		return true;
	}
	/* period 0: the count alone (as hardware does) */
	cq->mod_due = period != 0 ? now + period : UINT64_MAX;
	sh->mod_wait[sh->nr_mod_wait++] = cq;
	rp_stat_inc(dev, mod ? RP_STAT_CQ_MOD_HELD : RP_STAT_CQ_ADAPT_HELD);
	return false;
}

static void
cq_mod_reset(struct rp_cq *cq)
{
	cq->mod_cqes = 0;
	cq->mod_sol = false;
	cq->mod_due = 0;
	cq->adapt_left = UINT32_MAX;
	cq->adapt_rq = false;
}

/*
 * The application armed the CQ: one event per arming, for any CQE
 * (NEXT) or a solicited one (SOL), n of them just published.  After a
 * full fence behind the CQEs.
 */
static void
cq_arm_claim(struct rp_dev *dev, struct rp_cq *cq, bool solicited, uint32_t n)
{
	uint32_t arm = rp_load_relaxed(&cq->ctl->arm);

	if (!(arm & RP_CQ_ARM_NEXT) && !((arm & RP_CQ_ARM_SOL) && solicited)) {
		/* consumed unarmed: no bound on a later hold */
		cq->adapt_left = UINT32_MAX;
		cq->adapt_rq = false;
		return;
	}
	if ((cq_moderated(cq) || cq_adapting(dev, cq, solicited)) &&
	    !cq_mod_due(dev, cq, n, solicited))
		return;
	solicited |= cq->mod_sol;
	if (cq->mod_due != 0)
		cq_mod_unlist(dev, cq);
	cq_mod_reset(cq);
	cq_claim(dev, cq, solicited);
}

/*
 * Held events whose period is over, fired: each pass of the shard.  The
 * CQ was armed when its event was held, and only the engine disarms.
 */
void
rp_cq_mod_poll(struct rp_shard *sh, uint64_t now)
{
	for (uint32_t i = 0; i < sh->nr_mod_wait; ) {
		struct rp_cq *cq = sh->mod_wait[i];
		bool sol = cq->mod_sol;

		if (now < cq->mod_due) {
			i++;
			continue;
		}
		sh->mod_wait[i] = sh->mod_wait[--sh->nr_mod_wait];
		cq_mod_reset(cq);
		cq_claim(sh->dev, cq, sol);
	}
}

/* The earliest held event's time, for a lcore that would block; 0: none. */
uint64_t
rp_cq_mod_next(const struct rp_shard *sh)
{
	uint64_t dl = UINT64_MAX;

	for (uint32_t i = 0; i < sh->nr_mod_wait; i++)
		dl = RTE_MIN(dl, sh->mod_wait[i]->mod_due);
	return dl == UINT64_MAX ? 0 : dl;
}

/*
 * The CQ leaves its shard (placement, control with the shards waiting)
 * or goes (fire false): its held event, if any, fires now, not never.
 */
void
rp_cq_mod_release(struct rp_dev *dev, struct rp_cq *cq, bool fire)
{
	bool sol = cq->mod_sol;

	if (cq->mod_due == 0)
		return;
	cq_mod_unlist(dev, cq);
	cq_mod_reset(cq);
	if (fire)
		cq_claim(dev, cq, sol);
}

/*
 * ibv_modify_cq() with IBV_CQ_ATTR_MODERATE (control, the shards
 * waiting).  A held event that the new values would not hold fires now;
 * one they hold waits a new period from now.
 */
int
rp_cq_moderate(struct rp_dev *dev, struct rp_ctrl_cq_mod *c)
{
	struct rp_cq *cq = rp_cq_get(dev, c->cqn);

	if (cq == NULL || c->count > RP_CQ_MOD_COUNT_MAX ||
	    c->period_us > RP_CQ_MOD_PERIOD_MAX)
		return -EINVAL;
	cq->mod_count = c->count;
	cq->mod_period = rp_us_cycles(c->period_us);
	if (cq->mod_due == 0)
		return 0;
	if (!cq_moderated(cq) ||
	    (cq->mod_count > 1 && cq->mod_cqes >= cq->mod_count))
		rp_cq_mod_release(dev, cq, true);
	else	/* the new period counts from now */
		cq->mod_due = cq->mod_period != 0 ?
			rte_get_timer_cycles() + cq->mod_period : UINT64_MAX;
	return 0;
}

/*
 * Publish one CQE.  -ENOSPC when the application has not consumed enough:
 * the CQE is not written (never overwrite) and the CQ is marked overrun.
 * A CQ with a channel has its arm checked at the end of the pass, once
 * for all the CQEs the pass published into it: the full fence that check
 * needs waits for every store before it, so one per CQE was the largest
 * cost of a small message (guides/experiments_close_to_wire).
 */
int
rp_cq_post(struct rp_dev *dev, struct rp_cq *cq, const struct rp_cqe *cqe)
{
	struct rp_shard *sh = RTE_PER_LCORE(rp_cur_shard), *own;
	struct rp_cqe *slot;
	uint8_t pend;

	/* The data a completion reports is in the process first. */
	rp_mem_flush(dev);

	/*
	 * A4: pairs with the shim's release of cons after reading CQEs.
	 * Untrusted: a cons beyond prod (or more than size behind) reads
	 * as a full ring, so it is an overrun too.
	 */
	if (cq->prod - rp_load_acquire(&cq->ctl->cons) >= cq->size) {
		cq->overflows++;
		rp_stat_inc(dev, RP_STAT_CQ_OVERFLOW);
		rp_store_relaxed(&cq->ctl->overflow, 1u);
		RP_LOG_RL(rp_logtype_cq, ERR, "cq 0x%x overflow", cq->cqn);
		/* One IBV_EVENT_CQ_ERR per episode: until a CQE fits again. */
		if (!cq->overrun) {
			cq->overrun = true;
			rp_async_push(dev, IBV_EVENT_CQ_ERR, cq->cqn);
		}
		return -ENOSPC;
	}
	cq->overrun = false;
	slot = &cq->ring[cq->prod & (cq->size - 1)];
	memcpy(slot, cqe, offsetof(struct rp_cqe, owner));
	/* R4: pairs with the shim's acquire of owner in poll_cq. */
	rp_store_release(&slot->owner, (cq->prod >> cq->log2_size) + 1);
	cq->prod++;
	own = rp_sh(dev);
	own->pass_cqes++;
	own->cqes++;
	rp_store_relaxed(&cq->ctl->prod, cq->prod);
	if (cq->chan < 0)
		return 0;
	pend = RP_CQ_PEND_ANY;
	if (cqe->opcode & IBV_WC_RECV)
		cq->adapt_rq = true;
	if ((cqe->flags & RP_CQE_SOLICITED) || cqe->status != IBV_WC_SUCCESS)
		pend |= RP_CQ_PEND_SOL;
	if (sh != NULL && sh->dev == dev &&
	    (cq->notify_pend != 0 || sh->nr_notify < RP_SHARD_NOTIFY)) {
		if (cq->notify_pend == 0)
			sh->notify[sh->nr_notify++] = cq;
		cq->notify_pend |= pend;
		cq->notify_cqes++;
		return 0;
	}
	/* Outside a pass, or more CQs than the list holds: now. */
	rp_fence_seq_cst();
	cq_arm_claim(dev, cq, pend & RP_CQ_PEND_SOL, 1);
	return 0;
}

/*
 * The end of a pass's completions: the arms of the CQs it published into.
 * F1: pairs with the full fence after the arm store in ibv_req_notify_cq
 * (Dekker): either the application's next poll sees these CQEs or we see
 * its arm.
 */
void
rp_cq_notify_flush(struct rp_shard *sh)
{
	if (sh->nr_notify == 0)
		return;
	rp_fence_seq_cst();
	for (uint32_t i = 0; i < sh->nr_notify; i++) {
		struct rp_cq *cq = sh->notify[i];
		uint8_t pend = cq->notify_pend;
		uint32_t n = cq->notify_cqes;

		cq->notify_pend = 0;
		cq->notify_cqes = 0;
		cq_arm_claim(sh->dev, cq, pend & RP_CQ_PEND_SOL, n);
	}
	sh->nr_notify = 0;
}

int
rp_chan_create(struct rp_dev *dev, struct rp_ctrl_chan *c)
{
	struct rp_chan *ch;
	int64_t off;

	if (c->fd < 0)
		return -EBADF;
	for (uint32_t i = 0; i < RP_MAX_CHAN; i++) {
		ch = &dev->chan[i];
		if (ch->valid)
			continue;
		off = rp_region_alloc(dev, sizeof(struct rp_chan_ctl));
		if (off < 0)
			return (int)off;
		memset(ch, 0, sizeof(*ch));
		ch->valid = true;
		ch->fd = c->fd;
		ch->sock = rp_fd_is_sock(c->fd);
		ch->off = off;
		ch->ctl = rp_region_ptr(dev, off);
		c->chn = i;
		c->off = off;
		return 0;
	}
	return -ENOMEM;
}

int
rp_chan_destroy(struct rp_dev *dev, struct rp_ctrl_chan *c)
{
	struct rp_chan *ch = chan_get(dev, (int)c->chn);

	if (ch == NULL)
		return -EINVAL;
	if (ch->nr_cq != 0)
		return -EBUSY;
	rp_region_free(dev, ch->off, sizeof(struct rp_chan_ctl));
	ch->valid = false;
	return 0;
}
