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

/* Stores of the lcore's shared words that an eighth of a stand-aside would
 * not change much are skipped: every poller's pass reads them, and each
 * store takes the line from the other pollers' CPUs. */
static inline void
inline_tsc_store(uint64_t *p, uint64_t now, uint64_t stand)
{
	if (now - rp_load_relaxed(p) > stand / 8)
		rp_store_relaxed(p, now);
}

/* The held shards' transmits wait for the pass's end (one burst each). */
static inline void
held_defer(struct rp_lcore_ctx *lc, uint32_t held, bool on)
{
	for (uint32_t m = held; m != 0; m &= m - 1)
		lc->shards[__builtin_ctz(m)]->tx_defer = on;
}

/*
 * Inline mode: a pass over the shards of the lcore that serves device
 * `dev` which the calling application thread may run: `dev`'s own, and
 * those of devices no thread has polled within a stand-aside.  Another
 * thread polling another device of the lcore runs that one's at the same
 * time.  Telling the lcore first makes it stand aside, so that a polling
 * application and a busy lcore do not take turns on one CPU.
 */
bool
rp_engine_assist(unsigned int dev)
{
	struct rp_lcore_ctx *lc = inline_lcore(dev);
	uint64_t t0, end, *stats;
	uint32_t held = 0;
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
	t0 = rte_get_timer_cycles();
	inline_tsc_store(&lc->app_tsc, t0, lc->stand_cycles);
	for (unsigned int i = 0; i < lc->nr_shards; i++) {
		uint64_t *own = &lc->owner[i].tsc;

		if (lc->shards[i]->dev->id != dev) {
			/* another thread polls its device: its pass */
			if (t0 - rp_load_relaxed(own) < lc->stand_cycles)
				continue;
			own = NULL;
		}
		if (!rp_lane_try(lc, i))
			continue;
		held |= 1u << i;
		if (own != NULL)
			inline_tsc_store(own, t0, lc->stand_cycles);
	}
	if (held == 0)
		return false;
	stats = lc->lanes[__builtin_ctz(held)].stats;
	rp_counter_add(&stats[RP_LC_INLINE_PASSES], 1);
	if (held != rp_lcore_all_lanes(lc))
		rp_counter_add(&stats[RP_LC_INLINE_SPLIT], 1);
	if (unlikely(rp_thread_adopt()))
		rp_counter_add(&stats[RP_LC_INLINE_THREADS], 1);
	held_defer(lc, held, true);
	busy = rp_lcore_poll_lanes(lc, held, stats, t0, &end);
	held_defer(lc, held, false);
	if (busy)
		rp_counter_add(&stats[RP_LC_INLINE_BUSY_CYCLES], end - t0);
	/* The program polls again at once, or the lcore is back within
	 * its stand-aside. */
	inline_tsc_store(&lc->due, end + lc->stand_cycles, lc->stand_cycles);
	for (uint32_t m = held; m != 0; m &= m - 1)
		rp_lane_give(lc, __builtin_ctz(m));
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
	/* The device's shards are anyone's now: the other pollers' passes
	 * take them at once, not a stand-aside later. */
	for (unsigned int i = 0; i < lc->nr_shards; i++)
		if (lc->shards[i]->dev->id == dev &&
		    rp_load_relaxed(&lc->owner[i].tsc) != 0)
			rp_store_relaxed(&lc->owner[i].tsc, 0);
	/* U1: pairs with U0 in rp_lcore_stand_aside() (rp_lcore_stand.c). */
	rp_store_relaxed(&lc->app_tsc, 0);
	rp_fence_seq_cst();
	if (rp_load_relaxed(&lc->standing) != 0 &&
	    write(lc->wake_fd, &one, sizeof(one)) < 0)
		RP_LOG(DEBUG, "lcore %u: wake-up: %s", lc->lcore,
		       strerror(errno));
}

void
rp_engine_kick(unsigned int dev)
{
	const uint64_t one = 1;
	struct rp_lcore_ctx *lc = inline_lcore(dev);

	if (lc == NULL)
		return;
	/* K1: pairs with U0 in rp_lcore_stand_aside() (rp_lcore_stand.c); the
	 * request's release store came first.  The program polling through
	 * the stand-aside may be the thread now waiting for its answer. */
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
