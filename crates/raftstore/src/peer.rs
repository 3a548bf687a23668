//! One peer of one region's Raft group.

use std::collections::VecDeque;

use raft::eraftpb::{ConfState, EntryType, Message};
use raft::storage::MemStorage;
use raft::{Config, RawNode, StateRole};

/// Timing and flow control of a peer, in ticks and entries.
#[derive(Clone, Copy, Debug)]
pub struct PeerConfig {
    /// Ticks without a leader's heartbeat before a follower campaigns.
    pub election_tick: usize,
    /// Ticks between a leader's heartbeats.
    pub heartbeat_tick: usize,
    /// Bytes of entries in one append message.
    pub max_size_per_msg: u64,
    /// Append messages in flight to one follower.
    pub max_inflight_msgs: usize,
    /// The range `[min, max)` from which an election timeout is drawn; zero takes Raft's
    /// default (`[election_tick, 2 * election_tick)`). Raft draws from its own generator, so
    /// a simulation that must replay from a seed gives each peer a range of one value.
    pub min_election_tick: usize,
    pub max_election_tick: usize,
}

impl Default for PeerConfig {
    fn default() -> PeerConfig {
        PeerConfig {
            election_tick: 10,
            heartbeat_tick: 3,
            max_size_per_msg: 1 << 20,
            max_inflight_msgs: 256,
            min_election_tick: 0,
            max_election_tick: 0,
        }
    }
}

/// What applies a region's committed commands.
pub trait StateMachine {
    /// Applies the command committed at `index`. Called once per index, in index order, on
    /// every peer (again from the start of the log after a restart of an in-memory peer).
    fn apply(&mut self, index: u64, command: &[u8]);
}

/// What became of a proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProposalOutcome {
    /// Committed by a majority and applied here.
    Applied { id: u64, index: u64 },
    /// Its log entry was replaced by another leader's: it will never apply.
    Dropped { id: u64 },
}

/// Why a proposal was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProposeError {
    /// Only the leader takes proposals; `leader` is the peer this one believes leads (0: none).
    #[error("not leader; leader is peer {leader}")]
    NotLeader { leader: u64 },
    /// Raft refused the proposal (e.g. a leader transfer is in progress).
    #[error("proposal dropped")]
    Dropped,
}

/// What one [`Peer::handle_ready`] produced.
#[derive(Debug, Default)]
pub struct Ready {
    /// Messages to send to other peers.
    pub messages: Vec<Message>,
    /// Outcomes of this peer's proposals.
    pub outcomes: Vec<ProposalOutcome>,
}

struct Pending {
    id: u64,
    index: u64,
    term: u64,
}

/// A peer: a raft-rs node, its (in-memory) log storage and its state machine.
pub struct Peer<S: StateMachine> {
    id: u64,
    node: RawNode<MemStorage>,
    state_machine: S,
    pending: VecDeque<Pending>,
    applied_index: u64,
}

fn discard_logger() -> slog::Logger {
    slog::Logger::root(slog::Discard, slog::o!())
}

impl<S: StateMachine> Peer<S> {
    /// Creates a peer of a new group whose voters are `voters`.
    pub fn bootstrap(id: u64, voters: &[u64], config: PeerConfig, state_machine: S) -> Peer<S> {
        let storage = MemStorage::new_with_conf_state(ConfState::from((voters.to_vec(), vec![])));
        Peer::open(id, storage, config, state_machine)
    }

    /// Opens a peer over an existing log: a restart, which applies the committed log again
    /// into `state_machine`.
    pub fn open(id: u64, storage: MemStorage, config: PeerConfig, state_machine: S) -> Peer<S> {
        let raft_config = Config {
            id,
            election_tick: config.election_tick,
            heartbeat_tick: config.heartbeat_tick,
            max_size_per_msg: config.max_size_per_msg,
            max_inflight_msgs: config.max_inflight_msgs,
            min_election_tick: config.min_election_tick,
            max_election_tick: config.max_election_tick,
            applied: 0,
            // A leader that cannot hear a majority steps down, and a partitioned peer does not
            // disturb the group with term bumps when it comes back.
            check_quorum: true,
            pre_vote: true,
            ..Config::default()
        };
        let node = RawNode::new(&raft_config, storage, &discard_logger())
            .expect("a valid Raft configuration");
        Peer {
            id,
            node,
            state_machine,
            pending: VecDeque::new(),
            applied_index: 0,
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// The log storage, kept by the caller across a restart of the peer.
    pub fn storage(&self) -> MemStorage {
        self.node.store().clone()
    }

    pub fn state_machine(&self) -> &S {
        &self.state_machine
    }

    pub fn is_leader(&self) -> bool {
        self.node.raft.state == StateRole::Leader
    }

    /// The peer this one believes leads the group (0: none known).
    pub fn leader_id(&self) -> u64 {
        self.node.raft.leader_id
    }

    pub fn term(&self) -> u64 {
        self.node.raft.term
    }

    pub fn applied_index(&self) -> u64 {
        self.applied_index
    }

    /// Advances the peer's logical clock by one tick.
    pub fn tick(&mut self) {
        self.node.tick();
    }

    /// Hands the peer a message from another peer. Messages for other groups or stale terms
    /// are ignored by Raft itself.
    pub fn step(&mut self, message: Message) {
        // An error here means a message the peer must ignore (e.g. from an unknown peer).
        let _ = self.node.step(message);
    }

    /// Asks the peer to lead now (tests and leader transfer use it).
    pub fn campaign(&mut self) {
        let _ = self.node.campaign();
    }

    /// Moves leadership to `peer`.
    pub fn transfer_leader(&mut self, peer: u64) {
        self.node.transfer_leader(peer);
    }

    /// Proposes `command`; its outcome comes back from a later [`Peer::handle_ready`] under
    /// `id`.
    pub fn propose(&mut self, id: u64, command: Vec<u8>) -> Result<(), ProposeError> {
        if !self.is_leader() {
            return Err(ProposeError::NotLeader {
                leader: self.leader_id(),
            });
        }
        let before = self.node.raft.raft_log.last_index();
        if self.node.propose(Vec::new(), command).is_err() {
            return Err(ProposeError::Dropped);
        }
        let index = self.node.raft.raft_log.last_index();
        if index == before {
            return Err(ProposeError::Dropped);
        }
        self.pending.push_back(Pending {
            id,
            index,
            term: self.node.raft.term,
        });
        Ok(())
    }

    /// Persists, sends and applies what Raft has ready. Entries and the hard state are written
    /// to the log storage before the messages that depend on them are returned.
    pub fn handle_ready(&mut self) -> Ready {
        let mut out = Ready::default();
        if !self.node.has_ready() {
            return out;
        }
        let mut ready = self.node.ready();
        // Messages a leader may send before persisting (appends to followers).
        out.messages.extend(ready.take_messages());
        if !ready.snapshot().is_empty() {
            self.node
                .mut_store()
                .wl()
                .apply_snapshot(ready.snapshot().clone())
                .expect("apply a snapshot to the log storage");
        }
        self.apply(ready.take_committed_entries(), &mut out);
        if !ready.entries().is_empty() {
            self.node
                .mut_store()
                .wl()
                .append(ready.entries())
                .expect("append to the log storage");
        }
        if let Some(hard_state) = ready.hs() {
            self.node.mut_store().wl().set_hardstate(hard_state.clone());
        }
        // Messages that may only leave once the entries above are persisted (votes, acks).
        out.messages.extend(ready.take_persisted_messages());
        let mut light = self.node.advance(ready);
        if let Some(commit) = light.commit_index() {
            self.node.mut_store().wl().mut_hard_state().commit = commit;
        }
        out.messages.extend(light.take_messages());
        self.apply(light.take_committed_entries(), &mut out);
        self.node.advance_apply();
        out
    }

    fn apply(&mut self, entries: Vec<raft::eraftpb::Entry>, out: &mut Ready) {
        for entry in entries {
            if entry.index <= self.applied_index {
                continue;
            }
            self.applied_index = entry.index;
            // Empty entries are the no-ops a new leader appends; configuration changes are
            // not proposed yet.
            if entry.get_entry_type() == EntryType::EntryNormal && !entry.data.is_empty() {
                self.state_machine.apply(entry.index, &entry.data);
            }
            while let Some(front) = self.pending.front() {
                if front.index > entry.index {
                    break;
                }
                let pending = self.pending.pop_front().expect("front exists");
                out.outcomes.push(
                    if pending.index == entry.index && pending.term == entry.term {
                        ProposalOutcome::Applied {
                            id: pending.id,
                            index: entry.index,
                        }
                    } else {
                        ProposalOutcome::Dropped { id: pending.id }
                    },
                );
            }
        }
    }
}
