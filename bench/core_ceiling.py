#!/usr/bin/env python3
"""The per-core ceiling: storbench against fio and fio's t/io_uring on one
1 GiB file in /dev/shm (page cache only: what is measured is the client's
cost per I/O), 4 KiB random reads, one thread, in one run, alternating.

- psync QD1: storbench vs fio (goal >= 1.2x fio), with t/io_uring -S1
  (preadv2 in a loop) as the ceiling.
- io_uring QD32: storbench vs the best of t/io_uring's modes (batch 32 or
  1, registered buffers and files or not; buffered, no polling: tmpfs has
  neither O_DIRECT nor polled I/O) and vs fio (goal >= 0.95x the best
  t/io_uring mode, at no more CPU per I/O).

t/io_uring is built from Debian's fio source package (apt-get source, with a
private deb-src list under the scratch directory: the system's apt setup is
not touched), or from --fio-src DIR; never committed.

IOPS: each tool's mean over its run (t/io_uring: the mean of its per-second
lines); CPU per I/O from wait4's rusage of the whole process.

--cpu N pins every tool to CPU N with taskset: a literal per-core ceiling.
The io-wq threads a ring starts took the submitting thread's mask on the
kernel this was measured on (6.18: Cpus_allowed_list of iou-wrk-* in
/proc/PID/task/*/status); kernels that set it from the cpuset alone leave
them free, so check there before reading a pinned QD32 figure as one core's. Unpinned, a QD32 ring on tmpfs is a two-thread pipeline (every read
is handed to an io-wq thread), paced by where the scheduler puts that thread.

usage: bench/core_ceiling.py [--runtime S] [--repeat N] [--fio-src DIR] [--cpu N]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tarfile
from pathlib import Path

from common import SCRATCH, STORBENCH, build, cpu_seconds, run, table

FILE = "/dev/shm/sb-core-ceiling.dat"
APT = Path(SCRATCH) / "sb-fio-src"
# The taskset prefix of every measured command (--cpu).
PIN = []
MODES = {
    "b32 fixed": ["-s32", "-c32", "-B1", "-F1", "-X1"],
    "b32 plain": ["-s32", "-c32", "-B0", "-F0", "-X0"],
    "b1 fixed": ["-s1", "-c1", "-B1", "-F1", "-X1"],
    "b1 plain": ["-s1", "-c1", "-B0", "-F0", "-X0"],
}


def fio_source():
    """fio's source tree from Debian's source package, unpacked once."""
    tree = APT / "tree"
    if (tree / "t" / "io_uring.c").exists():
        return tree
    (APT / "lists" / "partial").mkdir(parents=True, exist_ok=True)
    (APT / "sources.list").write_text(
        "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main\n")
    o = [f"-oDir::Etc::SourceList={APT / 'sources.list'}", "-oDir::Etc::SourceParts=/dev/null",
         f"-oDir::State::Lists={APT / 'lists'}", "-oAPT::Sandbox::User=root", "-qq"]
    subprocess.run(["apt-get", *o, "update"], check=True)
    subprocess.run(["apt-get", *o, "source", "--download-only", "fio"], cwd=APT, check=True)
    orig = next(APT.glob("fio_*.orig.tar.*"))
    with tarfile.open(orig) as t:
        t.extractall(APT / "unpacked")
    next((APT / "unpacked").iterdir()).rename(tree)
    return tree


def t_io_uring(src):
    binary = src / "t" / "io_uring"
    if not binary.exists():
        subprocess.run(["./configure", "--disable-native"], cwd=src, check=True, capture_output=True)
        subprocess.run(["make", "-j2", "t/io_uring"], cwd=src, check=True, capture_output=True)
    return binary


def per_second_iops(out):
    vals = []
    for m in re.finditer(r"^IOPS=([\d.]+)([KM]?)", out, re.M):
        vals.append(float(m.group(1)) * {"": 1, "K": 1e3, "M": 1e6}[m.group(2)])
    return statistics.mean(vals) if vals else float("nan")


def run_t(binary, args, secs, cwd):
    out, ru = run([*PIN, str(binary), "-b4096", "-p0", "-O0", "-n1", f"-r{secs}", *args, FILE], cwd)
    iops = per_second_iops(out)
    return iops, cpu_seconds(ru) / max(iops * secs, 1)


def run_fio(engine, qd, secs, cwd):
    out, ru = run([*PIN, "fio", "--output-format=json", "--name=r", f"--filename={FILE}", "--rw=randread", "--bs=4k",
                   f"--ioengine={engine}", f"--iodepth={qd}", f"--runtime={secs}", "--time_based=1", "--size=1g"], cwd)
    r = json.loads(out[out.index("{"):])["jobs"][0]["read"]
    return r["iops"], cpu_seconds(ru) / max(r["total_ios"], 1)


def run_sb(engine, qd, secs, cwd):
    out, ru = run([*PIN, str(STORBENCH), "run", "--name", "r", "--filename", FILE, "--size", "1g", "--rw", "randread", "--bs", "4k",
                   "--ioengine", engine, "--iodepth", str(qd), "--runtime", str(secs), "--time_based", "1", "--allow_overwrite", "1",
                   "--output-format", "fio-json", "--quiet", "--results-dir", "sb-results/last"], cwd)
    r = json.loads(out[out.index("{"):out.rindex("}") + 1])["jobs"][0]["read"]
    return r["iops"], cpu_seconds(ru) / max(r["total_ios"], 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--fio-src", default=None, help="a fio source tree (default: Debian's source package)")
    ap.add_argument("--cpu", type=int, default=None, help="pin every tool to this CPU (taskset)")
    a = ap.parse_args()
    if a.cpu is not None:
        PIN.extend(["taskset", "-c", str(a.cpu)])
    build()
    binary = t_io_uring(Path(a.fio_src) if a.fio_src else fio_source())
    with open(FILE, "wb") as f:
        block = os.urandom(1 << 20)
        for _ in range(1024):
            f.write(block)
    cases = {
        "psync qd1": [("storbench", lambda d: run_sb("psync", 1, a.runtime, d)), ("fio", lambda d: run_fio("psync", 1, a.runtime, d)),
                      ("t/io_uring -S1", lambda d: run_t(binary, ["-S1", "-d1"], a.runtime, d))],
        "io_uring qd32": [("storbench", lambda d: run_sb("io_uring", 32, a.runtime, d)),
                          ("fio", lambda d: run_fio("io_uring", 32, a.runtime, d))]
                         + [(f"t/io_uring {m}", lambda d, m=m: run_t(binary, ["-d32", *MODES[m]], a.runtime, d)) for m in MODES],
    }
    res = {(c, t): [] for c, tools in cases.items() for t, _ in tools}
    cwd = Path(SCRATCH) / "sb-core-ceiling"
    cwd.mkdir(exist_ok=True)
    try:
        for i in range(a.repeat):
            for c, tools in cases.items():
                order = tools if i % 2 == 0 else tools[::-1]
                for t, fn in order:
                    res[(c, t)].append(fn(cwd))
            print(f"round {i + 1} of {a.repeat} done", flush=True)
    finally:
        os.unlink(FILE)
    rows = [["case", "tool", "IOPS (median)", "range", "CPU/IO", "storbench / this (IOPS)", "rounds"]]
    for c, tools in cases.items():
        sb = res[(c, "storbench")]
        for t, _ in tools:
            r = res[(c, t)]
            ratios = [s[0] / x[0] for s, x in zip(sb, r)]
            rows.append([c, t, f"{statistics.median(x[0] for x in r) / 1e3:.1f}k",
                         f"{min(x[0] for x in r) / 1e3:.0f}-{max(x[0] for x in r) / 1e3:.0f}k",
                         f"{statistics.median(x[1] for x in r) * 1e9:.0f}ns",
                         "" if t == "storbench" else f"{statistics.median(ratios):.3f}",
                         "" if t == "storbench" else f"{min(ratios):.2f}-{max(ratios):.2f}"])
    print()
    print(table(rows))
    # What fio's psync would have to fall to for a given storbench ratio:
    # the bare preadv2 loop is as fast as a pread loop gets, so no tool
    # doing the same reads (and timing them) is above it.
    loop = [t[0] / f[0] for t, f in zip(res[("psync qd1", "t/io_uring -S1")], res[("psync qd1", "fio")])]
    print(f"\npsync: the bare loop (t/io_uring -S1) / fio = {statistics.median(loop):.3f} "
          f"({min(loop):.2f}-{max(loop):.2f}): the most storbench / fio could be here")


if __name__ == "__main__":
    main()
