//! The cluster's garbage collection safe point, kept by the placement driver.
//!
//! KV nodes collect old versions behind one safe point: each pass asks the placement driver to
//! advance it (`PdClient::advance_gc_safe_point`),
//! and a node that starts leading a region refuses snapshots below it. SQL nodes report the
//! oldest snapshot their open transactions read at, and the safe point waits for it, up to the
//! longest wait the KV node allows (TiDB's `tidb_gc_max_wait_time`): a long transaction holds
//! collection back instead of failing.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use strata_types::Timestamp;

/// How often each SQL node reports its oldest snapshot.
pub const SNAPSHOT_REPORT_INTERVAL: Duration = Duration::from_secs(1);
/// How long a report counts: a SQL node that stopped reporting (it died) holds nothing back
/// once this passed.
pub const SNAPSHOT_REPORT_TTL: Duration = Duration::from_secs(10);
/// How long a placement driver that starts leading leaves the safe point where it is: by then
/// every live SQL node has reported to it.
pub const SNAPSHOT_REPORT_GRACE: Duration = Duration::from_secs(3);

/// The safe point for a pass: `life_floor` (now less the GC life time), held back to the oldest
/// snapshot in use, but never below `wait_floor` (now less the longest wait).
pub fn gc_safe_point(
    life_floor: Timestamp,
    wait_floor: Timestamp,
    oldest_in_use: Option<Timestamp>,
) -> Timestamp {
    oldest_in_use
        .map_or(life_floor, |oldest| oldest.min(life_floor))
        .max(wait_floor)
}

/// The oldest snapshot each SQL node reported, with when.
#[derive(Default)]
pub struct SnapshotsInUse {
    reports: HashMap<u64, (Option<Timestamp>, Instant)>,
}

impl SnapshotsInUse {
    /// Records SQL node `node`'s oldest open snapshot (`None`: it has none open).
    pub fn report(&mut self, node: u64, oldest: Option<Timestamp>, now: Instant) {
        self.reports.insert(node, (oldest, now));
        self.reports
            .retain(|_, (_, at)| now.duration_since(*at) < SNAPSHOT_REPORT_TTL);
    }

    /// The oldest snapshot of the reports that still count.
    pub fn oldest(&self, now: Instant) -> Option<Timestamp> {
        self.reports
            .values()
            .filter(|(_, at)| now.duration_since(*at) < SNAPSHOT_REPORT_TTL)
            .filter_map(|(oldest, _)| *oldest)
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_safe_point_waits_for_the_oldest_snapshot_up_to_the_longest_wait() {
        let (life, wait) = (Timestamp(100), Timestamp(40));
        assert_eq!(gc_safe_point(life, wait, None), life);
        assert_eq!(gc_safe_point(life, wait, Some(Timestamp(150))), life);
        assert_eq!(
            gc_safe_point(life, wait, Some(Timestamp(70))),
            Timestamp(70)
        );
        assert_eq!(gc_safe_point(life, wait, Some(Timestamp(10))), wait);
    }

    #[test]
    fn a_report_counts_until_its_ttl_passes() {
        let start = Instant::now();
        let mut snapshots = SnapshotsInUse::default();
        snapshots.report(1, Some(Timestamp(50)), start);
        snapshots.report(2, Some(Timestamp(80)), start + Duration::from_secs(5));
        snapshots.report(3, None, start + Duration::from_secs(5));
        assert_eq!(
            snapshots.oldest(start + Duration::from_secs(6)),
            Some(Timestamp(50))
        );
        // Node 1 stopped reporting.
        let later = start + SNAPSHOT_REPORT_TTL + Duration::from_secs(1);
        assert_eq!(snapshots.oldest(later), Some(Timestamp(80)));
        // Node 2's transaction ended.
        snapshots.report(2, None, later);
        assert_eq!(snapshots.oldest(later), None);
    }
}
