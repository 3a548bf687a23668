#!/usr/bin/env bash
# Builds Strata (installing clang and libclang for RocksDB, and OpenSSL's headers with
# pkg-config for caching_sha2_password's RSA keys, when missing) and starts the
# playground: every role in one process on 127.0.0.1:4000, user root, no password.
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
command -v clang >/dev/null 2>&1 || need+=(clang)
ls /usr/lib/llvm-*/lib/libclang*.so >/dev/null 2>&1 || need+=(libclang-dev)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[ -e /usr/include/openssl/ssl.h ] || need+=(libssl-dev)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
cargo build --release -p strata
exec ./target/release/strata playground "$@"
