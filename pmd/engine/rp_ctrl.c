/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: verbs calls become requests in the device's control slots,
 * executed by the engine lcore that owns the device, so no engine object
 * is ever touched by an application thread.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_engine.h"

typedef int (*rp_ctrl_fn)(struct rp_dev *dev, struct rp_ctrl_slot *req);

static int
ctrl_nop(struct rp_dev *dev __rte_unused, struct rp_ctrl_slot *req __rte_unused)
{
	return 0;
}

/* One adapter per operation: the handler takes its own request type. */
#define RP_CTRL_ADAPT(fn, member) \
static int \
ctrl_ ## fn(struct rp_dev *dev, struct rp_ctrl_slot *req) \
{ \
	return fn(dev, &req->u.member); \
}

RP_CTRL_ADAPT(rp_pd_alloc, pd)
RP_CTRL_ADAPT(rp_pd_free, pd)
RP_CTRL_ADAPT(rp_mr_reg, mr)
RP_CTRL_ADAPT(rp_mr_dereg, mr)
RP_CTRL_ADAPT(rp_mr_rereg, mr)
RP_CTRL_ADAPT(rp_mw_alloc, mw)
RP_CTRL_ADAPT(rp_mw_dealloc, mw)
RP_CTRL_ADAPT(rp_cq_resize, cq)
RP_CTRL_ADAPT(rp_cq_create, cq)
RP_CTRL_ADAPT(rp_cq_destroy, cq)
RP_CTRL_ADAPT(rp_qp_create, qp_create)
RP_CTRL_ADAPT(rp_qp_modify, qp)
RP_CTRL_ADAPT(rp_qp_query, qp)
RP_CTRL_ADAPT(rp_qp_destroy, qp)
RP_CTRL_ADAPT(rp_ah_create, ah)
RP_CTRL_ADAPT(rp_ah_destroy, ah)
RP_CTRL_ADAPT(rp_chan_create, chan)
RP_CTRL_ADAPT(rp_chan_destroy, chan)
RP_CTRL_ADAPT(rp_async_reg, async)
RP_CTRL_ADAPT(rp_async_unreg, async)
RP_CTRL_ADAPT(rp_srq_modify, srq)
RP_CTRL_ADAPT(rp_srq_query, srq)
RP_CTRL_ADAPT(rp_mcast_attach, mcast)
RP_CTRL_ADAPT(rp_mcast_detach, mcast)
/* A TM-SRQ is the tag matcher's, built on an SRQ (rp_tm.c). */
RP_CTRL_ADAPT(rp_tm_srq_destroy, srq)
RP_CTRL_ADAPT(rp_arena_create, arena)
RP_CTRL_ADAPT(rp_arena_destroy, arena)
RP_CTRL_ADAPT(rp_gsi_bind, gsi_bind)
RP_CTRL_ADAPT(rp_gsi_will, gsi_will)

/* Counted on the lcore, the only writer of the tables. */
static int
ctrl_objects(struct rp_dev *dev, struct rp_ctrl_slot *req)
{
	struct rp_ctrl_objects *o = &req->u.objects;

	memset(o, 0, sizeof(*o));
	for (uint32_t i = 1; i < RP_MAX_PD; i++)
		o->pds += dev->pd_used[i];
	for (uint32_t i = 1; i < RP_MAX_MR; i++)
		o->mrs += dev->mr[i].valid;
	for (uint32_t i = 0; i < RP_MAX_CQ; i++)
		o->cqs += dev->cq[i] != NULL;
	for (uint32_t i = 0; i < RP_MAX_QP; i++)
		o->qps += dev->qp[i] != NULL;
	for (uint32_t i = 0; i < RP_MAX_SRQ; i++)
		o->srqs += dev->srq[i] != NULL;
	for (uint32_t i = 1; i < RP_MAX_AH; i++)
		o->ahs += dev->ah[i].valid;
	for (uint32_t i = 0; i < RP_MAX_CHAN; i++)
		o->chans += dev->chan[i].valid;
	for (uint32_t i = 0; i < RP_MAX_ARENAS; i++) {
		const struct rp_arena *a = &dev->arena[i];

		if (!a->used)
			continue;
		o->arenas += i != 0;
		o->async_fds += a->nr_fd;
		for (uint32_t p = 0; p < a->pages; p++)
			o->region_pages += (a->map[p / 64] >> (p % 64)) & 1;
	}
	return 0;
}

static int
ctrl_rp_srq_create(struct rp_dev *dev, struct rp_ctrl_slot *req)
{
	struct rp_ctrl_srq *c = &req->u.srq;

	return c->type == RP_SRQ_TM ? rp_tm_srq_create(dev, c) :
		rp_srq_create(dev, c);
}

static const rp_ctrl_fn rp_ctrl_ops[RP_CTRL_OP_MAX] = {
	[RP_CTRL_NOP] = ctrl_nop,
	[RP_CTRL_PD_ALLOC] = ctrl_rp_pd_alloc,
	[RP_CTRL_PD_FREE] = ctrl_rp_pd_free,
	[RP_CTRL_MR_REG] = ctrl_rp_mr_reg,
	[RP_CTRL_MR_DEREG] = ctrl_rp_mr_dereg,
	[RP_CTRL_CQ_CREATE] = ctrl_rp_cq_create,
	[RP_CTRL_CQ_DESTROY] = ctrl_rp_cq_destroy,
	[RP_CTRL_QP_CREATE] = ctrl_rp_qp_create,
	[RP_CTRL_QP_MODIFY] = ctrl_rp_qp_modify,
	[RP_CTRL_QP_QUERY] = ctrl_rp_qp_query,
	[RP_CTRL_QP_DESTROY] = ctrl_rp_qp_destroy,
	[RP_CTRL_AH_CREATE] = ctrl_rp_ah_create,
	[RP_CTRL_AH_DESTROY] = ctrl_rp_ah_destroy,
	[RP_CTRL_CHAN_CREATE] = ctrl_rp_chan_create,
	[RP_CTRL_CHAN_DESTROY] = ctrl_rp_chan_destroy,
	[RP_CTRL_ASYNC_REG] = ctrl_rp_async_reg,
	[RP_CTRL_ASYNC_UNREG] = ctrl_rp_async_unreg,
	[RP_CTRL_SRQ_CREATE] = ctrl_rp_srq_create,
	[RP_CTRL_SRQ_MODIFY] = ctrl_rp_srq_modify,
	[RP_CTRL_SRQ_QUERY] = ctrl_rp_srq_query,
	[RP_CTRL_SRQ_DESTROY] = ctrl_rp_tm_srq_destroy,
	[RP_CTRL_MCAST_ATTACH] = ctrl_rp_mcast_attach,
	[RP_CTRL_MCAST_DETACH] = ctrl_rp_mcast_detach,
	[RP_CTRL_MR_REREG] = ctrl_rp_mr_rereg,
	[RP_CTRL_MW_ALLOC] = ctrl_rp_mw_alloc,
	[RP_CTRL_MW_DEALLOC] = ctrl_rp_mw_dealloc,
	[RP_CTRL_CQ_RESIZE] = ctrl_rp_cq_resize,
	[RP_CTRL_OBJECTS] = ctrl_objects,
	[RP_CTRL_ARENA_CREATE] = ctrl_rp_arena_create,
	[RP_CTRL_ARENA_DESTROY] = ctrl_rp_arena_destroy,
	[RP_CTRL_GSI_BIND] = ctrl_rp_gsi_bind,
	[RP_CTRL_GSI_WILL] = ctrl_rp_gsi_will,
};

int
rp_ctrl_init(struct rp_dev *dev)
{
	char name[RTE_RING_NAMESIZE];

	/* In the engine's own memory, not the shared region: a process
	 * attached to the device must not be able to write a request the
	 * engine would run for the host (rp_serve.c). */
	dev->ctrl_slot = rte_zmalloc("rp_ctrl_slot",
			sizeof(dev->ctrl_slot[0]) * RP_CTRL_SLOTS, 0);
	if (dev->ctrl_slot == NULL)
		return -ENOMEM;
	snprintf(name, sizeof(name), "rp_ctrl_%u", dev->id);
	dev->ctrl_ring = rte_ring_create(name, RP_CTRL_SLOTS, SOCKET_ID_ANY,
					 RING_F_SC_DEQ);
	if (dev->ctrl_ring == NULL) {
		rte_free(dev->ctrl_slot);
		dev->ctrl_slot = NULL;
		return -rte_errno;
	}
	return 0;
}

void
rp_ctrl_fini(struct rp_dev *dev)
{
	rte_ring_free(dev->ctrl_ring);
	rte_free(dev->ctrl_slot);
	dev->ctrl_slot = NULL;
	dev->ctrl_ring = NULL;
}

/* Engine lcore: execute queued requests.  Returns true if it did work. */
bool
rp_ctrl_poll(struct rp_dev *dev)
{
	void *objs[4];
	unsigned int n;

	n = rte_ring_sc_dequeue_burst(dev->ctrl_ring, objs, RTE_DIM(objs), NULL);
	/* Requests touch any shard's objects: the others wait. */
	if (n != 0)
		rp_shard_pause(dev);
	for (unsigned int i = 0; i < n; i++) {
		uintptr_t idx = (uintptr_t)objs[i];
		struct rp_ctrl_slot *slot;
		struct rp_ctrl_slot req;
		int ret = -EINVAL;

		if (idx >= RP_CTRL_SLOTS)
			continue;
		slot = &dev->ctrl_slot[idx];
		/* A0: pairs with R0 in rp_ctrl_call: the request is complete. */
		if (rp_load_acquire(&slot->state) != RP_SLOT_POSTED)
			continue;
		/* Copy before validating: the caller cannot change it under us. */
		memcpy(&req, slot, sizeof(req));
		/* The request's objects are in its arena: so are their rings. */
		if (req.op < RP_CTRL_OP_MAX && rp_ctrl_ops[req.op] != NULL &&
		    req.arena < RP_MAX_ARENAS && dev->arena[req.arena].used) {
			dev->cur_arena = req.arena;
			ret = rp_ctrl_ops[req.op](dev, &req);
			dev->cur_arena = 0;
		}
		memcpy(&slot->u, &req.u, sizeof(req.u));
		slot->result = ret;
		/* R1: pairs with A1 in rp_ctrl_call: the reply is visible. */
		rp_store_release(&slot->state, RP_SLOT_DONE);
	}
	if (n != 0)
		rp_shard_resume(dev);
	return n != 0;
}

static struct rp_dev *
ctrl_dev(unsigned int id)
{
	return id < rp_nr_devs ? rp_devs[id] : NULL;
}

int
rp_ctrl_call(unsigned int id, struct rp_ctrl_slot *in)
{
	struct rp_dev *dev = ctrl_dev(id);
	struct rp_ctrl_slot *slot = NULL;
	const struct timespec ts = { .tv_nsec = 20000 };
	uint32_t idx, spins;

	if (dev == NULL || dev->ctl == NULL)
		return -ENODEV;
	if (in->op >= RP_CTRL_OP_MAX)
		return -EINVAL;
	for (spins = 0; slot == NULL; spins++) {
		for (idx = 0; idx < RP_CTRL_SLOTS; idx++) {
			uint32_t exp = RP_SLOT_FREE;

			if (rp_cas(&dev->ctrl_slot[idx].state, &exp,
				   RP_SLOT_CLAIMED)) {
				slot = &dev->ctrl_slot[idx];
				break;
			}
		}
		if (slot == NULL)
			nanosleep(&ts, NULL);
	}
	slot->op = in->op;
	slot->arena = in->arena;
	slot->result = 0;
	memcpy(&slot->u, &in->u, sizeof(in->u));
	/* R0: pairs with A0 in rp_ctrl_poll. */
	rp_store_release(&slot->state, RP_SLOT_POSTED);
	while (rte_ring_mp_enqueue(dev->ctrl_ring, (void *)(uintptr_t)idx) != 0)
		nanosleep(&ts, NULL);
	rp_dev_doorbell(id);
	/* A1: pairs with R1 in rp_ctrl_poll. */
	for (spins = 0; rp_load_acquire(&slot->state) != RP_SLOT_DONE; spins++) {
		if (spins < 2000)
			rte_pause();
		else
			nanosleep(&ts, NULL);
	}
	memcpy(&in->u, &slot->u, sizeof(in->u));
	in->result = slot->result;
	rp_store_release(&slot->state, RP_SLOT_FREE);
	return in->result;
}
