#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# incast.sh: four senders, one receiver, a congested port that marks ECN
# (issue 29).  One namespace holds a bridge and five veth pairs; one
# process holds five af_packet devices, one on each pair's outer end:
#
#   rocepmd1 rv<t>1 --+
#   rocepmd2 rv<t>2 --+-- bridge rv<t>br ==(RATE, CE marks)==> rv<t>0m --
#   rocepmd3 rv<t>3 --+                         rv<t>0  rocepmd0 (receiver)
#   rocepmd4 rv<t>4 --+
#
# The bridge's port towards rocepmd0 carries RP_INCAST_MBIT (150: far
# below what the senders offer even beside a compile, where at 400 they
# never reached the marking rate and nothing was marked) and
# marks CE the frames beyond 90 % of it on their way (the senders'
# packets are ECN-capable: ecn = on at every port), as a switch marks
# what makes its queue grow; beyond the rate and its buffer it drops.
# test/engine/rp_incast writes 64 KiB messages from rocepmd1..4 to rocepmd0
# for RP_INCAST_SECONDS (3), once with DCQCN's reaction point on and once
# off, and prints each run's RESULT line.
#
# RP_INCAST_EXTRA: more port keys, lines as printf %b reads them (for
# experiments: RP_INCAST_EXTRA='dcqcn_threshold = 1').
#
# Asserts, with DCQCN on: rocepmd0 sent CNPs, the senders took them and cut
# their rates, paced, and every sender moved data (rp_incast checks each
# completion and the data); a capture of rocepmd0's CNPs on its veth,
# each checked field by field against A17.9.3 and its ICRC.  With it off: CNPs sent and received, no cut.
# The figures (goodput against the bottleneck, Jain's index, retransmitted
# bytes) are printed; bench/incast.sh prints them against the goals.

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
[ -x "${RP_INCAST:-}" ] || rv_fail "RP_INCAST is not set"
[ -x "${RP_ICRC_CHECK:-}" ] || rv_fail "RP_ICRC_CHECK is not set"
command -v nft >/dev/null || rv_fail "nft (nftables) not found"
rv_need_prog tcpdump tcpdump
rv_need_prog tshark tshark

rate=${RP_INCAST_MBIT:-150}
t=ic$(($$ % 100000))
ns=rv-$t
br=rv${t}br
ip netns delete "$ns" 2>/dev/null
ip netns add "$ns" || rv_fail "ip netns add $ns"
rv_ns1=$ns
ip -n "$ns" link add "$br" type bridge || rv_fail "ip link add bridge $br"
ip -n "$ns" link set "$br" mtu 9000 up
for i in 0 1 2 3 4; do
	ip -n "$ns" link add "rv${t}$i" numrxqueues 1 numtxqueues 1 type veth \
		peer name "rv${t}${i}m" numrxqueues 1 numtxqueues 1 ||
		rv_fail "ip link add veth rv${t}$i"
	ip -n "$ns" link set "rv${t}${i}m" master "$br" ||
		rv_fail "ip link set rv${t}${i}m master $br"
	ip -n "$ns" link set "rv${t}$i" mtu 9000 up
	ip -n "$ns" link set "rv${t}${i}m" mtu 9000 up
done
# The congested port, in the bridge's forward hook (nftables) on the
# RoCEv2 frames to rocepmd0: a port of RATE with a 256 KB buffer, as a
# token bucket that drops what would overflow it, and before it a
# phantom queue (HULL, NSDI 2012) that marks CE the ECN-capable frames
# beyond 90 % of RATE (a bucket 32 KB deep), so that senders that slow
# down on marks never fill the real one.  The phantom queue sees every
# frame offered, as RED marks what enters its queue: after the dropping
# bucket it saw only what that let through and could mark a tenth of
# it at most, too few CNPs for the senders.  (A shaping qdisc with RED or
# fq_codel would queue and mark by the queue itself, but kernels built
# without AQM qdiscs, as the project's machines are, refuse them, and
# htb's timers, starved on two busy CPUs, carried half its rate.)
bps=$((rate * 1000000 / 8))
mark=$((bps * 9 / 10))
ip netns exec "$ns" nft -f - <<-EON || rv_fail "nft: the congested port"
	table bridge rvecn {
	  chain fw {
	    type filter hook forward priority 0;
	    ip daddr 192.0.2.1 udp dport 4791 ip ecn ect0 limit rate over $mark bytes/second burst 32768 bytes counter ip ecn set ce
	    ip daddr 192.0.2.1 udp dport 4791 limit rate over $bps bytes/second burst 262144 bytes counter drop
	    ip daddr 192.0.2.1 udp dport 4791 counter comment "carried"
	  }
	}
EON

# cfg FILE DCQCN: five af_packet devices of one process, engine on lcore 1
cfg() {
	local f=$1 dc=$2 i

	rv_cfg_head "$f" rp_incast 1024
	for i in 0 1 2 3 4; do
		cat >>"$f" <<-EOC

		[port$i]
		device = net_af_packet$i,iface=rv${t}$i,qpairs=1,framesz=5120,blocksz=20480,framecnt=2048
		ipv4 = 192.0.2.$((i + 1))/24
		mtu = 1024
		lcore = 1
		region_mb = 32
		ecn = on
		dcqcn = $dc
${RP_INCAST_EXTRA:+$(printf '%b' "$RP_INCAST_EXTRA")}
		EOC
	done
}

# The CNPs of the DCQCN run are captured (run) where rocepmd0's veth's
# peer receives them (the af_packet PMD bypasses the qdisc, and with it
# the sender's own taps): opcode 0x81, the UDP payload's first byte, at
# most 2000.  cap_check: the captured CNPs, field by field (RoCEv2
# A17.9.3): IPv4 not ECN-capable, UDP to 4791 of 8 + 12 (BTH) + 16
# (reserved) + 4 (ICRC) bytes; BTH opcode 0x81, SE, M, pad and TVer 0,
# P_Key 0xffff, FECN 0 and BECN 1, the destination QP the sender's QP at
# that address, AckReq 0, PSN 0; the 16 reserved bytes 0; the ICRC right
# (icrc_check).
cap_check() {
	local n bad qpns="" i q

	for i in 1 2 3 4; do
		q=$(sed -n "s/^sender $i .* qpn \([0-9]*\)$/\1/p" \
			"$rv_tmp/incast-on.out")
		[ -n "$q" ] || rv_fail "no QPN for sender $i"
		qpns+=" 192.0.2.$((i + 1))=$(printf '%06x' "$q")"
	done
	n=$(tshark -r "$rv_tmp/cnp.pcap" -T fields -e frame.number 2>/dev/null |
		wc -l)
	[ "$n" -gt 0 ] || rv_fail "no CNP in the capture of rv${t}0m"
	"$RP_ICRC_CHECK" --min "$n" "$rv_tmp/cnp.pcap" >"$rv_tmp/icrc.out" 2>&1 ||
		{ cat "$rv_tmp/icrc.out" >&2; rv_fail "a CNP's ICRC is wrong"; }
	bad=$(tshark -r "$rv_tmp/cnp.pcap" -o data.show_as_text:FALSE -d \
		udp.port==4791,data -T fields -e ip.dst -e ip.dsfield.ecn \
		-e udp.length -e data.data 2>/dev/null |
		awk -v qpns="$qpns" '
		BEGIN { n = split(qpns, a, " ")
			for (i = 1; i <= n; i++) { split(a[i], kv, "="); q[kv[1]] = kv[2] } }
		{ p = $4; gsub(":", "", p)
		  ok = $2 == 0 && $3 == 40 && length(p) == 64 &&
		       substr(p, 1, 2) == "81" && substr(p, 3, 2) == "00" &&
		       substr(p, 5, 4) == "ffff" && substr(p, 9, 2) == "40" &&
		       substr(p, 11, 6) == q[$1] && substr(p, 17, 2) == "00" &&
		       substr(p, 19, 6) == "000000" &&
		       substr(p, 25, 32) == "00000000000000000000000000000000"
		  if (!ok) { print; bad++ } }
		END { exit bad > 0 }')
	[ -z "$bad" ] || rv_fail "CNPs not as A17.9.3 says (dst ecn udp.length payload):
$bad"
	rv_log "CNPs captured on rv${t}0m: $n, each field as A17.9.3 says, ICRC right, to the senders' QPs"
}

# run DCQCN: prints the RESULT line's fields into $res
run() {
	local dc=$1 st

	cfg "$rv_tmp/incast-$dc.ini" "$dc"
	[ "$dc" = on ] && rv_capture_start cnp "$ns" "rv${t}0m" \
		'src host 192.0.2.1 and udp dst port 4791 and udp[8] = 0x81' \
		-c 2000
	ip netns exec "$ns" timeout -k 10 "$RV_TIMEOUT" \
		"$RP_RUN" --config "$rv_tmp/incast-$dc.ini" -- "$RP_INCAST" incast \
		>"$rv_tmp/incast-$dc.out" 2>"$rv_tmp/incast-$dc.err"
	st=$?
	[ "$dc" = on ] && rv_capture_stop cnp
	ip netns exec "$ns" nft list table bridge rvecn >"$rv_tmp/marks-$dc"
	ip netns exec "$ns" nft reset counters table bridge rvecn >/dev/null
	if [ "$st" -ne 0 ]; then
		rv_show "incast-$dc"
		rv_fail "rp_incast (dcqcn = $dc) exited $st"
	fi
	sed 's/^/  /' "$rv_tmp/incast-$dc.out"
	grep -o "counter packets [0-9]* .*drop" "$rv_tmp/marks-$dc" |
		awk '{ print "  port: " $3 " frames dropped" }'
	grep -o "counter packets [0-9]* .*set ce" "$rv_tmp/marks-$dc" |
		awk '{ print "  port: " $3 " frames marked CE" }'
	carried=$(grep -o 'counter packets [0-9]* bytes [0-9]* comment "carried"' \
		"$rv_tmp/marks-$dc" | awk '{ print $5 }')
	res=$(awk '$1 == "RESULT" { $1 = $2 = ""; print }' "$rv_tmp/incast-$dc.out")
	[ -n "$res" ] || rv_fail "rp_incast (dcqcn = $dc): no RESULT line"
}

rv_log "namespace $ns: rocepmd1..4 -> bridge -> ${rate} Mbit/s (CE beyond it) -> rocepmd0"
rv_log "placement: one process, app thread on CPU 0, engine lcore 1 (all five devices)"
declare -A mbit good
for dc in on off; do
	rv_log "DCQCN $dc"
	run "$dc"
	# n secs agg jain retx retx% cnp_sent cnp_rcvd cuts paced timeouts
	# loss_cuts
	read -r n secs agg jain retx retxp cnps cnpr cuts paced tmo lcuts \
		<<<"$res"
	# what the port carried, frames with their headers, over the run
	# (the program's setup and drain included: a little more than secs)
	mbit[$dc]=$(awk -v b="${carried:-0}" -v s="$secs" \
		'BEGIN { printf "%.1f", b * 8 / s / 1e6 }')
	good[$dc]=$agg
	rv_log "DCQCN $dc: goodput $agg Mbit/s, the port carried ${mbit[$dc]}" \
		"Mbit/s, Jain $jain, retransmitted $retx bytes ($retxp %)," \
		"CNPs $cnps sent $cnpr taken, $cuts cuts, paced $paced, $tmo" \
		"timeouts, $lcuts loss cuts"
	[ "$cnps" -gt 0 ] && [ "$cnpr" -gt 0 ] ||
		rv_fail "DCQCN $dc: CNPs sent $cnps, taken $cnpr: nothing marked?"
	if [ "$dc" = on ]; then
		[ "$cuts" -gt 0 ] && [ "$paced" -gt 0 ] ||
			rv_fail "DCQCN on: $cuts rate cuts, paced $paced"
		cap_check
	else
		[ "$cuts" -eq 0 ] && [ "$lcuts" -eq 0 ] ||
			rv_fail "DCQCN off: $cuts rate cuts, $lcuts after a loss"
	fi
done
# The port's capacity: what it carried saturated, dropping (DCQCN off).
rv_log "goodput with DCQCN against the port's capacity (what it carried" \
	"without, dropping): $(awk -v g="${good[on]}" -v c="${mbit[off]}" \
	'BEGIN { printf "%.2f", (c > 0 ? g / c : 0) }'); without: $(awk \
	-v g="${good[off]}" -v c="${mbit[off]}" \
	'BEGIN { printf "%.2f", (c > 0 ? g / c : 0) }')"
rv_log "PASS"
