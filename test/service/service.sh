#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# service.sh APP CASE: verbs programs attached to a host (issue 12).  On each
# of the two test hosts (network namespaces, test/verbs/lib.sh) one
# rocepmd-testpmd --host owns the port and the engine; the programs run
# unmodified under `rocepmd-run --attach SOCKET`, load no DPDK and reach
# the engine through the socket and the device region only.
#
#   pingpong  ibv_rc_pingpong between the hosts, data checked (-c), and
#             ibv_devinfo on the server's host while the server runs; the
#             programs' start time against the host's own
#   parallel  two ib_write_bw pairs at once on the same two devices, and an
#             ibv_rc_pingpong pair beside them
#   kill-write, kill-read, kill-send
#             ib_write_bw, ib_read_bw, ib_send_bw whose client is killed
#             (SIGKILL) mid-transfer:
#             the host notices at once, destroys every object the process
#             had (telemetry /rocepmd/objects back to the count before),
#             the server fails with an error, not a hang; the host then
#             serves the next pair
#   cycles    N attach/detach cycles (ibv_devinfo, RV_CYCLES, default 300):
#             objects and region pages back to the count before, the host's
#             attached_total N higher
#   refuse    a peer that is not a client (garbage, a wrong version) is
#             dropped; a HELLO without its /proc/self/mem (or with another
#             file) gets EBADF, one whose memory is read-only or whose probe
#             differs EACCES, one of another ABI EPROTO; the host serves on
#   hostile   a process speaking the protocol itself beside a pair: it
#             cannot map the device region writable, gets EPERM for every
#             QP number not its own, and writes garbage over its whole
#             arena (producer indexes included) and rings the doorbell;
#             the pair passes, the host serves on, and its objects go
#   pick      the README's set-up: both hosts' sockets in one directory
#             (ROCEPMD_RUN_DIR), `rocepmd-run --attach` without a socket
#             in each namespace takes its own namespace's host; in a third
#             namespace, with no host, it says so and names the sockets
#
# The hosts' counts are read through DPDK telemetry (/rocepmd/objects,
# /rocepmd/clients), from the path the host prints.
app=${1:?usage: $0 APP CASE}
case=${2:?usage: $0 APP CASE}
# shellcheck source=../verbs/lib.sh
. "$RP_SRC_ROOT/test/verbs/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog ib_write_bw perftest
rv_need_prog nft nftables

rv_topology "sv${case//-/}"
# shellcheck source=host_lib.sh
. "$RP_SRC_ROOT/test/service/host_lib.sh"

host_start A
host_start B
host_baseline
rv_log "objects before: A $base_a"

case $case in
pingpong)
	t0=$(date +%s%N)
	sv_fg devinfo0 B -- ibv_devinfo -d rocepmd0
	t1=$(date +%s%N)
	[ "$rv_status" -eq 0 ] || { rv_show devinfo0; rv_fail "ibv_devinfo failed"; }
	grep -q "PORT_ACTIVE" "$rv_tmp/devinfo0.out" ||
		rv_fail "ibv_devinfo shows no active port"
	rv_log "attached ibv_devinfo: $(((t1 - t0) / 1000000)) ms from launch to exit"
	sv_bg server B -- ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 2000 -c -p 18600
	srv=$rv_last_pid
	rv_wait_listen "$RP_NS_B" 18600 "$srv" server
	# A second process on the server's device while the server runs.
	sv_fg devinfo B -- ibv_devinfo -d rocepmd0
	[ "$rv_status" -eq 0 ] || { rv_show devinfo; rv_fail "ibv_devinfo beside the server failed"; }
	[ "$(attached B)" -ge 1 ] || rv_fail "host B lists no attached process"
	sv_fg client A -- ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 2000 -c -p 18600 "$RV_IP_B"
	crc=$rv_status
	wait "$srv"
	src=$?
	rv_forget "$srv"
	rv_show client
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] ||
		{ rv_show server; rv_fail "ibv_rc_pingpong: client $crc, server $src"; }
	rv_check_pingpong client 4096 2000
	rv_check_pingpong server 4096 2000
	check_clean
	;;
parallel)
	sv_bg s1 B -- ib_write_bw -d rocepmd0 -x 0 -s 65536 -n 2000 -F -p 18601
	p1=$rv_last_pid
	sv_bg s2 B -- ib_write_bw -d rocepmd0 -x 0 -s 4096 -n 5000 -F -p 18602
	p2=$rv_last_pid
	rv_wait_listen "$RP_NS_B" 18601 "$p1" s1
	rv_wait_listen "$RP_NS_B" 18602 "$p2" s2
	sv_bg c1 A -- ib_write_bw -d rocepmd0 -x 0 -s 65536 -n 2000 -F -p 18601 "$RV_IP_B"
	c1=$rv_last_pid
	sv_bg c2 A -- ib_write_bw -d rocepmd0 -x 0 -s 4096 -n 5000 -F -p 18602 "$RV_IP_B"
	c2=$rv_last_pid
	sv_pair 18603 ibv_rc_pingpong -d rocepmd0 -g 0 -s 1024 -n 1000 -c
	for p in "$c1" "$c2" "$p1" "$p2"; do
		wait "$p" || { rv_show c1; rv_show c2; rv_show s1; rv_show s2;
			rv_fail "an ib_write_bw of the parallel pairs failed"; }
		rv_forget "$p"
	done
	for n in c1 c2; do
		grep -qE '^ *(65536|4096) +(2000|5000) ' "$rv_tmp/$n.out" ||
			{ rv_show "$n"; rv_fail "$n printed no result line"; }
	done
	check_clean
	;;
kill-write|kill-read|kill-send)
	prog=ib_${case#kill-}_bw
	# SEND: the receiving server has no request of its own to fail, it
	# stops when its duration is over; WRITE and READ servers wait for
	# their peer, which is gone.
	dur=30
	[ "$case" = kill-send ] && dur=8
	sv_bg server B -- "$prog" -d rocepmd0 -x 0 -s 65536 -D "$dur" -F -p 18604
	srv=$rv_last_pid
	rv_wait_listen "$RP_NS_B" 18604 "$srv" server
	sv_bg client A -- "$prog" -d rocepmd0 -x 0 -s 65536 -D "$dur" -F -p 18604 "$RV_IP_B"
	cli=$rv_last_pid
	# Mid-transfer: the client's QP and MR exist and traffic flows.
	for ((i = 0; i < 100; i++)); do
		q=$(tel A /rocepmd/objects,0 | python3 -c \
			'import json, sys; print(json.load(sys.stdin)["qps"])')
		[ "$q" -ge 1 ] && break
		sleep 0.1
	done
	sleep 1
	# READ: B sends the data, A the requests; either way both count.
	rx0=$(tel B /rocepmd/stats,0 | python3 -c \
		'import json, sys; s = json.load(sys.stdin); print(s["rx_packets"] + s["tx_packets"])')
	[ "$rx0" -gt 100 ] || rv_fail "no transfer under way (B moved $rx0 packets)"
	# SIGKILL the program itself, not the timeout around it.
	victim=$(sv_prog_pid "$cli")
	ps -o pid=,comm= -p "$victim" | grep -q "$prog" ||
		rv_fail "cannot find the attached $prog under PID $cli"
	kill -KILL "$victim"
	wait "$cli"
	rv_forget "$cli"
	wait_detached A
	[ "$(counts A)" = "$base_a" ] ||
		rv_fail "host A holds $(counts A) after the SIGKILL, not $base_a"
	grep -q "detached: destroying its" "$rv_tmp/hostA.err" ||
		rv_fail "host A did not log the clean-up"
	# The server's peer is gone: it must end with an error, not hang.
	wait "$srv"
	src=$?
	rv_forget "$srv"
	[ "$src" -ne 0 ] || [ "$case" = kill-send ] ||
		rv_fail "the server of a killed client exited 0"
	[ "$src" -ne 124 ] || rv_fail "the server of a killed client hung until the timeout"
	# The hosts serve the next pair as if nothing happened.
	sv_pair 18605 ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 500 -c
	check_clean
	;;
cycles)
	n=${RV_CYCLES:-300}
	before=$(tel B /rocepmd/clients | python3 -c \
		'import json, sys; print(json.load(sys.stdin)["attached_total"])')
	t0=$(date +%s%N)
	for ((i = 0; i < n; i++)); do
		sv_fg cyc B -- ibv_devinfo -d rocepmd0
		[ "$rv_status" -eq 0 ] || { rv_show cyc; rv_fail "cycle $i: ibv_devinfo failed"; }
	done
	t1=$(date +%s%N)
	after=$(tel B /rocepmd/clients | python3 -c \
		'import json, sys; print(json.load(sys.stdin)["attached_total"])')
	[ $((after - before)) -eq "$n" ] ||
		rv_fail "$((after - before)) attaches counted for $n cycles"
	rv_log "$n attach/detach cycles, $(((t1 - t0) / n / 1000000)) ms each"
	check_clean
	;;
refuse)
	abi=$(sed -n 's/^#define RP_ABI_VERSION[[:space:]]*\([0-9]*\)u.*/\1/p' \
		"$RP_SRC_ROOT/pmd/include/rp_abi.h")
	aver=$(sed -n 's/^#define RP_ATTACH_VERSION[[:space:]]*\([0-9]*\)u.*/\1/p' \
		"$RP_SRC_ROOT/pmd/include/rp_attach.h")
	python3 - "$SOCK_B" "$abi" "$aver" <<'PY' || rv_fail "the host took a bad peer"
import array, ctypes, os, socket, struct, sys
M, abi, ver = 0x68637461, int(sys.argv[2]), int(sys.argv[3])
def talk(msg, fd=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    anc = [] if fd is None else \
        [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))]
    s.sendmsg([msg], anc)
    s.settimeout(5)
    return s.recv(512)
def result(r):
    assert len(r) == 96, "a WELCOME of %d bytes" % len(r)
    return struct.unpack_from("<i", r, 8)[0]
# garbage, then a HELLO of another protocol version: both closed unanswered
for msg in (b"\xff" * 40, struct.pack("<IHHiIIIQQ", M, ver + 7, 1, 0, 0, abi, 0, 0, 0)):
    assert talk(msg) == b"", "a reply to a bad message"
probe = ctypes.c_uint64(42)
hello = lambda v: struct.pack("<IHHiIIIQQ", M, ver, 1, 0, 0, abi, 0,
                              ctypes.addressof(probe), v)
mem = os.open("/proc/self/mem", os.O_RDWR)
# well-formed, but the memory it names is not what it says: EACCES
assert result(talk(hello(43), mem)) == -13, "wrong probe"
# no descriptor of its memory, or one that is not /proc/PID/mem: EBADF
assert result(talk(hello(42))) == -9, "no memory descriptor"
null = os.open("/dev/null", os.O_RDWR)
assert result(talk(hello(42), null)) == -9, "/dev/null as memory"
# its memory, but read-only: EACCES
ro = os.open("/proc/self/mem", os.O_RDONLY)
assert result(talk(hello(42), ro)) == -13, "read-only memory"
# and another ABI version: refused with EPROTO
r = talk(struct.pack("<IHHiIIIQQ", M, ver, 1, 0, 0, abi + 100, 0, ctypes.addressof(probe), 42), mem)
assert result(r) == -71, "abi: %r" % r[:16]
print("refused: garbage, protocol version, memory probe (EACCES), no or "
      "another descriptor (EBADF), read-only memory (EACCES), ABI (EPROTO)")
PY
	sv_pair 18606 ibv_rc_pingpong -d rocepmd0 -g 0 -s 64 -n 200 -c
	check_clean
	;;
hostile)
	# A pair that must not notice anything.
	sv_bg server B -- ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 3000 -c -p 18607
	srv=$rv_last_pid
	rv_wait_listen "$RP_NS_B" 18607 "$srv" server
	sv_bg client A -- ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 3000 -c -p 18607 "$RV_IP_B"
	cli=$rv_last_pid
	# A process on the same host speaking the protocol itself (the
	# versions from the headers it is built against).
	abi=$(sed -n 's/^#define RP_ABI_VERSION[[:space:]]*\([0-9]*\)u.*/\1/p' \
		"$RP_SRC_ROOT/pmd/include/rp_abi.h")
	aver=$(sed -n 's/^#define RP_ATTACH_VERSION[[:space:]]*\([0-9]*\)u.*/\1/p' \
		"$RP_SRC_ROOT/pmd/include/rp_attach.h")
	[ -n "$abi" ] && [ -n "$aver" ] || rv_fail "no ABI or attach version in the headers"
	ip netns exec "$RP_NS_A" env RP_ABI="$abi" RP_AVER="$aver" \
		python3 - "$SOCK_A" >"$rv_tmp/hostile.out" 2>&1 <<'PY' ||
import array, ctypes, errno, mmap, os, socket, struct, sys, time

MAGIC, VER = 0x68637461, int(os.environ["RP_AVER"])
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
abi = int(os.environ["RP_ABI"])
# The probe the host reads back from this process's memory.
probe = ctypes.c_uint64(0x1122334455667788)
mem = os.open("/proc/self/mem", os.O_RDWR)
s.sendmsg([struct.pack("<IHHiIIIQQ", MAGIC, VER, 1, 0, 0, abi, 0,
                       ctypes.addressof(probe), probe.value)],
          [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [mem]))])
os.close(mem)
msg, anc, _, _ = s.recvmsg(256, socket.CMSG_SPACE(4 * 12))
fds = array.array("i")
for _, _, data in anc:
    fds.frombytes(data[:len(data) - len(data) % 4])
assert len(msg) == 96, "WELCOME of %d bytes" % len(msg)
nr = struct.unpack_from("<I", msg, 20)[0]
rsize = struct.unpack_from("<Q", msg, 32)[0]
asize = struct.unpack_from("<Q", msg, 64)[0]
region, arena_fd = fds[0], fds[nr]
# 1. The device region cannot be mapped writable.
try:
    mmap.mmap(region, rsize, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    sys.exit("the device region mapped writable")
except PermissionError:
    print("device region: read-only (EPERM on a writable mapping)")
arena = mmap.mmap(arena_fd, asize, mmap.MAP_SHARED,
                  mmap.PROT_READ | mmap.PROT_WRITE)

def ctrl(op, body=b""):
    u = body.ljust(176, b"\0")
    s.send(struct.pack("<IHHiIII", MAGIC, VER, 3, 0, 0, 0, 0) +
           struct.pack("<IIiI", 0, op, 0, 0) + u)
    r = s.recv(512)
    assert len(r) == 216, "reply of %d bytes" % len(r)
    return struct.unpack_from("<i", r, 8)[0], r[40:]

# 2. Its own objects, in its own arena.
ret, u = ctrl(1)                                  # PD_ALLOC
assert ret == 0, ret
pdn = struct.unpack_from("<I", u)[0]
ret, u = ctrl(5, struct.pack("<IiII", 64, -1, 0, 0))   # CQ_CREATE
assert ret == 0, ret
cqn = struct.unpack_from("<I", u, 8)[0]
ret, u = ctrl(7, struct.pack("<IIIIiI5I", pdn, 2, cqn, cqn, -1, 0,
                             16, 16, 1, 1, 0))     # QP_CREATE, RC
assert ret == 0, ret
qpn, sq_size, sq_stride = struct.unpack_from("<III", u, 44)
sq_off, rq_off = struct.unpack_from("<QQ", u, 72)
assert 0 < sq_off < asize and 0 < rq_off < asize, (sq_off, rq_off)
print("own QP 0x%x, its SQ at %d of its arena" % (qpn, sq_off))
# 3. Every QP number but its own: EPERM, never a reply about it.
perm = 0
for n in range(1, 0x800):    # the pair's QPs among them
    if n == qpn:
        continue
    ret, _ = ctrl(9, struct.pack("<II", n, 0))    # QP_QUERY
    assert ret == -errno.EPERM, "QP 0x%x: %d, not EPERM" % (n, ret)
    perm += 1
print("%d QP numbers not its own: EPERM" % perm)
# 3a. The engine's own ops (OBJECTS, ARENA_CREATE/DESTROY, QP_CC: the
# host's and telemetry's): refused to a client, its own QP's rate too.
for op in (27, 28, 29, 32):
    ret, _ = ctrl(op, struct.pack("<II", qpn, 0))
    assert ret == -errno.EINVAL, "engine-only op %d: %d, not EINVAL" % (op, ret)
print("engine-only ops (objects, arenas, a QP's rate): EINVAL")
# 3b. The RDMA CM's requests: a port or a will only through its own GSI
# agent (one per process), and a will only as a CM DREQ to a unicast GID.
GSI_BIND, GSI_WILL = 30, 31
ret, _ = ctrl(GSI_BIND, struct.pack("<IIQ", qpn, 1, 0x1060000 + 7471))
assert ret == -errno.EPERM, "GSI_BIND through an RC QP: %d" % ret
gsi_body = struct.pack("<IIIIiI5I5II", pdn, 4, cqn, cqn, -1, 0,
                       16, 16, 1, 1, 256, 0, 0, 0, 0, 0, 1)
ret, u = ctrl(7, gsi_body)                        # QP_CREATE, UD, GSI
assert ret == 0, "GSI agent: %d" % ret
gsi, prefix = struct.unpack_from("<I", u, 44)[0], struct.unpack_from("<I", u, 68)[0]
assert prefix != 0 and prefix & 0x00ffffff == 0, "comm prefix 0x%x" % prefix
ret, _ = ctrl(7, gsi_body)
assert ret == -errno.EBUSY, "a second GSI agent: %d" % ret
ret, _ = ctrl(GSI_BIND, struct.pack("<IIQ", gsi, 1, 0x1060000 + 7471))
assert ret == 0, "GSI_BIND: %d" % ret
def will(mad, dgid):
    av = dgid + struct.pack("<IBBBBBBH", 0, 0, 64, 0, 0, 1, 1, 0)
    return ctrl(GSI_WILL, struct.pack("<IIII", gsi, 0x1234, len(mad), 0) +
                av + mad.ljust(64, b"\0"))[0]
v4 = bytes(10) + b"\xff\xff" + bytes([192, 0, 2, 2])
# a DREQ whose Local Communication ID is the agent's (its prefix)
dreq = (bytes([1, 7, 2, 3]) + bytes(12) + b"\x00\x15" + bytes(6) +
        struct.pack(">I", prefix | 0x1234) + bytes(8) + bytes(12))
assert will(dreq[:1] + b"\x04" + dreq[2:], v4) == -errno.EINVAL, "a will not CM"
assert will(dreq[:16] + b"\x00\x10" + dreq[18:], v4) == -errno.EINVAL, "a will not a DREQ"
assert will(dreq, bytes(10) + b"\xff\xff" + bytes([224, 0, 0, 1])) == -errno.EINVAL, "a will to a group"
other = dreq[:24] + struct.pack(">I", (prefix ^ 0x7f000000) | 0x1234) + dreq[28:]
assert will(other, v4) == -errno.EPERM, "a will for another agent's connection"
assert will(dreq, v4) == 0, "a DREQ will refused"
print("GSI agent 0x%x (prefix 0x%08x): a second one EBUSY, a port through "
      "an RC QP EPERM, wills other than a unicast CM DREQ EINVAL, a will "
      "for another agent's connection EPERM" % (gsi, prefix))
# 4. Garbage over its whole arena, producer indexes included, and the
# doorbell rung: its own QP only.
arena.seek(0)
arena.write(os.urandom(asize))
struct.pack_into("<I", arena, sq_off, 0xfffffff0)
struct.pack_into("<I", arena, rq_off, 0x7fffffff)
wake = fds[2 * nr] if len(fds) > 2 * nr else -1
for _ in range(100):
    if wake >= 0:
        os.write(wake, struct.pack("<Q", 1))
time.sleep(0.5)
ret, u = ctrl(9, struct.pack("<II", qpn, 0))
assert ret == 0, "own QP query after the garbage: %d" % ret
print("host alive after the garbage; own QP in state %d" %
      struct.unpack_from("<I", u, 12)[0])
PY
		{ rv_show hostile; rv_fail "the hostile process's checks failed"; }
	sed "s/^/  hostile: /" "$rv_tmp/hostile.out"
	wait "$cli"
	crc=$?
	rv_forget "$cli"
	wait "$srv"
	src=$?
	rv_forget "$srv"
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] ||
		{ rv_show client; rv_show server; rv_fail "the pair beside the hostile process failed: client $crc, server $src"; }
	rv_check_pingpong client 4096 3000
	check_clean
	;;
pick)
	export ROCEPMD_RUN_DIR=$rv_tmp
	for h in A B; do
		if [ "$h" = A ]; then
			ns=$RP_NS_A sock=$SOCK_A ip4=$RV_IP_A other=B
		else
			ns=$RP_NS_B sock=$SOCK_B ip4=$RV_IP_B other=A
		fi
		ip netns exec "$ns" "$RP_RUN" --attach --check \
			>"$rv_tmp/pick$h.out" 2>"$rv_tmp/pick$h.err" ||
			{ rv_show "pick$h"; rv_fail "rocepmd-run --attach --check in namespace $h failed"; }
		grep -q "^$sock: ok:" "$rv_tmp/pick$h.out" &&
			grep -q "ipv4 $ip4/" "$rv_tmp/pick$h.out" ||
			{ rv_show "pick$h"; rv_fail "namespace $h: not its host's socket $sock"; }
		# which host serves it: its log says "attached: pid N (ibv_devices)"
		mine=$(grep -c "attached: pid [0-9]* (ibv_devices)" "$rv_tmp/host$h.err")
		theirs=$(grep -c "attached: pid [0-9]* (ibv_devices)" "$rv_tmp/host$other.err")
		ip netns exec "$ns" timeout -k 10 60 "$RP_RUN" --attach -- \
			ibv_devices >"$rv_tmp/devices$h.out" 2>"$rv_tmp/devices$h.err" ||
			{ rv_show "devices$h"; rv_fail "rocepmd-run --attach ibv_devices in namespace $h failed"; }
		grep -q rocepmd0 "$rv_tmp/devices$h.out" ||
			rv_fail "namespace $h: ibv_devices lists no rocepmd0"
		[ "$(grep -c "attached: pid [0-9]* (ibv_devices)" "$rv_tmp/host$h.err")" -eq $((mine + 1)) ] ||
			{ rv_show "host$h"; rv_fail "host $h did not serve ibv_devices of its namespace"; }
		[ "$(grep -c "attached: pid [0-9]* (ibv_devices)" "$rv_tmp/host$other.err")" -eq "$theirs" ] ||
			rv_fail "host $other served ibv_devices of namespace $h"
		rv_log "namespace $h: rocepmd-run --attach took $sock"
	done
	# A namespace with no host: said, with the sockets seen.
	rv_ns1=rv-svpick-c
	ip netns add "$rv_ns1" || rv_fail "cannot create namespace $rv_ns1"
	ip netns exec "$rv_ns1" "$RP_RUN" --attach -- ibv_devices \
		>"$rv_tmp/none.out" 2>"$rv_tmp/none.err"
	rc=$?
	rv_show none
	[ "$rc" -eq 1 ] || rv_fail "--attach with no host in the namespace: status $rc, expected 1"
	grep -q "no host of this network namespace serves a socket in $rv_tmp (.*a.sock" "$rv_tmp/none.err" &&
		grep -q "b.sock" "$rv_tmp/none.err" ||
		rv_fail "--attach with no host in the namespace does not say so"
	[ ! -s "$rv_tmp/none.out" ] || rv_fail "ibv_devices ran without a host"
	;;
*)
	rv_fail "unknown case '$case'"
	;;
esac
rv_log "PASS: $case"
