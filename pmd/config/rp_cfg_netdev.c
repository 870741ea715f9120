/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A port bound to a kernel interface (key netdev, guides/xdp): what the
 * kernel says of it becomes the port's device and addresses, as
 * `rdma link add rxe0 type rxe netdev eth0` takes them for rxe.
 *
 *   device  net_af_xdp<N>,iface=IF,xdp_prog=<rocepmd's XDP program>: the
 *           kernel keeps every frame but RoCEv2 for the device; where XDP
 *           cannot serve (the interface's MTU is over what a page-sized
 *           XDP frame holds, or the program is not installed)
 *           net_af_packet<N>,iface=IF, with a warning: af_packet sees
 *           every frame and the kernel answers RoCE with ICMP errors
 *           unless a firewall rule drops it
 *   ipv4    the interface's first IPv4 address, unless the key is given
 *   ipv6    its global IPv6 addresses (up to RP_MAX_IPV6), unless given
 *
 * Read once, when the configuration is loaded (no EAL: rocepmd-run checks
 * the same).
 *
 * Also the port section's checks of netdev and device
 * (rp_cfg_port_netdev()) and of a net_af_packet device's ring
 * (rp_cfg_af_packet_check()), for rp_cfg.c.
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rp_cfg_netdev.h"
#include "rp_config.h"
#include "rp_port_kind.h"

/* The largest MTU an XDP program sees whole on a veth or a NIC without
 * multi-buffer XDP: a 4 KiB page less XDP's headroom (256) and the
 * skb_shared_info the kernel keeps at its end (320), less the Ethernet
 * header (veth_xdp_set() refuses larger MTUs: ETH_DATA_LEN-ish limits
 * vary by driver; this is veth's). */
#define RP_XDP_MTU_MAX	3506u
/* An interface MTU that carries rocepmd's frames of IB MTU 2048 (+ 64,
 * rp_port_mtu.c); mtu = auto takes 2048 from 2128 (rxe's 80) */
#define RP_AFP_BIG_MTU	2112u

/* Headers around an IB payload in the largest frame the engine sends: */
#define RP_CFG_FRAME_OVERHEAD	(14 + 20 + 8 + 12 + 16 + 4 + 4)
/* Ethernet, IPv4, UDP, BTH, RETH, ImmDt, ICRC. */

/*
 * net_af_packet (TPACKET_V2): the kernel writes a received frame at offset 66
 * of its ring frame and truncates it to the frame's end without telling
 * anyone, so a frame of an IB MTU needs framesz >= MTU + 144.
 */
#define RP_CFG_AFP_RX_OFFSET	66
#define RP_CFG_AFP_FRAMESZ	2048	/* PMD defaults */
#define RP_CFG_AFP_FRAMECNT	512
#define RP_CFG_AFP_ALIGN	16	/* TPACKET_ALIGNMENT */

static int
netdev_mtu(const char *ifname, uint32_t *mtu)
{
	struct ifreq ifr;
	int fd, ret = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0)
		ret = -errno;
	else
		*mtu = (uint32_t)ifr.ifr_mtu;
	close(fd);
	return ret;
}

static unsigned int
prefix_len(const uint8_t *mask, size_t n)
{
	unsigned int len = 0;

	for (size_t i = 0; i < n; i++)
		len += (unsigned int)__builtin_popcount(mask[i]);
	return len;
}

/* The path of rocepmd's XDP program: $ROCEPMD_XDP_PROG, the build tree's,
 * the installed one; NULL if none exists. */
static const char *
xdp_prog_path(void)
{
	const char *env = getenv("ROCEPMD_XDP_PROG");

	if (env != NULL && env[0] != '\0')
		return access(env, R_OK) == 0 ? env : NULL;
	if (access(RP_XDP_PROG_BUILD_PATH, R_OK) == 0)
		return RP_XDP_PROG_BUILD_PATH;
	if (access(RP_XDP_PROG_INSTALL_PATH, R_OK) == 0)
		return RP_XDP_PROG_INSTALL_PATH;
	return NULL;
}

unsigned int
rp_netdev_rx_queues(const char *ifname)
{
	char path[64 + IF_NAMESIZE];
	struct dirent *e;
	unsigned int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	d = opendir(path);
	if (d == NULL)
		return 1;
	while ((e = readdir(d)) != NULL)
		n += strncmp(e->d_name, "rx-", 3) == 0;
	closedir(d);
	return n == 0 ? 1 : n;
}

int
rp_cfg_netdev_bind(struct rp_port_cfg *port, unsigned int idx, bool want_v4,
		   bool want_v6, char *why, size_t len)
{
	struct ifaddrs *ifa, *i;
	const char *prog;
	uint32_t mtu = 0;
	int n;

	if (if_nametoindex(port->netdev) == 0) {
		snprintf(why, len, "no interface '%s' here: %s", port->netdev,
			 strerror(errno));
		return -ENODEV;
	}
	if (netdev_mtu(port->netdev, &mtu) < 0) {
		snprintf(why, len, "cannot read the MTU of '%s': %s",
			 port->netdev, strerror(errno));
		return -EIO;
	}
	prog = xdp_prog_path();
	if (prog != NULL && mtu <= RP_XDP_MTU_MAX) {
		/* Every receive queue of the interface is served, the
		 * PMD's and the engine's own (rp_xsk_rxq.c).  busy_budget=0:
		 * the PMD's preferred busy polling makes every empty poll
		 * a recvfrom() (a quarter of an inline pass's time on a
		 * veth, for nothing: the engine has its idle policies). */
		n = snprintf(port->device, sizeof(port->device),
			     "net_af_xdp%u,iface=%s,xdp_prog=%s,busy_budget=0",
			     idx, port->netdev, prog);
		port->netdev_xdp = true;
	} else {
		/* Several lcores: a socket each, the kernel's fanout
		 * hashing flows over them (rp_shard.c).  Ring frames that
		 * hold what the interface carries: the PMD's default
		 * (2048) holds IB MTU 1024 only. */
		const char *ring = mtu >= RP_AFP_BIG_MTU ?
			",framesz=5120,blocksz=20480" : "";

		n = port->nr_lcores > 1 ?
			snprintf(port->device, sizeof(port->device),
				 "net_af_packet%u,iface=%s,qpairs=%u%s", idx,
				 port->netdev, port->nr_lcores, ring) :
			snprintf(port->device, sizeof(port->device),
				 "net_af_packet%u,iface=%s%s", idx,
				 port->netdev, ring);
		port->netdev_xdp = false;
		snprintf(why, len, "%s: no XDP (%s): af_packet, which sees every frame; the kernel answers RoCEv2 with ICMP errors unless a firewall rule drops it",
			 port->netdev, prog == NULL ?
			 "rocepmd's XDP program rp_xdp.o is not installed" :
			 "the interface's MTU is over 3506");
	}
	if (n < 0 || (size_t)n >= sizeof(port->device)) {
		snprintf(why, len, "device string for '%s' too long",
			 port->netdev);
		return -ENAMETOOLONG;
	}
	if (!want_v4 && !want_v6)
		return 0;
	if (getifaddrs(&ifa) != 0) {
		snprintf(why, len, "getifaddrs: %s", strerror(errno));
		return -errno;
	}
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_netmask == NULL ||
		    strcmp(i->ifa_name, port->netdev) != 0)
			continue;
		if (i->ifa_addr->sa_family == AF_INET && want_v4) {
			const struct sockaddr_in *a = (void *)i->ifa_addr;
			const struct sockaddr_in *m = (void *)i->ifa_netmask;

			port->ipv4 = a->sin_addr.s_addr;
			port->prefix_len = prefix_len((const uint8_t *)
						      &m->sin_addr, 4);
			want_v4 = false;
		} else if (i->ifa_addr->sa_family == AF_INET6 && want_v6 &&
			   port->nr_ipv6 < RP_MAX_IPV6) {
			const struct sockaddr_in6 *a = (void *)i->ifa_addr;
			const struct sockaddr_in6 *m = (void *)i->ifa_netmask;

			/* Global unicast only: the link-local GID is the
			 * device's own (from its MAC). */
			if (IN6_IS_ADDR_LINKLOCAL(&a->sin6_addr) ||
			    IN6_IS_ADDR_MULTICAST(&a->sin6_addr) ||
			    IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
				continue;
			memcpy(port->ipv6[port->nr_ipv6], &a->sin6_addr, 16);
			port->ipv6_plen[port->nr_ipv6] = (uint8_t)prefix_len(
				m->sin6_addr.s6_addr, 16);
			port->nr_ipv6++;
		}
	}
	freeifaddrs(ifa);
	if (want_v4) {
		snprintf(why, len, "'%s' has no IPv4 address (add one, or give the key ipv4)",
			 port->netdev);
		return -EADDRNOTAVAIL;
	}
	return 0;
}

/* Value of key=<decimal> in a device's arguments, or def. */
static int
rp_cfg_devarg_u32(const char *dev, const char *key, uint32_t def,
		  uint32_t *out)
{
	size_t klen = strlen(key);
	const char *p = strchr(dev, ',');

	*out = def;
	while (p != NULL) {
		p++;
		if (strncmp(p, key, klen) == 0 && p[klen] == '=')
			return rp_cfg_parse_uint(p + klen + 1,
						 strcspn(p + klen + 1, ","),
						 out);
		p = strchr(p, ',');
	}
	return 0;
}

/*
 * net_af_packet truncates received frames to its ring frames and
 * mis-addresses frames when blocksz is not a multiple of framesz: catch both.
 */
int
rp_cfg_af_packet_check(const struct rp_cfg_ctx *ctx, const char *sect,
		       struct rp_port_cfg *port)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t fs, bs, fc, largest, m;
	char fit[64];
	size_t n = 0;

	if (rp_port_kind_of(port->ethdev_name) != RP_PORT_AF_PACKET)
		return 0;
	if (page <= 0)
		page = 4096;
	if (rp_cfg_devarg_u32(port->device, "framesz", RP_CFG_AFP_FRAMESZ,
			      &fs) != 0 ||
	    rp_cfg_devarg_u32(port->device, "blocksz", (uint32_t)page,
			      &bs) != 0 ||
	    rp_cfg_devarg_u32(port->device, "framecnt", RP_CFG_AFP_FRAMECNT,
			      &fc) != 0)
		return rp_cfg_fail(ctx, -EINVAL, sect, "device",
				   "framesz, blocksz, framecnt: decimal",
				   "net_af_packet argument is not a number");
	if (fs == 0 || fs % RP_CFG_AFP_ALIGN != 0 || bs == 0 ||
	    bs % (uint32_t)page != 0 || bs % fs != 0 || fc == 0 ||
	    fc % (bs / fs) != 0)
		return rp_cfg_fail(ctx, -EINVAL, sect, "device",
				   "framesz a multiple of 16, blocksz a "
				   "multiple of the page size and of framesz, "
				   "framecnt a multiple of blocksz/framesz",
				   "net_af_packet framesz=%" PRIu32 " blocksz=%"
				   PRIu32 " framecnt=%" PRIu32
				   " is not a valid ring", fs, bs, fc);
	/* The largest IB MTU whose frames the ring holds (0: none). */
	for (largest = 4096; largest >= 256; largest /= 2)
		if (largest + RP_CFG_FRAME_OVERHEAD + RP_CFG_AFP_RX_OFFSET <= fs)
			break;
	if (largest < 256)
		return rp_cfg_fail(ctx, -EINVAL, sect, "device",
				   "framesz=400 or more",
				   "net_af_packet framesz=%" PRIu32 " holds no "
				   "frame of an IB MTU (256 needs framesz >= %u)",
				   fs, 256 + RP_CFG_FRAME_OVERHEAD +
				   RP_CFG_AFP_RX_OFFSET);
	if (port->mtu == RP_MTU_AUTO) {
		/* the interface's MTU may allow less (rp_port_mtu_auto(),
		 * at start) */
		port->mtu_max = largest;
		return 0;
	}
	if (port->mtu <= largest)
		return 0;
	fit[0] = '\0';
	for (m = 256; m <= largest && n < sizeof(fit); m *= 2)
		n += (size_t)snprintf(fit + n, sizeof(fit) - n, "%s%" PRIu32,
				      n == 0 ? "" : ", ", m);
	return rp_cfg_fail(ctx, -EINVAL, sect, "mtu", fit,
			   "%" PRIu32 " does not fit net_af_packet frames of "
			   "framesz=%" PRIu32 " (needs framesz >= %" PRIu32
			   ", e.g. framesz=5120,blocksz=20480 in device)",
			   port->mtu, fs, port->mtu + RP_CFG_FRAME_OVERHEAD +
			   RP_CFG_AFP_RX_OFFSET);
}

/*
 * device and ipv4 are required, unless netdev names a kernel interface:
 * then they come from it (rp_cfg_netdev_bind() above).
 */
int
rp_cfg_port_netdev(const struct rp_cfg_ctx *ctx, const char *sect,
		   struct rp_port_cfg *port, unsigned int idx)
{
	char why[256] = "";
	char acc[64];
	int rc;

	if (port->netdev[0] == '\0') {
		if (port->device[0] == '\0')
			return rp_cfg_fail(ctx, -EINVAL, sect, "device",
					   rp_cfg_accepted(rp_cfg_key_find(
						RP_CFG_SECT_PORT, "device"),
						acc, sizeof(acc)),
					   "required key missing (or give "
					   "netdev = IFACE)");
		if (port->ipv4 == 0)
			return rp_cfg_fail(ctx, -EINVAL, sect, "ipv4",
					   rp_cfg_accepted(rp_cfg_key_find(
						RP_CFG_SECT_PORT, "ipv4"),
						acc, sizeof(acc)),
					   "required key missing");
		return 0;
	}
	if (port->device[0] != '\0')
		return rp_cfg_fail(ctx, -EINVAL, sect, "netdev", NULL,
				   "netdev and device: give one or the other");
	rc = rp_cfg_netdev_bind(port, idx, port->ipv4 == 0,
				port->nr_ipv6 == 0, why, sizeof(why));
	if (rc < 0)
		return rp_cfg_fail(ctx, rc, sect, "netdev", NULL, "%s", why);
	if (why[0] != '\0')
		fprintf(stderr, "rocepmd: [%s] netdev: %s\n", sect, why);
	return 0;
}
