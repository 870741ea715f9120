/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One attached client of the attach server (rp_serve.c): its slot, taken
 * at accept and given back when its connection ends (its objects
 * destroyed); its HELLO, that hands over its address space and gets its
 * arenas; its control requests, checked (rp_serve_check.c) and counted
 * (rp_serve_quota.c) before they reach the engine.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_common.h>

#include "rp_log.h"
#include "rp_service.h"

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

void
rp_srv_client_close(struct srv_client *c)
{
	pthread_mutex_lock(&rp_srv.lock);
	RP_LOG(NOTICE, "client %u (pid %d, %s) detached: destroying its %u objects",
	       c->id, (int)c->cred.pid, c->comm, c->nr_obj);
	/* Kind by kind: QPs before what they use, PDs last. */
	for (unsigned int k = 0; k < SRV_KINDS; k++)
		for (uint32_t i = 0; i < c->nr_obj; ) {
			if (c->obj[i].kind != k) {
				i++;
				continue;
			}
			rp_srv_obj_destroy(c, &c->obj[i]);
			rp_srv_obj_del(c, &c->obj[i]);
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
	pthread_mutex_unlock(&rp_srv.lock);
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
	rp_srv.refused++;
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
		ret = rp_srv_check(c, r->dev, s);
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
			s->u.async.fd = rp_srv_obj_find(c, SRV_ASYNC, r->dev, reg)->fd;
		}
		ret = rp_ctrl_call(r->dev, s);
		/* Our fd numbers mean nothing to the client; a registration
		 * is named by our id for it (and so recorded). */
		if (s->op == RP_CTRL_CHAN_CREATE) {
			s->u.chan.fd = -1;
		} else if (s->op == RP_CTRL_ASYNC_REG ||
			   s->op == RP_CTRL_ASYNC_UNREG) {
			s->u.async.fd = -1;
			s->u.async.id = reg;
		}
		if (ret == 0) {
			rp_sq_done(&c->quota, r->dev, s);
			ret = rp_srv_account(c, r->dev, s, sv[0]);
			if (wants_fd)
				sv[0] = -1;	/* kept with the object */
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
bool
rp_srv_client_input(struct srv_client *c)
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
void
rp_srv_accept_fd(int fd)
{
	struct srv_client *c = NULL;
	socklen_t len = sizeof(struct ucred);

	pthread_mutex_lock(&rp_srv.lock);
	for (unsigned int i = 0; i < SRV_MAX_CLIENTS; i++)
		if (rp_srv.clients[i].fd < 0) {
			c = &rp_srv.clients[i];
			memset(c, 0, sizeof(*c));
			c->fd = fd;
			c->mem_fd = -1;
			c->id = ++rp_srv.next_id;
			rp_srv.attached_total++;
			break;
		}
	pthread_mutex_unlock(&rp_srv.lock);
	if (c == NULL) {
		RP_LOG(WARNING, "attach refused: %u processes attached already",
		       SRV_MAX_CLIENTS);
		rp_srv.refused++;
		close(fd);
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) != 0) {
		rp_srv_client_close(c);
		return;
	}
	client_comm(c);
	if (rp_sq_accept(&c->quota, c->id, &c->cred, c->comm) < 0) {
		rp_srv.refused++;
		rp_srv_client_close(c);
	}
}
