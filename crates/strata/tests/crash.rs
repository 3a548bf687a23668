//! Durability under `kill -9`. Clients commit small transactions of numbered rows while the
//! playground is killed with SIGKILL at random moments; after each restart on the same data
//! folder and port:
//!
//! - every row whose transaction's COMMIT was acknowledged is there, with its value;
//! - no transaction is half visible: each batch has all of its rows or none, including the
//!   batches that were in flight when the process died;
//! - the server takes new writes (the next round's clients must commit, and a last write after
//!   the final restart must read back).
//!
//! The moments of the kills come from a seeded generator (`STRATA_TEST_SEED` replays one); the
//! interleaving of the clients is up to the scheduler.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use common::{bounded, connect, test_seed, ClientError, Playground};
use mysql_async::prelude::Queryable;
use mysql_async::Conn;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Writing clients in each round.
const CLIENTS: u64 = 8;
/// Kill-and-restart rounds.
const ROUNDS: usize = 4;
/// Rows one transaction inserts.
const ROWS_PER_BATCH: u64 = 3;
/// Shortest load before a kill, in milliseconds.
const LOAD_MS_MIN: u64 = 500;
/// Longest load before a kill, in milliseconds.
const LOAD_MS_MAX: u64 = 2_000;
/// Client `c` numbers its batches and rows from `c * CLIENT_ID_SPAN`.
const CLIENT_ID_SPAN: u64 = 1_000_000;
/// Memtables this small (MiB) are flushed many times a round, so kills also strike while
/// flushes run and while the write-ahead log is a recycled file.
const PLAYGROUND_ARGS: &[&str] = &["--write-buffer-mib", "1"];
/// How long the clients of a round may take to notice the kill and stop.
const CLIENT_STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Lines of the server log printed when the test fails.
const LOG_TAIL_LINES: usize = 40;

const DATABASE: &str = "crash";

/// One transaction of one client: its batch number names its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Batch(u64);

impl Batch {
    fn of(client: u64, sequence: u64) -> Batch {
        assert!(
            (sequence + 1) * ROWS_PER_BATCH <= CLIENT_ID_SPAN,
            "client {client} ran out of ids"
        );
        Batch(client * CLIENT_ID_SPAN + sequence)
    }

    /// Returns the ids of the batch's rows: client `c`'s rows are `c * CLIENT_ID_SPAN + n`.
    fn row_ids(self) -> Vec<u64> {
        let client = self.0 / CLIENT_ID_SPAN;
        let sequence = self.0 % CLIENT_ID_SPAN;
        (0..ROWS_PER_BATCH)
            .map(|row| client * CLIENT_ID_SPAN + sequence * ROWS_PER_BATCH + row)
            .collect()
    }
}

/// The value column of row `id`.
fn row_value(id: u64) -> String {
    format!("value of row {id}")
}

/// What one client did in one round.
struct ClientReport {
    client: u64,
    /// Batches whose COMMIT returned OK, in order.
    acknowledged: Vec<Batch>,
    /// The batch that was being written when the client stopped, if any: it may or may not
    /// have committed.
    in_flight: Option<Batch>,
    /// Sequence number of the client's next batch (the next round goes on from there).
    next_sequence: u64,
    /// Why the client stopped.
    stop: ClientError,
}

/// Everything the clients sent, over all rounds.
#[derive(Default)]
struct Ledger {
    acknowledged: BTreeSet<Batch>,
    /// Batches that were started and never acknowledged, with whether the first restart after
    /// them found them committed (unknown until then). Later restarts must agree.
    in_flight: BTreeMap<Batch, Option<bool>>,
}

impl Ledger {
    fn add(&mut self, report: &ClientReport) {
        self.acknowledged
            .extend(report.acknowledged.iter().copied());
        self.in_flight
            .extend(report.in_flight.map(|batch| (batch, None)));
    }
}

#[test]
fn acknowledged_transactions_survive_kill_9_whole() {
    let seed = test_seed("crash");
    let mut rng = StdRng::seed_from_u64(seed);
    let runtime = common::runtime(2);

    let temp = tempfile::tempdir().unwrap();
    let data_dir = temp.path().join("data");
    std::fs::create_dir(&data_dir).unwrap();
    let _log = LogOnFailure(data_dir.with_extension("log"));
    let port = common::free_port();
    let mut playground = Playground::start_in_with(&data_dir, port, PLAYGROUND_ARGS);
    playground.sql(
        None,
        "CREATE DATABASE crash; USE crash; \
         CREATE TABLE acked (id BIGINT PRIMARY KEY, batch BIGINT NOT NULL, v VARCHAR(64))",
    );

    let mut ledger = Ledger::default();
    let mut next_sequence = vec![0; CLIENTS as usize];
    for round in 0..ROUNDS {
        let load = Duration::from_millis(rng.gen_range(LOAD_MS_MIN..=LOAD_MS_MAX));
        let url = playground.url(DATABASE);
        let clients: Vec<_> = (0..CLIENTS)
            .map(|client| {
                let url = url.clone();
                let first = next_sequence[client as usize];
                runtime.spawn(async move { write_until_error(&url, client, first).await })
            })
            .collect();
        std::thread::sleep(load);
        playground.kill9();

        let reports = runtime.block_on(async {
            let mut reports = Vec::new();
            for client in clients {
                let report = tokio::time::timeout(CLIENT_STOP_TIMEOUT, client)
                    .await
                    .unwrap_or_else(|_| {
                        panic!("round {round}: a client did not stop after the kill (seed {seed})")
                    })
                    .expect("client task");
                reports.push(report);
            }
            reports
        });
        let mut acknowledged_in_round = 0;
        for report in &reports {
            // A killed server closes its sockets without a word: anything else is a failure.
            assert!(
                matches!(report.stop, ClientError::Connection(_)),
                "round {round}: client {} stopped with {} (seed {seed})",
                report.client,
                report.stop
            );
            ledger.add(report);
            next_sequence[report.client as usize] = report.next_sequence;
            acknowledged_in_round += report.acknowledged.len();
        }
        assert!(
            acknowledged_in_round > 0,
            "round {round}: no transaction committed in {load:?} (seed {seed})"
        );

        playground = Playground::start_in_with(&data_dir, port, PLAYGROUND_ARGS);
        let verified = runtime.block_on(verify(&playground, &mut ledger));
        println!(
            "round {round}: killed after {load:?}; {acknowledged_in_round} transactions acknowledged; \
             so far {} acknowledged and {} in flight ({} of them committed); {} rows after the restart",
            ledger.acknowledged.len(),
            ledger.in_flight.len(),
            verified.in_flight_committed,
            verified.rows
        );
    }

    // The restarted server takes a new transaction and an update of an old row.
    let old = ledger
        .acknowledged
        .first()
        .copied()
        .expect("some batch was acknowledged");
    let old_id = old.row_ids()[0];
    let new_id = CLIENTS * CLIENT_ID_SPAN;
    let out = playground.sql(
        Some(DATABASE),
        &format!(
            "BEGIN; INSERT INTO acked VALUES ({new_id}, {new_id}, 'after the crashes'); \
             UPDATE acked SET v = 'updated' WHERE id = {old_id}; COMMIT; \
             SELECT v FROM acked WHERE id IN ({new_id}, {old_id}) ORDER BY id"
        ),
    );
    assert_eq!(out, "v\nupdated\nafter the crashes\n", "seed {seed}");
    let tables = std::fs::read_dir(data_dir.join("kv"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "sst"))
        })
        .count();
    assert!(
        tables > 0,
        "no memtable was flushed: the kills never met flushed data (seed {seed})"
    );
}

/// Prints the end of the server log when the test fails, before the temporary folder goes.
struct LogOnFailure(PathBuf);

impl Drop for LogOnFailure {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.0).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let tail = &lines[lines.len().saturating_sub(LOG_TAIL_LINES)..];
            eprintln!(
                "end of the server log {}:\n{}",
                self.0.display(),
                tail.join("\n")
            );
        }
    }
}

/// Commits batches until the first error; returns what was acknowledged and why it stopped.
async fn write_until_error(url: &str, client: u64, first_sequence: u64) -> ClientReport {
    let mut report = ClientReport {
        client,
        acknowledged: Vec::new(),
        in_flight: None,
        next_sequence: first_sequence,
        stop: ClientError::Timeout,
    };
    let mut conn = match connect(url).await {
        Ok(conn) => conn,
        Err(e) => {
            report.stop = e;
            return report;
        }
    };
    loop {
        let batch = Batch::of(client, report.next_sequence);
        report.next_sequence += 1;
        report.in_flight = Some(batch);
        if let Err(e) = insert_batch(&mut conn, client, batch).await {
            report.stop = e;
            return report;
        }
        report.in_flight = None;
        report.acknowledged.push(batch);
    }
}

/// Inserts one batch in one transaction: even clients with one prepared INSERT per row, odd
/// clients with one multi-row INSERT in the text protocol.
async fn insert_batch(conn: &mut Conn, client: u64, batch: Batch) -> Result<(), ClientError> {
    bounded(conn.query_drop("BEGIN")).await?;
    if client.is_multiple_of(2) {
        for id in batch.row_ids() {
            bounded(conn.exec_drop(
                "INSERT INTO acked (id, batch, v) VALUES (?, ?, ?)",
                (id, batch.0, row_value(id)),
            ))
            .await?;
        }
    } else {
        let rows: Vec<String> = batch
            .row_ids()
            .into_iter()
            .map(|id| format!("({id}, {}, '{}')", batch.0, row_value(id)))
            .collect();
        bounded(conn.query_drop(format!(
            "INSERT INTO acked (id, batch, v) VALUES {}",
            rows.join(", ")
        )))
        .await?;
    }
    bounded(conn.query_drop("COMMIT")).await
}

/// What a restarted server holds.
struct Verified {
    rows: usize,
    /// Batches in flight at a kill that turned out committed.
    in_flight_committed: usize,
}

/// Reads every row of `acked` and checks it against the ledger.
async fn verify(playground: &Playground, ledger: &mut Ledger) -> Verified {
    let mut conn = connect(&playground.url(DATABASE))
        .await
        .unwrap_or_else(|e| panic!("connect after the restart: {e}"));
    let rows: Vec<(u64, u64, String)> = bounded(conn.query("SELECT id, batch, v FROM acked"))
        .await
        .unwrap_or_else(|e| panic!("read after the restart: {e}"));
    bounded(conn.disconnect()).await.unwrap();

    let mut batches: BTreeMap<Batch, BTreeSet<u64>> = BTreeMap::new();
    for (id, batch, value) in &rows {
        let batch = Batch(*batch);
        assert!(
            ledger.acknowledged.contains(&batch) || ledger.in_flight.contains_key(&batch),
            "row {id} belongs to batch {batch:?}, which no client wrote"
        );
        assert!(
            batch.row_ids().contains(id),
            "row {id} is not one of batch {batch:?}'s rows"
        );
        assert_eq!(value, &row_value(*id), "row {id} has a wrong value");
        assert!(
            batches.entry(batch).or_default().insert(*id),
            "row {id} is there twice"
        );
    }
    for (batch, ids) in &batches {
        let expected: BTreeSet<u64> = batch.row_ids().into_iter().collect();
        assert_eq!(ids, &expected, "batch {batch:?} is half visible");
    }
    let lost: Vec<&Batch> = ledger
        .acknowledged
        .iter()
        .filter(|b| !batches.contains_key(b))
        .collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged batches are lost, e.g. {:?}",
        lost.len(),
        &lost[..lost.len().min(10)]
    );

    // The real `mariadb` client agrees on the row count.
    let count = playground.sql(Some(DATABASE), "SELECT COUNT(*) FROM acked");
    assert_eq!(count, format!("COUNT(*)\n{}\n", rows.len()));
    // A transaction in flight at a kill is decided by the first restart, for good.
    for (batch, fate) in ledger.in_flight.iter_mut() {
        let committed = batches.contains_key(batch);
        assert_eq!(
            *fate.get_or_insert(committed),
            committed,
            "batch {batch:?} changed its fate after a later restart"
        );
    }
    Verified {
        rows: rows.len(),
        in_flight_committed: ledger
            .in_flight
            .values()
            .filter(|fate| **fate == Some(true))
            .count(),
    }
}
