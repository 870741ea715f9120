#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# inv_pingpong.sh GID_INDEX: test/interop/inv_pingpong, rocepmd against
# rocepmd between two network namespaces, over GID index GID_INDEX (0:
# IPv4, 2: IPv6, config/netns-{a,b}.ini):
#
#   [rv-<tag>-b] rocepmd-run -- inv_pingpong -d rocepmd0 -g G -p 18530
#   [rv-<tag>-a] rocepmd-run -- inv_pingpong ... 192.0.2.2
#
# Passes when both exit 0 and print their PASS lines: SEND_WITH_IMM and
# RDMA_WRITE_WITH_IMM (immediates, completion flags, data), a type 2
# window bound with IBV_WR_BIND_MW over an MR with no remote right
# (LOCAL_WRITE | MW_BIND) that the client WRITEs and READs through (data
# checked on both sides), SEND_WITH_INV of its rkey (the
# server's completion has IBV_WC_WITH_INV and that rkey), and a WRITE
# through the invalidated rkey completing with IBV_WC_REM_ACCESS_ERR.

. "$(dirname "$0")/lib.sh"

g=${1:?usage: inv_pingpong.sh GID_INDEX}
rv_need_env
rv_need_root
[ -x "${RP_INV_PINGPONG:-}" ] || rv_fail "RP_INV_PINGPONG is not executable"

rv_topology "inv$g"
rv_pair 18530 "$RP_INV_PINGPONG" -d rocepmd0 -g "$g" -p 18530
for side in client server; do
	grep -q "^inv_pingpong: PASS ($side)" "$rv_tmp/$side.out" ||
		rv_fail "the $side printed no PASS line"
done
if [ "$g" = 2 ]; then
	grep -q 'GID 2001:db8::2$' "$rv_tmp/client.out" ||
		rv_fail "the client did not use the IPv6 GID 2001:db8::2"
fi
rv_log "PASS: inv_pingpong over GID index $g"
