//! [`Storage`]: the KV node's implementation of the KV API over one engine.
//!
//! Every write command runs as: latch the keys, check them against locks and newer commits,
//! build one write batch, write it (synced when it commits data), release. Reads take no
//! latches; they pass the read barrier of the [`ConcurrencyManager`] and read the write CF.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use strata_engine::{Cf, Engine, WriteBatch};
use strata_kvapi::{
    KvApi, KvError, LockInfo, Mutation, PessimisticLockRequest, PrewriteRequest, PrewriteResponse,
    ScanRequest, Scanned, SecondaryLocks, TxnStatus,
};
use strata_types::{Key, Timestamp, Value};

use crate::concurrency::{ConcurrencyManager, PessimisticLock};
use crate::mvcc::{self, AsyncCommit, Lock, LockKind, Write, WriteKind, SHORT_VALUE_MAX_BYTES};
use crate::reader::{storage, MvccReader};

mod lock_wait;

pub use lock_wait::LOCK_WAIT_RECHECK;

/// The cluster's deadlock detector, told of every lock wait a KV node serves: a cycle of
/// waits may span nodes, and each node sees only its own part of it.
pub trait DeadlockDetector: Send + Sync {
    /// Records that `waiter` waits for `blocker`, unless that closes a cycle: then it returns
    /// false and records nothing. A wait must be recorded again within the detector's time to
    /// live (a few seconds) to keep counting. Gives up (with an error) after `within`.
    fn wait(
        &self,
        waiter: Timestamp,
        blocker: Timestamp,
        within: Duration,
    ) -> Result<bool, KvError>;
    /// `waiter` no longer waits.
    fn wait_ended(&self, waiter: Timestamp);
}

/// A KV node's storage: MVCC and Percolator over one engine.
pub struct Storage {
    engine: Arc<dyn Engine>,
    cm: ConcurrencyManager,
    /// The cluster's deadlock detector (none on a single node: its own graph sees every wait).
    detector: OnceLock<Arc<dyn DeadlockDetector>>,
    /// Locks in the lock CF. While zero, reads skip the lock CF entirely.
    persisted_locks: AtomicI64,
    /// Whether every write to the engine goes through this storage, so that
    /// `persisted_locks` is exact. A replica's engine is also written by Raft's apply.
    counts_locks: bool,
    /// Snapshots below this timestamp are refused: garbage collection may have removed
    /// versions they would see. Raised every second by the GC worker, by every collection pass,
    /// and on a KV node to the cluster's safe point whenever it starts leading keys (another
    /// leader's passes may have removed versions through Raft). Shared with the write CF's
    /// garbage filter ([`Storage::garbage_filter`]).
    gc_safe_point: Arc<AtomicU64>,
}

/// What a node that starts leading keys does with the pessimistic locks it holds on them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaderLocks {
    /// They may be stale (another replica led the keys meanwhile, and its locks went with
    /// it): drop them.
    Forget,
    /// The node led the keys without a gap (a region split off one it led): keep them.
    Keep,
}

impl Storage {
    /// Opens storage over `engine`, counting the prewrite locks left on disk.
    pub fn new(engine: Arc<dyn Engine>) -> Result<Storage, KvError> {
        let mut count = 0;
        {
            let mut it = engine.iterator(Cf::Lock, b"", None);
            it.seek(b"");
            while it.valid().map_err(storage)? {
                count += 1;
                it.next();
            }
        }
        Ok(Storage {
            engine,
            cm: ConcurrencyManager::default(),
            detector: OnceLock::new(),
            persisted_locks: AtomicI64::new(count),
            counts_locks: true,
            gc_safe_point: Arc::default(),
        })
    }

    /// Opens storage over the engine of a replica: writes also reach the engine when Raft
    /// applies another leader's commands, so reads always look at the lock CF.
    pub fn replicated(engine: Arc<dyn Engine>) -> Storage {
        Storage {
            engine,
            cm: ConcurrencyManager::default(),
            detector: OnceLock::new(),
            persisted_locks: AtomicI64::new(0),
            counts_locks: false,
            gc_safe_point: Arc::default(),
        }
    }

    /// Makes lock waits consult the cluster's deadlock detector as well as this node's graph.
    pub fn set_deadlock_detector(&self, detector: Arc<dyn DeadlockDetector>) {
        let _ = self.detector.set(detector);
    }

    /// Prepares to lead the keys in `[start, end)` (`end` empty: unbounded) after another
    /// replica led them (or, on a single node, after a restart): one-phase commits start above
    /// `now` (a fresh timestamp, above any read the previous leader served), writes may trust
    /// the write floors from `now` on, and in-memory pessimistic locks of earlier terms are
    /// dropped unless `locks` says they are current; then the locks that the leader of the
    /// term before `term` handed over ([`Storage::hand_over`]) are taken.
    pub fn start_leading(
        &self,
        start: &[u8],
        end: &[u8],
        now: Timestamp,
        term: u64,
        locks: LeaderLocks,
    ) {
        self.raise_max_read_ts(now);
        self.cm.raise_write_floors(now);
        if locks == LeaderLocks::Forget {
            self.cm.forget_pessimistic_locks(start, end);
            match crate::handover::take(&*self.engine, start, end, term) {
                Ok(handed) => self.cm.take_handed_over(handed),
                Err(e) => {
                    tracing::warn!(%e, "the locks the former leader handed over are unreadable")
                }
            }
        }
    }

    /// Before this node, leading `[start, end)` in `term`, transfers the leadership to another
    /// replica: stops granting pessimistic locks there and returns the write, to propose ahead
    /// of the transfer, that hands the locks held there to the next leader (see
    /// [`crate::handover`]).
    pub fn hand_over(&self, start: &[u8], end: &[u8], term: u64) -> WriteBatch {
        crate::handover::hand_over(&self.cm, start, end, term)
    }

    /// Refuses from now on every snapshot below `safe_point`. Called before versions below it
    /// are collected.
    pub fn raise_gc_safe_point(&self, safe_point: Timestamp) {
        self.gc_safe_point.fetch_max(safe_point.0, Ordering::SeqCst);
    }

    /// What compactions of the write CF may leave out below this storage's safe point (see
    /// [`crate::gc_filter`]), for the engine's
    /// [`set_garbage_filter`](strata_engine::RocksEngine::set_garbage_filter).
    pub fn garbage_filter(&self) -> Arc<dyn strata_engine::GarbageFilter> {
        Arc::new(crate::gc_filter::VersionGarbage {
            safe_point: self.gc_safe_point.clone(),
        })
    }

    pub fn gc_safe_point(&self) -> Timestamp {
        Timestamp(self.gc_safe_point.load(Ordering::SeqCst))
    }

    /// Fails a command whose snapshot `ts` lies below the GC safe point. A read checks after it
    /// read: a collection raises the safe point before it deletes, so a read that passes saw
    /// no deletion of versions it needed.
    // Hot path: every read.
    fn check_snapshot(&self, ts: Timestamp) -> Result<(), KvError> {
        let safe_point = self.gc_safe_point();
        if ts < safe_point {
            return Err(KvError::SnapshotTooOld { ts, safe_point });
        }
        Ok(())
    }

    /// Reads `keys` at `ts` unless a commit in flight at or below `ts` holds one of them, in
    /// which case it returns `None` at once: a caller on a thread that must not block (one
    /// that also carries Raft's messages, which that commit waits for) reads elsewhere.
    pub fn try_batch_get(
        &self,
        keys: &[Key],
        ts: Timestamp,
    ) -> Option<Result<Vec<Option<Value>>, KvError>> {
        for key in keys {
            if !self.cm.try_read_barrier(key, None, ts) {
                return None;
            }
        }
        let values = keys
            .iter()
            .map(|key| {
                self.check_read_lock(key, ts)?;
                self.reader().get(key, ts)
            })
            .collect();
        Some(self.check_snapshot(ts).and(values))
    }

    /// Whether the lock CF may hold a lock.
    fn may_have_locks(&self) -> bool {
        !self.counts_locks || self.persisted_locks.load(Ordering::SeqCst) > 0
    }

    /// Raises the floor of one-phase commit timestamps to `ts`. A KV node calls it with a fresh
    /// timestamp when it starts: reads served before a restart are not remembered, and a
    /// transaction of a SQL node that outlived the restart must not see its snapshot change.
    pub fn raise_max_read_ts(&self, ts: Timestamp) {
        self.cm.read_barrier(b"", Some(b""), ts);
    }

    pub fn engine(&self) -> &Arc<dyn Engine> {
        &self.engine
    }

    fn reader(&self) -> MvccReader<'_> {
        MvccReader::new(&*self.engine)
    }

    pub(crate) fn load_lock(&self, key: &[u8]) -> Result<Option<Lock>, KvError> {
        if !self.may_have_locks() {
            return Ok(None);
        }
        match self.engine.get(Cf::Lock, key).map_err(storage)? {
            Some(bytes) => Lock::decode(&bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Fails a read at `ts` that a prewrite lock of an older transaction blocks.
    fn check_read_lock(&self, key: &[u8], ts: Timestamp) -> Result<(), KvError> {
        match self.load_lock(key)? {
            Some(lock) if lock_blocks_read(&lock, ts) => Err(locked(key, &lock)),
            _ => Ok(()),
        }
    }

    fn check_scan_locks(&self, start: &[u8], end: &[u8], ts: Timestamp) -> Result<(), KvError> {
        if !self.may_have_locks() {
            return Ok(());
        }
        let upper = if end.is_empty() { None } else { Some(end) };
        let mut it = self.engine.iterator(Cf::Lock, start, upper);
        it.seek(start);
        while it.valid().map_err(storage)? {
            let lock = Lock::decode(it.value())?;
            if lock_blocks_read(&lock, ts) {
                return Err(locked(it.key(), &lock));
            }
            it.next();
        }
        Ok(())
    }

    /// Checks that `key` may be written by `start_ts`: no other transaction's lock, no commit
    /// newer than `conflict_ts`, (for an insert) no committed version, and (when
    /// `rollback_matters`) no rollback record of `start_ts`. The caller holds the key's latch.
    // Hot path: every write's conflict check.
    fn check_write(
        &self,
        key: &[u8],
        start_ts: Timestamp,
        conflict_ts: Timestamp,
        must_not_exist: bool,
        rollback_matters: bool,
    ) -> Result<(), KvError> {
        if let Some(lock) = self.load_lock(key)? {
            if lock.start_ts != start_ts {
                return Err(locked(key, &lock));
            }
        }
        // No record above conflict_ts in the key's latch slot: nothing newer to find.
        if !must_not_exist && !rollback_matters && !self.cm.may_have_written_since(key, conflict_ts)
        {
            return Ok(());
        }
        let history = self.reader().key_history(key, start_ts)?;
        if must_not_exist && history.exists {
            return Err(KvError::AlreadyExists { key: key.to_vec() });
        }
        if let Some(commit_ts) = history.newest_commit_ts {
            if commit_ts > conflict_ts {
                return Err(KvError::WriteConflict {
                    key: key.to_vec(),
                    start_ts,
                    conflict_commit_ts: commit_ts,
                });
            }
        }
        if history.own == Some(WriteKind::Rollback) {
            return Err(KvError::TxnAborted { start_ts });
        }
        Ok(())
    }

    /// Puts the commit record (and long value) of one mutation into `batch`, with the
    /// overlapped-rollback mark when it replaces another transaction's rollback record. The
    /// caller holds the key's latch.
    #[allow(clippy::too_many_arguments)]
    fn commit_mutation(
        &self,
        batch: &mut WriteBatch,
        key: &[u8],
        kind: WriteKind,
        value: Option<&[u8]>,
        start_ts: Timestamp,
        commit_ts: Timestamp,
        overlapped_rollback: bool,
    ) {
        let encoded = mvcc::encode_user_key(key);
        let short_value = match value {
            Some(v) if v.len() > SHORT_VALUE_MAX_BYTES => {
                batch.put(
                    Cf::Default,
                    mvcc::append_ts(encoded.clone(), start_ts),
                    v.to_vec(),
                );
                None
            }
            other => other,
        };
        let mut write = Write::new(kind, start_ts, short_value);
        write.overlapped_rollback = overlapped_rollback;
        self.cm.note_write(key, commit_ts);
        batch.put(
            Cf::Write,
            mvcc::append_ts(encoded, commit_ts),
            write.encode(),
        );
    }

    fn one_pc(&self, request: &PrewriteRequest, keys: &[Key]) -> Result<Timestamp, KvError> {
        let commit_ts = self
            .cm
            .begin_commit(keys, request.start_ts, request.for_update_ts);
        if let Err(e) = within_limit(request, commit_ts) {
            self.cm.end_commit(keys);
            return Err(e);
        }
        let mut batch = WriteBatch::new();
        let built = request.mutations.iter().try_for_each(|mutation| {
            let (kind, value) = match mutation {
                Mutation::Put(_, v) | Mutation::Insert(_, v) => {
                    (WriteKind::Put, Some(v.as_slice()))
                }
                Mutation::Delete(_) => (WriteKind::Delete, None),
                Mutation::Lock(_) => (WriteKind::Lock, None),
            };
            // Its commit_ts was not issued by the oracle: it may be another transaction's
            // start_ts, whose rollback record may sit where the commit record goes.
            let overlapped = self.rollback_at(mutation.key(), commit_ts)?;
            self.commit_mutation(
                &mut batch,
                mutation.key(),
                kind,
                value,
                request.start_ts,
                commit_ts,
                overlapped,
            );
            Ok(())
        });
        let result = built.and_then(|()| self.engine.write(&batch, true).map_err(storage));
        self.cm.end_commit(keys);
        result?;
        self.cm.unlock(keys, request.start_ts);
        Ok(commit_ts)
    }

    /// Commits or rolls back the lock of `start_ts` on one key.
    fn finish_key(
        &self,
        batch: &mut WriteBatch,
        key: &[u8],
        start_ts: Timestamp,
        commit_ts: Option<Timestamp>,
    ) -> Result<i64, KvError> {
        match self.load_lock(key)? {
            Some(lock) if lock.start_ts == start_ts => {
                match commit_ts {
                    Some(commit_ts) => {
                        let kind = match lock.kind {
                            LockKind::Put => WriteKind::Put,
                            LockKind::Delete => WriteKind::Delete,
                            LockKind::Lock => WriteKind::Lock,
                        };
                        // An async commit's commit_ts was not issued by the oracle: it may be
                        // another transaction's start_ts, whose rollback record may sit here.
                        let overlapped =
                            lock.async_commit.is_some() && self.rollback_at(key, commit_ts)?;
                        // A long value was written to the default CF at prewrite: it stays.
                        self.commit_mutation(
                            batch,
                            key,
                            kind,
                            lock.short_value.as_deref(),
                            start_ts,
                            commit_ts,
                            overlapped,
                        );
                    }
                    None => self.rollback_record(batch, key, start_ts)?,
                }
                batch.delete(Cf::Lock, key.to_vec());
                Ok(1)
            }
            _ => match (self.reader().txn_record(key, start_ts)?, commit_ts) {
                (Some((_, WriteKind::Rollback)), Some(commit_ts)) => {
                    tracing::warn!(key = ?key, %start_ts, %commit_ts, "commit of a rolled back key");
                    Err(KvError::TxnAborted { start_ts })
                }
                (Some((committed_at, kind)), None) if kind != WriteKind::Rollback => {
                    tracing::warn!(key = ?key, %start_ts, %committed_at, "rollback of a committed key");
                    Ok(0)
                }
                (Some(_), _) => Ok(0),
                (None, Some(commit_ts)) => {
                    tracing::warn!(key = ?key, %start_ts, %commit_ts, "commit of a key never locked");
                    Err(KvError::TxnAborted { start_ts })
                }
                (None, None) => {
                    self.rollback_record(batch, key, start_ts)?;
                    Ok(0)
                }
            },
        }
    }

    /// Whether a rollback record (or a record marked with one) sits at `key + ts`. The caller
    /// holds the key's latch.
    // Hot path: every one-phase commit, for each key.
    fn rollback_at(&self, key: &[u8], ts: Timestamp) -> Result<bool, KvError> {
        // No rollback record at or above `ts` in the key's slot: nothing to read.
        if !self.cm.may_have_rolled_back_since(key, ts) {
            return Ok(false);
        }
        let versioned = mvcc::append_ts(mvcc::encode_user_key(key), ts);
        Ok(
            match self.engine.get(Cf::Write, &versioned).map_err(storage)? {
                Some(record) => {
                    let write = Write::decode(&record)?;
                    write.kind == WriteKind::Rollback || write.overlapped_rollback
                }
                None => false,
            },
        )
    }

    /// Puts a rollback record at `key + start_ts`. Where a commit record of another
    /// transaction already sits there (a one-phase or async commit may choose a commit_ts
    /// equal to this start_ts), overwriting it would erase a committed write: that record gets
    /// the overlapped-rollback mark instead (as in TiKV), which the late prewrite of this
    /// transaction finds as its rollback.
    fn rollback_record(
        &self,
        batch: &mut WriteBatch,
        key: &[u8],
        start_ts: Timestamp,
    ) -> Result<(), KvError> {
        let versioned = mvcc::append_ts(mvcc::encode_user_key(key), start_ts);
        let record = match self.engine.get(Cf::Write, &versioned).map_err(storage)? {
            None => Write::new(WriteKind::Rollback, start_ts, None).encode(),
            Some(existing) => {
                let mut write = Write::decode(&existing)?;
                if write.start_ts == start_ts || write.overlapped_rollback {
                    return Ok(());
                }
                write.overlapped_rollback = true;
                write.encode()
            }
        };
        self.cm.note_write(key, start_ts);
        self.cm.note_rollback(key, start_ts);
        batch.put(Cf::Write, versioned, record);
        Ok(())
    }

    fn finish_keys(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
        commit_ts: Option<Timestamp>,
    ) -> Result<(), KvError> {
        let _latches = self.cm.latch(keys.iter());
        self.finish_latched_keys(keys, start_ts, commit_ts)
    }

    /// [`Storage::finish_keys`] for a caller that holds the latches of `keys`.
    fn finish_latched_keys(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
        commit_ts: Option<Timestamp>,
    ) -> Result<(), KvError> {
        let mut batch = WriteBatch::new();
        let mut released = 0;
        for key in keys {
            released += self.finish_key(&mut batch, key, start_ts, commit_ts)?;
        }
        self.engine.write(&batch, true).map_err(storage)?;
        self.persisted_locks.fetch_sub(released, Ordering::SeqCst);
        self.cm.unlock(keys, start_ts);
        Ok(())
    }

    /// The highest read timestamp served; one-phase commits choose commit_ts above it.
    pub fn max_read_ts(&self) -> Timestamp {
        self.cm.max_read_ts()
    }
}

/// Refuses a one-phase or async commit that would commit at `commit_ts`, past the request's
/// `max_commit_ts`.
fn within_limit(request: &PrewriteRequest, commit_ts: Timestamp) -> Result<(), KvError> {
    let max_commit_ts = request.max_commit_ts;
    if max_commit_ts == Timestamp::ZERO || commit_ts <= max_commit_ts {
        return Ok(());
    }
    Err(KvError::CommitTsTooLarge {
        commit_ts,
        max_commit_ts,
    })
}

/// The error for a key that holds another transaction's pessimistic lock: its time to live
/// in the [`LockInfo`] once that has passed (check the primary), zero before (wait).
fn pessimistic_locked(key: &[u8], lock: PessimisticLock) -> KvError {
    let ttl_ms = if lock.expired(strata_types::wall_clock_ms()) {
        lock.ttl_ms.max(1)
    } else {
        0
    };
    KvError::KeyIsLocked(LockInfo {
        key: key.to_vec(),
        primary: lock.primary,
        start_ts: lock.start_ts,
        ttl_ms,
    })
}

fn locked(key: &[u8], lock: &Lock) -> KvError {
    KvError::KeyIsLocked(LockInfo {
        key: key.to_vec(),
        primary: lock.primary.clone(),
        start_ts: lock.start_ts,
        ttl_ms: lock.ttl_ms,
    })
}

impl KvApi for Storage {
    // Hot path: point select.
    fn get(&self, key: &[u8], ts: Timestamp) -> Result<Option<Value>, KvError> {
        self.cm.read_barrier(key, None, ts);
        self.check_read_lock(key, ts)?;
        let value = self.reader().get(key, ts);
        self.check_snapshot(ts).and(value)
    }

    fn batch_get(&self, keys: &[Key], ts: Timestamp) -> Result<Vec<Option<Value>>, KvError> {
        keys.iter().map(|key| self.get(key, ts)).collect()
    }

    fn scan(&self, request: &ScanRequest) -> Result<Scanned, KvError> {
        let end = if request.end.is_empty() {
            None
        } else {
            Some(request.end.as_slice())
        };
        self.cm
            .read_barrier(&request.start, Some(end.unwrap_or(&[0xFF; 16])), request.ts);
        self.check_scan_locks(&request.start, &request.end, request.ts)?;
        let entries = self.reader().scan(
            &request.start,
            &request.end,
            request.ts,
            request.limit,
            request.reverse,
            request.keys_only,
        );
        self.check_snapshot(request.ts).and(entries)
    }

    fn pessimistic_lock(&self, request: &PessimisticLockRequest) -> Result<(), KvError> {
        self.pessimistic_lock_while(request, &|| true)
    }

    fn pessimistic_rollback(&self, keys: &[Key], start_ts: Timestamp) -> Result<(), KvError> {
        self.cm.unlock(keys, start_ts);
        Ok(())
    }

    // Hot path: every commit.
    fn prewrite(&self, request: &PrewriteRequest) -> Result<PrewriteResponse, KvError> {
        // Its conflict checks need the versions and rollback records that collection removes.
        self.check_snapshot(request.start_ts)?;
        let keys: Vec<Key> = request.mutations.iter().map(|m| m.key().to_vec()).collect();
        let _latches = self.cm.latch(keys.iter());
        let pessimistic = request.for_update_ts > Timestamp::ZERO;
        for (i, mutation) in request.mutations.iter().enumerate() {
            let key = mutation.key();
            let must_not_exist = matches!(mutation, Mutation::Insert(..));
            match self.cm.pessimistic_lock(key) {
                Some(lock) if lock.start_ts == request.start_ts => {
                    // An async-commit transaction counts as committed once every key is
                    // prewritten, so a key a reader already rolled back (checking the
                    // secondaries of an expired primary) must fail its late prewrite.
                    let async_commit = request.async_commit && !request.try_one_pc;
                    if must_not_exist || async_commit {
                        let history = self.reader().key_history(key, request.start_ts)?;
                        if must_not_exist && history.exists {
                            return Err(KvError::AlreadyExists { key: key.to_vec() });
                        }
                        if async_commit && history.own == Some(WriteKind::Rollback) {
                            return Err(KvError::TxnAborted {
                                start_ts: request.start_ts,
                            });
                        }
                    }
                }
                Some(lock) => return Err(pessimistic_locked(key, lock)),
                None => {
                    // A key this transaction locked, whose lock went with a change of leader,
                    // was read when it was locked: a commit after that is a conflict, even
                    // one before the transaction's latest for_update_ts.
                    let locked_at = request
                        .locked_at
                        .get(i)
                        .copied()
                        .filter(|ts| *ts > Timestamp::ZERO);
                    let conflict_ts = match locked_at {
                        Some(ts) => ts,
                        None if pessimistic => request.for_update_ts,
                        None => request.start_ts,
                    };
                    // A one-phase commit leaves no lock that another transaction could
                    // have rolled back, so no rollback record of its own can stand in its way,
                    // unless a key it locked lost that lock to a rollback (its time to live
                    // passed).
                    self.check_write(
                        key,
                        request.start_ts,
                        conflict_ts,
                        must_not_exist,
                        !request.try_one_pc || locked_at.is_some(),
                    )?;
                }
            }
        }
        if request.try_one_pc {
            let commit_ts = self.one_pc(request, &keys)?;
            return Ok(PrewriteResponse {
                one_pc_commit_ts: Some(commit_ts),
                min_commit_ts: None,
            });
        }
        // A retried async-commit prewrite (its answer was lost) finds its own locks: they keep
        // the min_commit_ts they were written with, since a reader may already have resolved
        // the transaction from it, and only the missing ones are written.
        let mut kept = Timestamp::ZERO;
        let mut missing = Vec::new();
        if request.async_commit {
            for (i, key) in keys.iter().enumerate() {
                match self.load_lock(key)? {
                    Some(lock) if lock.start_ts == request.start_ts => match lock.async_commit {
                        Some(a) => kept = kept.max(a.min_commit_ts),
                        None => missing.push(i),
                    },
                    _ => missing.push(i),
                }
            }
            if missing.is_empty() {
                self.cm.unlock(&keys, request.start_ts);
                return Ok(PrewriteResponse {
                    one_pc_commit_ts: None,
                    min_commit_ts: Some(kept),
                });
            }
        }
        // An async-commit lock's min_commit_ts lies above every read served here so far, and
        // reads at or above it wait until the lock is on disk (then they meet it).
        let min_commit_ts = request.async_commit.then(|| {
            self.cm
                .begin_commit(&keys, request.start_ts, request.for_update_ts)
        });
        if let Some(Err(e)) = min_commit_ts.map(|ts| within_limit(request, ts.max(kept))) {
            self.cm.end_commit(&keys);
            return Err(e);
        }
        let written = self.write_locks(request, min_commit_ts, &missing);
        if min_commit_ts.is_some() {
            self.cm.end_commit(&keys);
        }
        written?;
        self.cm.unlock(&keys, request.start_ts);
        Ok(PrewriteResponse {
            one_pc_commit_ts: None,
            min_commit_ts: min_commit_ts.map(|ts| ts.max(kept)),
        })
    }

    fn commit(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
        commit_ts: Timestamp,
    ) -> Result<(), KvError> {
        self.finish_keys(keys, start_ts, Some(commit_ts))
    }

    fn rollback(&self, keys: &[Key], start_ts: Timestamp) -> Result<(), KvError> {
        self.cm.unlock(keys, start_ts);
        self.finish_keys(keys, start_ts, None)
    }

    fn check_secondary_locks(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
    ) -> Result<SecondaryLocks, KvError> {
        let _latches = self.cm.latch(keys.iter());
        let mut result = SecondaryLocks::Locked {
            min_commit_ts: Timestamp::ZERO,
        };
        let mut missing = Vec::new();
        for key in keys {
            let lock = self.load_lock(key)?.filter(|l| l.start_ts == start_ts);
            if let Some(lock) = lock {
                let Some(async_commit) = &lock.async_commit else {
                    return Err(KvError::Storage(format!(
                        "transaction {start_ts} holds a lock without async commit on a secondary"
                    )));
                };
                result = result.merge(SecondaryLocks::Locked {
                    min_commit_ts: async_commit.min_commit_ts,
                });
                continue;
            }
            match self.reader().txn_record(key, start_ts)? {
                Some((_, WriteKind::Rollback)) => result = SecondaryLocks::RolledBack,
                Some((commit_ts, _)) => return Ok(SecondaryLocks::Committed { commit_ts }),
                None => missing.push(key.clone()),
            }
        }
        if !missing.is_empty() {
            // Never prewritten (or not yet): a rollback record, written under the same latches,
            // makes a late prewrite fail.
            let mut batch = WriteBatch::new();
            for key in &missing {
                self.rollback_record(&mut batch, key, start_ts)?;
            }
            self.engine.write(&batch, true).map_err(storage)?;
            self.cm.unlock(&missing, start_ts);
            result = SecondaryLocks::RolledBack;
        }
        Ok(result)
    }

    fn check_txn_status(
        &self,
        primary: &[u8],
        start_ts: Timestamp,
        current_ts: Timestamp,
        rollback_if_missing: bool,
    ) -> Result<TxnStatus, KvError> {
        self.txn_status(primary, start_ts, current_ts, rollback_if_missing)
    }

    fn txn_heart_beat(
        &self,
        primary: &[u8],
        start_ts: Timestamp,
        advise_lock_ttl_ms: u64,
    ) -> Result<u64, KvError> {
        let primary_key = [primary.to_vec()];
        let _latch = self.cm.latch(primary_key.iter());
        if let Some(ttl_ms) = self
            .cm
            .renew_pessimistic_lock(primary, start_ts, advise_lock_ttl_ms)
        {
            return Ok(ttl_ms);
        }
        match self.load_lock(primary)? {
            Some(mut lock) if lock.start_ts == start_ts => {
                if lock.ttl_ms < advise_lock_ttl_ms {
                    lock.ttl_ms = advise_lock_ttl_ms;
                    let mut batch = WriteBatch::new();
                    batch.put(Cf::Lock, primary.to_vec(), lock.encode());
                    self.engine.write(&batch, true).map_err(storage)?;
                }
                Ok(lock.ttl_ms)
            }
            _ => Err(KvError::TxnAborted { start_ts }),
        }
    }

    fn scan_lock(
        &self,
        start: &[u8],
        end: &[u8],
        max_ts: Timestamp,
        limit: usize,
    ) -> Result<Vec<LockInfo>, KvError> {
        let mut found = Vec::new();
        if !self.may_have_locks() {
            return Ok(found);
        }
        let upper = if end.is_empty() { None } else { Some(end) };
        let mut it = self.engine.iterator(Cf::Lock, start, upper);
        it.seek(start);
        while found.len() < limit && it.valid().map_err(storage)? {
            let lock = Lock::decode(it.value())?;
            if lock.start_ts <= max_ts {
                if let KvError::KeyIsLocked(info) = locked(it.key(), &lock) {
                    found.push(info);
                }
            }
            it.next();
        }
        Ok(found)
    }

    fn resolve_lock(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
        commit_ts: Option<Timestamp>,
    ) -> Result<(), KvError> {
        self.finish_keys(keys, start_ts, commit_ts)
    }
}

impl Storage {
    /// Writes the locks of a prewrite (async-commit locks when `min_commit_ts` is set; then
    /// only those of the mutations at `only`, whose locks are missing).
    fn write_locks(
        &self,
        request: &PrewriteRequest,
        min_commit_ts: Option<Timestamp>,
        only: &[usize],
    ) -> Result<(), KvError> {
        let mut batch = WriteBatch::new();
        let mut written = 0;
        for (i, mutation) in request.mutations.iter().enumerate() {
            if min_commit_ts.is_some() && !only.contains(&i) {
                continue;
            }
            written += 1;
            let (kind, value) = match mutation {
                Mutation::Put(_, v) | Mutation::Insert(_, v) => (LockKind::Put, Some(v)),
                Mutation::Delete(_) => (LockKind::Delete, None),
                Mutation::Lock(_) => (LockKind::Lock, None),
            };
            let short_value = match value {
                Some(v) if v.len() > SHORT_VALUE_MAX_BYTES => {
                    let data_key =
                        mvcc::append_ts(mvcc::encode_user_key(mutation.key()), request.start_ts);
                    batch.put(Cf::Default, data_key, v.clone());
                    None
                }
                other => other.cloned(),
            };
            let async_commit = min_commit_ts.map(|min_commit_ts| AsyncCommit {
                min_commit_ts,
                secondaries: if mutation.key() == request.primary.as_slice() {
                    request.secondaries.clone()
                } else {
                    Vec::new()
                },
            });
            let lock = Lock {
                kind,
                primary: request.primary.clone(),
                start_ts: request.start_ts,
                for_update_ts: request.for_update_ts,
                ttl_ms: request.lock_ttl_ms,
                short_value,
                async_commit,
            };
            batch.put(Cf::Lock, mutation.key().to_vec(), lock.encode());
        }
        self.persisted_locks.fetch_add(written, Ordering::SeqCst);
        if let Err(e) = self.engine.write(&batch, true) {
            self.persisted_locks.fetch_sub(written, Ordering::SeqCst);
            return Err(storage(e));
        }
        Ok(())
    }

    fn txn_status(
        &self,
        primary: &[u8],
        start_ts: Timestamp,
        current_ts: Timestamp,
        rollback_if_missing: bool,
    ) -> Result<TxnStatus, KvError> {
        // The status is decided and a rollback written under the primary's latch: the
        // transaction's own commit of the primary takes it too, so an expired lock cannot be
        // committed between the decision and the rollback (which would then find the commit
        // record and leave it, while the caller rolled back the secondaries).
        let primary_key = [primary.to_vec()];
        let _latch = self.cm.latch(primary_key.iter());
        if let Some(lock) = self.cm.pessimistic_lock(primary) {
            if lock.start_ts == start_ts {
                let expires_ms = start_ts.physical_ms().saturating_add(lock.ttl_ms);
                if current_ts.physical_ms() < expires_ms {
                    return Ok(TxnStatus::Locked {
                        ttl_ms: expires_ms - current_ts.physical_ms(),
                    });
                }
                // No heartbeat renewed it: the owner is gone. The rollback record makes its
                // prewrite fail, should it come back after all.
                self.finish_latched_keys(&primary_key, start_ts, None)?;
                return Ok(TxnStatus::RolledBack);
            }
        }
        if let Some(lock) = self.load_lock(primary)? {
            if lock.start_ts == start_ts {
                let expires_ms = start_ts.physical_ms() + lock.ttl_ms;
                if current_ts.physical_ms() < expires_ms {
                    return Ok(TxnStatus::Locked {
                        ttl_ms: expires_ms - current_ts.physical_ms(),
                    });
                }
                // An async-commit transaction may have committed without its primary knowing:
                // the caller decides from the secondaries.
                if let Some(async_commit) = lock.async_commit {
                    return Ok(TxnStatus::Undecided {
                        min_commit_ts: async_commit.min_commit_ts,
                        secondaries: async_commit.secondaries,
                    });
                }
                self.finish_latched_keys(&primary_key, start_ts, None)?;
                return Ok(TxnStatus::RolledBack);
            }
        }
        match self.reader().txn_record(primary, start_ts)? {
            Some((commit_ts, kind)) if kind != WriteKind::Rollback => {
                Ok(TxnStatus::Committed { commit_ts })
            }
            Some(_) => Ok(TxnStatus::RolledBack),
            // The primary's prewrite may still be on its way.
            None if !rollback_if_missing => Ok(TxnStatus::Locked { ttl_ms: 0 }),
            None => {
                self.finish_latched_keys(&primary_key, start_ts, None)?;
                Ok(TxnStatus::RolledBack)
            }
        }
    }
}

/// Whether `lock` keeps a read at `ts` from reading past it: a lock of a later transaction, a
/// lock that only locks, and an async-commit lock whose transaction commits above `ts` do not.
fn lock_blocks_read(lock: &Lock, ts: Timestamp) -> bool {
    lock.start_ts <= ts
        && lock.kind != LockKind::Lock
        && lock
            .async_commit
            .as_ref()
            .is_none_or(|a| a.min_commit_ts <= ts)
}
