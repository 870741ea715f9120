#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Debian's python3: matplotlib comes from its package (scripts/setup.sh).
"""Polling versus events: rocepmd-testpmd over a grid, CSV, plots, summary.

    sweep.py --app build/app/rocepmd-testpmd/rocepmd-testpmd --out DIR
             [--sizes 64,4096] [--loads 2000,10000,40000,0]
             [--waits poll,event,epoll,hybrid]
             [--idles busy,yield,sleep,adaptive] [--duration 0.5]
             [--mode send_bw] [--depth 16]

Grid: message size x offered load (messages/s, 0: as fast as possible) x
completion mode x engine idle policy, one rocepmd-testpmd per size (two
memif ports back to back, raw measured at that size in the same
invocation).  Writes DIR/sweep.csv (the app's CSV rows, raw rows
included), DIR/summary.txt (the table printed at the end), and per size
DIR/latency-SIZE, DIR/cpu-SIZE, DIR/crossover-SIZE in .png and .svg:
    latency   median latency versus offered load, one panel per idle policy
    cpu       application CPU per message versus offered load
    crossover CPU per message of event / poll versus load: below 1 events
              pay, the crossover is where the line crosses 1
The raw limit is drawn on every plot: its message rate (the highest load
the set-up carries) as a vertical line, its one-way latency as a
horizontal one on the latency plot.
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile

EAL = ["-l", "0-1", "--no-huge", "-m", "512", "--no-pci", "--no-shconf",
       "--log-level=rocepmd:warning", "--log-level=pmd.net.memif:error"]


def ints(s):
    return [int(x) for x in s.split(",") if x]


def words(s):
    return [x for x in s.split(",") if x]


def run_size(a, size, tmp):
    """One invocation for one size: every (idle, wait, load) run."""
    sock = "/rp-sweep-%d-%d" % (os.getpid(), size)
    cmds = os.path.join(tmp, "cmds-%d" % size)
    out = os.path.join(tmp, "out-%d.csv" % size)
    with open(cmds, "w") as f:
        f.write("set size %d\nset depth %d\nset warmup 100\nset duration %g\n"
                % (size, a.depth, a.duration))
        for idle in a.idles:
            f.write("set idle %s\n" % idle)
            for wait in a.waits:
                f.write("set wait %s\n" % wait)
                for load in a.loads:
                    f.write("set rate %d\nstart %s\n" % (load, a.mode))
        f.write("quit\n")
    eal = EAL + [
        "--file-prefix=rp_sweep%d_%d" % (os.getpid(), size),
        "--vdev", "net_memif0,role=server,id=0,socket-abstract=yes,"
        "socket=%s,mac=02:00:00:00:00:01" % sock,
        "--vdev", "net_memif1,role=client,id=0,socket-abstract=yes,"
        "socket=%s,mac=02:00:00:00:00:02" % sock]
    ports = ["--port", "net_memif0,ip=192.0.2.1/24,mtu=1024,lcore=1",
             "--port", "net_memif1,ip=192.0.2.2/24,mtu=1024,lcore=1"]
    cmd = [a.app] + eal + ["--"] + ports + [
        "--size", str(size), "--iters", "20000", "--csv", "--out", out,
        "--cmdline-file", cmds]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=600)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-3000:])
        sys.exit("sweep: size %d: rocepmd-testpmd exit status %d"
                 % (size, r.returncode))
    return list(csv.DictReader(open(out)))


def f(r, k):
    return float(r[k])


def crossover(loads, ratio):
    """First load where event/poll CPU reaches 1 (linear in between)."""
    for i, (x, y) in enumerate(zip(loads, ratio)):
        if y >= 1.0:
            if i == 0:
                return x
            x0, y0 = loads[i - 1], ratio[i - 1]
            return x0 + (1.0 - y0) * (x - x0) / (y - y0)
    return None


def xload(r):
    # offered load; "as fast as possible" is placed at what it achieved
    return f(r, "rate") if f(r, "rate") > 0 else f(r, "msg_rate")


def plots(a, size, rows, raw_pp, raw_rate):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [r for r in rows if not r["mode"].startswith("raw")]
    n = len(a.idles)
    cross = {}
    for what, key, ylabel in (
            ("latency", "lat_p50_us", "median latency (us)"),
            ("cpu", "cpu_us_per_msg", "application CPU per message (us)")):
        fig, axs = plt.subplots(1, n, figsize=(4.5 * n, 4), squeeze=False,
                                sharey=True)
        for ax, idle in zip(axs[0], a.idles):
            for wait in a.waits:
                pts = sorted((xload(r), f(r, key)) for r in runs
                             if r["idle"] == idle and r["wait"] == wait)
                if pts:
                    ax.plot(*zip(*pts), marker="o", label=wait)
            if raw_rate:
                ax.axvline(raw_rate, color="k", ls="--",
                           label="raw limit %.0f msg/s" % raw_rate)
            if what == "latency" and raw_pp:
                ax.axhline(raw_pp, color="grey", ls=":",
                           label="raw one-way %.1f us" % raw_pp)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title("idle %s, %d B %s" % (idle, size, a.mode))
            ax.set_xlabel("offered load (messages/s)")
            ax.set_ylabel(ylabel)
            ax.legend(fontsize=7)
        fig.tight_layout()
        for ext in ("png", "svg"):
            fig.savefig(os.path.join(a.out, "%s-%d.%s" % (what, size, ext)))
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    for idle in a.idles:
        def cpu(wait):
            return {xload(r): f(r, "cpu_us_per_msg") for r in runs
                    if r["idle"] == idle and r["wait"] == wait}
        poll, event = cpu("poll"), cpu("event")
        # offered loads both have (a paced load is the same x for both)
        xs = sorted(x for x in event if x in poll and poll[x] > 0)
        if not xs:
            continue
        ratio = [event[x] / poll[x] for x in xs]
        ax.plot(xs, ratio, marker="o", label="idle %s" % idle)
        c = crossover(xs, ratio)
        cross[idle] = c
        if c is not None:
            ax.axvline(c, ls=":", lw=0.8)
    ax.axhline(1.0, color="grey")
    if raw_rate:
        ax.axvline(raw_rate, color="k", ls="--", label="raw limit")
    ax.set_xscale("log")
    ax.set_xlabel("offered load (messages/s)")
    ax.set_ylabel("CPU per message, event / poll")
    ax.set_title("where events stop paying (%d B %s)" % (size, a.mode))
    ax.legend(fontsize=7)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(a.out, "crossover-%d.%s" % (size, ext)))
    plt.close(fig)
    return cross


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--app", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--sizes", type=ints, default=ints("64,4096"))
    p.add_argument("--loads", type=ints, default=ints("2000,10000,40000,0"))
    p.add_argument("--waits", type=words, default=words("poll,event,epoll,hybrid"))
    p.add_argument("--idles", type=words,
                   default=words("busy,yield,sleep,adaptive"))
    p.add_argument("--duration", type=float, default=0.5)
    p.add_argument("--mode", default="send_bw")
    p.add_argument("--depth", type=int, default=16)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    allrows = []
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in a.sizes:
            rows = run_size(a, size, tmp)
            allrows += rows
            raw = {r["mode"]: r for r in rows if r["mode"].startswith("raw")}
            raw_pp = f(raw["raw_pp"], "lat_p50_us") if "raw_pp" in raw else 0
            raw_rate = (f(raw["raw_stream"], "msg_rate")
                        if "raw_stream" in raw else 0)
            cross = plots(a, size, rows, raw_pp, raw_rate)
            summary.append((size, rows, raw_pp, raw_rate, cross))
    fields = list(allrows[0].keys())
    with open(os.path.join(a.out, "sweep.csv"), "w", newline="") as o:
        w = csv.DictWriter(o, fieldnames=fields)
        w.writeheader()
        w.writerows(allrows)
    lines = []
    for size, rows, raw_pp, raw_rate, cross in summary:
        lines.append("size %d B, %s depth %d: raw one-way %.2f us, raw %.0f msg/s"
                     % (size, a.mode, a.depth, raw_pp, raw_rate))
        lines.append("%-9s %-6s %9s %10s %9s %8s %8s %8s %8s"
                     % ("idle", "wait", "offered", "msg/s", "p50_us",
                        "p99_us", "cpu_us/m", "lat/raw", "bw/raw"))
        for r in rows:
            if r["mode"].startswith("raw"):
                continue
            lines.append("%-9s %-6s %9s %10.0f %9.2f %8.2f %8.3f %8.1f %8.3f"
                         % (r["idle"], r["wait"],
                            r["rate"] if f(r, "rate") > 0 else "max",
                            f(r, "msg_rate"), f(r, "lat_p50_us"),
                            f(r, "lat_p99_us"), f(r, "cpu_us_per_msg"),
                            f(r, "lat_p50_us") / raw_pp if raw_pp else 0,
                            f(r, "msg_rate") / raw_rate if raw_rate else 0))
        for idle, c in cross.items():
            lines.append("crossover, idle %s: %s" % (
                idle, "events never cost more CPU per message than polling"
                if c is None else "events stop paying at %.0f msg/s" % c))
        lines.append("")
    lines.append("CSV: %s" % os.path.join(a.out, "sweep.csv"))
    lines.append("plots: %s/{latency,cpu,crossover}-SIZE.{png,svg}" % a.out)
    text = "\n".join(lines) + "\n"
    open(os.path.join(a.out, "summary.txt"), "w").write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
