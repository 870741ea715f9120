/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The attach server: the devices of this engine, served to other processes
 * on a UNIX socket (protocol in rp_attach.h).
 *
 * One thread of its own (not an lcore) waits on the listening socket and
 * on every client.  It runs a client's control requests through
 * rp_ctrl_call(), as the shim of an embedded engine does, after checking
 * that every object a request names was created by that client: the
 * server keeps the list of each client's objects, and a PD, MR, CQ, QP,
 * SRQ, AH or channel of another process is EPERM.  No request carries a
 * descriptor: the server makes each channel's and async registration's
 * socket pair itself, the engine signals the host's end (non-blocking, a
 * description no client holds) and the client gets the other; each
 * client's wake-up eventfd is its own (its arena's), never the lcore's.  An MR's
 * memory is reached through the descriptor of its address space that the
 * client opened (/proc/self/mem) and handed over with its HELLO
 * (rp_mem.c): never through a PID, which outlives an exec and is reused
 * after an exit.  A client whose address space is gone (it exec'd with
 * the socket kept open) is dropped at the next liveness check.
 *
 * When a client's connection ends, however the process ended, the server
 * destroys its objects, QPs first (so no packet is sent or accepted for
 * them and no copy touches the process any more) and PDs last, and closes
 * its copies of the client's eventfds.
 *
 * Each client gets an arena of its own on every device (rp_region.c),
 * where its objects' rings live and no other process can write; the
 * device region reaches it sealed against writing.
 *
 * A client's RDMA CM has a GSI agent of its own on each device (one at
 * most; rp_gsi.c shares QP 1 between the agents); the service IDs it
 * claims and the wills it leaves are named through that agent's QP only.
 *
 * No client takes more than its share (rp_serve_quota.c): of each device
 * table, per process and per uid (EDQUOT), of the server's slots (a
 * HELLO deadline, a limit on connections waiting for theirs, processes
 * per uid).  Every descriptor a message brings is closed here or kept
 * with the object it made, whatever the message.
 *
 * This file holds the socket, the server's thread and the API; one
 * client's connection and messages are rp_serve_client.c, its objects and
 * the checks of its requests rp_serve_check.c (all in rp_service.h).
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "rocepmd.h"
#include "rp_attach.h"
#include "rp_log.h"
#include "rp_engine.h"
#include "rp_service.h"

struct rp_srv rp_srv = {
	.listen_fd = -1,
	.stop_fd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

static void
srv_accept(void)
{
	int fd = accept4(rp_srv.listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd >= 0)
		rp_srv_accept_fd(fd);
}

/*
 * A client whose address space is gone while its socket lives on (it
 * exec'd with the socket kept open, or exited while a child holds it):
 * its memory reaches nothing already (rp_mem.c), and here it is dropped,
 * its QPs destroyed, within SRV_LIVENESS_MS.
 */
#define SRV_LIVENESS_MS	100

static void
srv_liveness(void)
{
	static uint64_t last;
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
	if (now - last < SRV_LIVENESS_MS)
		return;
	last = now;
	for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++) {
		struct srv_client *c = &rp_srv.clients[i];
		uint64_t v;

		if (c->fd < 0 || c->mem_fd < 0 ||
		    pread(c->mem_fd, &v, sizeof(v), (off_t)c->probe_addr) != 0)
			continue;
		RP_LOG(NOTICE, "client %u (pid %d, %s): its address space is gone (exec or exit) while its socket lives on",
		       c->id, (int)c->cred.pid, c->comm);
		rp_srv.gone++;
		rp_srv_client_close(c);
	}
}

/* The poll's limit: the next HELLO deadline, or the liveness check. */
static int
srv_timeout_ms(void)
{
	int t = rp_sq_timeout_ms();

	for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
		if (rp_srv.clients[i].fd >= 0 && rp_srv.clients[i].mem_fd >= 0)
			return t < 0 || t > SRV_LIVENESS_MS ?
				SRV_LIVENESS_MS : t;
	return t;
}

static void *
srv_main(void *arg __rte_unused)
{
	struct pollfd pfd[2 + SRV_MAX_CLIENTS];
	struct srv_client *who[2 + SRV_MAX_CLIENTS];

	for (;;) {
		unsigned int n = 0;

		pfd[n++] = (struct pollfd){ .fd = rp_srv.stop_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = rp_srv.listen_fd, .events = POLLIN };
		for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
			if (rp_srv.clients[i].fd >= 0) {
				who[n] = &rp_srv.clients[i];
				pfd[n++] = (struct pollfd){
					.fd = rp_srv.clients[i].fd,
					.events = POLLIN,
				};
			}
		if (poll(pfd, n, srv_timeout_ms()) < 0) {
			if (errno == EINTR)
				continue;
			RP_LOG(ERR, "attach server: poll: %s", strerror(errno));
			break;
		}
		if (pfd[0].revents != 0)
			break;
		for (unsigned int i = 2; i < n; i++) {
			bool ok;

			if (pfd[i].revents == 0)
				continue;
			/* Its objects change: rp_serve_clients() waits. */
			pthread_mutex_lock(&rp_srv.lock);
			ok = rp_srv_client_input(who[i]);
			pthread_mutex_unlock(&rp_srv.lock);
			if (!ok)
				rp_srv_client_close(who[i]);
		}
		if (pfd[1].revents & POLLIN)
			srv_accept();
		srv_liveness();
		/* Slots are for clients: no HELLO in time, no slot. */
		for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
			if (rp_srv.clients[i].fd >= 0 &&
			    rp_sq_expired(&rp_srv.clients[i].quota)) {
				rp_srv.refused++;
				rp_srv_client_close(&rp_srv.clients[i]);
			}
	}
	for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
		if (rp_srv.clients[i].fd >= 0)
			rp_srv_client_close(&rp_srv.clients[i]);
	return NULL;
}

/* ---------------------------------------------------------------- API */

/* A socket file at path that nobody serves any more is removed. */
static int
srv_stale(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, ret;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	ret = connect(fd, (struct sockaddr *)&a, sizeof(a));
	close(fd);
	if (ret == 0)
		return -EADDRINUSE;
	return unlink(path) == 0 ? 0 : -errno;
}

int
rp_serve_start(const char *path, unsigned int mode, int gid, char *err,
	       size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dir[sizeof(a.sun_path)];
	char *slash;
	int ret;

	if (rp_srv.running) {
		snprintf(err, errlen, "already serving %s", rp_srv.path);
		return -EBUSY;
	}
	if (rp_nr_devs == 0) {
		snprintf(err, errlen, "no device to serve");
		return -ENODEV;
	}
	if (path == NULL || path[0] != '/' ||
	    strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "socket path must be absolute and under %zu bytes",
			 sizeof(a.sun_path));
		return -EINVAL;
	}
	/* Its directory (/run/rocepmd by default) may not exist yet. */
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "%s: %s", dir, strerror(errno));
			return -errno;
		}
	}
	ret = srv_stale(path);
	if (ret < 0) {
		snprintf(err, errlen, "%s: %s", path, ret == -EADDRINUSE ?
			 "another host serves this socket" : ret == -EEXIST ?
			 "exists and is not a socket" : strerror(-ret));
		return ret;
	}
	rp_srv.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	rp_srv.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (rp_srv.listen_fd < 0 || rp_srv.stop_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto fail;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (bind(rp_srv.listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    chmod(path, mode) != 0 ||
	    (gid >= 0 && chown(path, (uid_t)-1, (gid_t)gid) != 0) ||
	    listen(rp_srv.listen_fd, 16) != 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(path);
		goto fail;
	}
	snprintf(rp_srv.path, sizeof(rp_srv.path), "%s", path);
	for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
		rp_srv.clients[i].fd = rp_srv.clients[i].mem_fd = -1;
	ret = -pthread_create(&rp_srv.thread, NULL, srv_main, NULL);
	if (ret != 0) {
		snprintf(err, errlen, "thread: %s", strerror(-ret));
		unlink(path);
		goto fail;
	}
	rp_srv.running = true;
	RP_LOG(INFO, "serving %u device(s) on %s (mode %04o)", rp_nr_devs,
	       path, mode);
	return 0;

fail:
	if (rp_srv.listen_fd >= 0)
		close(rp_srv.listen_fd);
	if (rp_srv.stop_fd >= 0)
		close(rp_srv.stop_fd);
	rp_srv.listen_fd = rp_srv.stop_fd = -1;
	return ret;
}

void
rp_serve_stop(void)
{
	const uint64_t one = 1;

	if (!rp_srv.running)
		return;
	if (write(rp_srv.stop_fd, &one, sizeof(one)) != sizeof(one))
		RP_LOG(ERR, "attach server: cannot stop: %s", strerror(errno));
	pthread_join(rp_srv.thread, NULL);
	unlink(rp_srv.path);
	close(rp_srv.listen_fd);
	close(rp_srv.stop_fd);
	rp_srv.listen_fd = rp_srv.stop_fd = -1;
	rp_srv.running = false;
}

int
rp_serve_clients(struct rp_serve_client *out, unsigned int n)
{
	unsigned int nr = 0;

	pthread_mutex_lock(&rp_srv.lock);
	for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++) {
		const struct srv_client *c = &rp_srv.clients[i];

		if (!rp_srv.running || c->fd < 0)
			continue;
		if (nr < n) {
			struct rp_serve_client *o = &out[nr];

			memset(o, 0, sizeof(*o));
			o->id = c->id;
			o->pid = c->cred.pid;
			o->uid = c->cred.uid;
			o->requests = c->requests;
			snprintf(o->comm, sizeof(o->comm), "%s", c->comm);
			for (uint32_t j = 0; j < c->nr_obj; j++) {
				const struct srv_obj *b = &c->obj[j];

				o->objects++;
				if (b->kind == SRV_QP)
					o->qps++;
				else if (b->kind == SRV_MR)
					o->mrs++;
			}
		}
		nr++;
	}
	pthread_mutex_unlock(&rp_srv.lock);
	return (int)nr;
}

/* ---------------------------------------------------------- telemetry */

static int
objects_cmd(const char *cmd __rte_unused, const char *params,
	    struct rte_tel_data *d)
{
	unsigned int id = params != NULL ? (unsigned int)atoi(params) : 0;
	struct rp_ctrl_slot s;
	const struct rp_ctrl_objects *o = &s.u.objects;

	memset(&s, 0, sizeof(s));
	s.op = RP_CTRL_OBJECTS;
	if (id >= rp_nr_devs || rp_ctrl_call(id, &s) != 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "pds", o->pds);
	rte_tel_data_add_dict_u64(d, "mrs", o->mrs);
	rte_tel_data_add_dict_u64(d, "cqs", o->cqs);
	rte_tel_data_add_dict_u64(d, "qps", o->qps);
	rte_tel_data_add_dict_u64(d, "srqs", o->srqs);
	rte_tel_data_add_dict_u64(d, "ahs", o->ahs);
	rte_tel_data_add_dict_u64(d, "chans", o->chans);
	rte_tel_data_add_dict_u64(d, "async_fds", o->async_fds);
	rte_tel_data_add_dict_u64(d, "region_pages", o->region_pages);
	rte_tel_data_add_dict_u64(d, "arenas", o->arenas);
	return 0;
}

static int
clients_cmd(const char *cmd __rte_unused, const char *params __rte_unused,
	    struct rte_tel_data *d)
{
	struct rp_serve_client c[SRV_MAX_CLIENTS];
	int n = rp_serve_clients(c, RTE_DIM(c));

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "attached", (uint64_t)n);
	rte_tel_data_add_dict_u64(d, "attached_total", rp_srv.attached_total);
	rte_tel_data_add_dict_u64(d, "refused", rp_srv.refused);
	rte_tel_data_add_dict_u64(d, "address_space_gone", rp_srv.gone);
	for (int i = 0; i < n && i < (int)RTE_DIM(c); i++) {
		struct rte_tel_data *e = rte_tel_data_alloc();
		char key[32];

		if (e == NULL)
			return -ENOMEM;
		rte_tel_data_start_dict(e);
		rte_tel_data_add_dict_int(e, "pid", c[i].pid);
		rte_tel_data_add_dict_string(e, "comm", c[i].comm);
		rte_tel_data_add_dict_u64(e, "objects", c[i].objects);
		rte_tel_data_add_dict_u64(e, "qps", c[i].qps);
		rte_tel_data_add_dict_u64(e, "mrs", c[i].mrs);
		rte_tel_data_add_dict_u64(e, "requests", c[i].requests);
		snprintf(key, sizeof(key), "client%u", c[i].id);
		rte_tel_data_add_dict_container(d, key, e, 0);
	}
	return 0;
}

RTE_INIT(rp_serve_telemetry)
{
	rte_telemetry_register_cmd("/rocepmd/objects", objects_cmd,
				   "Objects a device holds. Parameters: device index");
	rte_telemetry_register_cmd("/rocepmd/clients", clients_cmd,
				   "Processes attached to the devices (--host)");
}

#ifdef RP_SERVE_FUZZ
/*
 * The attach fuzzer's way in (test/fuzz/fuzz_attach.c), on its own
 * thread, no server thread running: a connected socket served as one
 * client, message by message, as srv_main would.
 */
int rp_serve_fuzz_open(int fd);
bool rp_serve_fuzz_input(void);
void rp_serve_fuzz_close(void);

int
rp_serve_fuzz_open(int fd)
{
	static bool init;

	if (!init)	/* what rp_serve_start() does */
		for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
			rp_srv.clients[i].fd = -1;
	init = true;
	rp_srv_accept_fd(fd);
	return rp_srv.clients[0].fd == fd ? 0 : -EAGAIN;
}

bool
rp_serve_fuzz_input(void)
{
	return rp_srv.clients[0].fd >= 0 && rp_srv_client_input(&rp_srv.clients[0]);
}

void
rp_serve_fuzz_close(void)
{
	if (rp_srv.clients[0].fd >= 0)
		rp_srv_client_close(&rp_srv.clients[0]);
}
#endif
