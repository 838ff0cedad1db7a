"""fio's own examples/ job files, scaled down to run here (used by
compare_fio_jobs.py --examples).

The files come from Debian's fio source package (core_ceiling.fio_source()
unpacks it under the scratch directory; nothing of it is committed). Each
file is rewritten line by line so both tools can run it on this machine in
seconds: every path becomes a file in the example's scratch directory,
sizes are capped, runtimes shortened, numjobs and loops bounded, fill_device
becomes the capped size. Examples that would talk to anything but this
machine are not run at all (the reason is the row's).
"""
import re
from pathlib import Path

# Keys whose value names another machine; only loopback is ever a target.
HOST_KEYS = {"hostname", "http_host", "serverip", "nfs_url", "brick"}
LOCAL = re.compile(r"^(\w+://)?(localhost|127\.|\[?::1|/)", re.I)
# Sizes and offsets: each capped, so no example writes past its small file
# (cross-stripe-verify.fio puts 30 jobs 124g apart).
SIZE_KEYS = {"size", "filesize", "io_size", "io_limit", "zonesize", "zonerange", "zoneskip", "offset", "offset_increment"}
UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def parse_size(v):
    m = re.fullmatch(r"(\d+)\s*([kmgtp]?)i?b?", v.strip().lower())
    return int(m.group(1)) * UNITS[m.group(2)] if m else None


def files(src):
    """The example job files of fio's source tree, by name."""
    return sorted((src / "examples").glob("*.fio"))


def foreign_host(text):
    """The first host the file would reach that is not this machine."""
    for line in text.splitlines():
        key, _, val = strip(line).partition("=")
        if key.strip().lower() in HOST_KEYS and val.strip() and not LOCAL.match(val.strip()):
            return val.strip()
    return None


def strip(line):
    """A line without its comment (fio: ';' or '#' at the start or after blanks)."""
    return re.split(r"(^|\s)[;#]", line, maxsplit=1)[0].strip()


def scale(text, runtime, size):
    """The job file rewritten to run on small local files for `runtime` s."""
    out = [f"[global]\nruntime={runtime}\nsize={size}\n"]
    names = {}
    cap = parse_size(size)
    # fio's net sender connects once, refused if its receiver is not yet
    # listening: its startdelay orders them (storbench's tries again).
    drop = {"directory", "fill_device", "fill_fs", "exec_prerun", "exec_postrun"}
    if not re.search(r"^\s*ioengine\s*=\s*net\s*$", text, re.M):
        drop.add("startdelay")
    for raw in text.splitlines():
        line = strip(raw)
        if not line or line.startswith("["):
            out.append(line)
            continue
        key, eq, val = line.partition("=")
        key, val = key.strip().lower(), val.strip()
        if key in drop:
            continue
        if key == "filename":
            # Every path (a device, /tmp, a directory) becomes a local file.
            local = [names.setdefault(p, f"ex{len(names)}.dat") if "/" in p else p for p in val.split(":")]
            out.append("filename=" + ":".join(local))
        elif key in SIZE_KEYS:
            n = parse_size(val)
            if n is not None and n <= cap:
                out.append(f"{key}={val}")
            elif key == "offset":
                out.append("offset=0")
            else:
                out.append(f"{key}={size}")
        elif key in ("runtime", "timeout"):
            out.append(f"{key}={runtime}")
        elif key == "ramp_time":
            out.append("ramp_time=1")
        elif key == "numjobs":
            out.append(f"numjobs={min(int(val or 1), 4)}")
        elif key == "loops":
            out.append(f"loops={min(int(val or 1), 2)}")
        else:
            out.append(line if eq else key)
    return "\n".join(out) + "\n"


def first_line(err, out=""):
    """The line of a tool's error output that says why (its standard output,
    a JSON document, only when it said nothing on stderr)."""
    lines = [l.strip() for l in (err if err.strip() else out).splitlines() if l.strip()]
    for l in lines:
        if "error" in l.lower() or "refus" in l.lower() or "unknown" in l.lower() or "not" in l.lower():
            return l[:160]
    return lines[0][:160] if lines else "no message"


def totals(doc):
    """(IOPS summed over jobs and directions, largest p50 completion
    latency in ns) of a fio-shaped JSON document: a file of several jobs
    (stonewalled or together) is compared as a whole."""
    iops, p50 = 0.0, 0
    for j in doc["jobs"]:
        for d in ("read", "write", "trim"):
            s = j.get(d, {})
            if s.get("total_ios"):
                iops += s["iops"]
                p50 = max(p50, s.get("clat_ns", {}).get("percentile", {}).get("50.000000", 0))
    return iops, p50
