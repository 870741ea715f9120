#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# perftest_bw.sh PROG SIZE [ITERS, default 200] [LOSS]: unmodified perftest (ib_write_bw,
# ib_read_bw or ib_send_bw) over rocepmd between two network namespaces,
# with messages far larger than the requester's send window (issue 9:
# 8 MiB failed with RETRY_EXC_ERR, the whole message sent back to back
# overflowing the receiver's af_packet ring, again at every go-back-N).
#
#   [rv-<tag>-b] rocepmd-run --config netns-b.ini -- PROG -d rocepmd0 -x 0
#                  -s SIZE -n ITERS -F -p PORT
#   [rv-<tag>-a] rocepmd-run --config netns-a.ini -- PROG ... 192.0.2.2
#
# LOSS (per mille): nftables drops that share of the RoCEv2 frames each
# veth end sends, in the netdev egress hook, the af_packet ports with
# qdisc_bypass=0 so that their frames pass it (issue 9's recipe; see
# test/verbs/lib.sh rv_nft_loss for what such a drop does to an af_packet
# sender).
#
# Passes when both exit 0 and the client printed its result line for SIZE
# with ITERS iterations and a positive bandwidth.

. "$(dirname "$0")/lib.sh"

prog=${1:?usage: perftest_bw.sh ib_write_bw|ib_read_bw|ib_send_bw SIZE [ITERS]}
size=${2:?usage: perftest_bw.sh PROG SIZE [ITERS]}
iters=${3:-200}
loss=${4:-0}
port=18520

case $prog in
ib_write_bw|ib_read_bw|ib_send_bw) ;;
*) rv_fail "PROG must be ib_write_bw, ib_read_bw or ib_send_bw, not '$prog'" ;;
esac

rv_need_env
rv_need_root
rv_need_prog "$prog" perftest
rv_need_prog nft nftables

p=${prog#ib_}
rv_topology "pf${p:0:1}$((size / 1048576))m$loss"
if [ "$loss" != 0 ]; then
	sed -i "s/^\(device = net_af_packet[^ ]*\)/\1,qdisc_bypass=0/" \
		"$RV_CFG_A" "$RV_CFG_B"
	grep -q "qdisc_bypass=0" "$RV_CFG_A" ||
		rv_fail "config/netns-a.ini: no af_packet device to add qdisc_bypass=0 to"
	rv_nft_loss "$RP_NS_A" "$loss" "$RP_VETH_A"
	rv_nft_loss "$RP_NS_B" "$loss" "$RP_VETH_B"
	# The engines' counters print at exit: the recovery that ran.
	sed -i "s/^;args = .*/args = --log-level=rocepmd:info/" \
		"$RV_CFG_A" "$RV_CFG_B"
fi
args=(-d rocepmd0 -x 0 -s "$size" -n "$iters" -F -p "$port")
rv_pair "$port" "$prog" "${args[@]}"
if grep -qiE 'RETRY_EXC|error|failed' "$rv_tmp/client.out" \
	"$rv_tmp/client.err"; then
	rv_fail "$prog reported an error"
fi
# " 8388608    5    BW peak  BW average  MsgRate": bytes, iterations and a
# positive average bandwidth.
line=$(awk -v s="$size" -v n="$iters" '$1 == s && $2 == n { print; exit }' \
	"$rv_tmp/client.out")
[ -n "$line" ] || rv_fail "$prog printed no result line for $size x $iters"
if grep -q 'Correlation coefficient r^2' "$rv_tmp/client.err"; then
	# perftest could not fit its cycle counter to time on this noisy
	# machine and prints 0 for every rate: the run itself succeeded
	rv_log "$prog could not measure time here (r^2 < 0.9): rate not checked"
else
	awk -v l="$line" 'BEGIN { split(l, f); exit !(f[4] + 0 > 0) }' ||
		rv_fail "$prog: no positive average bandwidth in '$line'"
fi
if [ "$loss" != 0 ]; then
	rv_nft_loss_off "$RP_NS_A"
	rv_nft_loss_off "$RP_NS_B"
fi
rv_log "PASS: $prog -s $size -n $iters${4:+ loss $loss/1000}: $line"
