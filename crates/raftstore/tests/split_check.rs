//! The split checker's view of a real store (raft-engine log, in-memory engine, one replica):
//! a region it looked at is not offered again until it takes writes, and both parts of a
//! region that just split are offered again at once, so that a region many times past the
//! limit is halved on every pass of the checker, not once per leader change.

use std::sync::Arc;
use std::time::{Duration, Instant};

use strata_engine::{Cf, MemoryEngine};
use strata_raftstore::{
    KeySpace, LeaderHook, LeaderStart, Message, PeerMeta, RaftLog, RaftStore, RegionMeta, Router,
    StoreConfig, StoreIo, Transport,
};

/// How long a one-replica region may take to elect itself or apply a split.
const WAIT: Duration = Duration::from_secs(10);

struct UserKeys;

impl KeySpace for UserKeys {
    fn engine_range(&self, _: Cf, start: &[u8], end: &[u8]) -> (Vec<u8>, Option<Vec<u8>>) {
        (start.to_vec(), (!end.is_empty()).then(|| end.to_vec()))
    }
}

/// One replica per region: there is no one to send to.
struct Alone;

impl Transport for Alone {
    fn send(&self, to_store: u64, region: u64, _: Message) {
        panic!("a one-replica region sent a message to store {to_store} (region {region})");
    }
}

struct ServeAtOnce;

impl LeaderHook for ServeAtOnce {
    fn start_leading(&self, _: &LeaderStart) -> bool {
        true
    }
}

fn led(router: &Router) -> Vec<u64> {
    let mut ids: Vec<u64> = router.leaders().iter().map(|(r, _, _)| r.id).collect();
    ids.sort_unstable();
    ids
}

fn wait_until_leading(router: &Router, regions: &[u64]) {
    let deadline = Instant::now() + WAIT;
    while led(router) != regions {
        assert!(
            Instant::now() < deadline,
            "leading {:?}, not {regions:?}",
            led(router)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn candidates(router: &Router) -> Vec<u64> {
    let mut ids: Vec<u64> = router
        .split_candidates(u64::MAX, u64::MAX)
        .iter()
        .map(|r| r.id)
        .collect();
    ids.sort_unstable();
    ids
}

#[test]
fn both_parts_of_a_split_region_are_checked_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let region = RegionMeta {
        id: 1,
        start_key: Vec::new(),
        end_key: Vec::new(),
        conf_ver: 1,
        version: 1,
        peers: vec![PeerMeta {
            id: 11,
            store_id: 1,
        }],
    };
    let store = RaftStore::start(
        1,
        StoreIo {
            log: Arc::new(RaftLog::open(dir.path()).expect("raft log")),
            engine: Arc::new(MemoryEngine::new()),
            keys: Arc::new(UserKeys),
            transport: Arc::new(Alone),
        },
        Arc::new(ServeAtOnce),
        vec![region],
        StoreConfig::default(),
    )
    .expect("store");
    let router = store.router();
    wait_until_leading(&router, &[1]);

    assert_eq!(candidates(&router), [1], "a region newly led is checked");
    assert_eq!(
        candidates(&router),
        [0u64; 0],
        "and then not until it takes writes"
    );

    router
        .propose_split(1, 1, b"m".to_vec(), 2, vec![21])
        .expect("split");
    wait_until_leading(&router, &[1, 2]);
    assert_eq!(
        candidates(&router),
        [1, 2],
        "both parts are checked after a split"
    );
    assert_eq!(candidates(&router), [0u64; 0]);
    store.stop();
}
