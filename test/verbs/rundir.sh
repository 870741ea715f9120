#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# rundir.sh: a program run through rocepmd-run leaves no EAL runtime
# directory behind.  DPDK 22.11 makes one per --file-prefix
# (/var/run/dpdk/<prefix> for root) and never removes it; the engine
# removes its own when the program exits.
#
# 1. ibv_devices with [eal] args = --file-prefix=<unique>: after it exits,
#    <rundir>/<unique> does not exist.
# 2. ibv_rc_pingpong as a server, with rocepmd's own prefix rocepmd-<pid>:
#    while it waits for its client the directory exists (so the checks look
#    in the right place); a client that sends garbage instead of its
#    address makes it exit (status 1, through exit handlers); then the
#    directory is gone.

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_devices ibverbs-utils
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog nft nftables
rv_need_prog ss iproute2

# Where EAL 22.11 puts runtime directories (eal_create_runtime_dir()).
if [ "$(id -u)" -eq 0 ]; then
	rundir=/var/run/dpdk
else
	rundir=${XDG_RUNTIME_DIR:-/tmp}/dpdk
fi

rv_topology rdir

# 1. A short program, prefix from the configuration.
prefix=rv_rundir_$$
cfg=$rv_tmp/prefix.ini
sed "s/^\[eal\]$/[eal]\nargs = --file-prefix=$prefix/" "$RV_CFG_A" >"$cfg"
grep -q "^args = --file-prefix=$prefix$" "$cfg" ||
	rv_fail "could not add [eal] args to $RV_CFG_A"
rv_fg devices "$RP_NS_A" "$cfg" -- ibv_devices
rc=$rv_status
rv_show devices
[ "$rc" -eq 0 ] || rv_fail "ibv_devices exited with status $rc"
grep -q rocepmd0 "$rv_tmp/devices.out" ||
	rv_fail "ibv_devices does not list rocepmd0: the engine did not start"
[ ! -e "$rundir/$prefix" ] ||
	rv_fail "ibv_devices left $rundir/$prefix behind: $(ls -la "$rundir/$prefix")"
rv_log "ibv_devices (--file-prefix=$prefix): no $rundir/$prefix left"

# 2. A server, rocepmd's per-process prefix, a clean exit on a bad client.
port=18515
rv_bg server "$RP_NS_A" "$RV_CFG_A" -- ibv_rc_pingpong -d rocepmd0 -g 0 \
	-p "$port"
srv=$rv_last_pid
rv_wait_listen "$RP_NS_A" "$port" "$srv" server
# rv_bg's PID is timeout's; the program is the listener.
pid=$(ip netns exec "$RP_NS_A" ss -Hltnp "sport = :$port" |
	sed -n 's/.*"ibv_rc_pingpong",pid=\([0-9]*\),.*/\1/p' | head -n 1)
[ -n "$pid" ] || rv_fail "no PID for the ibv_rc_pingpong listener"
[ -d "$rundir/rocepmd-$pid" ] ||
	rv_fail "no $rundir/rocepmd-$pid while ibv_rc_pingpong (PID $pid) runs: wrong place to look"
rv_log "ibv_rc_pingpong (PID $pid) runs with $rundir/rocepmd-$pid"
ip netns exec "$RP_NS_A" bash -c \
	"echo garbage >/dev/tcp/${RV_IP_A}/$port" ||
	rv_fail "could not connect to the server"
wait "$srv"
rc=$?
rv_forget "$srv"
rv_show server
[ "$rc" -eq 1 ] || rv_fail "ibv_rc_pingpong exited with $rc, expected 1 (bad client address)"
grep -q "Couldn't read remote address" "$rv_tmp/server.err" ||
	rv_fail "ibv_rc_pingpong did not refuse the client's address"
[ ! -e "$rundir/rocepmd-$pid" ] ||
	rv_fail "ibv_rc_pingpong left $rundir/rocepmd-$pid behind: $(ls -la "$rundir/rocepmd-$pid")"
rv_log "PASS: no EAL runtime directory left behind"
