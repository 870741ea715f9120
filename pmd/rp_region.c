/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device's shared region: one memzone, the device control block at
 * offset 0, and a page allocator for queues and rings.  Objects are named
 * by offset so the region could be mapped at another address by another
 * process.  Only the engine lcore allocates (control path), so no lock.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

#include "rp_log.h"
#include "rp_obj.h"

#define RP_PAGE 4096u

int
rp_region_init(struct rp_dev *dev, uint32_t size_mb)
{
	char name[RTE_MEMZONE_NAMESIZE];
	uint64_t size = (uint64_t)size_mb << 20;
	uint32_t hdr_pages;

	snprintf(name, sizeof(name), "rp_region_%u", dev->id);
	dev->mz = rte_memzone_reserve_aligned(name, size, SOCKET_ID_ANY, 0,
					      RP_PAGE);
	if (dev->mz == NULL) {
		RP_LOG(ERR, "cannot reserve a %u MiB region: %s", size_mb,
		       rte_strerror(rte_errno));
		return -ENOMEM;
	}
	dev->ctl = dev->mz->addr;
	memset(dev->ctl, 0, size);
	dev->region_size = size;
	dev->region_pages = size / RP_PAGE;
	dev->region_map = rte_zmalloc("rp_region_map",
			RTE_ALIGN_CEIL(dev->region_pages, 64) / 8, 0);
	if (dev->region_map == NULL) {
		rte_memzone_free(dev->mz);
		dev->mz = NULL;
		return -ENOMEM;
	}
	/* The control block's pages are never handed out. */
	hdr_pages = RTE_ALIGN_CEIL(sizeof(struct rp_dev_ctl), RP_PAGE) / RP_PAGE;
	for (uint32_t i = 0; i < hdr_pages; i++)
		dev->region_map[i / 64] |= 1ull << (i % 64);
	return 0;
}

void
rp_region_fini(struct rp_dev *dev)
{
	rte_free(dev->region_map);
	dev->region_map = NULL;
	if (dev->mz != NULL)
		rte_memzone_free(dev->mz);
	dev->mz = NULL;
	dev->ctl = NULL;
}

static bool
page_used(const struct rp_dev *dev, uint32_t p)
{
	return dev->region_map[p / 64] & (1ull << (p % 64));
}

/* First fit over the page bitmap; returns an offset or a negative errno. */
int64_t
rp_region_alloc(struct rp_dev *dev, uint64_t size)
{
	uint32_t need = RTE_ALIGN_CEIL(size, RP_PAGE) / RP_PAGE;
	uint32_t run = 0;

	if (need == 0)
		need = 1;
	for (uint32_t p = 0; p < dev->region_pages; p++) {
		if (page_used(dev, p)) {
			run = 0;
			continue;
		}
		if (++run < need)
			continue;
		uint32_t first = p + 1 - need;

		for (uint32_t i = first; i <= p; i++)
			dev->region_map[i / 64] |= 1ull << (i % 64);
		memset(rp_region_ptr(dev, (uint64_t)first * RP_PAGE), 0,
		       (size_t)need * RP_PAGE);
		return (int64_t)first * RP_PAGE;
	}
	return -ENOMEM;
}

void
rp_region_free(struct rp_dev *dev, uint64_t off, uint64_t size)
{
	uint32_t first = off / RP_PAGE;
	uint32_t need = RTE_ALIGN_CEIL(size, RP_PAGE) / RP_PAGE;

	if (need == 0)
		need = 1;
	for (uint32_t i = first; i < first + need && i < dev->region_pages; i++)
		dev->region_map[i / 64] &= ~(1ull << (i % 64));
}
