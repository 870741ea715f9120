/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path: verbs calls become requests in the device's control slots,
 * executed by the engine lcore that owns the device, so no engine object
 * is ever touched by an application thread.
 */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "rp_atomic.h"
#include "rp_engine.h"

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
RP_CTRL_ADAPT(rp_cq_moderate, cq_mod)
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
RP_CTRL_ADAPT(rp_dcqcn_query, qp_cc)

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

/* The slot's offset of a 32-bit id: any other size fails to build. */
#define ID(f) (offsetof(struct rp_ctrl_slot, u.f) + 0 * \
	sizeof(char[sizeof(((struct rp_ctrl_slot *)0)->u.f) == 4 ? 1 : -1]))
#define OWN(k, f)	{ ID(f), RP_QUOTA_ ## k, 0 }
#define OWN_OPT(k, f)	{ ID(f), RP_QUOTA_ ## k, RP_CTRL_REF_OPT }
#define MAKES(k, f)	.acct = RP_CTRL_MAKES, .kind = RP_QUOTA_ ## k, .id = ID(f)
#define ENDS(k, f)	.acct = RP_CTRL_ENDS, .kind = RP_QUOTA_ ## k, .id = ID(f)
#define ATTACH		RP_CTRL_F_ATTACH
#define RUN(fn, fl)	.run = fn, .flags = (fl)

/*
 * Every op, once: its handler and what the attach server checks and
 * counts of an attached client's request (rp_serve_check.c,
 * rp_serve_quota.c).  An op without ATTACH is the host's alone.
 */
const struct rp_ctrl_desc rp_ctrl_descs[RP_CTRL_OP_MAX] = {
	[RP_CTRL_NOP] = { RUN(ctrl_nop, ATTACH) },
	[RP_CTRL_PD_ALLOC] = { RUN(ctrl_rp_pd_alloc, ATTACH), MAKES(PD, pd.pdn) },
	[RP_CTRL_PD_FREE] = { RUN(ctrl_rp_pd_free, ATTACH), ENDS(PD, pd.pdn),
		.own = { OWN(PD, pd.pdn) } },
	[RP_CTRL_MR_REG] = {
		RUN(ctrl_rp_mr_reg, ATTACH | RP_CTRL_F_MEM | RP_CTRL_F_PAGES),
		MAKES(MR, mr.lkey), .own = { OWN(PD, mr.pdn) } },
	[RP_CTRL_MR_DEREG] = { RUN(ctrl_rp_mr_dereg, ATTACH), ENDS(MR, mr.lkey),
		.own = { OWN(MR, mr.lkey) } },
	[RP_CTRL_CQ_CREATE] = { RUN(ctrl_rp_cq_create, ATTACH),
		MAKES(CQ, cq.cqn), .own = { OWN_OPT(CHAN, cq.chan) } },
	[RP_CTRL_CQ_DESTROY] = { RUN(ctrl_rp_cq_destroy, ATTACH),
		ENDS(CQ, cq.cqn), .own = { OWN(CQ, cq.cqn) } },
	[RP_CTRL_QP_CREATE] = {
		RUN(ctrl_rp_qp_create, ATTACH | RP_CTRL_F_GSI),
		MAKES(QP, qp_create.qpn),
		.own = { OWN(PD, qp_create.pdn), OWN(CQ, qp_create.send_cqn),
			 OWN(CQ, qp_create.recv_cqn),
			 OWN_OPT(SRQ, qp_create.srqn) } },
	[RP_CTRL_QP_MODIFY] = { RUN(ctrl_rp_qp_modify, ATTACH),
		.own = { OWN(QP, qp.qpn) } },
	[RP_CTRL_QP_QUERY] = { RUN(ctrl_rp_qp_query, ATTACH),
		.own = { OWN(QP, qp.qpn) } },
	[RP_CTRL_QP_DESTROY] = {
		RUN(ctrl_rp_qp_destroy, ATTACH | RP_CTRL_F_GSI),
		ENDS(QP, qp.qpn), .own = { OWN(QP, qp.qpn) } },
	[RP_CTRL_AH_CREATE] = { RUN(ctrl_rp_ah_create, ATTACH),
		MAKES(AH, ah.ahn), .own = { OWN(PD, ah.pdn) } },
	[RP_CTRL_AH_DESTROY] = { RUN(ctrl_rp_ah_destroy, ATTACH),
		ENDS(AH, ah.ahn), .own = { OWN(AH, ah.ahn) } },
	/* The server makes the descriptor these carry (rp_serve_client.c). */
	[RP_CTRL_CHAN_CREATE] = { RUN(ctrl_rp_chan_create, ATTACH),
		MAKES(CHAN, chan.chn) },
	[RP_CTRL_CHAN_DESTROY] = { RUN(ctrl_rp_chan_destroy, ATTACH),
		ENDS(CHAN, chan.chn), .own = { OWN(CHAN, chan.chn) } },
	/* Attached, a registration is named by the server's id for it. */
	[RP_CTRL_ASYNC_REG] = { RUN(ctrl_rp_async_reg, ATTACH),
		MAKES(ASYNC, async.id) },
	[RP_CTRL_ASYNC_UNREG] = { RUN(ctrl_rp_async_unreg, ATTACH),
		ENDS(ASYNC, async.id), .own = { OWN(ASYNC, async.id) } },
	[RP_CTRL_SRQ_CREATE] = { RUN(ctrl_rp_srq_create, ATTACH),
		MAKES(SRQ, srq.srqn),
		.own = { OWN(PD, srq.pdn), OWN_OPT(CQ, srq.cqn) } },
	[RP_CTRL_SRQ_MODIFY] = { RUN(ctrl_rp_srq_modify, ATTACH),
		.own = { OWN(SRQ, srq.srqn) } },
	[RP_CTRL_SRQ_QUERY] = { RUN(ctrl_rp_srq_query, ATTACH),
		.own = { OWN(SRQ, srq.srqn) } },
	[RP_CTRL_SRQ_DESTROY] = { RUN(ctrl_rp_tm_srq_destroy, ATTACH),
		ENDS(SRQ, srq.srqn), .own = { OWN(SRQ, srq.srqn) } },
	[RP_CTRL_MCAST_ATTACH] = { RUN(ctrl_rp_mcast_attach, ATTACH),
		.own = { OWN(QP, mcast.qpn) } },
	[RP_CTRL_MCAST_DETACH] = { RUN(ctrl_rp_mcast_detach, ATTACH),
		.own = { OWN(QP, mcast.qpn) } },
	[RP_CTRL_MR_REREG] = {
		RUN(ctrl_rp_mr_rereg, ATTACH | RP_CTRL_F_MEM | RP_CTRL_F_PAGES),
		.id = ID(mr.lkey),
		.own = { { ID(mr.pdn), RP_QUOTA_PD, RP_CTRL_REF_NEW_PD },
			 OWN(MR, mr.lkey) } },
	[RP_CTRL_MW_ALLOC] = { RUN(ctrl_rp_mw_alloc, ATTACH),
		MAKES(MW, mw.rkey), .own = { OWN(PD, mw.pdn) } },
	[RP_CTRL_MW_DEALLOC] = { RUN(ctrl_rp_mw_dealloc, ATTACH),
		ENDS(MW, mw.rkey), .own = { OWN(MW, mw.rkey) } },
	[RP_CTRL_CQ_RESIZE] = { RUN(ctrl_rp_cq_resize, ATTACH),
		.own = { OWN(CQ, cq.cqn) } },
	[RP_CTRL_OBJECTS] = { RUN(ctrl_objects, 0) },
	[RP_CTRL_ARENA_CREATE] = { RUN(ctrl_rp_arena_create, 0) },
	[RP_CTRL_ARENA_DESTROY] = { RUN(ctrl_rp_arena_destroy, 0) },
	/* Only through the client's own GSI agent (its RDMA CM). */
	[RP_CTRL_GSI_BIND] = { RUN(ctrl_rp_gsi_bind, ATTACH),
		.own = { { ID(gsi_bind.qpn), RP_QUOTA_QP, RP_CTRL_REF_GSI } } },
	[RP_CTRL_GSI_WILL] = { RUN(ctrl_rp_gsi_will, ATTACH),
		.own = { { ID(gsi_will.qpn), RP_QUOTA_QP, RP_CTRL_REF_GSI } } },
	/* The engine's telemetry only (/rocepmd/qp). */
	[RP_CTRL_QP_CC] = { RUN(ctrl_rp_dcqcn_query, 0) },
	[RP_CTRL_CQ_MODERATE] = { RUN(ctrl_rp_cq_moderate, ATTACH),
		.own = { OWN(CQ, cq_mod.cqn) } },
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
		if (req.op < RP_CTRL_OP_MAX && rp_ctrl_descs[req.op].run != NULL &&
		    req.arena < RP_MAX_ARENAS && dev->arena[req.arena].used) {
			dev->cur_arena = req.arena;
			ret = rp_ctrl_descs[req.op].run(dev, &req);
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

static int
ctrl_call(struct rp_dev *dev, struct rp_ctrl_slot *in)
{
	struct rp_ctrl_slot *slot = NULL;
	const struct timespec ts = { .tv_nsec = 20000 };
	uint32_t idx, spins;

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
	rp_dev_doorbell(dev->id);
	rp_engine_kick(dev->id);
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

int
rp_ctrl_call(unsigned int id, struct rp_ctrl_slot *in)
{
	struct rp_dev *dev;
	int ret;

	if (in->op >= RP_CTRL_OP_MAX)
		return -EINVAL;
	/* the device stays until the call returns (rp_engine_hold()) */
	if (!rp_engine_hold())
		return -ENODEV;
	dev = ctrl_dev(id);
	ret = dev == NULL || dev->ctl == NULL ? -ENODEV : ctrl_call(dev, in);
	rp_engine_release();
	return ret;
}
