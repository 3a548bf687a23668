#!/usr/bin/env bash
# Reads after a burst of writes beside reads on fresh data, measured in pairs on two servers so
# that the machine's drift falls on both sides of each ratio: A and B each get freshly prepared
# 4 x 100,000 rows, B then takes oltp_write_only at 32 threads for WRITE_SECS, and from the
# moment the writes end oltp_read_only (8 threads, 15 s) and oltp_point_select (8 threads, 10 s)
# run on B and then on A, ROUNDS times. Prints each run (label, server, workload, TPS, p95 ms),
# then per workload B ÷ A of the first round (its read_only starts as the writes end) and the
# median B ÷ A of all rounds.
#
# usage: scripts/steady-state-pair.sh HOST PORT_A PORT_B USER PASSWORD LABEL [WRITE_SECS] [ROUNDS]
# Both servers must run the same build with the same options, each with a database `sbtest`
# that holds no sbtest tables; they should be idle otherwise.
set -euo pipefail
if [ $# -lt 6 ]; then
    sed -n '2,12p' "$0"
    exit 2
fi
host=$1 port_a=$2 port_b=$3 user=$4 password=$5 label=$6 write_secs=${7:-180} rounds=${8:-3}

sb() { # port, then sysbench's arguments
    local port=$1
    shift
    sysbench --db-driver=mysql --mysql-host="$host" --mysql-port="$port" --mysql-user="$user" \
        --mysql-password="$password" --mysql-db=sbtest --tables=4 --table-size=100000 \
        --rand-type=uniform "$@"
}

runs=$(mktemp)
trap 'rm -f "$runs"' EXIT

run() { # server (A or B), workload, threads, seconds
    local port=$port_a
    [ "$1" = B ] && port=$port_b
    sb "$port" "$2" --threads="$3" --time="$4" run |
        awk -v l="$label $1 $2" '/transactions:/ {t = $3} /95th/ {p = $3}
            END {print l, "tps", substr(t, 2), "p95", p}' | tee -a "$runs"
}

sb "$port_a" oltp_common --threads=4 prepare >/dev/null
sb "$port_b" oltp_common --threads=4 prepare >/dev/null
sleep 30 # the compaction that follows a load runs before the clock starts
run B oltp_write_only 32 "$write_secs"
for _ in $(seq "$rounds"); do
    run B oltp_read_only 8 15
    run A oltp_read_only 8 15
    run B oltp_point_select 8 10
    run A oltp_point_select 8 10
done

# Pairs each B run with the A run of the same workload that follows it.
awk -v l="$label" '
    $3 == "oltp_write_only" { next }
    $2 == "B" { b[$3] = $5; next }
    {
        r = b[$3] / $5
        n[$3]++
        ratios[$3, n[$3]] = r
    }
    END {
        for (w in n) {
            k = n[w]
            for (i = 1; i <= k; i++) s[i] = ratios[w, i]
            for (i = 2; i <= k; i++) for (j = i; j > 1 && s[j - 1] > s[j]; j--) {
                t = s[j]; s[j] = s[j - 1]; s[j - 1] = t
            }
            median = k % 2 ? s[(k + 1) / 2] : (s[k / 2] + s[k / 2 + 1]) / 2
            printf "%s %s after-writes/fresh first %.2f median %.2f of %d\n", l, w, ratios[w, 1], median, k
        }
    }' "$runs"
