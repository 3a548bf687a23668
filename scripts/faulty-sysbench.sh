#!/usr/bin/env bash
# sysbench oltp_read_write on a cluster that fails every 30 s: the figures of docs/benchmarks.md
# "Under faults".
#
#   scripts/faulty-sysbench.sh [SECONDS] [THREADS]
#       (default 600 s and 8 threads per SQL node; needs a built target/release/strata, sysbench
#        and the mariadb client)
#
# Starts three placement drivers, three KV nodes and two SQL nodes by hand on loopback (ports
# 23791-23793, 20271-20273, 4110-4111) in a temporary folder, prepares 4 × 100,000 sysbench rows
# and a bank of 20 accounts, then runs for SECONDS: oltp_read_write on each SQL node
# (--mysql-ignore-errors=all, so sysbench retries every error and reconnects), a bank client
# moving money between accounts in transactions on both nodes, and every 30 s one fault, in
# turn: kill -9 of a KV node (restarted 10 s later), kill -9 of the placement drivers' leader
# (restarted 10 s later), a leader transfer of every region (`strata ctl transfer-leader --all`).
# It prints the faults with their times, the transactions per 10 s summed over both SQL nodes,
# the longest run of seconds without a transaction, the errors by code (sysbench's and the
# bank's), and the bank's total at the end, which must be what it started with. Everything it
# started is stopped when it ends, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_RUN=${1:-600}
THREADS=${2:-8}
BIN=${STRATA_BIN:-target/release/strata}
PD_PORTS=(23791 23792 23793)
KV_PORTS=(20271 20272 20273)
SQL_PORTS=(4110 4111)
FAULT_EVERY=30
RESTART_AFTER=10
ACCOUNTS=20
BALANCE=1000
DIR=$(mktemp -d /tmp/strata-faulty.XXXXXX)
declare -A PID

[ -x "$BIN" ] || { echo "faulty-sysbench: build first (cargo build --release -p strata)" >&2; exit 2; }

cleanup() {
  {
    for pid in "${PID[@]}"; do kill -9 "$pid" || true; done
    jobs -p | xargs -r kill -9 || true
    wait || true
  } 2>/dev/null
  rm -rf "$DIR"
}
trap cleanup EXIT

PD_LIST=$(printf '127.0.0.1:%s,' "${PD_PORTS[@]}"); PD_LIST=${PD_LIST%,}
PEERS=""
for i in 1 2 3; do PEERS+="$i=127.0.0.1:${PD_PORTS[$((i - 1))]},"; done
PEERS=${PEERS%,}

start_pd() {
  local i=$1
  "$BIN" pd --listen "127.0.0.1:${PD_PORTS[$((i - 1))]}" --data-dir "$DIR/pd$i" --id "$i" \
    --peers "$PEERS" >>"$DIR/pd$i.log" 2>&1 &
  PID[pd$i]=$!
}
start_kv() {
  local i=$1
  "$BIN" kv --pd "$PD_LIST" --listen "127.0.0.1:${KV_PORTS[$((i - 1))]}" --data-dir "$DIR/kv$i" \
    --block-cache-mib 256 >>"$DIR/kv$i.log" 2>&1 &
  PID[kv$i]=$!
}
start_sql() {
  local i=$1
  "$BIN" server --pd "$PD_LIST" --port "${SQL_PORTS[$((i - 1))]}" >>"$DIR/sql$i.log" 2>&1 &
  PID[sql$i]=$!
}
kill9() {
  kill -9 "${PID[$1]}" 2>/dev/null || true
  wait "${PID[$1]}" 2>/dev/null || true
}
sql() { timeout 60 mariadb -h 127.0.0.1 -P "${SQL_PORTS[0]}" -u root -N -B "$@"; }

for i in 1 2 3; do start_pd "$i"; done
for i in 1 2 3; do start_kv "$i"; done
for i in 1 2; do start_sql "$i"; done
for port in "${SQL_PORTS[@]}"; do
  for _ in $(seq 1 240); do
    timeout 5 mariadb -h 127.0.0.1 -P "$port" -u root -e 'SELECT 1' >/dev/null 2>&1 && break
    sleep 0.5
  done
done

values=$(for id in $(seq 1 "$ACCOUNTS"); do printf '(%d,%d),' "$id" "$BALANCE"; done)
sql -e "CREATE DATABASE sbtest; CREATE DATABASE bank;
  CREATE TABLE bank.accounts (id INT PRIMARY KEY, balance BIGINT NOT NULL);
  INSERT INTO bank.accounts VALUES ${values%,}"
SB_COMMON=(--db-driver=mysql --mysql-host=127.0.0.1 --mysql-user=root --mysql-db=sbtest
  --tables=4 --table-size=100000)
echo "preparing 4 × 100,000 rows ($(date -u +%T))"
sysbench oltp_common "${SB_COMMON[@]}" --mysql-port="${SQL_PORTS[0]}" --threads=4 prepare \
  >"$DIR/prepare.log"

# oltp_read_write, counting the errors it retries by code (each sysbench thread writes its
# counts when it ends).
cat >"$DIR/counted.lua" <<'EOF'
dofile("/usr/share/sysbench/oltp_read_write.lua")
local errors, messages = {}, {}
local restart = sysbench.hooks.before_restart_event
function sysbench.hooks.before_restart_event(errdesc)
  local code = errdesc.sql_errno or 0
  errors[code] = (errors[code] or 0) + 1
  messages[code] = messages[code] or tostring(errdesc.sql_errmsg)
  if restart then restart(errdesc) end
end
local done = thread_done
function thread_done()
  for code, n in pairs(errors) do
    io.stderr:write(string.format("error %d %d %s\n", code, n, messages[code]))
  end
  done()
end
EOF

# The bank: transfers of 1 to 50 between two accounts, in one transaction, on either node.
bank() {
  local end=$(( $(date +%s) + SECONDS_RUN ))
  while [ "$(date +%s)" -lt "$end" ]; do
    local from=$(( RANDOM % ACCOUNTS + 1 )) to=$(( RANDOM % ACCOUNTS + 1 )) amount=$(( RANDOM % 50 + 1 ))
    [ "$from" = "$to" ] && continue
    local port=${SQL_PORTS[$(( RANDOM % 2 ))]}
    if timeout 30 mariadb -h 127.0.0.1 -P "$port" -u root bank -e "BEGIN;
        UPDATE accounts SET balance = balance - $amount WHERE id = $from;
        UPDATE accounts SET balance = balance + $amount WHERE id = $to; COMMIT" 2>>"$DIR/bank.err"; then
      echo ok
    else
      echo failed
    fi
  done >"$DIR/bank.out"
}

echo "running ${SECONDS_RUN} s, ${THREADS} threads on each SQL node, a fault every ${FAULT_EVERY} s"
started=$(date +%s)
for i in 1 2; do
  sysbench "$DIR/counted.lua" "${SB_COMMON[@]}" --mysql-port="${SQL_PORTS[$((i - 1))]}" \
    --threads="$THREADS" --time="$SECONDS_RUN" --report-interval=1 --mysql-ignore-errors=all \
    run >"$DIR/sysbench$i.out" 2>"$DIR/sysbench$i.err" &
  PID[sysbench$i]=$!
done
bank &
PID[bank]=$!

pd_leader() {
  "$BIN" ctl --pd "$PD_LIST" members 2>/dev/null | awk '$3 == "leader" { print $1 }'
}

# The faults, and the restart each kill asks for, happen in this shell (so that the cleanup
# knows every process it started).
sleep_until() { local wait=$(( $1 - $(date +%s) )); [ "$wait" -gt 0 ] && sleep "$wait"; return 0; }
fault=0
kv_kills=0
restart=""
restart_at=0
last=$(( started + SECONDS_RUN - 5 ))
while :; do
  next=$(( started + (fault + 1) * FAULT_EVERY ))
  if [ -n "$restart" ] && [ "$restart_at" -le "$next" ]; then
    sleep_until "$restart_at"
    "start_${restart% *}" "${restart#* }"
    echo "$(( $(date +%s) - started )) s: ${restart% *}${restart#* } started"
    restart=""
    continue
  fi
  [ "$next" -ge "$last" ] && break
  sleep_until "$next"
  at=$(( $(date +%s) - started ))
  case $(( fault % 5 )) in
    0|2|4)
      kv=$(( kv_kills % 3 + 1 ))
      kv_kills=$(( kv_kills + 1 ))
      kill9 "kv$kv"
      echo "${at} s: kill -9 of KV node $kv"
      restart="kv $kv"
      restart_at=$(( $(date +%s) + RESTART_AFTER ))
      ;;
    1)
      leader=$(pd_leader)
      if [ -n "$leader" ]; then
        kill9 "pd$leader"
        echo "${at} s: kill -9 of the placement drivers' leader (pd$leader)"
        restart="pd $leader"
        restart_at=$(( $(date +%s) + RESTART_AFTER ))
      else
        echo "${at} s: no placement driver leader found"
      fi
      ;;
    3)
      moved=$("$BIN" ctl --pd "$PD_LIST" transfer-leader --all 2>&1 | wc -l)
      echo "${at} s: leader transfer of every region ($moved asked)"
      ;;
  esac
  fault=$(( fault + 1 ))
done
wait "${PID[sysbench1]}" "${PID[sysbench2]}" || echo "a sysbench run failed (see its errors below)"
wait "${PID[bank]}" || true

echo
echo "transactions per 10 s (both SQL nodes):"
cat "$DIR"/sysbench1.out "$DIR"/sysbench2.out | awk '
  /^\[ *[0-9]+s \]/ { s = $2; sub(/s$/, "", s); t = $7; tps[s] += t }
  END {
    for (s = 1; s in tps || s <= 1; s++) last = s
    for (b = 0; b * 10 < last; b++) {
      sum = 0; for (s = b * 10 + 1; s <= b * 10 + 10; s++) sum += tps[s]
      printf "%4d-%4d s %8.0f\n", b * 10, b * 10 + 10, sum
    }
    longest = 0; run = 0
    for (s = 1; s < last; s++) { if (tps[s] < 0.5) { run++; if (run > longest) longest = run } else run = 0 }
    printf "longest run of seconds without a transaction: %d s\n", longest
  }'
for i in 1 2; do
  grep -E "transactions:|ignored errors:|reconnects:" "$DIR/sysbench$i.out" | sed "s/^/sql$i /"
done
echo "errors retried by sysbench, by code:"
cat "$DIR"/sysbench1.err "$DIR"/sysbench2.err | awk '$1 == "error" {
    n[$2] += $3; if (!($2 in m)) { m[$2] = $4; for (i = 5; i <= NF; i++) m[$2] = m[$2] " " $i } }
  END { for (c in n) printf "  %s: %d (%s)\n", c, n[c], m[c] }'
grep -v '^error ' "$DIR"/sysbench1.err "$DIR"/sysbench2.err | head -5 || true
echo "bank: $(grep -c '^ok' "$DIR/bank.out" || true) transfers committed, $(grep -c '^failed' "$DIR/bank.out" || true) failed; errors by code:"
grep -E '^ERROR [0-9]+' "$DIR/bank.err" | sort | uniq -c | sed 's/^ */  /' || true
for _ in $(seq 1 60); do
  total=$(sql -e "SELECT SUM(balance), COUNT(*) FROM bank.accounts" 2>/dev/null) && break
  sleep 1
done
echo "bank total: ${total:-unreadable} (started with $(( ACCOUNTS * BALANCE )) in $ACCOUNTS accounts)"
[ "$(echo "$total" | awk '{ print $1 }')" = "$(( ACCOUNTS * BALANCE ))" ] || { echo "THE BANK TOTAL CHANGED"; exit 1; }
