//! Garbage collection of old MVCC versions behind a safe point.
//!
//! A version is garbage once a newer version of its key is committed at or before the safe
//! point: no snapshot at or after the safe point can see it. For each key the collector keeps
//! the newest version at or below the safe point (unless it is a delete, which then goes too)
//! and deletes everything older, with the long values those versions point at. Rollback and
//! lock-only records below the safe point go as well.
//!
//! The safe point trails the timestamp oracle by [`GC_LIFE_TIME`], as TiDB's
//! `tidb_gc_life_time`: a transaction may not run longer than that.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use strata_engine::{Cf, WriteBatch};
use strata_kvapi::KvError;
use strata_types::Timestamp;

use crate::mvcc::{self, Write, WriteKind};
use crate::Storage;

/// How long old versions stay readable.
pub const GC_LIFE_TIME: Duration = Duration::from_secs(600);
/// Pause between collection passes.
pub const GC_INTERVAL: Duration = Duration::from_secs(60);
/// Deletions per write batch.
const GC_BATCH_KEYS: usize = 1024;
/// Write-CF entries examined before the collector yields the CPU briefly.
const GC_SCAN_CHUNK: usize = 16_384;

/// Collects garbage over the whole key space once; returns how many records it deleted.
pub fn collect(storage: &Storage, safe_point: Timestamp) -> Result<usize, KvError> {
    let engine = storage.engine();
    let mut batch = WriteBatch::new();
    let mut deleted = 0;
    let mut it = engine.iterator(Cf::Write, b"", None);
    it.seek(b"");
    let mut current_key: Vec<u8> = Vec::new();
    // Whether the key already has a kept version at or below the safe point.
    let mut kept_below = false;
    let mut examined = 0;
    while it.valid().map_err(|e| KvError::Storage(e.to_string()))? {
        let (user, commit_ts) = mvcc::split_versioned_key(it.key())?;
        if user != current_key.as_slice() {
            current_key = user.to_vec();
            kept_below = false;
        }
        if commit_ts <= safe_point {
            let write = Write::decode(it.value())?;
            let remove = match write.kind {
                WriteKind::Rollback | WriteKind::Lock => true,
                WriteKind::Put | WriteKind::Delete if kept_below => true,
                WriteKind::Delete => {
                    kept_below = true;
                    true
                }
                WriteKind::Put => {
                    kept_below = true;
                    false
                }
            };
            if remove {
                if write.kind == WriteKind::Put && write.short_value.is_none() {
                    batch.delete(
                        Cf::Default,
                        mvcc::append_ts(current_key.clone(), write.start_ts),
                    );
                }
                batch.delete(Cf::Write, it.key().to_vec());
                deleted += 1;
                if batch.len() >= GC_BATCH_KEYS {
                    engine
                        .write(&batch, false)
                        .map_err(|e| KvError::Storage(e.to_string()))?;
                    batch = WriteBatch::new();
                }
            }
        }
        examined += 1;
        if examined % GC_SCAN_CHUNK == 0 {
            std::thread::yield_now();
        }
        it.next();
    }
    if !batch.is_empty() {
        engine
            .write(&batch, false)
            .map_err(|e| KvError::Storage(e.to_string()))?;
    }
    Ok(deleted)
}

/// A background thread that collects garbage every [`GC_INTERVAL`].
pub struct GcWorker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl GcWorker {
    /// Starts the worker; `now` returns a fresh timestamp from the oracle.
    pub fn start(
        storage: Arc<Storage>,
        now: impl Fn() -> Option<Timestamp> + Send + 'static,
    ) -> GcWorker {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("gc".into())
            .spawn(move || {
                while !sleep_unless_stopped(&flag, GC_INTERVAL) {
                    let Some(now) = now() else { continue };
                    let life_ms = GC_LIFE_TIME.as_millis() as u64;
                    let safe_point =
                        Timestamp::compose(now.physical_ms().saturating_sub(life_ms), 0);
                    match collect(&storage, safe_point) {
                        Ok(n) if n > 0 => tracing::info!(deleted = n, "gc pass"),
                        Ok(_) => {}
                        Err(e) => tracing::warn!(error = %e, "gc pass failed"),
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

/// Sleeps up to `duration`; returns true if asked to stop.
fn sleep_unless_stopped(flag: &AtomicBool, duration: Duration) -> bool {
    let step = Duration::from_millis(100);
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
    use super::*;
    use strata_engine::MemoryEngine;
    use strata_kvapi::{KvApi, Mutation, PrewriteRequest};

    fn put(s: &Storage, key: &[u8], value: Option<&[u8]>, start: u64) -> Timestamp {
        let mutation = match value {
            Some(v) => Mutation::Put(key.to_vec(), v.to_vec()),
            None => Mutation::Delete(key.to_vec()),
        };
        s.prewrite(&PrewriteRequest {
            mutations: vec![mutation],
            primary: key.to_vec(),
            start_ts: Timestamp(start),
            for_update_ts: Timestamp::ZERO,
            locked_at: Vec::new(),
            lock_ttl_ms: 0,
            try_one_pc: true,
            async_commit: false,
            secondaries: Vec::new(),
        })
        .unwrap()
        .one_pc_commit_ts
        .unwrap()
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
}
