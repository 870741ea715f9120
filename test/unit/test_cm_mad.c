/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The CM MAD codec (verbs-shim/cm_mad.c) against the kernel's rdma_cm:
 * every CM message of the rxe capture rdmacm-rping-s64 (REQ, REP, RTU,
 * DREQ, DREP) decoded field by field to the values tshark prints for it;
 * every field of the table written with random values without touching a
 * bit outside it; fields never overlap within a message; and the RDMA CM
 * IP header.  argv[1] is the rxe capture dir.
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

#include "cm_mad.h"
#include "rp_pkt.h"
#include "tp_util.h"

static const char *data_dir = "test/data/rxe";

/* The five MADs of the capture, in order (frames 1, 2, 3, 28, 29). */
static uint8_t mads[5][CM_MAD_SIZE];
static int nr_mads;

static void
load_mads(void)
{
	struct tp_frame *f;
	int n = tp_load(data_dir, "rdmacm-rping-s64.pcap", &f);

	assert_true(n > 0);
	nr_mads = 0;
	for (int i = 0; i < n; i++) {
		struct rp_pkt pkt;

		if (rp_pkt_parse(f[i].data, f[i].len, true, &pkt) != 0 ||
		    pkt.qpn != 1)
			continue;
		assert_int_equal(pkt.paylen, CM_MAD_SIZE);
		assert_true(nr_mads < 5);
		memcpy(mads[nr_mads++], f[i].data + pkt.pay_off, CM_MAD_SIZE);
	}
	tp_frames_free(f, n);
	assert_int_equal(nr_mads, 5);
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
	};

	if (argc > 1)
		data_dir = argv[1];
	return cmocka_run_group_tests(tests, setup, NULL);
}
