//! `Transaction::set_one_pc` decides whether a commit may finish in its prewrite: with it on
//! (the default) a commit asks the KV API for a one-phase commit and sends no commit; with it
//! off, every commit prewrites and then commits (the primary at once, the other keys in the
//! background), and the data reads back the same either way.

use std::sync::Arc;

use parking_lot::Mutex;
use strata_engine::MemoryEngine;
use strata_kv::Storage;
use strata_kvapi::{
    KvApi, KvError, PessimisticLockRequest, PrewriteRequest, PrewriteResponse, ScanRequest,
    TxnStatus,
};
use strata_pd::LocalTso;
use strata_txn::{TxnClient, TxnMode};
use strata_types::{Key, Timestamp, Value};

/// The local storage, recording the commit protocol a client uses.
struct Recording {
    inner: Storage,
    /// `try_one_pc` of each prewrite, and how many commit calls came.
    prewrites: Mutex<Vec<bool>>,
    commits: Mutex<usize>,
}

impl KvApi for Recording {
    fn get(&self, key: &[u8], ts: Timestamp) -> Result<Option<Value>, KvError> {
        self.inner.get(key, ts)
    }
    fn batch_get(&self, keys: &[Key], ts: Timestamp) -> Result<Vec<Option<Value>>, KvError> {
        self.inner.batch_get(keys, ts)
    }
    fn scan(&self, request: &ScanRequest) -> Result<Vec<(Key, Value)>, KvError> {
        self.inner.scan(request)
    }
    fn pessimistic_lock(&self, request: &PessimisticLockRequest) -> Result<(), KvError> {
        self.inner.pessimistic_lock(request)
    }
    fn pessimistic_rollback(&self, keys: &[Key], start_ts: Timestamp) -> Result<(), KvError> {
        self.inner.pessimistic_rollback(keys, start_ts)
    }
    fn prewrite(&self, request: &PrewriteRequest) -> Result<PrewriteResponse, KvError> {
        self.prewrites.lock().push(request.try_one_pc);
        self.inner.prewrite(request)
    }
    fn commit(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
        commit_ts: Timestamp,
    ) -> Result<(), KvError> {
        *self.commits.lock() += 1;
        self.inner.commit(keys, start_ts, commit_ts)
    }
    fn rollback(&self, keys: &[Key], start_ts: Timestamp) -> Result<(), KvError> {
        self.inner.rollback(keys, start_ts)
    }
    fn check_txn_status(
        &self,
        primary: &[u8],
        start_ts: Timestamp,
        current_ts: Timestamp,
    ) -> Result<TxnStatus, KvError> {
        self.inner.check_txn_status(primary, start_ts, current_ts)
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

#[test]
fn one_phase_commit_follows_the_switch() {
    let dir = tempfile::tempdir().unwrap();
    let kv = Arc::new(Recording {
        inner: Storage::new(Arc::new(MemoryEngine::new())).unwrap(),
        prewrites: Mutex::new(Vec::new()),
        commits: Mutex::new(0),
    });
    let client = TxnClient::new(kv.clone(), Arc::new(LocalTso::open(dir.path()).unwrap()));

    let mut txn = client.begin(TxnMode::Optimistic).unwrap();
    txn.put(b"a".to_vec(), b"1".to_vec());
    txn.put(b"b".to_vec(), b"2".to_vec());
    txn.commit().unwrap();
    assert_eq!(*kv.prewrites.lock(), vec![true]);
    assert_eq!(*kv.commits.lock(), 0, "a one-phase commit sends no commit");

    let mut txn = client.begin(TxnMode::Optimistic).unwrap();
    txn.set_one_pc(false);
    txn.put(b"a".to_vec(), b"3".to_vec());
    txn.put(b"c".to_vec(), b"4".to_vec());
    txn.commit().unwrap();
    assert_eq!(*kv.prewrites.lock(), vec![true, false]);
    // The primary at once; the secondary in the background.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while *kv.commits.lock() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the secondary was never committed"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(*kv.commits.lock(), 2, "the primary, then the secondary");

    let mut reader = client.begin(TxnMode::Optimistic).unwrap();
    let keys = [b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
    let values = reader.batch_get(&keys).unwrap();
    let expected: Vec<Option<Value>> = [b"3", b"2", b"4"]
        .iter()
        .map(|v| Some(v.to_vec()))
        .collect();
    assert_eq!(values, expected);
}
