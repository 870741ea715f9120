/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * atomic_lat: one FETCH_AND_ADD at a time, round-trip latency
 * (ib_atomic_lat); every original value returned is checked.
 */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "rtp.h"

/*
 * A FETCH_AND_ADD adds 1 to the first 8 bytes of its QP's slot at the
 * server: the original value it returns must be the one before, each time
 * (a lost or doubled execution shows).
 */
static int
atomic_check(struct rtp_run *run, uint64_t i)
{
	struct rtp_side *s = &run->cli;
	uint32_t q = (uint32_t)(i % s->nb_qps);
	uint64_t got, want = s->atomics[q]++;

	/* The SGE of WR i, as rtp_post() chose it. */
	memcpy(&got, s->buf + q * s->slot +
	       (size_t)(i % (s->slot / 8)) * 8, sizeof(got));
	if (got != want) {
		char what[96];

		snprintf(what, sizeof(what), "FETCH_AND_ADD "
			 "%" PRIu64 ": original value %#" PRIx64
			 ", expected %#" PRIx64, i, got, want);
		return rtp_fail(run, -EPROTO, what);
	}
	return 0;
}

static int
atomic_lat_client(struct rtp_run *run)
{
	if (run->set.size != 8)
		return rtp_fail(run, -EINVAL,
				"atomic_lat: an atomic is 8 bytes (set size 8)");
	return rtp_onesided_lat_client(run, IBV_WR_ATOMIC_FETCH_AND_ADD,
				       atomic_check);
}

const struct rtp_mode rtp_mode_atomic_lat = {
	.name = "atomic_lat",
	.kind = RP_MSG_ATOMIC,
	.help = "one FETCH_AND_ADD at a time, round-trip latency (ib_atomic_lat)",
	.latency = true,
	.lat_div = 1,
	.client = atomic_lat_client,
	.server = rtp_passive_server,
};
