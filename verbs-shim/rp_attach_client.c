/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Client side of the attach protocol (rp_attach.h), shared by the verbs
 * shim, rocepmd-run and rocepmd-status; and which host a client takes when
 * it is named none (rp_attach_pick()).
 *
 * Everything the host sends is checked before it is used: the WELCOME's
 * size, magic, versions and device count, that exactly the announced
 * descriptors came, that each region is a file at least as large as the
 * host says (a mapping past the end of a file faults on first touch) and
 * that its control block is one of this ABI.  A host that answers
 * otherwise gets a message naming what was wrong, never a crash.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "rocepmd.h"		/* RP_SERVE_DIR; no DPDK in it */
#include "rp_attach_client.h"

/* Descriptors a WELCOME may carry: a region and a wake-up fd per device. */
#define RP_ATTACH_MAX_FDS	(3 * RP_ATTACH_MAX_DEVS)

static void
conn_reset(struct rp_attach_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->sock = -1;
	for (unsigned int d = 0; d < RP_ATTACH_MAX_DEVS; d++)
		c->dev[d].wake_fd = -1;
}

static void
fds_close(const int *fds, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * Every descriptor of a received message's SCM_RIGHTS, into fds (at most
 * max; the others are closed).  @return how many came in all.
 */
static unsigned int
fds_collect(struct msghdr *mh, int *fds, unsigned int max)
{
	unsigned int n = 0;
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		unsigned int nf;
		int f;

		if (cm->cmsg_level != SOL_SOCKET ||
		    cm->cmsg_type != SCM_RIGHTS)
			continue;
		nf = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (unsigned int i = 0; i < nf; i++) {
			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(f));
			if (n < max)
				fds[n] = f;
			else
				close(f);
			n++;
		}
	}
	return n;
}

static int
conn_connect(struct rp_attach_conn *c, const char *path, char *err,
	     size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *hint = "";
	int ret;

	if (path == NULL || path[0] != '/') {
		snprintf(err, errlen, "attach socket '%s': not an absolute path",
			 path != NULL ? path : "");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "attach socket %s: longer than %zu bytes",
			 path, sizeof(a.sun_path) - 1);
		return -EINVAL;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->sock < 0) {
		ret = -errno;
		snprintf(err, errlen, "attach socket %s: socket: %s", path,
			 strerror(-ret));
		return ret;
	}
	if (connect(c->sock, (struct sockaddr *)&a, sizeof(a)) == 0)
		return 0;
	ret = -errno;
	switch (-ret) {
	case ENOENT:
		hint = " (is the host running? rocepmd-testpmd --host)";
		break;
	case ECONNREFUSED:
		hint = " (nobody serves it: the host has exited?)";
		break;
	case EACCES:
		hint = " (the socket's mode and group decide who may attach)";
		break;
	case EPROTOTYPE:
		hint = " (not a rocepmd host's socket)";
		break;
	default:
		break;
	}
	snprintf(err, errlen, "attach socket %s: %s%s", path, strerror(-ret),
		 hint);
	close(c->sock);
	c->sock = -1;
	return ret;
}

static int
conn_hello(struct rp_attach_conn *c, const char *path, char *err,
	   size_t errlen)
{
	/* What the host reads back through the descriptor below. */
	static uint64_t probe;
	struct rp_attach_hello h = {
		.hdr = {
			.magic = RP_ATTACH_MAGIC,
			.version = RP_ATTACH_VERSION,
			.type = RP_ATTACH_HELLO,
		},
		.abi_version = RP_ABI_VERSION,
	};
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	ssize_t n;
	int mem, ret;

	probe = 0x726f6365706d6400ull ^ (uint64_t)getpid() ^
		(uint64_t)(uintptr_t)&h;
	h.probe_addr = (uint64_t)(uintptr_t)&probe;
	h.probe_value = probe;

	/*
	 * This address space, as the host will reach it: the descriptor
	 * names this program's memory, not its PID, so it reaches nothing
	 * once the process exits or exec()s another program.
	 */
	mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (mem < 0) {
		ret = -errno;
		snprintf(err, errlen, "attach socket %s: /proc/self/mem: %s (is /proc mounted?)",
			 path, strerror(-ret));
		return ret;
	}
	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &mem, sizeof(mem));
	do {
		n = sendmsg(c->sock, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	ret = n < 0 ? -errno : -EIO;
	close(mem);
	if (n != (ssize_t)sizeof(h)) {
		snprintf(err, errlen, "attach socket %s: HELLO: %s", path,
			 strerror(-ret));
		return ret;
	}
	return 0;
}

/* Check the WELCOME's fixed part against what came. */
static int
welcome_check(const struct rp_attach_welcome *w, size_t len,
	      unsigned int nfds, const char *path, char *err, size_t errlen)
{
	unsigned int want;

	if (len != sizeof(*w) || w->hdr.magic != RP_ATTACH_MAGIC) {
		snprintf(err, errlen, "attach socket %s: the answer to HELLO is not a rocepmd WELCOME (%zu bytes, magic 0x%08x; expected %zu, 0x%08x)",
			 path, len, len >= sizeof(w->hdr) ? w->hdr.magic : 0,
			 sizeof(*w), RP_ATTACH_MAGIC);
		return -EPROTO;
	}
	if (w->hdr.version != RP_ATTACH_VERSION) {
		snprintf(err, errlen, "attach socket %s: the host speaks attach protocol version %u, this program %u",
			 path, w->hdr.version, RP_ATTACH_VERSION);
		return -EPROTO;
	}
	if (w->hdr.type != RP_ATTACH_WELCOME) {
		snprintf(err, errlen, "attach socket %s: message type %u where a WELCOME (%u) was due",
			 path, w->hdr.type, RP_ATTACH_WELCOME);
		return -EPROTO;
	}
	if (w->hdr.result < 0) {
		snprintf(err, errlen, "attach socket %s: the host refused: %s",
			 path, strerror(-w->hdr.result));
		return w->hdr.result;
	}
	if (w->abi_version != RP_ABI_VERSION) {
		snprintf(err, errlen, "attach socket %s: the host's devices have ABI version %u, this program was built for %u",
			 path, w->abi_version, RP_ABI_VERSION);
		return -EPROTO;
	}
	if (w->nr_devs == 0 || w->nr_devs > RP_ATTACH_MAX_DEVS) {
		snprintf(err, errlen, "attach socket %s: the host announces %u devices (1 to %u)",
			 path, w->nr_devs, RP_ATTACH_MAX_DEVS);
		return w->nr_devs == 0 ? -ENODEV : -EPROTO;
	}
	if (w->wake_mask >> w->nr_devs != 0) {
		snprintf(err, errlen, "attach socket %s: wake-up mask 0x%x names devices beyond the %u announced",
			 path, w->wake_mask, w->nr_devs);
		return -EPROTO;
	}
	want = 2 * w->nr_devs + (unsigned int)__builtin_popcount(w->wake_mask);
	if (nfds != want) {
		snprintf(err, errlen, "attach socket %s: the WELCOME carries %u descriptors, %u announced (%u regions and arenas, wake-up mask 0x%x)",
			 path, nfds, want, w->nr_devs, w->wake_mask);
		return -EPROTO;
	}
	return 0;
}

/* Map device d's region from fd and check its control block. */
static int
region_map(struct rp_attach_conn *c, unsigned int d, int fd, uint64_t size,
	   const char *path, char *err, size_t errlen)
{
	const struct rp_dev_ctl *ctl;
	struct stat st;
	void *base;

	if (size < sizeof(struct rp_dev_ctl)) {
		snprintf(err, errlen, "attach socket %s: device %u: region of %llu bytes (a control block alone is %zu)",
			 path, d, (unsigned long long)size,
			 sizeof(struct rp_dev_ctl));
		return -EPROTO;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size < size) {
		snprintf(err, errlen, "attach socket %s: device %u: the region's descriptor is not a file of %llu bytes",
			 path, d, (unsigned long long)size);
		return -EPROTO;
	}
	/* Read-only: the host sealed it (F_SEAL_FUTURE_WRITE). */
	base = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		int ret = -errno;

		snprintf(err, errlen, "attach socket %s: device %u: cannot map %llu bytes: %s",
			 path, d, (unsigned long long)size, strerror(-ret));
		return ret;
	}
	c->dev[d].ctl = (const struct rp_dev_ctl *)base;
	c->dev[d].region_size = size;
	ctl = base;
	if (ctl->magic != RP_ABI_MAGIC || ctl->version != RP_ABI_VERSION) {
		snprintf(err, errlen, "attach socket %s: device %u: control block ABI 0x%08x v%u, expected 0x%08x v%u",
			 path, d, ctl->magic, ctl->version, RP_ABI_MAGIC,
			 RP_ABI_VERSION);
		return -EPROTO;
	}
	/* The shim bounds every offset by it: never past the mapping. */
	if (ctl->region_size != size) {
		snprintf(err, errlen, "attach socket %s: device %u: control block says %llu bytes, WELCOME %llu",
			 path, d, (unsigned long long)ctl->region_size,
			 (unsigned long long)size);
		return -EPROTO;
	}
	return 0;
}

/* Map device d's arena from fd: this process's own shared memory. */
static int
arena_map(struct rp_attach_conn *c, unsigned int d, int fd, uint64_t size,
	  const char *path, char *err, size_t errlen)
{
	struct stat st;
	void *base;

	if (size < sizeof(struct rp_arena_ctl) || fstat(fd, &st) != 0 ||
	    !S_ISREG(st.st_mode) || (uint64_t)st.st_size < size) {
		snprintf(err, errlen, "attach socket %s: device %u: the arena is not a file of %llu bytes (at least %zu)",
			 path, d, (unsigned long long)size,
			 sizeof(struct rp_arena_ctl));
		return -EPROTO;
	}
	base = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, 0);
	if (base == MAP_FAILED) {
		int ret = -errno;

		snprintf(err, errlen, "attach socket %s: device %u: cannot map an arena of %llu bytes: %s",
			 path, d, (unsigned long long)size, strerror(-ret));
		return ret;
	}
	c->dev[d].arena = base;
	c->dev[d].arena_size = size;
	return 0;
}

int
rp_attach_open(struct rp_attach_conn *c, const char *path, char *err,
	       size_t errlen)
{
	struct rp_attach_welcome w;
	/* One byte more than a WELCOME: a longer message shows as such. */
	uint8_t buf[sizeof(w) + 1];
	char cbuf[CMSG_SPACE(sizeof(int) * RP_ATTACH_MAX_FDS)];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct timeval tv = { .tv_sec = RP_ATTACH_WELCOME_TIMEOUT };
	const struct timeval none = { 0 };
	int fds[RP_ATTACH_MAX_FDS];
	unsigned int nfds = 0, i, wake;
	ssize_t n;
	int ret;

	conn_reset(c);
	ret = conn_connect(c, path, err, errlen);
	if (ret < 0)
		return ret;
	/* A host that never answers must not hang the program's start. */
	if (setsockopt(c->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0) {
		ret = -errno;
		snprintf(err, errlen, "attach socket %s: SO_RCVTIMEO: %s",
			 path, strerror(-ret));
		goto err_close;
	}
	ret = conn_hello(c, path, err, errlen);
	if (ret < 0)
		goto err_close;

	memset(cbuf, 0, sizeof(cbuf));
	do {
		n = recvmsg(c->sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		ret = errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT :
			-errno;
		snprintf(err, errlen, "attach socket %s: no WELCOME: %s", path,
			 ret == -ETIMEDOUT ? "the host did not answer" :
			 strerror(-ret));
		goto err_close;
	}
	nfds = fds_collect(&mh, fds, RP_ATTACH_MAX_FDS);
	if (nfds > RP_ATTACH_MAX_FDS || (mh.msg_flags & MSG_CTRUNC)) {
		snprintf(err, errlen, "attach socket %s: the WELCOME carries more than %u descriptors",
			 path, RP_ATTACH_MAX_FDS);
		nfds = nfds > RP_ATTACH_MAX_FDS ? RP_ATTACH_MAX_FDS : nfds;
		ret = -EPROTO;
		goto err_fds;
	}
	if (n == 0) {
		snprintf(err, errlen, "attach socket %s: the host closed the connection: it refused this program (ABI version %u; the host's log says why)",
			 path, RP_ABI_VERSION);
		ret = -ECONNRESET;
		goto err_fds;
	}
	memset(&w, 0, sizeof(w));
	memcpy(&w, buf, (size_t)n < sizeof(w) ? (size_t)n : sizeof(w));
	ret = welcome_check(&w, (mh.msg_flags & MSG_TRUNC) ? sizeof(buf) :
			    (size_t)n, nfds, path, err, errlen);
	if (ret < 0)
		goto err_fds;

	/* Regions, arenas, then the wake-up fds, each in device order. */
	for (i = 0; i < w.nr_devs; i++) {
		ret = region_map(c, i, fds[i], w.region_size[i], path, err,
				 errlen);
		if (ret == 0)
			ret = arena_map(c, i, fds[w.nr_devs + i],
					w.arena_size[i], path, err, errlen);
		if (ret < 0)
			goto err_unmap;
	}
	wake = 2 * w.nr_devs;
	for (i = 0; i < w.nr_devs; i++)
		if (w.wake_mask & (1u << i))
			c->dev[i].wake_fd = fds[wake++];
	/* The mappings hold the regions and arenas. */
	fds_close(fds, 2 * w.nr_devs);

	/* Requests wait as long as the engine takes, as embedded ones do. */
	if (setsockopt(c->sock, SOL_SOCKET, SO_RCVTIMEO, &none,
		       sizeof(none)) != 0) {
		ret = -errno;
		snprintf(err, errlen, "attach socket %s: SO_RCVTIMEO: %s",
			 path, strerror(-ret));
		rp_attach_close(c);
		return ret;
	}
	c->nr_devs = w.nr_devs;
	c->client_id = w.client_id;
	return 0;

err_unmap:
	for (i = 0; i < RP_ATTACH_MAX_DEVS; i++) {
		if (c->dev[i].ctl != NULL)
			munmap((void *)(uintptr_t)c->dev[i].ctl,
			       (size_t)c->dev[i].region_size);
		if (c->dev[i].arena != NULL)
			munmap(c->dev[i].arena, (size_t)c->dev[i].arena_size);
	}
err_fds:
	fds_close(fds, nfds);
err_close:
	close(c->sock);
	conn_reset(c);
	return ret;
}

/* The exchange failed: no request can follow this one. */
static int
conn_broken(struct rp_attach_conn *c, int ret, const char *what, char *err,
	    size_t errlen)
{
	snprintf(err, errlen, "attach connection: %s: %s", what,
		 strerror(-ret));
	close(c->sock);
	c->sock = -1;
	return ret;
}

int
rp_attach_request(struct rp_attach_conn *c, uint32_t dev,
		  struct rp_ctrl_slot *slot, int *fd, int *result, char *err,
		  size_t errlen)
{
	struct rp_attach_ctrl req, rep;
	char cbuf[CMSG_SPACE(sizeof(int) * RP_ATTACH_MAX_FDS)];
	struct iovec iov = { .iov_base = &req, .iov_len = sizeof(req) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fds[RP_ATTACH_MAX_FDS];
	unsigned int nfds, want;
	ssize_t n;

	*fd = -1;
	if (c->sock < 0) {
		snprintf(err, errlen, "attach connection: closed after an earlier failure");
		return -ENOTCONN;
	}
	if (dev >= c->nr_devs) {
		*result = -ENODEV;
		return 0;
	}
	memset(&req, 0, sizeof(req));
	req.hdr = (struct rp_attach_hdr){
		.magic = RP_ATTACH_MAGIC,
		.version = RP_ATTACH_VERSION,
		.type = RP_ATTACH_CTRL,
	};
	req.dev = dev;
	req.slot.op = slot->op;
	req.slot.u = slot->u;
	do {
		n = sendmsg(c->sock, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(req))
		return conn_broken(c, n < 0 ? -errno : -EIO, "request", err,
				   errlen);

	memset(&rep, 0, sizeof(rep));
	iov = (struct iovec){ .iov_base = &rep, .iov_len = sizeof(rep) };
	mh = (struct msghdr){
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	do {
		n = recvmsg(c->sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return conn_broken(c, n < 0 ? -errno : -EPIPE,
				   n < 0 ? "reply" :
				   "the host closed the connection", err,
				   errlen);
	/* One descriptor with a channel or registration made, else none. */
	want = rep.hdr.result == 0 && (slot->op == RP_CTRL_CHAN_CREATE ||
				       slot->op == RP_CTRL_ASYNC_REG);
	nfds = fds_collect(&mh, fds, RP_ATTACH_MAX_FDS);
	if (nfds != want || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    n != (ssize_t)sizeof(rep) || rep.hdr.magic != RP_ATTACH_MAGIC ||
	    rep.hdr.version != RP_ATTACH_VERSION ||
	    rep.hdr.type != RP_ATTACH_CTRL || rep.dev != dev ||
	    rep.slot.op != slot->op || rep.hdr.result > 0) {
		fds_close(fds, nfds < RP_ATTACH_MAX_FDS ? nfds :
			  RP_ATTACH_MAX_FDS);
		return conn_broken(c, -EPROTO, "malformed reply", err, errlen);
	}
	if (want) {
		struct stat st;

		/* Read and polled as the channel's: a socket, or nothing. */
		if (fstat(fds[0], &st) != 0 || !S_ISSOCK(st.st_mode)) {
			close(fds[0]);
			return conn_broken(c, -EPROTO, "the reply's descriptor is not a socket",
					   err, errlen);
		}
		*fd = fds[0];
	}
	slot->u = rep.slot.u;
	*result = rep.hdr.result;
	return 0;
}

void
rp_attach_close(struct rp_attach_conn *c)
{
	for (unsigned int d = 0; d < c->nr_devs; d++) {
		if (c->dev[d].ctl != NULL)
			munmap((void *)(uintptr_t)c->dev[d].ctl,
			       (size_t)c->dev[d].region_size);
		if (c->dev[d].arena != NULL)
			munmap(c->dev[d].arena, (size_t)c->dev[d].arena_size);
		if (c->dev[d].wake_fd >= 0)
			close(c->dev[d].wake_fd);
	}
	if (c->sock >= 0)
		close(c->sock);
	conn_reset(c);
}

/* ------------------------------------------------ the default host */

#define PICK_MAX_SOCKS	64

/* The *.sock files of the run directory. */
struct pick_socks {
	unsigned int n;
	struct {
		char name[256];
		dev_t dev;
		ino_t ino;
		bool here;	/* a host of this network namespace listens */
	} s[PICK_MAX_SOCKS];
};

/*
 * Mark the sockets a host of this network namespace listens on.
 * /proc/net/unix lists the Unix sockets of the reader's network namespace
 * only, with the path each is bound to: a host's listening socket is in
 * its namespace's list, whoever reads it, with no right over the host's
 * process and without connecting to it.  Files are compared, not path
 * strings, which the host may have spelled otherwise.  Without
 * /proc/net/unix, every socket counts.
 */
static void
pick_mark(struct pick_socks *socks)
{
	char line[PATH_MAX + 128];
	unsigned int i;
	FILE *f;

	f = fopen("/proc/net/unix", "re");
	if (f == NULL) {
		for (i = 0; i < socks->n; i++)
			socks->s[i].here = true;
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long flags;
		struct stat st;
		int path = 0;

		/* Num RefCount Protocol Flags Type St Inode Path */
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%*s %*s %*s %lx %*s %*s %*s %n", &flags,
			   &path) < 1 || path == 0 || line[path] != '/' ||
		    !(flags & (1UL << 16)) ||	/* __SO_ACCEPTCON: listens */
		    stat(line + path, &st) != 0)
			continue;
		for (i = 0; i < socks->n; i++)
			if (socks->s[i].dev == st.st_dev &&
			    socks->s[i].ino == st.st_ino)
				socks->s[i].here = true;
	}
	fclose(f);
}

/* The names of the sockets of socks whose here is as asked, into buf. */
static const char *
pick_list(const struct pick_socks *socks, bool here, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < socks->n && used < len; i++)
		if (socks->s[i].here == here)
			used += (size_t)snprintf(buf + used, len - used,
						 "%s%s", used == 0 ? "" : ", ",
						 socks->s[i].name);
	return buf;
}

/* The *.sock files of dir into socks; 0 or a negative errno. */
static int
pick_scan(const char *dir, struct pick_socks *socks)
{
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	if (d == NULL)
		return -errno;
	socks->n = 0;
	while ((de = readdir(d)) != NULL && socks->n < PICK_MAX_SOCKS) {
		size_t len = strlen(de->d_name);
		struct stat st;

		if (len <= 5 || len >= sizeof(socks->s[0].name) ||
		    strcmp(de->d_name + len - 5, ".sock") != 0 ||
		    fstatat(dirfd(d), de->d_name, &st, 0) != 0 ||
		    !S_ISSOCK(st.st_mode))
			continue;
		memcpy(socks->s[socks->n].name, de->d_name, len + 1);
		socks->s[socks->n].dev = st.st_dev;
		socks->s[socks->n].ino = st.st_ino;
		socks->s[socks->n].here = false;
		socks->n++;
	}
	closedir(d);
	return 0;
}

int
rp_attach_pick(char *path, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("ROCEPMD_RUN_DIR");
	const char *dir = env != NULL && env[0] != '\0' ? env : RP_SERVE_DIR;
	struct pick_socks *socks;
	char list[1024];
	unsigned int i, n = 0;
	int ret;

	socks = calloc(1, sizeof(*socks));	/* 18 KiB: not on a stack */
	if (socks == NULL) {
		snprintf(err, errlen, "%s: %s", dir, strerror(ENOMEM));
		return -ENOMEM;
	}
	ret = pick_scan(dir, socks);
	if (ret < 0) {
		snprintf(err, errlen, "%s: %s (start a host with rocepmd-testpmd --host, or name its socket: --attach=SOCKET)",
			 dir, strerror(-ret));
		goto out;
	}
	pick_mark(socks);
	for (i = 0; i < socks->n; i++) {
		if (socks->s[i].here && n++ == 0 &&
		    (size_t)snprintf(path, len, "%s/%s", dir,
				     socks->s[i].name) >= len) {
			snprintf(err, errlen, "%s/%s: %s", dir,
				 socks->s[i].name, strerror(ENAMETOOLONG));
			ret = -ENAMETOOLONG;
			goto out;
		}
	}
	if (n == 1) {
		ret = 0;
	} else if (socks->n == 0) {
		snprintf(err, errlen, "no host socket (*.sock) in %s (start a host with rocepmd-testpmd --host, or name its socket: --attach=SOCKET)",
			 dir);
		ret = -ENOENT;
	} else if (n == 0) {
		snprintf(err, errlen, "no host of this network namespace serves a socket in %s (%s: hosts of other namespaces, or stopped); start one here with rocepmd-testpmd --host, or name a socket: --attach=SOCKET",
			 dir, pick_list(socks, false, list, sizeof(list)));
		ret = -ECONNREFUSED;
	} else {
		snprintf(err, errlen, "%u host sockets of this network namespace in %s: %s; choose one with --attach=SOCKET",
			 n, dir, pick_list(socks, true, list, sizeof(list)));
		ret = -ENOTUNIQ;
	}
out:
	free(socks);
	return ret;
}
