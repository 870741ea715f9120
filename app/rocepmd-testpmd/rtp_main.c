/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocepmd-testpmd [EAL options] -- [options]   (testpmd.c)
 *
 * The EAL comes up first, with the program's EAL options or those of a
 * configuration file; then the raw limit is measured on the bare ports;
 * then the engine starts through its API (rp_engine_start) and the verbs
 * library in this process is attached to it (rocepmd_verbs_attach), so
 * every measurement goes through the verbs API as any program's would.
 * Runs go in a thread of their own, so that the caller can print counters
 * (--stats-period) or take commands (`stop`) meanwhile.
 */

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "rocepmd_verbs.h"
#include "rtp.h"

#define RTP_ARGBUF	8192

struct rtp_state rtp;

static struct {
	pthread_t thread;
	bool running;
	volatile bool finished;
	const struct rtp_mode *mode;
	struct rtp_settings set;
	struct rtp_result res;
	enum rp_idle_policy idle0;	/* at the start of the run */
} rtp_job;

static void job_report(struct rtp_result *r);

/* Every online CPU: where a thread of no --cpus-* option may run. */
void
rtp_cpus_all(cpu_set_t *set)
{
	CPU_ZERO(set);
	for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
		CPU_SET(c, set);
}

/*
 * Not the main lcore's CPU, which a thread inherits: the measuring threads
 * are scheduled as any verbs program's are.
 */
void
rtp_unpin_thread(void)
{
	cpu_set_t all;

	rtp_cpus_all(&all);
	pthread_setaffinity_np(pthread_self(), sizeof(all), &all);
}

/*
 * Whether polling threads run the engine's passes, so that the lcore
 * stands aside while they poll (the idle column, the cpu field).
 */
bool
rtp_inline_on(void)
{
	/* What the engine decided (auto) for every poller; on-cpu, only
	 * for one on an engine lcore's CPU, is rtp_placement()'s to judge
	 * (rtp_report.c). */
	return rp_engine_inline(0, NULL, NULL, 0) == RP_INLINE_ON;
}

static void *
job_main(void *arg)
{
	(void)arg;
	/* rtp_run() places the thread (--cpus-client) */
	rtp_run(rtp_job.mode, &rtp_job.set, &rtp_job.res);
	job_report(&rtp_job.res);
	__atomic_store_n(&rtp_job.finished, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Print and keep a run's result (in the run's thread, when it ends). */
static void
job_report(struct rtp_result *r)
{
	/* changed during the run (`set idle`): both */
	enum rp_idle_policy idle = __atomic_load_n(&rtp.idle, __ATOMIC_RELAXED);

	if (idle != rtp_job.idle0)
		snprintf(r->idle, sizeof(r->idle), "%s>%s%s",
			 rp_idle_policy_name(rtp_job.idle0),
			 rp_idle_policy_name(idle),
			 rtp_inline_on() ? "+inl" : "");
	else
		snprintf(r->idle, sizeof(r->idle), "%s%s",
			 rp_idle_policy_name(idle),
			 rtp_inline_on() ? "+inline" : "");
	rtp_report(rtp.out, rtp.params.format, r);
	if (rtp.nb_results < RTE_DIM(rtp.results))
		rtp.results[rtp.nb_results++] = *r;
	rtp.last = *r;
	if (r->error != 0) {
		fprintf(stderr, "%s: %s\n", r->mode, r->error_msg[0] != '\0' ?
			r->error_msg : strerror(-r->error));
		rtp.status = 1;
	}
}

/* Join the run: 0, or its error. */
static int
job_finish(void)
{
	if (!rtp_job.running)
		return 0;
	pthread_join(rtp_job.thread, NULL);
	rtp_job.running = false;
	return rtp_job.res.error;
}

bool
rtp_running(void)
{
	return rtp_job.running && !rtp_job.finished;
}

/* `stop`: end the run in progress, print its figures. */
int
rtp_stop(void)
{
	if (!rtp_job.running)
		return -ENOENT;
	rtp_run_abort();
	return job_finish();
}

/* Run a mode; async returns at once (interactive), else waits for it. */
int
rtp_start_mode(const char *name, bool async)
{
	const struct rtp_mode *mode = rtp_mode_find(name);
	struct rtp_counters c0, c1;
	uint64_t last;
	int ret;

	if (mode == NULL) {
		fprintf(stderr, "unknown mode '%s'\n", name);
		return -EINVAL;
	}
	if (rtp_job.running && !rtp_job.finished) {
		fprintf(stderr, "a run is in progress: stop it first\n");
		return -EBUSY;
	}
	job_finish();
	rtp_job.mode = mode;
	rtp_job.set = rtp.params.set;
	rtp_job.idle0 = rtp.idle;
	rtp_job.finished = false;
	ret = pthread_create(&rtp_job.thread, NULL, job_main, NULL);
	if (ret != 0)
		return -ret;
	rtp_job.running = true;
	if (async)
		return 0;
	rtp_counters_snap(&c0);
	last = c0.tsc;
	while (!__atomic_load_n(&rtp_job.finished, __ATOMIC_ACQUIRE)) {
		usleep(10000);
		if (rtp.params.stats_period == 0)
			continue;
		rtp_counters_snap(&c1);
		if (rtp_tsc_us(c1.tsc - last) >= rtp.params.stats_period * 1e6) {
			rtp_stats_line(stdout, &c0, &c1);
			c0 = c1;
			last = c1.tsc;
		}
	}
	return job_finish();
}

int
rtp_start(const char *mode)
{
	return rtp_start_mode(mode, false);
}

int
rtp_set_idle(enum rp_idle_policy idle)
{
	int ret = rp_engine_set_idle(idle);

	if (ret == 0)	/* the run's thread reads it at its end */
		__atomic_store_n(&rtp.idle, idle, __ATOMIC_RELAXED);
	return ret;
}

static volatile bool rtp_quit_signal;

static void
quit_signal(int sig)
{
	(void)sig;
	rtp_quit_signal = true;
}

/* --server: the TCP port listened on, SIGINT and SIGTERM caught. */
static int
serve_listen(void)
{
	struct sigaction sa = { .sa_handler = quit_signal };
	int lfd = rtp_oob_listen(rtp.params.oob_port);

	if (lfd < 0) {
		fprintf(stderr, "--server: TCP port %u: %s\n",
			rtp.params.oob_port, strerror(-lfd));
		return lfd;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return lfd;
}

/* --server: one client at a time, until SIGINT or SIGTERM. */
static int
serve(int lfd)
{
	if (lfd < 0)
		return 1;
	rtp_unpin_thread();
	printf("%s: serving on TCP port %u\n", RTP_NAME, rtp.params.oob_port);
	fflush(stdout);
	while (!rtp_quit_signal) {
		int fd = rtp_oob_accept(lfd);

		if (fd > 0)
			rtp_serve_one(fd, &rtp_quit_signal);
	}
	close(lfd);
	return 0;
}

/*
 * --host: the socket is the one given, else RP_SERVE_DIR (or
 * $ROCEPMD_RUN_DIR) / the configuration's name without .ini, ".sock"
 * ("rocepmd.sock" with --port devices).
 */
static int
host_start(void)
{
	const char *dir = getenv("ROCEPMD_RUN_DIR");
	char path[108], name[64] = "rocepmd", err[256];
	int ret;

	if (rtp.params.host_socket != NULL) {
		snprintf(path, sizeof(path), "%s", rtp.params.host_socket);
	} else {
		if (rtp.params.config != NULL) {
			const char *b = strrchr(rtp.params.config, '/');

			snprintf(name, sizeof(name), "%s",
				 b != NULL ? b + 1 : rtp.params.config);
			name[strcspn(name, ".")] = '\0';
		}
		snprintf(path, sizeof(path), "%s/%s.sock",
			 dir != NULL && dir[0] != '\0' ? dir : RP_SERVE_DIR,
			 name);
	}
	/* Without --config: the defaults of [host] */
	if (rtp.params.config != NULL)
		rp_serve_quotas(&rtp.cfg.host);
	ret = rp_serve_start(path, rtp.params.host_mode, rtp.params.host_gid,
			     err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "--host: %s\n", err);
		return ret;
	}
	printf("%s: hosting %u device(s) on %s (telemetry %s/dpdk_telemetry.v2)\n",
	       RTP_NAME, rp_dev_count(), path, rte_eal_get_runtime_dir());
	fflush(stdout);
	return 0;
}

/* --host alone: serve until SIGINT or SIGTERM. */
static void
host_wait(void)
{
	struct sigaction sa = { .sa_handler = quit_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rtp_unpin_thread();
	while (!rtp_quit_signal)
		pause();
}

static void
rundir_atexit(void)
{
	rp_eal_rundir_remove();
}

/* EAL arguments: ours (before "--") or the configuration file's. */
static int
eal_args(int argc, char **argv, int *eal_argc, char ***eal_argv)
{
	static char *av[RP_EAL_MAX_ARGS + 1];
	static char buf[RTP_ARGBUF];
	char err[1024] = "";
	int n, ret;

	if (rtp.params.config == NULL) {
		*eal_argc = argc;
		*eal_argv = argv;
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "with --config, the EAL options come from its [eal] section: give none before --\n");
		return -EINVAL;
	}
	ret = rp_cfg_load(rtp.params.config, &rtp.cfg, err, sizeof(err));
	if (ret < 0) {
		fprintf(stderr, "%s\n", err[0] != '\0' ? err : strerror(-ret));
		return ret;
	}
	n = rp_cfg_eal_argv(&rtp.cfg, argv[0], av, RP_EAL_MAX_ARGS, buf,
			    sizeof(buf));
	if (n < 0) {
		fprintf(stderr, "%s: EAL arguments: %s\n", rtp.params.config,
			strerror(-n));
		return n;
	}
	av[n] = NULL;
	*eal_argc = n;
	*eal_argv = av;
	return 0;
}

/* The frames raw sends: those of the batch mode's verb, else SEND's. */
static enum rp_msg_kind
raw_kind(void)
{
	const struct rtp_mode *m = rtp.params.mode != NULL ?
		rtp_mode_find(rtp.params.mode) : NULL;

	return m != NULL ? m->kind : RP_MSG_SEND;
}

/*
 * --raw-only: the raw rows (one process, or a client) and exit, no engine
 * after them; a server has served its raw client.  1 if nothing was
 * measured.
 */
static int
raw_only_end(int lfd, bool served)
{
	int status = rtp_raw.valid ? 0 : 1;
	uint16_t p;

	if (lfd >= 0)
		close(lfd);
	/* Closed, not only stopped: af_xdp's PMD then takes its XDP program
	 * off the interface, which the next engine on it would find. */
	RTE_ETH_FOREACH_DEV(p)
		rte_eth_dev_close(p);
	if (!rtp.params.server) {
		rtp_report_header(rtp.out, rtp.params.format);
		rtp_report_raw(rtp.out, rtp.params.format);
		rtp_report_footer(rtp.out, rtp.params.format);
	} else {
		status = served ? 0 : 1;
	}
	if (rtp.out != stdout)
		fclose(rtp.out);
	rp_port_unlock();
	return status;
}

int
main(int argc, char **argv)
{
	char err[1024] = "";
	char **eal_argv;
	int eal_argc, sep, ret, lfd = -1;
	bool served = false;

	for (sep = 1; sep < argc; sep++)
		if (strcmp(argv[sep], "--") == 0)
			break;
	if (sep == argc) {
		fprintf(stderr, "missing '--' between the EAL options and the program's\n");
		rtp_usage(stderr);
		return 2;
	}
	ret = rtp_params_parse(argc - sep, argv + sep, &rtp.params);
	if (ret != 0)
		return ret > 0 ? 0 : 2;
	if (eal_args(sep, argv, &eal_argc, &eal_argv) < 0)
		return 2;
	if (rtp.params.config != NULL &&
	    rp_port_lock(&rtp.cfg, err, sizeof(err)) == -EBUSY) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	rtp.out = stdout;
	if (rtp.params.out != NULL && strcmp(rtp.params.out, "-") != 0) {
		rtp.out = fopen(rtp.params.out, "w");
		if (rtp.out == NULL) {
			fprintf(stderr, "%s: %s\n", rtp.params.out,
				strerror(errno));
			return 2;
		}
	}
	atexit(rundir_atexit);
	/* Before the EAL pins this thread: inline_us = auto's input. */
	rp_engine_app_cpus();
	ret = rte_eal_init(eal_argc, eal_argv);
	rp_eal_rundir_note();
	if (ret < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (rtp.params.config == NULL &&
	    rtp_params_config(&rtp.params, &rtp.cfg, rte_get_main_lcore(),
			      eal_argc, eal_argv) < 0)
		return 2;
	if (rtp.params.config != NULL && rtp.params.idle_set)
		rtp.cfg.idle = rtp.params.idle;
	if (rtp.params.config != NULL && rtp.params.inline_set)
		rtp.cfg.inline_us = rtp.params.inline_us;
	rtp.idle = rtp.cfg.idle;
	rtp_raw_last = rtp.params.raw_only;
	if (rtp.params.raw && rtp.cfg.nb_ports >= 2 &&
	    rtp_raw_measure(&rtp.cfg, &rtp.params.set, raw_kind()) < 0)
		fprintf(stderr, "raw limit not measured: ratios will be 0\n");
	/*
	 * Two processes, one port each: raw only when asked for (--raw) at
	 * both ends, since the server then waits for a --raw client before
	 * its engine starts.
	 */
	if (rtp.params.server)
		lfd = serve_listen();
	if (rtp.params.raw && rtp.params.raw_set && rtp.cfg.nb_ports == 1 &&
	    rtp.params.server && lfd >= 0) {
		printf("%s: waiting for a --raw client on TCP port %u\n",
		       RTP_NAME, rtp.params.oob_port);
		fflush(stdout);
		served = rtp_raw_serve(&rtp.cfg, lfd, &rtp_quit_signal) == 0;
		if (!served)
			fprintf(stderr, "raw: not served\n");
	}
	if (rtp.params.raw && rtp.params.raw_set && rtp.cfg.nb_ports == 1 &&
	    rtp.params.client != NULL &&
	    rtp_raw_client(&rtp.cfg, &rtp.params.set, raw_kind(),
			   rtp.params.client, rtp.params.oob_port) < 0)
		fprintf(stderr, "raw limit not measured: ratios will be 0\n");
	if (rtp.params.raw_only)
		return raw_only_end(lfd, served);
	ret = rp_engine_start(&rtp.cfg);
	if (ret < 0) {
		fprintf(stderr, "cannot start the engine: %s\n", strerror(-ret));
		return 1;
	}
	ret = rocepmd_verbs_attach();
	if (ret < 0) {
		fprintf(stderr, "verbs: cannot attach to the engine: %s\n",
			strerror(-ret));
		rp_engine_stop();
		return 1;
	}
	if (rtp.params.host && host_start() < 0) {
		rp_engine_stop();
		rp_port_unlock();
		return 1;
	}
	if (rtp.params.host && rtp.params.mode == NULL &&
	    !rtp.params.interactive && rtp.params.cmdline_file == NULL) {
		host_wait();
		rp_serve_stop();
		rp_engine_stop();
		rp_port_unlock();
		return 0;
	}
	if (rtp.params.server) {
		rtp.status = serve(lfd);
		rp_engine_stop();
		rp_port_unlock();
		return rtp.status;
	}
	rtp_report_header(rtp.out, rtp.params.format);
	rtp_report_raw(rtp.out, rtp.params.format);
	if (rtp.params.mode != NULL)
		rtp_start(rtp.params.mode);
	if (rtp.params.cmdline_file != NULL &&
	    rtp_cmdline_file(rtp.params.cmdline_file) < 0)
		rtp.status = rtp.status != 0 ? rtp.status : 1;
	if (rtp.params.interactive && !rtp.quit)
		rtp_cmdline_interactive();
	rtp_stop();
	rtp_report_footer(rtp.out, rtp.params.format);
	if (rtp.out != stdout)
		fclose(rtp.out);
	rp_serve_stop();
	rp_engine_stop();
	rp_port_unlock();
	/*
	 * No rte_eal_cleanup(), as the verbs shim at exit: DPDK 22.11 may
	 * still run a memif callback in its interrupt thread.
	 */
	return rtp.status;
}
