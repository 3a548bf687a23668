//! Garbage left out of the write CF by its compactions.
//!
//! The engine does not interpret keys, so the MVCC layer says which write-CF entries no reader
//! can need any more through a [`GarbageFilter`], and RocksDB leaves them out of the files a
//! compaction writes (TiKV's GC compaction filter). No deletion is written for them, so reads
//! never step over their tombstones, and every replica drops its own garbage without Raft
//! traffic. An entry left out may point at a value in the default CF; the judge names those
//! values ([`GarbageJudge::orphans`]) and
//! [`RocksEngine::delete_orphans`](crate::RocksEngine::delete_orphans) deletes them from this
//! engine alone, as the entries went.
//!
//! A filter only runs where compactions run, and compactions follow the shape of the tree, not
//! the garbage: versions a burst of writes left in the memtable and the newest files stay there
//! once the writes stop. [`RocksEngine::compact_versions`](crate::RocksEngine::compact_versions)
//! flushes and compacts the whole write CF for the caller that knows when that pays.

use std::ffi::CString;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use rocksdb::compaction_filter::{CompactionFilter, Decision};
use rocksdb::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};

/// Says which entries of the write CF are garbage.
pub trait GarbageFilter: Send + Sync {
    /// A judge for one compaction, shown the compaction's entries in key order. `whole` says
    /// that the compaction reads every file of the column family (RocksDB's full compaction),
    /// so no older entry of any key it sees lies outside it.
    fn judge(&self, whole: bool) -> Box<dyn GarbageJudge>;
}

/// Judges the entries of one compaction, in key order.
pub trait GarbageJudge: Send {
    /// Whether the entry may be left out of the compaction's output.
    fn is_garbage(&mut self, key: &[u8], value: &[u8]) -> bool;

    /// The default-CF keys that entries judged garbage pointed at, taken once the compaction
    /// has read its last entry: nothing reads them any more.
    fn orphans(&mut self) -> Vec<Vec<u8>>;
}

/// The installed filter, and the default-CF keys that finished compactions orphaned.
#[derive(Default)]
pub(crate) struct Garbage {
    filter: OnceLock<Arc<dyn GarbageFilter>>,
    orphans: Mutex<Vec<Vec<u8>>>,
}

impl Garbage {
    /// Installs `filter`; only the first one installed counts (the engine is opened before the
    /// layer above exists).
    pub(crate) fn install(&self, filter: Arc<dyn GarbageFilter>) {
        let _ = self.filter.set(filter);
    }

    /// The orphaned default-CF keys collected so far, leaving none.
    pub(crate) fn take_orphans(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.orphans.lock())
    }
}

/// Hands each compaction of the write CF a judge from the installed filter, if any.
pub(crate) struct Factory {
    garbage: Arc<Garbage>,
    name: CString,
}

impl Factory {
    pub(crate) fn new(garbage: Arc<Garbage>) -> Factory {
        Factory {
            garbage,
            name: CString::new("strata.garbage").expect("no NUL"),
        }
    }
}

impl CompactionFilterFactory for Factory {
    type Filter = Filter;

    fn create(&mut self, context: CompactionFilterContext) -> Filter {
        Filter {
            judge: self
                .garbage
                .filter
                .get()
                .map(|filter| filter.judge(context.is_full_compaction)),
            garbage: self.garbage.clone(),
            name: self.name.clone(),
        }
    }

    fn name(&self) -> &std::ffi::CStr {
        &self.name
    }
}

pub(crate) struct Filter {
    judge: Option<Box<dyn GarbageJudge>>,
    garbage: Arc<Garbage>,
    name: CString,
}

impl CompactionFilter for Filter {
    fn filter(&mut self, _level: u32, key: &[u8], value: &[u8]) -> Decision {
        let garbage = self
            .judge
            .as_mut()
            .is_some_and(|judge| judge.is_garbage(key, value));
        if garbage {
            Decision::Remove
        } else {
            Decision::Keep
        }
    }

    fn name(&self) -> &std::ffi::CStr {
        &self.name
    }
}

impl Drop for Filter {
    /// RocksDB drops a compaction's filter when the compaction has read its last entry.
    fn drop(&mut self) {
        if let Some(judge) = &mut self.judge {
            let orphans = judge.orphans();
            if !orphans.is_empty() {
                self.garbage.orphans.lock().extend(orphans);
            }
        }
    }
}
