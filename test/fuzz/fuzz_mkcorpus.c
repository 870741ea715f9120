/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes the transport fuzzer's seed corpus (test/fuzz/corpus/
 * fuzz_transport, format in fuzz_transport.h):
 *
 *   fuzz_mkcorpus OUT_DIR PREFIX PCAP_DIR     one input per capture
 *   fuzz_mkcorpus OUT_DIR --synthetic         the hand-made exchanges
 *   fuzz_mkcorpus OUT_DIR --frames PCAP_DIR   frames as they are, for
 *                                             the parser (corpus/fuzz_pkt)
 *
 * A capture becomes the frames a peer would send: each RoCE frame is
 * turned into a structured record for the QP of the device it fits
 * (requests to the RC responder, responses to the RC requester, UC, UD,
 * or the GSI QP for QPN 1), its PSN counted from the capture's first of
 * its kind, its headers' fields kept, keys pointed at MR 1 and the first
 * 64 payload bytes (MAD and TM headers) copied.  PCAP_DIR is the rxe
 * captures (test/data/rxe) or the engine's own traffic, as the fuzz
 * target records it (RP_FUZZ_TX_PCAP).  The synthetic inputs are the
 * exchanges a correct peer has with each QP (ACKs, READ responses,
 * atomics, NAKs, multi-packet SEND and WRITE, TM eager and rendezvous,
 * MADs) and the states and timers around them.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/tm_types.h>

#include "rp_pkt.h"
#include "tp_util.h"

#include "fuzz_transport.h"

#define MK_MAX		4096u
#define MK_RECORDS	48u	/* frames per input */
#define MK_FILES	8u	/* inputs per capture */
#define MK_LIT		64u

enum { S_REQ = 0, S_RESP, S_SRQ, S_TM, S_UC, S_UD, S_GSI, S_ANY };

struct mk {
	uint8_t buf[MK_MAX];
	uint32_t len;
};

static const char *out_dir;

static void
mk_start(struct mk *m, const uint8_t hdr[FZ_HDR_LEN])
{
	memcpy(m->buf, hdr, FZ_HDR_LEN);
	m->len = FZ_HDR_LEN;
}

static void
put_le(uint8_t *p, uint32_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A structured frame record; `lit` bytes of payload follow it. */
struct mk_frame {
	unsigned int slot;
	uint8_t rflags;		/* FZ_R_* of byte 0 */
	uint8_t op;		/* low 5 bits, transport bits 5-7 */
	int8_t psn;
	uint8_t flags;		/* FZ_F_* */
	uint16_t paylen;
	uint8_t key;
	int32_t va;
	uint32_t aux32, aux2;
	const uint8_t *lit;
	uint8_t nlit;
	uint32_t qpn;
};

static void
mk_frame(struct mk *m, const struct mk_frame *f)
{
	uint8_t *r = m->buf + m->len;

	if (m->len + FZ_FRAME_LEN + f->nlit > MK_MAX)
		return;
	memset(r, 0, FZ_FRAME_LEN);
	r[0] = (uint8_t)(FZ_R_FRAME | f->slot << 2 | f->rflags);
	r[1] = f->op;
	r[2] = (uint8_t)f->psn;
	r[3] = f->flags;
	put_le(r + 4, f->paylen, 2);
	r[6] = f->key;
	put_le(r + 8, (uint32_t)f->va, 4);
	put_le(r + 12, f->aux32, 4);
	put_le(r + 16, f->aux2, 4);
	r[20] = f->nlit;
	put_le(r + 21, f->qpn, 3);
	memcpy(r + FZ_FRAME_LEN, f->lit, f->nlit);
	m->len += FZ_FRAME_LEN + f->nlit;
}

static void
mk_step(struct mk *m, uint8_t shift, uint8_t polls)
{
	m->buf[m->len++] = FZ_R_STEP;
	m->buf[m->len++] = (uint8_t)(shift | polls << 6);
}

static void
mk_app(struct mk *m, unsigned int slot, uint8_t action, uint8_t arg)
{
	m->buf[m->len++] = (uint8_t)(FZ_R_APP | slot << 2);
	m->buf[m->len++] = action;
	m->buf[m->len++] = arg;
}

static int
mk_write(const struct mk *m, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", out_dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(m->buf, 1, m->len, f) != m->len) {
		fprintf(stderr, "fuzz_mkcorpus: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------ captures */

/* Which slot takes a parsed frame, as a peer's. */
static unsigned int
pcap_slot(const struct rp_pkt *p)
{
	if (p->mask & RP_M_UD)
		return p->qpn == 1 ? S_GSI : S_UD;
	if (p->mask & RP_M_UC)
		return S_UC;
	return (p->mask & RP_M_REQ) ? S_RESP : S_REQ;
}

/* One input per MK_RECORDS frames of a capture (MK_FILES at most). */
static int
mk_pcap(const char *dir, const char *name, const char *prefix)
{
	/* consume CQEs; requester SEND, WRITE, READ, atomics; 8 receives
	 * and 4 tags; UC and UD sends; 4 READs; RNR retry 7 */
	static const uint8_t hdr[FZ_HDR_LEN] = {
		FZ_S_CONSUME, 0x75, 0, 0, 0x48, 0x11, 4, 0xe1,
	};
	struct tp_frame *fr;
	uint32_t first[2] = { 0, 0 };
	bool have[2] = { false, false };
	unsigned int nrec = 0, nfile = 0;
	char out[512], *dot;
	struct mk m;
	int n, ret = 0;

	n = tp_load(dir, name, &fr);
	if (n < 0)
		return -1;
	snprintf(out, sizeof(out), "%s-%s", prefix, name);
	dot = strrchr(out, '.');
	if (dot != NULL)
		*dot = '\0';
	mk_start(&m, hdr);
	for (int i = 0; i < n && nfile < MK_FILES; i++) {
		struct mk_frame f = { 0 };
		struct rp_pkt p;
		unsigned int req;
		int32_t off;

		if (rp_pkt_parse(fr[i].data, fr[i].len, false, &p) != 0 ||
		    (p.mask & RP_M_CNP))
			continue;
		req = (p.mask & RP_M_REQ) != 0;
		if (!have[req]) {
			first[req] = p.psn;
			have[req] = true;
		}
		off = (int32_t)((p.psn - first[req]) << 8) >> 8;
		f.slot = pcap_slot(&p);
		f.op = p.opcode & 0x1f;
		f.flags = FZ_F_PSN_INIT | (p.ackreq ? FZ_F_ACKREQ : 0) |
			(p.se ? FZ_F_SE : 0);
		if (off > 127 || off < -128) {
			f.flags |= FZ_F_PSN_FAR;
			off /= 4096;
		}
		f.psn = (int8_t)(off > 127 ? 127 : off < -128 ? -128 : off);
		f.paylen = (uint16_t)RTE_MIN(p.paylen, 4096u);
		f.key = 1;
		if (p.mask & RP_M_RETH) {
			f.va = (int32_t)(rp_pkt_reth_va(&p) & 0xfff);
			f.aux32 = rp_pkt_reth_len(&p);
		}
		if (p.mask & RP_M_AETH)
			f.aux32 = rp_pkt_aeth_syn(&p) |
				rp_pkt_aeth_msn(&p) << 8;
		if (p.mask & RP_M_ATMETH) {
			f.va = (int32_t)(rp_pkt_atmeth_va(&p) & 0xff8);
			f.aux32 = (uint32_t)rp_pkt_atmeth_swap_add(&p);
			f.aux2 = (uint32_t)rp_pkt_atmeth_comp(&p);
		}
		if (p.mask & RP_M_ATMACK)
			f.aux2 = (uint32_t)rp_pkt_atmack_orig(&p);
		if (p.mask & RP_M_IMMDT)
			f.aux2 = rp_pkt_imm(&p);
		f.lit = rp_pkt_payload(&p);
		f.nlit = (uint8_t)RTE_MIN(p.paylen, MK_LIT);
		mk_frame(&m, &f);
		if (++nrec == MK_RECORDS) {
			char part[540];

			snprintf(part, sizeof(part), "%s-%u", out, nfile++);
			ret |= mk_write(&m, part);
			mk_start(&m, hdr);
			nrec = 0;
		}
	}
	tp_frames_free(fr, n);
	if (nrec != 0 && nfile == 0)
		ret |= mk_write(&m, out);
	return ret;
}

/* ----------------------------------------------------------- synthetic */

#define SYN(name, ...) \
	static const uint8_t name[FZ_HDR_LEN] = { __VA_ARGS__ }

/* AETH syndromes */
#define ACK	0x1f
#define RNR(t)	(0x20 | (t))
#define NAK_SEQ	0x60
#define NAK_INV	0x61
#define NAK_ACC	0x62
#define NAK_OP	0x63

static void
fr(struct mk *m, unsigned int slot, uint8_t op, int8_t psn, uint8_t flags,
   uint16_t paylen, uint8_t key, int32_t va, uint32_t aux32, uint32_t aux2)
{
	struct mk_frame f = {
		.slot = slot, .op = op, .psn = psn, .flags = flags,
		.paylen = paylen, .key = key, .va = va, .aux32 = aux32,
		.aux2 = aux2,
	};

	mk_frame(m, &f);
}

static void
fr_lit(struct mk *m, unsigned int slot, uint8_t op, uint16_t paylen,
       const void *lit, uint8_t nlit, uint32_t aux32)
{
	struct mk_frame f = {
		.slot = slot, .op = op, .paylen = paylen, .key = 1,
		.aux32 = aux32, .lit = lit, .nlit = nlit,
	};

	mk_frame(m, &f);
}

static void
tmh(uint8_t *b, uint8_t op, uint64_t tag, uint64_t va, uint32_t rkey,
    uint32_t len)
{
	memset(b, 0, 32);
	b[0] = op;
	for (int i = 0; i < 8; i++) {
		b[8 + i] = (uint8_t)(tag >> (56 - 8 * i));
		b[16 + i] = (uint8_t)(va >> (56 - 8 * i));
	}
	for (int i = 0; i < 4; i++) {
		b[24 + i] = (uint8_t)(rkey >> (24 - 8 * i));
		b[28 + i] = (uint8_t)(len >> (24 - 8 * i));
	}
}

static int
mk_synthetic(void)
{
	/* hdr: flags, RC WRs, RC state, slot 7 state, recvs|tags << 4,
	 * UC|UD WRs, rd_atomic, rnr */
	SYN(h_all, FZ_S_CONSUME, 0xff, 0, 0, 0x48, 0x33, 4, 0xe1);
	SYN(h_send, FZ_S_CONSUME, 0x01, 0, 0, 0x48, 0x11, 4, 0xe1);
	SYN(h_read, FZ_S_CONSUME, 0x10, 0, 0, 0x48, 0x00, 4, 0xe1);
	SYN(h_atomic, FZ_S_CONSUME, 0x60, 0, 0, 0x48, 0x00, 4, 0xe1);
	SYN(h_wrap, FZ_S_CONSUME | FZ_S_SPSN_WRAP | FZ_S_RPSN_WRAP |
	    FZ_S_MTU256, 0x15, 0, 0, 0x48, 0x00, 2, 0xe1);
	SYN(h_small, FZ_S_SMALL_SCQ, 0xff, 0, 0, 0x28, 0x00, 1, 0x01);
	SYN(h_timer, FZ_S_CONSUME | FZ_S_TIMEOUT, 0x05, 0, 0, 0x48, 0x00, 4,
	    0x21);
	SYN(h_resp, FZ_S_CONSUME, 0x00, 0, 0, 0x8f, 0x00, 4, 0xe1);
	SYN(h_states, FZ_S_CONSUME, 0x11, 3, 2, 0x48, 0x11, 4, 0xe1);
	SYN(h_err, FZ_S_CONSUME, 0x11, 4, 4, 0x48, 0x11, 4, 0xe1);
	uint8_t b[64];
	struct mk m;
	int ret = 0;

	/* requester: SEND of 1500 (2 packets) ACKed, then coalesced ACKs */
	mk_start(&m, h_send);
	fr(&m, S_REQ, RP_OP_ACK, 0, 0, 0, 0, 0, ACK | 0 << 8, 0);
	fr(&m, S_REQ, RP_OP_ACK, 1, FZ_F_PSN_INIT, 0, 0, 0, ACK | 1 << 8, 0);
	ret |= mk_write(&m, "syn-rc-send-ack");

	/* requester: READ of 2500 at MTU 1024: FIRST, MIDDLE, LAST */
	mk_start(&m, h_read);
	fr(&m, S_REQ, RP_OP_READ_RESP_FIRST, 0, FZ_F_MTU_PAY, 0, 0, 0,
	   ACK | 1 << 8, 0);
	fr(&m, S_REQ, RP_OP_READ_RESP_MIDDLE, 0, FZ_F_MTU_PAY, 0, 0, 0, 0, 0);
	fr(&m, S_REQ, RP_OP_READ_RESP_LAST, 0, 0, 452, 0, 0, ACK | 1 << 8, 0);
	ret |= mk_write(&m, "syn-rc-read-resp");

	/* requester: READ response lost in the middle, then resumed */
	mk_start(&m, h_read);
	fr(&m, S_REQ, RP_OP_READ_RESP_FIRST, 0, FZ_F_MTU_PAY, 0, 0, 0,
	   ACK | 1 << 8, 0);
	fr(&m, S_REQ, RP_OP_READ_RESP_LAST, 1, 0, 452, 0, 0, ACK | 1 << 8, 0);
	mk_step(&m, 30, 1);
	fr(&m, S_REQ, RP_OP_READ_RESP_MIDDLE, 0, FZ_F_MTU_PAY, 0, 0, 0, 0, 0);
	fr(&m, S_REQ, RP_OP_READ_RESP_LAST, 0, 0, 452, 0, 0, ACK | 1 << 8, 0);
	ret |= mk_write(&m, "syn-rc-read-resume");

	/* requester: both atomics */
	mk_start(&m, h_atomic);
	fr(&m, S_REQ, RP_OP_ATOMIC_ACK, 0, 0, 0, 0, 0, ACK | 1 << 8, 5);
	fr(&m, S_REQ, RP_OP_ATOMIC_ACK, 0, 0, 0, 0, 0, ACK | 2 << 8, 9);
	ret |= mk_write(&m, "syn-rc-atomic-ack");

	/* requester, everything outstanding: each NAK in turn */
	mk_start(&m, h_all);
	fr(&m, S_REQ, RP_OP_ACK, 0, 0, 0, 0, 0, NAK_SEQ, 0);
	fr(&m, S_REQ, RP_OP_ACK, 1, 0, 0, 0, 0, RNR(3), 0);
	mk_step(&m, 24, 2);
	fr(&m, S_REQ, RP_OP_ACK, 2, 0, 0, 0, 0, ACK | 2 << 8, 0);
	fr(&m, S_REQ, RP_OP_ACK, 0, 0, 0, 0, 0, NAK_INV | 3 << 8, 0);
	fr(&m, S_REQ, RP_OP_ACK, 0, 0, 0, 0, 0, NAK_ACC | 3 << 8, 0);
	fr(&m, S_REQ, RP_OP_ACK, 0, 0, 0, 0, 0, NAK_OP | 3 << 8, 0);
	ret |= mk_write(&m, "syn-rc-naks");

	/* requester: PSNs across the wrap, MTU 256 */
	mk_start(&m, h_wrap);
	for (int i = 0; i < 12; i++)
		fr(&m, S_REQ, RP_OP_ACK, (int8_t)i, FZ_F_PSN_INIT, 0, 0, 0,
		   ACK | (uint32_t)i << 8, 0);
	fr(&m, S_RESP, RP_OP_SEND_FIRST, 0, FZ_F_MTU_PAY, 0, 0, 0, 0, 0);
	fr(&m, S_RESP, RP_OP_SEND_MIDDLE, 0, FZ_F_MTU_PAY, 0, 0, 0, 0, 0);
	fr(&m, S_RESP, RP_OP_SEND_MIDDLE, 0, FZ_F_MTU_PAY, 0, 0, 0, 0, 0);
	fr(&m, S_RESP, RP_OP_SEND_LAST, 0, 0, 100, 0, 0, 0, 0);
	ret |= mk_write(&m, "syn-rc-psn-wrap");

	/* a CQ of 4 and 8 WRs: every ACK overflows it */
	mk_start(&m, h_small);
	for (int i = 0; i < 8; i++)
		fr(&m, S_REQ, RP_OP_ACK, 0, 0, 0, 0, 0, ACK | (uint32_t)i << 8,
		   0);
	mk_app(&m, S_REQ, FZ_A_CONSUME, 0);
	mk_app(&m, S_REQ, FZ_A_POST_SEND, 0);
	ret |= mk_write(&m, "syn-cq-overflow");

	/* timers: retransmit, retry exhausted, RNR wait then resume */
	mk_start(&m, h_timer);
	mk_step(&m, 26, 1);
	mk_step(&m, 30, 1);
	fr(&m, S_REQ, RP_OP_ACK, 0, 0, 0, 0, 0, RNR(1), 0);
	mk_step(&m, 20, 1);
	mk_step(&m, 34, 2);
	ret |= mk_write(&m, "syn-rc-timers");

	/* responder: SEND only, multi-packet, WRITEs, READs, atomics */
	mk_start(&m, h_resp);
	fr(&m, S_RESP, RP_OP_SEND_ONLY, 0, FZ_F_ACKREQ, 100, 0, 0, 0, 0);
	fr(&m, S_RESP, RP_OP_SEND_FIRST, 0, FZ_F_MTU_PAY, 0, 0, 0, 0, 0);
	fr(&m, S_RESP, RP_OP_SEND_LAST_IMM, 0, FZ_F_ACKREQ, 500, 0, 0, 0, 7);
	fr(&m, S_RESP, RP_OP_WRITE_ONLY, 0, FZ_F_ACKREQ, 64, 1, 128, 64, 0);
	fr(&m, S_RESP, RP_OP_WRITE_FIRST, 0, FZ_F_MTU_PAY, 0, 1, 0, 2100, 0);
	fr(&m, S_RESP, RP_OP_WRITE_MIDDLE, 0, FZ_F_MTU_PAY, 0, 0, 0, 0, 0);
	fr(&m, S_RESP, RP_OP_WRITE_LAST_IMM, 0, FZ_F_ACKREQ, 52, 0, 0, 0, 9);
	fr(&m, S_RESP, RP_OP_READ_REQ, 0, 0, 0, 1, 0, 3000, 0);
	fr(&m, S_RESP, RP_OP_READ_REQ, 3, 0, 0, 2, 64, 64, 0);
	fr(&m, S_RESP, RP_OP_CMP_SWAP, 4, 0, 0, 1, 8, 1, 0x0d0c0b0a);
	fr(&m, S_RESP, RP_OP_FETCH_ADD, 5, 0, 0, 1, 16, 3, 0);
	fr(&m, S_RESP, RP_OP_SEND_ONLY_INV, 6, FZ_F_ACKREQ, 16, 1, 0, 0, 0);
	ret |= mk_write(&m, "syn-rc-responder");

	/* responder: refused keys, PD, range, access; duplicates, gaps */
	mk_start(&m, h_resp);
	fr(&m, S_RESP, RP_OP_WRITE_ONLY, 0, 0, 64, 2, 0, 64, 0);
	fr(&m, S_RESP, RP_OP_WRITE_ONLY, 0, 0, 64, 3, 0, 64, 0);
	fr(&m, S_RESP, RP_OP_WRITE_ONLY, 0, 0, 64, 4, 0, 64, 0);
	fr(&m, S_RESP, RP_OP_WRITE_ONLY, 0, 0, 64, 7, 0, 64, 0);
	fr(&m, S_RESP, RP_OP_WRITE_ONLY, 0, 0, 64, 1, 8160, 64, 0);
	fr(&m, S_RESP, RP_OP_READ_REQ, 0, 0, 0, 1, -16, 64, 0);
	fr(&m, S_RESP, RP_OP_SEND_ONLY, 0, 0, 100, 0, 0, 0, 0);
	fr(&m, S_RESP, RP_OP_SEND_ONLY, -1, 0, 100, 0, 0, 0, 0);
	fr(&m, S_RESP, RP_OP_SEND_ONLY, 2, 0, 100, 0, 0, 0, 0);
	fr(&m, S_RESP, RP_OP_READ_REQ, -1, 0, 0, 1, 0, 64, 0);
	ret |= mk_write(&m, "syn-rc-responder-refused");

	/* responder: the MR goes between the packets of a WRITE */
	mk_start(&m, h_resp);
	fr(&m, S_RESP, RP_OP_WRITE_FIRST, 0, FZ_F_MTU_PAY, 0, 1, 0, 3000, 0);
	mk_app(&m, S_RESP, FZ_A_DEREG, 1);
	fr(&m, S_RESP, RP_OP_WRITE_MIDDLE, 0, FZ_F_MTU_PAY, 0, 0, 0, 0, 0);
	fr(&m, S_RESP, RP_OP_WRITE_LAST, 0, 0, 952, 0, 0, 0, 0);
	ret |= mk_write(&m, "syn-rc-write-dereg");

	/* SRQ, TM-SRQ: eager to a listed tag, unexpected, rendezvous */
	mk_start(&m, h_resp);
	fr(&m, S_SRQ, RP_OP_SEND_ONLY, 0, 0, 200, 0, 0, 0, 0);
	tmh(b, IBV_TMH_EAGER, 0x100, 0, 0, 0);
	fr_lit(&m, S_TM, RP_OP_SEND_ONLY, 300, b, 16, 0);
	tmh(b, IBV_TMH_EAGER, 0x999, 0, 0, 0);
	fr_lit(&m, S_TM, RP_OP_SEND_ONLY, 64, b, 16, 0);
	tmh(b, IBV_TMH_RNDV, 0x101, 0x1000, 0x99, 800);
	fr_lit(&m, S_TM, RP_OP_SEND_ONLY, 32, b, 32, 0);
	fr(&m, S_TM, RP_OP_READ_RESP_ONLY, 0, 0, 800, 0, 0, ACK | 1 << 8, 0);
	tmh(b, IBV_TMH_NO_TAG, 0, 0, 0, 0);
	fr_lit(&m, S_TM, RP_OP_SEND_ONLY, 40, b, 16, 0);
	mk_app(&m, S_TM, FZ_A_TAG_DEL, 2);
	mk_app(&m, S_TM, FZ_A_TAG_ADD, 7);
	ret |= mk_write(&m, "syn-srq-tm");

	/* UC and UD, the GSI QP (a CM REQ MAD), a Q_Key refused */
	mk_start(&m, h_resp);
	fr(&m, S_UC, RP_OP_SEND_FIRST, 0, FZ_F_MTU_PAY, 0, 0, 0, 0, 0);
	fr(&m, S_UC, RP_OP_SEND_LAST, 0, 0, 20, 0, 0, 0, 0);
	fr(&m, S_UC, RP_OP_WRITE_ONLY, 0, 0, 64, 1, 0, 64, 0);
	fr(&m, S_UD, RP_OP_SEND_ONLY, 0, 0, 256, 0, 0, 0, 0);
	fr(&m, S_UD, RP_OP_SEND_ONLY_IMM, 0, 0, 4000, 0, 0, 0, 3);
	fr(&m, S_UD, RP_OP_SEND_ONLY, 0, 0, 16, 0, 0, 0x22222222, 0);
	memset(b, 0, sizeof(b));
	b[0] = 1;		/* base version */
	b[1] = 0x07;		/* CM */
	b[2] = 2;		/* class version */
	b[3] = 0x03;		/* Send */
	b[16] = 0x00;
	b[17] = 0x10;		/* REQ */
	fr_lit(&m, S_GSI, RP_OP_SEND_ONLY, 256, b, 24, 0);
	ret |= mk_write(&m, "syn-uc-ud-gsi");

	/* QPs in SQD, RTR and ERR, and frames to them */
	mk_start(&m, h_states);
	fr(&m, S_REQ, RP_OP_ACK, 0, 0, 0, 0, 0, ACK | 1 << 8, 0);
	fr(&m, S_ANY, RP_OP_SEND_ONLY, 0, 0, 64, 0, 0, 0, 0);
	fr(&m, S_ANY, RP_OP_ACK, 0, 0, 0, 0, 0, ACK | 1 << 8, 0);
	mk_app(&m, S_REQ, FZ_A_MODIFY, 0);
	mk_app(&m, S_ANY, FZ_A_MODIFY, 1);
	fr(&m, S_ANY, RP_OP_READ_REQ, 0, 0, 0, 1, 0, 64, 0);
	ret |= mk_write(&m, "syn-qp-states");

	mk_start(&m, h_err);
	fr(&m, S_REQ, RP_OP_ACK, 0, 0, 0, 0, 0, ACK | 1 << 8, 0);
	fr(&m, S_ANY, RP_OP_SEND_ONLY, 0, 0, 64, 0, 0, 0, 0);
	mk_app(&m, S_RESP, FZ_A_DESTROY, 0);
	fr(&m, S_RESP, RP_OP_SEND_ONLY, 0, 0, 64, 0, 0, 0, 0);
	ret |= mk_write(&m, "syn-qp-error");

	/* a forged ACK and request from a host that is not the peer */
	mk_start(&m, h_all);
	{
		struct mk_frame f = {
			.slot = S_REQ, .rflags = FZ_R_FOREIGN, .op = RP_OP_ACK,
			.aux32 = ACK | 5 << 8,
		};

		mk_frame(&m, &f);
		f.aux32 = NAK_ACC;
		mk_frame(&m, &f);
		f.slot = S_RESP;
		f.op = RP_OP_SEND_ONLY;
		f.paylen = 64;
		mk_frame(&m, &f);
	}
	ret |= mk_write(&m, "syn-foreign-source");
	return ret;
}

/* The first frame of each opcode of a capture, as it is. */
static int
mk_frames(const char *dir, const char *name)
{
	bool seen[256] = { false };
	struct tp_frame *fr;
	int n, ret = 0;

	n = tp_load(dir, name, &fr);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		struct rp_pkt p;
		char out[512];
		struct mk m;

		if (rp_pkt_parse(fr[i].data, fr[i].len, true, &p) != 0 ||
		    seen[p.opcode] || fr[i].len > MK_MAX)
			continue;
		seen[p.opcode] = true;
		memcpy(m.buf, fr[i].data, fr[i].len);
		m.len = fr[i].len;
		snprintf(out, sizeof(out), "rxe-%.*s-%02x",
			 (int)(strlen(name) - 5), name, p.opcode);
		ret |= mk_write(&m, out);
	}
	tp_frames_free(fr, n);
	return ret;
}

int
main(int argc, char **argv)
{
	bool frames = argc == 4 && strcmp(argv[2], "--frames") == 0;
	char **names;
	int n, ret = 0;

	if (argc == 3 && strcmp(argv[2], "--synthetic") == 0) {
		out_dir = argv[1];
		return mk_synthetic() == 0 ? 0 : 1;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: fuzz_mkcorpus OUT_DIR PREFIX PCAP_DIR\n"
			"       fuzz_mkcorpus OUT_DIR --synthetic\n"
			"       fuzz_mkcorpus OUT_DIR --frames PCAP_DIR\n");
		return 2;
	}
	out_dir = argv[1];
	n = tp_list(argv[3], ".pcap", &names);
	for (int i = 0; i < n; i++)
		if ((frames ? mk_frames(argv[3], names[i]) :
		     mk_pcap(argv[3], names[i], argv[2])) < 0)
			ret = 1;
	tp_list_free(names, n);
	return n > 0 ? ret : 1;
}
