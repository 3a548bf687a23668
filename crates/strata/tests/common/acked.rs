//! The acknowledged-inserts workload of the crash tests on a cluster: writers insert numbered
//! rows into `crash.acked` and remember which inserts were acknowledged (and when); afterwards
//! every acknowledged row must be there.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;

use super::{bounded, connect, mariadb_on, sql_at, wait_for};

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
    tasks: Vec<tokio::task::JoinHandle<Vec<(u64, Duration)>>>,
}

impl Inserters {
    /// Starts `writers` tasks that insert through the SQL node on `port`. During a failure the
    /// SQL node answers with an error and the connection stays usable; only acknowledged rows
    /// are remembered, with the time since `started`.
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
                    let mut acknowledged = Vec::new();
                    let mut conn = connect(&url).await.expect("connect");
                    let mut id = w * WRITER_ID_SPAN;
                    while !stop.load(Ordering::SeqCst) {
                        id += 1;
                        let insert = format!("INSERT INTO acked VALUES ({id}, {id})");
                        if bounded(conn.query_drop(insert)).await.is_ok() {
                            acknowledged.push((id, started.elapsed()));
                        }
                    }
                    acknowledged
                })
            })
            .collect();
        Inserters {
            runtime,
            stop,
            tasks,
        }
    }

    /// Stops the writers; returns every acknowledged id with when it was acknowledged.
    pub fn stop(self) -> Vec<(u64, Duration)> {
        self.stop.store(true, Ordering::SeqCst);
        let mut acknowledged = Vec::new();
        for task in self.tasks {
            acknowledged.extend(self.runtime.block_on(task).unwrap());
        }
        acknowledged
    }
}

/// Asserts that every id in `acknowledged` is in `crash.acked`, read through `port`.
pub fn assert_present(port: u16, acknowledged: &BTreeSet<u64>) {
    assert_present_on("127.0.0.1", port, acknowledged);
}

/// As [`assert_present`], through the SQL node at `host`:`port`.
pub fn assert_present_on(host: &str, port: u16, acknowledged: &BTreeSet<u64>) {
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
    let missing: Vec<_> = acknowledged.difference(&present).collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged rows lost, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
}
