//! The wait-for graph of a deadlock detector: which transaction waits for which, each edge
//! named by start_ts. A KV node keeps one for the lock waits it serves; the placement driver
//! keeps one for the whole cluster, fed by every KV node, since a cycle may span nodes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::Timestamp;

/// Longest chain a cycle check follows.
const WAIT_CHAIN_MAX: usize = 1024;

/// Waiting transaction -> the transaction it waits for, with when the edge was last recorded.
/// With a time to live, an edge not recorded again within it no longer counts (its waiter's
/// node may have died without saying that the wait ended).
#[derive(Debug, Default)]
pub struct WaitForGraph {
    edges: HashMap<Timestamp, (Timestamp, Instant)>,
    ttl: Option<Duration>,
}

impl WaitForGraph {
    /// A graph whose edges expire `ttl` after they were last recorded.
    pub fn with_ttl(ttl: Duration) -> WaitForGraph {
        WaitForGraph {
            edges: HashMap::new(),
            ttl: Some(ttl),
        }
    }

    /// Records that `waiter` waits for `blocker` (replacing what `waiter` waited for) unless
    /// that closes a cycle; returns false, recording nothing, when it would.
    pub fn wait(&mut self, waiter: Timestamp, blocker: Timestamp, now: Instant) -> bool {
        if let Some(ttl) = self.ttl {
            self.edges
                .retain(|_, (_, recorded)| now.saturating_duration_since(*recorded) < ttl);
        }
        let mut cursor = blocker;
        for _ in 0..WAIT_CHAIN_MAX {
            if cursor == waiter {
                return false;
            }
            match self.edges.get(&cursor) {
                Some((next, _)) => cursor = *next,
                None => break,
            }
        }
        self.edges.insert(waiter, (blocker, now));
        true
    }

    /// Forgets what `waiter` waited for.
    pub fn remove(&mut self, waiter: Timestamp) {
        self.edges.remove(&waiter);
    }

    pub fn contains(&self, waiter: Timestamp) -> bool {
        self.edges.contains_key(&waiter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_is_refused_and_an_expired_edge_does_not_count() {
        let t = Timestamp;
        let now = Instant::now();
        let mut graph = WaitForGraph::with_ttl(Duration::from_secs(3));
        assert!(graph.wait(t(1), t(2), now));
        assert!(graph.wait(t(2), t(3), now));
        assert!(!graph.wait(t(3), t(1), now), "1 -> 2 -> 3 -> 1");
        assert!(!graph.contains(t(3)));
        // The edges of 1 and 2 expire; 3 may then wait for 1.
        assert!(graph.wait(t(3), t(1), now + Duration::from_secs(4)));
        graph.remove(t(3));
        assert!(!graph.contains(t(3)));
    }
}
