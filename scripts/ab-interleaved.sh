#!/usr/bin/env bash
# Two builds of strata compared on one sysbench line with both servers up side by side, so that
# the machine's drift (other guests, thermal, the hour) falls on both alike: each build starts
# `playground --block-cache-mib 1024` on its own empty folder (old on PORT, new on PORT+1) and
# prepares 4 x 100,000 rows (oltp_common, 4 threads); after REST seconds (30 by default) and
# 5 s of oltp_read_only on each, PAIRS pairs of runs of WORKLOAD at THREADS (T seconds each,
# --rand-type=uniform) go in the order old new, new old, old new, … (a run's neighbour in time
# is the other build). Only one server takes load at a time; the idle one costs next to nothing.
# Prints each pair's TPS and new ÷ old, then the median of the ratios and the ratio of the sums.
#
# usage: [WORKLOAD=oltp_point_select] [THREADS=8] [T=10] [REST=30] \
#        scripts/ab-interleaved.sh OLD_BINARY NEW_BINARY [PAIRS] [PORT]
# Needs sysbench and the mariadb (or mysql) client; PORT (4400 by default) and PORT+1 must be free.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,13p' "$0"
    exit 2
fi
old=$1 new=$2 pairs=${3:-10} port=${4:-4400}
workload=${WORKLOAD:-oltp_point_select} threads=${THREADS:-8} time=${T:-10} rest=${REST:-30}
client=$(command -v mariadb || command -v mysql)

dir=$(mktemp -d)
servers=()
cleanup() {
    for pid in "${servers[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$dir"
}
trap cleanup EXIT

sb() {
    sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=root \
        --mysql-password= --mysql-db=sbtest --tables=4 --table-size=100000 --rand-type=uniform \
        "${@:2}"
}
tps() {
    sb "$1" "$workload" --threads="$threads" --time="$time" run |
        awk '/transactions:/ { gsub(/\(/, "", $3); print $3 }'
}

for side in 0 1; do
    binary=$old
    [ "$side" = 0 ] || binary=$new
    "$binary" playground --block-cache-mib 1024 --port $((port + side)) \
        --data-dir "$dir/data$side" > "$dir/server$side.log" 2>&1 &
    servers+=($!)
done
for p in "$port" $((port + 1)); do
    for _ in $(seq 120); do
        "$client" -h 127.0.0.1 -P "$p" -u root -e 'SELECT 1' > /dev/null 2>&1 && break
        sleep 1
    done
    "$client" -h 127.0.0.1 -P "$p" -u root -e 'CREATE DATABASE sbtest'
    sb "$p" oltp_common --threads=4 prepare > /dev/null
done
sleep "$rest"
for p in "$port" $((port + 1)); do
    sb "$p" oltp_read_only --threads=8 --time=5 run > /dev/null
done

echo "pair old_tps new_tps new/old ($workload, $threads threads, $time s)"
for pair in $(seq "$pairs"); do
    if [ $((pair % 2)) = 1 ]; then
        a=$(tps "$port")
        b=$(tps $((port + 1)))
    else
        b=$(tps $((port + 1)))
        a=$(tps "$port")
    fi
    echo "$pair $a $b" | tee -a "$dir/pairs" | awk '{ printf "%s %s %s %.3f\n", $1, $2, $3, $3 / $2 }'
done
python3 - "$dir/pairs" <<'PY'
import statistics, sys
pairs = [tuple(map(float, line.split()[1:])) for line in open(sys.argv[1])]
ratios = [new / old for old, new in pairs]
print(f"median of the ratios {statistics.median(ratios):.3f}, "
      f"ratio of the sums {sum(n for _, n in pairs) / sum(o for o, _ in pairs):.3f}")
PY
