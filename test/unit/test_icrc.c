/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ICRC and parser against the kernel rxe captures in test/data/rxe (every
 * packet there carries a correct ICRC): every frame checks and parses, the
 * parsed fields match the .txt listings, one-byte corruption of invariant
 * bytes is caught and changes to variant fields are not.  IPv6 and IPv4
 * options against an independent reference ICRC.  argv[1] is the data dir.
 */

#include <arpa/inet.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_common.h>

#include "rp_icrc.h"
#include "rp_pkt.h"
#include "tp_util.h"

#define ETH_HLEN	14u
#define RXE_TOTAL_PKTS	296	/* pcap/rxe/README.md */

static const char *data_dir = "test/data/rxe";

static uint32_t
rd_be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t
rd_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
		(uint32_t)p[2] << 8 | p[3];
}

/* IPv4 frame of a capture (no VLAN there): ICRC-covered length. */
static uint32_t
v4_icrc_len(const struct tp_frame *f)
{
	return rd_be16(f->data + ETH_HLEN + 2) - RP_ICRC_SIZE;
}

/* ---- every frame of every capture */

static void
test_all_frames(void **state)
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
		for (j = 0; j < n; j++) {
			const uint8_t *l3 = fr[j].data + ETH_HLEN;
			uint32_t len = v4_icrc_len(&fr[j]);
			struct rp_pkt pkt;

			if (rp_icrc_check(l3, len) != 0 ||
			    tp_ref_icrc(l3, len) != rp_icrc_calc(l3, len))
				fail_msg("%s #%d: ICRC", names[i], j + 1);
			if (rp_pkt_parse(fr[j].data, fr[j].len, true, &pkt))
				fail_msg("%s #%d: parse", names[i], j + 1);
			total++;
		}
		tp_frames_free(fr, n);
	}
	tp_list_free(names, nf);
	assert_int_equal(total, RXE_TOTAL_PKTS);
}

/* ---- .txt listings */

struct txt_pkt {
	unsigned int no;
	char src[16], dst[16];
	unsigned int sport;
	char op[48];
	uint32_t qpn, psn, pay, pad;
	bool ackreq, se;
	bool reth, aeth, deth, imm, atm, atmack;
	uint64_t va, swap, cmp, orig;
	uint32_t rkey, rlen, syn, msn, qkey, srcqp, immv, icrc;
};

static const struct {
	const char *name;
	uint8_t op;
} txt_ops[] = {
	{ "RC_SEND_FIRST", 0x00 },
	{ "RC_SEND_MIDDLE", 0x01 },
	{ "RC_SEND_LAST", 0x02 },
	{ "RC_SEND_LAST_WITH_IMMEDIATE", 0x03 },
	{ "RC_SEND_ONLY", 0x04 },
	{ "RC_SEND_ONLY_WITH_IMMEDIATE", 0x05 },
	{ "RC_RDMA_WRITE_FIRST", 0x06 },
	{ "RC_RDMA_WRITE_MIDDLE", 0x07 },
	{ "RC_RDMA_WRITE_LAST", 0x08 },
	{ "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", 0x09 },
	{ "RC_RDMA_WRITE_ONLY", 0x0a },
	{ "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", 0x0b },
	{ "RC_RDMA_READ_REQUEST", 0x0c },
	{ "RC_RDMA_READ_RESPONSE_FIRST", 0x0d },
	{ "RC_RDMA_READ_RESPONSE_MIDDLE", 0x0e },
	{ "RC_RDMA_READ_RESPONSE_LAST", 0x0f },
	{ "RC_RDMA_READ_RESPONSE_ONLY", 0x10 },
	{ "RC_ACKNOWLEDGE", 0x11 },
	{ "RC_ATOMIC_ACKNOWLEDGE", 0x12 },
	{ "RC_COMPARE_SWAP", 0x13 },
	{ "RC_FETCH_ADD", 0x14 },
	{ "UC_SEND_FIRST", 0x20 },
	{ "UC_SEND_MIDDLE", 0x21 },
	{ "UC_SEND_LAST", 0x22 },
	{ "UC_SEND_ONLY", 0x24 },
	{ "UD_SEND_ONLY", 0x64 },
	{ "UD_SEND_ONLY_WITH_IMMEDIATE", 0x65 },
};

static int
txt_opcode(const char *name)
{
	unsigned int i;

	for (i = 0; i < RTE_DIM(txt_ops); i++)
		if (strcmp(txt_ops[i].name, name) == 0)
			return txt_ops[i].op;
	return -1;
}

/* 1 for a packet line, 0 for anything else. */
static int
txt_parse(const char *line, struct txt_pkt *t)
{
	const char *s;
	int n = 0;

	memset(t, 0, sizeof(*t));
	if (sscanf(line, "%u %*s %15[0-9.]:%u > %15s qpn=%" SCNx32
		   " psn=%" SCNu32 " %47s pay=%" SCNu32 " pad=%" SCNu32 "%n",
		   &t->no, t->src, &t->sport, t->dst, &t->qpn, &t->psn, t->op,
		   &t->pay, &t->pad, &n) != 9 || n == 0)
		return 0;
	s = line + n;
	/* two flag columns right after the pad count */
	t->ackreq = s[0] && (s[1] == 'A' || (s[1] && s[2] == 'A'));
	t->se = s[0] && (s[1] == 'S' || (s[1] && s[2] == 'S'));
	s = strstr(line, " RETH va=");
	if (s != NULL)
		t->reth = sscanf(s, " RETH va=0x%" SCNx64 " rkey=0x%" SCNx32
				 " len=%" SCNu32, &t->va, &t->rkey,
				 &t->rlen) == 3;
	s = strstr(line, " AETH syndrome=");
	if (s != NULL)
		t->aeth = sscanf(s, " AETH syndrome=0x%" SCNx32, &t->syn) == 1 &&
			(s = strstr(s, " msn=")) != NULL &&
			sscanf(s, " msn=%" SCNu32, &t->msn) == 1;
	s = strstr(line, " DETH qkey=");
	if (s != NULL)
		t->deth = sscanf(s, " DETH qkey=0x%" SCNx32 " srcqp=0x%" SCNx32,
				 &t->qkey, &t->srcqp) == 2;
	s = strstr(line, " ImmDt=");
	if (s != NULL)
		t->imm = sscanf(s, " ImmDt=0x%" SCNx32, &t->immv) == 1;
	s = strstr(line, " AtomicETH va=");
	if (s != NULL)
		t->atm = sscanf(s, " AtomicETH va=0x%" SCNx64 " rkey=0x%" SCNx32
				" swap_add=0x%" SCNx64 " cmp=0x%" SCNx64,
				&t->va, &t->rkey, &t->swap, &t->cmp) == 4;
	s = strstr(line, " AtomicAckETH orig=");
	if (s != NULL)
		t->atmack = sscanf(s, " AtomicAckETH orig=0x%" SCNx64,
				   &t->orig) == 1;
	s = strstr(line, " icrc=");
	if (s == NULL || sscanf(s, " icrc=%" SCNx32, &t->icrc) != 1)
		return 0;
	return 1;
}

static void
check_txt_pkt(const char *file, const struct tp_frame *f,
	      const struct txt_pkt *t)
{
	uint32_t m, ip;
	struct rp_pkt p;
	int op = txt_opcode(t->op);

	if (op < 0)
		fail_msg("%s #%u: unknown opcode name %s", file, t->no, t->op);
	if (rp_pkt_parse(f->data, f->len, true, &p) != 0)
		fail_msg("%s #%u: parse", file, t->no);
	m = p.mask;
	assert_int_equal(p.opcode, op);
	assert_int_equal(p.qpn, t->qpn);
	assert_int_equal(p.psn, t->psn);
	assert_int_equal(p.paylen, t->pay);
	assert_int_equal(p.pad, t->pad);
	assert_int_equal(p.ackreq, t->ackreq);
	assert_int_equal(p.se, t->se);
	assert_int_equal(p.sport, t->sport);
	assert_int_equal(p.ipver, 4);
	assert_int_equal(p.pkey, RP_DEFAULT_PKEY);
	assert_int_equal(inet_pton(AF_INET, t->src, &ip), 1);
	assert_memory_equal(&p.sgid[12], &ip, 4);
	assert_int_equal(inet_pton(AF_INET, t->dst, &ip), 1);
	assert_memory_equal(&p.dgid[12], &ip, 4);
	assert_true(rp_gid_is_v4(p.sgid) && rp_gid_is_v4(p.dgid));
	/* the listing shows the 4 wire bytes as a big-endian number */
	assert_int_equal(rd_be32(f->data + f->len - RP_ICRC_SIZE), t->icrc);

	assert_int_equal(!!(m & RP_M_RETH), t->reth);
	if (t->reth) {
		assert_int_equal(rp_pkt_reth_va(&p), t->va);
		assert_int_equal(rp_pkt_reth_rkey(&p), t->rkey);
		assert_int_equal(rp_pkt_reth_len(&p), t->rlen);
	}
	assert_int_equal(!!(m & RP_M_AETH), t->aeth);
	if (t->aeth) {
		assert_int_equal(rp_pkt_aeth_syn(&p), t->syn);
		assert_int_equal(rp_pkt_aeth_msn(&p), t->msn);
	}
	assert_int_equal(!!(m & RP_M_DETH), t->deth);
	if (t->deth) {
		assert_int_equal(rp_pkt_deth_qkey(&p), t->qkey);
		assert_int_equal(rp_pkt_deth_sqp(&p), t->srcqp);
	}
	assert_int_equal(!!(m & RP_M_IMMDT), t->imm);
	if (t->imm)	/* kept in network order */
		assert_int_equal(rp_pkt_imm(&p), htonl(t->immv));
	assert_int_equal(!!(m & RP_M_ATMETH), t->atm);
	if (t->atm) {
		assert_int_equal(rp_pkt_atmeth_va(&p), t->va);
		assert_int_equal(rp_pkt_atmeth_rkey(&p), t->rkey);
		assert_int_equal(rp_pkt_atmeth_swap_add(&p), t->swap);
		assert_int_equal(rp_pkt_atmeth_comp(&p), t->cmp);
	}
	assert_int_equal(!!(m & RP_M_ATMACK), t->atmack);
	if (t->atmack)
		assert_int_equal(rp_pkt_atmack_orig(&p), t->orig);
	/* payload + pad + ICRC end exactly where IP says */
	assert_int_equal(p.pay_off + p.paylen + p.pad + RP_ICRC_SIZE,
			 ETH_HLEN + rd_be16(f->data + ETH_HLEN + 2));
}

static void
test_txt_listings(void **state)
{
	char **names;
	int nf, i, checked = 0;

	(void)state;
	nf = tp_list(data_dir, ".txt", &names);
	assert_true(nf >= 19);
	for (i = 0; i < nf; i++) {
		char path[1024], pcap[256], line[1024];
		struct tp_frame *fr;
		struct txt_pkt t;
		int n, lines = 0;
		FILE *f;

		snprintf(pcap, sizeof(pcap), "%.*s.pcap",
			 (int)(strlen(names[i]) - 4), names[i]);
		n = tp_load(data_dir, pcap, &fr);
		assert_true(n > 0);
		snprintf(path, sizeof(path), "%s/%s", data_dir, names[i]);
		f = fopen(path, "r");
		assert_non_null(f);
		while (fgets(line, sizeof(line), f) != NULL) {
			if (!txt_parse(line, &t))
				continue;
			assert_true(t.no >= 1 && (int)t.no <= n);
			check_txt_pkt(names[i], &fr[t.no - 1], &t);
			lines++;
		}
		fclose(f);
		assert_int_equal(lines, n);
		checked += lines;
		tp_frames_free(fr, n);
	}
	tp_list_free(names, nf);
	assert_int_equal(checked, RXE_TOTAL_PKTS);
}

/* ---- corruption and variant fields */

static bool
is_variant(const uint32_t *pos, int n, uint32_t i)
{
	int k;

	for (k = 0; k < n; k++)
		if (pos[k] == i)
			return true;
	return false;
}

/* Flip every byte of the ICRC-covered region (and the ICRC itself). */
static void
corrupt_all(uint8_t *l3, uint32_t len)
{
	uint32_t pos[16], i;
	int n = tp_icrc_variant(l3, pos);
	bool v6 = (l3[0] >> 4) == 6;

	assert_int_equal(rp_icrc_check(l3, len), 0);
	for (i = 0; i < len + RP_ICRC_SIZE; i++) {
		static const uint8_t flips[] = { 0x01, 0x80, 0xff };
		unsigned int k;

		for (k = 0; k < RTE_DIM(flips); k++) {
			int r;

			l3[i] ^= flips[k];
			r = rp_icrc_check(l3, len);
			/* IPv6 byte 0: only the traffic-class nibble varies */
			if (is_variant(pos, n, i) ||
			    (v6 && i == 0 && !(flips[k] & 0xf0)))
				assert_int_equal(r, 0);
			else if (r == 0)
				fail_msg("flip 0x%02x at %u not detected",
					 flips[k], i);
			l3[i] ^= flips[k];
		}
	}
	assert_int_equal(rp_icrc_check(l3, len), 0);
}

static void
test_corruption(void **state)
{
	char **names;
	int nf, i, j;

	(void)state;
	nf = tp_list(data_dir, ".pcap", &names);
	for (i = 0; i < nf; i++) {
		struct tp_frame *fr;
		int n = tp_load(data_dir, names[i], &fr);

		/* two frames per capture: requests and responses */
		for (j = 0; j < n && j < 2; j++)
			corrupt_all(fr[j].data + ETH_HLEN,
				    v4_icrc_len(&fr[j]));
		tp_frames_free(fr, n);
	}
	tp_list_free(names, nf);
}

/* Named variant fields, through the parser as well. */
static void
test_variant_fields(void **state)
{
	struct tp_frame *fr;
	struct rp_pkt p;
	uint8_t *l3;
	int n;

	(void)state;
	n = tp_load(data_dir, "rc-send-s64.pcap", &fr);
	assert_true(n > 0);
	l3 = fr[0].data + ETH_HLEN;
	l3[1] = 0xb8;			/* TOS: DSCP 46, ECN 0 */
	l3[8] = 1;			/* TTL */
	l3[10] = 0x12;			/* header checksum */
	l3[11] = 0x34;
	l3[20 + 6] = 0xab;		/* UDP checksum */
	l3[28 + 4] |= 0x80;		/* BTH FECN */
	assert_int_equal(rp_icrc_check(l3, v4_icrc_len(&fr[0])), 0);
	assert_int_equal(rp_pkt_parse(fr[0].data, fr[0].len, true, &p), 0);
	assert_int_equal(p.tclass, 0xb8);
	assert_int_equal(p.ttl, 1);
	assert_int_equal(p.qpn, 0x11);	/* FECN is not part of the QPN */
	l3[28 + 4] |= 0x40;		/* BECN */
	assert_int_equal(rp_pkt_parse(fr[0].data, fr[0].len, true, &p), 0);
	/* IP id is NOT variant (README: retransmits differ) */
	l3[5] ^= 1;
	assert_int_equal(rp_pkt_parse(fr[0].data, fr[0].len, true, &p),
			 RP_PKT_BAD_ICRC);
	assert_int_equal(rp_pkt_parse(fr[0].data, fr[0].len, false, &p), 0);
	tp_frames_free(fr, n);
}

/* rc-send-s64 #1 rewritten as IPv6: ICRC against the reference. */
static void
test_ipv6(void **state)
{
	static const uint8_t src[16] = {
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
	};
	static const uint8_t dst[16] = {
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
	};
	uint8_t buf[2048];
	struct tp_frame *fr;
	struct rp_pkt p;
	uint32_t udp_len, len, crc;
	uint8_t *ip;
	int n;

	(void)state;
	n = tp_load(data_dir, "rc-send-s64.pcap", &fr);
	assert_true(n > 0);
	udp_len = rd_be16(fr[0].data + ETH_HLEN + 20 + 4);
	memcpy(buf, fr[0].data, 12);
	buf[12] = 0x86;
	buf[13] = 0xdd;
	ip = buf + ETH_HLEN;
	ip[0] = 0x6b;			/* version 6, TC 0xb4, FL 0x12345 */
	ip[1] = 0x41;
	ip[2] = 0x23;
	ip[3] = 0x45;
	ip[4] = (uint8_t)(udp_len >> 8);
	ip[5] = (uint8_t)udp_len;
	ip[6] = 17;
	ip[7] = 64;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	memcpy(ip + 40, fr[0].data + ETH_HLEN + 20, udp_len);
	len = 40 + udp_len - RP_ICRC_SIZE;
	crc = tp_ref_icrc(ip, len);
	assert_int_equal(rp_icrc_calc(ip, len), crc);
	rp_icrc_put(ip, len);
	assert_int_equal(ip[len], crc & 0xff);	/* little endian on the wire */
	assert_int_equal(ip[len + 3], crc >> 24);
	assert_int_equal(rp_pkt_parse(buf, ETH_HLEN + 40 + udp_len, true, &p),
			 0);
	assert_int_equal(p.ipver, 6);
	assert_int_equal(p.tclass, 0xb4);
	assert_int_equal(p.ttl, 64);
	assert_memory_equal(p.sgid, src, 16);
	assert_memory_equal(p.dgid, dst, 16);
	assert_int_equal(p.psn, 6711880);
	assert_int_equal(p.paylen, 64);
	corrupt_all(ip, len);
	/* the whole TC/FL/hop limit space is masked */
	ip[0] = 0x60;
	ip[1] = ip[2] = ip[3] = 0;
	ip[7] = 1;
	assert_int_equal(rp_icrc_check(ip, len), 0);
	tp_frames_free(fr, n);
}

/* IPv4 options are covered, unmasked, and shift the UDP/BTH masks. */
static void
test_ipv4_options(void **state)
{
	uint8_t buf[2048];
	struct tp_frame *fr;
	struct rp_pkt p;
	uint32_t tot, len;
	uint8_t *ip;
	int n;

	(void)state;
	n = tp_load(data_dir, "rc-imm-zero-rnr-nak.pcap", &fr);
	assert_true(n >= 3);
	/* #3: WRITE_ONLY_IMM with RETH and ImmDt, 8 bytes of options */
	tot = rd_be16(fr[2].data + ETH_HLEN + 2);
	memcpy(buf, fr[2].data, ETH_HLEN + 20);
	memset(buf + ETH_HLEN + 20, 0x01, 8);	/* NOPs */
	memcpy(buf + ETH_HLEN + 28, fr[2].data + ETH_HLEN + 20, tot - 20);
	ip = buf + ETH_HLEN;
	ip[0] = 0x47;
	tot += 8;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	len = tot - RP_ICRC_SIZE;
	rp_icrc_put(ip, len);
	assert_int_equal(rp_icrc_calc(ip, len), tp_ref_icrc(ip, len));
	assert_int_equal(rp_pkt_parse(buf, ETH_HLEN + tot, true, &p), 0);
	assert_int_equal(p.l3_off, ETH_HLEN);
	assert_int_equal(p.bth_off, ETH_HLEN + 28 + 8);
	assert_int_equal(p.opcode, RP_OP_WRITE_ONLY_IMM);
	assert_int_equal(rp_pkt_reth_len(&p), 32);
	assert_int_equal(rp_pkt_imm(&p), htonl(0x55667788));
	corrupt_all(ip, len);
	tp_frames_free(fr, n);
}

/* ---- the pcap reader itself: other byte order and nanoseconds */

static void
put32(uint8_t *p, uint32_t v, bool be)
{
	if (be)
		v = htonl(v);
	memcpy(p, &v, 4);
}

static void
test_pcap_variants(void **state)
{
	char path[1024];
	struct tp_pcap a;
	int be;

	(void)state;
	snprintf(path, sizeof(path), "%s/rc-send-s64.pcap", data_dir);
	for (be = 0; be <= 1; be++) {
		struct tp_pcap b, c;
		const uint8_t *da, *db;
		uint32_t la, lb;
		uint64_t ta, tb;
		uint8_t *buf;
		size_t off;
		int ra, rb, recs = 0;

		assert_int_equal(tp_pcap_open(&a, path), 0);
		assert_false(a.nsec);
		assert_int_equal(a.linktype, 1);
		/* rewrite as nanosecond pcap in byte order `be` */
		buf = malloc(a.len);
		memcpy(buf, a.buf, a.len);
		put32(buf, 0xa1b23c4du, be);
		buf[4] = be ? 0 : 2;	/* version 2.4 */
		buf[5] = be ? 2 : 0;
		buf[6] = be ? 0 : 4;
		buf[7] = be ? 4 : 0;
		put32(buf + 16, 262144, be);
		put32(buf + 20, 1, be);
		off = 24;
		while (tp_pcap_next(&a, &da, &la, &ta) == 1) {
			put32(buf + off, (uint32_t)(ta / 1000000000u), be);
			put32(buf + off + 4, (uint32_t)(ta % 1000000000u), be);
			put32(buf + off + 8, la, be);
			put32(buf + off + 12, la, be);
			off += 16 + la;
		}
		assert_int_equal(off, a.len);
		assert_int_equal(tp_pcap_open_mem(&b, buf, a.len), 0);
		assert_true(b.nsec);
		assert_int_equal(b.linktype, 1);
		assert_int_equal(tp_pcap_open(&c, path), 0);
		do {
			ra = tp_pcap_next(&c, &da, &la, &ta);
			rb = tp_pcap_next(&b, &db, &lb, &tb);
			assert_int_equal(ra, rb);
			if (ra == 1) {
				assert_int_equal(la, lb);
				assert_memory_equal(da, db, la);
				assert_int_equal(ta, tb);
				recs++;
			}
		} while (ra == 1);
		assert_int_equal(recs, 12);
		tp_pcap_close(&a);
		tp_pcap_close(&b);
		tp_pcap_close(&c);
	}
	/* truncated record */
	assert_int_equal(tp_pcap_open(&a, path), 0);
	{
		const uint8_t *d;
		uint32_t l;

		a.len -= 3;
		while (tp_pcap_next(&a, &d, &l, NULL) == 1)
			;
		assert_int_equal(tp_pcap_next(&a, &d, &l, NULL), -1);
	}
	tp_pcap_close(&a);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_frames),
		cmocka_unit_test(test_txt_listings),
		cmocka_unit_test(test_corruption),
		cmocka_unit_test(test_variant_fields),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_pcap_variants),
	};

	if (argc > 1)
		data_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
