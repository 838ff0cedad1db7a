#!/usr/bin/env python3
"""storbench's nbd engine vs fio's nbd engine (libnbd) on the same export of
one nbdkit memory server on 127.0.0.1, side by side.

Jobs: 4K randread and randwrite at QD1 and QD32. The export is written whole
once first, so reads return real data rather than a sparse array's holes.
The tools run alternately, REPEAT rounds; the table shows medians of IOPS
and of client CPU per operation (user+sys of the tool's process, from
wait4, measured the same way for both), the storbench/fio ratios, and the
spread of each tool's IOPS over the rounds ((max-min)/median). nbdkit runs
on the same machine and shares its cores with the client: the figures say
how the two clients compare, not what a remote server would deliver.

usage: bench/compare_fio_nbd.py [--runtime S] [--repeat N] [--size SIZE]
"""
import argparse
import socket
import statistics
import subprocess
import tempfile
import time

from common import SCRATCH, STORBENCH, Hung, build, cpu_seconds, fio_args, fio_json, job_stats, run, storbench_args, table

JOBS = [
    ("4k randread qd1", dict(rw="randread", bs="4k", iodepth=1)),
    ("4k randread qd32", dict(rw="randread", bs="4k", iodepth=32)),
    ("4k randwrite qd1", dict(rw="randwrite", bs="4k", iodepth=1)),
    ("4k randwrite qd32", dict(rw="randwrite", bs="4k", iodepth=32)),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nbdkit(size):
    """nbdkit's memory plugin on a free port; returns (process, uri)."""
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen(["nbdkit", "--exit-with-parent", "-f", "-i", "127.0.0.1", "-p", str(port), "memory", size],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return proc, f"nbd://127.0.0.1:{port}"
            except OSError:
                time.sleep(0.05)
        proc.kill()
        proc.wait()
    raise SystemExit("nbdkit would not start (is it installed? scripts/install-deps.sh)")


def one(tool, opts, uri, cwd):
    """(IOPS, CPU seconds per operation) of one run."""
    limit = 3 * (opts["runtime"] + opts["ramp_time"]) + 60
    try:
        if tool == "fio":
            out, ru = run(["fio", "--output-format=json", "--lat_percentiles=1", "--ioengine=nbd", f"--uri={uri}", *fio_args(opts)], cwd, None, limit)
        else:
            out, ru = run([str(STORBENCH), "run", "--output-format", "fio-json", "--quiet", "--results-dir", "sb-results/last",
                           "--ioengine", "nbd", "--uri", uri, "--allow_overwrite", "1", *storbench_args(opts)], cwd, None, limit)
    except Hung as e:
        print(f"  {e}", flush=True)
        return float("nan"), float("nan")
    ios, iops, _ = job_stats(fio_json(out))
    return iops, cpu_seconds(ru) / max(ios, 1)


def spread(xs):
    med = statistics.median(xs)
    return (max(xs) - min(xs)) / med * 100 if med else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--size", default="256M", help="the export's size (nbdkit memory)")
    a = ap.parse_args()
    build()
    proc, uri = start_nbdkit(a.size)
    try:
        with tempfile.TemporaryDirectory(prefix="sb-nbd-", dir=SCRATCH) as d:
            # Lay out the whole export once (both tools then read written data).
            run([str(STORBENCH), "run", "--quiet", "--results-dir", "sb-results/layout", "--name", "layout", "--ioengine", "nbd",
                 "--uri", uri, "--rw", "write", "--bs", "1m", "--iodepth", "8"], d)
            base = dict(name="nbdcmp", size=a.size.lower(), runtime=a.runtime, ramp_time=1, time_based=1)
            rows = [["job", "fio IOPS", "sb IOPS", "IOPS ratio", "fio spread", "sb spread", "fio CPU/op", "sb CPU/op", "CPU ratio"]]
            for name, job in JOBS:
                res = {"fio": [], "storbench": []}
                for i in range(a.repeat):
                    # Alternate which tool goes first: the server warms and drifts.
                    for tool in (("fio", "storbench") if i % 2 == 0 else ("storbench", "fio")):
                        res[tool].append(one(tool, {**base, **job}, uri, d))
                (fi, fc), (si, sc) = ([statistics.median(r[k] for r in res[t]) for k in range(2)] for t in ("fio", "storbench"))
                fs, ss = (spread([r[0] for r in res[t]]) for t in ("fio", "storbench"))
                rows.append([name, f"{fi:.0f}", f"{si:.0f}", f"{si / fi:.3f}", f"{fs:.1f}%", f"{ss:.1f}%",
                             f"{fc * 1e6:.1f}us", f"{sc * 1e6:.1f}us", f"{sc / fc:.2f}"])
                print(table(rows[:1] + rows[-1:]).splitlines()[-1], flush=True)
    finally:
        proc.kill()
        proc.wait()
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
