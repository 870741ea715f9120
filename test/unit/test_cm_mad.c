/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM MAD codec (verbs-shim/cm_mad.c) against the kernel's rdma_cm:
 * every CM message of the rxe capture rdmacm-rping-s64 (REQ, REP, RTU,
 * DREQ, DREP) decoded field by field to the values tshark prints for it;
 * every field of the table written with random values without touching a
 * bit outside it; fields never overlap within a message; the RDMA CM IP
 * header; and what REQ and REP make of each side's QP (cm_conn.c), against
 * the PSNs the kernel's two QPs then sent.  argv[1] is the rxe capture dir.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cm_conn.h"
#include "cm_mad.h"
#include "rp_opcode.h"
#include "rp_pkt.h"
#include "tp_util.h"

static const char *data_dir = "test/data/rxe";

/* The five MADs of the capture, in order (frames 1, 2, 3, 28, 29). */
static uint8_t mads[5][CM_MAD_SIZE];
static uint8_t mad_sgid[5][16];		/* who sent each */
static int nr_mads;

/*
 * The PSN of the first RC request packet from each end (by source GID),
 * in capture order: the start of that end's send queue.  ACKs and READ
 * responses carry the requester's PSNs, so only requests count.
 */
static struct {
	uint8_t sgid[16];
	uint32_t psn;
} first_req[2];
static int nr_first_req;

static void
load_mads(void)
{
	struct tp_frame *f;
	int n = tp_load(data_dir, "rdmacm-rping-s64.pcap", &f);

	assert_true(n > 0);
	nr_mads = 0;
	for (int i = 0; i < n; i++) {
		struct rp_pkt pkt;

		if (rp_pkt_parse(f[i].data, f[i].len, true, &pkt) != 0)
			continue;
		if ((pkt.mask & (RP_M_RC | RP_M_REQ)) ==
		    (RP_M_RC | RP_M_REQ)) {
			int k;

			for (k = 0; k < nr_first_req; k++)
				if (memcmp(first_req[k].sgid, pkt.sgid,
					   16) == 0)
					break;
			if (k == nr_first_req) {
				assert_true(nr_first_req < 2);
				memcpy(first_req[k].sgid, pkt.sgid, 16);
				first_req[k].psn = pkt.psn;
				nr_first_req++;
			}
			continue;
		}
		if (pkt.qpn != 1)
			continue;
		assert_int_equal(pkt.paylen, CM_MAD_SIZE);
		assert_true(nr_mads < 5);
		memcpy(mad_sgid[nr_mads], pkt.sgid, 16);
		memcpy(mads[nr_mads++], f[i].data + pkt.pay_off, CM_MAD_SIZE);
	}
	tp_frames_free(f, n);
	assert_int_equal(nr_mads, 5);
	assert_int_equal(nr_first_req, 2);
}

/* The first request PSN the end with @gid sent. */
static uint32_t
first_req_psn(const uint8_t *gid)
{
	for (int k = 0; k < nr_first_req; k++)
		if (memcmp(first_req[k].sgid, gid, 16) == 0)
			return first_req[k].psn;
	fail_msg("no RC request from that end in the capture");
	return 0;
}

static void
ipv4_gid(uint8_t *gid, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	memset(gid, 0, 16);
	gid[10] = 0xff;
	gid[11] = 0xff;
	gid[12] = a;
	gid[13] = b;
	gid[14] = c;
	gid[15] = d;
}

/* Frame 1: the values tshark -V prints for the ConnectRequest. */
static void
test_req(void **state)
{
	const uint8_t *m = mads[0];
	uint8_t gid[16];
	struct cm_cma_hdr h;
	const uint8_t *priv;
	size_t len;

	(void)state;
	assert_int_equal(cm_mad_check(m, CM_MAD_SIZE), CM_ATTR_REQ);
	assert_int_equal(cm_get(m, CM_F_TID), 0x000000029a2f6851ull);
	assert_int_equal(cm_get(m, CM_F_REQ_LOCAL_COMM_ID), 0x51682f9a);
	assert_int_equal(cm_get(m, CM_F_REQ_SERVICE_ID),
			 CM_SERVICE_ID_TCP | 0x1c06);
	assert_int_equal(cm_get(m, CM_F_REQ_LOCAL_CA_GUID),
			 0x505400fffec00201ull);
	assert_int_equal(cm_get(m, CM_F_REQ_LOCAL_QKEY), 0);
	assert_int_equal(cm_get(m, CM_F_REQ_LOCAL_QPN), 0x11);
	assert_int_equal(cm_get(m, CM_F_REQ_RESPONDER_RESOURCES), 1);
	assert_int_equal(cm_get(m, CM_F_REQ_INITIATOR_DEPTH), 1);
	assert_int_equal(cm_get(m, CM_F_REQ_REMOTE_CM_RESP_TIMEOUT), 0x14);
	assert_int_equal(cm_get(m, CM_F_REQ_TRANSPORT), 0);
	assert_int_equal(cm_get(m, CM_F_REQ_STARTING_PSN), 0x1860a8);
	assert_int_equal(cm_get(m, CM_F_REQ_LOCAL_CM_RESP_TIMEOUT), 0x14);
	assert_int_equal(cm_get(m, CM_F_REQ_RETRY_COUNT), 7);
	assert_int_equal(cm_get(m, CM_F_REQ_PKEY), 0xffff);
	assert_int_equal(cm_get(m, CM_F_REQ_PATH_MTU), 3);
	assert_int_equal(cm_get(m, CM_F_REQ_RNR_RETRY_COUNT), 7);
	assert_int_equal(cm_get(m, CM_F_REQ_MAX_CM_RETRIES), 15);
	assert_int_equal(cm_get(m, CM_F_REQ_SRQ), 0);
	assert_int_equal(cm_get(m, CM_F_REQ_PRIMARY_LOCAL_LID), 0xffff);
	assert_int_equal(cm_get(m, CM_F_REQ_PRIMARY_REMOTE_LID), 0xffff);
	ipv4_gid(gid, 192, 0, 2, 1);
	assert_memory_equal(cm_bytes(m, CM_F_REQ_PRIMARY_LOCAL_GID, &len),
			    gid, 16);
	assert_int_equal(len, 16);
	ipv4_gid(gid, 192, 0, 2, 2);
	assert_memory_equal(cm_bytes(m, CM_F_REQ_PRIMARY_REMOTE_GID, NULL),
			    gid, 16);
	/*
	 * tshark 4.0 prints flow label 0x0068e and rate 0x28: it reads these
	 * 32 bits one byte early (from the last byte of the remote GID).  The
	 * bytes are 68 ec 50 00 at MAD offset 112, where IBTA puts them, and
	 * the hop limit and ACK timeout after them match tshark.
	 */
	assert_int_equal(cm_get(m, CM_F_REQ_PRIMARY_FLOW_LABEL), 0x68ec5);
	assert_int_equal(cm_get(m, CM_F_REQ_PRIMARY_PACKET_RATE), 0);
	assert_int_equal(cm_get(m, CM_F_REQ_PRIMARY_TRAFFIC_CLASS), 0);
	assert_int_equal(cm_get(m, CM_F_REQ_PRIMARY_HOP_LIMIT), 0x40);
	assert_int_equal(cm_get(m, CM_F_REQ_PRIMARY_SL), 0);
	assert_int_equal(cm_get(m, CM_F_REQ_PRIMARY_LOCAL_ACK_TIMEOUT), 0x13);

	priv = cm_bytes(m, CM_F_REQ_PRIVATE_DATA, &len);
	assert_int_equal(len, 92);
	assert_int_equal(cm_cma_hdr_get(priv, len, &h), 0);
	assert_int_equal(h.ip_version, 4);
	assert_int_equal(h.src_port, 0xb961);
	ipv4_gid(gid, 192, 0, 2, 1);
	assert_memory_equal(&h.src[12], &gid[12], 4);
	ipv4_gid(gid, 192, 0, 2, 2);
	assert_memory_equal(&h.dst[12], &gid[12], 4);
}

static void
test_rep_rtu_dreq_drep(void **state)
{
	const uint8_t *rep = mads[1], *rtu = mads[2];
	const uint8_t *dreq = mads[3], *drep = mads[4];

	(void)state;
	assert_int_equal(cm_mad_check(rep, CM_MAD_SIZE), CM_ATTR_REP);
	assert_int_equal(cm_get(rep, CM_F_REP_LOCAL_COMM_ID), 0x32e53c65);
	assert_int_equal(cm_get(rep, CM_F_REP_REMOTE_COMM_ID), 0x51682f9a);
	assert_int_equal(cm_get(rep, CM_F_REP_LOCAL_QKEY), 0);
	assert_int_equal(cm_get(rep, CM_F_REP_LOCAL_QPN), 0x11);
	assert_int_equal(cm_get(rep, CM_F_REP_STARTING_PSN), 0x732fbc);
	assert_int_equal(cm_get(rep, CM_F_REP_RESPONDER_RESOURCES), 1);
	assert_int_equal(cm_get(rep, CM_F_REP_INITIATOR_DEPTH), 1);
	assert_int_equal(cm_get(rep, CM_F_REP_TARGET_ACK_DELAY), 0x0f);
	assert_int_equal(cm_get(rep, CM_F_REP_FAILOVER_ACCEPTED), 0);
	assert_int_equal(cm_get(rep, CM_F_REP_END_TO_END_FC), 0);
	assert_int_equal(cm_get(rep, CM_F_REP_RNR_RETRY_COUNT), 7);
	assert_int_equal(cm_get(rep, CM_F_REP_SRQ), 0);
	assert_int_equal(cm_get(rep, CM_F_REP_LOCAL_CA_GUID),
			 0x505400fffec00202ull);

	assert_int_equal(cm_mad_check(rtu, CM_MAD_SIZE), CM_ATTR_RTU);
	assert_int_equal(cm_get(rtu, CM_F_RTU_LOCAL_COMM_ID), 0x51682f9a);
	assert_int_equal(cm_get(rtu, CM_F_RTU_REMOTE_COMM_ID), 0x32e53c65);

	assert_int_equal(cm_mad_check(dreq, CM_MAD_SIZE), CM_ATTR_DREQ);
	assert_int_equal(cm_get(dreq, CM_F_DREQ_LOCAL_COMM_ID), 0x51682f9a);
	assert_int_equal(cm_get(dreq, CM_F_DREQ_REMOTE_COMM_ID), 0x32e53c65);
	assert_int_equal(cm_get(dreq, CM_F_DREQ_REMOTE_QPN), 0x11);

	assert_int_equal(cm_mad_check(drep, CM_MAD_SIZE), CM_ATTR_DREP);
	assert_int_equal(cm_get(drep, CM_F_DREP_LOCAL_COMM_ID), 0x32e53c65);
	assert_int_equal(cm_get(drep, CM_F_DREP_REMOTE_COMM_ID), 0x51682f9a);
}

/* Byte mask of a field: which bits of the MAD it owns. */
static void
field_mask(enum cm_field f, uint8_t *mask)
{
	const struct cm_field_desc *d = &cm_fields[f];

	memset(mask, 0, CM_MAD_SIZE);
	if (d->len != 0) {
		memset(mask + d->off, 0xff, d->len);
		return;
	}
	for (unsigned int b = d->bit; b < (unsigned int)d->bit + d->width; b++)
		mask[d->off + b / 8] |= (uint8_t)(0x80u >> (b % 8));
}

/*
 * Every numeric field: a random value written over random bytes reads
 * back, and no bit outside the field changed.
 */
static void
test_set_get(void **state)
{
	uint8_t m[CM_MAD_SIZE], before[CM_MAD_SIZE], mask[CM_MAD_SIZE];

	(void)state;
	srand(4791);
	for (int f = 0; f < CM_F_MAX; f++) {
		const struct cm_field_desc *d = &cm_fields[f];

		assert_non_null(d->name);
		assert_true(d->off + (d->len != 0 ? d->len :
				      (d->bit + d->width + 7u) / 8u) <=
			    CM_MAD_SIZE);
		field_mask((enum cm_field)f, mask);
		for (int rep = 0; rep < 64; rep++) {
			uint64_t v = (uint64_t)rand() << 40 ^
				(uint64_t)rand() << 20 ^ (uint64_t)rand();
			uint64_t want = d->width == 64 ? v :
				v & ((1ull << d->width) - 1);

			for (unsigned int i = 0; i < CM_MAD_SIZE; i++)
				m[i] = (uint8_t)rand();
			memcpy(before, m, sizeof(m));
			if (d->len != 0) {
				uint8_t src[CM_MAD_SIZE];

				for (unsigned int i = 0; i < d->len; i++)
					src[i] = (uint8_t)rand();
				cm_set_bytes(m, (enum cm_field)f, src, d->len);
				assert_memory_equal(cm_bytes(m, (enum cm_field)f,
							     NULL), src, d->len);
			} else {
				cm_set(m, (enum cm_field)f, v);
				assert_int_equal(cm_get(m, (enum cm_field)f),
						 want);
			}
			for (unsigned int i = 0; i < CM_MAD_SIZE; i++)
				assert_int_equal(m[i] & ~mask[i],
						 before[i] & ~mask[i]);
		}
	}
}

/* The fields of one message (by name prefix) never share a bit. */
static void
test_no_overlap(void **state)
{
	static const char *const prefixes[] = {
		"CM_F_REQ_", "CM_F_REP_", "CM_F_RTU_", "CM_F_REJ_",
		"CM_F_DREQ_", "CM_F_DREP_", "CM_F_SIDR_REQ_", "CM_F_SIDR_REP_",
	};
	uint8_t used[CM_MAD_SIZE], mask[CM_MAD_SIZE];

	(void)state;
	for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
		size_t pl = strlen(prefixes[p]);

		memset(used, 0, sizeof(used));
		/* The common header belongs to every message. */
		for (int f = 0; f < CM_F_REQ_LOCAL_COMM_ID; f++) {
			field_mask((enum cm_field)f, mask);
			for (unsigned int i = 0; i < CM_MAD_SIZE; i++)
				used[i] |= mask[i];
		}
		for (int f = CM_F_REQ_LOCAL_COMM_ID; f < CM_F_MAX; f++) {
			if (strncmp(cm_fields[f].name, prefixes[p], pl) != 0)
				continue;
			field_mask((enum cm_field)f, mask);
			for (unsigned int i = 0; i < CM_MAD_SIZE; i++) {
				if (used[i] & mask[i])
					fail_msg("%s overlaps an earlier field at byte %u",
						 cm_fields[f].name, i);
				used[i] |= mask[i];
			}
		}
	}
}

static void
test_check_rejects(void **state)
{
	uint8_t m[CM_MAD_SIZE];

	(void)state;
	memcpy(m, mads[0], sizeof(m));
	assert_int_equal(cm_mad_check(m, CM_MAD_SIZE - 1), -1);
	cm_set(m, CM_F_MGMT_CLASS, 0x04);	/* SA, not CM */
	assert_int_equal(cm_mad_check(m, CM_MAD_SIZE), -1);
	memcpy(m, mads[0], sizeof(m));
	cm_set(m, CM_F_CLASS_VERSION, 1);
	assert_int_equal(cm_mad_check(m, CM_MAD_SIZE), -1);
	memcpy(m, mads[0], sizeof(m));
	cm_set(m, CM_F_ATTR_ID, 0x0019);	/* LAP: not handled */
	assert_int_equal(cm_mad_check(m, CM_MAD_SIZE), -1);
	cm_mad_init(m, CM_ATTR_SIDR_REQ, 7);
	assert_int_equal(cm_mad_check(m, CM_MAD_SIZE), CM_ATTR_SIDR_REQ);
	assert_int_equal(cm_get(m, CM_F_TID), 7);
}

static void
test_cma_hdr(void **state)
{
	struct cm_cma_hdr h = { .ip_version = 4, .src_port = 0xb961 }, g;
	uint8_t priv[92];
	const uint8_t *req_priv = cm_bytes(mads[0], CM_F_REQ_PRIVATE_DATA,
					   NULL);

	(void)state;
	memcpy(&h.src[12], (const uint8_t[]){ 192, 0, 2, 1 }, 4);
	memcpy(&h.dst[12], (const uint8_t[]){ 192, 0, 2, 2 }, 4);
	memset(priv, 0, sizeof(priv));
	cm_cma_hdr_put(priv, &h);
	/* What the kernel wrote, byte for byte. */
	assert_memory_equal(priv, req_priv, CM_CMA_HDR_LEN);
	assert_int_equal(cm_cma_hdr_get(priv, sizeof(priv), &g), 0);
	assert_memory_equal(&g, &h, sizeof(g));
	assert_int_equal(cm_cma_hdr_get(priv, CM_CMA_HDR_LEN - 1, &g), -1);
	priv[1] = 5 << 4;
	assert_int_equal(cm_cma_hdr_get(priv, sizeof(priv), &g), -1);
	priv[1] = 4 << 4;
	priv[0] = 1;
	assert_int_equal(cm_cma_hdr_get(priv, sizeof(priv), &g), -1);
}

/*
 * What the capture itself says, whatever rocepmd does: each message's
 * Starting PSN is where its receiver's send queue starts.  The REQ's
 * (0x1860a8 = 1597608) is the PSN of the passive side's first request,
 * the REP's (0x732fbc = 7548860) the active side's; the two differ, so
 * the opposite reading cannot pass too.
 */
static void
test_psn_on_the_wire(void **state)
{
	const uint8_t *req = mads[0], *rep = mads[1];
	const uint8_t *active = mad_sgid[0], *passive = mad_sgid[1];
	uint32_t req_psn = (uint32_t)cm_get(req, CM_F_REQ_STARTING_PSN);
	uint32_t rep_psn = (uint32_t)cm_get(rep, CM_F_REP_STARTING_PSN);

	(void)state;
	assert_memory_equal(cm_bytes(req, CM_F_REQ_PRIMARY_LOCAL_GID, NULL),
			    active, 16);
	assert_memory_not_equal(active, passive, 16);
	assert_int_equal(req_psn, 1597608);
	assert_int_equal(rep_psn, 7548860);
	assert_int_equal(first_req_psn(passive), req_psn);
	assert_int_equal(first_req_psn(active), rep_psn);
	assert_int_not_equal(req_psn, rep_psn);
}

static void
assert_conn_qp(const struct cm_conn_qp *q, uint32_t sq_psn, uint32_t rq_psn,
	       uint8_t max_rd_atomic, uint8_t max_dest_rd_atomic,
	       uint8_t retry_cnt, uint8_t rnr_retry, uint8_t timeout)
{
	assert_int_equal(q->sq_psn, sq_psn);
	assert_int_equal(q->rq_psn, rq_psn);
	assert_int_equal(q->max_rd_atomic, max_rd_atomic);
	assert_int_equal(q->max_dest_rd_atomic, max_dest_rd_atomic);
	assert_int_equal(q->retry_cnt, retry_cnt);
	assert_int_equal(q->rnr_retry, rnr_retry);
	assert_int_equal(q->timeout, timeout);
}

/*
 * rocepmd's reading of the capture's REQ and REP gives each of the
 * kernel's QPs the PSNs it then used: the active QP sent from the REP's
 * Starting PSN and received from the REQ's, the passive QP the reverse.
 * The timeouts are the kernel's too: 19 on both sides.
 */
static void
test_conn_qp_capture(void **state)
{
	const uint8_t *active = mad_sgid[0], *passive = mad_sgid[1];
	struct cm_conn_wire w;
	struct cm_conn_qp a, p;

	(void)state;
	memset(&w, 0xa5, sizeof(w));
	cm_conn_wire_req(&w, mads[0]);
	cm_conn_wire_rep(&w, mads[1]);
	cm_conn_qp(CM_ROLE_ACTIVE, &w, &a);
	cm_conn_qp(CM_ROLE_PASSIVE, &w, &p);
	assert_int_equal(a.sq_psn, first_req_psn(active));
	assert_int_equal(a.rq_psn, first_req_psn(passive));
	assert_int_equal(p.sq_psn, first_req_psn(passive));
	assert_int_equal(p.rq_psn, first_req_psn(active));
	assert_conn_qp(&a, 7548860, 1597608, 1, 1, 7, 7, 19);
	assert_conn_qp(&p, 1597608, 7548860, 1, 1, 7, 7, 19);
}

/*
 * Every field with its own value, so that any swap shows: REQ from the
 * active side (PSN, responder resources 4, initiator depth 2, retry 6,
 * RNR retry 5, ACK timeout 14), REP from the passive side (PSN,
 * responder resources 2, initiator depth 3, RNR retry 3, ACK delay 0).
 */
static void
test_conn_qp_rules(void **state)
{
	struct cm_conn_wire w = {
		.req_psn = 0x111111, .req_resp_res = 4, .req_init_depth = 2,
		.req_retry = 6, .req_rnr_retry = 5, .req_ack_timeout = 14,
		.rep_psn = 0x222222, .rep_resp_res = 2, .rep_init_depth = 3,
		.rep_rnr_retry = 3, .rep_ack_delay = 0,
	};
	struct cm_conn_qp a, p;

	(void)state;
	cm_conn_qp(CM_ROLE_ACTIVE, &w, &a);
	cm_conn_qp(CM_ROLE_PASSIVE, &w, &p);
	assert_conn_qp(&a, 0x222222, 0x111111, 2, 3, 6, 3, 14);
	assert_conn_qp(&p, 0x111111, 0x222222, 3, 2, 6, 5, 14);
	/* Each sends from where the other receives ... */
	assert_int_equal(a.sq_psn, p.rq_psn);
	assert_int_equal(p.sq_psn, a.rq_psn);
	/* ... and issues no more READs than the other serves. */
	assert_true(a.max_rd_atomic <= p.max_dest_rd_atomic);
	assert_true(p.max_rd_atomic <= a.max_dest_rd_atomic);

	/* A peer that grants more than was asked changes nothing here. */
	w.rep_resp_res = 9;
	w.rep_init_depth = 8;
	cm_conn_qp(CM_ROLE_ACTIVE, &w, &a);
	assert_int_equal(a.max_rd_atomic, 2);
	assert_int_equal(a.max_dest_rd_atomic, 4);

	/* A slow peer's ACK delay lengthens the active side's timeout. */
	w.rep_ack_delay = 15;
	cm_conn_qp(CM_ROLE_ACTIVE, &w, &a);
	assert_int_equal(a.timeout, 16);
	/* An ACK timeout of 0 (none) in a REQ becomes the shortest. */
	w.req_ack_timeout = 0;
	cm_conn_qp(CM_ROLE_PASSIVE, &w, &p);
	assert_int_equal(p.timeout, 1);
}

/* log2(2 * 2^life + 2^delay), rounded up, at most 31. */
static void
test_ack_timeout(void **state)
{
	static const struct {
		uint8_t delay, life, want;
	} t[] = {
		{ 0, 13, 14 }, { 15, 18, 19 }, { 15, 13, 16 }, { 14, 13, 15 },
		{ 13, 13, 15 }, { 0, 0, 2 }, { 31, 31, 31 }, { 20, 2, 20 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(cm_ack_timeout(t[i].delay, t[i].life),
				 t[i].want);
}

static int
setup(void **state)
{
	(void)state;
	load_mads();
	return 0;
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_req),
		cmocka_unit_test(test_rep_rtu_dreq_drep),
		cmocka_unit_test(test_set_get),
		cmocka_unit_test(test_no_overlap),
		cmocka_unit_test(test_check_rejects),
		cmocka_unit_test(test_cma_hdr),
		cmocka_unit_test(test_psn_on_the_wire),
		cmocka_unit_test(test_conn_qp_capture),
		cmocka_unit_test(test_conn_qp_rules),
		cmocka_unit_test(test_ack_timeout),
	};

	if (argc > 1)
		data_dir = argv[1];
	return cmocka_run_group_tests(tests, setup, NULL);
}
