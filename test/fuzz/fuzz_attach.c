/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attach protocol fuzz target: arbitrary messages from one client of the
 * host's attach server (pmd/service/rp_serve.c), over a socketpair.
 *
 * One rocepmd device on a ring port, served by an engine lcore as a host
 * serves it; the target is the client and, through the server's fuzzing
 * hook (rp_serve_fuzz_*, built with RP_SERVE_FUZZ), the server's thread:
 * it sends one message, has client_input() serve it, reads the reply.
 * Each input is a connection: an optional HELLO of its own (with this
 * process's /proc/self/mem), then records, each one message: a HELLO
 * (well-formed or not: ABI, probe, descriptor), a CTRL of any operation,
 * device and length, with a body from the input whose words may name
 * objects earlier replies created, or raw bytes; each with no descriptor,
 * an eventfd, a pipe, /dev/null, /proc/self/mem or several.  Quotas are
 * low (rp_serve_quotas()) so that EDQUOT paths run too.  After each input
 * (the connection closed):
 *  - the process has as many descriptors as before (/proc/self/fd): every
 *    descriptor the server received or made was closed exactly once;
 *  - the device holds the objects it held before (RP_CTRL_OBJECTS): the
 *    client's were destroyed with its connection, its arena too;
 * any violation aborts; memory errors are the sanitizers'.
 *
 * Environment: RP_FUZZ_LOG=1 keeps the engine's log (else critical only).
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "rp_attach.h"
#include "rp_engine.h"

#include "fuzz_attach.h"

/* rp_serve.c, with RP_SERVE_FUZZ */
int rp_serve_fuzz_open(int fd);
bool rp_serve_fuzz_input(void);
void rp_serve_fuzz_close(void);

#define FA_PORT		"net_ring_fattach"
#define FA_IDS		32u
#define FA_MAX_FDS	4

static struct {
	bool ready;
	struct rte_ring *rx, *tx;
	struct rte_mempool *mp;
	struct rp_ctrl_objects base;
	uint32_t ids[FA_IDS];		/* numbers replies gave */
	uint32_t nids;
	uint64_t probe;
} fa;

static void
fa_fail(const char *what)
{
	fprintf(stderr, "fuzz_attach: invariant violated: %s\n", what);
	abort();
}

static unsigned int
fa_fd_count(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned int n = 0;

	if (d == NULL)
		fa_fail("cannot read /proc/self/fd");
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static void
fa_objects(struct rp_ctrl_objects *o)
{
	struct rp_ctrl_slot s;

	memset(&s, 0, sizeof(s));
	s.op = RP_CTRL_OBJECTS;
	if (rp_ctrl_call(0, &s) != 0)
		fa_fail("RP_CTRL_OBJECTS refused");
	*o = s.u.objects;
}

/* Frames the engine sent (ARP, packets of a QP the input connected). */
static void
fa_drain_tx(void)
{
	struct rte_mbuf *m[32];
	unsigned int n;

	while ((n = rte_ring_dequeue_burst(fa.tx, (void **)m, RTE_DIM(m),
					   NULL)) != 0)
		rte_pktmbuf_free_bulk(m, n);
}

/* The descriptors a record's selector names (ours to close after). */
static unsigned int
fa_make_fds(uint8_t sel, int *fds)
{
	int p[2];

	switch (sel & 7) {
	case 1:
		fds[0] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		return 1;
	case 2:
		if (pipe2(p, O_CLOEXEC) != 0)
			return 0;
		fds[0] = p[0];
		fds[1] = p[1];
		return 2;	/* both ends go */
	case 3:
		fds[0] = open("/dev/null", O_RDWR | O_CLOEXEC);
		return 1;
	case 4:
		fds[0] = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
		return 1;
	case 5:
		fds[0] = eventfd(0, EFD_CLOEXEC);	/* blocking */
		fds[1] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		return 2;
	case 6:
		fds[0] = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
		return 1;
	default:
		return 0;
	}
}

static void
fa_send(int sock, const void *msg, size_t len, uint8_t sel)
{
	char cbuf[CMSG_SPACE(sizeof(int) * FA_MAX_FDS)];
	struct iovec iov = { .iov_base = (void *)(uintptr_t)msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fds[FA_MAX_FDS];
	unsigned int n = fa_make_fds(sel, fds), ok = 0;

	for (unsigned int i = 0; i < n; i++)
		if (fds[i] >= 0)
			fds[ok++] = fds[i];
	if (ok != 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * ok);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * ok);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * ok);
	}
	/* A failure is the server's business: it reads what came or not. */
	(void)!sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	for (unsigned int i = 0; i < ok; i++)
		close(fds[i]);
}

/* Every reply waiting: its descriptors closed, the numbers it gave kept. */
static void
fa_replies(int sock)
{
	union {
		struct rp_attach_hdr hdr;
		struct rp_attach_ctrl ctrl;
		uint8_t raw[512];
	} m;
	char cbuf[CMSG_SPACE(sizeof(int) * 64)];

	for (;;) {
		struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
		};
		struct cmsghdr *cm;
		ssize_t n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n <= 0)
			return;
		for (cm = CMSG_FIRSTHDR(&mh); cm != NULL;
		     cm = CMSG_NXTHDR(&mh, cm)) {
			int nf = (int)((cm->cmsg_len - CMSG_LEN(0)) /
				       sizeof(int));
			int *f = (int *)(void *)CMSG_DATA(cm);

			if (cm->cmsg_level != SOL_SOCKET ||
			    cm->cmsg_type != SCM_RIGHTS)
				continue;
			for (int i = 0; i < nf; i++)
				close(f[i]);
		}
		if ((size_t)n == sizeof(m.ctrl) &&
		    m.hdr.type == RP_ATTACH_CTRL && m.hdr.result == 0) {
			const uint32_t *w = (const uint32_t *)&m.ctrl.slot.u;

			/* Any number of the reply may name an object. */
			for (unsigned int i = 0; i < 12; i++)
				if (w[i] != 0)
					fa.ids[fa.nids++ % FA_IDS] = w[i];
		}
	}
}

static void
fa_hello(int sock, uint8_t flags, uint8_t sel)
{
	struct rp_attach_hello h;

	memset(&h, 0, sizeof(h));
	h.hdr = (struct rp_attach_hdr){ .magic = RP_ATTACH_MAGIC,
		.version = RP_ATTACH_VERSION, .type = RP_ATTACH_HELLO };
	h.abi_version = RP_ABI_VERSION + ((flags & 1) ? 1 : 0);
	h.probe_addr = (uintptr_t)&fa.probe;
	h.probe_value = fa.probe ^ ((flags & 2) ? 1 : 0);
	if (flags & 4)
		h.hdr.version++;
	fa_send(sock, &h, (flags & 8) ? sizeof(h) - 4 : sizeof(h), sel);
}

/* One record: a message sent and served.  Its length, 0: input over. */
static size_t
fa_record(int sock, const uint8_t *r, size_t left)
{
	struct rp_attach_ctrl c;
	uint8_t raw[512];
	size_t len, body;

	if (left < FA_REC_HDR)
		return 0;
	switch (FA_R_KIND(r[0])) {
	case FA_R_HELLO:
		fa_hello(sock, r[1], FA_R_FDS(r[0]));
		len = FA_REC_HDR;
		break;
	case FA_R_CTRL:
		body = RTE_MIN((size_t)r[4], left - FA_REC_HDR);
		body = RTE_MIN(body, sizeof(c.slot.u));
		memset(&c, 0, sizeof(c));
		c.hdr = (struct rp_attach_hdr){ .magic = RP_ATTACH_MAGIC,
			.version = RP_ATTACH_VERSION, .type = RP_ATTACH_CTRL };
		c.dev = (r[2] & 0xf0) == 0xf0 ? r[2] & 0xf : 0;
		c.slot.op = r[1] % (RP_CTRL_OP_MAX + 2);
		c.slot.state = r[2] & 0x0f;
		memcpy(&c.slot.u, r + FA_REC_HDR, body);
		/* Words r[5] names take numbers replies gave. */
		for (unsigned int i = 0; i < 8 && fa.nids != 0; i++)
			if (r[5] & (1u << i)) {
				uint32_t *w = (uint32_t *)(void *)&c.slot.u + i;

				*w = fa.ids[*w % RTE_MIN(fa.nids, FA_IDS)];
			}
		fa_send(sock, &c, r[3] == 0 ? sizeof(c) :
			RTE_MIN((size_t)r[3], sizeof(c)), FA_R_FDS(r[0]));
		len = FA_REC_HDR + body;
		break;
	default:	/* FA_R_RAW */
		body = RTE_MIN((size_t)r[4] | (size_t)r[3] << 8,
			       left - FA_REC_HDR);
		body = RTE_MIN(body, sizeof(raw));
		memcpy(raw, r + FA_REC_HDR, body);
		fa_send(sock, raw, body, FA_R_FDS(r[0]));
		len = FA_REC_HDR + body;
		break;
	}
	return len;
}

static void
fa_init(void)
{
	char *argv[] = {
		"fuzz_attach", "--no-huge", "-m", "256", "--no-pci",
		"--no-shconf", "--no-telemetry", "-l", "0,1",
		"--log-level=*:warning", NULL, NULL,
	};
	char prefix[64];
	struct rp_config cfg;
	struct rp_port_cfg *pc = &cfg.port[0];
	struct rp_host_cfg q = {
		.hello_ms = 2000, .max_pending = 4, .uid_pending = 4,
		.uid_procs = 4,
	};
	int argc = RTE_DIM(argv) - 1;

	snprintf(prefix, sizeof(prefix), "--file-prefix=rp_fattach_%d",
		 (int)getpid());
	argv[argc - 1] = prefix;
	atexit((void (*)(void))rp_eal_rundir_remove);
	if (rte_eal_init(argc, argv) < 0)
		fa_fail("EAL init");
	rp_eal_rundir_note();
	fa.rx = rte_ring_create("fa_rx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	fa.tx = rte_ring_create("fa_tx", 1024, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	fa.mp = rte_pktmbuf_pool_create("fa_pool", 2047, 0, 0,
					RTE_MBUF_DEFAULT_BUF_SIZE,
					SOCKET_ID_ANY);
	if (fa.rx == NULL || fa.tx == NULL || fa.mp == NULL ||
	    rte_eth_from_rings("fattach", &fa.rx, 1, &fa.tx, 1, 0) < 0)
		fa_fail("ring port");

	/* One device, one engine lcore that blocks when idle. */
	memset(&cfg, 0, sizeof(cfg));
	cfg.nb_ports = 1;
	cfg.main_lcore = 0;
	cfg.nb_lcores = 1;
	cfg.lcores[0] = 1;
	cfg.idle = RP_IDLE_ADAPTIVE;
	cfg.idle_us = 50;
	cfg.sleep_us = 10;
	cfg.wake_us = 1000;
	snprintf(pc->device, sizeof(pc->device), "%s", FA_PORT);
	snprintf(pc->ethdev_name, sizeof(pc->ethdev_name), "%s", FA_PORT);
	pc->ipv4 = rte_cpu_to_be_32(0xc0000201u);	/* 192.0.2.1 */
	pc->prefix_len = 24;
	pc->mtu = 1024;
	pc->lcore = 1;
	pc->lcores[0] = 1;
	pc->nr_lcores = 1;
	pc->region_mb = 16;
	pc->hop_limit = 64;
	pc->arp_reachable_ms = 30000;
	pc->flight_window = 256;
	pc->probe_min_us = 200;
	pc->fault.burst = 1;
	pc->fault.reorder_depth = 1;
	pc->fault.delay_us = 1000;
	if (rp_engine_start(&cfg) != 0)
		fa_fail("engine start");
	/* Low quotas: the inputs reach them. */
	for (unsigned int k = 0; k < RP_QUOTA_KINDS; k++) {
		q.proc[k] = 6;
		q.uid[k] = 8;
	}
	q.proc[RP_QUOTA_MR_PAGES] = 64;
	q.uid[RP_QUOTA_MR_PAGES] = 128;
	rp_serve_quotas(&q);
	if (getenv("RP_FUZZ_LOG") == NULL)
		rte_log_set_global_level(RTE_LOG_CRIT);
	fa.probe = 0x5eed5eed5eed5eedull;
	fa_objects(&fa.base);
	fa.ready = true;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!fa.ready)
		fa_init();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_ctrl_objects now;
	unsigned int fds0, nrec = 0;
	size_t pos = 1;
	bool alive = true;
	int sv[2];

	if (!fa.ready)
		fa_init();
	if (size < 1)
		return 0;
	fds0 = fa_fd_count();
	fa.nids = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		fa_fail("socketpair");
	if (rp_serve_fuzz_open(sv[1]) != 0)
		fa_fail("the server refused the connection");
	/* The first byte: a HELLO of our own first (most inputs want one). */
	if (data[0] & 1) {
		fa_hello(sv[0], 0, 4);
		alive = rp_serve_fuzz_input();
		fa_replies(sv[0]);
	}
	while (alive && pos < size && nrec++ < FA_MAX_RECORDS) {
		size_t n = fa_record(sv[0], data + pos, size - pos);

		if (n == 0)
			break;
		pos += n;
		alive = rp_serve_fuzz_input();
		fa_replies(sv[0]);
	}
	/* The client goes: the server sees its end of the connection. */
	if (alive) {
		shutdown(sv[0], SHUT_WR);
		if (rp_serve_fuzz_input())
			fa_fail("the server read past the end of the connection");
	}
	rp_serve_fuzz_close();
	fa_replies(sv[0]);
	close(sv[0]);
	fa_drain_tx();
	if (fa_fd_count() != fds0) {
		fprintf(stderr, "fuzz_attach: %u descriptors before the input, %u after\n",
			fds0, fa_fd_count());
		fa_fail("a descriptor leaked or was closed twice");
	}
	fa_objects(&now);
	if (memcmp(&now, &fa.base, sizeof(now)) != 0) {
		fprintf(stderr, "fuzz_attach: objects before: pds %u mrs %u cqs %u qps %u srqs %u ahs %u chans %u async %u pages %u arenas %u; after: pds %u mrs %u cqs %u qps %u srqs %u ahs %u chans %u async %u pages %u arenas %u\n",
			fa.base.pds, fa.base.mrs, fa.base.cqs, fa.base.qps,
			fa.base.srqs, fa.base.ahs, fa.base.chans,
			fa.base.async_fds, fa.base.region_pages,
			fa.base.arenas, now.pds, now.mrs, now.cqs, now.qps,
			now.srqs, now.ahs, now.chans, now.async_fds,
			now.region_pages, now.arenas);
		fa_fail("the closed client's objects outlive it");
	}
	return 0;
}
