//! A cluster of three KV nodes (every region on all three, replicated by Raft) keeps serving
//! when the node that leads the data is killed with `kill -9`: the real sysbench keeps running
//! on both SQL nodes, the killed node restarts and catches up, no acknowledged commit is lost,
//! and bank transfers across regions keep the total in every snapshot while leaders die, come
//! back and move, and regions split.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::tpcc::{read_result, tpcc};
use common::{
    acked, assert_sbtest_rows, bounded, connect, spawn_sysbench, sql_at, sysbench_output, wait_for,
};
use mysql_async::prelude::Queryable;

/// The MySQL error codes a SQL node may answer while a region elects a new leader: 9005 (a
/// KV request that found no leader in time), 9001 (a placement-driver call that got no answer
/// in time), 1180 (a commit whose outcome the dead leader took with it), 1205 / 1213 (lock
/// waits and deadlocks, as under any load), 9007 (a write conflict) and 8027 (a commit
/// refused while the node's schema report waits for the leader of the catalog's region for
/// half a lease). Not 1105: an internal error is a failure here.
const FAILOVER_ERRORS: &str = "1180,1205,1213,8027,9001,9005,9007";

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
    sysbench_output(spawn_sysbench(a, &["oltp_common", "prepare"]), "prepare");
    let ignore = format!("--mysql-ignore-errors={FAILOVER_ERRORS}");
    let common = ["--threads=4", "--time=24", "--report-interval=1", &ignore];
    let started = Instant::now();
    let read_write = spawn_sysbench(a, &[&common[..], &["oltp_read_write", "run"]].concat());
    let update_index = spawn_sysbench(b, &[&common[..], &["oltp_update_index", "run"]].concat());

    std::thread::sleep(Duration::from_secs(6));
    let leader = cluster.leader_of(b"");
    cluster.kv[leader].kill9();
    let killed_at = started.elapsed().as_secs();
    std::thread::sleep(Duration::from_secs(6));
    cluster.kv[leader].start();

    let outputs = [
        sysbench_output(read_write, "oltp_read_write on SQL node 1"),
        sysbench_output(update_index, "oltp_update_index on SQL node 2"),
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
    assert_sbtest_rows(&[a, b], 2000);
}

/// TPC-C (pessimistic transactions over every table's regions) on one SQL node while the
/// leading KV node is killed with `kill -9` and restarted: New-Orders keep committing once the
/// regions have new leaders, and afterwards all the consistency checks pass on the other SQL
/// node.
#[test]
fn tpcc_stays_consistent_while_the_leader_kv_node_is_killed_and_restarted() {
    let mut cluster = Cluster::start(3, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    let at = |port: u16, args: &[&str]| -> Vec<String> {
        let port = port.to_string();
        let mut all = vec![args[0], "-P", &port, "-D", "tpcc", "--warehouses", "1"];
        all.extend_from_slice(&args[1..]);
        all.into_iter().map(String::from).collect()
    };
    let (ok, stdout, stderr) = tpcc(&at(a, &["prepare", "-T", "2", "--seed", "11"]));
    assert!(
        ok,
        "prepare failed:\n{stdout}\n{stderr}\n{}",
        cluster.logs()
    );

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tpcc.json");
    // Errors of the failover window (1180, 9005) are counted, not fatal.
    let run = at(
        b,
        &[
            "run",
            "-T",
            "4",
            "--time",
            "30",
            "--interval",
            "2s",
            "--ignore-error",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    let started = Instant::now();
    let running = std::thread::spawn(move || tpcc(&run));
    std::thread::sleep(Duration::from_secs(8));
    let leader = cluster.leader_of(b"");
    cluster.kv[leader].kill9();
    let killed_at = started.elapsed().as_secs_f64();
    std::thread::sleep(Duration::from_secs(8));
    cluster.kv[leader].start();
    let (ok, stdout, stderr) = running.join().unwrap();
    assert!(ok, "run failed:\n{stdout}\n{stderr}\n{}", cluster.logs());

    let result = read_result(&out);
    // From 6 s after the kill on, every 2-second interval has New-Orders.
    let stalled: Vec<_> = result
        .intervals
        .iter()
        .filter(|i| i.second - 2.0 >= killed_at + 6.0 && i.tpmc == 0.0)
        .collect();
    assert!(
        result.intervals.len() >= 14 && stalled.is_empty(),
        "intervals without New-Orders after the failover {stalled:?} of {:?}:\n{stdout}\n{}",
        result.intervals,
        cluster.logs()
    );
    let errors: u64 = result.transactions.values().map(|t| t.errors).sum();
    println!(
        "killed kv{} at {killed_at:.1}s; tpmC {:.0}; {errors} failed transactions",
        leader + 1,
        result.tpmc
    );
    let (ok, stdout, stderr) = tpcc(&at(a, &["check"]));
    assert!(ok, "check failed:\n{stdout}\n{stderr}");
    assert!(
        !stdout.contains("FAIL") && !stdout.contains("ERROR"),
        "{stdout}"
    );
}

#[test]
fn acknowledged_commits_survive_killing_the_leader_and_then_another_node() {
    let mut cluster = Cluster::start(3, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    acked::create_table(a, b);
    let started = Instant::now();
    let inserters = acked::Inserters::start(a, 4, started);

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

    let outcome = inserters.stop();
    let after_second_kill = outcome
        .acknowledged
        .iter()
        .filter(|(_, at)| *at > second_kill)
        .count();
    assert!(
        after_second_kill > 0,
        "no commit after kv{} was killed with kv{} restarted:\n{}",
        victim + 1,
        leader + 1,
        cluster.logs()
    );
    let acknowledged = outcome.ids();
    acked::assert_present(b, &outcome);
    println!(
        "{} inserts acknowledged across two kills ({after_second_kill} after the second); all present",
        acknowledged.len()
    );
}

const ACCOUNTS: i64 = 20;
const BALANCE_INITIAL: i64 = 1_000;

/// What one transfer task did: committed and failed transaction counts, the failed ones'
/// errors, and when each commit was acknowledged.
#[derive(Default)]
struct Transfers {
    committed: u64,
    failed: u64,
    errors: std::collections::BTreeMap<String, u64>,
    acknowledged: Vec<Instant>,
}

/// Moves money between random accounts with two relative UPDATEs in one transaction until
/// `stop`. A failed transaction is rolled back and the next one starts; after a timeout or a
/// broken connection the task connects again, so no answer to an abandoned statement can be
/// taken for the answer to a later one.
async fn transfer(url: String, seed: u64, stop: Arc<AtomicBool>) -> Transfers {
    let mut conn = connect(&url).await.expect("connect");
    let mut done = Transfers::default();
    let mut n = seed;
    while !stop.load(Ordering::SeqCst) {
        n = n.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let from = (n >> 33) as i64 % ACCOUNTS;
        let to = (from + 1 + (n >> 17) as i64 % (ACCOUNTS - 1)) % ACCOUNTS;
        let amount = 1 + (n >> 7) as i64 % 50;
        let ok = async {
            bounded(conn.query_drop("BEGIN")).await?;
            bounded(conn.query_drop(format!(
                "UPDATE accounts SET balance = balance - {amount} WHERE id = {from}"
            )))
            .await?;
            bounded(conn.query_drop(format!(
                "UPDATE accounts SET balance = balance + {amount} WHERE id = {to}"
            )))
            .await?;
            bounded(conn.query_drop("COMMIT")).await
        }
        .await;
        match ok {
            Ok(()) => {
                done.committed += 1;
                done.acknowledged.push(Instant::now());
            }
            Err(e) => {
                done.failed += 1;
                let kind = match &e {
                    common::ClientError::Server { code, .. } => format!("{code}"),
                    other => other.to_string(),
                };
                *done.errors.entry(kind).or_default() += 1;
                if e.server_code().is_some() {
                    let _ = bounded(conn.query_drop("ROLLBACK")).await;
                } else {
                    while !stop.load(Ordering::SeqCst) {
                        match connect(&url).await {
                            Ok(fresh) => {
                                conn = fresh;
                                break;
                            }
                            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
                        }
                    }
                }
            }
        }
    }
    done
}

/// Reads every balance in one transaction until `stop`; returns the balances of each snapshot.
async fn check(url: String, stop: Arc<AtomicBool>) -> Vec<Vec<i64>> {
    let mut conn = connect(&url).await.expect("connect");
    let mut snapshots = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        let read = async {
            bounded(conn.query_drop("BEGIN")).await?;
            let balances: Vec<i64> =
                bounded(conn.query("SELECT balance FROM accounts ORDER BY id")).await?;
            bounded(conn.query_drop("COMMIT")).await?;
            Ok::<_, common::ClientError>(balances)
        }
        .await;
        match read {
            Ok(balances) if balances.len() == ACCOUNTS as usize => snapshots.push(balances),
            Ok(balances) => panic!("a snapshot with {} accounts", balances.len()),
            // The region is between leaders: the read fails as a whole and is tried again.
            Err(_) => {
                let _ = bounded(conn.query_drop("ROLLBACK")).await;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
    snapshots
}

#[test]
fn bank_totals_never_change_while_leaders_die_and_come_back() {
    // 6-key regions: the 20 accounts end up in several regions (splitting during the run), so
    // most transfers commit across regions (async commit), while the balancer moves leaders.
    let mut cluster = Cluster::start_with(3, 2, &["--region-split-keys", "6"]);
    let ports = [cluster.sql[0].port, cluster.sql[1].port];
    let values: Vec<String> = (0..ACCOUNTS)
        .map(|id| format!("({id}, {BALANCE_INITIAL})"))
        .collect();
    sql_at(
        ports[0],
        None,
        &format!(
            "CREATE DATABASE bank; CREATE TABLE bank.accounts (id BIGINT PRIMARY KEY, \
             balance BIGINT NOT NULL); INSERT INTO bank.accounts VALUES {}",
            values.join(", ")
        ),
    );
    wait_for(
        ports[1],
        "SELECT COUNT(*) FROM bank.accounts",
        &format!("COUNT(*)\n{ACCOUNTS}\n"),
    );
    let runtime = common::runtime(2);
    let stop = Arc::new(AtomicBool::new(false));
    let url = |i: usize| format!("mysql://root@127.0.0.1:{}/bank", ports[i % 2]);
    let transfers: Vec<_> = (0..4)
        .map(|i| runtime.spawn(transfer(url(i), i as u64 + 1, stop.clone())))
        .collect();
    let checkers: Vec<_> = (0..2)
        .map(|i| runtime.spawn(check(url(i), stop.clone())))
        .collect();

    // Two rounds: the leader's node dies and comes back; the region moves its leader each time.
    for _ in 0..2 {
        std::thread::sleep(Duration::from_secs(2));
        let leader = cluster.leader_of(b"");
        cluster.kv[leader].kill9();
        std::thread::sleep(Duration::from_secs(3));
        cluster.kv[leader].start();
    }
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::SeqCst);

    let mut done = Transfers::default();
    for task in transfers {
        let t = runtime.block_on(task).unwrap();
        done.committed += t.committed;
        done.failed += t.failed;
        for (kind, count) in t.errors {
            *done.errors.entry(kind).or_default() += count;
        }
        done.acknowledged.extend(t.acknowledged);
    }
    done.acknowledged.sort();
    let longest_stall = done
        .acknowledged
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or_default();
    // A statement without an answer for 10 s waited on a deadlock across KV nodes that the
    // placement driver's detector missed, or on a region unavailable for longer than the
    // failover bar.
    assert!(
        !done.errors.keys().any(|e| e.starts_with("no answer")),
        "transfers met {:?}",
        done.errors
    );
    let (committed, failed) = (done.committed, done.failed);
    let mut snapshots = 0;
    for task in checkers {
        let seen = runtime.block_on(task).unwrap();
        let total = |b: &Vec<i64>| b.iter().sum::<i64>();
        if let Some(bad) = seen
            .iter()
            .position(|b| total(b) != ACCOUNTS * BALANCE_INITIAL)
        {
            let before = bad.checked_sub(1).map(|i| &seen[i]);
            panic!(
                "snapshot {bad} of {} has the total {}: balances {:?}, the snapshot before \
                 {:?}; transfers: {committed} committed, failed {:?}",
                seen.len(),
                total(&seen[bad]),
                seen[bad],
                before,
                done.errors
            );
        }
        snapshots += seen.len();
    }
    assert!(committed > 0 && snapshots > 0, "{}", cluster.logs());
    let total = sql_at(ports[1], Some("bank"), "SELECT SUM(balance) FROM accounts");
    assert_eq!(
        total,
        format!("SUM(balance)\n{}\n", ACCOUNTS * BALANCE_INITIAL)
    );
    let regions = cluster.regions().len();
    println!(
        "bank: {committed} transfers committed, {failed} failed during failovers ({:?}); \
         the longest time without a commit {longest_stall:?}; {snapshots} snapshots all kept \
         the total; {regions} regions",
        done.errors
    );
}
