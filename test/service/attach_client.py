# SPDX-License-Identifier: BSD-3-Clause
"""A raw client of the attach protocol (pmd/include/rp_attach.h), for the
test programs of test/service/*.sh that speak it themselves: HELLO with
this process's /proc/self/mem, the WELCOME and its descriptors, control
requests with or without a descriptor.  RP_AVER and RP_ABI in the
environment are the versions to speak (host_lib.sh: host_proto_env)."""

import array, ctypes, mmap, os, signal, socket, struct

MAGIC = 0x68637461
VER, ABI = int(os.environ["RP_AVER"]), int(os.environ["RP_ABI"])
HELLO, WELCOME, CTRL = 1, 2, 3
probe = ctypes.c_uint64(0x1122334455667788)


def fds_of(anc):
    """Every descriptor of a message's SCM_RIGHTS."""
    fds = array.array("i")
    for lvl, typ, data in anc:
        if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - len(data) % 4])
    return list(fds)


def rights(fd):
    return [] if fd is None else \
        [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))]


def hello_msg():
    return struct.pack("<IHHiIIIQQ", MAGIC, VER, HELLO, 0, 0, ABI, 0,
                       ctypes.addressof(probe), probe.value)


def ctrl_msg(op, body=b"", dev=0):
    return (struct.pack("<IHHiIII", MAGIC, VER, CTRL, 0, 0, dev, 0) +
            struct.pack("<IIiI", 0, op, 0, 0) + body.ljust(176, b"\0"))


def hello(path, timeout=20):
    """Connect and say HELLO: (socket, WELCOME, its descriptors)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    mem = os.open("/proc/self/mem", os.O_RDWR)
    s.sendmsg([hello_msg()], rights(mem))
    os.close(mem)
    s.settimeout(timeout)
    msg, anc, _, _ = s.recvmsg(256, socket.CMSG_SPACE(4 * 32))
    assert len(msg) == 96, "WELCOME of %d bytes" % len(msg)
    return s, msg, fds_of(anc)


def attach(path):
    """Connect and say HELLO: (socket, WELCOME's result)."""
    s, msg, fds = hello(path)
    for fd in fds:
        os.close(fd)
    return s, struct.unpack_from("<i", msg, 8)[0]


def ctrl_fds(s, op, body=b"", fd=None):
    """(result, reply's slot.u, descriptors the reply carried)"""
    s.sendmsg([ctrl_msg(op, body)], rights(fd))
    r, ranc, _, _ = s.recvmsg(512, socket.CMSG_SPACE(4 * 4))
    assert len(r) == 216, "reply of %d bytes" % len(r)
    return struct.unpack_from("<i", r, 8)[0], r[40:], fds_of(ranc)


def ctrl(s, op, body=b"", fd=None):
    """(result, reply's slot.u); descriptors in the reply are closed."""
    ret, u, fds = ctrl_fds(s, op, body, fd)
    for f in fds:
        os.close(f)
    return ret, u


class Client:
    """An attached process of one device: its arena mapped, its wake-up
    eventfd (or -1)."""

    def __init__(self, path):
        self.s, msg, fds = hello(path)
        self.s.settimeout(None)
        ret = struct.unpack_from("<i", msg, 8)[0]
        assert ret == 0, "attach refused: %d" % ret
        nr = struct.unpack_from("<I", msg, 20)[0]
        wake_mask = struct.unpack_from("<I", msg, 28)[0]
        asize = struct.unpack_from("<Q", msg, 64)[0]
        self.arena = mmap.mmap(fds[nr], asize, mmap.MAP_SHARED,
                               mmap.PROT_READ | mmap.PROT_WRITE)
        self.wake = fds[2 * nr] if wake_mask & 1 else -1

    def ctrl(self, op, body=b"", fd=None):
        return ctrl_fds(self.s, op, body, fd)


def hold_sigterm():
    """Block SIGTERM from now on (threads started later inherit it), for
    until_sigterm()."""
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])


def until_sigterm():
    """Hold on to everything until the test sends SIGTERM."""
    signal.sigwait([signal.SIGTERM])
