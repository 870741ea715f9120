/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs shim attached to a host (ROCEPMD_ATTACH, shim_attach.c and
 * rp_attach_client.c), against a fake host: this program, speaking
 * rp_attach.h on a socket in a temporary directory, with a memfd region
 * holding a valid control block.
 *
 * Each case forks a client that sets ROCEPMD_ATTACH and calls
 * ibv_get_device_list() with the shim preloaded (meson does), while the
 * parent plays the host: a good WELCOME must give the device, and
 * ibv_open_device, ibv_alloc_pd, ibv_create_cq, ibv_create_qp,
 * ibv_modify_qp and the destroys must run their requests over the socket
 * (no descriptor in any request; the host's socket for the async events
 * in ASYNC_REG's reply, as SCM_RIGHTS, becoming the context's async_fd,
 * and ASYNC_UNREG naming it by the id of that reply), and ibv_post_recv must
 * write the work queue in the host's region, and ring the doorbell (the
 * wake-up eventfd of the WELCOME, since the host's control block says
 * need_wakeup) only once the RQ's post_wake asks (the host sets it when
 * the QP is modified to ERR, as an engine does); every malformed WELCOME (bad magic, versions, device
 * count, too few descriptors, a region too small or smaller than
 * announced, a bad control block), a host that closes, no socket at all,
 * must give zero devices, the shim's message naming the fault on stderr,
 * and a clean exit: never a crash or a hang.
 * No EAL, no engine: the unit suite.
 *
 * test_attach_client --host PATH N: the same fake host, with good
 * WELCOMEs, for N clients on PATH, then exit (run_attach.sh: rocepmd-run
 * --attach).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "rp_abi.h"
#include "rp_attach.h"

#define REGION_SIZE	(1u << 20)
#define FAKE_PDN	7u
#define FAKE_CQN	3u
#define FAKE_QPN	0x111u
#define FAKE_ASYNC_ID	5u
/* Where the fake host puts the CQ and the QP's work queues. */
#define FAKE_CQ_OFF	0x10000u
#define FAKE_SQ_OFF	0x20000u
#define FAKE_RQ_OFF	0x30000u
#define FAKE_WQ_SIZE	64u
#define FAKE_WQ_STRIDE	256u
#define CASE_TIMEOUT_MS	10000

enum fault {
	F_NONE,
	F_MAGIC,		/* WELCOME hdr.magic */
	F_VERSION,		/* WELCOME hdr.version */
	F_ABI,			/* WELCOME abi_version */
	F_NR_DEVS,		/* more than RP_ATTACH_MAX_DEVS */
	F_WAKE_MASK,		/* a wake-up fd for a device not announced */
	F_FEW_FDS,		/* wake_mask announces an fd that is not sent */
	F_TINY_REGION,		/* region_size < sizeof(struct rp_dev_ctl) */
	F_SHORT_FILE,		/* region_size > the memfd's size */
	F_CTL_MAGIC,		/* control block of another ABI */
	F_CTL_SIZE,		/* control block's region_size != WELCOME's */
	F_SHORT_MSG,		/* WELCOME cut short */
	F_CLOSE,		/* host closes instead of answering HELLO */
	F_CLOSE_CTRL,		/* host closes at the first control request */
	F_NO_SOCKET,		/* nothing at the path */
	F_RELATIVE,		/* ROCEPMD_ATTACH not absolute */
	F_SERVE,		/* good, whatever the client asks (--host) */
};

struct tcase {
	const char *name;
	enum fault fault;
	const char *msg;	/* expected in the client's stderr; NULL:
				 * nothing may be written there */
};

static const struct tcase cases[] = {
	{ "good", F_NONE, NULL },
	{ "bad-magic", F_MAGIC, "not a rocepmd WELCOME" },
	{ "bad-version", F_VERSION, "attach protocol version" },
	{ "bad-abi", F_ABI, "ABI version 999" },
	{ "too-many-devs", F_NR_DEVS, "announces 5 devices" },
	{ "bad-wake-mask", F_WAKE_MASK, "wake-up mask 0x3" },
	{ "too-few-fds", F_FEW_FDS, "carries 2 descriptors, 3 announced" },
	{ "tiny-region", F_TINY_REGION, "region of 64 bytes" },
	{ "short-file", F_SHORT_FILE, "not a file of" },
	{ "bad-ctl", F_CTL_MAGIC, "control block ABI 0xdeadbeef" },
	{ "ctl-size", F_CTL_SIZE, "control block says" },
	{ "short-welcome", F_SHORT_MSG, "not a rocepmd WELCOME" },
	{ "host-closes", F_CLOSE, "closed the connection" },
	{ "host-dies", F_CLOSE_CTRL, "the host closed the connection" },
	{ "no-socket", F_NO_SOCKET, "No such file or directory" },
	{ "relative-path", F_RELATIVE, "not an absolute path" },
};

static char tmpdir[] = "/tmp/rp-attach-test-XXXXXX";

/* ---------------------------------------------------------------- client */

#define CCHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "CLIENT FAIL %s:%d: %s (errno %d)\n", \
			__FILE__, __LINE__, #cond, errno); \
		bad++; \
	} \
} while (0)

static int
client(const struct tcase *t, const char *path)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 16, .max_recv_wr = 16,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};
	struct ibv_qp_attr qa = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_LOCAL_WRITE,
	};
	static uint8_t buf[64];
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = sizeof(buf), .lkey = 0x99,
	};
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad_rwr = NULL;
	struct ibv_pd *pd;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	struct pollfd p;
	int bad = 0;
	int n = -1;

	setenv("ROCEPMD_ATTACH", path, 1);
	unsetenv("ROCEPMD_CONFIG");
	list = ibv_get_device_list(&n);
	CCHECK(list != NULL);
	if (list == NULL)
		return 1;
	if (t->fault != F_NONE && t->fault != F_CLOSE_CTRL) {
		CCHECK(n == 0);
		CCHECK(list[0] == NULL);
		ibv_free_device_list(list);
		return bad;
	}
	CCHECK(n == 1);
	if (n != 1)
		return bad;
	CCHECK(strcmp(ibv_get_device_name(list[0]), "rocepmd0") == 0);

	ctx = ibv_open_device(list[0]);
	if (t->fault == F_CLOSE_CTRL) {
		/* Its ASYNC_REG finds the host gone: a clean failure. */
		CCHECK(ctx == NULL);
		ibv_free_device_list(list);
		return bad;
	}
	CCHECK(ctx != NULL);
	if (ctx == NULL)
		return bad;
	/* The host sent 8 bytes on the socket it made: ours now. */
	p = (struct pollfd){ .fd = ctx->async_fd, .events = POLLIN };
	CCHECK(poll(&p, 1, 0) == 1);
	pd = ibv_alloc_pd(ctx);
	CCHECK(pd != NULL);
	if (pd != NULL) {
		CCHECK(pd->handle == FAKE_PDN);
		cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		CCHECK(cq != NULL);
	}
	if (cq != NULL) {
		qia.send_cq = cq;
		qia.recv_cq = cq;
		qp = ibv_create_qp(pd, &qia);
		CCHECK(qp != NULL);
	}
	if (qp != NULL) {
		CCHECK(qp->qp_num == FAKE_QPN);
		CCHECK(ibv_modify_qp(qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
		/* Into the host's region; no doorbell: post_wake is 0. */
		CCHECK(ibv_post_recv(qp, &rwr, &bad_rwr) == 0);
		/* The host sets post_wake: its wake-up eventfd too. */
		CCHECK(ibv_modify_qp(qp, &(struct ibv_qp_attr){
					.qp_state = IBV_QPS_ERR },
				     IBV_QP_STATE) == 0);
		CCHECK(ibv_post_recv(qp, &rwr, &bad_rwr) == 0);
		CCHECK(ibv_destroy_qp(qp) == 0);
	}
	if (cq != NULL)
		CCHECK(ibv_destroy_cq(cq) == 0);
	if (pd != NULL)
		CCHECK(ibv_dealloc_pd(pd) == 0);
	CCHECK(ibv_close_device(ctx) == 0);
	ibv_free_device_list(list);
	return bad;
}

/* ------------------------------------------------------------------ host */

static int failures;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL %s: %s: ", t->name, #cond); \
		fprintf(stderr, __VA_ARGS__); \
		fprintf(stderr, "\n"); \
		failures++; \
	} \
} while (0)

static int
send_with_fds(int sock, const void *msg, size_t len, const int *fds,
	      unsigned int nfds)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 8)];
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
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/* One message, and its descriptor if one came (else *fd = -1). */
static ssize_t
recv_msg(int sock, void *buf, size_t len, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct pollfd p = { .fd = sock, .events = POLLIN };
	struct cmsghdr *cm;
	ssize_t n;

	*fd = -1;
	if (poll(&p, 1, CASE_TIMEOUT_MS) != 1)
		return -1;
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	for (cm = CMSG_FIRSTHDR(&mh); n >= 0 && cm != NULL;
	     cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET &&
		    cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof(*fd));
	return n;
}

static int
region_make(enum fault f, struct rp_dev_ctl **ctl, size_t *mapped)
{
	int fd = memfd_create("fake-region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	size_t size = f == F_SHORT_FILE ? REGION_SIZE / 2 : REGION_SIZE;

	*mapped = size;
	if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
		return -1;
	*ctl = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*ctl == MAP_FAILED)
		return -1;
	(*ctl)->magic = f == F_CTL_MAGIC ? 0xdeadbeefu : RP_ABI_MAGIC;
	(*ctl)->version = RP_ABI_VERSION;
	(*ctl)->region_size = f == F_CTL_SIZE ? REGION_SIZE * 2 : REGION_SIZE;
	snprintf((*ctl)->name, sizeof((*ctl)->name), "rocepmd0");
	(*ctl)->mtu = 1024;
	(*ctl)->max_qp = 16;
	(*ctl)->max_cq = 16;
	(*ctl)->max_pd = 16;
	(*ctl)->max_cqe = 4096;
	(*ctl)->max_qp_wr = 1024;
	(*ctl)->max_sge = RP_MAX_SGE;
	(*ctl)->max_inline = RP_MAX_INLINE;
	/* The engine sleeps: a post must signal the wake-up eventfd. */
	(*ctl)->need_wakeup = 1;
	/* As the engine seals it: a client that maps it writable fails. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE) != 0)
		return -1;
	return fd;
}

/* The client's arena: its objects (the CQ and QP offsets of host_ctrl). */
static int
arena_make(uint8_t **arena)
{
	int fd = memfd_create("fake-arena", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, (off_t)REGION_SIZE) != 0)
		return -1;
	*arena = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		      fd, 0);
	return *arena == MAP_FAILED ? -1 : fd;
}

/* Serve control requests until the client hangs up. */
static void
host_ctrl(const struct tcase *t, int sock, uint8_t *arena)
{
	struct rp_attach_ctrl r;
	bool seen_reg = false, seen_alloc = false, seen_free = false;
	bool seen_unreg = false, seen_qp = false;
	const uint64_t one = 1;
	int async[2] = { -1, -1 };
	ssize_t n;
	int fd, out;

	while ((n = recv_msg(sock, &r, sizeof(r), &fd)) > 0) {
		CHECK(n == (ssize_t)sizeof(r), "request of %zd bytes", n);
		CHECK(r.hdr.magic == RP_ATTACH_MAGIC &&
		      r.hdr.version == RP_ATTACH_VERSION &&
		      r.hdr.type == RP_ATTACH_CTRL, "request header");
		CHECK(r.dev == 0, "request for device %u", r.dev);
		if (t->fault == F_CLOSE_CTRL) {
			if (fd >= 0)
				close(fd);
			return;
		}
		r.hdr.result = 0;
		out = -1;
		CHECK(fd < 0, "request %u carries a descriptor", r.slot.op);
		switch (r.slot.op) {
		case RP_CTRL_ASYNC_REG:
			/* As the host: a socket pair, one event on our end,
			 * the other end to the client. */
			seen_reg = true;
			CHECK(async[0] < 0 &&
			      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
					 async) == 0, "socketpair");
			if (async[0] >= 0 &&
			    write(async[0], &one, sizeof(one)) != sizeof(one))
				CHECK(0, "write to our end of the async socket");
			r.slot.u.async.prod = 0;
			r.slot.u.async.id = FAKE_ASYNC_ID;
			out = async[1];
			break;
		case RP_CTRL_ASYNC_UNREG:
			seen_unreg = true;
			CHECK(r.slot.u.async.id == FAKE_ASYNC_ID,
			      "ASYNC_UNREG of registration %u",
			      r.slot.u.async.id);
			break;
		case RP_CTRL_PD_ALLOC:
			seen_alloc = true;
			r.slot.u.pd.pdn = FAKE_PDN;
			break;
		case RP_CTRL_CQ_CREATE:
			r.slot.u.cq.cqn = FAKE_CQN;
			r.slot.u.cq.size = 64;
			r.slot.u.cq.off = FAKE_CQ_OFF;
			break;
		case RP_CTRL_QP_CREATE:
			seen_qp = true;
			r.slot.u.qp_create.qpn = FAKE_QPN;
			r.slot.u.qp_create.sq_size = FAKE_WQ_SIZE;
			r.slot.u.qp_create.sq_stride = FAKE_WQ_STRIDE;
			r.slot.u.qp_create.rq_size = FAKE_WQ_SIZE;
			r.slot.u.qp_create.rq_stride = FAKE_WQ_STRIDE;
			r.slot.u.qp_create.sq_off = FAKE_SQ_OFF;
			r.slot.u.qp_create.rq_off = FAKE_RQ_OFF;
			break;
		case RP_CTRL_QP_MODIFY:
			/* As an engine does for a QP in ERR (rp_qp_error). */
			if (r.slot.u.qp.attr.qp_state == IBV_QPS_ERR &&
			    arena != MAP_FAILED)
				((struct rp_wq_hdr *)(arena + FAKE_RQ_OFF))->
					post_wake = 1;
			break;
		case RP_CTRL_QP_DESTROY:
		case RP_CTRL_CQ_DESTROY:
			break;
		case RP_CTRL_PD_FREE:
			seen_free = true;
			CHECK(r.slot.u.pd.pdn == FAKE_PDN, "PD_FREE of pd %u",
			      r.slot.u.pd.pdn);
			break;
		default:
			r.hdr.result = -EOPNOTSUPP;
			break;
		}
		if (fd >= 0)
			close(fd);
		CHECK(send_with_fds(sock, &r, sizeof(r), &out,
				    out >= 0 ? 1 : 0) == 0,
		      "reply: %s", strerror(errno));
		if (out >= 0) {
			close(out);
			async[1] = -1;
		}
	}
	if (async[0] >= 0)
		close(async[0]);
	if (t->fault == F_NONE)
		CHECK(seen_reg && seen_alloc && seen_free && seen_unreg &&
		      seen_qp,
		      "requests seen: ASYNC_REG %d PD_ALLOC %d QP_CREATE %d PD_FREE %d ASYNC_UNREG %d",
		      seen_reg, seen_alloc, seen_qp, seen_free, seen_unreg);
}

static void
host(const struct tcase *t, int lsock)
{
	struct rp_attach_welcome w;
	struct rp_attach_hello h;
	struct rp_dev_ctl *ctl = NULL;
	struct pollfd p = { .fd = lsock, .events = POLLIN };
	int fds[3], nfds;
	size_t wlen = sizeof(w);
	int sock, fd, efd, afd;
	uint8_t *arena = MAP_FAILED;
	size_t mapped = 0;
	ssize_t n;

	if (poll(&p, 1, CASE_TIMEOUT_MS) != 1) {
		CHECK(0, "the client never connected");
		return;
	}
	sock = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	CHECK(sock >= 0, "accept: %s", strerror(errno));
	if (sock < 0)
		return;
	n = recv_msg(sock, &h, sizeof(h), &fd);
	CHECK(n == (ssize_t)sizeof(h), "HELLO of %zd bytes", n);
	/* Its memory comes with it: its own /proc/self/mem, read-write. */
	CHECK(fd >= 0 && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR,
	      "HELLO without the client's memory descriptor");
	if (fd >= 0) {
		uint64_t v = 0;

		CHECK(pread(fd, &v, sizeof(v), (off_t)h.probe_addr) ==
		      (ssize_t)sizeof(v) && v == h.probe_value,
		      "the probe is not readable through the HELLO's descriptor");
		close(fd);
	}
	CHECK(h.hdr.magic == RP_ATTACH_MAGIC &&
	      h.hdr.version == RP_ATTACH_VERSION &&
	      h.hdr.type == RP_ATTACH_HELLO &&
	      h.abi_version == RP_ABI_VERSION, "HELLO header");
	if (t->fault == F_CLOSE) {
		close(sock);
		return;
	}

	fd = region_make(t->fault, &ctl, &mapped);
	afd = arena_make(&arena);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	CHECK(fd >= 0 && afd >= 0 && efd >= 0, "region, arena or eventfd: %s",
	      strerror(errno));
	memset(&w, 0, sizeof(w));
	w.hdr = (struct rp_attach_hdr){ .magic = RP_ATTACH_MAGIC,
		.version = RP_ATTACH_VERSION, .type = RP_ATTACH_WELCOME };
	w.abi_version = RP_ABI_VERSION;
	w.nr_devs = 1;
	w.client_id = 42;
	w.wake_mask = 1;
	w.region_size[0] = REGION_SIZE;
	w.arena_size[0] = REGION_SIZE;
	fds[0] = fd;
	fds[1] = afd;
	fds[2] = efd;
	nfds = 3;
	switch (t->fault) {
	case F_MAGIC:
		w.hdr.magic = 0x12345678u;
		break;
	case F_VERSION:
		w.hdr.version = RP_ATTACH_VERSION + 1;
		break;
	case F_ABI:
		w.abi_version = 999;
		break;
	case F_NR_DEVS:
		w.nr_devs = RP_ATTACH_MAX_DEVS + 1;
		break;
	case F_WAKE_MASK:
		w.wake_mask = 3;
		break;
	case F_FEW_FDS:
		nfds = 2;
		break;
	case F_TINY_REGION:
		w.region_size[0] = 64;
		break;
	case F_SHORT_MSG:
		wlen = sizeof(w.hdr) + 4;
		break;
	default:
		break;
	}
	CHECK(send_with_fds(sock, &w, wlen, fds, nfds) == 0, "WELCOME: %s",
	      strerror(errno));
	close(fd);
	close(afd);
	host_ctrl(t, sock, arena);
	close(sock);
	if (t->fault == F_NONE && arena != MAP_FAILED) {
		/* Objects are in the client's arena, not the device region. */
		const struct rp_wq_hdr *rq = (const void *)
			(arena + FAKE_RQ_OFF);
		uint64_t rings = 0;

		CHECK(rq->prod == 2, "the receive queue's producer index is %u, not 2",
		      rq->prod);
		CHECK(read(efd, &rings, sizeof(rings)) == sizeof(rings) &&
		      rings == 1, "the posts rang the doorbell %" PRIu64
		      " times, not once (the second)", rings);
	}
	close(efd);
	if (ctl != NULL && ctl != MAP_FAILED)
		munmap(ctl, mapped);
	if (arena != MAP_FAILED)
		munmap(arena, REGION_SIZE);
}

static bool
needs_host(enum fault f)
{
	return f != F_NO_SOCKET && f != F_RELATIVE;
}

static void
run_case(const struct tcase *t)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char path[sizeof(a.sun_path)];
	char out[8192];
	int pipefd[2], lsock = -1, status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s.sock", tmpdir, t->name);
	if (needs_host(t->fault)) {
		lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
		if (lsock < 0 || bind(lsock, (struct sockaddr *)&a, sizeof(a)) ||
		    listen(lsock, 4)) {
			CHECK(0, "listen on %s: %s", path, strerror(errno));
			return;
		}
	}
	if (t->fault == F_RELATIVE)
		snprintf(path, sizeof(path), "rocepmd.sock");
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		CHECK(0, "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], STDERR_FILENO);
		if (lsock >= 0)
			close(lsock);
		_exit(client(t, path) == 0 ? 0 : 1);
	}
	close(pipefd[1]);
	if (lsock >= 0) {
		host(t, lsock);
		close(lsock);
	}
	while (len < sizeof(out) - 1 &&
	       (n = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);

	CHECK(WIFEXITED(status), "client killed by signal %d",
	      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "client failed");
	if (t->msg != NULL)
		CHECK(strstr(out, t->msg) != NULL,
		      "no \"%s\" in the client's stderr", t->msg);
	else
		CHECK(len == 0, "the client wrote to stderr");
	printf("%-14s %s", t->name, out[0] != '\0' ? out : "(no output)\n");
	unlink(path);
}

/* --host PATH N: a good host for N clients. */
static int
serve(const char *path, const char *count)
{
	static const struct tcase t_serve = { "host", F_SERVE, NULL };
	const struct tcase *t = &t_serve;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	long n = strtol(count, NULL, 10);
	int lsock;

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	lsock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (lsock < 0 || bind(lsock, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lsock, 4)) {
		fprintf(stderr, "listen on %s: %s\n", path, strerror(errno));
		return 1;
	}
	printf("serving %s\n", path);
	fflush(stdout);
	for (long i = 0; i < n; i++)
		host(t, lsock);
	close(lsock);
	unlink(path);
	return failures != 0;
}

int
main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 4 && strcmp(argv[1], "--host") == 0)
		return serve(argv[2], argv[3]);
	if (argc != 1) {
		fprintf(stderr, "usage: %s [--host PATH N]\n", argv[0]);
		return 2;
	}
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	rmdir(tmpdir);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures != 0;
}
