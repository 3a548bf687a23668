//! `Transaction::set_one_pc` and `set_async_commit` pick the commit protocol: one-phase (no
//! commit call), async commit (done once prewritten; every key committed in the background)
//! or two-phase (the primary committed at once, the other keys in the background); the data
//! reads back the same each way. A commit whose answer is lost is sent again when that is safe
//! (the primary's commit), and is otherwise reported as undetermined, never as a failure.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use strata_engine::MemoryEngine;
use strata_kv::Storage;
use strata_kvapi::{
    KvApi, KvError, LockInfo, PessimisticLockRequest, PrewriteRequest, PrewriteResponse,
    ScanRequest, Scanned, SecondaryLocks, TxnStatus,
};
use strata_pd_client::LocalTso;
use strata_txn::{TxnClient, TxnError, TxnMode};
use strata_types::{Key, Timestamp, Value};

/// The local storage, recording the commit protocol a client uses.
struct Recording {
    inner: Storage,
    /// `try_one_pc` and `async_commit` of each prewrite, and the keys of each commit call.
    prewrites: Mutex<Vec<(bool, bool)>>,
    /// The primary and the keys of each prewrite.
    primaries: Mutex<Vec<(Key, Vec<Key>)>>,
    commits: Mutex<Vec<usize>>,
    /// How many of the next prewrites, and of the next commits, are applied but answered as
    /// lost.
    lost_prewrites: AtomicUsize,
    lost_commits: AtomicUsize,
}

/// Takes one from `counter` if it is above zero.
fn take_one(counter: &AtomicUsize) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

impl KvApi for Recording {
    fn get(&self, key: &[u8], ts: Timestamp) -> Result<Option<Value>, KvError> {
        self.inner.get(key, ts)
    }
    fn batch_get(&self, keys: &[Key], ts: Timestamp) -> Result<Vec<Option<Value>>, KvError> {
        self.inner.batch_get(keys, ts)
    }
    fn scan(&self, request: &ScanRequest) -> Result<Scanned, KvError> {
        self.inner.scan(request)
    }
    fn scan_lock(
        &self,
        start: &[u8],
        end: &[u8],
        max_ts: Timestamp,
        limit: usize,
    ) -> Result<Vec<LockInfo>, KvError> {
        self.inner.scan_lock(start, end, max_ts, limit)
    }
    fn pessimistic_lock(&self, request: &PessimisticLockRequest) -> Result<(), KvError> {
        self.inner.pessimistic_lock(request)
    }
    fn pessimistic_rollback(&self, keys: &[Key], start_ts: Timestamp) -> Result<(), KvError> {
        self.inner.pessimistic_rollback(keys, start_ts)
    }
    fn prewrite(&self, request: &PrewriteRequest) -> Result<PrewriteResponse, KvError> {
        self.prewrites
            .lock()
            .push((request.try_one_pc, request.async_commit));
        self.primaries.lock().push((
            request.primary.clone(),
            request.mutations.iter().map(|m| m.key().to_vec()).collect(),
        ));
        let response = self.inner.prewrite(request)?;
        if take_one(&self.lost_prewrites) {
            return Err(KvError::Undetermined("the answer was lost".into()));
        }
        Ok(response)
    }
    fn commit(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
        commit_ts: Timestamp,
    ) -> Result<(), KvError> {
        self.commits.lock().push(keys.len());
        self.inner.commit(keys, start_ts, commit_ts)?;
        if take_one(&self.lost_commits) {
            return Err(KvError::Undetermined("the answer was lost".into()));
        }
        Ok(())
    }
    fn rollback(&self, keys: &[Key], start_ts: Timestamp) -> Result<(), KvError> {
        self.inner.rollback(keys, start_ts)
    }
    fn check_txn_status(
        &self,
        primary: &[u8],
        start_ts: Timestamp,
        current_ts: Timestamp,
        rollback_if_missing: bool,
    ) -> Result<TxnStatus, KvError> {
        self.inner
            .check_txn_status(primary, start_ts, current_ts, rollback_if_missing)
    }
    fn txn_heart_beat(
        &self,
        primary: &[u8],
        start_ts: Timestamp,
        advise_lock_ttl_ms: u64,
    ) -> Result<u64, KvError> {
        self.inner
            .txn_heart_beat(primary, start_ts, advise_lock_ttl_ms)
    }
    fn check_secondary_locks(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
    ) -> Result<SecondaryLocks, KvError> {
        self.inner.check_secondary_locks(keys, start_ts)
    }
    fn resolve_lock(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
        commit_ts: Option<Timestamp>,
    ) -> Result<(), KvError> {
        self.inner.resolve_lock(keys, start_ts, commit_ts)
    }
}

/// Waits until the background committer made `n` commit calls.
fn wait_for_commits(kv: &Recording, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while kv.commits.lock().len() < n {
        assert!(std::time::Instant::now() < deadline, "commits never came");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A client over a recording local storage (the folder holds the timestamp oracle's file).
fn recording_client() -> (tempfile::TempDir, Arc<Recording>, TxnClient) {
    let dir = tempfile::tempdir().unwrap();
    let kv = Arc::new(Recording {
        inner: Storage::new(Arc::new(MemoryEngine::new())).unwrap(),
        prewrites: Mutex::new(Vec::new()),
        primaries: Mutex::new(Vec::new()),
        commits: Mutex::new(Vec::new()),
        lost_prewrites: AtomicUsize::new(0),
        lost_commits: AtomicUsize::new(0),
    });
    let client = TxnClient::new(kv.clone(), Arc::new(LocalTso::open(dir.path()).unwrap()));
    (dir, kv, client)
}

#[test]
fn the_commit_protocol_follows_the_switches() {
    let (_dir, kv, client) = recording_client();

    // One-phase commit (the default): no commit call.
    let mut txn = client.begin(TxnMode::Optimistic).unwrap();
    txn.set_async_commit(true);
    txn.put(b"a".to_vec(), b"1".to_vec());
    txn.put(b"b".to_vec(), b"2".to_vec());
    txn.commit().unwrap();
    assert_eq!(*kv.prewrites.lock(), vec![(true, true)]);
    assert!(
        kv.commits.lock().is_empty(),
        "a one-phase commit sends no commit"
    );

    // Async commit: committed once prewritten; every key committed in one background call.
    let mut txn = client.begin(TxnMode::Optimistic).unwrap();
    txn.set_one_pc(false);
    txn.set_async_commit(true);
    txn.put(b"a".to_vec(), b"3".to_vec());
    txn.put(b"c".to_vec(), b"4".to_vec());
    txn.commit().unwrap();
    assert_eq!(kv.prewrites.lock()[1], (false, true));
    wait_for_commits(&kv, 1);
    assert_eq!(*kv.commits.lock(), vec![2]);

    // Two-phase commit: the primary at once, the other key in the background.
    let mut txn = client.begin(TxnMode::Optimistic).unwrap();
    txn.set_one_pc(false);
    txn.set_async_commit(false);
    txn.put(b"b".to_vec(), b"5".to_vec());
    txn.put(b"d".to_vec(), b"6".to_vec());
    txn.commit().unwrap();
    assert_eq!(kv.prewrites.lock()[2], (false, false));
    wait_for_commits(&kv, 3);
    assert_eq!(*kv.commits.lock(), vec![2, 1, 1]);

    let mut reader = client.begin(TxnMode::Optimistic).unwrap();
    let keys = [b"a".to_vec(), b"b".to_vec(), b"c".to_vec(), b"d".to_vec()];
    let values = reader.batch_get(&keys).unwrap();
    let expected: Vec<Option<Value>> = [b"3", b"5", b"4", b"6"]
        .iter()
        .map(|v| Some(v.to_vec()))
        .collect();
    assert_eq!(values, expected);
}

#[test]
fn the_primary_is_a_key_the_commit_writes_and_pessimistically_one_it_locked() {
    let (_dir, kv, client) = recording_client();

    // An UPDATE buffers an index entry before it locks the row: the row is the primary, so
    // a reader that meets another key's lock finds the transaction alive at the primary.
    let mut txn = client.begin(TxnMode::Pessimistic).unwrap();
    txn.set_one_pc(false);
    txn.set_async_commit(true);
    txn.begin_statement(true).unwrap();
    txn.delete(b"i-old".to_vec());
    txn.put(b"i-new".to_vec(), Vec::new());
    txn.put(b"r".to_vec(), b"row".to_vec());
    txn.lock_keys(vec![b"r".to_vec()], 1000).unwrap();
    txn.commit().unwrap();
    assert_eq!(kv.primaries.lock()[0].0, b"r".to_vec());

    // A statement undone after it wrote the first key takes the primary with it.
    for mode in [TxnMode::Optimistic, TxnMode::Pessimistic] {
        let mut txn = client.begin(mode).unwrap();
        txn.set_one_pc(false);
        txn.begin_statement(true).unwrap();
        txn.put(b"x".to_vec(), b"1".to_vec());
        txn.lock_keys(vec![b"x".to_vec()], 1000).unwrap();
        txn.rollback_statement();
        txn.begin_statement(true).unwrap();
        txn.put(b"y".to_vec(), b"2".to_vec());
        txn.put(b"z".to_vec(), b"3".to_vec());
        txn.lock_keys(vec![b"z".to_vec()], 1000).unwrap();
        txn.commit().unwrap();
        let (primary, keys) = kv.primaries.lock().last().unwrap().clone();
        assert!(
            keys.contains(&primary),
            "{mode:?}: primary {primary:?} not in {keys:?}"
        );
        if mode == TxnMode::Pessimistic {
            assert_eq!(primary, b"z".to_vec());
        }
    }
}

#[test]
fn a_lost_answer_to_the_commit_is_sent_again_or_reported_undetermined() {
    let (_dir, kv, client) = recording_client();
    let read = |key: &[u8]| client.begin_latest_read().get(key).unwrap();

    // A one-phase commit applied but answered as lost: undetermined, and in fact committed.
    kv.lost_prewrites.store(1, Ordering::SeqCst);
    let mut txn = client.begin(TxnMode::Optimistic).unwrap();
    txn.put(b"a".to_vec(), b"1".to_vec());
    let outcome = txn.commit();
    assert!(
        matches!(outcome, Err(TxnError::Kv(KvError::Undetermined(_)))),
        "{outcome:?}"
    );
    assert_eq!(read(b"a"), Some(b"1".to_vec()));

    // A two-phase commit whose primary's commit answer is lost once: sent again, committed.
    kv.lost_commits.store(1, Ordering::SeqCst);
    let mut txn = client.begin(TxnMode::Optimistic).unwrap();
    txn.set_one_pc(false);
    txn.set_async_commit(false);
    txn.put(b"b".to_vec(), b"2".to_vec());
    let commits_before = kv.commits.lock().len();
    assert!(txn.commit().is_ok());
    assert_eq!(kv.commits.lock().len(), commits_before + 2);
    assert_eq!(read(b"b"), Some(b"2".to_vec()));

    // Lost every time: undetermined after three sends, and in fact committed.
    kv.lost_commits.store(10, Ordering::SeqCst);
    let mut txn = client.begin(TxnMode::Optimistic).unwrap();
    txn.set_one_pc(false);
    txn.set_async_commit(false);
    txn.put(b"c".to_vec(), b"3".to_vec());
    let outcome = txn.commit();
    assert!(
        matches!(outcome, Err(TxnError::Kv(KvError::Undetermined(_)))),
        "{outcome:?}"
    );
    assert_eq!(read(b"c"), Some(b"3".to_vec()));
}

#[test]
fn a_commit_past_its_max_commit_ts_writes_nothing_whatever_its_protocol() {
    let (_dir, kv, client) = recording_client();
    // (one-phase, async commit, pessimistic)
    let protocols = [
        (true, true, false),
        (false, true, false),
        (false, false, false),
        (true, true, true),
        (false, false, true),
    ];
    for (one_pc, async_commit, pessimistic) in protocols {
        let case = format!("one_pc {one_pc}, async {async_commit}, pessimistic {pessimistic}");
        let mode = if pessimistic {
            TxnMode::Pessimistic
        } else {
            TxnMode::Optimistic
        };
        let mut txn = client.begin(mode).unwrap();
        txn.set_one_pc(one_pc);
        txn.set_async_commit(async_commit);
        if pessimistic {
            txn.begin_statement(true).unwrap();
            txn.lock_keys(vec![b"x".to_vec()], 0).unwrap();
        }
        txn.put(b"x".to_vec(), b"1".to_vec());
        txn.put(b"y".to_vec(), b"2".to_vec());
        // Every commit timestamp lies after start_ts.
        txn.set_max_commit_ts(txn.start_ts());
        let error = txn.commit().unwrap_err();
        assert!(
            matches!(error, TxnError::Kv(KvError::CommitTsTooLarge { .. })),
            "{case}: {error}"
        );
        let mut reader = client.begin(TxnMode::Optimistic).unwrap();
        assert_eq!(
            reader.batch_get(&[b"x".to_vec(), b"y".to_vec()]).unwrap(),
            vec![None, None],
            "{case}"
        );
        let locks = kv
            .inner
            .scan_lock(b"", b"\xff", Timestamp::MAX, 10)
            .unwrap();
        assert!(locks.is_empty(), "{case}: {locks:?}");
        // Nothing is left locked: another pessimistic transaction takes the key at once.
        let mut other = client.begin(TxnMode::Pessimistic).unwrap();
        other.begin_statement(true).unwrap();
        other.lock_keys(vec![b"x".to_vec()], 0).unwrap();
        other.rollback();
    }

    // A limit in the future lets it commit.
    let mut txn = client.begin(TxnMode::Optimistic).unwrap();
    txn.put(b"x".to_vec(), b"3".to_vec());
    let far = Timestamp::compose(txn.start_ts().physical_ms() + 60_000, 0);
    txn.set_max_commit_ts(far);
    let commit_ts = txn.commit().unwrap();
    assert!(commit_ts <= far);
    let mut reader = client.begin(TxnMode::Optimistic).unwrap();
    assert_eq!(reader.get(b"x").unwrap(), Some(b"3".to_vec()));
}
