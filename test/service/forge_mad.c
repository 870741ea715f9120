/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rp_forge_mad: an attached process that sends CM MADs from QP 1 of its
 * host for a connection of another process (issue 24).
 *
 *   rp_forge_mad PEER_IPV4 VICTIM_ID PEER_ID
 *
 * VICTIM_ID is the communication ID of the other process's end (on this
 * host), PEER_ID that of the remote end, both as a capture shows them.
 * Through a GSI agent of its own (rocepmd_verbs_create_gsi_qp(), the RDMA
 * CM's), it sends to QP 1 of PEER_IPV4 a DREQ, a REJ and a DREP that say
 * VICTIM_ID as their sender's ID, then a DREQ that says an ID of its own
 * prefix.  Prints each send's completion status, one line each:
 *
 *   forged DREQ: <ibv_wc_status_str>
 *   ...
 *   own-prefix DREQ: <status>
 *
 * Exits 0 once every send completed (whatever the status), 1 on a setup
 * error.  The test (isolate.sh) judges: the host must refuse the forged
 * ones and the victim's connection survive.
 */

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define FM_MAD		256u
#define FM_QKEY		0x80010000u
#define FM_CLASS_CM	0x07u
#define FM_REJ		0x0012u
#define FM_DREQ		0x0015u
#define FM_DREP		0x0016u

typedef struct ibv_qp *(*fm_gsi_create_t)(struct ibv_context *,
					   struct ibv_qp_init_attr_ex *);
typedef int (*fm_gsi_prefix_t)(struct ibv_qp *, uint32_t *, uint32_t *);

static void
fm_die(const char *what)
{
	printf("rp_forge_mad: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
fm_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* A CM MAD (IBTA 12.6): header, then the two communication IDs. */
static void
fm_mad(uint8_t *m, uint16_t attr, uint32_t tid, uint32_t local,
       uint32_t remote)
{
	memset(m, 0, FM_MAD);
	m[0] = 1;			/* base version */
	m[1] = FM_CLASS_CM;
	m[2] = 2;			/* class version */
	m[3] = 0x03;			/* Send */
	fm_put32(m + 12, tid);
	m[16] = (uint8_t)(attr >> 8);
	m[17] = (uint8_t)attr;
	fm_put32(m + 24, local);
	fm_put32(m + 28, remote);
	if (attr == FM_REJ)
		m[32] = 1u << 6;	/* Message Rejected: REP */
}

int
main(int argc, char **argv)
{
	fm_gsi_create_t gsi_create;
	fm_gsi_prefix_t gsi_prefix;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	struct ibv_qp_init_attr_ex qa = { 0 };
	struct ibv_qp_attr a = { 0 };
	struct ibv_ah_attr aa = { 0 };
	union ibv_gid gid, peer = { .raw = { [10] = 0xff, [11] = 0xff } };
	static uint8_t bufs[4][FM_MAD];
	static const char *const what[4] = {
		"forged DREQ", "forged REJ", "forged DREP", "own-prefix DREQ",
	};
	uint32_t victim, remote, prefix, mask;
	int sgid = -1, i;

	if (argc != 4 || inet_pton(AF_INET, argv[1], peer.raw + 12) != 1) {
		fprintf(stderr, "usage: %s PEER_IPV4 VICTIM_ID PEER_ID\n",
			argv[0]);
		return 2;
	}
	victim = (uint32_t)strtoul(argv[2], NULL, 0);
	remote = (uint32_t)strtoul(argv[3], NULL, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(60);
	gsi_create = (fm_gsi_create_t)dlsym(RTLD_DEFAULT,
					    "rocepmd_verbs_create_gsi_qp");
	gsi_prefix = (fm_gsi_prefix_t)dlsym(RTLD_DEFAULT,
					    "rocepmd_verbs_gsi_prefix");
	if (gsi_create == NULL || gsi_prefix == NULL) {
		printf("rp_forge_mad: not under the rocepmd verbs shim\n");
		return 1;
	}
	list = ibv_get_device_list(NULL);
	if (list == NULL || list[0] == NULL)
		fm_die("no device");
	ctx = ibv_open_device(list[0]);
	if (ctx == NULL)
		fm_die("ibv_open_device");
	/* The GID of this host's IPv4 address: the one the CM sends from. */
	for (i = 0; i < 16 && sgid < 0; i++)
		if (ibv_query_gid(ctx, 1, i, &gid) == 0 &&
		    gid.raw[10] == 0xff && gid.raw[11] == 0xff &&
		    (gid.raw[12] | gid.raw[13] | gid.raw[14] | gid.raw[15]))
			sgid = i;
	if (sgid < 0)
		fm_die("no IPv4 GID");
	pd = ibv_alloc_pd(ctx);
	cq = pd != NULL ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	mr = cq != NULL ? ibv_reg_mr(pd, bufs, sizeof(bufs), 0) : NULL;
	if (mr == NULL)
		fm_die("PD, CQ or MR");
	qa.qp_type = IBV_QPT_UD;
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.cap.max_send_wr = 8;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.pd = pd;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qp = gsi_create(ctx, &qa);
	if (qp == NULL)
		fm_die("GSI agent");
	if (gsi_prefix(qp, &prefix, &mask) != 0)
		fm_die("GSI prefix");
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = FM_QKEY;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY) != 0)
		fm_die("GSI agent to INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE) != 0)
		fm_die("GSI agent to RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0)
		fm_die("GSI agent to RTS");
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.dgid = peer;
	aa.grh.sgid_index = (uint8_t)sgid;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(pd, &aa);
	if (ah == NULL)
		fm_die("ibv_create_ah");
	printf("agent prefix 0x%08x; victim's ID 0x%08x, peer's 0x%08x\n",
	       prefix, victim, remote);

	fm_mad(bufs[0], FM_DREQ, 0x4601, victim, remote);
	fm_mad(bufs[1], FM_REJ, 0x4602, victim, remote);
	fm_mad(bufs[2], FM_DREP, 0x4603, victim, remote);
	fm_mad(bufs[3], FM_DREQ, 0x4604, (victim & ~mask) | prefix, remote);
	for (i = 0; i < 4; i++) {
		struct ibv_sge s = {
			.addr = (uintptr_t)bufs[i], .length = FM_MAD,
			.lkey = mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = (uint64_t)i, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		}, *bad;
		struct ibv_wc wc;
		int n;

		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = 1;
		wr.wr.ud.remote_qkey = FM_QKEY;
		if (ibv_post_send(qp, &wr, &bad) != 0)
			fm_die("ibv_post_send");
		while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
			usleep(1000);
		if (n < 0)
			fm_die("ibv_poll_cq");
		printf("%s: %s\n", what[i], ibv_wc_status_str(wc.status));
	}
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
