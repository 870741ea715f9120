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

void
rp_async_push(struct rp_dev *dev, uint32_t type, uint32_t num)
{
	struct rp_async_ctl *ring = &dev->ctl->async;
	const uint64_t one = 1;
	struct rp_async_ev *ev;

	if (dev->async.nr_fd == 0)
		return;			/* nobody listens */
	/* A0: pairs with the shim's release of cons once every context has
	 * taken the entries before it: those slots may be reused. */
	if (dev->async.prod - rp_load_acquire(&ring->cons) >= RP_ASYNC_EVENTS) {
		rp_store_relaxed(&ring->dropped, ring->dropped + 1);
		RP_LOG_RL(rp_logtype, ERR, "%s: async event %u (0x%x) dropped: ring full",
			  dev->ctl->name, type, num);
		return;
	}
	ev = &ring->ev[dev->async.prod % RP_ASYNC_EVENTS];
	ev->type = type;
	ev->num = num;
	dev->async.prod++;
	/* R0: pairs with A0 in ibv_get_async_event: entry before prod, and
	 * prod before the eventfd count that lets a reader look. */
	rp_store_release(&ring->prod, dev->async.prod);
	RP_LOG(DEBUG, "%s: async event %s for 0x%x", dev->ctl->name,
	       ibv_event_type_str(type), num);
	for (uint32_t i = 0; i < dev->async.nr_fd; i++)
		if (write(dev->async.fd[i], &one, sizeof(one)) != sizeof(one))
			RP_LOG_RL(rp_logtype, ERR, "%s: async eventfd %d: write failed",
				  dev->ctl->name, dev->async.fd[i]);
}

/* Control request: start signalling `a->fd`; reply with the ring index. */
int
rp_async_reg(struct rp_dev *dev, struct rp_ctrl_async *a)
{
	if (a->fd < 0)
		return -EBADF;
	for (uint32_t i = 0; i < dev->async.nr_fd; i++)
		if (dev->async.fd[i] == a->fd)
			return -EEXIST;
	if (dev->async.nr_fd == RP_ASYNC_FDS)
		return -ENOSPC;
	dev->async.fd[dev->async.nr_fd++] = a->fd;
	a->prod = dev->async.prod;
	return 0;
}

/* Control request: stop signalling `a->fd` (the caller may close it then). */
int
rp_async_unreg(struct rp_dev *dev, struct rp_ctrl_async *a)
{
	for (uint32_t i = 0; i < dev->async.nr_fd; i++) {
		if (dev->async.fd[i] == a->fd) {
			dev->async.fd[i] = dev->async.fd[--dev->async.nr_fd];
			a->prod = dev->async.prod;
			return 0;
		}
	}
	return -ENOENT;
}
