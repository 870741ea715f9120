#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# service.sh APP CASE: verbs programs attached to a host (issue 12).  On each
# of the two test hosts (network namespaces, test/verbs/lib.sh) one
# rocepmd-testpmd --host owns the port and the engine; the programs run
# unmodified under `rocepmd-run --attach SOCKET`, load no DPDK and reach
# the engine through the socket and the device region only.
#
#   pingpong  ibv_rc_pingpong between the hosts, data checked (-c), and
#             ibv_devinfo on the server's host while the server runs; the
#             programs' start time against the host's own
#   parallel  two ib_write_bw pairs at once on the same two devices, and an
#             ibv_rc_pingpong pair beside them
#   kill      ib_write_bw whose client is killed (SIGKILL) mid-transfer:
#             the host notices at once, destroys every object the process
#             had (telemetry /rocepmd/objects back to the count before),
#             the server fails with an error, not a hang; the host then
#             serves the next pair
#   cycles    N attach/detach cycles (ibv_devinfo, RV_CYCLES, default 200):
#             objects and region pages back to the count before, the host's
#             attached_total N higher
#   refuse    a peer that is not a client (garbage, a wrong version) is
#             refused and the host keeps serving
#
# The hosts' counts are read through DPDK telemetry (/rocepmd/objects,
# /rocepmd/clients), from the path the host prints.
app=${1:?usage: $0 APP CASE}
case=${2:?usage: $0 APP CASE}
# shellcheck source=../verbs/lib.sh
. "$RP_SRC_ROOT/test/verbs/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog ib_write_bw perftest
rv_need_prog nft nftables

rv_topology "sv$case"
# shellcheck source=host_lib.sh
. "$RP_SRC_ROOT/test/service/host_lib.sh"

# sv_pair PORT PROGRAM ARGS...: server attached in B, client in A.
sv_pair() {
	local port=$1 prog=$2 srv crc src

	shift 2
	sv_bg server B -- "$prog" -p "$port" "$@"
	srv=$rv_last_pid
	rv_wait_listen "$RP_NS_B" "$port" "$srv" server
	sv_fg client A -- "$prog" -p "$port" "$@" "$RV_IP_B"
	crc=$rv_status
	[ "$crc" -eq 0 ] || kill -TERM "$srv" 2>/dev/null
	wait "$srv"
	src=$?
	rv_forget "$srv"
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
		rv_show client
		rv_show server
		rv_fail "$prog: client exited $crc, server $src"
	fi
}

host_start A
host_start B
base_a=$(counts A)
base_b=$(counts B)
rv_log "objects before: A $base_a"

# Objects and pages of both hosts as before, once every process left.
check_clean() {
	wait_detached A
	wait_detached B
	[ "$(counts A)" = "$base_a" ] ||
		rv_fail "host A holds $(counts A), not $base_a as before"
	[ "$(counts B)" = "$base_b" ] ||
		rv_fail "host B holds $(counts B), not $base_b as before"
}

case $case in
pingpong)
	t0=$(date +%s%N)
	sv_fg devinfo0 B -- ibv_devinfo -d rocepmd0
	t1=$(date +%s%N)
	[ "$rv_status" -eq 0 ] || { rv_show devinfo0; rv_fail "ibv_devinfo failed"; }
	grep -q "PORT_ACTIVE" "$rv_tmp/devinfo0.out" ||
		rv_fail "ibv_devinfo shows no active port"
	rv_log "attached ibv_devinfo: $(((t1 - t0) / 1000000)) ms from launch to exit"
	sv_bg server B -- ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 2000 -c -p 18600
	srv=$rv_last_pid
	rv_wait_listen "$RP_NS_B" 18600 "$srv" server
	# A second process on the server's device while the server runs.
	sv_fg devinfo B -- ibv_devinfo -d rocepmd0
	[ "$rv_status" -eq 0 ] || { rv_show devinfo; rv_fail "ibv_devinfo beside the server failed"; }
	[ "$(attached B)" -ge 1 ] || rv_fail "host B lists no attached process"
	sv_fg client A -- ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 2000 -c -p 18600 "$RV_IP_B"
	crc=$rv_status
	wait "$srv"
	src=$?
	rv_forget "$srv"
	rv_show client
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] ||
		{ rv_show server; rv_fail "ibv_rc_pingpong: client $crc, server $src"; }
	rv_check_pingpong client 4096 2000
	rv_check_pingpong server 4096 2000
	check_clean
	;;
parallel)
	sv_bg s1 B -- ib_write_bw -d rocepmd0 -x 0 -s 65536 -n 2000 -F -p 18601
	p1=$rv_last_pid
	sv_bg s2 B -- ib_write_bw -d rocepmd0 -x 0 -s 4096 -n 5000 -F -p 18602
	p2=$rv_last_pid
	rv_wait_listen "$RP_NS_B" 18601 "$p1" s1
	rv_wait_listen "$RP_NS_B" 18602 "$p2" s2
	sv_bg c1 A -- ib_write_bw -d rocepmd0 -x 0 -s 65536 -n 2000 -F -p 18601 "$RV_IP_B"
	c1=$rv_last_pid
	sv_bg c2 A -- ib_write_bw -d rocepmd0 -x 0 -s 4096 -n 5000 -F -p 18602 "$RV_IP_B"
	c2=$rv_last_pid
	sv_pair 18603 ibv_rc_pingpong -d rocepmd0 -g 0 -s 1024 -n 1000 -c
	for p in "$c1" "$c2" "$p1" "$p2"; do
		wait "$p" || { rv_show c1; rv_show c2; rv_show s1; rv_show s2;
			rv_fail "an ib_write_bw of the parallel pairs failed"; }
		rv_forget "$p"
	done
	for n in c1 c2; do
		grep -qE '^ *(65536|4096) +(2000|5000) ' "$rv_tmp/$n.out" ||
			{ rv_show "$n"; rv_fail "$n printed no result line"; }
	done
	check_clean
	;;
kill)
	sv_bg server B -- ib_write_bw -d rocepmd0 -x 0 -s 65536 -D 30 -F -p 18604
	srv=$rv_last_pid
	rv_wait_listen "$RP_NS_B" 18604 "$srv" server
	sv_bg client A -- ib_write_bw -d rocepmd0 -x 0 -s 65536 -D 30 -F -p 18604 "$RV_IP_B"
	cli=$rv_last_pid
	# Mid-transfer: the client's QP and MR exist and traffic flows.
	for ((i = 0; i < 100; i++)); do
		q=$(tel A /rocepmd/objects,0 | python3 -c \
			'import json, sys; print(json.load(sys.stdin)["qps"])')
		[ "$q" -ge 1 ] && break
		sleep 0.1
	done
	sleep 1
	rx0=$(tel B /rocepmd/stats,0 | python3 -c \
		'import json, sys; print(json.load(sys.stdin)["rx_packets"])')
	[ "$rx0" -gt 100 ] || rv_fail "no transfer under way (B received $rx0 packets)"
	# SIGKILL the program itself, not the timeout around it.
	victim=$(pgrep -P "$(pgrep -P "$cli" | head -1)" | head -1)
	[ -n "$victim" ] || victim=$(pgrep -P "$cli" | head -1)
	ps -o pid=,comm= -p "$victim" | grep -q ib_write_bw ||
		rv_fail "cannot find the attached ib_write_bw under PID $cli"
	kill -KILL "$victim"
	wait "$cli"
	rv_forget "$cli"
	wait_detached A
	[ "$(counts A)" = "$base_a" ] ||
		rv_fail "host A holds $(counts A) after the SIGKILL, not $base_a"
	grep -q "detached: destroying its" "$rv_tmp/hostA.err" ||
		rv_fail "host A did not log the clean-up"
	# The server's peer is gone: it must end with an error, not hang.
	wait "$srv"
	src=$?
	rv_forget "$srv"
	[ "$src" -ne 0 ] || rv_fail "the server of a killed client exited 0"
	[ "$src" -ne 124 ] || rv_fail "the server of a killed client hung until the timeout"
	# The hosts serve the next pair as if nothing happened.
	sv_pair 18605 ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 500 -c
	check_clean
	;;
cycles)
	n=${RV_CYCLES:-200}
	before=$(tel B /rocepmd/clients | python3 -c \
		'import json, sys; print(json.load(sys.stdin)["attached_total"])')
	t0=$(date +%s%N)
	for ((i = 0; i < n; i++)); do
		sv_fg cyc B -- ibv_devinfo -d rocepmd0
		[ "$rv_status" -eq 0 ] || { rv_show cyc; rv_fail "cycle $i: ibv_devinfo failed"; }
	done
	t1=$(date +%s%N)
	after=$(tel B /rocepmd/clients | python3 -c \
		'import json, sys; print(json.load(sys.stdin)["attached_total"])')
	[ $((after - before)) -eq "$n" ] ||
		rv_fail "$((after - before)) attaches counted for $n cycles"
	rv_log "$n attach/detach cycles, $(((t1 - t0) / n / 1000000)) ms each"
	check_clean
	;;
refuse)
	python3 - "$SOCK_B" <<'PY' || rv_fail "the host took a bad peer"
import socket, struct, sys
# garbage, then a HELLO of another protocol version: both closed
for msg in (b"\xff" * 40, struct.pack("<IHHiIII", 0x68637461, 9, 1, 0, 0, 5, 0)):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    s.send(msg)
    s.settimeout(5)
    assert s.recv(512) == b"", "a reply to a bad message"
PY
	sv_pair 18606 ibv_rc_pingpong -d rocepmd0 -g 0 -s 64 -n 200 -c
	check_clean
	;;
*)
	rv_fail "unknown case '$case'"
	;;
esac
rv_log "PASS: $case"
