#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# fds.sh APP CASE: no descriptor a client holds can block the host (issue
# 24, items 2 and 3).  Two test hosts as in service.sh; the hostile clients
# speak the attach protocol themselves (python, the versions from the
# headers).
#
#   hostile-fd  beside an ibv_rc_pingpong pair, a client sends what blocked
#               the engine lcore when it wrote completion channels and
#               async registrations the client made: a blocking eventfd
#               filled to 0xfffffffffffffffe and a pipe, with CHAN_CREATE,
#               ASYNC_REG and PD_ALLOC: each refused (EBADF), every copy
#               closed (the pipe loses its last writer).  It then takes
#               the sockets the host makes instead: writes into them fail
#               (EPIPE), one channel it never reads, one it closes, one
#               registration it never reads (another, unregistered by its
#               id, ends in EOF); 300 events on each channel from a QP in
#               error whose receives it posts one by one (CQs armed each
#               time): more than a socket holds, so the host's end fills.
#               The pair passes, and host A, the client still attached,
#               stops on SIGTERM (its time logged; 10 s at most)
#   wake-steal  a client on each host clears O_NONBLOCK on the wake-up fd
#               its WELCOME gave and reads it in a thread for ever, while
#               an ibv_rc_pingpong pair runs, with idle = adaptive (events,
#               -e), then with inline passes (inline_us = 100, polling):
#               both pass, each engine blocked in each mode (idle_us = 0),
#               and over both modes each was woken by the attached
#               programs' own doorbells (telemetry /rocepmd/lcores:
#               sleeps, wakeups_client)
app=${1:?usage: $0 APP CASE}
case=${2:?usage: $0 APP CASE}
# shellcheck source=../verbs/lib.sh
. "$RP_SRC_ROOT/test/verbs/lib.sh"

rv_need_env
rv_need_root
rv_need_prog ibv_rc_pingpong ibverbs-utils
rv_need_prog nft nftables

# wake-steal: engines that block, first without inline passes.
if [ "$case" = wake-steal ]; then
	export RV_IDLE=adaptive RV_INLINE_US=0
fi
rv_topology "fd${case//-/}"
# wake-steal: no spin before the block (idle_us = 0).  With the configs'
# 50 µs the lcore's learnt spin caught most of a ping-pong's posts, and
# only 0-368 of 1000 messages found it blocked: 2 runs of 8 had a host
# whose engine no doorbell woke at all.  Blocking at once, every post
# that comes after the engine's last look rings.
if [ "$case" = wake-steal ]; then
	sed -i "s/^idle_us = .*/idle_us = 0/" "$RV_CFG_A" "$RV_CFG_B"
	grep -q "^idle_us = 0" "$RV_CFG_A" ||
		rv_fail "$RV_CFG_A has no idle_us key to set to 0"
fi
# shellcheck source=host_lib.sh
. "$RP_SRC_ROOT/test/service/host_lib.sh"

# The protocol versions the clients below speak (attach_client.py).
host_proto_env


# lc_count A|B NAME: an engine lcore counter, summed over the host's lcores.
lc_count() {
	tel "$1" /rocepmd/lcores | python3 -c "import json, sys
d = json.load(sys.stdin)
print(sum(v.get('$2', 0) for k, v in d.items() if k.startswith('lcore')))"
}

host_start A
host_start B
host_baseline

case $case in
hostile-fd)
	sv_bg server B -- ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 3000 -c -p 18620
	srv=$rv_last_pid
	rv_wait_listen "$RP_NS_B" 18620 "$srv" server
	sv_bg client A -- ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 3000 -c -p 18620 "$RV_IP_B"
	cli=$rv_last_pid
	# Stays attached, holding what it got, until the test ends it.
	ip netns exec "$RP_NS_A" env PYTHONPATH="$RP_SRC_ROOT/test/service" PYTHONDONTWRITEBYTECODE=1 \
		python3 - "$SOCK_A" >"$rv_tmp/hostile.out" 2>&1 <<'PY' &
import errno, fcntl, os, stat, struct, sys, termios, time
from attach_client import Client, hold_sigterm, until_sigterm
hold_sigterm()

PD_ALLOC, CQ_CREATE, QP_CREATE, QP_MODIFY, QP_QUERY = 1, 5, 7, 8, 9
CHAN_CREATE, ASYNC_REG, ASYNC_UNREG = 13, 15, 16
c = Client(sys.argv[1])

# 1. What the lcore used to write: a blocking eventfd whose next write
# blocks, and a pipe (a full one, or a FUSE file, block the same way).
full = os.eventfd(0)
os.eventfd_write(full, 0xfffffffffffffffe)
rd, wr = os.pipe()
for what, fd in (("a full blocking eventfd", full), ("a pipe", wr)):
    for op, name in ((CHAN_CREATE, "CHAN_CREATE"), (ASYNC_REG, "ASYNC_REG"),
                     (PD_ALLOC, "PD_ALLOC")):
        ret, _, got = c.ctrl(op, b"", fd)
        assert ret == -errno.EBADF and not got, \
            "%s with %s: %d, %d descriptors back (the engine would signal " \
            "it from its lcore)" % (name, what, ret, len(got))
# Every copy the host received is closed: the pipe has no writer left.
os.close(wr)
os.set_blocking(rd, False)
for _ in range(100):
    try:
        assert os.read(rd, 1) == b""
        break
    except BlockingIOError:
        time.sleep(0.05)
else:
    sys.exit("the host keeps a copy of the pipe's write end")
print("descriptors in requests: refused (EBADF) and closed")

# 2. The host's sockets instead: one descriptor per reply, writes refused.
def chan():
    ret, u, got = c.ctrl(CHAN_CREATE)
    assert ret == 0 and len(got) == 1, "CHAN_CREATE: %d, %d fds" % (ret, len(got))
    assert stat.S_ISSOCK(os.fstat(got[0]).st_mode), "a channel not a socket"
    return struct.unpack_from("<I", u, 4)[0], struct.unpack_from("<Q", u, 8)[0], got[0]
def refuses_writes(fd):
    try:
        os.write(fd, b"\xff" * 65536)
    except BrokenPipeError:
        return True
    return False
chn1, chan1_off, fd1 = chan()      # never read
chn2, chan2_off, fd2 = chan()      # closed at once
assert refuses_writes(fd1) and refuses_writes(fd2), "the host's end takes data"
os.close(fd2)
ret, u, got = c.ctrl(ASYNC_REG)
assert ret == 0 and len(got) == 1, "ASYNC_REG: %d, %d fds" % (ret, len(got))
areg, afd = struct.unpack_from("<I", u, 8)[0], got[0]   # never read
assert refuses_writes(afd), "the host's async end takes data"
ret, u, got = c.ctrl(ASYNC_REG)
assert ret == 0 and len(got) == 1
areg2, afd2 = struct.unpack_from("<I", u, 8)[0], got[0]
assert areg2 != areg, "two registrations named %u" % areg
ret, _, _ = c.ctrl(ASYNC_UNREG, struct.pack("<iIII", -1, 0, areg2 + 1000, 0))
assert ret == -errno.EPERM, "ASYNC_UNREG of another id: %d" % ret
ret, _, _ = c.ctrl(ASYNC_UNREG, struct.pack("<iIII", -1, 0, areg2, 0))
assert ret == 0, "ASYNC_UNREG by its id: %d" % ret
os.set_blocking(afd2, False)
assert os.read(afd2, 8) == b"", "the host kept its end of an unregistered pair"
print("channels %u, %u and async registration %u: sockets the host made, "
      "writes refused (EPIPE); unregistered by id, its end closed" %
      (chn1, chn2, areg))

# 3. Events on both channels: a QP in error per channel, its receives
# flushed one at a time, the CQ armed before each.
ret, u, _ = c.ctrl(PD_ALLOC)
assert ret == 0, ret
pdn = struct.unpack_from("<I", u)[0]
class Q:
    pass
def qp(chn):
    q = Q()
    ret, u, _ = c.ctrl(CQ_CREATE, struct.pack("<IiII", 64, chn, 0, 0))
    assert ret == 0, "CQ_CREATE on channel %u: %d" % (chn, ret)
    cqn, q.cq_off = struct.unpack_from("<I", u, 8)[0], struct.unpack_from("<Q", u, 16)[0]
    ret, u, _ = c.ctrl(QP_CREATE, struct.pack("<IIIIiI5I", pdn, 2, cqn, cqn,
                       -1, 0, 16, 16, 1, 1, 0))
    assert ret == 0, "QP_CREATE: %d" % ret
    q.qpn = struct.unpack_from("<I", u, 44)[0]
    q.rq_size, q.rq_stride = struct.unpack_from("<II", u, 56)
    q.rq_off, q.bell_off, q.bell_bit = struct.unpack_from("<QQQ", u, 80)
    q.prod = 0
    ret, _, _ = c.ctrl(QP_MODIFY, struct.pack("<IIIIIIIIIIIHB", q.qpn, 0,
                       1 | 8 | 16 | 32, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1))
    assert ret == 0, "QP to INIT: %d" % ret
    ret, _, _ = c.ctrl(QP_MODIFY, struct.pack("<IIII", q.qpn, 0, 1, 6))
    assert ret == 0, "QP to ERR: %d" % ret
    return q
a = c.arena
def arm(q):
    v = struct.unpack_from("<I", a, q.cq_off + 128)[0]
    struct.pack_into("<I", a, q.cq_off + 128, (((v & ~3) + 4) | 1) & 0xffffffff)
def post_recv(q):
    slot = q.rq_off + 128 + (q.prod % q.rq_size) * q.rq_stride
    struct.pack_into("<QII", a, slot, q.prod, 0, 0)
    q.prod += 1
    struct.pack_into("<I", a, q.rq_off, q.prod & 0xffffffff)
    w = struct.unpack_from("<Q", a, q.bell_off)[0]
    struct.pack_into("<Q", a, q.bell_off, w | q.bell_bit)   # a mask
qs = [(qp(chn1), chan1_off), (qp(chn2), chan2_off)]
EVENTS = 300
for i in range(EVENTS):
    for q, _ in qs:
        arm(q)
        post_recv(q)
    if c.wake >= 0:
        os.eventfd_write(c.wake, 1)
    # The engine fired: it claimed the arm; the CQ is consumed.
    for q, _ in qs:
        for _ in range(1000):
            if struct.unpack_from("<I", a, q.cq_off + 128)[0] & 3 == 0:
                break
            time.sleep(0.005)
        else:
            sys.exit("event %d of QP 0x%x never fired (CQ prod %u, arm "
                     "0x%x; RQ prod %u cons %u)" % (i, q.qpn,
                     *struct.unpack_from("<I", a, q.cq_off),
                     *struct.unpack_from("<I", a, q.cq_off + 128),
                     *struct.unpack_from("<I", a, q.rq_off),
                     *struct.unpack_from("<I", a, q.rq_off + 64)))
        struct.pack_into("<I", a, q.cq_off + 64,
                         struct.unpack_from("<I", a, q.cq_off)[0])
for q, off in qs:
    prod = struct.unpack_from("<I", a, off)[0]
    assert prod == EVENTS, "channel ring holds %d events, not %d" % (prod, EVENTS)
queued = struct.unpack("<i", fcntl.ioctl(fd1, termios.FIONREAD, b"\0" * 4))[0]
print("%d events on each channel; the unread socket holds %d bytes (%d "
      "events' worth: the rest stayed in the ring)" % (EVENTS, queued,
                                                         queued // 8))
ret, _, _ = c.ctrl(QP_QUERY, struct.pack("<II", qs[0][0].qpn, 0))
assert ret == 0, "host gone: %d" % ret
print("READY: host alive, holding everything", flush=True)
until_sigterm()
PY
	hpid=$!
	rv_pids+=("$hpid")
	rv_wait_output hostile "READY" "$hpid"
	sed "s/^/  hostile: /" "$rv_tmp/hostile.out"
	wait "$cli"
	crc=$?
	rv_forget "$cli"
	wait "$srv"
	src=$?
	rv_forget "$srv"
	[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] ||
		{ rv_show client; rv_show server; rv_fail "the pair beside the hostile client failed: client $crc, server $src"; }
	rv_check_pingpong client 4096 3000
	kill -0 "$hpid" 2>/dev/null || { rv_show hostile; rv_fail "the hostile client ended early"; }
	# Its lcore blocks on none of the client's descriptors: host A
	# stops, the client still attached (in well under a second on an
	# idle machine; the bound is for a loaded one: a blocked lcore never
	# stops).
	t0=$(date +%s%N)
	kill -TERM "$HOST_A"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$HOST_A" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$HOST_A" 2>/dev/null &&
		{ rv_show hostA; rv_fail "host A still runs 10 s after SIGTERM"; }
	wait "$HOST_A"
	rv_forget "$HOST_A"
	rv_log "host A stopped $((($(date +%s%N) - t0) / 1000000)) ms after SIGTERM"
	kill -TERM "$hpid"
	wait "$hpid"
	rv_forget "$hpid"
	;;
wake-steal)
	declare -A sleeps0 woke0 woke_all=([A]=0 [B]=0)
	for mode in adaptive inline; do
		if [ "$mode" = inline ]; then
			# Again with inline passes: new hosts.
			kill -TERM "$HOST_A" "$HOST_B"
			wait "$HOST_A" "$HOST_B"
			rv_forget "$HOST_A"
			rv_forget "$HOST_B"
			sed -i "s/^inline_us = .*/inline_us = 100/" "$RV_CFG_A" "$RV_CFG_B"
			grep -q "^inline_us = 100" "$RV_CFG_A" ||
				rv_fail "no inline_us key in $RV_CFG_A"
			# host_start waits for the new hosts' words, not the old.
			for h in A B; do
				mv "$rv_tmp/host$h.out" "$rv_tmp/host$h-adaptive.out"
				mv "$rv_tmp/host$h.err" "$rv_tmp/host$h-adaptive.err"
			done
			host_start A
			host_start B
		fi
		thieves=()
		for h in A B; do
			sock=$SOCK_A ns=$RP_NS_A
			[ "$h" = B ] && sock=$SOCK_B ns=$RP_NS_B
			ip netns exec "$ns" env PYTHONPATH="$RP_SRC_ROOT/test/service" PYTHONDONTWRITEBYTECODE=1 \
				python3 - "$sock" >"$rv_tmp/thief$h.out" 2>&1 <<'PY' &
import fcntl, os, struct, sys, threading
from attach_client import Client, hold_sigterm, until_sigterm
hold_sigterm()

c = Client(sys.argv[1])
assert c.wake >= 0, "no wake-up fd in the WELCOME"
# Blocking, on whatever file description the host handed over.
fcntl.fcntl(c.wake, fcntl.F_SETFL,
            fcntl.fcntl(c.wake, fcntl.F_GETFL) & ~os.O_NONBLOCK)
stolen = [0]
def steal():
    while True:
        stolen[0] += struct.unpack("<Q", os.read(c.wake, 8))[0]
threading.Thread(target=steal, daemon=True).start()
print("STEALING", flush=True)
until_sigterm()
print("stole %d wake-ups" % stolen[0], flush=True)
PY
			thieves+=("$!")
			rv_pids+=("$!")
			rv_wait_output "thief$h" "STEALING" "$!"
		done
		for h in A B; do
			sleeps0[$h]=$(lc_count "$h" sleeps)
			woke0[$h]=$(lc_count "$h" wakeups_client)
		done
		# A stalled engine fails the pair well before the test's
		# timeout.  Polling, the programs ring their doorbells while
		# the engine blocks, and its wake-ups are there to steal;
		# on events (-e), their channels are the host's sockets.
		RV_TIMEOUT=90 sv_pair 18621 ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 1000 -c
		rv_check_pingpong client 4096 1000
		if [ "$mode" = adaptive ]; then
			RV_TIMEOUT=90 sv_pair 18622 ibv_rc_pingpong -d rocepmd0 -g 0 -s 4096 -n 1000 -c -e
			rv_check_pingpong client 4096 1000
		fi
		for h in A B; do
			s0=${sleeps0[$h]} w0=${woke0[$h]}
			s1=$(lc_count "$h" sleeps)
			w1=$(lc_count "$h" wakeups_client)
			rv_log "$mode: host $h engine: $((s1 - s0)) sleeps, $((w1 - w0)) woken by attached programs' doorbells"
			[ "$s1" -gt "$s0" ] || rv_fail "$mode: host $h's engine never blocked"
			woke_all[$h]=$((woke_all[$h] + w1 - w0))
		done
		for p in "${thieves[@]}"; do
			kill -TERM "$p"
			wait "$p"
			rv_forget "$p"
		done
		sed "s/^/  $mode: thief A: /" "$rv_tmp/thiefA.out"
		sed "s/^/  $mode: thief B: /" "$rv_tmp/thiefB.out"
		check_clean
	done
	# Whether a post finds the engine blocked is a race with its last
	# look (rp_doorbell.h), so a mode's count alone may be 0 (3 to 1,213
	# in 32 counts, idle_us = 0); over both modes, each host's engine was
	# woken by its programs' doorbells (39 to 2,087 in 16 sums).
	for h in A B; do
		[ "${woke_all[$h]}" -gt 0 ] ||
			rv_fail "no attached program's doorbell woke host $h's engine"
	done
	;;
*)
	rv_fail "unknown case '$case'"
	;;
esac
rv_log "PASS: $case"
