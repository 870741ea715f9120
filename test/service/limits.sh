#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# limits.sh APP CASE: what one attached process may cost the host (issue
# 24): the descriptors it sends and the host's tables, slots and quotas.
# Two test hosts as in service.sh; the hostile clients speak the attach
# protocol themselves (python, the versions from the headers).
#
#   fd-leak   2000 malformed CTRL messages, each carrying an eventfd: of
#             the wrong length after a HELLO, and before any HELLO; every
#             one ends its connection, and the host's descriptors
#             (/proc/HOST/fd) are as many afterwards as before; a pingpong
#             pair passes after
#   quota     host B's [host] section sets low quotas: a process gets
#             EDQUOT at exactly its CQ, MR and MR-page limits (what it
#             destroys it may create again), the host logs it naming the
#             process; a second process of the same uid reaches the
#             per-uid CQ limit, a fourth process of the uid is refused
#             (uid_processes); a pingpong pair passes beside the process
#             at its limits; 70 connections of another uid that never say
#             HELLO hold 4 slots at most (uid_pending), an attached
#             program starts meanwhile, and the host closes them after
#             hello_timeout_ms (telemetry: gone, counted as refused)
app=${1:?usage: $0 APP CASE}
case=${2:?usage: $0 APP CASE}
# shellcheck source=../verbs/lib.sh
. "$RP_SRC_ROOT/test/verbs/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog nft nftables

rv_topology "lim${case//-/}"
# shellcheck source=host_lib.sh
. "$RP_SRC_ROOT/test/service/host_lib.sh"

# The protocol versions the clients below speak (attach_client.py).
host_proto_env


# host_pid A|B: the host program itself (not the timeout around it).
host_pid() {
	local p

	eval "p=\$HOST_$1"
	sv_prog_pid "$p"
}

# refused A|B: connections the host refused so far.
refused() {
	tel "$1" /rocepmd/clients | python3 -c \
		'import json, sys; print(json.load(sys.stdin)["refused"])'
}

if [ "$case" = quota ]; then
	cat >>"$RV_CFG_B" <<'EOF'

[host]
hello_timeout_ms = 1500
uid_pending = 4
uid_processes = 3
cqs = 5
uid_cqs = 8
mrs = 3
mr_pages = 64
EOF
fi
host_start A
host_start B
host_baseline

case $case in
fd-leak)
	hp=$(host_pid B)
	[ -d "/proc/$hp/fd" ] || rv_fail "no host process at PID $hp"
	fds0=$(ls "/proc/$hp/fd" | wc -l)
	ip netns exec "$RP_NS_B" python3 - "$SOCK_B" >"$rv_tmp/leak.out" 2>&1 <<PY ||
import os, socket, struct, sys
sys.path.insert(0, "$RP_SRC_ROOT/test/service")
sys.dont_write_bytecode = True
from attach_client import *
path = sys.argv[1]
efd = os.eventfd(0, os.EFD_CLOEXEC | os.EFD_NONBLOCK)
anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [efd]))]
# A CHAN_CREATE (13) of the wrong length after a HELLO, then any CTRL
# before a HELLO: each ends its connection, the eventfd must go with it.
for i in range(2000):
    if i % 2 == 0:
        s, ret = attach(path)
        assert ret == 0, "attach %d: %d" % (i, ret)
        msg = ctrl_msg(13)[:100 + i % 100]
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        msg = ctrl_msg(13 if i % 4 == 1 else 1)
    s.sendmsg([msg], anc)
    s.settimeout(20)
    assert s.recv(512) == b"", "message %d answered" % i
    s.close()
print("2000 malformed CTRL messages with an eventfd: each connection closed")
PY
		{ rv_show leak; rv_fail "the malformed messages' client failed"; }
	sed "s/^/  leak: /" "$rv_tmp/leak.out"
	wait_detached B
	# Give the host a moment: the last connections end asynchronously.
	for ((i = 0; i < 50; i++)); do
		fds1=$(ls "/proc/$hp/fd" | wc -l)
		[ "$fds1" -le "$fds0" ] && break
		sleep 0.1
	done
	rv_log "host B descriptors: $fds0 before, $fds1 after"
	[ "$fds1" -le "$fds0" ] ||
		rv_fail "host B holds $((fds1 - fds0)) more descriptors after the malformed messages ($fds0 -> $fds1)"
	sv_pair 18620 ibv_rc_pingpong -d rocepmd0 -g 0 -s 1024 -n 300 -c
	check_clean
	;;
quota)
	ready=$rv_tmp/quota.ready
	done=$rv_tmp/quota.done
	ip netns exec "$RP_NS_B" python3 - "$SOCK_B" "$ready" "$done" \
		>"$rv_tmp/quota.out" 2>&1 <<PY &
import ctypes, errno, os, socket, struct, sys, time
sys.path.insert(0, "$RP_SRC_ROOT/test/service")
sys.dont_write_bytecode = True
from attach_client import *
path, ready, done = sys.argv[1:4]
EDQUOT = -errno.EDQUOT
PD_ALLOC, MR_REG, MR_DEREG, CQ_CREATE, CQ_DESTROY = 1, 3, 4, 5, 6

def cq(s):
    ret, u = ctrl(s, CQ_CREATE, struct.pack("<Ii", 16, -1))
    return ret, struct.unpack_from("<I", u, 8)[0]

def mr(s, pdn, addr, length):
    ret, u = ctrl(s, MR_REG, struct.pack("<IIQQQ", pdn, 1, addr, length, addr))
    return ret, struct.unpack_from("<I", u, 32)[0]

# The first process: CQs up to cqs = 5, then EDQUOT; one back, one more.
s1, ret = attach(path)
assert ret == 0, "attach: %d" % ret
cqs = []
for i in range(5):
    ret, n = cq(s1)
    assert ret == 0, "CQ %d: %d" % (i, ret)
    cqs.append(n)
ret, _ = cq(s1)
assert ret == EDQUOT, "the 6th CQ: %d, not EDQUOT" % ret
ret, _ = ctrl(s1, CQ_DESTROY, struct.pack("<IiI", 0, 0, cqs.pop()))
assert ret == 0, "CQ destroy: %d" % ret
ret, n = cq(s1)
assert ret == 0, "a CQ after one was destroyed: %d" % ret
ret, _ = cq(s1)
assert ret == EDQUOT, "the 6th CQ again: %d" % ret
print("process 1: 5 CQs, the 6th EDQUOT, again after a destroy")
# MRs: 64 pages at most (mr_pages), 3 MRs (mrs).
ret, u = ctrl(s1, PD_ALLOC)
assert ret == 0, ret
pdn = struct.unpack_from("<I", u)[0]
buf = ctypes.create_string_buffer(70 * 4096)
base = (ctypes.addressof(buf) + 4095) & ~4095
ret, _ = mr(s1, pdn, base, 65 * 4096)
assert ret == EDQUOT, "an MR of 65 pages: %d" % ret
ret, big = mr(s1, pdn, base, 64 * 4096)
assert ret == 0, "an MR of 64 pages: %d" % ret
ret, _ = mr(s1, pdn, base, 1)
assert ret == EDQUOT, "a 65th page: %d" % ret
ret, _ = ctrl(s1, MR_DEREG, struct.pack("<IIQQQI", 0, 0, 0, 0, 0, big))
assert ret == 0, "MR dereg: %d" % ret
for i in range(3):
    ret, _ = mr(s1, pdn, base + i * 4096, 4096)
    assert ret == 0, "MR %d: %d" % (i, ret)
ret, _ = mr(s1, pdn, base, 4096)
assert ret == EDQUOT, "a 4th MR: %d" % ret
print("process 1: an MR of 65 pages EDQUOT, of 64 pages taken, then 3 MRs, the 4th EDQUOT")
# A second process of the uid: uid_cqs = 8, 5 of them the first one's.
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    try:
        s2, ret = attach(path)
        assert ret == 0, "second process: attach %d" % ret
        for i in range(3):
            ret, _ = cq(s2)
            assert ret == 0, "second process, CQ %d: %d" % (i, ret)
        ret, _ = cq(s2)
        assert ret == EDQUOT, "second process, 4th CQ: %d" % ret
        # uid_processes = 3: a third process attaches, a fourth not
        s3, ret = attach(path)
        assert ret == 0, "third process: %d" % ret
        s4, ret = attach(path)
        assert ret == EDQUOT, "fourth process: %d, not EDQUOT" % ret
        os.write(w, b"ok")
    except BaseException as e:
        os.write(w, repr(e).encode())
    os._exit(0)
os.close(w)
res = os.read(r, 4096)
os.waitpid(pid, 0)
assert res == b"ok", res.decode()
print("process 2: 3 CQs, the 4th EDQUOT (uid_cqs); a 4th process of the uid EDQUOT")
open(ready, "w").close()
# Held at its limits while a pair runs beside it.
while not os.path.exists(done):
    time.sleep(0.1)
ret, _ = cq(s1)
assert ret == EDQUOT, "still at the limit: %d" % ret
PY
	qp=$!
	rv_pids+=("$qp")
	for ((i = 0; i < 600; i++)); do
		[ -e "$ready" ] && break
		kill -0 "$qp" 2>/dev/null || break
		sleep 0.1
	done
	[ -e "$ready" ] || { rv_show quota; rv_fail "the quota checks failed"; }
	sed "s/^/  quota: /" "$rv_tmp/quota.out"
	grep -E "client [0-9]+ \(pid [0-9]+, python3, uid 0\): rocepmd0: quota cqs reached \(5 of 5 held" \
		"$rv_tmp/hostB.err" | head -1 | grep . ||
		{ tail -20 "$rv_tmp/hostB.err"; rv_fail "host B did not log the process at its CQ quota"; }
	grep -qE "quota uid_cqs reached \(8 of 8 held by uid 0" "$rv_tmp/hostB.err" ||
		rv_fail "host B did not log the uid at its CQ quota"
	grep -qE "attach refused: quota uid_processes reached \(3 of 3\)" "$rv_tmp/hostB.err" ||
		rv_fail "host B did not log the refused 4th process"
	# Other programs work beside the process at its limits.
	sv_pair 18621 ibv_rc_pingpong -d rocepmd0 -g 0 -s 1024 -n 300 -c
	touch "$done"
	wait "$qp" || { rv_show quota; rv_fail "the process at its limits failed at the end"; }
	rv_forget "$qp"
	wait_detached B

	# Connections that never say HELLO, from another uid.
	r0=$(refused B)
	chmod 0711 "$rv_tmp"
	chmod 0666 "$SOCK_B"
	ip netns exec "$RP_NS_B" python3 - "$SOCK_B" \
		>"$rv_tmp/silent.out" 2>&1 <<'PY' &
import os, socket, sys, time
os.setgid(65534)
os.setuid(65534)
socks = []
for i in range(70):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    socks.append(s)
print("connected", flush=True)
# Every one closed by the host: at once, or once its time is over.
t0 = time.monotonic()
for s in socks:
    s.settimeout(30)
    assert s.recv(16) == b"", "a byte from the host"
print("closed after %.1f s" % (time.monotonic() - t0), flush=True)
PY
	sp=$!
	rv_pids+=("$sp")
	rv_wait_output silent connected "$sp"
	held=$(attached B)
	[ "$held" -le 4 ] || rv_fail "the host holds $held connections without a HELLO (uid_pending = 4)"
	# A legitimate program attaches meanwhile.
	sv_fg devinfo B -- ibv_devinfo -d rocepmd0
	[ "$rv_status" -eq 0 ] || { rv_show devinfo; rv_fail "ibv_devinfo refused beside the silent connections"; }
	wait "$sp" || { rv_show silent; rv_fail "the host kept connections without a HELLO"; }
	rv_forget "$sp"
	sed "s/^/  silent: /" "$rv_tmp/silent.out"
	wait_detached B
	r1=$(refused B)
	[ $((r1 - r0)) -ge 70 ] ||
		rv_fail "host B counted $((r1 - r0)) refused connections, not the 70 silent ones"
	grep -q "no HELLO within 1500 ms" "$rv_tmp/hostB.err" ||
		rv_fail "host B did not log the HELLO deadline"
	check_clean
	;;
*)
	rv_fail "unknown case '$case'"
	;;
esac
rv_log "PASS: $case"
