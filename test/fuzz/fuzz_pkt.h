/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef _FUZZ_PKT_H_
#define _FUZZ_PKT_H_

#include <stddef.h>
#include <stdint.h>

/* libFuzzer entry point; the smoke driver calls it too. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Per-result counts since start: index 0 = parsed, then by error. */
struct fuzz_pkt_stats {
	unsigned long ok_icrc, ok_noicrc;
	unsigned long not_roce, bad, bad_op, bad_icrc;
};
extern struct fuzz_pkt_stats fuzz_pkt_stats;

#endif /* _FUZZ_PKT_H_ */
