/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rocepmd's XDP program (guides/xdp): on an interface the kernel keeps
 * using, only RoCEv2 for the device goes to the engine.  A frame that is
 * UDP to port 4791 of one of the device's addresses (rp_addrs: IPv4 as
 * ::ffff:a.b.c.d, IPv6 as is) is redirected to the AF_XDP socket of its
 * receive queue (xsks_map, filled by DPDK's af_xdp PMD); everything else
 * passes to the kernel: SSH, DNS, ARP, neighbour discovery, the programs'
 * own TCP.  A RoCE frame for us with no socket on its queue yet is
 * dropped, not passed: the kernel would answer it with an ICMP error.
 * Per-CPU counters in rp_stats (enum rp_xdp_stat), read by the engine.
 */

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "rp_xdp.h"

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, RP_XDP_MAX_QUEUES);
	__type(key, __u32);
	__type(value, __u32);
} xsks_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RP_XDP_MAX_ADDRS);
	__type(key, struct rp_xdp_addr);
	__type(value, __u8);
} rp_addrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RP_XDP_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} rp_stats SEC(".maps");

static __always_inline void
count(__u32 i)
{
	__u64 *v = bpf_map_lookup_elem(&rp_stats, &i);

	if (v != NULL)
		(*v)++;
}

SEC("xdp")
int
rp_xdp_steer(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct rp_xdp_addr key = { 0 };
	struct udphdr *udp;
	int act;

	if ((void *)(eth + 1) > end)
		goto pass;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP ||
		    (ip->frag_off & bpf_htons(0x3fff)) != 0)
			goto pass;	/* a fragment: the kernel's */
		udp = (void *)ip + ip->ihl * 4;
		key.a[10] = 0xff;
		key.a[11] = 0xff;
		__builtin_memcpy(&key.a[12], &ip->daddr, 4);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			goto pass;
		udp = (void *)(ip6 + 1);
		__builtin_memcpy(key.a, &ip6->daddr, 16);
	} else {
		goto pass;
	}
	if ((void *)(udp + 1) > end || udp->dest != bpf_htons(RP_XDP_ROCE_PORT) ||
	    bpf_map_lookup_elem(&rp_addrs, &key) == NULL)
		goto pass;
	act = bpf_redirect_map(&xsks_map, ctx->rx_queue_index, XDP_DROP);
	count(act == XDP_REDIRECT ? RP_XDP_REDIRECTED : RP_XDP_DROPPED);
	return act;
pass:
	count(RP_XDP_PASSED);
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
