//! A cluster of three KV nodes (every region on all three, replicated by Raft) keeps serving
//! when the node that leads the data is killed with `kill -9`: the real sysbench keeps running
//! on both SQL nodes, the killed node restarts and catches up, and no acknowledged commit is
//! lost.

mod common;

use std::collections::BTreeSet;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::{bounded, connect, sql_at, sysbench_command, wait_for};
use mysql_async::prelude::Queryable;

/// The MySQL error codes a SQL node may answer while a region elects a new leader: 1105 (a
/// KV request that found no leader in time, or whose outcome the dead leader took with it),
/// 1205 / 1213 (lock waits and deadlocks, as under any load) and 9007 (a write conflict).
const FAILOVER_ERRORS: &str = "1105,1205,1213,9007";

fn sysbench(port: u16, args: &[&str]) -> Child {
    sysbench_command(port, 2, 2000)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sysbench")
}

fn finished(child: Child, what: &str) -> String {
    let out = child.wait_with_output().expect("sysbench output");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && !text.contains("FATAL"),
        "sysbench {what} failed:\n{text}"
    );
    text
}

/// The transactions per second of each `--report-interval=1` line, by second.
fn tps_by_second(out: &str) -> Vec<(u64, f64)> {
    out.lines()
        .filter_map(|line| {
            let second = line.trim_start().strip_prefix("[ ")?.split('s').next()?;
            let tps = line.split("tps: ").nth(1)?.split_whitespace().next()?;
            Some((second.trim().parse().ok()?, tps.parse().ok()?))
        })
        .collect()
}

#[test]
fn sysbench_keeps_running_while_the_leader_kv_node_is_killed_and_restarted() {
    let mut cluster = Cluster::start(3, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    sql_at(a, None, "CREATE DATABASE sbtest");
    wait_for(
        b,
        "SHOW DATABASES LIKE 'sbtest'",
        "Database (sbtest)\nsbtest\n",
    );
    finished(sysbench(a, &["oltp_common", "prepare"]), "prepare");
    let ignore = format!("--mysql-ignore-errors={FAILOVER_ERRORS}");
    let common = ["--threads=4", "--time=24", "--report-interval=1", &ignore];
    let started = Instant::now();
    let read_write = sysbench(a, &[&common[..], &["oltp_read_write", "run"]].concat());
    let update_index = sysbench(b, &[&common[..], &["oltp_update_index", "run"]].concat());

    std::thread::sleep(Duration::from_secs(6));
    let leader = cluster.leader_of(b"");
    cluster.kv[leader].kill9();
    let killed_at = started.elapsed().as_secs();
    std::thread::sleep(Duration::from_secs(6));
    cluster.kv[leader].start();

    let outputs = [
        finished(read_write, "oltp_read_write on SQL node 1"),
        finished(update_index, "oltp_update_index on SQL node 2"),
    ];
    for out in &outputs {
        let seconds = tps_by_second(out);
        assert!(seconds.len() >= 20, "too few interval reports:\n{out}");
        // Throughput recovers: from 5 s after the kill on, no second is without commits.
        let stalled: Vec<_> = seconds
            .iter()
            .filter(|(s, tps)| *s >= killed_at + 5 && *tps == 0.0)
            .collect();
        assert!(
            stalled.is_empty(),
            "seconds without commits after the failover {stalled:?}:\n{out}\n{}",
            cluster.logs()
        );
        let ignored = out
            .lines()
            .find(|l| l.trim_start().starts_with("ignored errors:"))
            .unwrap_or("ignored errors: none reported");
        println!(
            "killed kv{} at {killed_at}s; {}",
            leader + 1,
            ignored.trim()
        );
    }
    // read_write deletes and re-inserts the same id in one transaction: counts stay.
    for port in [a, b] {
        assert_eq!(
            sql_at(
                port,
                Some("sbtest"),
                "SELECT (SELECT COUNT(*) FROM sbtest1), (SELECT COUNT(*) FROM sbtest2)"
            ),
            "(SELECT COUNT(*) FROM sbtest1)\t(SELECT COUNT(*) FROM sbtest2)\n2000\t2000\n"
        );
    }
}

#[test]
fn acknowledged_commits_survive_killing_the_leader_and_then_another_node() {
    let mut cluster = Cluster::start(3, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    sql_at(
        a,
        None,
        "CREATE DATABASE crash; CREATE TABLE crash.acked (id BIGINT PRIMARY KEY, v BIGINT)",
    );
    wait_for(b, "SELECT COUNT(*) FROM crash.acked", "COUNT(*)\n0\n");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let url = format!("mysql://root@127.0.0.1:{a}/crash");
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let writers: Vec<_> = (0..4u64)
        .map(|w| {
            let (url, stop) = (url.clone(), stop.clone());
            runtime.spawn(async move {
                let mut acknowledged = Vec::new();
                let mut conn = connect(&url).await.expect("connect");
                let mut id = w * 1_000_000;
                while !stop.load(Ordering::SeqCst) {
                    id += 1;
                    let insert = format!("INSERT INTO acked VALUES ({id}, {id})");
                    // During a failover the SQL node answers with an error and the connection
                    // stays usable; only acknowledged rows are checked.
                    if bounded(conn.query_drop(insert)).await.is_ok() {
                        acknowledged.push((id, started.elapsed()));
                    }
                }
                acknowledged
            })
        })
        .collect();

    std::thread::sleep(Duration::from_millis(1500));
    let leader = cluster.leader_of(b"");
    cluster.kv[leader].kill9();
    std::thread::sleep(Duration::from_secs(2));
    cluster.kv[leader].start();
    std::thread::sleep(Duration::from_secs(2));
    // Now stop another node: the restarted one must have caught up, since it and the third
    // node are the majority every later commit needs.
    let current = cluster.leader_of(b"");
    let victim = if current != leader {
        current
    } else {
        (0..3).find(|i| *i != leader).unwrap()
    };
    cluster.kv[victim].kill9();
    let second_kill = started.elapsed();
    std::thread::sleep(Duration::from_secs(4));
    stop.store(true, Ordering::SeqCst);

    let mut acknowledged = BTreeSet::new();
    let mut after_second_kill = 0;
    for writer in writers {
        for (id, at) in runtime.block_on(writer).unwrap() {
            acknowledged.insert(id);
            if at > second_kill {
                after_second_kill += 1;
            }
        }
    }
    assert!(
        after_second_kill > 0,
        "no commit after kv{} was killed with kv{} restarted:\n{}",
        victim + 1,
        leader + 1,
        cluster.logs()
    );
    let present: BTreeSet<u64> = runtime.block_on(async {
        let mut conn = connect(&format!("mysql://root@127.0.0.1:{b}/crash"))
            .await
            .unwrap();
        let rows: Vec<u64> = bounded(conn.query("SELECT id FROM acked")).await.unwrap();
        rows.into_iter().collect()
    });
    let missing: Vec<_> = acknowledged.difference(&present).collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged rows lost, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    println!(
        "{} inserts acknowledged across two kills ({after_second_kill} after the second); all present",
        acknowledged.len()
    );
}
