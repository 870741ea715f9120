#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# rc_pingpong.sh SIZE MODE [PATH_MTU|-] [IDLE]: unmodified ibv_rc_pingpong
# over rocepmd between two network namespaces.  MODE is poll or event (-e:
# sleep on CQ events).  PATH_MTU, when given, is passed as -m
# (ibv_rc_pingpong's default path MTU is 1024, so without it no frame of the
# configuration's 4096 MTU is ever sent).  IDLE, when given, is the engines'
# idle policy instead of the configuration's.
#
#   [rv-<tag>-b] rocepmd-run --config netns-b.ini -- ibv_rc_pingpong
#                  -d rocepmd0 -g 0 -s SIZE -n 10000 -c [-e]
#   [rv-<tag>-a] rocepmd-run --config netns-a.ini -- ibv_rc_pingpong
#                  ... 192.0.2.2
#
# Passes when both exit 0 and both print their result lines with
# 2 x SIZE x 10000 bytes and 10000 iterations (-c: each side also checks
# the received buffer).  The client's lines are in the log.

. "$(dirname "$0")/lib.sh"

size=${1:?usage: rc_pingpong.sh SIZE poll|event}
mode=${2:?usage: rc_pingpong.sh SIZE poll|event}
pmtu=${3:-}
[ "$pmtu" != - ] || pmtu=
export RV_IDLE=${4:-}
# Polling: both programs and both engines spin on two CPUs, so every
# round trip waits for a scheduler slice; 3000 rounds prove as much as
# 10000 at a third of the time.
if [ "$mode" = poll ]; then
	iters=${RV_ITERS:-3000}
else
	iters=${RV_ITERS:-10000}
fi
extra=(-c)
[ -z "$pmtu" ] || extra+=(-m "$pmtu")
case $mode in
poll|event) ;;
*) rv_fail "MODE must be poll or event, not '$mode'" ;;
esac

rv_need_env
rv_need_root
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog nft nftables

# A path MTU over 2048 needs IB MTU 4096: af_packet (XDP on a veth
# carries frames of about 3500 bytes at most).
if [ -n "$pmtu" ] && [ "$pmtu" -gt 2048 ]; then
	export RV_PORT=af_packet
fi
rv_topology "rc$size${mode:0:1}${pmtu:+m$((pmtu / 256))}${RV_IDLE:0:2}"
rv_pingpong ibv_rc_pingpong "$size" "$iters" "$mode" "${extra[@]}"
rv_log "PASS: ibv_rc_pingpong -s $size -n $iters ${extra[*]} ($mode${RV_IDLE:+, idle $RV_IDLE})"
