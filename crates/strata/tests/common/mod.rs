//! Shared harness of the end-to-end tests: a real `strata playground` process on a free
//! loopback port with its own data folder, and the real client programs.

#![allow(dead_code)]

pub mod acked;
pub mod cluster;
pub mod netns;
pub mod tpcc;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long a playground may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A playground process; killed when dropped.
pub struct Playground {
    pub child: Child,
    pub port: u16,
    pub data_dir: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

/// How long a change made on one SQL node may take to be seen on another (the schema lease).
const SCHEMA_SYNC_TIMEOUT: Duration = Duration::from_secs(5);

/// Polls `sql` on `port` until its output equals `expected`.
pub fn wait_for(port: u16, sql: &str, expected: &str) {
    let deadline = Instant::now() + SCHEMA_SYNC_TIMEOUT;
    loop {
        let out = mariadb_at(port, None, sql);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() && text == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{sql} on port {port} gave {text:?} / {}, expected {expected:?}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts sysbench on `port` (2 tables of 2000 rows) with `args`, capturing its output.
pub fn spawn_sysbench(port: u16, args: &[&str]) -> Child {
    sysbench_command(port, 2, 2000)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sysbench")
}

/// Waits for a sysbench started by [`spawn_sysbench`], fails on an error, returns its output.
pub fn sysbench_output(child: Child, what: &str) -> String {
    let out = child.wait_with_output().expect("sysbench output");
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && !text.contains("FATAL"),
        "sysbench {what} failed:\n{text}"
    );
    text
}

/// Asserts that both sysbench tables hold `rows` rows, read through each of `ports`.
pub fn assert_sbtest_rows(ports: &[u16], rows: u32) {
    for port in ports {
        assert_eq!(
            sql_at(
                *port,
                Some("sbtest"),
                "SELECT (SELECT COUNT(*) FROM sbtest1), (SELECT COUNT(*) FROM sbtest2)"
            ),
            format!(
                "(SELECT COUNT(*) FROM sbtest1)\t(SELECT COUNT(*) FROM sbtest2)\n{rows}\t{rows}\n"
            )
        );
    }
}

/// The lines a local-cluster playground prints up to its `connect with` line (the table of
/// its roles), read from its `stdout` within 120 s.
pub fn playground_banner(stdout: std::process::ChildStdout) -> Vec<String> {
    let banner = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut lines = Vec::new();
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.unwrap();
            let done = line.starts_with("connect with");
            lines.push(line);
            if done {
                break;
            }
        }
        lines
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    while !banner.is_finished() {
        assert!(Instant::now() < deadline, "no banner from the playground");
        std::thread::sleep(Duration::from_millis(100));
    }
    banner.join().unwrap()
}

/// While alive, a test's panic prints what the processes it started wrote under `dir` (every
/// `*.log` and `*.err` file, recursively, the last 8 KiB of each): a local cluster that did not
/// start, or stopped answering, says why before its temporary folder goes.
pub struct LogsOnPanic(pub PathBuf);

impl Drop for LogsOnPanic {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let mut pending = vec![self.0.clone()];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for path in entries.flatten().map(|e| e.path()) {
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|e| e == "log" || e == "err") {
                    let text = std::fs::read(&path).unwrap_or_default();
                    let tail = &text[text.len().saturating_sub(8192)..];
                    eprintln!(
                        "--- {} ---\n{}",
                        path.display(),
                        String::from_utf8_lossy(tail)
                    );
                }
            }
        }
    }
}

/// Picks a free loopback port below the kernel's ephemeral range, where it takes no source
/// ports for outgoing connections: between the pick and the bind of the process the port is
/// meant for, the many short connections of the other tests cannot take it (a port in that
/// range could be, and the process would fail to start). The ports a few above the one picked
/// (a role's status port, the next role's) stay below the range too.
pub fn free_port() -> u16 {
    use rand::Rng;
    /// Room above a picked port: the largest status-port offset (a SQL node's) and a few roles.
    const ROOM: u16 = 6_200;
    const LOWEST: u16 = 10_000;
    let ephemeral_start = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    let highest = ephemeral_start.saturating_sub(ROOM);
    if highest > LOWEST + 1_000 {
        let mut rng = rand::thread_rng();
        for _ in 0..1_000 {
            let port = rng.gen_range(LOWEST..highest);
            if TcpListener::bind(("127.0.0.1", port)).is_ok() {
                return port;
            }
        }
    }
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether something listens on `address`. A connection to a free port of the ephemeral range
/// (where `free_port` finds ports when none below it is free) can be made with that same port
/// as its own source, and then connects to itself: that one does not count.
pub fn listens(address: SocketAddr) -> bool {
    connect_to_listener(address).is_some()
}

fn connect_to_listener(address: SocketAddr) -> Option<TcpStream> {
    let stream = TcpStream::connect_timeout(&address, Duration::from_millis(200)).ok()?;
    (stream.local_addr().ok() != Some(address)).then_some(stream)
}

/// Whether a MySQL server listens on `address`: it sends its greeting first.
fn greets(address: SocketAddr) -> bool {
    let Some(mut stream) = connect_to_listener(address) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut first = [0u8; 1];
    matches!(std::io::Read::read(&mut stream, &mut first), Ok(1))
}

impl Playground {
    /// Starts a playground on a fresh data folder.
    pub fn start() -> Playground {
        Playground::start_with(&[])
    }

    /// [`Playground::start`] with more command-line arguments.
    pub fn start_with(extra: &[&str]) -> Playground {
        let temp = tempfile::tempdir().expect("temp dir");
        let data_dir = temp.path().to_path_buf();
        let mut p = Playground::start_in_with(&data_dir, free_port(), extra);
        p._temp = Some(temp);
        p
    }

    /// Starts a playground on an existing data folder (a restart).
    pub fn start_in(data_dir: &Path, port: u16) -> Playground {
        Playground::start_in_with(data_dir, port, &[])
    }

    /// [`Playground::start_in`] with more command-line arguments.
    pub fn start_in_with(data_dir: &Path, port: u16, extra: &[&str]) -> Playground {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(data_dir.with_extension("log"))
            .expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(["playground", "--data-dir"])
            .arg(data_dir)
            .args(["--port", &port.to_string(), "--block-cache-mib", "256"])
            .args(extra)
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .spawn()
            .expect("start strata playground");
        let playground = Playground {
            child,
            port,
            data_dir: data_dir.to_path_buf(),
            _temp: None,
        };
        playground.wait_ready();
        playground
    }

    fn wait_ready(&self) {
        let deadline = Instant::now() + START_TIMEOUT;
        let address: SocketAddr = format!("127.0.0.1:{}", self.port).parse().unwrap();
        while Instant::now() < deadline {
            if greets(address) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("playground did not listen on {address} within {START_TIMEOUT:?}");
    }

    /// Kills the process with SIGKILL and waits for it.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn url(&self, db: &str) -> String {
        format!("mysql://root@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs SQL through the real `mariadb` client; returns its output.
    pub fn mariadb(&self, db: Option<&str>, sql: &str) -> Output {
        mariadb_at(self.port, db, sql)
    }

    /// Runs SQL that must succeed; returns its tab-separated output.
    pub fn sql(&self, db: Option<&str>, sql: &str) -> String {
        sql_at(self.port, db, sql)
    }

    /// Waits (a minute at most) until a statement whose text contains `marker` sleeps in
    /// SLEEP(); returns the working memory it holds then (PROCESSLIST's MEM).
    pub fn memory_of_sleeping(&self, marker: &str) -> u64 {
        let sleeping = format!(
            "SELECT MEM FROM information_schema.PROCESSLIST \
             WHERE STATE = 'User sleep' AND INFO LIKE '%{marker}%'"
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            if let Some(mem) = self.sql(None, &sleeping).lines().nth(1) {
                return mem.parse().unwrap();
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the statement never slept"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

/// Runs the `mariadb` client against the server on `port` with `input` as its standard input
/// (for statements longer than a command-line argument may be).
pub fn mariadb_reading(port: u16, args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = Command::new(mariadb_binary())
        .args(["-h", "127.0.0.1", "-P", &port.to_string(), "-u", "root"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// Runs SQL through the real `mariadb` client against the server on `port`.
pub fn mariadb_at(port: u16, db: Option<&str>, sql: &str) -> Output {
    mariadb_on("127.0.0.1", port, db, sql)
}

/// Runs SQL through the real `mariadb` client against the server at `host`:`port`.
pub fn mariadb_on(host: &str, port: u16, db: Option<&str>, sql: &str) -> Output {
    let mut command = Command::new(mariadb_binary());
    command.args([
        "-h",
        host,
        "-P",
        &port.to_string(),
        "-u",
        "root",
        "--batch",
        "-e",
        sql,
    ]);
    if let Some(db) = db {
        command.arg(db);
    }
    command.output().expect("run the mariadb client")
}

/// Runs SQL that must succeed against the server on `port`; returns its tab-separated output.
pub fn sql_at(port: u16, db: Option<&str>, sql: &str) -> String {
    let out = mariadb_at(port, db, sql);
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Inserts rows 1..=`rows` into `table`, a thousand per statement, each row's values made by
/// `values(i)` (the text inside its parentheses).
pub fn insert_rows(port: u16, db: &str, table: &str, rows: u64, values: impl Fn(u64) -> String) {
    for chunk in 0..rows.div_ceil(1000) {
        let batch: Vec<String> = (chunk * 1000 + 1..=(chunk * 1000 + 1000).min(rows))
            .map(|i| format!("({})", values(i)))
            .collect();
        sql_at(
            port,
            Some(db),
            &format!("INSERT INTO {table} VALUES {}", batch.join(",")),
        );
    }
}

impl Drop for Playground {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The real sysbench pointed at the server on `port`, database `sbtest`, as root without a
/// password, with `tables` tables of `table_size` rows; workload arguments follow.
pub fn sysbench_command(port: u16, tables: u32, table_size: u32) -> Command {
    let mut command = Command::new(sysbench_binary());
    command.args([
        "--db-driver=mysql".to_string(),
        "--mysql-host=127.0.0.1".to_string(),
        "--mysql-user=root".to_string(),
        "--mysql-password=".to_string(),
        "--mysql-db=sbtest".to_string(),
        format!("--mysql-port={port}"),
        format!("--tables={tables}"),
        format!("--table-size={table_size}"),
    ]);
    command
}

/// The MySQL command-line client (Debian's `mariadb-client`).
pub fn mariadb_binary() -> &'static str {
    assert!(
        Command::new("mariadb").arg("--version").output().is_ok(),
        "the `mariadb` client is required: run scripts/test.sh, which installs mariadb-client"
    );
    "mariadb"
}

/// Runs a Python `script` with PyMySQL (Debian's `python3-pymysql`, for the system Python) and
/// the server's port as its one argument; returns its output.
pub fn pymysql(port: u16, script: &str) -> Output {
    Command::new(python_with_pymysql())
        .args(["-c", script, &port.to_string()])
        .output()
        .expect("run python3")
}

/// The system Python, which imports Debian's PyMySQL (`python3-pymysql`).
pub fn python_with_pymysql() -> &'static str {
    const PYTHON: &str = "/usr/bin/python3";
    assert!(
        Command::new(PYTHON)
            .args(["-c", "import pymysql"])
            .output()
            .is_ok_and(|o| o.status.success()),
        "PyMySQL is required: run scripts/test.sh, which installs python3-pymysql"
    );
    PYTHON
}

/// Runs sysbench's `oltp_point_select` `commands` (prepare, run for a second, cleanup) as
/// `user` over one table of 200 rows in `sbtest`, with `extra` arguments (`--mysql-ssl=on`)
/// from the folder `dir` (where it looks for a client certificate); fails on an error.
pub fn sysbench_as(
    port: u16,
    (user, password): (&str, &str),
    extra: &[&str],
    dir: Option<&Path>,
    commands: &[&str],
) {
    for command in commands {
        let mut sysbench = Command::new(sysbench_binary());
        if let Some(dir) = dir {
            sysbench.current_dir(dir);
        }
        let out = sysbench
            .args(["--db-driver=mysql", "--mysql-host=127.0.0.1"])
            .arg(format!("--mysql-port={port}"))
            .arg(format!("--mysql-user={user}"))
            .arg(format!("--mysql-password={password}"))
            .args(extra)
            .args(["--mysql-db=sbtest", "--tables=1", "--table-size=200"])
            .args(["--threads=2", "--time=1", "oltp_point_select", command])
            .output()
            .expect("run sysbench");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && !text.contains("FATAL"),
            "sysbench {command} as {user} {extra:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The real sysbench 1.0.20 (Debian's `sysbench`).
pub fn sysbench_binary() -> &'static str {
    let version = Command::new("sysbench").arg("--version").output();
    assert!(
        version.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("1.0")),
        "sysbench 1.0 is required: run scripts/test.sh, which installs the Debian package"
    );
    "sysbench"
}

/// A multi-threaded tokio runtime with `workers` threads and its timers and I/O, for the
/// `mysql_async` clients of a test.
pub fn runtime(workers: usize) -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap()
}

/// How long a `mysql_async` test client waits to connect or for the reply to one statement.
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Returns the seed of a randomized test: `STRATA_TEST_SEED` when set, else a fresh one. Prints
/// it, so that a failure can be replayed.
pub fn test_seed(test: &str) -> u64 {
    let seed = match std::env::var("STRATA_TEST_SEED") {
        Ok(text) => text
            .trim()
            .parse()
            .expect("STRATA_TEST_SEED must be an unsigned integer"),
        Err(_) => rand::random(),
    };
    println!("{test}: seed {seed} (replay with STRATA_TEST_SEED={seed})");
    seed
}

/// How a bounded `mysql_async` call failed.
#[derive(Debug)]
pub enum ClientError {
    /// The server answered with an error packet; the connection is still usable.
    Server { code: u16, message: String },
    /// The connection broke (closed, reset, or a protocol error).
    Connection(String),
    /// No answer within [`CLIENT_TIMEOUT`].
    Timeout,
}

impl ClientError {
    /// Returns the MySQL error code of a server error.
    pub fn server_code(&self) -> Option<u16> {
        match self {
            ClientError::Server { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientError::Server { code, message } => write!(f, "server error {code}: {message}"),
            ClientError::Connection(detail) => write!(f, "connection error: {detail}"),
            ClientError::Timeout => write!(f, "no answer within {CLIENT_TIMEOUT:?}"),
        }
    }
}

/// Awaits one `mysql_async` call for at most [`CLIENT_TIMEOUT`].
pub async fn bounded<T>(
    call: impl std::future::Future<Output = mysql_async::Result<T>>,
) -> Result<T, ClientError> {
    match tokio::time::timeout(CLIENT_TIMEOUT, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(mysql_async::Error::Server(e))) => Err(ClientError::Server {
            code: e.code,
            message: e.message,
        }),
        Ok(Err(e)) => Err(ClientError::Connection(e.to_string())),
        Err(_) => Err(ClientError::Timeout),
    }
}

/// Connects a `mysql_async` client to `url`, waiting at most [`CLIENT_TIMEOUT`].
pub async fn connect(url: &str) -> Result<mysql_async::Conn, ClientError> {
    bounded(mysql_async::Conn::from_url(url)).await
}

/// The script that starts the MariaDB peer (installing MariaDB when missing; it needs root).
pub const MARIADB_PEER: &str = "/work/shared/bench/mariadb-peer.sh";

/// The MariaDB peer on 127.0.0.1:3306 (user sbtest, password `password`), for a test that
/// compares with it. Dropped, it stops the server if this started it; one that was already
/// running is left running.
pub struct MariadbPeer {
    started_here: bool,
}

impl MariadbPeer {
    pub fn start() -> MariadbPeer {
        let peer = |action: &str, timeout: Duration| {
            run_bounded(Command::new("bash").args([MARIADB_PEER, action]), timeout)
        };
        if peer("status", Duration::from_secs(30)).status.success() {
            return MariadbPeer {
                started_here: false,
            };
        }
        // Bounded: the script may install MariaDB with apt-get.
        let out = peer("start", Duration::from_secs(900));
        assert!(
            out.status.success(),
            "{MARIADB_PEER} start failed (it needs root):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        MariadbPeer { started_here: true }
    }
}

impl Drop for MariadbPeer {
    fn drop(&mut self) {
        if self.started_here {
            let _ = run_bounded(
                Command::new("bash").args([MARIADB_PEER, "stop"]),
                Duration::from_secs(60),
            );
        }
    }
}

/// Runs a child process, killing it after `timeout`.
pub fn run_bounded(command: &mut Command, timeout: Duration) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {command:?}: {e}"));
    // Drain the pipes on threads so that a chatty child never blocks on a full pipe.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut text).ok();
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut text).ok();
        text
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{command:?} did not finish within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}
