#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# qperf.sh [IDLE]: unmodified qperf over rocepmd between two network
# namespaces, connecting through the RDMA CM (-cm1: IB CM REQ/REP/RTU and
# DREQ/DREP as MADs to QP 1).  qperf waits for completions with CQ events
# by default.  IDLE, when given, is the engines' idle policy instead of
# the configuration's.  The RC tests only: qperf turns -cm1 off for UD and
# UC and then addresses the peer by LID, which RoCE has not (on any RoCE
# device, not only rocepmd).
#
#   [rv-<tag>-b] rocepmd-run --config netns-b.ini -- qperf
#   [rv-<tag>-a] rocepmd-run --config netns-a.ini -- qperf 192.0.2.2
#                  -cm1 -t 1 -vvu rc_lat rc_bw ... rc_rdma_read_bw
#
# The READ tests run three times: with max_rd_atomic 1, a probe that
# asked for a READ's responses still arriving once made the responder
# answer them twice and the next READ draw "remote invalid request"
# (selective retransmission, 2026-12-01): one run in two then, caught
# so in all but a few suites in a hundred.
#
# Passes when the client exits 0 and every test printed a positive
# latency or bandwidth, and none printed an error.

. "$(dirname "$0")/lib.sh"

export RV_IDLE=${1:-}
tests=(rc_lat rc_bw rc_bi_bw rc_rdma_write_lat rc_rdma_write_bw
	rc_rdma_read_lat rc_rdma_read_bw rc_rdma_read_lat rc_rdma_read_bw
	rc_rdma_read_lat rc_rdma_read_bw)

rv_need_env
rv_need_root
rv_need_prog qperf qperf
rv_need_prog nft nftables

rv_topology "qp${RV_IDLE:0:2}"
port=19765
rv_log "server ($RP_NS_B): qperf -lp $port"
rv_bg server "$RP_NS_B" "$RV_CFG_B" -- qperf -lp "$port"
srv=$rv_last_pid
rv_wait_listen "$RP_NS_B" "$port" "$srv" server
rv_log "client ($RP_NS_A): qperf $RV_IP_B -lp $port -cm1 -t 1 -vvu ${tests[*]}"
rv_fg client "$RP_NS_A" "$RV_CFG_A" -- qperf "$RV_IP_B" -lp "$port" \
	-cm1 -t 1 -vvu "${tests[@]}"
crc=$rv_status
rv_show client
[ "$crc" -ne 124 ] || rv_fail "client timed out after $RV_TIMEOUT s"
[ "$crc" -eq 0 ] || rv_fail "client exited with status $crc"
out=$rv_tmp/client.out
for t in "${tests[@]}"; do
	grep -q "^$t:" "$out" || rv_fail "qperf printed no result for $t"
done
if grep -qiE 'failed|error|unexpected' "$out" "$rv_tmp/client.err"; then
	rv_fail "qperf reported an error"
fi
# Every test measured something: its block has "latency = X us" or
# "bw = X MB/sec" (or GB/sec) with X > 0, which qperf only prints after
# messages went both ways.
for t in "${tests[@]}"; do
	v=$(awk -v t="$t:" '$0 == t { on = 1; next }
		/^[a-z_]+:$/ { on = 0 }
		on && ($1 == "latency" || $1 == "bw") { print $3; exit }' "$out")
	awk -v v="${v:-0}" 'BEGIN { exit !(v + 0 > 0) }' ||
		rv_fail "$t: no positive latency or bandwidth figure"
done
rv_log "PASS: qperf -cm1 ${tests[*]}${RV_IDLE:+ (idle $RV_IDLE)}"
