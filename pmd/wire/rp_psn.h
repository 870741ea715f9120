/* SPDX-License-Identifier: BSD-3-Clause */
/* 24-bit PSN arithmetic (IBTA 9.7.1: half the space is "ahead"). */
#ifndef _RP_PSN_H_
#define _RP_PSN_H_

#include <stdint.h>

#include "rp_hdr.h"

/* Signed distance a - b in the 24-bit PSN space: <0 behind, >0 ahead. */
static inline int32_t
rp_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline uint32_t
rp_psn_add(uint32_t psn, uint32_t n)
{
	return (psn + n) & RP_PSN_MASK;
}

#endif /* _RP_PSN_H_ */
