/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Atomics on plain shared-memory words.  DPDK 22.11 has no rte_stdatomic.h;
 * these wrap the compiler's C11-model builtins (as rte_ring_c11_pvt.h does),
 * named after what each access is for.
 */

#ifndef _RP_ATOMIC_H_
#define _RP_ATOMIC_H_

#define rp_load_relaxed(p)	__atomic_load_n((p), __ATOMIC_RELAXED)
#define rp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define rp_store_relaxed(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define rp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define rp_fence_seq_cst()	__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define rp_cas(p, expp, v) \
	__atomic_compare_exchange_n((p), (expp), (v), 0, __ATOMIC_ACQ_REL, \
				    __ATOMIC_ACQUIRE)
#define rp_fetch_add(p, v)	__atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)
#define rp_exchange(p, v)	__atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)

/* A counter with one writer: relaxed load, add, relaxed store. */
#define rp_counter_add(p, v) \
	rp_store_relaxed((p), rp_load_relaxed(p) + (v))

/*
 * An mbuf handed to another lcore through an rte_ring (rp_shard.c's
 * handoff, the loopback ring, and the mempool the lcores of a device
 * share: freed by one, allocated or received into by another): the ring
 * orders it, with its generic memory model, out of ThreadSanitizer's sight
 * (test/tsan.supp); these tell TSan, the sender before the enqueue or the
 * free, the receiver after the dequeue or the allocation, and are nothing
 * in other builds.
 */
#if defined(__SANITIZE_THREAD__)
#define RP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RP_TSAN 1
#endif
#endif
#ifdef RP_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define rp_handoff_release(m)	__tsan_release(m)
#define rp_handoff_acquire(m)	__tsan_acquire(m)
#define rp_handoff_release_bulk(ms, n) \
	do { for (unsigned int rp_i_ = 0; rp_i_ < (n); rp_i_++) \
		__tsan_release((ms)[rp_i_]); } while (0)
#define rp_handoff_acquire_bulk(ms, n) \
	do { for (unsigned int rp_i_ = 0; rp_i_ < (n); rp_i_++) \
		__tsan_acquire((ms)[rp_i_]); } while (0)
/* frames of several mbufs (zero copy on transmit): every segment */
#define rp_handoff_release_chains(ms, n) \
	do { for (unsigned int rp_i_ = 0; rp_i_ < (n); rp_i_++) \
		for (struct rte_mbuf *rp_s_ = (ms)[rp_i_]; \
		     rp_s_ != NULL; rp_s_ = rp_s_->next) \
			__tsan_release(rp_s_); } while (0)
/* A lock TSan cannot see (DPDK's x86 rte_spinlock is inline assembly):
 * after taking it, and before giving it back. */
#define rp_tsan_lock_taken(l)	__tsan_acquire((void *)(l))
#define rp_tsan_lock_given(l)	__tsan_release((void *)(l))
#else
#define rp_handoff_release(m)	((void)(m))
#define rp_handoff_acquire(m)	((void)(m))
#define rp_handoff_release_bulk(ms, n)	((void)(ms), (void)(n))
#define rp_handoff_acquire_bulk(ms, n)	((void)(ms), (void)(n))
#define rp_handoff_release_chains(ms, n)	((void)(ms), (void)(n))
#define rp_tsan_lock_taken(l)	((void)(l))
#define rp_tsan_lock_given(l)	((void)(l))
#endif

#endif /* _RP_ATOMIC_H_ */
