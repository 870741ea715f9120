#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# rping.sh: unmodified rping (rdmacm-utils) over rocepmd between two
# network namespaces, connected through the RDMA CM, with both veth ends
# captured.  The same run as the kernel rxe capture rdmacm-rping-s64
# (shared/pcap/rxe), with more rounds:
#
#   [rv-<tag>-b] rocepmd-run --config netns-b.ini -- rping -s -a 192.0.2.2 -C 20 -S 64 -v -V
#   [rv-<tag>-a] rocepmd-run --config netns-a.ini -- rping -c -a 192.0.2.2 -C 20 -S 64 -v -V
#
# Passes when both exit 0 (-V: rping checks every ping's data itself),
# each printed 20 ping lines, and the captures hold, as tshark decodes
# them, the kernel capture's CM exchange (ConnectRequest, ConnectReply,
# ReadyToUse, DisconnectRequest, DisconnectReply) with nothing malformed
# and every ICRC right, and Starting PSNs meaning what the kernel's mean:
# the REQ's is the PSN of the passive side's first request packet, the
# REP's the active side's (checked on the kernel's capture first).

. "$(dirname "$0")/lib.sh"

count=20

rv_need_env
rv_need_root
rv_need_prog rping rdmacm-utils
rv_need_prog tcpdump tcpdump
rv_need_prog tshark tshark
rv_need_prog nft nftables
[ -x "${RP_ICRC_CHECK:-}" ] || rv_fail "RP_ICRC_CHECK ($RP_ICRC_CHECK) is not executable"

rv_topology rping

# The Starting PSNs in captures $3... against the first RC/UC request
# each end sent ($1 active, $2 passive).  Each end's packets must all be
# in one capture (a veth end's capture holds what it received), in order.
# ACKs and READ responses (opcodes 13-18) carry the requester's PSNs, so
# they do not count.
psn_semantics() {
	local active=$1 passive=$2 f src op psn rq rp
	local req='' rep='' first_a='' first_p=''

	shift 2
	while IFS=, read -r src op psn rq rp; do
		[ -n "$rq" ] && [ -z "$req" ] && req=$((rq))
		[ -n "$rp" ] && [ -z "$rep" ] && rep=$((rp))
		[ -n "$op" ] && [ "$op" -lt 64 ] || continue
		[ "$op" -ge 13 ] && [ "$op" -le 18 ] && continue
		[ "$src" = "$active" ] && [ -z "$first_a" ] && first_a=$psn
		[ "$src" = "$passive" ] && [ -z "$first_p" ] && first_p=$psn
	done < <(for f in "$@"; do
		tshark -r "$f" -Y infiniband -T fields -E separator=, \
			-e ip.src -e infiniband.bth.opcode -e infiniband.bth.psn \
			-e infiniband.cm.req.startpsn \
			-e infiniband.cm.rep.startpsn 2>/dev/null
	done)
	rv_log "$(basename -a "$@" | tr '\n' ' ')REQ Starting PSN ${req:-none}, REP ${rep:-none}; first request PSN of $active (active) ${first_a:-none}, of $passive (passive) ${first_p:-none}"
	[ -n "$req" ] && [ -n "$rep" ] && [ -n "$first_a" ] &&
		[ -n "$first_p" ] && [ "$req" -eq "$first_p" ] &&
		[ "$rep" -eq "$first_a" ]
}

psn_semantics 192.0.2.1 192.0.2.2 \
	"$RP_SRC_ROOT/test/data/rxe/rdmacm-rping-s64.pcap" ||
	rv_fail "the PSN check does not hold on the kernel's own capture"

start_capture() {
	local side=$1 ns=$2 dev=$3 i

	ip netns exec "$ns" timeout -k 5 "$RV_TIMEOUT" \
		tcpdump -i "$dev" -n -U --immediate-mode -s 0 -w "$rv_tmp/$side.pcap" \
		'udp port 4791' 2>"$rv_tmp/tcpdump-$side.err" &
	rv_pids+=("$!")
	eval "cap_pid_$side=$!"
	for ((i = 0; i < 100; i++)); do
		grep -q 'listening on' "$rv_tmp/tcpdump-$side.err" && return 0
		kill -0 "$!" 2>/dev/null || break
		sleep 0.1
	done
	cat "$rv_tmp/tcpdump-$side.err" >&2
	rv_fail "tcpdump on $dev in $ns did not start"
}

stop_capture() {
	local side=$1 pid

	eval "pid=\$cap_pid_$side"
	kill -INT "$pid" 2>/dev/null
	wait "$pid"
	rv_forget "$pid"
}

start_capture a "$RP_NS_A" "$RP_VETH_A"
start_capture b "$RP_NS_B" "$RP_VETH_B"

args=(-a "$RV_IP_B" -C "$count" -S 64 -v -V)
rv_log "server ($RP_NS_B): rping -s ${args[*]}"
rv_bg server "$RP_NS_B" "$RV_CFG_B" -- rping -s "${args[@]}"
srv=$rv_last_pid
# No TCP port to wait for: a REQ sent before the server listens is
# retransmitted every 500 ms for 7.5 s, longer than the engine takes to
# start.  Give it a head start all the same.
sleep 1
rv_log "client ($RP_NS_A): rping -c ${args[*]}"
rv_fg client "$RP_NS_A" "$RV_CFG_A" -- rping -c "${args[@]}"
crc=$rv_status
if [ "$crc" -ne 0 ]; then
	sleep 1
	kill -TERM "$srv" 2>/dev/null
fi
wait "$srv"
src=$?
rv_forget "$srv"
sleep 0.5
stop_capture a
stop_capture b
rv_show client
rv_show server
[ "$crc" -eq 0 ] || rv_fail "client exited with status $crc"
[ "$src" -eq 0 ] || rv_fail "server exited with status $src"
n=$(grep -c '^ping data: rdma-ping-' "$rv_tmp/client.out")
[ "$n" -eq "$count" ] || rv_fail "client printed $n pings, expected $count"
n=$(grep -c '^server ping data: rdma-ping-' "$rv_tmp/server.out")
[ "$n" -eq "$count" ] || rv_fail "server printed $n pings, expected $count"

# The CM messages, in the order tshark saw them on either side.
for side in a b; do
	f=$rv_tmp/$side.pcap
	[ -s "$f" ] || rv_fail "capture $side is empty"
	bad=$(tshark -r "$f" -Y '_ws.malformed || _ws.expert.severity >= error' 2>&1 |
		grep -v '^Running as user' || true)
	if [ -n "$bad" ]; then
		echo "$bad" | head -n 20 >&2
		rv_fail "capture $side: tshark reports malformed frames or expert errors"
	fi
	tshark -r "$f" -Y infiniband -T fields -e _ws.col.Info 2>/dev/null |
		sed 's/ *$//' | sort | uniq -c | sort -rn |
		sed "s/^/  capture $side: /"
done
cm=$(for side in a b; do
	tshark -r "$rv_tmp/$side.pcap" -Y infiniband -T fields \
		-e frame.time_epoch -e _ws.col.Info 2>/dev/null
done | sort -n | grep -o 'CM: [A-Za-z]*' | tr '\n' ' ')
rv_log "CM exchange: $cm"
want="CM: ConnectRequest CM: ConnectReply CM: ReadyToUse CM: DisconnectRequest CM: DisconnectReply "
[ "$cm" = "$want" ] ||
	rv_fail "CM exchange differs from the kernel's ($want)"
"$RP_ICRC_CHECK" --min 50 "$rv_tmp/a.pcap" "$rv_tmp/b.pcap" ||
	rv_fail "icrc_check found bad RoCEv2 frames (see above)"
psn_semantics "$RV_IP_A" "$RV_IP_B" "$rv_tmp/a.pcap" "$rv_tmp/b.pcap" ||
	rv_fail "the Starting PSNs on the wire do not mean what the kernel's mean"
rv_log "PASS: rping -C $count over the RDMA CM, the kernel's CM exchange and PSNs on the wire"
