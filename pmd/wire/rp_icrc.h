/* SPDX-License-Identifier: BSD-3-Clause */
/* Invariant CRC (IBTA Annex A17, RoCEv2). */
#ifndef _RP_ICRC_H_
#define _RP_ICRC_H_

#include <stdint.h>

/*
 * ICRC of a RoCEv2 packet.
 * @param l3     start of the IPv4 or IPv6 header
 * @param len    bytes from l3 up to (not including) the ICRC
 * @return the CRC; it goes on the wire in little-endian byte order
 *
 * CRC-32 (zlib's; ISA-L computes it) over 8 bytes of 0xff, the IP header with the variant
 * fields set to ones (IPv4: TOS, TTL, checksum; IPv6: traffic class, flow
 * label, hop limit), the UDP header with the checksum set to ones, the BTH
 * with byte 4 (FECN/BECN/reserved) set to ones, and the rest of the packet.
 * IPv4 options, if any, are covered unmasked.  Never reads past l3 + len.
 */
uint32_t rp_icrc_calc(const uint8_t *l3, uint32_t len);

/*
 * The same CRC over a packet in pieces (a payload sent from where it
 * lies): rp_icrc_calc() of the piece with the headers, then this over each
 * following piece in order.
 */
uint32_t rp_icrc_more(uint32_t crc, const void *p, uint32_t n);

/* Write the ICRC after len bytes from l3. */
void rp_icrc_put(uint8_t *l3, uint32_t len);

/* 0 when the 4 bytes after len bytes from l3 hold the right ICRC,
 * -EILSEQ otherwise. */
int rp_icrc_check(const uint8_t *l3, uint32_t len);

#endif /* _RP_ICRC_H_ */
