#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Debian's python3: matplotlib comes from its package (scripts/setup.sh).
"""Polling versus events: rocepmd-testpmd over a grid, CSV, plots, summary.

    sweep.py --app build/app/rocepmd-testpmd/rocepmd-testpmd --out DIR
             [--sizes 64,4096] [--loads 2000,10000,40000,0]
             [--waits poll,poll+inline,event,hybrid]
             [--idles sleep,adaptive] [--duration 0.5]
             [--mode send_bw] [--depth 16]
             [--cpus-client LIST] [--cpus-server LIST] [--cpu-engine CPU]
    sweep.py --answer --app ... --out DIR [--doc DIR] [--sizes 8,512,4096,65536]
             [--answer-idle sleep] [--duration 0.5]

Grid: message size x offered load (messages/s, 0: as fast as possible) x
completion mode x engine idle policy, one rocepmd-testpmd per size and
inline setting (two memif ports back to back, raw measured at that size in
the first).  Completion modes: poll, event, epoll, hybrid as the app's
--wait; MODE+inline (poll+inline) runs MODE in an invocation with
--inline-us 100, where the polling thread runs the engine's passes and the
lcore stands aside.

Placement: the client thread, the server thread and the engine lcore run
on the CPUs given (--cpus-client, --cpus-server, --cpu-engine); by default,
on a machine of at most 3 CPUs, the fair one: client on the first CPU,
server and engine lcore on the second; else each on its own CPU.  The app
says for each row whether its busy-waiting threads and lcores had a CPU
each (cpu ok) or not (oversubscribed): such rows measure the scheduler,
are marked CPU-oversubscribed and are never taken as polling's figure.

CPU per message: the application threads' (app) plus the engine lcore
thread's (eng), all: with inline passes the application threads do the
engine's work, with events the lcore does it.

Writes DIR/sweep.csv (the app's CSV rows, raw rows included),
DIR/summary.txt (the table printed at the end, with a short answer from
its rows), and per size DIR/latency-SIZE, DIR/cpu-SIZE, DIR/crossover-SIZE
in .png and .svg:
    latency   median latency versus offered load, one panel per idle policy
    cpu       CPU per message (all) versus offered load
    crossover CPU per message of event / polling versus load: below 1
              events pay, the crossover is where the line crosses 1
The raw limit is drawn on every plot: its message rate (the highest load
the set-up carries) as a vertical line, its one-way latency as a
horizontal one on the latency plot.

--answer: per size (8 B to 64 KiB), each mode's maximum rate unpaced, then
offered loads of 1, 10, 30, 60 and 100 % of the highest, every mode, one
idle policy; ONE table (DIR/answer.txt): per size and load the mode of
lowest median latency and the mode of lowest CPU per message, per size the
crossover load, and a rule of thumb from the figures; plots
DIR/answer-{latency,cpu,crossover}.{png,svg}; with --doc DIR the table as
an .rst fragment (DIR/answer-table.rst) and the plots as .svg there.
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time

EAL = ["--no-huge", "-m", "512", "--no-pci", "--no-shconf",
       "--log-level=rocepmd:warning", "--log-level=pmd.net.memif:error"]
INLINE_US = 100
OVER = "CPU-oversubscribed"
PCTS = (1, 10, 30, 60, 100)


def ints(s):
    return [int(x) for x in s.split(",") if x]


def words(s):
    return [x for x in s.split(",") if x]


def cpus(s):
    """A CPU list as the app and taskset take it: 0, 0-1, 0,2."""
    out = set()
    for part in s.split(","):
        a, _, b = part.partition("-")
        if not a.isdigit() or (b and not b.isdigit()):
            raise argparse.ArgumentTypeError("bad CPU list %r" % s)
        out.update(range(int(a), int(b or a) + 1))
    return s


def cpu_set(s):
    return set(i for part in s.split(",")
               for i in range(int(part.split("-")[0]),
                              int(part.split("-")[-1]) + 1))


def placement(a):
    """Fill a.cpus_client/server/engine, and a.place (the header line)."""
    online = sorted(os.sched_getaffinity(0))
    few = len(online) <= 3
    second = online[1] if len(online) > 1 else online[0]
    dflt = ((str(online[0]), str(second), str(second)) if few else
            (str(online[0]), str(online[1]), str(online[2])))
    given = (a.cpus_client, a.cpus_server, a.cpu_engine)
    a.cpus_client, a.cpus_server, a.cpu_engine = (
        g if g is not None else d for g, d in zip(given, dflt))
    a.place = ("placement: client CPU %s, server CPU %s, engine lcore CPU %s"
               % (a.cpus_client, a.cpus_server, a.cpu_engine))
    if given == (None, None, None) and few:
        a.place += (" (fair on %d CPUs: client and server a CPU each, the"
                    " engine lcore beside the server; polling without inline"
                    " passes is then 3 spinners on %d CPUs and marked %s)"
                    % (len(online), len(online), OVER))
    elif given == (None, None, None):
        a.place += " (each on its own CPU, of %d)" % len(online)


def split_wait(w):
    """'poll+inline' -> ('poll', True)."""
    base, _, inl = w.partition("+")
    return base, inl == "inline"


def wait_of(r):
    """The grid's completion mode of an app row (poll+inline, event...)."""
    return r["wait"] + ("+inline" if "+inl" in r["idle"] else "")


def idle_of(r):
    return r["idle"].split("+")[0]


def f(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return 0.0


def over(r):
    return r.get("cpu") == "oversubscribed"


def app_cpu(r):
    return f(r, "cpu_us_per_msg")


def eng_cpu(r):
    return f(r, "eng_cpu_us_per_msg")


def all_cpu(r):
    """CPU per message: application threads and engine lcore."""
    return app_cpu(r) + eng_cpu(r)


def is_raw(r):
    return r["mode"].startswith("raw")


def invoke(a, size, inline, runs, tmp, raw):
    """One rocepmd-testpmd: runs = [(idle, wait, load, warmup, seconds)]."""
    tag = "%d-%s" % (size, "inl" if inline else "off")
    sock = "/rp-sweep-%d-%s" % (os.getpid(), tag)
    cmds = os.path.join(tmp, "cmds-" + tag)
    out = os.path.join(tmp, "out-%s.csv" % tag)
    with open(cmds, "w") as o:
        o.write("set size %d\nset depth %d\nset duration %g\n"
                % (size, a.depth, a.duration))
        idle = None
        for i, w, load, warm, dur in runs:
            if i != idle:
                o.write("set idle %s\n" % i)
                idle = i
            o.write("set wait %s\nset rate %d\nset warmup %d\n"
                    "set duration %g\nstart %s\n"
                    % (w, load, warm, dur, a.mode))
        o.write("quit\n")
    # EAL lcore 0 (main: the command loop, which sleeps) beside the
    # client, lcore 1 (the engine's) on its CPU
    eng = a.cpu_engine if a.cpu_engine.isdigit() else "(%s)" % a.cpu_engine
    eal = EAL + [
        "--lcores", "0@%d,1@%s" % (min(cpu_set(a.cpus_client)), eng),
        "--file-prefix=rp_sweep%d_%s" % (os.getpid(), tag.replace("-", "_")),
        "--vdev", "net_memif0,role=server,id=0,socket-abstract=yes,"
        "socket=%s,mac=02:00:00:00:00:01" % sock,
        "--vdev", "net_memif1,role=client,id=0,socket-abstract=yes,"
        "socket=%s,mac=02:00:00:00:00:02" % sock]
    ports = ["--port", "net_memif0,ip=192.0.2.1/24,mtu=1024,lcore=1",
             "--port", "net_memif1,ip=192.0.2.2/24,mtu=1024,lcore=1"]
    cmd = [a.app] + eal + ["--"] + ports + [
        "--size", str(size), "--iters", "20000", "--csv", "--out", out,
        "--cpus-client", a.cpus_client, "--cpus-server", a.cpus_server,
        "--inline-us", str(INLINE_US if inline else 0),
        "--raw" if raw else "--no-raw", "--cmdline-file", cmds]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=600)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-3000:])
        sys.exit("sweep: size %d: rocepmd-testpmd exit status %d"
                 % (size, r.returncode))
    rows = list(csv.DictReader(open(out)))
    if rows and "placement" not in rows[0]:
        sys.exit("sweep: %s has no placement column: rebuild it" % a.app)
    return rows


def run_grid(a, size, runs, tmp):
    """runs = [(idle, grid wait, load, warmup, seconds)]: one invocation
    per inline setting, raw measured in the first."""
    rows = []
    for inline in (False, True):
        mine = [(i, split_wait(w)[0], load, warm, dur)
                for i, w, load, warm, dur in runs
                if split_wait(w)[1] == inline]
        if mine:
            rows += invoke(a, size, inline, mine, tmp, raw=not rows)
    return rows


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


def polling(rows, x, key=xload):
    """The polled row of load x with a CPU per spinner and the least CPU
    per message (poll or poll+inline), or None."""
    ok = [r for r in rows if r["wait"] == "poll" and not over(r)
          and key(r) == x and f(r, "msgs") > 0]
    return min(ok, key=all_cpu) if ok else None


def event_vs_poll(rows, key=xload):
    """Loads both have, CPU per message event / polling, and the polling
    mode of each point."""
    ev = {key(r): r for r in rows if wait_of(r) == "event"
          and f(r, "msgs") > 0}
    xs, ratio, which = [], [], []
    for x in sorted(ev):
        p = polling(rows, x, key)
        if p is not None and all_cpu(p) > 0:
            xs.append(x)
            ratio.append(all_cpu(ev[x]) / all_cpu(p))
            which.append(wait_of(p))
    return xs, ratio, which


def mpl():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    # text as text, no date: smaller, reproducible SVG
    matplotlib.rcParams["svg.fonttype"] = "none"
    matplotlib.rcParams["svg.hashsalt"] = "rocepmd"
    return plt


def save(plt, fig, out, name):
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out, "%s.%s" % (name, ext)),
                    metadata={"Date": None} if ext == "svg" else None)
    plt.close(fig)


def line(ax, pts_ok, pts_over, label, color=None):
    """A mode's points: solid where each spinner had a CPU, hollow and
    dotted where not (CPU-oversubscribed)."""
    c = None
    if pts_ok:
        c = ax.plot(*zip(*sorted(pts_ok)), marker="o", label=label,
                    color=color)[0].get_color()
    if pts_over:
        ax.plot(*zip(*sorted(pts_over)), marker="o", ls=":", mfc="none",
                color=c or color, label="%s (%s)" % (label, OVER))


def plots(a, size, rows, raw_pp, raw_rate):
    plt = mpl()
    runs = [r for r in rows if not is_raw(r)]
    n = len(a.idles)
    cross = {}
    for what, val, ylabel in (
            ("latency", lambda r: f(r, "lat_p50_us"), "median latency (us)"),
            ("cpu", all_cpu, "CPU per message, app + engine lcore (us)")):
        fig, axs = plt.subplots(1, n, figsize=(4.5 * n, 4), squeeze=False,
                                sharey=True)
        for ax, idle in zip(axs[0], a.idles):
            for wait in a.waits:
                mine = [r for r in runs if idle_of(r) == idle
                        and wait_of(r) == wait and f(r, "msgs") > 0]
                line(ax, [(xload(r), val(r)) for r in mine if not over(r)],
                     [(xload(r), val(r)) for r in mine if over(r)], wait)
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
            ax.legend(fontsize=6)
        save(plt, fig, a.out, "%s-%d" % (what, size))
    fig, ax = plt.subplots(figsize=(6, 4))
    for idle in a.idles:
        xs, ratio, which = event_vs_poll(
            [r for r in runs if idle_of(r) == idle])
        if not xs:
            cross[idle] = ("none", None)
            continue
        ax.plot(xs, ratio, marker="o", label="idle %s" % idle)
        c = crossover(xs, ratio)
        cross[idle] = (sorted(set(which)), c)
        if c is not None:
            ax.axvline(c, ls=":", lw=0.8)
    ax.axhline(1.0, color="grey")
    if raw_rate:
        ax.axvline(raw_rate, color="k", ls="--", label="raw limit")
    ax.set_xscale("log")
    ax.set_xlabel("offered load (messages/s)")
    ax.set_ylabel("CPU per message, event / polling")
    ax.set_title("where events stop paying (%d B %s)" % (size, a.mode))
    ax.legend(fontsize=7)
    save(plt, fig, a.out, "crossover-%d" % size)
    return cross


def best(rows, val):
    """The row of least val among rows with a CPU per spinner."""
    ok = [r for r in rows if not over(r) and f(r, "msgs") > 0]
    return min(ok, key=val) if ok else None


def short_answer(rows):
    """Two lines from a sweep's own rows: lowest latency and lowest CPU
    per message at its lowest and its highest offered load."""
    runs = [r for r in rows if not is_raw(r) and f(r, "msgs") > 0]
    paced = sorted({f(r, "rate") for r in runs if f(r, "rate") > 0})
    loads = []
    if paced:
        loads.append(("low load (%.0f msg/s)" % paced[0],
                      [r for r in runs if f(r, "rate") == paced[0]]))
    top = [r for r in runs if f(r, "rate") == 0]
    if top:
        loads.append(("as fast as possible", top))
    elif len(paced) > 1:
        loads.append(("high load (%.0f msg/s)" % paced[-1],
                      [r for r in runs if f(r, "rate") == paced[-1]]))
    out = []
    for name, rs in loads:
        # a row that carried much less than the others (a stall) has a
        # median of few messages: not the answer at that load
        ok = [r for r in rs if not over(r)]
        top = max([f(r, "msg_rate") for r in ok] or [0])
        rs = [r for r in ok if f(r, "msg_rate") >= 0.5 * top]
        lat, cpu = best(rs, lambda r: f(r, "lat_p50_us")), best(rs, all_cpu)
        if lat is None:
            out.append("in short, %s: every row %s" % (name, OVER))
            continue
        out.append("in short, %s: lowest latency %s (idle %s, %.1f us at"
                   " %.0f msg/s), lowest CPU per message %s (idle %s,"
                   " %.2f us)" % (name, wait_of(lat), idle_of(lat),
                                  f(lat, "lat_p50_us"), f(lat, "msg_rate"),
                                  wait_of(cpu), idle_of(cpu), all_cpu(cpu)))
    nover = sum(1 for r in runs if over(r))
    if nover:
        out.append("(%d of %d rows %s: not candidates)"
                   % (nover, len(runs), OVER))
    return out


def write_csv(path, rows):
    fields = list(rows[0].keys())
    with open(path, "w", newline="") as o:
        w = csv.DictWriter(o, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def raw_of(rows):
    raw = {r["mode"]: r for r in rows if is_raw(r)}
    return (f(raw["raw_pp"], "lat_p50_us") if "raw_pp" in raw else 0,
            f(raw["raw_stream"], "msg_rate") if "raw_stream" in raw else 0)


def sweep(a):
    allrows = []
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in a.sizes:
            rows = run_grid(a, size, [(i, w, load, 100, a.duration)
                                      for i in a.idles for w in a.waits
                                      for load in a.loads], tmp)
            allrows += rows
            raw_pp, raw_rate = raw_of(rows)
            cross = plots(a, size, rows, raw_pp, raw_rate)
            summary.append((size, rows, raw_pp, raw_rate, cross))
    write_csv(os.path.join(a.out, "sweep.csv"), allrows)
    lines = [a.place,
             "CPU per message: application threads (app) + engine lcore"
             " (eng) = all; %s rows measure the scheduler" % OVER, ""]
    for size, rows, raw_pp, raw_rate, cross in summary:
        lines.append("size %d B, %s depth %d: raw one-way %.2f us, raw %.0f msg/s"
                     % (size, a.mode, a.depth, raw_pp, raw_rate))
        lines.append("%-9s %-11s %9s %10s %9s %9s %8s %8s %8s %8s %7s %-19s %s"
                     % ("idle", "wait", "offered", "msg/s", "p50_us",
                        "p99_us", "app_us/m", "eng_us/m", "all_us/m",
                        "lat/raw", "bw/raw", "placement", "cpu"))
        for r in rows:
            if is_raw(r):
                continue
            lines.append("%-9s %-11s %9s %10.0f %9.2f %9.2f %8.3f %8.3f %8.3f"
                         " %8.1f %7.3f %-19s %s"
                         % (idle_of(r), wait_of(r),
                            r["rate"] if f(r, "rate") > 0 else "max",
                            f(r, "msg_rate"), f(r, "lat_p50_us"),
                            f(r, "lat_p99_us"), app_cpu(r), eng_cpu(r),
                            all_cpu(r),
                            f(r, "lat_p50_us") / raw_pp if raw_pp else 0,
                            f(r, "msg_rate") / raw_rate if raw_rate else 0,
                            r["placement"], OVER if over(r) else "ok"))
        for idle, (which, c) in cross.items():
            if which == "none":
                msg = ("no polled row with a CPU per spinner (poll %s):"
                       " nothing to compare events with" % OVER)
            elif c is None:
                # only paced loads are common to both: the unpaced runs
                # reached different rates, which "in short" compares
                msg = ("at the offered loads both ran, events never cost"
                       " more CPU per message than polling (%s)"
                       % "/".join(which))
            else:
                msg = ("events stop paying at %.0f msg/s (against %s)"
                       % (c, "/".join(which)))
            lines.append("crossover, idle %s: %s" % (idle, msg))
        lines.append("")
    lines.append("CSV: %s" % os.path.join(a.out, "sweep.csv"))
    lines.append("plots: %s/{latency,cpu,crossover}-SIZE.{png,svg}" % a.out)
    lines.append("")
    # last: the answer, from these rows
    lines += short_answer(allrows)
    text = "\n".join(lines) + "\n"
    open(os.path.join(a.out, "summary.txt"), "w").write(text)
    sys.stdout.write(text)


# ---- --answer --------------------------------------------------------------

def pct_of(r, top):
    return round(100.0 * f(r, "rate") / top) if top else 0


def loadavg():
    """The machine's 1-minute load average: other jobs on the CPUs."""
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except (OSError, ValueError, IndexError):
        return -1.0


def answer_runs(a):
    """Each size's maximum, then the loads; rows per size."""
    out = {}
    a.load0 = loadavg()
    with tempfile.TemporaryDirectory() as tmp:
        for size in a.sizes:
            t0 = time.time()
            first = run_grid(a, size, [(a.answer_idle, w, 0, 100,
                                        a.duration) for w in a.waits], tmp)
            runs = [r for r in first if not is_raw(r) and f(r, "msgs") > 0]
            if not runs:
                sys.exit("sweep: size %d: no run completed" % size)
            # the candidates' maximum (a CPU per spinner), if any
            top = max([r for r in runs if not over(r)] or runs,
                      key=lambda r: f(r, "msg_rate"))
            rate = f(top, "msg_rate")
            grid = []
            for p in PCTS:
                load = max(1, int(rate * p / 100))
                # the warm-up at the offered rate: at most ~50 ms of it;
                # at least ~200 messages measured, at most 2 s
                warm = max(10, min(100, load // 20))
                dur = max(a.duration, min(2.0, 200.0 / load))
                grid += [(a.answer_idle, w, load, warm, dur) for w in a.waits]
            rows = run_grid(a, size, grid, tmp)
            out[size] = (first, rows, rate, wait_of(top))
            sys.stderr.write("sweep: size %d: max %.0f msg/s (%s), %.0f s\n"
                             % (size, rate, wait_of(top), time.time() - t0))
    a.load1 = loadavg()
    return out


def most(ws):
    """The most frequent of a list of modes, and its count."""
    if not ws:
        return None, 0
    w = max(sorted(set(ws)), key=ws.count)
    return w, ws.count(w)


def answer_table(a, res):
    """The rows of the table, per size its maximum, crossover and rule."""
    table, sizes = [], []
    for size, (first, rows, top, topw) in res.items():
        runs = [r for r in rows if not is_raw(r)]
        mine = []
        for p in PCTS:
            at = [r for r in runs if pct_of(r, top) == p and f(r, "msgs") > 0]
            if not at:
                continue
            lat = best(at, lambda r: f(r, "lat_p50_us"))
            cpu = best(at, all_cpu)

            def others(win, val, fmt):
                # the rows that had a CPU per spinner: the candidates
                return ", ".join("%s %s" % (wait_of(r), fmt % val(r))
                                 for r in sorted(at, key=wait_of)
                                 if r is not win and not over(r))
            mine.append({
                "size": size, "pct": p, "load": f(at[0], "rate"),
                "lat": lat, "cpu": cpu,
                "lat_others": others(lat, lambda r: f(r, "lat_p50_us"), "%.1f"),
                "cpu_others": others(cpu, all_cpu, "%.2f")})
        table += mine
        xs, ratio, which = event_vs_poll(runs, key=lambda r: pct_of(r, top))
        c = crossover(xs, ratio)
        if not xs:
            cx = "no polled row with a CPU per spinner"
        elif c is None:
            cx = "none: events cost less at every load"
        elif c <= xs[0]:
            cx = "below %d %%: polling costs less at every load" % xs[0]
        else:
            cx = "%.0f %% of the maximum (%.0f msg/s), against %s" % (
                c, c * top / 100, "/".join(sorted(set(which))))
        sizes.append({
            "size": size, "top": top, "topw": topw, "cross": cx,
            "cross_pct": c, "curve": (xs, ratio),
            "over": sorted({wait_of(r) for r in runs if over(r)}),
            "lat": most([wait_of(t["lat"]) for t in mine if t["lat"]]),
            "low": most([wait_of(t["cpu"]) for t in mine
                         if t["cpu"] and t["pct"] <= 10]),
            "high": most([wait_of(t["cpu"]) for t in mine
                          if t["cpu"] and t["pct"] >= 60])})
    return table, sizes, rule(sizes)


def rule(sizes):
    """A rule of thumb from the winners, sizes of the same answer grouped:
    nothing in it is written in advance."""
    groups = []
    for s in sizes:
        key = (s["lat"][0], s["low"][0], s["high"][0])
        if groups and groups[-1][0] == key:
            groups[-1][1].append(s)
        else:
            groups.append((key, [s]))
    parts = []
    for (lat, low, high), ss in groups:
        name = "%d B" % ss[0]["size"] if len(ss) == 1 else "%d-%d B" % (
            ss[0]["size"], ss[-1]["size"])
        if lat is None:
            parts.append("%s: no point with a CPU per spinner" % name)
            continue
        cpu = ("%s at low and high load" % low if low == high else
               "%s at low load, %s at high" % (low, high))
        cs = [s["cross_pct"] for s in ss if s["cross_pct"] is not None]
        if low != high and cs:
            cpu += " (crossover %s of the maximum rate)" % (
                "%.0f %%" % cs[0] if len(cs) == 1 else
                "%.0f-%.0f %%" % (min(cs), max(cs)))
        parts.append("%s: lowest latency %s (%d of %d loads), lowest CPU per"
                     " message %s" % (name, lat, sum(s["lat"][1] for s in ss),
                                      len(ss) * len(PCTS), cpu))
    return "rule of thumb (this machine and placement): " + "; ".join(parts)


def fmt_win(r, val, unit):
    if r is None:
        return "-"
    v = val(r)
    return "%s %.*f %s" % (wait_of(r), 0 if v >= 100 else 1 if v >= 10 else 2,
                           v, unit)


def answer_text(a, table, sizes, rl, elapsed):
    lines = [a.place,
             "%s depth %d, idle %s, %g s per point; CPU per message ="
             " application threads + engine lcore; %s rows are not"
             " candidates" % (a.mode, a.depth, a.answer_idle, a.duration, OVER),
             "load average of the machine before and after: %.2f, %.2f"
             " (%d CPUs: above 0 is other jobs on them)"
             % (a.load0, a.load1, len(os.sched_getaffinity(0))), ""]
    lines.append("%-6s %-12s %-24s %-26s  %s" % (
        "size", "load", "lowest median latency", "lowest CPU per message",
        "the others (latency us; CPU us)"))
    for t in table:
        lines.append("%-6d %3d%% %7.0f %-24s %-26s  %s; %s" % (
            t["size"], t["pct"], t["load"],
            fmt_win(t["lat"], lambda r: f(r, "lat_p50_us"), "us"),
            fmt_win(t["cpu"], all_cpu, "us/msg"),
            t["lat_others"], t["cpu_others"]))
    lines.append("")
    for s in sizes:
        lines.append("size %d: maximum %.0f msg/s (%s); crossover (events stop"
                     " costing less CPU per message than polling): %s%s"
                     % (s["size"], s["top"], s["topw"], s["cross"],
                        "; %s: %s" % ("/".join(s["over"]), OVER)
                        if s["over"] else ""))
    lines.append(rl)
    lines.append("(%.0f s)" % elapsed)
    return "\n".join(lines) + "\n"


def rst_cell(s):
    return s.replace("*", "\\*").replace("|", "\\|")


def answer_rst(a, table, sizes, rl, figs):
    """The .rst fragment guides/experiments includes."""
    L = [".. Generated by bench/sweep.py --answer (meson test -C build",
         "   --benchmark testpmd-answer): do not edit.", "",
         "%s; ``%s`` depth %d, idle ``%s``, %g s per point (more at low"
         " loads: 200 messages, at most 2 s).  CPU per message is the"
         " application threads' plus the engine lcore's; %s rows are not"
         " candidates.  Load average of the machine before and after the"
         " run: %.2f, %.2f (other jobs on the CPUs)."
         % (a.place[0].upper() + a.place[1:], a.mode, a.depth,
            a.answer_idle, a.duration, OVER, a.load0, a.load1), "",
         ".. list-table::", "   :header-rows: 1", "",
         "   * - size", "     - load (% of max, msg/s)",
         "     - lowest median latency", "     - the others (µs)",
         "     - lowest CPU per message", "     - the others (µs/msg)"]
    for t in table:
        L += ["   * - %d" % t["size"],
              "     - %d %% (%.0f)" % (t["pct"], t["load"]),
              "     - %s" % rst_cell(fmt_win(t["lat"], lambda r: f(r, "lat_p50_us"),
                                             "µs")),
              "     - %s" % rst_cell(t["lat_others"] or "-"),
              "     - %s" % rst_cell(fmt_win(t["cpu"], all_cpu, "µs")),
              "     - %s" % rst_cell(t["cpu_others"] or "-")]
    L += ["", ".. list-table::", "   :header-rows: 1", "",
          "   * - size", "     - maximum msg/s (mode)",
          "     - crossover: events stop costing less CPU per message",
          "     - not candidates (%s)" % OVER]
    for s in sizes:
        L += ["   * - %d" % s["size"],
              "     - %.0f (%s)" % (s["top"], s["topw"]),
              "     - %s" % rst_cell(s["cross"]),
              "     - %s" % ("/".join(s["over"]) or "-")]
    L += ["", rst_cell(rl[0].upper() + rl[1:]) + ".", ""]
    for name, title in figs:
        L += [".. figure:: figures/%s.svg" % name, "",
              "   %s" % title, ""]
    return "\n".join(L)


def answer_plots(a, res, sizes):
    plt = mpl()
    n = len(res)
    figs = []
    for what, val, ylabel in (
            ("latency", lambda r: f(r, "lat_p50_us"), "median latency (us)"),
            ("cpu", all_cpu, "CPU per message, app + engine lcore (us)")):
        fig, axs = plt.subplots(1, n, figsize=(4 * n, 3.8), squeeze=False)
        for ax, (size, (first, rows, top, topw)) in zip(axs[0], res.items()):
            runs = [r for r in rows if not is_raw(r) and f(r, "msgs") > 0]
            for wait in a.waits:
                mine = [r for r in runs if wait_of(r) == wait]
                line(ax, [(pct_of(r, top), val(r)) for r in mine
                          if not over(r)],
                     [(pct_of(r, top), val(r)) for r in mine if over(r)],
                     wait)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title("%d B, max %.0f msg/s" % (size, top), fontsize=9)
            ax.set_xticks(PCTS, [str(p) for p in PCTS])
            ax.set_xlabel("offered load (% of max)")
            ax.set_ylabel(ylabel)
            ax.legend(fontsize=6)
        save(plt, fig, a.out, "answer-%s" % what)
        figs.append(("answer-%s" % what, "%s versus offered load, per size"
                     " (hollow, dotted: %s)" % (ylabel, OVER)))
    fig, ax = plt.subplots(figsize=(6, 4))
    for s in sizes:
        xs, ratio = s["curve"]
        if xs:
            ax.plot(xs, ratio, marker="o", label="%d B" % s["size"])
    ax.axhline(1.0, color="grey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(PCTS, [str(p) for p in PCTS])
    ax.set_xlabel("offered load (% of max)")
    ax.set_ylabel("CPU per message, event / polling")
    ax.set_title("where events stop costing less (below 1: they do)",
                 fontsize=9)
    ax.legend(fontsize=7)
    save(plt, fig, a.out, "answer-crossover")
    figs.append(("answer-crossover", "CPU per message of event over the"
                 " cheaper polled mode with a CPU per spinner; the crossover"
                 " is where a line reaches 1"))
    return figs


def answer(a):
    t0 = time.time()
    res = answer_runs(a)
    allrows = [r for first, rows, _, _ in res.values() for r in first + rows]
    write_csv(os.path.join(a.out, "answer.csv"), allrows)
    table, sizes, rl = answer_table(a, res)
    figs = answer_plots(a, res, sizes)
    text = answer_text(a, table, sizes, rl, time.time() - t0)
    open(os.path.join(a.out, "answer.txt"), "w").write(text)
    sys.stdout.write(text)
    frag = answer_rst(a, table, sizes, rl, figs)
    open(os.path.join(a.out, "answer-table.rst"), "w").write(frag)
    if a.doc:
        os.makedirs(a.doc, exist_ok=True)
        open(os.path.join(a.doc, "answer-table.rst"), "w").write(frag)
        for name, _ in figs:
            shutil.copy(os.path.join(a.out, name + ".svg"), a.doc)
        sys.stdout.write("doc: %s/answer-table.rst and %s\n" % (
            a.doc, ", ".join(n + ".svg" for n, _ in figs)))
    sys.stdout.write("CSV: %s/answer.csv; plots: %s/answer-{latency,cpu,"
                     "crossover}.{png,svg}\n" % (a.out, a.out))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--app", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--sizes", type=ints)
    p.add_argument("--loads", type=ints, default=ints("2000,10000,40000,0"))
    p.add_argument("--waits", type=words,
                   default=words("poll,poll+inline,event,hybrid"))
    p.add_argument("--idles", type=words, default=words("sleep,adaptive"))
    p.add_argument("--duration", type=float)
    p.add_argument("--mode", default="send_bw")
    p.add_argument("--depth", type=int, default=16)
    p.add_argument("--cpus-client", type=cpus)
    p.add_argument("--cpus-server", type=cpus)
    p.add_argument("--cpu-engine", type=cpus)
    p.add_argument("--answer", action="store_true",
                   help="which mode, by size and load (one table)")
    p.add_argument("--answer-idle", default="sleep")
    p.add_argument("--doc", help="--answer: also the .rst fragment and the"
                   " .svg plots into this directory")
    a = p.parse_args()
    for w in a.waits:
        base, inl = split_wait(w)
        if base not in ("poll", "event", "epoll", "hybrid") or (
                "+" in w and not inl):
            p.error("--waits: %r (poll, event, epoll, hybrid, MODE+inline)"
                    % w)
    if a.sizes is None:
        a.sizes = ints("8,512,4096,65536" if a.answer else "64,4096")
    if a.duration is None:
        a.duration = 0.5
    placement(a)
    os.makedirs(a.out, exist_ok=True)
    if a.answer:
        answer(a)
    else:
        sweep(a)


if __name__ == "__main__":
    main()
