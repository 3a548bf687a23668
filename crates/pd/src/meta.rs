//! The cluster's metadata as the placement driver keeps it: stores, regions and the id
//! allocator. It is replicated whole through the placement drivers' Raft group on every
//! change (see `group.rs`): changes are rare (a store registers, a region splits), so
//! simplicity wins over write cost.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoreRecord {
    pub id: u64,
    pub address: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PeerRecord {
    pub id: u64,
    pub store_id: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionRecord {
    pub id: u64,
    pub start_key: Vec<u8>,
    /// Exclusive; empty means the end of the key space.
    pub end_key: Vec<u8>,
    pub conf_ver: u64,
    pub version: u64,
    pub peers: Vec<PeerRecord>,
    /// The peer that leads the region, as last reported.
    pub leader_peer_id: u64,
}

impl RegionRecord {
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start_key.as_slice() && (self.end_key.is_empty() || key < &self.end_key[..])
    }

    /// Whether the two regions' ranges share a key.
    pub fn overlaps(&self, other: &RegionRecord) -> bool {
        (self.end_key.is_empty() || other.start_key < self.end_key)
            && (other.end_key.is_empty() || self.start_key < other.end_key)
    }

    pub fn leader(&self) -> Option<PeerRecord> {
        self.peers
            .iter()
            .copied()
            .find(|p| p.id == self.leader_peer_id)
    }
}

/// Everything the placement driver must remember across restarts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterMeta {
    /// The last id handed out (stores, regions and peers share one sequence).
    pub last_id: u64,
    pub stores: BTreeMap<u64, StoreRecord>,
    /// Keyed by start key, so the region of a key is the last one starting at or before it.
    #[serde(with = "regions_as_list")]
    pub regions: BTreeMap<Vec<u8>, RegionRecord>,
    /// The GC safe point: snapshots below it may miss collected versions.
    #[serde(default)]
    pub gc_safe_point: u64,
    /// The cluster's id, chosen at random when the first store registers (0: none yet); a
    /// store keeps it in its data folder and never joins a cluster with another.
    #[serde(default)]
    pub cluster_id: u64,
}

impl ClusterMeta {
    pub fn alloc_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    /// The region whose range holds `key`.
    pub fn region_of(&self, key: &[u8]) -> Option<&RegionRecord> {
        self.regions
            .range(..=key.to_vec())
            .next_back()
            .map(|(_, r)| r)
            .filter(|r| r.contains(key))
    }

    pub fn region_by_id(&self, id: u64) -> Option<&RegionRecord> {
        self.regions.values().find(|r| r.id == id)
    }

    /// Records `region` as a KV node reported it, unless what is known already is as new:
    /// the regions it overlaps are replaced when all of them have an older version (they are
    /// what it was split from), and it is ignored otherwise. Returns whether anything changed.
    pub fn update_region(&mut self, mut region: RegionRecord) -> bool {
        let overlapping: Vec<&RegionRecord> = self
            .regions
            .values()
            .filter(|r| r.overlaps(&region) || r.id == region.id)
            .collect();
        let newer = overlapping.iter().all(|r| {
            r.version < region.version
                || (r.version == region.version && r.conf_ver < region.conf_ver)
        });
        if !newer {
            return false;
        }
        if let Some(old) = overlapping.iter().find(|r| r.id == region.id) {
            region.leader_peer_id = old.leader_peer_id;
        }
        let stale: Vec<Vec<u8>> = overlapping.iter().map(|r| r.start_key.clone()).collect();
        for key in stale {
            self.regions.remove(&key);
        }
        self.regions.insert(region.start_key.clone(), region);
        true
    }

    /// Regions overlapping `[start, end)` in key order, at most `limit`.
    pub fn scan_regions(&self, start: &[u8], end: &[u8], limit: usize) -> Vec<&RegionRecord> {
        let first = self.region_of(start).map(|r| r.start_key.clone());
        let from = first.unwrap_or_else(|| start.to_vec());
        self.regions
            .range(from..)
            .map(|(_, r)| r)
            .take_while(|r| end.is_empty() || r.start_key.as_slice() < end)
            .take(limit)
            .collect()
    }
}

/// Regions are stored as a list (JSON object keys must be strings) and keyed again on load.
mod regions_as_list {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::RegionRecord;

    pub fn serialize<S: Serializer>(
        regions: &BTreeMap<Vec<u8>, RegionRecord>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        regions.values().collect::<Vec<_>>().serialize(serializer)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<BTreeMap<Vec<u8>, RegionRecord>, D::Error> {
        let list = Vec::<RegionRecord>::deserialize(deserializer)?;
        Ok(list.into_iter().map(|r| (r.start_key.clone(), r)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(id: u64, start: &[u8], end: &[u8]) -> RegionRecord {
        RegionRecord {
            id,
            start_key: start.to_vec(),
            end_key: end.to_vec(),
            conf_ver: 1,
            version: 1,
            peers: vec![PeerRecord {
                id: id + 100,
                store_id: 1,
            }],
            leader_peer_id: id + 100,
        }
    }

    #[test]
    fn finds_the_region_of_a_key_and_scans_ranges() {
        let mut meta = ClusterMeta::default();
        for r in [
            region(1, b"", b"g"),
            region(2, b"g", b"p"),
            region(3, b"p", b""),
        ] {
            meta.regions.insert(r.start_key.clone(), r);
        }
        assert_eq!(meta.region_of(b"").unwrap().id, 1);
        assert_eq!(meta.region_of(b"f\xff").unwrap().id, 1);
        assert_eq!(meta.region_of(b"g").unwrap().id, 2);
        assert_eq!(meta.region_of(b"zzz").unwrap().id, 3);
        let ids = |v: Vec<&RegionRecord>| v.iter().map(|r| r.id).collect::<Vec<_>>();
        assert_eq!(ids(meta.scan_regions(b"h", b"", 10)), vec![2, 3]);
        assert_eq!(ids(meta.scan_regions(b"a", b"g", 10)), vec![1]);
        assert_eq!(ids(meta.scan_regions(b"a", b"g\x00", 10)), vec![1, 2]);
        assert_eq!(ids(meta.scan_regions(b"", b"", 2)), vec![1, 2]);
        assert_eq!(meta.region_of(b"g").unwrap().leader().unwrap().id, 102);
    }

    #[test]
    fn newer_regions_replace_what_they_were_split_from() {
        let mut meta = ClusterMeta::default();
        let mut whole = region(1, b"", b"");
        whole.version = 1;
        meta.regions.insert(Vec::new(), whole.clone());
        let mut left = region(1, b"", b"m");
        left.version = 2;
        let mut right = region(2, b"m", b"");
        right.version = 2;
        assert!(meta.update_region(right.clone()));
        assert!(meta.update_region(left.clone()));
        assert_eq!(meta.region_of(b"a").map(|r| r.id), Some(1));
        assert_eq!(meta.region_of(b"z").map(|r| r.id), Some(2));
        // A late report of the region before the split changes nothing; nor does a repeat.
        assert!(!meta.update_region(whole));
        assert!(!meta.update_region(right));
        assert_eq!(meta.regions.len(), 2);
        assert_eq!(
            meta.region_of(b"a").map(|r| r.end_key.clone()),
            Some(b"m".to_vec())
        );
    }
}
