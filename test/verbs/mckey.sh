#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# mckey.sh 4|6 xdp|af_packet [RECEIVER ARGS [-- [nobind] SENDER ARGS]]: rdmacm-utils'
# mckey over rocepmd between two network namespaces: UD multicast through
# the RDMA CM (rdma_join_multicast_ex, RDMA_CM_EVENT_MULTICAST_JOIN,
# rdma_leave_multicast), IPv4 group 239.1.2.3 or IPv6 group ff0e::db8:1.
#
#   [rv-<tag>-b] rocepmd-run ... -- mckey -m GROUP -b B RECEIVER ARGS...
#   [rv-<tag>-a] rocepmd-run ... -- mckey -m GROUP -b A -s SENDER ARGS...
#
# nobind drops the sender's -b: rdma_resolve_addr of the group without a
# source address, which the route to the group (or the one device) gives.
# A send-only sender (-o) exits right after posting its sends unsignalled:
# the engine must still send them as the QP is destroyed.
#
# The receiver joins first; the sender joins, waits 3 s (mckey's own pause)
# and sends 10 datagrams to QPN 0xFFFFFF of the group.  Passes when both
# exit 0, both print "data transfers complete" (the receiver only once its
# QPs received every datagram), and the join event gave the group's GID
# (::ffff:239.1.2.3 for IPv4, cma_iboe_set_mgid's RoCEv2 form) and LID 0.

. "$(dirname "$0")/lib.sh"

fam=${1:?usage: mckey.sh 4|6 xdp|af_packet [RECEIVER ARGS [-- SENDER ARGS]]}
RV_PORT=${2:?usage: mckey.sh 4|6 xdp|af_packet [RECEIVER ARGS [-- SENDER ARGS]]}
shift 2
rargs=()
sargs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	rargs+=("$1")
	shift
done
[ $# -gt 0 ] && shift
sbind=1
if [ "${1:-}" = nobind ]; then
	sbind=0
	shift
fi
sargs=("$@")

rv_need_env
rv_need_root
rv_need_prog mckey rdmacm-utils

rv_topology "mck$fam${RV_PORT:0:1}$(($$ % 100))"
if [ "$fam" = 6 ]; then
	[ -n "$RV_IP6_A" ] && [ -n "$RV_IP6_B" ] ||
		rv_fail "no IPv6 address for the devices"
	group=ff0e::db8:1
	mgid=ff0e::db8:1
	ip_a=$RV_IP6_A
	ip_b=$RV_IP6_B
else
	group=239.1.2.3
	mgid=::ffff:239.1.2.3
	ip_a=$RV_IP_A
	ip_b=$RV_IP_B
fi
rv_log "receiver ($RP_NS_B): mckey -m $group -b $ip_b ${rargs[*]}"
rv_bg receiver "$RP_NS_B" "$RV_CFG_B" -- mckey -m "$group" -b "$ip_b" "${rargs[@]}"
rcv=$rv_last_pid
# The receiver's engine starts and joins; the sender still pauses 3 s after
# its own join before it sends.
sleep 1
bind=()
[ "$sbind" = 1 ] && bind=(-b "$ip_a")
rv_log "sender ($RP_NS_A): mckey -m $group ${bind[*]} -s ${sargs[*]}"
rv_fg sender "$RP_NS_A" "$RV_CFG_A" -- mckey -m "$group" "${bind[@]}" -s "${sargs[@]}"
snd=$rv_status
if [ "$snd" -ne 0 ]; then
	sleep 1
	kill -TERM "$rcv" 2>/dev/null
else
	# The receiver has had the datagrams: it ends at once, or never.
	for ((i = 0; i < 100; i++)); do
		kill -0 "$rcv" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$rcv" 2>/dev/null && kill -TERM "$rcv" 2>/dev/null
fi
wait "$rcv"
rrc=$?
rv_forget "$rcv"
rv_show sender
rv_show receiver
[ "$snd" -ne 124 ] || rv_fail "sender timed out after $RV_TIMEOUT s"
[ "$snd" -eq 0 ] || rv_fail "sender exited with status $snd"
[ "$rrc" -eq 0 ] || rv_fail "receiver exited with status $rrc (143: did not receive every datagram)"
for side in sender receiver; do
	grep -qxF 'data transfers complete' "$rv_tmp/$side.out" ||
		rv_fail "$side did not print 'data transfers complete'"
	grep -qxF 'return status 0' "$rv_tmp/$side.out" ||
		rv_fail "$side did not print 'return status 0'"
	grep -q "^mckey: joined dgid: $mgid mlid 0x0 sl 0$" "$rv_tmp/$side.out" ||
		rv_fail "$side's join event did not give group GID $mgid, LID 0"
done
rv_log "PASS: mckey IPv$fam over $RV_PORT, receiver ${rargs[*]}, sender ${bind[*]} ${sargs[*]}"
