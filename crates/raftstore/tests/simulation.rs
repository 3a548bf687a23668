//! Raft-replicated peers under a seeded simulated network: partitions, dropped, delayed and
//! reordered messages, and crashes with restarts from the persisted log. After every run the
//! faults heal and the test checks that every peer applied the same commands in the same order
//! and that every proposal reported applied is in that order at its index.
//!
//! Each node keeps its log as a KV node does: in raft-engine ([`RaftLog`], in a folder of its
//! own), written through [`LogWriteBatch`] and read back by [`RaftLog::load`] when it restarts.
//! What a ready asks to make durable is written only when its simulated sync completes, one or
//! more steps later, and the peer hears of it ([`Peer::finish_ready`]) only then; a crash before
//! that loses the write, as a machine that loses power loses what was not synced. So the test
//! checks that nothing is acknowledged, voted or counted before it is durable.
//!
//! Each run prints nothing unless it fails; a failure names its seed, and
//! `STRATA_TEST_SEED=<seed>` replays exactly that run.

use std::collections::{BTreeMap, HashSet};

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use strata_raftstore::{
    LogWrite, LogWriteBatch, Message, Peer, PeerConfig, ProposalOutcome, RaftLog, Ready,
    StateMachine, INIT_INDEX,
};

/// The one Raft group the simulation runs.
const REGION: u64 = 1;

/// The chance that a node's pending log write is synced in a step.
const SYNC_PROBABILITY: f64 = 0.5;

/// A state machine that records what it applied.
#[derive(Default)]
struct AppliedLog(Vec<(u64, u64)>);

impl StateMachine for AppliedLog {
    fn apply(&mut self, index: u64, command: &[u8]) -> bool {
        let id = u64::from_be_bytes(command.try_into().expect("8-byte command"));
        self.0.push((index, id));
        true
    }

    fn apply_conf_change(&mut self, _: u64, _: &raft::eraftpb::ConfChange) {
        panic!("the simulation proposes no membership changes");
    }

    fn restore(&mut self, _: &raft::eraftpb::Snapshot) {
        panic!("the simulation's peers make no snapshots");
    }
}

/// Each peer's election timeout is fixed and distinct (Raft's own random draw would make a
/// run impossible to replay from its seed); the network's seeded delays still vary who wins.
fn config(id: u64) -> PeerConfig {
    let min = 10 + 3 * (id as usize - 1);
    PeerConfig {
        min_election_tick: min,
        max_election_tick: min + 1,
        ..PeerConfig::default()
    }
}

struct Node {
    peer: Option<Peer<AppliedLog>>,
    /// The node's durable log; None while the node is down.
    log: Option<RaftLog>,
    dir: tempfile::TempDir,
    /// What the peer's last ready asked to make durable, not written yet: lost in a crash.
    unsynced: Option<LogWrite>,
}

impl Node {
    /// A node whose log holds the group's start, as every peer of a new region has it.
    fn bootstrap(id: u64, ids: &[u64]) -> Node {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let log = RaftLog::open(dir.path()).expect("open the raft log");
        let mut batch = LogWriteBatch::new();
        batch.bootstrap(REGION, ids).expect("bootstrap the log");
        log.write(&mut batch, true).expect("write the log");
        let mut node = Node {
            peer: None,
            log: Some(log),
            dir,
            unsynced: None,
        };
        node.open_peer(id);
        node
    }

    /// Opens the peer over what the log holds (a start or a restart).
    fn open_peer(&mut self, id: u64) {
        let log = self.log.as_ref().expect("the log is open");
        let storage = log
            .load(REGION)
            .expect("read the raft log")
            .expect("the group's log");
        self.peer = Some(Peer::open_applied(
            id,
            storage,
            config(id),
            AppliedLog::default(),
            INIT_INDEX,
        ));
    }

    /// Makes `write` durable (the simulation does not crash the machine between a write and
    /// its sync, so an unsynced write to the engine stands for a synced one).
    fn persist(&mut self, write: &LogWrite) {
        let mut batch = LogWriteBatch::new();
        batch.add(REGION, write).expect("batch the write");
        self.log
            .as_ref()
            .expect("the log is open")
            .write(&mut batch, false)
            .expect("write the raft log");
    }

    /// Handles the peer's ready: messages that may leave at once go out; what must be made
    /// durable first is written when its sync completes (now with `synced`, else pending),
    /// and only then does the peer go on. Returns what the peer handed out.
    fn ready(&mut self, synced: bool) -> Ready {
        let mut out = Ready::default();
        let write = match self.unsynced.take() {
            Some(write) => write,
            None => {
                let peer = self.peer.as_mut().expect("the node is up");
                if !peer.has_ready() {
                    return out;
                }
                peer.collect_ready(&mut out)
            }
        };
        if write.is_empty() || synced {
            if !write.is_empty() {
                self.persist(&write);
            }
            self.peer
                .as_mut()
                .expect("the node is up")
                .finish_ready(&mut out);
        } else {
            self.unsynced = Some(write);
        }
        out
    }
}

/// The simulated cluster: peers, the network between them and the client's ledger.
struct Sim {
    seed: u64,
    rng: StdRng,
    now: u64,
    nodes: BTreeMap<u64, Node>,
    in_flight: Vec<(u64, Message)>,
    drop_rate: f64,
    max_delay: u64,
    /// Links that carry nothing, as (from, to).
    cut: HashSet<(u64, u64)>,
    next_proposal: u64,
    /// Proposal id → the index at which its proposer reported it applied.
    acknowledged: BTreeMap<u64, u64>,
    /// Log writes lost because their node crashed before they were synced.
    lost_writes: u64,
}

impl Sim {
    fn new(seed: u64, peers: u64) -> Sim {
        let ids: Vec<u64> = (1..=peers).collect();
        let nodes = ids
            .iter()
            .map(|&id| (id, Node::bootstrap(id, &ids)))
            .collect();
        Sim {
            seed,
            rng: StdRng::seed_from_u64(seed),
            now: 0,
            nodes,
            in_flight: Vec::new(),
            drop_rate: 0.0,
            max_delay: 3,
            cut: HashSet::new(),
            next_proposal: 1,
            acknowledged: BTreeMap::new(),
            lost_writes: 0,
        }
    }

    fn linked(&self, from: u64, to: u64) -> bool {
        !self.cut.contains(&(from, to))
    }

    /// One step of virtual time: ticks, deliveries, client proposals, ready handling.
    fn step(&mut self, propose_probability: f64) {
        self.now += 1;
        // A node whose sync is in flight is blocked in it, as a KV node's poll loop is: it
        // neither ticks nor reads messages, which wait for it.
        for node in self.nodes.values_mut() {
            if let (Some(peer), None) = (&mut node.peer, &node.unsynced) {
                peer.tick();
            }
        }
        let now = self.now;
        let nodes = &self.nodes;
        let (due, later): (Vec<_>, Vec<_>) = std::mem::take(&mut self.in_flight)
            .into_iter()
            .partition(|(at, m)| *at <= now && nodes[&m.to].unsynced.is_none());
        self.in_flight = later;
        let mut due: Vec<Message> = due.into_iter().map(|(_, m)| m).collect();
        due.shuffle(&mut self.rng);
        for message in due {
            if !self.linked(message.from, message.to) {
                continue;
            }
            if let Some(Some(peer)) = self.nodes.get_mut(&message.to).map(|n| n.peer.as_mut()) {
                peer.step(message);
            }
        }
        if self.rng.gen_bool(propose_probability) {
            let leaders: Vec<u64> = self
                .nodes
                .iter()
                .filter(|(_, n)| {
                    n.unsynced.is_none() && n.peer.as_ref().is_some_and(|p| p.is_leader())
                })
                .map(|(id, _)| *id)
                .collect();
            if let Some(&leader) = leaders.choose(&mut self.rng) {
                let id = self.next_proposal;
                self.next_proposal += 1;
                let peer = self.nodes.get_mut(&leader).unwrap().peer.as_mut().unwrap();
                let _ = peer.propose(id, id.to_be_bytes().to_vec());
            }
        }
        let ids: Vec<u64> = self.nodes.keys().copied().collect();
        for id in ids {
            let synced = self.rng.gen_bool(SYNC_PROBABILITY);
            let node = self.nodes.get_mut(&id).unwrap();
            if node.peer.is_none() {
                continue;
            }
            let ready = node.ready(synced);
            for outcome in ready.outcomes {
                if let ProposalOutcome::Applied { id, index } = outcome {
                    let earlier = self.acknowledged.insert(id, index);
                    assert!(
                        earlier.is_none(),
                        "seed {}: proposal {id} acknowledged twice",
                        self.seed
                    );
                }
            }
            for message in ready.messages {
                if self.rng.gen_bool(self.drop_rate) || !self.linked(message.from, message.to) {
                    continue;
                }
                let at = self.now + self.rng.gen_range(1..=self.max_delay);
                self.in_flight.push((at, message));
            }
        }
    }

    fn isolate(&mut self, ids: &[u64]) {
        let all: Vec<u64> = self.nodes.keys().copied().collect();
        for &a in ids {
            for &b in &all {
                if !ids.contains(&b) {
                    self.cut.insert((a, b));
                    self.cut.insert((b, a));
                }
            }
        }
    }

    /// The node stops at once: what it had not synced is gone, and its log is closed.
    fn crash(&mut self, id: u64) {
        let node = self.nodes.get_mut(&id).unwrap();
        node.peer = None;
        if node.unsynced.take().is_some() {
            self.lost_writes += 1;
        }
        node.log = None;
        self.in_flight.retain(|(_, m)| m.to != id);
    }

    /// The node starts again from what its log holds on disk.
    fn restart(&mut self, id: u64) {
        let node = self.nodes.get_mut(&id).unwrap();
        if node.peer.is_none() {
            node.log = Some(RaftLog::open(node.dir.path()).expect("reopen the raft log"));
            node.open_peer(id);
        }
    }

    fn heal(&mut self) {
        self.cut.clear();
        self.drop_rate = 0.0;
        let ids: Vec<u64> = self.nodes.keys().copied().collect();
        for id in ids {
            self.restart(id);
        }
    }

    /// A random fault, or a repair.
    fn fault(&mut self) {
        let ids: Vec<u64> = self.nodes.keys().copied().collect();
        match self.rng.gen_range(0..6) {
            0 => {
                let id = *ids.choose(&mut self.rng).unwrap();
                self.isolate(&[id]);
            }
            1 => {
                let id = *ids.choose(&mut self.rng).unwrap();
                self.crash(id);
            }
            2 => self.drop_rate = self.rng.gen_range(0.0..0.3),
            3 => self.max_delay = self.rng.gen_range(1..=8),
            _ => self.heal(),
        }
    }

    fn leader(&self) -> Option<u64> {
        self.nodes
            .iter()
            .find(|(_, n)| n.peer.as_ref().is_some_and(|p| p.is_leader()))
            .map(|(id, _)| *id)
    }

    fn applied(&self, id: u64) -> &[(u64, u64)] {
        &self.nodes[&id].peer.as_ref().unwrap().state_machine().0
    }

    /// Heals everything, lets the group settle, and checks the logs.
    fn settle_and_check(&mut self) {
        self.heal();
        for _ in 0..3_000 {
            self.step(0.0);
        }
        let seed = self.seed;
        let ids: Vec<u64> = self.nodes.keys().copied().collect();
        let first = self.applied(ids[0]).to_vec();
        for &id in &ids[1..] {
            assert_eq!(
                self.applied(id),
                &first[..],
                "seed {seed}: peers {} and {id} applied different logs",
                ids[0]
            );
        }
        let mut seen = HashSet::new();
        for (_, command) in &first {
            assert!(
                seen.insert(*command),
                "seed {seed}: command {command} applied twice"
            );
        }
        let at: BTreeMap<u64, u64> = first.iter().map(|(index, id)| (*id, *index)).collect();
        for (id, index) in &self.acknowledged {
            assert_eq!(
                at.get(id),
                Some(index),
                "seed {seed}: acknowledged proposal {id} is not at index {index}"
            );
        }
        assert!(
            self.leader().is_some(),
            "seed {seed}: no leader after healing"
        );
    }
}

fn seeds(name: &str, fixed: std::ops::Range<u64>) -> Vec<u64> {
    if let Ok(text) = std::env::var("STRATA_TEST_SEED") {
        return vec![text.trim().parse().expect("STRATA_TEST_SEED is a number")];
    }
    let random: u64 = rand::random();
    println!("{name}: fixed seeds {fixed:?} and random seed {random}");
    fixed.chain([random]).collect()
}

#[test]
fn peers_apply_one_log_through_partitions_drops_delays_and_restarts() {
    let mut lost_writes = 0;
    for seed in seeds("faults", 1..201) {
        for peers in [3, 5] {
            let mut sim = Sim::new(seed, peers);
            for round in 0..30 {
                if round % 2 == 1 {
                    sim.fault();
                }
                for _ in 0..100 {
                    sim.step(0.3);
                }
            }
            sim.settle_and_check();
            assert!(
                sim.acknowledged.len() >= 50,
                "seed {seed}: only {} proposals acknowledged in 3000 steps",
                sim.acknowledged.len()
            );
            lost_writes += sim.lost_writes;
        }
    }
    // The crashes met writes not yet synced, which were lost.
    assert!(lost_writes >= 5, "only {lost_writes} unsynced writes lost");
    println!("{lost_writes} unsynced log writes lost in crashes");
}

#[test]
fn a_leader_cut_off_with_a_minority_acknowledges_nothing() {
    for seed in seeds("minority", 100..108) {
        let mut sim = Sim::new(seed, 5);
        for _ in 0..300 {
            sim.step(0.2);
        }
        let old = sim
            .leader()
            .unwrap_or_else(|| panic!("seed {seed}: no leader"));
        let buddy = (1..=5).find(|&id| id != old).unwrap();
        sim.isolate(&[old, buddy]);
        let acknowledged_before = sim.acknowledged.len();
        // Proposals go to the old leader while it still believes it leads.
        let mut proposed_to_old = Vec::new();
        for _ in 0..400 {
            let node = sim.nodes.get_mut(&old).unwrap();
            if let (Some(peer), None) = (node.peer.as_mut(), &node.unsynced) {
                if peer.is_leader() {
                    let id = sim.next_proposal;
                    sim.next_proposal += 1;
                    if peer.propose(id, id.to_be_bytes().to_vec()).is_ok() {
                        proposed_to_old.push(id);
                    }
                }
            }
            sim.step(0.2);
        }
        for id in &proposed_to_old {
            assert!(
                !sim.acknowledged.contains_key(id),
                "seed {seed}: the minority side acknowledged proposal {id}"
            );
        }
        let majority_leader = sim
            .leader()
            .unwrap_or_else(|| panic!("seed {seed}: no leader"));
        assert!(
            majority_leader != old && majority_leader != buddy,
            "seed {seed}: the leader is on the minority side"
        );
        assert!(
            sim.acknowledged.len() > acknowledged_before,
            "seed {seed}: the majority acknowledged nothing"
        );
        sim.settle_and_check();
        let applied: HashSet<u64> = sim.applied(old).iter().map(|(_, id)| *id).collect();
        for id in &proposed_to_old {
            assert!(
                !applied.contains(id),
                "seed {seed}: a proposal made on the minority side was applied"
            );
        }
    }
}

#[test]
fn leadership_moves_on_request_and_the_log_stays_one() {
    for seed in seeds("transfer", 200..206) {
        let mut sim = Sim::new(seed, 3);
        for _ in 0..200 {
            sim.step(0.3);
        }
        for _ in 0..5 {
            let leader = sim
                .leader()
                .unwrap_or_else(|| panic!("seed {seed}: no leader"));
            let target = leader % 3 + 1;
            // A transfer is a request: a race with another peer's election can crown that one
            // instead, so the caller asks again, as the placement driver does.
            let mut attempts = 0;
            while sim.leader() != Some(target) {
                attempts += 1;
                assert!(
                    attempts <= 5,
                    "seed {seed}: leadership did not move from {leader} to {target}"
                );
                if let Some(current) = sim.leader() {
                    // Asked once the leader is out of its sync (it reads no request before).
                    while sim.nodes[&current].unsynced.is_some() {
                        sim.step(0.0);
                    }
                    let node = sim.nodes.get_mut(&current).unwrap();
                    node.peer.as_mut().unwrap().transfer_leader(target);
                }
                for _ in 0..100 {
                    sim.step(0.3);
                }
            }
        }
        sim.settle_and_check();
    }
}

#[test]
fn leadership_goes_only_to_a_peer_that_answers() {
    for seed in seeds("handover target", 300..304) {
        let mut sim = Sim::new(seed, 3);
        for _ in 0..200 {
            sim.step(0.3);
        }
        // Without proposals the followers catch up and answer every heartbeat.
        for _ in 0..60 {
            sim.step(0.0);
        }
        let leader = sim
            .leader()
            .unwrap_or_else(|| panic!("seed {seed}: no leader"));
        let (up, down) = (leader % 3 + 1, (leader + 1) % 3 + 1);
        let can_take = |sim: &Sim, peer: u64| {
            let node = &sim.nodes[&leader];
            node.peer.as_ref().unwrap().can_take_leadership(peer)
        };
        assert!(can_take(&sim, up) && can_take(&sim, down), "seed {seed}");
        // A crashed follower stops answering: after an election timeout it may not lead.
        sim.crash(down);
        for _ in 0..60 {
            sim.step(0.3);
        }
        for _ in 0..20 {
            sim.step(0.0);
        }
        assert_eq!(
            sim.leader(),
            Some(leader),
            "seed {seed}: the leader changed"
        );
        assert!(
            can_take(&sim, up) && !can_take(&sim, down),
            "seed {seed}: peer {down} is down, peer {up} is up"
        );
        // Back and caught up, it may again.
        sim.restart(down);
        for _ in 0..60 {
            sim.step(0.0);
        }
        assert!(can_take(&sim, down), "seed {seed}: peer {down} is back");
        sim.settle_and_check();
    }
}
