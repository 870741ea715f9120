#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# link_flap.sh: the link of two rocepmd devices goes down and up (issue 9).
# One network namespace holds both ends of a veth, each the af_packet port
# of one device of one process (test/engine/rp_async_test link_flap), which
# sets rocepmd0's end down and up itself (ip link, RP_LF_IF) and checks
# IBV_EVENT_PORT_ERR / PORT_ACTIVE on both devices, ibv_query_port, and
# the completions of the work posted meanwhile.
#
#   [rv-lf<pid>]  rvlf<pid>a (rocepmd0, 192.0.2.1) === rvlf<pid>b (rocepmd1,
#                 192.0.2.2); no addresses on the kernel side (rv_veth1).

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
[ -x "${RP_ASYNC_TEST:-}" ] || rv_fail "RP_ASYNC_TEST is not set"

rv_veth1 "lf$(($$ % 100000))"
cfg=$rv_tmp/link_flap.ini
rv_veth1_cfg "$cfg" rp_async_link_flap 1024

rv_log "namespace $RV_NS1: $RV_IF_A (rocepmd0) === $RV_IF_B (rocepmd1)"
RP_LF_IF=$RV_IF_A ip netns exec "$RV_NS1" timeout -k 10 "$RV_TIMEOUT" \
	"$RP_RUN" --config "$cfg" -- "$RP_ASYNC_TEST" link_flap \
	>"$rv_tmp/link_flap.out" 2>"$rv_tmp/link_flap.err"
st=$?
if [ "$st" -ne 0 ]; then
	rv_show link_flap
	rv_fail "rp_async_test link_flap exited $st"
fi
sed 's/^/  /' "$rv_tmp/link_flap.out"
rv_log "PASS"
