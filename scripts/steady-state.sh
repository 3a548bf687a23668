#!/usr/bin/env bash
# Reads on fresh data, then after a long run of writes: sysbench oltp_read_only (8 threads,
# 15 s) and oltp_point_select (8 threads, 10 s) on freshly prepared 4 x 100,000 rows, then
# oltp_write_only at 32 threads for WRITE_SECS, then the same two reads again. Prints one line
# per run: label, phase, workload, TPS and p95 latency (ms).
#
# usage: scripts/steady-state.sh HOST PORT USER PASSWORD LABEL [WRITE_SECS]
# The database `sbtest` must exist and hold no sbtest tables.
set -euo pipefail
if [ $# -lt 5 ]; then
    sed -n '2,9p' "$0"
    exit 2
fi
host=$1 port=$2 user=$3 password=$4 label=$5 write_secs=${6:-180}
sb=(sysbench --db-driver=mysql --mysql-host="$host" --mysql-port="$port" --mysql-user="$user"
    --mysql-password="$password" --mysql-db=sbtest --tables=4 --table-size=100000
    --rand-type=uniform)

run() { # phase workload threads seconds
    "${sb[@]}" "$2" --threads="$3" --time="$4" run |
        awk -v l="$label $1 $2" '/transactions:/ {t = $3} /95th/ {p = $3}
            END {print l, "tps", substr(t, 2), "p95", p}'
}

"${sb[@]}" oltp_common --threads=4 prepare >/dev/null
run fresh oltp_read_only 8 15
run fresh oltp_point_select 8 10
run writes oltp_write_only 32 "$write_secs"
run aged oltp_read_only 8 15
run aged oltp_point_select 8 10
