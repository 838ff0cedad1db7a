#!/usr/bin/env python3
"""A boto3 reference client for S3 benchmarks: PUT n objects, GET m of them
at random, DELETE them, with `-c` threads, like swift-bench's phases. Prints
one swift-bench-style FINAL line per phase.

usage: s3_loop.py --endpoint URL --bucket B -c 16 -s 4096 -n 1000 -g 3000
(keys from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)
"""
import os
import random
import time
from concurrent.futures import ThreadPoolExecutor

import boto3
import s3_loop_args
from botocore.config import Config


def phase(label, fn, items, threads):
    failures = 0
    start = time.monotonic()
    with ThreadPoolExecutor(threads) as pool:
        for ok in pool.map(fn, items):
            failures += 0 if ok else 1
    secs = time.monotonic() - start
    s3_loop_args.final(len(items), label, failures, secs)


def main():
    ap = s3_loop_args.parser(__doc__)
    a = ap.parse_args()
    # Checksums only when an API needs them: otherwise botocore >= 1.36 sends
    # https PUTs aws-chunked with a checksum trailer, which RGW 16 refuses
    # (MissingContentLength), and hashes every body (CPU storbench does not spend).
    cfg = Config(max_pool_connections=a.c, retries={"max_attempts": 1}, s3={"addressing_style": "path"},
                 request_checksum_calculation="when_required", response_checksum_validation="when_required")
    s3 = boto3.client("s3", endpoint_url=a.endpoint, region_name=os.environ.get("AWS_REGION", "us-east-1"), config=cfg)
    s3.create_bucket(Bucket=a.bucket)
    body = os.urandom(a.s)
    keys = [f"obj_{i}" for i in range(a.n)]

    def put(k):
        try:
            s3.put_object(Bucket=a.bucket, Key=k, Body=body)
            return True
        except Exception:
            return False

    def get(k):
        try:
            s3.get_object(Bucket=a.bucket, Key=k)["Body"].read()
            return True
        except Exception:
            return False

    def delete(k):
        try:
            s3.delete_object(Bucket=a.bucket, Key=k)
            return True
        except Exception:
            return False

    phase("PUTS", put, keys, a.c)
    phase("GETS", get, [random.choice(keys) for _ in range(a.g)], a.c)
    phase("DEL", delete, keys, a.c)
    s3.delete_bucket(Bucket=a.bucket)


if __name__ == "__main__":
    main()
