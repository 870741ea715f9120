/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The GID table of a device (rp_net.gid, mirrored in its control block by
 * the engine): built from the MAC and the addresses, looked up by the
 * receive path, the neighbour cache and source GID selection.
 */

#include <string.h>

#include "rp_net.h"

/*
 * The GID table, RoCEv2 entries only: 0 the IPv4-mapped address (as
 * before: programs are told -g 0), 1 the link-local address, modified
 * EUI-64 from the MAC as Linux forms it (RFC 4291 appendix A), 2.. the
 * configured IPv6 addresses.  Needs the MAC (rp_port_init).
 */
void
rp_gid_init(struct rp_net *net)
{
	const uint8_t *m = net->port->mac.addr_bytes;
	uint8_t *ll = net->gid[1];

	memset(net->gid, 0, sizeof(net->gid));
	net->gid[0][10] = 0xff;
	net->gid[0][11] = 0xff;
	memcpy(&net->gid[0][12], &net->ipv4, 4);
	ll[0] = 0xfe;
	ll[1] = 0x80;
	ll[8] = m[0] ^ 0x02;
	ll[9] = m[1];
	ll[10] = m[2];
	ll[11] = 0xff;
	ll[12] = 0xfe;
	ll[13] = m[3];
	ll[14] = m[4];
	ll[15] = m[5];
	for (uint32_t i = 0; i < net->cfg->nr_ipv6; i++)
		memcpy(net->gid[2 + i], net->cfg->ipv6[i], 16);
	net->nr_gid = 2 + net->cfg->nr_ipv6;
}

/* Index of one of our GIDs, or -1. */
int
rp_gid_find(const struct rp_net *net, const uint8_t gid[16])
{
	return rp_gid_index((const uint8_t (*)[16])net->gid, net->nr_gid, gid);
}

const uint8_t *
rp_gid_sgid(const struct rp_net *net, uint32_t idx, const uint8_t dgid[16])
{
	if (idx >= net->nr_gid || rp_gid_is_v4(net->gid[idx]) !=
	    rp_gid_is_v4(dgid))
		return NULL;
	return net->gid[idx];
}
