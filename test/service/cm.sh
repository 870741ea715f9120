#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# cm.sh APP CASE: the RDMA CM of programs attached to a host (issue 12).
# QP 1 of a device is every attached process's (pmd/transport/rp_gsi.c): the engine
# hands a REQ to the process that claimed its port, everything else to the
# process whose communication ID it names.  Unmodified rping (rdmacm-utils)
# under `rocepmd-run --attach`, on the two test hosts of service.sh.
#
#   two    two rping servers attached to host B's one device, on two ports;
#          a third on the first port fails with EADDRINUSE while it is
#          held; two attached rping clients on host A connect to both at
#          the same time; every ping's data checked (-V) on both sides
#   kill   an attached rping client killed (SIGKILL) mid-ping: host A sends
#          the DREQ its process left (counter gsi_wills_sent), the server
#          gets RDMA_CM_EVENT_DISCONNECTED and ends; both hosts' objects
#          back to the count before; then a new pair on the same port
#   loop   pairs within one host, through its device's loopback: an rping
#          pair (REQ and REP between two agents of one device) and an
#          ibv_rc_pingpong pair beside it, data checked
app=${1:?usage: $0 APP CASE}
case=${2:?usage: $0 APP CASE}
# shellcheck source=../verbs/lib.sh
. "$RP_SRC_ROOT/test/verbs/lib.sh"

rv_need_env
rv_need_root
rv_need_prog rping rdmacm-utils

rv_topology "svcm$case"
# shellcheck source=host_lib.sh
. "$RP_SRC_ROOT/test/service/host_lib.sh"

host_start A
host_start B
host_baseline

qps() {
	tel "$1" /rocepmd/objects,0 | python3 -c \
		'import json, sys; print(json.load(sys.stdin)["qps"])'
}

# wait_qps A|B N NAME: until the host's device holds at least N QPs (an
# attached rping server NAME has its GSI agent once it listens).
wait_qps() {
	local i

	for ((i = 0; i < 100; i++)); do
		[ "$(qps "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	rv_show "$3"
	rv_fail "host $1: fewer than $2 QPs after 10 s"
}

case $case in
two)
	q0=$(qps B)
	sv_bg s1 B -- rping -s -a "$RV_IP_B" -p 18620 -C 50 -S 1024 -v -V
	s1=$rv_last_pid
	wait_qps B $((q0 + 1)) s1
	sv_bg s2 B -- rping -s -a "$RV_IP_B" -p 18621 -C 50 -S 1024 -v -V
	s2=$rv_last_pid
	wait_qps B $((q0 + 2)) s2
	sleep 0.5
	# The first port is the first server's, process-wide as the kernel's.
	sv_fg s3 B -- rping -s -a "$RV_IP_B" -p 18620 -C 1 -v
	[ "$rv_status" -ne 0 ] || rv_fail "a third server bound the port the first one holds"
	grep -qi "address already in use" "$rv_tmp/s3.out" "$rv_tmp/s3.err" ||
		{ rv_show s3; rv_fail "the third server failed, but not with EADDRINUSE"; }
	# Both clients connect at once.
	sv_bg c1 A -- rping -c -a "$RV_IP_B" -p 18620 -C 50 -S 1024 -v -V
	c1=$rv_last_pid
	sv_bg c2 A -- rping -c -a "$RV_IP_B" -p 18621 -C 50 -S 1024 -v -V
	c2=$rv_last_pid
	fail=0
	for p in "$c1" "$c2" "$s1" "$s2"; do
		wait "$p" || fail=1
		rv_forget "$p"
	done
	if [ "$fail" -ne 0 ]; then
		for n in c1 c2 s1 s2; do rv_show "$n"; done
		rv_fail "an rping of the two pairs failed"
	fi
	for n in c1 c2; do
		k=$(grep -c '^ping data: rdma-ping-' "$rv_tmp/$n.out")
		[ "$k" -eq 50 ] || { rv_show "$n"; rv_fail "$n printed $k pings, not 50"; }
	done
	for n in s1 s2; do
		k=$(grep -c '^server ping data: rdma-ping-' "$rv_tmp/$n.out")
		[ "$k" -eq 50 ] || { rv_show "$n"; rv_fail "$n printed $k pings, not 50"; }
	done
	rv_log "two listeners on one device, two clients at once: 2 x 50 pings checked"
	check_clean
	;;
kill)
	w0=$(host_stat A gsi_wills_sent)
	q0=$(qps B)
	sv_bg server B -- rping -s -a "$RV_IP_B" -p 18622 -S 1024 -v -V
	srv=$rv_last_pid
	wait_qps B $((q0 + 1)) server
	sleep 0.5
	# No count: the client pings until it is killed.
	sv_bg client A -- rping -c -a "$RV_IP_B" -p 18622 -S 1024 -v -V
	cli=$rv_last_pid
	rv_wait_output client "ping data: rdma-ping-" "$cli"
	sleep 0.5
	victim=$(sv_prog_pid "$cli")
	ps -o pid=,comm= -p "$victim" | grep -q rping ||
		rv_fail "cannot find the attached rping under PID $cli"
	t0=$(date +%s%N)
	kill -KILL "$victim"
	wait "$cli"
	rv_forget "$cli"
	wait_detached A
	# The server hears of it through the DREQ, not a retry timeout.
	wait "$srv"
	src=$?
	t1=$(date +%s%N)
	rv_forget "$srv"
	[ "$src" -ne 124 ] || rv_fail "the server of a killed client hung until the timeout"
	grep -q "DISCONNECT EVENT" "$rv_tmp/server.out" "$rv_tmp/server.err" ||
		{ rv_show server; rv_fail "the server got no RDMA_CM_EVENT_DISCONNECTED"; }
	w1=$(host_stat A gsi_wills_sent)
	[ "$w1" -gt "$w0" ] ||
		rv_fail "host A sent no DREQ for its killed process (gsi_wills_sent $w0 -> $w1)"
	rv_log "client killed: host A sent $((w1 - w0)) DREQ, the server ended $(((t1 - t0) / 1000000)) ms after the kill"
	check_clean
	# The port is free again, on both sides.
	sv_bg server2 B -- rping -s -a "$RV_IP_B" -p 18622 -C 10 -S 64 -v -V
	srv=$rv_last_pid
	sleep 1
	sv_fg client2 A -- rping -c -a "$RV_IP_B" -p 18622 -C 10 -S 64 -v -V
	crc=$rv_status
	wait "$srv"
	src=$?
	rv_forget "$srv"
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] ||
		{ rv_show client2; rv_show server2; rv_fail "the next pair failed: client $crc, server $src"; }
	check_clean
	;;
loop)
	q0=$(qps B)
	sv_bg server B -- rping -s -a "$RV_IP_B" -p 18623 -C 50 -S 4096 -v -V
	srv=$rv_last_pid
	wait_qps B $((q0 + 1)) server
	sv_bg ppsrv B -- ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 500 -c -p 18624
	pps=$rv_last_pid
	rv_wait_listen "$RP_NS_B" 18624 "$pps" ppsrv
	sv_bg ppcli B -- ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 500 -c -p 18624 "$RV_IP_B"
	ppc=$rv_last_pid
	sv_fg client B -- rping -c -a "$RV_IP_B" -p 18623 -C 50 -S 4096 -v -V
	crc=$rv_status
	fail=0
	for p in "$srv" "$pps" "$ppc"; do
		wait "$p" || fail=1
		rv_forget "$p"
	done
	if [ "$crc" -ne 0 ] || [ "$fail" -ne 0 ]; then
		for n in client server ppcli ppsrv; do rv_show "$n"; done
		rv_fail "a pair within host B failed (rping client $crc)"
	fi
	k=$(grep -c '^ping data: rdma-ping-' "$rv_tmp/client.out")
	[ "$k" -eq 50 ] || { rv_show client; rv_fail "the client printed $k pings, not 50"; }
	rv_check_pingpong ppcli 4096 500
	rv_check_pingpong ppsrv 4096 500
	lb=$(host_stat B loopback_packets)
	[ "$lb" -gt 0 ] || rv_fail "host B looped no packet back (loopback_packets $lb)"
	rv_log "two pairs within host B: $lb packets through the loopback"
	check_clean
	;;
*)
	rv_fail "unknown case $case"
	;;
esac
rv_log "PASS: $case"
