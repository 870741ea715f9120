/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 invariant CRC (IBTA Annex A17.3.3).  The IP, UDP and BTH fields a
 * router may rewrite are replaced by ones in a private copy of the headers;
 * the rest of the packet is fed to the CRC straight from the buffer.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <zlib.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "rp_hdr.h"
#include "rp_icrc.h"
#include "rp_opcode.h"

#define RP_IPV4_MAX_HDR	60u
#define RP_IPV6_HDR	40u
#define RP_UDP_HDR	8u
#define RP_ICRC_MAX_MASKED (RP_IPV4_MAX_HDR + RP_UDP_HDR + 12u)

/* Stands in for the IB LRH, which RoCEv2 does not have. */
static const uint8_t rp_icrc_lrh[8] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

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
	uint8_t hdr[RP_ICRC_MAX_MASKED];
	uint32_t iplen, hlen;
	uLong crc;

	if (len == 0)
		return (uint32_t)crc32(crc32(0, NULL, 0), rp_icrc_lrh,
				       sizeof(rp_icrc_lrh));

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

	crc = crc32(0, NULL, 0);
	crc = crc32(crc, rp_icrc_lrh, sizeof(rp_icrc_lrh));
	crc = crc32(crc, hdr, hlen);
	crc = crc32(crc, l3 + hlen, len - hlen);
	return (uint32_t)crc;
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
