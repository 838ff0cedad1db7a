#!/usr/bin/env python3
"""The AWS Common Runtime's S3 client (awscrt, the C client boto3's CRT
transfers use) as a reference S3 client: PUT n objects, GET g of them at
random, DELETE them, `-c` requests in flight, like s3_loop.py (boto3) and
swift-bench's phases. Prints one swift-bench-style FINAL line per phase.
Requests are signed SigV4 with UNSIGNED-PAYLOAD (the CRT's default, and
storbench's); the CRT's event loop threads do the I/O and signing, this
script only keeps `-c` requests in flight.

usage: s3_crt_loop.py --endpoint http://HOST:PORT --bucket B -c 16 -s 4096 -n 1000 -g 3000
(keys from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY; plain http only)
"""
import io
import os
import random
import threading
import time
from urllib.parse import urlparse

from awscrt.auth import AwsCredentialsProvider
from awscrt.http import HttpHeaders, HttpRequest
from awscrt.io import ClientBootstrap, DefaultHostResolver, EventLoopGroup
import s3_loop_args
from awscrt.s3 import S3Client, S3RequestTlsMode, S3RequestType, create_default_s3_signing_config


class Loop:
    def __init__(self, a):
        u = urlparse(a.endpoint)
        if u.scheme != "http":
            raise SystemExit("s3_crt_loop.py: plain http endpoints only")
        self.host = u.netloc
        self.bucket = a.bucket
        elg = EventLoopGroup(a.threads)
        bootstrap = ClientBootstrap(elg, DefaultHostResolver(elg))
        creds = AwsCredentialsProvider.new_static(os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"])
        region = os.environ.get("AWS_REGION", "us-east-1")
        # UNSIGNED-PAYLOAD, as storbench's s3 engine signs by default.
        signing = create_default_s3_signing_config(region=region, credential_provider=creds)
        # Parts bigger than any object here: every request is one HTTP request.
        self.client = S3Client(bootstrap=bootstrap, region=region, signing_config=signing, tls_mode=S3RequestTlsMode.DISABLED,
                               part_size=64 << 20, throughput_target_gbps=10.0)
        self.slots = threading.Semaphore(a.c)
        self.lock = threading.Lock()
        self.failures = 0

    def request(self, method, path, kind, body=None, name=None):
        headers = [("Host", self.host)]
        if body is not None:
            headers.append(("Content-Length", str(len(body))))
        req = HttpRequest(method, path, HttpHeaders(headers), io.BytesIO(body) if body is not None else None)
        self.slots.acquire()

        def done(error=None, status_code=None, **_):
            if error is not None or (status_code or 0) >= 300:
                with self.lock:
                    self.failures += 1
            self.slots.release()

        # GET bodies are delivered to on_body and dropped (as the other clients do).
        return self.client.make_request(type=kind, request=req, on_done=done, on_body=lambda **_: None, operation_name=name)

    def phase(self, label, items, fn):
        self.failures = 0
        start = time.monotonic()
        pending = [fn(i) for i in items]
        for r in pending:
            r.finished_future.exception()
        secs = time.monotonic() - start
        s3_loop_args.final(len(items), label, self.failures, secs)


def main():
    ap = s3_loop_args.parser(__doc__)
    ap.add_argument("--threads", type=int, default=2, help="CRT event loop threads (one per core here)")
    a = ap.parse_args()
    loop = Loop(a)
    b = f"/{a.bucket}"
    loop.request("PUT", b, S3RequestType.DEFAULT, b"", "CreateBucket").finished_future.result()
    body = os.urandom(a.s)
    keys = [f"obj_{i}" for i in range(a.n)]
    loop.phase("PUTS", keys, lambda k: loop.request("PUT", f"{b}/{k}", S3RequestType.PUT_OBJECT, body))
    gets = [random.choice(keys) for _ in range(a.g)]
    loop.phase("GETS", gets, lambda k: loop.request("GET", f"{b}/{k}", S3RequestType.GET_OBJECT))
    loop.phase("DEL", keys, lambda k: loop.request("DELETE", f"{b}/{k}", S3RequestType.DEFAULT, None, "DeleteObject"))
    loop.request("DELETE", b, S3RequestType.DEFAULT, None, "DeleteBucket").finished_future.result()


if __name__ == "__main__":
    main()
