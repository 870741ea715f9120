/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * read_lat: one RDMA READ at a time; latency is the whole round trip
 * (ib_read_lat).  read_bw: streamed READs (ib_read_bw).  The server's CPU
 * takes no part in either.
 */

#include "rtp.h"

static int
read_lat_client(struct rtp_run *run)
{
	return rtp_onesided_lat_client(run, IBV_WR_RDMA_READ, NULL);
}

const struct rtp_mode rtp_mode_read_lat = {
	.name = "read_lat",
	.kind = RP_MSG_READ,
	.help = "one RDMA READ at a time, round-trip latency (ib_read_lat)",
	.latency = true,
	.lat_div = 1,
	.client = read_lat_client,
	.server = rtp_passive_server,
};

static int
read_bw_client(struct rtp_run *run)
{
	return rtp_stream_client(run, IBV_WR_RDMA_READ);
}

const struct rtp_mode rtp_mode_read_bw = {
	.name = "read_bw",
	.kind = RP_MSG_READ,
	.help = "streamed RDMA READs (ib_read_bw)",
	.lat_div = 1,
	.client = read_bw_client,
	.server = rtp_passive_server,
};
