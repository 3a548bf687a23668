#!/usr/bin/env bash
# Regenerates the checked-in benchmark report (docs/benchmarks/): a Strata playground against
# MariaDB on this machine, with the real sysbench 1.0.20 through `strata bench`.
#
#   scripts/bench-report.sh sysbench   8 OLTP workloads x 1, 8, 32, 128 threads, 4 x 100,000 rows
#   scripts/bench-report.sh tpcc       TPC-C, 10 warehouses, 8 and 32 threads, 2 minutes each
#   scripts/bench-report.sh report     renders docs/benchmarks/{sysbench,tpcc}/ from the JSON
#
# Needs root (MariaDB is started with ../shared/bench/mariadb-peer.sh) and about 45 minutes for
# sysbench, 20 for TPC-C. While one server is measured the other is paused (SIGSTOP) or
# stopped, so they do not share the two cores. Raw sysbench output goes next to the JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PEER=${MARIADB_PEER:-$ROOT/../shared/bench/mariadb-peer.sh}
OUT=${BENCH_OUT:-$ROOT/docs/benchmarks}
WORK=${BENCH_WORK:-/tmp/strata-bench}
cargo build --release -p strata
B=$ROOT/target/release/strata

sysbench_matrix() {
  local w=oltp_point_select,oltp_read_only,oltp_read_write,oltp_write_only,oltp_update_index,oltp_update_non_index,oltp_insert,oltp_delete
  local common=(--prepare --restore --tables 4 --table-size 100000 --workloads "$w"
                --threads 1,8,32,128 --time 20 --warmup 5)
  mkdir -p "$OUT/sysbench" "$WORK"
  bash "$PEER" start >/dev/null
  local mp; mp=$(pgrep -x mariadbd)
  kill -STOP "$mp"
  rm -rf "$WORK/pg"
  "$B" bench sysbench run --playground "$WORK/pg" -P 4000 "${common[@]}" \
    --label "Strata 0.1.0 (playground)" -o "$OUT/sysbench/strata.json" || true
  kill -CONT "$mp"
  "$B" bench sysbench run -P 3306 -U sbtest -p password -D sbtest \
    --server-process mariadbd --data-dir /var/lib/mysql \
    --stop-command "bash $PEER stop >/dev/null; while pgrep -x mariadbd >/dev/null; do sleep 0.2; done" \
    --start-command "bash $PEER start >/dev/null" \
    "${common[@]}" --label "MariaDB 10.11" -o "$OUT/sysbench/mariadb.json"
}

tpcc() {
  mkdir -p "$OUT/tpcc" "$WORK"
  bash "$PEER" start >/dev/null
  local mp; mp=$(pgrep -x mariadbd)
  kill -STOP "$mp"
  rm -rf "$WORK/tpcc-pg"
  "$B" playground --data-dir "$WORK/tpcc-pg" --port 4000 >"$WORK/tpcc-pg.log" 2>&1 &
  local sp=$!
  sleep 3
  "$B" bench tpcc prepare -P 4000 --warehouses 10 -T 4
  "$B" bench tpcc check -P 4000 --warehouses 10 --check-all
  for t in 8 32; do
    "$B" bench tpcc run -P 4000 --warehouses 10 -T $t --time 2m --server-pid $sp \
      --label "Strata 0.1.0 (playground), $t threads" -o "$OUT/tpcc/strata-$t.json"
  done
  "$B" bench tpcc check -P 4000 --warehouses 10
  kill -TERM $sp; wait $sp || true
  kill -CONT "$mp"
  local m=(-P 3306 -U sbtest -p password -D tpcc)
  "$B" bench tpcc cleanup "${m[@]}"
  "$B" bench tpcc prepare "${m[@]}" --warehouses 10 -T 4
  "$B" bench tpcc check "${m[@]}" --warehouses 10 --check-all
  for t in 8 32; do
    "$B" bench tpcc run "${m[@]}" --warehouses 10 -T $t --time 2m --server-process mariadbd \
      --label "MariaDB 10.11, $t threads" -o "$OUT/tpcc/mariadb-$t.json"
  done
  "$B" bench tpcc check "${m[@]}" --warehouses 10
}

report() {
  "$B" bench report "$OUT/sysbench/strata.json" "$OUT/sysbench/mariadb.json" --out "$OUT/sysbench"
  "$B" bench report "$OUT/tpcc/strata-8.json" "$OUT/tpcc/mariadb-8.json" \
    "$OUT/tpcc/strata-32.json" "$OUT/tpcc/mariadb-32.json" --out "$OUT/tpcc"
}

case "${1:-}" in
  sysbench) sysbench_matrix ;;
  tpcc) tpcc ;;
  report) report ;;
  *) echo "usage: scripts/bench-report.sh sysbench|tpcc|report" >&2; exit 2 ;;
esac
