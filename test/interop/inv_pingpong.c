/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inv_pingpong: the opcodes no rdma-core or perftest program sends, checked
 * between two verbs devices (rocepmd and rocepmd, or rocepmd and the
 * kernel's rxe; doc/guides/interop.rst).  libibverbs only, so the same
 * binary runs under rocepmd-run and on rxe.
 *
 *   server: inv_pingpong -d DEV -g GID_INDEX -p PORT [-K] [-R]
 *   client: inv_pingpong -d DEV -g GID_INDEX -p PORT [-K] [-R] SERVER
 *
 * -K: the device reports the kernel's ib_wc_flags, not libibverbs'
 * ibv_wc_flags (Linux's rxe: its provider copies the kernel's completion,
 * whose IB_WC_WITH_INVALIDATE is 1 << 2, IBV_WC_IP_CSUM_OK in
 * libibverbs; IBV_WC_WITH_INV is 1 << 3).  The server then takes either
 * bit for a SEND_WITH_INV and says so; invalidated_rkey is checked all
 * the same.  doc/guides/interop.rst.
 *
 * The two sides meet over TCP PORT (QPN, PSN, GID, the server's MR), like
 * ibv_rc_pingpong, connect an RC QP and run in order:
 *
 *   1. SEND_WITH_IMM (client -> server): the server's completion is a
 *      RECV with IBV_WC_WITH_IMM, the immediate and the data right;
 *   2. RDMA_WRITE_WITH_IMM into the server's MR: a RECV_RDMA_WITH_IMM
 *      completion with the immediate, the data in the MR;
 *   3. the server allocates a type 2 memory window and binds it with
 *      IBV_WR_BIND_MW on its QP over a second MR, registered over that
 *      part of its buffer with IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND
 *      only (the window, not the MR, grants REMOTE_WRITE | REMOTE_READ);
 *      the client WRITEs half of the window through the window's rkey and
 *      READs all of it back (its own half and the half the server wrote
 *      before), both sides checking the data;
 *   4. SEND_WITH_INV of the window's rkey: the server's completion has
 *      IBV_WC_WITH_INV and invalidated_rkey equal to that rkey;
 *   5. a WRITE through the invalidated rkey completes on the client with
 *      IBV_WC_REM_ACCESS_ERR.
 *
 * -R runs one check instead, on a connection of its own: the server posts
 * a receive whose lkey is that of an MR it has deregistered (neither
 * libibverbs, rxe nor rocepmd looks at lkeys when a receive is posted),
 * the client SENDs 64 bytes into it.  The responder finds the bad lkey
 * when it places the data: a fault of its own (IBTA 9.7.5.2.8: NAK
 * "remote operational error"), so the client's completion is
 * IBV_WC_REM_OP_ERR, and the server's receive completes in error: rocepmd
 * says IBV_WC_LOC_PROT_ERR (a protection fault, as mlx5 reports it); with
 * -K (rxe), IBV_WC_LOC_QP_OP_ERR, what rxe_resp.c reports for it (its
 * "malformed WQE", class A).
 *
 * TCP carries a one-byte step mark after each stage, so no request runs
 * before the other side is ready for it.  Exit status 0 and the line
 * "inv_pingpong: PASS ..." when every check held; otherwise a message
 * saying which and exit status 1.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define BUF_SIZE 8192
#define MSG_SIZE 64		/* SEND_WITH_IMM, SEND_WITH_INV payload */
#define WIMM_OFF 1024		/* WRITE_WITH_IMM target in the server's MR */
#define WIMM_SIZE 256
#define MW_OFF 4096		/* the window: [MW_OFF, MW_OFF + MW_SIZE) */
#define MW_SIZE 1024
#define RBUF_OFF 2048		/* client's READ destination */
#define IMM_SEND 0x11223344u
#define IMM_WRITE 0x55667788u
#define CQ_WAIT_S 30

struct peer {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint32_t rkey;		/* the server's MR, then its window */
	uint64_t addr;
} __attribute__((packed));

static const char *role = "?";

/* the kernel's IB_WC_WITH_INVALIDATE (include/rdma/ib_verbs.h) */
#define KERNEL_WC_WITH_INVALIDATE (1u << 2)

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "inv_pingpong %s: FAIL: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

static void expect_data(const uint8_t *p, size_t n, uint8_t seed,
			const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (uint8_t)(seed + i * 7))
			die("%s: byte %zu is 0x%02x, expected 0x%02x", what, i,
			    p[i], (uint8_t)(seed + i * 7));
}

static int tcp_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *a;
	int fd = -1, rc, tries;

	hints.ai_family = AF_UNSPEC;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc)
		die("getaddrinfo %s:%s: %s", host, port, gai_strerror(rc));
	/* the server may still be starting: a few seconds of retries */
	for (tries = 0; tries < 50 && fd < 0; tries++) {
		for (a = res; a; a = a->ai_next) {
			fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
			if (fd < 0)
				continue;
			if (!connect(fd, a->ai_addr, a->ai_addrlen))
				break;
			close(fd);
			fd = -1;
		}
		if (fd < 0)
			usleep(200000);
	}
	freeaddrinfo(res);
	if (fd < 0)
		die("cannot connect to %s:%s", host, port);
	return fd;
}

static int tcp_accept(const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *a;
	int fd = -1, cfd, one = 1, rc;

	hints.ai_family = AF_INET;
	hints.ai_flags = AI_PASSIVE;
	rc = getaddrinfo(NULL, port, &hints, &res);
	if (rc)
		die("getaddrinfo :%s: %s", port, gai_strerror(rc));
	for (a = res; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, a->ai_addr, a->ai_addrlen) && !listen(fd, 1))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		die("cannot listen on TCP port %s: %s", port, strerror(errno));
	cfd = accept(fd, NULL, NULL);
	if (cfd < 0)
		die("accept: %s", strerror(errno));
	close(fd);
	return cfd;
}

static void xwrite(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t r = write(fd, b, n);

		if (r <= 0)
			die("TCP write: %s", r ? strerror(errno) : "closed");
		b += r;
		n -= (size_t)r;
	}
}

static void xread(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n) {
		ssize_t r = read(fd, b, n);

		if (r <= 0)
			die("TCP read: %s", r ? strerror(errno) : "peer closed the connection");
		b += r;
		n -= (size_t)r;
	}
}

static void send_peer(int fd, const struct peer *p)
{
	struct peer w = *p;

	w.qpn = htonl(p->qpn);
	w.psn = htonl(p->psn);
	w.rkey = htonl(p->rkey);
	w.addr = htobe64(p->addr);
	xwrite(fd, &w, sizeof(w));
}

static void recv_peer(int fd, struct peer *p)
{
	xread(fd, p, sizeof(*p));
	p->qpn = ntohl(p->qpn);
	p->psn = ntohl(p->psn);
	p->rkey = ntohl(p->rkey);
	p->addr = be64toh(p->addr);
}

/* step marks: the sender says it reached STEP, the other side expects it */
static void mark(int fd, uint8_t step)
{
	xwrite(fd, &step, 1);
}

static void expect_mark(int fd, uint8_t step)
{
	uint8_t b;

	xread(fd, &b, 1);
	if (b != step)
		die("the peer reported step %u, expected %u (it failed: see its output)",
		    b, step);
}

static struct ibv_cq *cq;

static void poll_one(struct ibv_wc *wc, const char *what)
{
	struct timespec t0, t;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n < 0)
			die("%s: ibv_poll_cq failed (%d)", what, n);
		if (n == 1)
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > CQ_WAIT_S)
			die("%s: no completion in %d s", what, CQ_WAIT_S);
	}
}

/* the next completion must be OPCODE, successful, for WR_ID */
static void expect_wc(struct ibv_wc *wc, enum ibv_wc_opcode op,
		      uint64_t wr_id, const char *what)
{
	poll_one(wc, what);
	if (wc->status != IBV_WC_SUCCESS)
		die("%s: completion status %s (%d), vendor_err 0x%x", what,
		    ibv_wc_status_str(wc->status), wc->status, wc->vendor_err);
	if (wc->opcode != op)
		die("%s: completion opcode %d, expected %d", what, wc->opcode, op);
	if (wc->wr_id != wr_id)
		die("%s: completion wr_id %" PRIu64 ", expected %" PRIu64, what,
		    wc->wr_id, wr_id);
}

static void post(struct ibv_qp *qp, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;
	int rc = ibv_post_send(qp, wr, &bad);

	if (rc)
		die("%s: ibv_post_send: %s", what, strerror(rc));
}

/* INIT before anything is posted: a RESET QP takes no receive */
static void init_qp(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (rc)
		die("modify QP to INIT: %s", strerror(rc));
}

static void connect_qp(struct ibv_qp *qp, const struct peer *me,
		       const struct peer *rem, int gidx)
{
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = rem->qpn;
	a.rq_psn = rem->psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	memcpy(a.ah_attr.grh.dgid.raw, rem->gid, 16);
	a.ah_attr.grh.sgid_index = (uint8_t)gidx;
	a.ah_attr.grh.hop_limit = 1;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			   IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (rc)
		die("modify QP to RTR: %s", strerror(rc));

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 16;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = me->psn;
	a.max_rd_atomic = 1;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			   IBV_QP_MAX_QP_RD_ATOMIC);
	if (rc)
		die("modify QP to RTS: %s", strerror(rc));
}

static void usage(void)
{
	fprintf(stderr, "usage: inv_pingpong -d DEVICE -g GID_INDEX -p PORT [-K] [-R] [SERVER]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *devname = NULL, *port = "18515", *server = NULL;
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr qia;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_wc wc;
	struct peer me, rem;
	union ibv_gid gid;
	uint8_t *buf;
	int gidx = 0, opt, fd, i, n, kflags = 0, badrecv = 0;
	struct ibv_mr *wmr = NULL;

	while ((opt = getopt(argc, argv, "d:g:p:KR")) != -1) {
		switch (opt) {
		case 'd':
			devname = optarg;
			break;
		case 'g':
			gidx = atoi(optarg);
			break;
		case 'p':
			port = optarg;
			break;
		case 'K':
			kflags = 1;
			break;
		case 'R':
			badrecv = 1;
			break;
		default:
			usage();
		}
	}
	if (optind < argc)
		server = argv[optind++];
	if (optind != argc || !devname)
		usage();
	role = server ? "client" : "server";
	srand48(getpid() * time(NULL));

	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), devname))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("no device %s (or it cannot be opened)", devname);
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd: %s", strerror(errno));
	buf = aligned_alloc(4096, BUF_SIZE);
	if (!buf)
		die("out of memory");
	memset(buf, 0, BUF_SIZE);
	mr = ibv_reg_mr(pd, buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		die("ibv_reg_mr: %s", strerror(errno));
	/* the server's window is bound over this one: no remote right */
	wmr = ibv_reg_mr(pd, buf + MW_OFF, MW_SIZE, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_MW_BIND);
	if (!wmr)
		die("ibv_reg_mr(LOCAL_WRITE | MW_BIND): %s", strerror(errno));
	cq = ibv_create_cq(ctx, 32, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq: %s", strerror(errno));
	memset(&qia, 0, sizeof(qia));
	qia.send_cq = cq;
	qia.recv_cq = cq;
	qia.qp_type = IBV_QPT_RC;
	qia.cap.max_send_wr = 16;
	qia.cap.max_recv_wr = 16;
	qia.cap.max_send_sge = 1;
	qia.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &qia);
	if (!qp)
		die("ibv_create_qp: %s", strerror(errno));
	init_qp(qp);
	if (ibv_query_gid(ctx, 1, gidx, &gid))
		die("ibv_query_gid %d: %s", gidx, strerror(errno));

	memset(&me, 0, sizeof(me));
	me.qpn = qp->qp_num;
	me.psn = (uint32_t)lrand48() & 0xffffff;
	memcpy(me.gid, gid.raw, 16);
	me.rkey = mr->rkey;
	me.addr = (uintptr_t)buf;

	if (!server && badrecv) {
		struct ibv_mr *dead;

		/* one receive under the lkey of an MR that is gone */
		dead = ibv_reg_mr(pd, buf, MSG_SIZE, IBV_ACCESS_LOCAL_WRITE);
		if (!dead)
			die("ibv_reg_mr: %s", strerror(errno));
		sge.addr = (uintptr_t)buf;
		sge.length = MSG_SIZE;
		sge.lkey = dead->lkey;
		if (ibv_dereg_mr(dead))
			die("ibv_dereg_mr failed");
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = 200;
		rwr.sg_list = &sge;
		rwr.num_sge = 1;
		if (ibv_post_recv(qp, &rwr, &rbad))
			die("ibv_post_recv with a deregistered MR's lkey 0x%x: "
			    "refused at the post", sge.lkey);
		fd = tcp_accept(port);
		recv_peer(fd, &rem);
		send_peer(fd, &me);
	} else if (!server) {
		/* receives for SEND_WITH_IMM, WRITE_WITH_IMM, SEND_WITH_INV,
		 * posted before the client may send anything */
		for (i = 0; i < 3; i++) {
			sge.addr = (uintptr_t)buf + (uint64_t)i * MSG_SIZE;
			sge.length = MSG_SIZE;
			sge.lkey = mr->lkey;
			memset(&rwr, 0, sizeof(rwr));
			rwr.wr_id = 100 + i;
			rwr.sg_list = &sge;
			rwr.num_sge = 1;
			if (ibv_post_recv(qp, &rwr, &rbad))
				die("ibv_post_recv failed");
		}
		fill(buf + MW_OFF + MW_SIZE / 2, MW_SIZE / 2, 0xb0);
		fd = tcp_accept(port);
		recv_peer(fd, &rem);
		send_peer(fd, &me);
	} else {
		fd = tcp_connect(server, port);
		send_peer(fd, &me);
		recv_peer(fd, &rem);
	}
	{
		char g[INET6_ADDRSTRLEN], rg[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, me.gid, g, sizeof(g));
		inet_ntop(AF_INET6, rem.gid, rg, sizeof(rg));
		printf("local QPN 0x%06x PSN 0x%06x GID %s\n", me.qpn, me.psn, g);
		printf("remote QPN 0x%06x PSN 0x%06x GID %s\n", rem.qpn, rem.psn, rg);
	}
	connect_qp(qp, &me, &rem, gidx);
	mark(fd, 1);
	expect_mark(fd, 1);

	if (badrecv) {
		enum ibv_wc_status want = kflags ? IBV_WC_LOC_QP_OP_ERR :
			IBV_WC_LOC_PROT_ERR;

		if (!server) {
			poll_one(&wc, "receive with a bad lkey");
			if (wc.wr_id != 200)
				die("receive with a bad lkey: completion of wr_id %"
				    PRIu64, wc.wr_id);
			if (wc.status != want)
				die("receive with a bad lkey: status %s (%d), expected %s (%d)",
				    ibv_wc_status_str(wc.status), wc.status,
				    ibv_wc_status_str(want), want);
			printf("receive with a bad lkey: %s\n",
			       ibv_wc_status_str(wc.status));
			mark(fd, 6);
		} else {
			fill(buf, MSG_SIZE, 0x60);
			sge.addr = (uintptr_t)buf;
			sge.length = MSG_SIZE;
			sge.lkey = mr->lkey;
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = 7;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_SEND;
			wr.send_flags = IBV_SEND_SIGNALED;
			post(qp, &wr, "SEND into a receive with a bad lkey");
			poll_one(&wc, "SEND into a receive with a bad lkey");
			if (wc.wr_id != 7)
				die("SEND into a bad lkey: completion of wr_id %" PRIu64,
				    wc.wr_id);
			if (wc.status != IBV_WC_REM_OP_ERR)
				die("SEND into a bad lkey: status %s (%d), expected %s",
				    ibv_wc_status_str(wc.status), wc.status,
				    ibv_wc_status_str(IBV_WC_REM_OP_ERR));
			printf("SEND into a receive with a bad lkey: %s\n",
			       ibv_wc_status_str(wc.status));
			expect_mark(fd, 6);
		}
		ibv_destroy_qp(qp);
		close(fd);
		printf("inv_pingpong: PASS (%s): a receive with a bad lkey: NAK remote operational error\n",
		       role);
		goto out;
	}

	if (!server) {
		struct ibv_mw *mw;
		uint32_t rkey;

		/* 1. SEND_WITH_IMM */
		expect_wc(&wc, IBV_WC_RECV, 100, "SEND_WITH_IMM");
		if (!(wc.wc_flags & IBV_WC_WITH_IMM))
			die("SEND_WITH_IMM: no IBV_WC_WITH_IMM in the completion");
		if (ntohl(wc.imm_data) != IMM_SEND)
			die("SEND_WITH_IMM: immediate 0x%08x, expected 0x%08x",
			    ntohl(wc.imm_data), IMM_SEND);
		if (wc.byte_len != MSG_SIZE)
			die("SEND_WITH_IMM: byte_len %u, expected %u", wc.byte_len,
			    MSG_SIZE);
		expect_data(buf, MSG_SIZE, 0x10, "SEND_WITH_IMM data");
		printf("SEND_WITH_IMM: received %u bytes, immediate 0x%08x\n",
		       wc.byte_len, ntohl(wc.imm_data));
		mark(fd, 2);

		/* 2. RDMA_WRITE_WITH_IMM */
		expect_wc(&wc, IBV_WC_RECV_RDMA_WITH_IMM, 101, "WRITE_WITH_IMM");
		if (!(wc.wc_flags & IBV_WC_WITH_IMM))
			die("WRITE_WITH_IMM: no IBV_WC_WITH_IMM in the completion");
		if (ntohl(wc.imm_data) != IMM_WRITE)
			die("WRITE_WITH_IMM: immediate 0x%08x, expected 0x%08x",
			    ntohl(wc.imm_data), IMM_WRITE);
		expect_data(buf + WIMM_OFF, WIMM_SIZE, 0x20, "WRITE_WITH_IMM data");
		printf("RDMA_WRITE_WITH_IMM: %u bytes written, immediate 0x%08x\n",
		       WIMM_SIZE, ntohl(wc.imm_data));

		/* 3. a type 2 window over [MW_OFF, MW_OFF + MW_SIZE) */
		mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		if (!mw)
			die("ibv_alloc_mw(IBV_MW_TYPE_2): %s", strerror(errno));
		rkey = ibv_inc_rkey(mw->rkey);
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 3;
		wr.opcode = IBV_WR_BIND_MW;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = rkey;
		wr.bind_mw.bind_info.mr = wmr;
		wr.bind_mw.bind_info.addr = (uintptr_t)buf + MW_OFF;
		wr.bind_mw.bind_info.length = MW_SIZE;
		wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ;
		post(qp, &wr, "BIND_MW");
		expect_wc(&wc, IBV_WC_BIND_MW, 3, "BIND_MW");
		/* (mw->rkey is not checked: libibverbs updates it in
		 * ibv_bind_mw, for type 1, and providers need not for a
		 * type 2 bind posted on the QP) */
		printf("BIND_MW: type 2 window rkey 0x%08x over %u bytes of an MR with LOCAL_WRITE | MW_BIND only\n",
		       rkey, MW_SIZE);
		me.rkey = rkey;
		me.addr = (uintptr_t)buf + MW_OFF;
		send_peer(fd, &me);
		expect_mark(fd, 3);	/* the client wrote and read through it */
		expect_data(buf + MW_OFF, MW_SIZE / 2, 0x30, "WRITE through the window");
		printf("window: the client's WRITE landed, its READ done\n");
		mark(fd, 3);

		/* 4. SEND_WITH_INV */
		expect_wc(&wc, IBV_WC_RECV, 102, "SEND_WITH_INV");
		if (!(wc.wc_flags & IBV_WC_WITH_INV)) {
			if (!kflags || !(wc.wc_flags & KERNEL_WC_WITH_INVALIDATE))
				die("SEND_WITH_INV: no IBV_WC_WITH_INV in the completion (wc_flags 0x%x)",
				    wc.wc_flags);
			printf("SEND_WITH_INV: NOTE: wc_flags 0x%x has the kernel's IB_WC_WITH_INVALIDATE (1 << 2), not IBV_WC_WITH_INV (1 << 3) (-K)\n",
			       wc.wc_flags);
		}
		if (wc.invalidated_rkey != rkey)
			die("SEND_WITH_INV: invalidated_rkey 0x%08x, expected 0x%08x",
			    wc.invalidated_rkey, rkey);
		if (wc.byte_len != MSG_SIZE)
			die("SEND_WITH_INV: byte_len %u, expected %u", wc.byte_len,
			    MSG_SIZE);
		expect_data(buf + 2 * MSG_SIZE, MSG_SIZE, 0x40, "SEND_WITH_INV data");
		printf("SEND_WITH_INV: invalidated_rkey 0x%08x\n", wc.invalidated_rkey);
		mark(fd, 4);

		/* 5. the client's WRITE through the dead rkey; its verdict */
		expect_mark(fd, 5);
		/* the QP is in error now (the responder's access error):
		 * the window goes without it */
		ibv_destroy_qp(qp);
		if (ibv_dealloc_mw(mw))
			die("ibv_dealloc_mw failed");
	} else {
		struct peer win;
		uint8_t *src = buf, *rd = buf + RBUF_OFF;

		sge.lkey = mr->lkey;
		memset(&wr, 0, sizeof(wr));
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;

		/* 1. SEND_WITH_IMM */
		fill(src, MSG_SIZE, 0x10);
		sge.addr = (uintptr_t)src;
		sge.length = MSG_SIZE;
		wr.wr_id = 1;
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(IMM_SEND);
		post(qp, &wr, "SEND_WITH_IMM");
		expect_wc(&wc, IBV_WC_SEND, 1, "SEND_WITH_IMM");
		expect_mark(fd, 2);
		printf("SEND_WITH_IMM: done\n");

		/* 2. RDMA_WRITE_WITH_IMM */
		fill(src, WIMM_SIZE, 0x20);
		sge.length = WIMM_SIZE;
		wr.wr_id = 2;
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl(IMM_WRITE);
		wr.wr.rdma.remote_addr = rem.addr + WIMM_OFF;
		wr.wr.rdma.rkey = rem.rkey;
		post(qp, &wr, "WRITE_WITH_IMM");
		expect_wc(&wc, IBV_WC_RDMA_WRITE, 2, "WRITE_WITH_IMM");
		printf("RDMA_WRITE_WITH_IMM: done\n");

		/* 3. WRITE, then READ, through the server's window */
		recv_peer(fd, &win);
		if (win.rkey == rem.rkey)
			die("the window's rkey 0x%08x is the MR's", win.rkey);
		fill(src, MW_SIZE / 2, 0x30);
		sge.length = MW_SIZE / 2;
		wr.wr_id = 3;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = win.addr;
		wr.wr.rdma.rkey = win.rkey;
		post(qp, &wr, "WRITE through the window");
		expect_wc(&wc, IBV_WC_RDMA_WRITE, 3, "WRITE through the window");
		memset(rd, 0, MW_SIZE);
		sge.addr = (uintptr_t)rd;
		sge.length = MW_SIZE;
		wr.wr_id = 4;
		wr.opcode = IBV_WR_RDMA_READ;
		post(qp, &wr, "READ through the window");
		expect_wc(&wc, IBV_WC_RDMA_READ, 4, "READ through the window");
		expect_data(rd, MW_SIZE / 2, 0x30, "READ through the window, first half");
		expect_data(rd + MW_SIZE / 2, MW_SIZE / 2, 0xb0,
			    "READ through the window, second half");
		printf("window rkey 0x%08x: WRITE %u bytes, READ %u bytes back, data right\n",
		       win.rkey, MW_SIZE / 2, MW_SIZE);
		mark(fd, 3);
		expect_mark(fd, 3);

		/* 4. SEND_WITH_INV of the window's rkey */
		fill(src, MSG_SIZE, 0x40);
		sge.addr = (uintptr_t)src;
		sge.length = MSG_SIZE;
		wr.wr_id = 5;
		wr.opcode = IBV_WR_SEND_WITH_INV;
		wr.invalidate_rkey = win.rkey;
		post(qp, &wr, "SEND_WITH_INV");
		expect_wc(&wc, IBV_WC_SEND, 5, "SEND_WITH_INV");
		expect_mark(fd, 4);
		printf("SEND_WITH_INV: rkey 0x%08x\n", win.rkey);

		/* 5. the invalidated rkey refused */
		fill(src, 64, 0x50);
		sge.length = 64;
		wr.wr_id = 6;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = win.addr;
		wr.wr.rdma.rkey = win.rkey;
		post(qp, &wr, "WRITE through the invalidated rkey");
		poll_one(&wc, "WRITE through the invalidated rkey");
		if (wc.wr_id != 6)
			die("WRITE through the invalidated rkey: completion of wr_id %" PRIu64,
			    wc.wr_id);
		if (wc.status != IBV_WC_REM_ACCESS_ERR)
			die("WRITE through the invalidated rkey: status %s (%d), expected %s",
			    ibv_wc_status_str(wc.status), wc.status,
			    ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR));
		printf("WRITE through the invalidated rkey: %s\n",
		       ibv_wc_status_str(wc.status));
		mark(fd, 5);
		ibv_destroy_qp(qp);
	}
	close(fd);
	printf("inv_pingpong: PASS (%s): SEND_WITH_IMM, RDMA_WRITE_WITH_IMM, type 2 MW bind (MR without remote rights)/WRITE/READ, SEND_WITH_INV, invalidated rkey refused\n",
	       role);
out:
	ibv_destroy_cq(cq);
	ibv_dereg_mr(wmr);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}
