//! Garbage collection by compactions: which write-CF entries a compaction may leave out.
//!
//! The rule is the collector's ([`crate::gc`]) applied to what one compaction sees: among the
//! versions of a key at or below the safe point, the newest put stays (every snapshot at or
//! after the safe point that reaches below it sees that one) and everything older goes, as do
//! lock-only and rollback records below the safe point. A version left out that kept its value
//! in the default CF names that value as an orphan, which the engine then deletes.
//!
//! Versions in other files than the compaction's are not seen, so the rule keeps more than the
//! collector would, never less: a version left out always has a newer one at or below the safe
//! point in the same output. A delete that is the newest version below the safe point is the
//! exception: it goes, with everything older, only in a compaction of every file (RocksDB's
//! full compaction, which [`QuietCompactions`](crate::gc::QuietCompactions) runs after a burst
//! of writes). Elsewhere older versions of its key may sit in files below the compaction, and
//! dropping the delete would bring them back; the collector's passes delete those.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use strata_engine::{GarbageFilter, GarbageJudge};
use strata_types::Timestamp;

use crate::mvcc::{self, Write, WriteKind};

/// Judges compactions by the safe point shared with [`crate::Storage`].
pub(crate) struct VersionGarbage {
    pub(crate) safe_point: Arc<AtomicU64>,
}

impl GarbageFilter for VersionGarbage {
    fn judge(&self, whole: bool) -> Box<dyn GarbageJudge> {
        Box::new(VersionJudge {
            safe_point: Timestamp(self.safe_point.load(Ordering::SeqCst)),
            whole,
            key: Vec::new(),
            below: Below::Nothing,
            orphans: Vec::new(),
        })
    }
}

/// What a judge has met of the current key's versions at or below the safe point.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Below {
    Nothing,
    /// The newest put or delete there, which stays: everything older goes.
    Kept,
    /// The newest there was a delete, gone with everything older.
    Deleted,
}

/// One compaction's judge. The safe point is read once, when the compaction starts: it only
/// rises, so a compaction never drops more than the safe point of its start allows.
struct VersionJudge {
    safe_point: Timestamp,
    /// Whether the compaction reads every file of the write CF.
    whole: bool,
    /// The encoded user key whose versions are being judged.
    key: Vec<u8>,
    below: Below,
    /// Default-CF keys of the long values of versions left out.
    orphans: Vec<Vec<u8>>,
}

impl GarbageJudge for VersionJudge {
    fn is_garbage(&mut self, key: &[u8], value: &[u8]) -> bool {
        let Ok((user, commit_ts)) = mvcc::split_versioned_key(key) else {
            return false;
        };
        if user != self.key.as_slice() {
            self.key.clear();
            self.key.extend_from_slice(user);
            self.below = Below::Nothing;
        }
        if commit_ts > self.safe_point {
            return false;
        }
        let Ok(write) = Write::decode(value) else {
            return false;
        };
        match (write.kind, self.below) {
            (WriteKind::Lock | WriteKind::Rollback, _) => true,
            (WriteKind::Delete, Below::Nothing) if self.whole => {
                self.below = Below::Deleted;
                true
            }
            (WriteKind::Put | WriteKind::Delete, Below::Nothing) => {
                self.below = Below::Kept;
                false
            }
            (WriteKind::Put | WriteKind::Delete, Below::Kept | Below::Deleted) => {
                if write.kind == WriteKind::Put && write.short_value.is_none() {
                    self.orphans
                        .push(mvcc::append_ts(self.key.clone(), write.start_ts));
                }
                true
            }
        }
    }

    fn orphans(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.orphans)
    }
}

#[cfg(test)]
mod tests {
    use strata_engine::{Cf, Engine, RocksEngine, RocksOptions};
    use strata_kvapi::KvApi;

    use super::*;
    use crate::gc;
    use crate::tests::one_pc as put;
    use crate::Storage;

    struct Store {
        _dir: tempfile::TempDir,
        engine: Arc<RocksEngine>,
        storage: Storage,
    }

    fn store() -> Store {
        let dir = tempfile::tempdir().unwrap();
        let options = RocksOptions {
            block_cache_bytes: 8 << 20,
            write_buffer_bytes: 1 << 20,
        };
        let engine = Arc::new(RocksEngine::open(dir.path(), &options).unwrap());
        let storage = Storage::new(engine.clone()).unwrap();
        engine.set_garbage_filter(storage.garbage_filter());
        Store {
            _dir: dir,
            engine,
            storage,
        }
    }

    impl Store {
        /// Raises the safe point to `safe_point` and compacts every version.
        fn compact_at(&self, safe_point: Timestamp) {
            self.storage.raise_gc_safe_point(safe_point);
            self.engine.compact_versions().unwrap();
        }

        /// The write-CF records of `key`, newest first, as (commit_ts, kind).
        fn records(&self, key: &[u8]) -> Vec<(Timestamp, WriteKind)> {
            let encoded = mvcc::encode_user_key(key);
            let mut it = self.engine.iterator(Cf::Write, b"", None);
            it.seek(&encoded);
            let mut out = Vec::new();
            while it.valid().unwrap() {
                let (user, commit_ts) = mvcc::split_versioned_key(it.key()).unwrap();
                if user != encoded.as_slice() {
                    break;
                }
                out.push((commit_ts, Write::decode(it.value()).unwrap().kind));
                it.next();
            }
            out
        }

        fn get(&self, key: &[u8], ts: Timestamp) -> Option<Vec<u8>> {
            self.storage.get(key, ts).unwrap()
        }
    }

    #[test]
    fn a_compaction_keeps_every_version_a_snapshot_at_or_after_the_safe_point_sees() {
        let s = store();
        let mut at = Vec::new();
        let mut start = 10;
        for i in 0..5 {
            let commit = put(&s.storage, b"a", Some(format!("v{i}").as_bytes()), start);
            at.push(commit);
            start = commit.0 + 1;
        }
        s.storage
            .rollback(&[b"a".to_vec()], Timestamp(start))
            .unwrap();
        // A reader holds its snapshot at the third version's commit: the safe point waits there.
        s.compact_at(at[2]);
        for (i, ts) in at.iter().enumerate().skip(2) {
            assert_eq!(s.get(b"a", *ts), Some(format!("v{i}").into_bytes()));
        }
        assert_eq!(
            s.records(b"a").iter().map(|r| r.0).collect::<Vec<_>>(),
            vec![Timestamp(start), at[4], at[3], at[2]],
            "versions older than the one visible at the safe point are gone, the rest stay"
        );

        // Every reader has finished.
        s.compact_at(Timestamp(start + 1));
        assert_eq!(s.records(b"a"), vec![(at[4], WriteKind::Put)]);
        assert_eq!(s.get(b"a", Timestamp::MAX), Some(b"v4".to_vec()));
    }

    #[test]
    fn deleted_rows_stay_deleted_while_a_whole_compaction_drops_their_delete_and_versions() {
        let s = store();
        let long = vec![3u8; mvcc::SHORT_VALUE_MAX_BYTES + 1];
        let t1 = put(&s.storage, b"gone", Some(&long), 10);
        let t2 = put(&s.storage, b"gone", Some(b"2"), t1.0 + 1);
        let t3 = put(&s.storage, b"gone", None, t2.0 + 1);
        let t4 = put(&s.storage, b"back", Some(b"1"), t3.0 + 1);
        let t5 = put(&s.storage, b"back", None, t4.0 + 1);
        let t6 = put(&s.storage, b"back", Some(b"2"), t5.0 + 1);
        let safe = Timestamp(t6.0 + 1);
        s.compact_at(safe);
        assert_eq!(
            s.records(b"gone"),
            vec![],
            "a compaction of every file sees every version under the delete"
        );
        assert_eq!(s.get(b"gone", safe), None);
        assert_eq!(s.get(b"gone", Timestamp::MAX), None);
        assert_eq!(s.records(b"back"), vec![(t6, WriteKind::Put)]);
        assert_eq!(s.get(b"back", safe), Some(b"2".to_vec()));
        assert_eq!(
            s.engine.delete_orphans().unwrap(),
            1,
            "the long value under it"
        );
        assert_eq!(default_cf_entries(&s), 0);
        assert_eq!(
            gc::collect(&s.storage, safe).unwrap(),
            0,
            "nothing left for a pass"
        );
    }

    #[test]
    fn a_compaction_of_some_files_keeps_the_delete_that_hides_older_files() {
        let safe_point = Timestamp(100);
        let filter = VersionGarbage {
            safe_point: Arc::new(AtomicU64::new(safe_point.0)),
        };
        let key = mvcc::encode_user_key(b"gone");
        let version = |commit: u64| mvcc::append_ts(key.clone(), Timestamp(commit));
        let delete = Write::new(WriteKind::Delete, Timestamp(49), None).encode();
        let short = Write::new(WriteKind::Put, Timestamp(39), Some(b"2")).encode();
        let long_put = Write::new(WriteKind::Put, Timestamp(29), None).encode();
        let rollback = Write::new(WriteKind::Rollback, Timestamp(20), None).encode();
        let entries = [
            (version(50), &delete),
            (version(40), &short),
            (version(30), &long_put),
            (version(20), &rollback),
        ];
        let judged = |whole: bool| {
            let mut judge = filter.judge(whole);
            let garbage: Vec<bool> = entries
                .iter()
                .map(|(k, v)| judge.is_garbage(k, v))
                .collect();
            (garbage, judge.orphans())
        };
        let orphan = vec![mvcc::append_ts(key.clone(), Timestamp(29))];
        assert_eq!(
            judged(false),
            (vec![false, true, true, true], orphan.clone()),
            "versions of the key may lie in files below: the delete stays to hide them"
        );
        assert_eq!(judged(true), (vec![true, true, true, true], orphan));
    }

    #[test]
    fn versions_with_long_values_go_and_their_values_after_them() {
        let s = store();
        let long = |b: u8| vec![b; mvcc::SHORT_VALUE_MAX_BYTES + 1];
        let t1 = put(&s.storage, b"k", Some(&long(1)), 10);
        let t2 = put(&s.storage, b"k", Some(&long(2)), t1.0 + 1);
        let t3 = put(&s.storage, b"k", Some(&long(3)), t2.0 + 1);
        let safe = Timestamp(t3.0 + 1);
        s.compact_at(safe);
        assert_eq!(s.records(b"k"), vec![(t3, WriteKind::Put)]);
        assert_eq!(default_cf_entries(&s), 3, "the values wait for the engine");
        assert_eq!(s.engine.delete_orphans().unwrap(), 2);
        assert_eq!(
            default_cf_entries(&s),
            1,
            "the newest version's value stays"
        );
        assert_eq!(s.get(b"k", safe), Some(long(3)));
        assert_eq!(s.engine.delete_orphans().unwrap(), 0);
    }

    fn default_cf_entries(s: &Store) -> usize {
        let mut values = s.engine.iterator(Cf::Default, b"", None);
        values.seek(b"");
        let mut n = 0;
        while values.valid().unwrap() {
            n += 1;
            values.next();
        }
        n
    }

    #[test]
    fn before_any_safe_point_a_compaction_drops_nothing() {
        let s = store();
        let t1 = put(&s.storage, b"k", Some(b"1"), 10);
        let t2 = put(&s.storage, b"k", Some(b"2"), t1.0 + 1);
        s.storage
            .rollback(&[b"k".to_vec()], Timestamp(t2.0 + 1))
            .unwrap();
        s.engine.compact_versions().unwrap();
        assert_eq!(s.records(b"k").len(), 3);
        assert_eq!(s.get(b"k", t1), Some(b"1".to_vec()));
    }
}
