#!/usr/bin/env python3
"""fio's slat/clat split on libaio, fio beside storbench's drop-in.

    python3 bench/slat_split.py [--rounds 3] [--dir /tmp/sb-slat]

Runs a direct 4 KiB libaio randread (3 s, time based) at iodepth 1 and 16,
alternating fio and `storbench fio` on one 64 MiB file, and prints per tool
the median IOPS, clat p50, lat mean and slat N, and each round's clat p50
(at QD1 an I/O often completes inside io_submit, so the p50 is bimodal in
both tools). Scratch files go under --dir (never committed).
"""
import argparse, json, os, statistics, subprocess
from common import SCRATCH, STORBENCH, build

JOB = "[j]\nfilename={f}\nsize=64m\nbs=4k\nrw=randread\nioengine=libaio\ndirect=1\niodepth={qd}\nruntime=3\ntime_based\n"


def run(cmd, job, cwd):
    out = subprocess.run(cmd + ["--output-format=json", job], capture_output=True, text=True, cwd=cwd).stdout
    r = json.loads(out[out.index("{"):])["jobs"][0]["read"]
    return r["iops"], r["clat_ns"]["percentile"]["50.000000"] / 1e3, r["lat_ns"]["mean"] / 1e3, r["slat_ns"]["N"]


def main():
    a = argparse.ArgumentParser()
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--dir", default=os.path.join(SCRATCH, "sb-slat"))
    args = a.parse_args()
    build()
    os.makedirs(args.dir, exist_ok=True)
    tools = {"fio": ["fio"], "storbench": [str(STORBENCH), "fio"]}
    for qd in (1, 16):
        job = os.path.join(args.dir, f"qd{qd}.fio")
        with open(job, "w") as f:
            f.write(JOB.format(f=os.path.join(args.dir, "x.dat"), qd=qd))
        rows = {t: [] for t in tools}
        for _ in range(args.rounds):
            for t, cmd in tools.items():
                rows[t].append(run(cmd, job, args.dir))
        for t, v in rows.items():
            med = lambda k: statistics.median(x[k] for x in v)
            print(f"QD{qd} {t:9}: IOPS {med(0):8.0f}  clat p50 {med(1):7.1f} us  lat mean {med(2):7.1f} us  "
                  f"slat N {v[0][3]}  rounds' clat p50 {[round(x[1], 1) for x in v]}")


if __name__ == "__main__":
    main()
