/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opcode table against IBTA (hand-written expected lengths, offsets and
 * masks) and rp_next_opcode() for every WR opcode x transport x position.
 */

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rte_common.h>

#include <infiniband/verbs.h>

#include "rp_opcode.h"

/* Expected layout: offsets from the BTH, 0 = header absent. */
struct exp_op {
	uint8_t op;
	uint16_t length;
	uint16_t deth, reth, atmeth, aeth, atmack, immdt, ieth;
	uint32_t mask;
};

#define P	RP_M_PAYLOAD
#define RQ	RP_M_REQ
#define RS	RP_M_RESP
#define SND	(RP_M_SEND | RQ | P)
#define WR	(RP_M_WRITE | RQ | P)
#define F	RP_M_FIRST
#define M	RP_M_MIDDLE
#define L	RP_M_LAST
#define O	RP_M_ONLY
#define RW	RP_M_RWQE
#define CP	(RP_M_COMP | RP_M_SE)

/* IBTA 9.2 / 9.3: sizes BTH 12, DETH 8, RETH 16, AtomicETH 28, AETH 4,
 * AtomicAckETH 8, ImmDt 4, IETH 4. */
static const struct exp_op exp_rcuc[] = {
	{ 0x00, 12, .mask = SND | F | RW },
	{ 0x01, 12, .mask = SND | M },
	{ 0x02, 12, .mask = SND | L | CP },
	{ 0x03, 16, .immdt = 12, .mask = SND | L | CP | RP_M_IMMDT },
	{ 0x04, 12, .mask = SND | O | RW | CP },
	{ 0x05, 16, .immdt = 12, .mask = SND | O | RW | CP | RP_M_IMMDT },
	{ 0x06, 28, .reth = 12, .mask = WR | F | RP_M_RETH },
	{ 0x07, 12, .mask = WR | M },
	{ 0x08, 12, .mask = WR | L },
	{ 0x09, 16, .immdt = 12, .mask = WR | L | RW | CP | RP_M_IMMDT },
	{ 0x0a, 28, .reth = 12, .mask = WR | O | RP_M_RETH },
	{ 0x0b, 32, .reth = 12, .immdt = 28,
	  .mask = WR | O | RW | CP | RP_M_RETH | RP_M_IMMDT },
};

static const struct exp_op exp_rc_only[] = {
	{ 0x0c, 28, .reth = 12, .mask = RQ | RP_M_READ | O | RP_M_RETH },
	{ 0x0d, 16, .aeth = 12, .mask = RS | RP_M_READ | P | F | RP_M_AETH },
	{ 0x0e, 12, .mask = RS | RP_M_READ | P | M },
	{ 0x0f, 16, .aeth = 12, .mask = RS | RP_M_READ | P | L | RP_M_AETH },
	{ 0x10, 16, .aeth = 12, .mask = RS | RP_M_READ | P | O | RP_M_AETH },
	{ 0x11, 16, .aeth = 12, .mask = RS | O | RP_M_AETH },
	{ 0x12, 24, .aeth = 12, .atmack = 16,
	  .mask = RS | RP_M_ATOMIC | O | RP_M_AETH | RP_M_ATMACK },
	{ 0x13, 40, .atmeth = 12, .mask = RQ | RP_M_ATOMIC | O | RP_M_ATMETH },
	{ 0x14, 40, .atmeth = 12, .mask = RQ | RP_M_ATOMIC | O | RP_M_ATMETH },
	{ 0x16, 16, .ieth = 12, .mask = SND | L | CP | RP_M_IETH | RP_M_INV },
	{ 0x17, 16, .ieth = 12,
	  .mask = SND | O | RW | CP | RP_M_IETH | RP_M_INV },
	/* IBTA 1.5 ATOMIC WRITE: RETH, then its 8 bytes as payload */
	{ 0x1d, 28, .reth = 12,
	  .mask = RQ | P | O | RP_M_RETH | RP_M_ATOMIC_WRITE },
};

static const struct exp_op exp_other[] = {
	{ 0x64, 20, .deth = 12, .mask = SND | O | RW | CP | RP_M_DETH | RP_M_UD },
	{ 0x65, 24, .deth = 12, .immdt = 20,
	  .mask = SND | O | RW | CP | RP_M_DETH | RP_M_IMMDT | RP_M_UD },
	{ 0x81, 12, .mask = P | RP_M_CNP },
};

static void
check_one(const struct exp_op *e, uint32_t transport)
{
	const struct rp_opcode_info *info = &rp_opcode[e->op];

	assert_non_null(info->name);
	assert_int_equal(info->length, e->length);
	assert_int_equal(info->mask, e->mask | transport);
	assert_int_equal(info->offset[RP_HDR_DETH], e->deth);
	assert_int_equal(info->offset[RP_HDR_RETH], e->reth);
	assert_int_equal(info->offset[RP_HDR_ATMETH], e->atmeth);
	assert_int_equal(info->offset[RP_HDR_AETH], e->aeth);
	assert_int_equal(info->offset[RP_HDR_ATMACK], e->atmack);
	assert_int_equal(info->offset[RP_HDR_IMMDT], e->immdt);
	assert_int_equal(info->offset[RP_HDR_IETH], e->ieth);
	assert_int_equal(info->offset[RP_HDR_PAYLOAD], e->length);
}

/* Runs first: the constructor must have filled the table already. */
static void
test_ctor_ran(void **state)
{
	(void)state;
	assert_int_equal(rp_opcode[RP_OP_SEND_ONLY].length, 12);
	assert_int_equal(rp_opcode[RP_OP_WRITE_ONLY_IMM].length, 32);
	assert_int_equal(rp_opcode[RP_OP_UD | RP_OP_SEND_ONLY_IMM].length, 24);
}

static void
test_hdr_size(void **state)
{
	(void)state;
	assert_int_equal(rp_hdr_size[RP_HDR_RETH], 16);
	assert_int_equal(rp_hdr_size[RP_HDR_AETH], 4);
	assert_int_equal(rp_hdr_size[RP_HDR_ATMETH], 28);
	assert_int_equal(rp_hdr_size[RP_HDR_ATMACK], 8);
	assert_int_equal(rp_hdr_size[RP_HDR_DETH], 8);
	assert_int_equal(rp_hdr_size[RP_HDR_IMMDT], 4);
	assert_int_equal(rp_hdr_size[RP_HDR_IETH], 4);
	assert_int_equal(rp_hdr_size[RP_HDR_PAYLOAD], 0);
}

static void
test_defined(void **state)
{
	bool defined[256] = { false };
	unsigned int i, n = 0;

	(void)state;
	for (i = 0; i < RTE_DIM(exp_rcuc); i++) {
		struct exp_op uc = exp_rcuc[i];

		check_one(&exp_rcuc[i], RP_M_RC);
		uc.op |= RP_OP_UC;
		check_one(&uc, RP_M_UC);
		defined[exp_rcuc[i].op] = defined[uc.op] = true;
	}
	for (i = 0; i < RTE_DIM(exp_rc_only); i++) {
		check_one(&exp_rc_only[i], RP_M_RC);
		defined[exp_rc_only[i].op] = true;
		/* no UC counterpart */
		assert_null(rp_opcode[RP_OP_UC | exp_rc_only[i].op].name);
	}
	for (i = 0; i < RTE_DIM(exp_other); i++) {
		check_one(&exp_other[i], 0);
		defined[exp_other[i].op] = true;
	}
	for (i = 0; i < 256; i++) {
		if (defined[i]) {
			n++;
			continue;
		}
		assert_null(rp_opcode[i].name);
		assert_int_equal(rp_opcode[i].mask, 0);
		assert_int_equal(rp_opcode[i].length, 0);
	}
	assert_int_equal(n, 2 * 12 + 12 + 3);
	/* a few the brief names explicitly */
	assert_null(rp_opcode[0x15].name);	/* RESYNC: not supported */
	assert_null(rp_opcode[0x40].name);	/* RD */
	assert_null(rp_opcode[0x80].name);
	assert_null(rp_opcode[0xff].name);
}

/* Structural rules every defined opcode must satisfy. */
static void
test_consistency(void **state)
{
	static const enum rp_hdr_id order[] = {
		RP_HDR_DETH, RP_HDR_RETH, RP_HDR_ATMETH, RP_HDR_AETH,
		RP_HDR_ATMACK, RP_HDR_IMMDT, RP_HDR_IETH,
	};
	unsigned int op, i;

	(void)state;
	for (op = 0; op < 256; op++) {
		const struct rp_opcode_info *info = &rp_opcode[op];
		uint32_t m = info->mask, tr, pos, off = RP_BTH_SIZE;

		if (info->name == NULL)
			continue;
		for (i = 0; i < RTE_DIM(order); i++) {
			if (!(m & (1u << order[i])))
				continue;
			assert_int_equal(info->offset[order[i]], off);
			off += rp_hdr_size[order[i]];
		}
		assert_int_equal(info->length, off);
		if (m & RP_M_CNP)
			continue;
		tr = m & (RP_M_RC | RP_M_UC | RP_M_UD);
		assert_true(tr == RP_M_RC || tr == RP_M_UC || tr == RP_M_UD);
		assert_int_equal(op >> 5, tr == RP_M_RC ? 0 : tr == RP_M_UC ? 1 : 3);
		assert_true(!(m & RP_M_REQ) != !(m & RP_M_RESP));
		pos = m & (RP_M_FIRST | RP_M_MIDDLE | RP_M_LAST);
		assert_true(pos == RP_M_FIRST || pos == RP_M_MIDDLE ||
			    pos == RP_M_LAST || pos == RP_M_ONLY);
		/* completion implies SE meaning, and only on LAST/ONLY */
		assert_int_equal(!!(m & RP_M_COMP), !!(m & RP_M_SE));
		if (m & RP_M_COMP)
			assert_true(m & RP_M_LAST);
		if (m & RP_M_RWQE)
			assert_true((m & RP_M_SEND) ? (m & RP_M_FIRST) :
				    (m & RP_M_IMMDT) && (m & RP_M_LAST));
		if (m & RP_M_IMMDT)
			assert_true(m & RP_M_COMP);
		/* IBTA: AETH on every response but READ response MIDDLE */
		if (m & RP_M_RESP)
			assert_int_equal(!!(m & RP_M_AETH), pos != RP_M_MIDDLE);
		assert_int_equal(!!(m & RP_M_DETH), !!(m & RP_M_UD));
		assert_int_equal(!!(m & RP_M_IETH), !!(m & RP_M_INV));
		assert_true(strncmp(info->name, tr == RP_M_RC ? "RC_" :
				    tr == RP_M_UC ? "UC_" : "UD_", 3) == 0);
	}
}

static void
test_init_idempotent(void **state)
{
	static struct rp_opcode_info copy[256];

	(void)state;
	memcpy(copy, rp_opcode, sizeof(copy));
	rp_opcode_init();
	rp_opcode_init();
	assert_memory_equal(copy, rp_opcode, sizeof(copy));
}

/* Independent statement of IBTA's rules, as a switch. */
static int
expect_next(int wr, int qpt, int first, int last)
{
	int base, pos = (first ? 1 : 0) | (last ? 2 : 0);
	int send[4] = { 0x01, 0x00, 0x02, 0x04 };	/* mid first last only */
	int imm[4] = { 0x01, 0x00, 0x03, 0x05 };
	int inv[4] = { 0x01, 0x00, 0x16, 0x17 };
	int wrt[4] = { 0x07, 0x06, 0x08, 0x0a };
	int wri[4] = { 0x07, 0x06, 0x09, 0x0b };

	if (qpt == IBV_QPT_UD) {
		if (pos != 3)
			return -1;
		if (wr == IBV_WR_SEND)
			return 0x64;
		if (wr == IBV_WR_SEND_WITH_IMM)
			return 0x65;
		return -1;
	}
	if (qpt != IBV_QPT_RC && qpt != IBV_QPT_UC)
		return -1;
	base = qpt == IBV_QPT_RC ? 0x00 : 0x20;
	switch (wr) {
	case IBV_WR_SEND:
		return base | send[pos];
	case IBV_WR_SEND_WITH_IMM:
		return base | imm[pos];
	case IBV_WR_SEND_WITH_INV:
		return qpt == IBV_QPT_RC ? inv[pos] : -1;
	case IBV_WR_RDMA_WRITE:
		return base | wrt[pos];
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return base | wri[pos];
	case IBV_WR_RDMA_READ:
		return qpt == IBV_QPT_RC && first ? 0x0c : -1;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return qpt == IBV_QPT_RC && first ? 0x13 : -1;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return qpt == IBV_QPT_RC && first ? 0x14 : -1;
	case IBV_WR_ATOMIC_WRITE:
		return qpt == IBV_QPT_RC && first ? 0x1d : -1;
	default:
		return -1;
	}
}

static void
test_next_opcode(void **state)
{
	static const int qpts[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RAW_PACKET,
		IBV_QPT_XRC_SEND, IBV_QPT_XRC_RECV, IBV_QPT_DRIVER, 0, 1, -1,
	};
	int wr, q, first, last, got, n_ok = 0;

	(void)state;
	for (wr = -3; wr <= IBV_WR_ATOMIC_WRITE + 20; wr++)
		for (q = 0; q < (int)RTE_DIM(qpts); q++)
			for (first = 0; first <= 2; first++)
				for (last = 0; last <= 2; last++) {
					got = rp_next_opcode(wr, qpts[q],
							     first, last);
					assert_int_equal(got, expect_next(wr,
						qpts[q], first, last));
					if (got >= 0) {
						n_ok++;
						assert_non_null(
							rp_opcode[got].name);
					}
				}
	assert_true(n_ok > 0);

	/* spot checks, spelled out */
	assert_int_equal(rp_next_opcode(IBV_WR_SEND, IBV_QPT_RC, 1, 1),
			 RP_OP_SEND_ONLY);
	assert_int_equal(rp_next_opcode(IBV_WR_RDMA_WRITE_WITH_IMM,
					IBV_QPT_UC, 0, 1),
			 RP_OP_UC | RP_OP_WRITE_LAST_IMM);
	assert_int_equal(rp_next_opcode(IBV_WR_SEND_WITH_IMM, IBV_QPT_UD, 1,
					1), RP_OP_UD | RP_OP_SEND_ONLY_IMM);
	assert_int_equal(rp_next_opcode(IBV_WR_SEND, IBV_QPT_UD, 1, 0), -1);
	assert_int_equal(rp_next_opcode(IBV_WR_RDMA_WRITE, IBV_QPT_UD, 1, 1),
			 -1);
	assert_int_equal(rp_next_opcode(IBV_WR_RDMA_READ, IBV_QPT_UC, 1, 1),
			 -1);
	assert_int_equal(rp_next_opcode(IBV_WR_RDMA_READ, IBV_QPT_RC, 1, 0),
			 RP_OP_READ_REQ);
	assert_int_equal(rp_next_opcode(IBV_WR_RDMA_READ, IBV_QPT_RC, 0, 1),
			 -1);
	assert_int_equal(rp_next_opcode(IBV_WR_ATOMIC_FETCH_AND_ADD,
					IBV_QPT_UC, 1, 1), -1);
	assert_int_equal(rp_next_opcode(IBV_WR_SEND_WITH_INV, IBV_QPT_UC, 1,
					1), -1);
	assert_int_equal(rp_next_opcode(IBV_WR_LOCAL_INV, IBV_QPT_RC, 1, 1),
			 -1);
	assert_int_equal(rp_next_opcode(IBV_WR_ATOMIC_WRITE, IBV_QPT_RC, 1,
					1), RP_OP_ATOMIC_WRITE);
	assert_int_equal(rp_next_opcode(IBV_WR_ATOMIC_WRITE, IBV_QPT_UC, 1,
					1), -1);
	assert_int_equal(rp_next_opcode(IBV_WR_ATOMIC_WRITE, IBV_QPT_RC, 0,
					1), -1);
}

/* Segment a message at MTU edges the way a requester would. */
static void
segment(int wr, int qpt, uint32_t len, uint32_t mtu, int *ops, int *n)
{
	uint32_t left = len;
	int first = 1;

	*n = 0;
	do {
		int last = left <= mtu;

		ops[(*n)++] = rp_next_opcode(wr, qpt, first, last);
		left = last ? 0 : left - mtu;
		first = 0;
	} while (left > 0);
}

static void
test_segmentation(void **state)
{
	int ops[8], n;

	(void)state;
	segment(IBV_WR_SEND, IBV_QPT_RC, 0, 1024, ops, &n);
	assert_int_equal(n, 1);
	assert_int_equal(ops[0], RP_OP_SEND_ONLY);
	segment(IBV_WR_SEND, IBV_QPT_RC, 1024, 1024, ops, &n);
	assert_int_equal(n, 1);
	assert_int_equal(ops[0], RP_OP_SEND_ONLY);
	segment(IBV_WR_SEND, IBV_QPT_RC, 1025, 1024, ops, &n);
	assert_int_equal(n, 2);
	assert_int_equal(ops[0], RP_OP_SEND_FIRST);
	assert_int_equal(ops[1], RP_OP_SEND_LAST);
	segment(IBV_WR_RDMA_WRITE_WITH_IMM, IBV_QPT_RC, 3072, 1024, ops, &n);
	assert_int_equal(n, 3);
	assert_int_equal(ops[0], RP_OP_WRITE_FIRST);
	assert_int_equal(ops[1], RP_OP_WRITE_MIDDLE);
	assert_int_equal(ops[2], RP_OP_WRITE_LAST_IMM);
	segment(IBV_WR_SEND, IBV_QPT_UD, 1025, 1024, ops, &n);
	assert_int_equal(ops[0], -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ctor_ran),
		cmocka_unit_test(test_hdr_size),
		cmocka_unit_test(test_defined),
		cmocka_unit_test(test_consistency),
		cmocka_unit_test(test_init_idempotent),
		cmocka_unit_test(test_next_opcode),
		cmocka_unit_test(test_segmentation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
