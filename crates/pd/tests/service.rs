//! The placement driver's service and client over real gRPC on loopback.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use strata_pd::{PdConfig, PdService};
use strata_pd_client::{PdClient, TimestampOracle};

/// Starts a placement driver on an ephemeral port; returns its address and the runtime that
/// serves it (dropping the runtime stops it).
fn start_pd(dir: &std::path::Path) -> (String, tokio::runtime::Runtime) {
    let runtime = serving_runtime();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap().to_string();
    serve(&runtime, listener, dir, 1, Vec::new());
    (address, runtime)
}

fn serving_runtime() -> tokio::runtime::Runtime {
    let _ = tracing_subscriber::fmt().with_test_writer().try_init();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// Opens member `id` of `members` over `dir` and serves it on `listener`.
fn serve(
    runtime: &tokio::runtime::Runtime,
    listener: tokio::net::TcpListener,
    dir: &Path,
    id: u64,
    members: Vec<(u64, String)>,
) {
    // A service dropped a moment ago may still be releasing its log on another thread.
    let deadline = Instant::now() + Duration::from_secs(10);
    let service = loop {
        let config = PdConfig {
            replicas: 1,
            id,
            members: members.clone(),
            ..PdConfig::default()
        };
        match PdService::open(dir, config) {
            Ok(service) => break service,
            Err(e) if Instant::now() < deadline => {
                eprintln!("placement driver not open yet: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("placement driver did not open: {e}"),
        }
    };
    runtime.spawn(
        tonic::transport::Server::builder()
            .add_service(service.into_server())
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );
}

/// Three placement drivers on loopback, each on its own runtime (dropping it stops the member).
struct Group {
    dirs: Vec<tempfile::TempDir>,
    members: Vec<(u64, String)>,
    runtimes: Vec<Option<tokio::runtime::Runtime>>,
}

impl Group {
    fn start() -> Group {
        let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        let runtimes: Vec<_> = (0..3).map(|_| serving_runtime()).collect();
        let listeners: Vec<_> = runtimes
            .iter()
            .map(|r| {
                r.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
                    .unwrap()
            })
            .collect();
        let members: Vec<(u64, String)> = listeners
            .iter()
            .enumerate()
            .map(|(i, l)| (i as u64 + 1, l.local_addr().unwrap().to_string()))
            .collect();
        for (i, listener) in listeners.into_iter().enumerate() {
            serve(
                &runtimes[i],
                listener,
                dirs[i].path(),
                i as u64 + 1,
                members.clone(),
            );
        }
        Group {
            dirs,
            members,
            runtimes: runtimes.into_iter().map(Some).collect(),
        }
    }

    fn addresses(&self) -> String {
        let list: Vec<&str> = self.members.iter().map(|(_, a)| a.as_str()).collect();
        list.join(",")
    }

    fn stop(&mut self, i: usize) {
        self.runtimes[i] = None;
    }

    fn restart(&mut self, i: usize) {
        let runtime = serving_runtime();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(&self.members[i].1))
            .unwrap();
        serve(
            &runtime,
            listener,
            self.dirs[i].path(),
            i as u64 + 1,
            self.members.clone(),
        );
        self.runtimes[i] = Some(runtime);
    }

    /// The `last_id` member `i` has saved (its applied metadata).
    fn saved_last_id(&self, i: usize) -> u64 {
        let text =
            std::fs::read_to_string(self.dirs[i].path().join("pd-state.json")).unwrap_or_default();
        let state: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        state["meta"]["last_id"].as_u64().unwrap_or(0)
    }
}

/// The index of the member that leads, as the members report it.
fn leader(client: &PdClient) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(members) = client.members() {
            if members.leader_id != 0 {
                return members.leader_id as usize - 1;
            }
        }
        assert!(Instant::now() < deadline, "no member leads");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn three_members_survive_a_leader_loss_catch_up_from_a_snapshot_and_need_a_majority() {
    let mut group = Group::start();
    let client = PdClient::connect(&group.addresses()).unwrap();
    let store = client.alloc_id().unwrap();
    assert!(client.put_store(store, "127.0.0.1:1").unwrap());
    let region = client.region_of(b"").unwrap().unwrap().region.unwrap();
    let before = client.get_ts().unwrap();

    // The leader dies: another member serves, with later timestamps and the same metadata.
    let first = leader(&client);
    group.stop(first);
    let after = client.get_ts().unwrap();
    assert!(after > before);
    assert_ne!(leader(&client), first);
    assert_eq!(
        client.region_by_id(region.id).unwrap().unwrap().region,
        Some(region.clone())
    );

    // Changes go on without the stopped member, past a log compaction.
    let mut last = 0;
    for _ in 0..strata_pd::PD_LOG_COMPACT_ENTRIES + 20 {
        let (new_region, peers) = client.ask_split(region.id).unwrap();
        assert!(new_region > last);
        last = *peers.iter().max().unwrap();
    }
    // Back, it is behind the compacted log and catches up from a snapshot.
    group.restart(first);
    let deadline = Instant::now() + Duration::from_secs(15);
    while group.saved_last_id(first) < last {
        assert!(
            Instant::now() < deadline,
            "member {} did not catch up: last id {} of {last}",
            first + 1,
            group.saved_last_id(first)
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // With two of three stopped, nothing is served: no majority, no timestamps.
    let second = leader(&client);
    group.stop(second);
    let third = (0..3).find(|i| *i != first && *i != second).unwrap();
    group.stop(third);
    let started = Instant::now();
    assert!(client.get_ts().is_err(), "a lone member issued a timestamp");
    assert!(started.elapsed() >= strata_pd_client::PD_REQUEST_TIMEOUT);
    // A majority again (the caught-up member and one more): served, timestamps still later.
    group.restart(third);
    let resumed = client.get_ts().unwrap();
    assert!(resumed > after);
    assert!(client.alloc_id().unwrap() > last, "ids are not reissued");
}

#[test]
fn batched_timestamps_increase_for_every_caller_and_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (address, runtime) = start_pd(dir.path());
    let client = Arc::new(PdClient::connect(&address).unwrap());
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let client = client.clone();
            std::thread::spawn(move || {
                (0..300)
                    .map(|_| client.get_ts().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in threads {
        let seen = t.join().unwrap();
        assert!(
            seen.windows(2).all(|w| w[0] < w[1]),
            "increasing per caller"
        );
        all.extend(seen);
    }
    let count = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), count, "no timestamp is issued twice");
    let before = *all.last().unwrap();
    drop(runtime);
    drop(client);

    let (address, _runtime) = start_pd(dir.path());
    let client = PdClient::connect(&address).unwrap();
    assert!(client.get_ts().unwrap() > before);
}

#[test]
fn the_first_store_bootstraps_one_region_that_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (address, runtime) = start_pd(dir.path());
    let client = PdClient::connect(&address).unwrap();
    assert!(client.region_of(b"a").unwrap().is_none());
    let first = client.alloc_id().unwrap();
    assert!(client.put_store(first, "127.0.0.1:1").unwrap());
    let second = client.alloc_id().unwrap();
    assert!(second > first);
    assert!(!client.put_store(second, "127.0.0.1:2").unwrap());
    assert!(
        client
            .put_store(client.alloc_id().unwrap(), "127.0.0.1:2")
            .is_err(),
        "an address belongs to one store"
    );
    client.store_heartbeat(second, 0).unwrap();
    assert!(client.store_heartbeat(9999, 0).is_err());

    let region = client.region_of(b"t\x80").unwrap().unwrap();
    let r = region.region.clone().unwrap();
    assert!(r.start_key.is_empty() && r.end_key.is_empty());
    assert_eq!(r.peers.len(), 1);
    assert_eq!(region.leader.unwrap().store_id, first);
    assert_eq!(client.store_address(first).unwrap(), "127.0.0.1:1");
    assert_eq!(client.scan_regions(b"", b"", 10).unwrap().len(), 1);
    drop(runtime);
    drop(client);

    let (address, _runtime) = start_pd(dir.path());
    let client = PdClient::connect(&address).unwrap();
    assert_eq!(
        client.region_by_id(r.id).unwrap().unwrap().region.unwrap(),
        r
    );
    assert_eq!(client.all_stores().unwrap().len(), 2);
    assert!(client.alloc_id().unwrap() > second, "ids are not reissued");
}

#[test]
fn a_safe_point_beyond_the_timestamps_issued_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (address, _runtime) = start_pd(dir.path());
    let client = PdClient::connect(&address).unwrap();
    let now = client.get_ts().unwrap();
    let forged = strata_types::Timestamp(u64::MAX);
    let refused = client.advance_gc_safe_point(forged, forged);
    assert!(
        format!("{:?}", refused.as_ref().unwrap_err()).contains("beyond the last timestamp"),
        "{refused:?}"
    );
    let refused = client.advance_gc_safe_point(strata_types::Timestamp(now.0 - 1), forged);
    assert!(refused.is_err(), "{refused:?}");
    assert!(client.gc_safe_point().unwrap() < now);
    // Floors below the timestamps issued are accepted.
    assert!(client
        .advance_gc_safe_point(
            strata_types::Timestamp(now.0 - 1),
            strata_types::Timestamp(0)
        )
        .is_ok());
}
