#!/usr/bin/env python3
"""`storbench rados bench` vs `rados bench` on the one-node test cluster
(scripts/testenv/ceph), side by side: 4M write/seq/rand and 4K write, t=16.

Each round, each tool writes (--no-cleanup), reads what it wrote in order
(seq) and at random (rand), then cleans up; the tools alternate which goes
first. Both print rados bench's summary, so one parser reads both: bandwidth,
IOPS, average latency, and client CPU per operation from wait4's rusage.
Medians over the rounds. Runs in its own pool, removed at the end.

storbench runs twice a round: as built (writes through librados' C++ API
over its own buffers when built with libradospp-dev: no copy) and with
STORBENCH_RADOS_COPY=1 (librados' C API, which copies every write), so the
copy's cost is measured in the same run; each storbench run's note (in its
result.json) says which path its writes took.

usage: bench/compare_rados_bench.py [--seconds S] [--repeat N]
(starts the test cluster if it is not up; keep S small: 4M writes fill the
test cluster's 3 x 8 GiB OSDs at ~250 MB/s x 3 replicas)
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile

from common import SCRATCH, ROOT, STORBENCH, Hung, build, cpu_seconds, run, table

CASES = [("4M", "write"), ("4M", "seq"), ("4M", "rand"), ("4K", "write")]
POOL = f"sbbench-{os.getpid()}"


def cluster_env():
    env_file = subprocess.run([str(ROOT / "scripts/testenv/ceph"), "up"], check=True, capture_output=True, text=True).stdout.strip()
    for line in open(env_file):
        k, v = line.removeprefix("export ").strip().split("=", 1)
        os.environ[k] = v


def summary(out):
    """Fields of rados bench's summary (storbench prints the same ones)."""
    f = {}
    for line in out.splitlines():
        m = re.match(r"\s*(Total (?:writes|reads) made|Bandwidth \(MB/sec\)|Average IOPS|Average Latency\(s\)):?\s+([\d.]+)", line)
        if m:
            f[m.group(1)] = float(m.group(2))
    ops = f.get("Total writes made", f.get("Total reads made", 0))
    return ops, f.get("Bandwidth (MB/sec)", float("nan")), f.get("Average IOPS", float("nan")), f.get("Average Latency(s)", float("nan"))


TOOLS = ("rados", "storbench", "sb-copy")


def bench(tool, secs, mode, size, cwd):
    args = ["bench", str(secs), mode, "-p", POOL, "-t", "16"]
    if mode == "write":
        args += ["-b", str(4 << 20 if size == "4M" else 4096), "--no-cleanup"]
    cmd = ["rados", *args] if tool == "rados" else [str(STORBENCH), "rados", *args, "--results-dir", "sb-results/last"]
    env = dict(os.environ, STORBENCH_RADOS_COPY="1") if tool == "sb-copy" else None
    try:
        out, ru = run(cmd, cwd, env, 4 * secs + 120)
    except Hung as e:
        print(f"  {e}", flush=True)
        return [float("nan")] * 4
    ops, mbs, iops, lat = summary(out)
    return [mbs, iops, lat, cpu_seconds(ru) / max(ops, 1)]


def cleanup(tool, cwd):
    if tool == "rados":
        run(["rados", "-p", POOL, "cleanup"], cwd)
    else:
        run([str(STORBENCH), "rados", "cleanup", "-p", POOL], cwd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="all", help="all, or e.g. 4M-write,4K-write")
    a = ap.parse_args()
    cases = CASES if a.cases == "all" else [tuple(c.split("-")) for c in a.cases.split(",")]
    build()
    cluster_env()
    subprocess.run(["ceph", "osd", "pool", "create", POOL, "32"], check=True, capture_output=True)
    res = {(t, c): [] for t in TOOLS for c in CASES}
    try:
        with tempfile.TemporaryDirectory(prefix="sb-rados-", dir=SCRATCH) as d:
            for i in range(a.repeat):
                order = TOOLS[i % 3:] + TOOLS[:i % 3]
                for size in ("4M", "4K"):
                    for tool in order:
                        for mode in ("write", "seq", "rand"):
                            if (size, mode) in cases:
                                res[(tool, (size, mode))].append(bench(tool, a.seconds, mode, size, d))
                        cleanup(tool, d)
                print(f"round {i + 1} of {a.repeat} done", flush=True)
    finally:
        subprocess.run(["ceph", "osd", "pool", "rm", POOL, POOL, "--yes-i-really-really-mean-it"], capture_output=True)
    rows = [["case (t=16)", "storbench", "rados MB/s", "sb MB/s", "ratio (rounds)", "rados IOPS", "sb IOPS", "rados avg lat", "sb avg lat", "rados CPU/op", "sb CPU/op", "CPU ratio (rounds)"]]
    for c in cases:
        r = [statistics.median(x[k] for x in res[("rados", c)]) for k in range(4)]
        for tool in TOOLS[1:]:
            if c[1] != "write" and tool == "sb-copy":
                continue  # reads take the same path either way
            s = [statistics.median(x[k] for x in res[(tool, c)]) for k in range(4)]
            moved = [x[0] / y[0] for x, y in zip(res[(tool, c)], res[("rados", c)])]
            cpu = [x[3] / y[3] for x, y in zip(res[(tool, c)], res[("rados", c)])]
            rows.append([
                f"{c[0]} {c[1]}", "C API (copy)" if tool == "sb-copy" else "as built", f"{r[0]:.1f}", f"{s[0]:.1f}",
                f"{s[0] / r[0]:.3f} ({min(moved):.2f}-{max(moved):.2f})", f"{r[1]:.0f}", f"{s[1]:.0f}",
                f"{r[2] * 1e3:.2f}ms", f"{s[2] * 1e3:.2f}ms", f"{r[3] * 1e6:.1f}us", f"{s[3] * 1e6:.1f}us", f"{s[3] / r[3]:.3f} ({min(cpu):.2f}-{max(cpu):.2f})",
            ])
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
