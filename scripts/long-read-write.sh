#!/usr/bin/env bash
# A long oltp_read_write run at 32 threads on freshly prepared 4 x 100,000 rows, to see whether a
# server holds its pace: sysbench reports TPS and p95 each minute, the data folder's size is
# sampled each minute beside it, and the last line compares the mean of the last five minutes
# with the first five.
#
# usage: scripts/long-read-write.sh HOST PORT USER PASSWORD LABEL DATA_DIR [MINUTES]
# The database `sbtest` must exist; its sbtest tables are dropped first. DATA_DIR is the folder
# whose size is reported (the playground's --data-dir, MariaDB's datadir).
set -euo pipefail
if [ $# -lt 6 ]; then
    sed -n '2,9p' "$0"
    exit 2
fi
host=$1 port=$2 user=$3 password=$4 label=$5 data_dir=$6 minutes=${7:-30}
sb=(sysbench --db-driver=mysql --mysql-host="$host" --mysql-port="$port" --mysql-user="$user"
    --mysql-password="$password" --mysql-db=sbtest --tables=4 --table-size=100000
    --rand-type=uniform)

"${sb[@]}" oltp_common cleanup >/dev/null
"${sb[@]}" oltp_common --threads=4 prepare >/dev/null
sleep 30 # the compaction that follows a load runs before the clock starts

"${sb[@]}" oltp_read_write --threads=32 --time=$((minutes * 60)) --report-interval=60 \
    --percentile=95 run |
    awk '/^\[ [0-9]+s \]/ {gsub("s", "", $2); print $2 / 60, $7, $14; fflush()}' |
    while read -r minute tps p95; do
        # Measured as each minute's report arrives (a sampler of its own drifted a minute
        # behind the reports). du fails when a file goes while it counts (a server deletes
        # files all the time): the size is then what it did count.
        size=$({ du -sm "$data_dir" 2>/dev/null || true; } | awk '{print $1}')
        echo "$label minute $minute tps $tps p95 $p95 data_mib ${size:-?}"
    done | tee /dev/stderr |
    awk -v l="$label" -v n="$minutes" '
        {tps[$3] = $5; p95[$3] = $7}
        END {
            for (m = 1; m <= 5; m++) {ft += tps[m]; fp += p95[m]; lt += tps[n - 5 + m]; lp += p95[n - 5 + m]}
            printf "%s first5 tps %.0f p95 %.1f last5 tps %.0f p95 %.1f tps_ratio %.2f p95_change %+.0f%%\n",
                l, ft / 5, fp / 5, lt / 5, lp / 5, lt / ft, (lp / fp - 1) * 100
        }'
