/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * write_lat: RDMA WRITE with immediate ping-pong, so that the arrival is a
 * completion every completion mode can wait for (ib_write_lat
 * --write_with_imm); latency is half the round trip.
 * write_bw: streamed RDMA WRITEs, the server's CPU idle (ib_write_bw).
 */

#include "rtp.h"

static int
write_lat_client(struct rtp_run *run)
{
	return rtp_pingpong_client(run, IBV_WR_RDMA_WRITE_WITH_IMM);
}

static int
write_lat_server(struct rtp_run *run)
{
	return rtp_pingpong_server(run, IBV_WR_RDMA_WRITE_WITH_IMM);
}

const struct rtp_mode rtp_mode_write_lat = {
	.name = "write_lat",
	.kind = RP_MSG_WRITE_IMM,
	.help = "RDMA WRITE with immediate ping-pong, one-way latency (ib_write_lat)",
	.latency = true,
	.lat_div = 2,
	.server_active = true,
	.server_recvs = true,
	.client = write_lat_client,
	.server = write_lat_server,
};

static int
write_bw_client(struct rtp_run *run)
{
	return rtp_stream_client(run, IBV_WR_RDMA_WRITE);
}

const struct rtp_mode rtp_mode_write_bw = {
	.name = "write_bw",
	.kind = RP_MSG_WRITE,
	.help = "streamed RDMA WRITEs (ib_write_bw)",
	.lat_div = 1,
	.client = write_bw_client,
	.server = rtp_passive_server,
};
