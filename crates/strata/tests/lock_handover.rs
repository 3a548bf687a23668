//! Pessimistic locks survive leader transfers: while every region's leader is moved every
//! second, transactions on two SQL nodes take one row `FOR UPDATE` in turn, and no two of them
//! ever hold it at once; each commit succeeds or fails with an error a client retries.

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::{sql_at, wait_for};
use mysql_async::prelude::Queryable;

/// How long the workload runs while leaders move.
const RUN: Duration = Duration::from_secs(20);
/// How long a transaction holds the row before it writes and commits.
const HOLD: Duration = Duration::from_millis(15);
/// Errors a client retries: lock wait timeout, deadlock, write conflict, and a commit of
/// unknown outcome.
const RETRYABLE: [u16; 4] = [1205, 1213, 9007, 1180];

#[derive(Default)]
struct Tally {
    committed: u64,
    /// Commits answered 1180: applied or not.
    undetermined: u64,
    errors: BTreeMap<u16, u64>,
    /// Times a transaction was granted the row while another held it.
    overlaps: u64,
    other: Vec<String>,
}

/// Runs `sql`, bounded in time.
async fn step<T: mysql_async::prelude::FromRow + Send + 'static>(
    conn: &mut mysql_async::Conn,
    sql: &str,
) -> Result<Vec<T>, mysql_async::Error> {
    match tokio::time::timeout(Duration::from_secs(60), conn.query(sql)).await {
        Ok(result) => result,
        Err(_) => panic!("{sql}: no answer within 60 s"),
    }
}

/// One client: lock the row, hold it, add one, commit; again until `stop`.
async fn worker(url: String, holders: Arc<AtomicI64>, stop: Arc<AtomicBool>) -> Tally {
    let mut tally = Tally::default();
    let mut conn = common::connect(&url).await.expect("connect");
    step::<u8>(&mut conn, "SET innodb_lock_wait_timeout = 5")
        .await
        .unwrap();
    while !stop.load(Ordering::SeqCst) {
        step::<u8>(&mut conn, "BEGIN").await.unwrap();
        let result: Result<(), mysql_async::Error> = async {
            step::<i64>(&mut conn, "SELECT v FROM c WHERE id = 1 FOR UPDATE").await?;
            if holders.fetch_add(1, Ordering::SeqCst) != 0 {
                tally.overlaps += 1;
            }
            tokio::time::sleep(HOLD).await;
            holders.fetch_sub(1, Ordering::SeqCst);
            step::<u8>(&mut conn, "UPDATE c SET v = v + 1 WHERE id = 1").await?;
            step::<u8>(&mut conn, "COMMIT").await?;
            Ok(())
        }
        .await;
        match result {
            Ok(()) => tally.committed += 1,
            Err(mysql_async::Error::Server(e)) => {
                *tally.errors.entry(e.code).or_default() += 1;
                if e.code == 1180 {
                    tally.undetermined += 1;
                }
                if !RETRYABLE.contains(&e.code) && tally.other.len() < 5 {
                    tally.other.push(format!("{} {}", e.code, e.message));
                }
                let _ = step::<u8>(&mut conn, "ROLLBACK").await;
            }
            Err(e) => panic!("the connection failed: {e}"),
        }
    }
    tally
}

/// `strata ctl … regions` lists each region with its leader's store, and `transfer-leader
/// --all` moves every leader to the next store holding a peer (seen in the next listing).
fn ctl_moves_every_leader(cluster: &Cluster) {
    let ctl = |args: &[&str]| {
        let out = common::run_bounded(
            std::process::Command::new(env!("CARGO_BIN_EXE_strata"))
                .args(["ctl", "--pd", &cluster.pd_address])
                .args(args),
            Duration::from_secs(30),
        );
        assert!(out.status.success(), "strata ctl {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let leaders = |listing: &str| -> BTreeMap<String, String> {
        let mut lines = listing.lines();
        assert_eq!(
            lines.next(),
            Some("region\tleader_store\tstores"),
            "{listing}"
        );
        lines
            .map(|line| {
                let fields: Vec<&str> = line.split('\t').collect();
                assert_eq!(fields.len(), 3, "{listing}");
                (fields[0].to_string(), fields[1].to_string())
            })
            .collect()
    };
    let before = leaders(&ctl(&["regions"]));
    assert!(
        !before.is_empty() && before.values().all(|l| l != "-"),
        "{before:?}"
    );
    let moved = ctl(&["transfer-leader", "--all"]);
    assert_eq!(moved.lines().count(), before.len(), "{moved}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = leaders(&ctl(&["regions"]));
        if now
            .iter()
            .all(|(region, leader)| before.get(region) != Some(leader))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "leaders {before:?} still {now:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn for_update_stays_exclusive_while_leaders_move_every_second() {
    let cluster = Cluster::start(3, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    sql_at(
        a,
        None,
        "CREATE DATABASE h; CREATE TABLE h.c (id INT PRIMARY KEY, v INT); \
         INSERT INTO h.c VALUES (1, 0)",
    );
    wait_for(b, "SELECT COUNT(*) FROM h.c", "COUNT(*)\n1\n");
    let stores = cluster.store_ids();
    ctl_moves_every_leader(&cluster);

    let runtime = common::runtime(2);
    let holders = Arc::new(AtomicI64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = [a, a, b, b]
        .iter()
        .map(|port| {
            runtime.spawn(worker(
                format!("mysql://root@127.0.0.1:{port}/h"),
                holders.clone(),
                stop.clone(),
            ))
        })
        .collect();

    // Every second, each region's leader is asked to move to the next store that holds a
    // peer of it; count the moves the placement driver then reports.
    let pd = strata_pd_client::PdClient::connect(&cluster.pd_address).expect("pd client");
    let started = Instant::now();
    let mut last: BTreeMap<u64, u64> = BTreeMap::new();
    let mut moves = 0;
    let mut asked = 0;
    while started.elapsed() < RUN {
        for (region, leader) in common::cluster::move_every_leader(&pd) {
            if last
                .insert(region, leader)
                .is_some_and(|before| before != leader)
            {
                moves += 1;
            }
            asked += 1;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
    stop.store(true, Ordering::SeqCst);
    let mut total = Tally::default();
    for w in workers {
        let t = runtime.block_on(w).expect("worker");
        total.committed += t.committed;
        total.undetermined += t.undetermined;
        total.overlaps += t.overlaps;
        for (code, n) in t.errors {
            *total.errors.entry(code).or_default() += n;
        }
        total.other.extend(t.other);
    }
    let v: u64 = sql_at(a, Some("h"), "SELECT v FROM c WHERE id = 1")
        .lines()
        .nth(1)
        .and_then(|l| l.parse().ok())
        .expect("the counter");
    eprintln!(
        "{} stores; {asked} transfers asked, {moves} leader moves seen; {} commits, errors \
         {:?}, counter {v}",
        stores.len(),
        total.committed,
        total.errors
    );
    assert!(moves >= 8, "leaders moved {moves} times in {RUN:?}");
    assert_eq!(
        total.overlaps,
        0,
        "the row was granted FOR UPDATE while another transaction held it ({} commits, \
         errors {:?})\n{}",
        total.committed,
        total.errors,
        cluster.logs()
    );
    assert!(
        total.other.is_empty(),
        "errors a client cannot retry: {:?}",
        total.other
    );
    assert!(
        total.committed >= 20,
        "only {} commits while leaders moved; errors {:?}",
        total.committed,
        total.errors
    );
    assert!(
        (total.committed..=total.committed + total.undetermined).contains(&v),
        "the counter is {v} after {} commits and {} of unknown outcome",
        total.committed,
        total.undetermined
    );
}
