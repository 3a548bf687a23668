//! strata-node: a KV node. It holds peers of regions replicated by Raft (the raftstore),
//! keeps their applied data in RocksDB, runs MVCC and the Percolator commands ([`Storage`]) on
//! the regions it leads, serves the KV API and Raft's messages over gRPC, and registers with
//! the placement driver.
//!
//! ```text
//!   gRPC kv.Kv ──▶ KvService (leads the region?) ──▶ Storage ──▶ ReplicatedEngine
//!                                                                 │ reads   │ writes
//!   gRPC raft.Raft ──▶ Router ──▶ raftstore poll loop ──apply──▶ RocksDB  ◀┘ (via Raft)
//!   PdClient ── register, regions, leaders, heartbeats, timestamps
//! ```
//!
//! Every request names a region; the node serves only regions whose peer here leads (with a
//! lease), and keys inside their ranges, and answers anything else with a region error so
//! that the client refreshes its routing.

pub mod metrics;
mod oracle_bound;
pub mod read_stream;
mod replication;
mod service;
mod split;

use std::fs;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use strata_engine::{RocksEngine, RocksOptions};
use strata_kv::gc::{GcWorker, QuietCompactions, SafePoint};
use strata_kv::Storage;
use strata_pd_client::{PdClient, PdError, Security, TimestampOracle};

use crate::oracle_bound::OracleBound;
use strata_raftstore::{PeerChange, PeerMeta, RaftLog, RaftStore, RegionMeta, Router, StoreIo};
use tracing::{info, warn};

pub use replication::{GrpcTransport, MvccKeySpace, NodeLeaderHook, RaftService, ReplicatedEngine};
pub use service::KvService;
pub use split::SplitConfig;
pub use strata_kv::gc::GcConfig;
pub use strata_raftstore::StoreConfig;

/// How often a KV node reports to the placement driver.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);
/// How long a starting node keeps trying to reach the placement driver.
pub const PD_STARTUP_DEADLINE: Duration = Duration::from_secs(60);
/// The most regions a node asks the placement driver about in one scan.
const REGION_SCAN_LIMIT: u32 = 1024;

/// Errors that stop a KV node from starting.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Pd(#[from] PdError),
    #[error("{0}")]
    Kv(#[from] strata_kvapi::KvError),
    #[error("storage engine: {0}")]
    Engine(#[from] strata_engine::EngineError),
    #[error("{0}")]
    Log(#[from] strata_raftstore::LogError),
    #[error("{0}")]
    Config(String),
}

/// What a KV node is started with.
pub struct NodeConfig {
    pub pd: String,
    pub data_dir: PathBuf,
    /// The address other processes reach this node at (also where it listens).
    pub advertise: SocketAddr,
    /// The RocksDB engine's block cache and memtable sizes.
    pub rocks: RocksOptions,
    pub split: SplitConfig,
    pub store: strata_raftstore::StoreConfig,
    pub gc: GcConfig,
    /// How the node reaches the other roles (and, in the process that serves it, admits them).
    pub security: Security,
}

/// A started KV node: storage open, registered, raftstore, heartbeats and GC running.
pub struct KvNode {
    pub store_id: u64,
    service: KvService,
    raft_service: RaftService,
    raftstore: Option<RaftStore>,
    stop: Arc<AtomicBool>,
    heartbeat: Option<std::thread::JoinHandle<()>>,
    split_check: Option<std::thread::JoinHandle<()>>,
    gc: Option<GcWorker>,
    rocks: Arc<RocksEngine>,
}

impl KvNode {
    /// Opens the node's storage and log, registers with the placement driver and starts the
    /// peers of its regions.
    pub fn start(config: &NodeConfig) -> Result<KvNode, NodeError> {
        fs::create_dir_all(&config.data_dir)?;
        let rocks = Arc::new(RocksEngine::open(
            &config.data_dir.join("kv"),
            &config.rocks,
        )?);
        let log = Arc::new(RaftLog::open(&config.data_dir.join("raft"))?);
        let pd = PdClient::connect_with(&config.pd, config.security.clone())?;

        let store_id = retry_until(PD_STARTUP_DEADLINE, || {
            load_or_alloc_store_id(&config.data_dir, &pd)
        })?;
        let address = config.advertise.to_string();
        // The store joins only the cluster its data belongs to (TiKV's cluster id check); a
        // store without one takes the cluster's.
        let cluster_file = config.data_dir.join("cluster-id");
        let cluster_id = read_cluster_id(&cluster_file)?;
        let joined = retry_until(PD_STARTUP_DEADLINE, || {
            Ok(pd.join(store_id, &address, cluster_id.unwrap_or(0))?)
        })?;
        if cluster_id.is_none() {
            write_synced(&cluster_file, &joined.cluster_id.to_string())?;
        }
        let bootstrapped = joined.bootstrapped;
        let regions = retry_until(PD_STARTUP_DEADLINE, || my_regions(&pd, store_id))?;
        info!(store_id, %address, bootstrapped, regions = regions.len(), "KV node registered");

        let hook = Arc::new(NodeLeaderHook::new(pd.clone()));
        let raftstore = RaftStore::start(
            store_id,
            StoreIo {
                log,
                engine: rocks.clone(),
                keys: Arc::new(MvccKeySpace),
                transport: Arc::new(GrpcTransport::new(store_id, pd.clone())),
            },
            hook.clone(),
            regions,
            config.store,
        )?;
        let router = raftstore.router();
        let engine = Arc::new(ReplicatedEngine::new(rocks.clone(), router.clone()));
        let storage = Arc::new(Storage::replicated(engine));
        hook.set_storage(storage.clone());
        storage.set_deadlock_detector(Arc::new(replication::PdDeadlockDetector::new(pd.clone())));

        let stop = Arc::new(AtomicBool::new(false));
        let oracle = Arc::new(OracleBound::new(retry_until(PD_STARTUP_DEADLINE, || {
            Ok(pd.get_ts()?)
        })?));
        let heartbeat = {
            let (pd, router, stop) = (pd.clone(), router.clone(), stop.clone());
            let oracle = oracle.clone();
            std::thread::Builder::new()
                .name("heartbeat".into())
                .spawn(move || heartbeat_loop(&pd, store_id, &router, &oracle, &stop))?
        };
        let split_check = {
            let storage = storage.clone();
            split::start(
                pd.clone(),
                router.clone(),
                rocks.clone(),
                config.split,
                move || storage.gc_safe_point(),
                stop.clone(),
            )?
        };
        // Each leader collects its regions and proposes the deletions through Raft, so every
        // replica drops the same versions.
        let (gc_pd, gc_router, gc_config) = (pd.clone(), router.clone(), config.gc);
        // Compactions drop the garbage below the safe point on every replica by themselves.
        rocks.set_garbage_filter(storage.garbage_filter());
        let gc = GcWorker::start(
            storage.clone(),
            config.gc,
            Some(QuietCompactions::new(rocks.clone())),
            move || {
                let now = gc_pd.get_ts().ok()?;
                let (life_floor, wait_floor) = gc_config.floors(now);
                let safe_point = gc_pd.advance_gc_safe_point(life_floor, wait_floor).ok()?;
                Some(SafePoint { now, safe_point })
            },
            move || {
                gc_router
                    .leaders()
                    .into_iter()
                    .map(|(meta, _, _)| (meta.start_key, meta.end_key))
                    .collect()
            },
        );
        Ok(KvNode {
            store_id,
            service: KvService::new(storage, router.clone(), store_id, oracle),
            raft_service: RaftService::new(router),
            raftstore: Some(raftstore),
            stop,
            heartbeat: Some(heartbeat),
            split_check: Some(split_check),
            gc: Some(gc),
            rocks,
        })
    }

    /// The KV API's gRPC service of this node.
    pub fn service(&self) -> KvService {
        self.service.clone()
    }

    /// The gRPC service that receives Raft messages.
    /// A function that brings the node's gauges up to date (regions and leaders held, RocksDB's
    /// figures), for each scrape of `/metrics`.
    pub fn metrics_refresh(&self) -> impl Fn() + Send + Sync + 'static {
        metrics::init();
        strata_raftstore::metrics::init();
        let router = self.raftstore.as_ref().map(|store| store.router());
        let rocks = self.rocks.clone();
        move || {
            if let Some(router) = &router {
                router.refresh_metrics();
            }
            rocks.refresh_metrics();
        }
    }

    pub fn raft_service(&self) -> RaftService {
        self.raft_service.clone()
    }

    /// Stops heartbeats, GC and the raftstore.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        for h in [self.heartbeat.take(), self.split_check.take()]
            .into_iter()
            .flatten()
        {
            let _ = h.join();
        }
        if let Some(gc) = self.gc.take() {
            gc.stop();
        }
        if let Some(raftstore) = self.raftstore.take() {
            raftstore.stop();
        }
        self.rocks.stop_background_work();
    }
}

/// The regions with a peer on `store_id`, from the placement driver.
fn my_regions(pd: &PdClient, store_id: u64) -> Result<Vec<RegionMeta>, NodeError> {
    let mut mine = Vec::new();
    let mut start = Vec::new();
    loop {
        let page = pd.scan_regions(&start, b"", REGION_SCAN_LIMIT)?;
        let Some(last) = page.last().and_then(|r| r.region.clone()) else {
            break;
        };
        for entry in &page {
            let Some(region) = &entry.region else {
                continue;
            };
            if region.peers.iter().any(|p| p.store_id == store_id) {
                mine.push(region_from_pb(region));
            }
        }
        if last.end_key.is_empty() || page.len() < REGION_SCAN_LIMIT as usize {
            break;
        }
        start = last.end_key;
    }
    Ok(mine)
}

/// A region as the placement driver's messages carry it.
pub fn region_to_pb(region: &RegionMeta) -> strata_proto::pd::Region {
    strata_proto::pd::Region {
        id: region.id,
        start_key: region.start_key.clone(),
        end_key: region.end_key.clone(),
        epoch: Some(strata_proto::kv::RegionEpoch {
            conf_ver: region.conf_ver,
            version: region.version,
        }),
        peers: region
            .peers
            .iter()
            .map(|p| strata_proto::pd::Peer {
                id: p.id,
                store_id: p.store_id,
            })
            .collect(),
    }
}

fn region_from_pb(region: &strata_proto::pd::Region) -> RegionMeta {
    let epoch = region.epoch.unwrap_or_default();
    RegionMeta {
        id: region.id,
        start_key: region.start_key.clone(),
        end_key: region.end_key.clone(),
        conf_ver: epoch.conf_ver,
        version: epoch.version,
        peers: region
            .peers
            .iter()
            .map(|p| PeerMeta {
                id: p.id,
                store_id: p.store_id,
            })
            .collect(),
    }
}

fn heartbeat_loop(
    pd: &PdClient,
    store_id: u64,
    router: &Router,
    oracle: &OracleBound,
    stop: &AtomicBool,
) {
    while !stop.load(Ordering::SeqCst) {
        // The oracle's progress, which bounds the timestamps the node accepts.
        match pd.get_ts() {
            Ok(ts) => oracle.learn(ts),
            Err(error) => warn!(%error, "no timestamp from the placement driver"),
        }
        let held = router.regions();
        if let Err(error) = pd.store_heartbeat(store_id, held.len() as u64) {
            warn!(%error, "heartbeat to the placement driver failed");
        }
        for (region, peer, term) in router.leaders() {
            match pd.region_heartbeat(region_to_pb(&region), peer, term) {
                Ok(reply) => follow(router, region.id, reply),
                Err(error) => warn!(%error, region = region.id, "region heartbeat failed"),
            }
        }
        // Regions created since (the cluster's first region once enough stores joined, or a
        // replica the placement driver added here), and peers the regions removed meanwhile.
        match my_regions(pd, store_id) {
            Ok(regions) => {
                for region in &regions {
                    if !held.iter().any(|r| r.id == region.id) {
                        router.create_region(region.clone());
                    }
                }
                for mine in held
                    .iter()
                    .filter(|h| !regions.iter().any(|r| r.id == h.id))
                {
                    drop_if_removed(pd, router, store_id, mine);
                }
            }
            Err(error) => warn!(%error, "refreshing regions from the placement driver failed"),
        }
        for _ in 0..10 {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(HEARTBEAT_INTERVAL / 10);
        }
    }
}

/// Drops this node's peer of `mine` when the placement driver knows a newer membership of the
/// region without this node (it was removed while this node was down). A region the placement
/// driver does not know yet (a split not reported) is left alone.
fn drop_if_removed(pd: &PdClient, router: &Router, store_id: u64, mine: &RegionMeta) {
    let Ok(Some(entry)) = pd.region_by_id(mine.id) else {
        return;
    };
    let Some(region) = entry.region else {
        return;
    };
    let conf_ver = region.epoch.unwrap_or_default().conf_ver;
    let member = region.peers.iter().any(|p| p.store_id == store_id);
    if !member && conf_ver > mine.conf_ver {
        router.drop_stale_peer(mine.id, conf_ver);
    }
}

/// Does what the placement driver asked of a region this node leads.
fn follow(router: &Router, region: u64, reply: strata_proto::pd::RegionHeartbeatResponse) {
    let peer = |p: strata_proto::pd::Peer| PeerMeta {
        id: p.id,
        store_id: p.store_id,
    };
    if let Some(p) = reply.remove_peer {
        router.change_peer(region, PeerChange::Remove(peer(p)));
    } else if let Some(p) = reply.add_peer {
        router.change_peer(region, PeerChange::Add(peer(p)));
    } else if reply.transfer_leader_to_store != 0 {
        router.transfer_leader(region, reply.transfer_leader_to_store);
    }
}

/// Reads the store id kept in the data folder, or allocates one and keeps it.
fn load_or_alloc_store_id(dir: &Path, pd: &PdClient) -> Result<u64, NodeError> {
    let path = dir.join("store-id");
    match fs::read_to_string(&path) {
        Ok(text) => text
            .trim()
            .parse()
            .map_err(|_| NodeError::Config(format!("{} does not hold a store id", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let id = pd.alloc_id()?;
            write_synced(&path, &id.to_string())?;
            Ok(id)
        }
        Err(e) => Err(e.into()),
    }
}

/// The cluster id kept in `path`, `None` before the store first joined a cluster.
fn read_cluster_id(path: &Path) -> Result<Option<u64>, NodeError> {
    match fs::read_to_string(path) {
        Ok(text) => text.trim().parse().map(Some).map_err(|_| {
            NodeError::Config(format!("{} does not hold a cluster id", path.display()))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Writes `text` to `path` durably: a synced temporary file renamed over it, then the folder
/// synced.
fn write_synced(path: &Path, text: &str) -> Result<(), NodeError> {
    let tmp = path.with_extension("tmp");
    let mut file = fs::File::create(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Retries `f` while the placement driver is unreachable, up to `deadline`.
fn retry_until<T>(
    deadline: Duration,
    mut f: impl FnMut() -> Result<T, NodeError>,
) -> Result<T, NodeError> {
    let until = std::time::Instant::now() + deadline;
    loop {
        match f() {
            Err(NodeError::Pd(PdError::Rpc(message))) if std::time::Instant::now() < until => {
                warn!(%message, "placement driver not reachable yet; retrying");
                std::thread::sleep(Duration::from_millis(300));
            }
            other => return other,
        }
    }
}
