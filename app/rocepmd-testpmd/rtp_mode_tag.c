/* SPDX-License-Identifier: BSD-3-Clause */
/* tag_eager, tag_rndv: tag-matching SRQ messages (not written yet). */

#include "rtp.h"

const struct rtp_mode rtp_mode_tag_eager = {
	.name = "tag_eager",
	.help = "tag-matched eager messages on a TM-SRQ",
	.unsupported = "not written yet in rocepmd-testpmd",
};

const struct rtp_mode rtp_mode_tag_rndv = {
	.name = "tag_rndv",
	.help = "tag-matched rendezvous messages on a TM-SRQ",
	.unsupported = "not written yet in rocepmd-testpmd",
};
