/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inline passes, the program's side (guides/architecture, "Inline
 * passes"): a polling program thread runs the engine's passes where it
 * already runs, holding the lcore's token; the lcore stands aside
 * meanwhile (rp_lcore.c).
 */

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_per_lcore.h>

#include "rp_atomic.h"
#include "rp_engine.h"
#include "rp_inline.h"
#include "rp_lcore.h"
#include "rp_log.h"
#include "rp_signal.h"

/* Empty polls (rp_engine_assist()) of this thread since it last armed. */
static RTE_DEFINE_PER_LCORE(uint32_t, rp_empty_polls) RP_TLS_IE;

/* The lcore serving device `dev` if it may run inline passes, or NULL. */
static struct rp_lcore_ctx *
inline_lcore(unsigned int dev)
{
	struct rp_lcore_ctx *lc = dev < RP_MAX_PORTS ? rp_dev_lcore[dev] : NULL;

	return lc != NULL && lc->inline_mode ? lc : NULL;
}

/*
 * Inline mode: one pass over the devices of the lcore that serves device
 * `dev`, run by the calling application thread, unless another thread
 * runs one.  Telling the lcore first makes it stand aside, so that a
 * polling application and a busy lcore do not take turns on one CPU.
 */
bool
rp_engine_assist(unsigned int dev)
{
	struct rp_lcore_ctx *lc = inline_lcore(dev);
	uint64_t t0;
	bool busy;

	if (lc == NULL)
		return false;
	if (lc->inline_kind == RP_INLINE_ON_CPU) {
		/* Only a thread that shares the lcore's CPU: one elsewhere
		 * and the lcore both have a CPU (rp_inline.c).  getcpu is a
		 * read of the thread's rseq area in glibc 2.35 and later. */
		int cpu = sched_getcpu();

		if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &lc->cpus))
			return false;
	}
	/*
	 * Only a polling thread runs passes and makes the lcore stand
	 * aside: one whose CQ was empty twice since it last armed one.  A
	 * program on events looks once between a completion and its arm; a
	 * stand-aside then would cost it a wake-up write
	 * (rp_engine_unassist()) and the lcore a blocked ppoll, and a pass
	 * would hold the devices while the lcore it just woke spins for
	 * them (rp_lcore_token_wait()): a third of the engine's CPU at 20,000
	 * messages/s (guides/experiments_close_to_wire).
	 */
	if (RTE_PER_LCORE(rp_empty_polls)++ == 0)
		return false;
	rp_store_relaxed(&lc->app_tsc, rte_get_timer_cycles());
	if (!rp_lcore_token_try(lc))
		return false;
	lc_stat_add(lc, RP_LC_INLINE_PASSES, 1);
	if (unlikely(rp_thread_adopt()))
		lc_stat_add(lc, RP_LC_INLINE_THREADS, 1);
	t0 = rte_get_timer_cycles();
	for (unsigned int i = 0; i < lc->nr_shards; i++)
		lc->shards[i]->tx_defer = true;
	busy = rp_lcore_poll(lc);
	for (unsigned int i = 0; i < lc->nr_shards; i++)
		lc->shards[i]->tx_defer = false;
	if (busy)
		lc_stat_add(lc, RP_LC_INLINE_BUSY_CYCLES,
			    rte_get_timer_cycles() - t0);
	/* The program polls again at once, or the lcore is back within
	 * its stand-aside. */
	rp_lcore_plan(lc, rte_get_timer_cycles() + lc->stand_cycles);
	rp_lcore_token_give(lc);
	return true;
}

void
rp_engine_unassist(unsigned int dev)
{
	const uint64_t one = 1;
	struct rp_lcore_ctx *lc = inline_lcore(dev);

	RTE_PER_LCORE(rp_empty_polls) = 0;
	if (lc == NULL)
		return;
	/* U1: pairs with U0 in lcore_stand_aside() (rp_lcore.c). */
	rp_store_relaxed(&lc->app_tsc, 0);
	rp_fence_seq_cst();
	if (rp_load_relaxed(&lc->standing) != 0 &&
	    write(lc->wake_fd, &one, sizeof(one)) < 0)
		RP_LOG(DEBUG, "lcore %u: wake-up: %s", lc->lcore,
		       strerror(errno));
}

int
rp_engine_inline(unsigned int dev, uint32_t *us, char *why, size_t len)
{
	const struct rp_lcore_ctx *lc = dev < RP_MAX_PORTS ?
		rp_dev_lcore[dev] : NULL;

	if (lc == NULL)
		return -ENOENT;
	if (us != NULL)
		*us = lc->inline_mode ? rp_inline.us : 0;
	if (why != NULL)
		snprintf(why, len, "%s", rp_inline.why);
	return (int)lc->inline_kind;
}
