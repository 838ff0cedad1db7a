#!/usr/bin/env python3
"""What verification costs: storbench vs fio writing a file and reading it
back with each checksum, and storbench's own count of its checking time.

Each case writes SIZE sequentially in BS blocks to a /dev/shm file (so the
CPU, not a device, is what is measured), with verify= and the read-back
pass after it (fio's default do_verify=1). Both tools run alternately,
REPEAT times; the table shows the medians of each tool's process CPU
(user + sys, from wait4), their ratio with its spread (min..max over the
repeats), and storbench's checking time (stamping + checking, its
result.json verify.cpu_ns) per GiB stamped or checked.

usage: bench/verify.py [--size 256m] [--repeat 3]
"""
import argparse
import json
import statistics
import tempfile
from pathlib import Path

from common import STORBENCH, build, cpu_seconds, run, table

CASES = [(c, bs) for c in ("crc32c", "xxhash", "sha256") for bs in ("4k", "128k")]


def fio(cwd, checksum, bs, size):
    _, ru = run(["fio", "--name=v", "--filename=/dev/shm/sb-verify.dat", f"--size={size}", "--rw=write", f"--bs={bs}",
                 "--ioengine=psync", f"--verify={checksum}", "--output-format=json"], cwd)
    return cpu_seconds(ru), None


def storbench(cwd, checksum, bs, size):
    _, ru = run([str(STORBENCH), "run", "--quiet", "--results-dir", "sb", "--name", "v", "--filename", "/dev/shm/sb-verify.dat",
                 "--size", size, "--rw", "write", "--bs", bs, "--ioengine", "psync", "--verify", checksum, "--allow_overwrite", "1"], cwd)
    v = json.loads((cwd / "sb" / "result.json").read_text())["jobs"][0]["verify"]
    assert v["failed"] == [0, 0, 0, 0], v
    gib = (v["stamped_bytes"] + v["checked_bytes"]) / 2**30
    return cpu_seconds(ru), v["cpu_ns"] / 1e6 / gib


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="256m")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    build()
    rows = [["checksum", "bs", "fio CPU s", "sb CPU s", "sb/fio", "spread", "sb checking ms/GiB"]]
    with tempfile.TemporaryDirectory(prefix="sb-verify-") as d:
        cwd = Path(d)
        try:
            for checksum, bs in CASES:
                res = {"fio": [], "sb": []}
                for i in range(a.repeat):
                    order = (("fio", fio), ("sb", storbench)) if i % 2 == 0 else (("sb", storbench), ("fio", fio))
                    for name, tool in order:
                        res[name].append(tool(cwd, checksum, bs, a.size))
                ratios = [s[0] / f[0] for s, f in zip(res["sb"], res["fio"])]
                med = lambda xs: statistics.median(xs)
                rows.append([checksum, bs, f"{med([x[0] for x in res['fio']]):.2f}", f"{med([x[0] for x in res['sb']]):.2f}",
                             f"{med(ratios):.2f}", f"{min(ratios):.2f}..{max(ratios):.2f}", f"{med([x[1] for x in res['sb']]):.0f}"])
        finally:
            Path("/dev/shm/sb-verify.dat").unlink(missing_ok=True)
    print(f"write {a.size} sequentially + read back and check, psync on /dev/shm, {a.repeat} alternating repeats (medians)")
    print(table(rows))


if __name__ == "__main__":
    main()
