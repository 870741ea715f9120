/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XDP steering on an af_xdp port (guides/xdp): DPDK's af_xdp PMD loads and
 * attaches rocepmd's program (bpf/rp_xdp.c, devarg xdp_prog=) when the
 * port's queue is set up, and detaches it when the port closes.  Here, with
 * libbpf: before that, a program of ours left on the interface by an
 * engine that was killed is found and removed (the PMD would refuse to
 * attach over it); after the start, the device's addresses go into the
 * program's rp_addrs map (with the multicast groups UD QPs joined,
 * rp_mcast.c), and its per-CPU counters are read (on the lcore,
 * with the link poll, ten times a second: never per packet), with the
 * statistics of the port's AF_XDP socket (XDP_STATISTICS: frames the
 * socket dropped, descriptors the kernel found invalid), which tell what
 * the PMD's own counters do not.
 */

#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>

#include "rp_atomic.h"
#include "rp_cfg_netdev.h"
#include "rp_log.h"
#include "rp_port.h"
#include "rp_pkt.h"
#include "rp_xdp.h"

#define RP_XDP_MAX_CPUS	512
#define RP_AF_XDP	44		/* AF_XDP, which older libcs lack */
#define RP_SOL_XDP	283		/* SOL_XDP, likewise */
#define RP_XSK_FDS	16

/*
 * The AF_XDP sockets the process has before a port's queue is set up:
 * the one that is new after it is the port's (ports start one at a time,
 * on the main lcore).  The PMD keeps its socket to itself.
 */
static int xsk_before[RP_XSK_FDS];
static unsigned int nr_xsk_before;

/* fd is an AF_XDP socket. */
static bool
xsk_is_socket(int fd, const void *arg __rte_unused)
{
	int dom = 0;
	socklen_t len = sizeof(dom);

	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) == 0 &&
		dom == RP_AF_XDP;
}

/* The process's AF_XDP sockets into fds (at most max): how many. */
static unsigned int
xsk_fds(int *fds, unsigned int max)
{
	return RTE_MIN(rp_port_fds(xsk_is_socket, NULL, fds, max), max);
}

/* After the queue setup: the AF_XDP socket that was not there before. */
static int
xsk_find_new(void)
{
	int now[RP_XSK_FDS];
	unsigned int n = xsk_fds(now, RP_XSK_FDS);

	for (unsigned int i = 0; i < n; i++) {
		bool seen = false;

		for (unsigned int j = 0; j < nr_xsk_before; j++)
			seen |= now[i] == xsk_before[j];
		if (!seen)
			return now[i];
	}
	return -1;
}

/* Whether the af_xdp port has a program of its own given. */
static bool
xdp_port_ours(const struct rp_port *p)
{
	return strstr(p->cfg->device, "xdp_prog=") != NULL;
}

/* The XDP program attached to ifindex: its fd and info, or -1. */
static int
xdp_prog_get(uint32_t ifindex, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);
	__u32 id = 0;
	int fd;

	if (bpf_xdp_query_id((int)ifindex, 0, &id) != 0 || id == 0)
		return -1;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return -1;
	memset(info, 0, sizeof(*info));
	if (bpf_obj_get_info_by_fd(fd, info, &len) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int
rp_xdp_port_prepare(struct rp_port *p, uint32_t ifindex)
{
	struct bpf_prog_info info;
	char ifname[IF_NAMESIZE] = "?";
	int fd;

	p->xdp_addrs_fd = -1;
	p->xdp_stats_fd = -1;
	p->xsk_fd = -1;
	p->xsks_map_fd = -1;
	if (!xdp_port_ours(p) || ifindex == 0)
		return 0;
	nr_xsk_before = xsk_fds(xsk_before, RP_XSK_FDS);
	if_indextoname(ifindex, ifname);
	fd = xdp_prog_get(ifindex, &info);
	if (fd < 0)
		return 0;
	close(fd);
	if (strncmp(info.name, RP_XDP_PROG_NAME, sizeof(info.name) - 1) != 0) {
		RP_LOGT(rp_logtype_port, ERR,
			"%s: interface %s has an XDP program that is not rocepmd's (%s, id %u): remove it first (ip link set dev %s xdp off)",
			p->cfg->device, ifname, info.name, info.id, ifname);
		return -EBUSY;
	}
	/* Ours, and no engine of this host serves the interface (it would
	 * hold the port's claim): left by one that was killed. */
	if (bpf_xdp_detach((int)ifindex, 0, NULL) != 0) {
		RP_LOGT(rp_logtype_port, ERR,
			"%s: cannot remove the XDP program a killed engine left on %s: %s",
			p->cfg->device, ifname, strerror(errno));
		return -EBUSY;
	}
	RP_LOGT(rp_logtype_port, NOTICE,
		"%s: removed the XDP program (id %u) a killed engine left on %s",
		p->cfg->device, info.id, ifname);
	rp_stats_inc(p->q[0]->stats, RP_STAT_XDP_STALE);
	return 0;
}

/* The program's map called name, or -1. */
static int
xdp_map_find(const struct bpf_prog_info *pinfo, int prog_fd, const char *name)
{
	__u32 ids[16];
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	info.nr_map_ids = RTE_MIN(pinfo->nr_map_ids, (__u32)RTE_DIM(ids));
	info.map_ids = (__u64)(uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) != 0)
		return -1;
	for (__u32 i = 0; i < info.nr_map_ids; i++) {
		struct bpf_map_info minfo = { 0 };
		__u32 mlen = sizeof(minfo);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &minfo, &mlen) == 0 &&
		    strncmp(minfo.name, name, sizeof(minfo.name) - 1) == 0)
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * The receive queues the port serves: on an interface with several (RSS),
 * every one, as far as the program's xsks_map reaches.
 */
uint32_t
rp_xdp_port_queues(const struct rp_port *p, uint32_t ifindex)
{
	char ifname[IF_NAMESIZE];
	uint32_t nq;

	if (!xdp_port_ours(p) || ifindex == 0 ||
	    if_indextoname(ifindex, ifname) == NULL ||
	    strstr(p->cfg->device, "start_queue=") != NULL ||
	    strstr(p->cfg->device, "queue_count=") != NULL)
		return 1;
	nq = rp_netdev_rx_queues(ifname);
	if (nq > RP_XDP_MAX_QUEUES) {
		RP_LOGT(rp_logtype_port, WARNING,
			"%s: %s has %u receive queues; rocepmd serves the first %u (RoCEv2 on the others is dropped: ethtool -L %s combined %u)",
			p->cfg->device, ifname, nq, RP_XDP_MAX_QUEUES, ifname,
			RP_XDP_MAX_QUEUES);
		nq = RP_XDP_MAX_QUEUES;
	}
	return nq;
}

int
rp_xdp_port_start(struct rp_port *p, uint32_t ifindex)
{
	char ifname[IF_NAMESIZE];
	struct bpf_prog_info info;
	int fd;

	if (!xdp_port_ours(p))
		return 0;
	fd = xdp_prog_get(ifindex, &info);
	if (fd < 0 || strncmp(info.name, RP_XDP_PROG_NAME,
			      sizeof(info.name) - 1) != 0) {
		if (fd >= 0)
			close(fd);
		RP_LOGT(rp_logtype_port, ERR,
			"%s: rocepmd's XDP program is not attached after the start",
			p->cfg->device);
		return -ENOENT;
	}
	p->xdp_addrs_fd = xdp_map_find(&info, fd, RP_XDP_ADDRS_MAP);
	p->xdp_stats_fd = xdp_map_find(&info, fd, RP_XDP_STATS_MAP);
	p->xsks_map_fd = xdp_map_find(&info, fd, RP_XDP_XSKS_MAP);
	close(fd);
	if (p->xdp_addrs_fd < 0 || p->xdp_stats_fd < 0 ||
	    p->xsks_map_fd < 0) {
		RP_LOGT(rp_logtype_port, ERR,
			"%s: the XDP program has no %s, %s or %s map: not rocepmd's bpf/rp_xdp.o?",
			p->cfg->device, RP_XDP_ADDRS_MAP, RP_XDP_STATS_MAP,
			RP_XDP_XSKS_MAP);
		rp_xdp_port_fini(p);
		return -ENOENT;
	}
	/* Before the engine's own sockets are made: the PMD's is new. */
	p->xsk_fd = xsk_find_new();
	if (p->xsk_fd < 0)
		RP_LOGT(rp_logtype_port, WARNING,
			"%s: its AF_XDP socket not found: no xsk_* counters",
			p->cfg->device);
	if (if_indextoname(ifindex, ifname) == NULL ||
	    rp_xsk_rxq_open(p, ifname, p->xsks_map_fd,
			    rp_xdp_port_queues(p, ifindex)) < 0) {
		rp_xdp_port_fini(p);
		return -EIO;
	}
	RP_LOGT(rp_logtype_port, INFO,
		"%s: XDP program %u steers RoCEv2 for the device to the engine, the rest to the kernel",
		p->cfg->device, info.id);
	return 0;
}

/* The device's addresses (its GIDs, IPv4 ::ffff:-mapped) into the map. */
void
rp_xdp_port_addrs(struct rp_port *p, const uint8_t (*gid)[16], uint32_t n)
{
	static const uint8_t zero[16];
	const __u8 one = 1;

	if (p->xdp_addrs_fd < 0)
		return;
	for (unsigned int g = 0; g < n; g++) {
		struct rp_xdp_addr a;

		if (memcmp(gid[g], zero, 16) == 0)
			continue;
		memcpy(a.a, gid[g], 16);
		if (bpf_map_update_elem(p->xdp_addrs_fd, &a, &one, BPF_ANY) != 0)
			RP_LOGT(rp_logtype_port, ERR,
				"%s: XDP address map: %s: RoCEv2 to GID %u goes to the kernel",
				p->cfg->device, strerror(errno), g);
	}
}

/* A multicast group a UD QP joined (add) or the last one left. */
void
rp_xdp_port_group(struct rp_port *p, const uint8_t gid[16], bool add)
{
	const __u8 one = 1;
	struct rp_xdp_addr a;

	if (p->xdp_addrs_fd < 0)
		return;
	memcpy(a.a, gid, 16);
	if (!add)
		(void)bpf_map_delete_elem(p->xdp_addrs_fd, &a);
	else if (bpf_map_update_elem(p->xdp_addrs_fd, &a, &one, BPF_ANY) != 0)
		RP_LOGT(rp_logtype_port, ERR,
			"%s: XDP address map: %s: RoCEv2 to a multicast group goes to the kernel",
			p->cfg->device, strerror(errno));
}

void
rp_xdp_port_fini(struct rp_port *p)
{
	rp_xsk_rxq_close(p, p->xsks_map_fd);
	if (p->xsks_map_fd >= 0)
		close(p->xsks_map_fd);
	p->xsks_map_fd = -1;
	if (p->xdp_addrs_fd >= 0)
		close(p->xdp_addrs_fd);
	if (p->xdp_stats_fd >= 0)
		close(p->xdp_stats_fd);
	p->xdp_addrs_fd = -1;
	p->xdp_stats_fd = -1;
	p->xsk_fd = -1;		/* the PMD's, closed with the port */
}

/* The port's AF_XDP socket's statistics into the device's counters. */
static void
xsk_stats_read(struct rp_port *p)
{
	struct xdp_statistics st;
	socklen_t len = sizeof(st);

	memset(&st, 0, sizeof(st));
	if (p->xsk_fd < 0 ||
	    getsockopt(p->xsk_fd, RP_SOL_XDP, XDP_STATISTICS, &st, &len) != 0)
		return;
	rp_xsk_rxq_stats(p, &st);
	rp_store_relaxed(&p->q[0]->stats[RP_STAT_XSK_RX_DROPPED], st.rx_dropped);
	rp_store_relaxed(&p->q[0]->stats[RP_STAT_XSK_RX_RING_FULL],
			 st.rx_ring_full);
	rp_store_relaxed(&p->q[0]->stats[RP_STAT_XSK_FILL_EMPTY],
			 st.rx_fill_ring_empty_descs);
	rp_store_relaxed(&p->q[0]->stats[RP_STAT_XSK_INVALID],
			 st.rx_invalid_descs + st.tx_invalid_descs);
}

/* af_xdp's rp_port_ops.stats: the socket's and the program's counters. */
void
rp_xdp_port_stats(struct rp_port *p)
{
	static const enum rp_stat to[RP_XDP_STAT_MAX] = {
		[RP_XDP_REDIRECTED] = RP_STAT_XDP_REDIRECTED,
		[RP_XDP_PASSED] = RP_STAT_XDP_PASSED,
		[RP_XDP_DROPPED] = RP_STAT_XDP_DROPPED,
	};
	uint64_t v[RP_XDP_MAX_CPUS];	/* one per possible CPU */
	int ncpu;

	xsk_stats_read(p);
	if (p->xdp_stats_fd < 0)
		return;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0 || ncpu > RP_XDP_MAX_CPUS)
		return;
	for (__u32 k = 0; k < RP_XDP_STAT_MAX; k++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(p->xdp_stats_fd, &k, v) != 0)
			continue;
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
		rp_store_relaxed(&p->q[0]->stats[to[k]], sum);
	}
}

void
rp_xdp_port_addrs_sync(struct rp_port *p, const uint8_t (*old)[16],
		       const uint8_t (*gid)[16], uint32_t n)
{
	static const uint8_t zero[16];

	if (p->xdp_addrs_fd < 0)
		return;
	for (unsigned int g = 0; g < RP_GID_TBL_LEN; g++) {
		struct rp_xdp_addr a;

		if (memcmp(old[g], zero, 16) == 0 ||
		    rp_gid_index(gid, n, old[g]) >= 0)
			continue;
		memcpy(a.a, old[g], 16);
		(void)bpf_map_delete_elem(p->xdp_addrs_fd, &a);
	}
	rp_xdp_port_addrs(p, gid, n);
}
