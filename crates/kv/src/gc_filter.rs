//! Garbage collection by compactions: which write-CF entries a compaction may leave out.
//!
//! The rule is the collector's ([`crate::gc`]) applied to what one compaction sees: among the
//! versions of a key at or below the safe point, the newest put or delete stays (every snapshot
//! at or after the safe point that reaches below it sees that one) and everything older goes, as
//! do lock-only and rollback records below the safe point. Versions in other files than the
//! compaction's are not seen, so the rule keeps more than the collector would, never less: a
//! version left out always has a newer one at or below the safe point in the same output.
//!
//! Two kinds of entries stay for the collector's passes, which write deletions through Raft:
//! a delete that is the newest version below the safe point (older versions of its key may sit
//! in files below this compaction, and dropping the delete would bring them back), and a put
//! whose value lives in the default CF (the collector deletes the value with it).

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
    fn judge(&self) -> Box<dyn GarbageJudge> {
        Box::new(VersionJudge {
            safe_point: Timestamp(self.safe_point.load(Ordering::SeqCst)),
            key: Vec::new(),
            shadowed: false,
        })
    }
}

/// One compaction's judge. The safe point is read once, when the compaction starts: it only
/// rises, so a compaction never drops more than the safe point of its start allows.
struct VersionJudge {
    safe_point: Timestamp,
    /// The encoded user key whose versions are being judged.
    key: Vec<u8>,
    /// Whether a put or delete of `key` at or below the safe point has been kept already.
    shadowed: bool,
}

impl GarbageJudge for VersionJudge {
    fn is_garbage(&mut self, key: &[u8], value: &[u8]) -> bool {
        let Ok((user, commit_ts)) = mvcc::split_versioned_key(key) else {
            return false;
        };
        if user != self.key.as_slice() {
            self.key.clear();
            self.key.extend_from_slice(user);
            self.shadowed = false;
        }
        if commit_ts > self.safe_point {
            return false;
        }
        let Ok(write) = Write::decode(value) else {
            return false;
        };
        match write.kind {
            WriteKind::Lock | WriteKind::Rollback => true,
            WriteKind::Put if write.short_value.is_none() => {
                self.shadowed = true;
                false
            }
            WriteKind::Put | WriteKind::Delete => std::mem::replace(&mut self.shadowed, true),
        }
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
    fn deleted_rows_stay_deleted_while_compactions_and_passes_collect_them() {
        let s = store();
        let t1 = put(&s.storage, b"gone", Some(b"1"), 10);
        let t2 = put(&s.storage, b"gone", Some(b"2"), t1.0 + 1);
        let t3 = put(&s.storage, b"gone", None, t2.0 + 1);
        let t4 = put(&s.storage, b"back", Some(b"1"), t3.0 + 1);
        let t5 = put(&s.storage, b"back", None, t4.0 + 1);
        let t6 = put(&s.storage, b"back", Some(b"2"), t5.0 + 1);
        let safe = Timestamp(t6.0 + 1);
        s.compact_at(safe);
        assert_eq!(s.get(b"gone", safe), None);
        assert_eq!(
            s.records(b"gone"),
            vec![(t3, WriteKind::Delete)],
            "the delete stays for the collector: dropping it could bring older versions back"
        );
        assert_eq!(s.records(b"back"), vec![(t6, WriteKind::Put)]);
        assert_eq!(s.get(b"back", safe), Some(b"2".to_vec()));

        assert_eq!(gc::collect(&s.storage, safe).unwrap(), 1);
        s.compact_at(safe);
        assert_eq!(s.records(b"gone"), vec![]);
        assert_eq!(s.get(b"gone", Timestamp::MAX), None);
        assert_eq!(s.get(b"back", Timestamp::MAX), Some(b"2".to_vec()));
    }

    #[test]
    fn versions_with_long_values_are_left_to_the_collector_with_their_values() {
        let s = store();
        let long = |b: u8| vec![b; mvcc::SHORT_VALUE_MAX_BYTES + 1];
        let t1 = put(&s.storage, b"k", Some(&long(1)), 10);
        let t2 = put(&s.storage, b"k", Some(&long(2)), t1.0 + 1);
        let t3 = put(&s.storage, b"k", Some(b"short"), t2.0 + 1);
        let safe = Timestamp(t3.0 + 1);
        s.compact_at(safe);
        assert_eq!(
            s.records(b"k").iter().map(|r| r.0).collect::<Vec<_>>(),
            vec![t3, t2, t1],
            "records pointing at long values stay until a pass deletes them with the values"
        );
        assert_eq!(gc::collect(&s.storage, safe).unwrap(), 2);
        let mut values = s.engine.iterator(Cf::Default, b"", None);
        values.seek(b"");
        assert!(
            !values.valid().unwrap(),
            "the long values went with their records"
        );
        assert_eq!(s.get(b"k", safe), Some(b"short".to_vec()));
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
