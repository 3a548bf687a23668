//! The placement driver's schedulers, which act through its answers to region heartbeats.
//!
//! Replica repair ([`ReplicaChecker`]): a region with a peer on a store that has been down
//! longer than the limit loses that peer first (the remaining peers are the live ones, so the
//! change commits), and a region with fewer peers than it should have gains one on an up store
//! that holds none of its peers, the least loaded first. The new peer receives the region's
//! data as a snapshot from the leader.
//!
//! Leader balance ([`LeaderBalancer`]): "hand leadership to store S" when the reporting
//! leader's store leads clearly more regions than another up store that holds a peer of the
//! region. A move it ordered counts for its target store for [`TRANSFER_PENDING`] (until
//! heartbeats confirm it), so that the regions of one busy store reporting in the same second
//! do not all move at once; a region is not moved again within [`TRANSFER_COOLDOWN`].
//! A move asked for by an operator ([`LeaderBalancer::request`], pd-ctl's transfer-leader) is
//! ordered at the region's next heartbeat whatever the balance, and lapses after
//! [`TRANSFER_PENDING`].

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use crate::meta::{PeerRecord, RegionRecord};

/// How long an ordered peer addition is ordered again with the same peer id, before the
/// placement driver gives up on it and picks again.
pub const ADD_PEER_PENDING: Duration = Duration::from_secs(30);

/// A store as the replica checker sees it.
#[derive(Clone, Copy, Debug)]
pub struct StoreView {
    pub id: u64,
    /// Sent a heartbeat lately.
    pub up: bool,
    /// Sent no heartbeat for longer than the limit: its peers are to be replaced.
    pub down_too_long: bool,
    pub regions: u64,
}

/// A membership change the placement driver orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    Add(PeerRecord),
    Remove(PeerRecord),
}

/// Peers ordered added and not yet seen in the region.
#[derive(Default)]
pub struct ReplicaChecker {
    pending_adds: HashMap<u64, (PeerRecord, Instant)>,
}

impl ReplicaChecker {
    /// The membership change `region` needs to keep `replicas` live peers, if any; `alloc`
    /// hands out a fresh peer id.
    pub fn check(
        &mut self,
        region: &RegionRecord,
        replicas: usize,
        stores: &[StoreView],
        alloc: impl FnOnce() -> Option<u64>,
    ) -> Option<Operator> {
        let store = |id: u64| stores.iter().find(|s| s.id == id);
        if let Some(dead) = region
            .peers
            .iter()
            .find(|p| store(p.store_id).is_none_or(|s| s.down_too_long))
        {
            if region.peers.len() > 1 {
                return Some(Operator::Remove(*dead));
            }
        }
        if region.peers.len() >= replicas {
            self.pending_adds.remove(&region.id);
            return None;
        }
        let now = Instant::now();
        if let Some((peer, at)) = self.pending_adds.get(&region.id) {
            let still_fit = store(peer.store_id).is_some_and(|s| s.up);
            if now.duration_since(*at) < ADD_PEER_PENDING && still_fit {
                return Some(Operator::Add(*peer));
            }
        }
        let target = stores
            .iter()
            .filter(|s| s.up && !region.peers.iter().any(|p| p.store_id == s.id))
            .min_by_key(|s| (s.regions, s.id))?;
        let peer = PeerRecord {
            id: alloc()?,
            store_id: target.id,
        };
        self.pending_adds.insert(region.id, (peer, now));
        Some(Operator::Add(peer))
    }
}

/// How long an ordered leader move counts for its target before heartbeats confirm it.
pub const TRANSFER_PENDING: Duration = Duration::from_secs(5);
/// The least time between two leader moves of one region.
pub const TRANSFER_COOLDOWN: Duration = Duration::from_secs(10);

/// Leader moves ordered and not yet confirmed, and when each region last moved.
#[derive(Default)]
pub struct LeaderBalancer {
    pending: HashMap<u64, (u64, Instant)>,
    moved_at: HashMap<u64, Instant>,
    /// Moves asked for by an operator: region -> (target store, when asked).
    requested: HashMap<u64, (u64, Instant)>,
}

impl LeaderBalancer {
    /// Orders `region`'s leader to `to_store` at the region's next heartbeat.
    pub fn request(&mut self, region: u64, to_store: u64) {
        let now = Instant::now();
        self.requested
            .retain(|_, (_, at)| now.duration_since(*at) < TRANSFER_PENDING);
        self.requested.insert(region, (to_store, now));
    }

    /// The store an operator asked `region`'s leader, on `leader_store`, to move to, if that
    /// store holds a peer of the region and is up (the request is used up either way).
    pub fn requested(
        &mut self,
        region: &RegionRecord,
        leader_store: u64,
        up: &HashSet<u64>,
    ) -> Option<u64> {
        let (target, at) = self.requested.remove(&region.id)?;
        let now = Instant::now();
        let valid = now.duration_since(at) < TRANSFER_PENDING
            && target != leader_store
            && up.contains(&target)
            && region.peers.iter().any(|p| p.store_id == target);
        if !valid {
            return None;
        }
        self.pending.insert(region.id, (target, now));
        self.moved_at.insert(region.id, now);
        Some(target)
    }

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

    fn store(id: u64, up: bool, down_too_long: bool, regions: u64) -> StoreView {
        StoreView {
            id,
            up,
            down_too_long,
            regions,
        }
    }

    #[test]
    fn replaces_a_peer_on_a_store_down_too_long() {
        let mut checker = ReplicaChecker::default();
        let mut stores = vec![
            store(1, true, false, 5),
            store(2, true, false, 5),
            store(3, false, false, 5),
            store(4, true, false, 9),
            store(5, true, false, 2),
        ];
        let mut r = region(1);
        // Down, but not for long enough: nothing yet.
        assert_eq!(checker.check(&r, 3, &stores, || Some(100)), None);
        stores[2].down_too_long = true;
        let dead = r.peers[2];
        assert_eq!(
            checker.check(&r, 3, &stores, || Some(100)),
            Some(Operator::Remove(dead))
        );
        r.peers.retain(|p| p.store_id != 3);
        // The least loaded up store without a peer gets the new one, with one id throughout.
        let added = PeerRecord {
            id: 100,
            store_id: 5,
        };
        assert_eq!(
            checker.check(&r, 3, &stores, || Some(100)),
            Some(Operator::Add(added))
        );
        assert_eq!(
            checker.check(&r, 3, &stores, || Some(101)),
            Some(Operator::Add(added))
        );
        r.peers.push(added);
        assert_eq!(checker.check(&r, 3, &stores, || Some(102)), None);
    }

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
