/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * atomic_lat: one FETCH_AND_ADD at a time, round-trip latency
 * (ib_atomic_lat); every original value returned is checked.
 */

#include "rtp.h"

const struct rtp_mode rtp_mode_atomic_lat = {
	.name = "atomic_lat",
	.help = "one FETCH_AND_ADD at a time, round-trip latency (ib_atomic_lat)",
	.latency = true,
	.lat_div = 1,
	.client = rtp_atomic_lat_client,
	.server = rtp_passive_server,
};
