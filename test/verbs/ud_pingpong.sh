#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# ud_pingpong.sh MODE: unmodified ibv_ud_pingpong over rocepmd between two
# network namespaces, MODE poll or event (-e).  UD messages are one packet,
# so the size (512) stays below the IB MTU; -g 0 gives the GRH every RoCE
# packet needs.  UD has no retransmission: a datagram lost on the veth
# stalls ibv_ud_pingpong, which then fails on the timeout.
#
# Passes when both sides exit 0 and print their result lines with
# 2 x 512 x ITERS bytes and ITERS iterations (-c: buffers checked).

. "$(dirname "$0")/lib.sh"

mode=${1:?usage: ud_pingpong.sh poll|event}
size=${RV_UD_SIZE:-512}
# Polling: both programs and both engines spin on two CPUs, so every
# round trip waits for a scheduler slice; 3000 rounds prove as much as
# 10000 at a third of the time.
if [ "$mode" = poll ]; then
	iters=${RV_ITERS:-3000}
else
	iters=${RV_ITERS:-10000}
fi
case $mode in
poll|event) ;;
*) rv_fail "MODE must be poll or event, not '$mode'" ;;
esac

rv_need_env
rv_need_root
rv_need_prog ibv_ud_pingpong ibverbs-utils
rv_need_prog nft nftables

rv_topology "ud${mode:0:1}"
mtu=$(rv_cfg_mtu "$RV_CFG_A")
[ "$size" -le "$mtu" ] || rv_fail "size $size exceeds the IB MTU $mtu"
rv_pingpong ibv_ud_pingpong "$size" "$iters" "$mode" -c
rv_log "PASS: ibv_ud_pingpong -s $size -n $iters ($mode)"
