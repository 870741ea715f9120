/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine lcores: run to completion over the devices they own -- control
 * requests, a receive burst, each active QP's requester, READ responses
 * and timers, then one transmit burst.  Each step says whether it found
 * work, so an idle lcore can give its CPU back.
 */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include <infiniband/verbs.h>

#include "rp_atomic.h"
#include "rp_idle_spin.h"
#include "rp_inline.h"
#include "rp_log.h"
#include "rp_engine.h"
#include "rp_lcore.h"
#include "rp_signal.h"
#include "rp_time.h"

struct rp_lcore_ctx rp_lcores[RP_MAX_ENGINE_LCORES];
/* What inline_us decided, at launch (rp_inline.c). */
struct rp_inline_choice rp_inline;
/* The CPUs' idle behaviour, read at launch (rp_cpu_idle.c). */
struct rp_cpu_idle rp_cpu_idle;
unsigned int rp_nr_lcores;
static uint32_t rp_stop;
/* Device id -> its lcore, for rp_engine_assist(); set before launch. */
struct rp_lcore_ctx *rp_dev_lcore[RP_MAX_PORTS];


/*
 * Lateness a pass is counted as starved from: far below the shortest
 * retransmit timeout (1 ms, rp_req.c), above a nap's usual overshoot.
 */
#define RP_STARVE_US	200
/*
 * Length of a pass counted as starved inside: RP_BURST packets a shard
 * and a budget a QP take microseconds, a stop (SIGSTOP, a debugger) or a
 * preemption milliseconds.  At least the shortest retransmit timeout.
 */
#define RP_PASS_LONG_US	1000

/* TSC cycles of a microsecond count, the timer's rate read once: each
 * pass compares against two, and rte_get_timer_hz() is a call. */
static inline uint64_t
us_cycles(uint64_t *cache, uint64_t us)
{
	uint64_t c = rp_load_relaxed(cache);

	if (unlikely(c == 0)) {
		c = rp_us_cycles(us);
		rp_store_relaxed(cache, c);
	}
	return c;
}

static uint64_t rp_pass_long_c, rp_starve_c;
#define PASS_LONG_CYCLES	us_cycles(&rp_pass_long_c, RP_PASS_LONG_US)
#define STARVE_CYCLES		us_cycles(&rp_starve_c, RP_STARVE_US)
/* A spin yield this long may have given the CPU to a spinner
 * (lcore_spin_yield()): a woken thread that then blocks again takes
 * microseconds, a slice 0.7 ms and more.  The first silence they cause. */
#define RP_SPIN_YIELD_LONG_US	200u
#define RP_SPIN_QUIET_MIN_MS	10u
/* Long yields within RP_SPIN_LONG_MS that silence the spin yields: a
 * spinner makes one a slice, a woken program that ran long one now and
 * then (between the hosts, a few a second). */
#define RP_SPIN_LONG_RUN	3u
#define RP_SPIN_LONG_MS		50u

/* The kernel interface's addresses changed: the device follows. */
static void
dev_addrs_poll(struct rp_dev *dev)
{
	struct rp_port_cfg pc;

	if (rp_netdev_watch_poll(&dev->net, &pc))
		rp_dev_addrs_set(dev, pc.ipv4, pc.prefix_len,
				 (const uint8_t (*)[16])pc.ipv6, pc.ipv6_plen,
				 pc.nr_ipv6);
}

/*
 * One pass over a shard of a device: shard 0 also runs control requests
 * and the link and address polls.
 */
static bool
shard_poll(struct rp_shard *sh)
{
	struct rp_dev *dev = sh->dev;
	struct rte_mbuf *pkts[RP_BURST];
	uint64_t now;
	uint16_t n;
	bool busy = false, defer;

	RTE_PER_LCORE(rp_cur_shard) = sh;
	if (sh->idx != 0)
		rp_shard_wait(sh);
	sh->pass_cqes = 0;
	sh->pass_signals = 0;
	if (sh->idx == 0)
		busy = rp_ctrl_poll(dev);
	/* List operations before packets: a tag posted before a message
	 * arrived is matched by it. */
	for (uint32_t i = 0; i < dev->nr_tm_srq; i++)
		if (dev->tm_srq[i]->shard == sh->idx)
			busy |= rp_tm_ops_poll(dev->tm_srq[i]);
	n = rp_shard_rx(sh, pkts, RP_BURST);
	if (n != 0) {
		rp_recv_burst(dev, pkts, n);
		busy = true;
	}
	now = rte_get_timer_cycles();
	if (sh->pass_tsc != 0 && (int64_t)(now - sh->pass_tsc) >=
	    (int64_t)PASS_LONG_CYCLES) {
		/* stopped in this pass before its timers: not their time */
		if (sh->starved_lag == 0)
			sh->starved_from = sh->pass_tsc;
		sh->starved_lag = now - sh->starved_from;
	}
	/* QPs with work only: rung, received for, or not yet done. */
	rp_qp_bells(dev);
	for (uint32_t i = 0; i < sh->nr_active; ) {
		struct rp_qp *qp = sh->active[i];
		bool quiet;

		busy |= rp_qp_step(qp, now, &quiet);
		if (!quiet) {
			i++;
			continue;
		}
		/* The last one, not stepped yet, takes its place. */
		sh->active[i] = sh->active[--sh->nr_active];
		qp->active = false;
	}
	/*
	 * The transmit queue filled in this walk: the QPs stepped last may
	 * have found no room (rp_tx_room()).  The walk starts one QP later
	 * next pass, so no QP waits behind the same others for good.
	 */
	if (sh->nr_active > 1 && !rp_port_tx_room(&sh->pq)) {
		struct rp_qp *first = sh->active[0];

		memmove(&sh->active[0], &sh->active[1],
			(sh->nr_active - 1) * sizeof(sh->active[0]));
		sh->active[sh->nr_active - 1] = first;
	}
	/* The program learns of its completions before the frames leave. */
	rp_cq_notify_flush(sh);
	if (sh->nr_mod_wait != 0)	/* events moderation held */
		rp_cq_mod_poll(sh, now);
	defer = sh->tx_defer && sh->pass_cqes != 0 && sh->pq.nr_tx != 0 &&
		!dev->port.ops->holds;
	if (defer && sh->pass_cqes > RP_DEFER_CQES) {
		rp_stat_add(dev, RP_STAT_TX_UNDEFERRED, sh->pq.nr_tx);
		defer = false;
	}
	if (defer) {
		/* The caller's next pass sends them (rp_engine_assist).
		 * Frames over registered memory (zero copy) too: their
		 * WQEs are not complete, and a deregistration in between
		 * copies them first (rp_mr.c). */
		rp_stat_add(dev, RP_STAT_TX_DEFERRED, sh->pq.nr_tx);
		busy = true;
	} else {
		rp_xmit_acks_last(&sh->pq);
		busy |= rp_port_flush(&sh->pq);
	}
	if (sh->idx == 0 && now >= dev->link_check) {
		/* The GID table and link state: the other shards read them. */
		rp_shard_pause(dev);
		rp_dev_link_poll(dev);
		rp_port_stats(&dev->port);
		dev_addrs_poll(dev);
		rp_shard_resume(dev);
		dev->link_check = now + rte_get_timer_hz() / 10;
	}
	rp_cq_notify_flush(sh);
	RTE_PER_LCORE(rp_cur_shard) = NULL;
	return busy;
}

/*
 * One pass over a device's shard 0.  Exported for the transport fuzzer
 * (test/fuzz/fuzz_transport.c), which is the device's lcore itself: it
 * calls this once per injected frame, so every run is deterministic.
 */
bool
rp_dev_poll(struct rp_dev *dev)
{
	return shard_poll(&dev->sh[0]);
}

/*
 * Starved: this pass begins RP_STARVE_US later than the lcore planned
 * (rp_lcore_plan()), the CPU not having been the engine's (another spinner,
 * the peer host on the same CPU, a stopped process).  The shards' timers
 * must then not take the gap [due, due + lag] for the peer's silence
 * (rp_comp_timer()).  Time spent in a pass, its own or the other shards'
 * of the lcore, is the engine's and counts; but not a pass that took
 * RP_PASS_LONG_US or more, which no pass's work takes: the process was
 * stopped inside it (a stop that fell there drew a probe in
 * engine-wire-starve_timer one run in five on a busy machine), and its
 * timers, read before or after the stop, must not take it either.  The
 * lcore's counters keep the gaps between passes only.
 */
static void
lcore_starve_check(struct rp_lcore_ctx *lc, uint32_t held, uint64_t now,
		   uint64_t *stats)
{
	uint64_t due = rp_load_relaxed(&lc->due), lag = 0;

	if (due != 0 && now > due &&
	    now - due > STARVE_CYCLES)
		lag = now - due;
	if (lag != 0) {
		rp_counter_add(&stats[RP_LC_STARVED], 1);
		rp_counter_add(&stats[RP_LC_STARVED_US], rp_cycles_us(lag));
	}
	for (unsigned int i = 0; i < lc->nr_shards; i++) {
		const struct rp_lcore_lane *l = &lc->lanes[i];
		struct rp_shard *sh = lc->shards[i];

		if ((held & 1u << i) == 0)
			continue;
		/* the long pass, and the gap after it if starved too */
		sh->starved_from = l->pass_long != 0 ? l->pass_tsc : due;
		sh->starved_lag = lag + l->pass_long;
		sh->pass_tsc = now;
	}
}

/*
 * One pass over the shards whose lanes the caller holds (bit i: shards[i]),
 * counting in stats: the lcore's own, or an inline pass's first lane's.
 * It began at TSC t0 (the caller's reading: a pass is a few of them); its
 * end into *end.
 */
bool
rp_lcore_poll_lanes(struct rp_lcore_ctx *lc, uint32_t held, uint64_t *stats,
		    uint64_t t0, uint64_t *end)
{
	uint64_t t1, len;
	bool busy = false;

	lcore_starve_check(lc, held, t0, stats);
	for (unsigned int i = 0; i < lc->nr_shards; i++)
		if ((held & 1u << i) != 0)
			busy |= shard_poll(lc->shards[i]);
	t1 = rte_get_timer_cycles();
	/* signed: a thread moved to another CPU may read its TSC a little
	 * behind */
	len = (int64_t)(t1 - t0) >= (int64_t)PASS_LONG_CYCLES ? t1 - t0 : 0;
	for (unsigned int i = 0; i < lc->nr_shards; i++) {
		if ((held & 1u << i) == 0)
			continue;
		lc->lanes[i].pass_tsc = t0;
		lc->lanes[i].pass_long = len;
	}
	rp_counter_add(&stats[RP_LC_POLLS], 1);
	if (busy)
		rp_counter_add(&stats[RP_LC_POLLS_BUSY], 1);
	*end = t1;
	return busy;
}

/* The lcore's pass over all its shards (it holds every lane). */
bool
rp_lcore_poll(struct rp_lcore_ctx *lc)
{
	uint64_t end;
	bool busy = rp_lcore_poll_lanes(lc, rp_lcore_all_lanes(lc),
					 lc->stats, rte_get_timer_cycles(),
					 &end);

	rp_lcore_plan(lc, end);
	return busy;
}

/*
 * Whether the last pass signalled a completion channel: woke a program
 * thread, which reposts receives and polls its CQ once it runs.
 */
static bool
lcore_signalled(const struct rp_lcore_ctx *lc)
{
	for (unsigned int i = 0; i < lc->nr_shards; i++)
		if (lc->shards[i]->pass_signals != 0)
			return true;
	return false;
}

/*
 * The earliest TSC at which a timer of the lcore's devices needs a pass:
 * retransmit and RNR timers of active QPs, the link poll.  0 when a device
 * holds frames the port refused (or ones a fault holds back), which must
 * not wait.
 */
static uint64_t
lcore_deadline(const struct rp_lcore_ctx *lc, uint64_t limit)
{
	uint64_t dl = limit;

	for (unsigned int d = 0; d < lc->nr_shards; d++) {
		const struct rp_shard *sh = lc->shards[d];
		const struct rp_dev *dev = sh->dev;
		uint64_t mod = rp_cq_mod_next(sh);

		if (sh->pq.nr_tx != 0 || dev->port.fault[0].nr_held != 0 ||
		    dev->port.fault[1].nr_held != 0)
			return 0;
		dl = RTE_MIN(dl, dev->link_check);
		if (mod != 0)
			dl = RTE_MIN(dl, mod);
		for (uint32_t i = 0; i < sh->nr_active; i++) {
			const struct rp_qp *qp = sh->active[i];

			if (qp->comp.deadline != 0)
				dl = RTE_MIN(dl, qp->comp.deadline);
			if (qp->req.rnr_wait)
				dl = RTE_MIN(dl, qp->req.rnr_until);
			if (qp->cc.waiting)	/* paced by its rate */
				dl = RTE_MIN(dl, qp->cc.next_tx);
		}
	}
	return dl;
}

static void
lcore_need_wakeup(struct rp_lcore_ctx *lc, uint32_t v)
{
	for (unsigned int d = 0; d < lc->nr_shards; d++) {
		struct rp_dev *dev = lc->shards[d]->dev;

		rp_store_relaxed(&dev->ctl->need_wakeup, v);
		if (v != 0)
			rp_port_rx_intr_enable(&dev->port);
		else
			rp_port_rx_intr_disable(&dev->port);
	}
}

/*
 * Read an RX interrupt's eventfd (the engine's own, not every kind takes
 * RWF_NOWAIT) that poll() reported readable; returns its count.
 */
static uint64_t
fd_drain(int fd)
{
	uint64_t v = 0;

	if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return 0;
	return v;
}

/* fd is the RX interrupt of one of the lcore's devices (not a socket). */
static bool
lcore_is_intr_fd(const struct rp_lcore_ctx *lc, int fd)
{
	for (unsigned int d = 0; d < lc->nr_shards; d++)
		if (lc->shards[d]->dev->port.rx_intr_fd == fd)
			return true;
	return false;
}

/* Wake-up eventfds of attached processes: one per process and device. */
#define LC_CLIENT_FDS	(RP_MAX_PORTS * (RP_MAX_ARENAS - 1))

/*
 * The wake-up fds of the processes attached to the lcore's devices (each
 * arena's own, rp_region.c), into fds; where each is kept, into where.
 * Arenas come and go through control requests, which run on this lcore
 * or, inline, on a thread holding the token: the caller holds it.
 */
static unsigned int
lcore_client_fds(const struct rp_lcore_ctx *lc, struct pollfd *fds,
		 const int **where)
{
	unsigned int n = 0;

	for (unsigned int d = 0; d < lc->nr_shards; d++) {
		const struct rp_dev *dev = lc->shards[d]->dev;

		for (uint32_t i = 1; i < RP_MAX_ARENAS; i++) {
			const struct rp_arena *a = &dev->arena[i];

			if (!a->used || a->wake_fd < 0 || n == LC_CLIENT_FDS)
				continue;
			where[n] = &a->wake_fd;
			fds[n++] = (struct pollfd){
				.fd = a->wake_fd, .events = POLLIN,
			};
		}
	}
	return n;
}

/*
 * Idle policy "adaptive": announce the sleep, take a last look at every
 * work source, and block until a doorbell (the engine's own, or an
 * attached process's), an RX interrupt, the nearest timer or wake_us.
 * Returns true if the last look found work.
 */
static bool
lcore_block(struct rp_lcore_ctx *lc)
{
	struct pollfd fds[1 + RP_MAX_PORTS * RP_PORT_WAIT_FDS + LC_CLIENT_FDS];
	const int *where[LC_CLIENT_FDS];
	unsigned int nfds = 0, nport, nclient;
	bool rung = false, client = false;
	struct timespec ts;
	uint64_t now, dl, hz = rte_get_timer_hz();
	int ret;

	lcore_need_wakeup(lc, 1u);
	/*
	 * D0: pairs with D1 in rp_doorbell_ring() (rp_doorbell.h).  Our
	 * store of need_wakeup, this fence, then the loads of the last look
	 * (control ring, TM-SRQ op rings, loopback ring, RX queue, each
	 * active QP's SQ producer and, when flushing, RQ producer: the very loads of a
	 * normal pass); a
	 * poster's release store of its producer, its fence, its load of
	 * need_wakeup.  One of the two sees the other's store, so no post
	 * is stranded.  RX interrupts were enabled before this look, so a
	 * frame arriving after it raises the interrupt; a receive socket is
	 * readable as long as a frame waits in it.
	 */
	rp_fence_seq_cst();
	if (rp_lcore_poll(lc)) {
		lcore_need_wakeup(lc, 0u);
		lc_stat_add(lc, RP_LC_BLOCKS_ABORTED, 1);
		return true;
	}
	now = rte_get_timer_cycles();
	dl = lcore_deadline(lc, now + lc->wake_ns * hz / 1000000000u);
	if (dl <= now) {
		lcore_need_wakeup(lc, 0u);
		return false;
	}
	dl = (dl - now) * 1000000000u / hz;	/* ns */
	ts.tv_sec = (time_t)(dl / 1000000000u);
	ts.tv_nsec = (long)(dl % 1000000000u);

	fds[nfds].fd = lc->wake_fd;
	fds[nfds++].events = POLLIN;
	for (unsigned int d = 0; d < lc->nr_shards; d++)
		nfds += rp_port_wait_fds(&lc->shards[d]->dev->port, fds + nfds,
					 RTE_DIM(fds) - LC_CLIENT_FDS - nfds);
	nport = nfds;
	nclient = lcore_client_fds(lc, fds + nport, where);
	nfds += nclient;
	lc_stat_add(lc, RP_LC_BLOCKS, 1);
	rp_lcore_plan(lc, now + (uint64_t)ts.tv_sec * hz +
		   (uint64_t)ts.tv_nsec * hz / 1000000000u);
	rp_lcore_token_give(lc);
	ret = ppoll(fds, nfds, &ts, NULL);
	rp_lcore_token_wait(lc);
	lcore_need_wakeup(lc, 0u);

	/*
	 * Doorbells: ours, and each attached process's own fd.  Read with
	 * RWF_NOWAIT: a process may have cleared O_NONBLOCK on its fd, or
	 * read its count first; neither may block us.  An arena destroyed
	 * while we slept (inline: by a pass of another thread) closed its
	 * fd: only fds that are still an arena's are read.
	 */
	if (ret > 0 && (fds[0].revents & POLLIN) != 0) {
		rung = true;
		lc_stat_add(lc, RP_LC_DOORBELL_SIGNALS,
			    rp_fd_drain_nowait(lc->wake_fd));
	}
	for (unsigned int i = 0; ret > 0 && i < nclient; i++) {
		const struct pollfd *p = &fds[nport + i];

		if ((p->revents & POLLIN) == 0 || *where[i] != p->fd)
			continue;
		client = true;
		lc_stat_add(lc, RP_LC_DOORBELL_SIGNALS,
			    rp_fd_drain_nowait(p->fd));
	}
	if (client)
		lc_stat_add(lc, RP_LC_WAKE_CLIENT, 1);
	if (rung || client) {
		lc_stat_add(lc, RP_LC_WAKE_DOORBELL, 1);
		ret = -1;	/* counted */
	}
	for (unsigned int i = 1; i < nport; i++) {
		bool intr = lcore_is_intr_fd(lc, fds[i].fd);

		if ((fds[i].revents & POLLIN) == 0)
			continue;
		/* An interrupt's count is read; a socket's frames are the
		 * next pass's. */
		if (intr)
			fd_drain(fds[i].fd);
		if (ret > 0) {
			lc_stat_add(lc, intr ? RP_LC_WAKE_RX_INTR :
				    RP_LC_WAKE_RX_SOCK, 1);
			ret = -1;
		}
	}
	if (ret >= 0)
		lc_stat_add(lc, RP_LC_WAKE_TIMEOUT, 1);
	return false;
}

/*
 * An idle pass within idle_us, on a CPU a program thread may want: yield
 * it.  A thread just woken there (by this lcore, by the peer's engine, by
 * the kernel) would otherwise wait out our spin.  Between two hosts on two
 * CPUs, each hop of an events ping-pong did: 40-60 us a half round trip
 * against 10, and 5x the CPU (guides/experiments_close_to_wire).
 *
 * Yields that kept us off the CPU for long, three within 50 ms, gave it
 * to a spinner (a polling program without inline passes), which keeps it for
 * its slice, ms: then no spin yields for a while, twice as long (up to
 * 1 s) each time that repeats within a second, so each message does not
 * cost a slice.
 */
static void
lcore_spin_yield(struct rp_lcore_ctx *lc, uint64_t now)
{
	uint64_t hz = rte_get_timer_hz(), dt;

	if (now < lc->spin_quiet_until)
		return;
	lc_stat_add(lc, RP_LC_SPIN_YIELDS, 1);
	sched_yield();
	dt = rte_get_timer_cycles() - now;
	if (dt < rp_us_cycles(RP_SPIN_YIELD_LONG_US)) {
		if (now - lc->spin_long_tsc > hz)
			lc->spin_quiet = hz / 1000u * RP_SPIN_QUIET_MIN_MS;
		return;
	}
	lc_stat_add(lc, RP_LC_SPIN_YIELDS_LONG, 1);
	if (now - lc->spin_long_first > hz / 1000u * RP_SPIN_LONG_MS) {
		lc->spin_long_first = now;
		lc->spin_long_run = 0;
	}
	if (++lc->spin_long_run < RP_SPIN_LONG_RUN)
		return;
	lc->spin_long_run = 0;
	lc->spin_long_first = 0;
	lc->spin_long_tsc = now;
	lc->spin_quiet_until = now + dt + lc->spin_quiet;
	lc->spin_quiet = RTE_MIN(lc->spin_quiet * 2, hz);
}

/* One epoch of rp_idle_nap.h: long enough to hold tens of completions of
 * an events ping-pong, short enough that a trial's cost is one of them. */
#define RP_NAP_EPOCH_US	2000

/*
 * A nap of sleep_us.  A sleeper that wakes preempts a spinning program
 * under CFS, where a yield would not.
 */
static void
lcore_nap(struct rp_lcore_ctx *lc, enum rp_lc_stat counter)
{
	lc_stat_add(lc, counter, 1);
	rp_lcore_plan(lc, rte_get_timer_cycles() +
		      rp_us_cycles((uint64_t)lc->nap.tv_nsec / 1000u));
	nanosleep(&lc->nap, NULL);
}

/*
 * adaptive: at the end of an epoch, judge the spin's way of waiting by the
 * completions its devices published (rp_idle_nap.h).  Called while the
 * lcore holds its devices: the shards' counts are its to read.
 */
static void
lcore_nap_epoch(struct rp_lcore_ctx *lc, uint64_t now)
{
	uint64_t cqes = 0, cpu;
	struct timespec ts;
	bool trial;
	int d;

	if (now - lc->nap_epoch_tsc < rp_us_cycles(RP_NAP_EPOCH_US))
		return;
	for (unsigned int i = 0; i < lc->nr_shards; i++)
		cqes += lc->shards[i]->cqes;
	/* a system call an epoch, not a pass */
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return;
	cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	trial = lc->nap_way.trial != 0;
	d = rp_idle_nap_epoch(&lc->nap_way, cqes - lc->nap_epoch_cqes,
			      now - lc->nap_epoch_tsc, cpu - lc->nap_epoch_cpu);
	if (!trial && lc->nap_way.trial != 0)
		lc_stat_add(lc, RP_LC_NAP_TRIALS, 1);
	if (d > 0)
		lc_stat_add(lc, RP_LC_NAP_ON, 1);
	else if (d < 0)
		lc_stat_add(lc, RP_LC_NAP_OFF, 1);
	lc->nap_epoch_cqes = cqes;
	lc->nap_epoch_cpu = cpu;
	lc->nap_epoch_tsc = now;
}

/*
 * adaptive: a pass found work `gap` cycles after the last busy one; if
 * the lcore blocked in between, that gap teaches the spin before the
 * next block (rp_idle_spin.h).
 */
static void
lcore_spin_learn(struct rp_lcore_ctx *lc, uint64_t gap)
{
	int d = rp_idle_spin_learn(&lc->spin_cycles, lc->idle_cycles, gap,
				   lc->blocked);

	lc->blocked = false;
	if (d > 0)
		lc_stat_add(lc, RP_LC_SPIN_GROWS, 1);
	else if (d < 0)
		lc_stat_add(lc, RP_LC_SPIN_SHRINKS, 1);
}

static int
lcore_main(void *arg)
{
	struct rp_lcore_ctx *lc = arg;
	uint64_t t0 = rte_get_timer_cycles();
	uint64_t last_busy = t0;

	/* A0: pairs with R0 in rp_lcore_launch(): devices are set up. */
	while (rp_load_acquire(&lc->go) == 0)
		rte_pause();
	/* Naps of a few microseconds need no timer slack. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	RP_LOG(INFO, "engine lcore %u: %u device(s), idle policy %s, inline passes %s, %s",
	       lc->lcore, lc->nr_shards,
	       rp_idle_policy_name(rp_load_relaxed(&lc->idle)),
	       rp_inline_kind_name(lc->inline_kind),
	       lc->spin_yield ?
	       "yields after waking the program and while spinning idle (its CPUs are some of the program's)" :
	       lc->shares_cpu ?
	       "yields after waking the program (its CPUs are all the program's)" :
	       "CPUs apart from the program's");
	while (!rp_load_relaxed(&rp_stop)) {
		bool busy;
		uint64_t t1, spin;
		uint32_t idle;

		if (lc->inline_mode && rp_lcore_stand_aside(lc)) {
			t1 = rte_get_timer_cycles();
			lc_stat_add(lc, RP_LC_IDLE_CYCLES, t1 - t0);
			t0 = t1;
			continue;
		}
		busy = rp_lcore_poll(lc);
		if (busy && lcore_signalled(lc)) {
			lc_stat_add(lc, RP_LC_SIGNAL_PASSES, 1);
			/* The thread just woken may wait for our CPU: the
			 * scheduler (EEVDF) lets a busy lcore finish its
			 * slice, ms, first.  The devices stay ours. */
			if (lc->shares_cpu) {
				lc_stat_add(lc, RP_LC_SIGNAL_YIELDS, 1);
				sched_yield();
			}
		}
		t1 = rte_get_timer_cycles();
		idle = rp_load_relaxed(&lc->idle);
		if (idle == RP_IDLE_ADAPTIVE && !lc->can_block)
			idle = RP_IDLE_YIELD;
		spin = idle == RP_IDLE_ADAPTIVE ? lc->spin_cycles :
		       lc->idle_cycles;
		if (busy) {
			lcore_spin_learn(lc, t1 - last_busy);
			last_busy = t1;
		} else if (idle == RP_IDLE_ADAPTIVE && t1 - last_busy > spin) {
			/* The last look holds the devices; the block itself
			 * gives them up.  Keep last_busy after a wake-up: a
			 * pass that finds nothing (a timeout) blocks again at
			 * once, and the gap the spin learns from runs on. */
			lc->blocked = true;
			busy = lcore_block(lc);
			if (busy) {
				t1 = rte_get_timer_cycles();
				lcore_spin_learn(lc, t1 - last_busy);
				last_busy = t1;
			}
		}
		if (idle == RP_IDLE_ADAPTIVE && lc->spin_nap)
			lcore_nap_epoch(lc, t1);
		/* Inline mode: the devices are free while the lcore naps. */
		rp_lcore_token_give(lc);
		if (!busy && t1 - last_busy <= spin) {
			/* adaptive, where naps cost no work: no spin, and no
			 * doorbell either, the lcore not being blocked */
			if (idle == RP_IDLE_ADAPTIVE && lc->spin_nap &&
			    rp_idle_nap_now(&lc->nap_way))
				lcore_nap(lc, RP_LC_SPIN_NAPS);
			else if (lc->spin_yield && idle != RP_IDLE_BUSY)
				lcore_spin_yield(lc, t1);
		} else if (!busy) {
			if (idle == RP_IDLE_YIELD) {
				/* Give the CPU to whoever shares it (the
				 * application, the peer's engine); a post or a
				 * packet is seen on the next pass. */
				lc_stat_add(lc, RP_LC_YIELDS, 1);
				sched_yield();
			} else if (idle == RP_IDLE_SLEEP) {
				/* On shared CPUs the nap bounds the latency a
				 * busy application adds (lcore_nap()). */
				lcore_nap(lc, RP_LC_NAPS);
			}
		}
		t1 = rte_get_timer_cycles();
		lc_stat_add(lc, busy ? RP_LC_BUSY_CYCLES : RP_LC_IDLE_CYCLES,
			    t1 - t0);
		t0 = t1;
	}
	/* The devices are the lcore's for good: no inline pass from now. */
	rp_lcore_token_wait(lc);
	/* Leave nothing half-sent behind; a device's shard 0 still running
	 * its control must not wait for these shards (rp_shard_pause()). */
	for (unsigned int i = 0; i < lc->nr_shards; i++) {
		RTE_PER_LCORE(rp_cur_shard) = lc->shards[i];
		rp_port_flush(&lc->shards[i]->pq);
		rp_store_release(&lc->shards[i]->gone, 1u);
	}
	RTE_PER_LCORE(rp_cur_shard) = NULL;
	/* R1: pairs with A1 in rp_lcore_stop(): the devices are ours no
	 * more. */
	rp_store_release(&lc->done, 1u);
	return 0;
}

/* inline_us, decided once from the engine lcores' CPUs and the program's. */
static int
lcore_inline_decide(const struct rp_config *cfg)
{
	cpu_set_t app, engine;

	CPU_ZERO(&engine);
	for (unsigned int i = 0; i < cfg->nb_lcores; i++) {
		cpu_set_t c;

		if (!rte_lcore_is_enabled(cfg->lcores[i]))
			continue;	/* refused below */
		c = rte_lcore_cpuset(cfg->lcores[i]);
		CPU_OR(&engine, &engine, &c);
	}
	rp_inline_app_cpus(&app);
	rp_inline_decide(cfg->inline_us, &app, &engine, &rp_inline);
	RP_LOG(INFO, "inline passes %s: %s", rp_inline_kind_name(rp_inline.kind),
	       rp_inline.why);
	return 0;
}

int
rp_lcore_launch(const struct rp_config *cfg)
{
	char why[512];
	cpu_set_t app, shared;
	unsigned int n = 0;
	int ret;

	rp_store_relaxed(&rp_stop, 0u);
	memset(rp_lcores, 0, sizeof(rp_lcores));
	memset(rp_dev_lcore, 0, sizeof(rp_dev_lcore));
	for (unsigned int i = 0; i < RP_MAX_ENGINE_LCORES; i++)
		rp_lcores[i].wake_fd = -1;
	rp_nr_lcores = 0;
	ret = lcore_inline_decide(cfg);
	if (ret < 0)
		return ret;
	/* What a wake-up costs here (a VM's halting vCPUs): said, not set. */
	rp_cpu_idle_read("/sys", &rp_cpu_idle);
	RP_LOG(INFO, "idle CPUs: %s",
	       rp_cpu_idle_explain(&rp_cpu_idle, why, sizeof(why)));
	rp_inline_app_cpus(&app);
	/*
	 * Every lcore set up before any runs: a device's shard 0 stops its
	 * other shards (rp_shard_pause()) through their wake-up fds, from
	 * its first pass on.
	 */
	for (unsigned int i = 0; i < cfg->nb_lcores; i++) {
		struct rp_lcore_ctx *lc = &rp_lcores[n];

		lc->lcore = cfg->lcores[i];
		lc->idle = cfg->idle;
		lc->idle_cycles = rp_us_cycles(cfg->idle_us);
		lc->spin_cycles = lc->idle_cycles;
		lc->blocked = false;
		lc->nap.tv_nsec = (long)cfg->sleep_us * 1000;
		lc->spin_nap = cfg->spin_nap;
		memset(&lc->nap_way, 0, sizeof(lc->nap_way));
		lc->nap_epoch_tsc = 0;
		lc->nap_epoch_cqes = 0;
		lc->nap_epoch_cpu = 0;
		lc->wake_ns = (uint64_t)cfg->wake_us * 1000;
		lc->inline_kind = rp_inline.kind;
		lc->inline_mode = rp_inline.kind != RP_INLINE_OFF;
		lc->cpus = rte_lcore_cpuset(lc->lcore);
		CPU_AND(&shared, &app, &lc->cpus);
		lc->shares_cpu = CPU_COUNT(&shared) != 0;
		/* Spin yields only where a program thread may also be woken
		 * from elsewhere onto our CPUs: one confined to them is woken
		 * here by us (a signal: signal yields) or not at all, and
		 * there the yields cost 1-2 us a round trip. */
		lc->spin_yield = lc->shares_cpu &&
				 CPU_COUNT(&app) > CPU_COUNT(&shared);
		lc->spin_quiet = rte_get_timer_hz() / 1000u *
				 RP_SPIN_QUIET_MIN_MS;
		rp_lcore_stand_init(lc, rp_inline.us);
		lc->can_block = true;
		for (unsigned int d = 0; d < rp_nr_devs; d++)
			for (uint32_t s = 0; s < rp_devs[d]->nr_shards; s++) {
				struct rp_shard *sh = &rp_devs[d]->sh[s];

				if (sh->lcore != lc->lcore)
					continue;
				lc->shards[lc->nr_shards++] = sh;
				if (s == 0)
					rp_dev_lcore[d] = lc;
				if (rp_devs[d]->nr_shards > 1)
					lc->can_block = false;
			}
		if (lc->nr_shards == 0)
			continue;
		lc->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (lc->wake_fd < 0) {
			ret = -errno;
			RP_LOG(ERR, "lcore %u: eventfd: %s", lc->lcore,
			       strerror(errno));
			return ret;
		}
		for (unsigned int d = 0; d < lc->nr_shards; d++) {
			lc->shards[d]->wake_fd = lc->wake_fd;
			if (lc->shards[d]->idx == 0)
				lc->shards[d]->dev->wake_fd = lc->wake_fd;
		}
		if (!rte_lcore_is_enabled(lc->lcore) ||
		    lc->lcore == rte_get_main_lcore()) {
			RP_LOG(ERR, "engine lcore %u is not an enabled worker lcore",
			       lc->lcore);
			return -EINVAL;
		}
		n++;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct rp_lcore_ctx *lc = &rp_lcores[i];

		/* R0: pairs with A0 in lcore_main(). */
		rp_store_release(&lc->go, 1u);
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
	const uint64_t one = 1;

	rp_store_release(&rp_stop, 1u);
	/* A blocked lcore would see the flag only at its timeout. */
	for (unsigned int i = 0; i < RP_MAX_ENGINE_LCORES; i++)
		if (rp_lcores[i].wake_fd >= 0 &&
		    write(rp_lcores[i].wake_fd, &one, sizeof(one)) < 0)
			RP_LOG(DEBUG, "lcore wake-up: %s", strerror(errno));
	for (unsigned int i = 0; i < rp_nr_lcores; i++) {
		struct rp_lcore_ctx *lc = &rp_lcores[i];

		if (lc->launched) {
			rte_eal_wait_lcore(lc->lcore);
			/* A1: pairs with R1 in lcore_main(). */
			while (rp_load_acquire(&lc->done) == 0)
				rte_pause();
			rp_lcore_stats_log(lc);
		}
		lc->launched = false;
	}
	for (unsigned int i = 0; i < RP_MAX_ENGINE_LCORES; i++) {
		struct rp_lcore_ctx *lc = &rp_lcores[i];

		if (lc->wake_fd < 0)
			continue;
		for (unsigned int d = 0; d < lc->nr_shards; d++) {
			lc->shards[d]->wake_fd = -1;
			lc->shards[d]->dev->wake_fd = -1;
		}
		close(lc->wake_fd);
		lc->wake_fd = -1;
	}
	rp_nr_lcores = 0;
}

int
rp_engine_set_idle(enum rp_idle_policy idle)
{
	if ((unsigned int)idle >= RP_IDLE_MAX)
		return -EINVAL;
	/* The lcore reads it once per pass; nothing else depends on it. */
	for (unsigned int i = 0; i < RP_MAX_ENGINE_LCORES; i++)
		rp_store_relaxed(&rp_lcores[i].idle, (uint32_t)idle);
	return 0;
}

const char *
rp_engine_cpu_idle(char *buf, size_t len)
{
	if (rp_load_relaxed(&rp_nr_lcores) == 0)
		return NULL;
	return rp_cpu_idle_brief(&rp_cpu_idle, buf, len);
}
