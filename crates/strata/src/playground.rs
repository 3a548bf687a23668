//! The playground: all roles in one process.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use strata_engine::{RocksEngine, RocksOptions};
use strata_kv::Storage;
use strata_mysql::{MysqlServer, ServerConfig};
use strata_pd::LocalTso;
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
    /// RocksDB block cache size, in MiB.
    #[arg(long, default_value_t = 2048)]
    pub block_cache_mib: usize,
}

pub fn run(args: PlaygroundArgs) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(&args.data_dir)?;
    let options = RocksOptions {
        block_cache_bytes: args.block_cache_mib << 20,
        ..RocksOptions::default()
    };
    let engine = Arc::new(RocksEngine::open(&args.data_dir.join("kv"), &options)?);
    let storage = Arc::new(Storage::new(engine.clone())?);
    let tso = Arc::new(LocalTso::open(&args.data_dir.join("pd"))?);
    let client = TxnClient::new(storage.clone(), tso);
    let sql = SqlServer::open(client.clone()).map_err(|e| e.to_string())?;
    let gc = strata_kv::gc::GcWorker::start(storage.clone(), client_safe_point(client));

    let config = ServerConfig {
        listen: SocketAddr::new(args.host, args.port),
        ..ServerConfig::default()
    };
    let server = MysqlServer::bind(config, sql)?;
    let address = server.local_addr();
    println!(
        "Strata playground listening on {address} (data in {}); connect with: mariadb -h {} -P {} -u root",
        args.data_dir.display(),
        address.ip(),
        address.port()
    );
    let shutdown = server.shutdown_handle();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("signal runtime");
        runtime.block_on(async {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .expect("SIGTERM handler");
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        });
        shutdown.shutdown();
    });
    server.run()?;
    gc.stop();
    eprintln!("Strata playground stopped");
    Ok(())
}

/// Safe points trail the timestamp oracle by the GC life time.
fn client_safe_point(
    client: TxnClient,
) -> impl Fn() -> Option<strata_types::Timestamp> + Send + 'static {
    move || client.current_ts().ok()
}
