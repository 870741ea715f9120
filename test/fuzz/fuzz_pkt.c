/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target for rp_pkt_parse(): any input, with and without the ICRC
 * check; on success every accessor the mask allows is read, and the
 * parse result must be self-consistent.  Out-of-bounds reads are for the
 * sanitizers to catch; logic violations abort().
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rp_pkt.h"

#include "fuzz_pkt.h"

struct fuzz_pkt_stats fuzz_pkt_stats;

/* Keeps the reads from being optimised away. */
static volatile uint64_t fuzz_sink;

static void
fuzz_touch(const struct rp_pkt *p, const uint8_t *data, uint32_t len)
{
	const struct rp_opcode_info *info = &rp_opcode[p->opcode];
	uint64_t acc = 0;
	uint32_t i;

	if (info->name == NULL || p->mask != info->mask ||
	    p->frame != data || p->pad > 3 ||
	    p->pay_off != p->bth_off + info->length ||
	    p->bth_off < p->l3_off ||
	    (uint64_t)p->pay_off + p->paylen + p->pad + RP_ICRC_SIZE > len ||
	    (p->ipver != 4 && p->ipver != 6) ||
	    p->qpn > RP_QPN_MASK || p->psn > RP_PSN_MASK)
		abort();
	if (!(p->mask & RP_M_PAYLOAD) && p->paylen != 0)
		abort();

	if (p->mask & RP_M_RETH)
		acc += rp_pkt_reth_va(p) + rp_pkt_reth_rkey(p) +
			rp_pkt_reth_len(p);
	if (p->mask & RP_M_AETH)
		acc += rp_pkt_aeth_syn(p) + rp_pkt_aeth_msn(p);
	if (p->mask & RP_M_ATMETH)
		acc += rp_pkt_atmeth_va(p) + rp_pkt_atmeth_rkey(p) +
			rp_pkt_atmeth_swap_add(p) + rp_pkt_atmeth_comp(p);
	if (p->mask & RP_M_ATMACK)
		acc += rp_pkt_atmack_orig(p);
	if (p->mask & RP_M_DETH)
		acc += rp_pkt_deth_qkey(p) + rp_pkt_deth_sqp(p);
	if (p->mask & RP_M_IMMDT)
		acc += rp_pkt_imm(p);
	if (p->mask & RP_M_IETH)
		acc += rp_pkt_ieth_rkey(p);
	/* BTH through the header-pointer accessors as well */
	acc += rp_bth_opcode(p->frame + p->bth_off) +
		rp_bth_psn(p->frame + p->bth_off) +
		rp_bth_pkey(p->frame + p->bth_off);
	/* payload, pad and ICRC are all inside the frame */
	for (i = 0; i < p->paylen + p->pad + RP_ICRC_SIZE; i++)
		acc += rp_pkt_payload(p)[i];
	fuzz_sink += acc;
}

static void
fuzz_count(int r, bool icrc)
{
	struct fuzz_pkt_stats *s = &fuzz_pkt_stats;

	switch (r) {
	case 0:
		if (icrc)
			s->ok_icrc++;
		else
			s->ok_noicrc++;
		break;
	case RP_PKT_NOT_ROCE:
		s->not_roce++;
		break;
	case RP_PKT_BAD:
		s->bad++;
		break;
	case RP_PKT_BAD_OP:
		s->bad_op++;
		break;
	case RP_PKT_BAD_ICRC:
		s->bad_icrc++;
		break;
	default:
		abort();	/* not a documented result */
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_pkt a, b, c;
	uint32_t len = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	int ra, rb, rc;

	ra = rp_pkt_parse(data, len, true, &a);
	fuzz_count(ra, true);
	if (ra == 0)
		fuzz_touch(&a, data, len);
	rb = rp_pkt_parse(data, len, false, &b);
	fuzz_count(rb, false);
	if (rb == 0)
		fuzz_touch(&b, data, len);
	/* the ICRC check is the only difference between the two */
	if (ra == 0 && (rb != 0 || memcmp(&a, &b, offsetof(struct rp_pkt,
							   frame)) != 0))
		abort();
	if (ra != 0 && ra != RP_PKT_BAD_ICRC && ra != rb)
		abort();
	if (ra == RP_PKT_BAD_ICRC && rb != 0)
		abort();
	/* A memory link (RP_PKT_ICRC_NC): the check skipped exactly for a
	 * frame whose BTH says RP_BTH_NC, nothing else different. */
	rc = rp_pkt_parse(data, len, RP_PKT_ICRC_CHECK | RP_PKT_ICRC_NC, &c);
	if (rc != (ra == RP_PKT_BAD_ICRC && b.nc ? 0 : ra))
		abort();
	if (rc == 0 && memcmp(&c, &b, offsetof(struct rp_pkt, frame)) != 0)
		abort();
	return 0;
}
