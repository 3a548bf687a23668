//! `strata playground --kv N --sql M [--pd P]`: P placement drivers (one by default), N KV
//! nodes and M SQL nodes as child processes of this one, on loopback, with data and logs under
//! the data folder. Ctrl-C or SIGTERM stops them all (SQL nodes first, placement drivers
//! last); if the playground is killed outright, the kernel kills each of them
//! (`crate::signals::stop_with_playground`).

use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::process::{kill_process, Pid, Signal};

use strata_proto::security;

use crate::playground::PlaygroundArgs;
use crate::roles::ClusterTlsArgs;

/// How long a child may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(90);
/// How long a child may take to stop after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);
/// Replicas of each region in a local cluster: one per KV node, up to three.
const REPLICAS_MAX: usize = 3;

struct Role {
    name: String,
    child: Child,
    address: SocketAddr,
    /// Where its status server listens, if it has one.
    status: Option<SocketAddr>,
    log: PathBuf,
}

impl Role {
    fn spawn(
        name: String,
        args: Vec<String>,
        (address, status): (SocketAddr, Option<SocketAddr>),
        logs: &Path,
    ) -> std::io::Result<Role> {
        let status_port = status.map_or(0, |s| s.port());
        let args = args
            .into_iter()
            .chain(["--status-port".to_string(), status_port.to_string()]);
        let log = logs.join(format!("{name}.log"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)?;
        let child = Command::new(std::env::current_exe()?)
            .args(args)
            // The child stops when this process goes, however it goes.
            .env(
                crate::signals::PLAYGROUND_PID_ENV,
                std::process::id().to_string(),
            )
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .spawn()?;
        Ok(Role {
            name,
            child,
            address,
            status,
            log,
        })
    }

    /// Waits until the role listens; fails if it exits first.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + START_TIMEOUT;
        while Instant::now() < deadline {
            // A connection to a free port can be made from that same port, to itself.
            let connected = TcpStream::connect_timeout(&self.address, Duration::from_millis(200));
            if connected.is_ok_and(|s| s.local_addr().ok() != Some(self.address)) {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "{} exited with {status}; see {}",
                    self.name,
                    self.log.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "{} did not listen on {} within {START_TIMEOUT:?}; see {}",
            self.name,
            self.address,
            self.log.display()
        ))
    }

    fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        if let Some(pid) = Pid::from_raw(self.child.id() as i32) {
            let _ = kill_process(pid, Signal::TERM);
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!(
            "{} did not stop within {STOP_TIMEOUT:?}; killing it",
            self.name
        );
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The running children; stopped in reverse order of start when dropped.
struct Roles(Vec<Role>);

impl Drop for Roles {
    fn drop(&mut self) {
        while let Some(mut role) = self.0.pop() {
            role.stop();
        }
    }
}

/// The name of placement driver `i` of `count`.
fn pd_name(i: usize, count: u16) -> String {
    if count == 1 {
        "pd".to_string()
    } else {
        format!("pd{}", i + 1)
    }
}

/// The TLS arguments of each role: certificates for `names` generated in `dir` (kept there
/// across restarts), valid for loopback and `host`; none without a folder.
fn cluster_tls(
    dir: Option<PathBuf>,
    names: &[String],
    host: IpAddr,
) -> Result<impl Fn(&str) -> Vec<String>, String> {
    if let Some(dir) = &dir {
        let mut hosts = vec!["localhost".to_string(), "127.0.0.1".to_string()];
        if !hosts.contains(&host.to_string()) {
            hosts.push(host.to_string());
        }
        security::generate_local(dir, names, &hosts)?;
    }
    Ok(move |name: &str| match &dir {
        Some(dir) => ClusterTlsArgs::args_for(
            &dir.join(security::CA_FILE),
            security::node_files(dir, name),
        ),
        None => Vec::new(),
    })
}

pub fn run(args: &PlaygroundArgs) -> Result<(), Box<dyn std::error::Error>> {
    let kv_nodes = args.kv.unwrap_or(1);
    let sql_nodes = args.sql.unwrap_or(1);
    if kv_nodes == 0 || sql_nodes == 0 {
        return Err("a cluster needs at least one KV node and one SQL node".into());
    }
    let replicas = kv_nodes.min(REPLICAS_MAX);
    let root = args.data_dir.join("cluster");
    let logs = root.join("logs");
    std::fs::create_dir_all(&logs)?;
    let dir = |name: &str| root.join(name).display().to_string();
    let host = args.host;
    // The SQL nodes show one certificate, generated in the cluster's folder unless given.
    let mut access = args.access.clone();
    if !access.skip_ssl && access.ssl_cert.is_none() {
        let tls_dir = root.join("tls");
        strata_mysql::TlsConfig::load_or_generate(&tls_dir, None)?;
        access.ssl_cert = Some(tls_dir.join(strata_mysql::tls::GENERATED_CERT));
        access.ssl_key = Some(tls_dir.join(strata_mysql::tls::GENERATED_KEY));
    }
    // One caching_sha2_password key pair for every SQL node, kept in the data folder, so a
    // client that keeps the public key reaches any of them, before and after a restart.
    if access.caching_sha2_password_private_key_path.is_none() {
        strata_mysql::RsaKeyPair::load_or_generate(&root)?;
        access.caching_sha2_password_private_key_path =
            Some(root.join(strata_mysql::sha2_auth::PRIVATE_KEY_FILE));
    }
    let pd_nodes = args.pd.unwrap_or(1);
    let consecutive = |first: u16, count: usize, flag: &str| -> Result<Vec<SocketAddr>, String> {
        (0..count)
            .map(|i| {
                u16::try_from(i)
                    .ok()
                    .and_then(|i| first.checked_add(i))
                    .map(|port| SocketAddr::new(host, port))
                    .ok_or_else(|| format!("{flag} {first} leaves no room for {count} ports"))
            })
            .collect()
    };
    let pds = consecutive(args.pd_port, usize::from(pd_nodes), "--pd-port")?;
    let peers: Vec<String> = pds
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{}={a}", i + 1))
        .collect();
    let peers = peers.join(",");
    let pd: Vec<String> = pds.iter().map(SocketAddr::to_string).collect();
    let pd = pd.join(",");
    let names: Vec<String> = (0..usize::from(pd_nodes))
        .map(|i| pd_name(i, pd_nodes))
        .chain((1..=kv_nodes).map(|i| format!("kv{i}")))
        .chain((1..=sql_nodes).map(|i| format!("sql{i}")))
        .collect();
    let kvs = consecutive(args.kv_port, kv_nodes, "--kv-port")?;
    let sqls = consecutive(args.port, sql_nodes, "--port")?;
    // Every port is checked before anything starts, so that a second local cluster on the
    // same ports fails at once, naming them.
    for (addresses, flag) in [(&pds, "--pd-port"), (&kvs, "--kv-port"), (&sqls, "--port")] {
        for address in addresses {
            crate::ports::ensure_free(*address, &format!("{flag} or --port-offset"))?;
        }
    }
    // Status ports: the SQL nodes' from --status-port when given (each checked like the
    // ports above); otherwise each role's default next to its own port, left out when taken.
    let status_of = |address: &SocketAddr, offset: u16, given: Option<u16>| {
        let port = match given {
            Some(0) => return Ok(None),
            Some(port) => port,
            None => match address.port().checked_add(offset) {
                Some(port) => port,
                None => return Ok(None),
            },
        };
        let status = SocketAddr::new(host, port);
        if given.is_some() {
            crate::ports::ensure_free(status, "--status-port")?;
        } else if crate::ports::ensure_free(status, "").is_err() {
            eprintln!("no status server on {status}: the port is taken");
            return Ok(None);
        }
        Ok::<_, String>(Some(status))
    };
    let sql_status_given = |i: usize| {
        args.status_port.map(|first| {
            if first == 0 {
                0
            } else {
                first.saturating_add(i as u16)
            }
        })
    };
    let pd_status = pds
        .iter()
        .map(|a| status_of(a, crate::status::PD_OFFSET, None))
        .collect::<Result<Vec<_>, _>>()?;
    let kv_status = kvs
        .iter()
        .map(|a| status_of(a, crate::status::KV_OFFSET, None))
        .collect::<Result<Vec<_>, _>>()?;
    let sql_status = sqls
        .iter()
        .enumerate()
        .map(|(i, a)| status_of(a, crate::status::SQL_OFFSET, sql_status_given(i)))
        .collect::<Result<Vec<_>, _>>()?;
    let tls_args = cluster_tls(args.tls.then(|| root.join("cluster-tls")), &names, host)?;

    let mut roles = Roles(Vec::new());
    let mut start = |role: Role| -> Result<(), Box<dyn std::error::Error>> {
        roles.0.push(role);
        roles.0.last_mut().expect("pushed").wait_ready()?;
        Ok(())
    };
    for (i, address) in pds.iter().enumerate() {
        let name = pd_name(i, pd_nodes);
        start(Role::spawn(
            name.clone(),
            vec![
                "pd".into(),
                "--listen".into(),
                address.to_string(),
                "--data-dir".into(),
                dir(&name),
                "--replicas".into(),
                replicas.to_string(),
                "--id".into(),
                (i + 1).to_string(),
                "--peers".into(),
                peers.clone(),
            ]
            .into_iter()
            .chain(tls_args(&name))
            .collect(),
            (*address, pd_status[i]),
            &logs,
        )?)?;
    }
    for (i, &address) in kvs.iter().enumerate() {
        start(Role::spawn(
            format!("kv{}", i + 1),
            vec![
                "kv".into(),
                "--pd".into(),
                pd.clone(),
                "--listen".into(),
                address.to_string(),
                "--data-dir".into(),
                dir(&format!("kv{}", i + 1)),
                "--block-cache-mib".into(),
                args.block_cache_mib.to_string(),
                "--write-buffer-mib".into(),
                args.write_buffer_mib.to_string(),
            ]
            .into_iter()
            .chain(tls_args(&format!("kv{}", i + 1)))
            .collect(),
            (address, kv_status[i]),
            &logs,
        )?)?;
    }
    for (i, &address) in sqls.iter().enumerate() {
        start(Role::spawn(
            format!("sql{}", i + 1),
            vec![
                "server".into(),
                "--pd".into(),
                pd.clone(),
                "--host".into(),
                host.to_string(),
                "--port".into(),
                address.port().to_string(),
                "--max-connections".into(),
                args.max_connections.to_string(),
                "--slow-query-log-file".into(),
                logs.join(format!("sql{}-slow.log", i + 1))
                    .display()
                    .to_string(),
            ]
            .into_iter()
            .chain(
                args.memory_limit_mib
                    .iter()
                    .flat_map(|mib| ["--memory-limit-mib".to_string(), mib.to_string()]),
            )
            .chain(access.to_args())
            .chain(tls_args(&format!("sql{}", i + 1)))
            .collect(),
            (address, sql_status[i]),
            &logs,
        )?)?;
    }

    println!(
        "Strata playground cluster (data in {}{}):",
        root.display(),
        if args.tls {
            ", mutual TLS between the roles"
        } else {
            ""
        }
    );
    for role in &roles.0 {
        let status = role.status.map_or("no status port".to_string(), |s| {
            format!("http://{s}/metrics")
        });
        println!(
            "  {:<5} {:<21} {:<36} log {}",
            role.name,
            role.address,
            status,
            role.log.display()
        );
    }
    let first_sql = SocketAddr::new(host, args.port);
    println!(
        "connect with: mariadb -h {} -P {} -u root; Ctrl-C stops the cluster",
        first_sql.ip(),
        first_sql.port()
    );

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("signal runtime");
            runtime.block_on(crate::signals::wait());
            stop.store(true, Ordering::SeqCst);
        });
    }
    // A process that dies is reported and the rest keep serving (a region serves while a
    // majority of its replicas runs, the placement drivers while a majority of them runs; a
    // killed process may be started again by hand). Without any placement driver or any SQL
    // node there is no cluster left.
    let mut exited = vec![false; roles.0.len()];
    while !stop.load(Ordering::SeqCst) {
        for (role, exited) in roles.0.iter_mut().zip(exited.iter_mut()) {
            if *exited {
                continue;
            }
            if let Ok(Some(status)) = role.child.try_wait() {
                *exited = true;
                eprintln!(
                    "{} exited with {status}; see {}",
                    role.name,
                    role.log.display()
                );
            }
        }
        let pd_gone = roles
            .0
            .iter()
            .zip(&exited)
            .filter(|(role, _)| role.name.starts_with("pd"))
            .all(|(_, exited)| *exited);
        let sql_gone = roles
            .0
            .iter()
            .zip(&exited)
            .filter(|(role, _)| role.name.starts_with("sql"))
            .all(|(_, exited)| *exited);
        if pd_gone || sql_gone {
            return Err(
                "every placement driver or every SQL node exited; stopping the cluster".into(),
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(roles);
    eprintln!("Strata playground cluster stopped");
    Ok(())
}
