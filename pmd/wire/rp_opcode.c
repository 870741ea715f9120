/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * BTH opcode table (IBTA 9.2, table 35 and 9.3 header layout), and the
 * WR opcode -> BTH opcode rule used by the requester.
 */

#include <stdint.h>

#include <rte_common.h>

#include <infiniband/verbs.h>

#include "rp_opcode.h"

const uint8_t rp_hdr_size[RP_HDR_NUM] = {
	[RP_HDR_RETH] = 16,
	[RP_HDR_AETH] = 4,
	[RP_HDR_ATMETH] = 28,
	[RP_HDR_ATMACK] = 8,
	[RP_HDR_DETH] = 8,
	[RP_HDR_IMMDT] = 4,
	[RP_HDR_IETH] = 4,
	[RP_HDR_PAYLOAD] = 0,
};

/* Masks shared by RC and UC: the transport bit is added per entry. */
#define M_SEND_FIRST	(RP_M_PAYLOAD | RP_M_REQ | RP_M_SEND | RP_M_FIRST | \
			 RP_M_RWQE)
#define M_SEND_MIDDLE	(RP_M_PAYLOAD | RP_M_REQ | RP_M_SEND | RP_M_MIDDLE)
#define M_SEND_LAST	(RP_M_PAYLOAD | RP_M_REQ | RP_M_SEND | RP_M_LAST | \
			 RP_M_COMP | RP_M_SE)
#define M_SEND_LAST_IMM	(RP_M_IMMDT | M_SEND_LAST)
#define M_SEND_ONLY	(RP_M_PAYLOAD | RP_M_REQ | RP_M_SEND | RP_M_ONLY | \
			 RP_M_RWQE | RP_M_COMP | RP_M_SE)
#define M_SEND_ONLY_IMM	(RP_M_IMMDT | M_SEND_ONLY)
#define M_WRITE_FIRST	(RP_M_RETH | RP_M_PAYLOAD | RP_M_REQ | RP_M_WRITE | \
			 RP_M_FIRST)
#define M_WRITE_MIDDLE	(RP_M_PAYLOAD | RP_M_REQ | RP_M_WRITE | RP_M_MIDDLE)
#define M_WRITE_LAST	(RP_M_PAYLOAD | RP_M_REQ | RP_M_WRITE | RP_M_LAST)
/* The immediate is what makes a WRITE consume and complete a recv WQE. */
#define M_WRITE_LAST_IMM (RP_M_IMMDT | M_WRITE_LAST | RP_M_RWQE | RP_M_COMP | \
			  RP_M_SE)
#define M_WRITE_ONLY	(RP_M_RETH | RP_M_PAYLOAD | RP_M_REQ | RP_M_WRITE | \
			 RP_M_ONLY)
#define M_WRITE_ONLY_IMM (RP_M_IMMDT | M_WRITE_ONLY | RP_M_RWQE | RP_M_COMP | \
			  RP_M_SE)

#define RC(op, m)	[RP_OP_RC | RP_OP_##op] = { .name = "RC_" #op, \
					    .mask = (m) | RP_M_RC }
#define UC(op, m)	[RP_OP_UC | RP_OP_##op] = { .name = "UC_" #op, \
					    .mask = (m) | RP_M_UC }

struct rp_opcode_info rp_opcode[256] = {
	RC(SEND_FIRST, M_SEND_FIRST),
	RC(SEND_MIDDLE, M_SEND_MIDDLE),
	RC(SEND_LAST, M_SEND_LAST),
	RC(SEND_LAST_IMM, M_SEND_LAST_IMM),
	RC(SEND_ONLY, M_SEND_ONLY),
	RC(SEND_ONLY_IMM, M_SEND_ONLY_IMM),
	RC(WRITE_FIRST, M_WRITE_FIRST),
	RC(WRITE_MIDDLE, M_WRITE_MIDDLE),
	RC(WRITE_LAST, M_WRITE_LAST),
	RC(WRITE_LAST_IMM, M_WRITE_LAST_IMM),
	RC(WRITE_ONLY, M_WRITE_ONLY),
	RC(WRITE_ONLY_IMM, M_WRITE_ONLY_IMM),
	RC(READ_REQ, RP_M_RETH | RP_M_REQ | RP_M_READ | RP_M_ONLY),
	/* READ response MIDDLE is the only response without an AETH. */
	RC(READ_RESP_FIRST, RP_M_AETH | RP_M_PAYLOAD | RP_M_RESP | RP_M_READ |
	   RP_M_FIRST),
	RC(READ_RESP_MIDDLE, RP_M_PAYLOAD | RP_M_RESP | RP_M_READ |
	   RP_M_MIDDLE),
	RC(READ_RESP_LAST, RP_M_AETH | RP_M_PAYLOAD | RP_M_RESP | RP_M_READ |
	   RP_M_LAST),
	RC(READ_RESP_ONLY, RP_M_AETH | RP_M_PAYLOAD | RP_M_RESP | RP_M_READ |
	   RP_M_ONLY),
	RC(ACK, RP_M_AETH | RP_M_RESP | RP_M_ONLY),
	RC(ATOMIC_ACK, RP_M_AETH | RP_M_ATMACK | RP_M_RESP | RP_M_ATOMIC |
	   RP_M_ONLY),
	RC(CMP_SWAP, RP_M_ATMETH | RP_M_REQ | RP_M_ATOMIC | RP_M_ONLY),
	RC(FETCH_ADD, RP_M_ATMETH | RP_M_REQ | RP_M_ATOMIC | RP_M_ONLY),
	RC(SEND_LAST_INV, RP_M_IETH | RP_M_INV | M_SEND_LAST),
	RC(SEND_ONLY_INV, RP_M_IETH | RP_M_INV | M_SEND_ONLY),
	RC(ATOMIC_WRITE, RP_M_RETH | RP_M_PAYLOAD | RP_M_REQ |
	   RP_M_ATOMIC_WRITE | RP_M_ONLY),

	UC(SEND_FIRST, M_SEND_FIRST),
	UC(SEND_MIDDLE, M_SEND_MIDDLE),
	UC(SEND_LAST, M_SEND_LAST),
	UC(SEND_LAST_IMM, M_SEND_LAST_IMM),
	UC(SEND_ONLY, M_SEND_ONLY),
	UC(SEND_ONLY_IMM, M_SEND_ONLY_IMM),
	UC(WRITE_FIRST, M_WRITE_FIRST),
	UC(WRITE_MIDDLE, M_WRITE_MIDDLE),
	UC(WRITE_LAST, M_WRITE_LAST),
	UC(WRITE_LAST_IMM, M_WRITE_LAST_IMM),
	UC(WRITE_ONLY, M_WRITE_ONLY),
	UC(WRITE_ONLY_IMM, M_WRITE_ONLY_IMM),

	[RP_OP_UD | RP_OP_SEND_ONLY] = {
		.name = "UD_SEND_ONLY",
		.mask = RP_M_DETH | M_SEND_ONLY | RP_M_UD,
	},
	[RP_OP_UD | RP_OP_SEND_ONLY_IMM] = {
		.name = "UD_SEND_ONLY_IMM",
		.mask = RP_M_DETH | M_SEND_ONLY_IMM | RP_M_UD,
	},

	/* Congestion notification: BTH + 16 reserved bytes, parsed as
	 * payload so the length checks hold; the engine drops it. */
	[RP_OP_CNP | 0x01] = {
		.name = "CNP",
		.mask = RP_M_PAYLOAD | RP_M_CNP,
	},
};

/* IBTA 9.2: order of the extended headers after the BTH. */
static const enum rp_hdr_id rp_wire_order[] = {
	RP_HDR_DETH,
	RP_HDR_RETH,
	RP_HDR_ATMETH,
	RP_HDR_AETH,
	RP_HDR_ATMACK,
	RP_HDR_IMMDT,
	RP_HDR_IETH,
};

void
rp_opcode_init(void)
{
	unsigned int op, i;

	for (op = 0; op < RTE_DIM(rp_opcode); op++) {
		struct rp_opcode_info *info = &rp_opcode[op];
		uint16_t off = RP_BTH_SIZE;

		if (info->name == NULL)
			continue;
		for (i = 0; i < RTE_DIM(rp_wire_order); i++) {
			enum rp_hdr_id id = rp_wire_order[i];

			if (!(info->mask & (1u << id))) {
				info->offset[id] = 0;
				continue;
			}
			info->offset[id] = off;
			off += rp_hdr_size[id];
		}
		info->offset[RP_HDR_PAYLOAD] = off;
		info->length = off;
	}
}

/* Offsets must exist before any other constructor or main() parses. */
RTE_INIT(rp_opcode_ctor)
{
	rp_opcode_init();
}

/* Packet position within a message: index into rp_wr_op[][][]. */
enum {
	RP_POS_MIDDLE = 0,
	RP_POS_FIRST = 1,
	RP_POS_LAST = 2,
	RP_POS_ONLY = 3,	/* FIRST | LAST */
	RP_POS_NUM,
};

enum {
	RP_TR_RC,
	RP_TR_UC,
	RP_TR_UD,
	RP_TR_NUM,
};

/* Allowed entries carry this bit, so an omitted (zero) entry means "no". */
#define OK(op)	(0x100 | (op))

#define SEG(tr, f, m, l, o) \
	[tr] = { \
		[RP_POS_FIRST] = OK(f), [RP_POS_MIDDLE] = OK(m), \
		[RP_POS_LAST] = OK(l), [RP_POS_ONLY] = OK(o), \
	}
/* One request packet: valid whenever it is the first. */
#define ONE(tr, o) \
	[tr] = { [RP_POS_FIRST] = OK(o), [RP_POS_ONLY] = OK(o) }

static const uint16_t
rp_wr_op[IBV_WR_ATOMIC_WRITE + 1][RP_TR_NUM][RP_POS_NUM] = {
	[IBV_WR_SEND] = {
		SEG(RP_TR_RC, RP_OP_SEND_FIRST, RP_OP_SEND_MIDDLE,
		    RP_OP_SEND_LAST, RP_OP_SEND_ONLY),
		SEG(RP_TR_UC, RP_OP_UC | RP_OP_SEND_FIRST,
		    RP_OP_UC | RP_OP_SEND_MIDDLE, RP_OP_UC | RP_OP_SEND_LAST,
		    RP_OP_UC | RP_OP_SEND_ONLY),
		[RP_TR_UD] = { [RP_POS_ONLY] = OK(RP_OP_UD | RP_OP_SEND_ONLY) },
	},
	[IBV_WR_SEND_WITH_IMM] = {
		SEG(RP_TR_RC, RP_OP_SEND_FIRST, RP_OP_SEND_MIDDLE,
		    RP_OP_SEND_LAST_IMM, RP_OP_SEND_ONLY_IMM),
		SEG(RP_TR_UC, RP_OP_UC | RP_OP_SEND_FIRST,
		    RP_OP_UC | RP_OP_SEND_MIDDLE,
		    RP_OP_UC | RP_OP_SEND_LAST_IMM,
		    RP_OP_UC | RP_OP_SEND_ONLY_IMM),
		[RP_TR_UD] = {
			[RP_POS_ONLY] = OK(RP_OP_UD | RP_OP_SEND_ONLY_IMM),
		},
	},
	[IBV_WR_SEND_WITH_INV] = {
		SEG(RP_TR_RC, RP_OP_SEND_FIRST, RP_OP_SEND_MIDDLE,
		    RP_OP_SEND_LAST_INV, RP_OP_SEND_ONLY_INV),
	},
	[IBV_WR_RDMA_WRITE] = {
		SEG(RP_TR_RC, RP_OP_WRITE_FIRST, RP_OP_WRITE_MIDDLE,
		    RP_OP_WRITE_LAST, RP_OP_WRITE_ONLY),
		SEG(RP_TR_UC, RP_OP_UC | RP_OP_WRITE_FIRST,
		    RP_OP_UC | RP_OP_WRITE_MIDDLE, RP_OP_UC | RP_OP_WRITE_LAST,
		    RP_OP_UC | RP_OP_WRITE_ONLY),
	},
	[IBV_WR_RDMA_WRITE_WITH_IMM] = {
		SEG(RP_TR_RC, RP_OP_WRITE_FIRST, RP_OP_WRITE_MIDDLE,
		    RP_OP_WRITE_LAST_IMM, RP_OP_WRITE_ONLY_IMM),
		SEG(RP_TR_UC, RP_OP_UC | RP_OP_WRITE_FIRST,
		    RP_OP_UC | RP_OP_WRITE_MIDDLE,
		    RP_OP_UC | RP_OP_WRITE_LAST_IMM,
		    RP_OP_UC | RP_OP_WRITE_ONLY_IMM),
	},
	[IBV_WR_RDMA_READ] = { ONE(RP_TR_RC, RP_OP_READ_REQ) },
	[IBV_WR_ATOMIC_CMP_AND_SWP] = { ONE(RP_TR_RC, RP_OP_CMP_SWAP) },
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = { ONE(RP_TR_RC, RP_OP_FETCH_ADD) },
	[IBV_WR_ATOMIC_WRITE] = { ONE(RP_TR_RC, RP_OP_ATOMIC_WRITE) },
};

int
rp_next_opcode(int wr_opcode, int qp_type, int first, int last)
{
	unsigned int pos = (first ? RP_POS_FIRST : 0) | (last ? RP_POS_LAST : 0);
	unsigned int tr;
	uint16_t e;

	switch (qp_type) {
	case IBV_QPT_RC:
		tr = RP_TR_RC;
		break;
	case IBV_QPT_UC:
		tr = RP_TR_UC;
		break;
	case IBV_QPT_UD:
		tr = RP_TR_UD;
		break;
	default:
		return -1;
	}
	if (wr_opcode < 0 || (unsigned int)wr_opcode >= RTE_DIM(rp_wr_op))
		return -1;
	e = rp_wr_op[wr_opcode][tr][pos];
	return e ? (int)(e & 0xff) : -1;
}
