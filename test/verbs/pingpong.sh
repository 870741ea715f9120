#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# pingpong.sh PROG SIZE MODE [ARG...]: another unmodified ibverbs-utils
# pingpong (ibv_uc_pingpong, ibv_srq_pingpong, ibv_rc_pingpong with ARGs
# such as -o for on-demand paging) over rocepmd between two network
# namespaces, as rc_pingpong.sh runs ibv_rc_pingpong.  MODE is poll or
# event (-e); -c checks every received buffer.
#
# Passes when both exit 0 and print their result lines with
# 2 x SIZE x ITERS bytes and ITERS iterations.

. "$(dirname "$0")/lib.sh"

prog=${1:?usage: pingpong.sh PROG SIZE poll|event [ARG...]}
size=${2:?usage: pingpong.sh PROG SIZE poll|event [ARG...]}
mode=${3:?usage: pingpong.sh PROG SIZE poll|event [ARG...]}
shift 3
iters=$(rv_pp_iters "$mode") || exit 1

rv_need_env
rv_need_root
rv_need_prog "$prog" ibverbs-utils
rv_need_prog nft nftables

tag=${prog#ibv_}
tag=${tag%_pingpong}
rv_topology "${tag:0:3}$size${mode:0:1}$(echo "$*" | tr -dc 'a-z0-9' | head -c 3)"
rv_pingpong "$prog" "$size" "$iters" "$mode" -c "$@"
rv_log "PASS: $prog -s $size -n $iters -c $* ($mode)"
