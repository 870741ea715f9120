#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# ipv6.sh: the two-host programs over IPv6 (GID index 2: 2001:db8::1 and
# 2001:db8::2, config/netns-{a,b}.ini), the peer resolved by neighbour
# discovery:
#
#   ibv_rc_pingpong -g 2 -s 4096 -c     RC, data checked
#   ibv_ud_pingpong -g 2 -s 512 -c      UD, GRH from the IPv6 header
#   ib_send_bw -x 2 -s 65536            perftest, RC SEND
#   ibv_rc_pingpong -g 1 -s 64 -c       RC over the link-local addresses
#
# Passes when every pair exits 0 with its result lines, and the programs
# printed the IPv6 GIDs they used.  (The TCP side channel of the programs
# runs over IPv4; the RDMA traffic is IPv6.)

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog ib_send_bw perftest
rv_need_prog nft nftables

rv_topology ipv6

# "local address:  LID 0x0000, QPN ..., GID 2001:db8::1" and the remote one
rv_check_gid() {
	local name=$1 gid=$2

	grep -q "GID $gid\$" "$rv_tmp/$name.out" ||
		rv_fail "$name did not use GID $gid"
}

export RV_GID=2
rv_pingpong ibv_rc_pingpong 4096 1000 poll -c
rv_check_gid client 2001:db8::1
rv_check_gid client 2001:db8::2
rv_log "PASS: ibv_rc_pingpong -g 2 over 2001:db8::1 <-> ::2"

rv_pingpong ibv_ud_pingpong 512 1000 poll -c
rv_check_gid client 2001:db8::2
rv_log "PASS: ibv_ud_pingpong -g 2"

rv_pair 18520 ib_send_bw -d rocepmd0 -x 2 -s 65536 -n 200 -F -p 18520
grep -qiE 'RETRY_EXC|error|failed' "$rv_tmp/client.out" "$rv_tmp/client.err" &&
	rv_fail "ib_send_bw reported an error"
awk '$1 == 65536 && $2 == 200 { f = 1 } END { exit !f }' \
	"$rv_tmp/client.out" || rv_fail "ib_send_bw printed no result line"
# perftest prints GIDs byte by byte in decimal: 32:01:13:184 is 2001:db8
grep -q 'GID: 32:01:13:184:00:00:00:00:00:00:00:00:00:00:00:02' \
	"$rv_tmp/client.out" || rv_fail "ib_send_bw did not use 2001:db8::2"
rv_log "PASS: ib_send_bw -x 2"

export RV_GID=1
rv_pingpong ibv_rc_pingpong 64 1000 poll -c
rv_check_gid client 'fe80::[0-9a-f:]*'
rv_log "PASS: ibv_rc_pingpong -g 1 over the link-local addresses"
