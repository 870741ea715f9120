/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine lcores: run to completion over the devices they own -- control
 * requests, a receive burst, each active QP's requester, READ responses
 * and timers, then one transmit burst.  Each step says whether it found
 * work, so an idle lcore can give its CPU back.
 */

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_log.h"
#include "rp_obj.h"

struct rp_lcore_ctx {
	unsigned int lcore;
	unsigned int nr_devs;
	struct rp_dev *devs[RP_MAX_PORTS];
	enum rp_idle_policy idle;
	uint64_t idle_cycles;
	struct timespec nap;
	bool launched;
	/* counters, written by the lcore only */
	uint64_t busy_cycles;
	uint64_t total_cycles;
	uint64_t yields;
};

static struct rp_lcore_ctx rp_lcores[RP_MAX_ENGINE_LCORES];
static unsigned int rp_nr_lcores;
static uint32_t rp_stop;

static bool
dev_poll(struct rp_dev *dev)
{
	struct rte_mbuf *pkts[RP_BURST];
	uint64_t now;
	uint16_t n;
	bool busy;

	busy = rp_ctrl_poll(dev);
	n = rp_port_rx(dev, pkts, RP_BURST);
	if (n != 0) {
		rp_recv_burst(dev, pkts, n);
		busy = true;
	}
	now = rte_get_timer_cycles();
	for (uint32_t i = 0; i < dev->nr_active; i++) {
		struct rp_qp *qp = dev->active[i];

		if (qp->flushing) {
			busy |= rp_qp_flush(qp);
			continue;
		}
		busy |= rp_req_step(qp);
		busy |= rp_resp_step(qp);
		if (qp->comp.deadline != 0 && now >= qp->comp.deadline)
			busy |= rp_comp_timer(qp, now);
	}
	busy |= rp_port_flush(dev);
	if (now >= dev->link_check) {
		rp_port_link_poll(dev);
		dev->link_check = now + rte_get_timer_hz() / 10;
	}
	return busy;
}

static int
lcore_main(void *arg)
{
	struct rp_lcore_ctx *lc = arg;
	uint64_t last_busy = rte_get_timer_cycles();

	static const char * const policy[] = {
		[RP_IDLE_BUSY] = "busy",
		[RP_IDLE_YIELD] = "yield",
		[RP_IDLE_SLEEP] = "sleep",
	};

	/* Naps of a few microseconds need no timer slack. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	RP_LOG(INFO, "engine lcore %u: %u device(s), idle policy %s",
	       lc->lcore, lc->nr_devs, policy[lc->idle]);
	while (!rp_load_relaxed(&rp_stop)) {
		uint64_t t0 = rte_get_timer_cycles();
		bool busy = false;

		for (unsigned int i = 0; i < lc->nr_devs; i++)
			busy |= dev_poll(lc->devs[i]);
		uint64_t t1 = rte_get_timer_cycles();

		lc->total_cycles += t1 - t0;
		if (busy) {
			lc->busy_cycles += t1 - t0;
			last_busy = t1;
		} else if (lc->idle == RP_IDLE_YIELD &&
			   t1 - last_busy > lc->idle_cycles) {
			/* Give the CPU to whoever shares it (the application,
			 * the peer's engine); a post or a packet is seen on
			 * the next pass. */
			lc->yields++;
			sched_yield();
		} else if (lc->idle == RP_IDLE_SLEEP &&
			   t1 - last_busy > lc->idle_cycles) {
			/* A sleeper that wakes preempts a spinning application
			 * under CFS, where a yield would not: on shared CPUs
			 * this bounds the latency a busy application adds. */
			lc->yields++;
			nanosleep(&lc->nap, NULL);
		}
	}
	/* Leave nothing half-sent behind. */
	for (unsigned int i = 0; i < lc->nr_devs; i++)
		rp_port_flush(lc->devs[i]);
	return 0;
}

int
rp_lcore_launch(const struct rp_config *cfg)
{
	int ret;

	rp_store_relaxed(&rp_stop, 0u);
	memset(rp_lcores, 0, sizeof(rp_lcores));
	rp_nr_lcores = 0;
	for (unsigned int i = 0; i < cfg->nb_lcores; i++) {
		struct rp_lcore_ctx *lc = &rp_lcores[rp_nr_lcores];

		lc->lcore = cfg->lcores[i];
		lc->idle = cfg->idle;
		lc->idle_cycles = rte_get_timer_hz() / 1000000 * cfg->idle_us;
		lc->nap.tv_nsec = (long)cfg->sleep_us * 1000;
		for (unsigned int d = 0; d < rp_nr_devs; d++)
			if (rp_devs[d]->lcore == lc->lcore)
				lc->devs[lc->nr_devs++] = rp_devs[d];
		if (lc->nr_devs == 0)
			continue;
		if (!rte_lcore_is_enabled(lc->lcore) ||
		    lc->lcore == rte_get_main_lcore()) {
			RP_LOG(ERR, "engine lcore %u is not an enabled worker lcore",
			       lc->lcore);
			return -EINVAL;
		}
		ret = rte_eal_remote_launch(lcore_main, lc, lc->lcore);
		if (ret < 0) {
			RP_LOG(ERR, "cannot launch lcore %u: %s", lc->lcore,
			       strerror(-ret));
			return ret;
		}
		lc->launched = true;
		rp_nr_lcores++;
	}
	return 0;
}

void
rp_lcore_stop(void)
{
	rp_store_release(&rp_stop, 1u);
	for (unsigned int i = 0; i < rp_nr_lcores; i++) {
		if (rp_lcores[i].launched)
			rte_eal_wait_lcore(rp_lcores[i].lcore);
		rp_lcores[i].launched = false;
	}
	rp_nr_lcores = 0;
}
