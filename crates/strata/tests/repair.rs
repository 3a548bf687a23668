//! Replica repair: when a KV node stays down longer than the placement driver's limit, the
//! replicas it held are re-created on a spare node, which receives each region's data as a
//! snapshot. Proof that they hold the data: a second original node is then killed, leaving
//! every region with one original replica and the new one, and every acknowledged row still
//! reads back while inserts go on.

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use common::acked;
use common::cluster::Cluster;

/// Seconds without a heartbeat before a node's replicas are replaced.
const MAX_STORE_DOWN_SECS: &str = "3";
/// How long the replicas of the dead node may take to be replaced on the spare.
const REPAIR_TIMEOUT: Duration = Duration::from_secs(40);

#[test]
fn replicas_of_a_node_down_too_long_are_rebuilt_on_a_spare_node() {
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
    let first = cluster.leader_of(b"");
    let first = (0..4).find(|&i| i != spare && i != first).unwrap();
    cluster.kv[first].kill9();
    let killed_at = started.elapsed();

    let deadline = Instant::now() + REPAIR_TIMEOUT;
    loop {
        let regions = cluster.region_peers();
        let repaired = regions.iter().all(|(_, peers)| {
            peers.len() == 3 && !peers.contains(&stores[first]) && peers.contains(&stores[spare])
        });
        if repaired {
            println!(
                "{} regions repaired {:?} after the kill",
                regions.len(),
                started.elapsed() - killed_at
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "replicas not rebuilt within {REPAIR_TIMEOUT:?}: {regions:?}\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    // Let the new replicas take their snapshots and catch up, then kill a second original.
    std::thread::sleep(Duration::from_secs(3));
    let second = (0..4).find(|&i| i != spare && i != first).unwrap();
    cluster.kv[second].kill9();
    let second_at = started.elapsed();
    std::thread::sleep(Duration::from_secs(8));
    let acknowledged = inserters.stop();
    let after_second = acknowledged
        .iter()
        .filter(|(_, at)| *at > second_at + Duration::from_secs(5))
        .count();
    println!(
        "{} rows acknowledged, {after_second} of them from 5 s after the second kill",
        acknowledged.len()
    );
    assert!(
        after_second > 0,
        "no insert acknowledged with the second original node down\n{}",
        cluster.logs()
    );
    // With STRATA_LOG=info the spare's log shows the snapshots it took.
    let restored = cluster.kv[spare]
        .log()
        .lines()
        .filter(|l| l.contains("restored from a snapshot"))
        .count();
    println!("snapshots logged by the spare node: {restored}");
    let ids: BTreeSet<u64> = acknowledged.into_iter().map(|(id, _)| id).collect();
    acked::assert_present(port, &ids);
}
