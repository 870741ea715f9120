#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# quiet.sh [af_packet|xdp]: a healthy embedded start prints nothing on
# standard error; [eal] log_level asks for more, and a real problem is
# still said.  ibv_devices through rocepmd-run in namespace A, with the
# port bound as RV_PORT says (lib.sh, default af_packet: config/netns-a.ini,
# the README's set-up):
#
#   the configuration as shipped   rocepmd0 listed, standard error empty
#                                  (DPDK 22.11 said six EAL and TELEMETRY
#                                  lines, two of them false warnings)
#   log_level = info               the EAL's start-up lines are back
#   log_level = debug              and telemetry's
#   the veth MTU too small for     at the default level, the engine's
#   the IB MTU (af_packet only)    warning, and still no EAL line

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_devices ibverbs-utils

export RV_PORT=${1:-af_packet}
rv_topology quiet

# run NAME CONFIG: ibv_devices, which must list rocepmd0.
run() {
	rv_fg "$1" "$RP_NS_A" "$2" -- ibv_devices
	rv_show "$1"
	[ "$rv_status" -eq 0 ] || rv_fail "$1: ibv_devices exited with $rv_status"
	grep -q rocepmd0 "$rv_tmp/$1.out" ||
		rv_fail "$1: ibv_devices does not list rocepmd0"
}

# with_level LEVEL: RV_CFG_A with [eal] log_level = LEVEL.
with_level() {
	local cfg=$rv_tmp/level-$1.ini

	sed "s/^\[eal\]$/[eal]\nlog_level = $1/" "$RV_CFG_A" >"$cfg"
	grep -q "^log_level = $1$" "$cfg" ||
		rv_fail "could not add log_level to $RV_CFG_A"
	echo "$cfg"
}

grep -q "^log_level" "$RV_CFG_A" &&
	rv_fail "$RV_CFG_A sets log_level: the default is under test"
run default "$RV_CFG_A"
[ ! -s "$rv_tmp/default.err" ] ||
	rv_fail "a healthy start wrote to standard error: $(cat "$rv_tmp/default.err")"
rv_log "default: nothing on standard error"

run info "$(with_level info)"
grep -q "^EAL: Detected CPU lcores" "$rv_tmp/info.err" ||
	rv_fail "log_level = info: no 'EAL: Detected CPU lcores' line"
rv_log "info: $(grep -c '^EAL: ' "$rv_tmp/info.err") EAL lines"

run debug "$(with_level debug)"
grep -q "^TELEMETRY: " "$rv_tmp/debug.err" ||
	rv_fail "log_level = debug: no TELEMETRY line"
grep -q "^EAL: " "$rv_tmp/debug.err" ||
	rv_fail "log_level = debug: no EAL line"
rv_log "debug: $(grep -c '^TELEMETRY: ' "$rv_tmp/debug.err") TELEMETRY lines"

if [ "$RV_PORT" = af_packet ]; then
	# IB MTU 4096 needs an interface MTU of 4160 (mtu_warn.sh).
	ip -n "$RP_NS_A" link set dev "$RP_VETH_A" mtu 1500 ||
		rv_fail "cannot set the MTU of $RP_VETH_A"
	run small-mtu "$RV_CFG_A"
	grep -q "ip link set dev $RP_VETH_A mtu 4160" "$rv_tmp/small-mtu.err" ||
		rv_fail "a veth MTU of 1500 under IB MTU 4096: no warning at the default level"
	! grep -q "^EAL: \|^TELEMETRY: " "$rv_tmp/small-mtu.err" ||
		rv_fail "the default level let EAL or TELEMETRY lines through"
	rv_log "a real problem (veth MTU 1500, IB MTU 4096) is still said"
fi
rv_log "PASS"
