/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The device as the transport sees it (included by rp_transport.h, the
 * layer's interface): its objects, in tables by number, its shared-memory
 * arenas and its shards (a share of one engine lcore each: the QPs it
 * steps, its port queues, its counters).  The transport owns the objects;
 * the engine (rp_engine.h) starts devices, runs their lcores and passes
 * and serves control requests.
 */

#ifndef _RP_DEV_H_
#define _RP_DEV_H_

#include <stdbool.h>
#include <stdint.h>

#include <rte_per_lcore.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "rp_atomic.h"
#include "rp_port.h"
#include "rp_net.h"

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

/*
 * A device's share of one engine lcore (guides/architecture, "Several
 * lcores for one device"): its port queue pair, the QPs it owns with their
 * CQs and SRQs, and everything a pass writes.  One writer, the lcore of the
 * shard; control requests run on shard 0 while the others wait
 * (rp_shard_pause()), so they may touch any shard.
 */
#define RP_MAX_SHARDS	RP_MAX_ENGINE_LCORES
/* CQs with channels one pass checks the arms of at its end; beyond, at
 * once (rp_cq_post()) */
#define RP_SHARD_NOTIFY	16u
#define RP_SHARD_MOD_WAIT	16u	/* beyond, an event is not held */
#define RP_DEFER_CQES	4u	/* a pass that completed more sends at once */

struct rp_cq;

struct rp_shard {
	struct rp_dev *dev;
	uint32_t idx;			/* 0: the one that runs control */
	uint32_t lcore;
	/* frames another shard read for its QPs (MP/SC), or NULL */
	struct rte_ring *handoff;
	uint32_t nr_qp;			/* QPs it owns: placement's load */
	/* its QPs' doorbell bits, by word (only with several shards) */
	uint64_t bell_own[RP_MAX_QP / 64];
	/* control's stop: odd while shard 0 asks it to wait (rp_shard.c) */
	uint32_t pause_seq;
	uint32_t pause_ack;
	uint32_t gone;			/* its lcore stopped: nothing to wait for */
	int wake_fd;			/* its lcore's eventfd, or -1 */

	struct rp_port_q pq;		/* its queues on the port */
	struct rp_net_q nq;		/* its neighbour cache (rp_net.h) */
	uint16_t ip_id;
	/*
	 * Inline passes (rp_lcore.c): a pass run by the application thread
	 * that will read the CQEs it published keeps its frames for that
	 * thread's next pass, so that an ACK and the request answering the
	 * completion leave in one burst (one system call on af_packet).
	 * Only a pass that completed a round trip's few (at most
	 * RP_DEFER_CQES): one that completed a stream's tens would hold
	 * the ACK that opens the peer's window while the program handles
	 * them all (64 B send_bw polling, depth 64: 2.4 against 3.6 M
	 * messages/s, guides/experiments_close_to_wire).
	 */
	bool tx_defer;			/* this pass may keep its frames */
	/*
	 * This pass began starved_lag TSC late (0: on time), the next pass
	 * having been due at starved_from (rp_lcore.c): timers that expired
	 * in between wait that much longer (rp_comp_timer()).  Set by the
	 * lcore's pass (or an inline one) before the shard's, and extended
	 * by the shard's own when the pass, begun at pass_tsc (0: a pass
	 * without an lcore, rp_dev_poll()), took a stop's length before its
	 * timers were read.
	 */
	uint64_t starved_from;
	uint64_t starved_lag;
	uint64_t pass_tsc;
	uint32_t pass_cqes;		/* CQEs published by this pass */
	/* ... and by every pass: the adaptive lcore's measure of its work
	 * (rp_idle_nap.h); read by the lcore while it holds the shard */
	uint64_t cqes;
	uint32_t pass_signals;		/* completion channels it signalled */
	/* CQs with a channel this pass published into: their arms are
	 * checked once, at its end (rp_cq_notify_flush()) */
	uint32_t nr_notify;
	struct rp_cq *notify[RP_SHARD_NOTIFY];
	/* Armed CQs whose event moderation holds back (rp_cq_mod_poll()). */
	struct rp_cq *mod_wait[RP_SHARD_MOD_WAIT];
	uint32_t nr_mod_wait;
	struct rp_mem_batch *wb;	/* writes staged for attached memory */
	uint32_t mem_staged;		/* how many (rp_mem_flush()) */
	uint32_t nr_active;
	struct rp_qp *active[RP_MAX_QP];	/* QPs the pass steps */
	/* a window as a lookup found it, whole (rp_mr_lookup()) */
	struct rp_mr mw_snap;
	uint64_t stats[RP_STAT_MAX];	/* summed by rp_dev_stat() */
} __rte_cache_aligned;

struct rp_dev {
	unsigned int id;
	struct rp_port_cfg cfg;
	int region_fd;			/* memfd of the region, or -1 */
	struct rp_dev_ctl *ctl;		/* region base: the control block */
	uint64_t region_size;
	/* The device region (rp_region.c): the control block alone, which
	 * every attached process maps read-only */
	struct rp_arena region;
	/* Shared memory (rp_region.c): 0 the engine's own process's (its
	 * fd goes to no one), others one per attached process; cur_arena:
	 * the one the control request being run allocates in */
	struct rp_arena arena[RP_MAX_ARENAS];
	uint32_t cur_arena;
	struct rte_ring *ctrl_ring;	/* slot indexes, MP/SC */
	struct rp_ctrl_slot *ctrl_slot;	/* RP_CTRL_SLOTS, private memory */
	struct rp_port port;		/* its ethdev port (rp_port.h) */
	struct rp_net net;		/* its addresses (rp_net.h) */
	uint32_t mtu;
	/* Its QPs' round trips, smoothed: a QP's retransmit timer before
	 * its own first sample (rp_req.c).  Relaxed: every shard writes. */
	uint64_t rtt_seed;

	struct rp_qp *qp[RP_MAX_QP];
	uint16_t qp_gen[RP_MAX_QP];
	uint32_t qp_hi;			/* highest QP index in use, + 1 */
	/* arenas with QPs, whose doorbell bits a pass reads */
	uint32_t bell_arena[RP_MAX_ARENAS];
	uint32_t nr_bell_arenas;
	struct rp_cq *cq[RP_MAX_CQ];
	uint16_t cq_gen[RP_MAX_CQ];
	struct rp_mr mr[RP_MAX_MR];
	uint32_t mr_gen[RP_MAX_MR];	/* last generation used (RP_KEY_GEN_MASK) */
	bool pd_used[RP_MAX_PD];
	uint32_t pd_refs[RP_MAX_PD];
	struct rp_ah ah[RP_MAX_AH];
	struct rp_chan chan[RP_MAX_CHAN];
	struct rp_srq *srq[RP_MAX_SRQ];
	uint16_t srq_gen[RP_MAX_SRQ];
	struct rp_srq *tm_srq[RP_MAX_SRQ];	/* TM-SRQs: op rings to poll */
	uint32_t nr_tm_srq;

	/* GSI agents (rp_gsi.c): by tag, and the service IDs they claim */
	struct rp_qp *gsi_agent[RP_GSI_AGENTS];
	struct rte_hash *gsi_svc;

	struct rp_mcast mcast[RP_MAX_MCAST];

	uint64_t link_check;		/* TSC of the next link poll */

	/* Idle policy "adaptive" (rp_lcore.c) */
	int wake_fd;			/* serving lcore's eventfd, or -1 */
	/* The lcores that serve it, each with its own port queues (rp_shard.c) */
	uint32_t nr_shards;
	rte_spinlock_t shared_lock;	/* rp_dev_shared_lock() */
	struct rp_shard sh[RP_MAX_SHARDS];
};

/*
 * The engine's thread-locals are read per packet and per poll: in the
 * initial-exec model an access is one %fs-relative load, where the shared
 * library's default (global-dynamic) calls __tls_get_addr, 2.5-3.5 % of
 * an lcore's samples in 64 B send_bw.  The library is preloaded or linked
 * at start, and dlopen's surplus of static TLS holds these few bytes.
 */
#define RP_TLS_IE	__attribute__((tls_model("initial-exec")))

/*
 * The shard whose pass the calling thread runs (rp_lcore.c sets it before
 * each pass), or shard 0 for threads that run none (start, stop, tests).
 */
RTE_DECLARE_PER_LCORE(struct rp_shard *, rp_cur_shard) RP_TLS_IE;

static inline struct rp_shard *
rp_sh(const struct rp_dev *dev)
{
	struct rp_shard *sh = RTE_PER_LCORE(rp_cur_shard);

	if (likely(sh != NULL && sh->dev == dev))
		return sh;
	return (struct rp_shard *)(uintptr_t)&dev->sh[0];
}

/*
 * What several shards of a device write besides their own (rp_shard.c):
 * the asynchronous event rings, completion channels, memory windows and
 * atomics on attached memory.  None is a packet's common path.
 */
static inline void
rp_dev_shared_lock(struct rp_dev *dev)
{
	if (dev->nr_shards > 1) {
		rte_spinlock_lock(&dev->shared_lock);
		rp_tsan_lock_taken(&dev->shared_lock);
	}
}

static inline void
rp_dev_shared_unlock(struct rp_dev *dev)
{
	if (dev->nr_shards > 1) {
		rp_tsan_lock_given(&dev->shared_lock);
		rte_spinlock_unlock(&dev->shared_lock);
	}
}

/* ---- rp_place.c: which shard steps a QP */
int rp_shard_place(struct rp_dev *dev, struct rp_qp *qp);
void rp_shard_unplace(struct rp_qp *qp);
int rp_shard_move_to(struct rp_qp *qp, uint32_t to);

/* ---- rp_async.c */
void rp_async_push(struct rp_dev *dev, uint32_t type, uint32_t num);
int rp_async_reg(struct rp_dev *dev, struct rp_ctrl_async *a);
int rp_async_unreg(struct rp_dev *dev, struct rp_ctrl_async *a);

/* The calling shard's counters (rp_stat.h). */
static inline void
rp_stat_add(struct rp_dev *dev, enum rp_stat s, uint64_t n)
{
	rp_stats_add(rp_sh(dev)->stats, s, n);
}

static inline void
rp_stat_inc(struct rp_dev *dev, enum rp_stat s)
{
	rp_stat_add(dev, s, 1);
}

/* ---- accessors that need the device or its shard */

/* The calling shard's port queues. */
static inline struct rp_port_q *
rp_pq(const struct rp_dev *dev)
{
	return &rp_sh(dev)->pq;
}

/* The calling shard's neighbour cache. */
static inline struct rp_net_q *
rp_nq(const struct rp_dev *dev)
{
	return &rp_sh(dev)->nq;
}

/* Room to queue a burst of new packets (requester backpressure). */
static inline bool
rp_tx_room(const struct rp_dev *dev)
{
	return rp_port_tx_room(rp_pq(dev));
}

static inline void *
rp_region_ptr(const struct rp_dev *dev, uint64_t off)
{
	return dev->arena[dev->cur_arena].base + off;
}

/* Writes staged for an attached process reach it (rp_mem.c). */
static inline void
rp_mem_flush(struct rp_dev *dev)
{
	if (unlikely(rp_sh(dev)->mem_staged != 0))
		rp_mem_flush_pending(dev);
}

/* The QP has something to do: the lcore steps it from this pass on. */
static inline void
rp_qp_wake(struct rp_qp *qp)
{
	struct rp_shard *sh = &qp->dev->sh[qp->shard];

	if (qp->active)
		return;
	sh->active[sh->nr_active++] = qp;
	qp->active = true;
}

#endif /* _RP_DEV_H_ */
