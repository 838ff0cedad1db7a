#!/usr/bin/env bash
# Installs what the tests and benchmarks need from Debian's packages:
# fio (the reference tool), e2fsprogs (mkfs.ext4), util-linux (losetup) and
# time (/usr/bin/time, for the benchmarks' CPU and memory figures), curl
# (SigV4 requests the tests make behind storbench's back) and strace (the
# system calls fio's sync and end_fsync must make), chromium (the HTML
# report opened headless), openssh-server and iproute2 (fleet agents
# launched over SSH into network namespaces), nbdkit and qemu-utils
# (qemu-nbd: the NBD servers the nbd engine's tests and benchmark start),
# fonts-dejavu-core (the text of `report --charts` PNG files),
# libradospp-dev (librados' C++ headers: the rados engine's no-copy write
# shim is compiled against them), nftables (nft: the network faults' loss
# and cut, on kernels without netem too).
# Idempotent: installs only what is missing.
set -euo pipefail

need=()
command -v fio >/dev/null || need+=(fio)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
command -v losetup >/dev/null || need+=(util-linux)
[ -x /usr/bin/time ] || need+=(time)
command -v curl >/dev/null || need+=(curl)
command -v strace >/dev/null || need+=(strace)
command -v chromium >/dev/null || need+=(chromium)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ip >/dev/null || need+=(iproute2)
command -v nbdkit >/dev/null || need+=(nbdkit)
command -v qemu-nbd >/dev/null || need+=(qemu-utils)
[ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
[ -e /usr/include/rados/librados.hpp ] || need+=(libradospp-dev)
command -v nft >/dev/null || need+=(nftables)

if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null; then
  echo "cargo not found: install Rust (https://rustup.rs) first" >&2
  exit 1
fi
# The test command checks formatting and lints before anything else.
for c in clippy:clippy fmt:rustfmt; do
  if ! cargo "${c%%:*}" --version >/dev/null 2>&1; then
    rustup component add "${c##*:}" || { echo "cargo ${c%%:*} is missing: rustup component add ${c##*:}" >&2; exit 1; }
  fi
done
