/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 frames: parse (Ethernet, IPv4/IPv6, UDP 4791, BTH and extended
 * headers, ICRC) into struct rp_pkt, and build the headers of outgoing
 * frames.  Works on flat buffers so it is testable without EAL.
 */

#ifndef _RP_PKT_H_
#define _RP_PKT_H_

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "rp_hdr.h"
#include "rp_opcode.h"

/* Parse results (negative errno values, distinct so they can be counted) */
#define RP_PKT_NOT_ROCE	(-EPROTONOSUPPORT)	/* not RoCEv2: someone else's */
#define RP_PKT_BAD	(-EBADMSG)		/* malformed RoCEv2 packet */
#define RP_PKT_BAD_ICRC	(-EILSEQ)
#define RP_PKT_BAD_OP	(-EOPNOTSUPP)		/* undefined opcode */

struct rp_pkt {
	uint32_t mask;		/* rp_opcode[opcode].mask */
	uint32_t qpn;		/* destination QP */
	uint32_t psn;
	uint8_t opcode;
	uint8_t pad;		/* BTH pad count */
	uint8_t se;
	uint8_t ackreq;
	uint8_t ipver;		/* 4 or 6 */
	uint8_t ttl;		/* hop limit */
	uint8_t tclass;
	uint8_t sr;		/* RP_SR_ON | RP_SR_ONE | RP_SR_RO | RP_SR_NB
				 * (rp_hdr.h) */
	uint16_t pkey;
	uint16_t sport;		/* UDP source port (host order) */
	uint16_t l3_off;	/* IP header offset in the frame */
	uint16_t bth_off;	/* BTH offset in the frame */
	uint16_t pay_off;	/* payload offset in the frame */
	uint8_t nc;		/* RP_BTH_NC: the peer takes frames without
				 * an ICRC */
	uint8_t rg;		/* RP_BTH_RG: a resend generation, 0 none */
	uint32_t paylen;	/* payload bytes, without pad and ICRC */
	uint8_t smac[6];
	uint8_t dmac[6];
	uint8_t sgid[16];	/* source IP as a GID (v4-mapped for IPv4) */
	uint8_t dgid[16];
	const uint8_t *frame;	/* the frame, valid while it is held */
	void *mbuf;		/* what holds it, if the receiver says */
};

/* Address of extended header `id` in a parsed packet. */
static inline const uint8_t *
rp_pkt_hdr(const struct rp_pkt *pkt, enum rp_hdr_id id)
{
	return pkt->frame + pkt->bth_off + rp_opcode[pkt->opcode].offset[id];
}

static inline const uint8_t *
rp_pkt_payload(const struct rp_pkt *pkt)
{
	return pkt->frame + pkt->pay_off;
}

/* ---- layer 2: accessors on a parsed packet */
static inline uint64_t rp_pkt_reth_va(const struct rp_pkt *p)
{ return rp_reth_va(rp_pkt_hdr(p, RP_HDR_RETH)); }
static inline uint32_t rp_pkt_reth_rkey(const struct rp_pkt *p)
{ return rp_reth_rkey(rp_pkt_hdr(p, RP_HDR_RETH)); }
static inline uint32_t rp_pkt_reth_len(const struct rp_pkt *p)
{ return rp_reth_len(rp_pkt_hdr(p, RP_HDR_RETH)); }
static inline uint8_t rp_pkt_aeth_syn(const struct rp_pkt *p)
{ return rp_aeth_syn(rp_pkt_hdr(p, RP_HDR_AETH)); }
static inline uint32_t rp_pkt_aeth_msn(const struct rp_pkt *p)
{ return rp_aeth_msn(rp_pkt_hdr(p, RP_HDR_AETH)); }
static inline uint32_t rp_pkt_deth_qkey(const struct rp_pkt *p)
{ return rp_deth_qkey(rp_pkt_hdr(p, RP_HDR_DETH)); }
static inline uint32_t rp_pkt_deth_sqp(const struct rp_pkt *p)
{ return rp_deth_sqp(rp_pkt_hdr(p, RP_HDR_DETH)); }
static inline uint32_t rp_pkt_imm(const struct rp_pkt *p)
{ return rp_immdt_imm(rp_pkt_hdr(p, RP_HDR_IMMDT)); }
static inline uint32_t rp_pkt_ieth_rkey(const struct rp_pkt *p)
{ return rp_ieth_rkey(rp_pkt_hdr(p, RP_HDR_IETH)); }
static inline uint64_t rp_pkt_atmeth_va(const struct rp_pkt *p)
{ return rp_atmeth_va(rp_pkt_hdr(p, RP_HDR_ATMETH)); }
static inline uint32_t rp_pkt_atmeth_rkey(const struct rp_pkt *p)
{ return rp_atmeth_rkey(rp_pkt_hdr(p, RP_HDR_ATMETH)); }
static inline uint64_t rp_pkt_atmeth_swap_add(const struct rp_pkt *p)
{ return rp_atmeth_swap_add(rp_pkt_hdr(p, RP_HDR_ATMETH)); }
static inline uint64_t rp_pkt_atmeth_comp(const struct rp_pkt *p)
{ return rp_atmeth_comp(rp_pkt_hdr(p, RP_HDR_ATMETH)); }
static inline uint64_t rp_pkt_atmack_orig(const struct rp_pkt *p)
{ return rp_atmack_orig(rp_pkt_hdr(p, RP_HDR_ATMACK)); }

/*
 * Parse and validate a frame.  Checks, in order: Ethernet type (IPv4,
 * IPv6, optionally one VLAN tag), IP version/header length/total length
 * against the frame, UDP destination port 4791 and UDP length, BTH TVer 0,
 * a defined opcode, the frame long enough for the opcode's headers plus pad
 * plus ICRC, and the ICRC as `icrc` says: RP_PKT_ICRC_CHECK checks it,
 * unless RP_PKT_ICRC_NC is set too and the frame's BTH has RP_BTH_NC
 * (a memory link: the port key icrc); 0 checks nothing.
 * Never reads outside [frame, frame + len).
 *
 * len is the frame without FCS (as DPDK delivers it); bytes past the IP
 * total length (Ethernet padding) are ignored.  Results:
 * - RP_PKT_NOT_ROCE for anything not yet known to be UDP port 4791: other
 *   ether types (also QinQ), IP version mismatch, IPv4 IHL < 5, IPv4
 *   fragments (MF or offset != 0: never reassembled, RoCEv2 sets DF),
 *   IPv6 with extension headers, protocol not UDP, the UDP header not
 *   inside the frame, another destination port;
 * - RP_PKT_BAD after that: IP lengths inconsistent with the frame, UDP
 *   length != IP payload length, transport packet (BTH..ICRC) shorter than
 *   BTH + ICRC or not a multiple of 4 (IBTA pads to 4), TVer != 0, too
 *   short for the opcode's headers + pad + ICRC, or payload/pad on an
 *   opcode without RP_M_PAYLOAD.
 * pkt is written as parsing goes (in place: a copy of a struct built in
 * pieces stalls on store forwarding) and means something only when 0 is
 * returned.  The IPv4 header checksum and the IPv6 UDP checksum are not
 * verified: the ICRC covers every field that matters.
 * @return 0, or RP_PKT_NOT_ROCE / RP_PKT_BAD / RP_PKT_BAD_OP / RP_PKT_BAD_ICRC
 */
#define RP_PKT_ICRC_CHECK	1u
#define RP_PKT_ICRC_NC		2u
int rp_pkt_parse(const uint8_t *frame, uint32_t len, unsigned int icrc,
		 struct rp_pkt *pkt);

/*
 * What an outgoing frame built by rp_pkt_build() is, for the order frames
 * leave in (rp_xmit_acks_last()): a positive ACK, a response (a READ
 * response, an atomic ACK, a NAK), or anything else (a request, ARP, ND,
 * a CNP, a frame not ours).  Reads only the headers rp_pkt_build() writes
 * (no VLAN tag, IP options or extension headers), never past len: not a
 * parser of frames from the wire.
 */
enum rp_pkt_out {
	RP_PKT_OUT_OTHER,
	RP_PKT_OUT_ACK,
	RP_PKT_OUT_RESPONSE,
};
enum rp_pkt_out rp_pkt_out_class(const uint8_t *frame, uint32_t len);

/* What an outgoing frame's L2/L3/L4 headers say. */
struct rp_pkt_addr {
	uint8_t smac[6];
	uint8_t dmac[6];
	uint8_t sgid[16];	/* v4-mapped (::ffff:a.b.c.d) selects IPv4 */
	uint8_t dgid[16];
	uint16_t sport;		/* UDP source port (entropy), host order */
	uint8_t ttl;		/* hop limit */
	uint8_t tclass;		/* DSCP/ECN byte */
	uint32_t flow_label;	/* IPv6 only */
};

/* True when a GID is an IPv4-mapped IPv6 address. */
static inline bool
rp_gid_is_v4(const uint8_t gid[16])
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(gid, pfx, 12) == 0;
}

/* Index of gid in a table of n GIDs, or -1. */
static inline int
rp_gid_index(const uint8_t (*tbl)[16], uint32_t n, const uint8_t gid[16])
{
	for (uint32_t i = 0; i < n; i++)
		if (memcmp(tbl[i], gid, 16) == 0)
			return (int)i;
	return -1;
}

/* True for a multicast GID: IPv4-mapped 224.0.0.0/4, or IPv6 ff00::/8. */
static inline bool
rp_gid_is_mcast(const uint8_t gid[16])
{
	return rp_gid_is_v4(gid) ? (gid[12] & 0xf0) == 0xe0 : gid[0] == 0xff;
}

/*
 * The Ethernet group address of a multicast GID: 01:00:5e and the low 23
 * bits of an IPv4 group (RFC 1112 6.4), 33:33 and the low 32 bits of an
 * IPv6 one (RFC 2464 7), as ip_eth_mc_map() and ipv6_eth_mc_map().
 */
static inline void
rp_gid_mcast_mac(const uint8_t gid[16], uint8_t mac[6])
{
	if (rp_gid_is_v4(gid)) {
		mac[0] = 0x01;
		mac[1] = 0x00;
		mac[2] = 0x5e;
		mac[3] = gid[13] & 0x7f;
		mac[4] = gid[14];
		mac[5] = gid[15];
	} else {
		mac[0] = 0x33;
		mac[1] = 0x33;
		memcpy(&mac[2], &gid[12], 4);
	}
}

/*
 * IPv6 flow label of a QP's packets: the AV's, or one derived from both
 * QPNs when it is 0, as the kernel's rdma_calc_flow_label() (mlx5 puts it
 * in the IPv6 header of connected QPs; rxe sends 0 there).
 */
uint32_t rp_pkt_flow_label(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn);

/*
 * UDP source port of a QP's packets (IBTA A17.5.3 lets it carry the flow
 * label): the AV's flow label, or one derived from both QPNs when it is 0,
 * folded into 0xc000..0xffff.  The kernel's rdma_get_udp_sport(), which rxe
 * and mlx5 use for connected QPs, bit for bit; never 0.
 */
uint16_t rp_pkt_udp_sport(uint32_t flow_label, uint32_t lqpn, uint32_t rqpn);

/* Size of Ethernet + IP + UDP headers for an address. */
uint16_t rp_pkt_l2l4_len(const struct rp_pkt_addr *a);

/*
 * Write the Ethernet, IP and UDP headers and the BTH of a frame; the
 * caller writes the extended headers (offsets from rp_opcode[]) and the
 * payload.  Returns the offset of the BTH.  The sgid picks IPv4 or IPv6;
 * no VLAN tag; IPv4 has DF set and identification 0 (rp_pkt_set_ip_id());
 * P_Key is RP_DEFAULT_PKEY; the BTH pad count is derived from paylen;
 * IP/UDP lengths are already filled in.
 */
uint16_t rp_pkt_build(uint8_t *frame, const struct rp_pkt_addr *a,
		      uint8_t opcode, int se, uint32_t qpn, int ackreq,
		      uint32_t psn, uint32_t paylen);

/*
 * Set the IPv4 identification of a frame rp_pkt_build() wrote, before
 * rp_pkt_finish() computes the header checksum; IPv6 frames have none.
 */
void rp_pkt_set_ip_id(uint8_t *frame, uint16_t id);

/* The ECN field of the IP header (RFC 3168): the low 2 bits of the
 * IPv4 TOS or IPv6 traffic class, which the ICRC masks. */
#define RP_ECN_MASK	0x03u
#define RP_ECN_NOT_ECT	0x00u
#define RP_ECN_ECT0	0x02u
#define RP_ECN_CE	0x03u

/*
 * Set the ECN field of a frame rp_pkt_build() wrote, before
 * rp_pkt_finish() (the IPv4 header checksum).
 */
void rp_pkt_set_ecn(uint8_t *frame, uint8_t ecn);

/*
 * A congested switch's mark on a finished frame: an ECN-capable one (ECT)
 * becomes CE, its IPv4 header checksum redone; the ICRC does not cover
 * the field.  False for a frame that is not ECN-capable (a switch drops
 * those instead) or not IP.
 */
bool rp_pkt_mark_ce(uint8_t *frame, uint32_t frame_len);

/* Pad bytes after a payload of paylen bytes (to 4). */
static inline uint8_t
rp_pkt_pad(uint32_t paylen)
{
	return (uint8_t)(-paylen & 3u);
}

/*
 * Total frame length of a packet with opcode and paylen bytes of payload:
 * headers + payload + pad (to 4 bytes) + ICRC.
 */
uint32_t rp_pkt_frame_len(const struct rp_pkt_addr *a, uint8_t opcode,
			  uint32_t paylen);

/*
 * Finish a frame built by rp_pkt_build() once its payload is in place:
 * zero the pad bytes, fill IP/UDP lengths and the IPv4 header checksum, and
 * append the ICRC (icrc false: zeros, toward a peer that takes frames
 * without one, RP_BTH_NC).  frame_len is rp_pkt_frame_len().
 */
void rp_pkt_finish(uint8_t *frame, const struct rp_pkt_addr *a,
		   uint32_t frame_len, bool icrc);

/*
 * rp_pkt_finish() for a frame in three pieces, its payload sent from the
 * memory it lies in (no copy): `frame` holds the hdr_len bytes of headers
 * rp_pkt_build() wrote, `pay` the paylen bytes of payload, and `trailer`
 * takes the pad and the ICRC (rp_pkt_pad(paylen) + RP_ICRC_SIZE bytes).
 * The same bytes on the wire as rp_pkt_finish() of the frame in one piece,
 * IPv6's UDP checksum included.
 */
void rp_pkt_finish_split(uint8_t *frame, uint32_t hdr_len,
			 const uint8_t *pay, uint32_t paylen,
			 uint8_t *trailer, bool icrc);

#endif /* _RP_PKT_H_ */
