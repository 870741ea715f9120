/*
 * RoCEv2 invariant CRC (IBTA Annex A17.3.3).  The IP, UDP and BTH fields a
 * router may rewrite are replaced by ones in a private copy of the headers;
 * the rest of the packet is fed to the CRC straight from the buffer.
 *
 * The ICRC is CRC-32 as Ethernet's FCS (zlib's and gzip's crc32).  ISA-L's
 * crc32_gzip_refl() computes it with the CPU's carry-less multiply over
 * several lanes at once (VPCLMULQDQ where the CPU has it), and it takes a
 * running CRC: the masked headers (with the LRH's stand-in before them)
 * and the rest of the packet are one CRC in two calls, with no copy of
 * the payload and no join.  DPDK 22.11's rte_net_crc folds one 16-byte
 * lane at a time and is bound by the multiply's latency: 5 GB/s on the
 * machine of that measurement (a CPU with VPCLMULQDQ) against ISA-L's
 * 60 GB/s for 1 to 4 KiB, and half of the engine lcore's time in a 64 KiB
 * RDMA WRITE stream.  Without VPCLMULQDQ ISA-L folds 128 bits at a time:
 * 10-11 GB/s on an AMD EPYC without it (bench/icrc_cost,
 * guides/experiments_close_to_wire, eighteenth round).
 */

#include <errno.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>

#include <isa-l/crc.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#ifdef RTE_ARCH_X86
#include <emmintrin.h>
#endif

#include "rp_hdr.h"
#include "rp_icrc.h"
#include "rp_opcode.h"

#define RP_ICRC_LRH	8u
#define RP_ICRC_MAX_MASKED (RP_ICRC_LRH + RP_IPV4_MAX_HLEN + RP_UDP_HLEN + 12u)

static inline void
rp_icrc_ones(uint8_t *p, uint32_t off, uint32_t n, uint32_t len)
{
	/* A field beyond len is not covered at all: nothing to mask. */
	while (n-- > 0 && off < len)
		p[off++] = 0xff;
}

#ifdef RTE_ARCH_X86
/*
 * IPv4 without options, headers whole: the stand-in and the 40 masked
 * bytes are three 16-byte stores, each read back by one 16-byte load of
 * the CRC.  The general path's copy (rep movs, its length variable) and
 * byte stores left the CRC's loads nothing to forward from: both stalled,
 * a third of a 64 B packet's CRC time (perf, guides/experiments).
 */
static inline uint32_t
rp_icrc_calc_v4(const uint8_t *l3, uint32_t len)
{
	alignas(16) uint8_t buf[RP_ICRC_LRH + RP_IPV4_HLEN + RP_UDP_HLEN +
				RP_BTH_SIZE];
	/* TOS; TTL, header checksum; UDP checksum; FECN, BECN byte */
	const __m128i m0 = _mm_set_epi8(0, 0, 0, 0, 0, 0, -1, 0,
					-1, -1, -1, -1, -1, -1, -1, -1);
	const __m128i m1 = _mm_set_epi8(0, 0, 0, 0, 0, 0, 0, 0,
					0, 0, 0, 0, -1, -1, 0, -1);
	const __m128i m2 = _mm_set_epi8(0, 0, 0, 0, 0, 0, 0, -1,
					0, 0, 0, 0, -1, -1, 0, 0);
	__m128i v0 = _mm_slli_si128(_mm_loadl_epi64((const __m128i *)l3), 8);

	_mm_store_si128((__m128i *)buf, _mm_or_si128(v0, m0));
	_mm_store_si128((__m128i *)(buf + 16), _mm_or_si128(
		_mm_loadu_si128((const __m128i *)(l3 + 8)), m1));
	_mm_store_si128((__m128i *)(buf + 32), _mm_or_si128(
		_mm_loadu_si128((const __m128i *)(l3 + 24)), m2));
	return crc32_gzip_refl(crc32_gzip_refl(0, buf, sizeof(buf)),
			       l3 + sizeof(buf) - RP_ICRC_LRH,
			       len - (sizeof(buf) - RP_ICRC_LRH));
}
#endif

uint32_t
rp_icrc_calc(const uint8_t *l3, uint32_t len)
{
	/* The LRH's stand-in (8 bytes of ones), then the masked headers */
	uint8_t buf[RP_ICRC_MAX_MASKED];
	uint8_t *hdr = buf + RP_ICRC_LRH;
	uint32_t iplen, hlen;

#ifdef RTE_ARCH_X86
	if (likely(len >= RP_IPV4_HLEN + RP_UDP_HLEN + RP_BTH_SIZE &&
		   l3[0] == 0x45))
		return rp_icrc_calc_v4(l3, len);
#endif
	memset(buf, 0xff, RP_ICRC_LRH);
	if (len == 0)
		return crc32_gzip_refl(0, buf, RP_ICRC_LRH);

	/* The version nibble picks the layout; anything not 6 is IPv4. */
	if ((l3[0] >> 4) == 6)
		iplen = RP_IPV6_HLEN;
	else
		iplen = (l3[0] & 0x0fu) * 4u;
	hlen = RTE_MIN(len, iplen + RP_UDP_HLEN + RP_BTH_SIZE);
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
	rp_icrc_ones(hdr, iplen + RP_UDP_HLEN + 4, 1, hlen); /* FECN, BECN */

	return crc32_gzip_refl(crc32_gzip_refl(0, buf, RP_ICRC_LRH + hlen),
			       l3 + hlen, len - hlen);
}

uint32_t
rp_icrc_more(uint32_t crc, const void *p, uint32_t n)
{
	return n == 0 ? crc : crc32_gzip_refl(crc, p, n);
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
