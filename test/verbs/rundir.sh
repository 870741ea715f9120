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
# 3. A program killed by SIGKILL runs no exit handler and leaves its
#    directory; the next embedded start removes it, and keeps the
#    directory of a program that still runs, one of a dead PID whose socket
#    still listens (as a process of another PID namespace would) and names
#    that are not rocepmd-<pid>.

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_devices ibverbs-utils
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog nft nftables
rv_need_prog ss iproute2

rundir=$(rv_eal_rundir)

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

# 3. SIGKILL, then another start sweeps.
# rv_listener NAME PORT: the PID of the program listening on PORT in NS A.
rv_listener() {
	ip netns exec "$RP_NS_A" ss -Hltnp "sport = :$2" |
		sed -n "s/.*\"$1\",pid=\([0-9]*\),.*/\1/p" | head -n 1
}
rv_bg killed "$RP_NS_A" "$RV_CFG_A" -- ibv_rc_pingpong -d rocepmd0 -g 0 \
	-p "$port"
killed=$rv_last_pid
rv_wait_listen "$RP_NS_A" "$port" "$killed" killed
kpid=$(rv_listener ibv_rc_pingpong "$port")
[ -n "$kpid" ] || rv_fail "no PID for the ibv_rc_pingpong listener"
kill -KILL "$kpid"
wait "$killed" 2>/dev/null
rv_forget "$killed"
[ -d "$rundir/rocepmd-$kpid" ] ||
	rv_fail "no $rundir/rocepmd-$kpid after SIGKILL: nothing to sweep"
rv_log "SIGKILL left $rundir/rocepmd-$kpid: $(ls -A "$rundir/rocepmd-$kpid")"

# A live one: a server on B's port (another port than A's claim).
rv_bg live "$RP_NS_B" "$RV_CFG_B" -- ibv_rc_pingpong -d rocepmd0 -g 0 \
	-p "$port"
live=$rv_last_pid
rv_wait_listen "$RP_NS_B" "$port" "$live" live
lpid=$(ip netns exec "$RP_NS_B" ss -Hltnp "sport = :$port" |
	sed -n 's/.*"ibv_rc_pingpong",pid=\([0-9]*\),.*/\1/p' | head -n 1)
[ -d "$rundir/rocepmd-$lpid" ] || rv_fail "no $rundir/rocepmd-$lpid for the live server"

# A dead PID whose directory holds a listening socket; and other names.
(exit 0) &
dpid=$!
wait "$dpid"
kill -0 "$dpid" 2>/dev/null && rv_fail "PID $dpid is alive again"
mkdir -p "$rundir/rocepmd-$dpid" "$rundir/rocepmd-${kpid}x" "$rundir/rocepmd-0$kpid"
rv_sock_dirs=("$rundir/rocepmd-$dpid" "$rundir/rocepmd-${kpid}x" "$rundir/rocepmd-0$kpid")
# (rv_cleanup exits with the status it is entered with)
trap 'rc=$?; rm -rf "${rv_sock_dirs[@]}"; (exit $rc); rv_cleanup' EXIT
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(1)
print("listening", flush=True)
time.sleep(600)' "$rundir/rocepmd-$dpid/dpdk_telemetry.v2" >"$rv_tmp/sock.out" &
sock=$!
rv_pids+=("$sock")
for ((i = 0; i < 100; i++)); do
	grep -q listening "$rv_tmp/sock.out" && break
	sleep 0.1
done
grep -q listening "$rv_tmp/sock.out" || rv_fail "the stand-in socket does not listen"

rv_fg sweep "$RP_NS_A" "$RV_CFG_A" -- ibv_devices
rv_show sweep
[ "$rv_status" -eq 0 ] || rv_fail "ibv_devices exited with $rv_status"
[ ! -e "$rundir/rocepmd-$kpid" ] ||
	rv_fail "the next start left $rundir/rocepmd-$kpid of the killed PID $kpid"
[ -d "$rundir/rocepmd-$lpid" ] ||
	rv_fail "the next start removed $rundir/rocepmd-$lpid of the live PID $lpid"
[ -S "$rundir/rocepmd-$dpid/dpdk_telemetry.v2" ] ||
	rv_fail "the next start removed a directory whose socket listens"
[ -d "$rundir/rocepmd-${kpid}x" ] && [ -d "$rundir/rocepmd-0$kpid" ] ||
	rv_fail "the next start removed a directory not named rocepmd-<pid>"
rv_log "the next start removed $rundir/rocepmd-$kpid (SIGKILL), kept the live $lpid, the listening socket and other names"
rv_stop_pids
rm -rf "${rv_sock_dirs[@]}"

rv_log "PASS: no EAL runtime directory left behind"
