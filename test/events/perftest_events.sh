#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# perftest_events.sh PROGRAM [ARGS...]: an unmodified perftest program in
# event mode (-e: blocking ibv_get_cq_event -> ack -> re-arm, then poll,
# CC-11) over rocepmd between two network namespaces.
#
#   [rv-<tag>-b] rocepmd-run --config netns-b.ini -- PROGRAM -d rocepmd0
#                  -x 0 -e -p PORT ARGS...
#   [rv-<tag>-a] rocepmd-run --config netns-a.ini -- PROGRAM ... 192.0.2.2
#
# Passes when both sides exit 0 and both print their result line (the row
# after the "#bytes #iterations" header, with the size asked for and the
# iteration count).  Uses test/verbs/lib.sh: own namespaces, always removed.
# Exit 77 without root or without the program (apt-get install perftest).

. "$(dirname "$0")/../verbs/lib.sh"

prog=${1:?usage: perftest_events.sh PROGRAM [ARGS...]}
shift
port=18600
# -R: perftest connects through the RDMA CM (verbs-shim/cm.c).
rdma_cm=0
for a in "$@"; do
	[ "$a" = -R ] && rdma_cm=1
done

rv_need_env
rv_need_root
rv_need_prog "$prog" perftest
rv_need_prog nft nftables

# tag: e<l|b><pid mod 1000>, so a stale topology of another run never clashes
case $prog in
*lat*) tag=el ;;
*) tag=eb ;;
esac
[ "$rdma_cm" = 0 ] || tag=${tag}r
rv_topology "$tag$(($$ % 1000))"

args=(-d rocepmd0 -i 1 -x 0 -e -p "$port" "$@")

# One run of both sides; sets crc and src.
run_once() {
	rv_log "server ($RP_NS_B): $prog ${args[*]}"
	if [ "$rdma_cm" = 1 ]; then
		# -R: no TCP port to wait for.  The server's banner (line
		# buffered through stdbuf) comes before it listens; a REQ that
		# arrives before the listener is retransmitted 500 ms later,
		# for up to 7.5 s.
		rv_bg server "$RP_NS_B" "$RV_CFG_B" -- stdbuf -oL "$prog" "${args[@]}"
		srv=$rv_last_pid
		rv_wait_output server "Waiting for client to connect" "$srv"
	else
		rv_bg server "$RP_NS_B" "$RV_CFG_B" -- "$prog" "${args[@]}"
		srv=$rv_last_pid
		rv_wait_listen "$RP_NS_B" "$port" "$srv" server
	fi
	rv_log "client ($RP_NS_A): $prog ${args[*]} $RV_IP_B"
	rv_fg client "$RP_NS_A" "$RV_CFG_A" -- "$prog" "${args[@]}" "$RV_IP_B"
	crc=$rv_status
	if [ "$crc" -ne 0 ]; then
		sleep 1
		kill -TERM "$srv" 2>/dev/null
	fi
	wait "$srv"
	src=$?
	rv_forget "$srv"
}

# perftest calibrates its cycle counter against the clock and gives up
# ("Correlation coefficient r^2 ... Can't produce a report") when a busy
# two-vCPU machine disturbs the calibration: its own measurement failed,
# not the transfer, so that one case is run again (at most twice).
for attempt in 1 2 3; do
	run_once
	if [ "$crc" -eq 0 ] && [ "$src" -eq 0 ]; then
		break
	fi
	grep -qs "Can't produce a report" "$rv_tmp/server.err" "$rv_tmp/client.err" ||
		break
	rv_log "perftest could not calibrate its clock (attempt $attempt): again"
	port=$((port + 1))
	args=(-d rocepmd0 -i 1 -x 0 -e -p "$port" "$@")
done
rv_show client
rv_show server
[ "$crc" -ne 124 ] || rv_fail "client timed out after $RV_TIMEOUT s"
[ "$crc" -eq 0 ] || rv_fail "client exited with status $crc"
[ "$src" -ne 124 ] || rv_fail "server timed out after $RV_TIMEOUT s"
[ "$src" -eq 0 ] || rv_fail "server exited with status $src"

# The result row: first field the size, second the iteration count.
for side in client server; do
	row=$(awk '/#bytes/ { hdr = 1; next } hdr && $1 ~ /^[0-9]+$/ { print; exit }' \
		"$rv_tmp/$side.out")
	[ -n "$row" ] || rv_fail "$side printed no result row"
	rv_log "$side: $row"
done
rv_log "PASS: $prog ${args[*]}"
