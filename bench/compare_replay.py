#!/usr/bin/env python3
"""Replay fidelity: storbench replay vs fio's read_iolog on the same traces.

fio records version 3 iologs (write_iolog) of timed workloads on a /dev/shm
file: 4k randrw 70/30 at a fixed total rate (rate_iops split 70/30; io_uring
QD16), and a bursty one (bursts of 100 operations at full speed, thinktime
between them). Each trace is then replayed onto one target file in /dev/shm,
alternately by fio (--read_iolog, --replay_redirect to the target, the same
engine and depth) and by `storbench replay` (same engine and depth), REPEAT
times.

Per replay:
- run: the tool's own runtime (fio's job_runtime, storbench's runtime_ns)
  against the trace's span (first to last recorded operation): 1.00 = no
  drift. wall: the same for the process's wall-clock time (startup included).
- lateness: per operation, the time it reached the kernel minus its recorded
  time, each operation matched to its record by (action, offset, length) in
  order. Zero is the operation issued earliest against its record (neither
  tool issues early, so that one was on time). storbench: its own v3 log
  (--write_iolog, microseconds), cross-checked with result.json's replay.lag.
  fio cannot write an iolog while it replays one ("read iolog overrides
  write_iolog"), so its times come from its completion-latency log
  (write_lat_log, log_offset=1): reap time minus clat, where fio's io_uring
  engine stamps issue_time when it submits the ring. That log's times are
  whole milliseconds (the midpoint is taken): fio's lateness is +-0.5 ms,
  and the log leaves out fio's last few operations (those in flight at its
  end), hence its lower "matched" count.
- ops: operations issued (fio: its JSON's total_ios; storbench: replay.issued)
  against the trace's.
Table: run and wall ratios as median (min..max over the repeats), lateness
p50/p99 as medians over the repeats and max as the largest.

usage: bench/compare_replay.py [--seconds 10] [--repeat 3] [--rates 1000,2000,5000] [--no-bursty]
"""
import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections import defaultdict, deque
from pathlib import Path

from common import SCRATCH, STORBENCH, Hung, build, fio_args, fio_json, run, table

SIZE = "256m"
ENGINE = "io_uring"
DEPTH = 16
SRC = Path("/dev/shm/sb-replay-src.dat")
TARGET = Path("/dev/shm/sb-replay-target.dat")
ACTIONS = ("read", "write", "trim")


def captures(rates, bursty):
    base = dict(rw="randrw", rwmixread=70, bs="4k", ioengine=ENGINE, iodepth=DEPTH, size=SIZE, time_based=1)
    out = [(f"{r} IOPS", {**base, "rate_iops": f"{r * 7 // 10},{r - r * 7 // 10}"}) for r in rates]
    if bursty:
        # 100 operations as fast as they go, then 20 ms idle.
        out.append(("bursty 100/20ms", {**base, "thinktime": "20ms", "thinktime_blocks": 100}))
    return out


def read_v3(path):
    """[(t_us, action, offset, length)] of a fio version 3 iolog's I/O lines."""
    lines = Path(path).read_text().splitlines()
    assert lines[0].strip() == "fio version 3 iolog", f"{path}: {lines[0]!r}"
    ops = []
    for line in lines[1:]:
        f = line.split()
        if len(f) >= 5 and f[2] in ACTIONS:
            ops.append((int(f[0]), f[2], int(f[3]), int(f[4])))
    return ops


def read_fio_clat(path):
    """[(issue_us, action, offset, length)] from fio's clat log with log_offset=1:
    reap time (whole ms; the midpoint is taken) minus the completion latency."""
    ops = []
    for line in Path(path).read_text().splitlines():
        t_ms, clat_ns, ddir, bs, off = (int(x) for x in line.split(",")[:5])
        ops.append((t_ms * 1000 + 500 - clat_ns / 1000, ACTIONS[ddir], off, bs))
    ops.sort()
    return ops


def lateness_us(trace, issued):
    """Per matched operation: issue time minus recorded time, zeroed on the
    earliest. Operations are matched to records by (action, offset, length),
    the n-th issue of a key to its n-th record."""
    due = defaultdict(deque)
    for t, *key in trace:
        due[tuple(key)].append(t)
    diffs = []
    for t, *key in issued:
        q = due.get(tuple(key))
        if q:
            diffs.append(t - q.popleft())
    if not diffs:
        return []
    zero = min(diffs)
    return sorted(d - zero for d in diffs)


def pct(sorted_xs, p):
    return sorted_xs[min(len(sorted_xs) - 1, max(0, round(p / 100 * len(sorted_xs) + 0.5) - 1))]


def capture(cwd, name, opts, seconds):
    log = cwd / f"trace-{len(list(cwd.glob('trace-*')))}.log"
    SRC.unlink(missing_ok=True)
    out, _ = run(["fio", "--output-format=json", "--name=capture", f"--filename={SRC}", f"--runtime={seconds}",
                  f"--write_iolog={log}", *fio_args(opts)], cwd, limit=seconds * 3 + 30)
    j = fio_json(out)["jobs"][0]
    trace = read_v3(log)
    span_us = trace[-1][0] - trace[0][0]
    print(f"captured {name}: {len(trace)} ops over {span_us / 1e6:.2f} s "
          f"(fio: {sum(j[d]['total_ios'] for d in ('read', 'write')) / (j['job_runtime'] / 1000):.0f} IOPS)", flush=True)
    return log, trace, span_us


def replay_fio(cwd, log, trace, limit):
    prefix = cwd / "fio-rep"
    for p in cwd.glob("fio-rep_*"):
        p.unlink()
    t0 = time.monotonic()
    out, _ = run(["fio", "--output-format=json", "--name=replay", f"--read_iolog={log}", f"--replay_redirect={TARGET}",
                  f"--ioengine={ENGINE}", f"--iodepth={DEPTH}", f"--write_lat_log={prefix}", "--log_offset=1"], cwd, limit=limit)
    wall = time.monotonic() - t0
    j = fio_json(out)["jobs"][0]
    issued = sum(j[d]["total_ios"] for d in ("read", "write", "trim"))
    late = lateness_us(trace, read_fio_clat(cwd / "fio-rep_clat.1.log"))
    return dict(run_s=j["job_runtime"] / 1000, wall_s=wall, issued=issued, late=late, own=None)


def replay_storbench(cwd, log, trace, limit):
    out_log, res = cwd / "sb-rep.log", cwd / "sb-rep"
    t0 = time.monotonic()
    run([str(STORBENCH), "replay", str(log), "--filename", str(TARGET), "--size", SIZE, "--ioengine", ENGINE,
         "--iodepth", str(DEPTH), "--write_iolog", str(out_log), "--results-dir", str(res), "--quiet",
         "--allow_overwrite", "1"], cwd, limit=limit)
    wall = time.monotonic() - t0
    j = json.loads((res / "result.json").read_text())["jobs"][0]
    r = j["replay"]
    assert r["records"] == len(trace), (r["records"], len(trace))
    lag = dict(r["lag"]["percentiles"])
    own = (lag[50.0] / 1000, lag[99.0] / 1000, r["lag"]["max_ns"] / 1000)
    late = lateness_us(trace, read_v3(out_log))
    return dict(run_s=j["runtime_ns"] / 1e9, wall_s=wall, issued=r["issued"], late=late, own=own)


TOOLS = {"fio": replay_fio, "storbench": replay_storbench}


def ms(us):
    return f"{us / 1000:.2f}"


def spread(xs):
    return f"{statistics.median(xs):.3f} ({min(xs):.3f}..{max(xs):.3f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=10, help="length of each captured trace")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rates", default="1000,2000,5000", help="total IOPS of the fixed-rate captures")
    ap.add_argument("--no-bursty", action="store_true")
    a = ap.parse_args()
    if "STORBENCH_BIN" not in os.environ:
        build()
    t_start = time.monotonic()
    results = []
    with tempfile.TemporaryDirectory(prefix="sb-replay-", dir=SCRATCH) as d:
        cwd = Path(d)
        try:
            for name, opts in captures([int(r) for r in a.rates.split(",")], not a.no_bursty):
                log, trace, span_us = capture(cwd, name, opts, a.seconds)
                # The target: a copy of the captured file, so both tools find it laid out at the trace's size.
                shutil.copyfile(SRC, TARGET)
                limit = span_us / 1e6 * 4 + 30
                res = {t: [] for t in TOOLS}
                for i in range(a.repeat):
                    for tool in (("fio", "storbench") if i % 2 == 0 else ("storbench", "fio")):
                        try:
                            res[tool].append(TOOLS[tool](cwd, log, trace, limit))
                        except Hung as e:
                            print(f"  {tool}: {e}", flush=True)
                results.append((name, len(trace), span_us, res))
        finally:
            SRC.unlink(missing_ok=True)
            TARGET.unlink(missing_ok=True)
    print()
    print(f"replays of fio v3 iologs (4k randrw 70/30, {ENGINE} QD{DEPTH}, /dev/shm), {a.repeat} alternating rounds per tool; "
          f"lateness in ms (fio's +-0.5 ms)")
    for name, n, span_us, res in results:
        print()
        print(f"{name}: {n} ops recorded over {span_us / 1e6:.3f} s")
        rows = [["tool", "run ratio", "wall ratio", "late p50", "late p99", "late max", "matched", "ops issued/recorded", "own lag p50/p99/max"]]
        for tool, rs in res.items():
            if not rs:
                rows.append([tool, "hung", "", "", "", "", "", "", ""])
                continue
            rs_late = [r["late"] for r in rs if r["late"]]
            p50 = statistics.median(pct(l, 50) for l in rs_late) if rs_late else 0
            p99 = statistics.median(pct(l, 99) for l in rs_late) if rs_late else 0
            mx = max(l[-1] for l in rs_late) if rs_late else 0
            own = ""
            if rs[0]["own"]:
                own = "/".join(ms(statistics.median(r["own"][k] for r in rs)) for k in (0, 1)) + "/" + ms(max(r["own"][2] for r in rs))
            issued = sorted({r["issued"] for r in rs})
            rows.append([tool, spread([r["run_s"] * 1e6 / span_us for r in rs]), spread([r["wall_s"] * 1e6 / span_us for r in rs]),
                         ms(p50), ms(p99), ms(mx), f"{min(len(r['late']) for r in rs)}",
                         f"{'/'.join(map(str, issued))}/{n}", own])
        print(table(rows))
    print(f"\n(total {time.monotonic() - t_start:.0f} s)")


if __name__ == "__main__":
    main()
