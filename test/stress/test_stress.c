/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_stress: many work requests over several QPs and CQs between two
 * rocepmd devices, under one engine idle policy (the configuration it runs
 * with).  A plain libibverbs program, run as
 *
 *   rocepmd-run --config rp_stress_<policy>.ini -- rp_stress [messages] [threads] [policy]
 *
 * Each application thread owns one RC QP pair (rocepmd0 <-> rocepmd1) with
 * four CQs of its own and sends in both directions: SENDs of 64 B, a
 * window of outstanding SENDs, receives reposted as they complete.  Every
 * completion is checked exactly once: the wr_id sequence per QP and
 * direction (SQ and RQ complete in order on RC), the status, the byte
 * count and the data pattern (sequence, flow and a seeded fill).
 *
 * To make an adaptive engine fall asleep and need waking, every thread
 * drains its window and pauses (longer than the configuration's idle_us)
 * every RS_PAUSE_EVERY messages.  The first completion after a pause is
 * timed and reported only: with more spinning threads than CPUs, a thread
 * can lose its CPU for tens of milliseconds.
 *
 * Then a wake-up phase, one thread alone: RS_WAKE_ROUNDS times, pause
 * (the engine blocks), post one SEND and wait for both completions; then
 * receives posted alone (rs_recv_phase()).  A
 * post a sleeping engine missed waits for the engine's timeout (wake_us,
 * or the link poll at 100 ms: 0 to 100 ms), where a woken one completes
 * in tens of microseconds.  Under the policy "adaptive" (third argument),
 * more than RS_SLOW_MAX rounds (1 %) slower than RS_STALL_MS fail the
 * test; the margin is for a machine shared with other work.  A round with
 * no completion after RS_IDLE_S fails under every policy (a post nobody
 * ever saw: a sleeping engine's timeout, wake_us, bounds every other).
 *
 * Under "lcores", each device is served by two lcores, a memif queue pair
 * each; the threads' QPs spread over them, and each lcore of each device
 * must have carried frames.
 *
 * Under "inline" (the engine's inline_us set), the polling threads run
 * the engine's passes themselves; the test then also requires the lcore
 * counters (rp_lcore_stats_get(), found in the preloaded library) to show
 * passes run by those threads, some of them over one device while other
 * threads ran the other's (inline_split_passes), and holds the wake-up
 * phase to the adaptive limit.
 *
 * A watchdog (alarm) ends a hung run; no progress for RS_IDLE_S seconds
 * fails it with the counters.
 */

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rp_testlib.h"

const char rt_prog[] = "rp_stress";

#define RS_PORT		1
#define RS_MSG		64u		/* bytes per SEND */
#define RS_WINDOW	32u		/* outstanding SENDs per flow */
#define RS_RQ		(2 * RS_WINDOW)	/* receives posted per QP */
#define RS_MAX_THREADS	16
#define RS_PAUSE_EVERY	5000u		/* messages per flow between pauses */
#define RS_PAUSE_US	300u		/* > idle_us of the stress configs */
#define RS_STALL_MS	20.0		/* a wake-up round this late is slow */
#define RS_SLOW_MAX	20u		/* adaptive: slow rounds allowed */
#define RS_WAKE_ROUNDS	2000u
#define RS_RECV_ALONE	8u		/* receives posted alone in RTS */
#define RS_FLUSH_ROUNDS	100u		/* receives posted alone in ERR */
#define RS_FLUSH_SLOW	10u		/* adaptive: slow ones allowed */
#define RS_IDLE_S	10.0		/* no progress this long fails */
#define RS_WATCHDOG_S	150u

struct rs_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	enum ibv_mtu mtu;
};

/* One direction of a thread's QP pair: src SENDs, dst receives. */
struct rs_flow {
	unsigned int id;
	struct ibv_qp *src;
	struct ibv_qp *dst;
	struct ibv_cq *scq;		/* src send CQ */
	struct ibv_cq *rcq;		/* dst receive CQ */
	uint8_t *sbuf;			/* RS_WINDOW slots */
	uint8_t *rbuf;			/* RS_RQ slots */
	struct ibv_mr *smr;
	struct ibv_mr *rmr;
	uint64_t total;			/* messages to send */
	uint64_t posted;		/* SENDs posted */
	uint64_t sent;			/* SEND completions */
	uint64_t rposted;		/* receives posted */
	uint64_t received;		/* receive completions */
};

struct rs_thread {
	pthread_t tid;
	unsigned int idx;
	struct rs_flow flow[2];
	double max_first_ms;		/* slowest first completion after a pause */
	uint64_t pauses;
	_Atomic uint64_t progress;
};

static struct rs_dev rs_dev[2];
static struct rs_thread rs_threads[RS_MAX_THREADS];
static unsigned int rs_nthreads = 4;
static uint64_t rs_messages = 1000000;
static uint64_t rs_seed;
static bool rs_adaptive;		/* wake-ups held to RS_SLOW_MAX */
static bool rs_inline;

static void rs_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void
rs_fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rp_stress: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (seed %" PRIu64 ")\n", rs_seed);
	fflush(stderr);
	_exit(1);
}

#define RS_CHECK(c, ...) do { if (!(c)) rs_fail(__VA_ARGS__); } while (0)

static void
rs_watchdog(int sig)
{
	static const char msg[] = "rp_stress: FAIL: watchdog expired\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(2);
	_exit(1);
}

static double
rs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The payload of message `seq` of flow `flow`: both words, then a fill. */
static void
rs_pattern(uint8_t *p, unsigned int flow, uint64_t seq)
{
	uint64_t x = rs_seed ^ (seq * 0x9e3779b97f4a7c15ull) ^ flow;

	memcpy(p, &seq, 8);
	memcpy(p + 8, &flow, 4);
	for (unsigned int i = 12; i < RS_MSG; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)x;
	}
}

static void
rs_dev_open(struct rs_dev *d, const char *name)
{
	struct ibv_device **list;
	struct ibv_port_attr pa;
	double t0 = rs_now();
	int n = 0;

	list = ibv_get_device_list(&n);
	RS_CHECK(list != NULL, "ibv_get_device_list: %s", strerror(errno));
	for (int i = 0; i < n && d->ctx == NULL; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			d->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	RS_CHECK(d->ctx != NULL, "no device %s (run under rocepmd-run)", name);
	for (;;) {
		RS_CHECK(ibv_query_port(d->ctx, RS_PORT, &pa) == 0,
			 "ibv_query_port(%s)", name);
		if (pa.state == IBV_PORT_ACTIVE)
			break;
		RS_CHECK(rs_now() - t0 < 10.0, "%s: port not ACTIVE", name);
		usleep(10000);
	}
	d->mtu = pa.active_mtu;
	RS_CHECK(ibv_query_gid(d->ctx, RS_PORT, 0, &d->gid) == 0,
		 "ibv_query_gid(%s)", name);
	d->pd = ibv_alloc_pd(d->ctx);
	RS_CHECK(d->pd != NULL, "ibv_alloc_pd(%s): %s", name, strerror(errno));
}

static struct ibv_qp *
rs_qp_create(struct rs_dev *d, struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = {
			.max_send_wr = RS_WINDOW,
			.max_recv_wr = RS_RQ,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct ibv_qp *qp = ibv_create_qp(d->pd, &ia);

	RS_CHECK(qp != NULL, "ibv_create_qp: %s", strerror(errno));
	return qp;
}

static void
rs_connect(struct ibv_qp *qp, const struct rs_dev *d, struct ibv_qp *peer,
	   const struct rs_dev *pd)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = RS_PORT,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	RS_CHECK(ret == 0, "RESET->INIT: %s", strerror(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = d->mtu < pd->mtu ? d->mtu : pd->mtu;
	a.dest_qp_num = peer->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = pd->gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = RS_PORT;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	RS_CHECK(ret == 0, "INIT->RTR: %s", strerror(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	RS_CHECK(ret == 0, "RTR->RTS: %s", strerror(ret));
}

static void
rs_post_recv(struct rs_flow *f)
{
	uint64_t seq = f->rposted;
	struct ibv_sge sg = {
		.addr = (uintptr_t)(f->rbuf + (seq % RS_RQ) * RS_MSG),
		.length = RS_MSG,
		.lkey = f->rmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = seq, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret = ibv_post_recv(f->dst, &wr, &bad);

	RS_CHECK(ret == 0, "flow %u: ibv_post_recv %" PRIu64 ": %s", f->id,
		 seq, strerror(ret));
	f->rposted++;
}

static void
rs_post_send(struct rs_flow *f)
{
	uint64_t seq = f->posted;
	uint8_t *p = f->sbuf + (seq % RS_WINDOW) * RS_MSG;
	struct ibv_sge sg = {
		.addr = (uintptr_t)p,
		.length = RS_MSG,
		.lkey = f->smr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seq,
		.sg_list = &sg,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;
	int ret;

	rs_pattern(p, f->id, seq);
	ret = ibv_post_send(f->src, &wr, &bad);
	RS_CHECK(ret == 0, "flow %u: ibv_post_send %" PRIu64 ": %s", f->id,
		 seq, strerror(ret));
	f->posted++;
}

/* Poll both CQs of a flow; returns the completions seen. */
static unsigned int
rs_poll(struct rs_flow *f)
{
	struct ibv_wc wc[16];
	uint8_t exp[RS_MSG];
	int n;
	unsigned int got = 0;

	n = ibv_poll_cq(f->scq, 16, wc);
	RS_CHECK(n >= 0, "flow %u: ibv_poll_cq(send): %d", f->id, n);
	for (int i = 0; i < n; i++) {
		RS_CHECK(wc[i].status == IBV_WC_SUCCESS,
			 "flow %u: send %" PRIu64 ": %s", f->id, wc[i].wr_id,
			 ibv_wc_status_str(wc[i].status));
		RS_CHECK(wc[i].opcode == IBV_WC_SEND,
			 "flow %u: send opcode %d", f->id, wc[i].opcode);
		RS_CHECK(wc[i].wr_id == f->sent,
			 "flow %u: send completion %" PRIu64 ", expected %" PRIu64
			 " (lost or duplicated)", f->id, wc[i].wr_id, f->sent);
		RS_CHECK(f->sent < f->posted,
			 "flow %u: completion of a SEND never posted", f->id);
		f->sent++;
	}
	got += (unsigned int)n;

	n = ibv_poll_cq(f->rcq, 16, wc);
	RS_CHECK(n >= 0, "flow %u: ibv_poll_cq(recv): %d", f->id, n);
	for (int i = 0; i < n; i++) {
		const uint8_t *p;

		RS_CHECK(wc[i].status == IBV_WC_SUCCESS,
			 "flow %u: recv %" PRIu64 ": %s", f->id, wc[i].wr_id,
			 ibv_wc_status_str(wc[i].status));
		RS_CHECK(wc[i].opcode == IBV_WC_RECV,
			 "flow %u: recv opcode %d", f->id, wc[i].opcode);
		RS_CHECK(wc[i].wr_id == f->received,
			 "flow %u: recv completion %" PRIu64 ", expected %" PRIu64
			 " (lost or duplicated)", f->id, wc[i].wr_id, f->received);
		RS_CHECK(wc[i].byte_len == RS_MSG, "flow %u: recv %" PRIu64
			 ": %u bytes", f->id, wc[i].wr_id, wc[i].byte_len);
		p = f->rbuf + (wc[i].wr_id % RS_RQ) * RS_MSG;
		rs_pattern(exp, f->id, f->received);
		RS_CHECK(memcmp(p, exp, RS_MSG) == 0, "flow %u: message %"
			 PRIu64 ": data differs", f->id, f->received);
		f->received++;
		if (f->rposted < f->total)
			rs_post_recv(f);
	}
	return got + (unsigned int)n;
}

static bool
rs_flow_done(const struct rs_flow *f)
{
	return f->sent == f->total && f->received == f->total;
}

/* May the flow post its next SEND?  Window, and receives to land in. */
static bool
rs_can_send(const struct rs_flow *f)
{
	return f->posted < f->total && f->posted - f->sent < RS_WINDOW &&
	       f->posted < f->received + RS_WINDOW;
}

static void *
rs_thread_main(void *arg)
{
	struct rs_thread *t = arg;
	double t_pause = 0;
	bool timing = false;
	uint64_t next_pause = RS_PAUSE_EVERY;

	for (unsigned int k = 0; k < 2; k++)
		while (t->flow[k].rposted < RS_RQ &&
		       t->flow[k].rposted < t->flow[k].total)
			rs_post_recv(&t->flow[k]);

	while (!rs_flow_done(&t->flow[0]) || !rs_flow_done(&t->flow[1])) {
		unsigned int got = 0;

		for (unsigned int k = 0; k < 2; k++) {
			struct rs_flow *f = &t->flow[k];

			while (rs_can_send(f) && f->posted < next_pause) {
				if (!timing && f->posted == f->sent &&
				    t_pause != 0) {
					/* First SEND after a pause. */
					timing = true;
					t_pause = rs_now();
				}
				rs_post_send(f);
			}
			got += rs_poll(f);
		}
		if (got != 0) {
			atomic_store_explicit(&t->progress,
				t->flow[0].sent + t->flow[1].sent,
				memory_order_relaxed);
			if (timing) {
				double ms = (rs_now() - t_pause) * 1e3;

				timing = false;
				if (ms > t->max_first_ms)
					t->max_first_ms = ms;
			}
		}
		/* Both flows drained at the pause mark: let the engine
		 * fall idle, then go on. */
		if (t->flow[0].sent >= next_pause || rs_flow_done(&t->flow[0])) {
			if (t->flow[1].sent >= next_pause ||
			    rs_flow_done(&t->flow[1])) {
				if (t->flow[0].received == t->flow[0].sent &&
				    t->flow[1].received == t->flow[1].sent) {
					usleep(RS_PAUSE_US);
					t->pauses++;
					t_pause = 1;	/* time the next post */
					next_pause += RS_PAUSE_EVERY;
				}
			}
		}
	}
	return NULL;
}

static void
rs_setup(struct rs_thread *t)
{
	struct ibv_cq *cq[2][2];	/* [dev][send, recv] */
	struct ibv_qp *qp[2];

	for (unsigned int d = 0; d < 2; d++)
		for (unsigned int k = 0; k < 2; k++) {
			cq[d][k] = ibv_create_cq(rs_dev[d].ctx, 2 * RS_RQ,
						 NULL, NULL, 0);
			RS_CHECK(cq[d][k] != NULL, "ibv_create_cq: %s",
				 strerror(errno));
		}
	for (unsigned int d = 0; d < 2; d++)
		qp[d] = rs_qp_create(&rs_dev[d], cq[d][0], cq[d][1]);
	rs_connect(qp[0], &rs_dev[0], qp[1], &rs_dev[1]);
	rs_connect(qp[1], &rs_dev[1], qp[0], &rs_dev[0]);

	for (unsigned int k = 0; k < 2; k++) {
		struct rs_flow *f = &t->flow[k];
		unsigned int s = k, r = 1 - k;	/* flow 0: dev0 -> dev1 */

		f->id = t->idx * 2 + k;
		f->src = qp[s];
		f->dst = qp[r];
		f->scq = cq[s][0];
		f->rcq = cq[r][1];
		f->sbuf = aligned_alloc(64, RS_WINDOW * RS_MSG);
		f->rbuf = aligned_alloc(64, RS_RQ * RS_MSG);
		RS_CHECK(f->sbuf != NULL && f->rbuf != NULL, "out of memory");
		memset(f->rbuf, 0, RS_RQ * RS_MSG);
		f->smr = ibv_reg_mr(rs_dev[s].pd, f->sbuf, RS_WINDOW * RS_MSG,
				    IBV_ACCESS_LOCAL_WRITE);
		f->rmr = ibv_reg_mr(rs_dev[r].pd, f->rbuf, RS_RQ * RS_MSG,
				    IBV_ACCESS_LOCAL_WRITE);
		RS_CHECK(f->smr != NULL && f->rmr != NULL, "ibv_reg_mr: %s",
			 strerror(errno));
	}
}

/*
 * One flow alone: pause, one SEND, both completions; returns the slowest
 * round in ms and counts the rounds slower than RS_STALL_MS.
 */
static double
rs_wake_phase(struct rs_flow *f, unsigned int rounds, unsigned int *slow)
{
	double worst = 0;

	f->total += rounds;
	while (f->rposted < f->received + RS_RQ && f->rposted < f->total)
		rs_post_recv(f);
	for (unsigned int i = 0; i < rounds; i++) {
		uint64_t want = f->sent + 1;
		double t, ms;

		usleep(RS_PAUSE_US);
		t = rs_now();
		rs_post_send(f);
		while (f->sent < want || f->received < want) {
			rs_poll(f);
			ms = (rs_now() - t) * 1e3;
				/*
			 * A stranded post completes within wake_us anyway;
			 * only one never seen hangs.  Not 1 s: on a loaded
			 * two-CPU machine this thread can wait that long for
			 * a CPU (seen: 6 s at load 9).
			 */
			RS_CHECK(ms < RS_IDLE_S * 1e3, "wake-up round %u: no "
				 "completion after %.1f ms", i, ms);
		}
		ms = (rs_now() - t) * 1e3;
		if (ms > worst)
			worst = ms;
		if (ms > RS_STALL_MS)
			(*slow)++;
	}
	return worst;
}

/*
 * An lcore counter once it stops moving: the lcore counts a doorbell when
 * it has the devices again after waking, which a thread running inline
 * passes, or a CPU it waits for, can put after the poster's return.
 */
static int64_t
rs_lcore_counter_settled(const char *name)
{
	int64_t v = rt_lcore_counter(name), w;

	for (unsigned int i = 0; i < 100; i++) {
		usleep(2000);
		w = rt_lcore_counter(name);
		if (w == v)
			break;
		v = w;
	}
	return v;
}

/*
 * Receives alone, on flow 0's receiving QP once everything is drained.  In
 * RTS a receive waits for a message: posting one must not wake a blocked
 * engine (no doorbell signal).  In ERR the engine flushes what is posted
 * and asks for the doorbell (rp_wq_hdr.post_wake): a receive posted after
 * a pause completes WR_FLUSH_ERR at once, not at the sleeping engine's
 * wake_us (100 ms).  Returns the slowest flush in ms and counts those
 * slower than RS_STALL_MS.
 */
static double
rs_recv_phase(struct rs_flow *f, unsigned int *slow)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };
	int64_t bells = rs_lcore_counter_settled("doorbell_signals"), now;
	uint64_t first = f->rposted;
	double worst = 0;
	struct ibv_wc wc;
	int ret;

	for (unsigned int i = 0; i < RS_RECV_ALONE; i++) {
		usleep(RS_PAUSE_US);
		rs_post_recv(f);
	}
	now = rs_lcore_counter_settled("doorbell_signals");
	RS_CHECK(now == bells, "%u receives posted in RTS rang the engine's "
		 "doorbell %" PRId64 " times", RS_RECV_ALONE, now - bells);
	ret = ibv_modify_qp(f->dst, &qa, IBV_QP_STATE);
	RS_CHECK(ret == 0, "modify to ERR: %s", strerror(ret));
	for (unsigned int i = 0; i <= RS_FLUSH_ROUNDS; i++) {
		double t = rs_now(), ms;

		if (i > 0) {
			usleep(RS_PAUSE_US);
			t = rs_now();
			rs_post_recv(f);
		}
		while (first < f->rposted) {
			ret = ibv_poll_cq(f->rcq, 1, &wc);
			RS_CHECK(ret >= 0, "ibv_poll_cq: %d", ret);
			ms = (rs_now() - t) * 1e3;
			RS_CHECK(ms < RS_IDLE_S * 1e3, "receive %" PRIu64
				 " posted in ERR: no flush after %.1f ms",
				 first, ms);
			if (ret == 0)
				continue;
			RS_CHECK(wc.status == IBV_WC_WR_FLUSH_ERR &&
				 wc.wr_id == first, "receive %" PRIu64 " in "
				 "ERR: wr_id %" PRIu64 ", %s", first,
				 (uint64_t)wc.wr_id,
				 ibv_wc_status_str(wc.status));
			first++;
		}
		ms = (rs_now() - t) * 1e3;
		if (i > 0 && ms > worst)
			worst = ms;
		if (i > 0 && ms > RS_STALL_MS)
			(*slow)++;
	}
	f->received = f->rposted;
	return worst;
}

/*
 * Run "lcores": each device is served by several lcores; every one of
 * them must have received and sent frames of the QPs placed on it (the
 * engine's per-lcore counters of each device).
 */
static void
rs_check_shards(void)
{
	typedef int (*get_t)(unsigned int, unsigned int, unsigned int *,
			     const char **, uint64_t *, unsigned int);
	get_t get = (get_t)(uintptr_t)dlsym(RTLD_DEFAULT,
					    "rp_dev_shard_stats_get");
	const char *names[128];
	uint64_t vals[128];
	unsigned int lcore, shards;
	int n;

	RS_CHECK(get != NULL, "lcores: rp_dev_shard_stats_get not found");
	for (unsigned int d = 0; d < 2; d++) {
		for (shards = 0; (n = get(d, shards, &lcore, names, vals,
					  128)) > 0; shards++) {
			uint64_t rx = 0, tx = 0;

			for (int s = 0; s < n && s < 128; s++) {
				if (strcmp(names[s], "rx_packets") == 0)
					rx = vals[s];
				if (strcmp(names[s], "tx_packets") == 0)
					tx = vals[s];
			}
			printf("rp_stress: lcores: rocepmd%u on lcore %u: "
			       "rx_packets %" PRIu64 ", tx_packets %" PRIu64
			       "\n", d, lcore, rx, tx);
			RS_CHECK(rx > 0 && tx > 0, "lcores: rocepmd%u's "
				 "lcore %u carried no frame", d, lcore);
		}
		RS_CHECK(shards >= 2, "lcores: rocepmd%u has %u lcore(s), "
			 "not several", d, shards);
	}
}

int
main(int argc, char **argv)
{
	uint64_t per_flow, last = 0, done;
	double t0, t_last, el;
	double max_first = 0;
	uint64_t pauses = 0;

	if (argc > 1)
		rs_messages = strtoull(argv[1], NULL, 0);
	if (argc > 2)
		rs_nthreads = (unsigned int)atoi(argv[2]);
	if (argc > 3) {
		rs_inline = strcmp(argv[3], "inline") == 0;
		rs_adaptive = rs_inline || strcmp(argv[3], "adaptive") == 0;
	}
	if (rs_nthreads < 1 || rs_nthreads > RS_MAX_THREADS ||
	    rs_messages < 2 * rs_nthreads) {
		fprintf(stderr, "usage: rp_stress [messages] [threads 1..%d] [policy]\n",
			RS_MAX_THREADS);
		return 2;
	}
	rs_seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	signal(SIGALRM, rs_watchdog);
	alarm(RS_WATCHDOG_S);
	setvbuf(stdout, NULL, _IOLBF, 0);

	rs_dev_open(&rs_dev[0], "rocepmd0");
	rs_dev_open(&rs_dev[1], "rocepmd1");
	per_flow = rs_messages / (2 * rs_nthreads);
	printf("rp_stress: %u threads, %u QP pairs, %u CQs, %" PRIu64
	       " SENDs of %u B per flow (%" PRIu64 " in all, as many receives), window %u, seed %" PRIu64 "\n",
	       rs_nthreads, rs_nthreads, 4 * rs_nthreads, per_flow, RS_MSG,
	       per_flow * 2 * rs_nthreads, RS_WINDOW, rs_seed);
	for (unsigned int i = 0; i < rs_nthreads; i++) {
		rs_threads[i].idx = i;
		rs_threads[i].flow[0].total = per_flow;
		rs_threads[i].flow[1].total = per_flow;
		rs_setup(&rs_threads[i]);
	}

	t0 = rs_now();
	t_last = t0;
	for (unsigned int i = 0; i < rs_nthreads; i++)
		RS_CHECK(pthread_create(&rs_threads[i].tid, NULL,
					rs_thread_main, &rs_threads[i]) == 0,
			 "pthread_create");
	for (;;) {
		done = 0;
		for (unsigned int i = 0; i < rs_nthreads; i++)
			done += atomic_load_explicit(&rs_threads[i].progress,
						     memory_order_relaxed);
		if (done == per_flow * 2 * rs_nthreads)
			break;
		if (done != last) {
			last = done;
			t_last = rs_now();
		}
		RS_CHECK(rs_now() - t_last < RS_IDLE_S, "no completion for %.0f s "
			 "at %" PRIu64 " of %" PRIu64 " SENDs", RS_IDLE_S, done,
			 per_flow * 2 * rs_nthreads);
		usleep(20000);
	}
	for (unsigned int i = 0; i < rs_nthreads; i++) {
		pthread_join(rs_threads[i].tid, NULL);
		if (rs_threads[i].max_first_ms > max_first)
			max_first = rs_threads[i].max_first_ms;
		pauses += rs_threads[i].pauses;
	}
	el = rs_now() - t0;
	printf("rp_stress: %" PRIu64 " SENDs + %" PRIu64 " receives in %.2f s: "
	       "%.0f messages/s, %.0f WRs/s; %" PRIu64 " pauses, slowest first "
	       "completion after a pause %.2f ms\n",
	       done, done, el, (double)done / el, 2.0 * (double)done / el,
	       pauses, max_first);
	{
		unsigned int slow = 0;
		double t1 = rs_now();
		double worst = rs_wake_phase(&rs_threads[0].flow[0],
					     RS_WAKE_ROUNDS, &slow);

		printf("rp_stress: wake-up phase: %u rounds of pause %u us + "
		       "one SEND in %.2f s, slowest %.3f ms, %u over %.0f ms\n",
		       RS_WAKE_ROUNDS, RS_PAUSE_US, rs_now() - t1, worst, slow,
		       RS_STALL_MS);
		RS_CHECK(!rs_adaptive || slow <= RS_SLOW_MAX, "%u wake-up rounds "
			 "over %.0f ms: posts stranded by a sleeping engine?",
			 slow, RS_STALL_MS);
		/*
		 * The spin starts at idle_us (50 here); the first gap of a
		 * pause (300 us) the lcore blocked through, here at the
		 * latest, must have shortened it (rp_idle_spin.h).  Not
		 * inline: the program's passes may find the work first.
		 */
		if (rs_adaptive && !rs_inline) {
			int64_t shr = rs_lcore_counter_settled("spin_shrinks");

			printf("rp_stress: adaptive spin: %" PRId64 " grown, %"
			       PRId64 " shrunk\n",
			       rt_lcore_counter("spin_grows"), shr);
			RS_CHECK(shr > 0, "adaptive: %u pauses of %u us blocked "
				 "through, and the spin never shrank", RS_WAKE_ROUNDS,
				 RS_PAUSE_US);
		}
		slow = 0;
		worst = rs_recv_phase(&rs_threads[0].flow[0], &slow);
		printf("rp_stress: receives alone: %u in RTS rang no doorbell; "
		       "%u in ERR, each after a pause, flushed, slowest %.3f "
		       "ms, %u over %.0f ms\n", RS_RECV_ALONE, RS_FLUSH_ROUNDS,
		       worst, slow, RS_STALL_MS);
		RS_CHECK(!rs_adaptive || slow <= RS_FLUSH_SLOW, "%u flushes over "
			 "%.0f ms: receives posted in ERR stranded by a "
			 "sleeping engine?", slow, RS_STALL_MS);
	}
	if (argc > 3 && strcmp(argv[3], "lcores") == 0)
		rs_check_shards();
	if (rs_inline) {
		int64_t inl = rt_lcore_counter("inline_passes");
		int64_t stand = rt_lcore_counter("stand_asides");
		int64_t thr = rt_lcore_counter("inline_threads");
		int64_t split = rt_lcore_counter("inline_split_passes");

		printf("rp_stress: inline: %" PRId64 " passes run by the "
		       "application's threads (%" PRId64 " of them given an "
		       "lcore id, %" PRId64 " over one device while another "
		       "thread polled the other), lcore stood aside %" PRId64
		       " times\n", inl, thr, split, stand);
		RS_CHECK(inl > 0 && stand > 0, "inline: no pass run by the "
			 "application (inline_passes %" PRId64 ", stand_asides %"
			 PRId64 ")", inl, stand);
		/* Their passes use mempool caches only with an lcore id
		 * (rp_thread.c). */
		RS_CHECK(thr > 0, "inline: no thread that ran passes has an "
			 "lcore id (inline_threads %" PRId64 ")", thr);
		/* Threads polling the two devices' CQs run each device's
		 * passes at once (rp_engine_assist(): lanes). */
		RS_CHECK(split > 0, "inline: every pass ran both devices "
			 "(inline_split_passes 0)");
	}
	/* Nothing more may complete. */
	for (unsigned int i = 0; i < rs_nthreads; i++)
		for (unsigned int k = 0; k < 2; k++) {
			struct ibv_wc wc;
			struct rs_flow *f = &rs_threads[i].flow[k];

			RS_CHECK(ibv_poll_cq(f->scq, 1, &wc) == 0 &&
				 ibv_poll_cq(f->rcq, 1, &wc) == 0,
				 "flow %u: completion beyond the last", f->id);
		}
	printf("rp_stress: PASS\n");
	/* The QPs, CQs and MRs go with the process: the engine's stop frees
	 * its devices. */
	return 0;
}
