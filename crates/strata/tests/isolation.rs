//! Isolation checked by a history checker. Clients on two SQL nodes run short transactions of
//! reads and appends to lists (Elle's list-append model: `SELECT v FROM … WHERE k = …` and
//! `INSERT … ON DUPLICATE KEY UPDATE v = CONCAT(v, …)`) for a minute while the cluster fails
//! around them: every region's leader is moved each second, and KV nodes, the placement
//! drivers' leader and a SQL node are killed with `kill -9` and started again. Every
//! transaction is recorded when it is invoked and when it completes (committed, failed, or of
//! unknown outcome), and the `adya` crate, an implementation of Elle's checker, searches the
//! history for the dependency cycles and anomalies each isolation level forbids:
//! - optimistic transactions must be snapshot isolated (no G0, G1, G-single, lost update);
//! - pessimistic transactions that read with `FOR UPDATE` must be serializable, which their
//!   locks give them (and so have no lost update);
//! - pessimistic transactions with plain reads must be read committed: their reads see the
//!   snapshot of their first statement, their writes the newest data (MySQL's and TiDB's
//!   repeatable read, which lets a write rest on a stale read).
//!
//! A transaction answered with an error, except 1180 ("the outcome of the commit is
//! undetermined") and a connection lost at COMMIT, counts as failed: a reader that sees one of
//! its appends is an aborted read (G1a). Each run's seed is printed and `STRATA_TEST_SEED`
//! replays the transactions it generates (not the interleaving).

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use adya::{check, History, Opts, Report, Valid, Workload};
use common::cluster::{Cluster, FAULTS, FAULTS_END};
use common::{bounded, connect, ClientError};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

/// How long the clients run while the cluster fails.
const RUN: Duration = Duration::from_secs(60);
/// After the last restart, each mode must commit within this long.
const RECOVERY: Duration = Duration::from_secs(8);
/// Clients of each mode on each SQL node.
const CLIENTS_PER_NODE: u64 = 2;
/// Keys written at a time: few, so that transactions meet.
const ACTIVE_KEYS: u64 = 5;
/// Appends after which the active keys are replaced by new ones, so that lists stay short.
const APPENDS_PER_KEY: u64 = 30;
/// Most micro-operations (reads and appends) in one transaction.
const MOPS_MAX: usize = 4;
/// A client's process number grows by this much each time one of its transactions ends
/// with an unknown outcome (that transaction may still be in flight, as Elle assumes).
const PROCESS_STRIDE: u64 = 100;
/// How long the clients may take to finish their transactions after [`RUN`].
const STOP_TIMEOUT: Duration = Duration::from_secs(90);
/// The commit error whose transaction may or may not have been applied.
const UNDETERMINED: u16 = 1180;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Optimistic,
    /// Pessimistic, reading with `FOR UPDATE`.
    Pessimistic,
    /// Pessimistic, reading without locks.
    PessimisticPlainReads,
}

const MODES: [Mode; 3] = [
    Mode::Optimistic,
    Mode::Pessimistic,
    Mode::PessimisticPlainReads,
];

impl Mode {
    fn table(self) -> &'static str {
        match self {
            Mode::Optimistic => "lists_optimistic",
            Mode::Pessimistic => "lists_pessimistic",
            Mode::PessimisticPlainReads => "lists_plain",
        }
    }

    fn read(self, key: u64) -> String {
        let lock = match self {
            Mode::Pessimistic => " FOR UPDATE",
            Mode::Optimistic | Mode::PessimisticPlainReads => "",
        };
        format!("SELECT v FROM {} WHERE k = {key}{lock}", self.table())
    }

    fn append(self, key: u64, value: u64) -> String {
        format!(
            "INSERT INTO {} (k, v) VALUES ({key}, '{value}') \
             ON DUPLICATE KEY UPDATE v = CONCAT(v, ',{value}')",
            self.table()
        )
    }

    fn session(self) -> &'static str {
        match self {
            Mode::Optimistic => "SET SESSION tidb_txn_mode = 'optimistic'",
            Mode::Pessimistic | Mode::PessimisticPlainReads => {
                "SET SESSION tidb_txn_mode = 'pessimistic', innodb_lock_wait_timeout = 2"
            }
        }
    }
}

/// One micro-operation of a transaction: a read of a key's list (what it returned, once
/// known) or an append of a value to it.
#[derive(Clone, Debug)]
enum Mop {
    Read(u64, Option<Vec<u64>>),
    Append(u64, u64),
}

impl Mop {
    fn to_json(&self) -> Value {
        match self {
            Mop::Read(key, list) => json!(["r", key, list]),
            Mop::Append(key, value) => json!(["append", key, value]),
        }
    }
}

/// The keys and values of one mode's transactions. Every append writes a value never written
/// before; the active keys move on every `ACTIVE_KEYS × APPENDS_PER_KEY` appends.
#[derive(Default)]
struct Keys {
    appends: AtomicU64,
}

impl Keys {
    fn key(&self, rng: &mut StdRng) -> u64 {
        let epoch = self.appends.load(Ordering::Relaxed) / (ACTIVE_KEYS * APPENDS_PER_KEY);
        epoch * ACTIVE_KEYS + rng.gen_range(0..ACTIVE_KEYS)
    }

    fn value(&self) -> u64 {
        self.appends.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Every key any transaction may have used.
    fn used(&self) -> std::ops::Range<u64> {
        let epochs = self.appends.load(Ordering::Relaxed) / (ACTIVE_KEYS * APPENDS_PER_KEY) + 1;
        0..epochs * ACTIVE_KEYS
    }
}

/// One mode's history, in the order its events happened: an invocation is recorded before the
/// transaction's first statement is sent, a completion after its last answer arrived.
struct Recorder {
    events: Mutex<Vec<Value>>,
    started: Instant,
}

impl Recorder {
    fn new(started: Instant) -> Recorder {
        Recorder {
            events: Mutex::new(Vec::new()),
            started,
        }
    }

    fn record(&self, kind: &str, process: u64, mops: &[Mop]) {
        let value: Vec<Value> = mops.iter().map(Mop::to_json).collect();
        let mut events = self.events.lock().unwrap();
        events.push(json!({
            "type": kind,
            "process": process,
            "time": self.started.elapsed().as_nanos() as u64,
            "value": value,
        }));
    }

    /// Transactions committed in each second of the run.
    fn commits_by_second(&self) -> Vec<u64> {
        let mut seconds = vec![0u64; RUN.as_secs() as usize + 1];
        for event in self.events.lock().unwrap().iter() {
            if event["type"] == "ok" {
                let second = event["time"].as_u64().unwrap_or(0) / 1_000_000_000;
                if let Some(count) = seconds.get_mut(second as usize) {
                    *count += 1;
                }
            }
        }
        seconds
    }

    fn text(&self) -> String {
        let events = self.events.lock().unwrap();
        let lines: Vec<String> = events.iter().map(Value::to_string).collect();
        lines.join("\n")
    }
}

/// How one client's transactions ended.
#[derive(Default, Debug)]
struct Tally {
    committed: u64,
    failed: u64,
    unknown: u64,
    /// Errors by MySQL code, or "connection" / "timeout".
    errors: BTreeMap<String, u64>,
    /// The first message of each server error code.
    messages: BTreeMap<u16, String>,
    /// When the client's last transaction committed, from the start of the run.
    last_commit: Option<Duration>,
}

impl Tally {
    fn count(&mut self, error: &ClientError) {
        let name = match error {
            ClientError::Server { code, message } => {
                self.messages
                    .entry(*code)
                    .or_insert_with(|| message.clone());
                code.to_string()
            }
            ClientError::Connection(_) => "connection".into(),
            ClientError::Timeout => "timeout".into(),
        };
        *self.errors.entry(name).or_default() += 1;
    }

    fn add(&mut self, other: Tally) {
        self.committed += other.committed;
        self.failed += other.failed;
        self.unknown += other.unknown;
        for (name, n) in other.errors {
            *self.errors.entry(name).or_default() += n;
        }
        for (code, message) in other.messages {
            self.messages.entry(code).or_insert(message);
        }
        self.last_commit = self.last_commit.max(other.last_commit);
    }
}

/// Where a transaction's error came: before COMMIT (nothing can have been applied), or at it.
#[derive(PartialEq)]
enum Stage {
    Body,
    Commit,
}

async fn open(mode: Mode, url: &str) -> Result<Conn, ClientError> {
    let mut conn = connect(url).await?;
    bounded(conn.query_drop(mode.session())).await?;
    Ok(conn)
}

/// A transaction of one to [`MOPS_MAX`] reads and appends.
fn generate(rng: &mut StdRng, keys: &Keys) -> Vec<Mop> {
    (0..rng.gen_range(1..=MOPS_MAX))
        .map(|_| {
            let key = keys.key(rng);
            if rng.gen_bool(0.5) {
                Mop::Read(key, None)
            } else {
                Mop::Append(key, keys.value())
            }
        })
        .collect()
}

/// Reads a stored list: values separated by commas; no row is the empty list.
fn list(stored: Option<String>) -> Vec<u64> {
    stored
        .map(|text| {
            text.split(',')
                .map(|v| v.parse().expect("a stored list holds numbers"))
                .collect()
        })
        .unwrap_or_default()
}

/// Runs `mops` in one transaction, filling in what the reads return.
async fn attempt(
    mode: Mode,
    conn: &mut Conn,
    mops: &mut [Mop],
) -> Result<(), (Stage, ClientError)> {
    let body = |e| (Stage::Body, e);
    bounded(conn.query_drop("BEGIN")).await.map_err(body)?;
    for mop in mops.iter_mut() {
        match mop {
            Mop::Read(key, result) => {
                let stored: Option<String> = bounded(conn.query_first(mode.read(*key)))
                    .await
                    .map_err(body)?;
                *result = Some(list(stored));
            }
            Mop::Append(key, value) => {
                bounded(conn.query_drop(mode.append(*key, *value)))
                    .await
                    .map_err(body)?;
            }
        }
    }
    bounded(conn.query_drop("COMMIT"))
        .await
        .map_err(|e| (Stage::Commit, e))
}

/// One client: transactions against one SQL node until `stop`, reconnecting when the node
/// goes away.
async fn client(
    mode: Mode,
    url: String,
    process: u64,
    seed: u64,
    keys: Arc<Keys>,
    recorder: Arc<Recorder>,
    stop: Arc<AtomicBool>,
) -> Tally {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut process = process;
    let mut tally = Tally::default();
    let mut connection: Option<Conn> = None;
    while !stop.load(Ordering::SeqCst) {
        let mut conn = match connection.take() {
            Some(conn) => conn,
            None => match open(mode, &url).await {
                Ok(conn) => conn,
                Err(e) => {
                    tally.count(&e);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            },
        };
        let mut mops = generate(&mut rng, &keys);
        recorder.record("invoke", process, &mops);
        match attempt(mode, &mut conn, &mut mops).await {
            Ok(()) => {
                recorder.record("ok", process, &mops);
                tally.committed += 1;
                tally.last_commit = Some(recorder.started.elapsed());
                connection = Some(conn);
            }
            Err((stage, error)) => {
                tally.count(&error);
                for mop in &mut mops {
                    if let Mop::Read(_, result) = mop {
                        *result = None;
                    }
                }
                let unknown = stage == Stage::Commit
                    && !matches!(error, ClientError::Server { code, .. } if code != UNDETERMINED);
                if unknown {
                    recorder.record("info", process, &mops);
                    tally.unknown += 1;
                    process += PROCESS_STRIDE;
                } else {
                    recorder.record("fail", process, &mops);
                    tally.failed += 1;
                }
                if let ClientError::Server { .. } = error {
                    if bounded(conn.query_drop("ROLLBACK")).await.is_ok() {
                        connection = Some(conn);
                    }
                }
            }
        }
    }
    tally
}

/// Reads every key used, in one transaction, once the run is over: the lists' final order.
async fn final_reads(mode: Mode, url: &str, keys: &Keys, recorder: &Recorder) {
    let process = 10 * PROCESS_STRIDE * PROCESS_STRIDE;
    let mut mops: Vec<Mop> = keys.used().map(|key| Mop::Read(key, None)).collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let result = match open(mode, url).await {
            Ok(mut conn) => attempt(mode, &mut conn, &mut mops).await,
            Err(e) => Err((Stage::Body, e)),
        };
        match result {
            Ok(()) => break,
            Err((_, e)) => assert!(
                Instant::now() < deadline,
                "{mode:?}: the final reads kept failing: {e}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    recorder.record("invoke", process, &mops);
    recorder.record("ok", process, &mops);
}

/// Checks one mode's history for the anomalies `models` forbid (plus `anomalies`); on failure
/// keeps the history in a file and says what was found.
fn verdict(mode: Mode, recorder: &Recorder, models: &[&str], anomalies: &[&str]) -> Report {
    let text = recorder.text();
    let history = History::from_json(&text).expect("the recorded history parses");
    let opts = Opts {
        models: models.iter().map(|m| m.to_string()).collect(),
        anomalies: anomalies.iter().map(|a| a.to_string()).collect(),
        timeout: Duration::from_secs(60),
        ..Opts::default()
    };
    let report = check(&history, Workload::ListAppend, &opts);
    if report.valid != Valid::True {
        let path = std::env::temp_dir().join(format!(
            "strata-isolation-{}-{:?}.jsonl",
            std::process::id(),
            mode
        ));
        std::fs::write(&path, &text).expect("keep the history");
        for (kind, found) in &report.anomalies {
            for anomaly in found.iter().take(3) {
                println!("{mode:?} {kind}: {}", anomaly.explanation);
            }
        }
        println!(
            "{mode:?}: history kept in {} (check it with `adya check`)",
            path.display()
        );
    }
    report
}

#[test]
fn list_append_histories_under_faults_have_no_anomaly_their_isolation_forbids() {
    let seed = common::test_seed("isolation");
    let mut cluster = Cluster::start_partitionable(3, 3, 2);
    let ports = [cluster.sql[0].port, cluster.sql[1].port];
    let create: Vec<String> = MODES
        .iter()
        .map(|m| format!("CREATE TABLE la.{} (k INT PRIMARY KEY, v TEXT)", m.table()))
        .collect();
    common::sql_at(
        ports[0],
        None,
        &format!("CREATE DATABASE la; {}", create.join("; ")),
    );
    for mode in MODES {
        common::wait_for(
            ports[1],
            &format!("SELECT COUNT(*) FROM la.{}", mode.table()),
            "COUNT(*)\n0\n",
        );
    }

    let runtime = common::runtime(2);
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let mut modes = Vec::new();
    for (m, mode) in MODES.into_iter().enumerate() {
        let keys = Arc::new(Keys::default());
        let recorder = Arc::new(Recorder::new(started));
        let mut clients = Vec::new();
        for (n, port) in ports.iter().enumerate() {
            for c in 0..CLIENTS_PER_NODE {
                let process = n as u64 * CLIENTS_PER_NODE + c;
                clients.push(runtime.spawn(client(
                    mode,
                    format!("mysql://root@127.0.0.1:{port}/la"),
                    process,
                    seed.wrapping_add((m as u64) << 32 | process),
                    keys.clone(),
                    recorder.clone(),
                    stop.clone(),
                )));
            }
        }
        modes.push((mode, keys, recorder, clients));
    }

    // Leaders move every second; KV nodes, the placement drivers' leader and a SQL node are
    // killed and restarted in between.
    let transfers = cluster.inject(&FAULTS, started, RUN);
    stop.store(true, Ordering::SeqCst);
    let last_fault = Duration::from_secs(FAULTS_END);
    println!("{transfers} leader transfers asked for");

    let mut failures = Vec::new();
    for (mode, keys, recorder, clients) in modes {
        let mut tally = Tally::default();
        for handle in clients {
            let finished =
                runtime.block_on(async { tokio::time::timeout(STOP_TIMEOUT, handle).await });
            tally.add(
                finished
                    .unwrap_or_else(|_| panic!("{mode:?}: a client did not stop"))
                    .expect("a client task"),
            );
        }
        runtime.block_on(final_reads(
            mode,
            &format!("mysql://root@127.0.0.1:{}/la", ports[0]),
            &keys,
            &recorder,
        ));
        println!(
            "{mode:?}: {} committed, {} failed, {} unknown; errors {:?}; last commit at {:?}; \
             commits by second {:?}",
            tally.committed,
            tally.failed,
            tally.unknown,
            tally.errors,
            tally.last_commit,
            recorder.commits_by_second()
        );
        for (code, message) in &tally.messages {
            println!("{mode:?}: {code}: {message}");
        }
        assert!(
            tally.committed >= 100,
            "{mode:?}: only {} transactions committed",
            tally.committed
        );
        assert!(
            tally.last_commit > Some(last_fault + RECOVERY),
            "{mode:?}: nothing committed from {:?} after the last restart",
            RECOVERY
        );

        let (required, extra): (&[&str], &[&str]) = match mode {
            Mode::Optimistic => (&["snapshot-isolation"], &[]),
            Mode::Pessimistic => (&["serializable"], &["lost-update"]),
            Mode::PessimisticPlainReads => (&["read-committed"], &[]),
        };
        let report = verdict(mode, &recorder, required, extra);
        println!(
            "{mode:?}: {:?} against {required:?}, anomalies {:?}",
            report.valid, report.anomaly_types
        );
        if report.valid != Valid::True {
            failures.push(format!("{mode:?}: {:?}", report.anomaly_types));
        }
    }
    assert!(failures.is_empty(), "isolation anomalies: {failures:?}");
}
