//! Three placement drivers as one Raft group, under a load of inserts: the leader is killed
//! with `kill -9` (twice, restarted in between); another takes over, timestamps keep growing
//! across the change, the inserts go on, and every acknowledged insert is there at the end.

mod common;

use std::time::{Duration, Instant};

use common::acked;
use common::cluster::Cluster;
use strata_pd_client::{PdClient, TimestampOracle};

/// How long the placement drivers may take to serve timestamps again after their leader died.
const TAKEOVER_LIMIT: Duration = Duration::from_secs(10);

#[test]
fn killing_the_placement_driver_leader_loses_nothing_and_timestamps_keep_growing() {
    let mut cluster = Cluster::start_with_pds(3, 3, 1, &[], &[]);
    let port = cluster.sql[0].port;
    acked::create_table(port, port);
    let pd = PdClient::connect(&cluster.pd_address).expect("a placement driver client");

    let started = Instant::now();
    let inserters = acked::Inserters::start(port, 4, started);
    let mut kills = Vec::new();
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(2000));
        let old = cluster.pd_leader(&pd);
        let before = pd.get_ts().expect("a timestamp before the kill");
        let killed = Instant::now();
        cluster.pd[old].kill9();
        kills.push(started.elapsed());
        // The client moves to the new leader by itself; its timestamps are later ones.
        let after = loop {
            match pd.get_ts() {
                Ok(ts) => break ts,
                Err(e) => assert!(
                    killed.elapsed() < TAKEOVER_LIMIT,
                    "no timestamp within {TAKEOVER_LIMIT:?} of the kill: {e}\n{}",
                    cluster.logs()
                ),
            }
        };
        let takeover = killed.elapsed();
        assert!(after > before, "timestamp {after:?} after {before:?}");
        let new = cluster.pd_leader(&pd);
        assert_ne!(new, old, "a killed member cannot lead");
        println!(
            "placement driver {} killed; {} serves timestamps after {takeover:?}",
            old + 1,
            new + 1
        );
        std::thread::sleep(Duration::from_millis(1000));
        // The killed member comes back as a follower and catches up.
        cluster.pd[old].start();
    }
    std::thread::sleep(Duration::from_millis(2000));
    let outcome = inserters.stop();
    let acknowledged = &outcome.acknowledged;
    for kill in &kills {
        assert!(
            acknowledged
                .iter()
                .any(|(_, at)| *at > *kill + TAKEOVER_LIMIT / 5),
            "no insert acknowledged after the kill at {kill:?}\n{}",
            cluster.logs()
        );
    }
    let mut times: Vec<Duration> = acknowledged.iter().map(|(_, at)| *at).collect();
    times.sort();
    let longest_gap = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or_default();
    acked::assert_present(port, &outcome);
    println!(
        "{} inserts acknowledged across two leader kills, all present; longest time without \
         an acknowledged insert {longest_gap:?}",
        outcome.acknowledged.len()
    );
    assert!(
        longest_gap < TAKEOVER_LIMIT,
        "inserts stalled for {longest_gap:?}"
    );
}
