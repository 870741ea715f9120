/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport fuzz target (fuzz_transport.c): its libFuzzer entry
 * points, its input format, and counters for the smoke driver.
 *
 * An input is FZ_HDR_LEN bytes of scenario, then records until the input
 * ends.  The scenario says how the device's objects are set up before the
 * first record; each record is one frame from the wire, a step of the
 * clock, or an action of the application, and after each one the engine
 * makes one pass and the invariants are checked.  test/fuzz/mkcorpus.py
 * writes the same format: change both together.
 */
#ifndef _FUZZ_TRANSPORT_H_
#define _FUZZ_TRANSPORT_H_

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- scenario header */
#define FZ_HDR_LEN	8
/* hdr[0] */
#define FZ_S_SMALL_SCQ	(1u << 0)	/* send CQ of 4 entries: overflows */
#define FZ_S_CONSUME	(1u << 1)	/* the application consumes CQEs */
#define FZ_S_MTU256	(1u << 2)	/* RC requester path MTU 256 */
#define FZ_S_UNSIG	(1u << 3)	/* requester WRs unsignaled */
#define FZ_S_SPSN_WRAP	(1u << 4)	/* requester starts at PSN 0xfffffa */
#define FZ_S_RPSN_WRAP	(1u << 5)	/* responders expect 0xfffffc first */
#define FZ_S_TIMEOUT	(1u << 6)	/* RC timeout 1 (else 14), retries 1 */
/* hdr[1]: WR kinds posted on the RC requester (slot 0), one bit each */
/* hdr[2]: RC requester's state after posting (FZ_STATES[hdr[2] % 8]) */
/* hdr[3]: slot 7's state (FZ_STATES[hdr[3] % 8]) */
/* hdr[4]: receives posted per receive queue (& 15), tags (>> 4) */
/* hdr[5]: WR kinds posted on UC (slot 4) and UD (slot 5) */
/* hdr[6]: max_rd_atomic / max_dest_rd_atomic (& 7, 0: 1) */
/* hdr[7]: min_rnr_timer (& 31), rnr_retry (>> 5) */

/* ---- records: byte 0 */
#define FZ_R_KIND(b)	((b) & 3u)
#define FZ_R_FRAME	0u	/* structured frame: FZ_FRAME_LEN bytes */
#define FZ_R_RAW	1u	/* raw frame: 2-byte length, then the frame */
#define FZ_R_STEP	2u	/* clock step: 1 byte */
#define FZ_R_APP	3u	/* application action: 2 bytes */
#define FZ_R_SLOT(b)	(((b) >> 2) & 7u)	/* target QP slot */
#define FZ_R_BAD_ICRC	(1u << 5)	/* leave the ICRC wrong */
#define FZ_R_FOREIGN	(1u << 6)	/* from a host that is not the peer */
#define FZ_R_RAW_QPN	(1u << 7)	/* frame: dest QPN from the record;
					 * raw: patch in the slot's QPN */

/*
 * Structured frame, after byte 0:
 *  [1]     opcode: low 5 bits; bits 5-7: 0 the slot's transport, else
 *          RC, UC, UD, RD, CNP, XRC, 0xe0 (undefined) for 1..7
 *  [2]     PSN offset (int8) from the slot's expected PSN
 *  [3]     FZ_F_* flags
 *  [4..5]  payload length (le16)
 *  [6]     key: 0..3 MR, 4 stale key, 5 aux32, 6 zero, 7 MR 1 old gen
 *  [7]     reserved
 *  [8..11] VA offset from the MR's start (le32, signed)
 *  [12..15] aux32: RETH length, AETH syndrome | MSN << 8, DETH Q_Key
 *          (0: the slot's), atomic swap/add
 *  [16..19] aux2: ImmDt, DETH source QP, atomic compare, ATMACK orig
 *  [20]    payload bytes taken from the input after the record (the
 *          rest is a pattern)
 *  [21..23] destination QPN (le24) with FZ_R_RAW_QPN
 */
#define FZ_FRAME_LEN	24
#define FZ_F_ACKREQ	(1u << 0)
#define FZ_F_SE		(1u << 1)
#define FZ_F_PSN_INIT	(1u << 2)	/* offset from the initial PSN */
#define FZ_F_PSN_FAR	(1u << 3)	/* offset << 12 */
#define FZ_F_MTU_PAY	(1u << 4)	/* payload = the slot's path MTU */
#define FZ_F_PKEY	(1u << 5)	/* P_Key 0x7ffe: not ours */

/* Application actions: [1] action, [2] argument. */
enum fz_app {
	FZ_A_POST_SEND = 0,	/* WR kind arg & 7 on the slot */
	FZ_A_POST_RECV,		/* (arg & 7) + 1 receives */
	FZ_A_MODIFY,		/* to FZ_STATES[arg % 8] */
	FZ_A_CONSUME,		/* take every CQE */
	FZ_A_DEREG,		/* deregister MR arg & 3: no byte may move */
	FZ_A_TAG_ADD,		/* tag arg on the TM-SRQ */
	FZ_A_TAG_DEL,		/* the tag posted (arg)th */
	FZ_A_DESTROY,		/* destroy the slot's QP */
	FZ_A_MAX,
};

/* Frames for fuzz_transport_smoke's outcome check. */
struct fz_stats {
	unsigned long inputs, records, frames, tx_frames, cqes, cqe_err;
};
extern struct fz_stats fz_stats;

#endif /* _FUZZ_TRANSPORT_H_ */
