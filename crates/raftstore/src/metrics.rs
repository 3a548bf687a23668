//! What a store's Raft groups count: proposals and how long they take to commit and apply,
//! messages sent, leaders gained, the write of applied data, and the regions and leaders held,
//! registered with the process's Prometheus registry (served at `/metrics` by the status
//! port). raft-engine counts its own log writes and syncs (`raft_engine_…`).

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use prometheus::{
    exponential_buckets, register_histogram, register_int_counter, register_int_gauge, Histogram,
    IntCounter, IntGauge,
};

/// 20 µs to about 10 s.
fn latency_buckets() -> Vec<f64> {
    exponential_buckets(0.000_02, 2.0, 20).expect("valid buckets")
}

static PROPOSE_APPLY: LazyLock<Histogram> = LazyLock::new(|| {
    register_histogram!(
        "strata_raft_propose_apply_duration_seconds",
        "Commands proposed by this store's leaders and applied: how long from proposal to \
         applied (replication, log sync on a majority, apply)",
        latency_buckets()
    )
    .expect("registered once")
});

static PROPOSE_COMMIT: LazyLock<Histogram> = LazyLock::new(|| {
    register_histogram!(
        "strata_raft_propose_commit_duration_seconds",
        "Commands proposed by this store's leaders and applied: how long from proposal until \
         the leader handled them as committed (replication and log sync on a majority)",
        latency_buckets()
    )
    .expect("registered once")
});

static COMMIT_APPLY: LazyLock<Histogram> = LazyLock::new(|| {
    register_histogram!(
        "strata_raft_commit_apply_duration_seconds",
        "Commands proposed by this store's leaders and applied: how long from the leader \
         handling them as committed until applied (the round's own log write, the apply \
         write)",
        latency_buckets()
    )
    .expect("registered once")
});

static PROPOSALS: LazyLock<IntCounter> = LazyLock::new(|| {
    register_int_counter!(
        "strata_raft_proposals_total",
        "Commands proposed by this store's leaders"
    )
    .expect("registered once")
});

static APPLY_WRITES: LazyLock<Histogram> = LazyLock::new(|| {
    register_histogram!(
        "strata_raft_apply_write_duration_seconds",
        "Writes of applied commands to the KV engine, one per round of the store's poll loop: \
         how long each took",
        latency_buckets()
    )
    .expect("registered once")
});

static MESSAGES: LazyLock<IntCounter> = LazyLock::new(|| {
    register_int_counter!(
        "strata_raft_messages_sent_total",
        "Raft messages sent to other stores"
    )
    .expect("registered once")
});

static LEADERS_GAINED: LazyLock<IntCounter> = LazyLock::new(|| {
    register_int_counter!(
        "strata_raft_leader_changes_total",
        "Times a peer of this store became its region's leader"
    )
    .expect("registered once")
});

static TRANSFERS: LazyLock<IntCounter> = LazyLock::new(|| {
    register_int_counter!(
        "strata_raft_leader_transfers_total",
        "Leader transfers this store started, each after proposing what the next leader takes \
         over (the region's pessimistic locks)"
    )
    .expect("registered once")
});

static REGIONS: LazyLock<IntGauge> = LazyLock::new(|| {
    register_int_gauge!("strata_raft_regions", "Regions this store holds a peer of")
        .expect("registered once")
});

static LEADERS: LazyLock<IntGauge> = LazyLock::new(|| {
    register_int_gauge!(
        "strata_raft_leaders",
        "Regions whose peer on this store leads"
    )
    .expect("registered once")
});

pub(crate) fn proposed() {
    PROPOSALS.inc();
}

/// A command applied: proposed at `proposed`, handled as committed at `committed` (the start
/// of the poll round that applied it), applied at `applied`.
pub(crate) fn applied(proposed: Instant, committed: Instant, applied: Instant) {
    let seconds = |from: Instant, to: Instant| to.saturating_duration_since(from).as_secs_f64();
    PROPOSE_APPLY.observe(seconds(proposed, applied));
    PROPOSE_COMMIT.observe(seconds(proposed, committed.max(proposed)));
    COMMIT_APPLY.observe(seconds(committed.max(proposed), applied));
}

pub(crate) fn apply_written(took: Duration) {
    APPLY_WRITES.observe(took.as_secs_f64());
}

pub(crate) fn message_sent() {
    MESSAGES.inc();
}

pub(crate) fn leader_gained() {
    LEADERS_GAINED.inc();
}

pub(crate) fn transfer_started() {
    TRANSFERS.inc();
}

pub(crate) fn set_regions(regions: usize, leaders: usize) {
    REGIONS.set(regions as i64);
    LEADERS.set(leaders as i64);
}

/// Registers the metrics, so that `/metrics` lists them before the first command.
pub fn init() {
    LazyLock::force(&PROPOSE_APPLY);
    LazyLock::force(&PROPOSE_COMMIT);
    LazyLock::force(&COMMIT_APPLY);
    LazyLock::force(&PROPOSALS);
    LazyLock::force(&APPLY_WRITES);
    LazyLock::force(&MESSAGES);
    LazyLock::force(&LEADERS_GAINED);
    LazyLock::force(&TRANSFERS);
    LazyLock::force(&REGIONS);
    LazyLock::force(&LEADERS);
}
