/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kind of a port, from its driver's name: the one place that reads
 * it.  Here in the configuration layer because the configuration checks
 * af_packet's devargs before the EAL runs (rp_cfg.c); the port layer
 * picks its operations by it at port start (rp_port.c).
 */

#ifndef _RP_PORT_KIND_H_
#define _RP_PORT_KIND_H_

#include <stdbool.h>
#include <string.h>

enum rp_port_kind {
	RP_PORT_ETHDEV,		/* any other PMD: memif, ring, NICs, tap... */
	RP_PORT_AF_PACKET,
	RP_PORT_AF_XDP,
};

/*
 * name: a driver's name (rte_eth_dev_info.driver_name) or a vdev's
 * (net_af_packet0): both begin with the driver's.  NULL: generic.
 */
static inline enum rp_port_kind
rp_port_kind_of(const char *name)
{
	static const char afp[] = "net_af_packet", afx[] = "net_af_xdp";

	if (name == NULL)
		return RP_PORT_ETHDEV;
	if (strncmp(name, afp, sizeof(afp) - 1) == 0)
		return RP_PORT_AF_PACKET;
	if (strncmp(name, afx, sizeof(afx) - 1) == 0)
		return RP_PORT_AF_XDP;
	return RP_PORT_ETHDEV;
}

/*
 * A memory link: the PMD copies frames between processes' memory (memif's
 * rings, a ring PMD's), and nothing on the way can damage them.  A PCI
 * NIC, af_packet, af_xdp and tap are not: a wire or a kernel is.
 */
static inline bool
rp_port_kind_memory(const char *name)
{
	static const char memif[] = "net_memif", ring[] = "net_ring";

	return name != NULL &&
		(strncmp(name, memif, sizeof(memif) - 1) == 0 ||
		 strncmp(name, ring, sizeof(ring) - 1) == 0);
}

#endif /* _RP_PORT_KIND_H_ */
