#!/usr/bin/env python3
"""Two builds of storbench side by side, alternating, in one run: the figures
a change must not move (beyond noise).

1. null engine, 4k random read, one worker, QD1 and QD32: client CPU per
   operation (the whole process, from wait4's rusage) and IOPS;
2. 4k random read, io_uring QD32, on a 1 GiB file in /dev/shm: IOPS and CPU
   per operation;
3. the quick suite (`storbench run --suite quick`) on a scratch file: IOPS of
   each of its six jobs.

Each row gives the median of the runs of each build, the ratio new/base, and
the spread of the ratio over the repeats (min..max of new/base per repeat).

usage: bench/compare_builds.py --base /path/to/old/storbench [--new PATH]
                               [--repeat 3] [--runtime 5] [--skip-suite]
"""
import argparse
import json
import statistics
import tempfile
from pathlib import Path

from common import SCRATCH, STORBENCH, cpu_seconds, run, table


def one(binary, args, cwd):
    out, ru = run([str(binary), "run", "--output-format", "json", "--quiet", "--results-dir", "sb-results/last", "--force", *args], cwd)
    doc = json.loads(out)
    jobs = {}
    for j in doc["jobs"]:
        ios = sum(o["ios"] for o in j["ops"])
        jobs[j["name"]] = (ios, sum(o["iops"] for o in j["ops"]))
    return jobs, cpu_seconds(ru)


def null_args(qd, runtime):
    return ["--name", f"null-qd{qd}", "--ioengine", "null", "--rw", "randread", "--bs", "4k", "--size", "1g",
            "--iodepth", str(qd), "--runtime", str(runtime), "--time_based"]


def shm_args(path, runtime):
    return ["--name", "shm-uring-qd32", "--filename", str(path), "--size", "1g", "--ioengine", "io_uring", "--rw", "randread",
            "--bs", "4k", "--iodepth", "32", "--runtime", str(runtime), "--time_based", "--allow_overwrite", "1"]


def alternate(builds, repeat, fn):
    """fn(binary) -> {row: value} for each build, alternating the order."""
    res = {name: [] for name in builds}
    for i in range(repeat):
        order = list(builds.items()) if i % 2 == 0 else list(reversed(builds.items()))
        for name, binary in order:
            res[name].append(fn(binary))
    return res


def rows_of(res, metric, fmt):
    out = []
    for key in res["base"][0]:
        base = [r[key] for r in res["base"]]
        new = [r[key] for r in res["new"]]
        ratios = [n / b for n, b in zip(new, base) if b]
        mb, mn = statistics.median(base), statistics.median(new)
        out.append([key, metric, fmt(mb), fmt(mn), f"{mn / mb:.3f}" if mb else "-", f"{min(ratios):.3f}..{max(ratios):.3f}" if ratios else "-"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the build to compare against")
    ap.add_argument("--new", default=str(STORBENCH))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--skip-suite", action="store_true")
    a = ap.parse_args()
    builds = {"base": Path(a.base), "new": Path(a.new)}
    header = [["job", "figure", "base", "new", "new/base", "spread"]]
    rows = []
    with tempfile.TemporaryDirectory(prefix="sb-builds-", dir=SCRATCH) as d:
        def null(binary):
            out = {}
            for qd in (1, 32):
                jobs, cpu = one(binary, null_args(qd, a.runtime), d)
                ios, iops = jobs[f"null-qd{qd}"]
                out[f"null QD{qd} ns/op"] = cpu / ios * 1e9
                out[f"null QD{qd} IOPS"] = iops
            return out
        res = alternate(builds, a.repeat, null)
        rows += rows_of(res, "", lambda v: f"{v:.0f}")
        print(table(header + rows), flush=True)

        shm = Path("/dev/shm") / f"storbench-builds-{Path(d).name}.dat"
        run([str(builds["new"]), "run", "--quiet", "--results-dir", "sb-results/layout", "--name", "layout", "--filename", str(shm),
             "--size", "1g", "--rw", "read", "--io_size", "4k"], d)
        try:
            def uring(binary):
                jobs, cpu = one(binary, shm_args(shm, a.runtime), d)
                ios, iops = jobs["shm-uring-qd32"]
                return {"shm io_uring QD32 IOPS": iops, "shm io_uring QD32 ns/op": cpu / ios * 1e9}
            res = alternate(builds, a.repeat, uring)
            rows += rows_of(res, "", lambda v: f"{v:.0f}")
            print("\n" + table(header + rows), flush=True)
        finally:
            shm.unlink(missing_ok=True)

        if not a.skip_suite:
            def suite(binary):
                jobs, _ = one(binary, ["--suite", "quick", "--runtime", str(a.runtime), "--ramp_time", "1"], d)
                return {name: iops for name, (_, iops) in jobs.items()}
            res = alternate(builds, a.repeat, suite)
            rows += rows_of(res, "IOPS", lambda v: f"{v:.0f}")
    print("\n" + table(header + rows))


if __name__ == "__main__":
    main()
