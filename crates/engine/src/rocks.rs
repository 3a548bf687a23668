//! The production engine: RocksDB on disk with one column family per [`Cf`].

use std::path::Path;
use std::sync::Arc;

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType,
    DBRawIteratorWithThreadMode, Options, ReadOptions, SliceTransform, WriteOptions, DB,
};

use crate::group_commit::GroupCommit;
use crate::{BatchOp, Cf, Engine, EngineError, EngineIterator, WriteBatch};

/// Default size of the block cache shared by all column families.
pub const BLOCK_CACHE_BYTES_DEFAULT: usize = 2 << 30;
/// Default size of one memtable.
pub const WRITE_BUFFER_BYTES_DEFAULT: usize = 64 << 20;

/// Write-ahead log files kept for reuse once their memtables are flushed.
const WAL_RECYCLE_FILES: usize = 4;

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
}

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
            }
            ColumnFamilyDescriptor::new(cf.name(), cf_options)
        });
        let db = DB::open_cf_descriptors(&db_options, path, descriptors).map_err(storage_error)?;
        Ok(RocksEngine {
            db: Arc::new(db),
            synced_writes: GroupCommit::default(),
        })
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
        for op in batches.iter().flat_map(|b| b.ops()) {
            match op {
                BatchOp::Put { cf, key, value } => rocks_batch.put_cf(self.handle(*cf), key, value),
                BatchOp::Delete { cf, key } => rocks_batch.delete_cf(self.handle(*cf), key),
            }
        }
        let mut write_options = WriteOptions::default();
        write_options.set_sync(sync);
        self.db
            .write_opt(rocks_batch, &write_options)
            .map_err(storage_error)
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

    // Hot path: every point read.
    fn versions_iterator(&self, upper: &[u8]) -> Box<dyn EngineIterator + '_> {
        let mut read_options = ReadOptions::default();
        read_options.set_prefix_same_as_start(true);
        read_options.set_iterate_upper_bound(upper.to_vec());
        Box::new(RocksIterator {
            inner: self
                .db
                .raw_iterator_cf_opt(self.handle(Cf::Write), read_options),
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

/// Length of the timestamp suffix of write-CF keys.
const TIMESTAMP_SUFFIX_BYTES: usize = 8;

fn strip_timestamp(key: &[u8]) -> &[u8] {
    &key[..key.len().saturating_sub(TIMESTAMP_SUFFIX_BYTES)]
}

fn has_timestamp(key: &[u8]) -> bool {
    key.len() >= TIMESTAMP_SUFFIX_BYTES
}

struct RocksIterator<'a> {
    inner: DBRawIteratorWithThreadMode<'a, DB>,
}

impl EngineIterator for RocksIterator<'_> {
    fn seek(&mut self, key: &[u8]) {
        self.inner.seek(key);
    }

    fn seek_for_prev(&mut self, key: &[u8]) {
        self.inner.seek_for_prev(key);
    }

    fn valid(&self) -> Result<bool, EngineError> {
        if self.inner.valid() {
            return Ok(true);
        }
        self.inner.status().map(|_| false).map_err(storage_error)
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
