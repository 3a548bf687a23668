//! The snapshots a client's open transactions read at, so that garbage collection can wait for
//! the oldest (SQL nodes report it to the placement driver; the playground's collector asks
//! directly).

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::Mutex;
use strata_types::Timestamp;

/// Open snapshots, each with how many transactions read at it.
#[derive(Clone, Default)]
pub(crate) struct OpenSnapshots(Arc<Mutex<BTreeMap<Timestamp, usize>>>);

impl OpenSnapshots {
    /// Registers a transaction reading at `start_ts` until the guard drops.
    pub(crate) fn open(&self, start_ts: Timestamp) -> SnapshotGuard {
        *self.0.lock().entry(start_ts).or_default() += 1;
        SnapshotGuard {
            snapshots: self.clone(),
            start_ts,
        }
    }

    pub(crate) fn oldest(&self) -> Option<Timestamp> {
        self.0.lock().keys().next().copied()
    }
}

/// Keeps one transaction's snapshot registered.
pub(crate) struct SnapshotGuard {
    snapshots: OpenSnapshots,
    start_ts: Timestamp,
}

impl Drop for SnapshotGuard {
    fn drop(&mut self) {
        let mut open = self.snapshots.0.lock();
        if let Some(count) = open.get_mut(&self.start_ts) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.start_ts);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_open_snapshot_is_known_until_its_last_transaction_ends() {
        let snapshots = OpenSnapshots::default();
        assert_eq!(snapshots.oldest(), None);
        let a = snapshots.open(Timestamp(5));
        let b = snapshots.open(Timestamp(5));
        let c = snapshots.open(Timestamp(9));
        assert_eq!(snapshots.oldest(), Some(Timestamp(5)));
        drop(a);
        assert_eq!(snapshots.oldest(), Some(Timestamp(5)));
        drop(b);
        assert_eq!(snapshots.oldest(), Some(Timestamp(9)));
        drop(c);
        assert_eq!(snapshots.oldest(), None);
    }
}
