/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine lcores, inside the engine layer: an lcore's state and counters,
 * shared by its loop (rp_lcore.c) and its counters' readers
 * (rp_lcore_stats.c).
 */

#ifndef _RP_LCORE_H_
#define _RP_LCORE_H_

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_pause.h>

#include "rp_atomic.h"
#include "rp_inline.h"
#include "rp_engine.h"
#include "rp_idle_nap.h"

/*
 * Per-lcore counters: one writer at a time, the lcore or the program's
 * thread that holds its devices for an inline pass (rp_counter_add);
 * readers (telemetry, the stop log) load them relaxed.
 */
enum rp_lc_stat {
	RP_LC_BUSY_CYCLES = 0,	/* passes that found work */
	RP_LC_IDLE_CYCLES,	/* passes that did not, yields, naps, blocks */
	RP_LC_POLLS,
	RP_LC_POLLS_BUSY,
	RP_LC_YIELDS,		/* idle "yield": sched_yield() calls */
	RP_LC_NAPS,		/* idle "sleep": nanosleep() calls */
	RP_LC_BLOCKS,		/* idle "adaptive": blocked waits */
	RP_LC_BLOCKS_ABORTED,	/* need_wakeup raised, then work found */
	RP_LC_WAKE_DOORBELL,
	RP_LC_WAKE_RX_INTR,
	RP_LC_WAKE_RX_SOCK,	/* a port's receive socket became readable */
	RP_LC_WAKE_TIMEOUT,
	RP_LC_DOORBELL_SIGNALS,	/* eventfd writes by doorbells, as read */
	RP_LC_INLINE_PASSES,	/* inline: passes run by application threads */
	RP_LC_INLINE_SPLIT,	/* ... that left some of the lcore's shards
				 * to threads polling their devices */
	RP_LC_INLINE_BUSY_CYCLES, /* inline: those passes' time if they found
				   * work (the engine's CPU on their threads) */
	RP_LC_STAND_ASIDES,	/* inline: naps while the application ran them */
	RP_LC_WAKE_CLIENT,	/* of WAKE_DOORBELL: an attached process's */
	RP_LC_STARVED,		/* passes that began RP_STARVE_US late */
	RP_LC_STARVED_US,	/* how late, in all */
	RP_LC_INLINE_THREADS,	/* inline: program threads given an lcore id
				 * (and mempool caches) by their first pass */
	RP_LC_SIGNAL_YIELDS,	/* yields after a pass that woke a program
				 * thread that may share the lcore's CPU */
	RP_LC_SPIN_YIELDS,	/* yields after an idle pass, before idle_us,
				 * on a CPU the program may use */
	RP_LC_SPIN_YIELDS_LONG,	/* of those, kept off the CPU for
				 * RP_SPIN_YIELD_LONG_US or more */
	RP_LC_SPIN_GROWS,	/* adaptive: spins lengthened (rp_idle_spin.h) */
	RP_LC_SPIN_SHRINKS,	/* adaptive: spins shortened */
	RP_LC_SIGNAL_PASSES,	/* busy passes that woke a program thread
				 * (the program's inline passes wake it
				 * too: not counted here) */
	RP_LC_TOKEN_YIELDS,	/* inline: yields to a program thread that
				 * held the devices the lcore wanted, on a
				 * CPU they share */
	RP_LC_SPIN_NAPS,	/* adaptive: naps in place of the spin */
	RP_LC_NAP_TRIALS,	/* epochs that tried the other way to wait */
	RP_LC_NAP_ON,		/* trials that turned the spin to naps */
	RP_LC_NAP_OFF,		/* ... and back to spinning */
	RP_LC_STAT_MAX,
};

/*
 * Inline passes take the devices shard by shard: a lane per shard of the
 * lcore (shards[i] has lanes[i]).  A program thread that polls a device
 * runs that device's shards, and those of devices no thread polls, so
 * two threads polling two devices of one lcore run their passes at once,
 * each over its own device's state, on its own CPU: one lock for all had
 * them take turns and carry every device's state from CPU to CPU each
 * pass (guides/experiments_close_to_wire, twenty-second round).  The
 * lcore, and whatever touches every device, holds every lane.
 */
struct rp_lcore_lane {
	uint32_t token;			/* 1 while a thread runs the shard */
	/*
	 * Written by the token's holder: the shard's last pass, when it
	 * began and its length if that was RP_PASS_LONG_US or more (0
	 * otherwise), which no pass's work takes: the process was stopped
	 * or the thread preempted inside it.
	 */
	uint64_t pass_tsc;
	uint64_t pass_long;
	/* the counters of the inline passes that held this lane first */
	uint64_t stats[RP_LC_STAT_MAX];
} __rte_cache_aligned;

/* When a thread polling the shard's device last ran it: on a line of its
 * own, which that thread rewrites only every eighth of a stand-aside and
 * the other pollers read at every pass. */
struct rp_lcore_owner {
	uint64_t tsc;
} __rte_cache_aligned;

struct rp_lcore_ctx {
	unsigned int lcore;
	unsigned int nr_shards;
	/* the shards it runs, one per device at most (rp_shard.c) */
	struct rp_shard *shards[RP_MAX_PORTS];
	/* "adaptive" blocks: no device it serves has other lcores, whose
	 * doorbells would need a wake-up of their own */
	bool can_block;
	/* written by rp_engine_set_idle() at any time: relaxed loads */
	uint32_t idle;			/* enum rp_idle_policy */
	uint64_t idle_cycles;
	/* adaptive: the spin before a block, 0 to idle_cycles, learnt
	 * (rp_idle_spin.h); whether the lcore blocked since its last busy
	 * pass */
	uint64_t spin_cycles;
	bool blocked;
	/* adaptive: naps or spinning in the spin (rp_idle_nap.h), judged
	 * by the completions of epochs that began at nap_epoch_tsc and the
	 * lcore's CPU time in them */
	struct rp_idle_nap nap_way;
	bool spin_nap;			/* the key spin_nap */
	uint64_t nap_epoch_tsc;
	uint64_t nap_epoch_cqes;
	uint64_t nap_epoch_cpu;		/* ns */
	struct timespec nap;
	uint64_t wake_ns;		/* adaptive: longest block */
	/*
	 * adaptive: eventfd, or -1.  Made for every policy, since the policy
	 * may become adaptive at run time; doorbells write it only when the
	 * lcore raised need_wakeup, which only "adaptive" does.
	 */
	int wake_fd;
	bool launched;
	/*
	 * Launch and stop handshakes in C11 atomics.  rte_eal_remote_launch()
	 * and rte_eal_wait_lcore() order the same things, but inside DPDK
	 * where ThreadSanitizer cannot see it; these make the order visible
	 * to it (and cost two loads).
	 */
	uint32_t go;			/* main: release before launch */
	uint32_t done;			/* lcore: release when it returns */
	/*
	 * Inline mode (inline_us != 0): application threads run passes
	 * (rp_engine_assist) while they poll a CQ.  Whoever runs a pass, or
	 * touches the devices at all, holds their lanes' tokens; the lcore
	 * gives them up whenever it sleeps, and stands aside for inline_us
	 * after an application's pass.
	 */
	bool inline_mode;
	enum rp_inline_kind inline_kind;
	cpu_set_t cpus;			/* the lcore's CPUs (RP_INLINE_ON_CPU) */
	/* the program's threads may run on its CPUs: it yields after a
	 * pass that signalled a completion channel (lcore_signalled()) */
	bool shares_cpu;
	/* ... and on others too: it yields after every idle pass before it
	 * blocks or naps (lcore_spin_yield()) */
	bool spin_yield;
	/* lcore_spin_yield(): no spin yields before this TSC, how long the
	 * next silence lasts, when the last one began */
	uint64_t spin_quiet_until;
	uint64_t spin_quiet;
	uint64_t spin_long_tsc;
	uint64_t spin_long_first;	/* the first long yield of a run */
	uint32_t spin_long_run;		/* long yields since */
	/* how long the program may go without a pass before the lcore
	 * takes the devices back (inline_us) */
	uint64_t stand_cycles;
	/* the lcore's current stand-aside: inline_us, doubled after each
	 * one the program polled through, up to stand_max_cycles
	 * (rp_lcore_stand_aside()); lcore only */
	uint64_t stand_now_cycles;
	uint64_t stand_max_cycles;
	struct rp_lcore_lane lanes[RP_MAX_PORTS];
	struct rp_lcore_owner owner[RP_MAX_PORTS];
	/* TSC of the application's last try, rewritten every eighth of a
	 * stand-aside at most (every poller's pass reads it) */
	uint64_t app_tsc;
	uint32_t standing;		/* the lcore naps aside (U0/U1) */
	/*
	 * TSC by which the next pass was due: the end of the last one, or of
	 * the nap, block or stand-aside the lcore chose.  A pass that begins
	 * RP_STARVE_US later than that was starved: the CPU was not the
	 * engine's.  Written by whoever runs a pass and by the lcore as it
	 * naps: relaxed, the last plan wins.
	 */
	uint64_t due;
	/*
	 * Written by the lcore alone; an inline pass counts in its first
	 * lane's (rp_lcore_stat() sums them).
	 */
	uint64_t stats[RP_LC_STAT_MAX];
};

/* rp_lcore_stand.c: inline mode, the lcore's side.  stand_aside: whether it
 * stood aside (true) or holds the devices for a pass (false). */
void rp_lcore_stand_init(struct rp_lcore_ctx *lc, uint32_t inline_us);
bool rp_lcore_stand_aside(struct rp_lcore_ctx *lc);

extern struct rp_lcore_ctx rp_lcores[RP_MAX_ENGINE_LCORES];
extern unsigned int rp_nr_lcores;
extern struct rp_lcore_ctx *rp_dev_lcore[RP_MAX_PORTS];
extern struct rp_inline_choice rp_inline;
extern struct rp_cpu_idle rp_cpu_idle;

static inline void
lc_stat_add(struct rp_lcore_ctx *lc, enum rp_lc_stat s, uint64_t v)
{
	rp_counter_add(&lc->stats[s], v);
}

/* ---- inline passes: the lanes' tokens (whoever touches a shard holds
 * its lane's) */

static inline bool
rp_lane_try(struct rp_lcore_ctx *lc, unsigned int i)
{
	uint32_t free_ = 0;

	/* acquire: pairs with the release in rp_lane_give(), so a pass sees
	 * everything the previous holder's pass wrote. */
	return __atomic_compare_exchange_n(&lc->lanes[i].token, &free_, 1u,
					   false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static inline void
rp_lane_give(struct rp_lcore_ctx *lc, unsigned int i)
{
	rp_store_release(&lc->lanes[i].token, 0u);
}

/* The mask of every lane of the lcore. */
static inline uint32_t
rp_lcore_all_lanes(const struct rp_lcore_ctx *lc)
{
	return (1u << lc->nr_shards) - 1;
}

/* Every lane, or none. */
static inline bool
rp_lcore_token_try(struct rp_lcore_ctx *lc)
{
	for (unsigned int i = 0; i < lc->nr_shards; i++) {
		if (rp_lane_try(lc, i))
			continue;
		while (i-- > 0)
			rp_lane_give(lc, i);
		return false;
	}
	return true;
}

static inline void
rp_lcore_token_give(struct rp_lcore_ctx *lc)
{
	if (!lc->inline_mode)
		return;
	for (unsigned int i = 0; i < lc->nr_shards; i++)
		rp_lane_give(lc, i);
}

/*
 * A lane is held, and the lcore wants them all: the holder may be a program
 * thread that our wake-up preempted mid-pass on a CPU we share, which
 * finishes only once it runs again.  Yield that CPU (token_yields), or
 * pause where the program runs elsewhere.
 */
static inline void
rp_lcore_token_give_way(struct rp_lcore_ctx *lc)
{
	if (lc->shares_cpu) {
		lc_stat_add(lc, RP_LC_TOKEN_YIELDS, 1);
		sched_yield();
	} else {
		rte_pause();
	}
}

/* The lcore, back from a sleep: an application's pass is short. */
static inline void
rp_lcore_token_wait(struct rp_lcore_ctx *lc)
{
	if (!lc->inline_mode)
		return;
	while (!rp_lcore_token_try(lc))
		rp_lcore_token_give_way(lc);
}

/* The next pass is due at `due` (the caller runs it, or sleeps until). */
static inline void
rp_lcore_plan(struct rp_lcore_ctx *lc, uint64_t due)
{
	rp_store_relaxed(&lc->due, due);
}

/* ---- rp_lcore.c */
bool rp_lcore_poll(struct rp_lcore_ctx *lc);
bool rp_lcore_poll_lanes(struct rp_lcore_ctx *lc, uint32_t held,
			 uint64_t *stats, uint64_t t0, uint64_t *end);
uint64_t rp_lcore_stat(const struct rp_lcore_ctx *lc, unsigned int s);

/* ---- rp_lcore_stats.c */
void rp_lcore_stats_log(const struct rp_lcore_ctx *lc);

#endif /* _RP_LCORE_H_ */
