//! strata-engine: the ordered key-value store under the MVCC layer.
//!
//! The [`Engine`] trait is the whole surface the layers above use: point reads, ordered
//! iteration over one column family, and atomic write batches that are optionally synced to
//! the write-ahead log before they are acknowledged. Two implementations stand behind it:
//!
//! ```text
//!            Engine (trait)
//!           /              \
//!   RocksEngine           MemoryEngine
//!   (RocksDB on disk,     (BTreeMaps, for unit tests
//!    lz4 + zstd, WAL)      and simulations)
//! ```
//!
//! Three column families mirror Percolator as TiKV lays it out: [`Cf::Default`] holds large
//! values keyed by `key + start_ts`, [`Cf::Lock`] holds transaction locks keyed by `key`, and
//! [`Cf::Write`] holds commit records keyed by `key + commit_ts`. The engine does not interpret
//! keys; it only orders them bytewise.
//!
//! Durability: a batch written with `sync = true` is on stable storage when `write` returns.
//! RocksDB groups concurrent synced writers so that many commits share one `fsync` (group
//! commit); the engine adds nothing on top of that.

mod garbage;
mod group_commit;
mod memory;
mod metrics;
mod rocks;

pub use garbage::{GarbageFilter, GarbageJudge};
pub use memory::MemoryEngine;
pub use rocks::{RocksEngine, RocksOptions, BLOCK_CACHE_BYTES_DEFAULT, WRITE_BUFFER_BYTES_DEFAULT};

/// Column families of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cf {
    Default,
    Lock,
    Write,
    /// Replication state kept atomically with the data it describes (e.g. how far a region's
    /// Raft log has been applied), and the engine's own bookkeeping under `engine/`.
    Raft,
}

impl Cf {
    /// Every column family, in a fixed order.
    pub const ALL: [Cf; 4] = [Cf::Default, Cf::Lock, Cf::Write, Cf::Raft];

    /// The column family's name on disk.
    pub fn name(self) -> &'static str {
        match self {
            Cf::Default => "default",
            Cf::Lock => "lock",
            Cf::Write => "write",
            Cf::Raft => "raft",
        }
    }

    fn index(self) -> usize {
        match self {
            Cf::Default => 0,
            Cf::Lock => 1,
            Cf::Write => 2,
            Cf::Raft => 3,
        }
    }
}

/// Failures of the storage engine. None of them is retryable by the caller: the engine is
/// either corrupt or out of resources, and the statement must fail.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("storage engine: {0}")]
    Storage(String),
    /// The write was not applied and never will be (a replicated engine lost leadership of
    /// the data's region): the caller may retry it where the data is led now.
    #[error("not applied: {0}")]
    Unavailable(String),
    /// The write may or may not have been applied, and may still be (a replicated engine
    /// proposed it but did not see it applied in time, or lost leadership meanwhile).
    #[error("outcome unknown: {0}")]
    OutcomeUnknown(String),
}

/// One mutation inside a [`WriteBatch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchOp {
    Put {
        cf: Cf,
        key: Vec<u8>,
        value: Vec<u8>,
    },
    Delete {
        cf: Cf,
        key: Vec<u8>,
    },
}

/// Mutations applied atomically by [`Engine::write`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriteBatch {
    ops: Vec<BatchOp>,
}

impl WriteBatch {
    pub fn new() -> WriteBatch {
        WriteBatch::default()
    }

    pub fn put(&mut self, cf: Cf, key: Vec<u8>, value: Vec<u8>) {
        self.ops.push(BatchOp::Put { cf, key, value });
    }

    pub fn delete(&mut self, cf: Cf, key: Vec<u8>) {
        self.ops.push(BatchOp::Delete { cf, key });
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    pub fn ops(&self) -> &[BatchOp] {
        &self.ops
    }

    /// Moves the mutations of `other` behind this batch's.
    pub fn append(&mut self, other: WriteBatch) {
        self.ops.extend(other.ops);
    }

    /// The batch as bytes (how a replicated engine ships it in a log entry).
    pub fn encode(&self) -> Vec<u8> {
        let size: usize = self
            .ops
            .iter()
            .map(|op| match op {
                BatchOp::Put { key, value, .. } => 10 + key.len() + value.len(),
                BatchOp::Delete { key, .. } => 6 + key.len(),
            })
            .sum();
        let mut out = Vec::with_capacity(size);
        for op in &self.ops {
            match op {
                BatchOp::Put { cf, key, value } => {
                    out.extend_from_slice(&[OP_PUT, cf.index() as u8]);
                    put_bytes(&mut out, key);
                    put_bytes(&mut out, value);
                }
                BatchOp::Delete { cf, key } => {
                    out.extend_from_slice(&[OP_DELETE, cf.index() as u8]);
                    put_bytes(&mut out, key);
                }
            }
        }
        out
    }

    /// Reads a batch written by [`WriteBatch::encode`].
    pub fn decode(mut input: &[u8]) -> Result<WriteBatch, EngineError> {
        let corrupt = || EngineError::Storage("corrupt encoded write batch".into());
        let mut batch = WriteBatch::new();
        while let [op, cf, rest @ ..] = input {
            let cf = *Cf::ALL.get(*cf as usize).ok_or_else(corrupt)?;
            let (key, rest) = take_bytes(rest).ok_or_else(corrupt)?;
            input = match *op {
                OP_PUT => {
                    let (value, rest) = take_bytes(rest).ok_or_else(corrupt)?;
                    batch.put(cf, key.to_vec(), value.to_vec());
                    rest
                }
                OP_DELETE => {
                    batch.delete(cf, key.to_vec());
                    rest
                }
                _ => return Err(corrupt()),
            };
        }
        if input.is_empty() {
            Ok(batch)
        } else {
            Err(corrupt())
        }
    }
}

const OP_PUT: u8 = 1;
const OP_DELETE: u8 = 2;

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn take_bytes(input: &[u8]) -> Option<(&[u8], &[u8])> {
    let (len, rest) = input.split_first_chunk::<4>()?;
    let len = u32::from_le_bytes(*len) as usize;
    (rest.len() >= len).then(|| rest.split_at(len))
}

/// An ordered cursor over one column family, bounded above by an optional exclusive key.
pub trait EngineIterator {
    /// Positions at the first key `>= key`.
    fn seek(&mut self, key: &[u8]);
    /// Positions at the last key `<= key`.
    fn seek_for_prev(&mut self, key: &[u8]);
    /// Whether the cursor points at an entry; an I/O error surfaces here.
    fn valid(&self) -> Result<bool, EngineError>;
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
    fn next(&mut self);
    fn prev(&mut self);
}

/// Length of the timestamp that ends every key of the write CF.
const TIMESTAMP_SUFFIX_BYTES: usize = 8;

/// The part of a write-CF key that its versions share: all but the timestamp.
fn strip_timestamp(key: &[u8]) -> &[u8] {
    &key[..key.len().saturating_sub(TIMESTAMP_SUFFIX_BYTES)]
}

/// A total-order cursor confined to the versions of the key it last sought: the default
/// [`Engine::versions_iterator`].
struct VersionsCursor<'a> {
    inner: Box<dyn EngineIterator + 'a>,
    prefix: Vec<u8>,
}

impl VersionsCursor<'_> {
    fn aim(&mut self, key: &[u8]) {
        self.prefix.clear();
        self.prefix.extend_from_slice(strip_timestamp(key));
    }
}

impl EngineIterator for VersionsCursor<'_> {
    fn seek(&mut self, key: &[u8]) {
        self.aim(key);
        self.inner.seek(key);
    }

    fn seek_for_prev(&mut self, key: &[u8]) {
        self.aim(key);
        self.inner.seek_for_prev(key);
    }

    fn valid(&self) -> Result<bool, EngineError> {
        Ok(self.inner.valid()? && strip_timestamp(self.inner.key()) == self.prefix.as_slice())
    }

    fn key(&self) -> &[u8] {
        self.inner.key()
    }

    fn value(&self) -> &[u8] {
        self.inner.value()
    }

    fn next(&mut self) {
        self.inner.next();
    }

    fn prev(&mut self) {
        self.inner.prev();
    }
}

/// The ordered key-value store.
pub trait Engine: Send + Sync + 'static {
    /// Returns the value stored under `key` in `cf`.
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>, EngineError>;

    /// Applies `batch` atomically; with `sync` the write-ahead log is on disk before returning.
    fn write(&self, batch: &WriteBatch, sync: bool) -> Result<(), EngineError>;

    /// Opens a cursor over `cf` whose keys are `>= lower` (empty: unbounded) and `< upper` (when
    /// given).
    fn iterator(&self, cf: Cf, lower: &[u8], upper: Option<&[u8]>) -> Box<dyn EngineIterator + '_>;

    /// Opens a cursor over the versions of one key in the write CF: every seek names a key
    /// whose last 8 bytes are a timestamp, and the cursor stays among the keys that share the
    /// rest with the key last sought (so the engine can skip files by a prefix bloom filter).
    fn versions_iterator(&self) -> Box<dyn EngineIterator + '_> {
        Box::new(VersionsCursor {
            inner: self.iterator(Cf::Write, b"", None),
            prefix: Vec::new(),
        })
    }

    /// Returns the approximate bytes on disk (0 for memory).
    fn approximate_size_bytes(&self) -> u64 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exercise(engine: &dyn Engine) {
        let mut batch = WriteBatch::new();
        for k in [b"a", b"c", b"e"] {
            batch.put(Cf::Write, k.to_vec(), k.to_vec());
        }
        batch.put(Cf::Lock, b"c".to_vec(), b"lock".to_vec());
        engine.write(&batch, true).unwrap();
        assert_eq!(engine.get(Cf::Write, b"c").unwrap(), Some(b"c".to_vec()));
        assert_eq!(engine.get(Cf::Default, b"c").unwrap(), None);

        let mut it = engine.iterator(Cf::Write, b"b", Some(b"e"));
        it.seek(b"b");
        assert!(it.valid().unwrap());
        assert_eq!(it.key(), b"c");
        it.next();
        assert!(!it.valid().unwrap(), "upper bound is exclusive");
        it.seek_for_prev(b"d");
        assert_eq!(it.key(), b"c");
        it.prev();
        assert!(!it.valid().unwrap(), "lower bound holds for prev");

        let mut batch = WriteBatch::new();
        batch.delete(Cf::Write, b"c".to_vec());
        engine.write(&batch, false).unwrap();
        let mut it = engine.iterator(Cf::Write, b"", None);
        it.seek(b"b");
        assert_eq!(it.key(), b"e");
    }

    fn versions(engine: &dyn Engine) {
        let version = |key: &[u8], ts: u8| [key, &[0, 0, 0, 0, 0, 0, 0, ts]].concat();
        let mut batch = WriteBatch::new();
        for (key, ts) in [(&b"k"[..], 2u8), (b"k", 1), (b"l", 9), (b"j", 5)] {
            batch.put(Cf::Write, version(key, ts), vec![ts]);
        }
        engine.write(&batch, false).unwrap();
        let mut it = engine.versions_iterator();
        it.seek(&version(b"k", 0));
        let mut seen = Vec::new();
        while it.valid().unwrap() {
            seen.push(it.value()[0]);
            it.next();
        }
        assert_eq!(
            seen,
            vec![1, 2],
            "only the versions of k, oldest timestamp bytes first"
        );
        it.seek(&version(b"i", 0));
        assert!(!it.valid().unwrap(), "no version of i, and j's are not i's");
        it.seek(&version(b"l", 0));
        assert_eq!((it.valid().unwrap(), it.value()), (true, &[9u8][..]));
        it.next();
        assert!(!it.valid().unwrap());
        drop(it);

        // A cursor taken after a write sees it, whether new or reused.
        for ts in [3u8, 4] {
            let mut batch = WriteBatch::new();
            batch.put(Cf::Write, version(b"k", ts), vec![ts]);
            engine.write(&batch, true).unwrap();
            let mut it = engine.versions_iterator();
            it.seek(&version(b"k", ts));
            assert_eq!((it.valid().unwrap(), it.value()), (true, &[ts][..]));
        }
    }

    #[test]
    fn versions_iterators_stay_within_one_key() {
        versions(&MemoryEngine::new());
        let dir = tempfile::tempdir().unwrap();
        let engine = RocksEngine::open(dir.path(), &RocksOptions::default()).unwrap();
        versions(&engine);
    }

    #[test]
    fn write_batches_round_trip_through_bytes() {
        let mut batch = WriteBatch::new();
        batch.put(Cf::Write, b"k".to_vec(), b"v".to_vec());
        batch.delete(Cf::Lock, b"".to_vec());
        batch.put(Cf::Raft, vec![0xFF; 300], Vec::new());
        let bytes = batch.encode();
        assert_eq!(WriteBatch::decode(&bytes).unwrap(), batch);
        assert_eq!(WriteBatch::decode(&[]).unwrap(), WriteBatch::new());
        assert!(WriteBatch::decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(WriteBatch::decode(&[9, 0, 0, 0, 0, 0]).is_err());
    }

    #[test]
    fn memory_engine_orders_and_bounds() {
        exercise(&MemoryEngine::new());
    }

    #[test]
    fn rocks_engine_orders_bounds_and_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let engine = RocksEngine::open(dir.path(), &RocksOptions::default()).unwrap();
            exercise(&engine);
        }
        let engine = RocksEngine::open(dir.path(), &RocksOptions::default()).unwrap();
        assert_eq!(engine.get(Cf::Write, b"a").unwrap(), Some(b"a".to_vec()));
        assert_eq!(engine.get(Cf::Write, b"c").unwrap(), None);
        assert_eq!(engine.get(Cf::Lock, b"c").unwrap(), Some(b"lock".to_vec()));
    }
}
