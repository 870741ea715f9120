/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program's thread that runs the engine's passes (inline passes) is not
 * an EAL thread: rte_lcore_id() is LCORE_ID_ANY there, so the mempools
 * keep no per-lcore cache for it, and every mbuf its passes take or give
 * back (the receive refill, transmit's headers and, with zero copy, the
 * extbuf and trailer segments, the frees after transmit) goes through
 * the pool's ring: three ring operations a frame where a cache costs a
 * few stores.  DPDK gives such a thread an lcore id of its own
 * (rte_thread_register(): an id and so a cache, no CPU, no pinning).  The
 * engine asks for one at the thread's first inline pass and gives it
 * back when the thread exits, its caches flushed first, so that no mbuf
 * stays in a cache that no thread uses and the id serves the next thread.
 *
 * Ids are few (RTE_MAX_LCORE, 128 in Debian's build, the EAL's lcores
 * among them) and the multi-process feature excludes them (the engine's
 * EAL runs --in-memory or --no-shconf: no secondary process): a thread
 * that gets none runs its passes as before, without a cache, and is not
 * asked again.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "rp_log.h"
#include "rp_engine.h"

enum { THREAD_UNASKED = 0, THREAD_OURS, THREAD_NOT };

static RTE_DEFINE_PER_LCORE(int, rp_thread_state) RP_TLS_IE;
static pthread_key_t rp_thread_key;
static pthread_once_t rp_thread_once = PTHREAD_ONCE_INIT;
static bool rp_thread_key_ok;

static void
thread_cache_flush(struct rte_mempool *mp, void *arg)
{
	unsigned int lcore = *(const unsigned int *)arg;
	struct rte_mempool_cache *c = rte_mempool_default_cache(mp, lcore);

	if (c != NULL)
		rte_mempool_cache_flush(c, mp);
}

/* At the exit of a thread that has an id from rp_thread_adopt(). */
static void
thread_release(void *v)
{
	unsigned int lcore = rte_lcore_id();

	RTE_SET_USED(v);
	if (lcore == LCORE_ID_ANY)
		return;
	/* Every pool, not only the ports': a pass frees into whichever pool
	 * an mbuf came from.  The walk holds the pools' list lock, so a pool
	 * being freed is either flushed or gone. */
	rte_mempool_walk(thread_cache_flush, &lcore);
	rte_thread_unregister();
}

static void
thread_key_make(void)
{
	rp_thread_key_ok = pthread_key_create(&rp_thread_key,
					      thread_release) == 0;
}

bool
rp_thread_adopt(void)
{
	int *st = &RTE_PER_LCORE(rp_thread_state);

	if (likely(*st != THREAD_UNASKED))
		return false;
	*st = THREAD_NOT;
	if (rte_lcore_id() != LCORE_ID_ANY)
		return false;	/* an EAL lcore, or registered by the program */
	pthread_once(&rp_thread_once, thread_key_make);
	if (!rp_thread_key_ok)
		return false;	/* no way to give the id back */
	if (rte_thread_register() != 0) {
		RP_LOG(DEBUG, "no lcore id for an inline-pass thread (%s): its passes use no mempool cache",
		       rte_strerror(rte_errno));
		return false;
	}
	if (pthread_setspecific(rp_thread_key, st) != 0) {
		rte_thread_unregister();
		return false;
	}
	*st = THREAD_OURS;
	RP_LOG(DEBUG, "inline passes of thread %d run as lcore %u",
	       rte_sys_gettid(), rte_lcore_id());
	return true;
}
