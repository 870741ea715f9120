/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The port's MTU against the IB MTU (rp_port_mtu_check()), at port start:
 * what the PMD and the kernel interface behind it carry, raised where the
 * port is the engine's own, and what to change said where it cannot be.
 */

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "rp_log.h"
#include "rp_pkt.h"
#include "rp_port.h"

/*
 * L3 bytes around an IB MTU of payload in the largest frame the engine
 * sends: IPv4, UDP, BTH, RETH, ImmDt, ICRC (rp_cfg.c's frame overhead
 * without Ethernet).  A port must carry IB MTU + this as its MTU.
 */
#define RP_L3_OVERHEAD	(20u + 8u + 12u + 16u + 4u + RP_ICRC_SIZE)

/*
 * rxe's headers allowance (RXE_MAX_HDR_LENGTH): rxe takes the largest IB
 * MTU of at most its netdev's MTU less this (eth_mtu_int_to_enum()).
 */
#define RP_RXE_HDR_LENGTH	80u

/* The largest IB MTU m with m + overhead <= l3_mtu, or 0 if none. */
static uint32_t
port_ib_mtu_under(uint32_t l3_mtu, uint32_t overhead)
{
	uint32_t m;

	for (m = 4096; m >= 256; m /= 2)
		if (m + overhead <= l3_mtu)
			return m;
	return 0;
}

/* The largest IB MTU whose frames fit an L3 MTU, or 0 if none does. */
static uint32_t
port_ib_mtu_fit(uint32_t l3_mtu)
{
	return port_ib_mtu_under(l3_mtu, RP_L3_OVERHEAD);
}

/*
 * The largest L3 packet the PMD itself carries, from what it reports, or
 * UINT32_MAX for no limit of its own.  net_af_packet reports the Ethernet
 * default (max_rx_pktlen 1518) whatever its ring and the interface carry:
 * its real limit is the ring frame, which the configuration checks
 * (framesz, rp_cfg.c), and then the interface's MTU.
 */
static uint32_t
port_pmd_max_l3(const struct rp_port *p, const struct rte_eth_dev_info *info)
{
	uint32_t max = info->max_mtu;
	const uint32_t l2 = RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN;

	if (p->kind_ops->no_pmd_mtu)
		return UINT32_MAX;
	if (info->max_rx_pktlen > l2 && info->max_rx_pktlen - l2 < max)
		max = info->max_rx_pktlen - l2;
	return max >= UINT16_MAX ? UINT32_MAX : max;
}

/*
 * MTU of the kernel interface behind a port (af_packet, af_xdp, tap and
 * bifurcated NICs report its index), read in the calling thread's network
 * namespace, which is the one the PMD opened the interface in.
 */
static int
port_kernel_mtu(unsigned int if_index, char *name, uint32_t *mtu)
{
	struct ifreq ifr;
	int s, ret = 0;

	memset(&ifr, 0, sizeof(ifr));
	if (if_indextoname(if_index, ifr.ifr_name) == NULL)
		return -errno;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	if (ioctl(s, SIOCGIFMTU, &ifr) < 0)
		ret = -errno;
	close(s);
	if (ret < 0)
		return ret;
	strcpy(name, ifr.ifr_name);
	*mtu = (uint32_t)ifr.ifr_mtu;
	return 0;
}

/* ", or mtu = N in [portI]" with the largest IB MTU that fits, or "". */
static const char *
port_mtu_advice(char *buf, size_t len, const struct rp_port *p,
		uint32_t l3_mtu)
{
	uint32_t fit = port_ib_mtu_fit(l3_mtu);

	if (fit == 0)
		return "";
	snprintf(buf, len, ", or mtu = %u in [port%u]", fit, p->id);
	return buf;
}

/*
 * mtu = auto: the IB MTU rxe would take on the same link (rxe_set_mtu():
 * the largest of at most the netdev's MTU less 80 bytes), so that rocepmd
 * and rxe on one link report one active MTU and a program that takes its
 * own port's (perftest, rping) sends what the other end's QP takes: rxe
 * rejects a packet over its QP's MTU.  A kernel interface's MTU is the
 * host's (the veth of the tests: 9000, so 4096); a port of the engine's
 * own has the MTU its ethdev has (DPDK's default 1500, so 1024: a NIC's
 * network is not known to carry more).  At most what the PMD carries of
 * rocepmd's own frames (af_xdp's page) and what the configuration allows
 * (af_packet's ring frames).  Read once, at start.
 */
uint32_t
rp_port_mtu_auto(const struct rp_port *p, const struct rte_eth_dev_info *info)
{
	uint32_t pmd = port_ib_mtu_fit(port_pmd_max_l3(p, info));
	uint32_t l3 = UINT32_MAX, kmtu, fit;
	char ifname[IF_NAMESIZE], why[64];
	uint16_t port_mtu;
	bool ring;
	int ret;

	if (info->if_index != 0) {
		ret = port_kernel_mtu(info->if_index, ifname, &kmtu);
		if (ret < 0) {
			RP_LOGT(rp_logtype_port, WARNING,
				"%s: cannot read the MTU of interface %u (%s): IB MTU 1024 (mtu = auto)",
				p->cfg->device, info->if_index, strerror(-ret));
			return 1024;
		}
		snprintf(why, sizeof(why), "interface %s MTU %u", ifname,
			 kmtu);
		l3 = RTE_MIN(l3, kmtu);
	} else if (rte_eth_dev_get_mtu(p->port_id, &port_mtu) == 0) {
		snprintf(why, sizeof(why), "port MTU %u", port_mtu);
		l3 = RTE_MIN(l3, (uint32_t)port_mtu);
	} else {
		snprintf(why, sizeof(why), "no port MTU");
	}
	fit = RTE_MIN(port_ib_mtu_under(l3, RP_RXE_HDR_LENGTH), pmd);
	if (fit == 0)
		fit = 256;	/* as rxe: the least, and the check warns */
	ring = p->cfg->mtu_max != 0 && fit > p->cfg->mtu_max;
	if (ring)
		fit = p->cfg->mtu_max;
	RP_LOGT(rp_logtype_port, INFO, "%s: IB MTU %u (mtu = auto: %s%s)",
		p->cfg->device, fit, why, ring ? ", the ring's frames" : "");
	return fit;
}

/*
 * Frames of the IB MTU must pass the port: say so only when they cannot,
 * and what to change.  A port on a kernel interface carries what the
 * interface's MTU allows, whatever the ethdev's own MTU field says (1500
 * for af_packet, which never looks at it); the interface belongs to the
 * host, so the engine reads its MTU and never changes it.  Any other port
 * is the engine's own: raise its MTU if needed.
 */
void
rp_port_mtu_check(struct rp_port *p, const struct rte_eth_dev_info *info)
{
	const uint32_t need = p->mtu + RP_L3_OVERHEAD;
	const uint32_t pmd_max = port_pmd_max_l3(p, info);
	char ifname[IF_NAMESIZE];
	char advice[48];
	uint32_t kmtu = 0;
	uint16_t port_mtu;
	int ret;

	if (info->if_index != 0) {
		ret = port_kernel_mtu(info->if_index, ifname, &kmtu);
		if (ret < 0) {
			RP_LOGT(rp_logtype_port, INFO,
				"%s: cannot read the MTU of interface %u (%s): not checked",
				p->cfg->device, info->if_index, strerror(-ret));
		} else if (kmtu < need) {
			RP_LOGT(rp_logtype_port, WARNING,
				"%s: interface %s has MTU %u, IB MTU %u needs %u: packets over %u bytes are dropped; set the interface MTU to %u or more (ip link set dev %s mtu %u)%s",
				p->cfg->device, ifname, kmtu, p->mtu, need,
				kmtu, need, ifname, need,
				port_mtu_advice(advice, sizeof(advice), p,
						RTE_MIN(kmtu, pmd_max)));
			return;
		} else {
			RP_LOGT(rp_logtype_port, DEBUG,
				"%s: interface %s MTU %u carries IB MTU %u (needs %u)",
				p->cfg->device, ifname, kmtu, p->mtu, need);
		}
		if (pmd_max < need)
			RP_LOGT(rp_logtype_port, WARNING,
				"%s: the PMD carries packets of up to %u bytes, IB MTU %u needs %u: longer ones are dropped%s",
				p->cfg->device, pmd_max, p->mtu, need,
				port_mtu_advice(advice, sizeof(advice), p,
						pmd_max));
		return;
	}

	if (rte_eth_dev_get_mtu(p->port_id, &port_mtu) != 0 ||
	    port_mtu >= need)
		return;
	ret = rte_eth_dev_set_mtu(p->port_id, need);
	if (ret == 0) {
		RP_LOGT(rp_logtype_port, INFO,
			"%s: port MTU %u raised to %u for IB MTU %u",
			p->cfg->device, port_mtu, need, p->mtu);
		return;
	}
	/* No MTU to set, and no limit either (net_ring): nothing is lost. */
	if (pmd_max >= need)
		return;
	RP_LOGT(rp_logtype_port, WARNING,
		"%s: port MTU %u, IB MTU %u needs %u and the port cannot be set to it (%s): packets over %u bytes are dropped%s",
		p->cfg->device, port_mtu, p->mtu, need, rte_strerror(-ret),
		port_mtu,
		port_mtu_advice(advice, sizeof(advice), p, port_mtu));
}
