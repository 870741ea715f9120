#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# port_lock.sh: one engine per port.  A second program started with the
# configuration of a running one refuses to start, naming the owner; the
# owner keeps working; the port is free again once the owner is gone,
# however it went.
#
#  1. ibv_rc_pingpong server in B (config netns-b.ini) owns rvlckb.
#  2. ibv_devinfo in B through rocepmd-run, same config: rocepmd-run exits 1
#     at once, "port0 (...): interface rvlckb is in use by PID <server>
#     (ibv_rc_pingpong)", and ibv_devinfo never runs; --check shows it in
#     an "in use:" line.
#  3. ibv_devinfo in B with the shim preloaded directly (no rocepmd-run):
#     ibv_get_device_list() fails with EBUSY ("Failed to get IB devices
#     list: Device or resource busy"), the shim's log names the PID; within
#     a few seconds, and before any EAL start.  The owner's lock file
#     /run/rocepmd/ports/net<netns inode>-if<index>.lock names it.
#  4. The same interface name in another namespace is another port:
#     ibv_devinfo in a second topology (rv-lck2-a/-b, same veth names)
#     starts.
#  5. The client in A: the pingpong completes, both exit 0.
#  6. After the server's exit its lock file is gone, and ibv_devinfo in B
#     starts; a holder killed with SIGKILL leaves no claim either.

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_devinfo ibverbs-utils
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog nft nftables
rv_need_prog ss iproute2

lockdir=${ROCEPMD_LOCK_DIR:-/run/rocepmd/ports}
port=18515
iters=200

rv_topology lck

# A second topology with the same veth names, removed on every way out.
topo2=0
topo2() {
	RP_NS_A=rv-lck2-a RP_NS_B=rv-lck2-b "$RP_SRC_ROOT/scripts/netns-topology" "$@"
}
topo2_cleanup() {
	local rc=$?

	if [ "$topo2" -eq 1 ]; then
		topo2 down >/dev/null 2>&1 ||
			echo "$rv_prog: second topology: netns-topology down failed" >&2
	fi
	(exit "$rc")
	rv_cleanup
}
trap topo2_cleanup EXIT

# Lock file of interface IFACE in namespace NS.
lock_file() {
	local ns=$1 iface=$2 ino idx

	ino=$(ip netns exec "$ns" stat -L -c %i /proc/self/ns/net) ||
		rv_fail "no network namespace inode for $ns"
	idx=$(ip -n "$ns" -o link show "$iface" | cut -d: -f1)
	[ -n "$idx" ] || rv_fail "no index for $iface in $ns"
	echo "$lockdir/net$ino-if$idx.lock"
}

# PID of the program listening on TCP port $port in namespace NS.
listener_pid() {
	ip netns exec "$1" ss -Hltnp "sport = :$port" |
		sed -n 's/.*pid=\([0-9]*\),.*/\1/p' | head -n 1
}

shim=$(ip netns exec "$RP_NS_B" "$RP_RUN" --config "$RV_CFG_B" --check | sed -n 's/^shim: //p')
[ -r "$shim" ] || rv_fail "no verbs shim (rocepmd-run --check: '$shim')"

# 1. The owner.
args=(-d rocepmd0 -g 0 -n "$iters" -p "$port")
rv_bg server "$RP_NS_B" "$RV_CFG_B" -- ibv_rc_pingpong "${args[@]}"
srv=$rv_last_pid
rv_wait_listen "$RP_NS_B" "$port" "$srv" server
owner=$(listener_pid "$RP_NS_B")
[ -n "$owner" ] || rv_fail "no PID for the ibv_rc_pingpong server"
want="interface $RP_VETH_B is in use by PID $owner (ibv_rc_pingpong)"

# 2. rocepmd-run refuses a second program.
start=$SECONDS
rv_fg second "$RP_NS_B" "$RV_CFG_B" -- ibv_devinfo -d rocepmd0
rc=$rv_status
rv_show second
[ "$rc" -eq 1 ] || rv_fail "second program through rocepmd-run: status $rc, expected 1"
[ ! -s "$rv_tmp/second.out" ] || rv_fail "ibv_devinfo ran though the port is in use"
grep -qE "port0 \(net_af_(packet|xdp)0,iface=$RP_VETH_B," "$rv_tmp/second.err" ||
	rv_fail "rocepmd-run does not name the port"
grep -qF "$want" "$rv_tmp/second.err" ||
	rv_fail "rocepmd-run does not say '$want'"
rv_log "rocepmd-run refused in $((SECONDS - start)) s: $(cat "$rv_tmp/second.err")"
ip netns exec "$RP_NS_B" "$RP_RUN" --config "$RV_CFG_B" --check \
	>"$rv_tmp/check.out" 2>&1 ||
	rv_fail "rocepmd-run --check failed: $(cat "$rv_tmp/check.out")"
grep -q "^in use: port0 .*$want" "$rv_tmp/check.out" ||
	rv_fail "rocepmd-run --check has no 'in use:' line naming PID $owner: $(cat "$rv_tmp/check.out")"

# 3. The shim refuses too, at the verbs boundary.  At log_level info, an
# EAL that started would say so ("EAL: Detected CPU lcores").
loud=$rv_tmp/loud-b.ini
sed 's/^\[eal\]$/[eal]\nlog_level = info/' "$RV_CFG_B" >"$loud"
grep -q '^log_level = info$' "$loud" || rv_fail "could not add log_level to $RV_CFG_B"
start=$SECONDS
ip netns exec "$RP_NS_B" env LD_PRELOAD="$shim" ROCEPMD_CONFIG="$loud" \
	timeout -k 5 60 ibv_devinfo -d rocepmd0 \
	>"$rv_tmp/direct.out" 2>"$rv_tmp/direct.err"
rc=$?
took=$((SECONDS - start))
rv_show direct
[ "$rc" -ne 0 ] || rv_fail "ibv_devinfo with the shim preloaded started on a port in use"
[ "$rc" -ne 124 ] || rv_fail "ibv_devinfo with the shim preloaded hung"
grep -qF "Failed to get IB devices list: Device or resource busy" \
	"$rv_tmp/direct.err" ||
	rv_fail "ibv_get_device_list() did not fail with EBUSY"
grep -qF "$want" "$rv_tmp/direct.err" || rv_fail "the shim does not say '$want'"
if grep -q '^EAL:' "$rv_tmp/direct.err"; then
	rv_fail "the EAL started on a port in use"
fi
[ "$took" -le 5 ] || rv_fail "the refusal took $took s"
rv_log "the shim refused in $took s, before the EAL"

lf=$(lock_file "$RP_NS_B" "$RP_VETH_B")
[ -f "$lf" ] || rv_fail "no lock file $lf while the server runs"
grep -qE "^$owner ibv_rc_pingpong net_af_(packet|xdp)0,iface=$RP_VETH_B," "$lf" ||
	rv_fail "lock file $lf does not name PID $owner: $(cat "$lf")"
rv_log "server PID $owner owns $RP_VETH_B: $lf: $(cat "$lf")"

# 4. Same interface name, other namespace: another port.
topo2=1
topo2 up >"$rv_tmp/topology2.log" 2>&1 || {
	cat "$rv_tmp/topology2.log" >&2
	rv_fail "second topology: netns-topology up failed"
}
rv_fg other "rv-lck2-b" "$RV_CFG_B" -- ibv_devinfo -d rocepmd0
rc=$rv_status
rv_show other
[ "$rc" -eq 0 ] || rv_fail "ibv_devinfo on $RP_VETH_B of another namespace: status $rc"
grep -q 'hca_id:[[:space:]]*rocepmd0' "$rv_tmp/other.out" ||
	rv_fail "ibv_devinfo in another namespace shows no rocepmd0"
topo2 down >/dev/null 2>&1 || rv_fail "second topology: netns-topology down failed"
topo2=0
rv_log "$RP_VETH_B of another namespace is another port"

# 5. The owner still works.
rv_fg client "$RP_NS_A" "$RV_CFG_A" -- ibv_rc_pingpong "${args[@]}" "$RV_IP_B"
crc=$rv_status
[ "$crc" -eq 0 ] || { sleep 1; kill -TERM "$srv" 2>/dev/null; }
wait "$srv"
src=$?
rv_forget "$srv"
rv_show client
rv_show server
[ "$crc" -eq 0 ] || rv_fail "client exited with status $crc"
[ "$src" -eq 0 ] || rv_fail "server exited with status $src"
rv_check_pingpong client 4096 "$iters"
rv_check_pingpong server 4096 "$iters"

# 6. Free again after a clean exit, and after a kill.
[ ! -e "$lf" ] || rv_fail "the server's lock file $lf is left behind"
rv_fg after "$RP_NS_B" "$RV_CFG_B" -- ibv_devinfo -d rocepmd0
[ "$rv_status" -eq 0 ] || { rv_show after; rv_fail "ibv_devinfo after the server: status $rv_status"; }

rv_bg holder "$RP_NS_B" "$RV_CFG_B" -- ibv_rc_pingpong "${args[@]}"
hold=$rv_last_pid
rv_wait_listen "$RP_NS_B" "$port" "$hold" holder
hpid=$(listener_pid "$RP_NS_B")
[ -n "$hpid" ] || rv_fail "no PID for the second server"
kill -KILL "$hpid"
wait "$hold"
rv_forget "$hold"
rv_fg killed "$RP_NS_B" "$RV_CFG_B" -- ibv_devinfo -d rocepmd0
rc=$rv_status
rv_show killed
[ "$rc" -eq 0 ] || rv_fail "ibv_devinfo after the owner was killed: status $rc"
rv_log "PASS: a second engine on an owned port is refused, naming the owner; the owner keeps working; the port is free after its exit or death"
