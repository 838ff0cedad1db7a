#!/usr/bin/env python3
"""storbench's rbd engine vs fio's rbd engine on the same image of the
one-node test cluster (scripts/testenv/ceph), side by side.

Jobs: 4K randread/randwrite at QD1 and QD16, 4M sequential write at QD16.
Shows IOPS, p50 and client CPU per operation of each tool (medians of
alternating runs), with the librbd cache off for both (the cluster's figures)
and, for writes, on for both (the cache's figures).

usage: bench/compare_fio_rbd.py [--runtime S] [--repeat N] [--cache off|on|both]
(starts the test cluster if it is not up)
"""
import argparse
import os
import statistics
import subprocess
import tempfile

from common import SCRATCH, ROOT, STORBENCH, Hung, build, cpu_seconds, fio_args, fio_json, fmt_ns, job_stats, run, storbench_args, table

JOBS = [
    ("4k randread qd1", dict(rw="randread", bs="4k", iodepth=1)),
    ("4k randread qd16", dict(rw="randread", bs="4k", iodepth=16)),
    ("4k randwrite qd1", dict(rw="randwrite", bs="4k", iodepth=1)),
    ("4k randwrite qd16", dict(rw="randwrite", bs="4k", iodepth=16)),
    ("4m write qd16", dict(rw="write", bs="4m", iodepth=16)),
]


def cluster_env():
    env_file = subprocess.run([str(ROOT / "scripts/testenv/ceph"), "up"], check=True, capture_output=True, text=True).stdout.strip()
    for line in open(env_file):
        k, v = line.removeprefix("export ").strip().split("=", 1)
        os.environ[k] = v


def conf_with_cache(cwd, on):
    """A copy of the cluster's ceph.conf with the librbd cache set for fio,
    which has no option of its own for it."""
    path = os.path.abspath(os.path.join(cwd, f"ceph-cache-{int(on)}.conf"))
    with open(os.environ["CEPH_CONF"]) as src, open(path, "w") as dst:
        dst.write(src.read())
        dst.write(f"\n[client]\nrbd cache = {'true' if on else 'false'}\n")
    return path


def one(tool, opts, cwd, cache):
    limit = 3 * (opts["runtime"] + opts["ramp_time"]) + 60
    try:
        if tool == "fio":
            env = {**os.environ, "CEPH_CONF": conf_with_cache(cwd, cache)}
            out, ru = run(["fio", "--output-format=json", "--lat_percentiles=1", *fio_args(opts)], cwd, env, limit)
        else:
            out, ru = run([str(STORBENCH), "run", "--output-format", "fio-json", "--quiet", "--results-dir", "sb-results/last",
                           "--rbd_cache", str(int(cache)), *storbench_args(opts)], cwd, None, limit)
    except Hung as e:
        print(f"  {e}", flush=True)
        return float("nan"), 0, float("nan")
    ios, iops, p50 = job_stats(fio_json(out))
    return iops, p50, cpu_seconds(ru) / max(ios, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runtime", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--cache", choices=["off", "on", "both"], default="both", help="librbd cache settings to run")
    a = ap.parse_args()
    build()
    cluster_env()
    image = f"sbbench-{os.getpid()}"
    with tempfile.TemporaryDirectory(prefix="sb-rbd-", dir=SCRATCH) as d:
        # storbench creates (and marks) the image; fio then uses the same one.
        run([str(STORBENCH), "run", "--quiet", "--results-dir", "sb-results/layout", "--name", "layout", "--ioengine", "rbd",
             "--pool", "rbd", "--rbdname", image, "--size", "512m", "--rw", "write", "--bs", "4m", "--iodepth", "16"], d)
        base = dict(name="rbdcmp", ioengine="rbd", clientname="admin", pool="rbd", rbdname=image, runtime=a.runtime, ramp_time=2, time_based=1)
        rows = [["job", "rbd cache", "fio IOPS", "sb IOPS", "ratio", "fio p50", "sb p50", "fio CPU/op", "sb CPU/op"]]
        cases = [(name, job, False) for name, job in JOBS] if a.cache != "on" else []
        if a.cache != "off":
            cases += [(name, job, True) for name, job in JOBS if "write" in job["rw"]]
        try:
            for name, job, cache in cases:
                res = {"fio": [], "storbench": []}
                for i in range(a.repeat):
                    for tool in (("fio", "storbench") if i % 2 == 0 else ("storbench", "fio")):
                        res[tool].append(one(tool, {**base, **job}, d, cache))
                med = {t: [statistics.median(r[k] for r in v) for k in range(3)] for t, v in res.items()}
                (fi, fp, fc), (si, sp, sc) = med["fio"], med["storbench"]
                rows.append([name, "on" if cache else "off", f"{fi:.0f}", f"{si:.0f}", f"{si / fi:.3f}", fmt_ns(fp), fmt_ns(sp), f"{fc * 1e6:.1f}us", f"{sc * 1e6:.1f}us"])
                print(table(rows[:1] + rows[-1:]).splitlines()[-1], flush=True)
        finally:
            subprocess.run(["rbd", "rm", "--no-progress", f"rbd/{image}"], capture_output=True)
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
