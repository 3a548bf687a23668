//! strata-txn: the transaction client. SQL reaches storage only through it, and it reaches KV
//! nodes only through the [`KvApi`].
//!
//! A [`Transaction`] takes `start_ts` from the timestamp oracle, reads the snapshot at that
//! timestamp (or, for the statements of a pessimistic transaction that write, at a fresh
//! `for_update_ts`), buffers its writes in memory and commits them with Percolator: one-phase
//! when the KV node can commit every key at once, two-phase otherwise.
//!
//! ```text
//!   begin ── get/scan (buffer ∪ snapshot) ── put/delete (buffer) ── lock_keys (pessimistic)
//!     └── commit: prewrite(try_one_pc) ──▶ committed at one_pc_commit_ts
//!                                     └─▶ commit_ts from TSO, commit primary, then the rest
//! ```
//!
//! Once the primary is committed (or, with async commit, every key is prewritten) the
//! transaction is, and its caller is answered: the remaining keys are committed by background
//! threads ([`SecondaryCommitter`]), or inline when their queue is full. A reader that meets
//! one of their locks first resolves it from the primary.
//!
//! Locks live for a time after their transaction's `start_ts`; while a transaction holds
//! locks, the client renews its primary's with heartbeats (`heartbeat.rs`), so that only the
//! locks of a client that died are taken for abandoned and rolled back by others.
//!
//! The client never retries a transaction after it returned data to its caller; it retries only
//! what is invisible to it: resolving a lock left by a finished transaction, or waiting for one
//! that still runs.

mod get_stream;
mod heartbeat;
pub mod metrics;
mod placement;
mod region;
mod remote;
mod resolver;
mod secondaries;
mod snapshots;
mod transaction;

pub use heartbeat::{HEARTBEAT_INTERVAL, MANAGED_LOCK_TTL_MS};
pub use remote::{RemoteKv, KV_REQUEST_TIMEOUT, REGION_RETRY_DEADLINE};
pub use resolver::{ResolvedLocks, RESOLVE_INTERVAL};

pub use secondaries::{SecondaryCommitter, SECONDARY_COMMIT_THREADS, SECONDARY_QUEUE};
pub use strata_kvapi::{KvError, RegionInfo, StoreInfo};
pub use transaction::{Interrupt, ReadStats, Savepoint, Transaction, TxnMode, LOCK_WAIT_SLICE};

use std::sync::Arc;

use heartbeat::Heartbeats;
use snapshots::{OpenSnapshots, SnapshotGuard};
use strata_kvapi::KvApi;
pub use strata_pd_client::PdError;
use strata_pd_client::TimestampOracle;
use strata_types::Timestamp;

/// Errors of the transaction client.
#[derive(Debug, thiserror::Error)]
pub enum TxnError {
    #[error(transparent)]
    Kv(#[from] KvError),
    #[error("timestamp oracle: {0}")]
    Pd(#[from] PdError),
    /// A lock of a running transaction stayed in the way of a read for too long.
    #[error("lock of transaction {0} did not clear")]
    LockNotCleared(Timestamp),
    /// A lock wait was given up because its statement was stopped (killed, or past its time
    /// limit).
    #[error("lock wait interrupted")]
    Interrupted,
}

/// Creates transactions over one KV API and one timestamp oracle.
#[derive(Clone)]
pub struct TxnClient {
    kv: Arc<dyn KvApi>,
    tso: Arc<dyn TimestampOracle>,
    secondaries: Arc<SecondaryCommitter>,
    heartbeats: Arc<Heartbeats>,
    snapshots: OpenSnapshots,
}

impl TxnClient {
    pub fn new(kv: Arc<dyn KvApi>, tso: Arc<dyn TimestampOracle>) -> TxnClient {
        TxnClient {
            secondaries: Arc::new(SecondaryCommitter::start(kv.clone())),
            heartbeats: Arc::new(Heartbeats::start(kv.clone())),
            kv,
            tso,
            snapshots: OpenSnapshots::default(),
        }
    }

    pub(crate) fn secondaries(&self) -> &SecondaryCommitter {
        &self.secondaries
    }

    pub(crate) fn heartbeats(&self) -> &Heartbeats {
        &self.heartbeats
    }

    /// The snapshot of this client's oldest open transaction (reads of the newest data do not
    /// count), which garbage collection keeps.
    pub fn oldest_snapshot(&self) -> Option<Timestamp> {
        self.snapshots.oldest()
    }

    pub(crate) fn open_snapshot(&self, start_ts: Timestamp) -> SnapshotGuard {
        self.snapshots.open(start_ts)
    }

    /// Returns a fresh timestamp from the oracle.
    // Hot path: every transaction.
    pub fn current_ts(&self) -> Result<Timestamp, TxnError> {
        let started = std::time::Instant::now();
        let ts = self.tso.get_ts()?;
        metrics::timestamp_taken(started.elapsed());
        Ok(ts)
    }

    /// The regions overlapping `[start, end)` (`end` empty: to the end), in key order.
    pub fn regions(&self, start: &[u8], end: &[u8]) -> Result<Vec<RegionInfo>, TxnError> {
        Ok(self.kv.regions(start, end)?)
    }

    /// The stores holding the data, with their regions and leaders.
    pub fn stores(&self) -> Result<Vec<StoreInfo>, TxnError> {
        Ok(self.kv.stores()?)
    }

    /// Starts a transaction at a fresh `start_ts`.
    pub fn begin(&self, mode: TxnMode) -> Result<Transaction, TxnError> {
        let start_ts = self.current_ts()?;
        Ok(Transaction::new(self.clone(), start_ts, mode))
    }

    /// Starts a read of the newest committed data, without a timestamp from the oracle: for a
    /// statement that reads one key and writes nothing (an autocommit point select), whose
    /// read is ordered by the moment the key's leader serves it. Reads of several keys need a
    /// snapshot, and so [`TxnClient::begin`].
    pub fn begin_latest_read(&self) -> Transaction {
        Transaction::new(self.clone(), Timestamp::MAX, TxnMode::Optimistic)
    }

    pub(crate) fn kv(&self) -> &dyn KvApi {
        &*self.kv
    }
}
