/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device's shared region: one memfd mapping, the device control block
 * at offset 0, and a page allocator for queues and rings.  Objects are
 * named by offset, so other processes map the same memfd at their own
 * address: the attach server hands it out (rp_serve.c, rp_attach.h).
 * Only the engine lcore allocates (control path), so no lock.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "rp_log.h"
#include "rp_obj.h"

#define RP_PAGE 4096u

int
rp_region_init(struct rp_dev *dev, uint32_t size_mb)
{
	char name[32];
	uint64_t size = (uint64_t)size_mb << 20;
	uint32_t hdr_pages;
	void *base;

	snprintf(name, sizeof(name), "rocepmd%u-region", dev->id);
	dev->region_fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (dev->region_fd < 0) {
		RP_LOG(ERR, "memfd for a %u MiB region: %s", size_mb,
		       strerror(errno));
		return -errno;
	}
	/* Its size is final: no attached process can shrink it under us. */
	if (ftruncate(dev->region_fd, (off_t)size) != 0 ||
	    fcntl(dev->region_fd, F_ADD_SEALS,
		  F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		RP_LOG(ERR, "cannot size a %u MiB region: %s", size_mb,
		       strerror(errno));
		goto err_close;
	}
	base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    dev->region_fd, 0);
	if (base == MAP_FAILED) {
		RP_LOG(ERR, "cannot map a %u MiB region: %s", size_mb,
		       strerror(errno));
		goto err_close;
	}
	dev->ctl = base;	/* a new memfd reads as zeros */
	dev->region_size = size;
	dev->region_pages = size / RP_PAGE;
	dev->region_map = rte_zmalloc("rp_region_map",
			RTE_ALIGN_CEIL(dev->region_pages, 64) / 8, 0);
	if (dev->region_map == NULL) {
		munmap(base, size);
		dev->ctl = NULL;
		close(dev->region_fd);
		dev->region_fd = -1;
		return -ENOMEM;
	}
	/* The control block's pages are never handed out. */
	hdr_pages = RTE_ALIGN_CEIL(sizeof(struct rp_dev_ctl), RP_PAGE) / RP_PAGE;
	for (uint32_t i = 0; i < hdr_pages; i++)
		dev->region_map[i / 64] |= 1ull << (i % 64);
	return 0;

err_close:
	close(dev->region_fd);
	dev->region_fd = -1;
	return -ENOMEM;
}

void
rp_region_fini(struct rp_dev *dev)
{
	rte_free(dev->region_map);
	dev->region_map = NULL;
	if (dev->ctl != NULL)
		munmap(dev->ctl, dev->region_size);
	dev->ctl = NULL;
	if (dev->region_fd >= 0)
		close(dev->region_fd);
	dev->region_fd = -1;
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
