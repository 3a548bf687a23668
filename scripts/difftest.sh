#!/usr/bin/env bash
# Runs the differential tester longer than the test command does: seeded queries on a fresh
# Strata playground and on the MariaDB peer, every answer compared, and a minimal reproducer
# printed for each mismatch.
#
#   scripts/difftest.sh [--seed N] [--queries M] [any other `strata difftest` flag]
#
# Without --seed the seed is drawn from the clock and printed; the same seed replays the same
# worlds and queries. Builds Strata, starts the peer with ../shared/bench/mariadb-peer.sh (it
# installs MariaDB when missing and needs root), starts a playground on port 4300 in a temporary
# folder, and stops the playground however the run ends. Exits 1 when any answer differed.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${DIFFTEST_PORT:-4300}
PEER=${MARIADB_PEER:-/work/shared/bench/mariadb-peer.sh}
DIR=$(mktemp -d /tmp/strata-difftest.XXXXXX)

cargo build --release -p strata
# The peer is stopped at the end if this script started it.
started_peer=""
if ! bash "$PEER" status >/dev/null 2>&1; then
  bash "$PEER" start >/dev/null
  started_peer=1
fi

pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  [ -n "$started_peer" ] && bash "$PEER" stop >/dev/null 2>&1
  rm -rf "$DIR"
}
trap cleanup EXIT

target/release/strata playground --data-dir "$DIR/data" --port "$PORT" >"$DIR/playground.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
  if mariadb -h 127.0.0.1 -P "$PORT" -u root -e 'SELECT 1' >/dev/null 2>&1; then break; fi
  kill -0 "$pid" 2>/dev/null || { cat "$DIR/playground.log" >&2; exit 2; }
  sleep 0.1
done

target/release/strata difftest --strata-port "$PORT" "$@"
