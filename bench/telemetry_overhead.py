#!/usr/bin/env python3
"""What watching the hosts costs a run: the same binary with telemetry (the
default) and with --no-telemetry, alternating, in one run.

Rows: null engine 4k random read QD1 and QD32 (client CPU per operation of
the whole process, from wait4's rusage, and IOPS) with each setting; and the
sampler's own CPU per second of the run, as result.json records it
(`telemetry.sources[].sampler_cpu`).

usage: bench/telemetry_overhead.py [--repeat 5] [--runtime 5]
"""
import argparse
import json
import statistics
import tempfile
from pathlib import Path

from common import SCRATCH, STORBENCH, cpu_seconds, run, table
from compare_builds import null_args


def once(args, cwd, qd, runtime):
    out, ru = run([str(STORBENCH), "run", "--output-format", "json", "--quiet", "--results-dir", "sb-results/last", "--force",
                   *null_args(qd, runtime), *args], cwd)
    doc = json.loads(out)
    ios = sum(o["ios"] for j in doc["jobs"] for o in j["ops"])
    iops = sum(o["iops"] for j in doc["jobs"] for o in j["ops"])
    sampler = None
    t = json.loads((Path(cwd) / "sb-results/last/result.json").read_text()).get("telemetry")
    if t:
        src = t["sources"][0]
        cpu = src.get("sampler_cpu", {})
        secs = sum(src["duration"]) or 1.0
        sampler = (cpu.get("user_ns", 0) + cpu.get("sys_ns", 0)) / secs / 1e6
    return cpu_seconds(ru) / ios * 1e9, iops, sampler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--runtime", type=int, default=5)
    a = ap.parse_args()
    settings = {"telemetry": [], "off": ["--no-telemetry"]}
    rows = [["run", "figure", "off", "telemetry", "telemetry/off", "spread"]]
    sampler_ms = []
    with tempfile.TemporaryDirectory(prefix="sb-telemetry-", dir=SCRATCH) as d:
        for qd in (1, 32):
            res = {k: [] for k in settings}
            for i in range(a.repeat):
                order = list(settings.items()) if i % 2 == 0 else list(reversed(settings.items()))
                for name, args in order:
                    ns, iops, sampler = once(args, d, qd, a.runtime)
                    res[name].append((ns, iops))
                    if sampler is not None:
                        sampler_ms.append(sampler)
            for k, label in ((0, "ns/op"), (1, "IOPS")):
                off = [r[k] for r in res["off"]]
                on = [r[k] for r in res["telemetry"]]
                ratios = [n / b for n, b in zip(on, off)]
                mo, mn = statistics.median(off), statistics.median(on)
                rows.append([f"null QD{qd}", label, f"{mo:.0f}", f"{mn:.0f}", f"{mn / mo:.3f}", f"{min(ratios):.3f}..{max(ratios):.3f}"])
            print(table(rows), flush=True)
    if sampler_ms:
        print(f"\nsampler CPU: {statistics.median(sampler_ms):.2f} ms per second of run (median of {len(sampler_ms)}; "
              f"{min(sampler_ms):.2f}..{max(sampler_ms):.2f})")


if __name__ == "__main__":
    main()
