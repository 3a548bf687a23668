//! The playground: all roles in one process, or with `--kv N --sql M` a local cluster of real
//! child processes on loopback (see [`crate::local_cluster`]).

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use strata_engine::{RocksEngine, RocksOptions, WRITE_BUFFER_BYTES_DEFAULT};
use strata_kv::{LeaderLocks, Storage};
use strata_pd_client::{LocalTso, TimestampOracle};
use strata_sql::SqlServer;
use strata_txn::TxnClient;

#[derive(Args, Debug)]
pub struct PlaygroundArgs {
    /// Folder that holds the data; it survives restarts.
    #[arg(long, default_value = "strata-data")]
    pub data_dir: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// MySQL protocol port.
    #[arg(long, short = 'P', default_value_t = 4000)]
    pub port: u16,
    /// RocksDB block cache size, in MiB (per KV node in a cluster).
    #[arg(long, default_value_t = 2048)]
    pub block_cache_mib: usize,
    /// Size of one RocksDB memtable, in MiB: writes are flushed to files in pieces this big.
    #[arg(long, default_value_t = WRITE_BUFFER_BYTES_DEFAULT >> 20)]
    pub write_buffer_mib: usize,
    /// Starts a local cluster with this many KV node processes instead of one process.
    #[arg(long)]
    pub kv: Option<usize>,
    /// SQL node processes of the local cluster, on consecutive ports from `--port`.
    #[arg(long)]
    pub sql: Option<usize>,
    /// Placement driver processes of the local cluster (one Raft group; 3 survive the loss of
    /// one), on consecutive ports from `--pd-port`.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=7))]
    pub pd: Option<u16>,
    /// The first placement driver's port in a local cluster.
    #[arg(long, default_value_t = 2379)]
    pub pd_port: u16,
    /// The first KV node's port in a local cluster; the others follow.
    #[arg(long, default_value_t = 20160)]
    pub kv_port: u16,
}

pub fn run(args: PlaygroundArgs) -> Result<(), Box<dyn std::error::Error>> {
    if args.kv.is_some() || args.sql.is_some() || args.pd.is_some() {
        return crate::local_cluster::run(&args);
    }
    std::fs::create_dir_all(&args.data_dir)?;
    let options = RocksOptions {
        block_cache_bytes: args.block_cache_mib << 20,
        write_buffer_bytes: args.write_buffer_mib.max(1) << 20,
    };
    let engine = Arc::new(RocksEngine::open(&args.data_dir.join("kv"), &options)?);
    let storage = Arc::new(Storage::new(engine.clone())?);
    let tso = Arc::new(LocalTso::open(&args.data_dir.join("pd"))?);
    // Every key was written before this timestamp: the node leads them all from here on.
    storage.start_leading(b"", b"", tso.get_ts()?, LeaderLocks::Forget);
    let client = TxnClient::new(storage.clone(), tso);
    let sql = SqlServer::open(client.clone()).map_err(|e| e.to_string())?;
    let gc_config = strata_kv::gc::GcConfig::default();
    let gc = strata_kv::gc::GcWorker::start(
        storage.clone(),
        gc_config.interval,
        client_safe_point(client, gc_config),
        || vec![(Vec::new(), Vec::new())],
    );

    let what = format!("playground (data in {})", args.data_dir.display());
    crate::roles::serve_mysql(sql, SocketAddr::new(args.host, args.port), &what, None)?;
    gc.stop();
    engine.stop_background_work();
    eprintln!("Strata playground stopped");
    Ok(())
}

/// Safe points trail the timestamp oracle by the GC life time, held back for the oldest open
/// transaction as on a cluster.
fn client_safe_point(
    client: TxnClient,
    config: strata_kv::gc::GcConfig,
) -> impl Fn() -> Option<strata_types::Timestamp> + Send + 'static {
    move || {
        let (life_floor, wait_floor) = config.floors(client.current_ts().ok()?);
        Some(strata_pd::gc_safe_point(
            life_floor,
            wait_floor,
            client.oldest_snapshot(),
        ))
    }
}
