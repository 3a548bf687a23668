//! The real sysbench 1.0.20 against a playground: every OLTP workload, with server-side
//! prepared statements (the default) and with the text protocol, and `--auto_inc=off`; the row
//! counts afterwards are what the workloads imply.

mod common;

use common::{sysbench_command, Playground};

const TABLES: u32 = 2;
const TABLE_SIZE: u32 = 10_000;
const SECONDS: u32 = 3;
const THREADS: u32 = 8;

fn sysbench(p: &Playground, args: &[&str]) -> String {
    let out = sysbench_command(p.port, TABLES, TABLE_SIZE)
        .args(args)
        .output()
        .expect("run sysbench");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "sysbench {args:?} failed:\n{stdout}\n{stderr}"
    );
    assert!(
        !stdout.contains("FATAL") && !stderr.contains("FATAL"),
        "sysbench {args:?} reported a fatal error:\n{stdout}\n{stderr}"
    );
    stdout
}

fn run(p: &Playground, workload: &str, extra: &[&str]) -> u64 {
    let time = format!("--time={SECONDS}");
    let threads = format!("--threads={THREADS}");
    let mut args = vec![time.as_str(), threads.as_str()];
    args.extend_from_slice(extra);
    args.push(workload);
    args.push("run");
    let out = sysbench(p, &args);
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("transactions:"))
        .unwrap_or_else(|| panic!("no summary:\n{out}"));
    let count: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(
        count > 0,
        "{workload} {extra:?} completed no transaction:\n{out}"
    );
    count
}

fn counts(p: &Playground) -> Vec<u64> {
    (1..=TABLES)
        .map(|t| {
            p.sql(Some("sbtest"), &format!("SELECT COUNT(*) FROM sbtest{t}"))
                .lines()
                .nth(1)
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect()
}

fn total(p: &Playground) -> u64 {
    counts(p).iter().sum()
}

#[test]
fn every_oltp_workload_runs_and_leaves_consistent_counts() {
    let p = Playground::start();
    p.sql(None, "CREATE DATABASE sbtest");
    sysbench(&p, &["oltp_common", "prepare"]);
    assert_eq!(counts(&p), vec![TABLE_SIZE as u64; TABLES as usize]);
    // The secondary index exists and serves lookups.
    let explain = p.sql(Some("sbtest"), "EXPLAIN SELECT id FROM sbtest1 WHERE k = 5");
    assert!(explain.contains("k_1"), "{explain}");

    for mode in ["auto", "disable"] {
        let ps = format!("--db-ps-mode={mode}");
        for workload in [
            "oltp_point_select",
            "oltp_read_only",
            "oltp_read_write",
            "oltp_write_only",
            "oltp_update_index",
            "oltp_update_non_index",
        ] {
            let before = total(&p);
            run(&p, workload, &[&ps]);
            assert_eq!(
                total(&p),
                before,
                "{workload} ({mode}) must leave the row count unchanged"
            );
        }
        // Each insert event inserts exactly one row.
        let before = total(&p);
        let inserted = run(&p, "oltp_insert", &[&ps]);
        assert_eq!(total(&p), before + inserted, "oltp_insert ({mode})");
    }
    // Client-generated ids over the whole INT range (may collide with existing ids: 1062 ignored).
    let before = total(&p);
    let inserted = run(
        &p,
        "oltp_insert",
        &["--auto_inc=off", "--mysql-ignore-errors=1062"],
    );
    let after = total(&p);
    assert!(
        after > before && after <= before + inserted,
        "auto_inc=off: {before} -> {after} after {inserted} events"
    );

    // Deletes remove at most one row per event, and never more rows than events.
    let before = total(&p);
    let deletes = run(&p, "oltp_delete", &[]);
    let after = total(&p);
    assert!(
        after < before && before - after <= deletes,
        "oltp_delete: {before} -> {after} after {deletes} events"
    );
}
