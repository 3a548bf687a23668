//! Replica repair: when a KV node stays down longer than the placement driver's limit, the
//! replicas it held are re-created on a spare node, which receives each region's data as a
//! snapshot. Proof that they hold the data: a second original node is then killed, leaving
//! every region with one original replica and the new one, and inserts go on. The first node
//! then comes back: it drops the peers the regions removed while it was away, and takes the
//! second node's place from fresh snapshots; a third kill leaves only rebuilt replicas, and
//! every acknowledged row still reads back. And a node that was down while its regions' logs
//! grew past `--raft-log-max-entries` catches up from a snapshot, not the (compacted) log.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::acked;
use common::cluster::Cluster;

/// Seconds without a heartbeat before a node's replicas are replaced.
const MAX_STORE_DOWN_SECS: &str = "3";
/// How long the replicas of a dead node may take to be replaced.
const REPAIR_TIMEOUT: Duration = Duration::from_secs(40);

/// Waits until every region has three peers, on `on` and not on `off` (store ids).
fn wait_for_peers(cluster: &Cluster, on: &[u64], off: u64, what: &str) -> usize {
    let started = Instant::now();
    loop {
        let regions = cluster.region_peers();
        let done = regions.iter().all(|(_, peers)| {
            peers.len() == 3 && !peers.contains(&off) && on.iter().all(|s| peers.contains(s))
        });
        if done {
            println!(
                "{what}: {} regions after {:?}",
                regions.len(),
                started.elapsed()
            );
            return regions.len();
        }
        assert!(
            started.elapsed() < REPAIR_TIMEOUT,
            "{what}: not within {REPAIR_TIMEOUT:?}: {regions:?}\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn replicas_of_a_node_down_too_long_are_rebuilt_and_the_node_rejoins_later() {
    let mut cluster = Cluster::start_configured(
        4,
        1,
        &["--max-store-down-secs", MAX_STORE_DOWN_SECS],
        &["--region-split-keys", "1000"],
    );
    let port = cluster.sql[0].port;
    acked::create_table(port, port);
    let stores = cluster.store_ids();
    let started = Instant::now();
    let inserters = acked::Inserters::start(port, 2, started);
    std::thread::sleep(Duration::from_secs(6));

    // Three of the four nodes hold every region; the fourth is the spare.
    let regions = cluster.region_peers();
    let holders: BTreeSet<u64> = regions.iter().flat_map(|(_, s)| s.clone()).collect();
    assert_eq!(holders.len(), 3, "regions before the failure: {regions:?}");
    let spare = (0..4).find(|&i| !holders.contains(&stores[i])).unwrap();
    let leader = cluster.leader_of(b"");
    let first = (0..4).find(|&i| i != spare && i != leader).unwrap();
    let second = (0..4).find(|&i| i != spare && i != first).unwrap();
    let third = (0..4)
        .find(|&i| ![spare, first, second].contains(&i))
        .unwrap();

    cluster.kv[first].kill9();
    wait_for_peers(
        &cluster,
        &[stores[spare]],
        stores[first],
        "rebuilt on the spare",
    );
    // Let the new replicas take their snapshots and catch up, then kill a second original.
    std::thread::sleep(Duration::from_secs(3));
    cluster.kv[second].kill9();
    let second_at = started.elapsed();
    std::thread::sleep(Duration::from_secs(8));
    // The first node returns: the only up node without a replica of each region.
    cluster.kv[first].start();
    wait_for_peers(
        &cluster,
        &[stores[spare], stores[first]],
        stores[second],
        "rebuilt on the returning node",
    );
    std::thread::sleep(Duration::from_secs(3));
    cluster.kv[third].kill9();
    std::thread::sleep(Duration::from_secs(4));
    let outcome = inserters.stop();
    let acknowledged = &outcome.acknowledged;
    let after_second = acknowledged
        .iter()
        .filter(|(_, at)| *at > second_at + Duration::from_secs(5))
        .count();
    let restored: usize = [spare, first]
        .iter()
        .map(|&i| {
            cluster.kv[i]
                .log()
                .lines()
                .filter(|l| l.contains("restored from a snapshot"))
                .count()
        })
        .sum();
    println!(
        "{} rows acknowledged, {after_second} of them from 5 s after the second kill; \
         snapshots taken by the rebuilt replicas: {restored}",
        acknowledged.len()
    );
    assert!(restored > 0, "the rebuilt replicas took no snapshot");
    assert!(
        after_second > 0,
        "no insert acknowledged with the second original node down\n{}",
        cluster.logs()
    );
    acked::assert_present(port, &outcome);
}

/// Entries a region's log may hold before it is compacted past a replica that lags behind.
const RAFT_LOG_MAX_ENTRIES: &str = "1024";

#[test]
fn a_node_behind_a_compacted_log_catches_up_from_a_snapshot() {
    let mut cluster =
        Cluster::start_configured(3, 1, &[], &["--raft-log-max-entries", RAFT_LOG_MAX_ENTRIES]);
    let port = cluster.sql[0].port;
    acked::create_table(port, port);
    let started = Instant::now();
    let inserters = acked::Inserters::start(port, 4, started);
    std::thread::sleep(Duration::from_secs(2));
    let leader = cluster.leader_of(b"");
    let behind = (leader + 1) % 3;
    cluster.kv[behind].kill9();
    // Well over the limit of entries while it is down: the log is compacted past it.
    std::thread::sleep(Duration::from_secs(12));
    let written_while_down = started.elapsed();
    cluster.kv[behind].start();
    std::thread::sleep(Duration::from_secs(5));
    // Now every region needs the node that was behind.
    let other = (0..3).find(|&i| i != behind && i != leader).unwrap();
    cluster.kv[other].kill9();
    std::thread::sleep(Duration::from_secs(4));
    let outcome = inserters.stop();
    let acknowledged = &outcome.acknowledged;
    let while_down = acknowledged
        .iter()
        .filter(|(_, at)| *at > Duration::from_secs(2) && *at < written_while_down)
        .count();
    let snapshots = cluster.kv[behind]
        .log()
        .lines()
        .filter(|l| l.contains("restored from a snapshot"))
        .count();
    println!(
        "{} rows acknowledged, {while_down} while the node was down; snapshots it took: \
         {snapshots}",
        acknowledged.len()
    );
    assert!(
        snapshots > 0,
        "the node that was behind took no snapshot ({while_down} inserts while it was down)\n{}",
        cluster.logs()
    );
    acked::assert_present(port, &outcome);
}
