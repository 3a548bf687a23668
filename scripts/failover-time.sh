#!/usr/bin/env bash
# Measures how long a cluster takes to accept a write again after a KV node dies.
#
#   scripts/failover-time.sh [ROUNDS]     (default 3 rounds; needs a built target/release/strata)
#
# Starts a placement driver, three KV nodes and one SQL node by hand on loopback (ports 23790,
# 20260-20262, 4100) in a temporary folder, makes a small table, and then, ROUNDS times for each
# KV node in turn: `kill -9` of the node, `UPDATE t SET v = v + 1 WHERE id = 1` through the SQL
# node until one succeeds (each attempt a new `mariadb` client), and a restart of the node with
# the same command 6 s before the next kill. It prints one line per kill with the seconds from
# the kill to the end of the first successful UPDATE: kills of the region's leader show the
# election (about a second), kills of a follower only the client's round trip. At the end it
# checks that v counts every acknowledged UPDATE, and stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-3}
BIN=${STRATA_BIN:-target/release/strata}
PD=127.0.0.1:23790
SQL_PORT=4100
DIR=$(mktemp -d /tmp/strata-failover.XXXXXX)
declare -A KV_PID

[ -x "$BIN" ] || { echo "failover-time: build first (cargo build --release -p strata)" >&2; exit 2; }

pids=()
cleanup() {
  for pid in "${pids[@]}" "${KV_PID[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$DIR"
}
trap cleanup EXIT

sql() { timeout 30 mariadb -h 127.0.0.1 -P "$SQL_PORT" -u root -N -B "$@"; }
now() { date +%s.%N; }

start_kv() {
  local i=$1
  "$BIN" kv --pd "$PD" --listen "127.0.0.1:$((20259 + i))" --data-dir "$DIR/kv$i" \
    --block-cache-mib 256 >>"$DIR/kv$i.log" 2>&1 &
  KV_PID[$i]=$!
}

"$BIN" pd --listen "$PD" --data-dir "$DIR/pd" >>"$DIR/pd.log" 2>&1 &
pids+=($!)
for i in 1 2 3; do start_kv "$i"; done
"$BIN" server --pd "$PD" --port "$SQL_PORT" >>"$DIR/sql.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do sql -e 'SELECT 1' >/dev/null 2>&1 && break; sleep 0.5; done
sql -e 'CREATE DATABASE f; CREATE TABLE f.t (id INT PRIMARY KEY, v INT); INSERT INTO f.t VALUES (1, 0), (2, 0)'
# Leaders spread and leases settle before the first kill.
sleep 10

acknowledged=0
echo "kill  node  seconds_to_first_write  attempts"
for round in $(seq 1 "$ROUNDS"); do
  for i in 1 2 3; do
    kill -9 "${KV_PID[$i]}"
    wait "${KV_PID[$i]}" 2>/dev/null || true
    killed=$(now)
    attempts=0
    until attempts=$((attempts + 1)); sql -e 'UPDATE f.t SET v = v + 1 WHERE id = 1' >/dev/null 2>&1; do
      [ "$attempts" -lt 200 ] || { echo "failover-time: no write 200 attempts after killing kv$i" >&2; exit 1; }
      sleep 0.05
    done
    done_at=$(now)
    acknowledged=$((acknowledged + 1))
    printf '%-5s kv%-3s %-23.3f %s\n' "$round" "$i" "$(awk -v a="$done_at" -v b="$killed" 'BEGIN { print a - b }')" "$attempts"
    start_kv "$i"
    sleep 6
  done
done

v=$(sql -e 'SELECT v FROM f.t WHERE id = 1')
echo "acknowledged updates: $acknowledged, v = $v"
[ "$v" -ge "$acknowledged" ] || { echo "failover-time: an acknowledged update is missing" >&2; exit 1; }
