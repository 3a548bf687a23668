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

use crate::status::{self, StatusPort};

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
    /// Added to every port (`--port`, `--pd-port`, `--kv-port`), so that local clusters run
    /// side by side as with tiup's `--port-offset`.
    #[arg(long, default_value_t = 0)]
    pub port_offset: u16,
    /// Authenticated connections served at once (per SQL node); one more gets error 1040.
    #[arg(long, default_value_t = strata_sql::MAX_CONNECTIONS_DEFAULT)]
    pub max_connections: usize,
    /// What the statements of all sessions may hold together, in MiB (per SQL node); the
    /// statement that would go past it gets error 8176. Default: half the machine's memory.
    #[arg(long)]
    pub memory_limit_mib: Option<u64>,
    /// Port of the status server (`/metrics`, `/status`); in a local cluster the SQL nodes'
    /// first, the others following. Default: the MySQL port + 6080 (10080, as TiDB's), and
    /// in a local cluster each KV node's port + 20 and each placement driver's + 100; 0: none.
    #[arg(long)]
    pub status_port: Option<u16>,
    /// Mutual TLS between the local cluster's processes: a CA and a certificate per process
    /// are generated under the data folder (`cluster/cluster-tls/`), and each role serves only
    /// callers that show one of them.
    #[arg(long)]
    pub tls: bool,
    #[command(flatten)]
    pub access: crate::roles::AccessArgs,
}

pub fn run(mut args: PlaygroundArgs) -> Result<(), Box<dyn std::error::Error>> {
    let offset = |port: u16| {
        port.checked_add(args.port_offset).ok_or_else(|| {
            format!(
                "--port-offset {} takes port {port} past 65535",
                args.port_offset
            )
        })
    };
    (args.port, args.pd_port, args.kv_port) = (
        offset(args.port)?,
        offset(args.pd_port)?,
        offset(args.kv_port)?,
    );
    args.status_port = match args.status_port {
        Some(0) | None => args.status_port,
        Some(port) => Some(offset(port)?),
    };
    if args.kv.is_some() || args.sql.is_some() || args.pd.is_some() {
        return crate::local_cluster::run(&args);
    }
    if args.tls {
        return Err(
            "--tls secures the connections between the processes of a local cluster, \
                    which the single-process playground does not have; add --kv N for a cluster"
                .into(),
        );
    }
    let listen = SocketAddr::new(args.host, args.port);
    crate::ports::ensure_free(listen, "--port (or --port-offset)")?;
    let status_port = StatusPort::resolve(args.status_port, args.port, status::SQL_OFFSET);
    status_port.ensure_free(args.host)?;
    std::fs::create_dir_all(&args.data_dir)?;
    let options = RocksOptions {
        block_cache_bytes: args.block_cache_mib << 20,
        write_buffer_bytes: args.write_buffer_mib.max(1) << 20,
    };
    let engine = Arc::new(RocksEngine::open(&args.data_dir.join("kv"), &options)?);
    let storage = Arc::new(Storage::new(engine.clone())?);
    let tso = Arc::new(LocalTso::open(&args.data_dir.join("pd"))?);
    // Every key was written before this timestamp: the node leads them all from here on.
    storage.start_leading(b"", b"", tso.get_ts()?, 0, LeaderLocks::Forget);
    let client = TxnClient::new(storage.clone(), tso);
    let sql = SqlServer::open(client.clone()).map_err(|e| e.to_string())?;
    if let Some(mib) = args.memory_limit_mib {
        sql.set_memory_limit(mib << 20);
    }
    sql.set_slow_log_file(&args.data_dir.join("slow.log"));
    sql.set_instance(&listen.to_string());
    let gc_config = strata_kv::gc::GcConfig::default();
    engine.set_garbage_filter(storage.garbage_filter());
    // Locks of transactions abandoned below the safe point are resolved, so that the
    // collector is not kept from their keys.
    let safe_point = client_safe_point(client.clone(), gc_config);
    client.start_lock_resolver(move || safe_point().map(|s| s.safe_point))?;
    let gc = strata_kv::gc::GcWorker::start(
        storage.clone(),
        gc_config,
        Some(strata_kv::gc::QuietCompactions::new(engine.clone())),
        client_safe_point(client, gc_config),
        || vec![(Vec::new(), Vec::new())],
    );

    strata_txn::metrics::init();
    let scraped = engine.clone();
    let sql_scraped = sql.clone();
    let dashboard = crate::dashboard::Dashboard::start(
        sql.clone(),
        crate::dashboard::Cluster::Playground,
        listen,
    )?;
    status::start(
        "playground",
        args.host,
        status_port,
        vec![
            Box::new(move || scraped.refresh_metrics()),
            Box::new(move || sql_scraped.refresh_metrics()),
        ],
        Some(dashboard),
    )?;

    let what = format!("playground (data in {})", args.data_dir.display());
    crate::roles::serve_mysql(
        sql,
        listen,
        args.max_connections,
        &args.access,
        Some(&args.data_dir),
        &what,
        None,
    )?;
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
) -> impl Fn() -> Option<strata_kv::gc::SafePoint> + Send + 'static {
    move || {
        let now = client.current_ts().ok()?;
        let (life_floor, wait_floor) = config.floors(now);
        Some(strata_kv::gc::SafePoint {
            now,
            safe_point: strata_pd::gc_safe_point(life_floor, wait_floor, client.oldest_snapshot()),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use strata_engine::MemoryEngine;
    use strata_txn::TxnMode;

    use super::*;

    #[test]
    fn the_safe_point_waits_for_an_open_transaction_and_passes_it_once_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Arc::new(Storage::new(Arc::new(MemoryEngine::new())).unwrap());
        let tso = Arc::new(LocalTso::open(dir.path()).unwrap());
        let client = TxnClient::new(storage, tso);
        let config = strata_kv::gc::GcConfig {
            life_time: Duration::from_millis(500),
            ..Default::default()
        };
        let safe_point = client_safe_point(client.clone(), config);

        let open = client.begin(TxnMode::Optimistic).unwrap();
        let finished = client.begin(TxnMode::Optimistic).unwrap();
        drop(finished);
        std::thread::sleep(Duration::from_secs(1));
        let held = safe_point().unwrap();
        assert_eq!(
            held.safe_point,
            open.start_ts(),
            "held at the open snapshot"
        );
        assert!(held.now.physical_ms() >= open.start_ts().physical_ms() + 1000);

        drop(open);
        let passed = safe_point().unwrap();
        assert!(
            passed.safe_point > held.safe_point,
            "past both transactions once they ended: {passed:?}"
        );
        assert_eq!(
            passed.safe_point.physical_ms(),
            passed.now.physical_ms() - 500,
            "the life time behind the oracle"
        );
    }
}
