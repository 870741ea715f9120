#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# rdmacm_utils.sh PROGRAM [ARGS...]: an unmodified rdmacm-utils test
# program (ucmatose: several RC connections at once; udaddy: UD through
# SIDR) over rocepmd between two network namespaces.
#
#   [rv-<tag>-b] rocepmd-run --config netns-b.ini -- PROGRAM ARGS...
#   [rv-<tag>-a] rocepmd-run --config netns-a.ini -- PROGRAM -s 192.0.2.2 ARGS...
#
# Passes when both exit 0 and both print "return status 0" (the programs
# check every transfer's completion themselves).

. "$(dirname "$0")/lib.sh"

prog=${1:?usage: rdmacm_utils.sh PROGRAM [ARGS...]}
shift

rv_need_env
rv_need_root
rv_need_prog "$prog" rdmacm-utils
rv_need_prog nft nftables

rv_topology "${prog:0:4}$(($$ % 1000))"
rv_log "server ($RP_NS_B): $prog $*"
rv_bg server "$RP_NS_B" "$RV_CFG_B" -- "$prog" "$@"
srv=$rv_last_pid
# No TCP port to wait for: a REQ sent before the server listens is
# retransmitted every 500 ms for 7.5 s, longer than the engine takes to
# start.  Give it a head start all the same.
sleep 1
rv_log "client ($RP_NS_A): $prog -s $RV_IP_B $*"
rv_fg client "$RP_NS_A" "$RV_CFG_A" -- "$prog" -s "$RV_IP_B" "$@"
crc=$rv_status
if [ "$crc" -ne 0 ]; then
	sleep 1
	kill -TERM "$srv" 2>/dev/null
fi
wait "$srv"
src=$?
rv_forget "$srv"
rv_show client
rv_show server
[ "$crc" -ne 124 ] || rv_fail "client timed out after $RV_TIMEOUT s"
[ "$crc" -eq 0 ] || rv_fail "client exited with status $crc"
[ "$src" -ne 124 ] || rv_fail "server timed out after $RV_TIMEOUT s"
[ "$src" -eq 0 ] || rv_fail "server exited with status $src"
for side in client server; do
	grep -qx 'return status 0' "$rv_tmp/$side.out" ||
		rv_fail "$side did not print 'return status 0'"
done
rv_log "PASS: $prog $*"
