/* SPDX-License-Identifier: BSD-3-Clause */
/* atomic_lat: fetch-and-add latency (ib_atomic_lat), once atomics exist. */

#include "rtp.h"

const struct rtp_mode rtp_mode_atomic_lat = {
	.name = "atomic_lat",
	.help = "one fetch-and-add at a time (ib_atomic_lat)",
	.unsupported = "the engine does not implement atomics yet",
};
