#!/usr/bin/env bash
# Runs Strata's whole test suite on a fresh Debian machine with Rust: installs what the build and
# the end-to-end tests need (clang and libclang for RocksDB, OpenSSL's headers and pkg-config
# for caching_sha2_password's RSA keys, the real sysbench and mariadb client,
# headless Chromium to load the benchmark report, iproute2 for the partition test's network
# namespaces, openssl for client certificates of the TLS tests, PyMySQL for the system Python,
# Go with go-sql-driver/mysql for the Go driver's test, percona-toolkit's pt-query-digest to
# read the slow log, pip and Node.js's npm through which the Python and Node driver tests fetch
# their drivers, a JDK with MariaDB Connector/J for the JDBC test,
# cargo-fuzz from crates.io) when missing, then runs
# every test of the workspace with the one cargo profile (release), so RocksDB's C++ build
# happens once, and the fuzz targets for a minute each.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v clang >/dev/null 2>&1 || need+=(clang)
[ -e /usr/lib/llvm-14/lib/libclang.so ] || ls /usr/lib/llvm-*/lib/libclang*.so >/dev/null 2>&1 || need+=(libclang-dev)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[ -e /usr/include/openssl/ssl.h ] || need+=(libssl-dev)
command -v sysbench >/dev/null 2>&1 || need+=(sysbench)
command -v mariadb >/dev/null 2>&1 || need+=(mariadb-client)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
/usr/bin/python3 -c 'import pymysql' >/dev/null 2>&1 || need+=(python3-pymysql)
command -v go >/dev/null 2>&1 || need+=(golang-go)
[ -d /usr/share/gocode/src/github.com/go-sql-driver/mysql ] || need+=(golang-github-go-sql-driver-mysql-dev)
command -v pt-query-digest >/dev/null 2>&1 || need+=(percona-toolkit)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
command -v npm >/dev/null 2>&1 || need+=(nodejs npm)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
[ -e /usr/share/java/mariadb-java-client.jar ] || need+=(libmariadb-java)
if [ ${#need[@]} -gt 0 ]; then
  echo "scripts/test.sh: installing ${need[*]}"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

cargo test --release --workspace "$@"
# The fuzz targets (SQL text through parser and planner, the key and row codecs, a client's
# handshake and command packets through a connection), a minute each; scripts/fuzz.sh SECONDS
# runs them longer. Inputs that once crashed a target are kept under fuzz/regressions/ and
# replayed by `cargo test` (crates/sql/tests/fuzz_corpus.rs, crates/mysql/tests/fuzz_corpus.rs).
scripts/fuzz.sh 60
