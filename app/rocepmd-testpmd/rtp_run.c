/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One measurement: resources of both ends over the verbs API, the server
 * thread, the client (measuring) loop, counter snapshots, the figures.
 *
 * Topology: one process, two devices back to back.  The client is device
 * 0, the server device 1; each end has a PD, one MR over its buffer (one
 * slot of depth x size per QP), one CQ on one completion channel, and qps
 * RC QPs connected pairwise.  The server runs in its own thread; at the end
 * of a run its QPs are moved to the error state, and the flush completions
 * wake it whatever its completion mode.
 * Or two processes (--server, --client HOST), each with one device: the
 * ends meet over TCP (rtp_oob.c) and the server's thread is in the other
 * process (rtp_serve_one), the rest is the same.
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include <rte_common.h>

#include "rtp.h"

#define RTP_SIGNAL_EVERY	16	/* ping-pong: one signaled send in N */
/*
 * Receives a streaming receiver keeps posted, per send WR in flight: the
 * sender gets a completion (and posts again) as soon as the peer's engine
 * takes a receive, before the receiving program reposts it, so a receive
 * queue of just the depth runs dry whenever that program is slower than
 * the engine, and every RNR NAK stalls the sender for the RNR timer
 * (perftest's receive depth, 512, is likewise four times its send depth).
 */
#define RTP_RX_PER_DEPTH	4u
#define RTP_WC_BURST		32

static struct rtp_run *volatile rtp_cur;
/* `show qp` reads the run's QPs: the run is not torn down meanwhile. */
static pthread_mutex_t rtp_cur_lock = PTHREAD_MUTEX_INITIALIZER;

static void
cur_set(struct rtp_run *run)
{
	pthread_mutex_lock(&rtp_cur_lock);
	rtp_cur = run;
	pthread_mutex_unlock(&rtp_cur_lock);
}

static const char *
qp_state_name(enum ibv_qp_state st)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};

	return (unsigned int)st < RTE_DIM(names) && names[st] != NULL ?
		names[st] : "?";
}

static void
show_side(FILE *f, const char *name, const struct rtp_side *s)
{
	for (uint32_t q = 0; q < s->nb_qps; q++) {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;
		int ret = ibv_query_qp(s->qp[q], &a, IBV_QP_STATE |
				       IBV_QP_SQ_PSN | IBV_QP_RQ_PSN |
				       IBV_QP_DEST_QPN, &ia);

		if (ret != 0) {
			fprintf(f, "qp %s/%u: 0x%06x: ibv_query_qp: %s\n", name,
				q, s->qp[q]->qp_num, strerror(ret));
			continue;
		}
		fprintf(f, "qp %s/%u: 0x%06x -> 0x%06x %s sq_psn %u rq_psn %u\n",
			name, q, s->qp[q]->qp_num, a.dest_qp_num,
			qp_state_name(a.qp_state), a.sq_psn, a.rq_psn);
	}
	if (s->nb_qps != 0)
		fprintf(f, "qp %s: done %" PRIu64 " wc_errors %" PRIu64
			" polls %" PRIu64 " cqes %" PRIu64 " events %" PRIu64
			"\n", name, s->done, s->wc_errors, s->w.polls,
			s->w.cqes, s->w.events);
}

/*
 * `show qp`: the QPs of the run in progress (both ends in one process),
 * with their state and PSNs from ibv_query_qp, and each end's counters
 * so far (read while the run writes them: a snapshot, not exact).  0, or
 * -ENOENT with no run, -ENOTSUP for a mode whose QPs are its own.
 */
int
rtp_show_qps(FILE *f)
{
	struct rtp_run *run;
	int ret = 0;

	pthread_mutex_lock(&rtp_cur_lock);
	run = rtp_cur;
	if (run == NULL)
		ret = -ENOENT;
	else if (run->mode->own_resources)
		ret = -ENOTSUP;
	if (ret == 0) {
		fprintf(f, "run %s: posted %" PRIu64 " received %" PRIu64
			"\n", run->mode->name, run->posted, run->received);
		show_side(f, "client", &run->cli);
		show_side(f, "server", &run->srv);
	}
	pthread_mutex_unlock(&rtp_cur_lock);
	return ret;
}

double
rtp_tsc_us(uint64_t ticks)
{
	return (double)ticks * 1e6 / (double)rte_get_tsc_hz();
}

uint64_t
rtp_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
rtp_run_abort(void)
{
	struct rtp_run *run = rtp_cur;

	if (run != NULL)
		run->abort = true;
}

/*
 * The thread of an engine lcore, by the name the EAL gives its workers
 * ("rte-worker-N"; "lcore-worker-N" before DPDK 22.11): its TID, 0 if none.
 */
static long
lcore_tid(unsigned int lcore)
{
	char w1[32], w2[32], path[300], comm[32];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long tid = 0;

	if (d == NULL)
		return 0;
	snprintf(w1, sizeof(w1), "rte-worker-%u", lcore);
	snprintf(w2, sizeof(w2), "lcore-worker-%u", lcore);
	while (tid == 0 && (e = readdir(d)) != NULL) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(comm, sizeof(comm), f) != NULL) {
			comm[strcspn(comm, "\n")] = '\0';
			if (strcmp(comm, w1) == 0 || strcmp(comm, w2) == 0)
				tid = atol(e->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return tid;
}

/*
 * CPU time of the engine lcores' threads (the first field of their
 * schedstat, ns on a CPU): what an event-driven run's engine spends,
 * which the application threads' CPU time does not hold.  false when a
 * thread or its schedstat is missing.
 */
static bool
eng_cpu_ns(uint64_t *ns)
{
	static long tid[RP_MAX_ENGINE_LCORES];
	unsigned int lcore;

	*ns = 0;
	for (unsigned int i = 0; i < RP_MAX_ENGINE_LCORES; i++) {
		char path[64];
		unsigned long long t;
		FILE *f;
		int n;

		if (rp_lcore_stats_get(i, &lcore, NULL, NULL, 0) < 0)
			return i > 0;
		/* found once (lcores live as long), by whichever thread snaps */
		t = (unsigned long long)__atomic_load_n(&tid[i],
							__ATOMIC_RELAXED);
		if (t == 0) {
			t = (unsigned long long)lcore_tid(lcore);
			__atomic_store_n(&tid[i], (long)t, __ATOMIC_RELAXED);
		}
		if (t == 0)
			return false;
		snprintf(path, sizeof(path), "/proc/self/task/%llu/schedstat",
			 t);
		f = fopen(path, "r");
		if (f == NULL)
			return false;
		n = fscanf(f, "%llu", &t);
		fclose(f);
		if (n != 1)
			return false;
		*ns += t;
	}
	return true;
}

void
rtp_counters_snap(struct rtp_counters *c)
{
	unsigned int lcore;
	int n;

	memset(c, 0, sizeof(*c));
	c->tsc = rte_get_tsc_cycles();
	c->has_eng_cpu = eng_cpu_ns(&c->eng_cpu_ns);
	for (unsigned int i = 0; i < RP_MAX_ENGINE_LCORES; i++) {
		n = rp_lcore_stats_get(i, &lcore, c->lc_names, c->lc[i],
				       RTP_MAX_COUNTERS);
		if (n < 0)
			break;
		c->nb_lc_counters = RTE_MIN((unsigned int)n, (unsigned int)RTP_MAX_COUNTERS);
		c->nb_lcores = i + 1;
	}
	for (unsigned int d = 0; d < rp_dev_count() && d < RP_MAX_PORTS; d++) {
		n = rp_dev_stats_get(d, c->dev_names, c->dev[d],
				     RTP_MAX_COUNTERS);
		if (n < 0)
			break;
		c->nb_dev_counters = RTE_MIN((unsigned int)n, (unsigned int)RTP_MAX_COUNTERS);
		c->nb_devs = d + 1;
	}
}

/* Sum of a counter over the engine lcores (lcore) or the devices. */
uint64_t
rtp_counter(const struct rtp_counters *c, bool lcore, const char *name)
{
	uint64_t sum = 0;

	if (lcore) {
		for (unsigned int k = 0; k < c->nb_lc_counters; k++)
			if (strcmp(c->lc_names[k], name) == 0)
				for (unsigned int i = 0; i < c->nb_lcores; i++)
					sum += c->lc[i][k];
	} else {
		for (unsigned int k = 0; k < c->nb_dev_counters; k++)
			if (strcmp(c->dev_names[k], name) == 0)
				for (unsigned int i = 0; i < c->nb_devs; i++)
					sum += c->dev[i][k];
	}
	return sum;
}

static int
run_fail(struct rtp_run *run, int err, const char *fmt, const char *what)
{
	if (run->err[0] == '\0')
		snprintf(run->err, sizeof(run->err), fmt, what, strerror(-err));
	run->abort = true;
	return err;
}

/* A mode's failure: "WHAT: strerror", the run aborted; returns err. */
int
rtp_fail(struct rtp_run *run, int err, const char *what)
{
	return run_fail(run, err, "%s: %s", what);
}

/* ---- resources --------------------------------------------------------- */

/*
 * An RC QP on the side's CQ, in INIT on port 1 with `access`: the QP, or
 * NULL with errno set.
 */
static struct ibv_qp *
side_qp_init(struct rtp_side *s, uint32_t send_wr, uint32_t recv_wr,
	     unsigned int access)
{
	struct ibv_qp_init_attr qa;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	int ret;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = send_wr;
	qa.cap.max_recv_wr = recv_wr;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qp = ibv_create_qp(s->pd, &qa);
	if (qp == NULL)
		return NULL;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret != 0) {
		(void)ibv_destroy_qp(qp);
		errno = ret;
		return NULL;
	}
	return qp;
}

/*
 * --idle-qps: QPs that exist, connected (each to itself) and in RTS, and
 * carry nothing: what the engine's pass costs per QP it does not use.
 */
static int
side_idle_qps(struct rtp_side *s, const struct rtp_settings *set,
	      struct rtp_run *run)
{
	struct rtp_ep_info self;

	if (set->idle_qps == 0)
		return 0;
	s->idle = calloc(set->idle_qps, sizeof(*s->idle));
	if (s->idle == NULL)
		return run_fail(run, -ENOMEM, "%s: %s", "idle QPs");
	self = s->local[0];
	for (uint32_t q = 0; q < set->idle_qps; q++) {
		s->idle[q] = side_qp_init(s, 1, 1, 0);
		if (s->idle[q] == NULL)
			return run_fail(run, -errno, "%s: %s",
					"ibv_create_qp/idle QP to INIT");
		s->nb_idle++;
		self.qpn = s->idle[q]->qp_num;
		if (rtp_qp_connect(s->ctx, s->idle[q], &self, self.psn) < 0)
			return run_fail(run, -EIO, "%s: %s",
					"idle QP to RTS");
	}
	return 0;
}

static int
side_open(struct rtp_side *s, unsigned int dev, const struct rtp_settings *set,
	  struct rtp_run *run)
{
	struct ibv_device **list;
	int nb = 0;
	uint32_t cqe;

	s->dev = dev;
	s->stop = &run->stop;
	list = ibv_get_device_list(&nb);
	if (list == NULL || (int)dev >= nb) {
		if (list != NULL)
			ibv_free_device_list(list);
		return run_fail(run, -ENODEV, "device %s: %s", "missing");
	}
	s->ctx = ibv_open_device(list[dev]);
	ibv_free_device_list(list);
	if (s->ctx == NULL)
		return run_fail(run, -errno, "%s: %s", "ibv_open_device");
	s->pd = ibv_alloc_pd(s->ctx);
	s->ch = ibv_create_comp_channel(s->ctx);
	if (s->pd == NULL || s->ch == NULL)
		return run_fail(run, -errno, "%s: %s", "ibv_alloc_pd/channel");
	cqe = set->qps * (set->depth + RTP_SIGNAL_EVERY + 1) * 2;
	s->cq = ibv_create_cq(s->ctx, (int)cqe, NULL, s->ch, 0);
	if (s->cq == NULL)
		return run_fail(run, -errno, "%s: %s", "ibv_create_cq");
	s->slot = (size_t)set->size * set->depth;
	if (s->slot == 0)
		s->slot = 64;
	s->buf_len = s->slot * set->qps;
	s->buf = aligned_alloc(4096, RTE_ALIGN_CEIL(s->buf_len, 4096));
	if (s->buf == NULL)
		return run_fail(run, -ENOMEM, "%s: %s", "buffer");
	memset(s->buf, 0x5a, s->buf_len);
	/* Both ends fill their buffers alike: a peer's counter starts so. */
	for (uint32_t q = 0; q < RTP_MAX_QPS; q++)
		s->atomics[q] = 0x5a5a5a5a5a5a5a5aull;
	s->mr = ibv_reg_mr(s->pd, s->buf, s->buf_len, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (s->mr == NULL)
		return run_fail(run, -errno, "%s: %s", "ibv_reg_mr");
	s->nb_qps = set->qps;
	for (uint32_t q = 0; q < set->qps; q++) {
		s->qp[q] = side_qp_init(s, set->depth + RTP_SIGNAL_EVERY + 1,
					set->depth * RTP_RX_PER_DEPTH + 1,
					IBV_ACCESS_REMOTE_WRITE |
					IBV_ACCESS_REMOTE_READ |
					IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_REMOTE_ATOMIC);
		if (s->qp[q] == NULL)
			return run_fail(run, -errno, "%s: %s",
					"ibv_create_qp/QP to INIT");
		s->local[q].qpn = s->qp[q]->qp_num;
		s->local[q].psn = (uint32_t)lrand48() & 0xffffff;
		s->local[q].rkey = s->mr->rkey;
		s->local[q].addr = (uintptr_t)(s->buf + q * s->slot);
		if (ibv_query_gid(s->ctx, 1, 0, &s->local[q].gid) != 0)
			return run_fail(run, -errno, "%s: %s", "ibv_query_gid");
	}
	return side_idle_qps(s, set, run);
}

/*
 * A QP in INIT to RTS towards the remote end: path MTU of the port, up to
 * 16 RDMA READs in flight each way.  0, or a negative errno.
 */
int
rtp_qp_connect(struct ibv_context *ctx, struct ibv_qp *qp,
	       const struct rtp_ep_info *remote, uint32_t sq_psn)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	struct ibv_qp_attr a;

	if (ibv_query_port(ctx, 1, &pa) != 0 ||
	    ibv_query_device(ctx, &da) != 0)
		return -EIO;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = pa.active_mtu;
	a.dest_qp_num = remote->qpn;
	a.rq_psn = remote->psn;
	a.max_dest_rd_atomic = (uint8_t)RTE_MIN(da.max_qp_rd_atom, (int)16);
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = remote->gid;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER) != 0)
		return -EIO;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = (uint8_t)RTE_MIN(da.max_qp_init_rd_atom, (int)16);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0)
		return -EIO;
	return 0;
}

static int
side_connect(struct rtp_side *s, struct rtp_run *run)
{
	for (uint32_t q = 0; q < s->nb_qps; q++) {
		int ret = rtp_qp_connect(s->ctx, s->qp[q], &s->remote[q],
					 s->local[q].psn);

		if (ret < 0)
			return run_fail(run, ret, "%s: %s", "QP to RTR/RTS");
	}
	return 0;
}

/* Error state: posted WRs flush, which wakes a blocked waiter. */
static void
side_flush(struct rtp_side *s)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	for (uint32_t q = 0; q < s->nb_qps; q++)
		if (s->qp[q] != NULL)
			ibv_modify_qp(s->qp[q], &a, IBV_QP_STATE);
}

static void
side_close(struct rtp_side *s)
{
	/* a waiter never set up is all zeroes: its epfd 0 is not ours */
	if (s->w.cq != NULL)
		rtp_waiter_fini(&s->w);
	for (uint32_t q = 0; q < RTP_MAX_QPS; q++)
		if (s->qp[q] != NULL)
			ibv_destroy_qp(s->qp[q]);
	for (uint32_t q = 0; q < s->nb_idle; q++)
		ibv_destroy_qp(s->idle[q]);
	free(s->idle);
	if (s->mr != NULL)
		ibv_dereg_mr(s->mr);
	if (s->cq != NULL)
		ibv_destroy_cq(s->cq);
	if (s->ch != NULL)
		ibv_destroy_comp_channel(s->ch);
	if (s->pd != NULL)
		ibv_dealloc_pd(s->pd);
	if (s->ctx != NULL)
		ibv_close_device(s->ctx);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

/* ---- posting and completions ------------------------------------------- */

int
rtp_post(struct rtp_side *s, uint32_t q, enum ibv_wr_opcode op, uint32_t size,
	 uint64_t wr_id, bool signaled, uint32_t imm)
{
	uint32_t slot = (uint32_t)(wr_id % (s->slot / RTE_MAX(size, 1u)));
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + q * s->slot + (size_t)slot * size),
		.length = size,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = size != 0 ? 1 : 0,
		.opcode = op,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
	};
	struct ibv_send_wr *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		/* Add 1 to the first 8 bytes of the peer's slot: the original
		 * value comes back into this WR's SGE. */
		wr.wr.atomic.remote_addr = s->remote[q].addr;
		wr.wr.atomic.rkey = s->remote[q].rkey;
		wr.wr.atomic.compare_add = 1;
	} else if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM ||
	    op == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = s->remote[q].addr +
			(uint64_t)slot * size;
		wr.wr.rdma.rkey = s->remote[q].rkey;
	}
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_SEND_WITH_IMM)
		wr.imm_data = htonl(imm);
	return -ibv_post_send(s->qp[q], &wr, &bad);
}

int
rtp_post_recv(struct rtp_side *s, uint32_t q, uint32_t size, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(s->buf + q * s->slot),
		.length = size,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = size != 0 ? 1 : 0,
	};
	struct ibv_recv_wr *bad;

	return -ibv_post_recv(s->qp[q], &wr, &bad);
}

/* Index of the QP a completion belongs to. */
static uint32_t
wc_qp(const struct rtp_side *s, const struct ibv_wc *wc)
{
	for (uint32_t q = 0; q < s->nb_qps; q++)
		if (s->qp[q]->qp_num == wc->qp_num)
			return q;
	return 0;
}

/*
 * 0 for a successful completion; 1 for a flush after the end of the run;
 * else a negative errno, with the run failed.
 */
int
rtp_wc_check(struct rtp_side *s, const struct ibv_wc *wc, struct rtp_run *run)
{
	char what[96];

	if (wc->status == IBV_WC_SUCCESS)
		return 0;
	if (wc->status == IBV_WC_WR_FLUSH_ERR && (run->stop || run->abort))
		return 1;
	s->wc_errors++;
	snprintf(what, sizeof(what), "device %u QP %u: completion %s",
		 s->dev, wc->qp_num, ibv_wc_status_str(wc->status));
	return run_fail(run, -EIO, "%s (%s)", what);
}

static int
wait_some(struct rtp_side *s, struct rtp_run *run, struct ibv_wc *wc, int n)
{
	int got = rtp_wait_cq(&s->w, wc, n, &run->abort, run->set.timeout);

	if (got == -ETIMEDOUT)
		return run_fail(run, got, "%s: %s",
				"no completion within the timeout");
	if (got < 0)
		return run_fail(run, got, "%s: %s", "waiting for completions");
	return got;
}

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

static void phase_end(struct rtp_run *run);

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

void
rtp_measure_end(struct rtp_run *run)
{
	phase_end(run);
}

static void
phase_end(struct rtp_run *run)
{
	if (run->t_start == 0 || run->t_end != 0)
		return;
	run->t_end = rte_get_tsc_cycles();
	run->cli.cpu_ns = rtp_thread_cpu_ns() - run->cli.cpu_ns;
	rtp_counters_snap(&run->c1);
}

/* ---- traffic patterns (the modes call these) --------------------------- */

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
			return run_fail(run, ret, "%s: %s", "ibv_post_send");
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
				ret = rtp_post_recv(s, wc_qp(s, &wc[k]),
						    run->set.size, 0);
				if (ret < 0)
					return run_fail(run, ret, "%s: %s",
							"ibv_post_recv");
				answered = true;
			}
		}
		s->done++;
		if (measure)
			rtp_sample(run, rte_get_tsc_cycles() - t0);
	}
	if (measure)
		phase_end(run);
	return 0;
}

static int
recvs_post_all(struct rtp_side *s, struct rtp_run *run, uint32_t n)
{
	for (uint32_t q = 0; q < s->nb_qps; q++)
		for (uint32_t k = 0; k < n; k++) {
			int ret = rtp_post_recv(s, q, run->set.size, k);

			if (ret < 0)
				return run_fail(run, ret, "%s: %s",
						"ibv_post_recv");
		}
	return 0;
}

int
rtp_pingpong_client(struct rtp_run *run, enum ibv_wr_opcode op)
{
	int ret = recvs_post_all(&run->cli, run, 1);

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
			return run_fail(run, n, "%s: %s", "server wait");
		for (int k = 0; k < n; k++) {
			int ret = rtp_wc_check(s, &wc[k], run);
			uint32_t q;

			if (ret != 0)
				return ret < 0 ? ret : 0;
			if (!(wc[k].opcode & IBV_WC_RECV))
				continue;
			run->received++;
			q = wc_qp(s, &wc[k]);
			ret = rtp_post_recv(s, q, run->set.size, 0);
			if (ret == 0)
				ret = rtp_post(s, q, op, run->set.size, sent,
					       (sent % RTP_SIGNAL_EVERY) == 0,
					       (uint32_t)sent);
			sent++;
			if (ret < 0)
				return run_fail(run, ret, "%s: %s",
						"server post");
		}
	}
}

/*
 * Read and atomic latency: one READ or FETCH_AND_ADD at a time, the
 * server's CPU takes no part.  A FETCH_AND_ADD adds 1 to the first 8
 * bytes of its QP's slot at the server: the original value it returns
 * must be the one before, each time (a lost or doubled execution shows).
 */
static int
lat_phase(struct rtp_run *run, enum ibv_wr_opcode op, bool measure)
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
			return run_fail(run, ret, "%s: %s", "ibv_post_send");
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
		if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			uint32_t q = (uint32_t)(i % s->nb_qps);
			uint64_t got, want = s->atomics[q]++;

			/* The SGE of WR i, as rtp_post() chose it. */
			memcpy(&got, s->buf + q * s->slot +
			       (size_t)(i % (s->slot / 8)) * 8, sizeof(got));
			if (got != want) {
				char what[96];

				snprintf(what, sizeof(what), "FETCH_AND_ADD "
					 "%" PRIu64 ": original value %#" PRIx64
					 ", expected %#" PRIx64, i, got, want);
				return rtp_fail(run, -EPROTO, what);
			}
		}
	}
	if (measure)
		phase_end(run);
	return 0;
}

int
rtp_read_lat_client(struct rtp_run *run)
{
	int ret = lat_phase(run, IBV_WR_RDMA_READ, false);

	return ret == 0 ? lat_phase(run, IBV_WR_RDMA_READ, true) : ret;
}

int
rtp_atomic_lat_client(struct rtp_run *run)
{
	int ret;

	if (run->set.size != 8)
		return rtp_fail(run, -EINVAL,
				"atomic_lat: an atomic is 8 bytes (set size 8)");
	ret = lat_phase(run, IBV_WR_ATOMIC_FETCH_AND_ADD, false);
	return ret == 0 ? lat_phase(run, IBV_WR_ATOMIC_FETCH_AND_ADD, true) :
		ret;
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
		bool more = !phase_over(&p, p.n != 0 ? posted : 0);
		int n;

		/* Post while there is room (and, paced, while it is time). */
		while (more && total_inflight < cap) {
			uint64_t now = rte_get_tsc_cycles();
			uint32_t slot;
			int ret;

			if (period != 0 && now < next)
				break;
			while (inflight[q] >= run->set.depth)
				q = (q + 1) % s->nb_qps;
			/* in order within a QP: a slot per WR in flight */
			slot = q * run->set.depth + seq[q]++ % run->set.depth;
			t_post[slot] = period != 0 ? next : now;
			next += period;
			ret = rtp_post(s, q, op, run->set.size,
				       slot | ((uint64_t)q << 32), true, 0);
			if (ret < 0)
				return run_fail(run, ret, "%s: %s",
						"ibv_post_send");
			inflight[q]++;
			total_inflight++;
			posted++;
			if (measure)
				run->posted++;
			q = (q + 1) % s->nb_qps;
			more = !phase_over(&p, p.n != 0 ? posted : 0);
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
				return run_fail(run, -EIO, "%s: %s",
						"ibv_poll_cq");
			s->w.cqes += (uint64_t)n;
		} else {
			n = wait_some(s, run, wc, RTP_WC_BURST);
			if (n <= 0)
				return n;
		}
		for (int k = 0; k < n; k++) {
			uint64_t id = wc[k].wr_id;
			int ret = rtp_wc_check(s, &wc[k], run);

			if (ret != 0)
				return ret < 0 ? ret : 0;
			inflight[id >> 32]--;
			total_inflight--;
			s->done++;
			if (measure)
				rtp_sample(run, rte_get_tsc_cycles() -
				       t_post[(uint32_t)id]);
		}
	}
	if (measure)
		phase_end(run);
	return 0;
}

int
rtp_stream_client(struct rtp_run *run, enum ibv_wr_opcode op)
{
	uint64_t *t_post = calloc((size_t)run->cli.nb_qps * run->set.depth,
				  sizeof(*t_post));
	int ret;

	if (t_post == NULL)
		return run_fail(run, -ENOMEM, "%s: %s", "stream");
	ret = stream_phase(run, op, false, t_post);
	if (ret == 0)
		ret = stream_phase(run, op, true, t_post);
	free(t_post);
	return ret;
}

/* Streaming receiver: keep depth receives posted per QP, until flushed. */
int
rtp_stream_server(struct rtp_run *run)
{
	struct rtp_side *s = &run->srv;
	struct ibv_wc wc[RTP_WC_BURST];

	for (;;) {
		int n = rtp_wait_cq(&s->w, wc, RTP_WC_BURST, NULL, 0);

		if (n < 0)
			return run_fail(run, n, "%s: %s", "server wait");
		for (int k = 0; k < n; k++) {
			int ret = rtp_wc_check(s, &wc[k], run);

			if (ret != 0)
				return ret < 0 ? ret : 0;
			run->received++;
			ret = rtp_post_recv(s, wc_qp(s, &wc[k]),
					    run->set.size, 0);
			if (ret < 0)
				return run_fail(run, ret, "%s: %s",
						"server ibv_post_recv");
		}
	}
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

/* ---- the run ----------------------------------------------------------- */

static volatile bool srv_ready;

static void *
server_main(void *arg)
{
	struct rtp_run *run = arg;
	uint64_t cpu0 = rtp_thread_cpu_ns();
	int ret = 0;

	pthread_getaffinity_np(pthread_self(), sizeof(run->srv_cpus),
			       &run->srv_cpus);
	if (run->mode->server_recvs)
		ret = recvs_post_all(&run->srv, run, run->mode->latency ? 1 :
				     run->set.depth * RTP_RX_PER_DEPTH);
	__atomic_store_n(&srv_ready, true, __ATOMIC_RELEASE);
	if (ret == 0)
		ret = run->mode->server(run);
	run->srv_err = ret;
	run->srv.cpu_ns = rtp_thread_cpu_ns() - cpu0;
	return NULL;
}

/*
 * The server thread, on the CPUs of --cpus-server, else on every CPU (not
 * the client thread's, which it would inherit); back when it is ready.
 */
static int
server_start(struct rtp_run *run, pthread_t *t)
{
	pthread_attr_t attr;
	cpu_set_t all;
	int ret;

	rtp_cpus_all(&all);
	ret = pthread_attr_init(&attr);
	if (ret != 0)
		return run_fail(run, -ret, "%s: %s", "server thread");
	ret = pthread_attr_setaffinity_np(&attr, sizeof(cpu_set_t),
					  run->set.cpus_srv_set ?
					  &run->set.cpus_srv : &all);
	srv_ready = false;
	if (ret == 0)
		ret = pthread_create(t, &attr, server_main, run);
	pthread_attr_destroy(&attr);
	if (ret != 0 && run->set.cpus_srv_set) {
		char what[80], l[48];

		rtp_cpus_fmt(&run->set.cpus_srv, l, sizeof(l));
		snprintf(what, sizeof(what), "server thread on CPUs %s", l);
		return run_fail(run, -ret, "%s: %s", what);
	}
	if (ret != 0)
		return run_fail(run, -ret, "%s: %s", "server thread");
	while (!__atomic_load_n(&srv_ready, __ATOMIC_ACQUIRE))
		usleep(100);
	return 0;
}

/* The client thread (the caller) on --cpus-client's CPUs, else any. */
static int
client_place(struct rtp_run *run)
{
	int ret = 0;

	if (run->set.cpus_cli_set)
		ret = -pthread_setaffinity_np(pthread_self(),
					      sizeof(run->set.cpus_cli),
					      &run->set.cpus_cli);
	else
		rtp_unpin_thread();
	pthread_getaffinity_np(pthread_self(), sizeof(run->cli_cpus),
			       &run->cli_cpus);
	if (ret < 0) {
		char what[80], l[48];

		rtp_cpus_fmt(&run->set.cpus_cli, l, sizeof(l));
		snprintf(what, sizeof(what), "client thread on CPUs %s", l);
		return run_fail(run, ret, "%s: %s", what);
	}
	return 0;
}

/* Whether a thread of CPU set a runs on CPUs of b only. */
static bool
cpus_within(const cpu_set_t *a, const cpu_set_t *b)
{
	cpu_set_t x;

	CPU_AND(&x, a, b);
	return CPU_COUNT(a) != 0 && CPU_EQUAL(&x, a);
}

/*
 * Where the run's threads and this process's engine lcores may run
 * (their CPU sets), and whether the spinners among them had a CPU each.
 * Spinners: the measuring threads that busy-wait (poll, hybrid; the tag
 * modes poll; a passive server sleeps) and the engine lcores, except
 * when the program polls with inline passes on: the lcore stands aside
 * (with auto's on-cpu, only for a poller pinned to the lcore's CPUs).
 */
static void
placement(const struct rtp_run *run, struct rtp_result *res)
{
	const bool polls = run->mode->own_resources ||
		run->set.wait == RTP_WAIT_POLL ||
		run->set.wait == RTP_WAIT_HYBRID;
	/* the server thread is ours: one process, a mode with two ends */
	const bool srv = rtp.params.client == NULL &&
		!run->mode->own_resources;
	char cli_s[32], srv_s[32], eng_s[32];
	cpu_set_t busy, eng;
	unsigned int lcore, nb_eng = 0, spinners = 0;
	bool srv_spins = false, aside;

	CPU_ZERO(&eng);
	for (unsigned int i = 0; i < RP_MAX_ENGINE_LCORES &&
	     rp_lcore_stats_get(i, &lcore, NULL, NULL, 0) >= 0; i++) {
		rte_cpuset_t c = rte_lcore_cpuset(lcore);

		CPU_OR(&eng, &eng, &c);
		nb_eng++;
	}
	CPU_ZERO(&busy);
	if (polls) {
		spinners++;
		CPU_OR(&busy, &busy, &run->cli_cpus);
	}
	/* a server thread that never started (a failed run) spins not */
	if (polls && srv && run->mode->server_active &&
	    CPU_COUNT(&run->srv_cpus) != 0) {
		spinners++;
		CPU_OR(&busy, &busy, &run->srv_cpus);
		srv_spins = true;
	}
	aside = polls && (rtp_inline_on() ||
		(rp_engine_inline(0, NULL, NULL, 0) == RP_INLINE_ON_CPU &&
		 (cpus_within(&run->cli_cpus, &eng) ||
		  (srv_spins && cpus_within(&run->srv_cpus, &eng)))));
	if (!aside) {
		spinners += nb_eng;
		CPU_OR(&busy, &busy, &eng);
	}
	res->cpu_over = spinners > (unsigned int)CPU_COUNT(&busy);
	rtp_cpus_fmt(&run->cli_cpus, cli_s, sizeof(cli_s));
	rtp_cpus_fmt(&run->srv_cpus, srv_s, sizeof(srv_s));
	rtp_cpus_fmt(&eng, eng_s, sizeof(eng_s));
	if (srv)
		snprintf(res->placement, sizeof(res->placement),
			 "cli=%s,srv=%s,eng=%s", cli_s, srv_s, eng_s);
	else
		snprintf(res->placement, sizeof(res->placement),
			 "cli=%s,eng=%s", cli_s, eng_s);
}

static int
quantiles(struct rtp_run *run, struct rtp_result *res)
{
	double div = (double)(run->lat_div != 0 ? run->lat_div :
			      run->mode->lat_div);

	if (run->nb_samples == 0)
		return 0;
	res->has_lat = true;
	res->lat_min = rtp_tsc_us((uint64_t)rtp_quantile(run->samples,
		run->nb_samples, 0.0)) / div;
	res->lat_p50 = rtp_tsc_us((uint64_t)rtp_quantile(run->samples,
		run->nb_samples, 0.5)) / div;
	res->lat_p99 = rtp_tsc_us((uint64_t)rtp_quantile(run->samples,
		run->nb_samples, 0.99)) / div;
	res->lat_p999 = rtp_tsc_us((uint64_t)rtp_quantile(run->samples,
		run->nb_samples, 0.999)) / div;
	res->lat_max = rtp_tsc_us((uint64_t)rtp_quantile(run->samples,
		run->nb_samples, 1.0)) / div;
	return 0;
}

static void
figures(struct rtp_run *run, const struct rtp_counters *c0,
	const struct rtp_counters *c1, struct rtp_result *res)
{
	uint64_t busy, idle, polls, msgs;

	res->msgs = run->cli.done;
	res->posted = run->posted;
	/* the receiver's count less the warm-up messages */
	res->received = run->received >= run->set.warmup ?
		run->received - run->set.warmup : 0;
	res->bytes = res->msgs * run->set.size;
	res->seconds = rtp_tsc_us(run->t_end - run->t_start) / 1e6;
	msgs = RTE_MAX(res->msgs, 1u);
	if (res->seconds > 0) {
		res->msg_rate = (double)res->msgs / res->seconds;
		res->gbps = (double)res->bytes * 8 / res->seconds / 1e9;
	}
	quantiles(run, res);
	res->cpu_us_per_msg = (double)(run->cli.cpu_ns + run->srv.cpu_ns) /
		1e3 / (double)msgs;
	res->has_eng_cpu = c0->has_eng_cpu && c1->has_eng_cpu;
	if (res->has_eng_cpu)
		res->eng_cpu_us_per_msg = (double)(c1->eng_cpu_ns -
			c0->eng_cpu_ns) / 1e3 / (double)msgs;
	busy = rtp_counter(c1, true, "busy_cycles") -
		rtp_counter(c0, true, "busy_cycles");
	idle = rtp_counter(c1, true, "idle_cycles") -
		rtp_counter(c0, true, "idle_cycles");
	res->engine_busy = busy + idle != 0 ?
		(double)busy / (double)(busy + idle) : 0;
#define DIFF(lc, name) (rtp_counter(c1, lc, name) - rtp_counter(c0, lc, name))
	res->signals_per_msg = (double)DIFF(true, "doorbell_signals") /
		(double)msgs;
	res->wakeups_per_msg = (double)(DIFF(true, "wakeups_doorbell") +
		DIFF(true, "wakeups_rx_intr") + DIFF(true, "wakeups_timeout")) /
		(double)msgs;
	res->retransmits = DIFF(false, "retransmits");
	res->drops = DIFF(false, "tx_dropped") + DIFF(false, "no_mbuf") +
		DIFF(false, "retry_timeouts");
#undef DIFF
	polls = run->cli.w.polls;
	res->cqes_per_poll = polls != 0 ?
		(double)run->cli.w.cqes / (double)polls : 0;
	res->events_per_msg = (double)run->cli.w.events / (double)msgs;
	res->wc_errors = run->cli.wc_errors + run->srv.wc_errors;
	if (run->oob >= 0 && run->hello_ok) {
		const struct rtp_srv_figures *f = &run->srv_fig;
		uint64_t w = run->set.warmup;

		res->has_srv = true;
		res->srv_received = f->received >= w ? f->received - w : 0;
		res->srv_bytes = f->bytes >= w * run->set.size ?
			f->bytes - w * run->set.size : 0;
		res->srv_cpu_us_per_msg = (double)f->cpu_ns / 1e3 /
			(double)msgs;
		res->srv_engine_busy = f->busy_cycles + f->idle_cycles != 0 ?
			(double)f->busy_cycles /
			(double)(f->busy_cycles + f->idle_cycles) : 0;
		res->srv_retransmits = f->retransmits;
		res->srv_drops = f->drops;
		res->srv_wc_errors = f->wc_errors;
	}
	if (rtp_raw.valid && rtp_raw.size == run->set.size) {
		if (res->has_lat && run->mode->latency && rtp_raw.lat_p50 > 0)
			res->lat_x_raw = res->lat_p50 * (run->lat_div != 0 ?
				run->lat_div : run->mode->lat_div) /
				2 / rtp_raw.lat_p50;
		if (rtp_raw.msg_rate > 0)
			res->bw_of_raw = res->msg_rate / rtp_raw.msg_rate;
	}
}

/* ---- two processes: the client's half of the exchange ------------------ */

static int
remote_hello(struct rtp_run *run, int fd)
{
	struct rtp_oob_hello h = {
		.magic = RTP_OOB_MAGIC,
		.size = run->set.size,
		.depth = run->set.depth,
		.qps = run->set.qps,
		.wait = run->set.wait,
		.hybrid_us = run->set.hybrid_us,
		.timeout = run->set.timeout,
	};
	struct rtp_oob_reply r;
	int ret;

	memset(h.mode, 0, sizeof(h.mode));
	snprintf(h.mode, sizeof(h.mode), "%s", run->mode->name);
	memcpy(h.ep, run->cli.local, sizeof(h.ep));
	ret = rtp_oob_send(fd, &h, sizeof(h));
	if (ret == 0)
		ret = rtp_oob_recv(fd, &r, sizeof(r), run->set.timeout);
	if (ret < 0)
		return run_fail(run, ret, "%s: %s", "exchange with the server");
	r.msg[sizeof(r.msg) - 1] = '\0';
	if (r.magic != RTP_OOB_MAGIC)
		return run_fail(run, -EPROTO, "%s: %s", "server reply");
	if (r.status < 0) {
		snprintf(run->err, sizeof(run->err), "server: %.100s", r.msg);
		return run_fail(run, r.status, "%s: %s", "server");
	}
	memcpy(run->cli.remote, r.ep, sizeof(run->cli.remote));
	run->hello_ok = true;
	return 0;
}

/* An own_resources mode's client, run->cli.local[0] filled: the hello. */
int
rtp_remote_hello(struct rtp_run *run)
{
	return remote_hello(run, run->oob);
}

/* The run is over: the server stops and says what it counted. */
static int
remote_done(struct rtp_run *run, int fd, int status)
{
	struct rtp_oob_done d = { .magic = RTP_OOB_MAGIC, .status = status };
	int ret = rtp_oob_send(fd, &d, sizeof(d));

	if (ret == 0)
		ret = rtp_oob_recv(fd, &d, sizeof(d), run->set.timeout);
	if (ret == 0 && d.magic != RTP_OOB_MAGIC)
		ret = -EPROTO;
	if (ret < 0)
		return run_fail(run, ret, "%s: %s", "end of run with the server");
	run->srv_fig = d.fig;
	run->received = d.fig.received;
	run->srv.cpu_ns = d.fig.cpu_ns;
	return d.status < 0 ? run_fail(run, d.status, "%s: %s", "server") : 0;
}

/* The server's own counts of the run, for the client's report. */
static struct rtp_srv_figures
srv_figures(struct rtp_run *run)
{
	const struct rtp_counters *c0 = &run->c0, *c1 = &run->c1;

#define DIFF(lc, name) (rtp_counter(c1, lc, name) - rtp_counter(c0, lc, name))
	return (struct rtp_srv_figures){
		/* warm-up included: the client knows how many it sent */
		.received = run->received,
		.bytes = run->received * run->set.size,
		.cpu_ns = run->srv.cpu_ns,
		.busy_cycles = DIFF(true, "busy_cycles"),
		.idle_cycles = DIFF(true, "idle_cycles"),
		.retransmits = DIFF(false, "retransmits"),
		.drops = DIFF(false, "tx_dropped") + DIFF(false, "no_mbuf") +
			DIFF(false, "retry_timeouts"),
		.wc_errors = run->srv.wc_errors,
	};
#undef DIFF
}

/*
 * Serve one client (--server): the settings it sends, our QPs back, the
 * server thread of its mode until it says it is done (or quit is raised).
 */
int
rtp_serve_one(int fd, const volatile bool *quit)
{
	struct rtp_oob_reply r = { .magic = RTP_OOB_MAGIC };
	struct rtp_oob_hello h = { .magic = 0 };
	struct rtp_oob_done d;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct rtp_run *run = calloc(1, sizeof(*run));
	const struct rtp_mode *mode = NULL;
	struct rtp_settings set;
	pthread_t srv;
	bool srv_up = false;
	int ret = run == NULL ? -ENOMEM : 0;

	if (ret == 0)
		ret = rtp_oob_recv(fd, &h, sizeof(h), 10);
	if (ret == 0)
		ret = rtp_oob_hello_check(&h, &mode, &set, r.msg,
					  sizeof(r.msg));
	if (ret == 0) {
		/* this process's --cpus-server, not the client's */
		set.cpus_srv_set = rtp.params.set.cpus_srv_set;
		set.cpus_srv = rtp.params.set.cpus_srv;
		run->mode = mode;
		run->set = set;
		run->oob = -1;
		memcpy(run->srv.remote, h.ep, sizeof(run->srv.remote));
	}
	if (ret == 0 && mode->own_resources) {
		ret = mode->remote_open != NULL ? mode->remote_open(run) :
			run_fail(run, -ENOTSUP, "%s: %s", mode->name);
	} else if (ret == 0) {
		ret = side_open(&run->srv, 0, &set, run);
		if (ret == 0)
			ret = side_connect(&run->srv, run);
		if (ret == 0)
			ret = rtp_waiter_init(&run->srv.w, &run->srv,
					      set.wait, set.hybrid_us);
	}
	if (ret == 0)
		rtp_counters_snap(&run->c0);
	if (ret == 0) {
		ret = server_start(run, &srv);
		srv_up = ret == 0;
	}
	if (run != NULL && r.msg[0] == '\0')
		snprintf(r.msg, sizeof(r.msg), "%s", run->err);
	r.status = ret;
	if (srv_up)
		memcpy(r.ep, run->srv.local, sizeof(r.ep));
	if (ret != -ECONNRESET && ret != -ETIMEDOUT)
		rtp_oob_send(fd, &r, sizeof(r));
	if (srv_up) {
		while (!*quit && poll(&p, 1, 200) == 0)
			;
		if (!*quit)
			rtp_oob_recv(fd, &d, sizeof(d), set.timeout);
		run->stop = true;
		side_flush(&run->srv);
		pthread_join(srv, NULL);
		rtp_counters_snap(&run->c1);
		d = (struct rtp_oob_done){
			.magic = RTP_OOB_MAGIC,
			.status = run->srv_err,
			.fig = srv_figures(run),
		};
		rtp_oob_send(fd, &d, sizeof(d));
		ret = run->srv_err;
	}
	printf("SERVED %s size %u qps %u received %" PRIu64 " %s%s\n",
	       mode != NULL ? mode->name : "-", h.size, h.qps,
	       run != NULL ? run->received : 0,
	       ret == 0 ? "ok" : "error: ", ret == 0 ? "" :
	       (r.msg[0] != '\0' ? r.msg : strerror(-ret)));
	fflush(stdout);
	if (run != NULL) {
		if (mode != NULL && mode->own_resources &&
		    mode->remote_close != NULL)
			mode->remote_close(run);
		side_close(&run->srv);
		free(run);
	}
	close(fd);
	return ret;
}

int
rtp_run(const struct rtp_mode *mode, const struct rtp_settings *set,
	struct rtp_result *res)
{
	struct rtp_run *run;
	const bool remote = rtp.params.client != NULL;
	pthread_t srv;
	bool srv_up = false;
	int oob = -1;
	int ret;

	memset(res, 0, sizeof(*res));
	snprintf(res->mode, sizeof(res->mode), "%s", mode->name);
	res->set = *set;
	if (mode->unsupported != NULL) {
		snprintf(res->error_msg, sizeof(res->error_msg), "%s",
			 mode->unsupported);
		res->error = -ENOTSUP;
		return -ENOTSUP;
	}
	if (rp_dev_count() < (remote ? 1u : 2u)) {
		snprintf(res->error_msg, sizeof(res->error_msg),
			 "mode %s needs two devices (two --port), or --client",
			 mode->name);
		res->error = -ENODEV;
		return -ENODEV;
	}
	run = calloc(1, sizeof(*run));
	if (run == NULL)
		return -ENOMEM;
	run->mode = mode;
	run->set = *set;
	run->oob = -1;
	run->samples = malloc(sizeof(uint64_t) * (set->iters != 0 ?
		RTE_MIN(set->iters, (uint64_t)RTP_MAX_SAMPLES) : RTP_MAX_SAMPLES));
	ret = run->samples == NULL ? -ENOMEM : 0;
	if (ret == 0)
		ret = client_place(run);
	if (ret == 0 && mode->own_resources) {
		/* both ends are the mode's, driven by its one thread */
		if (remote) {
			oob = rtp_oob_connect(rtp.params.client,
					      rtp.params.oob_port,
					      set->timeout);
			ret = oob < 0 ? run_fail(run, oob, "%s: %s",
						 "cannot reach the server") : 0;
			run->oob = oob;
		}
		cur_set(run);
		if (ret == 0)
			ret = mode->client(run);
		phase_end(run);
		cur_set(NULL);
		run->stop = true;
		if (run->hello_ok) {
			int r = remote_done(run, oob, ret);

			ret = ret != 0 ? ret : r;
		}
		srv_up = (ret == 0 || run->t_start != 0) &&
			(!remote || run->hello_ok);
		goto done;
	}
	if (ret == 0)
		ret = side_open(&run->cli, 0, set, run);
	if (ret == 0 && remote) {
		oob = rtp_oob_connect(rtp.params.client, rtp.params.oob_port,
				      set->timeout);
		ret = oob < 0 ? run_fail(run, oob, "%s: %s",
					 "cannot reach the server") : 0;
		run->oob = oob;
		if (ret == 0)
			ret = remote_hello(run, oob);
		srv_up = ret == 0;
	} else if (ret == 0) {
		ret = side_open(&run->srv, 1, set, run);
		memcpy(run->cli.remote, run->srv.local, sizeof(run->cli.remote));
		memcpy(run->srv.remote, run->cli.local, sizeof(run->srv.remote));
	}
	if (ret == 0)
		ret = side_connect(&run->cli, run);
	if (ret == 0 && !remote)
		ret = side_connect(&run->srv, run);
	if (ret == 0)
		ret = rtp_waiter_init(&run->cli.w, &run->cli, set->wait,
				      set->hybrid_us);
	if (ret == 0 && !remote)
		ret = rtp_waiter_init(&run->srv.w, &run->srv, set->wait,
				      set->hybrid_us);
	if (ret < 0 && run->err[0] == '\0')
		snprintf(run->err, sizeof(run->err), "setup: %s",
			 strerror(-ret));
	if (ret == 0 && !remote) {
		ret = server_start(run, &srv);
		srv_up = ret == 0;
	}
	if (ret == 0) {
		cur_set(run);
		ret = mode->client(run);
		phase_end(run);		/* a phase cut short */
		cur_set(NULL);
	}
	run->stop = true;
	if (srv_up && remote) {
		int r = remote_done(run, oob, ret);

		ret = ret != 0 ? ret : r;
	} else if (srv_up) {
		side_flush(&run->srv);
		pthread_join(srv, NULL);
		if (ret == 0 && run->srv_err < 0)
			ret = run->srv_err;
	}
	side_flush(&run->cli);
done:
	if (ret == 0 && run->abort && run->err[0] == '\0')
		snprintf(run->err, sizeof(run->err), "stopped");
	if (srv_up && run->t_start != 0)
		figures(run, &run->c0, &run->c1, res);
	placement(run, res);
	res->valid = srv_up && run->t_start != 0;
	res->error = ret;
	snprintf(res->error_msg, sizeof(res->error_msg), "%s", run->err);
	side_close(&run->cli);
	side_close(&run->srv);
	if (oob >= 0)
		close(oob);
	free(run->samples);
	free(run);
	return ret;
}
