//! The production engine: RocksDB on disk with one column family per [`Cf`].

use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, CompactOptions, DBCompressionType,
    DBRawIteratorWithThreadMode, Options, ReadOptions, SliceTransform, WriteOptions, DB,
};

use crate::garbage::{Factory, Garbage, GarbageFilter};
use crate::group_commit::GroupCommit;
use crate::{
    strip_timestamp, BatchOp, Cf, Engine, EngineError, EngineIterator, WriteBatch,
    TIMESTAMP_SUFFIX_BYTES,
};

/// Default size of the block cache shared by all column families.
pub const BLOCK_CACHE_BYTES_DEFAULT: usize = 2 << 30;
/// Default size of one memtable.
pub const WRITE_BUFFER_BYTES_DEFAULT: usize = 64 << 20;

/// Write-ahead log files kept for reuse once their memtables are flushed.
const WAL_RECYCLE_FILES: usize = 4;
/// Idle versions cursors kept for reuse. A read holds one only for a seek and a step or two,
/// so few are out at once, and the most recently returned is reused first.
const VERSIONS_CURSORS_IDLE_MAX: usize = 4;
/// How long a cursor may wait in the pool. An idle cursor keeps the memtables and files of its
/// last refresh alive (files that compaction replaced stay on disk), so one that waited longer
/// is dropped instead of reused, and [`RocksEngine::release_idle_cursors`] drops such cursors
/// while no read comes at all.
const VERSIONS_CURSOR_IDLE_FOR_MAX: Duration = Duration::from_secs(1);

/// Orphaned values deleted per write batch.
const ORPHANS_PER_BATCH: usize = 1024;

/// Tunables of [`RocksEngine`].
#[derive(Clone, Debug)]
pub struct RocksOptions {
    pub block_cache_bytes: usize,
    pub write_buffer_bytes: usize,
}

impl Default for RocksOptions {
    fn default() -> Self {
        RocksOptions {
            block_cache_bytes: BLOCK_CACHE_BYTES_DEFAULT,
            write_buffer_bytes: WRITE_BUFFER_BYTES_DEFAULT,
        }
    }
}

/// RocksDB with the `default`, `lock` and `write` column families.
pub struct RocksEngine {
    db: Arc<DB>,
    synced_writes: GroupCommit,
    versions_cursors: Mutex<IdleCursors>,
    /// What compactions of the write CF leave out, once the MVCC layer installs it, and the
    /// default-CF values they orphaned.
    garbage: Arc<Garbage>,
    /// Entries put into the write CF since the engine was opened.
    versions_written: AtomicU64,
    /// The options the database was opened with, which hold RocksDB's statistics.
    options: Options,
}

/// The key in [`Cf::Raft`] of the count of versions written since the write CF's last full
/// compaction ([`RocksEngine::record_uncompacted_versions`]); replication's keys there have
/// other prefixes (`region/`, `applied/`, `handover/`).
const UNCOMPACTED_VERSIONS_KEY: &[u8] = b"engine/uncompacted-versions";

/// Idle versions cursors, oldest first, each with when it was returned.
/// A file is marked for compaction when some run of this many consecutive entries holds
/// [`DELETION_WINDOW_TRIGGER`] deletions, or when deletions are [`DELETION_RATIO_TRIGGER`] of
/// all its entries.
const DELETION_WINDOW_ENTRIES: usize = 128;
const DELETION_WINDOW_TRIGGER: usize = 64;
const DELETION_RATIO_TRIGGER: f64 = 0.5;

type IdleCursors = VecDeque<(OwnedCursor, Instant)>;

type RawCursor<'db> = DBRawIteratorWithThreadMode<'db, DB>;

self_cell::self_cell!(
    /// A RocksDB iterator together with the database it reads, so it can wait in a pool.
    struct OwnedCursor {
        owner: Arc<DB>,
        #[covariant]
        dependent: RawCursor,
    }
);

fn storage_error(e: rocksdb::Error) -> EngineError {
    EngineError::Storage(e.into_string())
}

impl RocksEngine {
    /// Opens (or creates) the store in `path`.
    pub fn open(path: &Path, options: &RocksOptions) -> Result<RocksEngine, EngineError> {
        let cache = Cache::new_lru_cache(options.block_cache_bytes);
        let mut db_options = Options::default();
        db_options.create_if_missing(true);
        db_options.create_missing_column_families(true);
        db_options.set_max_background_jobs(2);
        db_options.set_bytes_per_sync(1 << 20);
        // Two cores: a writer waiting for the group leader sleeps instead of spinning in
        // sched_yield, which would take the CPU from the leader it waits for.
        db_options.set_enable_write_thread_adaptive_yield(false);
        // The group leader inserts every batch of its group into the memtable itself: followers
        // wait once instead of being woken for a parallel insert phase, and the leader's
        // sequential inserts reuse the skip list's search path.
        db_options.set_allow_concurrent_memtable_write(false);
        // A synced append to a fresh log file also changes its size, so every commit's
        // fdatasync writes the inode too; a recycled log file is overwritten in place.
        db_options.set_recycle_log_file_num(WAL_RECYCLE_FILES);
        // A log file is recycled only once no column family's memtable holds its writes. The
        // lock, raft and default column families take few small writes (a two-phase commit's
        // locks, the engine's own records, replication's state) and flush only when full, so
        // they kept every log alive and every log file fresh: each commit's fdatasync then
        // wrote the inode of a growing file too (three I/O requests instead of two). Flushing
        // all column families together frees the logs at each flush of the write CF.
        db_options.set_atomic_flush(true);
        // A log file goes once every column family has flushed what it holds of it. The lock
        // and raft column families take small writes that fill a memtable slowly, and kept
        // every log of a burst on disk (half a gigabyte per KV node after 180 s of writes):
        // past this much log, the column family holding the oldest one is flushed.
        db_options.set_max_total_wal_size(4 * options.write_buffer_bytes as u64);
        // Counters only (block cache hits, bytes compacted, …) for `/metrics`: no timers.
        db_options.enable_statistics();
        db_options.set_statistics_level(rocksdb::statistics::StatsLevel::ExceptTimers);

        let garbage = Arc::new(Garbage::default());
        let descriptors = Cf::ALL.iter().map(|cf| {
            let mut table = BlockBasedOptions::default();
            table.set_block_cache(&cache);
            table.set_bloom_filter(10.0, false);
            table.set_cache_index_and_filter_blocks(true);
            table.set_pin_l0_filter_and_index_blocks_in_cache(true);
            let mut cf_options = Options::default();
            cf_options.set_block_based_table_factory(&table);
            cf_options.set_write_buffer_size(options.write_buffer_bytes);
            cf_options.set_compression_per_level(&[
                DBCompressionType::None,
                DBCompressionType::None,
                DBCompressionType::Lz4,
                DBCompressionType::Lz4,
                DBCompressionType::Lz4,
                DBCompressionType::Zstd,
                DBCompressionType::Zstd,
            ]);
            cf_options.set_level_compaction_dynamic_level_bytes(true);
            // Garbage collection and committed locks leave runs of deletions that every scan
            // steps over until a compaction drops them: a file with such a run is compacted
            // soon after it is written.
            cf_options.add_compact_on_deletion_collector_factory(
                DELETION_WINDOW_ENTRIES,
                DELETION_WINDOW_TRIGGER,
                DELETION_RATIO_TRIGGER,
            );
            if *cf == Cf::Write {
                // Versions of one key share everything but their 8-byte timestamp suffix: a
                // bloom filter on that prefix lets a point read skip the files without the key.
                let mut table = BlockBasedOptions::default();
                table.set_block_cache(&cache);
                table.set_bloom_filter(10.0, false);
                table.set_whole_key_filtering(false);
                table.set_cache_index_and_filter_blocks(true);
                table.set_pin_l0_filter_and_index_blocks_in_cache(true);
                cf_options.set_block_based_table_factory(&table);
                cf_options.set_prefix_extractor(SliceTransform::create(
                    "strata.versions",
                    strip_timestamp,
                    Some(has_timestamp),
                ));
                cf_options.set_memtable_prefix_bloom_ratio(0.1);
                cf_options.set_compaction_filter_factory(Factory::new(garbage.clone()));
            }
            ColumnFamilyDescriptor::new(cf.name(), cf_options)
        });
        let db = DB::open_cf_descriptors(&db_options, path, descriptors).map_err(storage_error)?;
        Ok(RocksEngine {
            db: Arc::new(db),
            synced_writes: GroupCommit::default(),
            versions_cursors: Mutex::new(VecDeque::new()),
            garbage,
            versions_written: AtomicU64::new(0),
            options: db_options,
        })
    }

    /// Reads the engine's sizes and RocksDB's counters into the process's metrics.
    pub fn refresh_metrics(&self) {
        crate::metrics::refresh(&self.db, &self.options);
    }

    /// Lets compactions of the write CF leave out what `filter` calls garbage. Only the first
    /// filter installed counts.
    pub fn set_garbage_filter(&self, filter: Arc<dyn GarbageFilter>) {
        self.garbage.install(filter);
    }

    /// Deletes the default-CF values whose write-CF entries compactions left out since the last
    /// call, from this engine alone (on a cluster each replica drops its own garbage); returns
    /// how many. Called every second by the store's collector. Not synced: after a crash the
    /// values it had not written stay, unread, as the entries that pointed at them are gone.
    pub fn delete_orphans(&self) -> Result<usize, EngineError> {
        let orphans = self.garbage.take_orphans();
        let deleted = orphans.len();
        let mut batch = WriteBatch::new();
        for key in orphans {
            batch.delete(Cf::Default, key);
            if batch.len() >= ORPHANS_PER_BATCH {
                self.write(&std::mem::replace(&mut batch, WriteBatch::new()), false)?;
            }
        }
        if !batch.is_empty() {
            self.write(&batch, false)?;
        }
        Ok(deleted)
    }

    /// Entries put into the write CF since the engine was opened (one per version written).
    pub fn versions_written(&self) -> u64 {
        self.versions_written.load(Ordering::Relaxed)
    }

    /// The count of versions put into the write CF since its last full compaction, as last
    /// recorded by [`RocksEngine::record_uncompacted_versions`] on these files (by this process
    /// or an earlier one); 0 when none was.
    pub fn recorded_uncompacted_versions(&self) -> u64 {
        match self
            .db
            .get_cf(self.handle(Cf::Raft), UNCOMPACTED_VERSIONS_KEY)
        {
            Ok(Some(bytes)) => bytes.try_into().map(u64::from_be_bytes).unwrap_or(0),
            _ => 0,
        }
    }

    /// Records how many versions the write CF has taken since its last full compaction, so
    /// that a process opening these files next knows what garbage they hold without reading
    /// them. Not synced: after a crash the count may miss the last writes.
    pub fn record_uncompacted_versions(&self, versions: u64) -> Result<(), EngineError> {
        let mut batch = WriteBatch::new();
        batch.put(
            Cf::Raft,
            UNCOMPACTED_VERSIONS_KEY.to_vec(),
            versions.to_be_bytes().to_vec(),
        );
        self.write(&batch, false)
    }

    /// RocksDB's estimate of the entries in the write CF, garbage included.
    pub fn estimated_versions(&self) -> u64 {
        self.db
            .property_int_value_cf(self.handle(Cf::Write), "rocksdb.estimate-num-keys")
            .ok()
            .flatten()
            .unwrap_or(0)
    }

    /// Drops the pooled cursors idle longer than a second (`VERSIONS_CURSOR_IDLE_FOR_MAX`),
    /// and with them their views of memtables and files: once reads stop, the files a
    /// compaction replaced would otherwise stay on disk until the next read. Called every
    /// second by the store's collector.
    pub fn release_idle_cursors(&self) {
        let released: Vec<_> = {
            let mut idle = self.versions_cursors.lock();
            let keep = idle
                .iter()
                .position(|(_, since)| since.elapsed() <= VERSIONS_CURSOR_IDLE_FOR_MAX)
                .unwrap_or(idle.len());
            idle.drain(..keep).collect()
        };
        // Released outside the lock.
        drop(released);
    }

    /// Flushes the write CF's memtable and compacts the whole column family, so the garbage
    /// filter sees every version at once. Automatic compactions go on meanwhile.
    pub fn compact_versions(&self) -> Result<(), EngineError> {
        let write = self.handle(Cf::Write);
        self.db.flush_cf(write).map_err(storage_error)?;
        let mut options = CompactOptions::default();
        options.set_exclusive_manual_compaction(false);
        self.db
            .compact_range_cf_opt(write, None::<&[u8]>, None::<&[u8]>, &options);
        Ok(())
    }

    /// Stops flushes and compactions and waits for the running ones, before the process exits:
    /// RocksDB's background threads must not outlive the process's static state (they abort
    /// it). Committed writes are already in the synced write-ahead log.
    pub fn stop_background_work(&self) {
        self.db.cancel_all_background_work(true);
    }

    /// Writes `batches` as one atomic RocksDB batch.
    fn write_batches(&self, batches: &[&WriteBatch], sync: bool) -> Result<(), EngineError> {
        let mut rocks_batch = rocksdb::WriteBatch::default();
        let mut versions = 0;
        for op in batches.iter().flat_map(|b| b.ops()) {
            match op {
                BatchOp::Put { cf, key, value } => {
                    versions += u64::from(*cf == Cf::Write);
                    rocks_batch.put_cf(self.handle(*cf), key, value)
                }
                BatchOp::Delete { cf, key } => rocks_batch.delete_cf(self.handle(*cf), key),
            }
        }
        self.versions_written.fetch_add(versions, Ordering::Relaxed);
        let mut write_options = WriteOptions::default();
        write_options.set_sync(sync);
        self.db
            .write_opt(rocks_batch, &write_options)
            .map_err(storage_error)
    }

    /// A fresh cursor over the write CF that stays within the versions of the key it seeks.
    fn new_versions_cursor(&self) -> OwnedCursor {
        OwnedCursor::new(Arc::clone(&self.db), |db| {
            let mut read_options = ReadOptions::default();
            read_options.set_prefix_same_as_start(true);
            let write = db
                .cf_handle(Cf::Write.name())
                .expect("column families are created at open");
            db.raw_iterator_cf_opt(write, read_options)
        })
    }

    fn handle(&self, cf: Cf) -> &rocksdb::ColumnFamily {
        self.db
            .cf_handle(cf.name())
            .expect("column families are created at open")
    }
}

impl Engine for RocksEngine {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>, EngineError> {
        self.db.get_cf(self.handle(cf), key).map_err(storage_error)
    }

    fn write(&self, batch: &WriteBatch, sync: bool) -> Result<(), EngineError> {
        if sync {
            self.synced_writes
                .write(batch, |group| self.write_batches(group, true))
        } else {
            self.write_batches(&[batch], false)
        }
    }

    fn iterator(&self, cf: Cf, lower: &[u8], upper: Option<&[u8]>) -> Box<dyn EngineIterator + '_> {
        let mut read_options = ReadOptions::default();
        read_options.set_total_order_seek(true);
        if !lower.is_empty() {
            read_options.set_iterate_lower_bound(lower.to_vec());
        }

        if let Some(upper) = upper {
            read_options.set_iterate_upper_bound(upper.to_vec());
        }
        Box::new(RocksIterator {
            inner: self.db.raw_iterator_cf_opt(self.handle(cf), read_options),
        })
    }

    // Hot path: every point read. Creating and dropping a RocksDB iterator (its view of every
    // memtable and file) cost half as much as the seek that follows, while refreshing an idle
    // one costs almost nothing as long as no flush or compaction has changed that set since.
    fn versions_iterator(&self) -> Box<dyn EngineIterator + '_> {
        let (reused, stale) = {
            let mut idle = self.versions_cursors.lock();
            let stale = idle
                .front()
                .is_some_and(|(_, since)| since.elapsed() > VERSIONS_CURSOR_IDLE_FOR_MAX)
                .then(|| idle.pop_front())
                .flatten();
            (idle.pop_back().map(|(cursor, _)| cursor), stale)
        };
        // Dropped (and its view released) outside the lock.
        drop(stale);
        let cursor = match reused {
            Some(mut cursor) => match cursor.with_dependent_mut(|_, it| it.refresh()) {
                Ok(()) => cursor,
                Err(_) => self.new_versions_cursor(),
            },
            None => self.new_versions_cursor(),
        };
        Box::new(PooledCursor {
            cursor: Some(cursor),
            pool: &self.versions_cursors,
        })
    }

    fn approximate_size_bytes(&self) -> u64 {
        Cf::ALL
            .iter()
            .filter_map(|cf| {
                self.db
                    .property_int_value_cf(self.handle(*cf), "rocksdb.total-sst-files-size")
                    .ok()
                    .flatten()
            })
            .sum()
    }
}

fn has_timestamp(key: &[u8]) -> bool {
    key.len() >= TIMESTAMP_SUFFIX_BYTES
}

struct RocksIterator<'a> {
    inner: RawCursor<'a>,
}

fn cursor_valid(cursor: &RawCursor<'_>) -> Result<bool, EngineError> {
    if cursor.valid() {
        return Ok(true);
    }
    cursor.status().map(|_| false).map_err(storage_error)
}

impl EngineIterator for RocksIterator<'_> {
    fn seek(&mut self, key: &[u8]) {
        self.inner.seek(key);
    }

    fn seek_for_prev(&mut self, key: &[u8]) {
        self.inner.seek_for_prev(key);
    }

    fn valid(&self) -> Result<bool, EngineError> {
        cursor_valid(&self.inner)
    }

    fn key(&self) -> &[u8] {
        self.inner.key().expect("iterator is valid")
    }

    fn value(&self) -> &[u8] {
        self.inner.value().expect("iterator is valid")
    }

    fn next(&mut self) {
        self.inner.next();
    }

    fn prev(&mut self) {
        self.inner.prev();
    }
}

/// A versions cursor on loan from the engine's pool; dropping it gives it back.
struct PooledCursor<'a> {
    /// Always `Some` until dropped.
    cursor: Option<OwnedCursor>,
    pool: &'a Mutex<IdleCursors>,
}

impl PooledCursor<'_> {
    fn raw(&self) -> &RawCursor<'_> {
        self.cursor
            .as_ref()
            .expect("held until drop")
            .borrow_dependent()
    }

    fn with_raw(&mut self, f: impl FnOnce(&mut RawCursor<'_>)) {
        self.cursor
            .as_mut()
            .expect("held until drop")
            .with_dependent_mut(|_, it| f(it));
    }
}

impl EngineIterator for PooledCursor<'_> {
    fn seek(&mut self, key: &[u8]) {
        self.with_raw(|it| it.seek(key));
    }

    fn seek_for_prev(&mut self, key: &[u8]) {
        self.with_raw(|it| it.seek_for_prev(key));
    }

    fn valid(&self) -> Result<bool, EngineError> {
        cursor_valid(self.raw())
    }

    fn key(&self) -> &[u8] {
        self.raw().key().expect("iterator is valid")
    }

    fn value(&self) -> &[u8] {
        self.raw().value().expect("iterator is valid")
    }

    fn next(&mut self) {
        self.with_raw(|it| it.next());
    }

    fn prev(&mut self) {
        self.with_raw(|it| it.prev());
    }
}

impl Drop for PooledCursor<'_> {
    fn drop(&mut self) {
        let Some(cursor) = self.cursor.take() else {
            return;
        };
        let now = Instant::now();
        let mut idle = self.pool.lock();
        idle.push_back((cursor, now));
        let oldest = (idle.len() > VERSIONS_CURSORS_IDLE_MAX)
            .then(|| idle.pop_front())
            .flatten();
        drop(idle);
        drop(oldest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_pool_stays_small_and_drops_cursors_idle_too_long() {
        let dir = tempfile::tempdir().unwrap();
        let engine = RocksEngine::open(dir.path(), &RocksOptions::default()).unwrap();
        let idle = || engine.versions_cursors.lock().len();
        let out: Vec<_> = (0..VERSIONS_CURSORS_IDLE_MAX + 2)
            .map(|_| engine.versions_iterator())
            .collect();
        assert_eq!(idle(), 0);
        drop(out);
        assert_eq!(
            idle(),
            VERSIONS_CURSORS_IDLE_MAX,
            "the pool keeps no more than its cap"
        );

        let reused = engine.versions_iterator();
        assert_eq!(
            idle(),
            VERSIONS_CURSORS_IDLE_MAX - 1,
            "a fresh idle cursor is reused"
        );
        drop(reused);
        std::thread::sleep(VERSIONS_CURSOR_IDLE_FOR_MAX + Duration::from_millis(100));
        let _reused = engine.versions_iterator();
        assert_eq!(
            idle(),
            VERSIONS_CURSORS_IDLE_MAX - 2,
            "the oldest cursor, idle too long, is dropped as another is taken"
        );
    }

    #[test]
    fn files_a_compaction_replaced_leave_the_disk_once_idle_cursors_are_released() {
        let dir = tempfile::tempdir().unwrap();
        let engine = RocksEngine::open(dir.path(), &RocksOptions::default()).unwrap();
        let files = || -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".sst"))
                .collect();
            names.sort();
            names
        };
        let write = |first: u32| {
            let mut batch = WriteBatch::new();
            for i in first..first + 1000 {
                batch.put(Cf::Write, format!("k{i:06}").into_bytes(), vec![7; 100]);
            }
            engine.write(&batch, false).unwrap();
        };
        write(0);
        engine.compact_versions().unwrap();
        let first = files();
        assert!(!first.is_empty());
        // A read leaves its cursor idle in the pool, viewing those files.
        drop(engine.versions_iterator());
        write(500);
        engine.compact_versions().unwrap();
        assert!(
            first.iter().all(|f| files().contains(f)),
            "the idle cursor keeps the replaced files: {first:?} {:?}",
            files()
        );
        // Nothing reads; the collector's tick releases the cursor, and the files go.
        engine.release_idle_cursors();
        assert_eq!(
            engine.versions_cursors.lock().len(),
            1,
            "not idle long enough"
        );
        std::thread::sleep(VERSIONS_CURSOR_IDLE_FOR_MAX + Duration::from_millis(100));
        engine.release_idle_cursors();
        assert_eq!(engine.versions_cursors.lock().len(), 0);
        let deadline = Instant::now() + Duration::from_secs(5);
        while first.iter().any(|f| files().contains(f)) {
            assert!(
                Instant::now() < deadline,
                "{first:?} still on disk: {:?}",
                files()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[test]
    fn a_flush_of_the_write_cf_frees_the_logs_other_column_families_were_written_to() {
        let dir = tempfile::tempdir().unwrap();
        let engine = RocksEngine::open(dir.path(), &RocksOptions::default()).unwrap();
        // Two-phase commits: the lock CF's memtable holds each lock's put and delete, the write
        // CF the versions.
        for i in 0..100u32 {
            let key = format!("k{i:04}").into_bytes();
            let mut lock = WriteBatch::new();
            lock.put(Cf::Lock, key.clone(), vec![1; 20]);
            engine.write(&lock, true).unwrap();
            let mut commit = WriteBatch::new();
            commit.delete(Cf::Lock, key.clone());
            commit.put(Cf::Write, key, vec![7; 100]);
            engine.write(&commit, true).unwrap();
        }
        engine.compact_versions().unwrap();
        let oldest_needed = engine
            .db
            .property_int_value("rocksdb.min-log-number-to-keep")
            .unwrap()
            .unwrap();
        // The log the flush switched to, the newest (a freed log waits under its old name to
        // be recycled).
        let current = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".log")?.parse::<u64>().ok()
            })
            .max()
            .unwrap();
        assert_eq!(
            oldest_needed, current,
            "after the flush only the current log holds unflushed writes"
        );
    }
}
