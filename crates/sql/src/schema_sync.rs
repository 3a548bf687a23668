//! Schema versions across the SQL nodes of a cluster.
//!
//! Every SQL node of a cluster keeps the catalog in memory and checks every
//! [`SCHEMA_SYNC_INTERVAL`] whether another node changed it. So that a DDL statement returns
//! only once the whole cluster uses its result (as TiDB's DDL owner waits for every TiDB's
//! schema version), each node also reports, under its own catalog key, which version it has
//! loaded and the oldest version a write still running on it was planned with:
//!
//! ```text
//!   m/sql_node/{member id}    -> loaded version, oldest writer's version, report timestamp
//! ```
//!
//! A DDL statement commits its change, then waits until every node that reported within
//! [`SCHEMA_LEASE`] has loaded the new version; online index creation also waits until no node
//! runs a write planned under an older one. A node that has not reported for a lease (killed,
//! or cut off) is not waited for; one that stops cleanly withdraws its report. The report's
//! timestamp comes from the timestamp oracle, so the nodes' clocks need not agree.
//!
//! So a node that is not waited for must not write: a node starts a commit only while its last
//! report began less than [`COMMIT_LEASE`] (half the lease) ago by its own clock, and refuses
//! with 8027 otherwise (TiDB's schema validator). Other nodes count the lease from the
//! report's timestamp, taken after that moment; a DDL statement that stops waiting for this
//! node does so at a timestamp more than a lease after the report's, and takes its next steps
//! later still. So the commit must also take a timestamp within the lease of that report
//! ([`Transaction::set_max_commit_ts`]): a commit slowed past it (a KV node failing over under
//! it) writes nothing and fails with 8027, as TiDB checks its commit_ts against the lease.
//! While it reports, a change of schema cannot slip under its writes: DDL waits for its writes
//! planned under an older version (its report names the oldest) before it goes on.
//!
//! [`Transaction::set_max_commit_ts`]: strata_txn::Transaction::set_max_commit_ts

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use strata_txn::{TxnClient, TxnMode};
use strata_types::Timestamp;

use crate::catalog::scan_all;
use crate::ddl::Catalog;
use crate::error::{self, Result};

/// How often a SQL node of a cluster checks whether another node changed the schema.
pub const SCHEMA_SYNC_INTERVAL: Duration = Duration::from_millis(100);
/// A node that reported nothing for this long is not waited for. Longer than a region's
/// failover (a report waits for the region of the catalog keys to have a leader again) plus
/// [`REPORT_INTERVAL`]; a node that stops cleanly withdraws its report at once.
pub const SCHEMA_LEASE: Duration = Duration::from_secs(10);
/// A node commits only while its last report began less than this long ago.
pub const COMMIT_LEASE: Duration = Duration::from_millis(SCHEMA_LEASE.as_millis() as u64 / 2);
/// How often a node reports when its versions did not change.
const REPORT_INTERVAL: Duration = Duration::from_secs(1);
/// Reports older than this are deleted by the next DDL that reads them.
const REPORT_FORGOTTEN_AFTER: Duration = Duration::from_secs(600);
const MEMBER_PREFIX: &[u8] = b"m/sql_node/";

fn member_key(id: u64) -> Vec<u8> {
    [MEMBER_PREFIX, &id.to_be_bytes()[..]].concat()
}

/// What one SQL node last said of its schema.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Report {
    loaded: u64,
    /// The oldest version a running write was planned with (`loaded` when none runs).
    oldest_writer: u64,
    at: Timestamp,
}

impl Report {
    fn encode(&self) -> Vec<u8> {
        [self.loaded, self.oldest_writer, self.at.0]
            .iter()
            .flat_map(|n| n.to_be_bytes())
            .collect()
    }

    fn decode(bytes: &[u8]) -> Option<Report> {
        let word = |i: usize| {
            let part = bytes.get(i * 8..i * 8 + 8)?;
            Some(u64::from_be_bytes(part.try_into().ok()?))
        };
        (bytes.len() == 24).then_some(())?;
        Some(Report {
            loaded: word(0)?,
            oldest_writer: word(1)?,
            at: Timestamp(word(2)?),
        })
    }

    fn age_ms(&self, now: Timestamp) -> u64 {
        now.physical_ms().saturating_sub(self.at.physical_ms())
    }
}

/// When this node's last report that succeeded began, and the timestamp it carried.
#[derive(Debug)]
pub(crate) struct Lease {
    epoch: Instant,
    /// Milliseconds from `epoch`.
    reported_ms: AtomicU64,
    /// The report's timestamp (0 before the first).
    reported_at: AtomicU64,
}

impl Default for Lease {
    fn default() -> Lease {
        Lease {
            epoch: Instant::now(),
            reported_ms: AtomicU64::new(0),
            reported_at: AtomicU64::new(0),
        }
    }
}

impl Lease {
    /// Notes a report that began at `began`, carried the timestamp `at` and succeeded.
    fn reported(&self, began: Instant, at: Timestamp) {
        let ms = began.saturating_duration_since(self.epoch).as_millis() as u64;
        self.reported_ms.fetch_max(ms, Ordering::Relaxed);
        self.reported_at.fetch_max(at.0, Ordering::Relaxed);
    }

    /// The latest commit timestamp other nodes still wait for: a lease after the last
    /// report's timestamp (the smallest timestamp when there was none, so nothing commits).
    fn commit_ts_limit(&self) -> Timestamp {
        match self.reported_at.load(Ordering::Relaxed) {
            0 => Timestamp(1),
            at => Timestamp::compose(
                Timestamp(at).physical_ms() + SCHEMA_LEASE.as_millis() as u64,
                0,
            ),
        }
    }

    /// How long ago the last report that succeeded began.
    fn since_report(&self) -> Duration {
        let reported = Duration::from_millis(self.reported_ms.load(Ordering::Relaxed));
        self.epoch.elapsed().saturating_sub(reported)
    }
}

impl Catalog {
    /// Refuses a commit (8027) on a node of a cluster whose last schema report began
    /// [`COMMIT_LEASE`] ago or more, or returns the latest timestamp it may commit at
    /// (ZERO for a node alone, which makes no reports and commits whenever).
    // Hot path: every commit that writes; three atomic loads and a clock read.
    pub(crate) fn check_schema_lease(&self) -> Result<Timestamp> {
        if self.member.get().is_none() {
            return Ok(Timestamp::ZERO);
        }
        if self.lease.since_report() < COMMIT_LEASE {
            return Ok(self.lease.commit_ts_limit());
        }
        tracing::warn!(
            since_report_ms = self.lease.since_report().as_millis() as u64,
            "commit refused: this SQL node has not reported its schema version for half a lease"
        );
        Err(error::schema_out_of_date())
    }

    /// Joins the cluster's schema reports and starts the thread that picks up other nodes'
    /// changes and reports this node's versions; it ends when the catalog is dropped. The
    /// first report is made before this returns, so a node reports before it serves (a failed
    /// report is tried again on the next check).
    pub fn start_sync(self: &Arc<Self>) -> Result<std::thread::JoinHandle<()>> {
        let id = self.client().current_ts()?.0;
        let _ = self.member.set(id);
        let mut reporter = Reporter { id, last: None };
        reporter.tick(self);
        let catalog: Weak<Catalog> = Arc::downgrade(self);
        Ok(std::thread::Builder::new()
            .name("schema-sync".into())
            .spawn(move || loop {
                std::thread::sleep(SCHEMA_SYNC_INTERVAL);
                let Some(catalog) = catalog.upgrade() else {
                    return;
                };
                reporter.tick(&catalog);
            })
            .expect("spawn the schema sync thread"))
    }

    /// Withdraws this node's report, so that DDL statements stop waiting for it; for a node
    /// that stops serving.
    pub fn leave_sync(&self) {
        let Some(id) = self.member.get() else {
            return;
        };
        if let Err(error) = self
            .client()
            .begin(TxnMode::Optimistic)
            .and_then(|mut txn| {
                txn.delete(member_key(*id));
                txn.commit().map(|_| ())
            })
        {
            tracing::warn!(%error, "withdrawing the schema report failed");
        }
    }

    /// Whether every other SQL node that reported within the lease has loaded `version` and,
    /// with `writers`, runs no write planned under an older one.
    pub(crate) fn others_reached(&self, version: u64, writers: bool) -> Result<bool> {
        let mut txn = self.client().begin(TxnMode::Optimistic)?;
        let now = txn.start_ts();
        let own = self.member.get().map(|id| member_key(*id));
        let mut forgotten = Vec::new();
        let mut reached = true;
        for (key, value) in scan_all(&mut txn, MEMBER_PREFIX)? {
            if Some(&key) == own.as_ref() {
                continue;
            }
            let Some(report) = Report::decode(&value) else {
                continue;
            };
            let age = report.age_ms(now);
            if age > REPORT_FORGOTTEN_AFTER.as_millis() as u64 {
                forgotten.push(key);
            } else if age <= SCHEMA_LEASE.as_millis() as u64 {
                let seen = if writers {
                    report.oldest_writer.min(report.loaded)
                } else {
                    report.loaded
                };
                reached &= seen >= version;
            }
        }
        txn.rollback();
        if !forgotten.is_empty() {
            forget(self.client(), forgotten);
        }
        Ok(reached)
    }
}

/// The member ids of the nodes whose reports are still remembered (not older than
/// [`REPORT_FORGOTTEN_AFTER`]), as of `txn`'s snapshot.
pub(crate) fn remembered_members(
    txn: &mut strata_txn::Transaction,
) -> Result<std::collections::HashSet<u64>> {
    let now = txn.start_ts();
    let mut members = std::collections::HashSet::new();
    for (key, value) in scan_all(txn, MEMBER_PREFIX)? {
        let Some(report) = Report::decode(&value) else {
            continue;
        };
        let id = key
            .get(MEMBER_PREFIX.len()..)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(u64::from_be_bytes);
        if let Some(id) =
            id.filter(|_| report.age_ms(now) <= REPORT_FORGOTTEN_AFTER.as_millis() as u64)
        {
            members.insert(id);
        }
    }
    Ok(members)
}

/// Deletes the reports of nodes long gone; another DDL tries again if this one fails.
fn forget(client: &TxnClient, keys: Vec<Vec<u8>>) {
    let Ok(mut txn) = client.begin(TxnMode::Optimistic) else {
        return;
    };
    for key in keys {
        txn.delete(key);
    }
    if let Err(error) = txn.commit() {
        tracing::debug!(%error, "forgetting old schema reports failed");
    }
}

/// One node's side of the reports.
struct Reporter {
    id: u64,
    /// What was last written, and when.
    last: Option<(u64, u64, Instant)>,
}

impl Reporter {
    fn tick(&mut self, catalog: &Catalog) {
        if let Err(error) = catalog.reload_if_changed() {
            tracing::warn!(%error, "reloading the schema failed");
        }
        let (loaded, oldest_writer) = catalog.versions_in_use();
        let due = match self.last {
            None => true,
            Some((l, o, at)) => {
                (l, o) != (loaded, oldest_writer) || at.elapsed() >= REPORT_INTERVAL
            }
        };
        if !due {
            return;
        }
        let began = Instant::now();
        match write_report(catalog.client(), self.id, loaded, oldest_writer) {
            Ok(at) => {
                catalog.lease.reported(began, at);
                self.last = Some((loaded, oldest_writer, Instant::now()));
            }
            Err(error) => tracing::warn!(%error, "reporting the schema version failed"),
        }
    }
}

/// Writes this node's report; returns the timestamp it carries.
fn write_report(client: &TxnClient, id: u64, loaded: u64, oldest_writer: u64) -> Result<Timestamp> {
    let mut txn = client.begin(TxnMode::Optimistic)?;
    let report = Report {
        loaded,
        oldest_writer,
        at: txn.start_ts(),
    };
    txn.put(member_key(id), report.encode());
    txn.commit()?;
    Ok(report.at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SqlServer;

    /// The error code of each statement of `sql`, 0 for success.
    fn codes(session: &mut crate::Session, sql: &str) -> Vec<u16> {
        session
            .execute_text(sql)
            .into_iter()
            .map(|r| r.err().map_or(0, |e| e.code))
            .collect()
    }

    #[test]
    fn a_node_that_stopped_reporting_refuses_to_commit_writes() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Arc::new(
            strata_kv::Storage::new(Arc::new(strata_engine::MemoryEngine::new())).unwrap(),
        );
        let tso = Arc::new(strata_pd_client::LocalTso::open(dir.path()).unwrap());
        let server = SqlServer::open(TxnClient::new(storage, tso)).unwrap();
        let catalog = &server.catalog;
        let mut session = server.new_session("root", None).unwrap();
        assert_eq!(
            codes(
                &mut session,
                "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY)"
            ),
            [0, 0]
        );
        // Reports made by hand, as the sync thread makes them once a second.
        let _ = catalog.member.set(1);
        let mut reporter = Reporter { id: 1, last: None };
        reporter.tick(catalog);
        assert_eq!(
            codes(
                &mut session,
                "INSERT INTO d.t VALUES (1); BEGIN; INSERT INTO d.t VALUES (2); COMMIT"
            ),
            [0, 0, 0, 0]
        );

        // No report for half a lease: writes are refused, reads are served.
        std::thread::sleep(COMMIT_LEASE);
        assert_eq!(codes(&mut session, "INSERT INTO d.t VALUES (3)"), [8027]);
        assert_eq!(
            codes(&mut session, "BEGIN; DELETE FROM d.t; COMMIT"),
            [0, 0, 8027]
        );
        assert_eq!(
            codes(&mut session, "BEGIN; SELECT * FROM d.t; COMMIT"),
            [0, 0, 0]
        );
        let rows = session.execute_text("SELECT COUNT(*) FROM d.t");
        assert!(
            matches!(&rows[0], Ok(crate::Output::ResultSet { rows, .. }) if rows[0][0] == strata_codec::Datum::Int(2)),
            "{rows:?}"
        );

        // A report again: writes go on.
        reporter.last = None;
        reporter.tick(catalog);
        assert_eq!(codes(&mut session, "INSERT INTO d.t VALUES (3)"), [0]);

        // A commit that would take a timestamp more than a lease after the report's (as one
        // slowed by a failover after its check) fails and writes nothing, whichever way it
        // commits.
        let at = Timestamp(catalog.lease.reported_at.load(Ordering::Relaxed));
        let long_ago =
            Timestamp::compose(at.physical_ms() - 2 * SCHEMA_LEASE.as_millis() as u64, 0);
        catalog
            .lease
            .reported_at
            .store(long_ago.0, Ordering::Relaxed);
        assert_eq!(codes(&mut session, "INSERT INTO d.t VALUES (4)"), [8027]);
        assert_eq!(
            codes(
                &mut session,
                "BEGIN; INSERT INTO d.t VALUES (5), (6); COMMIT"
            ),
            [0, 0, 8027]
        );
        assert_eq!(
            codes(
                &mut session,
                "SET tidb_enable_1pc = 0, tidb_enable_async_commit = 0; \
                 INSERT INTO d.t VALUES (7), (8)"
            ),
            [0, 8027]
        );
        let rows = session.execute_text("SELECT COUNT(*) FROM d.t");
        assert!(
            matches!(&rows[0], Ok(crate::Output::ResultSet { rows, .. }) if rows[0][0] == strata_codec::Datum::Int(3)),
            "{rows:?}"
        );
        reporter.last = None;
        reporter.tick(catalog);
        assert_eq!(codes(&mut session, "INSERT INTO d.t VALUES (4)"), [0]);
    }

    #[test]
    fn a_report_round_trips_and_bad_bytes_are_no_report() {
        let report = Report {
            loaded: 7,
            oldest_writer: 5,
            at: Timestamp::compose(1_000, 3),
        };
        assert_eq!(Report::decode(&report.encode()), Some(report));
        assert_eq!(Report::decode(&report.encode()[..23]), None);
        assert_eq!(report.age_ms(Timestamp::compose(4_500, 0)), 3_500);
        assert_eq!(report.age_ms(Timestamp::compose(900, 0)), 0);
    }
}
