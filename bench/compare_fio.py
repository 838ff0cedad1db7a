#!/usr/bin/env python3
"""storbench vs fio on the same jobs and the same file, side by side.

For each job and engine (psync, io_uring) both tools run the same fio options
on the same laid-out file, alternately, REPEAT times; the table shows medians.
Checks: IOPS within 5%, p50 within 10%, the fixed-rate run within 2% of its
rate, and the mix / block-size split at the requested proportions.

usage: bench/compare_fio.py [--dir DIR] [--runtime S] [--repeat N]
"""
import argparse
import statistics
import tempfile
from pathlib import Path

from common import SCRATCH, STORBENCH, build, fio_args, fio_json, fmt_ns, job_stats, run, storbench_args, table

JOBS = [
    ("4k randread qd1", dict(rw="randread", bs="4k", iodepth=1)),
    ("4k randread qd32", dict(rw="randread", bs="4k", iodepth=32)),
    ("4k randwrite qd32", dict(rw="randwrite", bs="4k", iodepth=32)),
    ("8k 70/30 qd16", dict(rw="randrw", rwmixread=70, bs="8k", iodepth=16)),
    ("1m seq read qd4", dict(rw="read", bs="1m", iodepth=4)),
    ("1m seq write qd4", dict(rw="write", bs="1m", iodepth=4)),
]


def one(tool, opts, cwd):
    if tool == "fio":
        out, _ = run(["fio", "--output-format=json", "--lat_percentiles=1", *fio_args(opts)], cwd)
        return fio_json(out)
    out, _ = run([str(STORBENCH), "run", "--output-format", "fio-json", "--quiet", "--results-dir", "sb-results/last", "--allow_overwrite", "1", *storbench_args(opts)], cwd)
    return fio_json(out)


def measure(opts, cwd, repeat):
    res = {"fio": [], "storbench": []}
    for i in range(repeat):
        # Alternate which tool goes first: the storage warms and drifts.
        for tool in (("fio", "storbench") if i % 2 == 0 else ("storbench", "fio")):
            res[tool].append(job_stats(one(tool, opts, cwd)))
    med = lambda xs, i: statistics.median(x[i] for x in xs)
    return {t: (med(v, 1), med(v, 2)) for t, v in res.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=None, help="directory for the test file (default: a temp dir under $STORBENCH_BENCH_DIR or /tmp)")
    ap.add_argument("--runtime", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--size", default="1g")
    a = ap.parse_args()
    build()
    with tempfile.TemporaryDirectory(prefix="sb-vs-fio-", dir=a.dir or SCRATCH) as d:
        cwd = Path(d)
        base = dict(name="cmp", filename="cmp.dat", size=a.size, direct=1, runtime=a.runtime, ramp_time=1, time_based=1)
        run([str(STORBENCH), "run", "--quiet", "--results-dir", "sb-results/layout", "--name", "layout", "--filename", "cmp.dat", "--size", a.size, "--rw", "read", "--io_size", "4k"], cwd)
        rows = [["job", "engine", "fio IOPS", "sb IOPS", "IOPS ratio", "fio p50", "sb p50", "p50 ratio", "ok"]]
        for engine in ("psync", "io_uring"):
            for name, job in JOBS:
                opts = {**base, **job, "ioengine": engine}
                m = measure(opts, cwd, a.repeat)
                (fi, fp), (si, sp) = m["fio"], m["storbench"]
                ir, pr = si / fi, sp / fp if fp else 0
                ok = "yes" if abs(ir - 1) <= 0.05 and abs(pr - 1) <= 0.10 else "NO"
                rows.append([name, engine, f"{fi:.0f}", f"{si:.0f}", f"{ir:.3f}", fmt_ns(fp), fmt_ns(sp), f"{pr:.3f}", ok])
                print(table(rows[:1] + rows[-1:]).splitlines()[-1], flush=True)
        print()
        print(table(rows))
        print()
        rate_and_proportions(cwd, base, a.runtime)


def rate_and_proportions(cwd, base, runtime):
    opts = {**base, "rw": "randread", "bs": "4k", "ioengine": "io_uring", "iodepth": 8, "rate_iops": 2000}
    rows = [["fixed rate 2000 IOPS", "fio IOPS", "sb IOPS", "sb error", "ok"]]
    fi = job_stats(one("fio", opts, cwd))[1]
    si = job_stats(one("storbench", opts, cwd))[1]
    rows.append(["4k randread io_uring", f"{fi:.1f}", f"{si:.1f}", f"{(si / 2000 - 1) * 100:+.2f}%", "yes" if abs(si / 2000 - 1) <= 0.02 else "NO"])
    print(table(rows))
    print()
    opts = {**base, "rw": "randrw", "rwmixread": 70, "bssplit": "4k/50:64k/50", "ioengine": "io_uring", "iodepth": 16}
    rows = [["mix 70/30, bssplit 4k/50:64k/50", "read share", "mean size", "ok"]]
    for tool in ("fio", "storbench"):
        j = one(tool, opts, cwd)["jobs"][0]
        r, w = j["read"], j["write"]
        ios = r["total_ios"] + w["total_ios"]
        share = r["total_ios"] / ios
        mean = (r["io_bytes"] + w["io_bytes"]) / ios
        ok = abs(share - 0.7) < 0.01 and abs(mean / 34816 - 1) < 0.02
        rows.append([tool, f"{share * 100:.2f}%", f"{mean:.0f} (want 34816)", "yes" if ok else "NO"])
    print(table(rows))


if __name__ == "__main__":
    main()
