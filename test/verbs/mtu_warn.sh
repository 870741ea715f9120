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
#   mtu = auto, veth MTU 1500, 4175, 4176: active_mtu 1024, 2048, 4096
#   (rxe's rule: the interface's MTU less 80);
#   with the PMD's default ring frames (framesz=2048) at 9000: 1024
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
rv_log "a warning with the fix at veth MTU 1500 and 4159, none at 4160 or with mtu = 1024"

# mtu = auto (the default: no mtu line): the largest IB MTU whose frames
# pass the interface and fit the ring's frames (framesz=5120 holds 4096),
# as rxe follows its netdev's MTU; ibv_devinfo's active_mtu says it, the
# engine's log says why, and nothing warns.
# auto NAME VETH_MTU CONFIG IB_MTU ENUM WHY
auto() {
	run "$1" "$2" "$3"
	# the log at INFO says mtu everywhere: the warnings' own words
	if grep -E 'needs [0-9]+|are dropped|carries packets of up to' \
		"$rv_tmp/$1.err"; then
		rv_fail "$1: an MTU warning, though auto chose what passes"
	fi
	grep -Eq "^[[:space:]]+active_mtu:[[:space:]]+$4 \($5\)$" \
		"$rv_tmp/$1.out" ||
		rv_fail "$1: veth MTU $2: active_mtu is not $4: $(grep active_mtu "$rv_tmp/$1.out")"
	has "$1" "IB MTU $4 (mtu = auto: $6"
	rv_log "veth MTU $2, mtu = auto: active_mtu $4"
}
cfgauto=$rv_tmp/mtuauto.ini
sed -e '/^mtu[[:space:]]*=/d' -e '/^log_level/d' \
	-e 's/^\[eal\]$/[eal]\nlog_level = info/' "$RV_CFG_A" >"$cfgauto"
grep -q '^log_level = info' "$cfgauto" || rv_fail "could not set log_level"
grep -q '^mtu' "$cfgauto" && rv_fail "could not remove the mtu line"
grep -q 'framesz=5120' "$cfgauto" ||
	rv_fail "config/netns-a.ini's af_packet ring is no longer framesz=5120"
auto auto1500 1500 "$cfgauto" 1024 3 "interface $RP_VETH_A MTU 1500"
# rxe's rule (its netdev's MTU less 80 bytes), not rocepmd's 64: on one
# link both ends report one active MTU
auto auto4175 4175 "$cfgauto" 2048 4 "interface $RP_VETH_A MTU 4175"
auto auto4176 4176 "$cfgauto" 4096 5 "interface $RP_VETH_A MTU 4176"
# the ring's frames bound it: the PMD's default framesz=2048 holds 1024
cfgring=$rv_tmp/mtuauto-ring.ini
sed -e 's/,framesz=5120,blocksz=20480//' "$cfgauto" >"$cfgring"
grep -q '^device.*framesz' "$cfgring" && rv_fail "could not remove framesz"
auto ring9000 9000 "$cfgring" 1024 3 "interface $RP_VETH_A MTU 9000, the ring's frames"
# netdev = (config/netns-a-xdp.ini without its mtu line): af_xdp up to an
# interface MTU of 3506 (its frames are a page: 2048 at 3000), af_packet
# above it, with ring frames that hold 4096 (an explicit mtu = 4096 was
# refused there: the default ring holds 1024)
cfgnd=$rv_tmp/mtuauto-netdev.ini
sed -e '/^mtu[[:space:]]*=/d' -e "s/^netdev = rp-veth-a\$/netdev = $RP_VETH_A/" \
	-e '/^log_level/d' -e 's/^\[eal\]$/[eal]\nlog_level = info/' \
	"$RP_SRC_ROOT/config/netns-a-xdp.ini" >"$cfgnd"
grep -q "^netdev = $RP_VETH_A\$" "$cfgnd" || rv_fail "no netdev line in $cfgnd"
# native XDP on a veth needs its peer's MTU within the limit too
ip -n "$RP_NS_B" link set dev "$RP_VETH_B" mtu 3000 ||
	rv_fail "cannot set the MTU of $RP_VETH_B"
auto netdev3000 3000 "$cfgnd" 2048 4 "interface $RP_VETH_A MTU 3000"
grep -q 'net_af_xdp0' "$rv_tmp/netdev3000.err" ||
	rv_fail "netdev3000: not af_xdp at veth MTU 3000"
auto netdev9000 9000 "$cfgnd" 4096 5 "interface $RP_VETH_A MTU 9000"
grep -q 'net_af_packet0,iface=[^,]*,framesz=5120' "$rv_tmp/netdev9000.err" ||
	rv_fail "netdev9000: not af_packet with 5120-byte ring frames"
sed 's/^netdev = .*/&\nmtu = 4096/' "$cfgnd" >"$cfgnd.4096"
run netdev4096 9000 "$cfgnd.4096"
grep -Eq "^[[:space:]]+active_mtu:[[:space:]]+4096 \(5\)$" \
	"$rv_tmp/netdev4096.out" || rv_fail "netdev4096: active_mtu is not 4096"
rv_log "PASS: a warning with the fix at veth MTU 1500 and 4159, none at 4160 or with mtu = 1024; mtu = auto follows the interface and the ring; netdev = on af_xdp and af_packet"
