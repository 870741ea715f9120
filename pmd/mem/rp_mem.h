/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memory layer: shared-memory arenas (the device region and one per
 * attached process) and access to registered memory, here or in an
 * attached process.
 */

#ifndef _RP_MEM_H_
#define _RP_MEM_H_

#include <stdbool.h>
#include <stdint.h>

#include "rp_abi.h"

struct rp_dev;
struct rp_mr;
struct rp_ctrl_arena;

#define RP_ASYNC_FDS	64u		/* contexts listening for async events */
/* Arenas: the device region and one per attached process. */
#define RP_MAX_ARENAS	65u

/*
 * One memfd mapping with a page allocator (rp_region.c) and the async
 * event ring of the processes that use it (rp_async.c).
 */
struct rp_arena {
	bool used;
	int fd;
	uint8_t *base;
	uint64_t size;
	uint32_t pages;
	uint32_t hdr_pages;		/* never handed out */
	uint64_t *map;			/* one bit per page */
	struct rp_async_ctl *async;	/* its event ring */
	uint32_t prod;			/* private copy of async->prod */
	uint32_t nr_fd;			/* eventfds signalled per event */
	int async_fd[RP_ASYNC_FDS];
	bool async_sock[RP_ASYNC_FDS];	/* that fd is a socket (rp_signal.h) */
	/* an attached process's own wake-up eventfd (its doorbells), which
	 * the lcore polls when it blocks; -1 for arena 0 */
	int wake_fd;
	uint64_t *bell;			/* its doorbell bits (rp_abi.h) */
	uint32_t nr_qp;			/* QPs whose rings are here */
};

/* ---- rp_region.c */
int rp_region_init(struct rp_dev *dev, uint32_t size_mb);
void rp_region_fini(struct rp_dev *dev);
int64_t rp_region_alloc(struct rp_dev *dev, uint64_t size);
void rp_region_free(struct rp_dev *dev, uint64_t off, uint64_t size);
int rp_arena_create(struct rp_dev *dev, struct rp_ctrl_arena *c);
int rp_arena_destroy(struct rp_dev *dev, struct rp_ctrl_arena *c);

/* ---- rp_mem.c: registered memory, here or in an attached process */
int rp_mem_init(struct rp_dev *dev);
void rp_mem_fini(struct rp_dev *dev);
/* pkt: src is a received packet's payload, alive until the burst ends */
int rp_mem_write(struct rp_dev *dev, const struct rp_mr *m, uint64_t va,
		 const void *src, uint32_t n, bool pkt);
/* tag: 0, or the same for every read of one message, which goes on for
 * `ahead` bytes from va (read ahead of attached memory).  These return 0,
 * -EFAULT (memory the process no longer has) or -ESRCH (the address space
 * that registered it is gone: the process exited or exec'd another
 * program; its objects are about to be destroyed by rp_serve). */
int rp_mem_read(struct rp_dev *dev, const struct rp_mr *m, uint64_t va,
		void *dst, uint32_t n, uint64_t tag, uint64_t ahead);
int rp_mem_atomic(struct rp_dev *dev, const struct rp_mr *m, uint64_t va,
		  bool cmp_swap, uint64_t compare_add, uint64_t swap,
		  uint64_t *orig);
void rp_mem_flush_pending(struct rp_dev *dev);

#endif /* _RP_MEM_H_ */
