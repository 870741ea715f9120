/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The table of traffic modes (testpmd's fwd_engines[]): each entry comes
 * from its own rtp_mode_*.c file.  raw is not here: it runs on the ports
 * before the engine starts (rtp_mode_raw.c).
 */

#include <string.h>

#include "rtp.h"

const struct rtp_mode * const rtp_modes[] = {
	&rtp_mode_send_lat,
	&rtp_mode_send_bw,
	&rtp_mode_write_lat,
	&rtp_mode_write_bw,
	&rtp_mode_read_lat,
	&rtp_mode_read_bw,
	&rtp_mode_atomic_lat,
	&rtp_mode_tag_eager,
	&rtp_mode_tag_rndv,
	NULL,
};

const struct rtp_mode *
rtp_mode_find(const char *name)
{
	for (unsigned int i = 0; rtp_modes[i] != NULL; i++)
		if (strcmp(rtp_modes[i]->name, name) == 0)
			return rtp_modes[i];
	return NULL;
}

void
rtp_mode_list(FILE *f)
{
	for (unsigned int i = 0; rtp_modes[i] != NULL; i++)
		fprintf(f, "  %-10s %s%s%s\n", rtp_modes[i]->name,
			rtp_modes[i]->help,
			rtp_modes[i]->unsupported != NULL ? " -- not yet: " : "",
			rtp_modes[i]->unsupported != NULL ?
			rtp_modes[i]->unsupported : "");
}
