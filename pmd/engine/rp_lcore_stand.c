/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inline passes, the lcore's side (guides/architecture, "Inline passes"):
 * while a program thread runs the passes, the lcore stands aside, and
 * looks now and then whether the program still polls.  The program's side
 * is rp_lcore_inline.c.
 */

#include <poll.h>
#include <time.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "rp_atomic.h"
#include "rp_lcore.h"
#include "rp_signal.h"
#include "rp_time.h"

/*
 * The stand-aside grows while the program polls.  Each look the lcore takes
 * is a wake-up that, on a CPU it shares with a polling program, preempts
 * it mid round trip: at inline_us = 100 in one process, 8,500 looks a
 * second made the p99 of an 8 B ping-pong 12 us against a p50 of 0.85
 * (guides/experiments_close_to_wire, thirtieth round).  A program that
 * polled through one stand-aside is likely to poll through the next: the
 * next is twice as long, up to RP_STAND_MAX_US (or inline_us, if longer),
 * and it is inline_us again once the lcore takes the devices back or is
 * woken.  The devices wait at most inline_us + RP_STAND_MAX_US when a
 * program stops polling without arming a CQ (an arm, a control call wake
 * the lcore at once): 900 us with auto's 300, under the 1 ms that auto's
 * choice keeps under (fifteenth round).
 */
#define RP_STAND_MAX_US	600u

static void
lcore_stand_reset(struct rp_lcore_ctx *lc)
{
	lc->stand_now_cycles = lc->stand_cycles;
}

static void
lcore_stand_grow(struct rp_lcore_ctx *lc)
{
	lc->stand_now_cycles = RTE_MIN(lc->stand_now_cycles * 2,
				       lc->stand_max_cycles);
}

void
rp_lcore_stand_init(struct rp_lcore_ctx *lc, uint32_t inline_us)
{
	lc->stand_cycles = rp_us_cycles(inline_us);
	lc->stand_now_cycles = lc->stand_cycles;
	lc->stand_max_cycles = rp_us_cycles(RTE_MAX(inline_us,
						    RP_STAND_MAX_US));
}

/*
 * Inline mode: whether to stand aside, with the devices left to the
 * application, or run a pass (then holding the token).
 */
bool
rp_lcore_stand_aside(struct rp_lcore_ctx *lc)
{
	struct pollfd pfd = { .fd = lc->wake_fd, .events = POLLIN };
	uint64_t now = rte_get_timer_cycles(), hz = rte_get_timer_hz();
	struct timespec ts;
	bool woken = false;
	int ret = 0;

	if (now - rp_load_relaxed(&lc->app_tsc) >= lc->stand_cycles) {
		lcore_stand_reset(lc);
		if (rp_lcore_token_try(lc))
			return false;
		/*
		 * A program thread holds the devices, in a pass that began
		 * a stand-aside ago or more: on a CPU we share it lost that
		 * CPU to us mid-pass (our wake-up preempted it), and cannot
		 * finish while we spin for the token.  Between the hosts,
		 * each host on one CPU, such spins took 43 % of the CPU of
		 * a polling send_bw (guides/experiments_close_to_wire).
		 */
		rp_lcore_token_give_way(lc);
		return true;
	}
	lc_stat_add(lc, RP_LC_STAND_ASIDES, 1);
	/*
	 * U0: pairs with U1 in rp_engine_unassist() and K1 in
	 * rp_engine_kick().  Our store of standing, the fence, our load of
	 * app_tsc; the program's store of app_tsc (or of a control
	 * request), its fence, its load of standing.  Either we see that it
	 * stopped polling, or it sees us aside and wakes us.
	 */
	rp_store_relaxed(&lc->standing, 1u);
	rp_fence_seq_cst();
	rp_lcore_plan(lc, rte_get_timer_cycles() + lc->stand_now_cycles);
	ts.tv_sec = lc->stand_now_cycles / hz;
	ts.tv_nsec = (long)((lc->stand_now_cycles % hz) * 1000000000u / hz);
	/* Only our own fd: need_wakeup is 0 while we stand aside, so no
	 * attached process rings its own, and the arenas that hold theirs
	 * are the token holder's to change now. */
	if (rte_get_timer_cycles() - rp_load_relaxed(&lc->app_tsc) <
	    lc->stand_cycles) {
		ret = ppoll(&pfd, 1, &ts, NULL);
		if (ret > 0 && (pfd.revents & POLLIN) != 0) {
			woken = true;
			lc_stat_add(lc, RP_LC_DOORBELL_SIGNALS,
				    rp_fd_drain_nowait(lc->wake_fd));
		}
	}
	rp_store_relaxed(&lc->standing, 0u);
	if (woken) {
		/* An arm (the program is gone: the next look takes the
		 * devices) or a control request, which a pass serves now
		 * rather than the program's next. */
		lcore_stand_reset(lc);
		return !rp_lcore_token_try(lc);
	}
	if (ret == 0)
		lcore_stand_grow(lc);
	return true;
}
