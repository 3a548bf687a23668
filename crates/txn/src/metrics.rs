//! What the transaction client counts: commits by protocol (count and duration), failed
//! commits, pessimistic lock acquisition, lock resolution and timestamp waits, registered
//! with the process's Prometheus registry (served at `/metrics` by the status port).

use std::sync::LazyLock;
use std::time::Duration;

use prometheus::{
    exponential_buckets, register_histogram, register_histogram_vec, register_int_counter,
    Histogram, IntCounter,
};

/// How a transaction committed (a bounded label set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CommitKind {
    /// Nothing to write.
    ReadOnly,
    /// One prewrite that was the commit.
    OnePc,
    /// Committed once every key was prewritten.
    AsyncCommit,
    /// Prewrite, then commit of the primary.
    TwoPc,
}

const KINDS: [CommitKind; 4] = [
    CommitKind::ReadOnly,
    CommitKind::OnePc,
    CommitKind::AsyncCommit,
    CommitKind::TwoPc,
];

impl CommitKind {
    fn label(self) -> &'static str {
        match self {
            CommitKind::ReadOnly => "read_only",
            CommitKind::OnePc => "one_pc",
            CommitKind::AsyncCommit => "async_commit",
            CommitKind::TwoPc => "two_pc",
        }
    }
}

/// 50 µs to about 26 s.
fn latency_buckets() -> Vec<f64> {
    exponential_buckets(0.000_05, 2.0, 20).expect("valid buckets")
}

static COMMITS: LazyLock<Vec<Histogram>> = LazyLock::new(|| {
    let vec = register_histogram_vec!(
        "strata_txn_commit_duration_seconds",
        "Transactions committed, by protocol: how long each commit took",
        &["kind"],
        latency_buckets()
    )
    .expect("registered once");
    KINDS
        .iter()
        .map(|kind| vec.with_label_values(&[kind.label()]))
        .collect()
});

static COMMIT_FAILURES: LazyLock<IntCounter> = LazyLock::new(|| {
    register_int_counter!(
        "strata_txn_commit_failures_total",
        "Commits that failed (conflicts, aborted or undetermined outcomes, unavailable regions)"
    )
    .expect("registered once")
});

static LOCK_WAITS: LazyLock<Histogram> = LazyLock::new(|| {
    register_histogram!(
        "strata_txn_pessimistic_lock_duration_seconds",
        "Pessimistic lock requests (SELECT … FOR UPDATE, writes in pessimistic transactions): \
         how long each took to get its locks, waits for other transactions included",
        latency_buckets()
    )
    .expect("registered once")
});

static LOCK_RESOLVES: LazyLock<IntCounter> = LazyLock::new(|| {
    register_int_counter!(
        "strata_txn_lock_resolves_total",
        "Locks of other transactions met and checked against their primaries (and resolved \
         when their transaction had ended)"
    )
    .expect("registered once")
});

static GC_LOCKS_RESOLVED: LazyLock<IntCounter> = LazyLock::new(|| {
    register_int_counter!(
        "strata_txn_gc_locks_resolved_total",
        "Locks below the GC safe point that the resolve-locks pass found over (committed or \
         rolled back from their primaries)"
    )
    .expect("registered once")
});

static GC_LOCKS_ALIVE: LazyLock<IntCounter> = LazyLock::new(|| {
    register_int_counter!(
        "strata_txn_gc_locks_alive_total",
        "Locks below the GC safe point that the resolve-locks pass left, their transaction \
         still alive"
    )
    .expect("registered once")
});

static TSO_WAITS: LazyLock<Histogram> = LazyLock::new(|| {
    register_histogram!(
        "strata_txn_tso_wait_seconds",
        "Timestamps taken from the oracle: how long each took",
        latency_buckets()
    )
    .expect("registered once")
});

// Hot path: every write transaction.
pub(crate) fn committed(kind: CommitKind, took: Duration) {
    COMMITS[kind as usize].observe(took.as_secs_f64());
}

pub(crate) fn commit_failed() {
    COMMIT_FAILURES.inc();
}

pub(crate) fn gc_locks(resolved: usize, alive: usize) {
    GC_LOCKS_RESOLVED.inc_by(resolved as u64);
    GC_LOCKS_ALIVE.inc_by(alive as u64);
}

pub(crate) fn locked(took: Duration) {
    LOCK_WAITS.observe(took.as_secs_f64());
}

pub(crate) fn lock_resolved() {
    LOCK_RESOLVES.inc();
}

// Hot path: every timestamp.
pub(crate) fn timestamp_taken(took: Duration) {
    TSO_WAITS.observe(took.as_secs_f64());
}

/// Registers the metrics, so that `/metrics` lists them before the first transaction.
pub fn init() {
    LazyLock::force(&COMMITS);
    LazyLock::force(&COMMIT_FAILURES);
    LazyLock::force(&LOCK_WAITS);
    LazyLock::force(&LOCK_RESOLVES);
    LazyLock::force(&GC_LOCKS_RESOLVED);
    LazyLock::force(&GC_LOCKS_ALIVE);
    LazyLock::force(&TSO_WAITS);
}
