//! One transaction: its snapshot, its write buffer and its commit.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Bound;
use std::sync::Arc;
use std::time::{Duration, Instant};

use strata_kvapi::{
    KvError, LockInfo, Mutation, PessimisticLockRequest, PrewriteRequest, ScanRequest, Scanned,
};
use strata_types::{Key, Timestamp, Value};

use crate::heartbeat::{Heartbeat, MANAGED_LOCK_TTL_MS};
use crate::metrics::{self, CommitKind};
use crate::resolver::Resolution;
use crate::{TxnClient, TxnError};

/// Lifetime of a prewrite lock before other transactions may roll it back.
pub const LOCK_TTL_MS: u64 = 3_000;
/// The most keys a transaction commits with async commit (more keys make the primary's lock,
/// which lists them, and a reader's check of them, too large).
pub const ASYNC_COMMIT_KEYS_MAX: usize = 256;
/// The longest a pessimistic lock wait runs before [`Transaction::lock_keys`] asks
/// whether to stop (how soon a killed statement leaves a lock wait).
pub const LOCK_WAIT_SLICE: Duration = Duration::from_millis(250);
const READ_LOCK_BACKOFF_MS: u64 = 5;
const READ_LOCK_BACKOFF: Duration = Duration::from_millis(READ_LOCK_BACKOFF_MS);
/// How many times a read backs off for a lock of a running transaction: enough to outlast a
/// lock's TTL, after which the lock's transaction is rolled back (if it did not finish).
const READ_LOCK_RETRIES_MAX: usize = ((LOCK_TTL_MS + 1_000) / READ_LOCK_BACKOFF_MS) as usize;
/// How many times a prewrite backs off (one second in all) for another transaction's
/// pessimistic lock, which lives as long as that transaction, before it fails. (An autocommit
/// statement then runs again in pessimistic mode, where it waits as long as
/// `innodb_lock_wait_timeout` says.)
const PESSIMISTIC_LOCK_BACKOFFS_MAX: usize = 200;
/// How many times the commit of a primary whose answer was lost is sent.
const PRIMARY_COMMIT_ATTEMPTS: usize = 3;
const PRIMARY_COMMIT_PAUSE: Duration = Duration::from_millis(100);

/// Optimistic transactions detect conflicts at commit; pessimistic ones lock rows as their
/// statements write them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnMode {
    Optimistic,
    Pessimistic,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum BufferedOp {
    Put(Value),
    /// A put of a key presumed absent; the commit fails if it exists.
    Insert(Value),
    Delete,
    /// Locked by `SELECT … FOR UPDATE`, not written.
    Lock,
}

/// The buffered writes of a transaction at one point (SQL's SAVEPOINT).
#[derive(Clone, Debug)]
pub struct Savepoint {
    buffer: BTreeMap<Key, BufferedOp>,
}

/// A transaction in progress. Dropping it without commit rolls it back.
pub struct Transaction {
    client: TxnClient,
    start_ts: Timestamp,
    mode: TxnMode,
    for_update_ts: Timestamp,
    /// Reads of the current statement use `for_update_ts` (a pessimistic "current read").
    current_read: bool,
    buffer: BTreeMap<Key, BufferedOp>,
    /// Undo entries of the running statement: the key and its buffer entry before it.
    statement_undo: Vec<(Key, Option<BufferedOp>)>,
    statement_locked_from: usize,
    /// Keys locked pessimistically, in locking order (statements undo their suffix).
    locked: Vec<Key>,
    /// The same keys, each with the `for_update_ts` it was locked (and read) at.
    locked_at: HashMap<Key, Timestamp>,
    primary: Option<Key>,
    finished: bool,
    /// Whether a commit whose keys all lie in one region commits in one phase
    /// (`tidb_enable_1pc`).
    one_pc: bool,
    /// Whether a commit of other transactions (up to `ASYNC_COMMIT_KEYS_MAX` (256) keys) is done
    /// once every key is prewritten (`tidb_enable_async_commit`).
    async_commit: bool,
    /// The latest timestamp the commit may take (ZERO: any); see
    /// [`Transaction::set_max_commit_ts`].
    max_commit_ts: Timestamp,
    /// Keeps the snapshot registered for garbage collection (not for a read of the newest
    /// data).
    _snapshot: Option<crate::SnapshotGuard>,
    /// Raised when the statement using the transaction is stopped: waits for other
    /// transactions' locks end early.
    interrupt: Option<Arc<dyn Interrupt>>,
    /// Keeps the primary's lock alive while the transaction holds locks.
    heartbeat: Option<Heartbeat>,
    /// What its reads asked of storage so far.
    read: ReadStats,
}

/// What a transaction's reads asked of storage: for EXPLAIN ANALYZE and the slow log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Read requests (each get, batch get, scan or batch of scans, and each retry after
    /// resolving a lock): TiDB's Request_count.
    pub requests: u64,
    /// The time those requests took: TiDB's KV_total.
    pub time: Duration,
    /// The entries scans returned from storage: TiDB's Process_keys. Point reads are not
    /// counted.
    pub keys: u64,
    /// The stored versions those scans read to find them (old versions and deletions
    /// included): TiDB's Total_keys.
    pub versions: u64,
}

impl ReadStats {
    /// What was asked after `earlier` (figures of the same transaction).
    pub fn since(&self, earlier: &ReadStats) -> ReadStats {
        ReadStats {
            requests: self.requests.saturating_sub(earlier.requests),
            time: self.time.saturating_sub(earlier.time),
            keys: self.keys.saturating_sub(earlier.keys),
            versions: self.versions.saturating_sub(earlier.versions),
        }
    }

    /// Adds `other`'s figures to these.
    pub fn add(&mut self, other: &ReadStats) {
        self.requests += other.requests;
        self.time += other.time;
        self.keys += other.keys;
        self.versions += other.versions;
    }

    fn count(&mut self, scanned: &Scanned) {
        self.keys += scanned.pairs.len() as u64;
        self.versions += scanned.versions;
    }
}

/// Says whether the statement using a transaction was stopped (killed, or out of time).
pub trait Interrupt: Send + Sync {
    fn interrupted(&self) -> bool;
}

impl Transaction {
    pub(crate) fn new(client: TxnClient, start_ts: Timestamp, mode: TxnMode) -> Transaction {
        let snapshot = (start_ts != Timestamp::MAX).then(|| client.open_snapshot(start_ts));
        Transaction {
            _snapshot: snapshot,
            interrupt: None,
            heartbeat: None,
            read: ReadStats::default(),
            client,
            start_ts,
            mode,
            for_update_ts: start_ts,
            current_read: false,
            one_pc: true,
            async_commit: true,
            max_commit_ts: Timestamp::ZERO,
            buffer: BTreeMap::new(),
            statement_undo: Vec::new(),
            statement_locked_from: 0,
            locked: Vec::new(),
            locked_at: HashMap::new(),
            primary: None,
            finished: false,
        }
    }

    pub fn start_ts(&self) -> Timestamp {
        self.start_ts
    }

    pub fn mode(&self) -> TxnMode {
        self.mode
    }

    /// Whether the transaction has written or locked anything.
    pub fn is_dirty(&self) -> bool {
        !self.buffer.is_empty() || !self.locked.is_empty()
    }

    /// Starts a statement. A writing statement of a pessimistic transaction reads at a fresh
    /// `for_update_ts` so that it sees (and locks) the newest committed rows.
    pub fn begin_statement(&mut self, current_read: bool) -> Result<(), TxnError> {
        self.statement_undo.clear();
        self.statement_locked_from = self.locked.len();
        self.current_read = current_read && self.mode == TxnMode::Pessimistic;
        if self.current_read {
            self.for_update_ts = self.client.current_ts()?;
        }
        Ok(())
    }

    /// Marks the writes made so far, to go back to with [`Transaction::rollback_to`].
    pub fn savepoint(&self) -> Savepoint {
        Savepoint {
            buffer: self.buffer.clone(),
        }
    }

    /// Undoes the writes made since `savepoint`. Keys locked since stay locked, as InnoDB
    /// keeps the row locks of a rolled-back part of a transaction, and are committed as locks.
    pub fn rollback_to(&mut self, savepoint: &Savepoint) {
        let mut buffer = savepoint.buffer.clone();
        for key in &self.locked {
            buffer.entry(key.clone()).or_insert(BufferedOp::Lock);
        }
        self.buffer = buffer;
        self.statement_undo.clear();
        self.statement_locked_from = self.locked.len();
        // A primary among the undone writes goes with them (a locked one is still buffered).
        if self
            .primary
            .as_ref()
            .is_some_and(|p| !self.buffer.contains_key(p))
        {
            self.primary = None;
        }
    }

    /// Undoes the buffered writes and locks of the running statement.
    pub fn rollback_statement(&mut self) {
        while let Some((key, previous)) = self.statement_undo.pop() {
            match previous {
                Some(op) => self.buffer.insert(key, op),
                None => self.buffer.remove(&key),
            };
        }
        if self.locked.len() > self.statement_locked_from {
            let released: Vec<Key> = self.locked.drain(self.statement_locked_from..).collect();
            for key in &released {
                self.locked_at.remove(key);
            }
            let _ = self
                .client
                .kv()
                .pessimistic_rollback(&released, self.start_ts);
        }
        // A primary the statement wrote or locked first goes with it: the next key chosen
        // must be one the commit writes (and, pessimistic, one that is locked).
        if self
            .primary
            .as_ref()
            .is_some_and(|p| !self.buffer.contains_key(p))
        {
            self.primary = None;
        }
    }

    /// The read requests this transaction sent to storage so far.
    pub fn reads(&self) -> u64 {
        self.read.requests
    }

    /// What this transaction's reads asked of storage so far.
    pub fn read_stats(&self) -> ReadStats {
        self.read
    }

    /// The snapshot the running statement reads.
    pub fn read_ts(&self) -> Timestamp {
        if self.current_read {
            self.for_update_ts
        } else {
            self.start_ts
        }
    }

    /// Returns the value of `key` as this transaction sees it.
    // Hot path: point select.
    pub fn get(&mut self, key: &[u8]) -> Result<Option<Value>, TxnError> {
        match self.buffer.get(key) {
            Some(BufferedOp::Put(v) | BufferedOp::Insert(v)) => return Ok(Some(v.clone())),
            Some(BufferedOp::Delete) => return Ok(None),
            Some(BufferedOp::Lock) | None => {}
        }
        let ts = self.read_ts();
        self.with_lock_resolution(|kv| kv.get(key, ts))
    }

    /// Returns the values of `keys`, in order.
    pub fn batch_get(&mut self, keys: &[Key]) -> Result<Vec<Option<Value>>, TxnError> {
        // Keys only locked (not written) by this transaction are read from storage too.
        let missing: Vec<Key> = keys
            .iter()
            .filter(|k| matches!(self.buffer.get(*k), None | Some(BufferedOp::Lock)))
            .cloned()
            .collect();
        let ts = self.read_ts();
        let fetched = if missing.is_empty() {
            Vec::new()
        } else {
            self.with_lock_resolution(|kv| kv.batch_get(&missing, ts))?
        };
        let fetched = missing.into_iter().zip(fetched).collect::<BTreeMap<_, _>>();
        Ok(keys
            .iter()
            .map(|k| match self.buffer.get(k) {
                Some(BufferedOp::Put(v) | BufferedOp::Insert(v)) => Some(v.clone()),
                Some(BufferedOp::Delete) => None,
                // A key asked for twice gets its value twice.
                _ => fetched.get(k).cloned().flatten(),
            })
            .collect())
    }

    /// Returns up to `limit` entries of `[start, end)` as this transaction sees them.
    pub fn scan(
        &mut self,
        start: &[u8],
        end: &[u8],
        limit: usize,
        reverse: bool,
    ) -> Result<Vec<(Key, Value)>, TxnError> {
        let Some(planned) = self.plan_scan(start, end, limit, reverse) else {
            return Ok(Vec::new());
        };
        let stored = self.with_lock_resolution(|kv| kv.scan(&planned.request))?;
        self.read.count(&stored);
        Ok(planned.merge(stored.pairs))
    }

    /// Forward scans of several ranges, each up to `limit` entries, as this transaction sees
    /// them; the store reads those of one region together.
    pub fn scan_many(
        &mut self,
        ranges: &[(Key, Key)],
        limit: usize,
    ) -> Result<Vec<Vec<(Key, Value)>>, TxnError> {
        let planned: Vec<Option<PlannedScan>> = ranges
            .iter()
            .map(|(start, end)| self.plan_scan(start, end, limit, false))
            .collect();
        let requests: Vec<ScanRequest> = planned
            .iter()
            .flatten()
            .map(|p| p.request.clone())
            .collect();
        let stored = if requests.is_empty() {
            Vec::new()
        } else {
            self.with_lock_resolution(|kv| kv.batch_scan(&requests))?
        };
        for scanned in &stored {
            self.read.count(scanned);
        }
        let mut stored = stored.into_iter().map(|s| s.pairs);
        Ok(planned
            .into_iter()
            .map(|p| match p {
                Some(p) => p.merge(stored.next().unwrap_or_default()),
                None => Vec::new(),
            })
            .collect())
    }

    /// The request for a scan of `[start, end)` and the writes of this transaction in it, or
    /// None for an empty range (a contradictory WHERE, e.g. `id > 10 AND id < 5`).
    fn plan_scan(
        &self,
        start: &[u8],
        end: &[u8],
        limit: usize,
        reverse: bool,
    ) -> Option<PlannedScan> {
        if !end.is_empty() && start >= end {
            return None;
        }
        let upper = if end.is_empty() {
            Bound::Unbounded
        } else {
            Bound::Excluded(end)
        };
        let buffered: Vec<(Key, BufferedOp)> = self
            .buffer
            .range::<[u8], _>((Bound::Included(start), upper))
            .filter(|(_, op)| **op != BufferedOp::Lock)
            .map(|(k, op)| (k.clone(), op.clone()))
            .collect();
        Some(PlannedScan {
            request: ScanRequest {
                start: start.to_vec(),
                end: end.to_vec(),
                limit: limit.saturating_add(buffered.len()),
                ts: self.read_ts(),
                reverse,
                keys_only: false,
            },
            buffered,
            limit,
        })
    }

    fn buffer_op(&mut self, key: Key, op: BufferedOp) {
        // A pessimistic transaction's primary is its first locked key (see `lock_keys`).
        if self.primary.is_none() && self.mode == TxnMode::Optimistic {
            self.primary = Some(key.clone());
        }
        let previous = self.buffer.insert(key.clone(), op);
        self.statement_undo.push((key, previous));
    }

    pub fn put(&mut self, key: Key, value: Value) {
        self.buffer_op(key, BufferedOp::Put(value));
    }

    /// Writes a key the caller presumes absent, without reading it: the commit fails with
    /// `AlreadyExists` if a committed version exists. Returns false (and writes nothing) when
    /// this transaction already wrote the key, so the caller must check it by reading.
    pub fn insert_new(&mut self, key: Key, value: Value) -> bool {
        if self.buffer.contains_key(&key) {
            return false;
        }
        self.buffer_op(key, BufferedOp::Insert(value));
        true
    }

    /// Whether this transaction wrote or locked `key`.
    pub fn is_buffered(&self, key: &[u8]) -> bool {
        self.buffer.contains_key(key)
    }

    pub fn delete(&mut self, key: Key) {
        self.buffer_op(key, BufferedOp::Delete);
    }

    /// Locks keys against other writers until commit. Pessimistic transactions lock at once
    /// (waiting up to `wait_timeout_ms`); optimistic ones check the keys at commit.
    /// The wait ends as [`TxnError::Interrupted`] within [`LOCK_WAIT_SLICE`] of the
    /// transaction's [`Interrupt`] being raised.
    pub fn lock_keys(&mut self, keys: Vec<Key>, wait_timeout_ms: u64) -> Result<(), TxnError> {
        let mut fresh = HashSet::with_capacity(keys.len());
        let keys: Vec<Key> = keys
            .into_iter()
            .filter(|k| !self.locked_at.contains_key(k) && fresh.insert(k.clone()))
            .collect();
        if keys.is_empty() {
            return Ok(());
        }
        if self.mode == TxnMode::Pessimistic {
            let primary = self.primary.clone().unwrap_or_else(|| keys[0].clone());
            let request = PessimisticLockRequest {
                keys: keys.clone(),
                primary: primary.clone(),
                start_ts: self.start_ts,
                for_update_ts: self.for_update_ts,
                wait_timeout_ms,
                lock_ttl_ms: self.start_ts.elapsed_ms() + MANAGED_LOCK_TTL_MS,
            };
            let started = Instant::now();
            let locked = self.lock_in_slices(&request);
            metrics::locked(started.elapsed());
            locked?;
            // The request locked the primary itself when there was none: its lock lives
            // `lock_ttl_ms`. (Other requests leave the primary's lock as it is.)
            if self.primary.is_none() {
                self.keep_alive(&primary, request.lock_ttl_ms);
            }
            self.primary = Some(primary);
            self.locked.extend(keys.iter().cloned());
            self.locked_at
                .extend(keys.iter().map(|k| (k.clone(), self.for_update_ts)));
        }
        for key in keys {
            if !self.buffer.contains_key(&key) {
                self.buffer_op(key, BufferedOp::Lock);
            }
        }
        Ok(())
    }

    /// Asks the KV layer for `request`'s locks, waiting at most [`LOCK_WAIT_SLICE`] per ask
    /// until its whole wait is spent or the transaction is interrupted.
    ///
    /// A key may hold the lock of a transaction that is committing (its locks become commit
    /// records in the background, or after a failure are left for others to resolve), or a
    /// pessimistic lock past its time to live (its owner may be gone): the lock is resolved
    /// from its primary (or waited for, when the primary says its transaction still runs),
    /// and the keys asked for again.
    fn lock_in_slices(&self, request: &PessimisticLockRequest) -> Result<(), TxnError> {
        let deadline = Instant::now() + Duration::from_millis(request.wait_timeout_ms);
        let slice_ms = LOCK_WAIT_SLICE.as_millis() as u64;
        let mut slice = request.clone();
        let mut resolved = 0;
        loop {
            let left_ms = deadline
                .saturating_duration_since(Instant::now())
                .as_millis() as u64;
            slice.wait_timeout_ms = left_ms.min(slice_ms);
            match self.client.kv().pessimistic_lock(&slice) {
                Err(KvError::LockWaitTimeout { .. }) if left_ms > slice_ms => {
                    if self.interrupted() {
                        return Err(TxnError::Interrupted);
                    }
                }
                Err(KvError::KeyIsLocked(lock)) if resolved < READ_LOCK_RETRIES_MAX => {
                    if self.interrupted() {
                        return Err(TxnError::Interrupted);
                    }
                    resolved += 1;
                    if self.resolve(&lock)? && left_ms == 0 {
                        return Err(KvError::LockWaitTimeout { key: lock.key }.into());
                    }
                }
                // Locks granted to a statement stopped meanwhile are not used: it fails, and
                // its locks go with its undo.
                Ok(()) if self.interrupted() => return Err(TxnError::Interrupted),
                result => return Ok(result?),
            }
        }
    }

    /// Registers the transaction for heartbeats, or tells them that its primary's lock was
    /// (re)written to live `ttl_ms` past start_ts.
    fn keep_alive(&mut self, primary: &[u8], ttl_ms: u64) {
        match &self.heartbeat {
            Some(heartbeat) => heartbeat.update(primary, ttl_ms),
            None => {
                self.heartbeat = Some(self.client.heartbeats().register(
                    self.start_ts,
                    primary.to_vec(),
                    ttl_ms,
                ))
            }
        }
    }

    /// Makes waits for other transactions' locks (lock waits, the backoffs of reads and
    /// commits that meet a running transaction's lock) end as [`TxnError::Interrupted`] once
    /// `interrupt` is raised.
    pub fn set_interrupt(&mut self, interrupt: Arc<dyn Interrupt>) {
        self.interrupt = Some(interrupt);
    }

    fn interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| i.interrupted())
    }

    /// Lets a commit whose keys all lie in one region commit in one phase (the default), or
    /// makes every commit use two.
    pub fn set_one_pc(&mut self, enabled: bool) {
        self.one_pc = enabled;
    }

    /// Lets a commit of up to `ASYNC_COMMIT_KEYS_MAX` (256) keys that cannot commit in one phase
    /// finish once its keys are prewritten (the default), or makes it commit its primary first.
    pub fn set_async_commit(&mut self, enabled: bool) {
        self.async_commit = enabled;
    }

    /// Makes a commit fail with [`KvError::CommitTsTooLarge`], writing nothing that stays, if
    /// its commit timestamp would be later than `max_commit_ts` (ZERO: no limit). A SQL node of
    /// a cluster passes the end of its schema lease: schema changes stop waiting for a node
    /// that has not reported for a lease, so its writes must commit before they go on.
    pub fn set_max_commit_ts(&mut self, max_commit_ts: Timestamp) {
        self.max_commit_ts = max_commit_ts;
    }

    /// Commits the buffered writes; returns the commit timestamp (start_ts when read-only).
    // Hot path: every write transaction.
    pub fn commit(self) -> Result<Timestamp, TxnError> {
        let started = Instant::now();
        let mut kind = CommitKind::TwoPc;
        let start_ts = self.start_ts;
        let result = self.commit_as(&mut kind);
        match &result {
            Ok(_) => metrics::committed(kind, started.elapsed()),
            Err(e) => {
                if let TxnError::Kv(KvError::CommitTsTooLarge { .. }) = e {
                    tracing::warn!(start_ts = start_ts.0, %e, "commit refused: too late");
                }
                metrics::commit_failed()
            }
        }
        result
    }

    /// [`Transaction::commit`], saying in `kind` how it committed.
    fn commit_as(mut self, kind: &mut CommitKind) -> Result<Timestamp, TxnError> {
        self.finished = true;
        // A statement stopped before its commit (an autocommit write killed while it waited)
        // must not commit.
        if self.interrupted() {
            self.release_pessimistic_locks();
            return Err(TxnError::Interrupted);
        }
        if self.buffer.is_empty() {
            self.release_pessimistic_locks();
            *kind = CommitKind::ReadOnly;
            return Ok(self.start_ts);
        }
        let buffer = std::mem::take(&mut self.buffer);
        // The primary must be among the keys prewritten: readers that meet a secondary lock
        // decide the transaction from it. A pessimistic one prefers a locked key, whose lock
        // tells those readers that the transaction still runs before its prewrite lands.
        let primary = match &self.primary {
            Some(p) if buffer.contains_key(p) => p.clone(),
            _ => self
                .locked
                .iter()
                .find(|k| buffer.contains_key(*k))
                .unwrap_or_else(|| buffer.keys().next().expect("non-empty"))
                .clone(),
        };
        let mutations: Vec<Mutation> = buffer
            .into_iter()
            .map(|(k, op)| match op {
                BufferedOp::Put(v) => Mutation::Put(k, v),
                BufferedOp::Insert(v) => Mutation::Insert(k, v),
                BufferedOp::Delete => Mutation::Delete(k),
                BufferedOp::Lock => Mutation::Lock(k),
            })
            .collect();
        let keys: Vec<Key> = mutations.iter().map(|m| m.key().to_vec()).collect();
        let async_commit = self.async_commit && keys.len() <= ASYNC_COMMIT_KEYS_MAX;
        let locked_at = if self.mode == TxnMode::Pessimistic {
            keys.iter()
                .map(|k| self.locked_at.get(k).copied().unwrap_or(Timestamp::ZERO))
                .collect()
        } else {
            Vec::new()
        };
        let request = PrewriteRequest {
            mutations,
            primary: primary.clone(),
            start_ts: self.start_ts,
            for_update_ts: if self.mode == TxnMode::Pessimistic {
                self.for_update_ts
            } else {
                Timestamp::ZERO
            },
            locked_at,
            // A lock's time to live counts from start_ts: a transaction that ran long before
            // its commit gets that time on top, as TiDB does, so its locks are not taken for
            // a crashed client's while it commits.
            lock_ttl_ms: LOCK_TTL_MS + self.start_ts.elapsed_ms(),
            try_one_pc: self.one_pc,
            async_commit,
            secondaries: if async_commit {
                keys.iter().filter(|k| **k != primary).cloned().collect()
            } else {
                Vec::new()
            },
            max_commit_ts: self.max_commit_ts,
        };
        // A commit slowed past its locks' time to live (a KV node failing over) keeps them.
        self.keep_alive(&primary, request.lock_ttl_ms);
        // A key may still hold the lock of a transaction that committed but has not yet
        // committed that key (a secondary): resolve it from its primary and prewrite again.
        // A pessimistic lock belongs to a transaction still running: wait for it instead.
        let mut prewritten = self.client.kv().prewrite(&request);
        let mut pessimistic_backoffs = 0;
        for _ in 0..READ_LOCK_RETRIES_MAX {
            let Err(KvError::KeyIsLocked(lock)) = &prewritten else {
                break;
            };
            if lock.ttl_ms == 0 {
                pessimistic_backoffs += 1;
                if pessimistic_backoffs > PESSIMISTIC_LOCK_BACKOFFS_MAX {
                    break;
                }
                if self.interrupted() {
                    self.release_pessimistic_locks();
                    return Err(TxnError::Interrupted);
                }
                strata_fiber::sleep(READ_LOCK_BACKOFF);
            } else if let Err(e) = self.resolve(lock) {
                prewritten = Err(match e {
                    TxnError::Kv(e) => e,
                    other => {
                        self.release_pessimistic_locks();
                        return Err(other);
                    }
                });
                break;
            }
            prewritten = self.client.kv().prewrite(&request);
        }
        let response = match prewritten {
            Ok(response) => response,
            Err(e) => {
                // A prewrite checks every key before it writes any, so a failed one left nothing
                // behind. (A rollback here would write rollback records at start_ts, which can
                // land on a key another transaction committed at that very timestamp.)
                self.release_pessimistic_locks();
                // A one-phase commit, or an async commit whose every key may be prewritten, is
                // the commit itself: without its answer the outcome is unknown.
                let unknown = match &e {
                    KvError::Undetermined(_) => true,
                    KvError::Storage(_) | KvError::Unavailable(_) => async_commit,
                    _ => false,
                };
                return Err(if unknown {
                    self.undetermined(e)
                } else {
                    e.into()
                });
            }
        };
        if let Some(commit_ts) = response.one_pc_commit_ts {
            *kind = CommitKind::OnePc;
            return Ok(commit_ts);
        }
        if let Some(commit_ts) = response.min_commit_ts {
            *kind = CommitKind::AsyncCommit;
            // Every key is prewritten: the transaction is committed, at the largest
            // min_commit_ts; its locks are turned into commit records in the background.
            self.client
                .secondaries()
                .commit(keys, self.start_ts, commit_ts);
            return Ok(commit_ts);
        }
        let commit_ts = self.client.current_ts()?;
        if self.max_commit_ts != Timestamp::ZERO && commit_ts > self.max_commit_ts {
            // Not committed yet: roll the prewritten locks back (readers would do it too).
            let _ = self.client.kv().rollback(&keys, self.start_ts);
            return Err(KvError::CommitTsTooLarge {
                commit_ts,
                max_commit_ts: self.max_commit_ts,
            }
            .into());
        }
        self.commit_primary(&primary, commit_ts)?;
        let secondaries: Vec<Key> = keys.into_iter().filter(|k| *k != primary).collect();
        if !secondaries.is_empty() {
            // The transaction is committed once the primary is.
            self.client
                .secondaries()
                .commit(secondaries, self.start_ts, commit_ts);
        }
        Ok(commit_ts)
    }

    /// Commits the primary: the moment the transaction commits. A commit whose answer was lost
    /// is sent again (committing a committed key changes nothing) a few times; a rollback
    /// record (a reader found the lock expired) fails it for sure; any other failure leaves
    /// the outcome unknown.
    fn commit_primary(&self, primary: &Key, commit_ts: Timestamp) -> Result<(), TxnError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self
                .client
                .kv()
                .commit(std::slice::from_ref(primary), self.start_ts, commit_ts)
            {
                Ok(()) => return Ok(()),
                Err(e @ KvError::TxnAborted { .. }) => return Err(e.into()),
                Err(KvError::Undetermined(_)) if attempt < PRIMARY_COMMIT_ATTEMPTS => {
                    strata_fiber::sleep(PRIMARY_COMMIT_PAUSE)
                }
                Err(e) => return Err(self.undetermined(e)),
            }
        }
    }

    /// The error for a commit whose outcome is unknown, logged: the client must find out
    /// whether it was applied before it writes again.
    fn undetermined(&self, cause: KvError) -> TxnError {
        tracing::error!(start_ts = self.start_ts.0, %cause, "the outcome of a commit is undetermined");
        TxnError::Kv(match cause {
            KvError::Undetermined(why) => KvError::Undetermined(why),
            other => KvError::Undetermined(other.to_string()),
        })
    }

    /// Discards the transaction and releases its locks.
    pub fn rollback(mut self) {
        self.finished = true;
        self.release_pessimistic_locks();
    }

    fn release_pessimistic_locks(&mut self) {
        if !self.locked.is_empty() {
            let locked = std::mem::take(&mut self.locked);
            self.locked_at.clear();
            let _ = self
                .client
                .kv()
                .pessimistic_rollback(&locked, self.start_ts);
        }
    }

    /// Runs a read, resolving locks of finished transactions and backing off for running ones.
    fn with_lock_resolution<T>(
        &mut self,
        mut read: impl FnMut(&dyn strata_kvapi::KvApi) -> Result<T, KvError>,
    ) -> Result<T, TxnError> {
        for _ in 0..READ_LOCK_RETRIES_MAX {
            self.read.requests += 1;
            let started = Instant::now();
            let answer = read(self.client.kv());
            self.read.time += started.elapsed();
            match answer {
                Err(KvError::KeyIsLocked(_)) if self.interrupted() => {
                    return Err(TxnError::Interrupted)
                }
                Err(KvError::KeyIsLocked(lock)) => {
                    self.resolve(&lock)?;
                }
                other => return Ok(other?),
            }
        }
        Err(TxnError::LockNotCleared(self.start_ts))
    }

    /// Resolves a lock met from its primary: commits or rolls it back when its transaction
    /// finished (or is rolled back here, its time to live having passed), or sleeps a moment
    /// and returns true when the transaction still runs.
    fn resolve(&self, lock: &LockInfo) -> Result<bool, TxnError> {
        let current_ts = self.client.current_ts()?;
        match crate::resolver::resolve(self.client.kv(), lock, current_ts)? {
            Resolution::Resolved => Ok(false),
            Resolution::Running => {
                strata_fiber::sleep(READ_LOCK_BACKOFF);
                Ok(true)
            }
        }
    }
}

/// A scan's request to the store and this transaction's writes in its range.
struct PlannedScan {
    request: ScanRequest,
    buffered: Vec<(Key, BufferedOp)>,
    /// Entries the caller asked for (the request asks for more when writes are buffered).
    limit: usize,
}

impl PlannedScan {
    /// The stored entries with this transaction's writes applied.
    fn merge(self, stored: Vec<(Key, Value)>) -> Vec<(Key, Value)> {
        if self.buffered.is_empty() {
            return stored;
        }
        let reverse = self.request.reverse;
        // Stored rows past the last one returned are unknown: buffered puts beyond it wait for
        // the next page.
        let cut = (stored.len() == self.request.limit)
            .then(|| stored.last().map(|(k, _)| k.clone()))
            .flatten();
        let mut merged: BTreeMap<Key, Value> = stored.into_iter().collect();
        for (key, op) in self.buffered {
            let beyond = cut
                .as_ref()
                .is_some_and(|c| if reverse { key < *c } else { key > *c });
            match op {
                BufferedOp::Put(v) | BufferedOp::Insert(v) if !beyond => {
                    merged.insert(key, v);
                }
                BufferedOp::Delete => {
                    merged.remove(&key);
                }
                _ => {}
            }
        }
        if reverse {
            merged.into_iter().rev().take(self.limit).collect()
        } else {
            merged.into_iter().take(self.limit).collect()
        }
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if !self.finished {
            self.release_pessimistic_locks();
        }
    }
}
