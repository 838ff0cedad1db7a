#!/usr/bin/env python3
"""Cost of the object key space: prefill N objects and remove them again on
the null engine (one worker, 4 KiB), for N from 10^4 up, so the time per
object can be seen to stay flat. Prints seconds, ns per object and peak
memory. Runs in a scratch directory under /tmp.

    python3 bench/object_scale.py [--max 10000000] [--bin target/release/storbench]
"""
import argparse, os, subprocess, tempfile, time

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=10_000_000)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "storbench"))
    a = ap.parse_args()
    print(f"{'objects':>12}  {'seconds':>8}  {'ns/object':>9}  {'peak MB':>8}")
    n = 10_000
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        while n <= a.max:
            cmd = ["/usr/bin/time", "-f", "%M", a.bin, "run", "--quiet", "--name", "o", "--ioengine", "null", "--objects", str(n),
                   "--object_size", "4k", "--prefill", "1", "--rw", "read", "--number_ios", "1", "--results-dir", os.path.join(d, str(n))]
            t0 = time.monotonic()
            r = subprocess.run(cmd, capture_output=True, text=True)
            secs = time.monotonic() - t0
            if r.returncode != 0:
                raise SystemExit(r.stderr)
            peak_kb = int(r.stderr.strip().splitlines()[-1])
            # prefill + cleanup: two operations per object
            print(f"{n:>12}  {secs:>8.2f}  {secs / (2 * n) * 1e9:>9.0f}  {peak_kb / 1024:>8.1f}")
            n *= 10

if __name__ == "__main__":
    main()
