/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events (ibv_get_async_event(3)): the engine side.
 *
 * Every device has one event ring in its control block (struct
 * rp_async_ctl in rp_abi.h) and a set of eventfds, one per context that
 * listens (RP_CTRL_ASYNC_REG).  rp_async_push() publishes an event and
 * signals every registered fd: each context consumes the ring with its own
 * index, so every context sees every event of the device and keeps those
 * that name its objects.  Runs on the engine lcore only; never blocks.
 */

#include <errno.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_obj.h"

/* One arena's ring and eventfds. */
static void
async_push_arena(struct rp_dev *dev, struct rp_arena *a, uint32_t type,
		 uint32_t num)
{
	struct rp_async_ctl *ring = a->async;
	const uint64_t one = 1;
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
	for (uint32_t i = 0; i < a->nr_fd; i++)
		if (write(a->async_fd[i], &one, sizeof(one)) != sizeof(one))
			RP_LOG_RL(rp_logtype, ERR, "%s: async eventfd %d: write failed",
				  dev->ctl->name, a->async_fd[i]);
}

/* Every event goes to every arena's ring: contexts filter what is not
 * theirs, as they always did. */
void
rp_async_push(struct rp_dev *dev, uint32_t type, uint32_t num)
{
	RP_LOG(DEBUG, "%s: async event %s for 0x%x", dev->ctl->name,
	       ibv_event_type_str(type), num);
	/* Each arena's ring has one producer: with several shards, the
	 * lock makes them one (an error path, never a packet's). */
	rp_dev_shared_lock(dev);
	for (uint32_t i = 0; i < RP_MAX_ARENAS; i++)
		if (dev->arena[i].used)
			async_push_arena(dev, &dev->arena[i], type, num);
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
			r->prod = a->prod;
			return 0;
		}
	}
	return -ENOENT;
}
