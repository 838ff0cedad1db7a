"""The command line and the FINAL line every reference S3 loop shares
(s3_loop.py, s3_crt_loop.py, s3_rclone_loop.py): compare_objects.py drives
them alike and reads their swift-bench-style phase lines."""
import argparse


def parser(doc, g_help="GETs, of random objects"):
    ap = argparse.ArgumentParser(description=doc)
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--bucket", required=True)
    ap.add_argument("-c", type=int, default=16, help="requests in flight")
    ap.add_argument("-s", type=int, default=4096, help="object size")
    ap.add_argument("-n", type=int, default=1000, help="objects (PUTs and DELETEs)")
    ap.add_argument("-g", type=int, default=3000, help=g_help)
    return ap


def final(n, label, failures, secs):
    print(f"{n} {label} **FINAL** [{failures} failures], {(n - failures) / secs:.1f}/s", flush=True)
