//! A cluster of real processes on loopback: placement drivers, KV nodes and SQL nodes, each a
//! `strata` child process with its own data folder and log file.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::netns::Network;
use super::{free_port, listens};

/// How long a role may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(90);
/// How long a region may go without a leader the placement driver knows of.
const LEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a process may take to stop on SIGTERM.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

/// One role's process.
pub struct Process {
    pub child: Option<Child>,
    pub port: u16,
    args: Vec<String>,
    log: PathBuf,
    /// The network namespace it runs in (`None`: this one) and the address it listens on.
    netns: Option<String>,
    host: std::net::IpAddr,
}

impl Process {
    fn spawn(args: Vec<String>, port: u16, log: PathBuf) -> Process {
        Process::spawn_in(None, [127, 0, 0, 1].into(), args, port, log)
    }

    /// Starts `strata args` inside network namespace `netns` (`None`: this one); it is up
    /// once `host`:`port` accepts connections.
    pub fn spawn_in(
        netns: Option<&str>,
        host: std::net::IpAddr,
        args: Vec<String>,
        port: u16,
        log: PathBuf,
    ) -> Process {
        let mut process = Process {
            child: None,
            port,
            args,
            log,
            netns: netns.map(str::to_string),
            host,
        };
        process.start();
        process
    }

    /// Starts (or restarts) the process with its arguments and waits until it listens.
    pub fn start(&mut self) {
        assert!(self.child.is_none(), "already running");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("log file");
        let binary = env!("CARGO_BIN_EXE_strata");
        let mut command = match &self.netns {
            // `ip netns exec` execs the program, so the child is the strata process itself.
            Some(netns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", netns, binary]);
                c
            }
            None => Command::new(binary),
        };
        // Events (leaders, splits, snapshots, membership) are logged at info; tests read them.
        if std::env::var_os("STRATA_LOG").is_none() {
            command.env("STRATA_LOG", "info");
        }
        let child = command
            .args(&self.args)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start a strata process");
        self.child = Some(child);
        let deadline = Instant::now() + START_TIMEOUT;
        let address = SocketAddr::new(self.host, self.port);
        while Instant::now() < deadline {
            if listens(address) {
                return;
            }
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!(
                    "strata {:?} exited with {status}; log:\n{}",
                    self.args,
                    std::fs::read_to_string(&self.log).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!(
            "strata {:?} did not listen within {START_TIMEOUT:?}",
            self.args
        );
    }

    /// Kills the process with SIGKILL and waits for it.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops the process with SIGTERM, as an operator would, and waits until it exits (SIGKILL
    /// after [`STOP_TIMEOUT`]).
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "strata {:?} did not stop on SIGTERM within {STOP_TIMEOUT:?}",
            self.args
        );
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// Placement drivers, KV nodes and SQL nodes. When a test panics, the processes' logs are
/// kept (copied out of the cluster's temporary folder, which goes) and their folder printed.
pub struct Cluster {
    /// The placement drivers; member `i + 1` is `pd[i]`.
    pub pd: Vec<Process>,
    pub kv: Vec<Process>,
    pub sql: Vec<Process>,
    /// Every placement driver's address, separated by commas (what `--pd` takes).
    pub pd_address: String,
    pub dir: PathBuf,
    _temp: tempfile::TempDir,
    /// The network whose hosts run the KV nodes (`kv[i]` on host `i`), when they can be cut
    /// apart; removed after the processes stop (fields drop in order).
    pub network: Option<Network>,
}

impl Cluster {
    pub fn start(kv_nodes: usize, sql_nodes: usize) -> Cluster {
        Cluster::start_with(kv_nodes, sql_nodes, &[])
    }

    /// A cluster whose KV nodes get `kv_args` on top of the usual arguments.
    pub fn start_with(kv_nodes: usize, sql_nodes: usize, kv_args: &[&str]) -> Cluster {
        Cluster::start_configured(kv_nodes, sql_nodes, &[], kv_args)
    }

    /// A cluster whose placement driver gets `pd_args`, and its KV nodes `kv_args`, on top of
    /// the usual arguments.
    pub fn start_configured(
        kv_nodes: usize,
        sql_nodes: usize,
        pd_args: &[&str],
        kv_args: &[&str],
    ) -> Cluster {
        Cluster::start_with_pds(1, kv_nodes, sql_nodes, pd_args, kv_args)
    }

    /// A cluster of `pd_nodes` placement drivers (one Raft group), KV nodes and SQL nodes.
    pub fn start_with_pds(
        pd_nodes: usize,
        kv_nodes: usize,
        sql_nodes: usize,
        pd_args: &[&str],
        kv_args: &[&str],
    ) -> Cluster {
        Cluster::start_hosted(pd_nodes, kv_nodes, sql_nodes, pd_args, kv_args, None)
    }

    /// A cluster whose KV nodes each run on a host of their own in a private network (see
    /// [`Network`]; needs root), so that [`Fault::Isolate`] can cut one off from the others.
    /// The placement drivers and SQL nodes run here and reach every host.
    pub fn start_partitionable(pd_nodes: usize, kv_nodes: usize, sql_nodes: usize) -> Cluster {
        let network = Network::create(kv_nodes);
        Cluster::start_hosted(pd_nodes, kv_nodes, sql_nodes, &[], &[], Some(network))
    }

    fn start_hosted(
        pd_nodes: usize,
        kv_nodes: usize,
        sql_nodes: usize,
        pd_args: &[&str],
        kv_args: &[&str],
        network: Option<Network>,
    ) -> Cluster {
        let temp = tempfile::tempdir().expect("temp dir");
        let here: std::net::IpAddr = match &network {
            Some(network) => network.bridge_ip(),
            None => [127, 0, 0, 1].into(),
        };
        let dir = temp.path().to_path_buf();
        let path = |name: &str| dir.join(name).display().to_string();
        let pd_ports: Vec<u16> = (0..pd_nodes).map(|_| free_port()).collect();
        let pd_list: Vec<String> = pd_ports.iter().map(|p| format!("{here}:{p}")).collect();
        let peers: Vec<String> = pd_list
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{}={a}", i + 1))
            .collect();
        let peers = peers.join(",");
        // The placement drivers elect a leader together: start them all before waiting.
        let mut pd: Vec<Process> = pd_ports
            .iter()
            .enumerate()
            .map(|(i, &port)| Process {
                child: None,
                port,
                args: vec![
                    "pd".into(),
                    "--listen".into(),
                    pd_list[i].clone(),
                    "--data-dir".into(),
                    path(&format!("pd{}", i + 1)),
                    "--replicas".into(),
                    kv_nodes.min(3).to_string(),
                    "--id".into(),
                    (i + 1).to_string(),
                    "--peers".into(),
                    peers.clone(),
                ]
                .into_iter()
                .chain(pd_args.iter().map(|a| a.to_string()))
                .collect(),
                log: dir.join(format!("pd{}.log", i + 1)),
                netns: None,
                host: here,
            })
            .collect();
        for process in &mut pd {
            process.start();
        }
        let pd_address = pd_list.join(",");
        let kv = (1..=kv_nodes)
            .map(|i| {
                let port = free_port();
                let (netns, host) = match &network {
                    Some(network) => (Some(network.ns(i - 1)), network.ip(i - 1)),
                    None => (None, [127, 0, 0, 1].into()),
                };
                Process::spawn_in(
                    netns.as_deref(),
                    host,
                    vec![
                        "kv".into(),
                        "--pd".into(),
                        pd_address.clone(),
                        "--listen".into(),
                        format!("{host}:{port}"),
                        "--data-dir".into(),
                        path(&format!("kv{i}")),
                        "--block-cache-mib".into(),
                        "128".into(),
                    ]
                    .into_iter()
                    .chain(kv_args.iter().map(|a| a.to_string()))
                    .collect(),
                    port,
                    dir.join(format!("kv{i}.log")),
                )
            })
            .collect();
        let sql = (1..=sql_nodes)
            .map(|i| {
                let port = free_port();
                // SQL node i runs its connections on i fiber threads, so that tests with two
                // SQL nodes cover one thread and several.
                Process::spawn(
                    vec![
                        "server".into(),
                        "--pd".into(),
                        pd_address.clone(),
                        "--port".into(),
                        port.to_string(),
                        "--threads".into(),
                        i.to_string(),
                        "--slow-query-log-file".into(),
                        path(&format!("sql{i}-slow.log")),
                    ],
                    port,
                    dir.join(format!("sql{i}.log")),
                )
            })
            .collect();
        Cluster {
            pd,
            pd_address,
            kv,
            sql,
            dir,
            _temp: temp,
            network,
        }
    }

    pub fn data_dir(&self) -> &Path {
        &self.dir
    }

    /// The index in `kv` of the running node whose peer leads the region holding `key`, as
    /// the placement driver reports it (waits until it knows one).
    pub fn leader_of(&self, key: &[u8]) -> usize {
        let pd = strata_pd_client::PdClient::connect(&self.pd_address)
            .expect("a placement driver client");
        let deadline = Instant::now() + LEADER_TIMEOUT;
        loop {
            let store = pd
                .region_of(key)
                .ok()
                .flatten()
                .and_then(|r| r.leader)
                .map(|l| l.store_id);
            let index = store
                .and_then(|s| pd.store_address(s).ok())
                .and_then(|address| {
                    self.kv.iter().position(|p| {
                        p.child.is_some() && address.ends_with(&format!(":{}", p.port))
                    })
                });
            if let Some(index) = index {
                return index;
            }
            assert!(
                Instant::now() < deadline,
                "no running leader for the region of {key:?} within {LEADER_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn pd_client(&self) -> strata_pd_client::PdClient {
        strata_pd_client::PdClient::connect(&self.pd_address).expect("a placement driver client")
    }

    /// The store id of each KV node, by index in `kv` (waits until every node registered).
    pub fn store_ids(&self) -> Vec<u64> {
        let pd = self.pd_client();
        let deadline = Instant::now() + LEADER_TIMEOUT;
        loop {
            let stores = pd.all_stores().unwrap_or_default();
            let ids: Vec<Option<u64>> = self
                .kv
                .iter()
                .map(|p| {
                    stores
                        .iter()
                        .filter_map(|s| s.store.as_ref())
                        .find(|s| s.address.ends_with(&format!(":{}", p.port)))
                        .map(|s| s.id)
                })
                .collect();
            if ids.iter().all(Option::is_some) {
                return ids.into_iter().flatten().collect();
            }
            assert!(Instant::now() < deadline, "KV nodes did not all register");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Every region the placement driver knows, in key order, with the stores of its peers.
    pub fn region_peers(&self) -> Vec<(u64, Vec<u64>)> {
        let pd = self.pd_client();
        pd.scan_regions(b"", b"", 1024)
            .expect("scan regions")
            .into_iter()
            .filter_map(|entry| entry.region)
            .map(|r| (r.id, r.peers.iter().map(|p| p.store_id).collect()))
            .collect()
    }

    /// Every region the placement driver knows, in key order, with its leader's store (0:
    /// none known).
    pub fn regions(&self) -> Vec<(u64, u64)> {
        let pd = strata_pd_client::PdClient::connect(&self.pd_address)
            .expect("a placement driver client");
        let mut out = Vec::new();
        let mut start = Vec::new();
        loop {
            let page = pd.scan_regions(&start, b"", 256).expect("scan regions");
            let full = page.len() == 256;
            for entry in &page {
                let region = entry.region.as_ref().expect("a region");
                out.push((region.id, entry.leader.as_ref().map_or(0, |l| l.store_id)));
                start = region.end_key.clone();
            }
            if !full || start.is_empty() {
                return out;
            }
        }
    }

    /// The logs of every process, for a failure message.
    pub fn logs(&self) -> String {
        let mut out = String::new();
        for (i, p) in self.pd.iter().enumerate() {
            out += &format!("--- pd{}\n{}", i + 1, p.log());
        }
        for (i, p) in self.kv.iter().enumerate() {
            out += &format!("--- kv{}\n{}", i + 1, p.log());
        }
        for (i, p) in self.sql.iter().enumerate() {
            out += &format!("--- sql{}\n{}", i + 1, p.log());
        }
        out
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let kept = std::env::temp_dir().join(format!(
            "strata-failed-{}-{}",
            std::process::id(),
            self.dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        ));
        let processes = self.pd.iter().chain(&self.kv).chain(&self.sql);
        let copied = std::fs::create_dir_all(&kept).is_ok()
            && processes.into_iter().all(|p| {
                p.log
                    .file_name()
                    .is_some_and(|name| std::fs::copy(&p.log, kept.join(name)).is_ok())
            });
        if copied {
            eprintln!("the cluster's logs are kept in {}", kept.display());
        }
    }
}

/// Asks the placement driver to move every region's leader to the next store holding a peer
/// of it (done at the region's next heartbeat, within a second); returns each region with
/// its leader's store as seen before asking.
pub fn move_every_leader(pd: &strata_pd_client::PdClient) -> Vec<(u64, u64)> {
    let mut seen = Vec::new();
    // While the placement drivers elect a new leader nothing is asked.
    let Ok(entries) = pd.scan_regions(b"", b"", 1024) else {
        return seen;
    };
    for entry in entries {
        let (Some(region), Some(leader)) = (entry.region, entry.leader) else {
            continue;
        };
        seen.push((region.id, leader.store_id));
        let peers: Vec<u64> = region.peers.iter().map(|p| p.store_id).collect();
        let at = peers
            .iter()
            .position(|&s| s == leader.store_id)
            .unwrap_or(0);
        let target = peers[(at + 1) % peers.len()];
        if target != leader.store_id {
            // A region that split meanwhile is asked again next time.
            let _ = pd.transfer_leader(region.id, target);
        }
    }
    seen
}

/// A fault a test injects into a running cluster.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// `kill -9` of KV node `i`.
    KillKv(usize),
    RestartKv(usize),
    /// `kill -9` of the placement driver that leads (restarted by the next `RestartPd`).
    KillPdLeader,
    RestartPd,
    /// `kill -9` of SQL node `i`.
    KillSql(usize),
    RestartSql(usize),
    /// Cuts the KV node that leads the first region off from the other KV nodes (both ways;
    /// the placement drivers and the SQL nodes still reach it), in a cluster from
    /// [`Cluster::start_partitionable`]; the next `Heal` joins it again.
    IsolateLeader,
    Heal,
}

/// A minute of faults for a partitionable cluster of three placement drivers, three KV nodes
/// and two SQL nodes (seconds into the run), one at a time: KV nodes killed with `kill -9` and
/// started again, the leading KV node cut off from the others and joined again, the placement
/// drivers' leader and the second SQL node killed and started again; the last ends at
/// [`FAULTS_END`] s.
pub const FAULTS: [(u64, Fault); 12] = [
    (4, Fault::KillKv(0)),
    (9, Fault::RestartKv(0)),
    (13, Fault::KillPdLeader),
    (17, Fault::RestartPd),
    (20, Fault::KillSql(1)),
    (23, Fault::RestartSql(1)),
    (26, Fault::IsolateLeader),
    (32, Fault::Heal),
    (35, Fault::KillKv(2)),
    (40, Fault::RestartKv(2)),
    (43, Fault::IsolateLeader),
    (49, Fault::Heal),
];
/// When the last fault of [`FAULTS`] ends, in seconds.
pub const FAULTS_END: u64 = 49;

impl Cluster {
    /// The running placement driver that leads (waits until one does).
    pub fn pd_leader(&self, pd: &strata_pd_client::PdClient) -> usize {
        let deadline = Instant::now() + LEADER_TIMEOUT;
        loop {
            if let Ok(members) = pd.members() {
                let index = members.leader_id as usize;
                if index >= 1 && self.pd[index - 1].child.is_some() {
                    return index - 1;
                }
            }
            assert!(Instant::now() < deadline, "no placement driver leads");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Cuts KV node `i` off from the other KV nodes (`cut`), or joins it again.
    fn cut_kv(&self, i: usize, cut: bool) {
        let network = self.network.as_ref().expect("a partitionable cluster");
        let others: Vec<usize> = (0..self.kv.len()).filter(|&j| j != i).collect();
        if cut {
            network.cut(i, &others);
        } else {
            network.heal(i, &others);
        }
    }

    /// Until `started + run`: moves every region's leader each second and injects each fault
    /// of `schedule` when its second comes. Returns how many leader transfers it asked for.
    pub fn inject(&mut self, schedule: &[(u64, Fault)], started: Instant, run: Duration) -> usize {
        let pd = strata_pd_client::PdClient::connect(&self.pd_address).expect("pd client");
        let mut schedule = schedule.iter().peekable();
        let mut killed_pd = None;
        let mut isolated = None;
        let mut transfers = 0;
        while started.elapsed() < run {
            transfers += move_every_leader(&pd).len();
            while let Some((at, fault)) =
                schedule.next_if(|(at, _)| started.elapsed().as_secs() >= *at)
            {
                println!(
                    "{:>5.1} s: {fault:?} (due at {at} s)",
                    started.elapsed().as_secs_f64()
                );
                match *fault {
                    Fault::KillKv(i) => self.kv[i].kill9(),
                    Fault::RestartKv(i) => self.kv[i].start(),
                    Fault::KillPdLeader => {
                        let leader = self.pd_leader(&pd);
                        self.pd[leader].kill9();
                        killed_pd = Some(leader);
                    }
                    Fault::RestartPd => self.pd[killed_pd.take().expect("a killed PD")].start(),
                    Fault::KillSql(i) => self.sql[i].kill9(),
                    Fault::RestartSql(i) => self.sql[i].start(),
                    Fault::IsolateLeader => {
                        let leader = self.leader_of(b"");
                        println!("        KV node {leader} leads: cut off");
                        self.cut_kv(leader, true);
                        isolated = Some(leader);
                    }
                    Fault::Heal => self.cut_kv(isolated.take().expect("an isolated node"), false),
                }
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        transfers
    }
}
