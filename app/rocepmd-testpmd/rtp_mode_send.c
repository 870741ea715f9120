/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * send_lat: SEND ping-pong (ib_send_lat); latency is half the round trip.
 * send_bw: streamed SENDs into receives the server keeps posted
 * (ib_send_bw).
 */

#include "rtp.h"

static int
send_lat_client(struct rtp_run *run)
{
	return rtp_pingpong_client(run, IBV_WR_SEND);
}

static int
send_lat_server(struct rtp_run *run)
{
	return rtp_pingpong_server(run, IBV_WR_SEND);
}

const struct rtp_mode rtp_mode_send_lat = {
	.name = "send_lat",
	.kind = RP_MSG_SEND,
	.help = "SEND ping-pong, one-way latency (ib_send_lat)",
	.latency = true,
	.lat_div = 2,
	.server_active = true,
	.server_recvs = true,
	.client = send_lat_client,
	.server = send_lat_server,
};

static int
send_bw_client(struct rtp_run *run)
{
	return rtp_stream_client(run, IBV_WR_SEND);
}

/* Streaming receiver: keep depth receives posted per QP, until flushed. */
static int
send_bw_server(struct rtp_run *run)
{
	struct rtp_side *s = &run->srv;
	struct ibv_wc wc[RTP_WC_BURST];

	for (;;) {
		int n = rtp_wait_cq(&s->w, wc, RTP_WC_BURST, NULL, 0);

		if (n < 0)
			return rtp_fail(run, n, "server wait");
		for (int k = 0; k < n; k++) {
			int ret = rtp_wc_check(s, &wc[k], run);

			if (ret != 0)
				return ret < 0 ? ret : 0;
			run->received++;
			ret = rtp_post_recv(s, rtp_wc_qp(s, &wc[k]),
					    run->set.size, 0);
			if (ret < 0)
				return rtp_fail(run, ret,
						"server ibv_post_recv");
		}
	}
}

const struct rtp_mode rtp_mode_send_bw = {
	.name = "send_bw",
	.kind = RP_MSG_SEND,
	.help = "streamed SENDs, depth per QP (ib_send_bw)",
	.lat_div = 1,
	.server_active = true,
	.server_recvs = true,
	.client = send_bw_client,
	.server = send_bw_server,
};
