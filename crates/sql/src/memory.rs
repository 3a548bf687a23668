//! Memory accounting: what each running statement holds, against its quota and against the
//! server's limit.
//!
//! A statement charges the rows it keeps (scanned rows held for a sort or a join, join output,
//! hash-join build sides, groups, result rows) to its [`StatementMemory`] as it keeps them.
//! Past `tidb_mem_quota_query` the statement fails with TiDB's 8175; its rows are dropped as the
//! error unwinds and the next statement starts from zero. Every statement also reserves what it
//! holds from the server's [`MemoryPool`] in [`RESERVATION_CHUNK_BYTES`] pieces; when the pool
//! is spent, the statement holding the most of it fails with 8176 (as TiDB's
//! `tidb_server_memory_limit` does) and the others go on. So a statement that would exhaust the
//! node is stopped, and no other session notices.
//!
//! New statements are admitted against the pool too: while the running ones hold more than
//! [`PRESSURE_PERCENT`] of it, a statement waits to start (up to [`ADMISSION_WAIT`]) until they
//! give memory back, and is refused with 1041 if they do not; it never adds to a pool that is
//! nearly spent.
//!
//! The charges are estimates of heap bytes ([`row_bytes`]): they count the values a row holds,
//! not the allocator's overhead.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use strata_codec::Datum;

use crate::error::{Error, Result};

/// Default `tidb_mem_quota_query`: 1 GiB, as in TiDB.
pub const QUERY_QUOTA_BYTES_DEFAULT: i64 = 1 << 30;

/// What a statement reserves from the pool at a time, so that the shared counter is touched
/// once per this many bytes rather than once per row.
pub const RESERVATION_CHUNK_BYTES: u64 = 1 << 20;

/// The share of the pool (percent) past which new statements wait to start.
pub const PRESSURE_PERCENT: u64 = 90;

/// The longest a new statement waits for the pool's pressure to ease before it is refused.
pub const ADMISSION_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The working memory that all statements of a server may hold together.
pub struct MemoryPool {
    reserved: AtomicU64,
    limit: AtomicU64,
    /// The tracker of every open session, to find the one holding the most.
    trackers: Mutex<Vec<Weak<Tracker>>>,
}

impl Default for MemoryPool {
    /// A pool of half the machine's memory.
    fn default() -> MemoryPool {
        MemoryPool::new(physical_memory_bytes() / 2)
    }
}

impl MemoryPool {
    /// A pool of `limit` bytes.
    pub fn new(limit: u64) -> MemoryPool {
        MemoryPool {
            reserved: AtomicU64::new(0),
            limit: AtomicU64::new(limit),
            trackers: Mutex::new(Vec::new()),
        }
    }

    /// The bytes all running statements hold now (reserved from the pool).
    pub fn reserved(&self) -> u64 {
        self.reserved.load(Ordering::Relaxed)
    }

    /// The most bytes one running statement reserved.
    pub fn largest(&self) -> u64 {
        self.trackers
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .map(|t| t.reserved.load(Ordering::Relaxed))
            .max()
            .unwrap_or(0)
    }

    pub fn limit(&self) -> u64 {
        self.limit.load(Ordering::Relaxed)
    }

    /// Whether the running statements hold more than [`PRESSURE_PERCENT`] of the limit.
    // Hot path: every statement.
    pub fn under_pressure(&self) -> bool {
        let reserved = self.reserved.load(Ordering::Relaxed);
        u128::from(reserved) * 100 > u128::from(self.limit()) * u128::from(PRESSURE_PERCENT)
    }

    /// Sets the limit; statements already past it fail at their next charge.
    pub fn set_limit(&self, limit: u64) {
        self.limit.store(limit, Ordering::Relaxed);
    }

    fn register(&self, tracker: &Arc<Tracker>) {
        let mut trackers = self.trackers.lock();
        trackers.retain(|t| t.strong_count() > 0);
        trackers.push(Arc::downgrade(tracker));
    }

    fn reserve(&self, bytes: u64) -> bool {
        let before = self.reserved.fetch_add(bytes, Ordering::Relaxed);
        if before.saturating_add(bytes) > self.limit() {
            self.release(bytes);
            return false;
        }
        true
    }

    fn release(&self, bytes: u64) {
        self.reserved.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// The pool is spent and `asking` needs more: the statement holding the most is
    /// cancelled unless that is `asking` itself. Returns whether `asking` may go on (the
    /// cancelled statement gives its memory back as it unwinds).
    fn cancel_largest(&self, asking: &Arc<Tracker>) -> bool {
        let trackers = self.trackers.lock();
        let largest = trackers
            .iter()
            .filter_map(Weak::upgrade)
            .max_by_key(|t| t.reserved.load(Ordering::Relaxed));
        match largest {
            Some(largest) if !Arc::ptr_eq(&largest, asking) => {
                largest.cancelled.store(true, Ordering::Relaxed);
                true
            }
            _ => false,
        }
    }
}

/// One session's counters.
/// The share of its quota past which a statement's operators that can spill do.
pub const SPILL_MARK_PERCENT: u64 = 80;

#[derive(Default)]
struct Tracker {
    used: AtomicU64,
    /// The most `used` was before a release (rows sent to the client are released).
    peak: AtomicU64,
    reserved: AtomicU64,
    /// The running statement's quota; 0 for none.
    quota: AtomicU64,
    /// Set when the pool ran out and this statement held the most.
    cancelled: AtomicBool,
}

/// What one session's running statement holds. Only the session's own thread charges it.
pub struct StatementMemory {
    pool: Arc<MemoryPool>,
    tracker: Arc<Tracker>,
}

impl StatementMemory {
    pub fn new(pool: Arc<MemoryPool>) -> StatementMemory {
        let tracker = Arc::new(Tracker::default());
        pool.register(&tracker);
        StatementMemory { pool, tracker }
    }

    /// Starts a statement with `quota` bytes (0 for no quota), releasing what an earlier one
    /// still held.
    pub fn begin(&self, quota: u64) {
        self.end();
        self.tracker.quota.store(quota, Ordering::Relaxed);
    }

    /// Ends the statement: what it held goes back to the pool.
    pub fn end(&self) {
        let tracker = &self.tracker;
        tracker.used.store(0, Ordering::Relaxed);
        tracker.peak.store(0, Ordering::Relaxed);
        tracker.cancelled.store(false, Ordering::Relaxed);
        let reserved = tracker.reserved.swap(0, Ordering::Relaxed);
        if reserved > 0 {
            self.pool.release(reserved);
        }
    }

    /// The pool the statement charges.
    pub fn pool(&self) -> &MemoryPool {
        &self.pool
    }

    /// The most bytes the running statement has held at once.
    pub fn used(&self) -> u64 {
        let tracker = &self.tracker;
        let used = tracker.used.load(Ordering::Relaxed);
        used.max(tracker.peak.load(Ordering::Relaxed))
    }

    /// Gives back `bytes` that the running statement no longer holds (result rows that went
    /// to the client). What it reserved from the pool stays reserved until it ends, so a
    /// statement that streams its result reserves no more than its largest held part.
    pub fn release(&self, bytes: usize) {
        let tracker = &self.tracker;
        let used = tracker.used.load(Ordering::Relaxed);
        if used > tracker.peak.load(Ordering::Relaxed) {
            tracker.peak.store(used, Ordering::Relaxed);
        }
        tracker
            .used
            .store(used.saturating_sub(bytes as u64), Ordering::Relaxed);
    }

    /// Whether the running statement holds more than [`SPILL_MARK_PERCENT`] of its quota: an
    /// operator that can write what it holds to disk does so then (as TiDB's spill action
    /// runs before its cancel), so that rows others hold for a moment still fit.
    pub fn pressed(&self) -> bool {
        let quota = self.tracker.quota.load(Ordering::Relaxed);
        quota != 0 && self.tracker.used.load(Ordering::Relaxed) > quota / 100 * SPILL_MARK_PERCENT
    }

    /// Charges `bytes` to the running statement of connection `connection_id`: 8175 past its
    /// quota; 8176 when the server's pool is spent and this statement holds the most of it
    /// (else the one that does is cancelled, and this one goes on).
    // Hot path: every kept row, or every batch of them.
    pub fn consume(&self, bytes: usize, connection_id: u32) -> Result<()> {
        let tracker = &self.tracker;
        if tracker.cancelled.load(Ordering::Relaxed) {
            return Err(exceeded_server_limit(connection_id));
        }
        let used = tracker
            .used
            .load(Ordering::Relaxed)
            .saturating_add(bytes as u64);
        tracker.used.store(used, Ordering::Relaxed);
        let quota = tracker.quota.load(Ordering::Relaxed);
        if quota != 0 && used > quota {
            return Err(exceeded_query_quota(connection_id));
        }
        let reserved = tracker.reserved.load(Ordering::Relaxed);
        if used > reserved {
            let more = (used - reserved).next_multiple_of(RESERVATION_CHUNK_BYTES);
            if !self.pool.reserve(more) {
                if !self.pool.cancel_largest(tracker) {
                    return Err(exceeded_server_limit(connection_id));
                }
                // Over the limit until the cancelled statement has unwound.
                self.pool.reserved.fetch_add(more, Ordering::Relaxed);
            }
            tracker.reserved.store(reserved + more, Ordering::Relaxed);
        }
        Ok(())
    }
}

impl Drop for StatementMemory {
    fn drop(&mut self) {
        self.end();
    }
}

/// The machine's memory (`MemTotal`), or 8 GiB where it cannot be read.
pub fn physical_memory_bytes() -> u64 {
    const FALLBACK: u64 = 8 << 30;
    let Ok(meminfo) = std::fs::read_to_string("/proc/meminfo") else {
        return FALLBACK;
    };
    meminfo
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse::<u64>().ok())
        .map_or(FALLBACK, |kib| kib * 1024)
}

/// The heap bytes a row of values holds, as charged.
pub fn row_bytes(row: &[Datum]) -> usize {
    const ROW: usize = std::mem::size_of::<Vec<Datum>>();
    const VALUE: usize = std::mem::size_of::<Datum>();
    let mut bytes = ROW + row.len() * VALUE;
    for value in row {
        if let Datum::Bytes(b) = value {
            bytes += b.len();
        }
    }
    bytes
}

/// 8175: the statement went past `tidb_mem_quota_query`.
pub fn exceeded_query_quota(connection_id: u32) -> Error {
    Error::new(
        8175,
        "HY000",
        format!(
            "Your query has been cancelled due to exceeding the allowed memory limit for a \
             single SQL query. Please try narrowing your query scope or increase the \
             tidb_mem_quota_query limit and try again.[conn={connection_id}]"
        ),
    )
}

/// 8176: the server's statements together hold `--memory-limit`.
pub fn exceeded_server_limit(connection_id: u32) -> Error {
    Error::new(
        8176,
        "HY000",
        format!(
            "Your query has been cancelled due to exceeding the allowed memory limit for the \
             tidb-server instance and this query is currently using the most memory. Please \
             try narrowing your query scope or increase the tidb_server_memory_limit and try \
             again.[conn={connection_id}]"
        ),
    )
}

/// 1041: a statement waited [`ADMISSION_WAIT`] to start while the server's statements held
/// nearly all of `--memory-limit`.
pub fn admission_refused(connection_id: u32) -> Error {
    Error::new(
        1041,
        "HY000",
        format!(
            "Out of memory: the server's running statements hold nearly all of \
             tidb_server_memory_limit, and did not give memory back within {} s; try again \
             later.[conn={connection_id}]",
            ADMISSION_WAIT.as_secs()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_past_its_quota_gets_8175_and_the_next_starts_afresh() {
        let pool = Arc::new(MemoryPool::new(1 << 30));
        let memory = StatementMemory::new(pool.clone());
        memory.begin(1000);
        assert!(memory.consume(600, 7).is_ok());
        let error = memory.consume(600, 7).unwrap_err();
        assert_eq!(error.code(), 8175);
        assert!(error.to_string().contains("[conn=7]"), "{error}");
        assert_eq!(pool.reserved(), RESERVATION_CHUNK_BYTES);
        memory.begin(1000);
        assert_eq!(pool.reserved(), 0, "the next statement released it");
        assert!(memory.consume(900, 7).is_ok());
        memory.end();
        assert_eq!(memory.used(), 0);
    }

    #[test]
    fn the_pool_stops_the_statement_that_holds_the_most() {
        let pool = Arc::new(MemoryPool::new(3 * RESERVATION_CHUNK_BYTES));
        let big = StatementMemory::new(pool.clone());
        let small = StatementMemory::new(pool.clone());
        big.begin(0);
        small.begin(0);
        let chunk = RESERVATION_CHUNK_BYTES as usize;
        assert!(big.consume(3 * chunk, 1).is_ok());
        assert_eq!(
            big.consume(1, 1).unwrap_err().code(),
            8176,
            "it holds the most"
        );
        big.begin(0);
        assert!(big.consume(3 * chunk, 1).is_ok());
        assert!(
            small.consume(10, 2).is_ok(),
            "a small statement goes on past a spent pool"
        );
        assert_eq!(big.consume(1, 1).unwrap_err().code(), 8176, "cancelled");
        drop(big);
        assert_eq!(pool.reserved(), RESERVATION_CHUNK_BYTES, "the small one's");
        assert!(small.consume(chunk, 2).is_ok());
    }

    #[test]
    fn the_pool_is_under_pressure_past_its_share() {
        let pool = Arc::new(MemoryPool::new(10 * RESERVATION_CHUNK_BYTES));
        let running = StatementMemory::new(pool.clone());
        running.begin(0);
        let chunk = RESERVATION_CHUNK_BYTES as usize;
        assert!(running.consume(9 * chunk, 1).is_ok());
        assert!(!pool.under_pressure(), "90 % is not past it");
        assert!(running.consume(1, 1).is_ok());
        assert!(pool.under_pressure());
        running.end();
        assert!(!pool.under_pressure());
    }

    #[test]
    fn rows_are_charged_for_their_values() {
        let small = row_bytes(&[Datum::Int(1)]);
        let long = row_bytes(&[Datum::Bytes(vec![0; 1000])]);
        assert_eq!(long - small, 1000);
    }
}
