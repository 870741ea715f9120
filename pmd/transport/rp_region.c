/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared memory of a device: arenas, each one memfd mapping with a
 * page allocator for queues and rings.  Arena 0 is the device region: the
 * device control block at offset 0, and the objects of the engine's own
 * process.  Every process attached to a host has an arena of its own
 * (rp_serve.c), with its async event ring at offset 0: its objects live
 * there, where no other process can write, and it maps the device region
 * read-only (sealed F_SEAL_FUTURE_WRITE).  Objects are named by offset in
 * their arena, so each process maps it at its own address.  Only the
 * engine lcore allocates (control path), so no lock.
 */

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "rp_log.h"
#include "rp_transport.h"

#define RP_PAGE 4096u

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE	0x0010	/* Linux 5.1 */
#endif

static void
arena_fini(struct rp_arena *a)
{
	rte_free(a->map);
	a->map = NULL;
	if (a->base != NULL)
		munmap(a->base, a->size);
	a->base = NULL;
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	/* On the lcore, between its blocks: it polls this fd no more. */
	if (a->wake_fd >= 0)
		close(a->wake_fd);
	a->wake_fd = -1;
	a->used = false;
}

/* A new arena of size bytes whose first hdr bytes are never handed out. */
static int
arena_init(struct rp_arena *a, const char *name, uint64_t size, uint64_t hdr,
	   unsigned int seals)
{
	uint32_t hdr_pages = RTE_ALIGN_CEIL(hdr, RP_PAGE) / RP_PAGE;
	void *base;

	memset(a, 0, sizeof(*a));
	a->wake_fd = -1;
	a->fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (a->fd < 0) {
		RP_LOG(ERR, "%s: memfd: %s", name, strerror(errno));
		return -errno;
	}
	if (ftruncate(a->fd, (off_t)size) != 0) {
		RP_LOG(ERR, "%s: cannot size %" PRIu64 " bytes: %s", name, size,
		       strerror(errno));
		goto err;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd, 0);
	if (base == MAP_FAILED) {
		RP_LOG(ERR, "%s: cannot map %" PRIu64 " bytes: %s", name, size,
		       strerror(errno));
		goto err;
	}
	a->base = base;		/* a new memfd reads as zeros */
	a->size = size;
	/* Its size is final, and what is sealed against writing can only
	 * be mapped read-only by anyone else from now on. */
	if (fcntl(a->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | seals |
		  F_SEAL_SEAL) != 0) {
		RP_LOG(ERR, "%s: seals: %s", name, strerror(errno));
		goto err;
	}
	a->pages = size / RP_PAGE;
	a->map = rte_zmalloc("rp_arena_map", RTE_ALIGN_CEIL(a->pages, 64) / 8,
			     0);
	if (a->map == NULL)
		goto err;
	for (uint32_t i = 0; i < hdr_pages; i++)
		a->map[i / 64] |= 1ull << (i % 64);
	a->hdr_pages = hdr_pages;
	a->used = true;
	return 0;

err:
	arena_fini(a);
	return -ENOMEM;
}

int
rp_region_init(struct rp_dev *dev, uint32_t size_mb)
{
	struct rp_arena *a = &dev->arena[0];
	char name[32];
	int ret;

	for (unsigned int i = 0; i < RP_MAX_ARENAS; i++)
		dev->arena[i].fd = dev->arena[i].wake_fd = -1;
	dev->region.fd = dev->region.wake_fd = -1;
	/*
	 * The device region, which every attached process maps, holds the
	 * control block only; the objects of the engine's own process (the
	 * host's, when it serves) are in arena 0, whose fd goes to no one:
	 * no client reads their WQEs (inline data, addresses, rkeys).
	 */
	snprintf(name, sizeof(name), "rocepmd%u-region", dev->id);
	ret = arena_init(&dev->region, name,
			 RTE_ALIGN_CEIL(sizeof(struct rp_dev_ctl), RP_PAGE),
			 sizeof(struct rp_dev_ctl), F_SEAL_FUTURE_WRITE);
	if (ret < 0)
		return ret;
	dev->ctl = (struct rp_dev_ctl *)dev->region.base;
	dev->region_size = dev->region.size;
	dev->region_fd = dev->region.fd;
	snprintf(name, sizeof(name), "rocepmd%u-own", dev->id);
	ret = arena_init(a, name, (uint64_t)size_mb << 20,
			 sizeof(struct rp_arena_ctl), 0);
	if (ret < 0) {
		rp_region_fini(dev);
		return ret;
	}
	a->async = &((struct rp_arena_ctl *)a->base)->async;
	a->bell = ((struct rp_arena_ctl *)a->base)->bell;
	dev->cur_arena = 0;
	return 0;
}

void
rp_region_fini(struct rp_dev *dev)
{
	for (unsigned int i = 0; i < RP_MAX_ARENAS; i++)
		if (dev->arena[i].used || dev->arena[i].fd >= 0)
			arena_fini(&dev->arena[i]);
	if (dev->region.used || dev->region.fd >= 0)
		arena_fini(&dev->region);
	dev->ctl = NULL;
	dev->region_fd = -1;
}

int
rp_arena_create(struct rp_dev *dev, struct rp_ctrl_arena *c)
{
	char name[40];
	int ret;

	if (c->size_mb == 0 || c->size_mb > 4096)
		return -EINVAL;
	for (uint32_t i = 1; i < RP_MAX_ARENAS; i++) {
		struct rp_arena *a = &dev->arena[i];

		if (a->used)
			continue;
		snprintf(name, sizeof(name), "rocepmd%u-arena%u", dev->id, i);
		ret = arena_init(a, name, (uint64_t)c->size_mb << 20,
				 sizeof(struct rp_arena_ctl), 0);
		if (ret < 0)
			return ret;
		/* The process's own wake-up fd, never the lcore's: what it
		 * does with it (reads it, clears O_NONBLOCK) reaches nobody
		 * else (rp_lcore.c reads it with RWF_NOWAIT). */
		a->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (a->wake_fd < 0) {
			ret = -errno;
			RP_LOG(ERR, "%s: wake-up eventfd: %s", name,
			       strerror(errno));
			arena_fini(a);
			return ret;
		}
		a->async = &((struct rp_arena_ctl *)a->base)->async;
		a->bell = ((struct rp_arena_ctl *)a->base)->bell;
		c->id = i;
		c->size = a->size;
		return 0;
	}
	return -ENOSPC;
}

int
rp_arena_destroy(struct rp_dev *dev, struct rp_ctrl_arena *c)
{
	struct rp_arena *a;
	uint32_t used = 0;

	if (c->id == 0 || c->id >= RP_MAX_ARENAS || !dev->arena[c->id].used)
		return -EINVAL;
	a = &dev->arena[c->id];
	for (uint32_t p = 0; p < a->pages; p++)
		used += (a->map[p / 64] >> (p % 64)) & 1;
	/* Objects left in it: keep it (their rings live there). */
	if (used != a->hdr_pages || a->nr_fd != 0)
		return -EBUSY;
	arena_fini(a);
	return 0;
}

static bool
page_used(const struct rp_arena *a, uint32_t p)
{
	return a->map[p / 64] & (1ull << (p % 64));
}

/* First fit over the page bitmap; returns an offset or a negative errno. */
int64_t
rp_region_alloc(struct rp_dev *dev, uint64_t size)
{
	struct rp_arena *a = &dev->arena[dev->cur_arena];
	uint32_t need = RTE_ALIGN_CEIL(size, RP_PAGE) / RP_PAGE;
	uint32_t run = 0;

	if (need == 0)
		need = 1;
	for (uint32_t p = 0; p < a->pages; p++) {
		if (page_used(a, p)) {
			run = 0;
			continue;
		}
		if (++run < need)
			continue;
		uint32_t first = p + 1 - need;

		for (uint32_t i = first; i <= p; i++)
			a->map[i / 64] |= 1ull << (i % 64);
		memset(a->base + (uint64_t)first * RP_PAGE, 0,
		       (size_t)need * RP_PAGE);
		return (int64_t)first * RP_PAGE;
	}
	return -ENOMEM;
}

void
rp_region_free(struct rp_dev *dev, uint64_t off, uint64_t size)
{
	struct rp_arena *a = &dev->arena[dev->cur_arena];
	uint32_t first = off / RP_PAGE;
	uint32_t need = RTE_ALIGN_CEIL(size, RP_PAGE) / RP_PAGE;

	if (need == 0)
		need = 1;
	for (uint32_t i = first; i < first + need && i < a->pages; i++)
		if (i >= a->hdr_pages)
			a->map[i / 64] &= ~(1ull << (i % 64));
}
