//! What a KV node counts: its KV commands (count and duration, by command) and the region
//! errors it answers (by kind), registered with the process's Prometheus registry (served at
//! `/metrics` by the status port).

use std::sync::LazyLock;

use prometheus::{
    exponential_buckets, register_histogram_vec, register_int_counter_vec, Histogram,
    HistogramTimer, IntCounter,
};
use strata_proto::kv as pb;

/// The KV commands a node serves (a bounded label set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Command {
    Get,
    BatchGet,
    Scan,
    BatchScan,
    PessimisticLock,
    PessimisticRollback,
    Prewrite,
    Commit,
    Rollback,
    CheckTxnStatus,
    CheckSecondaryLocks,
    TxnHeartBeat,
    ResolveLock,
    ScanLock,
}

const COMMANDS: [Command; 14] = [
    Command::Get,
    Command::BatchGet,
    Command::Scan,
    Command::BatchScan,
    Command::PessimisticLock,
    Command::PessimisticRollback,
    Command::Prewrite,
    Command::Commit,
    Command::Rollback,
    Command::CheckTxnStatus,
    Command::CheckSecondaryLocks,
    Command::TxnHeartBeat,
    Command::ResolveLock,
    Command::ScanLock,
];

impl Command {
    fn label(self) -> &'static str {
        match self {
            Command::Get => "get",
            Command::BatchGet => "batch_get",
            Command::Scan => "scan",
            Command::BatchScan => "batch_scan",
            Command::PessimisticLock => "pessimistic_lock",
            Command::PessimisticRollback => "pessimistic_rollback",
            Command::Prewrite => "prewrite",
            Command::Commit => "commit",
            Command::Rollback => "rollback",
            Command::CheckTxnStatus => "check_txn_status",
            Command::CheckSecondaryLocks => "check_secondary_locks",
            Command::TxnHeartBeat => "txn_heart_beat",
            Command::ResolveLock => "resolve_lock",
            Command::ScanLock => "scan_lock",
        }
    }
}

static COMMAND_DURATIONS: LazyLock<Vec<Histogram>> = LazyLock::new(|| {
    let vec = register_histogram_vec!(
        "strata_kv_command_duration_seconds",
        "KV commands served by this node, by command: how long each took, from received to \
         answered",
        &["command"],
        // 20 µs to about 10 s.
        exponential_buckets(0.000_02, 2.0, 20).expect("valid buckets")
    )
    .expect("registered once");
    COMMANDS
        .iter()
        .map(|c| vec.with_label_values(&[c.label()]))
        .collect()
});

/// The kinds of region error (a bounded label set), in the order of [`region_error_index`].
const REGION_ERRORS: [&str; 5] = [
    "not_leader",
    "epoch_not_match",
    "key_not_in_region",
    "region_not_found",
    "other",
];

static REGION_ERROR_COUNTS: LazyLock<Vec<IntCounter>> = LazyLock::new(|| {
    let vec = register_int_counter_vec!(
        "strata_kv_region_errors_total",
        "Requests answered with a region error (the client retries elsewhere), by kind",
        &["kind"]
    )
    .expect("registered once");
    REGION_ERRORS
        .iter()
        .map(|kind| vec.with_label_values(&[kind]))
        .collect()
});

/// Times a command until the timer is dropped.
// Hot path: every request.
pub(crate) fn timer(command: Command) -> HistogramTimer {
    COMMAND_DURATIONS[command as usize].start_timer()
}

fn region_error_index(error: &pb::RegionError) -> usize {
    use pb::region_error::Kind;
    match error.kind {
        Some(Kind::NotLeader(_)) => 0,
        Some(Kind::EpochNotMatch(_)) => 1,
        Some(Kind::KeyNotInRegion(_)) => 2,
        Some(Kind::RegionNotFound(_)) => 3,
        _ => 4,
    }
}

pub(crate) fn region_error(error: &pb::RegionError) {
    REGION_ERROR_COUNTS[region_error_index(error)].inc();
}

/// Registers the metrics, so that `/metrics` lists them before the first request.
pub fn init() {
    LazyLock::force(&COMMAND_DURATIONS);
    LazyLock::force(&REGION_ERROR_COUNTS);
}
