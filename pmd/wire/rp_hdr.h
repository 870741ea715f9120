/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * InfiniBand transport headers as RoCEv2 carries them, and two layers of
 * accessors: on a header pointer (rp_bth_psn(hdr)) and on a parsed packet
 * (rp_pkt_reth_rkey(pkt)).  Wire fields are big endian; no bitfields.
 */

#ifndef _RP_HDR_H_
#define _RP_HDR_H_

#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

/* The layers below the BTH, as rp_pkt.c builds and parses them and
 * rp_icrc.c masks them. */
#define RP_ETH_HLEN		14u
#define RP_VLAN_HLEN		4u
#define RP_IPV4_HLEN		20u	/* no options */
#define RP_IPV4_MAX_HLEN	60u
#define RP_IPV6_HLEN		40u
#define RP_UDP_HLEN		8u

#define RP_ROCE_UDP_PORT	4791
#define RP_UDP_SPORT_BASE	0xc000u	/* entropy source ports: 0xc000..0xffff */
#define RP_DEFAULT_PKEY		0xffff
#define RP_ICRC_SIZE		4
#define RP_PSN_MASK		0x00ffffffu
#define RP_QPN_MASK		0x00ffffffu

struct rp_bth {
	uint8_t opcode;
	uint8_t flags;		/* SE:1 M:1 PadCnt:2 TVer:4 */
	rte_be16_t pkey;
	rte_be32_t qpn;		/* FECN:1 BECN:1 Resv6:6 DestQP:24 */
	rte_be32_t apsn;	/* A:1 Resv7:7 PSN:24 */
} __rte_packed;

#define RP_BTH_SE	0x80
#define RP_BTH_MIG	0x40
#define RP_BTH_PAD_SHIFT 4
#define RP_BTH_PAD_MASK	0x30
#define RP_BTH_TVER_MASK 0x0f
#define RP_BTH_ACKREQ	0x80000000u
/* The two reserved bits after AckReq: rocepmd's selective retransmission
 * (pmd/transport/rp_sr.c); IBTA's receivers ignore them, the ICRC covers
 * them.  SR: in a request, "I take selective NAKs"; in a sequence NAK,
 * "selective".  SR_ONE, with SR in a NAK: "this PSN only", no
 * acknowledgement of the PSNs before it; with SR in a request: "a tail
 * probe, NAK every PSN missing before this one". */
#define RP_BTH_SR	0x40000000u
#define RP_BTH_SR_ONE	0x20000000u
/* The next one, NC: "I take frames without an ICRC, and this one may have
 * none" (a memory link between rocepmd ends: port key icrc, guides/
 * architecture "The ICRC on a memory link").  Set by a port that skips
 * its ICRC toward a peer whose frames carry it; such a port does not
 * check the ICRC of a frame that carries it. */
#define RP_BTH_NC	0x10000000u
/* The last four, RG: a resend generation, 1-15 (0: none; rp_sr.c).  In a
 * request of a rocepmd requester with selective retransmission, the
 * number of its single resends so far, taken from 1 to 15 in turn, so
 * that a packet sent after a resend has that resend's or a later one; in
 * a selective NAK, the generation of the newest request the responder
 * had when it sent it. */
#define RP_BTH_RG_SHIFT	24
#define RP_BTH_RG_MASK	0x0f000000u
/* rp_bth_sr()'s bits, RP_SR_RO for RP_BTH_RO and RP_SR_NB for RP_BTH_NB
 * (struct rp_pkt's sr) */
#define RP_SR_ON	2u
#define RP_SR_ONE	1u
#define RP_SR_RO	4u
#define RP_SR_NB	8u
#define RP_BTH_FECN	0x80000000u
#define RP_BTH_BECN	0x40000000u
/* The reserved bit after BECN, RO: in a READ request of a rocepmd
 * requester with selective retransmission, "every request before this one
 * that you may not have is a READ" (rp_sr.c): its responder may answer it
 * past a gap, since a READ changes nothing another READ could see.  In
 * Resv8a, which the ICRC masks as it masks FECN and BECN, and which
 * IBTA's receivers ignore. */
#define RP_BTH_RO	0x20000000u
/* The next one, NB (Resv8a too): in a request of such a requester, "I
 * read NAK maps"; in a selective NAK toward one, "the AETH's MSN field is
 * a map": bit i set, PSN + 1 + i is missing too and asked for alone, as
 * by a NAK with RP_BTH_SR_ONE of its own (rp_sr.c).  A responder folds
 * the NAKs of a pass into as few frames so. */
#define RP_BTH_NB	0x10000000u
#define RP_NAK_MAP_BITS	24u

struct rp_reth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be32_t len;
} __rte_packed;

struct rp_aeth {
	rte_be32_t smsn;	/* Syndrome:8 MSN:24 */
} __rte_packed;

/* AETH syndrome: top 3 bits say ACK / RNR NAK / NAK. */
#define RP_AETH_TYPE_MASK	0xe0
#define RP_AETH_ACK		0x00
#define RP_AETH_RNR_NAK		0x20
#define RP_AETH_NAK		0x60
#define RP_AETH_CREDIT_INVALID	0x1f	/* ACK with no credit count */
#define RP_AETH_NAK_PSN_SEQ	0x60
#define RP_AETH_NAK_INVALID_REQ	0x61
#define RP_AETH_NAK_REM_ACCESS	0x62
#define RP_AETH_NAK_REM_OP	0x63
#define RP_AETH_NAK_INVALID_RD	0x64

struct rp_deth {
	rte_be32_t qkey;
	rte_be32_t sqp;		/* Resv8:8 SrcQP:24 */
} __rte_packed;

struct rp_immdt {
	rte_be32_t imm;
} __rte_packed;

struct rp_ieth {
	rte_be32_t rkey;
} __rte_packed;

struct rp_atmeth {
	rte_be64_t va;
	rte_be32_t rkey;
	rte_be64_t swap_add;
	rte_be64_t comp;
} __rte_packed;

struct rp_atmack {
	rte_be64_t orig;
} __rte_packed;

/* ---- layer 1: accessors on a header pointer */

static inline uint8_t rp_bth_opcode(const void *h)
{ return ((const struct rp_bth *)h)->opcode; }
static inline int rp_bth_se(const void *h)
{ return !!(((const struct rp_bth *)h)->flags & RP_BTH_SE); }
static inline uint8_t rp_bth_pad(const void *h)
{ return (((const struct rp_bth *)h)->flags & RP_BTH_PAD_MASK) >> RP_BTH_PAD_SHIFT; }
static inline uint8_t rp_bth_tver(const void *h)
{ return ((const struct rp_bth *)h)->flags & RP_BTH_TVER_MASK; }
static inline uint16_t rp_bth_pkey(const void *h)
{ return rte_be_to_cpu_16(((const struct rp_bth *)h)->pkey); }
static inline uint32_t rp_bth_qpn(const void *h)
{ return rte_be_to_cpu_32(((const struct rp_bth *)h)->qpn) & RP_QPN_MASK; }
static inline uint32_t rp_bth_psn(const void *h)
{ return rte_be_to_cpu_32(((const struct rp_bth *)h)->apsn) & RP_PSN_MASK; }
static inline int rp_bth_ackreq(const void *h)
{ return !!(rte_be_to_cpu_32(((const struct rp_bth *)h)->apsn) & RP_BTH_ACKREQ); }
static inline uint8_t rp_bth_sr(const void *h)
{ return (rte_be_to_cpu_32(((const struct rp_bth *)h)->apsn) >> 29) & 3u; }
static inline void rp_bth_set_sr(void *h, uint8_t sr)
{ ((struct rp_bth *)h)->apsn |= rte_cpu_to_be_32((uint32_t)(sr & 3u) << 29); }
static inline uint8_t rp_bth_ro(const void *h)
{ return (rte_be_to_cpu_32(((const struct rp_bth *)h)->qpn) & RP_BTH_RO) ? RP_SR_RO : 0; }
static inline void rp_bth_set_ro(void *h)
{ ((struct rp_bth *)h)->qpn |= rte_cpu_to_be_32(RP_BTH_RO); }
static inline uint8_t rp_bth_nb(const void *h)
{ return (rte_be_to_cpu_32(((const struct rp_bth *)h)->qpn) & RP_BTH_NB) ? RP_SR_NB : 0; }
static inline void rp_bth_set_nb(void *h)
{ ((struct rp_bth *)h)->qpn |= rte_cpu_to_be_32(RP_BTH_NB); }
static inline uint8_t rp_bth_rg(const void *h)
{ return (rte_be_to_cpu_32(((const struct rp_bth *)h)->apsn) & RP_BTH_RG_MASK) >> RP_BTH_RG_SHIFT; }
static inline void rp_bth_set_rg(void *h, uint8_t rg)
{ ((struct rp_bth *)h)->apsn |= rte_cpu_to_be_32(((uint32_t)rg << RP_BTH_RG_SHIFT) & RP_BTH_RG_MASK); }
static inline int rp_bth_nc(const void *h)
{ return !!(rte_be_to_cpu_32(((const struct rp_bth *)h)->apsn) & RP_BTH_NC); }
static inline void rp_bth_set_nc(void *h)
{ ((struct rp_bth *)h)->apsn |= rte_cpu_to_be_32(RP_BTH_NC); }
static inline void rp_bth_set_ackreq(void *h)
{ ((struct rp_bth *)h)->apsn |= rte_cpu_to_be_32(RP_BTH_ACKREQ); }

static inline void
rp_bth_set(void *h, uint8_t opcode, int se, uint8_t pad, uint16_t pkey,
	   uint32_t qpn, int ackreq, uint32_t psn)
{
	struct rp_bth *b = h;

	b->opcode = opcode;
	b->flags = (se ? RP_BTH_SE : 0) | (uint8_t)((pad & 3) << RP_BTH_PAD_SHIFT);
	b->pkey = rte_cpu_to_be_16(pkey);
	b->qpn = rte_cpu_to_be_32(qpn & RP_QPN_MASK);
	b->apsn = rte_cpu_to_be_32((ackreq ? RP_BTH_ACKREQ : 0) | (psn & RP_PSN_MASK));
}

static inline uint64_t rp_reth_va(const void *h)
{ return rte_be_to_cpu_64(((const struct rp_reth *)h)->va); }
static inline uint32_t rp_reth_rkey(const void *h)
{ return rte_be_to_cpu_32(((const struct rp_reth *)h)->rkey); }
static inline uint32_t rp_reth_len(const void *h)
{ return rte_be_to_cpu_32(((const struct rp_reth *)h)->len); }
static inline void
rp_reth_set(void *h, uint64_t va, uint32_t rkey, uint32_t len)
{
	struct rp_reth *r = h;

	r->va = rte_cpu_to_be_64(va);
	r->rkey = rte_cpu_to_be_32(rkey);
	r->len = rte_cpu_to_be_32(len);
}

static inline uint8_t rp_aeth_syn(const void *h)
{ return rte_be_to_cpu_32(((const struct rp_aeth *)h)->smsn) >> 24; }
static inline uint32_t rp_aeth_msn(const void *h)
{ return rte_be_to_cpu_32(((const struct rp_aeth *)h)->smsn) & 0xffffffu; }
/*
 * An ACK's credit count (IBTA 9.7.7.2, the AETH's 5-bit code): receive
 * WQEs, in steps that grow by half; code 31 is "no count".
 */
static const uint16_t rp_aeth_credit_table[RP_AETH_CREDIT_INVALID] = {
	0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
	384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
	16384, 24576, 32768,
};

/* 0 for code 31 ("no count"), which the caller tells apart first. */
static inline uint32_t
rp_aeth_credits(uint8_t code)
{
	code &= RP_AETH_CREDIT_INVALID;
	return code < RP_AETH_CREDIT_INVALID ? rp_aeth_credit_table[code] : 0;
}

/* The largest code whose count is at most n. */
static inline uint8_t
rp_aeth_credit_code(uint32_t n)
{
	uint8_t lo = 0, hi = RP_AETH_CREDIT_INVALID - 1;

	while (lo < hi) {
		uint8_t mid = (uint8_t)((lo + hi + 1) / 2);

		if (rp_aeth_credit_table[mid] <= n)
			lo = mid;
		else
			hi = (uint8_t)(mid - 1);
	}
	return lo;
}

static inline void
rp_aeth_set(void *h, uint8_t syn, uint32_t msn)
{
	((struct rp_aeth *)h)->smsn =
		rte_cpu_to_be_32(((uint32_t)syn << 24) | (msn & 0xffffffu));
}

static inline uint32_t rp_deth_qkey(const void *h)
{ return rte_be_to_cpu_32(((const struct rp_deth *)h)->qkey); }
static inline uint32_t rp_deth_sqp(const void *h)
{ return rte_be_to_cpu_32(((const struct rp_deth *)h)->sqp) & RP_QPN_MASK; }
static inline void
rp_deth_set(void *h, uint32_t qkey, uint32_t sqp)
{
	((struct rp_deth *)h)->qkey = rte_cpu_to_be_32(qkey);
	((struct rp_deth *)h)->sqp = rte_cpu_to_be_32(sqp & RP_QPN_MASK);
}

/* Immediate data stays in network order end to end, as verbs wants it. */
static inline uint32_t rp_immdt_imm(const void *h)
{ uint32_t v; memcpy(&v, h, 4); return v; }
static inline void rp_immdt_set(void *h, uint32_t imm_be)
{ memcpy(h, &imm_be, 4); }

static inline uint32_t rp_ieth_rkey(const void *h)
{ return rte_be_to_cpu_32(((const struct rp_ieth *)h)->rkey); }
static inline void rp_ieth_set(void *h, uint32_t rkey)
{ ((struct rp_ieth *)h)->rkey = rte_cpu_to_be_32(rkey); }

static inline uint64_t rp_atmeth_va(const void *h)
{ return rte_be_to_cpu_64(((const struct rp_atmeth *)h)->va); }
static inline uint32_t rp_atmeth_rkey(const void *h)
{ return rte_be_to_cpu_32(((const struct rp_atmeth *)h)->rkey); }
static inline uint64_t rp_atmeth_swap_add(const void *h)
{ return rte_be_to_cpu_64(((const struct rp_atmeth *)h)->swap_add); }
static inline uint64_t rp_atmeth_comp(const void *h)
{ return rte_be_to_cpu_64(((const struct rp_atmeth *)h)->comp); }

static inline void
rp_atmeth_set(void *h, uint64_t va, uint32_t rkey, uint64_t swap_add,
	      uint64_t comp)
{
	struct rp_atmeth *a = h;

	a->va = rte_cpu_to_be_64(va);
	a->rkey = rte_cpu_to_be_32(rkey);
	a->swap_add = rte_cpu_to_be_64(swap_add);
	a->comp = rte_cpu_to_be_64(comp);
}

static inline uint64_t rp_atmack_orig(const void *h)
{ return rte_be_to_cpu_64(((const struct rp_atmack *)h)->orig); }
static inline void rp_atmack_set(void *h, uint64_t orig)
{ ((struct rp_atmack *)h)->orig = rte_cpu_to_be_64(orig); }

#endif /* _RP_HDR_H_ */
