/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Frame builder and parser: round trips for every opcode over IPv4 and
 * IPv6 with every pad count, every captured rxe frame rebuilt byte for
 * byte, truncation at every length, and each rejection the parser makes.
 * argv[1] is the rxe capture dir.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "rp_icrc.h"
#include "rp_pkt.h"
#include "rocepmd.h"
#include "tp_util.h"

#define ETH_HLEN	14u
#define FRAME_MAX	(9216u)

static const char *data_dir = "test/data/rxe";

static uint8_t frame_buf[FRAME_MAX] __rte_aligned(64);

static const struct rp_pkt_addr addr4 = {
	.smac = { 0x02, 0, 0, 0, 0, 0x01 },
	.dmac = { 0x02, 0, 0, 0, 0, 0x02 },
	.sgid = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 1 },
	.dgid = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 2 },
	.sport = 0xc123,
	.ttl = 64,
	.tclass = 0x02,
};

/* IPv4 identification of the frames build() makes (IPv6 has none). */
#define IP_ID(seed)	((uint16_t)(0x1234u + (seed)))

static const struct rp_pkt_addr addr6 = {
	.smac = { 0x02, 0, 0, 0, 0, 0x0a },
	.dmac = { 0x02, 0, 0, 0, 0, 0x0b },
	.sgid = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x0a },
	.dgid = { 0x20, 0x01, 0x0d, 0xb8, [14] = 0x01, [15] = 0x0b },
	.sport = 0xfffe,
	.ttl = 7,
	.tclass = 0xb9,
	.flow_label = 0xabcde,
};

static uint32_t
rd_be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* UDP checksum over the IPv6 pseudo-header sums to all ones when right. */
static bool
v6_udp_cksum_ok(const uint8_t *l3)
{
	const struct rte_ipv6_hdr *ip = (const void *)l3;
	uint32_t sum;

	sum = rte_raw_cksum(l3 + 40, rte_be_to_cpu_16(ip->payload_len));
	sum += rte_ipv6_phdr_cksum(ip, 0);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static void
wr_be16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Values the round trip writes and expects back, derived from a seed. */
struct hdr_vals {
	uint64_t va, swap, cmp, orig;
	uint32_t rkey, rlen, msn, qkey, sqp, imm, ieth;
	uint8_t syn;
};

static void
hdr_vals(struct hdr_vals *v, uint32_t seed)
{
	v->va = 0x0123456789abcdefull ^ seed;
	v->swap = 0xfedcba9876543210ull + seed;
	v->cmp = 0x8000000000000001ull * (seed | 1);
	v->orig = ~v->va;
	v->rkey = 0xdead0000u | seed;
	v->rlen = 0x10000u + seed;
	v->msn = (seed * 7919u) & 0xffffffu;
	v->qkey = 0x11111111u ^ seed;
	v->sqp = (seed * 31u) & 0xffffffu;
	v->imm = rte_cpu_to_be_32(0xa5a50000u | seed);
	v->ieth = 0x00c0ffeeu ^ seed;
	v->syn = (uint8_t)(seed & 0xff);
}

/* Build a complete frame; payload bytes are (i * 7 + seed). */
static uint32_t
build(uint8_t *buf, const struct rp_pkt_addr *a, uint8_t op, int se,
      uint32_t qpn, int ackreq, uint32_t psn, uint32_t paylen, uint32_t seed)
{
	const struct rp_opcode_info *info = &rp_opcode[op];
	uint32_t flen = rp_pkt_frame_len(a, op, paylen), i;
	struct hdr_vals v;
	uint16_t bth;
	uint8_t *h;

	assert_true(flen <= FRAME_MAX);
	memset(buf, 0xee, flen);	/* finish must zero the pad */
	bth = rp_pkt_build(buf, a, op, se, qpn, ackreq, psn, paylen);
	assert_int_equal(bth, rp_pkt_l2l4_len(a));
	rp_pkt_set_ip_id(buf, IP_ID(seed));
	h = buf + bth;
	hdr_vals(&v, seed);
	if (info->mask & RP_M_RETH)
		rp_reth_set(h + info->offset[RP_HDR_RETH], v.va, v.rkey, v.rlen);
	if (info->mask & RP_M_AETH)
		rp_aeth_set(h + info->offset[RP_HDR_AETH], v.syn, v.msn);
	if (info->mask & RP_M_ATMETH)
		rp_atmeth_set(h + info->offset[RP_HDR_ATMETH], v.va, v.rkey,
			      v.swap, v.cmp);
	if (info->mask & RP_M_ATMACK)
		rp_atmack_set(h + info->offset[RP_HDR_ATMACK], v.orig);
	if (info->mask & RP_M_DETH)
		rp_deth_set(h + info->offset[RP_HDR_DETH], v.qkey, v.sqp);
	if (info->mask & RP_M_IMMDT)
		rp_immdt_set(h + info->offset[RP_HDR_IMMDT], v.imm);
	if (info->mask & RP_M_IETH)
		rp_ieth_set(h + info->offset[RP_HDR_IETH], v.ieth);
	for (i = 0; i < paylen; i++)
		h[info->length + i] = (uint8_t)(i * 7 + seed);
	rp_pkt_finish(buf, a, flen, true);
	return flen;
}

static void
check(const uint8_t *buf, uint32_t flen, const struct rp_pkt_addr *a,
      uint8_t op, int se, uint32_t qpn, int ackreq, uint32_t psn,
      uint32_t paylen, uint32_t seed)
{
	const struct rp_opcode_info *info = &rp_opcode[op];
	bool v4 = rp_gid_is_v4(a->sgid);
	struct hdr_vals v;
	struct rp_pkt p;
	uint32_t i, pad = -paylen & 3;

	memset(&p, 0x5a, sizeof(p));
	assert_int_equal(rp_pkt_parse(buf, flen, true, &p), 0);
	assert_int_equal(p.mask, info->mask);
	assert_int_equal(p.opcode, op);
	assert_int_equal(p.qpn, qpn & RP_QPN_MASK);
	assert_int_equal(p.psn, psn & RP_PSN_MASK);
	assert_int_equal(p.pad, pad);
	assert_int_equal(p.paylen, paylen);
	assert_int_equal(p.se, !!se);
	assert_int_equal(p.ackreq, !!ackreq);
	assert_int_equal(p.pkey, RP_DEFAULT_PKEY);
	assert_int_equal(p.ipver, v4 ? 4 : 6);
	assert_int_equal(p.ttl, a->ttl);
	assert_int_equal(p.tclass, a->tclass);
	assert_int_equal(p.sport, a->sport);
	assert_int_equal(p.l3_off, ETH_HLEN);
	assert_int_equal(p.bth_off, rp_pkt_l2l4_len(a));
	assert_int_equal(p.pay_off, p.bth_off + info->length);
	assert_int_equal(p.sr, 0);	/* built without RP_BTH_SR */
	assert_int_equal(p.rg, 0);	/* ... and without RP_BTH_RG */
	assert_memory_equal(p.smac, a->smac, 6);
	assert_memory_equal(p.dmac, a->dmac, 6);
	assert_memory_equal(p.sgid, a->sgid, 16);
	assert_memory_equal(p.dgid, a->dgid, 16);
	assert_ptr_equal(p.frame, buf);
	assert_int_equal(p.pay_off + paylen + pad + RP_ICRC_SIZE, flen);

	hdr_vals(&v, seed);
	if (p.mask & RP_M_RETH) {
		assert_int_equal(rp_pkt_reth_va(&p), v.va);
		assert_int_equal(rp_pkt_reth_rkey(&p), v.rkey);
		assert_int_equal(rp_pkt_reth_len(&p), v.rlen);
	}
	if (p.mask & RP_M_AETH) {
		assert_int_equal(rp_pkt_aeth_syn(&p), v.syn);
		assert_int_equal(rp_pkt_aeth_msn(&p), v.msn);
	}
	if (p.mask & RP_M_ATMETH) {
		assert_int_equal(rp_pkt_atmeth_va(&p), v.va);
		assert_int_equal(rp_pkt_atmeth_rkey(&p), v.rkey);
		assert_int_equal(rp_pkt_atmeth_swap_add(&p), v.swap);
		assert_int_equal(rp_pkt_atmeth_comp(&p), v.cmp);
	}
	if (p.mask & RP_M_ATMACK)
		assert_int_equal(rp_pkt_atmack_orig(&p), v.orig);
	if (p.mask & RP_M_DETH) {
		assert_int_equal(rp_pkt_deth_qkey(&p), v.qkey);
		assert_int_equal(rp_pkt_deth_sqp(&p), v.sqp);
	}
	if (p.mask & RP_M_IMMDT)
		assert_int_equal(rp_pkt_imm(&p), v.imm);
	if (p.mask & RP_M_IETH)
		assert_int_equal(rp_pkt_ieth_rkey(&p), v.ieth);
	for (i = 0; i < paylen; i++)
		assert_int_equal(rp_pkt_payload(&p)[i], (uint8_t)(i * 7 + seed));
	for (i = 0; i < pad; i++)
		assert_int_equal(rp_pkt_payload(&p)[paylen + i], 0);

	/* L3/L4 checksums as a NIC or kernel would check them */
	if (v4) {
		const struct rte_ipv4_hdr *ip = (const void *)(buf + ETH_HLEN);

		assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
		assert_int_equal(ip->version_ihl, 0x45);
		assert_int_equal(rte_be_to_cpu_16(ip->fragment_offset), 0x4000);
		assert_int_equal(rte_be_to_cpu_16(ip->packet_id), IP_ID(seed));
		assert_int_equal(rd_be16(buf + 12), 0x0800);
		assert_int_equal(rd_be16(buf + ETH_HLEN + 20 + 6), 0);
	} else {
		const struct rte_ipv6_hdr *ip = (const void *)(buf + ETH_HLEN);
		const struct rte_udp_hdr *udp = (const void *)(ip + 1);

		assert_int_equal(rd_be16(buf + 12), 0x86dd);
		assert_int_not_equal(udp->dgram_cksum, 0);
		assert_true(v6_udp_cksum_ok(buf + ETH_HLEN));
		assert_int_equal(rte_be_to_cpu_32(ip->vtc_flow),
				 6u << 28 | (uint32_t)a->tclass << 20 |
				 a->flow_label);
	}
}

static void
round_trip(const struct rp_pkt_addr *a)
{
	static const uint32_t pays[] = { 0, 1, 2, 3, 4, 61, 1027, 4096 };
	unsigned int op, i, n = 0;

	for (op = 0; op < 256; op++) {
		const struct rp_opcode_info *info = &rp_opcode[op];

		if (info->name == NULL)
			continue;
		for (i = 0; i < RTE_DIM(pays); i++) {
			uint32_t pay = pays[i], flen, seed = op * 16 + i;
			uint32_t qpn = 0x123456 + op, psn = 0xfffff0 + i;
			int se = !!(info->mask & RP_M_SE) && (i & 1);
			int ackreq = !(i & 2);

			if (!(info->mask & RP_M_PAYLOAD) && pay != 0)
				continue;
			if (info->mask & RP_M_CNP)
				pay = 16;
			flen = build(frame_buf, a, (uint8_t)op, se, qpn,
				     ackreq, psn, pay, seed);
			assert_int_equal(flen, rp_pkt_frame_len(a, (uint8_t)op,
								pay));
			check(frame_buf, flen, a, (uint8_t)op, se, qpn, ackreq,
			      psn, pay, seed);
			n++;
		}
	}
	assert_true(n > 100);
}

static void
test_round_trip_v4(void **state)
{
	(void)state;
	assert_int_equal(rp_pkt_l2l4_len(&addr4), 42);
	assert_int_equal(rp_pkt_frame_len(&addr4, RP_OP_SEND_ONLY, 61),
			 42 + 12 + 61 + 3 + 4);
	round_trip(&addr4);
}

static void
test_round_trip_v6(void **state)
{
	(void)state;
	assert_int_equal(rp_pkt_l2l4_len(&addr6), 62);
	assert_int_equal(rp_pkt_frame_len(&addr6, RP_OP_WRITE_ONLY_IMM, 2),
			 62 + 32 + 2 + 2 + 4);
	round_trip(&addr6);
}

/*
 * Every captured frame, rebuilt from its parsed fields through the
 * setters, must come out byte for byte identical: proves the builder,
 * IPv4 checksum, pad handling and ICRC are wire-compatible with rxe.
 */
static void
rebuild_frame(const char *name, int no, const uint8_t *cap, uint32_t len)
{
	const struct rp_opcode_info *info;
	struct rp_pkt_addr a;
	struct rp_pkt p;
	uint32_t flen;
	uint16_t bth;
	uint8_t *h;

	assert_int_equal(rp_pkt_parse(cap, len, true, &p), 0);
	info = &rp_opcode[p.opcode];
	memset(&a, 0, sizeof(a));
	memcpy(a.smac, p.smac, 6);
	memcpy(a.dmac, p.dmac, 6);
	memcpy(a.sgid, p.sgid, 16);
	memcpy(a.dgid, p.dgid, 16);
	a.sport = p.sport;
	a.ttl = p.ttl;
	a.tclass = p.tclass;
	flen = rp_pkt_frame_len(&a, p.opcode, p.paylen);
	assert_int_equal(flen, len);
	memset(frame_buf, 0xee, flen);
	bth = rp_pkt_build(frame_buf, &a, p.opcode, p.se, p.qpn, p.ackreq,
			   p.psn, p.paylen);
	if (p.ipver == 4)
		rp_pkt_set_ip_id(frame_buf, (uint16_t)rd_be16(cap + ETH_HLEN + 4));
	assert_int_equal(bth, p.bth_off);
	h = frame_buf + bth;
	if (p.mask & RP_M_RETH)
		rp_reth_set(h + info->offset[RP_HDR_RETH], rp_pkt_reth_va(&p),
			    rp_pkt_reth_rkey(&p), rp_pkt_reth_len(&p));
	if (p.mask & RP_M_AETH)
		rp_aeth_set(h + info->offset[RP_HDR_AETH], rp_pkt_aeth_syn(&p),
			    rp_pkt_aeth_msn(&p));
	if (p.mask & RP_M_ATMETH)
		rp_atmeth_set(h + info->offset[RP_HDR_ATMETH],
			      rp_pkt_atmeth_va(&p), rp_pkt_atmeth_rkey(&p),
			      rp_pkt_atmeth_swap_add(&p),
			      rp_pkt_atmeth_comp(&p));
	if (p.mask & RP_M_ATMACK)
		rp_atmack_set(h + info->offset[RP_HDR_ATMACK],
			      rp_pkt_atmack_orig(&p));
	if (p.mask & RP_M_DETH)
		rp_deth_set(h + info->offset[RP_HDR_DETH], rp_pkt_deth_qkey(&p),
			    rp_pkt_deth_sqp(&p));
	if (p.mask & RP_M_IMMDT)
		rp_immdt_set(h + info->offset[RP_HDR_IMMDT], rp_pkt_imm(&p));
	if (p.mask & RP_M_IETH)
		rp_ieth_set(h + info->offset[RP_HDR_IETH], rp_pkt_ieth_rkey(&p));
	memcpy(h + info->length, rp_pkt_payload(&p), p.paylen);
	rp_pkt_finish(frame_buf, &a, flen, true);
	if (memcmp(frame_buf, cap, len) != 0) {
		uint32_t i = 0;

		while (frame_buf[i] == cap[i])
			i++;
		fail_msg("%s #%d: rebuilt frame differs at byte %u "
			 "(0x%02x, captured 0x%02x)", name, no, i,
			 frame_buf[i], cap[i]);
	}
}

static void
test_rebuild_captures(void **state)
{
	char **names;
	int nf, i, j, total = 0;

	(void)state;
	nf = tp_list(data_dir, ".pcap", &names);
	assert_true(nf >= 19);
	for (i = 0; i < nf; i++) {
		struct tp_frame *fr;
		int n = tp_load(data_dir, names[i], &fr);

		assert_true(n > 0);
		for (j = 0; j < n; j++)
			rebuild_frame(names[i], j + 1, fr[j].data, fr[j].len);
		total += n;
		tp_frames_free(fr, n);
	}
	tp_list_free(names, nf);
	assert_int_equal(total, 296);
}

/* The one the brief names: packet 1 of rc-send-s64, spelled out. */
static void
test_rebuild_rc_send_s64(void **state)
{
	struct rp_pkt_addr a = {
		.smac = { 0x52, 0x54, 0x00, 0xc0, 0x02, 0x01 },
		.dmac = { 0x52, 0x54, 0x00, 0xc0, 0x02, 0x02 },
		.sgid = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 1 },
		.dgid = { [10] = 0xff, [11] = 0xff, 192, 0, 2, 2 },
		.sport = 49441,
		.ttl = 64,
		.tclass = 0,
	};
	struct tp_frame *fr;
	uint32_t flen;
	uint16_t bth;
	int n;

	(void)state;
	n = tp_load(data_dir, "rc-send-s64.pcap", &fr);
	assert_true(n > 0);
	flen = rp_pkt_frame_len(&a, RP_OP_SEND_ONLY, 64);
	assert_int_equal(flen, fr[0].len);
	bth = rp_pkt_build(frame_buf, &a, RP_OP_SEND_ONLY, 0, 0x11, 1,
			   6711880, 64);
	rp_pkt_set_ip_id(frame_buf, (uint16_t)rd_be16(fr[0].data + ETH_HLEN + 4));
	memcpy(frame_buf + bth + 12, fr[0].data + bth + 12, 64);
	rp_pkt_finish(frame_buf, &a, flen, true);
	assert_memory_equal(frame_buf, fr[0].data, flen);
	/* with ip_id 0 (the builder's) only id, IP checksum and ICRC differ */
	rp_pkt_build(frame_buf, &a, RP_OP_SEND_ONLY, 0, 0x11, 1, 6711880, 64);
	rp_pkt_finish(frame_buf, &a, flen, true);
	assert_memory_equal(frame_buf, fr[0].data, ETH_HLEN + 4);
	assert_memory_equal(frame_buf + ETH_HLEN + 6, fr[0].data + ETH_HLEN + 6,
			    4);
	assert_memory_equal(frame_buf + ETH_HLEN + 12,
			    fr[0].data + ETH_HLEN + 12, flen - ETH_HLEN - 12 - 4);
	tp_frames_free(fr, n);
}

/* ---- truncation: every length from 0 to full - 1 is an error */

static void
truncate_all(const uint8_t *frame, uint32_t flen)
{
	uint32_t l;

	for (l = 0; l < flen; l++) {
		/* an exact-size copy, so ASan sees any overread */
		uint8_t *b = malloc(l ? l : 1);
		struct rp_pkt p;

		memcpy(b, frame, l);
		if (rp_pkt_parse(b, l, true, &p) == 0 ||
		    rp_pkt_parse(b, l, false, &p) == 0)
			fail_msg("truncated to %u of %u parsed", l, flen);
		free(b);
	}
	assert_int_equal(rp_pkt_parse(frame, flen, true, &(struct rp_pkt){ 0 }),
			 0);
}

/* Insert an 802.1Q tag after the MACs. */
static uint32_t
add_vlan(uint8_t *dst, const uint8_t *src, uint32_t len)
{
	memcpy(dst, src, 12);
	dst[12] = 0x81;
	dst[13] = 0x00;
	dst[14] = 0x20;		/* PCP 1, VID 5 */
	dst[15] = 0x05;
	memcpy(dst + 16, src + 12, len - 12);
	return len + 4;
}

static void
test_truncation(void **state)
{
	static uint8_t vlan[FRAME_MAX];
	struct tp_frame *fr;
	uint32_t flen;
	int n;

	(void)state;
	flen = build(frame_buf, &addr4, RP_OP_SEND_ONLY_IMM, 1, 5, 1, 9, 13, 1);
	truncate_all(frame_buf, flen);
	flen = add_vlan(vlan, frame_buf, flen);
	truncate_all(vlan, flen);
	flen = build(frame_buf, &addr6, RP_OP_WRITE_ONLY_IMM, 0, 5, 1, 9, 5, 2);
	truncate_all(frame_buf, flen);
	flen = build(frame_buf, &addr4, RP_OP_ACK, 0, 5, 0, 9, 0, 3);
	truncate_all(frame_buf, flen);
	flen = build(frame_buf, &addr6, RP_OP_ATOMIC_ACK, 0, 5, 0, 9, 0, 4);
	truncate_all(frame_buf, flen);
	n = tp_load(data_dir, "rdmacm-rping-s64.pcap", &fr);
	assert_true(n > 0);
	truncate_all(fr[0].data, fr[0].len);
	tp_frames_free(fr, n);
}

/* ---- rejections */

static void
test_vlan_and_eth_padding(void **state)
{
	static uint8_t vlan[FRAME_MAX];
	struct rp_pkt p;
	uint32_t flen, vlen;

	(void)state;
	flen = build(frame_buf, &addr4, RP_OP_ACK, 0, 0x77, 0, 0x1000, 0, 9);
	vlen = add_vlan(vlan, frame_buf, flen);
	assert_int_equal(rp_pkt_parse(vlan, vlen, true, &p), 0);
	assert_int_equal(p.l3_off, ETH_HLEN + 4);
	assert_int_equal(p.bth_off, 42 + 4);
	assert_int_equal(p.opcode, RP_OP_ACK);
	assert_int_equal(p.qpn, 0x77);
	assert_int_equal(rp_pkt_aeth_msn(&p), (9u * 7919u) & 0xffffff);
	/* QinQ is not accepted */
	vlan[12] = 0x88;
	vlan[13] = 0xa8;
	assert_int_equal(rp_pkt_parse(vlan, vlen, true, &p), RP_PKT_NOT_ROCE);
	/* two stacked 802.1Q tags are not accepted either */
	vlen = add_vlan(vlan, frame_buf, flen);
	memmove(vlan + 16, vlan + 12, vlen - 12);
	vlan[12] = 0x81;
	vlan[13] = 0x00;
	assert_int_equal(rp_pkt_parse(vlan, vlen + 4, true, &p),
			 RP_PKT_NOT_ROCE);

	/* Ethernet padding past the IP total length is ignored */
	memset(frame_buf + flen, 0xab, 20);
	assert_int_equal(rp_pkt_parse(frame_buf, flen + 20, true, &p), 0);
	assert_int_equal(p.paylen, 0);
	flen = build(frame_buf, &addr6, RP_OP_SEND_ONLY, 0, 0x77, 0, 1, 3, 9);
	memset(frame_buf + flen, 0xab, 7);
	assert_int_equal(rp_pkt_parse(frame_buf, flen + 7, true, &p), 0);
	assert_int_equal(p.paylen, 3);
	assert_int_equal(p.pad, 1);
}

static void
test_not_roce(void **state)
{
	static const uint8_t arp[60] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x01,
		0x08, 0x06,
		0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01,
		0x02, 0, 0, 0, 0, 0x01, 192, 0, 2, 1,
		0, 0, 0, 0, 0, 0, 192, 0, 2, 2,
	};
	uint8_t *ip = frame_buf + ETH_HLEN;
	struct rp_pkt p;
	uint32_t flen;

	(void)state;
	assert_int_equal(rp_pkt_parse(arp, sizeof(arp), true, &p),
			 RP_PKT_NOT_ROCE);
	assert_int_equal(rp_pkt_parse(arp, 0, true, &p), RP_PKT_NOT_ROCE);

#define BUILD4() (flen = build(frame_buf, &addr4, RP_OP_SEND_ONLY, 0, 1, 1, \
			       2, 8, 3))
#define PARSE() rp_pkt_parse(frame_buf, flen, true, &p)
	BUILD4();
	assert_int_equal(PARSE(), 0);
	wr_be16(ip + 20 + 2, 4792);			/* UDP dport */
	assert_int_equal(PARSE(), RP_PKT_NOT_ROCE);
	BUILD4();
	wr_be16(ip + 20, 4791);				/* sport 4791 ... */
	wr_be16(ip + 20 + 2, 4790);			/* ... dport not */
	assert_int_equal(PARSE(), RP_PKT_NOT_ROCE);
	BUILD4();
	ip[9] = 6;					/* TCP */
	assert_int_equal(PARSE(), RP_PKT_NOT_ROCE);
	BUILD4();
	ip[6] |= 0x20;					/* MF */
	assert_int_equal(PARSE(), RP_PKT_NOT_ROCE);
	BUILD4();
	ip[7] = 1;					/* offset 8 */
	assert_int_equal(PARSE(), RP_PKT_NOT_ROCE);
	BUILD4();
	ip[0] = 0x55;					/* version 5 */
	assert_int_equal(PARSE(), RP_PKT_NOT_ROCE);
	BUILD4();
	ip[0] = 0x44;					/* IHL 4 */
	assert_int_equal(PARSE(), RP_PKT_NOT_ROCE);
	BUILD4();
	ip[0] = 0x4f;			/* IHL 15: UDP header beyond frame */
	assert_int_equal(rp_pkt_parse(frame_buf, 14 + 60 + 4, true, &p),
			 RP_PKT_NOT_ROCE);
	BUILD4();
	frame_buf[13] = 0xdd;			/* 0x08dd: unknown type */
	assert_int_equal(PARSE(), RP_PKT_NOT_ROCE);
	BUILD4();
	frame_buf[12] = 0x86;			/* IPv6 type, IPv4 header */
	frame_buf[13] = 0xdd;
	assert_int_equal(PARSE(), RP_PKT_NOT_ROCE);

	flen = build(frame_buf, &addr6, RP_OP_SEND_ONLY, 0, 1, 1, 2, 8, 3);
	assert_int_equal(PARSE(), 0);
	ip[6] = 0;					/* hop-by-hop */
	assert_int_equal(PARSE(), RP_PKT_NOT_ROCE);
	ip[6] = 17;
	ip[0] = 0x4b;					/* version 4 */
	assert_int_equal(PARSE(), RP_PKT_NOT_ROCE);
}

/* Rewrite the IP/UDP lengths of a v4 frame whose L3 size changed. */
static void
fix_v4(uint8_t *buf, uint32_t flen)
{
	uint8_t *ip = buf + ETH_HLEN;

	wr_be16(ip + 2, flen - ETH_HLEN);
	wr_be16(ip + 20 + 4, flen - ETH_HLEN - 20);
	rp_icrc_put(ip, flen - ETH_HLEN - RP_ICRC_SIZE);
}

static void
test_bad(void **state)
{
	static const uint8_t bad_ops[] = {
		0x15, 0x18, 0x1f, 0x2c, 0x2f, 0x33, 0x36, 0x40, 0x45, 0x60, 0x63,
		0x66, 0x80, 0x82, 0xc0, 0xff,
	};
	uint8_t *ip = frame_buf + ETH_HLEN, *bth = ip + 28;
	struct rp_pkt p;
	unsigned int i;
	uint32_t flen;

	(void)state;
	for (i = 0; i < RTE_DIM(bad_ops); i++) {
		BUILD4();
		bth[0] = bad_ops[i];
		rp_icrc_put(ip, flen - ETH_HLEN - RP_ICRC_SIZE);
		assert_int_equal(PARSE(), RP_PKT_BAD_OP);
		assert_int_equal(rp_pkt_parse(frame_buf, flen, false, &p),
				 RP_PKT_BAD_OP);
	}
	for (i = 1; i < 16; i++) {
		BUILD4();
		bth[1] |= (uint8_t)i;			/* TVer */
		rp_icrc_put(ip, flen - ETH_HLEN - RP_ICRC_SIZE);
		assert_int_equal(PARSE(), RP_PKT_BAD);
	}
	BUILD4();
	frame_buf[flen - 1] ^= 0x10;			/* ICRC */
	assert_int_equal(PARSE(), RP_PKT_BAD_ICRC);
	assert_int_equal(rp_pkt_parse(frame_buf, flen, false, &p), 0);
	BUILD4();
	frame_buf[flen - 6] ^= 0x01;			/* payload */
	assert_int_equal(PARSE(), RP_PKT_BAD_ICRC);

	BUILD4();
	wr_be16(ip + 24, rd_be16(ip + 24) - 4);		/* UDP length */
	assert_int_equal(PARSE(), RP_PKT_BAD);
	BUILD4();
	wr_be16(ip + 2, flen - ETH_HLEN + 4);		/* IP len > frame */
	assert_int_equal(PARSE(), RP_PKT_BAD);
	BUILD4();
	wr_be16(ip + 2, 20 + 7);			/* IP len < UDP hdr */
	assert_int_equal(PARSE(), RP_PKT_BAD);
	BUILD4();
	wr_be16(ip + 2, 10);				/* IP len < IHL */
	assert_int_equal(PARSE(), RP_PKT_BAD);
	BUILD4();
	wr_be16(ip + 24, 7);				/* UDP len < 8 */
	wr_be16(ip + 2, 27);
	assert_int_equal(PARSE(), RP_PKT_BAD);

	/* BTH + ICRC do not fit */
	BUILD4();
	fix_v4(frame_buf, ETH_HLEN + 28 + 12);
	assert_int_equal(rp_pkt_parse(frame_buf, ETH_HLEN + 28 + 12, true, &p),
			 RP_PKT_BAD);
	/* transport length not a multiple of 4 */
	BUILD4();
	flen += 1;
	fix_v4(frame_buf, flen);
	assert_int_equal(PARSE(), RP_PKT_BAD);
	/* too short for the opcode's headers: SEND_ONLY 0 B as WRITE_ONLY */
	flen = build(frame_buf, &addr4, RP_OP_SEND_ONLY, 0, 1, 1, 2, 0, 3);
	bth[0] = RP_OP_WRITE_ONLY;
	rp_icrc_put(ip, flen - ETH_HLEN - RP_ICRC_SIZE);
	assert_int_equal(PARSE(), RP_PKT_BAD);
	/* pad larger than what follows the headers */
	flen = build(frame_buf, &addr4, RP_OP_SEND_ONLY, 0, 1, 1, 2, 0, 3);
	bth[1] |= 3 << RP_BTH_PAD_SHIFT;
	rp_icrc_put(ip, flen - ETH_HLEN - RP_ICRC_SIZE);
	assert_int_equal(PARSE(), RP_PKT_BAD);
	/* payload on an ACK */
	flen = build(frame_buf, &addr4, RP_OP_ACK, 0, 1, 0, 2, 0, 3);
	memmove(frame_buf + flen, frame_buf + flen - 4, 4);
	memset(frame_buf + flen - 4, 0, 4);
	flen += 4;
	fix_v4(frame_buf, flen);
	assert_int_equal(PARSE(), RP_PKT_BAD);
	/* pad bytes on an ACK */
	bth[1] |= 3 << RP_BTH_PAD_SHIFT;
	rp_icrc_put(ip, flen - ETH_HLEN - RP_ICRC_SIZE);
	assert_int_equal(PARSE(), RP_PKT_BAD);
	/* and an ACK that is right is accepted */
	flen = build(frame_buf, &addr4, RP_OP_ACK, 0, 1, 0, 2, 0, 3);
	assert_int_equal(PARSE(), 0);
	/* a CNP is accepted and marked */
	flen = build(frame_buf, &addr6, RP_OP_CNP | 1, 0, 1, 0, 0, 16, 3);
	assert_int_equal(PARSE(), 0);
	assert_true(p.mask & RP_M_CNP);
	assert_false(p.mask & (RP_M_REQ | RP_M_RESP));
#undef BUILD4
#undef PARSE
}

/* rp_pkt_finish can be re-run after the payload changed. */
static void
test_finish_again(void **state)
{
	struct rp_pkt p;
	uint32_t flen;

	(void)state;
	flen = build(frame_buf, &addr6, RP_OP_SEND_ONLY, 1, 9, 1, 9, 9, 9);
	frame_buf[rp_pkt_l2l4_len(&addr6) + 12] ^= 0xff;
	assert_int_equal(rp_pkt_parse(frame_buf, flen, true, &p),
			 RP_PKT_BAD_ICRC);
	rp_pkt_finish(frame_buf, &addr6, flen, true);
	assert_int_equal(rp_pkt_parse(frame_buf, flen, true, &p), 0);
	assert_true(v6_udp_cksum_ok(frame_buf + ETH_HLEN));
}

/*
 * UDP source port: rxe's, bit for bit, for a connected QP.  In every RC
 * capture both QPs are 0x11 (each direction's BTH names the other's), and
 * rxe derives the port from the QP pair as rdma_get_udp_sport() does.
 */
static void
test_udp_sport(void **state)
{
	struct tp_frame *fr;
	struct rp_pkt p;
	uint32_t l, r;
	int n, i;

	(void)state;
	n = tp_load(data_dir, "rc-read-s4096-multi.pcap", &fr);
	assert_true(n > 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(rp_pkt_parse(fr[i].data, fr[i].len, true, &p), 0);
		assert_int_equal(p.qpn, 0x11);
		assert_int_equal(rp_pkt_udp_sport(0, 0x11, p.qpn), p.sport);
	}
	tp_frames_free(fr, n);
	assert_int_equal(rp_pkt_udp_sport(0, 0x11, 0x11), 49441);

	/* A flow label decides alone: its 20 bits folded into 14. */
	assert_int_equal(rp_pkt_udp_sport(0xabcde, 1, 2),
			 0xc000 | ((0xabcde & 0x3fff) ^ (0xabcde >> 14)));
	assert_int_equal(rp_pkt_udp_sport(0xabcde, 7, 9),
			 rp_pkt_udp_sport(0xabcde, 1, 2));
	assert_int_equal(rp_pkt_udp_sport(0xfff00000u | 5, 1, 2),
			 rp_pkt_udp_sport(5, 1, 2));
	/* Symmetric, so both ends of a connection agree; never below
	 * 0xc000 (never 0), GSI and 24-bit QPNs included. */
	for (l = 1; l < 0x1000000; l = l * 3 + 1) {
		for (r = 0; r < 0x1000000; r = r * 5 + 1) {
			uint16_t s = rp_pkt_udp_sport(0, l, r);

			assert_true(s >= 0xc000);
			assert_int_equal(s, rp_pkt_udp_sport(0, r, l));
		}
	}
}

/* Multicast GIDs and the Ethernet group addresses they map to. */
static void
test_gid_mcast(void **state)
{
	static const uint8_t v4m[16] = { [10] = 0xff, [11] = 0xff,
					 239, 255, 1, 2 };
	static const uint8_t v4m0[16] = { [10] = 0xff, [11] = 0xff,
					  224, 0, 0, 1 };
	static const uint8_t v4u[16] = { [10] = 0xff, [11] = 0xff,
					 192, 0, 2, 1 };
	static const uint8_t v4b[16] = { [10] = 0xff, [11] = 0xff,
					 255, 255, 255, 255 };
	static const uint8_t v6m[16] = { 0xff, 0x02, [12] = 0xde, 0xad,
					 0xbe, 0xef };
	static const uint8_t v6u[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	uint8_t mac[6];

	(void)state;
	assert_true(rp_gid_is_mcast(v4m));
	assert_true(rp_gid_is_mcast(v4m0));
	assert_false(rp_gid_is_mcast(v4u));
	assert_false(rp_gid_is_mcast(v4b));
	assert_true(rp_gid_is_mcast(v6m));
	assert_false(rp_gid_is_mcast(v6u));
	rp_gid_mcast_mac(v4m, mac);
	assert_memory_equal(mac, "\x01\x00\x5e\x7f\x01\x02", 6);
	rp_gid_mcast_mac(v4m0, mac);
	assert_memory_equal(mac, "\x01\x00\x5e\x00\x00\x01", 6);
	rp_gid_mcast_mac(v6m, mac);
	assert_memory_equal(mac, "\x33\x33\xde\xad\xbe\xef", 6);
}

/* The IPv4 identification lands, checksummed; IPv6 frames are untouched. */
static void
test_ip_id(void **state)
{
	static uint8_t before[FRAME_MAX];
	const struct rte_ipv4_hdr *ip = (const void *)(frame_buf + ETH_HLEN);
	struct rp_pkt p;
	uint32_t flen;

	(void)state;
	flen = rp_pkt_frame_len(&addr4, RP_OP_ACK, 0);
	rp_pkt_build(frame_buf, &addr4, RP_OP_ACK, 0, 5, 0, 77, 0);
	assert_int_equal(ip->packet_id, 0);
	rp_pkt_set_ip_id(frame_buf, 0xbeef);
	rp_pkt_finish(frame_buf, &addr4, flen, true);
	assert_int_equal(rte_be_to_cpu_16(ip->packet_id), 0xbeef);
	assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	assert_int_equal(rp_pkt_parse(frame_buf, flen, true, &p), 0);
	assert_int_equal(p.ttl, addr4.ttl);

	flen = rp_pkt_frame_len(&addr6, RP_OP_ACK, 0);
	rp_pkt_build(frame_buf, &addr6, RP_OP_ACK, 0, 5, 0, 77, 0);
	memcpy(before, frame_buf, flen);
	rp_pkt_set_ip_id(frame_buf, 0xbeef);
	assert_memory_equal(before, frame_buf, flen);
}

/*
 * A frame in three pieces (its payload sent from where it lies) gets the
 * bytes the same frame in one piece gets: lengths, IPv4 header checksum,
 * pad, ICRC, IPv6's UDP checksum.
 */
static void
finish_split_one(const struct rp_pkt_addr *a, uint8_t op, uint32_t n,
		 uint16_t id)
{
	static uint8_t whole[FRAME_MAX], hdr[FRAME_MAX], pay[FRAME_MAX];
	uint32_t flen = rp_pkt_frame_len(a, op, n), pad = (4 - n % 4) % 4;
	uint32_t hlen = flen - n - pad - 4;
	uint8_t trailer[8];
	struct rp_pkt p;

	for (uint32_t k = 0; k < n; k++)
		pay[k] = (uint8_t)(k * 7 + id);
	memset(trailer, 0x77, sizeof(trailer));
	rp_pkt_build(whole, a, op, 1, 0x123456, 1, 0xabcdef, n);
	rp_pkt_set_ip_id(whole, id);
	memset(whole + rp_pkt_l2l4_len(a) + 12, (uint8_t)id,
	       hlen - rp_pkt_l2l4_len(a) - 12);	/* extended headers */
	memcpy(hdr, whole, hlen);
	memcpy(whole + hlen, pay, n);
	rp_pkt_finish(whole, a, flen, true);
	rp_pkt_finish_split(hdr, hlen, pay, n, trailer, true);

	assert_memory_equal(hdr, whole, hlen);
	assert_memory_equal(trailer, whole + hlen + n, pad + 4);
	assert_int_equal(trailer[pad + 4], 0x77);	/* nothing past it */
	assert_int_equal(rp_pkt_parse(whole, flen, true, &p), 0);
	if (!rp_gid_is_v4(a->sgid))
		assert_true(v6_udp_cksum_ok(whole + ETH_HLEN));
}

static void
test_finish_split(void **state)
{
	static const uint32_t lens[] = { 1, 2, 3, 4, 511, 512, 513, 1024,
					 4093, 4096 };
	static const uint8_t ops[] = { RP_OP_WRITE_FIRST, RP_OP_SEND_MIDDLE,
				       RP_OP_READ_RESP_LAST,
				       RP_OP_SEND_ONLY_IMM };

	(void)state;
	for (uint32_t i = 0; i < RTE_DIM(lens); i++) {
		for (uint32_t o = 0; o < RTE_DIM(ops); o++) {
			finish_split_one(&addr4, ops[o], lens[i],
					 (uint16_t)(i * 31 + o));
			finish_split_one(&addr6, ops[o], lens[i],
					 (uint16_t)(i * 31 + o));
		}
	}
}

/*
 * icrc false (a memory link toward a peer that said RP_BTH_NC): the same
 * frame, its ICRC zeros, in one piece or three.  A parser that may skip
 * (RP_PKT_ICRC_NC) takes it only when its BTH says NC; one that checks
 * every ICRC never does.
 */
static void
icrc_nc_one(const struct rp_pkt_addr *a, uint32_t n)
{
	static uint8_t whole[FRAME_MAX], hdr[FRAME_MAX], pay[FRAME_MAX];
	uint32_t flen = rp_pkt_frame_len(a, RP_OP_WRITE_ONLY, n);
	uint32_t pad = (4 - n % 4) % 4, hlen = flen - n - pad - 4;
	uint8_t trailer[8], *bth;
	struct rp_pkt p;
	uint16_t off;

	for (uint32_t k = 0; k < n; k++)
		pay[k] = (uint8_t)(k * 3 + 1);
	off = rp_pkt_build(whole, a, RP_OP_WRITE_ONLY, 0, 0x123456, 1,
			   0x10, n);
	bth = whole + off;
	memcpy(whole + hlen, pay, n);
	rp_pkt_finish(whole, a, flen, false);
	static const uint8_t zero[4];
	assert_memory_equal(whole + flen - 4, zero, 4);
	assert_int_equal(rp_pkt_parse(whole, flen, RP_PKT_ICRC_CHECK, &p),
			 RP_PKT_BAD_ICRC);
	assert_int_equal(rp_pkt_parse(whole, flen, RP_PKT_ICRC_CHECK |
				      RP_PKT_ICRC_NC, &p), RP_PKT_BAD_ICRC);
	rp_bth_set_nc(bth);
	assert_int_equal(rp_pkt_parse(whole, flen, RP_PKT_ICRC_CHECK, &p),
			 RP_PKT_BAD_ICRC);
	assert_int_equal(rp_pkt_parse(whole, flen, RP_PKT_ICRC_CHECK |
				      RP_PKT_ICRC_NC, &p), 0);
	assert_int_equal(p.nc, 1);
	assert_int_equal(p.psn, 0x10);
	assert_int_equal(p.paylen, n);
	/* The same bytes from three pieces, NC and all. */
	memcpy(hdr, whole, hlen);
	memset(trailer, 0x77, sizeof(trailer));
	rp_pkt_finish_split(hdr, hlen, pay, n, trailer, false);
	rp_pkt_finish(whole, a, flen, false);
	assert_memory_equal(hdr, whole, hlen);
	assert_memory_equal(trailer, whole + hlen + n, pad + 4);
	assert_int_equal(trailer[pad + 4], 0x77);
	/* With its ICRC, a frame saying NC passes either parser. */
	rp_pkt_finish(whole, a, flen, true);
	assert_int_equal(rp_pkt_parse(whole, flen, RP_PKT_ICRC_CHECK, &p), 0);
	assert_int_equal(p.nc, 1);
}

static void
test_icrc_nc(void **state)
{
	(void)state;
	for (uint32_t n = 1; n <= 9; n += 4) {
		icrc_nc_one(&addr4, n);
		icrc_nc_one(&addr6, n);
	}
	icrc_nc_one(&addr4, 1024);
	icrc_nc_one(&addr6, 1024);
}

/*
 * Message shapes, from the header sizes IBTA gives (BTH 12, RETH 16, AETH
 * 4, ImmDt 4, ICRC 4) and Ethernet 14 + IPv4 20 + UDP 8.
 */
static void
test_msg_shape(void **state)
{
	struct rp_msg_shape s;

	(void)state;
	assert_int_equal(rp_msg_shape(RP_MSG_SEND, 64, 1024, &s), 0);
	assert_int_equal(s.frames, 1);
	assert_int_equal(s.first, 42 + 12 + 64 + 4);
	assert_int_equal(s.bytes, s.first);
	/* 1 byte: padded to 4 */
	assert_int_equal(rp_msg_shape(RP_MSG_SEND_IMM, 1, 1024, &s), 0);
	assert_int_equal(s.first, 42 + 12 + 4 + 4 + 4);
	assert_int_equal(rp_msg_shape(RP_MSG_SEND, 0, 256, &s), 0);
	assert_int_equal(s.frames, 1);
	assert_int_equal(s.first, 42 + 12 + 4);
	/* 64 KiB WRITE at 4096: a RETH on the first of 16 */
	assert_int_equal(rp_msg_shape(RP_MSG_WRITE, 65536, 4096, &s), 0);
	assert_int_equal(s.frames, 16);
	assert_int_equal(s.first, 42 + 12 + 16 + 4096 + 4);
	assert_int_equal(s.middle, 42 + 12 + 4096 + 4);
	assert_int_equal(s.last, 42 + 12 + 4096 + 4);
	assert_int_equal(s.bytes, 16ull * (42 + 12 + 4096 + 4) + 16);
	/* WRITE with immediate: ImmDt on the last, which is short */
	assert_int_equal(rp_msg_shape(RP_MSG_WRITE_IMM, 2500, 1024, &s), 0);
	assert_int_equal(s.frames, 3);
	assert_int_equal(s.last, 42 + 12 + 4 + 452 + 4);
	/* READ responses: AETH on the first and the last */
	assert_int_equal(rp_msg_shape(RP_MSG_READ, 65536, 1024, &s), 0);
	assert_int_equal(s.frames, 64);
	assert_int_equal(s.first, 42 + 12 + 4 + 1024 + 4);
	assert_int_equal(s.middle, 42 + 12 + 1024 + 4);
	assert_int_equal(s.last, 42 + 12 + 4 + 1024 + 4);
	/* FETCH_ADD: BTH + AtomicETH 28 */
	assert_int_equal(rp_msg_shape(RP_MSG_ATOMIC, 8, 1024, &s), 0);
	assert_int_equal(s.frames, 1);
	assert_int_equal(s.first, 42 + 12 + 28 + 4);
	assert_int_equal(rp_msg_shape(RP_MSG_READ, 100, 1000, &s), -EINVAL);
	assert_int_equal(rp_msg_shape((enum rp_msg_kind)99, 100, 1024, &s),
			 -EINVAL);
}

/*
 * rp_pkt_out_class() over every opcode built for IPv4 and IPv6: RC ACKs by
 * their syndrome, READ responses and atomic ACKs responses, everything
 * else other; a frame cut before the AETH, another UDP port and another
 * ether type are other.
 */
static enum rp_pkt_out
expect_class(uint8_t op, uint8_t syn)
{
	if (op == RP_OP_ACK)
		return (syn & RP_AETH_TYPE_MASK) == RP_AETH_ACK ?
			RP_PKT_OUT_ACK : RP_PKT_OUT_RESPONSE;
	if ((op >= RP_OP_READ_RESP_FIRST && op <= RP_OP_READ_RESP_ONLY) ||
	    op == RP_OP_ATOMIC_ACK)
		return RP_PKT_OUT_RESPONSE;
	return RP_PKT_OUT_OTHER;
}

static void
out_class(const struct rp_pkt_addr *a)
{
	static const uint8_t syns[] = { 0x00, 0x1f, 0x20, 0x3f, 0x60, 0x64 };
	unsigned int op, i, n = 0;

	for (op = 0; op < 256; op++) {
		const struct rp_opcode_info *info = &rp_opcode[op];
		uint32_t pay = info->mask & RP_M_CNP ? 16 : 0, flen, bth;

		if (info->name == NULL)
			continue;
		for (i = 0; i < RTE_DIM(syns); i++) {
			flen = build(frame_buf, a, (uint8_t)op, 0, 0x12,
				     1, 7, pay, op);
			bth = rp_pkt_l2l4_len(a);
			if (info->mask & RP_M_AETH)
				frame_buf[bth + info->offset[RP_HDR_AETH]] =
					syns[i];
			assert_int_equal(rp_pkt_out_class(frame_buf, flen),
					 (op & 0xe0) == RP_OP_RC ?
					 expect_class((uint8_t)op, syns[i]) :
					 RP_PKT_OUT_OTHER);
			n++;
			if (op != RP_OP_ACK)
				continue;
			/* cut before the syndrome: not read */
			assert_int_equal(rp_pkt_out_class(frame_buf, bth + 12),
					 RP_PKT_OUT_OTHER);
			/* another UDP port */
			wr_be16(frame_buf + bth - 6, 4792);
			assert_int_equal(rp_pkt_out_class(frame_buf, flen),
					 RP_PKT_OUT_OTHER);
			/* ARP */
			wr_be16(frame_buf + 12, 0x0806);
			assert_int_equal(rp_pkt_out_class(frame_buf, flen),
					 RP_PKT_OUT_OTHER);
		}
	}
	assert_true(n > 100);
	assert_int_equal(rp_pkt_out_class(frame_buf, 10), RP_PKT_OUT_OTHER);
}

static void
test_out_class(void **state)
{
	(void)state;
	out_class(&addr4);
	out_class(&addr6);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_v4),
		cmocka_unit_test(test_round_trip_v6),
		cmocka_unit_test(test_rebuild_rc_send_s64),
		cmocka_unit_test(test_rebuild_captures),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_vlan_and_eth_padding),
		cmocka_unit_test(test_not_roce),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_finish_again),
		cmocka_unit_test(test_udp_sport),
		cmocka_unit_test(test_gid_mcast),
		cmocka_unit_test(test_ip_id),
		cmocka_unit_test(test_finish_split),
		cmocka_unit_test(test_icrc_nc),
		cmocka_unit_test(test_msg_shape),
		cmocka_unit_test(test_out_class),
	};

	if (argc > 1)
		data_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
