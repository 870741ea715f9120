#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# perftest_bw.sh PROG SIZE [ITERS, default 200] [PERFTEST ARGS...]: unmodified
# perftest (ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw or
# ib_atomic_lat) over rocepmd between two network namespaces.  The large
# messages are far larger than the requester's send window (issue 9:
# 8 MiB failed with RETRY_EXC_ERR, the whole message sent back to back
# overflowing the receiver's af_packet ring, again at every go-back-N);
# the atomic programs run CMP_AND_SWAP or FETCH_AND_ADD (-A), in either
# post API (perftest's ibv_wr_atomic_* by default, ibv_post_send with
# --use_old_post_send), polling or with events (-e).
#
#   [rv-<tag>-b] rocepmd-run --config netns-b.ini -- PROG -d rocepmd0 -x 0
#                  -s SIZE -n ITERS -F -p PORT [PERFTEST ARGS...]
#   [rv-<tag>-a] rocepmd-run --config netns-a.ini -- PROG ... 192.0.2.2
#
# RV_LOSS (per mille, environment): nftables drops that share of the RoCEv2 frames each
# veth end sends, in the netdev egress hook, the af_packet ports with
# qdisc_bypass=0 so that their frames pass it (issue 9's recipe; see
# test/verbs/lib.sh rv_nft_loss for what such a drop does to an af_packet
# sender).
#
# Passes when both exit 0 and the client printed its result line for SIZE
# with ITERS iterations and a positive bandwidth (latency: t_min).

. "$(dirname "$0")/lib.sh"

prog=${1:?usage: perftest_bw.sh PROG SIZE [ITERS [PERFTEST ARGS...]]}
size=${2:?usage: perftest_bw.sh PROG SIZE [ITERS [PERFTEST ARGS...]]}
iters=${3:-200}
loss=${RV_LOSS:-0}
shift $(($# < 3 ? $# : 3))
port=18520

case $prog in
ib_write_bw|ib_read_bw|ib_send_bw|ib_atomic_bw|ib_atomic_lat) ;;
*) rv_fail "PROG must be ib_write_bw, ib_read_bw, ib_send_bw, ib_atomic_bw" \
	"or ib_atomic_lat, not '$prog'" ;;
esac

rv_need_env
rv_need_root
rv_need_prog "$prog" perftest
rv_need_prog nft nftables

p=${prog#ib_}
# namespaces rv-pfw8m-a, rv-paFol-a (atomic, FETCH_AND_ADD, old post, lat)
if [ "${p%_*}" = atomic ]; then
	tag=pa
	case " $* " in *" CMP_AND_SWAP "*) tag+=C ;; *) tag+=F ;; esac
	case " $* " in *" --use_old_post_send "*) tag+=o ;; *) tag+=n ;; esac
	case " $* " in *" -e "*) tag+=e ;; esac
	tag+=${p#atomic_}
else
	tag="pf${p:0:1}$((size / 1048576))m$loss"
fi
# Loss is made in the veth's egress hook, which only af_packet's frames
# pass (af_xdp's skip it): the lossy runs bind af_packet.
[ "$loss" = 0 ] || export RV_PORT=af_packet
rv_topology "$tag"
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
args=(-d rocepmd0 -x 0 -s "$size" -n "$iters" -F -p "$port" "$@")
rv_pair "$port" "$prog" "${args[@]}"
if grep -qiE 'RETRY_EXC|error|failed' "$rv_tmp/client.out" \
	"$rv_tmp/client.err"; then
	rv_fail "$prog reported an error"
fi
# " 8388608    5    BW peak  BW average  MsgRate": bytes, iterations and a
# positive average bandwidth; " 8  1000  t_min  t_max  t_typical ...":
# bytes, iterations and a positive minimum latency.
line=$(awk -v s="$size" -v n="$iters" '$1 == s && $2 == n { print; exit }' \
	"$rv_tmp/client.out")
[ -n "$line" ] || rv_fail "$prog printed no result line for $size x $iters"
if grep -q 'Correlation coefficient r^2' "$rv_tmp/client.err"; then
	# perftest could not fit its cycle counter to time on this noisy
	# machine and prints 0 for every rate: the run itself succeeded
	rv_log "$prog could not measure time here (r^2 < 0.9): rate not checked"
else
	f=4
	[ "$prog" = ib_atomic_lat ] && f=3
	awk -v l="$line" -v f="$f" 'BEGIN { split(l, v); exit !(v[f] + 0 > 0) }' ||
		rv_fail "$prog: no positive rate in field $f of '$line'"
fi
if [ "$loss" != 0 ]; then
	# The mechanism ran: the hook refused frames, and the engines found
	# them back in their TX rings and sent them (rp_port_kick.c).
	drops=$( { rv_nft_loss_off "$RP_NS_A"; rv_nft_loss_off "$RP_NS_B"; } |
		tee /dev/stderr | awk '{ n += $NF } END { print n + 0 }')
	[ "$drops" -gt 0 ] || rv_fail "nftables dropped no frame"
	kicks=$(cat "$rv_tmp"/client.err "$rv_tmp"/server.err |
		awk '/ tx_ring_kicks / { n += $NF } END { print n + 0 }')
	[ "$kicks" -gt 0 ] ||
		rv_fail "$drops frames refused by the egress hook, no TX ring kick found one"
	rv_log "egress hook refused $drops frames; $kicks TX ring kicks sent them"
fi
rv_log "PASS: $prog -s $size -n $iters $*${RV_LOSS:+ loss $loss/1000}: $line"
