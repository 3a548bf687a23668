//! Garbage collection of old MVCC versions behind a safe point.
//!
//! A version is garbage once a newer version of its key is committed at or before the safe
//! point: no snapshot at or after the safe point can see it. For each key the collector keeps
//! the newest version at or below the safe point (unless it is a delete, which then goes too)
//! and deletes everything older, with the long values those versions point at. Rollback and
//! lock-only records below the safe point go as well.
//!
//! The safe point trails the timestamp oracle by [`GC_LIFE_TIME`], as TiDB's
//! `tidb_gc_life_time`, but waits for the oldest open transaction up to [`GC_MAX_WAIT`]
//! (`tidb_gc_max_wait_time`). A snapshot below it is refused ([`KvError::SnapshotTooOld`]).
//!
//! Most garbage never needs a pass: compactions of the write CF leave it out
//! ([`crate::gc_filter`]) and the engine deletes the long values of what they left out, and
//! [`QuietCompactions`] compacts the whole column family after a burst of writes, which drops
//! deleted keys too. A pass deletes through the engine, so on a cluster through Raft, and
//! leaves a tombstone per record that reads step over until a compaction drops it: during a
//! burst of writes that doubles what the compactions that go on anyway would drop by
//! themselves. So where compactions collect, passes wait for quiet writes and for the
//! compaction that follows a burst (they then find what compactions kept, such as deleted keys
//! whose versions lie in several levels). Writes that never go quiet have the whole column
//! family compacted every few minutes instead, which puts off the pass; without those
//! compactions (a storage that is not RocksDB) a pass runs every [`PASS_UNDER_WRITES_EVERY`]
//! intervals.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use strata_engine::{Cf, RocksEngine, WriteBatch};
use strata_kvapi::KvError;
use strata_types::Timestamp;

use crate::mvcc::{self, Write, WriteKind};
use crate::Storage;

/// What garbage collection shows at `/metrics`.
mod metrics {
    use std::sync::LazyLock;

    use prometheus::{register_gauge, register_int_counter, Gauge, IntCounter};

    pub struct Gc {
        /// How far the safe point trails the oracle's time.
        pub lag_seconds: Gauge,
        pub deleted: IntCounter,
    }

    pub static GC: LazyLock<Gc> = LazyLock::new(|| Gc {
        lag_seconds: register_gauge!(
            "strata_kv_gc_safe_point_lag_seconds",
            "How far this node's GC safe point trails the timestamp oracle's time, in seconds \
             (the GC life time plus what open transactions hold back)"
        )
        .expect("registered once"),
        deleted: register_int_counter!(
            "strata_kv_gc_deleted_versions_total",
            "Row versions and records below the safe point that GC passes deleted"
        )
        .expect("registered once"),
    });
}

/// How long old versions stay readable, by default.
///
/// Strata reads old versions only for snapshots that are open (it has no stale reads and no
/// flashback, for which TiDB keeps ten minutes), and every open snapshot holds the safe point
/// back by itself. So the life time only has to cover a transaction that took its timestamp
/// and is not counted yet: a SQL node reports its oldest snapshot every second, and ten
/// seconds leave room for ten reports. Longer only keeps garbage that reads step over.
pub const GC_LIFE_TIME: Duration = Duration::from_secs(10);
/// Pause between collection passes, by default.
pub const GC_INTERVAL: Duration = Duration::from_secs(60);
/// How long the safe point waits for an open transaction, by default.
pub const GC_MAX_WAIT: Duration = Duration::from_secs(24 * 3600);
/// While writes do not go quiet, a pass runs after this many intervals.
pub const PASS_UNDER_WRITES_EVERY: u32 = 10;
/// Deletions per write batch.
const GC_BATCH_KEYS: usize = 1024;
/// Write-CF entries examined before the collector yields the CPU briefly.
const GC_SCAN_CHUNK: usize = 16_384;

/// When the collector runs and what it keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcConfig {
    /// How far the safe point trails the timestamp oracle.
    pub life_time: Duration,
    /// The pause between passes.
    pub interval: Duration,
    /// How far behind the oracle an open transaction may hold the safe point.
    pub max_wait: Duration,
}

impl GcConfig {
    /// The floors of a safe point at `now`: `now` less the life time, and less the longest
    /// wait.
    pub fn floors(&self, now: Timestamp) -> (Timestamp, Timestamp) {
        let behind = |d: Duration| {
            Timestamp::compose(now.physical_ms().saturating_sub(d.as_millis() as u64), 0)
        };
        (behind(self.life_time), behind(self.max_wait))
    }
}

impl Default for GcConfig {
    fn default() -> GcConfig {
        GcConfig {
            life_time: GC_LIFE_TIME,
            interval: GC_INTERVAL,
            max_wait: GC_MAX_WAIT,
        }
    }
}

/// A range of user keys, `[start, end)`; an empty end is unbounded.
pub type KeyRange = (Vec<u8>, Vec<u8>);

fn engine_error(e: strata_engine::EngineError) -> KvError {
    KvError::Storage(e.to_string())
}

/// Collects garbage over the whole key space once; returns how many records it deleted.
pub fn collect(storage: &Storage, safe_point: Timestamp) -> Result<usize, KvError> {
    collect_range(storage, b"", b"", safe_point)
}

/// Collects garbage among the user keys in `[start, end)` (an empty end is unbounded);
/// returns how many records it deleted.
///
/// The deletions go out in batches. A key's delete record goes in the batch of its last older
/// version or after it, so whatever batch fails, no older version outlives the delete that
/// hides it. A key with a lock older than the safe point is left alone: resolving that lock
/// may still commit a version below the safe point.
pub fn collect_range(
    storage: &Storage,
    start: &[u8],
    end: &[u8],
    safe_point: Timestamp,
) -> Result<usize, KvError> {
    // Before any deletion, so that a read that may miss one fails instead.
    storage.raise_gc_safe_point(safe_point);
    let engine = storage.engine();
    let lower = if start.is_empty() {
        Vec::new()
    } else {
        mvcc::encode_user_key(start)
    };
    let upper = (!end.is_empty()).then(|| mvcc::encode_user_key(end));
    let mut it = engine.iterator(Cf::Write, &lower, upper.as_deref());
    it.seek(&lower);
    let mut collector = Collector {
        storage,
        safe_point,
        batch: WriteBatch::new(),
        deleted: 0,
    };
    let mut key = KeyGarbage::default();
    let mut examined = 0;
    while it.valid().map_err(engine_error)? {
        let (user, commit_ts) = mvcc::split_versioned_key(it.key())?;
        if user != key.encoded.as_slice() {
            collector.finish_key(&mut key)?;
            key = KeyGarbage {
                encoded: user.to_vec(),
                ..KeyGarbage::default()
            };
        }
        if commit_ts <= safe_point && !key.skip {
            let write = Write::decode(it.value())?;
            let remove = match write.kind {
                WriteKind::Rollback | WriteKind::Lock => true,
                WriteKind::Put | WriteKind::Delete if key.kept_below => true,
                WriteKind::Delete => {
                    key.kept_below = true;
                    key.delete_record = Some(it.key().to_vec());
                    false
                }
                WriteKind::Put => {
                    key.kept_below = true;
                    false
                }
            };
            if remove && collector.key_is_collectable(&mut key)? {
                if write.kind == WriteKind::Put && write.short_value.is_none() {
                    let data = mvcc::append_ts(key.encoded.clone(), write.start_ts);
                    collector.delete(Cf::Default, data)?;
                }
                collector.delete(Cf::Write, it.key().to_vec())?;
            }
        }
        examined += 1;
        if examined % GC_SCAN_CHUNK == 0 {
            std::thread::yield_now();
        }
        it.next();
    }
    collector.finish_key(&mut key)?;
    collector.flush()?;
    Ok(collector.deleted)
}

/// What the collector knows of the key whose versions it is passing.
#[derive(Default)]
struct KeyGarbage {
    encoded: Vec<u8>,
    /// A version at or below the safe point was seen: every older one is garbage.
    kept_below: bool,
    /// The newest version at or below the safe point is this delete record: it goes once
    /// every older version has gone.
    delete_record: Option<Vec<u8>>,
    /// Whether the key's lock was looked at, and whether it keeps the key from collection.
    lock_checked: bool,
    skip: bool,
}

/// The deletions of one pass, written a batch at a time.
struct Collector<'a> {
    storage: &'a Storage,
    safe_point: Timestamp,
    batch: WriteBatch,
    deleted: usize,
}

impl Collector<'_> {
    /// Whether `key` may lose versions: not when a lock older than the safe point holds it.
    fn key_is_collectable(&self, key: &mut KeyGarbage) -> Result<bool, KvError> {
        if !key.lock_checked {
            key.lock_checked = true;
            let user = mvcc::decode_user_key(&key.encoded)?;
            let lock = self.storage.load_lock(&user)?;
            key.skip = matches!(lock, Some(lock) if lock.start_ts <= self.safe_point);
        }
        Ok(!key.skip)
    }

    /// Queues the deletion of `key`. A batch is written only after a write record, so a long
    /// value (queued just before its record) and its record go together.
    fn delete(&mut self, cf: Cf, key: Vec<u8>) -> Result<(), KvError> {
        self.batch.delete(cf, key);
        if cf == Cf::Write {
            self.deleted += 1;
            if self.batch.len() >= GC_BATCH_KEYS {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Deletes the key's delete record, if it goes: its older versions are in this batch or
    /// in one written before.
    fn finish_key(&mut self, key: &mut KeyGarbage) -> Result<(), KvError> {
        if let Some(record) = key.delete_record.take() {
            if self.key_is_collectable(key)? {
                self.delete(Cf::Write, record)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), KvError> {
        if !self.batch.is_empty() {
            let batch = std::mem::replace(&mut self.batch, WriteBatch::new());
            self.storage
                .engine()
                .write(&batch, false)
                .map_err(engine_error)?;
        }
        Ok(())
    }
}

/// A background thread that collects garbage every [`GcConfig::interval`].
pub struct GcWorker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// The safe point, with the oracle's timestamp it was taken at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SafePoint {
    pub now: Timestamp,
    pub safe_point: Timestamp,
}

/// How often the worker takes the safe point and looks at the write rate.
pub const GC_TICK: Duration = Duration::from_secs(1);

impl GcWorker {
    /// Starts the worker: every [`GC_TICK`] it raises the storage's safe point to what
    /// `safe_point` answers (compactions drop versions below it, see [`crate::gc_filter`]) and
    /// lets `compactions` compact after a burst of writes; every `config.interval` it collects
    /// `ranges()`, when writes are quiet if `compactions` are given (see [`pass_due`]).
    /// `safe_point` answers with a fresh timestamp from the oracle too.
    pub fn start(
        storage: Arc<Storage>,
        config: GcConfig,
        mut compactions: Option<QuietCompactions>,
        safe_point: impl Fn() -> Option<SafePoint> + Send + 'static,
        ranges: impl Fn() -> Vec<KeyRange> + Send + 'static,
    ) -> GcWorker {
        std::sync::LazyLock::force(&metrics::GC);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("gc".into())
            .spawn(move || {
                let mut last_pass = Instant::now();
                while !sleep_unless_stopped(&flag, GC_TICK) {
                    let Some(SafePoint { now, safe_point }) = safe_point() else {
                        continue;
                    };
                    // Before any compaction or deletion, so that a read that may miss a
                    // version fails instead.
                    storage.raise_gc_safe_point(safe_point);
                    metrics::GC.lag_seconds.set(
                        now.physical_ms().saturating_sub(safe_point.physical_ms()) as f64 / 1000.0,
                    );
                    let may_pass = match &mut compactions {
                        Some(compactions) => {
                            if compactions.tick(now, safe_point) {
                                // The compaction dropped what a pass would delete.
                                last_pass = Instant::now();
                            }
                            compactions.lets_passes_run()
                        }
                        None => true,
                    };
                    if !pass_due(last_pass.elapsed(), config.interval, may_pass) {
                        continue;
                    }
                    last_pass = Instant::now();
                    let (mut deleted, mut failed) = (0, 0);
                    for (start, end) in ranges() {
                        if flag.load(Ordering::SeqCst) {
                            break;
                        }
                        match collect_range(&storage, &start, &end, safe_point) {
                            Ok(n) => deleted += n,
                            Err(e) => {
                                failed += 1;
                                tracing::debug!(error = %e, "gc of a range failed");
                            }
                        }
                    }
                    metrics::GC.deleted.inc_by(deleted as u64);
                    if deleted > 0 || failed > 0 {
                        tracing::info!(deleted, ranges_failed = failed, %safe_point, "gc pass");
                    }
                }
            })
            .expect("spawn gc thread");
        GcWorker {
            stop,
            thread: Some(thread),
        }
    }

    pub fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Whether a collection pass is due `since` the last one: after `interval` when writes are
/// `quiet`, and after [`PASS_UNDER_WRITES_EVERY`] intervals when they are not.
pub fn pass_due(since: Duration, interval: Duration, quiet: bool) -> bool {
    since >= interval && (quiet || since >= interval * PASS_UNDER_WRITES_EVERY)
}

/// Versions written in one [`GC_TICK`] at or below which the writes count as quiet.
const QUIET_VERSIONS_PER_TICK: u64 = 1_000;
/// The fewest new versions that make a compaction of the whole write CF worth its cost, which
/// is about the column family's size: also a quarter of its entries.
const BURST_VERSIONS_MIN: u64 = 100_000;
const BURST_SHARE_OF_ENTRIES: u64 = 4;
/// Ticks of write counts kept to tell which versions are still above the safe point.
const HISTORY_TICKS_MAX: usize = 3600;
/// Ticks after the last compaction at which writes that never go quiet have the whole write CF
/// compacted (when they wrote enough to make it worth its cost): five minutes.
pub const STEADY_COMPACTION_TICKS: u32 = 300;

/// Compacts the whole write CF once writes go quiet after a burst, so that the garbage filter
/// drops the versions the burst left in the memtable and the newest files (where no compaction
/// would reach them while the data is only read), and once more when the safe point has passed
/// the burst if enough of it was above the safe point at the first compaction (enough against
/// what the first left: the versions a pass would otherwise delete, with a tombstone each).
/// Writes that never go quiet get the same compaction every [`STEADY_COMPACTION_TICKS`]
/// ticks, with them going on, in place of a collection pass: the pass would delete through
/// Raft, on a cluster, what each replica's compaction drops by itself. Every tick it also
/// deletes the long values of the versions compactions dropped
/// ([`RocksEngine::delete_orphans`]).
///
/// The versions written since the last compaction are recorded in the engine as they grow, so
/// that after a restart a burst the earlier process did not compact yet still counts: the
/// first quiet tick compacts it, instead of reads stepping over it until a pass.
pub struct QuietCompactions {
    engine: Arc<RocksEngine>,
    burst_min: u64,
    quiet_max: u64,
    steady_ticks: u32,
    ticks_since_compaction: u32,
    written_at_last_tick: u64,
    /// Whether the last tick's writes were quiet.
    quiet: bool,
    written_at_compaction: u64,
    /// Versions an earlier process on these files wrote after its last compaction, until this
    /// one compacts.
    carried: u64,
    /// The count of uncompacted versions last recorded in the engine.
    recorded: u64,
    /// (a fresh timestamp, versions written by then) of recent ticks; the first is the newest
    /// whose timestamp is at or below the safe point, when one is.
    history: VecDeque<(Timestamp, u64)>,
    /// Once the safe point reaches this, the last burst's versions are all below it.
    again_at: Option<Timestamp>,
}

impl QuietCompactions {
    pub fn new(engine: Arc<RocksEngine>) -> QuietCompactions {
        let written = engine.versions_written();
        let carried = engine.recorded_uncompacted_versions();
        QuietCompactions {
            engine,
            burst_min: BURST_VERSIONS_MIN,
            quiet_max: QUIET_VERSIONS_PER_TICK,
            steady_ticks: STEADY_COMPACTION_TICKS,
            ticks_since_compaction: 0,
            written_at_last_tick: written,
            quiet: true,
            written_at_compaction: written,
            carried,
            recorded: carried,
            history: VecDeque::new(),
            again_at: None,
        }
    }

    /// Looks at the writes of the last tick; compacts when they went quiet after a burst, when
    /// `safe_point` has passed the last burst, or when they have not gone quiet since the
    /// last compaction for [`STEADY_COMPACTION_TICKS`]. `now` is a fresh timestamp, later than
    /// every version written so far. Returns whether it compacted.
    fn tick(&mut self, now: Timestamp, safe_point: Timestamp) -> bool {
        let compacted = self.compact_if_due(now, safe_point);
        self.record_uncompacted();
        compacted
    }

    fn compact_if_due(&mut self, now: Timestamp, safe_point: Timestamp) -> bool {
        // Files that compactions replaced go from disk even while nothing reads.
        self.engine.release_idle_cursors();
        match self.engine.delete_orphans() {
            Ok(0) => {}
            Ok(values) => {
                tracing::debug!(values, "deleted the values of versions compactions dropped")
            }
            Err(e) => tracing::warn!(error = %e, "deleting the values of dropped versions failed"),
        }
        let written = self.engine.versions_written();
        let last_tick = written - std::mem::replace(&mut self.written_at_last_tick, written);
        self.remember(now, written, safe_point);
        self.ticks_since_compaction = self.ticks_since_compaction.saturating_add(1);
        self.quiet = last_tick <= self.quiet_max;
        let worth = self
            .burst_min
            .max(self.engine.estimated_versions() / BURST_SHARE_OF_ENTRIES);
        let since = self.uncompacted();
        if !self.quiet {
            if self.ticks_since_compaction < self.steady_ticks || since < worth {
                return false;
            }
            // Writes went on all along: what they left below the safe point goes now, the
            // rest at the next one.
            let took = self.compact();
            tracing::info!(
                versions = since,
                ?took,
                "compacted the write CF under steady writes"
            );
            self.written_at_compaction = written;
            return true;
        }
        let burst = since >= worth;
        let again = self.again_at.is_some_and(|at| safe_point >= at);
        if !burst && !again {
            return false;
        }
        // Versions written after the newest tick at or below the safe point may be above it.
        let above = match self.history.front() {
            Some(&(at, then)) if at <= safe_point => written - then,
            _ => since,
        };
        let took = self.compact();
        tracing::info!(
            versions = since,
            above,
            ?took,
            "compacted the write CF after a burst of writes"
        );
        self.written_at_compaction = written;
        // Worth it against what is left: the garbage the compaction dropped no longer counts.
        let worth = self
            .burst_min
            .max(self.engine.estimated_versions() / BURST_SHARE_OF_ENTRIES);
        self.again_at = (burst && above >= worth).then_some(now);
        true
    }

    /// Compacts the whole write CF; returns how long it took.
    fn compact(&mut self) -> Duration {
        let started = Instant::now();
        if let Err(e) = self.engine.compact_versions() {
            tracing::warn!(error = %e, "compaction of the write CF failed");
        }
        self.ticks_since_compaction = 0;
        self.carried = 0;
        started.elapsed()
    }

    /// Versions written since the last compaction, by this process or the one before.
    fn uncompacted(&self) -> u64 {
        self.written_at_last_tick - self.written_at_compaction + self.carried
    }

    /// Records the uncompacted versions in the engine when they fell (a compaction) or grew
    /// by more than quiet writes do in a tick: a burst survives a restart, up to a second of
    /// it.
    fn record_uncompacted(&mut self) {
        let uncompacted = self.uncompacted();
        if uncompacted >= self.recorded && uncompacted - self.recorded <= self.quiet_max {
            return;
        }
        match self.engine.record_uncompacted_versions(uncompacted) {
            Ok(()) => self.recorded = uncompacted,
            Err(e) => tracing::warn!(error = %e, "recording the uncompacted versions failed"),
        }
    }

    /// Whether a collection pass may run: the writes of the last tick were few enough to count
    /// as quiet, and no compaction waits for the safe point to pass a burst (it will drop what
    /// the pass would delete, without tombstones).
    pub fn lets_passes_run(&self) -> bool {
        self.quiet && self.again_at.is_none()
    }

    fn remember(&mut self, now: Timestamp, written: u64, safe_point: Timestamp) {
        self.history.push_back((now, written));
        while self.history.len() > HISTORY_TICKS_MAX
            || self.history.get(1).is_some_and(|&(at, _)| at <= safe_point)
        {
            self.history.pop_front();
        }
    }
}

fn sleep_unless_stopped(flag: &AtomicBool, duration: Duration) -> bool {
    let step = Duration::from_millis(100).min(duration);
    let mut slept = Duration::ZERO;
    while slept < duration {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        std::thread::sleep(step);
        slept += step;
    }
    flag.load(Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;
    use crate::tests::{one_pc as put, write_cf_entries};
    use strata_engine::{Engine, EngineError, EngineIterator, MemoryEngine};
    use strata_kvapi::{KvApi, Mutation, PrewriteRequest, ScanRequest};

    /// A memory engine whose writes fail from the `fail_from`-th on (counting from 1).
    struct FailingEngine {
        inner: MemoryEngine,
        writes: AtomicUsize,
        fail_from: AtomicUsize,
    }

    impl FailingEngine {
        /// A storage on a failing engine that fails nothing yet.
        fn storage() -> (Arc<FailingEngine>, Storage) {
            let engine = Arc::new(FailingEngine {
                inner: MemoryEngine::new(),
                writes: AtomicUsize::new(0),
                fail_from: AtomicUsize::new(usize::MAX),
            });
            let storage = Storage::new(engine.clone()).unwrap();
            (engine, storage)
        }
    }

    impl Engine for FailingEngine {
        fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>, EngineError> {
            self.inner.get(cf, key)
        }

        fn write(&self, batch: &WriteBatch, sync: bool) -> Result<(), EngineError> {
            let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
            if n >= self.fail_from.load(Ordering::SeqCst) {
                return Err(EngineError::Unavailable("the region moved".into()));
            }
            self.inner.write(batch, sync)
        }

        fn iterator(
            &self,
            cf: Cf,
            lower: &[u8],
            upper: Option<&[u8]>,
        ) -> Box<dyn EngineIterator + '_> {
            self.inner.iterator(cf, lower, upper)
        }
    }

    #[test]
    fn a_failed_batch_never_leaves_older_versions_without_their_delete() {
        let (engine, s) = FailingEngine::storage();
        // More versions than one batch holds, then a delete on top.
        let mut ts = 10;
        for i in 0..GC_BATCH_KEYS + GC_BATCH_KEYS / 2 {
            ts = put(&s, b"a", Some(format!("v{i}").as_bytes()), ts + 1).0;
        }
        let gone = put(&s, b"a", None, ts + 1);
        let safe = Timestamp(gone.0 + 1);
        // The pass's first batch is written, its second fails.
        let written = engine.writes.load(Ordering::SeqCst);
        engine.fail_from.store(written + 2, Ordering::SeqCst);
        assert!(collect(&s, safe).is_err());
        assert_eq!(
            s.get(b"a", Timestamp::MAX).unwrap(),
            None,
            "the delete still hides the versions the failed batch left"
        );
        engine.fail_from.store(usize::MAX, Ordering::SeqCst);
        assert!(collect(&s, safe).unwrap() > 0);
        let mut it = s.engine().iterator(Cf::Write, b"", None);
        it.seek(b"");
        assert!(
            !it.valid().unwrap(),
            "every version of the deleted key is gone"
        );
    }

    #[test]
    fn a_failed_batch_never_leaves_a_record_without_its_long_value() {
        let (engine, s) = FailingEngine::storage();
        // A rollback record first: one deletion, so that the pairs of a record and its value
        // do not line up with the batches by chance.
        s.rollback(&[b"0".to_vec()], Timestamp(5)).unwrap();
        let long = vec![7u8; mvcc::SHORT_VALUE_MAX_BYTES + 1];
        let mut ts = 10;
        for _ in 0..GC_BATCH_KEYS + GC_BATCH_KEYS / 2 {
            ts = put(&s, b"a", Some(&long), ts + 1).0;
        }
        let safe = Timestamp(ts + 1);
        let written = engine.writes.load(Ordering::SeqCst);
        engine.fail_from.store(written + 2, Ordering::SeqCst);
        assert!(collect(&s, safe).is_err());
        // Every record left still finds its value.
        let mut it = s.engine().iterator(Cf::Write, b"", None);
        it.seek(b"");
        let mut records = 0;
        while it.valid().unwrap() {
            let (encoded, _) = mvcc::split_versioned_key(it.key()).unwrap();
            let write = Write::decode(it.value()).unwrap();
            let data = mvcc::append_ts(encoded.to_vec(), write.start_ts);
            assert!(s.engine().get(Cf::Default, &data).unwrap().is_some());
            records += 1;
            it.next();
        }
        assert!(records > 1, "the failed batch left versions behind");
    }

    #[test]
    fn a_key_locked_since_before_the_safe_point_keeps_its_versions() {
        let s = Storage::new(Arc::new(MemoryEngine::new())).unwrap();
        let t1 = put(&s, b"k", Some(b"v1"), 10);
        let t2 = put(&s, b"k", Some(b"v2"), t1.0 + 1);
        // A transaction left a lock on the key; resolving it may still commit below the safe
        // point.
        s.prewrite(&PrewriteRequest {
            mutations: vec![Mutation::Put(b"k".to_vec(), b"v3".to_vec())],
            primary: b"k".to_vec(),
            start_ts: Timestamp(t2.0 + 1),
            for_update_ts: Timestamp::ZERO,
            locked_at: Vec::new(),
            lock_ttl_ms: 1000,
            try_one_pc: false,
            async_commit: false,
            secondaries: Vec::new(),
            max_commit_ts: Timestamp::ZERO,
        })
        .unwrap();
        let safe = Timestamp(t2.0 + 10);
        assert_eq!(collect(&s, safe).unwrap(), 0);
        // Reads below the safe point are refused now; both versions are still stored.
        assert_eq!(write_cf_entries(&s), 2);
    }

    #[test]
    fn a_range_pass_collects_only_its_keys() {
        let s = Storage::new(Arc::new(MemoryEngine::new())).unwrap();
        let mut ts = 10;
        for key in [&b"a"[..], b"m", b"z"] {
            ts = put(&s, key, Some(b"old"), ts + 1).0;
            ts = put(&s, key, Some(b"new"), ts + 1).0;
        }
        let safe = Timestamp(ts + 1);
        assert_eq!(
            collect_range(&s, b"b", b"z", safe).unwrap(),
            1,
            "only m's old version"
        );
        assert_eq!(collect_range(&s, b"", b"b", safe).unwrap(), 1, "a's");
        assert_eq!(collect_range(&s, b"z", b"", safe).unwrap(), 1, "z's");
        assert_eq!(collect(&s, safe).unwrap(), 0);
    }

    #[test]
    fn keeps_the_version_visible_at_the_safe_point() {
        let s = Storage::new(Arc::new(MemoryEngine::new())).unwrap();
        let long = vec![7u8; mvcc::SHORT_VALUE_MAX_BYTES + 1];
        let t1 = put(&s, b"a", Some(&long), 10);
        let t2 = put(&s, b"a", Some(b"v2"), t1.0 + 1);
        let t3 = put(&s, b"a", Some(b"v3"), t2.0 + 10);
        let d1 = put(&s, b"b", Some(b"x"), 10);
        let d2 = put(&s, b"b", None, d1.0 + 1);
        // Safe point between t2 and t3: v1 goes, v2 stays (visible at the safe point), v3 stays.
        let safe = Timestamp(t2.0 + 1);
        assert!(d2 < safe);
        let deleted = collect(&s, safe).unwrap();
        assert_eq!(deleted, 3, "a's oldest version, b's put and b's delete");
        assert_eq!(s.get(b"a", safe).unwrap(), Some(b"v2".to_vec()));
        assert_eq!(s.get(b"a", t3).unwrap(), Some(b"v3".to_vec()));
        assert_eq!(s.get(b"b", Timestamp::MAX).unwrap(), None);
        assert_eq!(collect(&s, safe).unwrap(), 0, "a second pass finds nothing");
        let mut it = s.engine().iterator(Cf::Default, b"", None);
        it.seek(b"");
        assert!(
            !it.valid().unwrap(),
            "the long value of the collected version is gone"
        );
    }

    #[test]
    fn snapshots_below_the_safe_point_are_refused() {
        let s = Storage::new(Arc::new(MemoryEngine::new())).unwrap();
        let t1 = put(&s, b"a", Some(b"v1"), 10);
        let t2 = put(&s, b"a", Some(b"v2"), t1.0 + 1);
        let safe = Timestamp(t2.0 + 1);
        collect(&s, safe).unwrap();
        let too_old = Timestamp(t1.0);
        let refused = |r: Result<(), KvError>| {
            assert_eq!(
                r,
                Err(KvError::SnapshotTooOld {
                    ts: too_old,
                    safe_point: safe
                })
            )
        };
        // v1 is gone: a read at t1 would find nothing and must fail instead.
        refused(s.get(b"a", too_old).map(drop));
        refused(s.batch_get(&[b"a".to_vec()], too_old).map(drop));
        refused(
            s.try_batch_get(&[b"a".to_vec()], too_old)
                .unwrap()
                .map(drop),
        );
        let scan = ScanRequest {
            start: b"a".to_vec(),
            end: Vec::new(),
            ts: too_old,
            limit: 10,
            reverse: false,
            keys_only: false,
        };
        refused(s.scan(&scan).map(drop));
        // A write's conflict checks need what collection removed.
        refused(
            s.prewrite(&PrewriteRequest {
                mutations: vec![Mutation::Put(b"a".to_vec(), b"late".to_vec())],
                primary: b"a".to_vec(),
                start_ts: too_old,
                for_update_ts: Timestamp::ZERO,
                locked_at: Vec::new(),
                lock_ttl_ms: 0,
                try_one_pc: false,
                async_commit: false,
                secondaries: Vec::new(),
                max_commit_ts: Timestamp::ZERO,
            })
            .map(drop),
        );
        // At and above the safe point, and the newest data, still read.
        assert_eq!(s.get(b"a", safe).unwrap(), Some(b"v2".to_vec()));
        assert_eq!(s.get(b"a", Timestamp::MAX).unwrap(), Some(b"v2".to_vec()));
    }

    #[test]
    fn passes_wait_for_quiet_writes_up_to_ten_intervals() {
        let interval = Duration::from_secs(60);
        let after = |secs| Duration::from_secs(secs);
        assert!(!pass_due(after(59), interval, true));
        assert!(pass_due(after(60), interval, true));
        assert!(!pass_due(after(60), interval, false), "writes go on");
        assert!(!pass_due(after(599), interval, false));
        assert!(
            pass_due(after(600), interval, false),
            "they went on for ten intervals"
        );
    }

    /// A storage on RocksDB with the garbage filter and its [`QuietCompactions`] (a burst is
    /// 50 versions, quiet at most 10 in a tick), written at two keys.
    struct Bursts {
        _dir: tempfile::TempDir,
        s: Storage,
        compactions: QuietCompactions,
        ts: u64,
    }

    impl Bursts {
        fn new() -> Bursts {
            Bursts::open(tempfile::tempdir().unwrap(), 10)
        }

        /// Closes the store and opens it again, as a restarted process would.
        fn reopen(self) -> Bursts {
            let Bursts {
                _dir,
                s,
                compactions,
                ts,
            } = self;
            drop((s, compactions));
            Bursts::open(_dir, ts)
        }

        fn open(dir: tempfile::TempDir, ts: u64) -> Bursts {
            let options = strata_engine::RocksOptions {
                block_cache_bytes: 8 << 20,
                write_buffer_bytes: 1 << 20,
            };
            let engine = Arc::new(RocksEngine::open(dir.path(), &options).unwrap());
            let s = Storage::new(engine.clone()).unwrap();
            engine.set_garbage_filter(s.garbage_filter());
            let mut compactions = QuietCompactions::new(engine);
            compactions.burst_min = 50;
            compactions.quiet_max = 10;
            Bursts {
                _dir: dir,
                s,
                compactions,
                ts,
            }
        }

        /// Writes values `range` to keys `a` and `z` in turn, above the safe point. Versions of
        /// one key are distinct engine keys, newest first, so two files hold versions of one
        /// key in overlapping ranges only when other keys span them: hence two keys.
        fn write(&mut self, range: std::ops::Range<u32>) {
            self.ts = self.ts.max(self.s.gc_safe_point().0);
            for i in range {
                for key in [b"a", b"z"] {
                    self.ts = put(&self.s, key, Some(format!("{i}").as_bytes()), self.ts + 1).0;
                }
            }
        }

        /// Raises the safe point to `ms` milliseconds and ticks with the oracle's time a
        /// second later; returns whether the tick compacted.
        fn tick_at_ms(&mut self, ms: u64) -> bool {
            let safe_point = Timestamp::compose(ms, 0);
            self.s.raise_gc_safe_point(safe_point);
            self.compactions
                .tick(Timestamp::compose(ms + 1000, 0), safe_point)
        }
    }

    #[test]
    fn quiet_writes_after_a_burst_compact_the_garbage_away_and_once_more_later() {
        let mut b = Bursts::new();
        b.write(0..20);
        assert!(!b.tick_at_ms(1), "writes go on");
        assert!(!b.tick_at_ms(2), "quiet, but 40 versions are no burst");
        b.write(20..30);
        assert!(!b.tick_at_ms(3), "writes go on");
        assert!(
            b.tick_at_ms(4),
            "quiet after 60 versions, all written above the safe point"
        );
        assert_eq!(write_cf_entries(&b.s), 2);
        assert_eq!(b.s.get(b"z", Timestamp::MAX).unwrap(), Some(b"29".to_vec()));

        // Versions written after that compaction wait until the safe point has passed the burst.
        b.write(30..35);
        assert!(!b.tick_at_ms(500), "too soon after the burst");
        assert_eq!(write_cf_entries(&b.s), 12);
        assert!(b.tick_at_ms(1004), "the safe point has passed the burst");
        assert_eq!(write_cf_entries(&b.s), 2);
        assert_eq!(b.s.get(b"a", Timestamp::MAX).unwrap(), Some(b"34".to_vec()));
        assert!(!b.tick_at_ms(2000), "once");

        // A burst already below the safe point when writes go quiet needs one compaction.
        b.write(35..65);
        assert!(!b.tick_at_ms(3000), "writes go on");
        assert!(b.tick_at_ms(4500), "quiet after a burst");
        assert_eq!(write_cf_entries(&b.s), 2);
        assert!(
            !b.tick_at_ms(10_000),
            "nothing was left above the safe point"
        );
    }

    #[test]
    fn writes_that_never_go_quiet_have_the_write_cf_compacted_every_few_ticks() {
        let mut b = Bursts::new();
        b.compactions.steady_ticks = 3;

        // Twenty versions a tick: never quiet.
        b.write(0..10);
        assert!(!b.tick_at_ms(1), "one tick of writes");
        b.write(10..20);
        assert!(!b.tick_at_ms(2), "two");
        b.write(20..30);
        assert!(
            b.tick_at_ms(3),
            "three ticks of writes that never went quiet"
        );
        assert_eq!(
            write_cf_entries(&b.s),
            2,
            "the versions below the safe point went"
        );
        assert_eq!(b.s.get(b"z", Timestamp::MAX).unwrap(), Some(b"29".to_vec()));

        b.write(30..40);
        assert!(!b.tick_at_ms(4), "one tick since the compaction");
        b.write(40..41);
        assert!(!b.tick_at_ms(5), "quiet, and 22 versions are no burst");
        b.write(41..51);
        assert!(
            !b.tick_at_ms(6),
            "three ticks since the compaction, but 42 versions are not worth one"
        );
        b.write(51..61);
        assert!(b.tick_at_ms(7), "62 versions");
        assert_eq!(write_cf_entries(&b.s), 2);
        assert_eq!(b.s.get(b"a", Timestamp::MAX).unwrap(), Some(b"60".to_vec()));
    }

    #[test]
    fn a_burst_an_earlier_process_left_uncompacted_is_compacted_after_a_restart() {
        let mut b = Bursts::new();
        b.write(0..30);
        assert!(!b.tick_at_ms(1), "writes go on");
        let mut b = b.reopen();
        assert_eq!(write_cf_entries(&b.s), 60);
        assert!(
            b.tick_at_ms(2),
            "quiet, and the 60 versions written before the restart are a burst"
        );
        assert_eq!(write_cf_entries(&b.s), 2);
        assert_eq!(b.s.get(b"z", Timestamp::MAX).unwrap(), Some(b"29".to_vec()));

        // Compacted before the restart: nothing to carry over.
        b.write(30..40);
        assert!(!b.tick_at_ms(3000), "writes go on");
        let mut b = b.reopen();
        assert!(!b.tick_at_ms(3001), "20 versions are no burst");
        assert_eq!(write_cf_entries(&b.s), 22);
    }
}
