/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The BTH opcode table: which headers follow the BTH for each opcode, and
 * what the opcode means.  Only the masks are written by hand (rp_opcode.c);
 * header offsets and lengths are derived from them by rp_opcode_init().
 */

#ifndef _RP_OPCODE_H_
#define _RP_OPCODE_H_

#include <stdint.h>

/* IBTA opcodes (transport in the top 3 bits) */
enum rp_op {
	RP_OP_RC = 0x00,
	RP_OP_UC = 0x20,
	RP_OP_RD = 0x40,
	RP_OP_UD = 0x60,
	RP_OP_CNP = 0x80,

	RP_OP_SEND_FIRST = 0x00,
	RP_OP_SEND_MIDDLE = 0x01,
	RP_OP_SEND_LAST = 0x02,
	RP_OP_SEND_LAST_IMM = 0x03,
	RP_OP_SEND_ONLY = 0x04,
	RP_OP_SEND_ONLY_IMM = 0x05,
	RP_OP_WRITE_FIRST = 0x06,
	RP_OP_WRITE_MIDDLE = 0x07,
	RP_OP_WRITE_LAST = 0x08,
	RP_OP_WRITE_LAST_IMM = 0x09,
	RP_OP_WRITE_ONLY = 0x0a,
	RP_OP_WRITE_ONLY_IMM = 0x0b,
	RP_OP_READ_REQ = 0x0c,
	RP_OP_READ_RESP_FIRST = 0x0d,
	RP_OP_READ_RESP_MIDDLE = 0x0e,
	RP_OP_READ_RESP_LAST = 0x0f,
	RP_OP_READ_RESP_ONLY = 0x10,
	RP_OP_ACK = 0x11,
	RP_OP_ATOMIC_ACK = 0x12,
	RP_OP_CMP_SWAP = 0x13,
	RP_OP_FETCH_ADD = 0x14,
	RP_OP_SEND_LAST_INV = 0x16,
	RP_OP_SEND_ONLY_INV = 0x17,
	RP_OP_ATOMIC_WRITE = 0x1d,	/* IBTA 1.5: RETH + 8 bytes */
};

/* Header bits: the order here is the order on the wire after the BTH. */
enum rp_hdr_id {
	RP_HDR_RETH = 0,
	RP_HDR_AETH,
	RP_HDR_ATMETH,
	RP_HDR_ATMACK,
	RP_HDR_DETH,
	RP_HDR_IMMDT,
	RP_HDR_IETH,
	RP_HDR_PAYLOAD,		/* offset of the payload */
	RP_HDR_NUM,
};

/*
 * Wire order (IBTA 9.2): BTH, then RDETH(RD only), DETH, RETH, AtomicETH,
 * AETH, AtomicAckETH, ImmDt, IETH.  rp_opcode_init() places headers in
 * that order; enum rp_hdr_id is only a bit index.
 */
#define RP_M_RETH	(1u << RP_HDR_RETH)
#define RP_M_AETH	(1u << RP_HDR_AETH)
#define RP_M_ATMETH	(1u << RP_HDR_ATMETH)
#define RP_M_ATMACK	(1u << RP_HDR_ATMACK)
#define RP_M_DETH	(1u << RP_HDR_DETH)
#define RP_M_IMMDT	(1u << RP_HDR_IMMDT)
#define RP_M_IETH	(1u << RP_HDR_IETH)
#define RP_M_PAYLOAD	(1u << RP_HDR_PAYLOAD)
/* semantics */
#define RP_M_REQ	(1u << 8)	/* a request: goes to the responder */
#define RP_M_RESP	(1u << 9)	/* ACK, READ response, atomic ACK */
#define RP_M_SEND	(1u << 10)
#define RP_M_WRITE	(1u << 11)
#define RP_M_READ	(1u << 12)	/* READ request or response */
#define RP_M_ATOMIC	(1u << 13)
#define RP_M_FIRST	(1u << 14)
#define RP_M_MIDDLE	(1u << 15)
#define RP_M_LAST	(1u << 16)
#define RP_M_ONLY	(RP_M_FIRST | RP_M_LAST)
/*
 * RWQE: the packet at which the responder takes a receive WQE (SEND FIRST
 * and ONLY, WRITE LAST_IMM and ONLY_IMM); MIDDLE/LAST of a SEND keep using
 * the WQE taken at FIRST.
 * COMP: the packet at which the responder completes that WQE (SEND LAST and
 * ONLY, WRITE LAST_IMM and ONLY_IMM).  A plain WRITE has neither.
 * SE: set exactly where COMP is (IBTA 9.2.3: SE is only meaningful there).
 */
#define RP_M_RWQE	(1u << 17)	/* takes a receive WQE */
#define RP_M_COMP	(1u << 18)	/* completes a receive WQE */
#define RP_M_SE		(1u << 19)	/* SE bit is meaningful */
#define RP_M_RC		(1u << 20)
#define RP_M_UC		(1u << 21)
#define RP_M_UD		(1u << 22)
#define RP_M_INV	(1u << 23)
#define RP_M_CNP	(1u << 24)	/* RoCEv2 CNP: neither REQ nor RESP; drop */
/* ATOMIC WRITE: 8 bytes stored whole, answered like a zero-length READ
 * (RDMA READ response ONLY, no payload), as rxe answers it */
#define RP_M_ATOMIC_WRITE (1u << 25)

struct rp_opcode_info {
	const char *name;	/* NULL: undefined opcode, reject */
	uint32_t mask;
	uint16_t length;	/* BTH + extended headers, bytes */
	uint16_t offset[RP_HDR_NUM];	/* from the start of the BTH; 0 when
					 * the mask lacks that header */
};

#define RP_BTH_SIZE	12u

/* Size on the wire of each extended header. */
extern const uint8_t rp_hdr_size[RP_HDR_NUM];

/* Filled by rp_opcode_init(); read-only afterwards. */
extern struct rp_opcode_info rp_opcode[256];

/* Derive lengths and offsets from the masks.  Idempotent; thread-safe
 * once it has returned (call before any lcore starts).  A constructor in
 * rp_opcode.c already runs it before main(), so calling it is optional. */
void rp_opcode_init(void);

/*
 * The BTH opcode for the next packet of a message.
 * @param wr_opcode   enum ibv_wr_opcode
 * @param qp_type     enum ibv_qp_type (IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD)
 * @param first       true for the first packet of the message
 * @param last        true when the rest of the message fits in this packet
 * @return the opcode, or -1 when the combination is not allowed
 *
 * READ, atomic and ATOMIC WRITE requests are always one packet: any call
 * with first set returns the request opcode (last is ignored: a READ or
 * an atomic has no payload, an ATOMIC WRITE's 8 bytes fit any MTU),
 * first == 0 returns -1.  UD allows SEND and SEND_WITH_IMM only,
 * as a single packet (first and last).  UC has no READ, atomics or
 * SEND_WITH_INV.
 */
int rp_next_opcode(int wr_opcode, int qp_type, int first, int last);

#endif /* _RP_OPCODE_H_ */
