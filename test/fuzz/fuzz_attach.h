/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Input format of the attach protocol fuzz target (fuzz_attach.c):
 *
 *   byte 0        bit 0: the target says a well-formed HELLO first
 *   records       one message each, until the input ends:
 *     r[0]        bits 0-1 kind (FA_R_*), bits 2-4 descriptors sent with
 *                 it: 0 none, 1 an eventfd, 2 a pipe's two ends, 3
 *                 /dev/null, 4 /proc/self/mem, 5 a blocking and a
 *                 non-blocking eventfd, 6 /proc/self/mem read-only
 *     r[1]        HELLO: flags (1 another ABI, 2 a wrong probe value, 4
 *                 another protocol version, 8 short); CTRL: the operation
 *     r[2]        CTRL: 0xf0 | device, else device 0
 *     r[3]        CTRL: the message's length, 0 the right one; RAW: the
 *                 high byte of its length
 *     r[4]        CTRL: body bytes that follow (the request's slot.u);
 *                 RAW: the low byte of its length
 *     r[5]        CTRL: bit i set: body word i takes a number an earlier
 *                 reply gave (the word modulo how many)
 *     ...         the body (CTRL, RAW)
 */
#ifndef _FUZZ_ATTACH_H_
#define _FUZZ_ATTACH_H_

#include <stddef.h>
#include <stdint.h>

#define FA_REC_HDR	6u
#define FA_MAX_RECORDS	64u
#define FA_R_KIND(b)	((b) & 3u)
#define FA_R_FDS(b)	(((b) >> 2) & 7u)

enum { FA_R_CTRL = 0, FA_R_HELLO = 1, FA_R_RAW = 2 };

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* _FUZZ_ATTACH_H_ */
