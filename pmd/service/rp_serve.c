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
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_telemetry.h>

#include "rocepmd.h"
#include "rp_attach.h"
#include "rp_log.h"
#include "rp_engine.h"
#include "rp_serve_quota.h"

#define SRV_MAX_CLIENTS	64u

/* Object kinds a client can own, in the order they are destroyed. */
enum srv_kind {
	SRV_QP = 0,
	SRV_SRQ,
	SRV_MW,
	SRV_MR,
	SRV_AH,
	SRV_CQ,
	SRV_CHAN,
	SRV_ASYNC,
	SRV_PD,
	SRV_KINDS,
};

/* Per kind: its name, and the request that destroys one (its number at
 * `id` in the slot). */
#define SRV_ID(f)	offsetof(struct rp_ctrl_slot, u.f)
static const struct {
	const char *name;
	uint32_t op;
	uint32_t id;
} srv_kind[SRV_KINDS] = {
	[SRV_QP] = { "qp", RP_CTRL_QP_DESTROY, SRV_ID(qp.qpn) },
	[SRV_SRQ] = { "srq", RP_CTRL_SRQ_DESTROY, SRV_ID(srq.srqn) },
	[SRV_MW] = { "mw", RP_CTRL_MW_DEALLOC, SRV_ID(mw.rkey) },
	[SRV_MR] = { "mr", RP_CTRL_MR_DEREG, SRV_ID(mr.lkey) },
	[SRV_AH] = { "ah", RP_CTRL_AH_DESTROY, SRV_ID(ah.ahn) },
	[SRV_CQ] = { "cq", RP_CTRL_CQ_DESTROY, SRV_ID(cq.cqn) },
	[SRV_CHAN] = { "chan", RP_CTRL_CHAN_DESTROY, SRV_ID(chan.chn) },
	/* An async registration is named by the server's fd. */
	[SRV_ASYNC] = { "async", RP_CTRL_ASYNC_UNREG, SRV_ID(async.fd) },
	[SRV_PD] = { "pd", RP_CTRL_PD_FREE, SRV_ID(pd.pdn) },
};

struct srv_obj {
	uint8_t kind;			/* enum srv_kind */
	uint8_t dev;
	uint32_t id;			/* QPN, lkey, CQN...; ASYNC: its id */
	int fd;				/* CHAN, ASYNC: the server's copy */
};

struct srv_client {
	int fd;				/* connection, -1: slot free */
	uint32_t id;
	struct ucred cred;
	bool welcomed;
	uint32_t async_ids;		/* the last async registration's id */
	int mem_fd;			/* its address space, -1: none yet */
	uint64_t probe_addr;		/* 8 bytes of it, for liveness */
	char comm[16];
	struct srv_obj *obj;
	uint32_t nr_obj, cap_obj;
	uint64_t requests;
	uint32_t arena[RP_ATTACH_MAX_DEVS];	/* its arena per device */
	uint32_t gsi[RP_ATTACH_MAX_DEVS];	/* its GSI agent, 0: none */
	struct rp_sq_client quota;		/* what it holds (quotas) */
};

static struct {
	pthread_t thread;
	bool running;
	int listen_fd;
	int stop_fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	pthread_mutex_t lock;		/* clients[] against rp_serve_clients */
	struct srv_client clients[SRV_MAX_CLIENTS];
	uint32_t next_id;
	uint64_t attached_total;
	uint64_t refused;
	uint64_t gone;			/* address space gone (srv_liveness) */
} srv = {
	.listen_fd = -1,
	.stop_fd = -1,
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

/* ------------------------------------------------------------ objects */

static struct srv_obj *
obj_find(struct srv_client *c, enum srv_kind kind, uint32_t dev, uint32_t id)
{
	for (uint32_t i = 0; i < c->nr_obj; i++)
		if (c->obj[i].kind == kind && c->obj[i].dev == dev &&
		    c->obj[i].id == id)
			return &c->obj[i];
	return NULL;
}

static bool
owns(struct srv_client *c, enum srv_kind kind, uint32_t dev, uint32_t id)
{
	return obj_find(c, kind, dev, id) != NULL;
}

static int
obj_add(struct srv_client *c, enum srv_kind kind, uint32_t dev, uint32_t id,
	int fd)
{
	if (c->nr_obj == c->cap_obj) {
		uint32_t cap = c->cap_obj ? c->cap_obj * 2 : 64;
		struct srv_obj *o = realloc(c->obj, cap * sizeof(*o));

		if (o == NULL)
			return -ENOMEM;
		c->obj = o;
		c->cap_obj = cap;
	}
	c->obj[c->nr_obj++] = (struct srv_obj){
		.kind = kind, .dev = dev, .id = id, .fd = fd,
	};
	return 0;
}

static void
obj_del(struct srv_client *c, struct srv_obj *o)
{
	if (o->fd >= 0)
		close(o->fd);
	*o = c->obj[--c->nr_obj];
}

/* ----------------------------------------------------------- requests */

/*
 * Whether every object `s` names is the client's; fixes what the server
 * decides itself (the memory's PID).  0 or a negative errno.
 */
static int
ctrl_check(struct srv_client *c, uint32_t d, struct rp_ctrl_slot *s)
{
	switch (s->op) {
	case RP_CTRL_NOP:
	case RP_CTRL_PD_ALLOC:
		return 0;
	case RP_CTRL_PD_FREE:
		return owns(c, SRV_PD, d, s->u.pd.pdn) ? 0 : -EPERM;
	case RP_CTRL_MR_REG:
		s->u.mr.mem = c->mem_fd + 1;
		return owns(c, SRV_PD, d, s->u.mr.pdn) ? 0 : -EPERM;
	case RP_CTRL_MR_REREG:
		s->u.mr.mem = c->mem_fd + 1;
		if ((s->u.mr.flags & IBV_REREG_MR_CHANGE_PD) &&
		    !owns(c, SRV_PD, d, s->u.mr.pdn))
			return -EPERM;
		/* fall through */
	case RP_CTRL_MR_DEREG:
		return owns(c, SRV_MR, d, s->u.mr.lkey) ? 0 : -EPERM;
	case RP_CTRL_MW_ALLOC:
		return owns(c, SRV_PD, d, s->u.mw.pdn) ? 0 : -EPERM;
	case RP_CTRL_MW_DEALLOC:
		return owns(c, SRV_MW, d, s->u.mw.rkey) ? 0 : -EPERM;
	case RP_CTRL_CQ_CREATE:
		return s->u.cq.chan < 0 ||
			owns(c, SRV_CHAN, d, (uint32_t)s->u.cq.chan) ? 0 :
			-EPERM;
	case RP_CTRL_CQ_DESTROY:
	case RP_CTRL_CQ_RESIZE:
		return owns(c, SRV_CQ, d, s->u.cq.cqn) ? 0 : -EPERM;
	case RP_CTRL_QP_CREATE: {
		const struct rp_ctrl_qp_create *q = &s->u.qp_create;

		/* One GSI agent (its RDMA CM) per process and device. */
		if ((q->flags & RP_QP_F_GSI) && c->gsi[d] != 0)
			return -EBUSY;
		if (!owns(c, SRV_PD, d, q->pdn) ||
		    !owns(c, SRV_CQ, d, q->send_cqn) ||
		    !owns(c, SRV_CQ, d, q->recv_cqn) ||
		    (q->srqn >= 0 && !owns(c, SRV_SRQ, d, (uint32_t)q->srqn)))
			return -EPERM;
		return 0;
	}
	case RP_CTRL_QP_MODIFY:
	case RP_CTRL_QP_QUERY:
	case RP_CTRL_QP_DESTROY:
		return owns(c, SRV_QP, d, s->u.qp.qpn) ? 0 : -EPERM;
	case RP_CTRL_MCAST_ATTACH:
	case RP_CTRL_MCAST_DETACH:
		return owns(c, SRV_QP, d, s->u.mcast.qpn) ? 0 : -EPERM;
	case RP_CTRL_GSI_BIND:
		return s->u.gsi_bind.qpn != 0 &&
			s->u.gsi_bind.qpn == c->gsi[d] ? 0 : -EPERM;
	case RP_CTRL_GSI_WILL:
		return s->u.gsi_will.qpn != 0 &&
			s->u.gsi_will.qpn == c->gsi[d] ? 0 : -EPERM;
	case RP_CTRL_AH_CREATE:
		return owns(c, SRV_PD, d, s->u.ah.pdn) ? 0 : -EPERM;
	case RP_CTRL_AH_DESTROY:
		return owns(c, SRV_AH, d, s->u.ah.ahn) ? 0 : -EPERM;
	case RP_CTRL_CHAN_CREATE:
	case RP_CTRL_ASYNC_REG:
		return 0;	/* the fd is checked by the caller */
	case RP_CTRL_CHAN_DESTROY:
		return owns(c, SRV_CHAN, d, s->u.chan.chn) ? 0 : -EPERM;
	case RP_CTRL_ASYNC_UNREG:
		return owns(c, SRV_ASYNC, d, s->u.async.id) ? 0 : -EPERM;
	case RP_CTRL_SRQ_CREATE:
		if (!owns(c, SRV_PD, d, s->u.srq.pdn))
			return -EPERM;
		return s->u.srq.cqn < 0 ||
			owns(c, SRV_CQ, d, (uint32_t)s->u.srq.cqn) ? 0 :
			-EPERM;
	case RP_CTRL_SRQ_MODIFY:
	case RP_CTRL_SRQ_QUERY:
	case RP_CTRL_SRQ_DESTROY:
		return owns(c, SRV_SRQ, d, s->u.srq.srqn) ? 0 : -EPERM;
	default:
		return -EINVAL;
	}
}

/* Records what a request that succeeded created or destroyed. */
static int
ctrl_account(struct srv_client *c, uint32_t d, const struct rp_ctrl_slot *s,
	     int fd, uint32_t reg)
{
	struct srv_obj *o;

	switch (s->op) {
	case RP_CTRL_PD_ALLOC:
		return obj_add(c, SRV_PD, d, s->u.pd.pdn, -1);
	case RP_CTRL_MR_REG:
		return obj_add(c, SRV_MR, d, s->u.mr.lkey, -1);
	case RP_CTRL_MW_ALLOC:
		return obj_add(c, SRV_MW, d, s->u.mw.rkey, -1);
	case RP_CTRL_CQ_CREATE:
		return obj_add(c, SRV_CQ, d, s->u.cq.cqn, -1);
	case RP_CTRL_QP_CREATE:
		if (s->u.qp_create.flags & RP_QP_F_GSI)
			c->gsi[d] = s->u.qp_create.qpn;
		return obj_add(c, SRV_QP, d, s->u.qp_create.qpn, -1);
	case RP_CTRL_AH_CREATE:
		return obj_add(c, SRV_AH, d, s->u.ah.ahn, -1);
	case RP_CTRL_SRQ_CREATE:
		return obj_add(c, SRV_SRQ, d, s->u.srq.srqn, -1);
	case RP_CTRL_CHAN_CREATE:
		return obj_add(c, SRV_CHAN, d, s->u.chan.chn, fd);
	case RP_CTRL_ASYNC_REG:
		return obj_add(c, SRV_ASYNC, d, reg, fd);
	case RP_CTRL_PD_FREE:
		o = obj_find(c, SRV_PD, d, s->u.pd.pdn);
		break;
	case RP_CTRL_MR_DEREG:
		o = obj_find(c, SRV_MR, d, s->u.mr.lkey);
		break;
	case RP_CTRL_MW_DEALLOC:
		o = obj_find(c, SRV_MW, d, s->u.mw.rkey);
		break;
	case RP_CTRL_CQ_DESTROY:
		o = obj_find(c, SRV_CQ, d, s->u.cq.cqn);
		break;
	case RP_CTRL_QP_DESTROY:
		if (c->gsi[d] == s->u.qp.qpn)
			c->gsi[d] = 0;
		o = obj_find(c, SRV_QP, d, s->u.qp.qpn);
		break;
	case RP_CTRL_AH_DESTROY:
		o = obj_find(c, SRV_AH, d, s->u.ah.ahn);
		break;
	case RP_CTRL_SRQ_DESTROY:
		o = obj_find(c, SRV_SRQ, d, s->u.srq.srqn);
		break;
	case RP_CTRL_CHAN_DESTROY:
		o = obj_find(c, SRV_CHAN, d, s->u.chan.chn);
		break;
	case RP_CTRL_ASYNC_UNREG:
		o = obj_find(c, SRV_ASYNC, d, reg);
		break;
	default:
		return 0;
	}
	if (o != NULL)
		obj_del(c, o);
	return 0;
}

/* Destroys one object of a client that is gone (or its last request). */
static void
obj_destroy(struct srv_client *c, struct srv_obj *o)
{
	struct rp_ctrl_slot s;
	int ret;
	uint32_t id = o->kind == SRV_ASYNC ? (uint32_t)o->fd : o->id;

	if (o->kind >= SRV_KINDS)
		return;
	memset(&s, 0, sizeof(s));
	s.arena = c->arena[o->dev];
	s.op = srv_kind[o->kind].op;
	memcpy((uint8_t *)&s + srv_kind[o->kind].id, &id, sizeof(id));
	ret = rp_ctrl_call(o->dev, &s);
	if (ret < 0) {
		RP_LOG(WARNING, "client %u (pid %d): cannot destroy %s %u of rocepmd%u: %s",
		       c->id, (int)c->cred.pid, srv_kind[o->kind].name, o->id,
		       o->dev, strerror(-ret));
		/* The engine may still signal its socket: left open, or it
		 * would signal whatever file reuses the number. */
		o->fd = -1;
	}
}

/* ------------------------------------------------------------ clients */

static int
send_fds(int sock, const void *msg, size_t len, const int *fds,
	 unsigned int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 3 * RP_ATTACH_MAX_DEVS)];
	struct iovec iov = { .iov_base = (void *)(uintptr_t)msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;

	if (nfds != 0) {
		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	/* Never blocks: a client that does not read its replies is dropped
	 * rather than stall the server for every other. */
	return sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) ==
		(ssize_t)len ? 0 : -EPIPE;
}

static void
arenas_destroy(struct srv_client *c)
{
	for (unsigned int d = 0; d < RP_ATTACH_MAX_DEVS; d++) {
		struct rp_ctrl_slot s = { .op = RP_CTRL_ARENA_DESTROY };
		int ret;

		if (c->arena[d] == 0)
			continue;
		s.u.arena.id = c->arena[d];
		ret = rp_ctrl_call(d, &s);
		if (ret < 0)
			RP_LOG(WARNING, "client %u: arena %u of rocepmd%u kept: %s",
			       c->id, c->arena[d], d, strerror(-ret));
		c->arena[d] = 0;
	}
}

/* The client's own shared memory on each device: its objects go there. */
static int
arenas_create(struct srv_client *c, unsigned int nr_devs)
{
	for (unsigned int d = 0; d < nr_devs; d++) {
		struct rp_ctrl_slot s = { .op = RP_CTRL_ARENA_CREATE };
		int ret;

		s.u.arena.size_mb = rp_devs[d]->cfg.region_mb;
		ret = rp_ctrl_call(d, &s);
		if (ret < 0) {
			RP_LOG(WARNING, "client pid %d: no arena on rocepmd%u: %s",
			       (int)c->cred.pid, d, strerror(-ret));
			arenas_destroy(c);
			return ret;
		}
		c->arena[d] = s.u.arena.id;
	}
	return 0;
}

static void
client_close(struct srv_client *c)
{
	pthread_mutex_lock(&srv.lock);
	RP_LOG(NOTICE, "client %u (pid %d, %s) detached: destroying its %u objects",
	       c->id, (int)c->cred.pid, c->comm, c->nr_obj);
	/* Kind by kind: QPs before what they use, PDs last. */
	for (unsigned int k = 0; k < SRV_KINDS; k++)
		for (uint32_t i = 0; i < c->nr_obj; ) {
			if (c->obj[i].kind != k) {
				i++;
				continue;
			}
			obj_destroy(c, &c->obj[i]);
			obj_del(c, &c->obj[i]);
		}
	arenas_destroy(c);
	rp_sq_close(&c->quota);
	/* No MR names its address space any more. */
	if (c->mem_fd >= 0)
		close(c->mem_fd);
	c->mem_fd = -1;
	close(c->fd);
	c->fd = -1;
	free(c->obj);
	c->obj = NULL;
	c->nr_obj = c->cap_obj = 0;
	pthread_mutex_unlock(&srv.lock);
}

static void
client_comm(struct srv_client *c)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(c->comm, sizeof(c->comm), "?");
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)c->cred.pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, c->comm, sizeof(c->comm) - 1);
	close(fd);
	if (n <= 0)
		return;
	c->comm[n] = '\0';
	c->comm[strcspn(c->comm, "\n")] = '\0';
}

/* A well-formed HELLO refused: the client is told why before the end. */
static int
client_refuse(struct srv_client *c, int ret)
{
	struct rp_attach_welcome w;

	memset(&w, 0, sizeof(w));
	w.hdr = (struct rp_attach_hdr){ .magic = RP_ATTACH_MAGIC,
		.version = RP_ATTACH_VERSION, .type = RP_ATTACH_WELCOME,
		.result = ret };
	w.abi_version = RP_ABI_VERSION;
	send_fds(c->fd, &w, sizeof(w), NULL, 0);
	srv.refused++;
	return ret;
}

/*
 * The descriptor a HELLO carries must be the client's own address space:
 * /proc/<pid>/mem (procfs, a regular file), open for reading and writing,
 * holding the probe the HELLO names.  A client can only hand over memory
 * it could open itself, so it reaches nothing through the host that it
 * could not reach alone.  0 or a negative errno, with why in `why`.
 */
static int
client_mem_check(int fd, const struct rp_attach_hello *h, const char **why)
{
	struct statfs sfs;
	struct stat st;
	uint64_t v = 0;
	ssize_t n;
	int fl;

	if (fd < 0) {
		*why = "no descriptor of its memory came with the HELLO";
		return -EBADF;
	}
	fl = fcntl(fd, F_GETFL);
	if (fstatfs(fd, &sfs) != 0 || sfs.f_type != PROC_SUPER_MAGIC ||
	    fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || fl < 0) {
		*why = "the descriptor is not a /proc/PID/mem";
		return -EBADF;
	}
	if ((fl & O_ACCMODE) != O_RDWR) {
		*why = "its memory was not opened for reading and writing";
		return -EACCES;
	}
	n = pread(fd, &v, sizeof(v), (off_t)h->probe_addr);
	if (n != sizeof(v) || v != h->probe_value) {
		*why = n == 0 ? "its address space is gone" :
			n != sizeof(v) ? "cannot read its memory probe" :
			"wrong memory probe";
		return -EACCES;
	}
	return 0;
}

static int
client_hello(struct srv_client *c, const struct rp_attach_hello *h, size_t len,
	     int mem_fd)
{
	struct rp_attach_welcome w;
	int fds[3 * RP_ATTACH_MAX_DEVS];
	unsigned int nfds = 0;
	const char *why = NULL;
	int ret;

	if (len != sizeof(*h)) {
		RP_LOG(WARNING, "client pid %d: attach refused: malformed HELLO",
		       (int)c->cred.pid);
		if (mem_fd >= 0)
			close(mem_fd);
		return -EPROTO;
	}
	if (h->abi_version != RP_ABI_VERSION) {
		RP_LOG(WARNING, "client pid %d: attach refused: built for ABI version %u, the devices have %u",
		       (int)c->cred.pid, h->abi_version, RP_ABI_VERSION);
		if (mem_fd >= 0)
			close(mem_fd);
		return client_refuse(c, -EPROTO);
	}
	/* The engine will copy to and from its memory: through this. */
	ret = client_mem_check(mem_fd, h, &why);
	if (ret < 0) {
		RP_LOG(WARNING, "client pid %d (%s, uid %u): attach refused: %s",
		       (int)c->cred.pid, c->comm, (unsigned int)c->cred.uid,
		       why);
		if (mem_fd >= 0)
			close(mem_fd);
		return client_refuse(c, ret);
	}
	c->mem_fd = mem_fd;
	c->probe_addr = h->probe_addr;
	memset(&w, 0, sizeof(w));
	w.hdr = (struct rp_attach_hdr){ .magic = RP_ATTACH_MAGIC,
		.version = RP_ATTACH_VERSION, .type = RP_ATTACH_WELCOME };
	w.abi_version = RP_ABI_VERSION;
	w.nr_devs = RTE_MIN(rp_nr_devs, RP_ATTACH_MAX_DEVS);
	w.client_id = c->id;
	ret = arenas_create(c, w.nr_devs);
	if (ret < 0)
		return ret;
	for (unsigned int d = 0; d < w.nr_devs; d++) {
		w.region_size[d] = rp_devs[d]->region_size;
		fds[nfds++] = rp_devs[d]->region_fd;
	}
	for (unsigned int d = 0; d < w.nr_devs; d++) {
		const struct rp_arena *a = &rp_devs[d]->arena[c->arena[d]];

		w.arena_size[d] = a->size;
		fds[nfds++] = a->fd;
	}
	/* Its own wake-up fds, which its lcore polls too (rp_lcore.c). */
	for (unsigned int d = 0; d < w.nr_devs; d++) {
		const struct rp_arena *a = &rp_devs[d]->arena[c->arena[d]];

		if (rp_devs[d]->wake_fd >= 0 && a->wake_fd >= 0) {
			w.wake_mask |= 1u << d;
			fds[nfds++] = a->wake_fd;
		}
	}
	if (send_fds(c->fd, &w, sizeof(w), fds, nfds) != 0)
		return -EPIPE;
	c->welcomed = true;
	RP_LOG(NOTICE, "client %u attached: pid %d (%s), uid %u, gid %u",
	       c->id, (int)c->cred.pid, c->comm, (unsigned int)c->cred.uid,
	       (unsigned int)c->cred.gid);
	return 0;
}

/*
 * The signalling pair of a new channel or async registration: sv[0] the
 * engine's end, non-blocking for good (no other process ever holds its
 * description) and shut for reading (a client cannot park data in it);
 * sv[1] the client's, blocking as an eventfd would be.
 */
static int
signal_pair(int sv[2])
{
	int ret;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		sv[0] = sv[1] = -1;
		return -errno;
	}
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) == 0 &&
	    shutdown(sv[0], SHUT_RD) == 0)
		return 0;
	ret = -errno;
	close(sv[0]);
	close(sv[1]);
	sv[0] = sv[1] = -1;
	return ret;
}

static int
client_ctrl(struct srv_client *c, struct rp_attach_ctrl *r, size_t len, int fd)
{
	struct rp_ctrl_slot *s = &r->slot;
	bool wants_fd;
	int sv[2] = { -1, -1 };		/* the engine's end, the client's */
	uint32_t reg = 0;
	int ret;

	if (len != sizeof(*r)) {
		if (fd >= 0)
			close(fd);	/* ours whatever the request */
		return -EPROTO;
	}
	wants_fd = s->op == RP_CTRL_CHAN_CREATE || s->op == RP_CTRL_ASYNC_REG;
	/* Everything the client makes lives in its own arena. */
	s->arena = r->dev < RP_ATTACH_MAX_DEVS ? c->arena[r->dev] : 0;
	if (r->dev >= rp_nr_devs)
		ret = -ENODEV;
	else if (fd >= 0)
		ret = -EBADF;	/* no request carries one (rp_attach.h) */
	else
		ret = ctrl_check(c, r->dev, s);
	if (ret == 0)
		ret = rp_sq_check(&c->quota, r->dev, s);
	if (ret == 0 && wants_fd)
		ret = signal_pair(sv);
	if (ret == 0) {
		if (s->op == RP_CTRL_CHAN_CREATE) {
			s->u.chan.fd = sv[0];
		} else if (s->op == RP_CTRL_ASYNC_REG) {
			reg = ++c->async_ids;
			s->u.async.fd = sv[0];
		} else if (s->op == RP_CTRL_ASYNC_UNREG) {
			reg = s->u.async.id;
			s->u.async.fd = obj_find(c, SRV_ASYNC, r->dev, reg)->fd;
		}
		ret = rp_ctrl_call(r->dev, s);
		if (ret == 0) {
			rp_sq_done(&c->quota, r->dev, s);
			ret = ctrl_account(c, r->dev, s, sv[0], reg);
			if (wants_fd)
				sv[0] = -1;	/* kept with the object */
		}
		/* Our fd numbers mean nothing to the client. */
		if (s->op == RP_CTRL_CHAN_CREATE) {
			s->u.chan.fd = -1;
		} else if (s->op == RP_CTRL_ASYNC_REG ||
			   s->op == RP_CTRL_ASYNC_UNREG) {
			s->u.async.fd = -1;
			s->u.async.id = reg;
		}
	} else {
		RP_LOG(DEBUG, "client %u: request %u refused: %s", c->id,
		       s->op, strerror(-ret));
	}
	if (fd >= 0)
		close(fd);
	if (sv[0] >= 0)
		close(sv[0]);
	c->requests++;
	r->hdr.result = ret;
	r->hdr.type = RP_ATTACH_CTRL;
	/* A channel or registration made: its end of the pair goes with
	 * the reply (the kernel's copy); ours of it is closed either way. */
	ret = send_fds(c->fd, r, sizeof(*r), &sv[1],
		       ret == 0 && sv[1] >= 0 ? 1 : 0) == 0 ? 0 : -EPIPE;
	if (sv[1] >= 0)
		close(sv[1]);
	return ret;
}

/* One message from a client; false: drop the connection. */
static bool
client_input(struct srv_client *c)
{
	union {
		struct rp_attach_hdr hdr;
		struct rp_attach_hello hello;
		struct rp_attach_ctrl ctrl;
	} m;
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd = -1, extra = 0;
	ssize_t n;
	int ret;

	n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0)
		return false;
	/* Every fd that came is ours to close: keep at most one. */
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		int nf, *f;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		nf = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		f = (int *)(void *)CMSG_DATA(cm);
		for (int i = 0; i < nf; i++) {
			if (fd < 0) {
				fd = f[i];
			} else {
				close(f[i]);
				extra++;
			}
		}
	}
	if (n == 0) {
		/* The end, or an empty message with fds: the end either way. */
		ret = -EPIPE;
	} else if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || extra != 0 ||
	    (size_t)n < sizeof(m.hdr) || m.hdr.magic != RP_ATTACH_MAGIC ||
	    m.hdr.version != RP_ATTACH_VERSION) {
		RP_LOG(WARNING, "client %u (pid %d): malformed message: connection closed",
		       c->id, (int)c->cred.pid);
		ret = -EPROTO;
	} else if (!c->welcomed && m.hdr.type == RP_ATTACH_HELLO &&
		   (ret = rp_sq_hello(&c->quota)) < 0) {
		ret = client_refuse(c, ret);
	} else if (!c->welcomed) {
		ret = m.hdr.type == RP_ATTACH_HELLO ?
			client_hello(c, &m.hello, (size_t)n, fd) : -EPROTO;
		if (m.hdr.type == RP_ATTACH_HELLO)
			fd = -1;	/* client_hello's */
	} else if (m.hdr.type == RP_ATTACH_CTRL) {
		ret = client_ctrl(c, &m.ctrl, (size_t)n, fd);
		fd = -1;
	} else {
		ret = -EPROTO;
	}
	if (fd >= 0)
		close(fd);
	return ret == 0;
}

/* A new connection: a slot for it, or closed. */
static void
srv_accept_fd(int fd)
{
	struct srv_client *c = NULL;
	socklen_t len = sizeof(struct ucred);

	pthread_mutex_lock(&srv.lock);
	for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
		if (srv.clients[i].fd < 0) {
			c = &srv.clients[i];
			memset(c, 0, sizeof(*c));
			c->fd = fd;
			c->mem_fd = -1;
			c->id = ++srv.next_id;
			srv.attached_total++;
			break;
		}
	pthread_mutex_unlock(&srv.lock);
	if (c == NULL) {
		RP_LOG(WARNING, "attach refused: %u processes attached already",
		       SRV_MAX_CLIENTS);
		srv.refused++;
		close(fd);
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) != 0) {
		client_close(c);
		return;
	}
	client_comm(c);
	if (rp_sq_accept(&c->quota, c->id, &c->cred, c->comm) < 0) {
		srv.refused++;
		client_close(c);
	}
}

static void
srv_accept(void)
{
	int fd = accept4(srv.listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (fd >= 0)
		srv_accept_fd(fd);
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
		struct srv_client *c = &srv.clients[i];
		uint64_t v;

		if (c->fd < 0 || c->mem_fd < 0 ||
		    pread(c->mem_fd, &v, sizeof(v), (off_t)c->probe_addr) != 0)
			continue;
		RP_LOG(NOTICE, "client %u (pid %d, %s): its address space is gone (exec or exit) while its socket lives on",
		       c->id, (int)c->cred.pid, c->comm);
		srv.gone++;
		client_close(c);
	}
}

/* The poll's limit: the next HELLO deadline, or the liveness check. */
static int
srv_timeout_ms(void)
{
	int t = rp_sq_timeout_ms();

	for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
		if (srv.clients[i].fd >= 0 && srv.clients[i].mem_fd >= 0)
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

		pfd[n++] = (struct pollfd){ .fd = srv.stop_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = srv.listen_fd, .events = POLLIN };
		for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
			if (srv.clients[i].fd >= 0) {
				who[n] = &srv.clients[i];
				pfd[n++] = (struct pollfd){
					.fd = srv.clients[i].fd,
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
			pthread_mutex_lock(&srv.lock);
			ok = client_input(who[i]);
			pthread_mutex_unlock(&srv.lock);
			if (!ok)
				client_close(who[i]);
		}
		if (pfd[1].revents & POLLIN)
			srv_accept();
		srv_liveness();
		/* Slots are for clients: no HELLO in time, no slot. */
		for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
			if (srv.clients[i].fd >= 0 &&
			    rp_sq_expired(&srv.clients[i].quota)) {
				srv.refused++;
				client_close(&srv.clients[i]);
			}
	}
	for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
		if (srv.clients[i].fd >= 0)
			client_close(&srv.clients[i]);
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

	if (srv.running) {
		snprintf(err, errlen, "already serving %s", srv.path);
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
	srv.listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	srv.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (srv.listen_fd < 0 || srv.stop_fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto fail;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	if (bind(srv.listen_fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    chmod(path, mode) != 0 ||
	    (gid >= 0 && chown(path, (uid_t)-1, (gid_t)gid) != 0) ||
	    listen(srv.listen_fd, 16) != 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(path);
		goto fail;
	}
	snprintf(srv.path, sizeof(srv.path), "%s", path);
	for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
		srv.clients[i].fd = srv.clients[i].mem_fd = -1;
	ret = -pthread_create(&srv.thread, NULL, srv_main, NULL);
	if (ret != 0) {
		snprintf(err, errlen, "thread: %s", strerror(-ret));
		unlink(path);
		goto fail;
	}
	srv.running = true;
	RP_LOG(INFO, "serving %u device(s) on %s (mode %04o)", rp_nr_devs,
	       path, mode);
	return 0;

fail:
	if (srv.listen_fd >= 0)
		close(srv.listen_fd);
	if (srv.stop_fd >= 0)
		close(srv.stop_fd);
	srv.listen_fd = srv.stop_fd = -1;
	return ret;
}

void
rp_serve_stop(void)
{
	const uint64_t one = 1;

	if (!srv.running)
		return;
	if (write(srv.stop_fd, &one, sizeof(one)) != sizeof(one))
		RP_LOG(ERR, "attach server: cannot stop: %s", strerror(errno));
	pthread_join(srv.thread, NULL);
	unlink(srv.path);
	close(srv.listen_fd);
	close(srv.stop_fd);
	srv.listen_fd = srv.stop_fd = -1;
	srv.running = false;
}

int
rp_serve_clients(struct rp_serve_client *out, unsigned int n)
{
	unsigned int nr = 0;

	pthread_mutex_lock(&srv.lock);
	for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++) {
		const struct srv_client *c = &srv.clients[i];

		if (!srv.running || c->fd < 0)
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
	pthread_mutex_unlock(&srv.lock);
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
	rte_tel_data_add_dict_u64(d, "attached_total", srv.attached_total);
	rte_tel_data_add_dict_u64(d, "refused", srv.refused);
	rte_tel_data_add_dict_u64(d, "address_space_gone", srv.gone);
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
			srv.clients[i].fd = -1;
	init = true;
	srv_accept_fd(fd);
	return srv.clients[0].fd == fd ? 0 : -EAGAIN;
}

bool
rp_serve_fuzz_input(void)
{
	return srv.clients[0].fd >= 0 && client_input(&srv.clients[0]);
}

void
rp_serve_fuzz_close(void)
{
	if (srv.clients[0].fd >= 0)
		client_close(&srv.clients[0]);
}
#endif
