#!/usr/bin/env python3
"""The fleet's own cost.

1. Merging: the real coordinator (Fleet, FleetLink, the runner's merge)
   connected to N simulated agents (crates/fleet/examples/merge_load.rs: one
   worker each, one 20,000-operation interval report a second), N = 10, 100,
   1000: the coordinator's CPU per second of run (target: 1,000 agents within
   10% of one core) and its peak memory.
2. Overhead: 4 real agents on 127.0.0.x, one null-engine worker each at a
   fixed rate, against one local run of 4 workers at the same rate,
   alternately: total IOPS (target: equal), p99, and CPU per operation
   (agents' workers vs local workers).

Scratch (fleet directory, results) goes under /tmp; every process is bounded
in time and killed at the end.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, STORBENCH, build, table

MERGE_LOAD = ROOT / "target" / "release" / "examples" / "merge_load"


def merge(fleet, counts, seconds):
    server = subprocess.Popen([MERGE_LOAD, "serve", "127.0.0.1:7499", fleet], stderr=subprocess.DEVNULL)
    try:
        time.sleep(1)
        rows = [["agents", "coordinator CPU % of a core", "us per agent-second", "peak RSS MiB"]]
        for n in counts:
            out = subprocess.run([MERGE_LOAD, "coordinate", "127.0.0.1:7499", fleet, str(n), str(seconds)],
                                 capture_output=True, text=True, timeout=seconds + 120, check=True).stdout
            f = dict(zip(out.split()[0::2], out.split()[1::2]))
            rows.append([n, f["cpu_pct"], f["us_per_agent_second"], f["max_rss_mib"]])
        print(table(rows))
    finally:
        server.kill()


def result(out):
    r = json.loads((Path(out) / "result.json").read_text())
    j = r["jobs"][0]
    op = j["ops"][0]
    cpu = j["worker_cpu"]["user_ns"] + j["worker_cpu"]["sys_ns"]
    p99 = next(ns for p, ns in op["latency"]["percentiles"] if p == 99.0)
    return op["iops"], p99, cpu / max(op["ios"], 1)


def overhead(fleet, scratch, rate, seconds, repeat):
    agents = [subprocess.Popen([STORBENCH, "agent", "--listen", f"127.0.0.9{i}:7450", "--fleet-dir", fleet],
                               stderr=subprocess.DEVNULL) for i in range(1, 5)]
    try:
        time.sleep(1)
        job = ["--name", "n", "--ioengine", "null", "--rate_iops", str(rate), "--runtime", str(seconds), "--quiet"]
        rows = [["run", "IOPS", "p99 us", "worker CPU ns/op"]]
        ratios = []
        for k in range(repeat):
            local = f"{scratch}/local{k}"
            subprocess.run([STORBENCH, "run", "--results-dir", local, "--numjobs", "4", *job], check=True,
                           timeout=seconds + 60, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            far = f"{scratch}/fleet{k}"
            subprocess.run([STORBENCH, "run", "--results-dir", far, "--agents",
                            ",".join(f"127.0.0.9{i}" for i in range(1, 5)), "--fleet-dir", fleet, *job],
                           check=True, timeout=seconds + 60, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            (li, lp, lc), (fi, fp, fc) = result(local), result(far)
            rows.append([f"local 4 workers #{k + 1}", f"{li:.0f}", f"{lp / 1000:.1f}", f"{lc:.0f}"])
            rows.append([f"4 agents x 1 worker #{k + 1}", f"{fi:.0f}", f"{fp / 1000:.1f}", f"{fc:.0f}"])
            ratios.append(fi / li)
        print(table(rows))
        print(f"fleet/local IOPS: {', '.join(f'{r:.4f}' for r in ratios)}")
    finally:
        for a in agents:
            a.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--counts", default="10,100,1000")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rate", type=int, default=20000, help="fixed rate per worker in the overhead runs")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    build()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "storbench-fleet", "--example", "merge_load"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory(prefix="sb-fleet-bench-", dir="/tmp") as scratch:
        fleet = f"{scratch}/fleet"
        subprocess.run([STORBENCH, "agent", "--init", fleet], check=True, capture_output=True)
        merge(fleet, [int(c) for c in a.counts.split(",")], a.seconds)
        overhead(fleet, scratch, a.rate, a.seconds, a.repeat)


if __name__ == "__main__":
    sys.exit(main())
