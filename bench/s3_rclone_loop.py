#!/usr/bin/env python3
"""rclone (Debian's) as a reference S3 client, in the phases of s3_loop.py:
PUT n objects (`rclone copy` of n local files), GET them (`rclone copy`
back; rclone reads every object once, so GETs = n whatever -g says), DELETE
them (`rclone delete`), `-c` transfers in flight. Prints one
swift-bench-style FINAL line per phase. rclone is told not to HEAD or list
what it need not (--s3-no-head, --no-check-dest, --s3-no-check-bucket), so
its requests are the PUTs, GETs and DELETEs plus one listing for GET and
DELETE. The local files live in a tmpfs directory; their content is one
random block repeated, made before the PUT phase (cheap, and counted in the
CPU of this process tree like rclone's own).

usage: s3_rclone_loop.py --endpoint URL --bucket B -c 16 -s 4096 -n 1000
(keys from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)
"""
import os
import shutil
import subprocess
import tempfile
import time

import s3_loop_args


def main():
    ap = s3_loop_args.parser(__doc__, g_help="ignored: rclone GETs each object once")
    a = ap.parse_args()
    env = dict(os.environ, RCLONE_CONFIG_SB_TYPE="s3", RCLONE_CONFIG_SB_PROVIDER="Ceph", RCLONE_CONFIG_SB_ENDPOINT=a.endpoint,
               RCLONE_CONFIG_SB_ACCESS_KEY_ID=os.environ["AWS_ACCESS_KEY_ID"],
               RCLONE_CONFIG_SB_SECRET_ACCESS_KEY=os.environ["AWS_SECRET_ACCESS_KEY"],
               RCLONE_CONFIG_SB_REGION=os.environ.get("AWS_REGION", "us-east-1"), RCLONE_CONFIG_SB_FORCE_PATH_STYLE="true")
    flags = ["--transfers", str(a.c), "--checkers", str(a.c), "--s3-no-head", "--s3-no-check-bucket", "--no-check-dest",
             "--s3-upload-cutoff", "5G", "--s3-disable-checksum", "--retries", "1", "--low-level-retries", "1", "-q"]
    # rclone's AWS SDK refuses AWS_CA_BUNDLE ("unsupported transport"): the
    # CA goes in rclone's own flag instead.
    ca = env.pop("AWS_CA_BUNDLE", None)
    if ca and a.endpoint.startswith("https:"):
        flags += ["--ca-cert", ca]
    remote = f"sb:{a.bucket}"
    rclone = shutil.which("rclone") or "rclone"
    with tempfile.TemporaryDirectory(prefix="sb-rclone-", dir="/dev/shm") as d:
        up, down = os.path.join(d, "up"), os.path.join(d, "down")
        os.mkdir(up)
        block = os.urandom(min(a.s, 1 << 20))
        for i in range(a.n):
            with open(os.path.join(up, f"obj_{i}"), "wb") as f:
                left = a.s
                while left > 0:
                    f.write(block[:left])
                    left -= len(block)
        subprocess.run([rclone, "mkdir", remote, "-q"], env=env, check=True)
        for label, args in (("PUTS", ["copy", up, remote]), ("GETS", ["copy", remote, down]), ("DEL", ["delete", remote])):
            start = time.monotonic()
            ok = subprocess.run([rclone, *args, *flags], env=env).returncode == 0
            secs = time.monotonic() - start
            s3_loop_args.final(a.n, label, 0 if ok else a.n, secs)
        subprocess.run([rclone, "rmdir", remote, "-q"], env=env)


if __name__ == "__main__":
    main()
