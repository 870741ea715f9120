#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# capture.sh: what rocepmd puts on the wire decodes as RoCEv2 and carries
# correct ICRCs.
#
# While ibv_rc_pingpong (-s 4096 -n 200, so FIRST/MIDDLE/LAST packets and
# ACKs) and then ibv_ud_pingpong (-s 512 -n 200) run between the
# namespaces, tcpdump captures UDP port 4791 on the veth end in each
# namespace (frames an af_packet engine sends bypass the qdisc and may not
# show on the sender's own tap; each side sees everything it receives).
# Then, per capture and over both:
#   - tshark decodes every frame as InfiniBand (RoCEv2 on 4791 is the
#     default in tshark 4.0), at least RV_CAP_MIN (2000) over both;
#   - no frame is malformed or carries an expert error
#     (tshark -Y '_ws.malformed || _ws.expert.severity >= error' is empty);
#   - icrc_check (test/verbs/icrc_check.c: the engine's own parser and
#     ICRC code) finds every ICRC right.

. "$(dirname "$0")/lib.sh"

iters=${RV_CAP_ITERS:-200}
min=${RV_CAP_MIN:-2000}

rv_need_env
rv_need_root
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog ibv_ud_pingpong ibverbs-utils
rv_need_prog tcpdump tcpdump
rv_need_prog tshark tshark
rv_need_prog nft nftables
[ -x "${RP_ICRC_CHECK:-}" ] || rv_fail "RP_ICRC_CHECK ($RP_ICRC_CHECK) is not executable"

# af_packet: frames an XDP program redirects to an AF_XDP socket never
# reach the veth's packet taps, so tcpdump would see none.
export RV_PORT=af_packet
rv_topology cap

rv_capture_start a "$RP_NS_A" "$RP_VETH_A" 'udp port 4791'
rv_capture_start b "$RP_NS_B" "$RP_VETH_B" 'udp port 4791'

rv_pingpong ibv_rc_pingpong 4096 "$iters" poll
rv_pingpong ibv_ud_pingpong 512 "$iters" poll
sleep 0.5
for side in a b; do
	rv_capture_stop "$side"
	sed "s/^/  tcpdump $side: /" "$rv_tmp/tcpdump-$side.err"
done

total_ib=0
for side in a b; do
	f=$rv_tmp/$side.pcap
	[ -s "$f" ] || rv_fail "capture $side is empty"
	frames=$(tshark -r "$f" -T fields -e frame.number 2>/dev/null | wc -l)
	ib=$(tshark -r "$f" -Y infiniband -T fields -e frame.number 2>/dev/null | wc -l)
	rv_log "capture $side: $frames frames, $ib decoded as InfiniBand"
	tshark -r "$f" -Y infiniband -T fields -e ip.src -e ip.dst \
		-e infiniband.bth.opcode 2>/dev/null | sort | uniq -c |
		sort -rn | sed "s/^/  capture $side: /"
	[ "$ib" -eq "$frames" ] ||
		rv_fail "capture $side: $((frames - ib)) of $frames UDP 4791 frames not decoded as InfiniBand"
	bad=$(tshark -r "$f" -Y '_ws.malformed || _ws.expert.severity >= error' 2>&1 |
		grep -v '^Running as user' || true)
	if [ -n "$bad" ]; then
		echo "$bad" | head -n 20 >&2
		rv_fail "capture $side: tshark reports malformed frames or expert errors"
	fi
	total_ib=$((total_ib + ib))
done
[ "$total_ib" -ge "$min" ] ||
	rv_fail "$total_ib InfiniBand frames captured, expected at least $min"

"$RP_ICRC_CHECK" --min "$min" "$rv_tmp/a.pcap" "$rv_tmp/b.pcap" ||
	rv_fail "icrc_check found bad RoCEv2 frames (see above)"
rv_log "PASS: $total_ib RoCEv2 frames decoded by tshark, none malformed, every ICRC right"
