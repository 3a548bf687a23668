//! Auto-increment values and hidden row ids, allocated in batches.
//!
//! Each table's allocator hands out values from an in-memory range `[next, end)`; when it runs
//! out it reserves the next batch by raising the table's persisted high-water mark in its own
//! small transaction. After a restart allocation resumes above the mark, so a value is never
//! handed out twice (values of a reserved batch that were not used are skipped, as in TiDB).

use std::collections::HashMap;

use strata_fiber::Mutex;
use strata_txn::{TxnClient, TxnError, TxnMode};

use crate::catalog::{autoid_key, read_u64};
use crate::error::Result;

/// Values reserved per trip to storage.
pub const AUTOID_BATCH: u64 = 4_000;
/// Attempts to reserve a batch when allocators on other nodes race for the mark.
const RESERVE_ATTEMPTS_MAX: usize = 64;

#[derive(Clone, Copy, Default)]
struct Range {
    next: u64,
    end: u64,
}

pub struct AutoIds {
    client: TxnClient,
    ranges: Mutex<HashMap<i64, Range>>,
}

impl AutoIds {
    pub fn new(client: TxnClient) -> AutoIds {
        AutoIds {
            client,
            ranges: Mutex::new(HashMap::new()),
        }
    }

    /// Allocates `count` consecutive values; returns the first.
    pub fn allocate(&self, table_id: i64, count: u64) -> Result<u64> {
        let mut ranges = self.ranges.lock();
        let range = ranges.entry(table_id).or_default();
        if range.next == 0 || range.end - range.next < count {
            let end = self.reserve(table_id, 0, count.max(AUTOID_BATCH))?;
            *range = Range {
                next: end - count.max(AUTOID_BATCH),
                end,
            };
        }
        let first = range.next;
        range.next += count;
        Ok(first)
    }

    /// Makes later allocations exceed `used` (an explicitly inserted value).
    pub fn rebase(&self, table_id: i64, used: u64) -> Result<()> {
        let mut ranges = self.ranges.lock();
        let range = ranges.entry(table_id).or_default();
        if range.next != 0 && used < range.next {
            return Ok(());
        }
        if range.next != 0 && used < range.end {
            range.next = used + 1;
            return Ok(());
        }
        let end = self.reserve(table_id, used, AUTOID_BATCH)?;
        *range = Range {
            next: (used + 1).max(end - AUTOID_BATCH),
            end,
        };
        Ok(())
    }

    /// Forgets a table's range (after TRUNCATE or DROP).
    pub fn forget(&self, table_id: i64) {
        self.ranges.lock().remove(&table_id);
    }

    /// Raises the persisted mark to at least `floor + batch` (and by `batch` above the old mark);
    /// returns the new mark.
    fn reserve(&self, table_id: i64, floor: u64, batch: u64) -> Result<u64> {
        let key = autoid_key(table_id);
        let mut last_error = None;
        for _ in 0..RESERVE_ATTEMPTS_MAX {
            let mut txn = self.client.begin(TxnMode::Optimistic)?;
            let mark = read_u64(&mut txn, &key)?.max(floor);
            let new_mark = mark.saturating_add(batch).max(1 + batch);
            txn.put(key.clone(), new_mark.to_be_bytes().to_vec());
            match txn.commit() {
                Ok(_) => return Ok(new_mark),
                Err(e @ TxnError::Kv(_)) => last_error = Some(e),
                Err(e) => return Err(e.into()),
            }
        }
        Err(last_error.expect("at least one attempt").into())
    }
}
