#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# ibstat.sh: infiniband-diags' ibstat, unmodified, through rocepmd-run
# (issue 26): librocepmd-umad.so answers libibumad's CA discovery from the
# verbs shim's devices.
#
#   control     the library replaced by an empty one: ibstat prints no CA
#               (what it did before: libibumad reads only sysfs)
#   no device   ROCEPMD_CONFIG names no file: ibstat fails, "can't list IB
#               device names", rather than print nothing and exit 0
#   embedded    --config A: `ibstat` prints CA 'rocepmd0', 1 port, state
#               Active, LinkUp, link layer Ethernet, node and port GUID the
#               MAC's modified EUI-64 (as ibv_devices' GUID); `ibstat -l`
#               lists rocepmd0; `ibstat rocepmd0 1` the port alone;
#               `ibstat -p` the port GUID; `ibstat -s` no port
#   bad input   a port the CA lacks and an unknown CA: an error, exit != 0
#   MADs        ibaddr (a MAD tool): fails, saying the device has no MAD
#               interface
#   host        --attach to rocepmd-testpmd --host: ibstat as embedded
#
# Environment: RP_TESTPMD (rocepmd-testpmd), RV_EMPTY_PRELOAD, RP_SHIM_LIB
# and RP_UMAD_LIB (librocepmd-verbs.so, librocepmd-umad.so).

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibstat infiniband-diags
rv_need_prog ibv_devices ibverbs-utils
[ -x "${RP_TESTPMD:-}" ] || rv_fail "RP_TESTPMD (rocepmd-testpmd) is not set"
[ -r "${RV_EMPTY_PRELOAD:-}" ] || rv_fail "RV_EMPTY_PRELOAD is not set"
app=$RP_TESTPMD

rv_topology ibstat

# run NAME ARGS...: rocepmd-run --config A ARGS; exit status in rc.
run() {
	local name=$1

	shift
	rv_fg "$name" "$RP_NS_A" "$RV_CFG_A" -- "$@"
	rc=$rv_status
	rv_show "$name"
}

# --- control: without the library, ibstat finds nothing
ROCEPMD_UMAD=$RV_EMPTY_PRELOAD run control ibstat
grep -q "rocepmd0" "$rv_tmp/control.out" &&
	rv_fail "control: ibstat shows rocepmd0 without librocepmd-umad.so: the test proves nothing"
rv_log "control: without the library ibstat exits $rc and prints $(wc -l <"$rv_tmp/control.out") lines"

# --- a rocepmd environment with no device (the engine cannot start):
# an error, not nothing and exit 0
if [ ! -r "${RP_SHIM_LIB:-}" ] || [ ! -r "${RP_UMAD_LIB:-}" ]; then
	rv_fail "RP_SHIM_LIB and RP_UMAD_LIB are not set"
fi
ip netns exec "$RP_NS_A" env ROCEPMD_CONFIG="$rv_tmp/missing.ini" \
	LD_PRELOAD="$RP_SHIM_LIB:$RP_UMAD_LIB" timeout 60 ibstat \
	>"$rv_tmp/nodev.out" 2>"$rv_tmp/nodev.err"
rc=$?
rv_show nodev
[ "$rc" -ne 0 ] || rv_fail "no device under ROCEPMD_CONFIG: ibstat exits 0"
grep -q "can't list IB device names" "$rv_tmp/nodev.err" ||
	rv_fail "no device under ROCEPMD_CONFIG: ibstat does not say so"

# --- the GUIDs: ibv_devices', and the veth MAC's modified EUI-64
run devices ibv_devices
[ "$rc" -eq 0 ] || rv_fail "ibv_devices: exit $rc"
guid=$(awk '$1 == "rocepmd0" { print $2 }' "$rv_tmp/devices.out")
[ ${#guid} -eq 16 ] || rv_fail "ibv_devices gives no GUID for rocepmd0"
if [ "$RV_PORT" = xdp ]; then
	mac=$(ip -n "$RP_NS_A" -o link show "$RP_VETH_A" |
		sed -n 's/.*link\/ether \([0-9a-f:]*\) .*/\1/p')
	IFS=: read -r m0 m1 m2 m3 m4 m5 <<<"$mac"
	eui=$(printf '%02x%s%sfffe%s%s%s' $((0x$m0 ^ 2)) "$m1" "$m2" "$m3" "$m4" "$m5")
	[ "$eui" = "$guid" ] ||
		rv_fail "ibv_devices' GUID $guid is not the EUI-64 $eui of $RP_VETH_A's MAC $mac"
fi

# --- embedded configuration
run ibstat ibstat
[ "$rc" -eq 0 ] || rv_fail "ibstat: exit $rc"
rv_has ibstat "^CA 'rocepmd0'\$" "the CA"
rv_has ibstat "^[[:space:]]+Number of ports: 1\$" "one port"
rv_has ibstat "^[[:space:]]+Firmware version: rocepmd" "the firmware version"
rv_has ibstat "^[[:space:]]+Node GUID: 0x$guid\$" "the node GUID"
rv_has ibstat "^[[:space:]]+Port 1:\$" "port 1"
rv_has ibstat "^[[:space:]]+State: Active\$" "state Active"
rv_has ibstat "^[[:space:]]+Physical state: LinkUp\$" "physical state LinkUp"
rv_has ibstat "^[[:space:]]+Rate: [1-9][0-9.]*\$" "a rate"
rv_has ibstat "^[[:space:]]+Base lid: 0\$" "LID 0 (RoCE)"
rv_has ibstat "^[[:space:]]+Port GUID: 0x$guid\$" "the port GUID (the node's)"
rv_has ibstat "^[[:space:]]+Link layer: Ethernet\$" "link layer Ethernet"

run list ibstat -l
[ "$rc" -eq 0 ] || rv_fail "ibstat -l: exit $rc"
[ "$(cat "$rv_tmp/list.out")" = rocepmd0 ] || rv_fail "ibstat -l does not list rocepmd0 alone"
rv_log "ibstat -l: rocepmd0"

run port ibstat rocepmd0 1
[ "$rc" -eq 0 ] || rv_fail "ibstat rocepmd0 1: exit $rc"
rv_has port "^CA: 'rocepmd0'\$" "the CA of the port"
rv_has port "^Port 1:\$" "port 1 alone"
rv_has port "^State: Active\$" "state Active"
rv_has port "^Link layer: Ethernet\$" "link layer Ethernet"

run guids ibstat -p
[ "$rc" -eq 0 ] || rv_fail "ibstat -p: exit $rc"
[ "$(cat "$rv_tmp/guids.out")" = "0x$guid" ] || rv_fail "ibstat -p does not print the port GUID 0x$guid alone"
rv_log "ibstat -p: 0x$guid"

run short ibstat -s
[ "$rc" -eq 0 ] || rv_fail "ibstat -s: exit $rc"
rv_has short "^CA 'rocepmd0'\$" "the CA"
grep -q "Port 1" "$rv_tmp/short.out" && rv_fail "ibstat -s prints the port"

# --- bad input: an error, not nothing
run noport ibstat rocepmd0 2
[ "$rc" -ne 0 ] || rv_fail "ibstat rocepmd0 2: exit 0 for a port the CA lacks"
grep -q "no port number 2" "$rv_tmp/noport.err" || rv_fail "ibstat rocepmd0 2: no reason"
run noca ibstat nosuch0
[ "$rc" -ne 0 ] || rv_fail "ibstat nosuch0: exit 0 for an unknown CA"
grep -q "nosuch0" "$rv_tmp/noca.err" || rv_fail "ibstat nosuch0: the error does not name it"

# --- a MAD tool: fails, and says why
if command -v ibaddr >/dev/null 2>&1; then
	run mad ibaddr
	[ "$rc" -ne 0 ] || rv_fail "ibaddr: exit 0 with no MAD interface"
	grep -q "rocepmd0 is a rocepmd device: no MAD interface" "$rv_tmp/mad.err" ||
		rv_fail "ibaddr: no word on the missing MAD interface"
	rv_log "ibaddr: exit $rc, $(grep -m1 "no MAD interface" "$rv_tmp/mad.err")"
fi

# --- attached to a host
# shellcheck source=../service/host_lib.sh
. "$RP_SRC_ROOT/test/service/host_lib.sh"
host_start A
sv_fg host A -- ibstat
rc=$rv_status
rv_show host
[ "$rc" -eq 0 ] || rv_fail "ibstat --attach: exit $rc"
rv_has host "^CA 'rocepmd0'\$" "the host's CA"
rv_has host "^[[:space:]]+State: Active\$" "state Active"
rv_has host "^[[:space:]]+Port GUID: 0x$guid\$" "the port GUID"
rv_has host "^[[:space:]]+Link layer: Ethernet\$" "link layer Ethernet"

rv_log "PASS: ibstat shows rocepmd0 through rocepmd-run, embedded and attached"
