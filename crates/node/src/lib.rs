//! strata-node: a KV node. It stores data in RocksDB through [`Storage`] (MVCC and the
//! Percolator commands), registers with the placement driver, serves the KV API over gRPC and
//! sends heartbeats.
//!
//! ```text
//!   gRPC kv.Kv ──▶ KvService (region check) ──▶ Storage ──▶ RocksDB
//!                                     ▲
//!   PdClient ── register, regions, heartbeats, GC timestamps
//! ```
//!
//! Every request names a region; the node serves only regions it holds a peer of and keys
//! inside their ranges, and answers anything else with a region error so that the client
//! refreshes its routing. Regions are replicated by Raft in the raftstore (not yet here): for
//! now each region has one peer, and the node learns its regions from the placement driver.

mod service;

use std::fs;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use strata_engine::{RocksEngine, RocksOptions};
use strata_kv::gc::GcWorker;
use strata_kv::Storage;
use strata_pd::{PdClient, PdError, TimestampOracle};
use tracing::{info, warn};

pub use service::{KvService, RegionTable};

/// How often a KV node reports to the placement driver.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(1);
/// How long a starting node keeps trying to reach the placement driver.
pub const PD_STARTUP_DEADLINE: Duration = Duration::from_secs(60);

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
    Config(String),
}

/// What a KV node is started with.
pub struct NodeConfig {
    pub pd: String,
    pub data_dir: PathBuf,
    /// The address other processes reach this node at (also where it listens).
    pub advertise: SocketAddr,
    pub block_cache_bytes: usize,
}

/// A started KV node: storage open, registered, heartbeats and GC running.
pub struct KvNode {
    pub store_id: u64,
    service: KvService,
    stop: Arc<AtomicBool>,
    heartbeat: Option<std::thread::JoinHandle<()>>,
    gc: Option<GcWorker>,
}

impl KvNode {
    /// Opens the node's storage and registers it with the placement driver.
    pub fn start(config: &NodeConfig) -> Result<KvNode, NodeError> {
        fs::create_dir_all(&config.data_dir)?;
        let options = RocksOptions {
            block_cache_bytes: config.block_cache_bytes,
            ..RocksOptions::default()
        };
        let engine = Arc::new(RocksEngine::open(&config.data_dir.join("kv"), &options)?);
        let storage = Arc::new(Storage::new(engine)?);
        let pd = PdClient::connect(&config.pd)?;

        let store_id = retry_until(PD_STARTUP_DEADLINE, || {
            load_or_alloc_store_id(&config.data_dir, &pd)
        })?;
        // Reads served before a restart are forgotten: one-phase commits start above a fresh
        // timestamp, so no snapshot taken before the restart can change.
        let now = retry_until(PD_STARTUP_DEADLINE, || Ok(pd.get_ts()?))?;
        storage.raise_max_read_ts(now);
        let address = config.advertise.to_string();
        let bootstrapped =
            retry_until(
                PD_STARTUP_DEADLINE,
                || Ok(pd.put_store(store_id, &address)?),
            )?;
        let regions = RegionTable::default();
        retry_until(PD_STARTUP_DEADLINE, || regions.refresh(&pd, store_id))?;
        info!(store_id, %address, bootstrapped, regions = regions.len(), "KV node registered");

        let stop = Arc::new(AtomicBool::new(false));
        let heartbeat = {
            let (pd, regions, stop) = (pd.clone(), regions.clone(), stop.clone());
            std::thread::Builder::new()
                .name("heartbeat".into())
                .spawn(move || heartbeat_loop(&pd, store_id, &regions, &stop))?
        };
        let gc_pd = pd.clone();
        let gc = GcWorker::start(storage.clone(), move || gc_pd.get_ts().ok());
        Ok(KvNode {
            store_id,
            service: KvService::new(storage, regions, store_id),
            stop,
            heartbeat: Some(heartbeat),
            gc: Some(gc),
        })
    }

    /// The gRPC service of this node.
    pub fn service(&self) -> KvService {
        self.service.clone()
    }

    /// Stops heartbeats and GC.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.heartbeat.take() {
            let _ = h.join();
        }
        if let Some(gc) = self.gc.take() {
            gc.stop();
        }
    }
}

fn heartbeat_loop(pd: &PdClient, store_id: u64, regions: &RegionTable, stop: &AtomicBool) {
    while !stop.load(Ordering::SeqCst) {
        if let Err(error) = pd.store_heartbeat(store_id, regions.len() as u64) {
            warn!(%error, "heartbeat to the placement driver failed");
        } else if let Err(error) = regions.refresh(pd, store_id) {
            warn!(%error, "refreshing regions from the placement driver failed");
        }
        for _ in 0..10 {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(HEARTBEAT_INTERVAL / 10);
        }
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
            let tmp = path.with_extension("tmp");
            let mut file = fs::File::create(&tmp)?;
            file.write_all(id.to_string().as_bytes())?;
            file.sync_all()?;
            fs::rename(&tmp, &path)?;
            fs::File::open(dir)?.sync_all()?;
            Ok(id)
        }
        Err(e) => Err(e.into()),
    }
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
