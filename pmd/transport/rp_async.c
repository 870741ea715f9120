/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events (ibv_get_async_event(3)): the engine side.
 *
 * Every arena (the device region, and one per attached process) has one
 * event ring (struct rp_async_ctl in rp_abi.h) and a set of eventfds, one
 * per context that listens (RP_CTRL_ASYNC_REG; an attached process's are
 * the host's ends of socket pairs, rp_signal.h).  rp_async_push() publishes
 * an event in the ring of the process that owns the QP, CQ or SRQ it
 * names, a port or device event in every ring, and signals the ring's
 * fds: each context of the process consumes the ring with its own index
 * and keeps those that name its objects.  Runs on the engine lcore only;
 * never blocks.
 */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_transport.h"
#include "rp_signal.h"

/* One arena's ring and eventfds. */
static void
async_push_arena(struct rp_dev *dev, struct rp_arena *a, uint32_t type,
		 uint32_t num)
{
	struct rp_async_ctl *ring = a->async;
	struct rp_async_ev *ev;

	if (a->nr_fd == 0)
		return;			/* nobody listens */
	/* A0: pairs with the shim's release of cons once every context has
	 * taken the entries before it: those slots may be reused.  Each
	 * arena's ring is its own process's: a cons it breaks drops only
	 * its own events. */
	if (a->prod - rp_load_acquire(&ring->cons) >= RP_ASYNC_EVENTS) {
		rp_store_relaxed(&ring->dropped, ring->dropped + 1);
		RP_LOG_RL(rp_logtype, ERR, "%s: async event %u (0x%x) dropped: ring full",
			  dev->ctl->name, type, num);
		return;
	}
	ev = &ring->ev[a->prod % RP_ASYNC_EVENTS];
	ev->type = type;
	ev->num = num;
	a->prod++;
	/* R0: pairs with A0 in ibv_get_async_event: entry before prod, and
	 * prod before the eventfd count that lets a reader look. */
	rp_store_release(&ring->prod, a->prod);
	/* Never blocks (rp_signal.h): full is EAGAIN, the event in the ring. */
	for (uint32_t i = 0; i < a->nr_fd; i++)
		if (!rp_fd_signal(a->async_fd[i], a->async_sock[i]) &&
		    errno != EAGAIN)
			RP_LOG_RL(rp_logtype, ERR, "%s: async fd %d: signal failed: %s",
				  dev->ctl->name, a->async_fd[i],
				  strerror(errno));
}

#define ASYNC_ALL	RP_MAX_ARENAS	/* a device-wide event */
#define ASYNC_NONE	(RP_MAX_ARENAS + 1)	/* its object is gone */

/*
 * Whose an event is: an event naming a QP, CQ or SRQ goes to the arena of
 * the process that created it (issue 24: another process must not learn
 * of it), a port or device event to every arena.
 */
static uint32_t
async_owner(struct rp_dev *dev, uint32_t type, uint32_t num)
{
	switch (type) {
	case IBV_EVENT_CQ_ERR: {
		const struct rp_cq *cq = rp_cq_get(dev, num);

		return cq != NULL ? cq->arena : ASYNC_NONE;
	}
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED: {
		const struct rp_qp *qp = rp_qp_get(dev, num);

		return qp != NULL ? qp->arena : ASYNC_NONE;
	}
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED: {
		const struct rp_srq *srq = rp_srq_get(dev, num);

		return srq != NULL ? srq->arena : ASYNC_NONE;
	}
	default:
		return ASYNC_ALL;
	}
}

void
rp_async_push(struct rp_dev *dev, uint32_t type, uint32_t num)
{
	uint32_t owner = async_owner(dev, type, num);

	RP_LOG(DEBUG, "%s: async event %u for 0x%x", dev->ctl->name, type,
	       num);
	if (owner == ASYNC_NONE) {
		RP_LOG(DEBUG, "%s: async event %u for 0x%x: no such object",
		       dev->ctl->name, type, num);
		return;
	}
	/* Each arena's ring has one producer: with several shards, the
	 * lock makes them one (an error path, never a packet's). */
	rp_dev_shared_lock(dev);
	if (owner != ASYNC_ALL) {
		if (dev->arena[owner].used)
			async_push_arena(dev, &dev->arena[owner], type, num);
	} else {
		for (uint32_t i = 0; i < RP_MAX_ARENAS; i++)
			if (dev->arena[i].used)
				async_push_arena(dev, &dev->arena[i], type,
						 num);
	}
	rp_dev_shared_unlock(dev);
}

int
rp_async_reg(struct rp_dev *dev, struct rp_ctrl_async *r)
{
	struct rp_arena *a = &dev->arena[dev->cur_arena];

	if (r->fd < 0)
		return -EBADF;
	for (uint32_t i = 0; i < a->nr_fd; i++)
		if (a->async_fd[i] == r->fd)
			return -EEXIST;
	if (a->nr_fd == RP_ASYNC_FDS)
		return -ENOSPC;
	a->async_sock[a->nr_fd] = rp_fd_is_sock(r->fd);
	a->async_fd[a->nr_fd++] = r->fd;
	r->prod = a->prod;
	return 0;
}

int
rp_async_unreg(struct rp_dev *dev, struct rp_ctrl_async *r)
{
	struct rp_arena *a = &dev->arena[dev->cur_arena];

	for (uint32_t i = 0; i < a->nr_fd; i++) {
		if (a->async_fd[i] == r->fd) {
			a->async_fd[i] = a->async_fd[--a->nr_fd];
			a->async_sock[i] = a->async_sock[a->nr_fd];
			r->prod = a->prod;
			return 0;
		}
	}
	return -ENOENT;
}
