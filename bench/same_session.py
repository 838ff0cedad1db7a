#!/usr/bin/env python3
"""storbench and fio beside CPU burners started in the SAME session.

With the kernel's autogroup scheduling each session is one scheduling
group. fio's jobs call setsid() and escape the session that started them;
a storbench that kept its workers in the caller's session shared that
session's CPU with whatever else it ran (a build), ranked by nice. Here
the burners (busy loops, one per CPU, at the bench's own nice) and both
tools are children of this script in its session: unlike bench/common.py,
nothing is started with setsid, so storbench's own session (or the lack of
one) is what is measured.

Both tools run each job file alternately (which goes first swaps every
round), REPEAT rounds: median IOPS per tool, their ratio and the ratio's
spread over the rounds. With --bin BIN (repeatable: e.g. a build from
before the change and one after) each binary is measured in the same
rounds; without, the release build. A run with no burners (--burners 0)
is the baseline.

usage: nice -n 10 bench/same_session.py [--bin BIN]... [--repeat 3] [--runtime 5] [--burners N]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path

import fio_examples
from common import SCRATCH, STORBENCH, build, fio_json, fmt_ns, table

JOBS = {
    # fio's examples/fio-rand-read.fio, smaller: buffered 4k random reads, cached.
    "buffered randread 4k libaio qd16": "[global]\nfilename={file}\nsize=256m\nruntime={runtime}\ntime_based\n"
    "ioengine=libaio\niodepth=16\n[j]\nrw=randread\nbs=4k\n",
    # fio's examples/butterfly.fio: two direct readers walking the file from
    # both ends, flow control holding them together.
    "butterfly (flow, direct)": "[global]\nfilename={file}\nsize=256m\nbs=4k\ndirect=1\nruntime={runtime}\ntime_based\n"
    "[forward]\nrw=read\nflow=2\n[backward]\nrw=read:-8k\nflow=2\n",
}


def burners(n):
    """n busy loops in this session (no setsid), at this process's nice."""
    return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]


def one(cmd, cwd):
    """Run a tool in this session; (IOPS of all jobs, the largest p50)."""
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({out.returncode}): {out.stderr}")
    return fio_examples.totals(fio_json(out.stdout))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", action="append", help="a storbench binary (repeatable); default: the release build")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=5)
    ap.add_argument("--burners", type=int, default=os.cpu_count())
    a = ap.parse_args()
    bins = a.bin or [str(STORBENCH)]
    if not a.bin:
        build()
    work = Path(tempfile.mkdtemp(prefix="sb-session-", dir=SCRATCH))
    data = work / "data.dat"
    subprocess.run(["fio", "--name=lay", f"--filename={data}", "--size=256m", "--rw=write", "--bs=1m", "--output=/dev/null"], check=True)
    tools = [("fio", ["fio"])] + [(f"storbench {Path(b).name if len(bins) == 1 else b}", [b, "fio"]) for b in bins]
    env_note = f"autogroup={Path('/proc/sys/kernel/sched_autogroup_enabled').read_text().strip()}, nice={os.nice(0)}, burners={a.burners}"
    busy = burners(a.burners)
    results = {name: {t: [] for t, _ in tools} for name in JOBS}
    try:
        for r in range(a.repeat):
            for name, text in JOBS.items():
                job = work / "job.fio"
                job.write_text(text.format(file=data, runtime=a.runtime))
                order = tools if r % 2 == 0 else list(reversed(tools))
                for tool, cmd in order:
                    results[name][tool].append(one(cmd + ["--output-format=json", str(job)], work))
    finally:
        for b in busy:
            b.kill()
            b.wait()
    rows = [["job", "tool", "IOPS (median)", "min..max", "p50", "/ fio", "ratio spread"]]
    for name in JOBS:
        fio = [x[0] for x in results[name]["fio"]]
        for tool, _ in tools:
            iops = [x[0] for x in results[name][tool]]
            p50 = statistics.median(x[1] for x in results[name][tool])
            ratios = [s / f for s, f in zip(iops, fio)]
            rows.append(
                [name, tool, f"{statistics.median(iops):.0f}", f"{min(iops):.0f}..{max(iops):.0f}", fmt_ns(p50),
                 f"{statistics.median(ratios):.3f}", f"{min(ratios):.2f}..{max(ratios):.2f}"]
            )
    print(env_note)
    print(table(rows))
    (work / "results.json").write_text(json.dumps(results))
    data.unlink()


if __name__ == "__main__":
    main()
