/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's access to registered memory.
 *
 * An MR of the engine's own process (an embedded engine: the verbs program
 * and the engine share an address space) is reached with memcpy.  An MR of
 * an attached process (rp_attach.h) lives in another address space: the
 * engine copies through the kernel with pread/pwritev on the process's
 * own /proc/self/mem, which it opened and handed to the host at HELLO
 * (rp_serve.c checks it).  That descriptor names an address space, not a
 * PID: once the process exits or exec()s another program the kernel
 * answers 0 bytes for ever (-ESRCH here), and a process that later gets
 * the same PID is never reached.  It needs no privilege of the host (no
 * ptrace, no root): the process granted it by opening its own memory.
 * Any memory the process has mapped is reached (heap, stack, files, huge
 * pages) without pinning it, and a bad address is -EFAULT, never a fault
 * of the engine.
 *
 * An implicit on-demand MR (and a window over one) names any address of
 * the engine's own process, which the wire may then name too: it is
 * reached with process_vm_readv/writev on this process, one system call
 * per access and no batching, so that an address the process has not
 * mapped, or not mapped writable, is -EFAULT (a NAK, a local protection
 * error) and never a fault of the engine.  Unlike /proc/self/mem, these
 * honour the mapping's protection, as a device's page fault would.
 */

#include <errno.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_malloc.h>

#include "rp_log.h"
#include "rp_transport.h"

/*
 * Writes into an attached process are batched: they reach the process at
 * the end of a burst of received packets (rp_mem_flush() at the end of
 * rp_recv_burst(), before the burst's mbufs are freed), one pwritev() per
 * run of contiguous addresses (the packets of one message), so the cost of
 * the system call is shared by the packets of a burst.  A packet's
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
 * reads up to RP_MEM_AHEAD bytes of it in one pread(), the
 * next packets of the same message (same tag: QP and first PSN) copy from
 * here.  Only within one message, which the application may not change
 * while it is posted; any write of the engine into attached memory drops
 * what was read ahead.
 */
#define RP_MEM_AHEAD	(64u * 1024u)
#define RP_MEM_AHEADS	4u

struct rp_mem_batch {
	int32_t mem;			/* rp_mr.mem of what is staged */
	uint32_t n;
	uint32_t used;
	struct iovec local[RP_MEM_IOV];
	struct iovec remote[RP_MEM_IOV];
	uint8_t stage[RP_MEM_STAGE];
	/* read ahead: a few messages at once, as QPs take turns */
	struct rp_mem_ahead {
		int32_t mem;
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

/* This process, for process_vm_readv/writev (implicit MRs). */
static pid_t mem_self_pid;

/* A batch per shard: each stages what its own pass writes. */
int
rp_mem_init(struct rp_dev *dev)
{
	mem_self_pid = getpid();
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

/* The host's descriptor of an attached address space (rp_mr.mem). */
static inline int
mem_fd(int32_t mem)
{
	return mem - 1;
}

/*
 * n bytes at remote: 0; -ESRCH when the address space is gone (the kernel
 * reads and writes nothing of it any more: 0 bytes); else -EFAULT.
 */
static int
mem_io_res(ssize_t done, size_t n)
{
	if (done == (ssize_t)n)
		return 0;
	return done == 0 && n != 0 ? -ESRCH : -EFAULT;
}

static int
mem_remote(int32_t mem, void *local, uint8_t *remote, uint32_t n, bool write)
{
	ssize_t done;

	done = write ? pwrite(mem_fd(mem), local, n, (off_t)(uintptr_t)remote) :
		pread(mem_fd(mem), local, n, (off_t)(uintptr_t)remote);
	return mem_io_res(done, n);
}

/*
 * n bytes at `p` of this process through the kernel (an implicit MR):
 * 0, or -EFAULT when any of them is not mapped (writable, for a write).
 */
static int
mem_self(void *local, uint8_t *p, uint32_t n, bool write)
{
	struct iovec l = { local, n }, r = { p, n };
	ssize_t done;

	done = write ? process_vm_writev(mem_self_pid, &l, 1, &r, 1, 0) :
		process_vm_readv(mem_self_pid, &l, 1, &r, 1, 0);
	return done == (ssize_t)n ? 0 : -EFAULT;
}

/* The memory of an MR that is not reached with memcpy. */
static int
mem_io(const struct rp_mr *m, void *local, uint8_t *p, uint32_t n,
       bool write)
{
	return m->implicit ? mem_self(local, p, n, write) :
		mem_remote(m->mem, local, p, n, write);
}

void
rp_mem_flush_pending(struct rp_dev *dev)
{
	struct rp_mem_batch *b = rp_sh(dev)->wb;
	uint32_t i = 0, j;

	while (i < b->n) {
		const uint8_t *end = (uint8_t *)b->remote[i].iov_base +
			b->remote[i].iov_len;
		size_t want = b->local[i].iov_len;
		ssize_t done;

		/* A run of contiguous addresses: one system call. */
		for (j = i + 1; j < b->n && b->remote[j].iov_base == end; j++) {
			end += b->remote[j].iov_len;
			want += b->local[j].iov_len;
		}
		done = pwritev(mem_fd(b->mem), &b->local[i], (int)(j - i),
			       (off_t)(uintptr_t)b->remote[i].iov_base);
		if (done != (ssize_t)want) {
			rp_stat_inc(dev, RP_STAT_MEM_FAULT);
			RP_LOG_RL(rp_logtype, WARNING,
				  "%s: %zd of %zu bytes reached an attached process: %s",
				  dev->ctl->name, done < 0 ? (ssize_t)0 : done,
				  want, done == 0 ?
				  "its address space is gone (exit or exec)" :
				  "memory it registered is gone");
		}
		i = j;
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

	if (unlikely(m->implicit))
		return mem_self((void *)(uintptr_t)src, p, n, true);
	if (likely(m->mem == 0)) {
		memcpy(p, src, n);
		return 0;
	}
	ahead_drop(b);
	if (stage > RP_MEM_STAGE)
		return mem_remote(m->mem, (void *)(uintptr_t)src, p, n, true);
	if (b->n != 0 && (b->mem != m->mem || b->n == RP_MEM_IOV ||
			  b->used + stage > RP_MEM_STAGE))
		rp_mem_flush_pending(dev);
	b->mem = m->mem;
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
	ssize_t got;
	size_t len;

	if (unlikely(m->implicit))
		return mem_self(dst, (uint8_t *)(uintptr_t)p, n, false);
	if (likely(m->mem == 0)) {
		memcpy(dst, p, n);
		return 0;
	}
	rp_mem_flush(dev);	/* what it reads may be staged */
	if (tag == 0 || ahead <= n || n > RP_MEM_AHEAD)
		return mem_remote(m->mem, dst, (uint8_t *)(uintptr_t)p, n,
				  false);
	b->ra_clock++;
	for (unsigned int i = 0; i < RP_MEM_AHEADS; i++) {
		struct rp_mem_ahead *c = &b->ra[i];

		if (c->len != 0 && c->tag == tag && c->mem == m->mem &&
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
		len = RTE_MIN(ahead, (uint64_t)RP_MEM_AHEAD);
		got = pread(mem_fd(m->mem), a->buf, len, (off_t)(uintptr_t)p);
		if (got < (ssize_t)n)
			return mem_remote(m->mem, dst, (uint8_t *)(uintptr_t)p,
					  n, false);
		a->mem = m->mem;
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

	if (likely(m->mem == 0 && !m->implicit)) {
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
	/* Another process's memory, or any address of ours (implicit): a
	 * read then a write, which two shards must not interleave on one
	 * address. */
	rp_dev_shared_lock(dev);
	ret = mem_io(m, &v, (uint8_t *)p, sizeof(v), false);
	if (ret == 0) {
		*orig = v;
		if (!cmp_swap)
			v += compare_add;
		else if (v == compare_add)
			v = swap;
		else
			goto out;	/* no write: the compare failed */
		ret = mem_io(m, &v, (uint8_t *)p, sizeof(v), true);
	}
out:
	rp_dev_shared_unlock(dev);
	return ret;
}
