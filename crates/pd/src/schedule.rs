//! Leader balance: the placement driver answers a region heartbeat with "hand leadership to
//! store S" when the reporting leader's store leads clearly more regions than another up
//! store that holds a peer of the region.
//!
//! A move it ordered counts for its target store for [`TRANSFER_PENDING`] (until heartbeats
//! confirm it), so that the regions of one busy store reporting in the same second do not all
//! move at once; a region is not moved again within [`TRANSFER_COOLDOWN`].

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::meta::RegionRecord;

/// How long an ordered leader move counts for its target before heartbeats confirm it.
pub const TRANSFER_PENDING: Duration = Duration::from_secs(5);
/// The least time between two leader moves of one region.
pub const TRANSFER_COOLDOWN: Duration = Duration::from_secs(10);

/// Leader moves ordered and not yet confirmed, and when each region last moved.
#[derive(Default)]
pub struct LeaderBalancer {
    pending: HashMap<u64, (u64, Instant)>,
    moved_at: HashMap<u64, Instant>,
}

impl LeaderBalancer {
    /// Whether `region`'s leader, on `leader_store`, should move, and to which store.
    /// `leader_stores` maps every region with a known leader to its leader's store; `up` are
    /// the stores that heartbeat.
    pub fn decide(
        &mut self,
        region: &RegionRecord,
        leader_store: u64,
        leader_stores: &HashMap<u64, u64>,
        up: &HashSet<u64>,
    ) -> Option<u64> {
        let now = Instant::now();
        self.pending
            .retain(|_, (_, at)| now.duration_since(*at) < TRANSFER_PENDING);
        if self
            .moved_at
            .get(&region.id)
            .is_some_and(|at| now.duration_since(*at) < TRANSFER_COOLDOWN)
        {
            return None;
        }
        let mut counts: HashMap<u64, usize> = up.iter().map(|&s| (s, 0)).collect();
        for (id, store) in leader_stores {
            let store = self.pending.get(id).map_or(*store, |(to, _)| *to);
            *counts.entry(store).or_default() += 1;
        }
        let here = counts.get(&leader_store).copied().unwrap_or(0);
        let (target, there) = region
            .peers
            .iter()
            .filter(|p| p.store_id != leader_store && up.contains(&p.store_id))
            .map(|p| (p.store_id, counts.get(&p.store_id).copied().unwrap_or(0)))
            .min_by_key(|&(store, count)| (count, store))?;
        if here <= there + 1 {
            return None;
        }
        self.pending.insert(region.id, (target, now));
        self.moved_at.insert(region.id, now);
        self.moved_at
            .retain(|_, at| now.duration_since(*at) < TRANSFER_COOLDOWN);
        Some(target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::PeerRecord;

    fn region(id: u64) -> RegionRecord {
        RegionRecord {
            id,
            start_key: Vec::new(),
            end_key: Vec::new(),
            conf_ver: 1,
            version: 1,
            peers: (1..=3)
                .map(|store_id| PeerRecord {
                    id: id * 10 + store_id,
                    store_id,
                })
                .collect(),
            leader_peer_id: 0,
        }
    }

    #[test]
    fn moves_leaders_off_a_crowded_store_until_balanced() {
        let up: HashSet<u64> = [1, 2, 3].into();
        let leaders: HashMap<u64, u64> = (1..=6).map(|r| (r, 1)).collect();
        let mut balancer = LeaderBalancer::default();
        let moves: Vec<Option<u64>> = (1..=6)
            .map(|r| balancer.decide(&region(r), 1, &leaders, &up))
            .collect();
        // Six leaders on store 1: four move (two to each other store), two stay.
        let moved: Vec<u64> = moves.iter().flatten().copied().collect();
        assert_eq!(moved.len(), 4, "{moves:?}");
        assert_eq!(moved.iter().filter(|&&s| s == 2).count(), 2);
        assert_eq!(moved.iter().filter(|&&s| s == 3).count(), 2);
        // A region just moved is left alone.
        assert_eq!(balancer.decide(&region(1), 2, &leaders, &up), None);
    }

    #[test]
    fn leaves_a_balanced_cluster_and_down_stores_alone() {
        let leaders: HashMap<u64, u64> = [(1, 1), (2, 2), (3, 3), (4, 1)].into();
        let mut balancer = LeaderBalancer::default();
        let all: HashSet<u64> = [1, 2, 3].into();
        assert_eq!(balancer.decide(&region(1), 1, &leaders, &all), None);
        let crowded: HashMap<u64, u64> = (1..=4).map(|r| (r, 1)).collect();
        let only_one: HashSet<u64> = [1].into();
        assert_eq!(balancer.decide(&region(1), 1, &crowded, &only_one), None);
    }
}
