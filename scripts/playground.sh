#!/usr/bin/env bash
# Builds Strata (installing clang and libclang for RocksDB when missing) and starts the
# playground: every role in one process on 127.0.0.1:4000, user root, no password.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clang >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/libclang*.so >/dev/null 2>&1; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq clang libclang-dev >/dev/null
fi
cargo build --release -p strata
exec ./target/release/strata playground "$@"
