/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Memory windows (IBTA 10.6): a type 1 or type 2 window is a key of the
 * MR table that names nothing until bound to a range of an MR it narrows
 * (ibv_bind_mw(), IBV_WR_BIND_MW).  A bound window holds the view it
 * gives (addr, iova, length, access), so remote accesses resolve it per
 * packet through rp_mr_lookup() as they resolve an MR; a type 2 window
 * also serves only the QP it was bound through.  A type 2 window is
 * invalidated by IBV_WR_LOCAL_INV or by a SEND with Invalidate naming it.
 *
 * Binds and invalidations are WQEs, executed by the requester in the QP's
 * order (rp_req.c); everything here runs on the device's lcore.
 */

#include <errno.h>

#include <infiniband/verbs.h>

#include "rp_transport.h"

#define RP_MW_ACCESS (IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE | \
	IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED)

int
rp_mw_alloc(struct rp_dev *dev, struct rp_ctrl_mw *mw)
{
	struct rp_mr *m;

	if (mw->pdn >= RP_MAX_PD || !dev->pd_used[mw->pdn])
		return -EINVAL;
	if (mw->type != IBV_MW_TYPE_1 && mw->type != IBV_MW_TYPE_2)
		return -EINVAL;
	m = rp_key_alloc(dev, mw->type == IBV_MW_TYPE_1 ? RP_KEY_MW1 :
			 RP_KEY_MW2, mw->pdn);
	if (m == NULL)
		return -ENOMEM;
	mw->rkey = m->key;
	return 0;
}

/* Unbind a window: its MR may be deregistered again. */
static void
mw_unbind(struct rp_dev *dev, struct rp_mr *w)
{
	if (!w->bound)
		return;
	dev->mr[w->mr_idx].nr_mw--;
	w->bound = false;
	w->length = 0;
	w->access = 0;
}

/* The window named by a key's index, whatever its key part says. */
static struct rp_mr *
mw_by_index(struct rp_dev *dev, uint32_t rkey)
{
	uint32_t idx = RP_KEY_IDX(rkey);

	if (idx == 0 || idx >= RP_MAX_MR || !dev->mr[idx].valid ||
	    dev->mr[idx].kind == RP_KEY_MR)
		return NULL;
	return &dev->mr[idx];
}

int
rp_mw_dealloc(struct rp_dev *dev, struct rp_ctrl_mw *mw)
{
	struct rp_mr *w = mw_by_index(dev, mw->rkey);

	if (w == NULL)
		return -EINVAL;
	mw_unbind(dev, w);
	w->valid = false;
	dev->pd_refs[w->pdn]--;
	return 0;
}

/*
 * The entry a remote request's rkey names, for `qp`: as rp_mr_lookup(),
 * and a type 2 window only through the QP it is bound to.
 */
struct rp_mr *
rp_rkey_lookup(struct rp_qp *qp, uint32_t rkey, uint64_t va, uint64_t len,
	       uint32_t access)
{
	struct rp_mr *m = rp_mr_lookup(qp->dev, rkey, qp->pdn, va, len, access);

	if (m != NULL && m->kind == RP_KEY_MW2 && m->qpn != qp->qpn)
		return NULL;
	return m;
}

/*
 * Execute an IBV_WR_BIND_MW WQE of `qp` (fields: rp_abi.h).  Returns a
 * work completion status: IBV_WC_MW_BIND_ERR when the window, the MR or
 * the request do not allow the bind.
 */
static uint32_t mw_bind(struct rp_qp *qp, const struct rp_send_wqe *w);

/* Shards read windows under the same lock (rp_mr_lookup()). */
uint32_t
rp_mw_bind(struct rp_qp *qp, const struct rp_send_wqe *w)
{
	uint32_t st;

	rp_dev_shared_lock(qp->dev);
	st = mw_bind(qp, w);
	rp_dev_shared_unlock(qp->dev);
	return st;
}

static uint32_t
mw_bind(struct rp_qp *qp, const struct rp_send_wqe *w)
{
	struct rp_dev *dev = qp->dev;
	struct rp_mr *win = mw_by_index(dev, w->rkey);
	uint32_t access = (uint32_t)w->swap;
	uint64_t addr = w->remote_addr, len = w->compare_add;
	struct rp_mr *mr;

	if (win == NULL || win->pdn != qp->pdn || (access & ~RP_MW_ACCESS))
		return IBV_WC_MW_BIND_ERR;
	/* A bind changes only the key's low 8 bits, the consumer's key
	 * (ibv_inc_rkey()); the rest is the slot's index and generation,
	 * which no consumer may set back to a stale key's. */
	if ((w->rkey ^ win->key) & ~0xffu)
		return IBV_WC_MW_BIND_ERR;
	/*
	 * Type 2: only a free window binds (o10-37.2.30: invalidate it
	 * first), and never to nothing (o10-37.2.40: a zero-length bind
	 * does not invalidate it).  Type 1: a zero-length bind unbinds; it
	 * is never zero based (o10-36.2.2).
	 */
	if (win->kind == RP_KEY_MW2 && (win->bound || len == 0))
		return IBV_WC_MW_BIND_ERR;
	if (win->kind == RP_KEY_MW1) {
		if (access & IBV_ACCESS_ZERO_BASED)
			return IBV_WC_MW_BIND_ERR;
		if (len == 0) {
			mw_unbind(dev, win);
			win->key = w->rkey;
			return IBV_WC_SUCCESS;
		}
	}
	/*
	 * The MR: of the QP's (and so the window's) PD (C10-72), open to
	 * binding (C10-73), not zero based (as rxe refuses it).  It needs
	 * no remote right: the window gives those.
	 */
	mr = rp_key_entry(dev, w->imm_data);
	if (mr == NULL || mr->kind != RP_KEY_MR || mr->pdn != qp->pdn ||
	    !(mr->access & IBV_ACCESS_MW_BIND) ||
	    (mr->access & IBV_ACCESS_ZERO_BASED))
		return IBV_WC_MW_BIND_ERR;
	/* C10-74: remote write or atomic through it needs local write. */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IBV_ACCESS_LOCAL_WRITE))
		return IBV_WC_MW_BIND_ERR;
	/* C10-75: inside the MR; a zero-based window too (addr is where
	 * it starts in the MR).  Subtractions, so nothing wraps. */
	if (addr < mr->iova || addr - mr->iova > mr->length ||
	    len > mr->length - (addr - mr->iova))
		return IBV_WC_MW_BIND_ERR;
	mw_unbind(dev, win);
	win->key = w->rkey;
	win->addr = mr->addr + (addr - mr->iova);
	win->mem = mr->mem;
	win->implicit = mr->implicit;
	win->iova = (access & IBV_ACCESS_ZERO_BASED) ? 0 : addr;
	win->length = len;
	win->access = access & ~(uint32_t)IBV_ACCESS_ZERO_BASED;
	win->mr_idx = RP_KEY_IDX(mr->key);
	win->qpn = win->kind == RP_KEY_MW2 ? qp->qpn : 0;
	win->bound = true;
	mr->nr_mw++;
	return IBV_WC_SUCCESS;
}

/*
 * Invalidate the rkey of a type 2 window bound to `qp` (LOCAL_INV, or a
 * SEND with Invalidate that arrived on it).  rocepmd has
 * no fast-registered MR, the other kind of invalidatable key: an MR, a
 * type 1 window or a window of another QP is refused (-EINVAL).
 */
int
rp_key_invalidate(struct rp_qp *qp, uint32_t rkey)
{
	struct rp_mr *win;
	int ret = -EINVAL;

	rp_dev_shared_lock(qp->dev);
	win = rp_key_entry(qp->dev, rkey);
	if (win != NULL && win->kind == RP_KEY_MW2 && win->bound &&
	    win->pdn == qp->pdn && win->qpn == qp->qpn) {
		mw_unbind(qp->dev, win);
		ret = 0;
	}
	rp_dev_shared_unlock(qp->dev);
	return ret;
}

/*
 * A QP is destroyed: the type 2 windows bound through it can serve no
 * one any more.  They are invalidated (free again, their MRs deregistrable)
 * rather than left pointing at a QPN a later QP may take.
 */
void
rp_mw_qp_gone(struct rp_dev *dev, uint32_t qpn)
{
	for (uint32_t i = 1; i < RP_MAX_MR; i++) {
		struct rp_mr *w = &dev->mr[i];

		if (w->valid && w->kind == RP_KEY_MW2 && w->bound &&
		    w->qpn == qpn)
			mw_unbind(dev, w);
	}
}
