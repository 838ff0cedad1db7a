#!/usr/bin/env python3
"""Two builds of storbench side by side on object stores, alternating, in one
run: what a change to the object engines' write path costs (beyond noise).

1. `storbench rados bench 5 write -t 16` with 4 MiB and 4 KiB objects in a
   pool of its own, as built (the C++ shim's no-copy writes) and with
   STORBENCH_RADOS_COPY=1 (librados' C API): MB/s, IOPS and client CPU per
   operation (bench/compare_rados_bench.py's runs);
2. `storbench swift-bench` on the Swift all-in-one and `storbench
   swift-bench --ioengine s3` on RGW, 4 KiB and 4 MiB objects, 16
   concurrent: PUT, GET and DELETE rates and CPU per operation
   (bench/compare_objects.py's runs).

Each row gives the median of each build's runs, the ratio new/base and its
spread over the rounds (min..max of new/base per round). The test servers
must be up and their env files sourced (scripts/testenv/ceph,
scripts/testenv/swift).

usage: bench/compare_builds_objects.py --base OLD --new NEW [--repeat 3] [--seconds 5] [--only rados,swift]
"""
import argparse
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

import compare_objects as objects
import compare_rados_bench as rados
from common import SCRATCH, table


def rados_case(binary, size, copy, secs, cwd):
    rados.STORBENCH = binary
    tool = "sb-copy" if copy else "storbench"
    mbs, iops, _lat, cpu = rados.bench(tool, secs, "write", size, cwd)
    rados.cleanup("storbench", cwd)
    return {"MB/s": mbs, "IOPS": iops, "CPU/op us": cpu * 1e6}


def http_case(binary, target, size, n, g, cwd, tag):
    objects.STORBENCH = binary
    r, cpu = objects.one("sb", target, size, n, g, 16, cwd, tag)
    return {**{f"{k}/s": v for k, v in r.items()}, "CPU/op us": cpu * 1e6}


def cases(secs):
    for size in ("4M", "4K"):
        for copy in (False, True):
            yield f"rados {size} write {'C API' if copy else 'as built'}", lambda b, d, s=size, c=copy: rados_case(b, s, c, secs, d)
    for target in ("swift", "s3"):
        for size, n, g in objects.SIZES:
            label = f"{target} {size // 1024}k"
            yield label, lambda b, d, t=target, s=size, n=n, g=g: http_case(b, t, s, n, g, d, f"{os.getpid()}{t}{s}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the build to compare against")
    ap.add_argument("--new", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--only", default="", help="cases whose label contains one of these words (e.g. rados,swift)")
    a = ap.parse_args()
    only = [w for w in a.only.split(",") if w]
    builds = {"base": Path(a.base), "new": Path(a.new)}
    for k in ("CEPH_CONF", "STORBENCH_SWIFT_AIO_AUTH", "STORBENCH_S3_ENDPOINT"):
        if k not in os.environ:
            raise SystemExit(f"{k} is not set: source the test servers' env files first")
    subprocess.run(["ceph", "osd", "pool", "create", rados.POOL, "32"], check=True, capture_output=True)
    res = {}
    try:
        with tempfile.TemporaryDirectory(prefix="sb-builds-obj-", dir=SCRATCH) as d:
            for i in range(a.repeat):
                order = list(builds.items()) if i % 2 == 0 else list(reversed(builds.items()))
                for label, fn in cases(a.seconds):
                    if only and not any(w in label for w in only):
                        continue
                    for name, binary in order:
                        res.setdefault(label, {}).setdefault(name, []).append(fn(binary, d))
                print(f"round {i + 1} of {a.repeat} done", flush=True)
    finally:
        subprocess.run(["ceph", "osd", "pool", "rm", rados.POOL, rados.POOL, "--yes-i-really-really-mean-it"], capture_output=True)
    rows = [["case", "figure", "base", "new", "new/base", "spread"]]
    for label, r in res.items():
        for fig in r["base"][0]:
            base = [x.get(fig, float("nan")) for x in r["base"]]
            new = [x.get(fig, float("nan")) for x in r["new"]]
            ratios = [n / b for n, b in zip(new, base) if b]
            mb, mn = statistics.median(base), statistics.median(new)
            spread = f"{min(ratios):.3f}..{max(ratios):.3f}" if ratios else "-"
            rows.append([label, fig, f"{mb:.1f}", f"{mn:.1f}", f"{mn / mb:.3f}" if mb else "-", spread])
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
