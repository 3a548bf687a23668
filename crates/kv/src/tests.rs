//! Percolator actions against the memory engine.

use std::sync::Arc;

use strata_engine::MemoryEngine;
use strata_kvapi::{
    KvApi, KvError, Mutation, PessimisticLockRequest, PrewriteRequest, ScanRequest, SecondaryLocks,
    TxnStatus,
};
use strata_types::Timestamp;

use crate::{LeaderLocks, Storage};

/// A single node's storage, leading every key from timestamp 1 on (as a playground does once
/// it has a timestamp), so writes may skip reading versions where the write floors allow.
fn storage() -> Storage {
    let s = Storage::new(Arc::new(MemoryEngine::new())).unwrap();
    s.start_leading(b"", b"", ts(1), 0, LeaderLocks::Forget);
    s
}

fn ts(t: u64) -> Timestamp {
    Timestamp(t)
}

fn prewrite(
    s: &Storage,
    mutations: Vec<Mutation>,
    start: u64,
    one_pc: bool,
) -> Result<Option<Timestamp>, KvError> {
    let primary = mutations[0].key().to_vec();
    s.prewrite(&PrewriteRequest {
        mutations,
        primary,
        start_ts: ts(start),
        for_update_ts: Timestamp::ZERO,
        locked_at: Vec::new(),
        lock_ttl_ms: 3000,
        try_one_pc: one_pc,
        async_commit: false,
        secondaries: Vec::new(),
        max_commit_ts: Timestamp::ZERO,
    })
    .map(|r| r.one_pc_commit_ts)
}

/// Writes `value` to `key` (or deletes it, for `None`) in a one-phase commit starting at
/// `start`; returns the commit timestamp.
pub(crate) fn one_pc(s: &Storage, key: &[u8], value: Option<&[u8]>, start: u64) -> Timestamp {
    let mutation = match value {
        Some(v) => Mutation::Put(key.to_vec(), v.to_vec()),
        None => Mutation::Delete(key.to_vec()),
    };
    s.prewrite(&PrewriteRequest {
        mutations: vec![mutation],
        primary: key.to_vec(),
        start_ts: Timestamp(start),
        for_update_ts: Timestamp::ZERO,
        locked_at: Vec::new(),
        lock_ttl_ms: 0,
        try_one_pc: true,
        async_commit: false,
        secondaries: Vec::new(),
        max_commit_ts: Timestamp::ZERO,
    })
    .unwrap()
    .one_pc_commit_ts
    .unwrap()
}

/// The entries of the write CF: one per version, rollback and lock record.
pub(crate) fn write_cf_entries(s: &Storage) -> usize {
    let mut it = s.engine().iterator(strata_engine::Cf::Write, b"", None);
    it.seek(b"");
    let mut n = 0;
    while it.valid().unwrap() {
        n += 1;
        it.next();
    }
    n
}

fn put(k: &[u8], v: &[u8]) -> Mutation {
    Mutation::Put(k.to_vec(), v.to_vec())
}

#[test]
fn prewrite_commit_then_read_at_snapshots() {
    let s = storage();
    assert_eq!(
        prewrite(&s, vec![put(b"a", b"1"), put(b"b", b"2")], 10, false).unwrap(),
        None
    );
    // A reader above start_ts meets the lock.
    match s.get(b"a", ts(15)) {
        Err(KvError::KeyIsLocked(lock)) => {
            assert_eq!(lock.start_ts, ts(10));
            assert_eq!(lock.primary, b"a");
        }
        other => panic!("expected a lock, got {other:?}"),
    }
    // A reader below start_ts is not blocked.
    assert_eq!(s.get(b"a", ts(5)).unwrap(), None);
    s.commit(&[b"a".to_vec(), b"b".to_vec()], ts(10), ts(20))
        .unwrap();
    assert_eq!(s.get(b"a", ts(19)).unwrap(), None);
    assert_eq!(s.get(b"a", ts(20)).unwrap(), Some(b"1".to_vec()));
    assert_eq!(s.get(b"b", ts(u64::MAX)).unwrap(), Some(b"2".to_vec()));
    assert_eq!(
        s.check_txn_status(b"a", ts(10), ts(30), true).unwrap(),
        TxnStatus::Committed { commit_ts: ts(20) }
    );
}

#[test]
fn rollback_leaves_a_marker_that_fails_a_late_commit() {
    let s = storage();
    prewrite(&s, vec![put(b"a", b"1")], 10, false).unwrap();
    s.rollback(&[b"a".to_vec()], ts(10)).unwrap();
    assert_eq!(s.get(b"a", ts(30)).unwrap(), None);
    assert_eq!(
        s.commit(&[b"a".to_vec()], ts(10), ts(20)),
        Err(KvError::TxnAborted { start_ts: ts(10) })
    );
    assert_eq!(
        s.check_txn_status(b"a", ts(10), ts(30), true).unwrap(),
        TxnStatus::RolledBack
    );
}

#[test]
fn write_conflict_and_lock_conflict() {
    let s = storage();
    let commit_ts = prewrite(&s, vec![put(b"a", b"1")], 10, true)
        .unwrap()
        .unwrap();
    assert!(commit_ts > ts(10));
    // A transaction that started before that commit conflicts.
    match prewrite(&s, vec![put(b"a", b"2")], 5, false) {
        Err(KvError::WriteConflict {
            conflict_commit_ts, ..
        }) => assert_eq!(conflict_commit_ts, commit_ts),
        other => panic!("expected a write conflict, got {other:?}"),
    }
    // A prewrite lock blocks another prewrite of the key.
    prewrite(&s, vec![put(b"a", b"3")], 100, false).unwrap();
    assert!(matches!(
        prewrite(&s, vec![put(b"a", b"4")], 200, false),
        Err(KvError::KeyIsLocked(_))
    ));
    // Resolving the lock as committed makes the value visible.
    s.resolve_lock(&[b"a".to_vec()], ts(100), Some(ts(150)))
        .unwrap();
    assert_eq!(s.get(b"a", ts(150)).unwrap(), Some(b"3".to_vec()));
}

#[test]
fn one_pc_writes_meet_newer_commits_with_or_without_known_write_floors() {
    let engine = Arc::new(MemoryEngine::new());
    let s = Storage::new(engine.clone()).unwrap();
    // Before the node leads, floors are unknown: versions are read.
    let first = prewrite(&s, vec![put(b"a", b"1")], 10, true)
        .unwrap()
        .unwrap();
    assert!(matches!(
        prewrite(&s, vec![put(b"a", b"2")], 5, true),
        Err(KvError::WriteConflict { conflict_commit_ts, .. }) if conflict_commit_ts == first
    ));
    // Leading from 50 on, a commit at or below 50 must not be skipped over...
    s.start_leading(b"", b"", ts(50), 0, LeaderLocks::Forget);
    assert!(matches!(
        prewrite(&s, vec![put(b"a", b"2")], 9, true),
        Err(KvError::WriteConflict { .. })
    ));
    // ...nor one made since, by a one-phase or a two-phase commit, or on a key of another slot.
    let second = prewrite(&s, vec![put(b"b", b"1"), put(b"c", b"1")], 60, true)
        .unwrap()
        .unwrap();
    for key in [b"b", b"c"] {
        assert!(matches!(
            prewrite(&s, vec![put(key, b"2")], second.0 - 1, true),
            Err(KvError::WriteConflict { conflict_commit_ts, .. }) if conflict_commit_ts == second
        ));
    }
    prewrite(&s, vec![put(b"d", b"1")], 70, false).unwrap();
    s.commit(&[b"d".to_vec()], ts(70), ts(80)).unwrap();
    assert!(matches!(
        prewrite(&s, vec![put(b"d", b"2")], 75, true),
        Err(KvError::WriteConflict { conflict_commit_ts, .. }) if conflict_commit_ts == ts(80)
    ));
    // Transactions that started after the newest commits write without conflict.
    assert!(prewrite(&s, vec![put(b"a", b"3"), put(b"d", b"3")], 90, true).is_ok());
    // After a restart the new storage knows nothing of earlier commits until it leads again,
    // from a timestamp above them.
    let restarted = Storage::new(engine).unwrap();
    let newest = restarted.get(b"a", Timestamp::MAX).unwrap();
    assert_eq!(newest, Some(b"3".to_vec()));
    restarted.start_leading(b"", b"", ts(200), 0, LeaderLocks::Forget);
    assert!(matches!(
        prewrite(&restarted, vec![put(b"a", b"4")], 85, true),
        Err(KvError::WriteConflict { .. })
    ));
    assert!(prewrite(&restarted, vec![put(b"a", b"4")], 201, true).is_ok());
}

#[test]
fn one_pc_commit_ts_is_above_reads_already_served() {
    let s = storage();
    assert_eq!(s.get(b"k", ts(1000)).unwrap(), None);
    let commit_ts = prewrite(&s, vec![put(b"k", b"v")], 10, true)
        .unwrap()
        .unwrap();
    assert!(commit_ts > ts(1000), "a snapshot at 1000 must not change");
    assert_eq!(s.get(b"k", ts(1000)).unwrap(), None);
    assert_eq!(s.get(b"k", commit_ts).unwrap(), Some(b"v".to_vec()));
}

#[test]
fn a_raised_floor_keeps_one_pc_above_reads_served_before_a_restart() {
    // A restarted node has served no reads, but snapshots up to 1000 exist on SQL nodes.
    let s = storage();
    s.raise_max_read_ts(ts(1000));
    let commit_ts = prewrite(&s, vec![put(b"k", b"v")], 10, true)
        .unwrap()
        .unwrap();
    assert!(commit_ts > ts(1000));
    assert_eq!(s.get(b"k", ts(1000)).unwrap(), None);
}

#[test]
fn scan_sees_newest_visible_versions_both_ways() {
    let s = storage();
    prewrite(
        &s,
        vec![put(b"k1", b"a"), put(b"k2", b"b"), put(b"k3", b"c")],
        10,
        true,
    )
    .unwrap();
    let t1 = s.max_read_ts().next().next();
    s.get(b"zz", Timestamp(t1.0 + 100)).unwrap();
    prewrite(
        &s,
        vec![put(b"k2", b"B"), Mutation::Delete(b"k3".to_vec())],
        t1.0 + 50,
        true,
    )
    .unwrap();
    let scan = |at: Timestamp, reverse: bool| {
        s.scan(&ScanRequest {
            start: b"k".to_vec(),
            end: b"l".to_vec(),
            limit: 10,
            ts: at,
            reverse,
            keys_only: false,
        })
        .unwrap()
        .pairs
    };
    let old = scan(Timestamp(t1.0 + 100), false);
    assert_eq!(
        old,
        vec![
            (b"k1".to_vec(), b"a".to_vec()),
            (b"k2".to_vec(), b"b".to_vec()),
            (b"k3".to_vec(), b"c".to_vec())
        ]
    );
    let new = scan(Timestamp::MAX, false);
    assert_eq!(
        new,
        vec![
            (b"k1".to_vec(), b"a".to_vec()),
            (b"k2".to_vec(), b"B".to_vec())
        ]
    );
    let reversed = scan(Timestamp::MAX, true);
    assert_eq!(
        reversed,
        vec![
            (b"k2".to_vec(), b"B".to_vec()),
            (b"k1".to_vec(), b"a".to_vec())
        ]
    );
}

#[test]
fn a_scan_counts_the_versions_it_reads() {
    let s = storage();
    // k1 written five times, k2 once, k3 written then deleted.
    let mut at = 10;
    for (key, value) in [
        (b"k1", Some(&b"1"[..])),
        (b"k1", Some(b"2")),
        (b"k1", Some(b"3")),
        (b"k1", Some(b"4")),
        (b"k1", Some(b"5")),
        (b"k2", Some(b"b")),
        (b"k3", Some(b"c")),
        (b"k3", None),
    ] {
        at = one_pc(&s, key, value, at).0 + 1;
    }
    let scan = |ts: Timestamp, limit: usize| {
        s.scan(&ScanRequest {
            start: b"k".to_vec(),
            end: b"l".to_vec(),
            limit,
            ts,
            reverse: false,
            keys_only: false,
        })
        .unwrap()
    };
    let newest = scan(Timestamp(at + 100), 10);
    assert_eq!(
        newest.pairs,
        vec![
            (b"k1".to_vec(), b"5".to_vec()),
            (b"k2".to_vec(), b"b".to_vec())
        ]
    );
    // k1's newest version and three more stepped over before the seek past the fifth; k2's
    // one; k3's deletion and the version under it.
    assert_eq!(newest.versions, 4 + 1 + 2);
    // Stopping at the limit reads no further.
    assert_eq!(scan(Timestamp(at + 100), 1).versions, 4);
}

#[test]
fn pessimistic_lock_conflicts_with_newer_commit_and_blocks_others() {
    let s = storage();
    let commit_ts = prewrite(&s, vec![put(b"r", b"1")], 10, true)
        .unwrap()
        .unwrap();
    let request = |start: u64, for_update: u64, wait_ms: u64| PessimisticLockRequest {
        keys: vec![b"r".to_vec()],
        primary: b"r".to_vec(),
        start_ts: ts(start),
        for_update_ts: ts(for_update),
        wait_timeout_ms: wait_ms,
        lock_ttl_ms: u64::MAX,
    };
    assert!(matches!(
        s.pessimistic_lock(&request(5, 5, 0)),
        Err(KvError::WriteConflict { .. })
    ));
    let holder = commit_ts.0 + 10;
    s.pessimistic_lock(&request(holder, holder, 0)).unwrap();
    assert!(matches!(
        s.pessimistic_lock(&request(holder + 1, holder + 1, 10)),
        Err(KvError::LockWaitTimeout { .. })
    ));
    // The holder commits through a pessimistic one-phase prewrite; the key is free again.
    let response = s
        .prewrite(&PrewriteRequest {
            mutations: vec![put(b"r", b"2")],
            primary: b"r".to_vec(),
            start_ts: ts(holder),
            for_update_ts: ts(holder),
            locked_at: Vec::new(),
            lock_ttl_ms: 3000,
            try_one_pc: true,
            async_commit: false,
            secondaries: Vec::new(),
            max_commit_ts: Timestamp::ZERO,
        })
        .unwrap();
    let committed = response.one_pc_commit_ts.unwrap();
    assert_eq!(s.get(b"r", committed).unwrap(), Some(b"2".to_vec()));
    let later = committed.0 + 1;
    s.pessimistic_lock(&request(later, later, 0)).unwrap();
}

#[test]
fn insert_fails_on_an_existing_key_and_succeeds_after_delete() {
    let s = storage();
    let insert = |key: &[u8], start: u64| {
        s.prewrite(&PrewriteRequest {
            mutations: vec![Mutation::Insert(key.to_vec(), b"v".to_vec())],
            primary: key.to_vec(),
            start_ts: ts(start),
            for_update_ts: Timestamp::ZERO,
            locked_at: Vec::new(),
            lock_ttl_ms: 3000,
            try_one_pc: true,
            async_commit: false,
            secondaries: Vec::new(),
            max_commit_ts: Timestamp::ZERO,
        })
    };
    let first = insert(b"k", 10).unwrap().one_pc_commit_ts.unwrap();
    assert_eq!(
        insert(b"k", first.0 + 5),
        Err(KvError::AlreadyExists { key: b"k".to_vec() })
    );
    let deleted = prewrite(
        &s,
        vec![Mutation::Delete(b"k".to_vec())],
        first.0 + 10,
        true,
    )
    .unwrap()
    .unwrap();
    insert(b"k", deleted.0 + 1).unwrap();
}

#[test]
fn a_rollback_at_a_commit_timestamp_keeps_the_committed_write() {
    // A one-phase commit chooses its own commit_ts, which can equal another transaction's
    // start_ts; that transaction's rollback must not erase the commit.
    let s = storage();
    let commit_ts = prewrite(&s, vec![put(b"k", b"v")], 10, true)
        .unwrap()
        .unwrap();
    s.rollback(&[b"k".to_vec()], commit_ts).unwrap();
    assert_eq!(s.get(b"k", Timestamp::MAX).unwrap(), Some(b"v".to_vec()));
}

/// An async-commit prewrite of `keys` (the first is the primary) at `start`.
fn prewrite_async(s: &Storage, keys: &[&[u8]], start: Timestamp) -> Result<Timestamp, KvError> {
    let mutations: Vec<Mutation> = keys.iter().map(|k| put(k, b"v")).collect();
    let response = s.prewrite(&PrewriteRequest {
        mutations,
        primary: keys[0].to_vec(),
        start_ts: start,
        for_update_ts: Timestamp::ZERO,
        locked_at: Vec::new(),
        lock_ttl_ms: 3000,
        try_one_pc: false,
        async_commit: true,
        secondaries: keys[1..].iter().map(|k| k.to_vec()).collect(),
        max_commit_ts: Timestamp::ZERO,
    })?;
    Ok(response
        .min_commit_ts
        .expect("an async-commit prewrite sets min_commit_ts"))
}

#[test]
fn async_commit_locks_sit_above_served_reads_and_resolve_from_their_secondaries() {
    let s = storage();
    let start = Timestamp::compose(1_000_000, 0);
    // A read served at start + 5 before the prewrite: the locks must commit above it.
    assert_eq!(s.get(b"x", Timestamp(start.0 + 5)).unwrap(), None);
    let min_commit_ts = prewrite_async(&s, &[b"a", b"b"], start).unwrap();
    assert!(min_commit_ts > Timestamp(start.0 + 5));
    // Reads below min_commit_ts pass the locks; reads at or above it meet them.
    assert_eq!(s.get(b"b", Timestamp(min_commit_ts.0 - 1)).unwrap(), None);
    assert!(matches!(
        s.get(b"b", min_commit_ts),
        Err(KvError::KeyIsLocked(_))
    ));
    // Within the TTL the primary says "running"; after it, "undecided" with its secondaries
    // (never "rolled back": every key may already be prewritten).
    let soon = Timestamp::compose(1_000_001, 0);
    assert!(matches!(
        s.check_txn_status(b"a", start, soon, true).unwrap(),
        TxnStatus::Locked { .. }
    ));
    let later = Timestamp::compose(1_010_000, 0);
    let status = s.check_txn_status(b"a", start, later, true).unwrap();
    assert_eq!(
        status,
        TxnStatus::Undecided {
            min_commit_ts,
            secondaries: vec![b"b".to_vec()],
        }
    );
    // Every secondary is locked: the transaction committed at the largest min_commit_ts.
    assert_eq!(
        s.check_secondary_locks(&[b"b".to_vec()], start).unwrap(),
        SecondaryLocks::Locked { min_commit_ts }
    );
    s.resolve_lock(&[b"a".to_vec(), b"b".to_vec()], start, Some(min_commit_ts))
        .unwrap();
    assert_eq!(s.get(b"a", later).unwrap(), Some(b"v".to_vec()));
    assert_eq!(s.get(b"b", later).unwrap(), Some(b"v".to_vec()));
}

#[test]
fn an_async_commit_missing_a_secondary_rolls_back_and_its_late_prewrite_fails() {
    let s = storage();
    let start = Timestamp::compose(2_000_000, 0);
    // The primary's region took its prewrite; the secondary's did not (yet).
    let mutations = vec![put(b"p", b"v")];
    s.prewrite(&PrewriteRequest {
        mutations,
        primary: b"p".to_vec(),
        start_ts: start,
        for_update_ts: Timestamp::ZERO,
        locked_at: Vec::new(),
        lock_ttl_ms: 3000,
        try_one_pc: false,
        async_commit: true,
        secondaries: vec![b"q".to_vec()],
        max_commit_ts: Timestamp::ZERO,
    })
    .unwrap();
    assert_eq!(
        s.check_secondary_locks(&[b"q".to_vec()], start).unwrap(),
        SecondaryLocks::RolledBack
    );
    s.resolve_lock(&[b"p".to_vec(), b"q".to_vec()], start, None)
        .unwrap();
    // The late prewrite of the secondary now fails, so the client never counts the
    // transaction as committed.
    let late = late_async_prewrite(&s, b"q", start);
    assert!(matches!(late, Err(KvError::TxnAborted { .. })), "{late:?}");
    let later = Timestamp::compose(2_010_000, 0);
    assert_eq!(s.get(b"p", later).unwrap(), None);
    assert_eq!(s.get(b"q", later).unwrap(), None);
}

#[test]
fn a_read_of_the_newest_data_leaves_commit_timestamps_alone() {
    let s = storage();
    let start = Timestamp::compose(3_000_000, 0);
    assert_eq!(s.get(b"k", Timestamp::MAX).unwrap(), None);
    let commit_ts = prewrite(&s, vec![put(b"k", b"v")], start.0, true)
        .unwrap()
        .expect("one-phase commit");
    assert_eq!(
        commit_ts,
        start.next(),
        "a newest-data read raised no floor"
    );
    assert_eq!(s.get(b"k", Timestamp::MAX).unwrap(), Some(b"v".to_vec()));
    // A transaction in flight stops it, whatever its start_ts.
    let later = Timestamp::compose(4_000_000, 0);
    prewrite(&s, vec![put(b"k", b"w")], later.0, false).unwrap();
    assert!(matches!(
        s.get(b"k", Timestamp::MAX),
        Err(KvError::KeyIsLocked(_))
    ));
}

#[test]
fn a_retried_async_commit_prewrite_keeps_its_locks_min_commit_ts() {
    let s = storage();
    let start = Timestamp::compose(5_000_000, 0);
    let first = prewrite_async(&s, &[b"a", b"b"], start).unwrap();
    // A read far above raises the floor; the retry (its first answer was lost) must still
    // report, and keep, what the locks were written with: a reader may have resolved the
    // transaction from them already.
    s.get(b"z", Timestamp::compose(6_000_000, 0)).unwrap();
    let retried = prewrite_async(&s, &[b"a", b"b"], start).unwrap();
    assert_eq!(retried, first);
    let later = Timestamp::compose(9_000_000, 0);
    let status = s.check_txn_status(b"a", start, later, true).unwrap();
    assert_eq!(
        status,
        TxnStatus::Undecided {
            min_commit_ts: first,
            secondaries: vec![b"b".to_vec()],
        }
    );
}

#[test]
fn a_key_whose_pessimistic_lock_was_lost_conflicts_with_commits_after_it_was_locked() {
    let s = storage();
    prewrite(&s, vec![put(b"r", b"100")], 5, true)
        .unwrap()
        .unwrap();
    let lock = |start: u64, for_update: u64| PessimisticLockRequest {
        keys: vec![b"r".to_vec()],
        primary: b"r".to_vec(),
        start_ts: ts(start),
        for_update_ts: ts(for_update),
        wait_timeout_ms: 0,
        lock_ttl_ms: u64::MAX,
    };
    let pessimistic_put = |start: u64, for_update: u64, locked_at: u64, value: &[u8]| {
        s.prewrite(&PrewriteRequest {
            mutations: vec![put(b"r", value)],
            primary: b"r".to_vec(),
            start_ts: ts(start),
            for_update_ts: ts(for_update),
            locked_at: vec![ts(locked_at)],
            lock_ttl_ms: 3000,
            try_one_pc: true,
            async_commit: false,
            secondaries: Vec::new(),
            max_commit_ts: Timestamp::ZERO,
        })
    };
    // Transaction 10 locks (and reads) r at 10; then its lock goes with a change of leader.
    s.pessimistic_lock(&lock(10, 10)).unwrap();
    s.start_leading(b"", b"", ts(11), 0, LeaderLocks::Forget);
    // Transaction 20 locks r and commits a new value.
    s.pessimistic_lock(&lock(20, 20)).unwrap();
    let committed = pessimistic_put(20, 20, 20, b"90")
        .unwrap()
        .one_pc_commit_ts
        .unwrap();
    // Transaction 10 writes what it computed from its read at 10 after a later statement moved
    // its for_update_ts past that commit: the commit after the lock is a conflict.
    let later = committed.0 + 5;
    assert!(matches!(
        pessimistic_put(10, later, 10, b"110"),
        Err(KvError::WriteConflict { .. })
    ));
    assert_eq!(s.get(b"r", ts(later + 1)).unwrap(), Some(b"90".to_vec()));
    // Without a commit since it was locked, a key whose lock was lost is written.
    s.pessimistic_lock(&lock(later + 1, later + 1)).unwrap();
    s.start_leading(b"", b"", ts(later + 2), 0, LeaderLocks::Forget);
    let written = pessimistic_put(later + 1, later + 3, later + 1, b"80")
        .unwrap()
        .one_pc_commit_ts
        .unwrap();
    assert_eq!(s.get(b"r", written).unwrap(), Some(b"80".to_vec()));
}

#[test]
fn a_lock_waiter_leaves_when_its_node_stops_leading() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    let s = storage();
    let lock = |start: u64, wait_ms: u64| PessimisticLockRequest {
        keys: vec![b"r".to_vec()],
        primary: b"r".to_vec(),
        start_ts: ts(start),
        for_update_ts: ts(start),
        wait_timeout_ms: wait_ms,
        lock_ttl_ms: u64::MAX,
    };
    s.pessimistic_lock(&lock(10, 0)).unwrap();
    let serving = AtomicBool::new(true);
    let started = Instant::now();
    let waited = std::thread::scope(|scope| {
        let waiter = scope.spawn(|| {
            s.pessimistic_lock_while(&lock(20, 30_000), &|| serving.load(Ordering::SeqCst))
        });
        std::thread::sleep(Duration::from_millis(300));
        serving.store(false, Ordering::SeqCst);
        waiter.join().unwrap()
    });
    // The holder's lock is still here; the waiter gives up long before its 30 s timeout.
    assert!(matches!(waited, Err(KvError::Unavailable(_))), "{waited:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// A deadlock detector shared by the storages of a test, as the placement driver's is by the
/// KV nodes of a cluster.
struct SharedDetector(parking_lot::Mutex<strata_types::deadlock::WaitForGraph>);

impl crate::DeadlockDetector for SharedDetector {
    fn wait(
        &self,
        waiter: Timestamp,
        blocker: Timestamp,
        _within: std::time::Duration,
    ) -> Result<bool, KvError> {
        Ok(self
            .0
            .lock()
            .wait(waiter, blocker, std::time::Instant::now()))
    }

    fn wait_ended(&self, waiter: Timestamp) {
        self.0.lock().remove(waiter);
    }
}

#[test]
fn a_deadlock_across_two_nodes_is_found_by_the_shared_detector() {
    use std::time::{Duration, Instant};

    let detector = Arc::new(SharedDetector(parking_lot::Mutex::new(
        strata_types::deadlock::WaitForGraph::with_ttl(Duration::from_secs(3)),
    )));
    let (one, two) = (storage(), storage());
    one.set_deadlock_detector(detector.clone());
    two.set_deadlock_detector(detector.clone());
    let lock = |key: &[u8], start: u64, wait_ms: u64| PessimisticLockRequest {
        keys: vec![key.to_vec()],
        primary: key.to_vec(),
        start_ts: ts(start),
        for_update_ts: ts(start),
        wait_timeout_ms: wait_ms,
        lock_ttl_ms: u64::MAX,
    };
    // Transaction 10 holds a on node one, transaction 20 holds b on node two.
    one.pessimistic_lock(&lock(b"a", 10, 0)).unwrap();
    two.pessimistic_lock(&lock(b"b", 20, 0)).unwrap();
    let started = Instant::now();
    let (first, second) = std::thread::scope(|scope| {
        // 10 waits for b on node two; then 20 asks for a on node one: a cycle no node sees.
        let waiter = scope.spawn(|| two.pessimistic_lock(&lock(b"b", 10, 30_000)));
        while !detector.0.lock().contains(ts(10)) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let second = one.pessimistic_lock(&lock(b"a", 20, 30_000));
        // The victim gives up its lock, as its transaction's rollback would.
        two.pessimistic_rollback(&[b"b".to_vec()], ts(20)).unwrap();
        (waiter.join().unwrap(), second)
    });
    assert!(
        matches!(second, Err(KvError::Deadlock { .. })),
        "{second:?}"
    );
    assert_eq!(first, Ok(()), "10 gets b once 20 is gone");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(!detector.0.lock().contains(ts(10)), "the wait ended");
}

#[test]
fn a_primary_not_yet_prewritten_is_rolled_back_only_when_asked() {
    let s = storage();
    // Transaction 10 prewrites its secondary b before its primary a (different regions do
    // this in parallel).
    let request = |keys: Vec<Mutation>| PrewriteRequest {
        mutations: keys,
        primary: b"a".to_vec(),
        start_ts: ts(10),
        for_update_ts: Timestamp::ZERO,
        locked_at: Vec::new(),
        lock_ttl_ms: 3000,
        try_one_pc: false,
        async_commit: false,
        secondaries: Vec::new(),
        max_commit_ts: Timestamp::ZERO,
    };
    s.prewrite(&request(vec![put(b"b", b"2")])).unwrap();
    // A reader meets b's lock while it is young: the missing primary counts as running and
    // nothing is written on it.
    assert_eq!(
        s.check_txn_status(b"a", ts(10), ts(30), false).unwrap(),
        TxnStatus::Locked { ttl_ms: 0 }
    );
    s.prewrite(&request(vec![put(b"a", b"1")])).unwrap();
    s.commit(&[b"a".to_vec(), b"b".to_vec()], ts(10), ts(20))
        .unwrap();
    assert_eq!(s.get(b"a", ts(25)).unwrap(), Some(b"1".to_vec()));
    assert_eq!(s.get(b"b", ts(25)).unwrap(), Some(b"2".to_vec()));

    // Transaction 40 likewise, but the reader finds b's lock expired: the primary is rolled
    // back and its late prewrite fails.
    let request = |keys: Vec<Mutation>| PrewriteRequest {
        start_ts: ts(40),
        ..request(keys)
    };
    s.prewrite(&request(vec![put(b"b", b"3")])).unwrap();
    assert_eq!(
        s.check_txn_status(b"a", ts(40), ts(50), true).unwrap(),
        TxnStatus::RolledBack
    );
    assert_eq!(
        s.prewrite(&request(vec![put(b"a", b"4")])),
        Err(KvError::TxnAborted { start_ts: ts(40) })
    );
    s.resolve_lock(&[b"b".to_vec()], ts(40), None).unwrap();
    assert_eq!(s.get(b"b", ts(60)).unwrap(), Some(b"2".to_vec()));
}

/// A pessimistic lock of `start` on `keys` with primary `primary`, living `ttl_ms` after it.
fn lock_for(
    s: &Storage,
    keys: &[&[u8]],
    primary: &[u8],
    start: Timestamp,
    ttl_ms: u64,
    wait_ms: u64,
) -> Result<(), KvError> {
    s.pessimistic_lock(&PessimisticLockRequest {
        keys: keys.iter().map(|k| k.to_vec()).collect(),
        primary: primary.to_vec(),
        start_ts: start,
        for_update_ts: start,
        wait_timeout_ms: wait_ms,
        lock_ttl_ms: ttl_ms,
    })
}

#[test]
fn a_pessimistic_lock_past_its_time_to_live_is_rolled_back_from_its_primary() {
    let s = storage();
    let now = strata_types::wall_clock_ms();
    // Started 2 s ago with a time to live of 1 s: expired.
    let owner = Timestamp::compose(now - 2_000, 0);
    lock_for(&s, &[b"p", b"k"], b"p", owner, 1_000, 0).unwrap();
    let waiter = Timestamp::compose(now, 0);
    // A waiter whose wait ends meets the lock with its time to live, so it checks the primary.
    match lock_for(&s, &[b"k"], b"k", waiter, 10_000, 20) {
        Err(KvError::KeyIsLocked(info)) => {
            assert_eq!((info.primary.as_slice(), info.start_ts), (&b"p"[..], owner));
            assert_eq!(info.ttl_ms, 1_000);
        }
        other => panic!("{other:?}"),
    }
    // A heartbeat renews the primary: the owner still runs.
    assert_eq!(s.txn_heart_beat(b"p", owner, 5_000).unwrap(), 5_000);
    assert!(matches!(
        s.check_txn_status(b"p", owner, Timestamp::compose(now, 1), true).unwrap(),
        TxnStatus::Locked { ttl_ms } if ttl_ms > 0 && ttl_ms <= 3_000
    ));
    // Past the renewed time to live the primary is rolled back, with a record that fails the
    // owner's late prewrite.
    let later = Timestamp::compose(now + 4_000, 0);
    assert_eq!(
        s.check_txn_status(b"p", owner, later, true).unwrap(),
        TxnStatus::RolledBack
    );
    assert!(matches!(
        s.txn_heart_beat(b"p", owner, 20_000),
        Err(KvError::TxnAborted { .. })
    ));
    s.resolve_lock(&[b"k".to_vec()], owner, None).unwrap();
    lock_for(&s, &[b"k"], b"k", waiter, 10_000, 0).unwrap();
    for try_one_pc in [true, false] {
        let late = s.prewrite(&PrewriteRequest {
            mutations: vec![put(b"p", b"v")],
            primary: b"p".to_vec(),
            start_ts: owner,
            for_update_ts: owner,
            locked_at: vec![owner],
            lock_ttl_ms: 3000,
            try_one_pc,
            async_commit: false,
            secondaries: Vec::new(),
            max_commit_ts: Timestamp::ZERO,
        });
        assert!(
            matches!(late, Err(KvError::TxnAborted { .. })),
            "one-phase {try_one_pc}: {late:?}"
        );
    }
}

#[test]
fn a_live_pessimistic_lock_is_waited_for_and_never_rolled_back() {
    let s = storage();
    let now = strata_types::wall_clock_ms();
    let owner = Timestamp::compose(now, 0);
    lock_for(&s, &[b"p"], b"p", owner, 60_000, 0).unwrap();
    let waiter = Timestamp::compose(now, 1);
    assert!(matches!(
        lock_for(&s, &[b"p"], b"p", waiter, 60_000, 20),
        Err(KvError::LockWaitTimeout { .. })
    ));
    // A prewrite that meets it is told to wait (a time to live of zero).
    let blocked = s.prewrite(&PrewriteRequest {
        mutations: vec![put(b"p", b"w")],
        primary: b"p".to_vec(),
        start_ts: waiter,
        for_update_ts: Timestamp::ZERO,
        locked_at: Vec::new(),
        lock_ttl_ms: 3000,
        try_one_pc: true,
        async_commit: false,
        secondaries: Vec::new(),
        max_commit_ts: Timestamp::ZERO,
    });
    assert!(matches!(blocked, Err(KvError::KeyIsLocked(info)) if info.ttl_ms == 0));
    assert!(matches!(
        s.check_txn_status(b"p", owner, Timestamp::compose(now + 1_000, 0), true)
            .unwrap(),
        TxnStatus::Locked { .. }
    ));
}

#[test]
fn a_heartbeat_extends_a_prewritten_primary() {
    let s = storage();
    let now = strata_types::wall_clock_ms();
    let owner = Timestamp::compose(now, 0);
    prewrite(&s, vec![put(b"p", b"v"), put(b"q", b"v")], owner.0, false).unwrap();
    assert_eq!(s.txn_heart_beat(b"p", owner, 30_000).unwrap(), 30_000);
    // A shorter advice keeps the longer life.
    assert_eq!(s.txn_heart_beat(b"p", owner, 1_000).unwrap(), 30_000);
    assert!(matches!(
        s.check_txn_status(b"p", owner, Timestamp::compose(now + 10_000, 0), true)
            .unwrap(),
        TxnStatus::Locked { .. }
    ));
    assert!(matches!(
        s.txn_heart_beat(b"nothing", owner, 1_000),
        Err(KvError::TxnAborted { .. })
    ));
}

/// The async-commit prewrite of `key` (a secondary of primary `p`) by transaction `start`.
fn late_async_prewrite(
    s: &Storage,
    key: &[u8],
    start: Timestamp,
) -> Result<strata_kvapi::PrewriteResponse, KvError> {
    s.prewrite(&PrewriteRequest {
        mutations: vec![put(key, b"late")],
        primary: b"p".to_vec(),
        start_ts: start,
        for_update_ts: Timestamp::ZERO,
        locked_at: Vec::new(),
        lock_ttl_ms: 3000,
        try_one_pc: false,
        async_commit: true,
        secondaries: Vec::new(),
        max_commit_ts: Timestamp::ZERO,
    })
}

#[test]
fn a_rollback_where_another_commit_record_sits_marks_it_and_fails_the_late_prewrite() {
    let s = storage();
    // A one-phase commit picks its own commit_ts, which may be another transaction's start_ts.
    let overlapped = one_pc(&s, b"k", Some(b"a"), 100);
    // That transaction's secondary is checked before its prewrite arrived: rolled back.
    assert_eq!(
        s.check_secondary_locks(&[b"k".to_vec()], overlapped)
            .unwrap(),
        SecondaryLocks::RolledBack
    );
    // The committed value stays, and so does the rollback, as a mark on its record.
    assert_eq!(s.get(b"k", overlapped).unwrap(), Some(b"a".to_vec()));
    assert_eq!(
        s.check_secondary_locks(&[b"k".to_vec()], overlapped)
            .unwrap(),
        SecondaryLocks::RolledBack
    );
    let late = late_async_prewrite(&s, b"k", overlapped);
    assert!(matches!(late, Err(KvError::TxnAborted { .. })), "{late:?}");
    assert!(matches!(
        s.commit(&[b"k".to_vec()], overlapped, Timestamp(overlapped.0 + 5)),
        Err(KvError::TxnAborted { .. })
    ));
    assert_eq!(s.get(b"k", Timestamp::MAX).unwrap(), Some(b"a".to_vec()));
}

#[test]
fn a_one_phase_commit_onto_a_rollback_record_keeps_the_rollback() {
    let s = storage();
    // Transaction 50's key is rolled back before its prewrite came.
    assert_eq!(
        s.check_secondary_locks(&[b"k".to_vec()], ts(50)).unwrap(),
        SecondaryLocks::RolledBack
    );
    // A one-phase commit started at 49 picks commit_ts 50, where that rollback record sits.
    let committed = one_pc(&s, b"k", Some(b"a"), 49);
    assert_eq!(committed, ts(50));
    assert_eq!(s.get(b"k", ts(50)).unwrap(), Some(b"a".to_vec()));
    // Transaction 50 still finds its rollback.
    let late = late_async_prewrite(&s, b"k", ts(50));
    assert!(matches!(late, Err(KvError::TxnAborted { .. })), "{late:?}");
}

#[test]
fn a_new_leader_takes_the_locks_its_predecessor_handed_over() {
    let held = |r: Result<(), KvError>| {
        matches!(
            r,
            Err(KvError::KeyIsLocked(_)) | Err(KvError::LockWaitTimeout { .. })
        )
    };
    let now = strata_types::wall_clock_ms();
    let (t10, t30) = (Timestamp::compose(now, 10), Timestamp::compose(now, 30));
    let old = storage();
    lock_for(&old, &[b"a"], b"a", t10, 10_000, 0).unwrap();
    lock_for(&old, &[b"c"], b"c", t30, 10_000, 0).unwrap();
    // The leader of term 5 hands its locks over: from then on it grants none.
    let handover = old.hand_over(b"", b"", 5);
    assert!(matches!(
        lock_for(&old, &[b"b"], b"b", Timestamp::compose(now, 20), 10_000, 0),
        Err(KvError::Unavailable(_))
    ));

    // A replica applies the handover, and transaction 30's commit of c that was proposed
    // before it.
    let engine = Arc::new(MemoryEngine::new());
    strata_engine::Engine::write(&*engine, &handover, true).unwrap();
    let new = Storage::replicated(engine);
    one_pc(&new, b"c", Some(b"1"), t30.0);
    // Leading in a later term than the next one, it ignores the record.
    new.start_leading(
        b"",
        b"",
        Timestamp::compose(now, 40),
        9,
        LeaderLocks::Forget,
    );
    let t41 = Timestamp::compose(now, 41);
    lock_for(&new, &[b"a"], b"a", t41, 10_000, 0).unwrap();
    new.pessimistic_rollback(&[b"a".to_vec()], t41).unwrap();
    // Leading in term 6, it holds transaction 10's lock on a, and not the finished one on c.
    new.start_leading(
        b"",
        b"",
        Timestamp::compose(now, 50),
        6,
        LeaderLocks::Forget,
    );
    assert!(held(lock_for(
        &new,
        &[b"a"],
        b"a",
        Timestamp::compose(now, 51),
        10_000,
        0
    )));
    lock_for(&new, &[b"c"], b"c", Timestamp::compose(now, 52), 10_000, 0).unwrap();

    // The old leader grants locks again once it leads again.
    old.start_leading(
        b"",
        b"",
        Timestamp::compose(now, 60),
        7,
        LeaderLocks::Forget,
    );
    lock_for(&old, &[b"b"], b"b", Timestamp::compose(now, 61), 10_000, 0).unwrap();
}

#[test]
fn scan_lock_finds_prewrite_locks_below_a_timestamp_in_a_range() {
    let s = storage();
    for (key, start) in [(&b"a"[..], 10), (b"b", 30), (b"c", 20), (b"d", 15)] {
        prewrite(&s, vec![put(key, b"v")], start, false).unwrap();
    }
    // A pessimistic lock is not a prewrite lock.
    lock_for(&s, &[b"e"], b"e", ts(5), 10_000, 0).unwrap();
    let keys = |locks: Vec<strata_kvapi::LockInfo>| -> Vec<(Vec<u8>, u64)> {
        locks.into_iter().map(|l| (l.key, l.start_ts.0)).collect()
    };
    assert_eq!(
        keys(s.scan_lock(b"", b"", ts(20), 10).unwrap()),
        vec![
            (b"a".to_vec(), 10),
            (b"c".to_vec(), 20),
            (b"d".to_vec(), 15)
        ]
    );
    assert_eq!(
        keys(s.scan_lock(b"b", b"d", ts(100), 10).unwrap()),
        vec![(b"b".to_vec(), 30), (b"c".to_vec(), 20)]
    );
    assert_eq!(
        keys(s.scan_lock(b"", b"", ts(100), 1).unwrap()),
        vec![(b"a".to_vec(), 10)]
    );
}
