/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Naps in place of an "adaptive" lcore's spin, chosen by what they cost in
 * work, as the kernel's net_dim moves an interrupt moderation profile: the
 * lcore counts the completions its devices publish in epochs of a few
 * milliseconds and the CPU time it runs, now and then tries the other way
 * of waiting for one epoch, and keeps naps where the work rate holds and
 * the CPU a completion falls.
 *
 * Why: a paced stream with a message every few microseconds keeps every
 * gap inside the spin, so the lcore spins the whole CPU away (64 B at
 * 200,000/s over memif: 4.7-4.9 us of lcore CPU a message against 2.8
 * polling).  A nap of sleep_us there costs no work, the stream's window
 * absorbing it, and saves CPU, each nap finding several messages' work.
 * An events ping-pong's gaps fit the spin too, but a nap
 * delays each hop of its one message in flight (half round trip 15.7 us
 * against 24.9): its trial epoch does a third less work and the lcore
 * spins on (guides/experiments_close_to_wire, twenty-seventh round).
 * Pure arithmetic, so the unit tests drive it alone.
 */

#ifndef _RP_IDLE_NAP_H_
#define _RP_IDLE_NAP_H_

#include <stdbool.h>
#include <stdint.h>

/*
 * Epochs between two trials of the other way: 32 (about 64 ms), twice as
 * many after each trial that kept the way for the second time running,
 * up to 1024 (2 s), so that a workload naps never suit (a ping-pong) pays
 * a trial's delays once in 2 s, not once in 33 epochs, which was its p99.
 * The first keep does not count: a trial of four epochs is a few
 * thousand completions on a noisy machine, and one that a slow moment
 * judged wrongly spaced the next ones out until a 2 s stream never napped
 * (testpmd-nap, stop 69).  A new way, or a work rate that moved fourfold
 * (another workload), starts again at 32.
 */
#define RP_NAP_TRIAL_EVERY	32u
#define RP_NAP_TRIAL_MAX	1024u
/* Epochs of a trial: one epoch's CPU time moves by a tenth or more. */
#define RP_NAP_TRIAL_EPOCHS	4u
/* An epoch with fewer completions says nothing of a way of waiting. */
#define RP_NAP_MIN_WORK		32u

/* Completions, length (TSC cycles) and the lcore's CPU time (ns) of some
 * epochs. */
struct rp_idle_nap_sum {
	uint64_t work;
	uint64_t cycles;
	uint64_t cpu_ns;
};

struct rp_idle_nap {
	bool nap;		/* the spin's way: naps (true) or spinning */
	uint32_t trial;		/* epochs of the trial of the other way left
				 * to run (0: none) */
	uint32_t epochs;	/* epochs in `nap`'s way since the last trial */
	uint32_t every;		/* ... before the next (0: RP_NAP_TRIAL_EVERY) */
	bool held;		/* the last trial kept the way too */
	struct rp_idle_nap_sum kept;	/* those epochs */
	struct rp_idle_nap_sum tried;	/* the trial's epochs so far */
};

/* The way of the current epoch: the kept one, or the other on trial. */
static inline bool
rp_idle_nap_now(const struct rp_idle_nap *n)
{
	return n->nap != (n->trial != 0);
}

/*
 * Whether epochs a, napping, did better than epochs b, spinning: a work
 * rate at least 31/32 of b's, for at most 7/8 of b's CPU a completion.
 * Naps that save nothing only add their wait to each hop (an events
 * stream at 20,000/s: the same CPU, each message later), and naps that
 * cost work are no saving.  Compared crosswise: 10^6 completions, 10^10
 * cycles, 10^10 ns at most between trials: no overflow.
 */
static inline bool
rp_idle_nap_better(const struct rp_idle_nap_sum *a,
		   const struct rp_idle_nap_sum *b)
{
	return a->work * b->cycles * 32u >= b->work * a->cycles * 31u &&
	       a->cpu_ns * b->work * 8u <= b->cpu_ns * a->work * 7u;
}

static inline void
rp_idle_nap_add(struct rp_idle_nap_sum *s, uint64_t work, uint64_t cycles,
		uint64_t cpu_ns)
{
	s->work += work;
	s->cycles += cycles;
	s->cpu_ns += cpu_ns;
}

/*
 * An epoch of `cycles` ended with `work` completions, the lcore having
 * run `cpu_ns` in it.  At the end of a trial the way turns over if naps
 * come out better (rp_idle_nap_better()) on trial from spinning, or no
 * longer do on trial from napping.  Returns +1 when the way turned to
 * naps, -1 when it turned back to spinning, else 0.
 */
static inline int
rp_idle_nap_epoch(struct rp_idle_nap *n, uint64_t work, uint64_t cycles,
		  uint64_t cpu_ns)
{
	bool naps;

	if (n->every == 0)
		n->every = RP_NAP_TRIAL_EVERY;
	if (work < RP_NAP_MIN_WORK || cycles == 0) {
		/* too little to judge: a trial is abandoned, not lost */
		if (n->trial != 0) {
			n->trial = 0;
			n->tried = (struct rp_idle_nap_sum){ 0, 0, 0 };
		}
		return 0;
	}
	if (n->trial == 0) {
		/* another workload: judge it afresh, and soon */
		if (n->kept.work != 0 &&
		    (work * n->kept.cycles > 4u * n->kept.work * cycles ||
		     4u * work * n->kept.cycles < n->kept.work * cycles)) {
			n->every = RP_NAP_TRIAL_EVERY;
			n->held = false;
			n->kept = (struct rp_idle_nap_sum){ 0, 0, 0 };
			n->epochs = 0;
		}
		rp_idle_nap_add(&n->kept, work, cycles, cpu_ns);
		if (++n->epochs >= n->every)
			n->trial = RP_NAP_TRIAL_EPOCHS;
		return 0;
	}
	rp_idle_nap_add(&n->tried, work, cycles, cpu_ns);
	/* a trial of naps that loses an eighth of the work ends at once:
	 * a ping-pong's trial costs it one epoch, not RP_NAP_TRIAL_EPOCHS */
	if (!n->nap && n->tried.work * n->kept.cycles * 8u <
		       n->kept.work * n->tried.cycles * 7u)
		n->trial = 1;
	if (--n->trial != 0)
		return 0;
	naps = n->nap ? rp_idle_nap_better(&n->kept, &n->tried) :
			rp_idle_nap_better(&n->tried, &n->kept);
	n->epochs = 0;
	if (naps == n->nap) {
		if (n->held)
			n->every = n->every * 2 > RP_NAP_TRIAL_MAX ?
				   RP_NAP_TRIAL_MAX : n->every * 2;
		n->held = true;
		n->tried = (struct rp_idle_nap_sum){ 0, 0, 0 };
		n->kept = (struct rp_idle_nap_sum){ 0, 0, 0 };
		return 0;
	}
	n->every = RP_NAP_TRIAL_EVERY;
	n->held = false;
	n->nap = naps;
	n->kept = n->tried;
	n->epochs = RP_NAP_TRIAL_EPOCHS;
	n->tried = (struct rp_idle_nap_sum){ 0, 0, 0 };
	return naps ? 1 : -1;
}

#endif /* _RP_IDLE_NAP_H_ */
