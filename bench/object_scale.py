#!/usr/bin/env python3
"""Cost of the object key space on the null engine (one worker), for N from
10^4 up to --max objects, so the cost per object and per operation can be
seen to stay flat:

1. prefill N objects (4 KiB) and remove them again: seconds, ns per object,
   peak memory;
2. ns per generated operation in the measured phase, on a full key space
   (prefilled; create:50,read:50, so every create looks for a free key and
   finds none) and on a nearly empty one (no prefill; create:1,delete:1,
   read:8, so reads look for the few live keys), sizes 4k-1m (a byte of
   size per object), --ops operations each: the measured phase's time over
   its operations (one worker, never waiting on the null engine).

    python3 bench/object_scale.py [--max 100000000] [--ops 2000000] [--bin target/release/storbench]
"""
import argparse, json, os, subprocess, tempfile, time


def run(binary, d, tag, args):
    out = os.path.join(d, tag)
    cmd = ["/usr/bin/time", "-f", "%M", binary, "run", "--quiet", "--name", "o", "--ioengine", "null", "--results-dir", out] + args
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    secs = time.monotonic() - t0
    if r.returncode != 0:
        raise SystemExit(r.stderr)
    peak_kb = int(r.stderr.strip().splitlines()[-1])
    with open(os.path.join(out, "result.json")) as f:
        job = json.load(f)["jobs"][0]
    ios = sum(o["ios"] for o in job["ops"])
    # The measured phase alone (the worker's CPU would count the prefill too):
    # one worker on the null engine is busy all of it.
    return secs, peak_kb / 1024, ios, job["runtime_ns"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=100_000_000)
    ap.add_argument("--ops", type=int, default=2_000_000)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "storbench"))
    a = ap.parse_args()
    print(f"{'objects':>12}  {'fill+clean s':>12}  {'ns/object':>9}  {'peak MB':>8}  {'full ns/op':>10}  {'sparse ns/op':>12}  {'peak MB':>8}")
    n = 10_000
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        while n <= a.max:
            common = ["--objects", str(n)]
            secs, peak, _, _ = run(a.bin, d, f"fill{n}", common + ["--object_size", "4k", "--prefill", "1", "--rw", "read", "--number_ios", "1"])
            mixed = ["--object_size", "4k-1m", "--number_ios", str(a.ops)]
            _, p1, ios1, cpu1 = run(a.bin, d, f"full{n}", common + mixed + ["--prefill", "1", "--object_ops", "create:50,read:50"])
            _, p2, ios2, cpu2 = run(a.bin, d, f"sparse{n}", common + mixed + ["--object_ops", "create:1,delete:1,read:8"])
            # prefill + cleanup: two operations per object; per op: the measured phase over its operations
            print(f"{n:>12}  {secs:>12.2f}  {secs / (2 * n) * 1e9:>9.0f}  {peak:>8.1f}  {cpu1 / max(ios1, 1):>10.0f}  {cpu2 / max(ios2, 1):>12.0f}  {max(p1, p2):>8.1f}")
            n *= 10


if __name__ == "__main__":
    main()
