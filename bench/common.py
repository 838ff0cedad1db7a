"""Shared helpers for the benchmarks: run a tool, get its JSON and its CPU cost.

Both tools run as child processes; os.wait4 gives each child's own rusage, so
CPU time and peak memory are measured the same way for fio and storbench.
"""
import atexit
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORBENCH = Path(os.environ.get("STORBENCH_BIN", ROOT / "target" / "release" / "storbench"))
# Scratch files and results directories of benchmark runs go here, never into
# the repository (STORBENCH_BENCH_DIR overrides, e.g. to test another disk).
SCRATCH = os.environ.get("STORBENCH_BENCH_DIR", "/tmp")


def build():
    # A binary named by STORBENCH_BIN is measured as it is (another build).
    if "STORBENCH_BIN" not in os.environ:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "storbench"], cwd=ROOT, check=True)


def descendants(pid):
    """The process ids below `pid` (children, theirs, ...), from /proc."""
    parent = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    # The name in parentheses may hold spaces: split after it.
                    parent[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


class Hung(Exception):
    """A tool did not finish within its time limit (it was killed)."""


def run(cmd, cwd, env=None, limit=None):
    """Run cmd; return (stdout, rusage). With `limit` seconds, a tool that has
    not finished by then is killed and Hung is raised: benchmarks stop by
    themselves.

    Each tool runs in a session of its own, as fio runs each job (fio's
    backend calls setsid() in every job process): with the kernel's
    autogroup scheduling (on by default), a session is scheduled as one
    group, so in the bench's session a tool would share its CPU with
    whatever else that session runs (a build), ranked by nice, while fio's
    jobs escape that; measured niced beside a build in one session, storbench
    had 0.2-0.3x fio's IOPS on a direct randwrite and 0.06-0.17x on
    butterfly.fio for that alone."""
    with tempfile.TemporaryFile() as errf:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=errf, start_new_session=True)
        # Out of the terminal's session, a Ctrl-C of the bench reaches it only through here.
        atexit.register(lambda: proc.poll() is None and proc.kill())
        killed = threading.Event()

        def kill():
            killed.set()
            # fio's job processes call setsid(), so killing the session
            # leader alone leaves them holding stdout open (the read below
            # would wait for ever): every descendant is killed, found before
            # anything dies (an orphan's parent becomes init).
            for pid in [proc.pid] + descendants(proc.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

        timer = threading.Timer(limit, kill) if limit else None
        if timer:
            timer.start()
        out = proc.stdout.read()
        _, status, ru = os.wait4(proc.pid, 0)
        if timer:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if killed.is_set():
            raise Hung(f"{cmd[0]} did not finish within {limit} s")
        code = proc.returncode
        if code != 0:
            errf.seek(0)
            sys.stderr.write(errf.read().decode(errors="replace"))
            raise SystemExit(f"{cmd[0]} failed with exit code {code}")
    return out.decode(), ru


def fio_json(out):
    # fio may print notes before the JSON document.
    return json.loads(out[out.index("{"):])


def cpu_seconds(ru):
    return ru.ru_utime + ru.ru_stime


def job_stats(doc, job=0):
    """(ios, iops, p50_ns) summed over read and write, from fio-shaped JSON."""
    j = doc["jobs"][job]
    ios = iops = 0
    p50 = 0
    for d in ("read", "write"):
        s = j[d]
        if s["total_ios"] == 0:
            continue
        ios += s["total_ios"]
        iops += s["iops"]
        # Total latency (fio: slat + clat, with lat_percentiles=1); for io_uring
        # much of the time is spent in the submit call, which clat leaves out.
        lat = s["lat_ns"] if "percentile" in s["lat_ns"] else s["clat_ns"]
        p50 = max(p50, lat["percentile"]["50.000000"])
    return ios, iops, p50


def fio_args(opts):
    return [f"--{k}={v}" for k, v in opts.items()]


def storbench_args(opts):
    out = []
    for k, v in opts.items():
        out += [f"--{k}", str(v)]
    return out


def fmt_ns(ns):
    return f"{ns / 1000:.1f}us" if ns < 1_000_000 else f"{ns / 1e6:.2f}ms"


def table(rows):
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, r in enumerate(rows):
        lines.append("  ".join(str(c).rjust(w) if i > 1 else str(c).ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
