/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's access to registered memory.
 *
 * An MR of the engine's own process (an embedded engine: the verbs program
 * and the engine share an address space) is reached with memcpy.  An MR of
 * an attached process (rp_attach.h) lives in another address space: the
 * engine copies through the kernel with process_vm_readv/writev, which
 * takes any memory the process has mapped (heap, stack, files, huge
 * pages) without pinning it, and turns a bad address into EFAULT, never
 * into a fault of the engine.  The permission is the host's: it must be
 * able to ptrace the process (same user, or CAP_SYS_PTRACE), which the
 * attach server checks when the process attaches.
 */

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "rp_log.h"
#include "rp_obj.h"

/*
 * Writes into an attached process are batched: they reach the process in
 * one process_vm_writev() per burst of received packets (rp_mem_flush() at
 * the end of rp_recv_burst(), before the burst's mbufs are freed), so the
 * cost of the system call is shared by the packets of a burst.  A packet's
 * payload is written from its mbuf; other bytes (a GRH, an atomic's
 * original value) are staged here.  Everything that
 * could observe them flushes first: a CQE (rp_cq_post()), a read or an
 * atomic of attached memory.  A write that the process refuses (memory it
 * unmapped while registered) is counted, as on hardware, where the NIC
 * would have written to pages the process no longer sees.
 */
#define RP_MEM_STAGE	(256u * 1024u)
#define RP_MEM_IOV	64u
/*
 * Reads from an attached process go ahead: the first packet of a message
 * reads up to RP_MEM_AHEAD bytes of it in one process_vm_readv(), the
 * next packets of the same message (same tag: QP and first PSN) copy from
 * here.  Only within one message, which the application may not change
 * while it is posted; any write of the engine into attached memory drops
 * what was read ahead.
 */
#define RP_MEM_AHEAD	(64u * 1024u)
#define RP_MEM_AHEADS	4u

struct rp_mem_batch {
	pid_t pid;
	uint32_t n;
	uint32_t used;
	struct iovec local[RP_MEM_IOV];
	struct iovec remote[RP_MEM_IOV];
	uint8_t stage[RP_MEM_STAGE];
	/* read ahead: a few messages at once, as QPs take turns */
	struct rp_mem_ahead {
		pid_t pid;
		uint64_t tag;
		const uint8_t *base;	/* in the process */
		uint32_t len;		/* 0: empty */
		uint32_t used;		/* pass of its last use (LRU) */
		uint8_t buf[RP_MEM_AHEAD];
	} ra[RP_MEM_AHEADS];
	uint32_t ra_clock;
};

static void
ahead_drop(struct rp_mem_batch *b)
{
	for (unsigned int i = 0; i < RP_MEM_AHEADS; i++)
		b->ra[i].len = 0;
}

/* A batch per shard: each stages what its own pass writes. */
int
rp_mem_init(struct rp_dev *dev)
{
	for (uint32_t i = 0; i < dev->nr_shards; i++) {
		dev->sh[i].wb = rte_zmalloc("rp_mem_batch",
					    sizeof(*dev->sh[i].wb), 0);
		if (dev->sh[i].wb == NULL)
			return -ENOMEM;
	}
	return 0;
}

void
rp_mem_fini(struct rp_dev *dev)
{
	for (uint32_t i = 0; i < RP_MAX_SHARDS; i++) {
		rte_free(dev->sh[i].wb);
		dev->sh[i].wb = NULL;
	}
}

static int
mem_remote(pid_t pid, void *local, uint8_t *remote, uint32_t n, bool write)
{
	struct iovec l = { .iov_base = local, .iov_len = n };
	struct iovec r = { .iov_base = remote, .iov_len = n };
	ssize_t done;

	done = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) :
		process_vm_readv(pid, &l, 1, &r, 1, 0);
	if (done < 0 && errno == ESRCH)
		return -ESRCH;	/* the process is gone, not its memory */
	return done == (ssize_t)n ? 0 : -EFAULT;
}

void
rp_mem_flush_pending(struct rp_dev *dev)
{
	struct rp_mem_batch *b = rp_sh(dev)->wb;
	ssize_t want = 0, done;

	for (uint32_t i = 0; i < b->n; i++)
		want += b->local[i].iov_len;
	done = process_vm_writev(b->pid, b->local, b->n, b->remote, b->n, 0);
	if (done != want) {
		rp_stat_inc(dev, RP_STAT_MEM_FAULT);
		RP_LOG_RL(rp_logtype, WARNING,
			  "%s: %zd of %zd bytes reached process %d: memory it registered is gone",
			  dev->ctl->name, done < 0 ? (ssize_t)0 : done, want,
			  (int)b->pid);
	}
	b->n = 0;
	b->used = 0;
	rp_sh(dev)->mem_staged = 0;
}

int
rp_mem_write(struct rp_dev *dev, const struct rp_mr *m, uint64_t va,
	     const void *src, uint32_t n, bool pkt)
{
	uint8_t *p = m->addr + (va - m->iova);
	struct rp_mem_batch *b = rp_sh(dev)->wb;
	uint32_t stage = pkt ? 0 : n;

	if (likely(m->pid == 0)) {
		memcpy(p, src, n);
		return 0;
	}
	ahead_drop(b);
	if (stage > RP_MEM_STAGE)
		return mem_remote(m->pid, (void *)(uintptr_t)src, p, n, true);
	if (b->n != 0 && (b->pid != m->pid || b->n == RP_MEM_IOV ||
			  b->used + stage > RP_MEM_STAGE))
		rp_mem_flush_pending(dev);
	b->pid = m->pid;
	if (pkt) {
		/* A received packet's payload: its mbuf is freed only after
		 * the burst's flush (rp_recv_burst()), no copy needed. */
		b->local[b->n] = (struct iovec){ (void *)(uintptr_t)src, n };
	} else {
		memcpy(b->stage + b->used, src, n);
		b->local[b->n] = (struct iovec){ b->stage + b->used, n };
		b->used += n;
	}
	b->remote[b->n] = (struct iovec){ p, n };
	b->n++;
	rp_sh(dev)->mem_staged = b->n;
	return 0;
}

int
rp_mem_read(struct rp_dev *dev, const struct rp_mr *m, uint64_t va,
	    void *dst, uint32_t n, uint64_t tag, uint64_t ahead)
{
	const uint8_t *p = m->addr + (va - m->iova);
	struct rp_mem_batch *b = rp_sh(dev)->wb;
	struct rp_mem_ahead *a = NULL, *old = &b->ra[0];
	struct iovec l, r;
	ssize_t got;

	if (likely(m->pid == 0)) {
		memcpy(dst, p, n);
		return 0;
	}
	rp_mem_flush(dev);	/* what it reads may be staged */
	if (tag == 0 || ahead <= n || n > RP_MEM_AHEAD)
		return mem_remote(m->pid, dst, (uint8_t *)(uintptr_t)p, n,
				  false);
	b->ra_clock++;
	for (unsigned int i = 0; i < RP_MEM_AHEADS; i++) {
		struct rp_mem_ahead *c = &b->ra[i];

		if (c->len != 0 && c->tag == tag && c->pid == m->pid &&
		    p >= c->base && p + n <= c->base + c->len) {
			a = c;
			break;
		}
		if (c->used < old->used)
			old = c;
	}
	if (a == NULL) {
		/* The rest of the message, as much as fits. */
		a = old;
		a->len = 0;
		l = (struct iovec){ a->buf, RTE_MIN(ahead, (uint64_t)RP_MEM_AHEAD) };
		r = (struct iovec){ (void *)(uintptr_t)p, l.iov_len };
		got = process_vm_readv(m->pid, &l, 1, &r, 1, 0);
		if (got < (ssize_t)n)
			return mem_remote(m->pid, dst, (uint8_t *)(uintptr_t)p,
					  n, false);
		a->pid = m->pid;
		a->tag = tag;
		a->base = p;
		a->len = (uint32_t)got;
	}
	a->used = b->ra_clock;
	memcpy(dst, a->buf + (p - a->base), n);
	return 0;
}

/*
 * An 8-byte atomic at va (8-byte aligned, checked by the caller).  In
 * another process it is a read, the operation and a write by this lcore:
 * atomic with respect to every other RDMA atomic of the device (the lcore
 * runs them one at a time), not to the CPUs of the process itself, which
 * is what IBV_ATOMIC_HCA promises.
 */
int
rp_mem_atomic(struct rp_dev *dev, const struct rp_mr *m, uint64_t va,
	      bool cmp_swap, uint64_t compare_add, uint64_t swap,
	      uint64_t *orig)
{
	uint64_t *p = (uint64_t *)(void *)(m->addr + (va - m->iova));
	uint64_t v;
	int ret;

	if (likely(m->pid == 0)) {
		if (cmp_swap) {
			v = compare_add;
			/* On a mismatch v becomes the value found. */
			__atomic_compare_exchange_n(p, &v, swap, false,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		} else {
			v = __atomic_fetch_add(p, compare_add,
					       __ATOMIC_SEQ_CST);
		}
		*orig = v;
		return 0;
	}
	rp_mem_flush(dev);
	ahead_drop(rp_sh(dev)->wb);
	/* Another process's memory: a read then a write, which two shards
	 * must not interleave on one address. */
	rp_dev_shared_lock(dev);
	ret = mem_remote(m->pid, &v, (uint8_t *)p, sizeof(v), false);
	if (ret == 0) {
		*orig = v;
		if (!cmp_swap)
			v += compare_add;
		else if (v == compare_add)
			v = swap;
		else
			goto out;	/* no write: the compare failed */
		ret = mem_remote(m->pid, &v, (uint8_t *)p, sizeof(v), true);
	}
out:
	rp_dev_shared_unlock(dev);
	return ret;
}
