#!/usr/bin/env python3
"""A small tool that drives fio the way CBT, kubestr and in-house scripts do:
it finds `fio` on PATH, checks its version, writes a job file, runs
`fio --output-format=json --output=FILE job.fio`, and reads the fields such
tools read. It knows nothing of storbench: the drop-in test points PATH at a
`fio` link to storbench and checks what this tool prints.

Usage: fio_tool.py WORKDIR  -> one line per job and direction:
  job=NAME dir=read iops=... bw_kib=... ios=... clat_p50_ns=... clat_p99_ns=... lat_mean_ns=... runtime_ms=...
and a first line: version=fio-X.Y
"""
import json
import re
import subprocess
import sys
from pathlib import Path

JOB = """
[global]
ioengine=libaio
direct=0
size=8m
bs=4k
filename=tool.dat
[writer]
rw=write
[reader]
stonewall
rw=randread
iodepth=4
"""


def main() -> int:
    work = Path(sys.argv[1])
    version = subprocess.run(["fio", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if not re.match(r"^fio-(\d+)\.(\d+)", version):
        print(f"not fio: {version!r}", file=sys.stderr)
        return 2
    print(f"version={version}")
    (work / "tool.fio").write_text(JOB)
    out = work / "tool.json"
    run = subprocess.run(["fio", "--output-format=json", f"--output={out}", "tool.fio"], cwd=work, capture_output=True, text=True)
    if run.returncode != 0:
        print(f"fio failed with {run.returncode}: {run.stderr}", file=sys.stderr)
        return 3
    doc = json.loads(out.read_text())
    for job in doc["jobs"]:
        for d in ("read", "write"):
            s = job[d]
            if s["total_ios"] == 0:
                continue
            pct = s["clat_ns"]["percentile"]
            print(
                f"job={job['jobname']} dir={d} iops={s['iops']:.1f} bw_kib={s['bw']} ios={s['total_ios']}"
                f" clat_p50_ns={pct['50.000000']} clat_p99_ns={pct['99.000000']}"
                f" lat_mean_ns={s['lat_ns']['mean']:.0f} runtime_ms={s['runtime']}"
                f" iops_mean={s['iops_mean']:.1f} error={job['error']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
