#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# mtu_warn.sh: the engine warns about the MTU exactly when frames of the
# configured IB MTU cannot pass the interface, and the warning says what to
# change.  ibv_devinfo through rocepmd-run in namespace A, af_packet on the
# veth (config/netns-a.ini, mtu = 4096, which needs an interface MTU of
# 4096 + 64 = 4160):
#
#   veth MTU 1500, mtu 4096   warning naming the interface, its MTU, 4160,
#                             "ip link set dev IFACE mtu 4160" and
#                             "mtu = 1024 in [port0]"
#   veth MTU 4159, mtu 4096   warning (one byte short)
#   veth MTU 4160, mtu 4096   no warning
#   veth MTU 1500, mtu 1024   no warning (the advice followed)
#
# ibv_devinfo exits 0 each time: the warning does not stop the device.

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_devinfo ibverbs-utils
rv_need_prog nft nftables

export RP_VETH_MTU=1500
# The af_packet configuration (IB MTU 4096); netdev binding's own MTU
# checks are test/xdp's.
export RV_PORT=af_packet
rv_topology mtu

# run NAME VETH_MTU CONFIG: ibv_devinfo with the veth at VETH_MTU.
run() {
	local name=$1 vmtu=$2 cfg=$3 rc

	ip -n "$RP_NS_A" link set dev "$RP_VETH_A" mtu "$vmtu" ||
		rv_fail "cannot set the MTU of $RP_VETH_A to $vmtu"
	rv_fg "$name" "$RP_NS_A" "$cfg" -- ibv_devinfo -d rocepmd0
	rc=$rv_status
	rv_show "$name"
	[ "$rc" -eq 0 ] || rv_fail "$name: ibv_devinfo exited with status $rc"
	grep -q 'hca_id:[[:space:]]*rocepmd0' "$rv_tmp/$name.out" ||
		rv_fail "$name: ibv_devinfo shows no rocepmd0"
}

# has NAME TEXT: NAME's stderr holds TEXT.
has() {
	grep -qF -- "$2" "$rv_tmp/$1.err" ||
		rv_fail "$1: no '$2' on stderr"
}

# quiet NAME: no MTU warning on NAME's stderr.
quiet() {
	if grep -Ei 'mtu|frame size' "$rv_tmp/$1.err"; then
		rv_fail "$1: an MTU warning, though the frames pass"
	fi
}

[ "$(rv_cfg_mtu "$RV_CFG_A")" -eq 4096 ] ||
	rv_fail "config/netns-a.ini no longer has mtu = 4096"

run small 1500 "$RV_CFG_A"
has small "interface $RP_VETH_A has MTU 1500, IB MTU 4096 needs 4160"
has small "set the interface MTU to 4160 or more (ip link set dev $RP_VETH_A mtu 4160)"
has small "mtu = 1024 in [port0]"
rv_log "veth MTU 1500: $(grep -F "interface $RP_VETH_A" "$rv_tmp/small.err")"

run short 4159 "$RV_CFG_A"
has short "interface $RP_VETH_A has MTU 4159, IB MTU 4096 needs 4160"
has short "mtu = 2048 in [port0]"

run exact 4160 "$RV_CFG_A"
quiet exact

cfg1024=$rv_tmp/mtu1024.ini
sed 's/^mtu[[:space:]]*=.*/mtu = 1024/' "$RV_CFG_A" >"$cfg1024"
[ "$(rv_cfg_mtu "$cfg1024")" -eq 1024 ] || rv_fail "could not set mtu = 1024"
run advice 1500 "$cfg1024"
quiet advice
rv_log "PASS: a warning with the fix at veth MTU 1500 and 4159, none at 4160 or with mtu = 1024"
