#!/usr/bin/env bash
# Two builds of strata side by side on sysbench lines: one data folder of 4 x 100,000 rows
# (sysbench's oltp_common, 4 threads) prepared once, then ROUNDS rounds in which each binary in
# turn starts `playground --block-cache-mib 1024` on it, warms up with 5 s of oltp_read_only,
# runs each of WORKLOADS (oltp_point_select,oltp_read_only,oltp_read_write by default) at 8
# and then 32 threads (20 s each, --rand-type=uniform) and stops. Prints each run (round,
# build, workload, threads, TPS, p95 ms), then per line the median TPS and p95 of each build
# and new ÷ old.
#
# With FRESH=1 each build in each round starts on an empty folder and prepares it before the
# warm-up, as the shared matrix does: for write lines, whose garbage would otherwise slow the other build's
# reads (and whose inserts grow the tables) and so measure the order of the runs.
#
# With REST=S each build waits S seconds after it starts (and prepares, with FRESH=1) before the
# warm-up: the background work that follows a load (flushes, the compaction after a burst of
# writes) is then done before the first run rather than inside it.
#
# usage: [WORKLOADS=w1,w2,…] [FRESH=1] [REST=S] scripts/ab-sysbench.sh OLD_BINARY NEW_BINARY [ROUNDS] [PORT]
# Needs sysbench and the mariadb (or mysql) client; the port (4000 by default) must be free.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,19p' "$0"
    exit 2
fi
old=$1 new=$2 rounds=${3:-3} port=${4:-4000}
workloads=${WORKLOADS:-oltp_point_select,oltp_read_only,oltp_read_write}
fresh=${FRESH:-0}
rest=${REST:-0}
client=$(command -v mariadb || command -v mysql)

dir=$(mktemp -d)
server=
cleanup() {
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT

sb() {
    sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$port" --mysql-user=root \
        --mysql-password= --mysql-db=sbtest --tables=4 --table-size=100000 --rand-type=uniform "$@"
}
start() {
    "$1" playground --block-cache-mib 1024 --port "$port" --data-dir "$dir/data" \
        > "$dir/server.log" 2>&1 &
    server=$!
    for _ in $(seq 120); do
        if "$client" -h 127.0.0.1 -P "$port" -u root -e 'SELECT 1' > /dev/null 2>&1; then
            return
        fi
        sleep 1
    done
    echo "the server did not start; its log:" >&2
    cat "$dir/server.log" >&2
    exit 1
}
stop() {
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=
}

prepare() {
    "$client" -h 127.0.0.1 -P "$port" -u root -e 'CREATE DATABASE sbtest'
    sb oltp_common --threads=4 prepare > /dev/null
}

if [ "$fresh" != 1 ]; then
    start "$old"
    prepare
    stop
fi
for round in $(seq "$rounds"); do
    for build in old new; do
        binary=$old
        [ "$build" = old ] || binary=$new
        if [ "$fresh" = 1 ]; then
            rm -rf "$dir/data"
            start "$binary"
            prepare
        else
            start "$binary"
        fi
        sleep "$rest"
        sb oltp_read_only --threads=8 --time=5 run > /dev/null
        for workload in ${workloads//,/ }; do
            for threads in 8 32; do
                out=$(sb "$workload" --threads="$threads" --time=20 --percentile=95 run)
                tps=$(awk '/transactions:/ { gsub(/\(/, "", $3); print $3 }' <<< "$out")
                p95=$(awk '/95th percentile:/ { print $3 }' <<< "$out")
                echo "$round $build $workload $threads $tps $p95" | tee -a "$dir/runs"
            done
        done
        stop
    done
done
echo
echo "workload threads old_tps (p95) new_tps (p95) new/old"
python3 - "$dir/runs" <<'EOF'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    _, build, workload, threads, tps, p95 = line.split()
    runs.setdefault((workload, int(threads)), {}).setdefault(build, []).append((float(tps), float(p95)))
for (workload, threads), builds in runs.items():
    med = {b: [statistics.median(x[i] for x in builds[b]) for i in (0, 1)] for b in builds}
    (ot, op), (nt, np) = med["old"], med["new"]
    print(f"{workload} {threads} {ot:,.0f} ({op}) {nt:,.0f} ({np}) {nt / ot:.2f}")
EOF
