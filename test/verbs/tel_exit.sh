#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tel_exit.sh: a telemetry client cannot crash a program that exits.
#
# DPDK's telemetry socket (<rundir>/<prefix>/dpdk_telemetry.v2, root's)
# answers on its own thread whenever a client asks; rocepmd's commands
# read the devices, and /rocepmd/qp asks the device's lcore.  A client
# that polled them while the program exited read a device the engine
# stop had just freed: SIGSEGV in rp_ctrl_call(), exit status 139 (a core
# dump of bench/fault_matrix.sh with /rocepmd/qp polled).  The engine
# now waits for the commands in flight before it stops its lcores and
# frees the devices, and refuses later ones (rp_engine_hold()).
#
# ibv_devinfo on two memif devices of one process, ten times, each with a
# client that sends /rocepmd/qp back to back (a control request each, the
# path that crashed) from the moment the socket appears until it goes:
# every run exits 0 and the client was answered.  The crash itself came
# under bench/fault_matrix.sh's af_packet devices (3 of 9 runs one hour);
# this test did not reproduce it on the old build in 20 runs: it guards
# the path (a crash or a hang at exit under a polling client), not the race.

. "$(dirname "$0")/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_devinfo ibverbs-utils
rv_need_prog python3 python3

rundir=$(rv_eal_rundir)

cat >"$rv_tmp/hammer.py" <<'PY'
import os, socket, sys, time
path = sys.argv[1]
cmds = ["/rocepmd/qp,0,4097", "/rocepmd/qp,1,4097", "/rocepmd/qp,0,1",
        "/rocepmd/stats,0", "/rocepmd/qp,1,1", "/rocepmd/shards,1"]
# started before the program, which it waits for: a Python that starts
# while the engine starts on two CPUs can miss a short program's socket
open(sys.argv[2], "w").close()
t0 = time.time()
while not os.path.exists(path):
    if time.time() - t0 > 60:
        print("no socket at %s" % path)
        sys.exit(1)
    time.sleep(0.002)
n = 0
while True:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(10)
        s.connect(path)
        s.recv(1024)
        for k in range(20):
            s.send(cmds[(n + k) % len(cmds)].encode())
            if not s.recv(1 << 16):
                break
            n += 1
        s.close()
    except OSError:
        break
print("%d answers" % n)
PY

for i in $(seq 1 10); do
	prefix=rv_tel_exit_$$_$i
	cfg=$rv_tmp/tel$i.ini
	sock=/rv-tel-exit-$$-$i
	cat >"$cfg" <<-EOF
	[eal]
	args = --no-huge -m 256 --no-pci --file-prefix=$prefix
	[engine]
	main_lcore = 0
	lcores = 1
	[port0]
	device = net_memif0,role=server,id=0,socket-abstract=yes,socket=$sock,mac=02:00:00:00:00:01
	ipv4 = 192.0.2.1/24
	lcore = 1
	region_mb = 32
	[port1]
	device = net_memif1,role=client,id=0,socket-abstract=yes,socket=$sock,mac=02:00:00:00:00:02
	ipv4 = 192.0.2.2/24
	lcore = 1
	region_mb = 32
	EOF
	python3 "$rv_tmp/hammer.py" "$rundir/$prefix/dpdk_telemetry.v2" \
		"$rv_tmp/ready$i" >"$rv_tmp/hammer$i.out" 2>&1 &
	hammer=$!
	rv_pids+=("$hammer")
	for _ in $(seq 1 300); do
		[ -e "$rv_tmp/ready$i" ] && break
		sleep 0.1
	done
	[ -e "$rv_tmp/ready$i" ] || rv_fail "run $i: the telemetry client did not start"
	timeout -k 10 120 "$RP_RUN" --config "$cfg" -- ibv_devinfo \
		>"$rv_tmp/devinfo$i.out" 2>"$rv_tmp/devinfo$i.err"
	rc=$?
	wait "$hammer"
	hrc=$?
	rv_forget "$hammer"
	rv_log "run $i: ibv_devinfo exited $rc; the client: $(cat "$rv_tmp/hammer$i.out")"
	if [ "$rc" -ne 0 ]; then
		tail -5 "$rv_tmp/devinfo$i.err"
		rv_fail "run $i: ibv_devinfo exited $rc with a telemetry client polling"
	fi
	[ "$hrc" -eq 0 ] || rv_fail "run $i: the telemetry client failed: $(cat "$rv_tmp/hammer$i.out")"
	grep -q '^[1-9][0-9]* answers$' "$rv_tmp/hammer$i.out" ||
		rv_fail "run $i: the telemetry client was not answered: $(cat "$rv_tmp/hammer$i.out")"
done
rv_log "ten exits with a telemetry client polling: all 0"
