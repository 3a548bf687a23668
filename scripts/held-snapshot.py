#!/usr/bin/python3
"""A snapshot held open through a long run of writes, then let go.

Prepares sysbench's 4 x 100,000 rows on a running Strata playground, opens
`START TRANSACTION WITH CONSISTENT SNAPSHOT` and reads a checksum of every table, then runs
`oltp_write_only` at 32 threads for HOLD_SECS while that transaction stays idle (printing the
data folder's size each minute), reads the checksums again in the same transaction (they must
not have changed), commits, and for 90 s more prints the data folder's size and the manual
compactions of the write column family that the store's RocksDB log reports: the garbage the
writes left should go within a minute of the commit.

usage: scripts/held-snapshot.py PORT DATA_DIR [HOLD_SECS]
The playground listens on 127.0.0.1:PORT as root without a password and keeps its data in
DATA_DIR; the database `sbtest` must not exist. Needs PyMySQL (python3-pymysql) and sysbench.
"""

import subprocess
import sys
import time

import pymysql

TABLES = 4
ROWS = 100_000


def folder_mib(path):
    out = subprocess.run(["du", "-sm", path], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def manual_compactions(data_dir):
    try:
        with open(f"{data_dir}/kv/LOG", encoding="utf-8", errors="replace") as log:
            return log.read().count("Manual compaction from")
    except FileNotFoundError:
        return 0


def checksums(cursor):
    sums = []
    for t in range(1, TABLES + 1):
        cursor.execute(f"SELECT COUNT(*), SUM(k), BIT_XOR(CRC32(c)) FROM sbtest{t}")
        sums.append(cursor.fetchone())
    return sums


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    port, data_dir = int(sys.argv[1]), sys.argv[2]
    hold = int(sys.argv[3]) if len(sys.argv) > 3 else 600
    sysbench = ["sysbench", "--db-driver=mysql", "--mysql-host=127.0.0.1",
                f"--mysql-port={port}", "--mysql-user=root", "--mysql-db=sbtest",
                f"--tables={TABLES}", f"--table-size={ROWS}", "--rand-type=uniform"]

    root = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    root.cursor().execute("CREATE DATABASE sbtest")
    subprocess.run(sysbench + ["--threads=4", "oltp_common", "prepare"],
                   stdout=subprocess.DEVNULL, check=True)
    print(f"prepared: data folder {folder_mib(data_dir)} MiB", flush=True)

    held = pymysql.connect(host="127.0.0.1", port=port, user="root", database="sbtest")
    cursor = held.cursor()
    cursor.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
    before = checksums(cursor)
    print(f"snapshot opened: {before}", flush=True)

    writes = subprocess.Popen(sysbench + ["--threads=32", f"--time={hold}", "oltp_write_only",
                                          "run"], stdout=subprocess.PIPE, text=True)
    started = time.monotonic()
    while writes.poll() is None:
        time.sleep(min(60, max(1, hold - (time.monotonic() - started))))
        print(f"{time.monotonic() - started:5.0f} s of writes: data folder "
              f"{folder_mib(data_dir)} MiB", flush=True)
    report = writes.stdout.read()
    tps = [line.split()[2].strip("(") for line in report.splitlines()
           if "transactions:" in line]
    print(f"writes done: {tps[0] if tps else '?'} transactions per second", flush=True)

    after = checksums(cursor)
    print(f"snapshot after {hold} s idle: {'unchanged' if after == before else 'CHANGED'}"
          f" {after}", flush=True)
    seen = manual_compactions(data_dir)
    cursor.execute("COMMIT")
    ended = time.monotonic()
    print(f"committed: data folder {folder_mib(data_dir)} MiB", flush=True)
    while time.monotonic() - ended < 90:
        time.sleep(10)
        print(f"{time.monotonic() - ended:4.0f} s after: data folder {folder_mib(data_dir)}"
              f" MiB, write-CF compactions since the commit "
              f"{manual_compactions(data_dir) - seen}", flush=True)
    sys.exit(0 if after == before else 1)


if __name__ == "__main__":
    main()
