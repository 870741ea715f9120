/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_memguard: an attached program's memory is reached through its
 * address space, never through its PID (issue 24; pmd/transport/rp_mem.c).
 *
 *   rp_memguard peer PORT exec|fork TRIGGER
 *       (host A) listens on TCP PORT; the target connects; two RC QPs
 *       each way; a WRITE and a READ through the target's rkey must work;
 *       then "GO", and once the file TRIGGER exists (the script's word
 *       that the victim is in place) a WRITE and a READ through the same
 *       rkey and address, which must both complete in error; the victim's
 *       verdict on its memory comes back.  Exit 0 only if both failed, the
 *       READ brought none of the victim's bytes and the victim is intact.
 *   rp_memguard target HOST PORT exec|fork
 *       (host B, attached) registers an MR over a page-aligned buffer,
 *       connects; at "GO":
 *         exec: clears close-on-exec on every descriptor (the attach
 *               socket included) and exec()s itself as the victim, with
 *               no environment (as a setuid program would run);
 *         fork: keeps a copy of every descriptor that the shim's fork
 *               handler does not know, forks a child that holds them (the
 *               attach socket among them) and sleeps, prints its own PID
 *               and exits, so that the PID may be reused.
 *   rp_memguard victim-fd FD ADDR LEN
 *   rp_memguard victim-tcp HOST PORT ADDR LEN PID
 *       maps LEN bytes at ADDR (the MR's address) filled with 0x5a, says
 *       READY (on the inherited connection, or a new one), waits for
 *       DONE and answers INTACT or CLOBBERED.  victim-tcp first checks
 *       that it got PID (exit 77 otherwise: the script retries).
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define MG_LEN		65536u
#define MG_VICTIM	0x5a
#define MG_ATTACK	0xee
#define MG_SANE		0x11
#define MG_PSN		0x1234

static const char *mg_role = "rp_memguard";

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: FAIL: ", mg_role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void
say(int fd, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (write(fd, buf, (size_t)n) != n)
		die("write to the control connection: %s", strerror(errno));
}

/* One line from the control connection (a byte at a time: no buffering
 * that an exec would lose). */
static void
hear(int fd, char *buf, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r = read(fd, buf + n, 1);

		if (r <= 0)
			die("control connection closed (%s)",
			    r < 0 ? strerror(errno) : "EOF");
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
}

static int
tcp_connect(const char *host, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || inet_pton(AF_INET, host, &a.sin_addr) != 1)
		die("socket/address %s", host);
	for (int i = 0; i < 100; i++) {
		if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
		usleep(100000);
	}
	die("connect %s:%d: %s", host, port, strerror(errno));
}

/* ------------------------------------------------------------- verbs */

struct mg_ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
};

static void
ep_open(struct mg_ep *e)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	if (l == NULL || l[0] == NULL)
		die("no RDMA device");
	e->ctx = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	if (e->ctx == NULL || ibv_query_gid(e->ctx, 1, 0, &e->gid) != 0)
		die("open device / GID 0");
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	e->buf = mmap(NULL, MG_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (e->pd == NULL || e->cq == NULL || e->buf == MAP_FAILED)
		die("PD, CQ or buffer");
	e->mr = ibv_reg_mr(e->pd, e->buf, MG_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (e->mr == NULL)
		die("ibv_reg_mr: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = e->cq, .recv_cq = e->cq,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.qp_type = IBV_QPT_RC,
		};
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .port_num = 1,
			.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ,
		};

		e->qp[i] = ibv_create_qp(e->pd, &ia);
		if (e->qp[i] == NULL ||
		    ibv_modify_qp(e->qp[i], &a, IBV_QP_STATE |
				  IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS) != 0)
			die("QP %d: %s", i, strerror(errno));
	}
}

static void
ep_connect(struct mg_ep *e, int i, uint32_t rqpn, const union ibv_gid *rgid)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = rqpn, .rq_psn = MG_PSN,
		.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = *rgid, .sgid_index = 0,
				      .hop_limit = 64 } },
	};

	if (ibv_modify_qp(e->qp[i], &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = MG_PSN;
	a.timeout = 12;			/* 16 ms */
	a.retry_cnt = 3;
	a.rnr_retry = 3;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(e->qp[i], &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RTS: %s", strerror(errno));
}

static void
gid_str(const union ibv_gid *g, char *s)
{
	for (int i = 0; i < 16; i++)
		sprintf(s + 2 * i, "%02x", g->raw[i]);
}

static void
gid_parse(const char *s, union ibv_gid *g)
{
	for (int i = 0; i < 16; i++) {
		unsigned int v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			die("bad GID %s", s);
		g->raw[i] = (uint8_t)v;
	}
}

/* One RDMA operation on QP i; its completion status (a deadline of 30 s:
 * the transport's retries end long before). */
static enum ibv_wc_status
rdma_op(struct mg_ep *e, int i, enum ibv_wr_opcode op, uint64_t raddr,
	uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = MG_LEN,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;
	time_t t0 = time(NULL);
	int n;

	if (ibv_post_send(e->qp[i], &wr, &bad) != 0)
		die("post %d: %s", op, strerror(errno));
	do {
		n = ibv_poll_cq(e->cq, 1, &wc);
		if (n < 0)
			die("poll_cq");
		if (n == 0 && time(NULL) - t0 > 30)
			die("no completion in 30 s for opcode %d", op);
	} while (n == 0);
	return wc.status;
}

/* -------------------------------------------------------------- roles */

static int
peer(int port, bool exec, const char *trigger)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_ANY) };
	int one = 1, ls, fd, vfd, leaked = 0;
	uint32_t rq[2], rkey, len;
	enum ibv_wc_status ws, rs;
	char line[256], gs[33];
	union ibv_gid rgid;
	uint64_t raddr;
	struct mg_ep e;
	struct stat st;

	mg_role = "peer";
	ep_open(&e);
	ls = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(ls, 4))
		die("listen on %d: %s", port, strerror(errno));
	printf("listening on %d\n", port);
	fflush(stdout);
	fd = accept(ls, NULL, NULL);
	hear(fd, line, sizeof(line));
	if (sscanf(line, "QP %" SCNu32 " %" SCNu32 " %32s %" SCNx64 " %" SCNx32
		   " %" SCNu32, &rq[0], &rq[1], gs, &raddr, &rkey, &len) != 6)
		die("bad QP line '%s'", line);
	gid_parse(gs, &rgid);
	gid_str(&e.gid, gs);
	say(fd, "QP %u %u %s\n", e.qp[0]->qp_num, e.qp[1]->qp_num, gs);
	ep_connect(&e, 0, rq[0], &rgid);
	ep_connect(&e, 1, rq[1], &rgid);
	hear(fd, line, sizeof(line));		/* READY: its QPs are RTS */
	/* The path works: a WRITE, and the same bytes READ back. */
	memset(e.buf, MG_SANE, MG_LEN);
	if ((ws = rdma_op(&e, 0, IBV_WR_RDMA_WRITE, raddr, rkey)) != 0)
		die("the first WRITE failed: %s", ibv_wc_status_str(ws));
	memset(e.buf, 0, MG_LEN);
	if ((rs = rdma_op(&e, 1, IBV_WR_RDMA_READ, raddr, rkey)) != 0)
		die("the first READ failed: %s", ibv_wc_status_str(rs));
	for (uint32_t i = 0; i < MG_LEN; i++)
		if (e.buf[i] != MG_SANE)
			die("the first READ brought 0x%02x at %u", e.buf[i], i);
	printf("before: WRITE and READ of %u bytes through rkey 0x%x at 0x%" PRIx64 ": ok\n",
	       MG_LEN, rkey, raddr);
	say(fd, "GO\n");
	/* The victim says READY on the old connection (exec) or a new one. */
	vfd = exec ? fd : accept(ls, NULL, NULL);
	hear(vfd, line, sizeof(line));
	printf("victim: %s\n", line);
	fflush(stdout);
	for (int i = 0; stat(trigger, &st) != 0; i++) {
		if (i > 600)
			die("no trigger file %s in 60 s", trigger);
		usleep(100000);
	}
	memset(e.buf, MG_ATTACK, MG_LEN);
	ws = rdma_op(&e, 0, IBV_WR_RDMA_WRITE, raddr, rkey);
	memset(e.buf, 0, MG_LEN);
	rs = rdma_op(&e, 1, IBV_WR_RDMA_READ, raddr, rkey);
	for (uint32_t i = 0; i < MG_LEN; i++)
		leaked += e.buf[i] == MG_VICTIM;
	say(vfd, "DONE\n");
	hear(vfd, line, sizeof(line));
	printf("after: WRITE %s, READ %s (%d of the victim's bytes), victim %s\n",
	       ibv_wc_status_str(ws), ibv_wc_status_str(rs), leaked, line);
	if (ws == IBV_WC_SUCCESS || rs == IBV_WC_SUCCESS || leaked != 0 ||
	    strcmp(line, "INTACT") != 0)
		die("the old rkey reached the new program");
	printf("PASS\n");
	return 0;
}

/* Every descriptor: close-on-exec cleared (exec), or copied past the
 * shim's knowledge (fork). */
static void
fds_keep(bool exec)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int dfd = dirfd(d);

	while ((de = readdir(d)) != NULL) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] == '.' || fd == dfd || fd < 3)
			continue;
		if (exec)
			fcntl(fd, F_SETFD, 0);
		else
			fcntl(fd, F_DUPFD, 500);
	}
	closedir(d);
}

static int
target(const char *host, int port, const char *how)
{
	char line[256], gs[33], a1[32], a2[32], a3[32];
	union ibv_gid rgid;
	uint32_t rq[2];
	struct mg_ep e;
	int fd;

	mg_role = "target";
	ep_open(&e);
	memset(e.buf, 0, MG_LEN);
	fd = tcp_connect(host, port);
	gid_str(&e.gid, gs);
	say(fd, "QP %u %u %s %" PRIx64 " %x %u\n", e.qp[0]->qp_num,
	    e.qp[1]->qp_num, gs, (uint64_t)(uintptr_t)e.buf, e.mr->rkey,
	    MG_LEN);
	hear(fd, line, sizeof(line));
	if (sscanf(line, "QP %" SCNu32 " %" SCNu32 " %32s", &rq[0], &rq[1],
		   gs) != 3)
		die("bad QP line '%s'", line);
	gid_parse(gs, &rgid);
	ep_connect(&e, 0, rq[0], &rgid);
	ep_connect(&e, 1, rq[1], &rgid);
	say(fd, "READY\n");
	hear(fd, line, sizeof(line));
	if (strcmp(line, "GO") != 0)
		die("expected GO, got '%s'", line);
	if (strcmp(how, "exec") == 0) {
		char *argv[] = { "rp_memguard", "victim-fd", a1, a2, a3, NULL };
		char *envp[] = { NULL };

		snprintf(a1, sizeof(a1), "%d", fd);
		snprintf(a2, sizeof(a2), "%" PRIx64, (uint64_t)(uintptr_t)e.buf);
		snprintf(a3, sizeof(a3), "%u", MG_LEN);
		fds_keep(true);
		printf("target %d: exec with every descriptor kept\n",
		       (int)getpid());
		fflush(stdout);
		execve("/proc/self/exe", argv, envp);
		die("execve: %s", strerror(errno));
	}
	/* fork: a child holds the connection, this process ends. */
	fds_keep(false);
	if (fork() == 0) {
		sleep(60);
		_exit(0);
	}
	printf("target pid %d buf %" PRIx64 "\n", (int)getpid(),
	       (uint64_t)(uintptr_t)e.buf);
	fflush(stdout);
	_exit(0);
}

static int
victim(int fd, uint64_t addr, uint32_t len)
{
	char line[64];
	uint8_t *p;

	mg_role = "victim";
	p = mmap((void *)(uintptr_t)addr, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED || (uintptr_t)p != addr)
		die("cannot map %u bytes at 0x%" PRIx64 ": %s", len, addr,
		    strerror(errno));
	memset(p, MG_VICTIM, len);
	say(fd, "READY pid %d\n", (int)getpid());
	hear(fd, line, sizeof(line));
	for (uint32_t i = 0; i < len; i++)
		if (p[i] != MG_VICTIM) {
			say(fd, "CLOBBERED\n");
			die("byte %u is 0x%02x", i, p[i]);
		}
	say(fd, "INTACT\n");
	return 0;
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && strcmp(argv[1], "peer") == 0)
		return peer(atoi(argv[2]), strcmp(argv[3], "exec") == 0,
			    argv[4]);
	if (argc == 5 && strcmp(argv[1], "target") == 0)
		return target(argv[2], atoi(argv[3]), argv[4]);
	if (argc == 5 && strcmp(argv[1], "victim-fd") == 0)
		return victim(atoi(argv[2]), strtoull(argv[3], NULL, 16),
			      (uint32_t)atoi(argv[4]));
	if (argc == 7 && strcmp(argv[1], "victim-tcp") == 0) {
		if (getpid() != atoi(argv[6]))
			return 77;
		return victim(tcp_connect(argv[2], atoi(argv[3])),
			      strtoull(argv[4], NULL, 16),
			      (uint32_t)atoi(argv[5]));
	}
	fprintf(stderr, "usage: rp_memguard peer PORT exec|fork TRIGGER | target HOST PORT exec|fork | victim-fd FD ADDR LEN | victim-tcp HOST PORT ADDR LEN PID\n");
	return 2;
}
