//! Garbage left out of the write CF by its compactions.
//!
//! The engine does not interpret keys, so the MVCC layer says which write-CF entries no reader
//! can need any more through a [`GarbageFilter`], and RocksDB leaves them out of the files a
//! compaction writes (TiKV's GC compaction filter). No deletion is written for them, so reads
//! never step over their tombstones, and every replica drops its own garbage without Raft
//! traffic.
//!
//! A filter only runs where compactions run, and compactions follow the shape of the tree, not
//! the garbage: versions a burst of writes left in the memtable and the newest files stay there
//! once the writes stop. [`RocksEngine::compact_versions`](crate::RocksEngine::compact_versions)
//! flushes and compacts the whole write CF for the caller that knows when that pays.

use std::ffi::CString;
use std::sync::{Arc, OnceLock};

use rocksdb::compaction_filter::{CompactionFilter, Decision};
use rocksdb::compaction_filter_factory::{CompactionFilterContext, CompactionFilterFactory};

/// Says which entries of the write CF are garbage.
pub trait GarbageFilter: Send + Sync {
    /// A judge for one compaction, shown the compaction's entries in key order.
    fn judge(&self) -> Box<dyn GarbageJudge>;
}

/// Judges the entries of one compaction, in key order.
pub trait GarbageJudge: Send {
    /// Whether the entry may be left out of the compaction's output.
    fn is_garbage(&mut self, key: &[u8], value: &[u8]) -> bool;
}

/// Where the filter is installed once the layer above exists (the engine is opened first).
pub(crate) type FilterSlot = Arc<OnceLock<Arc<dyn GarbageFilter>>>;

/// Hands each compaction of the write CF a judge from the installed filter, if any.
pub(crate) struct Factory {
    slot: FilterSlot,
    name: CString,
}

impl Factory {
    pub(crate) fn new(slot: FilterSlot) -> Factory {
        Factory {
            slot,
            name: CString::new("strata.garbage").expect("no NUL"),
        }
    }
}

impl CompactionFilterFactory for Factory {
    type Filter = Filter;

    fn create(&mut self, _context: CompactionFilterContext) -> Filter {
        Filter {
            judge: self.slot.get().map(|filter| filter.judge()),
            name: self.name.clone(),
        }
    }

    fn name(&self) -> &std::ffi::CStr {
        &self.name
    }
}

pub(crate) struct Filter {
    judge: Option<Box<dyn GarbageJudge>>,
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
