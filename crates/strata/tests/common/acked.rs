//! The acknowledged-inserts workload of the crash tests on a cluster: writers insert numbered
//! rows into `crash.acked` and remember which inserts were acknowledged (and when) and which
//! were refused with an error; afterwards every acknowledged row must be there and no refused
//! one. An insert answered with 1180 (a commit whose outcome the SQL node does not know), whose
//! connection broke, or that got no answer in time may be either.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;

use super::{bounded, connect, mariadb_on, sql_at, wait_for, ClientError};

/// The error of a commit whose outcome is unknown (MySQL's ER_ERROR_DURING_COMMIT).
const UNDETERMINED: u16 = 1180;

/// Writer `w` numbers its rows from `w * WRITER_ID_SPAN`.
const WRITER_ID_SPAN: u64 = 1_000_000;

/// Creates `crash.acked` through `port` and waits until `other` sees it.
pub fn create_table(port: u16, other: u16) {
    sql_at(
        port,
        None,
        "CREATE DATABASE crash; CREATE TABLE crash.acked (id BIGINT PRIMARY KEY, v BIGINT)",
    );
    wait_for(other, "SELECT COUNT(*) FROM crash.acked", "COUNT(*)\n0\n");
}

/// Inserting tasks, running until [`Inserters::stop`].
pub struct Inserters {
    runtime: tokio::runtime::Runtime,
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<Outcome>>,
}

/// What the writers were told.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every acknowledged id, with when it was acknowledged.
    pub acknowledged: Vec<(u64, Duration)>,
    /// Every id whose insert was refused, with the error code (1180, an outcome unknown, does
    /// not count).
    pub refused: BTreeMap<u64, u16>,
    /// The ids of inserts answered with 1180, and how many lost their connection or their
    /// answer: either may have been applied.
    pub undetermined: BTreeSet<u64>,
    pub unanswered: usize,
}

impl Outcome {
    /// The acknowledged ids.
    pub fn ids(&self) -> BTreeSet<u64> {
        self.acknowledged.iter().map(|(id, _)| *id).collect()
    }

    /// The outcome of two groups of writers together.
    pub fn merge(mut self, other: Outcome) -> Outcome {
        self.acknowledged.extend(other.acknowledged);
        self.refused.extend(other.refused);
        self.undetermined.extend(other.undetermined);
        self.unanswered += other.unanswered;
        self
    }
}

impl Inserters {
    /// Starts `writers` tasks that insert through the SQL node on `port`. During a failure the
    /// SQL node answers with an error and the connection stays usable (a writer whose
    /// connection broke connects again). Acknowledged rows are remembered with the time since
    /// `started`, refused ones with the error code.
    pub fn start(port: u16, writers: u64, started: Instant) -> Inserters {
        Inserters::start_on("127.0.0.1", port, writers, started)
    }

    /// As [`Inserters::start`], through the SQL node at `host`:`port`, with one writer per
    /// number in `writers` (writer `w` numbers its rows from `w * WRITER_ID_SPAN`, so groups of
    /// writers on one table need ranges that do not overlap).
    pub fn start_numbered(
        host: &str,
        port: u16,
        writers: std::ops::Range<u64>,
        started: Instant,
    ) -> Inserters {
        Inserters::spawn(host, port, writers, started)
    }

    fn start_on(host: &str, port: u16, writers: u64, started: Instant) -> Inserters {
        Inserters::spawn(host, port, 0..writers, started)
    }

    fn spawn(host: &str, port: u16, writers: std::ops::Range<u64>, started: Instant) -> Inserters {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let url = format!("mysql://root@{host}:{port}/crash");
        let stop = Arc::new(AtomicBool::new(false));
        let tasks = writers
            .map(|w| {
                let (url, stop) = (url.clone(), stop.clone());
                runtime.spawn(async move {
                    let mut outcome = Outcome::default();
                    let mut conn = Some(connect(&url).await.expect("connect"));
                    let mut id = w * WRITER_ID_SPAN;
                    while !stop.load(Ordering::SeqCst) {
                        let Some(open) = &mut conn else {
                            conn = connect(&url).await.ok();
                            if conn.is_none() {
                                tokio::time::sleep(Duration::from_millis(100)).await;
                            }
                            continue;
                        };
                        id += 1;
                        let insert = format!("INSERT INTO acked VALUES ({id}, {id})");
                        match bounded(open.query_drop(insert)).await {
                            Ok(()) => outcome.acknowledged.push((id, started.elapsed())),
                            Err(ClientError::Server { code, .. }) if code != UNDETERMINED => {
                                outcome.refused.insert(id, code);
                            }
                            Err(ClientError::Server { .. }) => {
                                outcome.undetermined.insert(id);
                            }
                            Err(ClientError::Connection(_) | ClientError::Timeout) => {
                                outcome.unanswered += 1;
                                conn = None;
                            }
                        }
                    }
                    outcome
                })
            })
            .collect();
        Inserters {
            runtime,
            stop,
            tasks,
        }
    }

    /// Stops the writers; returns what they were told.
    pub fn stop(self) -> Outcome {
        self.stop.store(true, Ordering::SeqCst);
        let mut outcome = Outcome::default();
        for task in self.tasks {
            outcome = outcome.merge(self.runtime.block_on(task).unwrap());
        }
        eprintln!(
            "inserts: {} acknowledged, {} refused, {} undetermined (1180), {} unanswered",
            outcome.acknowledged.len(),
            outcome.refused.len(),
            outcome.undetermined.len(),
            outcome.unanswered
        );
        outcome
    }
}

/// Asserts that every acknowledged id of `outcome` is in `crash.acked`, read through `port`,
/// and no refused one; prints how many undetermined ones were stored.
pub fn assert_present(port: u16, outcome: &Outcome) {
    assert_present_on("127.0.0.1", port, outcome);
}

/// As [`assert_present`], through the SQL node at `host`:`port`.
pub fn assert_present_on(host: &str, port: u16, outcome: &Outcome) {
    let out = mariadb_on(host, port, Some("crash"), "SELECT id FROM acked");
    assert!(
        out.status.success(),
        "reading crash.acked through {host}:{port}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let present: BTreeSet<u64> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.parse().ok())
        .collect();
    let acknowledged = outcome.ids();
    let missing: Vec<_> = acknowledged.difference(&present).collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged rows lost, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    let stored: Vec<(u64, u16)> = outcome
        .refused
        .iter()
        .filter(|(id, _)| present.contains(id))
        .map(|(id, code)| (*id, *code))
        .collect();
    assert!(
        stored.is_empty(),
        "{} rows stored whose insert was answered with an error, e.g. (id, code) {:?}",
        stored.len(),
        &stored[..stored.len().min(5)]
    );
    eprintln!(
        "all {} acknowledged inserts stored, none of {} refused; {} of {} undetermined stored",
        acknowledged.len(),
        outcome.refused.len(),
        outcome.undetermined.intersection(&present).count(),
        outcome.undetermined.len()
    );
}
