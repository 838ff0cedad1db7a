#!/usr/bin/env python3
"""storbench's own cost against fio's, side by side in one run.

1. null engine, 4k random read, one worker, QD1 and QD32: CPU time per
   operation of each tool (the whole process, from wait4's rusage).
2. A 1 GiB file in /dev/shm, 4k random read, io_uring, QD32, one worker:
   IOPS and CPU seconds of each tool.

usage: bench/overhead.py [--runtime S] [--repeat N]
"""
import argparse
import statistics
import tempfile
from pathlib import Path

from common import SCRATCH, STORBENCH, build, cpu_seconds, fio_args, fio_json, run, storbench_args, table


def fio(opts, cwd):
    out, ru = run(["fio", "--output-format=json", *fio_args(opts)], cwd)
    r = fio_json(out)["jobs"][0]["read"]
    return r["total_ios"], r["iops"], cpu_seconds(ru)


def storbench(opts, cwd):
    out, ru = run([str(STORBENCH), "run", "--output-format", "fio-json", "--quiet", "--results-dir", "sb-results/last", "--allow_overwrite", "1", *storbench_args(opts)], cwd)
    r = fio_json(out)["jobs"][0]["read"]
    return r["total_ios"], r["iops"], cpu_seconds(ru)


def median_runs(fn, opts, cwd, repeat):
    runs = [fn(opts, cwd) for _ in range(repeat)]
    return tuple(statistics.median(r[i] for r in runs) for i in range(3))


def null_engine(cwd, runtime, repeat):
    rows = [["null engine 4k randread", "fio ns/op", "sb ns/op", "sb/fio", "<= 0.5"]]
    for qd in (1, 32):
        opts = dict(name="null", ioengine="null", rw="randread", bs="4k", size="1g", iodepth=qd, runtime=runtime, time_based=1)
        f = median_runs(fio, opts, cwd, repeat)
        s = median_runs(storbench, opts, cwd, repeat)
        fns, sns = f[2] / f[0] * 1e9, s[2] / s[0] * 1e9
        rows.append([f"QD{qd}, 1 worker", f"{fns:.0f}", f"{sns:.0f}", f"{sns / fns:.3f}", "yes" if sns / fns <= 0.5 else "NO"])
    print(table(rows), flush=True)


def shm_uring(cwd, runtime, repeat):
    path = Path("/dev/shm") / f"storbench-overhead-{Path(cwd).name}.dat"
    run([str(STORBENCH), "run", "--quiet", "--results-dir", "sb-results/layout", "--name", "layout", "--filename", str(path), "--size", "1g", "--rw", "read", "--io_size", "4k"], cwd)
    try:
        opts = dict(name="shm", filename=str(path), size="1g", ioengine="io_uring", rw="randread", bs="4k", iodepth=32, runtime=runtime, time_based=1)
        rows = [["/dev/shm 1GiB 4k randread io_uring QD32", "IOPS", "CPU s", "CPU us/op"]]
        res = {}
        for i in range(repeat):
            for tool, fn in ((("fio", fio), ("storbench", storbench)) if i % 2 == 0 else (("storbench", storbench), ("fio", fio))):
                res.setdefault(tool, []).append(fn(opts, cwd))
        med = {t: tuple(statistics.median(r[i] for r in v) for i in range(3)) for t, v in res.items()}
        for tool in ("fio", "storbench"):
            ios, iops, cpu = med[tool]
            rows.append([tool, f"{iops:.0f}", f"{cpu:.2f}", f"{cpu / ios * 1e6:.2f}"])
        (fi, fiops, fcpu), (si, siops, scpu) = med["fio"], med["storbench"]
        rows.append(["storbench/fio", f"{siops / fiops:.3f}", f"{scpu / fcpu:.3f}", f"{(scpu / si) / (fcpu / fi):.3f}"])
        print(table(rows))
        ok = siops / fiops >= 1.1 and scpu <= fcpu
        print(f"IOPS >= 1.1x fio at no more CPU: {'yes' if ok else 'NO'}")
    finally:
        path.unlink(missing_ok=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    build()
    with tempfile.TemporaryDirectory(prefix="sb-overhead-", dir=SCRATCH) as d:
        null_engine(d, a.runtime, a.repeat)
        print()
        shm_uring(d, a.runtime, a.repeat)


if __name__ == "__main__":
    main()
