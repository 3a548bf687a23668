//! The cluster's roles as processes: `strata pd`, `strata kv` and `strata server`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use strata_engine::{RocksOptions, WRITE_BUFFER_BYTES_DEFAULT};
use strata_fiber::FiberPool;
use strata_mysql::{MysqlServer, ServerConfig, TlsConfig};
use strata_node::{GcConfig, KvNode, NodeConfig, SplitConfig, StoreConfig};
use strata_pd::{PdConfig, PdService, SNAPSHOT_REPORT_INTERVAL};
use strata_pd_client::{PdClient, Security};
use strata_proto::security::{ClusterTls, Conn};
use strata_sql::SqlServer;
use strata_txn::{RemoteKv, TxnClient};
use tokio::net::TcpListener;

use crate::signals;
use crate::status::{self, StatusPort};

/// Worker threads of a role's gRPC server: one per two CPUs, at least one. They carry the
/// network and point reads; storage commands run on threads of their own. A second worker on
/// a 2-vCPU machine mostly added hand-offs between the workers, each a wake-up of an idle
/// vCPU (tens of microseconds there): with one, the cluster's point select was 3–8 % faster,
/// read_only 0–3 %, and update_index unchanged, in alternated runs.
fn grpc_worker_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
}
/// Threads that run a KV node's storage commands (each may wait for a row lock).
const KV_COMMAND_THREADS_MAX: usize = 1024;
/// How long a stopping server lets the requests and streams in flight finish.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(1);
/// How long a SQL node waits for the cluster to answer when it starts.
const SQL_STARTUP_DEADLINE: Duration = Duration::from_secs(60);

#[derive(Args, Debug)]
pub struct PdArgs {
    /// Address to listen on for the placement driver's gRPC service.
    #[arg(long, default_value = "127.0.0.1:2379")]
    pub listen: SocketAddr,
    /// Folder that holds the cluster's metadata and the timestamp oracle's state.
    #[arg(long, default_value = "strata-pd")]
    pub data_dir: PathBuf,
    /// Replicas of each region. The cluster starts once this many KV nodes registered.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=7))]
    pub replicas: u32,
    /// Seconds without a heartbeat after which a KV node's replicas are re-created on other
    /// nodes.
    #[arg(long, default_value_t = PdConfig::default().max_store_down.as_secs())]
    pub max_store_down_secs: u64,
    /// This placement driver's id among `--peers`.
    #[arg(long, default_value_t = 1)]
    pub id: u64,
    /// Every placement driver of the cluster, the same list on each, as `id=host:port`
    /// separated by commas (e.g. `1=127.0.0.1:2379,2=127.0.0.1:2381,3=127.0.0.1:2383`);
    /// they keep the cluster's state as one Raft group and serve while a majority runs.
    /// Without it this placement driver runs alone.
    #[arg(long, value_parser = parse_peers)]
    pub peers: Option<Peers>,
    /// Port of the status server (`/metrics`, `/status`) on the --listen address. Default:
    /// the gRPC port + 100 (2479); 0: none.
    #[arg(long)]
    pub status_port: Option<u16>,
    #[command(flatten)]
    pub cluster_tls: ClusterTlsArgs,
}

/// The `--peers` list of the placement drivers.
#[derive(Clone, Debug)]
pub struct Peers(pub Vec<(u64, String)>);

fn parse_peers(text: &str) -> Result<Peers, String> {
    let mut peers = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (id, address) = item
            .split_once('=')
            .ok_or_else(|| format!("`{item}` is not id=host:port"))?;
        let id: u64 = id
            .parse()
            .ok()
            .filter(|id| *id > 0)
            .ok_or_else(|| format!("`{id}` is not a member id (a number above 0)"))?;
        address
            .parse::<SocketAddr>()
            .map_err(|e| format!("`{address}`: {e}"))?;
        if peers.iter().any(|(other, _)| *other == id) {
            return Err(format!("member {id} is listed twice"));
        }
        peers.push((id, address.to_string()));
    }
    if peers.is_empty() {
        return Err("no members".into());
    }
    Ok(Peers(peers))
}

#[derive(Args, Debug)]
pub struct KvArgs {
    /// The placement drivers' addresses (host:port, separated by commas).
    #[arg(long, default_value = "127.0.0.1:2379")]
    pub pd: String,
    /// Address to listen on for the KV service; other processes reach the node there.
    #[arg(long, default_value = "127.0.0.1:20160")]
    pub listen: SocketAddr,
    /// Folder that holds the node's data.
    #[arg(long, default_value = "strata-kv")]
    pub data_dir: PathBuf,
    /// RocksDB block cache size, in MiB.
    #[arg(long, default_value_t = 1024)]
    pub block_cache_mib: usize,
    /// Size of one RocksDB memtable, in MiB: writes are flushed to files in pieces this big.
    #[arg(long, default_value_t = WRITE_BUFFER_BYTES_DEFAULT >> 20)]
    pub write_buffer_mib: usize,
    /// A region holding more than this many bytes of committed versions splits in two.
    #[arg(long, default_value_t = SplitConfig::default().region_max_bytes)]
    pub region_split_bytes: u64,
    /// A region holding more than this many keys splits in two.
    #[arg(long, default_value_t = SplitConfig::default().region_max_keys)]
    pub region_split_keys: u64,
    /// Entries a region's Raft log may hold before it is compacted past replicas that lag
    /// behind (they catch up from a snapshot); at least 1024.
    #[arg(long, default_value_t = StoreConfig::default().raft_log_max_entries)]
    pub raft_log_max_entries: u64,
    /// How long old versions of rows stay readable, in seconds, as TiDB's `tidb_gc_life_time`.
    #[arg(long, default_value_t = GcConfig::default().life_time.as_secs())]
    pub gc_life_time_secs: u64,
    /// How long, in seconds, an open transaction may keep old versions readable past the life
    /// time, as TiDB's `tidb_gc_max_wait_time`; one that runs longer fails (error 9006).
    #[arg(long, default_value_t = GcConfig::default().max_wait.as_secs())]
    pub gc_max_wait_secs: u64,
    /// Seconds between passes of the garbage collector over the regions the node leads.
    #[arg(long, default_value_t = GcConfig::default().interval.as_secs())]
    pub gc_interval_secs: u64,
    /// Port of the status server (`/metrics`, `/status`) on the --listen address. Default:
    /// the KV port + 20 (20180, as TiKV's); 0: none.
    #[arg(long)]
    pub status_port: Option<u16>,
    #[command(flatten)]
    pub cluster_tls: ClusterTlsArgs,
}

/// Who may log in to a SQL node whose cluster has no accounts yet, and whether it may listen
/// beyond this machine without passwords.
#[derive(Args, Clone, Debug, Default)]
pub struct AccessArgs {
    /// The password of `root` when the cluster has no accounts yet (a new data folder): root
    /// is then `root`@`%`, and may log in from anywhere with it. Without it, root is
    /// `root`@`localhost` without a password, who logs in only from this machine.
    #[arg(long)]
    pub root_password: Option<String>,
    /// Allows listening on an address other than loopback while an account has no password;
    /// on a new data folder without --root-password, root is then `root`@`%` without a
    /// password. For trusted networks and tests only.
    #[arg(long)]
    pub insecure: bool,
    /// The certificate (PEM) a client that asks for TLS is shown. Without it, the playground
    /// generates a self-signed one in its data folder on first start, and a SQL node of a
    /// cluster offers no TLS.
    #[arg(long, requires = "ssl_key")]
    pub ssl_cert: Option<PathBuf>,
    /// The private key (PEM) of --ssl-cert.
    #[arg(long, requires = "ssl_cert")]
    pub ssl_key: Option<PathBuf>,
    /// The CA (PEM) whose client certificates are accepted: a client may show one, and
    /// `REQUIRE X509` accounts must.
    #[arg(long)]
    pub ssl_ca: Option<PathBuf>,
    /// Offers no TLS.
    #[arg(long, conflicts_with_all = ["ssl_cert", "ssl_ca"])]
    pub skip_ssl: bool,
    /// Refuses plain connections (MySQL's `require_secure_transport`; 3159).
    #[arg(long, conflicts_with = "skip_ssl")]
    pub require_secure_transport: bool,
    /// A Unix socket to serve clients on as well (MySQL's `--socket`; its clients are
    /// `localhost`). The playground's default is `mysql.sock` in its data folder; a SQL node
    /// of a cluster has none unless given.
    #[arg(long)]
    pub socket: Option<PathBuf>,
    /// The RSA private key (PEM) that `caching_sha2_password` clients on plain connections
    /// encrypt their passwords for (MySQL's `caching_sha2_password_private_key_path`). Without
    /// it, the playground keeps one in its data folder (`private_key.pem`, `public_key.pem`)
    /// and a SQL node of a cluster makes one at each start.
    #[arg(long)]
    pub caching_sha2_password_private_key_path: Option<PathBuf>,
}

impl AccessArgs {
    /// The arguments that pass these on to a child SQL node.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(password) = &self.root_password {
            args.extend(["--root-password".to_string(), password.clone()]);
        }
        if self.insecure {
            args.push("--insecure".to_string());
        }
        if let (Some(cert), Some(key)) = (&self.ssl_cert, &self.ssl_key) {
            args.extend(["--ssl-cert".to_string(), cert.display().to_string()]);
            args.extend(["--ssl-key".to_string(), key.display().to_string()]);
        }
        if let Some(ca) = &self.ssl_ca {
            args.extend(["--ssl-ca".to_string(), ca.display().to_string()]);
        }
        if self.skip_ssl {
            args.push("--skip-ssl".to_string());
        }
        if self.require_secure_transport {
            args.push("--require-secure-transport".to_string());
        }
        if let Some(path) = &self.caching_sha2_password_private_key_path {
            args.extend([
                "--caching-sha2-password-private-key-path".to_string(),
                path.display().to_string(),
            ]);
        }
        args
    }

    /// The key pair of `caching_sha2_password`: the given one, else the one kept in
    /// `data_dir` (made there on first start), else a new one.
    pub fn rsa(&self, data_dir: Option<&Path>) -> Result<strata_mysql::RsaKeyPair, String> {
        match (&self.caching_sha2_password_private_key_path, data_dir) {
            (Some(path), _) => strata_mysql::RsaKeyPair::load(path),
            (None, Some(dir)) => strata_mysql::RsaKeyPair::load_or_generate(dir),
            (None, None) => strata_mysql::RsaKeyPair::generate(),
        }
    }

    /// What a client that asks for TLS gets: the given certificate, else one generated in
    /// `generate_in` (None: no TLS), unless TLS is skipped.
    pub fn tls(&self, generate_in: Option<&Path>) -> Result<Option<TlsConfig>, String> {
        if self.skip_ssl {
            return Ok(None);
        }
        match (&self.ssl_cert, &self.ssl_key, generate_in) {
            (Some(cert), Some(key), _) => {
                TlsConfig::load(cert, key, self.ssl_ca.as_deref()).map(Some)
            }
            (_, _, Some(dir)) => TlsConfig::load_or_generate(dir, self.ssl_ca.as_deref()).map(Some),
            _ => Ok(None),
        }
    }
}

/// Mutual TLS between the roles of a cluster (TiDB's `[security]` cluster-ssl-*): every
/// connection a role opens or accepts shows a certificate issued by the cluster's CA.
#[derive(Args, Clone, Debug, Default)]
pub struct ClusterTlsArgs {
    /// The cluster's CA certificate (PEM): only callers with a certificate it issued are served.
    #[arg(long, requires_all = ["cluster_ssl_cert", "cluster_ssl_key"])]
    pub cluster_ssl_ca: Option<PathBuf>,
    /// This node's certificate (PEM), issued by --cluster-ssl-ca for the address others dial.
    #[arg(long, requires = "cluster_ssl_ca")]
    pub cluster_ssl_cert: Option<PathBuf>,
    /// The private key (PEM) of --cluster-ssl-cert.
    #[arg(long, requires = "cluster_ssl_ca")]
    pub cluster_ssl_key: Option<PathBuf>,
}

impl ClusterTlsArgs {
    /// Mutual TLS with the given files, or plain TCP without them.
    pub fn security(&self) -> Result<Security, String> {
        match (
            &self.cluster_ssl_ca,
            &self.cluster_ssl_cert,
            &self.cluster_ssl_key,
        ) {
            (Some(ca), Some(cert), Some(key)) => ClusterTls::load(ca, cert, key).map(Security::tls),
            _ => Ok(Security::plain()),
        }
    }

    /// The arguments that give a child role `ca` and its `cert` and `key`.
    pub fn args_for(ca: &Path, (cert, key): (PathBuf, PathBuf)) -> Vec<String> {
        vec![
            "--cluster-ssl-ca".into(),
            ca.display().to_string(),
            "--cluster-ssl-cert".into(),
            cert.display().to_string(),
            "--cluster-ssl-key".into(),
            key.display().to_string(),
        ]
    }
}

#[derive(Args, Debug)]
pub struct ServerArgs {
    /// The placement drivers' addresses (host:port, separated by commas).
    #[arg(long, default_value = "127.0.0.1:2379")]
    pub pd: String,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// MySQL protocol port.
    #[arg(long, short = 'P', default_value_t = 4000)]
    pub port: u16,
    /// Threads that run the connections (as fibers) and their RPCs to the cluster, each with
    /// connections of its own to the KV nodes. Default: one per two CPUs, at least one.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Authenticated connections served at once; one more gets error 1040.
    #[arg(long, default_value_t = strata_sql::MAX_CONNECTIONS_DEFAULT)]
    pub max_connections: usize,
    /// What the statements of all sessions may hold together, in MiB; the statement that
    /// would go past it gets error 8176. Default: half the machine's memory.
    #[arg(long)]
    pub memory_limit_mib: Option<u64>,
    /// Port of the status server (`/metrics`, `/status`) on the --host address. Default: the
    /// MySQL port + 6080 (10080, as TiDB's); 0: none.
    #[arg(long)]
    pub status_port: Option<u16>,
    /// The slow query log (`slow_query_log_file`): statements that took `long_query_time`
    /// (0.3 s by default) or longer.
    #[arg(long, default_value = "strata-slow.log")]
    pub slow_query_log_file: PathBuf,
    #[command(flatten)]
    pub access: AccessArgs,
    #[command(flatten)]
    pub cluster_tls: ClusterTlsArgs,
}

fn grpc_runtime(name: &str) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(grpc_worker_threads())
        .max_blocking_threads(KV_COMMAND_THREADS_MAX)
        .thread_name(name)
        .enable_all()
        .build()
}

/// Serves `router` on `listen` until SIGTERM or Ctrl-C, taking its connections from what
/// `incoming` makes of the listener (on the runtime).
fn serve_until_signal<I>(
    runtime: &tokio::runtime::Runtime,
    listen: SocketAddr,
    router: tonic::transport::server::Router,
    role: &str,
    incoming: impl FnOnce(TcpListener) -> I,
) -> Result<(), Box<dyn std::error::Error>>
where
    I: tokio_stream::Stream<Item = std::io::Result<Conn>>,
{
    let listener = runtime.block_on(TcpListener::bind(listen))?;
    println!("Strata {role} listening on {}", listener.local_addr()?);
    let (stopping, stop) = tokio::sync::oneshot::channel::<()>();
    runtime.block_on(async move {
        let serve = router.serve_with_incoming_shutdown(incoming(listener), async move {
            signals::wait().await;
            let _ = stopping.send(());
        });
        // Long-lived streams (Raft messages from other nodes, point reads from SQL nodes) end
        // only when their senders stop: they get a grace period, not an open-ended wait.
        let grace = async move {
            let _ = stop.await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        };
        tokio::select! {
            served = serve => served,
            () = grace => Ok(()),
        }
    })?;
    Ok(())
}

pub fn run_pd(args: PdArgs) -> Result<(), Box<dyn std::error::Error>> {
    crate::ports::ensure_free(args.listen, "--listen")?;
    let status_port = StatusPort::resolve(args.status_port, args.listen.port(), status::PD_OFFSET);
    status_port.ensure_free(args.listen.ip())?;
    let security = args.cluster_tls.security()?;
    let service = PdService::open(
        &args.data_dir,
        PdConfig {
            replicas: args.replicas as usize,
            max_store_down: std::time::Duration::from_secs(args.max_store_down_secs),
            id: args.id,
            members: match args.peers {
                Some(Peers(peers)) => peers,
                None => vec![(args.id, args.listen.to_string())],
            },
            security: security.clone(),
        },
    )?;
    strata_pd::metrics::init();
    let scraped = service.clone();
    status::start(
        "placement driver",
        args.listen.ip(),
        status_port,
        vec![Box::new(move || scraped.refresh_metrics())],
        None,
    )?;
    let runtime = grpc_runtime("pd")?;
    let router = tonic::transport::Server::builder().add_service(service.into_server());
    serve_until_signal(
        &runtime,
        args.listen,
        router,
        &format!("placement driver{}", tls_note(&security)),
        |listener| security.incoming(listener),
    )?;
    eprintln!("Strata placement driver stopped");
    Ok(())
}

pub fn run_kv(args: KvArgs) -> Result<(), Box<dyn std::error::Error>> {
    crate::ports::ensure_free(args.listen, "--listen")?;
    let status_port = StatusPort::resolve(args.status_port, args.listen.port(), status::KV_OFFSET);
    status_port.ensure_free(args.listen.ip())?;
    let security = args.cluster_tls.security()?;
    let node = KvNode::start(&NodeConfig {
        pd: args.pd.clone(),
        data_dir: args.data_dir.clone(),
        advertise: args.listen,
        rocks: RocksOptions {
            block_cache_bytes: args.block_cache_mib << 20,
            write_buffer_bytes: args.write_buffer_mib.max(1) << 20,
        },
        split: SplitConfig {
            region_max_bytes: args.region_split_bytes.max(1),
            region_max_keys: args.region_split_keys.max(2),
        },
        store: StoreConfig {
            raft_log_max_entries: args.raft_log_max_entries,
        },
        gc: GcConfig {
            life_time: Duration::from_secs(args.gc_life_time_secs),
            interval: Duration::from_secs(args.gc_interval_secs.max(1)),
            max_wait: Duration::from_secs(args.gc_max_wait_secs),
        },
        security: security.clone(),
    })?;
    status::start(
        "KV node",
        args.listen.ip(),
        status_port,
        vec![Box::new(node.metrics_refresh())],
        None,
    )?;
    let runtime = grpc_runtime("kv")?;
    let router = tonic::transport::Server::builder()
        .add_service(node.service().into_server())
        .add_service(node.raft_service().into_server());
    let role = format!(
        "KV node (store {}, data in {}){}",
        node.store_id,
        args.data_dir.display(),
        tls_note(&security)
    );
    // Point reads from SQL nodes come on connections of their own to the same port.
    let reads = node.service();
    serve_until_signal(&runtime, args.listen, router, &role, |listener| {
        strata_node::read_stream::split_incoming(listener, security, reads)
    })?;
    node.stop();
    eprintln!("Strata KV node stopped");
    Ok(())
}

pub fn run_server(args: ServerArgs) -> Result<(), Box<dyn std::error::Error>> {
    let listen = SocketAddr::new(args.host, args.port);
    // Before waiting for the cluster: a taken port is reported at once.
    crate::ports::ensure_free(listen, "--port")?;
    let status_port = StatusPort::resolve(args.status_port, args.port, status::SQL_OFFSET);
    status_port.ensure_free(args.host)?;
    // A connection and the RPCs that carry its reads share a thread (crates/fiber).
    let threads = args.threads.unwrap_or_else(grpc_worker_threads);
    let fibers = FiberPool::start("sql", threads)?;
    let security = args.cluster_tls.security()?;
    let pd = PdClient::connect_on_with(&args.pd, fibers.handle().clone(), security.clone())?;
    let pd_for_reports = pd.clone();
    let pd_for_dashboard = pd.clone();
    let kv = Arc::new(RemoteKv::new(pd.clone()));
    let client = TxnClient::new(kv, Arc::new(pd));
    // The cluster may still be starting: wait for it to answer. The node serves only once it
    // has loaded the schema and reported its version to the other SQL nodes.
    let deadline = Instant::now() + SQL_STARTUP_DEADLINE;
    let (sql, _schema_sync) = loop {
        let started = SqlServer::open(client.clone())
            .and_then(|sql| sql.start_schema_sync().map(|sync| (sql, sync)));
        match started {
            Ok(started) => break started,
            Err(e) if Instant::now() < deadline => {
                tracing::warn!(error = %e, "cluster not ready; retrying");
                std::thread::sleep(Duration::from_millis(500));
            }
            Err(e) => return Err(e.to_string().into()),
        }
    };
    if let Some(mib) = args.memory_limit_mib {
        sql.set_memory_limit(mib << 20);
    }
    sql.set_slow_log_file(&args.slow_query_log_file);
    sql.set_instance(&listen.to_string());
    // Locks of transactions abandoned below the cluster's safe point are resolved (every SQL
    // node does it; resolving is idempotent), so that KV nodes collect their keys.
    let pd_for_locks = pd_for_reports.clone();
    client.start_lock_resolver(move || pd_for_locks.gc_safe_point().ok())?;
    report_snapshots(pd_for_reports, client.clone());
    strata_txn::metrics::init();
    let dashboard = crate::dashboard::Dashboard::start(
        sql.clone(),
        crate::dashboard::Cluster::Nodes(pd_for_dashboard),
        listen,
    )?;
    let scraped = sql.clone();
    status::start(
        "SQL node",
        args.host,
        status_port,
        vec![Box::new(move || scraped.refresh_metrics())],
        Some(dashboard),
    )?;
    let what = format!(
        "SQL node (placement drivers {}{})",
        args.pd,
        tls_note(&security)
    );
    serve_mysql(
        sql.clone(),
        listen,
        args.max_connections,
        &args.access,
        None,
        &what,
        Some(fibers),
    )?;
    sql.leave_schema_sync();
    eprintln!("Strata SQL node stopped");
    Ok(())
}

/// How a role's start line says that the cluster's connections are TLS.
fn tls_note(security: &Security) -> &'static str {
    if security.is_tls() {
        ", cluster TLS"
    } else {
        ""
    }
}

/// Reports this SQL node's oldest open snapshot to the placement driver every
/// [`SNAPSHOT_REPORT_INTERVAL`], so that garbage collection waits for its transactions.
fn report_snapshots(pd: PdClient, client: TxnClient) {
    // Any number unlikely to be another SQL node's: the process id and the start time.
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let node = started ^ (u64::from(std::process::id()) << 32);
    let spawned = std::thread::Builder::new()
        .name("snapshot-report".into())
        .spawn(move || loop {
            if let Err(e) = pd.report_snapshots(node, client.oldest_snapshot()) {
                tracing::debug!(error = %e, "reporting open snapshots failed");
            }
            std::thread::sleep(SNAPSHOT_REPORT_INTERVAL);
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "no snapshot reports: long transactions may fail");
    }
}

/// Creates root on a cluster without accounts, as `access` says, and refuses to listen beyond
/// loopback while an account has no password unless `--insecure` allows it.
fn prepare_accounts(
    sql: &SqlServer,
    listen: SocketAddr,
    access: &AccessArgs,
) -> Result<(), Box<dyn std::error::Error>> {
    let result = match (&access.root_password, access.insecure) {
        (Some(password), _) => sql.bootstrap_root("%", password),
        (None, true) => sql.bootstrap_root("%", ""),
        (None, false) => sql.bootstrap_root("localhost", ""),
    };
    result.map_err(|e| format!("creating the root account: {e}"))?;
    if !listen.ip().is_loopback() && !access.insecure {
        if let Some(open) = sql.accounts_without_password().first() {
            return Err(format!(
                "refusing to listen on {}: account {open} has no password. Give it one (ALTER \
                 USER, or --root-password on a new data folder), or pass --insecure to allow it",
                listen.ip()
            )
            .into());
        }
    }
    Ok(())
}

/// The playground's Unix socket when `--socket` is not given: `mysql.sock` in its data folder
/// (as an absolute path, which clients are given in `@@socket`), unless that path is longer
/// than a socket's address may be.
fn default_socket(data_dir: &Path) -> std::io::Result<Option<PathBuf>> {
    /// The longest path a Unix socket address holds (`sun_path`, less its NUL).
    const MAX_SOCKET_PATH: usize = 107;
    let path = std::path::absolute(data_dir)?.join("mysql.sock");
    if path.as_os_str().len() > MAX_SOCKET_PATH {
        eprintln!(
            "no Unix socket: {} is too long for one (give --socket)",
            path.display()
        );
        return Ok(None);
    }
    Ok(Some(path))
}

/// Serves the MySQL protocol on `listen` (and on `--socket`) to at most `max_connections`
/// authenticated clients until SIGTERM or Ctrl-C, after printing where it listens and how to
/// connect. `what` names the process in that line. A playground gives its `data_dir`, where
/// its TLS certificate is made and its Unix socket is by default. Connections run as fibers on
/// `fibers` when given, else on threads of their own.
pub fn serve_mysql(
    sql: Arc<SqlServer>,
    listen: SocketAddr,
    max_connections: usize,
    access: &AccessArgs,
    data_dir: Option<&Path>,
    what: &str,
    fibers: Option<FiberPool>,
) -> Result<(), Box<dyn std::error::Error>> {
    prepare_accounts(&sql, listen, access)?;
    let tls = access.tls(data_dir.map(|d| d.join("tls")).as_deref())?;
    let socket = match (&access.socket, data_dir) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(data_dir)) => default_socket(data_dir)?,
        (None, None) => None,
    };
    if tls.is_some() {
        sql.set_tls_offered();
    }
    if access.require_secure_transport {
        if tls.is_none() {
            return Err(
                "--require-secure-transport needs TLS: give --ssl-cert and --ssl-key".into(),
            );
        }
        sql.set_require_secure_transport(true);
    }
    let rsa = access.rsa(data_dir)?;
    let config = ServerConfig {
        listen,
        max_connections,
        tls,
        socket: socket.clone(),
        rsa: Some(Arc::new(rsa)),
        ..ServerConfig::default()
    };
    let mut server = MysqlServer::bind(config, sql)?;
    if let Some(fibers) = fibers {
        server = server.on_fibers(fibers);
    }
    let address = server.local_addr();
    println!(
        "Strata {what} listening on {address}; connect with: mariadb -h {} -P {} -u root",
        address.ip(),
        address.port()
    );
    if let Some(socket) = &socket {
        println!("  and on the Unix socket {}", socket.display());
    }
    signals::on_signal(server.shutdown_handle());
    server.run()?;
    Ok(())
}
