/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The poster's half of the wake-up handshake (rp_dev_ctl.need_wakeup, as
 * io_uring's IORING_SQ_NEED_WAKEUP), shared by the engine's own doorbell
 * (rp_dev_doorbell()) and an attached process's (the shim): one
 * implementation of the ordering on both sides of the process boundary.
 */

#ifndef _RP_DOORBELL_H_
#define _RP_DOORBELL_H_

#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "rp_abi.h"
#include "rp_atomic.h"

/*
 * D1: pairs with D0 in lcore_block() (rp_lcore.c).  Our store of prod
 * (done by the caller), this fence, our load of need_wakeup; the engine's
 * store of need_wakeup, its fence, its loads of prod.  Either the engine's
 * last look finds the work or we find need_wakeup == 1 (Dekker).  The
 * region is the same memory in every process that maps it.
 * @return false when the engine needed waking and the write failed
 */
static inline bool
rp_doorbell_ring(const struct rp_dev_ctl *ctl, int wake_fd)
{
	const uint64_t one = 1;

	if (wake_fd < 0)
		return true;
	rp_fence_seq_cst();
	if (rp_load_relaxed(&ctl->need_wakeup) == 0)
		return true;
	/* The engine counts these writes when it reads the eventfd. */
	return write(wake_fd, &one, sizeof(one)) == sizeof(one);
}

#endif /* _RP_DOORBELL_H_ */
