//! The placement driver's service and client over real gRPC on loopback.

use std::sync::Arc;

use strata_pd::{PdClient, PdConfig, PdService, TimestampOracle};

/// Starts a placement driver on an ephemeral port; returns its address and the runtime that
/// serves it (dropping the runtime stops it).
fn start_pd(dir: &std::path::Path) -> (String, tokio::runtime::Runtime) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let service = PdService::open(
        dir,
        PdConfig {
            replicas: 1,
            ..PdConfig::default()
        },
    )
    .unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap().to_string();
    runtime.spawn(
        tonic::transport::Server::builder()
            .add_service(service.into_server())
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener)),
    );
    (address, runtime)
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
