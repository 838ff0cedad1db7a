#!/usr/bin/env python3
"""storbench vs the reference object clients, side by side, same concurrency
and sizes: `storbench swift-bench` vs swift-bench 2.0.0 (PyPI) on the Swift
all-in-one, and `storbench swift-bench --ioengine s3` vs a boto3 loop
(bench/s3_loop.py) or, with --s3-ref crt, the AWS CRT's C S3 client
(bench/s3_crt_loop.py, awscrt from PyPI; plain http), or --s3-ref rclone
(bench/s3_rclone_loop.py, Debian's rclone) on RGW. PUT n, GET m at random, DELETE n; 4 KiB and 4 MiB
objects, 16 concurrent. Rates per phase and client CPU per operation (wait4
rusage of the whole run), medians of alternating runs.

usage: bench/compare_objects.py [--repeat N] [--concurrency 16] [--targets swift,s3,s3-https] [--s3-ref boto3|crt|rclone]
(starts the test servers if they are not up; installs swift-bench and boto3
into bench/.venv from PyPI)
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import SCRATCH, ROOT, STORBENCH, Hung, build, cpu_seconds, run, table

VENV = ROOT / "bench" / ".venv"
SIZES = [(4096, 1000, 3000), (4 << 20, 60, 180)]  # size, objects, gets


def venv():
    if not (VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    if not (VENV / "bin" / "swift-bench").exists() or not list(VENV.glob("lib/python*/site-packages/awscrt")):
        subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", "swift-bench==2.0.0", "boto3", "awscrt"], check=True)


def source(script):
    env_file = subprocess.run([str(ROOT / "scripts/testenv" / script), "up"], check=True, capture_output=True, text=True).stdout.strip()
    for line in open(env_file):
        k, v = line.removeprefix("export ").strip().split("=", 1)
        os.environ[k] = v


def rates(out):
    """{PUTS, GETS, DEL: ops/s} from swift-bench-style FINAL lines."""
    r = {}
    for m in re.finditer(r"(\d+) (PUTS|GETS|DEL) \*\*FINAL\*\* \[(\d+) failures\], ([\d.]+)/s", out):
        if int(m.group(3)) > 0:
            print(f"  warning: {m.group(3)} failed {m.group(2)}", flush=True)
        r[m.group(2)] = float(m.group(4))
    return r


def one(tool, target, size, n, g, c, cwd, tag, s3_ref="boto3"):
    limit = 900
    if target == "swift":
        auth = ["-A", os.environ["STORBENCH_SWIFT_AIO_AUTH"], "-U", os.environ["STORBENCH_SWIFT_AIO_USER"], "-K", os.environ["STORBENCH_SWIFT_AIO_KEY"]]
        common_args = ["-c", str(c), "-s", str(size), "-n", str(n), "-g", str(g)]
        if tool == "ref":
            cmd = [str(VENV / "bin" / "swift-bench"), *auth, *common_args, "-C", "1"]
        else:
            cmd = [str(STORBENCH), "swift-bench", *auth, *common_args, "-C", "1", "--container", f"sbcmp{tag}", "--results-dir", f"sb-{tag}"]
        env = None
    else:
        env = {**os.environ, "AWS_ACCESS_KEY_ID": os.environ["STORBENCH_S3_ACCESS_KEY"], "AWS_SECRET_ACCESS_KEY": os.environ["STORBENCH_S3_SECRET_KEY"]}
        endpoint = os.environ["STORBENCH_S3_ENDPOINT"]
        if target == "s3-https":
            # Both tools trust the test CA through the same variable.
            endpoint = os.environ["STORBENCH_S3_TLS_ENDPOINT"]
            env["AWS_CA_BUNDLE"] = os.environ["STORBENCH_TLS_CA"]
        if tool == "ref":
            loop = {"crt": "bench/s3_crt_loop.py", "rclone": "bench/s3_rclone_loop.py"}.get(s3_ref, "bench/s3_loop.py")
            cmd = [str(VENV / "bin" / "python"), str(ROOT / loop), "--endpoint", endpoint, "--bucket", f"sbref{tag}",
                   "-c", str(c), "-s", str(size), "-n", str(n), "-g", str(g)]
        else:
            cmd = [str(STORBENCH), "swift-bench", "--ioengine", "s3", "--endpoint", endpoint, "--bucket", f"sbcmp{tag}", "-C", "1",
                   "-c", str(c), "-s", str(size), "-n", str(n), "-g", str(g), "--results-dir", f"sb-{tag}"]
    # swift-bench logs its FINAL lines to stderr; exec keeps one process to measure.
    cmd = ["sh", "-c", 'exec "$0" "$@" 2>&1', *cmd]
    try:
        out, ru = run(cmd, cwd, env, limit)
    except Hung as e:
        print(f"  {e}", flush=True)
        return {}, float("nan")
    return rates(out), cpu_seconds(ru) / (2 * n + g)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--targets", default="swift,s3,s3-https", help="comma-separated: swift, s3, s3-https")
    ap.add_argument("--s3-ref", default="boto3", choices=["boto3", "crt", "rclone"],
                    help="the reference S3 client (crt: plain http only; rclone GETs each object once, so both tools get n GETs)")
    a = ap.parse_args()
    if a.s3_ref == "crt" and "s3-https" in a.targets:
        raise SystemExit("--s3-ref crt drives plain http only: use --targets s3")
    build()
    venv()
    source("ceph")
    source("swift")
    rows = [["target", "size", "phase", "ref ops/s", "sb ops/s", "ratio", "ref CPU/op", "sb CPU/op", "CPU ratio"]]
    with tempfile.TemporaryDirectory(prefix="sb-obj-", dir=SCRATCH) as d:
        for target in a.targets.split(","):
            ref_name = "swift-bench" if target == "swift" else {"crt": "AWS CRT", "rclone": "rclone"}.get(a.s3_ref, "boto3")
            for size, n, g in SIZES:
                g = n if a.s3_ref == "rclone" and target != "swift" else g
                res = {"ref": [], "sb": []}
                for i in range(a.repeat):
                    for tool in (("ref", "sb") if i % 2 == 0 else ("sb", "ref")):
                        res[tool].append(one(tool, target, size, n, g, a.concurrency, d, f"{os.getpid()}{i}{tool}", a.s3_ref))
                cpu = {t: statistics.median(x[1] for x in v) for t, v in res.items()}
                for phase in ("PUTS", "GETS", "DEL"):
                    med = {t: statistics.median(x[0].get(phase, float("nan")) for x in v) for t, v in res.items()}
                    rows.append([f"{target} ({ref_name})", f"{size // 1024}K" if size < 1 << 20 else f"{size >> 20}M", phase,
                                 f"{med['ref']:.1f}", f"{med['sb']:.1f}", f"{med['sb'] / med['ref']:.3f}",
                                 f"{cpu['ref'] * 1e6:.0f}us", f"{cpu['sb'] * 1e6:.0f}us", f"{cpu['sb'] / cpu['ref']:.3f}"])
                    print(table(rows[:1] + rows[-1:]).splitlines()[-1], flush=True)
    print()
    print(table(rows))


if __name__ == "__main__":
    main()
