/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Traffic patterns shared by several modes, and what every pattern uses:
 * the warm-up and measured phases, latency samples, pacing to an offered
 * rate.  The client (measuring) side of each pattern runs a warm-up phase,
 * then a measured one of iters messages or duration seconds.
 *   ping-pong   one message at a time, answered by the peer's program
 *               (send_lat, write_lat);
 *   one-sided   one READ or atomic at a time, the server's CPU idle
 *               (read_lat, atomic_lat);
 *   streaming   depth WRs in flight per QP (send_bw, write_bw, read_bw);
 *   passive     a server whose CPU takes no part.
 */

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include "rtp.h"

/* ---- pacing ------------------------------------------------------------ */

/* Wait until the TSC reaches t (offered rate): spin, or sleep if blocking. */
static void
pace_until(const struct rtp_run *run, uint64_t t)
{
	uint64_t now = rte_get_tsc_cycles();

	if (now >= t)
		return;
	if (run->set.wait != RTP_WAIT_POLL) {
		uint64_t ns = (t - now) * 1000000000u / rte_get_tsc_hz();
		struct timespec ts = {
			.tv_sec = (time_t)(ns / 1000000000u),
			.tv_nsec = (long)(ns % 1000000000u),
		};

		if (ns > 20000)
			nanosleep(&ts, NULL);
	}
	while (rte_get_tsc_cycles() < t && !run->abort)
		rte_pause();
}

/*
 * Start of the next message: paced, its intended time (latency counted
 * from it: no coordinated omission); else now.
 */
static uint64_t
pace_next(const struct rtp_run *run, uint64_t *next, uint64_t period)
{
	uint64_t t;

	if (period == 0)
		return rte_get_tsc_cycles();
	pace_until(run, *next);
	t = *next;
	*next += period;
	return t;
}

/* ---- phases and samples ------------------------------------------------ */

/* A latency sample of the measured phase, TSC ticks (the first ones kept). */
void
rtp_sample(struct rtp_run *run, uint64_t v)
{
	if (run->nb_samples < RTP_MAX_SAMPLES)
		run->samples[run->nb_samples++] = v;
}

/* Phases: warmup (not measured), then measured until iters or duration. */
struct phase {
	uint64_t n;		/* messages, 0: until t_stop */
	uint64_t t_stop;
	bool measure;
};

static bool
phase_over(const struct phase *p, uint64_t done)
{
	if (p->n != 0)
		return done >= p->n;
	return rte_get_tsc_cycles() >= p->t_stop;
}

static void
phase_start(struct rtp_run *run, struct phase *p, bool measure)
{
	p->measure = measure;
	if (!measure) {
		p->n = run->set.warmup;
		p->t_stop = 0;
		return;
	}
	p->n = run->set.iters;
	p->t_stop = rtp_measure_begin(run);
}

/* The measured phase starts: counters zeroed; its end TSC by duration. */
uint64_t
rtp_measure_begin(struct rtp_run *run)
{
	rtp_counters_snap(&run->c0);
	run->t_start = rte_get_tsc_cycles();
	run->cli.cpu_ns = rtp_thread_cpu_ns();
	run->cli.w.polls = run->cli.w.cqes = run->cli.w.events = 0;
	run->nb_samples = 0;
	run->posted = 0;
	run->cli.done = 0;
	return run->t_start +
		(uint64_t)(run->set.duration * (double)rte_get_tsc_hz());
}

/*
 * The measured phase ends: its end TSC, CPU time and counters; once (the
 * driver calls it after the mode's client too, for a phase cut short).
 */
void
rtp_measure_end(struct rtp_run *run)
{
	if (run->t_start == 0 || run->t_end != 0)
		return;
	run->t_end = rte_get_tsc_cycles();
	run->cli.cpu_ns = rtp_thread_cpu_ns() - run->cli.cpu_ns;
	rtp_counters_snap(&run->c1);
}

/* ---- traffic patterns (the modes call these) --------------------------- */

/* Completions of the client's end, the run failed on a wait's error. */
static int
wait_some(struct rtp_side *s, struct rtp_run *run, struct ibv_wc *wc, int n)
{
	int got = rtp_wait_cq(&s->w, wc, n, &run->abort, run->set.timeout);

	if (got == -ETIMEDOUT)
		return rtp_fail(run, got, "no completion within the timeout");
	if (got < 0)
		return rtp_fail(run, got, "waiting for completions");
	return got;
}

/*
 * Ping-pong: post op, wait for the peer's answer (a receive completion),
 * one message at a time, round robin over the QPs.  Send completions are
 * requested one in RTP_SIGNAL_EVERY, to free the send queue.
 */
static int
pingpong_phase(struct rtp_run *run, enum ibv_wr_opcode op, bool measure)
{
	struct rtp_side *s = &run->cli;
	struct ibv_wc wc[RTP_WC_BURST];
	uint64_t period = run->set.rate > 0 ?
		(uint64_t)((double)rte_get_tsc_hz() / run->set.rate) : 0;
	uint64_t next = rte_get_tsc_cycles();
	struct phase p;
	uint64_t i;

	phase_start(run, &p, measure);
	for (i = 0; !phase_over(&p, i) && !run->abort; i++) {
		uint32_t q = (uint32_t)(i % s->nb_qps);
		uint64_t t0;
		bool answered = false;
		int ret;

		t0 = pace_next(run, &next, period);
		ret = rtp_post(s, q, op, run->set.size, i,
			       (i % RTP_SIGNAL_EVERY) == 0, (uint32_t)i);
		if (ret < 0)
			return rtp_fail(run, ret, "ibv_post_send");
		run->posted++;
		while (!answered) {
			int n = wait_some(s, run, wc, RTP_WC_BURST);

			if (n <= 0)
				return n;
			for (int k = 0; k < n; k++) {
				ret = rtp_wc_check(s, &wc[k], run);
				if (ret < 0)
					return ret;
				if (!(wc[k].opcode & IBV_WC_RECV))
					continue;
				ret = rtp_post_recv(s, rtp_wc_qp(s, &wc[k]),
						    run->set.size, 0);
				if (ret < 0)
					return rtp_fail(run, ret,
							"ibv_post_recv");
				answered = true;
			}
		}
		s->done++;
		if (measure)
			rtp_sample(run, rte_get_tsc_cycles() - t0);
	}
	if (measure)
		rtp_measure_end(run);
	return 0;
}

int
rtp_pingpong_client(struct rtp_run *run, enum ibv_wr_opcode op)
{
	int ret = rtp_recvs_post_all(&run->cli, run, 1);

	if (ret == 0)
		ret = pingpong_phase(run, op, false);
	if (ret == 0)
		ret = pingpong_phase(run, op, true);
	return ret;
}

/* Answer each message with the same op on its QP, until flushed. */
int
rtp_pingpong_server(struct rtp_run *run, enum ibv_wr_opcode op)
{
	struct rtp_side *s = &run->srv;
	struct ibv_wc wc[RTP_WC_BURST];
	uint64_t sent = 0;

	for (;;) {
		int n = rtp_wait_cq(&s->w, wc, RTP_WC_BURST, NULL, 0);

		if (n < 0)
			return rtp_fail(run, n, "server wait");
		for (int k = 0; k < n; k++) {
			int ret = rtp_wc_check(s, &wc[k], run);
			uint32_t q;

			if (ret != 0)
				return ret < 0 ? ret : 0;
			if (!(wc[k].opcode & IBV_WC_RECV))
				continue;
			run->received++;
			q = rtp_wc_qp(s, &wc[k]);
			ret = rtp_post_recv(s, q, run->set.size, 0);
			if (ret == 0)
				ret = rtp_post(s, q, op, run->set.size, sent,
					       (sent % RTP_SIGNAL_EVERY) == 0,
					       (uint32_t)sent);
			sent++;
			if (ret < 0)
				return rtp_fail(run, ret, "server post");
		}
	}
}

/*
 * One-sided latency: one READ or atomic at a time, the server's CPU takes
 * no part; check, if not NULL, looks at each completed WR i (the data it
 * brought back is in the SGE rtp_post() chose for it).
 */
static int
onesided_phase(struct rtp_run *run, enum ibv_wr_opcode op, bool measure,
	       rtp_check_t check)
{
	struct rtp_side *s = &run->cli;
	struct ibv_wc wc[RTP_WC_BURST];
	uint64_t period = run->set.rate > 0 ?
		(uint64_t)((double)rte_get_tsc_hz() / run->set.rate) : 0;
	uint64_t next = rte_get_tsc_cycles();
	struct phase p;
	uint64_t i;

	phase_start(run, &p, measure);
	for (i = 0; !phase_over(&p, i) && !run->abort; i++) {
		uint64_t t0;
		int ret;
		int n;

		t0 = pace_next(run, &next, period);
		ret = rtp_post(s, (uint32_t)(i % s->nb_qps), op,
			       run->set.size, i, true, 0);
		if (ret < 0)
			return rtp_fail(run, ret, "ibv_post_send");
		run->posted++;
		n = wait_some(s, run, wc, 1);
		if (n <= 0)
			return n;
		ret = rtp_wc_check(s, &wc[0], run);
		if (ret != 0)
			return ret < 0 ? ret : 0;
		s->done++;
		if (measure)
			rtp_sample(run, rte_get_tsc_cycles() - t0);
		if (check != NULL) {
			ret = check(run, i);
			if (ret != 0)
				return ret;
		}
	}
	if (measure)
		rtp_measure_end(run);
	return 0;
}

int
rtp_onesided_lat_client(struct rtp_run *run, enum ibv_wr_opcode op,
			rtp_check_t check)
{
	int ret = onesided_phase(run, op, false, check);

	return ret == 0 ? onesided_phase(run, op, true, check) : ret;
}

/*
 * Streaming: keep up to depth WRs in flight per QP, every one signaled;
 * the latency of a message is from its (intended) post to its completion.
 */
static int
stream_phase(struct rtp_run *run, enum ibv_wr_opcode op, bool measure,
	     uint64_t *t_post)
{
	struct rtp_side *s = &run->cli;
	struct ibv_wc wc[RTP_WC_BURST];
	uint32_t inflight[RTP_MAX_QPS] = { 0 };
	uint32_t seq[RTP_MAX_QPS] = { 0 };
	uint32_t total_inflight = 0;
	uint32_t cap = s->nb_qps * run->set.depth;
	uint64_t period = run->set.rate > 0 ?
		(uint64_t)((double)rte_get_tsc_hz() / run->set.rate) : 0;
	uint64_t next = rte_get_tsc_cycles();
	uint64_t posted = 0;
	struct phase p;
	uint32_t q = 0;

	phase_start(run, &p, measure);
	while (!run->abort) {
		/*
		 * The clock once a burst, as the raw modes read it: reads
		 * per post, per completion and per check of the duration
		 * held 5 % of a 64 B stream's client thread (rdtsc).  A
		 * post's own time is read only while its latency can still
		 * be kept (samples) or the stream is paced.
		 */
		uint64_t now = rte_get_tsc_cycles();
		bool stamp = period != 0 ||
			(measure && run->nb_samples < RTP_MAX_SAMPLES);
		bool more = p.n != 0 ? posted < p.n : now < p.t_stop;
		int n;

		/* Post while there is room (and, paced, while it is time);
		 * a duration's end is seen at the next burst. */
		while (more && total_inflight < cap) {
			uint32_t slot;
			int ret;

			if (stamp)
				now = rte_get_tsc_cycles();
			if (period != 0 && now < next)
				break;
			/* no division in this loop: it is a few percent
			 * of a 64 B stream's client */
			while (inflight[q] >= run->set.depth)
				q = q + 1 == s->nb_qps ? 0 : q + 1;
			/* in order within a QP: a slot per WR in flight */
			slot = q * run->set.depth + seq[q];
			seq[q] = seq[q] + 1 == run->set.depth ? 0 : seq[q] + 1;
			t_post[slot] = period != 0 ? next : now;
			next += period;
			ret = rtp_post(s, q, op, run->set.size,
				       slot | ((uint64_t)q << 32), true, 0);
			if (ret < 0)
				return rtp_fail(run, ret, "ibv_post_send");
			inflight[q]++;
			total_inflight++;
			posted++;
			if (measure)
				run->posted++;
			q = q + 1 == s->nb_qps ? 0 : q + 1;
			more = p.n == 0 || posted < p.n;
		}
		if (!more && total_inflight == 0)
			break;
		if (total_inflight == 0) {
			pace_until(run, next);
			continue;
		}
		if (period != 0 && total_inflight < cap &&
		    run->set.wait == RTP_WAIT_POLL) {
			/* Paced and polling: look, never block past next. */
			n = ibv_poll_cq(s->cq, RTP_WC_BURST, wc);
			s->w.polls++;
			if (n < 0)
				return rtp_fail(run, -EIO, "ibv_poll_cq");
			s->w.cqes += (uint64_t)n;
		} else {
			n = wait_some(s, run, wc, RTP_WC_BURST);
			if (n <= 0)
				return n;
		}
		/* the completions of a poll: found at the same time */
		stamp = measure && run->nb_samples < RTP_MAX_SAMPLES;
		now = stamp && n > 0 ? rte_get_tsc_cycles() : 0;
		for (int k = 0; k < n; k++) {
			uint64_t id = wc[k].wr_id;
			int ret = rtp_wc_check(s, &wc[k], run);

			if (ret != 0)
				return ret < 0 ? ret : 0;
			inflight[id >> 32]--;
			total_inflight--;
			s->done++;
			if (stamp)
				rtp_sample(run, now - t_post[(uint32_t)id]);
		}
	}
	if (measure)
		rtp_measure_end(run);
	return 0;
}

int
rtp_stream_client(struct rtp_run *run, enum ibv_wr_opcode op)
{
	uint64_t *t_post = calloc((size_t)run->cli.nb_qps * run->set.depth,
				  sizeof(*t_post));
	int ret;

	if (t_post == NULL)
		return rtp_fail(run, -ENOMEM, "stream");
	ret = stream_phase(run, op, false, t_post);
	if (ret == 0)
		ret = stream_phase(run, op, true, t_post);
	free(t_post);
	return ret;
}

/* One-sided modes: the server's CPU does nothing; wait for the end. */
int
rtp_passive_server(struct rtp_run *run)
{
	struct timespec ms = { .tv_nsec = 1000000 };

	while (!run->stop && !run->abort)
		nanosleep(&ms, NULL);
	return 0;
}
