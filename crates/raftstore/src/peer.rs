//! One peer of one region's Raft group.

use std::collections::VecDeque;
use std::sync::Arc;

use protobuf::Message as _;
use raft::eraftpb::{ConfChange, ConfState, Entry, EntryType, HardState, Message, Snapshot};
use raft::storage::MemStorage;
use raft::{Config, GetEntriesContext, RaftState, RawNode, StateRole, StorageError};

/// Most log entries a peer may lag behind the leader and still be handed leadership.
pub const TRANSFER_LAG_MAX: u64 = 128;

/// Makes a snapshot of a peer's state machine: its data as applied up to some index, with
/// that index, its term and the group's voters at that index in the metadata.
pub trait SnapshotSource: Send + Sync {
    fn snapshot(&self) -> Result<Snapshot, String>;
}

/// The log a peer reads from: the in-memory copy of its durable log, and where snapshots come
/// from for a follower behind the log's first entry (without a source, such a follower waits:
/// then the log must be compacted only as far as every peer holds it).
#[derive(Clone)]
pub struct PeerStorage(MemStorage, Option<Arc<dyn SnapshotSource>>);

impl raft::Storage for PeerStorage {
    fn initial_state(&self) -> raft::Result<RaftState> {
        self.0.initial_state()
    }

    fn entries(
        &self,
        low: u64,
        high: u64,
        max_size: impl Into<Option<u64>>,
        context: GetEntriesContext,
    ) -> raft::Result<Vec<Entry>> {
        self.0.entries(low, high, max_size, context)
    }

    fn term(&self, idx: u64) -> raft::Result<u64> {
        self.0.term(idx)
    }

    fn first_index(&self) -> raft::Result<u64> {
        self.0.first_index()
    }

    fn last_index(&self) -> raft::Result<u64> {
        self.0.last_index()
    }

    fn snapshot(&self, _request_index: u64, _to: u64) -> raft::Result<Snapshot> {
        let unavailable = raft::Error::Store(StorageError::SnapshotTemporarilyUnavailable);
        let Some(source) = &self.1 else {
            return Err(unavailable);
        };
        source.snapshot().map_err(|_| unavailable)
    }
}

/// What a ready asks to make durable before [`Peer::finish_ready`]: entries to append to the
/// log and the new hard state.
#[derive(Debug, Default)]
pub struct LogWrite {
    /// A snapshot now stands for every entry up to (index, term); the log holds nothing
    /// before, and the group's voters are these.
    pub snapshot: Option<(u64, u64, ConfState)>,
    pub entries: Vec<Entry>,
    pub hard_state: Option<HardState>,
    /// Whether the hard state's term or vote changed, which must be on disk before the
    /// messages that follow from them leave. A hard state that moved only its commit index
    /// need not be synced: a restart takes the applied index as committed where it is
    /// ahead (the applied data are in the engine), and the leader tells the rest again.
    pub hard_state_must_sync: bool,
}

impl LogWrite {
    pub fn is_empty(&self) -> bool {
        self.snapshot.is_none() && self.entries.is_empty() && self.hard_state.is_none()
    }
}

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
    /// Returns false when the state machine refused the command (every peer refuses it alike,
    /// e.g. a write proposed against a region range that a split has since changed).
    fn apply(&mut self, index: u64, command: &[u8]) -> bool;

    /// Applies a membership change committed at `index`, which Raft has just taken on.
    fn apply_conf_change(&mut self, index: u64, change: &ConfChange);

    /// Replaces the whole state with a snapshot's (the peer was too far behind for the log).
    fn restore(&mut self, snapshot: &Snapshot);
}

/// What became of a proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProposalOutcome {
    /// Committed by a majority and applied here.
    Applied { id: u64, index: u64 },
    /// Its log entry was replaced by another leader's: it will never apply.
    Dropped { id: u64 },
    /// Committed, and refused by the state machine on every peer.
    Rejected { id: u64 },
}

/// Why a proposal was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProposeError {
    /// Only the leader takes proposals; `leader` is the peer this one believes leads (0: none).
    #[error("not leader; leader is peer {leader}")]
    NotLeader { leader: u64 },
    /// Raft refused the proposal (e.g. a leader transfer, or another membership change, is in
    /// progress).
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
    node: RawNode<PeerStorage>,
    state_machine: S,
    pending: VecDeque<Pending>,
    applied_index: u64,
    /// The term of the entry at `applied_index`.
    applied_term: u64,
    /// A ready taken by [`Peer::collect_ready`] whose log writes are not yet durable.
    unfinished: Option<raft::Ready>,
    /// Ticks since the peer opened.
    ticks: u64,
    /// Each other peer with the tick its last message came at.
    heard: Vec<(u64, u64)>,
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
        Peer::open_applied(id, storage, config, state_machine, 0)
    }

    /// Opens a peer over an existing log whose entries up to `applied` are already in
    /// `state_machine`; later committed entries are applied again.
    pub fn open_applied(
        id: u64,
        storage: MemStorage,
        config: PeerConfig,
        state_machine: S,
        applied: u64,
    ) -> Peer<S> {
        let applied_term = raft::Storage::term(&storage, applied).unwrap_or(0);
        let raft_config = Config {
            id,
            election_tick: config.election_tick,
            heartbeat_tick: config.heartbeat_tick,
            max_size_per_msg: config.max_size_per_msg,
            max_inflight_msgs: config.max_inflight_msgs,
            min_election_tick: config.min_election_tick,
            max_election_tick: config.max_election_tick,
            applied,
            // A leader that cannot hear a majority steps down, and a partitioned peer does not
            // disturb the group with term bumps when it comes back.
            check_quorum: true,
            pre_vote: true,
            ..Config::default()
        };
        let node = RawNode::new(&raft_config, PeerStorage(storage, None), &discard_logger())
            .expect("a valid Raft configuration");
        Peer {
            id,
            node,
            state_machine,
            pending: VecDeque::new(),
            applied_index: applied,
            applied_term,
            unfinished: None,
            ticks: 0,
            heard: Vec::new(),
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// The log storage, kept by the caller across a restart of the peer.
    pub fn storage(&self) -> MemStorage {
        self.node.store().0.clone()
    }

    /// Lets the peer send snapshots made by `source` to followers behind its log.
    pub fn set_snapshot_source(&mut self, source: Arc<dyn SnapshotSource>) {
        self.node.mut_store().1 = Some(source);
    }

    pub fn state_machine(&self) -> &S {
        &self.state_machine
    }

    pub fn state_machine_mut(&mut self) -> &mut S {
        &mut self.state_machine
    }

    /// Whether this peer leads and has applied an entry of its own term, so its state
    /// machine holds everything any earlier leader committed.
    pub fn is_ready_leader(&self) -> bool {
        self.is_leader() && self.applied_term == self.term()
    }

    /// The smallest log index every peer of the group has persisted, as this leader knows it
    /// (`None` on a follower, or while some peer's progress is unknown).
    pub fn min_matched_index(&self) -> Option<u64> {
        if !self.is_leader() {
            return None;
        }
        let mut min = u64::MAX;
        for (_, progress) in self.node.raft.prs().iter() {
            if progress.matched == 0 {
                return None;
            }
            min = min.min(progress.matched);
        }
        Some(min)
    }

    /// Drops the log entries before `index` from the in-memory log (they are applied and held
    /// by every peer).
    pub fn compact_log(&mut self, index: u64) {
        let index = index.min(self.applied_index);
        let store = self.node.mut_store();
        let first = raft::Storage::first_index(&store.0).unwrap_or(0);
        if index > first {
            store
                .0
                .wl()
                .compact(index)
                .expect("compacting applied entries");
        }
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

    /// The term of the entry at [`Peer::applied_index`].
    pub fn applied_term(&self) -> u64 {
        self.applied_term
    }

    /// Advances the peer's logical clock by one tick.
    pub fn tick(&mut self) {
        self.ticks += 1;
        self.node.tick();
    }

    /// Hands the peer a message from another peer. Messages for other groups or stale terms
    /// are ignored by Raft itself.
    pub fn step(&mut self, message: Message) {
        match self
            .heard
            .iter_mut()
            .find(|(peer, _)| *peer == message.from)
        {
            Some((_, at)) => *at = self.ticks,
            None => self.heard.push((message.from, self.ticks)),
        }
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

    /// Whether `peer` can take leadership from this leader now: a message of it came within
    /// the last election timeout and its log lags by at most [`TRANSFER_LAG_MAX`] entries
    /// (TiKV checks the same). A leader asked to hand over to a peer that cannot take it
    /// would stop taking proposals for an election timeout, for nothing.
    pub fn can_take_leadership(&self, peer: u64) -> bool {
        let raft = &self.node.raft;
        let heard = self
            .heard
            .iter()
            .find(|(p, _)| *p == peer)
            .map(|(_, at)| *at);
        let recent = heard.is_some_and(|at| self.ticks - at <= raft.election_timeout() as u64);
        recent
            && raft.prs().get(peer).is_some_and(|progress| {
                progress.matched + TRANSFER_LAG_MAX >= raft.raft_log.last_index()
            })
    }

    /// Whether this leader is handing leadership to another peer (it takes no proposals
    /// meanwhile).
    pub fn is_transferring(&self) -> bool {
        self.is_leader() && self.node.raft.lead_transferee.is_some()
    }

    /// Proposes a membership change (applied through [`StateMachine::apply_conf_change`] on
    /// every peer); Raft takes one at a time.
    pub fn propose_conf_change(&mut self, change: ConfChange) -> Result<(), ProposeError> {
        if !self.is_leader() {
            return Err(ProposeError::NotLeader {
                leader: self.leader_id(),
            });
        }
        self.node
            .propose_conf_change(Vec::new(), change)
            .map_err(|_| ProposeError::Dropped)
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
        self.collect_ready(&mut out);
        self.finish_ready(&mut out);
        out
    }

    /// The first half of handling a ready: takes the messages that may leave at once, applies
    /// newly committed entries, appends new entries to the in-memory log and returns what must
    /// be made durable before [`Peer::finish_ready`] (which the caller calls exactly once
    /// after writing it, so that many peers share one log sync).
    pub fn collect_ready(&mut self, out: &mut Ready) -> LogWrite {
        assert!(self.unfinished.is_none(), "a ready is still unfinished");
        let mut write = LogWrite::default();
        if !self.node.has_ready() {
            return write;
        }
        let mut ready = self.node.ready();
        // Messages a leader may send before persisting (appends to followers).
        out.messages.extend(ready.take_messages());
        if !ready.snapshot().is_empty() {
            let snapshot = ready.snapshot().clone();
            let meta = snapshot.get_metadata();
            write.snapshot = Some((meta.index, meta.term, meta.get_conf_state().clone()));
            self.applied_index = meta.index;
            self.applied_term = meta.term;
            self.state_machine.restore(&snapshot);
            self.node
                .mut_store()
                .0
                .wl()
                .apply_snapshot(snapshot)
                .expect("apply a snapshot to the log storage");
        }
        self.apply(ready.take_committed_entries(), out);
        if !ready.entries().is_empty() {
            write.entries = ready.entries().to_vec();
            self.node
                .mut_store()
                .0
                .wl()
                .append(ready.entries())
                .expect("append to the log storage");
        }
        if let Some(hard_state) = ready.hs() {
            write.hard_state = Some(hard_state.clone());
            // raft-rs asks a sync for new entries, a snapshot, or a new term or vote.
            write.hard_state_must_sync = ready.must_sync();
            self.node
                .mut_store()
                .0
                .wl()
                .set_hardstate(hard_state.clone());
        }
        self.unfinished = Some(ready);
        write
    }

    /// The second half of handling a ready, once its [`LogWrite`] is durable: the messages
    /// that needed it (votes, acknowledgements) and what the advance commits.
    pub fn finish_ready(&mut self, out: &mut Ready) {
        let Some(mut ready) = self.unfinished.take() else {
            return;
        };
        out.messages.extend(ready.take_persisted_messages());
        let mut light = self.node.advance(ready);
        if let Some(commit) = light.commit_index() {
            self.node.mut_store().0.wl().mut_hard_state().commit = commit;
        }
        out.messages.extend(light.take_messages());
        self.apply(light.take_committed_entries(), out);
        self.node.advance_apply();
    }

    /// Whether Raft has anything for [`Peer::collect_ready`].
    pub fn has_ready(&self) -> bool {
        self.node.has_ready()
    }

    fn apply_conf_change(&mut self, index: u64, data: &[u8]) {
        let change = ConfChange::parse_from_bytes(data).expect("a committed ConfChange decodes");
        // Raft refuses a change it cannot make (e.g. removing the last voter) the same way on
        // every peer; the state machine then learns nothing.
        if let Ok(conf_state) = self.node.apply_conf_change(&change) {
            self.node.mut_store().0.wl().set_conf_state(conf_state);
            self.state_machine.apply_conf_change(index, &change);
        }
    }

    fn apply(&mut self, entries: Vec<raft::eraftpb::Entry>, out: &mut Ready) {
        for entry in entries {
            if entry.index <= self.applied_index {
                continue;
            }
            self.applied_index = entry.index;
            self.applied_term = entry.term;
            // Empty entries are the no-ops a new leader appends.
            let accepted = match entry.get_entry_type() {
                EntryType::EntryNormal if !entry.data.is_empty() => {
                    self.state_machine.apply(entry.index, &entry.data)
                }
                EntryType::EntryConfChange if !entry.data.is_empty() => {
                    self.apply_conf_change(entry.index, &entry.data);
                    true
                }
                _ => true,
            };
            while let Some(front) = self.pending.front() {
                if front.index > entry.index {
                    break;
                }
                let pending = self.pending.pop_front().expect("front exists");
                out.outcomes.push(
                    if pending.index != entry.index || pending.term != entry.term {
                        ProposalOutcome::Dropped { id: pending.id }
                    } else if accepted {
                        ProposalOutcome::Applied {
                            id: pending.id,
                            index: entry.index,
                        }
                    } else {
                        ProposalOutcome::Rejected { id: pending.id }
                    },
                );
            }
        }
    }
}
