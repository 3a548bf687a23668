//! Resolving the locks of finished or abandoned transactions from their primaries: for a read
//! that meets a lock, and for the pass that clears, before garbage collection, the locks of
//! transactions that started below the safe point (TiDB's resolve-locks step of a GC round).
//!
//! A lock nobody reads would otherwise stay for good, and with it every old version of its key:
//! the collector leaves a key with a lock below the safe point alone, since resolving that lock
//! may still commit below it.

use std::time::Duration;

use strata_kvapi::{KvApi, LockInfo, SecondaryLocks, TxnStatus};
use strata_types::Timestamp;

use crate::{metrics, TxnClient, TxnError};

/// How often a client's pass looks for locks below the safe point.
pub const RESOLVE_INTERVAL: Duration = Duration::from_secs(10);
/// Locks asked for per request of the pass.
const SCAN_LOCK_BATCH: usize = 256;

/// What became of a lock a resolution looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// Its transaction finished (or was rolled back now): the lock is gone.
    Resolved,
    /// Its transaction still runs.
    Running,
}

/// Resolves `lock` from its primary: commits or rolls it back when its transaction finished,
/// or rolls the transaction back when the lock met has expired by the oracle's time.
pub(crate) fn resolve(
    kv: &dyn KvApi,
    lock: &LockInfo,
    current_ts: Timestamp,
) -> Result<Resolution, TxnError> {
    metrics::lock_resolved();
    // Until the lock met expires, a primary without the transaction's lock may still be on
    // its way (keys are prewritten in parallel): rolling it back then would abort a running
    // transaction.
    let expired =
        current_ts.physical_ms() >= lock.start_ts.physical_ms().saturating_add(lock.ttl_ms);
    match kv.check_txn_status(&lock.primary, lock.start_ts, current_ts, expired)? {
        TxnStatus::Committed { commit_ts } => kv.resolve_lock(
            std::slice::from_ref(&lock.key),
            lock.start_ts,
            Some(commit_ts),
        )?,
        TxnStatus::RolledBack => {
            kv.resolve_lock(std::slice::from_ref(&lock.key), lock.start_ts, None)?
        }
        TxnStatus::Locked { .. } => return Ok(Resolution::Running),
        TxnStatus::Undecided {
            min_commit_ts,
            secondaries,
        } => {
            let outcome = if secondaries.is_empty() {
                SecondaryLocks::Locked {
                    min_commit_ts: Timestamp::ZERO,
                }
            } else {
                kv.check_secondary_locks(&secondaries, lock.start_ts)?
            };
            let commit_ts = match outcome {
                SecondaryLocks::Locked { min_commit_ts: m } => Some(m.max(min_commit_ts)),
                SecondaryLocks::Committed { commit_ts } => Some(commit_ts),
                SecondaryLocks::RolledBack => None,
            };
            let mut keys = secondaries;
            keys.push(lock.primary.clone());
            kv.resolve_lock(&keys, lock.start_ts, commit_ts)?;
        }
    }
    Ok(Resolution::Resolved)
}

/// What one pass over the locks below a safe point did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResolvedLocks {
    /// Locks found below the safe point.
    pub found: usize,
    /// Of those, locks whose transaction was over and which are gone now.
    pub resolved: usize,
}

impl TxnClient {
    /// Resolves every prewrite lock of a transaction that started at or before `safe_point`:
    /// those of finished transactions are committed or rolled back, and those of transactions
    /// whose locks expired (their SQL node died between prewrite and commit) are rolled back.
    /// A transaction still alive keeps its locks.
    pub fn resolve_locks_below(&self, safe_point: Timestamp) -> Result<ResolvedLocks, TxnError> {
        let mut done = ResolvedLocks::default();
        let current_ts = self.current_ts()?;
        let mut start = Vec::new();
        loop {
            let locks = self
                .kv()
                .scan_lock(&start, b"", safe_point, SCAN_LOCK_BATCH)?;
            let Some(last) = locks.last() else {
                return Ok(done);
            };
            start = last.key.clone();
            start.push(0);
            for lock in &locks {
                done.found += 1;
                if resolve(self.kv(), lock, current_ts)? == Resolution::Resolved {
                    done.resolved += 1;
                }
            }
            if locks.len() < SCAN_LOCK_BATCH {
                return Ok(done);
            }
        }
    }

    /// Starts a thread that resolves, every [`RESOLVE_INTERVAL`], the locks below the safe
    /// point `safe_point` returns (None: not known now).
    pub fn start_lock_resolver(
        &self,
        safe_point: impl Fn() -> Option<Timestamp> + Send + 'static,
    ) -> std::io::Result<()> {
        let client = self.clone();
        std::thread::Builder::new()
            .name("lock-resolver".into())
            .spawn(move || loop {
                std::thread::sleep(RESOLVE_INTERVAL);
                let Some(safe_point) = safe_point() else {
                    continue;
                };
                let result = client.resolve_locks_below(safe_point);
                if let Ok(done) = result {
                    metrics::gc_locks(done.resolved, done.found - done.resolved);
                }
                match result {
                    Ok(done) if done.found > 0 => tracing::info!(
                        found = done.found,
                        resolved = done.resolved,
                        %safe_point,
                        "resolved locks below the GC safe point"
                    ),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(%e, "resolving locks below the GC safe point failed"),
                }
            })
            .map(|_| ())
    }
}
