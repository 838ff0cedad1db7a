#!/usr/bin/env python3
"""The vector database presets on this machine: queries/s, request latency
and node reads a query for each reference collection at a stated scale, and
beside each, fio reading the same index file at random in the same node-sized
reads at the query's depth (the beam of every segment in flight at once),
alternately: the emulated queries' reads/s over fio's IOPS.

  bench/vectordb.py [--dir /tmp/vdb-bench] [--repeat 3] [--seconds 10]

MLPerf Storage's VectorDB reference (Milvus) does not run here (no
containers), so fio is the ceiling the emulation is judged against: a query
issues its reads a beam at a time and waits for the beam before the next, so
its reads/s is below fio's at the same depth by what those round trips cost;
the ratio moves by about 0.1 from run to run on a shared disk (a ratio
above 1 is that noise: the emulation cannot keep more in flight than fio).
"""
import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

# A scale per collection that keeps its index under ~200 MiB (its segments kept).
COLLECTIONS = {"1m": "0.01", "10m": "0.001", "1m-512": "0.05"}


def percentile(latency, p):
    return next(ns for q, ns in latency["percentiles"] if q == p)


def storbench_run(name, scale, data, out, seconds):
    cmd = [str(common.STORBENCH), "run", "--preset", f"vectordb:{name}", "--scale", scale, "--directory", str(data),
           "--runtime", str(seconds), "--results-dir", str(out), "--quiet"]
    shutil.rmtree(out, ignore_errors=True)
    common.run(cmd, cwd=data, limit=seconds + 300)
    doc = json.loads((out / "result.json").read_text())
    v = doc["jobs"][0]["vectordb"]
    read = next(o for o in doc["jobs"][0]["ops"] if o["op"] == "read")
    return v, read["ios"] / (doc["jobs"][0]["runtime_ns"] / 1e9)


def fio_run(index, node, depth, seconds):
    opts = {"name": "f", "filename": str(index), "rw": "randread", "bs": node, "direct": 1, "ioengine": "io_uring",
            "iodepth": depth, "runtime": seconds, "time_based": 1, "output-format": "json"}
    out, _ = common.run(["fio"] + common.fio_args(opts), cwd=index.parent, limit=seconds + 60)
    return common.job_stats(common.fio_json(out))[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="/tmp/vdb-bench")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    a = ap.parse_args()
    common.build()
    data = Path(a.dir)
    data.mkdir(parents=True, exist_ok=True)
    rows = [["collection", "scale", "queries/s", "p50 ms", "p99 ms", "reads/query", "reads/s", "fio IOPS", "ratio"]]
    for name, scale in COLLECTIONS.items():
        qps, p50, p99, ratios, reads, fios = [], [], [], [], [], []
        for _ in range(a.repeat):
            v, rate = storbench_run(name, scale, data, data / f"out-{name}", a.seconds)
            depth = v["segments"] * v["beam_width"]
            fio = fio_run(data / f"vectordb-{name}.index", v["node_bytes"], depth, a.seconds)
            qps.append(v["queries_per_sec"])
            p50.append(percentile(v["latency"], 50.0) / 1e6)
            p99.append(percentile(v["latency"], 99.0) / 1e6)
            reads.append(rate)
            fios.append(fio)
            ratios.append(rate / fio)
        spread = f"{statistics.mean(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
        rows.append([name, scale, f"{statistics.mean(qps):.1f}", f"{statistics.mean(p50):.1f}", f"{statistics.mean(p99):.1f}",
                     f"{v['reads_per_query']:.0f}", f"{statistics.mean(reads):.0f}", f"{statistics.mean(fios):.0f}", spread])
    print(common.table(rows))


if __name__ == "__main__":
    main()
