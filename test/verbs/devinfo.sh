#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# devinfo.sh: ibv_devices and ibv_devinfo -v, unmodified, through rocepmd-run
# in namespace A with config/netns-a.ini.  ibv_devices lists rocepmd0 with
# a GUID; ibv_devinfo -v -d rocepmd0 says transport InfiniBand, link_layer
# Ethernet, state PORT_ACTIVE, active_mtu as the config's mtu, and GID[0]
# ::ffff:<the config's ipv4>, RoCE v2.  Neither warns about the MTU: the
# veth's MTU (9000) carries the config's IB MTU (4096 needs 4160), and
# af_packet's own MTU field (1500, which it never looks at) is no reason
# to say otherwise.

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_devices ibverbs-utils
rv_need_prog ibv_devinfo ibverbs-utils
rv_need_prog nft nftables

rv_topology dev
mtu=$(rv_cfg_mtu "$RV_CFG_A")
case $mtu in
256) mtu_enum=1 ;; 512) mtu_enum=2 ;; 1024) mtu_enum=3 ;;
2048) mtu_enum=4 ;; 4096) mtu_enum=5 ;;
*) rv_fail "config mtu $mtu is not an IB MTU" ;;
esac

rv_fg devices "$RP_NS_A" "$RV_CFG_A" -- ibv_devices
rc=$rv_status
rv_show devices
[ "$rc" -eq 0 ] || rv_fail "ibv_devices exited with status $rc"
grep -Eq '^[[:space:]]+rocepmd0[[:space:]]+[0-9a-f]{16}[[:space:]]*$' \
	"$rv_tmp/devices.out" ||
	rv_fail "ibv_devices does not list rocepmd0 with a 16-digit GUID"

rv_fg devinfo "$RP_NS_A" "$RV_CFG_A" -- ibv_devinfo -v -d rocepmd0
rc=$rv_status
rv_show devinfo
[ "$rc" -eq 0 ] || rv_fail "ibv_devinfo exited with status $rc"

veth_mtu=$(ip -n "$RP_NS_A" -o link show "$RP_VETH_A" |
	sed -n 's/.* mtu \([0-9]*\).*/\1/p')
[ "${veth_mtu:-0}" -ge $((mtu + 64)) ] ||
	rv_fail "veth MTU ${veth_mtu:-?} cannot carry IB MTU $mtu: the no-warning check means nothing"
for prog in devices devinfo; do
	if grep -Ei 'mtu|frame size' "$rv_tmp/$prog.err"; then
		rv_fail "ibv_$prog warns about the MTU though the veth's MTU $veth_mtu carries IB MTU $mtu"
	fi
done
rv_log "no MTU warning (veth MTU $veth_mtu, IB MTU $mtu)"

expect() {
	local what=$1 re=$2

	grep -Eq "$re" "$rv_tmp/devinfo.out" ||
		rv_fail "ibv_devinfo -v: no line for $what (/$re/)"
	rv_log "ibv_devinfo: $(grep -Em1 "$re" "$rv_tmp/devinfo.out" | sed 's/^[[:space:]]*//')"
}

expect "hca_id rocepmd0" '^hca_id:[[:space:]]+rocepmd0$'
expect "transport InfiniBand" '^[[:space:]]+transport:[[:space:]]+InfiniBand \(0\)$'
expect "link_layer Ethernet" '^[[:space:]]+link_layer:[[:space:]]+Ethernet$'
expect "state PORT_ACTIVE" '^[[:space:]]+state:[[:space:]]+PORT_ACTIVE \(4\)$'
expect "active_mtu $mtu (config)" "^[[:space:]]+active_mtu:[[:space:]]+$mtu \($mtu_enum\)$"
ip_re=${RV_IP_A//./\\.}
expect "GID[0] ::ffff:$RV_IP_A RoCE v2" "^[[:space:]]+GID\[[[:space:]]*0\]:[[:space:]]+::ffff:$ip_re, RoCE v2$"
expect "phys_port_cnt 1" '^[[:space:]]+phys_port_cnt:[[:space:]]+1$'
rv_log "PASS: ibv_devices and ibv_devinfo -v show rocepmd0 as configured"
