#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# status.sh: rocepmd-status, what an administrator runs first (issue 26),
# on the two test hosts (network namespaces, ports bound to the veth ends
# with XDP steering):
#
#   no device      no configuration and no host: exit 1 and a reason,
#                  nothing on stdout
#   embedded       --config A: `link -d` says ACTIVE, LINK_UP, the veth,
#                  the IB MTU and the GIDs (::ffff:192.0.2.x, 2001:db8::);
#                  `statistic` prints the counters under rxe's names;
#                  neither prints anything on stderr (the default
#                  log_level: the engine's boot is silent)
#   port in use    --config A while a host owns A's port: the
#                  configuration's view and the owner's PID, exit 0 for
#                  link; statistic exits 1 naming the PID and --attach
#   pick           no socket named, both hosts' in the run directory: each
#                  namespace's tool shows its own host (as rocepmd-run)
#   host           --attach: link -d as above; sent_pkts and rcvd_pkts grow
#                  by at least the round trips of an ibv_rc_pingpong
#                  between the hosts; devinfo is ibv_devinfo's own output
#
# Environment: RP_STATUS (rocepmd-status), RP_TESTPMD (rocepmd-testpmd).

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog ibv_devinfo ibverbs-utils
[ -x "${RP_STATUS:-}" ] || rv_fail "RP_STATUS (rocepmd-status) is not set"
[ -x "${RP_TESTPMD:-}" ] || rv_fail "RP_TESTPMD (rocepmd-testpmd) is not set"
app=$RP_TESTPMD

rv_topology status

# st NAME NS ARGS...: rocepmd-status ARGS in NS, with the run directory
# st_dir (default: an empty one); output in NAME.out/.err, exit status in
# st_rc.
st() {
	local name=$1 ns=$2

	shift 2
	(cd "$rv_tmp/empty" &&
		ip netns exec "$ns" env ROCEPMD_RUN_DIR="${st_dir:-$rv_tmp/empty}" \
			timeout -k 5 60 "$RP_STATUS" "$@") \
		>"$rv_tmp/$name.out" 2>"$rv_tmp/$name.err"
	st_rc=$?
	rv_show "$name"
}

# ctr NAME COUNTER: a counter of a `statistic` output.
ctr() {
	sed -n "s/.* $2 \([0-9]*\).*/\1/p" "$rv_tmp/$1.out" | head -1
}

mkdir -p "$rv_tmp/empty"
ip4_re=${RV_IP_A//./\\.}
case $RV_IP6_A in
2001:db8:*) ;;
*) rv_fail "no 2001:db8:: address on $RP_VETH_A ('$RV_IP6_A')" ;;
esac

# --- no device: a reason and exit 1, never empty output and 0
st none "$RP_NS_A" link
[ "$st_rc" -eq 1 ] || rv_fail "no device: exit $st_rc, not 1"
[ ! -s "$rv_tmp/none.out" ] || rv_fail "no device: something on stdout"
grep -q "no rocepmd device" "$rv_tmp/none.err" ||
	rv_fail "no device: no reason on stderr"
st none-sock "$RP_NS_A" --attach="$rv_tmp/empty/none.sock" statistic
[ "$st_rc" -eq 1 ] || rv_fail "missing host socket: exit $st_rc, not 1"
grep -q "none.sock" "$rv_tmp/none-sock.err" ||
	rv_fail "missing host socket: the error does not name it"

# --- embedded configuration: the tool boots the engine for a moment
st emb "$RP_NS_A" --config "$RV_CFG_A" link -d
[ "$st_rc" -eq 0 ] || rv_fail "link -d --config: exit $st_rc"
# the configuration's [eal] log_level (default notice): a healthy boot
# prints nothing, the EAL's and the drivers' start-up lines included
[ ! -s "$rv_tmp/emb.err" ] ||
	rv_fail "link --config: the embedded engine printed on stderr: $(head -c 600 "$rv_tmp/emb.err")"
rv_has emb "^link rocepmd0/1 state ACTIVE physical_state LINK_UP netdev $RP_VETH_A\$" \
	"state and netdev"
rv_has emb "active_mtu $(rv_cfg_mtu "$RV_CFG_A") " "the IB MTU of the config"
rv_has emb "gid 0 ::ffff:$ip4_re type RoCE v2" "GID 0 (IPv4)"
rv_has emb "gid 1 fe80::[0-9a-f:]+ type RoCE v2" "GID 1 (link-local)"
rv_has emb "gid [2-9] ${RV_IP6_A} type RoCE v2" "the IPv6 GID"
st emb-stat "$RP_NS_A" --config "$RV_CFG_A" statistic show
[ "$st_rc" -eq 0 ] || rv_fail "statistic --config: exit $st_rc"
[ ! -s "$rv_tmp/emb-stat.err" ] ||
	rv_fail "statistic --config: the embedded engine printed on stderr: $(head -c 600 "$rv_tmp/emb-stat.err")"
rv_has emb-stat "^link rocepmd0/1 sent_pkts [0-9]+ rcvd_pkts [0-9]+ duplicate_request [0-9]+ out_of_seq_request [0-9]+ rcvd_rnr_err [0-9]+ send_rnr_err [0-9]+ send_err [0-9]+\$" \
	"the counters under rxe's names"
grep -q "ack_deferred\|link_downed" "$rv_tmp/emb-stat.out" &&
	rv_fail "a counter the engine does not keep is printed"

# --- hosts on both namespaces
# shellcheck source=../service/host_lib.sh
. "$RP_SRC_ROOT/test/service/host_lib.sh"
host_start A
host_start B
# the host program itself, not the timeout around it
host_a=$(sv_prog_pid "$HOST_A")
[ -n "$host_a" ] || rv_fail "no host program under PID $HOST_A"

st busy "$RP_NS_A" --config "$RV_CFG_A" link
[ "$st_rc" -eq 0 ] || rv_fail "link of a port in use: exit $st_rc"
rv_has busy "^link rocepmd0/1 state UNKNOWN physical_state UNKNOWN netdev $RP_VETH_A\$" \
	"the configuration's view"
rv_has busy "^in use: .*PID $host_a\\b" "the owner's PID"
st busy-stat "$RP_NS_A" --config "$RV_CFG_A" statistic
[ "$st_rc" -eq 1 ] || rv_fail "statistic of a port in use: exit $st_rc, not 1"
grep -q "PID $host_a" "$rv_tmp/busy-stat.err" && grep -q -- "--attach" "$rv_tmp/busy-stat.err" ||
	rv_fail "statistic of a port in use: the error names neither the PID nor --attach"

st host "$RP_NS_A" --attach="$SOCK_A" link -d
[ "$st_rc" -eq 0 ] || rv_fail "link -d --attach: exit $st_rc"
rv_has host "^link rocepmd0/1 state ACTIVE physical_state LINK_UP netdev $RP_VETH_A\$" \
	"state and netdev of the host"
rv_has host "gid 0 ::ffff:$ip4_re type RoCE v2" "GID 0 of the host"
rv_has host "gid [2-9] ${RV_IP6_A} type RoCE v2" "the IPv6 GID of the host"
rv_has host "source host .*PID $host_a\\)" "the host's PID"

# no socket named, both hosts' sockets in the run directory: the one a
# host of the caller's namespace serves, in each namespace (rocepmd-run's
# choice, rp_attach_pick)
host_b=$(sv_prog_pid "$HOST_B")
st_dir=$rv_tmp st pick-a "$RP_NS_A" link -d
[ "$st_rc" -eq 0 ] || rv_fail "link -d, no source named, two hosts' sockets: exit $st_rc"
rv_has pick-a "source host .*/a\.sock \(PID $host_a\)" "the host of namespace A"
st_dir=$rv_tmp st pick-b "$RP_NS_B" --attach statistic
[ "$st_rc" -eq 0 ] || rv_fail "statistic --attach, two hosts' sockets: exit $st_rc"
rv_has pick-b "^link rocepmd0/1 sent_pkts " "the counters of namespace B's host"
st_dir=$rv_tmp st pick-b-link "$RP_NS_B" --attach link -d
rv_has pick-b-link "source host .*/b\.sock \(PID $host_b\)" "the host of namespace B"

st before "$RP_NS_A" --attach="$SOCK_A" statistic
[ "$st_rc" -eq 0 ] || rv_fail "statistic --attach: exit $st_rc"
iters=500
sv_pair 18515 ibv_rc_pingpong -g 0 -n "$iters"
st after "$RP_NS_A" --attach="$SOCK_A" statistic -d
[ "$st_rc" -eq 0 ] || rv_fail "statistic -d --attach: exit $st_rc"
for c in sent_pkts rcvd_pkts; do
	b=$(ctr before "$c") a=$(ctr after "$c")
	[ -n "$b" ] && [ -n "$a" ] || rv_fail "no $c before or after"
	[ "$a" -ge $((b + iters)) ] ||
		rv_fail "$c went from $b to $a over $iters round trips"
	rv_log "$c: $b before, $a after $iters round trips"
done
# -d: the engine's own counters as well, as telemetry has them
tx=$(host_stat A tx_packets)
[ "$(ctr after tx_packets)" -le "$tx" ] && [ "$(ctr after sent_pkts)" = "$(ctr after tx_packets)" ] ||
	rv_fail "sent_pkts is not the engine's tx_packets"

st devinfo "$RP_NS_A" --attach="$SOCK_A" devinfo -v
[ "$st_rc" -eq 0 ] || rv_fail "devinfo --attach: exit $st_rc"
rv_has devinfo '^hca_id:[[:space:]]+rocepmd0$' "ibv_devinfo's hca_id"
rv_has devinfo "GID\[[[:space:]]*0\]:[[:space:]]+::ffff:$ip4_re, RoCE v2" "ibv_devinfo's GID 0"

rv_log "PASS: rocepmd-status shows the devices, embedded and of a host"
