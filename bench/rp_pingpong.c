/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_pingpong: RC SEND/RECV ping-pong over plain libibverbs, for the
 * polling-versus-events benchmark (bench/pingpong.sh).  Not a test: it
 * prints figures.
 *
 *   server:  rp_pingpong [-d DEV] [-g GID] [-p PORT] [-s SIZE] [-n ITERS]
 *                        [-w WARMUP] [-m poll|event|epoll]
 *   client:  rp_pingpong ... SERVER_IPV4
 *
 * -t: the client stops after that many measured seconds (byte 0 of its last
 * ping is 1, so the server stops too) and reports the round trips done.
 * Out-of-band exchange over TCP like ibv_rc_pingpong (LID, QPN, PSN, GID).
 * Wait modes:
 *   poll   busy-poll the CQ
 *   event  poll; empty: arm (ibv_req_notify_cq), poll again; still empty:
 *          blocking ibv_get_cq_event, ack, poll
 *   epoll  the same, but the channel fd is O_NONBLOCK in an epoll set:
 *          epoll_wait, drain ibv_get_cq_event until EAGAIN, one batched
 *          ibv_ack_cq_events, poll
 *
 * The client times each round trip with CLOCK_MONOTONIC; both sides time
 * their own main (application) thread with CLOCK_THREAD_CPUTIME_ID, and
 * read the CPU time of the process's other threads from
 * /proc/self/task/{tid}/stat (the engine lcore, thread "rte-worker-N", runs inside the process when
 * started through rocepmd-run).  One line each:
 *
 *   RESULT role=client mode=event msgs=20000 size=64 rtt_med_us=.. ...
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum mode { M_POLL, M_EVENT, M_EPOLL };
static const char *const mode_names[] = { "poll", "event", "epoll" };

#define RX_DEPTH 16
#define TX_DEPTH 32
#define WR_SEND 1
#define WR_RECV 2

struct dest {
	uint32_t lid;
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
};

static struct {
	enum mode mode;
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	char *buf;
	size_t size;
	int epfd;
	int armed;
	uint64_t events;	/* CQ events received */
	uint64_t waits;		/* blocking waits (get_cq_event / epoll_wait) */
} g;

static void
die(const char *what)
{
	fprintf(stderr, "rp_pingpong: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
dief(const char *what)
{
	fprintf(stderr, "rp_pingpong: %s\n", what);
	exit(1);
}

static double
now_us(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* CPU time (us) of every thread of the process except the caller. */
static double
other_threads_cpu_us(double *engine_us)
{
	long hz = sysconf(_SC_CLK_TCK);
	pid_t self = (pid_t)syscall(SYS_gettid);
	double total = 0, eng = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char path[300], line[1024], comm[64] = "";
		unsigned long ut = 0, st = 0;
		FILE *f;
		char *p;

		if (e->d_name[0] == '.' || atoi(e->d_name) == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fgets(line, sizeof(line), f) == NULL) {
			fclose(f);
			continue;
		}
		fclose(f);
		p = strchr(line, '(');
		if (p != NULL) {
			char *q = strrchr(line, ')');

			if (q != NULL && q > p) {
				size_t n = (size_t)(q - p - 1);

				if (n >= sizeof(comm))
					n = sizeof(comm) - 1;
				memcpy(comm, p + 1, n);
				comm[n] = 0;
				p = q + 2;
			}
			/* state ppid pgrp session tty tpgid flags minflt
			 * cminflt majflt cmajflt utime stime */
			sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			       &ut, &st);
		}
		double us = (double)(ut + st) * 1e6 / (double)hz;

		total += us;
		if (strncmp(comm, "rte-worker-", 11) == 0)
			eng += us;
	}
	closedir(d);
	*engine_us = eng;
	return total;
}

static void
post_recv(int n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)g.buf,
		.length = (uint32_t)g.size,
		.lkey = g.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = WR_RECV, .sg_list = &sge, .num_sge = 1,
	}, *bad;

	for (int i = 0; i < n; i++)
		if (ibv_post_recv(g.qp, &wr, &bad))
			dief("ibv_post_recv failed");
}

static void
post_send(void)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(g.buf + g.size),
		.length = (uint32_t)g.size,
		.lkey = g.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WR_SEND, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (g.size <= 64)
		wr.send_flags |= IBV_SEND_INLINE;
	if (ibv_post_send(g.qp, &wr, &bad)) {
		/* rocepmd may not do inline: retry without */
		wr.send_flags &= ~IBV_SEND_INLINE;
		if (ibv_post_send(g.qp, &wr, &bad))
			dief("ibv_post_send failed");
	}
}

/* At least one completion into wc[0..max), by the chosen wait mode. */
static int
get_completions(struct ibv_wc *wc, int max)
{
	for (;;) {
		int n = ibv_poll_cq(g.cq, max, wc);

		if (n < 0)
			dief("ibv_poll_cq failed");
		if (n > 0)
			return n;
		if (g.mode == M_POLL)
			continue;
		if (!g.armed) {
			if (ibv_req_notify_cq(g.cq, 0))
				dief("ibv_req_notify_cq failed");
			g.armed = 1;
			continue;	/* poll once more: closes the race */
		}
		struct ibv_cq *ecq;
		void *ectx;

		if (g.mode == M_EVENT) {
			g.waits++;
			if (ibv_get_cq_event(g.ch, &ecq, &ectx))
				die("ibv_get_cq_event");
			ibv_ack_cq_events(ecq, 1);
			g.events++;
		} else {
			struct epoll_event ev;
			unsigned int got = 0;

			g.waits++;
			int r = epoll_wait(g.epfd, &ev, 1, -1);

			if (r < 0) {
				if (errno == EINTR)
					continue;
				die("epoll_wait");
			}
			while (ibv_get_cq_event(g.ch, &ecq, &ectx) == 0)
				got++;
			if (errno != EAGAIN && errno != EWOULDBLOCK && got == 0)
				die("ibv_get_cq_event");
			if (got) {
				ibv_ack_cq_events(g.cq, got);
				g.events += got;
			}
		}
		g.armed = 0;
	}
}

static int
tcp_connect(const char *host, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd, one = 1;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		dief("server must be an IPv4 address");
	for (int i = 0; i < 100; i++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			return fd;
		}
		close(fd);
		usleep(100000);
	}
	die("connect");
	return -1;
}

static int
tcp_accept(int port)
{
	struct sockaddr_in sa = {
		.sin_family = AF_INET, .sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int lfd = socket(AF_INET, SOCK_STREAM, 0), fd, one = 1;

	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		die("bind/listen");
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		die("accept");
	close(lfd);
	return fd;
}

static void
xfer(int fd, void *p, size_t n, int out)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = out ? write(fd, (char *)p + done, n - done)
				: read(fd, (char *)p + done, n - done);
		if (r <= 0)
			die(out ? "tcp write" : "tcp read");
		done += (size_t)r;
	}
}

static void
qp_connect(const struct dest *rem, int gidx, uint32_t my_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = rem->qpn,
		.rq_psn = rem->psn,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.dlid = (uint16_t)rem->lid,
			.port_num = 1,
			.grh = { .hop_limit = 1, .sgid_index = (uint8_t)gidx },
		},
	};

	memcpy(a.ah_attr.grh.dgid.raw, rem->gid, 16);
	if (ibv_modify_qp(g.qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		dief("modify QP to RTR failed");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = my_psn;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(g.qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		dief("modify QP to RTS failed");
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int
main(int argc, char **argv)
{
	const char *devname = NULL, *server = NULL;
	int port = 18600, gidx = 0, iters = 20000, warmup = 1000, c;
	double max_s = 0;
	struct ibv_device **list;
	struct ibv_device *dev = NULL;

	g.size = 64;
	g.mode = M_POLL;
	while ((c = getopt(argc, argv, "d:g:p:s:n:w:m:t:")) != -1) {
		switch (c) {
		case 'd': devname = optarg; break;
		case 'g': gidx = atoi(optarg); break;
		case 'p': port = atoi(optarg); break;
		case 's': g.size = (size_t)atol(optarg); break;
		case 'n': iters = atoi(optarg); break;
		case 'w': warmup = atoi(optarg); break;
		case 't': max_s = atof(optarg); break;
		case 'm':
			if (!strcmp(optarg, "poll")) g.mode = M_POLL;
			else if (!strcmp(optarg, "event")) g.mode = M_EVENT;
			else if (!strcmp(optarg, "epoll")) g.mode = M_EPOLL;
			else dief("-m poll|event|epoll");
			break;
		default:
			dief("usage: rp_pingpong [-d dev] [-g gid] [-p port] [-s size] [-n iters] [-w warmup] [-m poll|event|epoll] [-t max_seconds] [server]");
		}
	}
	if (optind < argc)
		server = argv[optind];
	if (iters < 1 || g.size < 1)
		dief("bad -n or -s");

	list = ibv_get_device_list(NULL);
	if (list == NULL || list[0] == NULL)
		dief("no RDMA device");
	for (int i = 0; list[i]; i++)
		if (devname == NULL || !strcmp(ibv_get_device_name(list[i]), devname)) {
			dev = list[i];
			break;
		}
	if (dev == NULL)
		dief("device not found");
	g.ctx = ibv_open_device(dev);
	if (g.ctx == NULL)
		dief("ibv_open_device failed");
	g.pd = ibv_alloc_pd(g.ctx);
	g.buf = aligned_alloc(4096, 4096 + ((2 * g.size + 4095) & ~(size_t)4095));
	memset(g.buf, 0, 2 * g.size);
	g.mr = ibv_reg_mr(g.pd, g.buf, 2 * g.size, IBV_ACCESS_LOCAL_WRITE);
	if (g.pd == NULL || g.mr == NULL)
		dief("PD/MR failed");
	if (g.mode != M_POLL) {
		g.ch = ibv_create_comp_channel(g.ctx);
		if (g.ch == NULL)
			dief("ibv_create_comp_channel failed");
	}
	g.cq = ibv_create_cq(g.ctx, RX_DEPTH + TX_DEPTH + 2, NULL, g.ch, 0);
	if (g.cq == NULL)
		dief("ibv_create_cq failed");
	if (g.mode == M_EPOLL) {
		struct epoll_event ev = { .events = EPOLLIN };
		int fl = fcntl(g.ch->fd, F_GETFL);

		if (fcntl(g.ch->fd, F_SETFL, fl | O_NONBLOCK))
			die("fcntl O_NONBLOCK");
		g.epfd = epoll_create1(0);
		if (epoll_ctl(g.epfd, EPOLL_CTL_ADD, g.ch->fd, &ev))
			die("epoll_ctl");
	}
	struct ibv_qp_init_attr qia = {
		.send_cq = g.cq, .recv_cq = g.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = TX_DEPTH, .max_recv_wr = RX_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};
	g.qp = ibv_create_qp(g.pd, &qia);
	if (g.qp == NULL) {
		qia.cap.max_inline_data = 0;
		g.qp = ibv_create_qp(g.pd, &qia);
	}
	if (g.qp == NULL)
		dief("ibv_create_qp failed");
	struct ibv_qp_attr ia = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = 0,
	};
	if (ibv_modify_qp(g.qp, &ia, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		dief("modify QP to INIT failed");
	post_recv(RX_DEPTH);

	struct ibv_port_attr pa;
	union ibv_gid gid;
	struct dest me = { 0 }, rem;

	if (ibv_query_port(g.ctx, 1, &pa) || ibv_query_gid(g.ctx, 1, gidx, &gid))
		dief("query port/gid failed");
	srand48(getpid() * time(NULL));
	me.lid = pa.lid;
	me.qpn = g.qp->qp_num;
	me.psn = (uint32_t)lrand48() & 0xffffff;
	memcpy(me.gid, gid.raw, 16);

	int fd = server ? tcp_connect(server, port) : tcp_accept(port);

	xfer(fd, &me, sizeof(me), 1);
	xfer(fd, &rem, sizeof(rem), 0);
	qp_connect(&rem, gidx, me.psn);
	/* both RTR before the first send */
	char sync = 's';
	xfer(fd, &sync, 1, 1);
	xfer(fd, &sync, 1, 0);

	int total = warmup + iters;
	double *rtt = calloc((size_t)iters, sizeof(double));
	double t_wall0 = 0, t_cpu0 = 0, o0 = 0, e0 = 0, t0;
	uint64_t ev0 = 0, wt0 = 0;
	int outstanding = 0;
	struct ibv_wc wc[16];

	int done = 0;	/* measured round trips */

	for (int i = 0; ; i++) {
		if (i == warmup) {
			t_wall0 = now_us(CLOCK_MONOTONIC);
			t_cpu0 = now_us(CLOCK_THREAD_CPUTIME_ID);
			o0 = other_threads_cpu_us(&e0);
			ev0 = g.events;
			wt0 = g.waits;
		}
		int need_recv = 1, need_send = 0;

		t0 = now_us(CLOCK_MONOTONIC);
		if (server == NULL) {
			/* server: wait for the ping, then answer */
			while (need_recv) {
				int n = get_completions(wc, 16);

				for (int k = 0; k < n; k++) {
					if (wc[k].status != IBV_WC_SUCCESS) {
						fprintf(stderr, "wc status %s\n",
							ibv_wc_status_str(wc[k].status));
						exit(1);
					}
					if (wc[k].wr_id == WR_RECV)
						need_recv--;
					else
						outstanding--;
				}
			}
			/* byte 0 of a ping: 1 on the client's last */
			int last = g.buf[0] == 1;

			post_recv(1);
			post_send();
			outstanding++;
			if (i >= warmup)
				done++;
			if (last)
				break;
			while (outstanding >= TX_DEPTH - 1) {
				int n = get_completions(wc, 16);

				for (int k = 0; k < n; k++)
					if (wc[k].wr_id == WR_SEND)
						outstanding--;
					else
						dief("unexpected receive");
			}
		} else {
			int last = i == total - 1 ||
				   (max_s > 0 && i > warmup &&
				    t0 - t_wall0 > max_s * 1e6);

			g.buf[g.size] = (char)last;
			post_send();
			need_send = 1;
			while (need_recv || need_send) {
				int n = get_completions(wc, 16);

				for (int k = 0; k < n; k++) {
					if (wc[k].status != IBV_WC_SUCCESS) {
						fprintf(stderr, "wc status %s\n",
							ibv_wc_status_str(wc[k].status));
						exit(1);
					}
					if (wc[k].wr_id == WR_RECV)
						need_recv--;
					else
						need_send--;
				}
			}
			post_recv(1);
			if (i >= warmup)
				rtt[done++] = now_us(CLOCK_MONOTONIC) - t0;
			if (last)
				break;
		}
	}
	iters = done;
	double wall = now_us(CLOCK_MONOTONIC) - t_wall0;
	double cpu = now_us(CLOCK_THREAD_CPUTIME_ID) - t_cpu0;
	double e1, o1 = other_threads_cpu_us(&e1);

	/* drain the server's last send completions */
	while (server == NULL && outstanding > 0) {
		int n = get_completions(wc, 16);

		for (int k = 0; k < n; k++)
			if (wc[k].wr_id == WR_SEND)
				outstanding--;
	}
	xfer(fd, &sync, 1, 1);
	xfer(fd, &sync, 1, 0);
	close(fd);

	printf("RESULT role=%s mode=%s msgs=%d size=%zu", server ? "client" : "server",
	       mode_names[g.mode], iters, g.size);
	if (server) {
		double sum = 0;

		qsort(rtt, (size_t)iters, sizeof(double), cmp_dbl);
		for (int i = 0; i < iters; i++)
			sum += rtt[i];
		printf(" rtt_med_us=%.2f rtt_p99_us=%.2f rtt_mean_us=%.2f",
		       rtt[iters / 2], rtt[(size_t)((double)iters * 0.99)],
		       sum / iters);
	}
	printf(" wall_s=%.3f app_cpu_us_per_msg=%.2f app_cpu_share=%.3f"
	       " engine_cpu_share=%.3f other_cpu_share=%.3f"
	       " cq_events_per_msg=%.3f waits_per_msg=%.3f\n",
	       wall / 1e6, cpu / iters, cpu / wall, (e1 - e0) / wall,
	       (o1 - o0) / wall, (double)(g.events - ev0) / iters,
	       (double)(g.waits - wt0) / iters);
	fflush(stdout);

	ibv_destroy_qp(g.qp);
	ibv_destroy_cq(g.cq);
	if (g.ch)
		ibv_destroy_comp_channel(g.ch);
	ibv_dereg_mr(g.mr);
	ibv_dealloc_pd(g.pd);
	ibv_close_device(g.ctx);
	ibv_free_device_list(list);
	free(rtt);
	return 0;
}
