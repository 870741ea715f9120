/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL bootstrap.
 *
 * The first verbs call that needs devices loads the configuration named by
 * ROCEPMD_CONFIG, then starts a private thread that initialises the EAL and
 * the engine.  rte_eal_init() pins the thread that calls it to the main
 * lcore, so that is never an application thread; the thread then parks as
 * the main lcore until the process exits, when an atexit handler has it
 * stop the engine and clean the EAL up.
 *
 * Every failure leaves the process with zero rocepmd devices and a logged
 * reason; the application sees an empty device list, or none at all
 * (ibv_get_device_list() fails with EBUSY) when another process owns a
 * port of the configuration: the ports are claimed (rp_port_lock()) before
 * rte_eal_init() opens them, and given up when the engine has stopped.
 *
 * The EAL's runtime directory (one per --file-prefix) is removed by a
 * second exit handler, registered before rte_eal_init() so that it runs
 * after the EAL's own handlers have removed their files.
 *
 * With ROCEPMD_ATTACH set, none of this: the process attaches to the host
 * serving that socket (shim_attach.c) and loads no configuration, claims
 * no port and initialises no DPDK.  A failure to attach is, as above,
 * zero devices and a logged reason.
 */

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "shim.h"

RTE_LOG_REGISTER_SUFFIX(shim_logtype, shim, NOTICE);

#define SHIM_BOOT_ARGBUF	8192

struct shim_boot_state {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	pid_t pid;			/* process that started the thread */
	bool thread_up;			/* thread started and not joined */
	bool done;			/* result is known */
	bool stop;			/* atexit: stop the engine and return */
	int result;			/* 0, or a negative errno */
	/* Kept for the life of the EAL, which may hold on to argv. */
	struct rp_config cfg;
	char *argv[RP_EAL_MAX_ARGS + 1];
	char argbuf[SHIM_BOOT_ARGBUF];
};

static struct shim_boot_state shim_boot_state = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

/* Arena 0, this process's own (not the device region every attached
 * process maps): the engine's size, not a copy in shared memory. */
static uint64_t
shim_boot_objects(unsigned int dev, uint8_t **base)
{
	uint64_t size;

	*base = rp_dev_own_arena(dev, &size);
	return size;
}

static struct rp_async_ctl *
shim_boot_async(unsigned int dev)
{
	uint64_t size;
	struct rp_arena_ctl *a = rp_dev_own_arena(dev, &size);

	return a != NULL ? &a->async : NULL;
}

/* The engine of this process, booted here or by the program itself. */
const struct shim_engine_ops shim_engine_embedded_ops = {
	.name = "embedded",
	.dev_count = rp_dev_count,
	.dev_ctl = rp_dev_ctl,
	.objects = shim_boot_objects,
	.async = shim_boot_async,
	.ctrl_call = rp_ctrl_call,
	.doorbell = rp_dev_doorbell,
	.assist = rp_engine_assist,
	.unassist = rp_engine_unassist,
};

const struct shim_engine_ops *shim_engine = &shim_engine_embedded_ops;

static pthread_once_t shim_boot_once = PTHREAD_ONCE_INIT;
static int shim_boot_status = -ENODEV;	/* written once, under the once */
static bool shim_running;		/* engine usable; atomic */

bool
shim_engine_running(void)
{
	return rp_load_acquire(&shim_running);
}

static void
shim_boot_report(struct shim_boot_state *b, int result)
{
	pthread_mutex_lock(&b->lock);
	b->result = result;
	b->done = true;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
}

static void *
shim_boot_main(void *arg)
{
	struct shim_boot_state *b = arg;
	int argc;
	int ret;

	argc = rp_cfg_eal_argv(&b->cfg, "rocepmd", b->argv, RP_EAL_MAX_ARGS,
			       b->argbuf, sizeof(b->argbuf));
	if (argc < 0) {
		SHIM_LOG(ERR, "%s: cannot build the EAL arguments: %s",
			 b->cfg.path, strerror(-argc));
		shim_boot_report(b, argc);
		return NULL;
	}
	b->argv[argc] = NULL;

	/* The program's CPUs, which this thread inherited, for
	 * inline_us = auto; then the EAL pins it to the main lcore. */
	rp_engine_app_cpus();
	ret = rte_eal_init(argc, b->argv);
	/* Even a failed init may have made the directory. */
	rp_eal_rundir_note();
	if (ret < 0) {
		ret = rte_errno > 0 ? -rte_errno : -EIO;
		SHIM_LOG(ERR, "%s: rte_eal_init failed: %s", b->cfg.path,
			 rte_strerror(-ret));
		shim_boot_report(b, ret);
		return NULL;
	}

	ret = rp_engine_start(&b->cfg);
	if (ret < 0) {
		SHIM_LOG(ERR, "%s: cannot start the engine: %s", b->cfg.path,
			 strerror(-ret));
		rte_eal_cleanup();
		shim_boot_report(b, ret);
		return NULL;
	}

	shim_boot_report(b, 0);

	/* Park as the main lcore until the process exits. */
	pthread_mutex_lock(&b->lock);
	while (!b->stop)
		pthread_cond_wait(&b->cond, &b->lock);
	pthread_mutex_unlock(&b->lock);

	rp_engine_stop();
	/*
	 * No rte_eal_cleanup() at exit: DPDK 22.11 unmaps its memory without
	 * stopping the interrupt thread, which may still be in a PMD callback
	 * (memif's control channel) and crash the exiting process.  The
	 * process is going away; the kernel reclaims the memory.
	 */
	return NULL;
}

/*
 * A forked child has the parent's objects but none of its threads: its
 * verbs calls must fail (ENODEV) rather than wait for an engine that is
 * not there.
 */
static void
shim_boot_atfork_child(void)
{
	rp_store_release(&shim_running, false);
}

/*
 * An attached child also drops its parent's connection: the host serves
 * the address space that attached, and a child is another (rp_mem.c).
 */
static void
shim_attach_atfork_child(void)
{
	shim_boot_atfork_child();
	shim_attach_forked();
}

static void
shim_boot_atexit(void)
{
	struct shim_boot_state *b = &shim_boot_state;

	/* A forked child inherits the handler but not the thread. */
	if (getpid() != b->pid)
		return;

	pthread_mutex_lock(&b->lock);
	if (!b->thread_up) {
		pthread_mutex_unlock(&b->lock);
		return;
	}
	rp_store_release(&shim_running, false);
	b->stop = true;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);

	pthread_join(b->thread, NULL);
	b->thread_up = false;
	rp_port_unlock();
}

/*
 * Registered before rte_eal_init(), so it runs after the handlers the EAL
 * registers (telemetry removes its socket in one): then the runtime
 * directory is empty and can go.
 */
static void
shim_boot_rundir_atexit(void)
{
	rp_eal_rundir_remove();
}

/* Start the bootstrap thread with every signal blocked, for the EAL's. */
static int
shim_boot_thread_start(struct shim_boot_state *b)
{
	sigset_t all;
	sigset_t old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&b->thread, NULL, shim_boot_main, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret != 0)
		return -ret;
	pthread_setname_np(b->thread, "rocepmd-boot");
	return 0;
}

/* ROCEPMD_ATTACH: the devices of the host serving that socket. */
static void
shim_boot_attached(const char *sock)
{
	const char *config = getenv("ROCEPMD_CONFIG");

	if (config != NULL && config[0] != '\0')
		SHIM_LOG(WARNING, "ROCEPMD_ATTACH is set: ROCEPMD_CONFIG (%s) is ignored",
			 config);
	if (shim_attach_open(sock) < 0) {
		shim_boot_status = -ENODEV;
		return;
	}
	/* As embedded: the host takes requests from this process only,
	 * and a forked child holds no connection of its parent's. */
	if (pthread_atfork(NULL, NULL, shim_attach_atfork_child) != 0)
		SHIM_LOG(WARNING, "cannot register the fork handler");
	shim_engine = &shim_engine_attached_ops;
	rp_store_release(&shim_running, true);
	shim_boot_status = shim_dev_probe();
}

static void
shim_boot_once_fn(void)
{
	struct shim_boot_state *b = &shim_boot_state;
	const char *path;
	char err[1024];
	int ret;

	/* Before anything logs: never write to the application's stdout. */
	rte_openlog_stream(stderr);

	path = getenv("ROCEPMD_ATTACH");
	if (path != NULL && path[0] != '\0') {
		shim_boot_attached(path);
		return;
	}

	path = getenv("ROCEPMD_CONFIG");
	if (path == NULL || path[0] == '\0') {
		SHIM_LOG(ERR, "ROCEPMD_CONFIG is not set, nor ROCEPMD_ATTACH: no rocepmd device (start the program with rocepmd-run)");
		shim_boot_status = -ENODEV;
		return;
	}

	err[0] = '\0';
	ret = rp_cfg_load(path, &b->cfg, err, sizeof(err));
	if (ret < 0) {
		SHIM_LOG(ERR, "%s", err[0] != '\0' ? err : strerror(-ret));
		shim_boot_status = -ENODEV;
		return;
	}

	/* Before the EAL opens the ports: a second engine must not. */
	ret = rp_port_lock(&b->cfg, err, sizeof(err));
	if (ret == -EBUSY) {
		SHIM_LOG(ERR, "%s", err);
		shim_boot_status = -EBUSY;
		return;
	}
	if (ret < 0)
		SHIM_LOG(WARNING, "%s: a second engine on the port would not be refused",
			 err);

	b->pid = getpid();
	if (atexit(shim_boot_rundir_atexit) != 0)
		SHIM_LOG(WARNING, "cannot register the exit handler: the EAL runtime directory will be left behind");
	ret = shim_boot_thread_start(b);
	if (ret < 0) {
		SHIM_LOG(ERR, "cannot start the bootstrap thread: %s",
			 strerror(-ret));
		rp_port_unlock();
		shim_boot_status = -ENODEV;
		return;
	}

	pthread_mutex_lock(&b->lock);
	b->thread_up = true;
	while (!b->done)
		pthread_cond_wait(&b->cond, &b->lock);
	ret = b->result;
	pthread_mutex_unlock(&b->lock);

	if (ret < 0) {
		pthread_join(b->thread, NULL);
		b->thread_up = false;
		rp_port_unlock();
		shim_boot_status = -ENODEV;
		return;
	}

	if (atexit(shim_boot_atexit) != 0)
		SHIM_LOG(WARNING, "cannot register the exit handler: the engine will not be stopped at exit");
	if (pthread_atfork(NULL, NULL, shim_boot_atfork_child) != 0)
		SHIM_LOG(WARNING, "cannot register the fork handler");

	rp_store_release(&shim_running, true);
	shim_boot_status = shim_dev_probe();
}

/*
 * The program started the engine itself (rocepmd-testpmd: rte_eal_init(),
 * then rp_engine_start()): take its devices, boot nothing.  Runs in place
 * of shim_boot_once_fn() when called before any verbs call.
 */
static void
shim_boot_attach_fn(void)
{
	if (rp_dev_count() == 0) {
		SHIM_LOG(ERR, "rocepmd_verbs_attach: the engine has no device (call rp_engine_start first)");
		shim_boot_status = -ENODEV;
		return;
	}
	rp_store_release(&shim_running, true);
	shim_boot_status = shim_dev_probe();
}

int
shim_boot_attach(void)
{
	pthread_once(&shim_boot_once, shim_boot_attach_fn);
	/*
	 * Too late if a verbs call booted the engine from ROCEPMD_CONFIG or
	 * attached to a host.
	 */
	return shim_boot_state.thread_up ||
		shim_engine != &shim_engine_embedded_ops ? -EALREADY :
		shim_boot_status;
}

/*
 * Bring the engine up once per process.
 * @return 0 when devices may exist, or a negative errno: -EBUSY when
 *	another process owns a port of the configuration
 */
int
shim_boot(void)
{
	pthread_once(&shim_boot_once, shim_boot_once_fn);
	return shim_boot_status;
}
