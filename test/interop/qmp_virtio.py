#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print the state of the guest's virtio devices over QEMU's QMP socket.

    qmp_virtio.py SOCKET

interop.sh runs it when a scenario fails: a guest whose network went
silent is told apart as a device QEMU gave up on ("broken", after a
virtio_error), a queue QEMU stopped reading, or a lost notification: the
guest's avail index ahead of QEMU's last-avail while the avail_event QEMU
published asks for a kick the guest believes it gave.  QEMU 7.2's
x-query-virtio* commands; guest memory read with the monitor's "xp".
"""
import json
import socket
import sys


class Qmp:
    def __init__(self, path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(path)
        self.f = s.makefile("rw")
        json.loads(self.f.readline())   # the greeting
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        self.f.write(json.dumps({"execute": name, "arguments": args}) + "\n")
        self.f.flush()
        while True:
            m = json.loads(self.f.readline())
            if "return" in m or "error" in m:
                return m.get("return", {})

    def word(self, addr):
        """One u16 of guest memory ("xp" prints "ADDR: 0xNNNN")."""
        r = self.cmd("human-monitor-command",
                     **{"command-line": "xp /1hx %d" % addr})
        return int(r.split()[-1], 16) if "0x" in r else None

    def ring(self, qs):
        """A split ring's indexes and events in guest memory: avail is
        {flags, idx, ring[num], used_event}, used is {flags, idx,
        ring[num] of 8 bytes, avail_event}."""
        av, us, n = qs.get("vring-avail"), qs.get("vring-used"), \
            qs.get("vring-num")
        if not av or not us or not n:
            return "not set up"
        return "avail %s (used_event %s), used %s (flags %s, avail_event %s)" % (
            self.word(av + 2), self.word(av + 4 + 2 * n), self.word(us + 2),
            self.word(us), self.word(us + 4 + 8 * n))


def main():
    q = Qmp(sys.argv[1])
    for d in q.cmd("x-query-virtio"):
        st = q.cmd("x-query-virtio-status", path=d["path"])
        print("virtio %s (%s): broken %s, status %s, queues %s" % (
            d["name"], d["path"], st.get("broken"),
            st.get("status", {}).get("statuses"), st.get("num-vqs")))
        for i in range(st.get("num-vqs", 0)):
            qs = q.cmd("x-query-virtio-queue-status", path=d["path"], queue=i)
            print("  queue %d: QEMU's last-avail %s, used %s, in use %s; "
                  "the guest's ring: %s" % (
                      i, qs.get("last-avail-idx"), qs.get("used-idx"),
                      qs.get("inuse"), q.ring(qs)))


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as e:
        print("qmp_virtio: %s" % e)
