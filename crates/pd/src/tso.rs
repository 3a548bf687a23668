//! The timestamp oracle of one process (the playground's), persisted in a small file.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use strata_types::{Timestamp, TIMESTAMP_LOGICAL_BITS};

use crate::PdError;

/// How far ahead of the issued physical time the persisted limit is kept.
pub const TSO_SAVE_INTERVAL_MS: u64 = 3_000;
const LOGICAL_MAX: u64 = (1 << TIMESTAMP_LOGICAL_BITS) - 1;

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

struct State {
    physical_ms: u64,
    logical: u64,
    saved_limit_ms: u64,
}

/// The oracle of one process, durable through a file holding the physical limit.
pub struct LocalTso<C: Clock = SystemClock> {
    clock: C,
    path: PathBuf,
    state: Mutex<State>,
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
        let saved_limit_ms = physical_ms + TSO_SAVE_INTERVAL_MS;
        save_limit(&path, saved_limit_ms)?;
        Ok(LocalTso {
            clock,
            path,
            state: Mutex::new(State {
                physical_ms,
                logical: 0,
                saved_limit_ms,
            }),
        })
    }
}

impl<C: Clock> TimestampOracle for LocalTso<C> {
    // Hot path: every transaction and pessimistic statement.
    fn get_ts(&self) -> Result<Timestamp, PdError> {
        let mut state = self.state.lock();
        let now = self.clock.now_ms();
        if now > state.physical_ms {
            state.physical_ms = now;
            state.logical = 0;
        }
        state.logical += 1;
        if state.logical > LOGICAL_MAX {
            state.physical_ms += 1;
            state.logical = 1;
        }
        if state.physical_ms >= state.saved_limit_ms {
            let limit = state.physical_ms + TSO_SAVE_INTERVAL_MS;
            save_limit(&self.path, limit)?;
            state.saved_limit_ms = limit;
        }
        Ok(Timestamp::compose(state.physical_ms, state.logical))
    }
}

fn save_limit(path: &Path, limit_ms: u64) -> Result<(), PdError> {
    let tmp = path.with_extension("tmp");
    let mut file = fs::File::create(&tmp)?;
    file.write_all(limit_ms.to_string().as_bytes())?;
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
        assert!(tso.get_ts().unwrap() > c);
    }
}
