/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 invariant CRC (IBTA Annex A17.3.3).  The IP, UDP and BTH fields a
 * router may rewrite are replaced by ones in a private copy of the headers;
 * the rest of the packet is fed to the CRC straight from the buffer.
 *
 * The ICRC is CRC-32 as Ethernet's FCS: DPDK's rte_net_crc computes it with
 * the CPU's carry-less multiply (SSE4.2 and PCLMULQDQ), but only over one
 * buffer from the standard start.  So the masked headers (with the LRH's
 * stand-in before them) and the rest of the packet are two CRCs, joined
 * with zlib's crc32_combine_op() and the operator for the second one's
 * length: no copy of the payload and no pass over it but the one that
 * computes its CRC.  The operators depend on the length only: each is
 * made once, on first use.  A short rest (up to RP_ICRC_COPY_MAX bytes) is
 * copied behind the headers instead: one CRC, no join.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <zlib.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_net_crc.h>

#include "rp_hdr.h"
#include "rp_icrc.h"
#include "rp_opcode.h"

#define RP_IPV4_MAX_HDR	60u
#define RP_IPV6_HDR	40u
#define RP_UDP_HDR	8u
#define RP_ICRC_LRH	8u
#define RP_ICRC_MAX_MASKED (RP_ICRC_LRH + RP_IPV4_MAX_HDR + RP_UDP_HDR + 12u)
#define RP_ICRC_OPS	16384u	/* lengths with a cached operator */
/* Up to this many bytes after the headers are copied behind them and
 * take one CRC: cheaper than a second CRC and the join (measured). */
#define RP_ICRC_COPY_MAX 512u

/* crc32_combine_gen(n) for n < RP_ICRC_OPS, 0 until made (never 0 once
 * made: x^8n mod P).  Racing lcores store the same value. */
static uint32_t rp_icrc_op[RP_ICRC_OPS];

/*
 * After rte_eal_init() (rte_net_crc checks the EAL's SIMD width): SSE4.2 and
 * PCLMULQDQ where the CPU has them.  AVX-512 would cost more than it saves
 * on packets of a few hundred bytes.  Without this call (programs with no
 * EAL: the unit tests, the fuzzers) DPDK picks on first use.
 */
void
rp_icrc_setup(void)
{
	rte_net_crc_set_alg(RTE_NET_CRC_SSE42);
}

static inline uint32_t
rp_icrc_crc(const uint8_t *p, uint32_t n)
{
	return n == 0 ? 0 : rte_net_crc_calc(p, n, RTE_NET_CRC32_ETH);
}

/* The CRC of a || b from crc(a), crc(b) and b's length. */
static inline uint32_t
rp_icrc_join(uint32_t a, uint32_t b, uint32_t blen)
{
	uint32_t op;

	if (blen == 0)
		return a;
	if (unlikely(blen >= RP_ICRC_OPS))
		return (uint32_t)crc32_combine(a, b, (z_off_t)blen);
	op = __atomic_load_n(&rp_icrc_op[blen], __ATOMIC_RELAXED);
	if (unlikely(op == 0)) {
		op = (uint32_t)crc32_combine_gen((z_off_t)blen);
		__atomic_store_n(&rp_icrc_op[blen], op, __ATOMIC_RELAXED);
	}
	return (uint32_t)crc32_combine_op(a, b, op);
}

static inline void
rp_icrc_ones(uint8_t *p, uint32_t off, uint32_t n, uint32_t len)
{
	/* A field beyond len is not covered at all: nothing to mask. */
	while (n-- > 0 && off < len)
		p[off++] = 0xff;
}

uint32_t
rp_icrc_calc(const uint8_t *l3, uint32_t len)
{
	/* The LRH's stand-in (8 bytes of ones), then the masked headers,
	 * then (when short) the rest */
	uint8_t buf[RP_ICRC_MAX_MASKED + RP_ICRC_COPY_MAX];
	uint8_t *hdr = buf + RP_ICRC_LRH;
	uint32_t iplen, hlen;

	memset(buf, 0xff, RP_ICRC_LRH);
	if (len == 0)
		return rp_icrc_crc(buf, RP_ICRC_LRH);

	/* The version nibble picks the layout; anything not 6 is IPv4. */
	if ((l3[0] >> 4) == 6)
		iplen = RP_IPV6_HDR;
	else
		iplen = (l3[0] & 0x0fu) * 4u;
	hlen = RTE_MIN(len, iplen + RP_UDP_HDR + RP_BTH_SIZE);
	memcpy(hdr, l3, hlen);

	if ((l3[0] >> 4) == 6) {
		/* traffic class and flow label: all but the version nibble */
		hdr[0] |= 0x0f;
		rp_icrc_ones(hdr, 1, 3, hlen);
		rp_icrc_ones(hdr, 7, 1, hlen);		/* hop limit */
	} else {
		rp_icrc_ones(hdr, 1, 1, hlen);		/* TOS */
		rp_icrc_ones(hdr, 8, 1, hlen);		/* TTL */
		rp_icrc_ones(hdr, 10, 2, hlen);		/* header checksum */
	}
	rp_icrc_ones(hdr, iplen + 6, 2, hlen);		/* UDP checksum */
	rp_icrc_ones(hdr, iplen + RP_UDP_HDR + 4, 1, hlen); /* FECN, BECN */

	/* A short rest costs less copied after the headers than joined. */
	if (len - hlen <= RP_ICRC_COPY_MAX) {
		memcpy(hdr + hlen, l3 + hlen, len - hlen);
		return rp_icrc_crc(buf, RP_ICRC_LRH + len);
	}
	return rp_icrc_join(rp_icrc_crc(buf, RP_ICRC_LRH + hlen),
			    rp_icrc_crc(l3 + hlen, len - hlen), len - hlen);
}

void
rp_icrc_put(uint8_t *l3, uint32_t len)
{
	uint32_t v = rte_cpu_to_le_32(rp_icrc_calc(l3, len));

	memcpy(l3 + len, &v, RP_ICRC_SIZE);
}

int
rp_icrc_check(const uint8_t *l3, uint32_t len)
{
	uint32_t v;

	memcpy(&v, l3 + len, RP_ICRC_SIZE);
	return rte_le_to_cpu_32(v) == rp_icrc_calc(l3, len) ? 0 : -EILSEQ;
}
