/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 frame parser and header builder on flat buffers.  The parser
 * bounds every read by the length it has already validated, so it is safe
 * on arbitrary input (test/fuzz/fuzz_pkt.c).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "rp_hdr.h"
#include "rp_icrc.h"
#include "rp_opcode.h"
#include "rp_pkt.h"
#include "rocepmd.h"

#define RP_IPV4_DF	0x4000u
#define RP_IPV4_MF_OFF	0x3fffu	/* MF flag and fragment offset */

static inline uint16_t
rp_rd16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static const uint8_t rp_v4_mapped[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

/* What the IP layer tells the UDP layer. */
struct rp_l3 {
	uint32_t l4;		/* UDP header offset */
	uint32_t l4len;		/* UDP datagram length claimed by IP */
	uint32_t l3len;		/* IP header + UDP datagram claimed by IP */
};

static int
rp_pkt_parse_ipv4(const uint8_t *frame, uint32_t len, uint32_t off,
		  struct rp_l3 *l3, struct rp_pkt *pkt)
{
	const uint8_t *ip = frame + off;
	uint32_t ihl, tot;

	if (len - off < RP_IPV4_HLEN || (ip[0] >> 4) != 4)
		return RP_PKT_NOT_ROCE;
	ihl = (ip[0] & 0x0fu) * 4u;
	if (ihl < RP_IPV4_HLEN)
		return RP_PKT_NOT_ROCE;
	/* Non-first fragments have no UDP header to look at. */
	if (rp_rd16(ip + 6) & RP_IPV4_MF_OFF)
		return RP_PKT_NOT_ROCE;
	if (ip[9] != IPPROTO_UDP)
		return RP_PKT_NOT_ROCE;
	tot = rp_rd16(ip + 2);
	/* Checked against the frame by the caller; l4 may lie beyond it. */
	l3->l4 = off + ihl;
	l3->l3len = tot;
	l3->l4len = tot >= ihl ? tot - ihl : 0;	/* 0 fails the UDP check */

	pkt->ipver = 4;
	pkt->tclass = ip[1];
	pkt->ttl = ip[8];
	/* Each GID written whole, not one copied from the other: loads of
	 * bytes just stored in pieces stall (no store forwarding). */
	memcpy(pkt->sgid, rp_v4_mapped, 12);
	memcpy(&pkt->sgid[12], ip + 12, 4);
	memcpy(pkt->dgid, rp_v4_mapped, 12);
	memcpy(&pkt->dgid[12], ip + 16, 4);
	return 0;
}

static int
rp_pkt_parse_ipv6(const uint8_t *frame, uint32_t len, uint32_t off,
		  struct rp_l3 *l3, struct rp_pkt *pkt)
{
	const uint8_t *ip = frame + off;

	if (len - off < RP_IPV6_HLEN || (ip[0] >> 4) != 6)
		return RP_PKT_NOT_ROCE;
	/* Extension headers are not followed: RoCEv2 senders use none. */
	if (ip[6] != IPPROTO_UDP)
		return RP_PKT_NOT_ROCE;
	l3->l4 = off + RP_IPV6_HLEN;
	l3->l4len = rp_rd16(ip + 4);
	l3->l3len = RP_IPV6_HLEN + l3->l4len;

	pkt->ipver = 6;
	pkt->tclass = (uint8_t)(((ip[0] & 0x0f) << 4) | (ip[1] >> 4));
	pkt->ttl = ip[7];
	memcpy(pkt->sgid, ip + 8, 16);
	memcpy(pkt->dgid, ip + 24, 16);
	return 0;
}

enum rp_pkt_out
rp_pkt_out_class(const uint8_t *frame, uint32_t len)
{
	uint16_t etype;
	uint32_t off;
	uint8_t op;

	if (len < RP_ETH_HLEN)
		return RP_PKT_OUT_OTHER;
	etype = rp_rd16(frame + 12);
	if (etype == RTE_ETHER_TYPE_IPV4)
		off = RP_ETH_HLEN + RP_IPV4_HLEN;
	else if (etype == RTE_ETHER_TYPE_IPV6)
		off = RP_ETH_HLEN + RP_IPV6_HLEN;
	else
		return RP_PKT_OUT_OTHER;
	if (len < off + RP_UDP_HLEN + RP_BTH_SIZE + 1 ||
	    rp_rd16(frame + off + 2) != RP_ROCE_UDP_PORT)
		return RP_PKT_OUT_OTHER;
	off += RP_UDP_HLEN;
	op = rp_bth_opcode(frame + off);
	if ((op & 0xe0) != RP_OP_RC)
		return RP_PKT_OUT_OTHER;
	switch (op) {
	case RP_OP_ACK:
		return (frame[off + RP_BTH_SIZE] & RP_AETH_TYPE_MASK) ==
			RP_AETH_ACK ? RP_PKT_OUT_ACK : RP_PKT_OUT_RESPONSE;
	case RP_OP_READ_RESP_FIRST:
	case RP_OP_READ_RESP_MIDDLE:
	case RP_OP_READ_RESP_LAST:
	case RP_OP_READ_RESP_ONLY:
	case RP_OP_ATOMIC_ACK:
		return RP_PKT_OUT_RESPONSE;
	default:
		return RP_PKT_OUT_OTHER;
	}
}

int
rp_pkt_parse(const uint8_t *frame, uint32_t len, unsigned int icrc,
	     struct rp_pkt *pkt)
{
	const struct rp_opcode_info *info;
	struct rp_l3 l3;
	const uint8_t *udp, *bth;
	uint32_t off, tlen, need;
	uint16_t etype;
	int ret;

	if (len < RP_ETH_HLEN)
		return RP_PKT_NOT_ROCE;
	off = RP_ETH_HLEN;
	etype = rp_rd16(frame + 12);
	if (etype == RTE_ETHER_TYPE_VLAN) {
		if (len < RP_ETH_HLEN + RP_VLAN_HLEN)
			return RP_PKT_NOT_ROCE;
		etype = rp_rd16(frame + 16);
		off += RP_VLAN_HLEN;
	}
	if (etype == RTE_ETHER_TYPE_IPV4)
		ret = rp_pkt_parse_ipv4(frame, len, off, &l3, pkt);
	else if (etype == RTE_ETHER_TYPE_IPV6)
		ret = rp_pkt_parse_ipv6(frame, len, off, &l3, pkt);
	else
		ret = RP_PKT_NOT_ROCE;
	if (ret != 0)
		return ret;

	/* Until the destination port is seen this may be anyone's UDP. */
	if (l3.l4 > len || len - l3.l4 < RP_UDP_HLEN)
		return RP_PKT_NOT_ROCE;
	udp = frame + l3.l4;
	if (rp_rd16(udp + 2) != RP_ROCE_UDP_PORT)
		return RP_PKT_NOT_ROCE;

	/* RoCEv2 from here on: inconsistencies are malformed packets. */
	if (l3.l4len < RP_UDP_HLEN || l3.l3len > len - off ||
	    rp_rd16(udp + 4) != l3.l4len)
		return RP_PKT_BAD;
	tlen = l3.l4len - RP_UDP_HLEN;	/* BTH .. ICRC */
	if (tlen < RP_BTH_SIZE + RP_ICRC_SIZE || (tlen & 3) != 0)
		return RP_PKT_BAD;
	bth = udp + RP_UDP_HLEN;
	if (rp_bth_tver(bth) != 0)
		return RP_PKT_BAD;

	pkt->opcode = rp_bth_opcode(bth);
	info = &rp_opcode[pkt->opcode];
	if (info->name == NULL)
		return RP_PKT_BAD_OP;
	pkt->pad = rp_bth_pad(bth);
	need = (uint32_t)info->length + pkt->pad + RP_ICRC_SIZE;
	if (tlen < need)
		return RP_PKT_BAD;
	pkt->paylen = tlen - need;
	if (!(info->mask & RP_M_PAYLOAD) && (pkt->paylen != 0 || pkt->pad != 0))
		return RP_PKT_BAD;

	pkt->nc = (uint8_t)rp_bth_nc(bth);
	if ((icrc & RP_PKT_ICRC_CHECK) &&
	    !((icrc & RP_PKT_ICRC_NC) && pkt->nc) &&
	    rp_icrc_check(frame + off, l3.l3len - RP_ICRC_SIZE) != 0)
		return RP_PKT_BAD_ICRC;

	pkt->mask = info->mask;
	pkt->qpn = rp_bth_qpn(bth);
	pkt->psn = rp_bth_psn(bth);
	pkt->se = (uint8_t)rp_bth_se(bth);
	pkt->ackreq = (uint8_t)rp_bth_ackreq(bth);
	pkt->sr = rp_bth_sr(bth) | rp_bth_ro(bth) | rp_bth_nb(bth);
	pkt->rg = rp_bth_rg(bth);
	pkt->mbuf = NULL;
	pkt->pkey = rp_bth_pkey(bth);
	pkt->sport = rp_rd16(udp);
	pkt->l3_off = (uint16_t)off;
	pkt->bth_off = (uint16_t)(l3.l4 + RP_UDP_HLEN);
	pkt->pay_off = (uint16_t)(pkt->bth_off + info->length);
	memcpy(pkt->dmac, frame, 6);
	memcpy(pkt->smac, frame + 6, 6);
	pkt->frame = frame;
	return 0;
}

static inline bool
rp_pkt_addr_v4(const struct rp_pkt_addr *a)
{
	return rp_gid_is_v4(a->sgid);
}

uint16_t
rp_pkt_l2l4_len(const struct rp_pkt_addr *a)
{
	return RP_ETH_HLEN + (rp_pkt_addr_v4(a) ? RP_IPV4_HLEN : RP_IPV6_HLEN) +
		RP_UDP_HLEN;
}

uint32_t
rp_pkt_frame_len(const struct rp_pkt_addr *a, uint8_t opcode,
		 uint32_t paylen)
{
	return rp_pkt_l2l4_len(a) + rp_opcode[opcode].length + paylen +
		rp_pkt_pad(paylen) + RP_ICRC_SIZE;
}

/* IP and UDP length fields of a frame of frame_len bytes. */
static void
rp_pkt_set_lengths(uint8_t *frame, bool v4, uint32_t frame_len)
{
	uint32_t l3len = frame_len - RP_ETH_HLEN;
	struct rte_udp_hdr *udp;

	if (v4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)
			(frame + RP_ETH_HLEN);

		ip->total_length = rte_cpu_to_be_16((uint16_t)l3len);
		udp = (struct rte_udp_hdr *)(frame + RP_ETH_HLEN +
					     RP_IPV4_HLEN);
		udp->dgram_len = rte_cpu_to_be_16((uint16_t)(l3len -
							     RP_IPV4_HLEN));
	} else {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)
			(frame + RP_ETH_HLEN);

		ip->payload_len = rte_cpu_to_be_16((uint16_t)(l3len -
							      RP_IPV6_HLEN));
		udp = (struct rte_udp_hdr *)(frame + RP_ETH_HLEN +
					     RP_IPV6_HLEN);
		udp->dgram_len = ip->payload_len;
	}
}

uint16_t
rp_pkt_build(uint8_t *frame, const struct rp_pkt_addr *a, uint8_t opcode,
	     int se, uint32_t qpn, int ackreq, uint32_t psn, uint32_t paylen)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
	bool v4 = rp_pkt_addr_v4(a);
	uint16_t l4 = RP_ETH_HLEN + (v4 ? RP_IPV4_HLEN : RP_IPV6_HLEN);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(frame + l4);
	uint16_t bth = l4 + RP_UDP_HLEN;

	memcpy(eth->dst_addr.addr_bytes, a->dmac, 6);
	memcpy(eth->src_addr.addr_bytes, a->smac, 6);
	if (v4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)
			(frame + RP_ETH_HLEN);

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->type_of_service = a->tclass;
		ip->packet_id = 0;
		ip->fragment_offset = rte_cpu_to_be_16(RP_IPV4_DF);
		ip->time_to_live = a->ttl;
		ip->next_proto_id = IPPROTO_UDP;
		ip->hdr_checksum = 0;
		memcpy(&ip->src_addr, &a->sgid[12], 4);
		memcpy(&ip->dst_addr, &a->dgid[12], 4);
	} else {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)
			(frame + RP_ETH_HLEN);

		eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
		ip->vtc_flow = rte_cpu_to_be_32(6u << 28 |
						(uint32_t)a->tclass << 20 |
						(a->flow_label & 0xfffffu));
		ip->proto = IPPROTO_UDP;
		ip->hop_limits = a->ttl;
		memcpy(ip->src_addr, a->sgid, 16);
		memcpy(ip->dst_addr, a->dgid, 16);
	}
	udp->src_port = rte_cpu_to_be_16(a->sport);
	udp->dst_port = rte_cpu_to_be_16(RP_ROCE_UDP_PORT);
	udp->dgram_cksum = 0;
	/* Lengths now so the headers are consistent before finish. */
	rp_pkt_set_lengths(frame, v4, rp_pkt_frame_len(a, opcode, paylen));
	rp_bth_set(frame + bth, opcode, se, rp_pkt_pad(paylen),
		   RP_DEFAULT_PKEY, qpn, ackreq, psn);
	return bth;
}

void
rp_pkt_set_ip_id(uint8_t *frame, uint16_t id)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(frame + RP_ETH_HLEN);

	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		ip->packet_id = rte_cpu_to_be_16(id);
}

void
rp_pkt_set_ecn(uint8_t *frame, uint8_t ecn)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
	uint8_t *ip = frame + RP_ETH_HLEN;

	ecn &= RP_ECN_MASK;
	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		ip[1] = (uint8_t)((ip[1] & ~RP_ECN_MASK) | ecn);
	else	/* version:4 traffic class:8 flow label:20 */
		ip[1] = (uint8_t)((ip[1] & ~(RP_ECN_MASK << 4)) | ecn << 4);
}

bool
rp_pkt_mark_ce(uint8_t *frame, uint32_t frame_len)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
	uint8_t *ip = frame + RP_ETH_HLEN;

	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) &&
	    frame_len >= RP_ETH_HLEN + RP_IPV4_HLEN) {
		struct rte_ipv4_hdr *h = (struct rte_ipv4_hdr *)ip;

		if ((h->type_of_service & RP_ECN_MASK) == RP_ECN_NOT_ECT)
			return false;
		h->type_of_service |= RP_ECN_CE;
		h->hdr_checksum = 0;
		h->hdr_checksum = rte_ipv4_cksum(h);
		return true;
	}
	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) &&
	    frame_len >= RP_ETH_HLEN + RP_IPV6_HLEN) {
		if (((ip[1] >> 4) & RP_ECN_MASK) == RP_ECN_NOT_ECT)
			return false;
		ip[1] |= RP_ECN_CE << 4;
		return true;
	}
	return false;
}

uint32_t
rp_pkt_flow_label(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn)
{
	uint32_t fl = flow_label & 0xfffffu;

	if (fl == 0) {
		/* rdma_calc_flow_label(): symmetric, so both ends agree */
		uint64_t v = (uint64_t)lqpn * rqpn;

		v ^= v >> 20;
		v ^= v >> 40;
		fl = (uint32_t)v & 0xfffffu;
	}
	return fl;
}

uint16_t
rp_pkt_udp_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn)
{
	uint32_t fl = rp_pkt_flow_label(flow_label, lqpn, rqpn);

	/* rdma_flow_label_to_udp_sport(): 20 bits folded into 14 */
	return (uint16_t)(RP_UDP_SPORT_BASE |
			  ((fl & 0x3fffu) ^ ((fl & 0xfc000u) >> 14)));
}

/* IP and UDP lengths, the IPv4 header checksum; the UDP header's address. */
static struct rte_udp_hdr *
pkt_finish_l3(uint8_t *frame, bool v4, uint32_t frame_len)
{
	uint32_t l4 = RP_ETH_HLEN + (v4 ? RP_IPV4_HLEN : RP_IPV6_HLEN);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(frame + l4);

	rp_pkt_set_lengths(frame, v4, frame_len);
	udp->dgram_cksum = 0;
	if (v4) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)
			(frame + RP_ETH_HLEN);

		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	return udp;
}

void
rp_pkt_finish(uint8_t *frame, const struct rp_pkt_addr *a,
	      uint32_t frame_len, bool icrc)
{
	bool v4 = rp_pkt_addr_v4(a);
	struct rte_udp_hdr *udp = pkt_finish_l3(frame, v4, frame_len);
	uint8_t pad = rp_bth_pad((const uint8_t *)udp + RP_UDP_HLEN);

	if (icrc) {
		memset(frame + frame_len - RP_ICRC_SIZE - pad, 0, pad);
		rp_icrc_put(frame + RP_ETH_HLEN, frame_len - RP_ETH_HLEN -
			    RP_ICRC_SIZE);
	} else {
		memset(frame + frame_len - RP_ICRC_SIZE - pad, 0,
		       pad + RP_ICRC_SIZE);
	}
	/* IPv6 forbids a zero UDP checksum; the ICRC is part of what it
	 * covers, so it comes last.  The ICRC masks this field. */
	if (!v4) {
		const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)
			(frame + RP_ETH_HLEN);

		udp->dgram_cksum = rte_ipv6_udptcp_cksum(ip, udp);
	}
}

/* Internet checksum of a piece at an odd offset: its bytes swap lanes. */
static inline uint32_t
pkt_cksum_piece(const void *p, uint32_t n, bool odd)
{
	uint16_t v = __rte_raw_cksum_reduce(__rte_raw_cksum(p, n, 0));

	return odd ? rte_bswap16(v) : v;
}

void
rp_pkt_finish_split(uint8_t *frame, uint32_t hdr_len, const uint8_t *pay,
		    uint32_t paylen, uint8_t *trailer, bool icrc)
{
	bool v4 = (frame[RP_ETH_HLEN] >> 4) != 6;
	uint8_t pad = rp_pkt_pad(paylen);
	struct rte_udp_hdr *udp = pkt_finish_l3(frame, v4, hdr_len + paylen +
						pad + RP_ICRC_SIZE);
	uint32_t crc, sum;
	uint16_t ck;

	memset(trailer, 0, pad);
	crc = 0;
	if (icrc) {
		crc = rp_icrc_calc(frame + RP_ETH_HLEN, hdr_len - RP_ETH_HLEN);
		crc = rp_icrc_more(crc, pay, paylen);
		crc = rte_cpu_to_le_32(rp_icrc_more(crc, trailer, pad));
	}
	memcpy(trailer + pad, &crc, RP_ICRC_SIZE);
	if (v4)
		return;
	/* IPv6's UDP checksum (rp_pkt_finish()) over the three pieces; the
	 * headers' length is even, the payload's may not be. */
	sum = pkt_cksum_piece(udp, hdr_len - (uint32_t)((uint8_t *)udp - frame),
			      false) +
		pkt_cksum_piece(pay, paylen, false) +
		pkt_cksum_piece(trailer, pad + RP_ICRC_SIZE, paylen & 1) +
		rte_ipv6_phdr_cksum((const struct rte_ipv6_hdr *)
				    (frame + RP_ETH_HLEN), 0);
	ck = (uint16_t)~__rte_raw_cksum_reduce(sum);
	udp->dgram_cksum = ck == 0 ? 0xffff : ck;
}

/* First, middle and last opcodes of each kind of message. */
static const uint8_t rp_msg_ops[][4] = {
	/* only, first, middle, last */
	[RP_MSG_SEND] = { RP_OP_SEND_ONLY, RP_OP_SEND_FIRST,
			  RP_OP_SEND_MIDDLE, RP_OP_SEND_LAST },
	[RP_MSG_SEND_IMM] = { RP_OP_SEND_ONLY_IMM, RP_OP_SEND_FIRST,
			      RP_OP_SEND_MIDDLE, RP_OP_SEND_LAST_IMM },
	[RP_MSG_WRITE] = { RP_OP_WRITE_ONLY, RP_OP_WRITE_FIRST,
			   RP_OP_WRITE_MIDDLE, RP_OP_WRITE_LAST },
	[RP_MSG_WRITE_IMM] = { RP_OP_WRITE_ONLY_IMM, RP_OP_WRITE_FIRST,
			       RP_OP_WRITE_MIDDLE, RP_OP_WRITE_LAST_IMM },
	[RP_MSG_READ] = { RP_OP_READ_RESP_ONLY, RP_OP_READ_RESP_FIRST,
			  RP_OP_READ_RESP_MIDDLE, RP_OP_READ_RESP_LAST },
	[RP_MSG_ATOMIC] = { RP_OP_FETCH_ADD },
};

int
rp_msg_shape(enum rp_msg_kind kind, uint32_t size, uint32_t mtu,
	     struct rp_msg_shape *shape)
{
	const struct rp_pkt_addr a = { .sgid = { [10] = 0xff, [11] = 0xff } };
	const uint8_t *op;

	if ((unsigned int)kind >= RTE_DIM(rp_msg_ops) || mtu < 256 ||
	    mtu > 4096 || (mtu & (mtu - 1)) != 0)
		return -EINVAL;
	op = rp_msg_ops[kind];
	if (kind == RP_MSG_ATOMIC)
		size = 0;
	shape->frames = size <= mtu ? 1 : (size + mtu - 1) / mtu;
	if (shape->frames == 1) {
		shape->first = rp_pkt_frame_len(&a, RP_OP_RC | op[0], size);
		shape->middle = shape->last = shape->first;
		shape->bytes = shape->first;
		return 0;
	}
	shape->first = rp_pkt_frame_len(&a, RP_OP_RC | op[1], mtu);
	shape->middle = rp_pkt_frame_len(&a, RP_OP_RC | op[2], mtu);
	shape->last = rp_pkt_frame_len(&a, RP_OP_RC | op[3],
				       size - (shape->frames - 1) * mtu);
	shape->bytes = shape->first + shape->last +
		(uint64_t)(shape->frames - 2) * shape->middle;
	return 0;
}
