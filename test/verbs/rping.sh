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
#
# rping.sh 6: the same over IPv6, the RDMA CM given sockaddr_in6
# (GID index 2 of config/netns-{a,b}.ini):
#
#   [rv-<tag>-b] ... rping -s -a 2001:db8::2 -C 20 -S 64 -v -V
#   [rv-<tag>-a] ... rping -c -a 2001:db8::2 -C 20 -S 64 -v -V
#
# and, beyond the above, every RoCEv2 frame on the wire is IPv6, and the
# REQ carries what the kernel's rdma_cm puts there for IPv6: the two IPv6
# GIDs as its primary path's local and remote GIDs, and IP CM private
# data of IP version 6 with the client's and the server's addresses and
# a source port, and rping's port 7174 in the service ID.
#
# rping.sh 6ll: the same over the link-local addresses (GID index 1, the
# veth ends' fe80:: addresses, which the engine forms from the same MAC),
# each side naming its own interface as the scope:
#
#   [rv-<tag>-b] ... rping -s -a fe80::B%vethb ...
#   [rv-<tag>-a] ... rping -c -a fe80::B%vetha ...

. "$(dirname "$0")/lib.sh"

count=20
fam=${1:-4}
case $fam in
4) tag=rping addr_field=ip.src ;;
6) tag=rping6 addr_field=ipv6.src ;;
6ll) tag=rpingll addr_field=ipv6.src ;;
*) rv_fail "usage: rping.sh [4|6|6ll]" ;;
esac

rv_need_env
rv_need_root
rv_need_prog rping rdmacm-utils
rv_need_prog tcpdump tcpdump
rv_need_prog tshark tshark
rv_need_prog nft nftables
[ -x "${RP_ICRC_CHECK:-}" ] || rv_fail "RP_ICRC_CHECK ($RP_ICRC_CHECK) is not executable"

# af_packet: the captures of the veth ends see no frame that an XDP
# program redirects to an AF_XDP socket.  (rping over XDP steering runs
# against the kernel's rxe: test/interop.)
export RV_PORT=af_packet
rv_topology "$tag"
# A veth end's link-local address, as the kernel formed it.
link_local() {
	ip netns exec "$1" ip -6 -o addr show dev "$2" scope link |
		awk '{ sub("/.*", "", $4); print $4; exit }'
}

scope_a='' scope_b=''
case $fam in
6)
	[ -n "$RV_IP6_A" ] && [ -n "$RV_IP6_B" ] ||
		rv_fail "no ipv6 key in config/netns-{a,b}.ini"
	ip_a=$RV_IP6_A ip_b=$RV_IP6_B
	;;
6ll)
	ip_a=$(link_local "$RP_NS_A" "$RP_VETH_A")
	ip_b=$(link_local "$RP_NS_B" "$RP_VETH_B")
	[ -n "$ip_a" ] && [ -n "$ip_b" ] ||
		rv_fail "no link-local address on $RP_VETH_A or $RP_VETH_B"
	scope_a=%$RP_VETH_A scope_b=%$RP_VETH_B
	;;
*)
	ip_a=$RV_IP_A ip_b=$RV_IP_B
	;;
esac

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
			-e "$addr_field" -e infiniband.bth.opcode -e infiniband.bth.psn \
			-e infiniband.cm.req.startpsn \
			-e infiniband.cm.rep.startpsn 2>/dev/null
	done)
	rv_log "$(basename -a "$@" | tr '\n' ' ')REQ Starting PSN ${req:-none}, REP ${rep:-none}; first request PSN of $active (active) ${first_a:-none}, of $passive (passive) ${first_p:-none}"
	[ -n "$req" ] && [ -n "$rep" ] && [ -n "$first_a" ] &&
		[ -n "$first_p" ] && [ "$req" -eq "$first_p" ] &&
		[ "$rep" -eq "$first_a" ]
}

addr_field=ip.src psn_semantics 192.0.2.1 192.0.2.2 \
	"$RP_SRC_ROOT/test/data/rxe/rdmacm-rping-s64.pcap" ||
	rv_fail "the PSN check does not hold on the kernel's own capture"

rv_capture_start a "$RP_NS_A" "$RP_VETH_A" 'udp port 4791' --immediate-mode
rv_capture_start b "$RP_NS_B" "$RP_VETH_B" 'udp port 4791' --immediate-mode

args=(-C "$count" -S 64 -v -V)
rv_log "server ($RP_NS_B): rping -s -a $ip_b$scope_b ${args[*]}"
rv_bg server "$RP_NS_B" "$RV_CFG_B" -- rping -s -a "$ip_b$scope_b" "${args[@]}"
srv=$rv_last_pid
# No TCP port to wait for: a REQ sent before the server listens is
# retransmitted every 500 ms for 7.5 s, longer than the engine takes to
# start.  Give it a head start all the same.
sleep 1
rv_log "client ($RP_NS_A): rping -c -a $ip_b$scope_a ${args[*]}"
rv_fg client "$RP_NS_A" "$RV_CFG_A" -- rping -c -a "$ip_b$scope_a" "${args[@]}"
crc=$rv_status
if [ "$crc" -ne 0 ]; then
	sleep 1
	kill -TERM "$srv" 2>/dev/null
fi
wait "$srv"
src=$?
rv_forget "$srv"
sleep 0.5
rv_capture_stop a
rv_capture_stop b
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
psn_semantics "$ip_a" "$ip_b" "$rv_tmp/a.pcap" "$rv_tmp/b.pcap" ||
	rv_fail "the Starting PSNs on the wire do not mean what the kernel's mean"
if [ "$fam" != 4 ]; then
	n4=$(tshark -r "$rv_tmp/a.pcap" -Y 'infiniband && ip' 2>/dev/null | wc -l)
	n6=$(tshark -r "$rv_tmp/a.pcap" -Y 'infiniband && ipv6' 2>/dev/null | wc -l)
	rv_log "capture a: $n6 RoCEv2 frames over IPv6, $n4 over IPv4"
	[ "$n4" -eq 0 ] && [ "$n6" -gt 0 ] ||
		rv_fail "RoCEv2 frames over IPv4 in an IPv6 run"
	# The REQ as the passive side received it.
	req=$(tshark -r "$rv_tmp/b.pcap" -Y infiniband.cm.req -T fields \
		-E separator=' ' -e ipv6.src -e ipv6.dst \
		-e infiniband.cm.req.prim_localgid \
		-e infiniband.cm.req.prim_remotegid \
		-e infiniband.cm.req.ip_cm.ipv \
		-e infiniband.cm.req.ip_cm.sip6 -e infiniband.cm.req.ip_cm.dip6 \
		-e infiniband.cm.req.ip_cm.sport \
		-e infiniband.cm.req.serviceid.dport 2>/dev/null | head -n 1)
	rv_log "REQ: IPv6 src dst, primary local and remote GID, IP CM version, source, destination, source port, service ID port: $req"
	read -r s d lg rg ipv sip dip sport dport <<<"$req"
	want="$ip_a $ip_b $ip_a $ip_b 6 $ip_a $ip_b"
	[ "$s $d $lg $rg $((ipv)) $sip $dip" = "$want" ] ||
		rv_fail "the REQ's addresses are not '$want'"
	[ -n "$sport" ] && [ "$((sport))" -ne 0 ] ||
		rv_fail "the REQ's IP CM private data has no source port"
	[ "$((dport))" -eq 7174 ] ||
		rv_fail "the REQ's service ID is not rping's port 7174"
fi
rv_log "PASS: rping -C $count over the RDMA CM (IPv$fam), the kernel's CM exchange and PSNs on the wire"
