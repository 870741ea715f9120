/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One measurement: the driver of a run.  It opens both ends (rtp_res.c),
 * starts the server thread, runs the mode's client (measuring) loop in the
 * calling thread, tears both ends down and computes the figures
 * (rtp_report.c).
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

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>

#include "rtp.h"

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
		rtp_side_show(f, "client", &run->cli);
		rtp_side_show(f, "server", &run->srv);
	}
	pthread_mutex_unlock(&rtp_cur_lock);
	return ret;
}

void
rtp_run_abort(void)
{
	struct rtp_run *run = rtp_cur;

	if (run != NULL)
		run->abort = true;
}

/*
 * A failure: the run's message (the first one's) is fmt of what and
 * strerror(-err), the run aborted; returns err.
 */
int
rtp_fail_fmt(struct rtp_run *run, int err, const char *fmt, const char *what)
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
	return rtp_fail_fmt(run, err, "%s: %s", what);
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
		ret = rtp_recvs_post_all(&run->srv, run,
					 run->mode->latency ? 1 :
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
int
rtp_server_start(struct rtp_run *run, pthread_t *t)
{
	pthread_attr_t attr;
	cpu_set_t all;
	int ret;

	rtp_cpus_all(&all);
	ret = pthread_attr_init(&attr);
	if (ret != 0)
		return rtp_fail(run, -ret, "server thread");
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
		return rtp_fail(run, -ret, what);
	}
	if (ret != 0)
		return rtp_fail(run, -ret, "server thread");
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
		return rtp_fail(run, ret, what);
	}
	return 0;
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
	uint64_t nb;
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
	nb = set->iters != 0 ? RTE_MIN(set->iters, (uint64_t)RTP_MAX_SAMPLES) :
		RTP_MAX_SAMPLES;
	run->samples = malloc(sizeof(uint64_t) * nb);
	ret = run->samples == NULL ? -ENOMEM : 0;
	/* Touched now: not a page fault every 512 messages of the run. */
	if (ret == 0)
		memset(run->samples, 0, sizeof(uint64_t) * nb);
	if (ret == 0)
		ret = client_place(run);
	if (ret == 0 && mode->own_resources) {
		/* both ends are the mode's, driven by its one thread */
		if (remote) {
			oob = rtp_oob_connect(rtp.params.client,
					      rtp.params.oob_port,
					      set->timeout);
			ret = oob < 0 ? rtp_fail(run, oob,
						 "cannot reach the server") : 0;
			run->oob = oob;
		}
		cur_set(run);
		if (ret == 0)
			ret = mode->client(run);
		rtp_measure_end(run);
		cur_set(NULL);
		run->stop = true;
		if (run->hello_ok) {
			int r = rtp_remote_done(run, ret);

			ret = ret != 0 ? ret : r;
		}
		srv_up = (ret == 0 || run->t_start != 0) &&
			(!remote || run->hello_ok);
		goto done;
	}
	if (ret == 0)
		ret = rtp_side_open(&run->cli, 0, set, run);
	if (ret == 0 && remote) {
		oob = rtp_oob_connect(rtp.params.client, rtp.params.oob_port,
				      set->timeout);
		ret = oob < 0 ? rtp_fail(run, oob,
					 "cannot reach the server") : 0;
		run->oob = oob;
		if (ret == 0)
			ret = rtp_remote_hello(run);
		srv_up = ret == 0;
	} else if (ret == 0) {
		ret = rtp_side_open(&run->srv, 1, set, run);
		memcpy(run->cli.remote, run->srv.local, sizeof(run->cli.remote));
		memcpy(run->srv.remote, run->cli.local, sizeof(run->srv.remote));
	}
	if (ret == 0)
		ret = rtp_side_connect(&run->cli, run);
	if (ret == 0 && !remote)
		ret = rtp_side_connect(&run->srv, run);
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
		ret = rtp_server_start(run, &srv);
		srv_up = ret == 0;
	}
	if (ret == 0) {
		cur_set(run);
		ret = mode->client(run);
		rtp_measure_end(run);	/* a phase cut short */
		cur_set(NULL);
	}
	run->stop = true;
	if (srv_up && remote) {
		int r = rtp_remote_done(run, ret);

		ret = ret != 0 ? ret : r;
	} else if (srv_up) {
		rtp_side_flush(&run->srv);
		pthread_join(srv, NULL);
		if (ret == 0 && run->srv_err < 0)
			ret = run->srv_err;
	}
	rtp_side_flush(&run->cli);
done:
	if (ret == 0 && run->abort && run->err[0] == '\0')
		snprintf(run->err, sizeof(run->err), "stopped");
	if (srv_up && run->t_start != 0) {
		rtp_figures(run, &run->c0, &run->c1, res);
		if (rtp.params.counters)
			rtp_counters_line(stderr, "client", &run->c0,
					  &run->c1);
	}
	rtp_placement(run, res);
	res->valid = srv_up && run->t_start != 0;
	res->error = ret;
	snprintf(res->error_msg, sizeof(res->error_msg), "%s", run->err);
	rtp_side_close(&run->cli);
	rtp_side_close(&run->srv);
	if (oob >= 0)
		close(oob);
	free(run->samples);
	free(run);
	return ret;
}
