//! Timestamp issuing: the window below a durable limit that every oracle uses, and the oracle
//! of one process (the playground's), whose limit is persisted in a small file.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use strata_types::Timestamp;

use crate::PdError;

/// How far ahead of the issued physical time the persisted limit is kept.
pub const TSO_SAVE_INTERVAL_MS: u64 = 3_000;

/// A source of wall-clock milliseconds, injectable for tests.
pub trait Clock: Send + Sync + 'static {
    fn now_ms(&self) -> u64;
}

/// The system's wall clock.
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
}

/// Anything that issues transaction timestamps.
pub trait TimestampOracle: Send + Sync + 'static {
    /// Returns a timestamp greater than every one returned before.
    fn get_ts(&self) -> Result<Timestamp, PdError>;
}

/// Issues timestamps below a limit on their physical part (the limit that was made durable).
///
/// Issuing is lock-free: the last timestamp is one atomic, advanced by compare-and-swap to
/// `max(last + 1, now)`. A request that would pass the limit fails until someone raises it.
pub struct TsoWindow<C: Clock = SystemClock> {
    clock: C,
    last: AtomicU64,
    limit_ms: AtomicU64,
}

impl<C: Clock> TsoWindow<C> {
    /// A window whose first timestamp is at or after `start_ms` (and now), issuing below
    /// `limit_ms`.
    pub fn new(clock: C, start_ms: u64, limit_ms: u64) -> TsoWindow<C> {
        let physical_ms = clock.now_ms().max(start_ms);
        TsoWindow {
            clock,
            last: AtomicU64::new(Timestamp::compose(physical_ms, 0).0),
            limit_ms: AtomicU64::new(limit_ms),
        }
    }

    /// The physical part of the next timestamp, were it issued now.
    pub fn next_physical_ms(&self) -> u64 {
        let last = Timestamp(self.last.load(Ordering::SeqCst) + 1).physical_ms();
        last.max(self.clock.now_ms())
    }

    pub fn limit_ms(&self) -> u64 {
        self.limit_ms.load(Ordering::SeqCst)
    }

    /// The last timestamp issued (or, before any, the one the window started below).
    pub fn last_issued(&self) -> Timestamp {
        Timestamp(self.last.load(Ordering::SeqCst))
    }

    /// Lets the window issue below `limit_ms` (a durable limit at least that high exists).
    pub fn raise(&self, limit_ms: u64) {
        self.limit_ms.fetch_max(limit_ms, Ordering::SeqCst);
    }

    /// Issues `count` consecutive timestamps and returns the last (the first is
    /// `last - count + 1`); `Err(physical_ms)` when that needs the limit above `physical_ms`.
    pub fn issue(&self, count: u32) -> Result<Timestamp, u64> {
        let count = u64::from(count.max(1));
        loop {
            let now = Timestamp::compose(self.clock.now_ms(), 0).0;
            let last = self.last.load(Ordering::SeqCst);
            // A logical counter that overflows carries into the physical part.
            let next = (last + 1).max(now) + (count - 1);
            let physical_ms = Timestamp(next).physical_ms();
            if physical_ms >= self.limit_ms.load(Ordering::SeqCst) {
                return Err(physical_ms);
            }
            if self
                .last
                .compare_exchange_weak(last, next, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
            {
                return Ok(Timestamp(next));
            }
        }
    }
}

/// The oracle of one process, durable through a file holding the physical limit: before
/// issuing past the persisted limit it persists a new one [`TSO_SAVE_INTERVAL_MS`] ahead.
pub struct LocalTso<C: Clock = SystemClock> {
    window: TsoWindow<C>,
    path: PathBuf,
    saving: Mutex<()>,
}

impl LocalTso<SystemClock> {
    /// Opens the oracle persisted in `dir`.
    pub fn open(dir: &Path) -> Result<Self, PdError> {
        LocalTso::open_with_clock(dir, SystemClock)
    }
}

impl<C: Clock> LocalTso<C> {
    pub fn open_with_clock(dir: &Path, clock: C) -> Result<Self, PdError> {
        fs::create_dir_all(dir)?;
        let path = dir.join("tso-limit");
        let saved = match fs::read_to_string(&path) {
            Ok(text) => text.trim().parse::<u64>().unwrap_or(0),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(e.into()),
        };
        let physical_ms = clock.now_ms().max(saved + 1);
        let limit_ms = physical_ms + TSO_SAVE_INTERVAL_MS;
        save_limit(&path, limit_ms)?;
        Ok(LocalTso {
            window: TsoWindow::new(clock, physical_ms, limit_ms),
            path,
            saving: Mutex::new(()),
        })
    }

    /// Persists a limit above `physical_ms` unless one already is.
    fn raise_limit(&self, physical_ms: u64) -> Result<(), PdError> {
        let _saving = self.saving.lock();
        if physical_ms < self.window.limit_ms() {
            return Ok(());
        }
        let limit = physical_ms + TSO_SAVE_INTERVAL_MS;
        save_limit(&self.path, limit)?;
        self.window.raise(limit);
        Ok(())
    }

    /// Issues `count` consecutive timestamps and returns the last; the first is
    /// `last - count + 1`.
    pub fn get_ts_batch(&self, count: u32) -> Result<Timestamp, PdError> {
        loop {
            match self.window.issue(count) {
                Ok(last) => return Ok(last),
                Err(physical_ms) => self.raise_limit(physical_ms)?,
            }
        }
    }
}

impl<C: Clock> TimestampOracle for LocalTso<C> {
    // Hot path: every transaction and pessimistic statement.
    fn get_ts(&self) -> Result<Timestamp, PdError> {
        self.get_ts_batch(1)
    }
}

fn save_limit(path: &Path, limit_ms: u64) -> Result<(), PdError> {
    replace_file(path, limit_ms.to_string().as_bytes())
}

/// Replaces the file at `path` with `bytes` atomically (a new file renamed over it); durable
/// when this returns.
pub fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), PdError> {
    let tmp = path.with_extension("tmp");
    let mut file = fs::File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    struct FakeClock(Arc<AtomicU64>);
    impl Clock for FakeClock {
        fn now_ms(&self) -> u64 {
            self.0.load(Ordering::SeqCst)
        }
    }

    #[test]
    fn monotonic_within_a_millisecond_and_across_restarts_with_a_clock_going_back() {
        let dir = tempfile::tempdir().unwrap();
        let now = Arc::new(AtomicU64::new(10_000_000));
        let tso = LocalTso::open_with_clock(dir.path(), FakeClock(now.clone())).unwrap();
        let a = tso.get_ts().unwrap();
        let b = tso.get_ts().unwrap();
        assert!(b > a);
        now.store(10_010_000, Ordering::SeqCst);
        let c = tso.get_ts().unwrap();
        assert!(c > b);
        drop(tso);
        // The clock jumps back an hour; the reopened oracle still issues larger timestamps.
        now.store(10_010_000 - 3_600_000, Ordering::SeqCst);
        let tso = LocalTso::open_with_clock(dir.path(), FakeClock(now)).unwrap();
        let d = tso.get_ts().unwrap();
        assert!(d > c);
        // A batch of 100 lies wholly after everything issued before it.
        let last = tso.get_ts_batch(100).unwrap();
        assert!(Timestamp(last.0 - 99) > d);
        assert!(tso.get_ts().unwrap() > last);
    }

    #[test]
    fn concurrent_callers_get_distinct_increasing_timestamps() {
        let dir = tempfile::tempdir().unwrap();
        let now = Arc::new(AtomicU64::new(10_000_000));
        let tso = Arc::new(LocalTso::open_with_clock(dir.path(), FakeClock(now.clone())).unwrap());
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (tso, now) = (tso.clone(), now.clone());
                std::thread::spawn(move || {
                    let mut seen = Vec::new();
                    for i in 0..20_000u64 {
                        if i % 1000 == 0 {
                            // Move the clock past the persisted limit now and then.
                            now.fetch_add(TSO_SAVE_INTERVAL_MS / 2, Ordering::SeqCst);
                        }
                        seen.push(tso.get_ts().unwrap());
                    }
                    seen
                })
            })
            .collect();
        let mut all = Vec::new();
        for t in threads {
            let seen = t.join().unwrap();
            assert!(
                seen.windows(2).all(|w| w[0] < w[1]),
                "increasing per caller"
            );
            all.extend(seen);
        }
        let count = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), count, "no timestamp is issued twice");
        let saved: u64 = std::fs::read_to_string(dir.path().join("tso-limit"))
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            saved > all.last().unwrap().physical_ms(),
            "the persisted limit covers every issued timestamp"
        );
    }
}
