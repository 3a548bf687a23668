//! strata-kvapi: the one KV API between the transaction client and the KV nodes.
//!
//! ```text
//!   txn client ──(KvApi)──▶ kv node
//!        in-process in the playground, gRPC in a cluster
//! ```
//!
//! Every request names its snapshot (`ts`) or its transaction (`start_ts`), so a KV node keeps
//! no per-client state beyond the locks a transaction holds. Conditions the client must act on
//! (a lock in the way, a conflicting write, a deadlock) are typed [`KvError`] variants, never
//! strings: the transaction client's retry layer matches on them.

use strata_types::{Key, Timestamp, Value};

/// One write of a transaction, sent with prewrite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    Put(Key, Value),
    Delete(Key),
    /// Takes part in conflict detection but writes no data (`SELECT … FOR UPDATE`).
    Lock(Key),
    /// A put of a key presumed not to exist: the prewrite fails with
    /// [`KvError::AlreadyExists`] if a committed version of it does.
    Insert(Key, Value),
}

impl Mutation {
    pub fn key(&self) -> &[u8] {
        match self {
            Mutation::Put(k, _)
            | Mutation::Delete(k)
            | Mutation::Lock(k)
            | Mutation::Insert(k, _) => k,
        }
    }
}

/// A region as the cluster's placement knows it (what `SHOW TABLE … REGIONS` lists).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionInfo {
    pub id: u64,
    /// Inclusive.
    pub start_key: Key,
    /// Exclusive; empty for the end of the key space.
    pub end_key: Key,
    /// The leading peer and its store, when known.
    pub leader: Option<(u64, u64)>,
    /// Every peer, as (peer id, store id).
    pub peers: Vec<(u64, u64)>,
    pub conf_ver: u64,
    pub version: u64,
}

/// A store (KV node) as the cluster's placement knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreInfo {
    pub id: u64,
    pub address: String,
    /// Heard from lately.
    pub up: bool,
    pub regions: u64,
    pub leaders: u64,
}

/// The one region of a store that is not split in regions (the playground's): all keys,
/// led by its only peer.
pub const WHOLE_REGION_ID: u64 = 1;

/// A lock found in the way of a read or write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockInfo {
    pub key: Key,
    pub primary: Key,
    pub start_ts: Timestamp,
    /// How long the lock lives after its transaction started (its owner's heartbeats extend
    /// the primary's). 0 for a pessimistic lock whose time to live has not passed: its
    /// transaction still runs its statements, so wait for it rather than resolve it.
    pub ttl_ms: u64,
}

/// Errors of the KV API. Each variant names what the caller must do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KvError {
    /// A transaction's lock blocks the request: resolve it (check the primary) or wait.
    #[error("key is locked by transaction {}", .0.start_ts)]
    KeyIsLocked(LockInfo),
    /// A write committed after the transaction's snapshot touches the same key: retry the
    /// statement (pessimistic) or the transaction (optimistic).
    #[error(
        "write conflict on a key: start_ts {start_ts}, conflicting commit_ts {conflict_commit_ts}"
    )]
    WriteConflict {
        key: Key,
        start_ts: Timestamp,
        conflict_commit_ts: Timestamp,
    },
    /// Waiting for the lock would close a cycle of waiting transactions: abort.
    #[error("deadlock found when trying to get lock")]
    Deadlock {
        key: Key,
        blocker_start_ts: Timestamp,
    },
    /// The lock was not released within the wait timeout: fail the statement.
    #[error("lock wait timeout exceeded")]
    LockWaitTimeout { key: Key },
    /// The transaction's locks are gone (rolled back by another client): abort.
    #[error("transaction {start_ts} was rolled back")]
    TxnAborted { start_ts: Timestamp },
    /// The snapshot is older than the node's GC safe point: versions it could see may be gone
    /// (the transaction ran longer than the GC life time). The transaction fails.
    #[error("GC life time is shorter than transaction duration: snapshot {ts}, GC safe point {safe_point}")]
    SnapshotTooOld {
        ts: Timestamp,
        safe_point: Timestamp,
    },
    /// An inserted key exists: the statement fails with a duplicate-key error.
    #[error("key already exists")]
    AlreadyExists { key: Key },
    /// The store failed: the statement fails.
    #[error("storage: {0}")]
    Storage(String),
    /// The store could not apply the command and did not (its replica lost leadership of the
    /// region): the client retries where the region is led now. From the client, the region
    /// found no leader that answered within its retry time.
    #[error("unavailable: {0}")]
    Unavailable(String),
    /// The transaction would commit after its `max_commit_ts`: nothing was written.
    #[error("commit timestamp {commit_ts} is past the transaction's limit {max_commit_ts}")]
    CommitTsTooLarge {
        commit_ts: Timestamp,
        max_commit_ts: Timestamp,
    },
    /// A commit was sent but its answer was lost (the node died or did not answer): it may or
    /// may not have been applied. Never retried on the client's behalf.
    #[error("the outcome of the commit is undetermined ({0}); check whether it was applied")]
    Undetermined(String),
}

/// A range read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanRequest {
    /// Inclusive lower bound.
    pub start: Key,
    /// Exclusive upper bound.
    pub end: Key,
    pub limit: usize,
    pub ts: Timestamp,
    /// Returns keys from `end` downwards when set.
    pub reverse: bool,
    /// Returns keys only, with empty values.
    pub keys_only: bool,
}

/// What a scan read: its visible entries, and how many stored versions its cursor stood on
/// to find them (old versions, deletions and rollback records included; versions passed by
/// a seek are not counted). TiDB's slow log names the two Process_keys and Total_keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scanned {
    pub pairs: Vec<(Key, Value)>,
    pub versions: u64,
}

impl Scanned {
    /// Appends `other`'s entries and counts its versions.
    pub fn extend(&mut self, other: Scanned) {
        self.pairs.extend(other.pairs);
        self.versions += other.versions;
    }
}

/// Locks keys for a pessimistic transaction before it writes them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PessimisticLockRequest {
    pub keys: Vec<Key>,
    pub primary: Key,
    pub start_ts: Timestamp,
    pub for_update_ts: Timestamp,
    /// How long to wait for another transaction's lock; 0 fails at once.
    pub wait_timeout_ms: u64,
    /// How long the locks live after `start_ts` unless the owner's heartbeats extend the
    /// primary's: past it, a transaction that waits for one may check the primary and, if
    /// that expired too, roll the transaction back (its SQL node died).
    pub lock_ttl_ms: u64,
}

/// The first phase of a commit (or the whole commit with `try_one_pc`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrewriteRequest {
    pub mutations: Vec<Mutation>,
    pub primary: Key,
    pub start_ts: Timestamp,
    /// Non-zero for a pessimistic transaction: the keys it locked must still carry its locks.
    pub for_update_ts: Timestamp,
    /// A pessimistic transaction's `for_update_ts` when it locked each mutation's key (ZERO:
    /// not locked), in the order of `mutations`; empty for an optimistic one. A pessimistic
    /// lock lives in its leader's memory and is gone after the leader changes: the key then
    /// must have no commit after the moment it was locked (and read), or the write would
    /// overwrite one the transaction never saw.
    pub locked_at: Vec<Timestamp>,
    pub lock_ttl_ms: u64,
    /// Commits in the same step when every key is on this node.
    pub try_one_pc: bool,
    /// Async commit: each lock gets a `min_commit_ts` above every read its node served, and the
    /// transaction counts as committed once every key is prewritten, at the largest of them;
    /// the primary's lock lists the `secondaries` so a reader can check them.
    pub async_commit: bool,
    /// Every key but the primary (async commit only; used by the request holding the primary).
    pub secondaries: Vec<Key>,
    /// The latest timestamp the transaction may commit at (ZERO: no limit). A one-phase or
    /// async commit whose commit timestamp would pass it writes nothing and fails with
    /// [`KvError::CommitTsTooLarge`]; the client checks a two-phase commit's own timestamp.
    /// (A SQL node's schema lease: past it, schema changes stop waiting for the node.)
    pub max_commit_ts: Timestamp,
}

/// The outcome of a prewrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrewriteResponse {
    /// Set when the transaction was committed by one-phase commit, at this timestamp.
    pub one_pc_commit_ts: Option<Timestamp>,
    /// Set for an async-commit prewrite: the largest `min_commit_ts` of its locks.
    pub min_commit_ts: Option<Timestamp>,
}

/// What became of a transaction, as seen from its primary key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TxnStatus {
    Committed {
        commit_ts: Timestamp,
    },
    RolledBack,
    /// Still running (or not yet prewritten); its lock lives this much longer (0 when unknown).
    Locked {
        ttl_ms: u64,
    },
    /// An async-commit transaction whose primary lock expired: it committed if and only if
    /// every secondary is prewritten (see [`KvApi::check_secondary_locks`]), at the largest
    /// `min_commit_ts` of its locks.
    Undecided {
        min_commit_ts: Timestamp,
        secondaries: Vec<Key>,
    },
}

/// What the secondaries of an undecided async-commit transaction show.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SecondaryLocks {
    /// Every key still holds the transaction's lock; the largest `min_commit_ts` among them.
    Locked { min_commit_ts: Timestamp },
    /// A key was committed: the transaction was, at this timestamp.
    Committed { commit_ts: Timestamp },
    /// A key was never prewritten (it now holds a rollback record) or was rolled back.
    RolledBack,
}

impl SecondaryLocks {
    /// Combines what two groups of keys showed.
    pub fn merge(self, other: SecondaryLocks) -> SecondaryLocks {
        use SecondaryLocks::*;
        match (self, other) {
            (Committed { commit_ts }, _) | (_, Committed { commit_ts }) => Committed { commit_ts },
            (RolledBack, _) | (_, RolledBack) => RolledBack,
            (Locked { min_commit_ts: a }, Locked { min_commit_ts: b }) => Locked {
                min_commit_ts: a.max(b),
            },
        }
    }
}

/// The KV API: reads at a snapshot and the Percolator commands.
pub trait KvApi: Send + Sync + 'static {
    /// Returns the newest value of `key` committed at or before `ts`.
    fn get(&self, key: &[u8], ts: Timestamp) -> Result<Option<Value>, KvError>;

    /// Returns one entry per key, in the order of `keys`.
    fn batch_get(&self, keys: &[Key], ts: Timestamp) -> Result<Vec<Option<Value>>, KvError>;

    /// Returns up to `limit` visible entries of a key range.
    fn scan(&self, request: &ScanRequest) -> Result<Scanned, KvError>;

    /// Runs several scans, returning their entries in the order of `requests`. A client of
    /// remote stores sends the scans of one region together; here they run one by one.
    fn batch_scan(&self, requests: &[ScanRequest]) -> Result<Vec<Scanned>, KvError> {
        requests.iter().map(|r| self.scan(r)).collect()
    }

    /// Acquires pessimistic locks, waiting for other transactions' locks up to the timeout.
    fn pessimistic_lock(&self, request: &PessimisticLockRequest) -> Result<(), KvError>;

    /// Releases pessimistic locks of a transaction that will not commit them.
    fn pessimistic_rollback(&self, keys: &[Key], start_ts: Timestamp) -> Result<(), KvError>;

    /// Prewrites the mutations (or commits them at once with one-phase commit).
    fn prewrite(&self, request: &PrewriteRequest) -> Result<PrewriteResponse, KvError>;

    /// Commits prewritten keys at `commit_ts`.
    fn commit(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
        commit_ts: Timestamp,
    ) -> Result<(), KvError>;

    /// Rolls back prewritten keys and leaves a rollback record so a late prewrite fails.
    fn rollback(&self, keys: &[Key], start_ts: Timestamp) -> Result<(), KvError>;

    /// Tells whether the transaction of `primary` committed, rolled back or still runs; rolls
    /// it back when its lock has expired by `current_ts`.
    ///
    /// A primary with neither a lock nor a record of the transaction was never prewritten, or
    /// its prewrite has not arrived yet (a transaction prewrites its keys in parallel, so a
    /// secondary may be locked first). With `rollback_if_missing` it is rolled back, and the
    /// rollback record fails the late prewrite; without, the transaction counts as running
    /// ([`TxnStatus::Locked`]). A caller asks for the rollback once the lock it met has
    /// expired.
    fn check_txn_status(
        &self,
        primary: &[u8],
        start_ts: Timestamp,
        current_ts: Timestamp,
        rollback_if_missing: bool,
    ) -> Result<TxnStatus, KvError>;

    /// Checks the secondaries of an undecided async-commit transaction: each key must hold the
    /// transaction's lock, or show its commit; a key with neither gets a rollback record, so
    /// the transaction can no longer commit.
    fn check_secondary_locks(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
    ) -> Result<SecondaryLocks, KvError>;

    /// Extends the life of the transaction's lock on `primary` (pessimistic or prewritten) to
    /// at least `advise_lock_ttl_ms` after `start_ts`, and returns its time to live now; fails
    /// with [`KvError::TxnAborted`] when the primary holds no lock of the transaction (it was
    /// rolled back, or committed). The owner of a transaction sends it while the transaction
    /// lives, so that others never take it for abandoned.
    fn txn_heart_beat(
        &self,
        primary: &[u8],
        start_ts: Timestamp,
        advise_lock_ttl_ms: u64,
    ) -> Result<u64, KvError>;

    /// Returns up to `limit` prewrite locks of transactions that started at or before
    /// `max_ts`, on keys in `[start, end)` (`end` empty: to the end), in key order: what a
    /// pass that resolves locks before garbage collection looks at. Pessimistic locks, held
    /// in a leader's memory and gone with their transaction, are not among them.
    fn scan_lock(
        &self,
        start: &[u8],
        end: &[u8],
        max_ts: Timestamp,
        limit: usize,
    ) -> Result<Vec<LockInfo>, KvError>;

    /// Commits (with `commit_ts`) or rolls back (without) the locks of a finished transaction.
    fn resolve_lock(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
        commit_ts: Option<Timestamp>,
    ) -> Result<(), KvError>;

    /// The regions overlapping `[start, end)` (`end` empty: to the end), in key order. A
    /// store that is not split in regions answers one region over every key on store 1.
    fn regions(&self, start: &[u8], end: &[u8]) -> Result<Vec<RegionInfo>, KvError> {
        let _ = (start, end);
        Ok(vec![RegionInfo {
            id: WHOLE_REGION_ID,
            start_key: Vec::new(),
            end_key: Vec::new(),
            leader: Some((1, 1)),
            peers: vec![(1, 1)],
            conf_ver: 1,
            version: 1,
        }])
    }

    /// The stores holding the data. A store that is not a cluster answers itself as store 1.
    fn stores(&self) -> Result<Vec<StoreInfo>, KvError> {
        Ok(vec![StoreInfo {
            id: 1,
            address: "embedded".to_string(),
            up: true,
            regions: 1,
            leaders: 1,
        }])
    }
}
