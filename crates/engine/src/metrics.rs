//! RocksDB's figures as metrics, read from the engine at each scrape (`/metrics`): sizes per
//! column family (SST files, memtables, estimated keys, compaction debt, L0 files), the block
//! cache, running compactions and flushes, write stalls, and RocksDB's own counters (block
//! cache hits and misses, bytes written, read, compacted and flushed, stall time).

use std::sync::LazyLock;

use parking_lot::Mutex;
use prometheus::{
    register_int_counter_vec, register_int_gauge, register_int_gauge_vec, IntCounterVec, IntGauge,
    IntGaugeVec,
};
use rocksdb::statistics::Ticker;

use crate::Cf;

struct Metrics {
    per_cf: IntGaugeVec,
    block_cache_bytes: IntGauge,
    running_compactions: IntGauge,
    running_flushes: IntGauge,
    write_stopped: IntGauge,
    delayed_write_rate: IntGauge,
    counters: IntCounterVec,
    /// What each of [`TICKERS`] read at the last scrape (RocksDB's counts are totals).
    seen: Mutex<[u64; TICKERS.len()]>,
}

/// The per-column-family gauges: the label and RocksDB's property.
const PER_CF: [(&str, &str); 5] = [
    ("sst_bytes", "rocksdb.total-sst-files-size"),
    ("memtable_bytes", "rocksdb.cur-size-all-mem-tables"),
    ("estimated_keys", "rocksdb.estimate-num-keys"),
    (
        "pending_compaction_bytes",
        "rocksdb.estimate-pending-compaction-bytes",
    ),
    ("l0_files", "rocksdb.num-files-at-level0"),
];

/// RocksDB's counters, by the `counter` label.
const TICKERS: [(&str, Ticker); 8] = [
    ("block_cache_hit", Ticker::BlockCacheHit),
    ("block_cache_miss", Ticker::BlockCacheMiss),
    ("bytes_written", Ticker::BytesWritten),
    ("bytes_read", Ticker::BytesRead),
    ("compaction_read_bytes", Ticker::CompactReadBytes),
    ("compaction_write_bytes", Ticker::CompactWriteBytes),
    ("flush_write_bytes", Ticker::FlushWriteBytes),
    ("stall_micros", Ticker::StallMicros),
];

static METRICS: LazyLock<Metrics> = LazyLock::new(|| Metrics {
    per_cf: register_int_gauge_vec!(
        "strata_rocksdb_cf",
        "RocksDB figures per column family: sst_bytes, memtable_bytes, estimated_keys \
         (garbage included), pending_compaction_bytes, l0_files",
        &["cf", "figure"]
    )
    .expect("registered once"),
    block_cache_bytes: register_int_gauge!(
        "strata_rocksdb_block_cache_usage_bytes",
        "Bytes held by RocksDB's block cache"
    )
    .expect("registered once"),
    running_compactions: register_int_gauge!(
        "strata_rocksdb_running_compactions",
        "Compactions running now"
    )
    .expect("registered once"),
    running_flushes: register_int_gauge!(
        "strata_rocksdb_running_flushes",
        "Memtable flushes running now"
    )
    .expect("registered once"),
    write_stopped: register_int_gauge!(
        "strata_rocksdb_write_stopped",
        "1 while RocksDB stops writes (too many L0 files or memtables, or compaction debt)"
    )
    .expect("registered once"),
    delayed_write_rate: register_int_gauge!(
        "strata_rocksdb_delayed_write_rate_bytes",
        "The rate RocksDB slows writes to while it delays them (0: not delayed)"
    )
    .expect("registered once"),
    counters: register_int_counter_vec!(
        "strata_rocksdb_events_total",
        "RocksDB's counters since the engine opened: block_cache_hit, block_cache_miss, \
         bytes_written, bytes_read, compaction_read_bytes, compaction_write_bytes, \
         flush_write_bytes, stall_micros",
        &["counter"]
    )
    .expect("registered once"),
    seen: Mutex::new([0; TICKERS.len()]),
});

/// Reads the engine's figures into the metrics.
pub(crate) fn refresh(db: &rocksdb::DB, options: &rocksdb::Options) {
    let metrics = &*METRICS;
    let property = |name: &str| db.property_int_value(name).ok().flatten().unwrap_or(0);
    for cf in Cf::ALL {
        let Some(handle) = db.cf_handle(cf.name()) else {
            continue;
        };
        for (figure, name) in PER_CF {
            let value = db
                .property_int_value_cf(handle, name)
                .ok()
                .flatten()
                .unwrap_or(0);
            metrics
                .per_cf
                .with_label_values(&[cf.name(), figure])
                .set(value as i64);
        }
    }
    let gauge = |g: &IntGauge, name: &str| g.set(property(name) as i64);
    gauge(&metrics.block_cache_bytes, "rocksdb.block-cache-usage");
    gauge(
        &metrics.running_compactions,
        "rocksdb.num-running-compactions",
    );
    gauge(&metrics.running_flushes, "rocksdb.num-running-flushes");
    gauge(&metrics.write_stopped, "rocksdb.is-write-stopped");
    gauge(
        &metrics.delayed_write_rate,
        "rocksdb.actual-delayed-write-rate",
    );
    let mut seen = metrics.seen.lock();
    for ((label, ticker), seen) in TICKERS.iter().zip(seen.iter_mut()) {
        let now = options.get_ticker_count(*ticker);
        metrics
            .counters
            .with_label_values(&[label])
            .inc_by(now.saturating_sub(*seen));
        *seen = now.max(*seen);
    }
}
