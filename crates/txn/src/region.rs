//! A region as the transaction client routes to it: its key range, epoch and leader's store,
//! as the placement driver last told (kept in `RemoteKv`'s region cache).

use strata_proto::kv as pb;
use strata_types::Key;

/// A region as the client routes to it.
#[derive(Clone, Debug)]
pub(crate) struct CachedRegion {
    pub(crate) id: u64,
    pub(crate) start_key: Key,
    /// Exclusive; empty means the end of the key space.
    pub(crate) end_key: Key,
    pub(crate) epoch: pb::RegionEpoch,
    pub(crate) leader_store: u64,
}

impl CachedRegion {
    pub(crate) fn contains(&self, key: &[u8]) -> bool {
        key >= self.start_key.as_slice() && (self.end_key.is_empty() || key < &self.end_key[..])
    }

    /// The part of `[start, end)` (`end` empty: unbounded) that lies in this region.
    pub(crate) fn part_of(&self, start: &[u8], end: &[u8]) -> (Key, Key) {
        let part_start = start.max(self.start_key.as_slice()).to_vec();
        let part_end = match (end.is_empty(), self.end_key.is_empty()) {
            (true, _) => self.end_key.clone(),
            (false, true) => end.to_vec(),
            (false, false) => end.min(self.end_key.as_slice()).to_vec(),
        };
        (part_start, part_end)
    }

    pub(crate) fn context(&self) -> Option<pb::Context> {
        Some(pb::Context {
            region_id: self.id,
            region_epoch: Some(self.epoch),
        })
    }

    pub(crate) fn from_pb(entry: strata_proto::pd::GetRegionResponse) -> Option<CachedRegion> {
        let region = entry.region?;
        let leader = entry.leader?;
        Some(CachedRegion {
            id: region.id,
            start_key: region.start_key,
            end_key: region.end_key,
            epoch: region.epoch.unwrap_or_default(),
            leader_store: leader.store_id,
        })
    }
}
