#!/usr/bin/env python3
"""Memory does not grow with run length: peak RSS of a short and a long
null-engine run (4 workers, QD32, per-second series kept).

usage: bench/memory.py [--short S] [--long S]     (defaults 10 and 600)
"""
import argparse
import tempfile

from common import SCRATCH, STORBENCH, build, run, table


def peak_rss_mib(seconds, cwd):
    _, ru = run([str(STORBENCH), "run", "--quiet", "--results-dir", f"sb-results/{seconds}", "--name", "mem", "--ioengine", "null",
                 "--rw", "randrw", "--bssplit", "4k/50:64k/50", "--size", "1g", "--iodepth", "32", "--numjobs", "4",
                 "--runtime", str(seconds), "--time_based", "--fsync", "16"], cwd)
    return ru.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--short", type=int, default=10)
    ap.add_argument("--long", type=int, default=600)
    a = ap.parse_args()
    build()
    with tempfile.TemporaryDirectory(prefix="sb-mem-", dir=SCRATCH) as d:
        s = peak_rss_mib(a.short, d)
        l = peak_rss_mib(a.long, d)
    rows = [["run", "peak RSS MiB"], [f"{a.short} s", f"{s:.1f}"], [f"{a.long} s", f"{l:.1f}"], ["long/short", f"{l / s:.3f}"]]
    print(table(rows))
    print(f"no more memory for the long run (within 5%): {'yes' if l <= s * 1.05 else 'NO'}")


if __name__ == "__main__":
    main()
