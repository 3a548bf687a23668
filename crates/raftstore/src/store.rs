//! The store: every region peer of one node, driven by one poll loop thread.
//!
//! ```text
//!   Router ──(mailbox)──▶ poll loop: step messages, propose commands, tick
//!                              │  collect ready of every region with news
//!                              ├─▶ send appends at once
//!                              ├─▶ RaftLog: one write + sync for all regions
//!                              ├─▶ finish readies ─▶ apply committed commands to the engine
//!                              └─▶ reply to proposers, send acknowledgements
//! ```
//!
//! A region serves requests on this node only while its peer leads, has applied an entry of
//! its own term, has been prepared by the [`LeaderHook`] (a fresh timestamp floor, stale
//! in-memory locks dropped) and holds a lease: a proposal applied at time `t` proves that a
//! majority heard from this leader after `t`, and none of them votes for another candidate
//! for an election timeout, so until `t + LEASE` no other peer can lead.
//!
//! Commands are opaque writes of the engine (a [`WriteBatch`]), no-ops that renew the lease,
//! and log compactions proposed by the leader once every peer holds the entries.

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender, TrySendError};
use parking_lot::RwLock;
use raft::eraftpb::Message;
use strata_engine::{Cf, Engine, WriteBatch};
use tracing::{error, info, warn};

use crate::log::{LogWriteBatch, RaftLog};
use crate::peer::{Peer, PeerConfig, ProposalOutcome, ProposeError, StateMachine};

/// The period of Raft's logical clock.
pub const TICK_INTERVAL: Duration = Duration::from_millis(100);
/// Ticks without a leader before a follower campaigns (1 s).
pub const ELECTION_TICKS: usize = 10;
/// Ticks between a leader's heartbeats.
pub const HEARTBEAT_TICKS: usize = 2;
/// How long after proposing an entry that a majority applied a leader may serve without
/// asking the others: below the election timeout, whose ticks may run a tick short.
pub const LEASE: Duration = Duration::from_millis(700);
/// How long a proposer waits for its command to apply before it reports an unknown outcome.
pub const PROPOSE_TIMEOUT: Duration = Duration::from_secs(8);
/// Messages and proposals queued for the poll loop; more are refused (Raft resends).
pub const MAILBOX_CAPACITY: usize = 65_536;
/// Mailbox items one poll loop iteration handles before it processes readies.
pub const POLL_BATCH_MAX: usize = 4096;
/// Entries a leader keeps in its log beyond what every peer holds before it compacts.
pub const COMPACT_LOG_GAP: u64 = 4096;
/// How often the log store drops files that hold only compacted entries.
pub const LOG_PURGE_INTERVAL: Duration = Duration::from_secs(10);

const CMD_NOOP: u8 = 0;
const CMD_WRITE: u8 = 1;
const CMD_COMPACT: u8 = 2;

/// One replica of a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerMeta {
    pub id: u64,
    pub store_id: u64,
}

/// A region as the store knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionMeta {
    pub id: u64,
    /// Inclusive.
    pub start_key: Vec<u8>,
    /// Exclusive; empty means the end of the key space.
    pub end_key: Vec<u8>,
    pub conf_ver: u64,
    pub version: u64,
    pub peers: Vec<PeerMeta>,
}

impl RegionMeta {
    pub fn contains(&self, key: &[u8]) -> bool {
        key >= self.start_key.as_slice() && (self.end_key.is_empty() || key < &self.end_key[..])
    }

    fn store_of(&self, peer: u64) -> Option<u64> {
        self.peers.iter().find(|p| p.id == peer).map(|p| p.store_id)
    }
}

/// Carries Raft messages to other nodes; best effort (Raft resends what is lost).
pub trait Transport: Send + Sync + 'static {
    fn send(&self, to_store: u64, region: u64, message: Message);
}

/// What the node does before one of its peers starts serving as leader.
pub trait LeaderHook: Send + Sync + 'static {
    /// Called on the hook thread when this node's peer `peer` of `region` leads in `term` with
    /// its log applied; the region serves once it returns true (false: asked again later).
    fn start_leading(&self, region: &RegionMeta, peer: u64, term: u64) -> bool;
}

/// Why this node does not serve a region now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotServing {
    /// Another peer leads (its store, when known), or this one is not ready yet.
    NotLeader {
        leader_store: Option<u64>,
    },
    RegionNotFound,
}

/// Why a proposal failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProposeFailure {
    /// Not applied and never will be: this peer does not lead.
    #[error("not leader")]
    NotLeader { leader_store: Option<u64> },
    #[error("region not found")]
    RegionNotFound,
    /// Not applied and never will be: another leader replaced the entry.
    #[error("proposal dropped by a leader change")]
    Dropped,
    /// The outcome is unknown: it may still apply.
    #[error("timed out waiting for the proposal to apply")]
    Timeout,
    /// The outcome is unknown: the store stopped.
    #[error("the store stopped")]
    Stopped,
}

impl ProposeFailure {
    /// Whether the command certainly did not apply.
    pub fn is_definite(&self) -> bool {
        matches!(
            self,
            ProposeFailure::NotLeader { .. }
                | ProposeFailure::RegionNotFound
                | ProposeFailure::Dropped
        )
    }
}

type Reply = Sender<Result<(), ProposeFailure>>;

enum Msg {
    Raft {
        region: u64,
        message: Message,
    },
    Propose {
        region: u64,
        command: Vec<u8>,
        reply: Reply,
    },
    Create {
        meta: RegionMeta,
    },
    Serving {
        region: u64,
        term: u64,
    },
    Stop,
}

/// What the service side sees of a region.
#[derive(Clone, Debug)]
struct Status {
    meta: RegionMeta,
    leader_peer: u64,
    term: u64,
    /// Leads with an entry of its term applied.
    leading: bool,
    /// The term the leader hook prepared this node for.
    serving_term: u64,
    lease_until: Option<Instant>,
}

/// The handle to a running store: proposes, delivers messages, answers who serves.
#[derive(Clone)]
pub struct Router {
    mailbox: Sender<Msg>,
    status: Arc<RwLock<HashMap<u64, Status>>>,
}

impl Router {
    /// Proposes `command` (bytes of a [`WriteBatch`]) to `region` and waits until it applied
    /// here.
    pub fn propose_write(&self, region: u64, batch: &WriteBatch) -> Result<(), ProposeFailure> {
        let mut command = Vec::with_capacity(1 + batch.len() * 32);
        command.push(CMD_WRITE);
        command.extend_from_slice(&batch.encode());
        let (reply, outcome) = channel::bounded(1);
        self.mailbox
            .send(Msg::Propose {
                region,
                command,
                reply,
            })
            .map_err(|_| ProposeFailure::Stopped)?;
        match outcome.recv_timeout(PROPOSE_TIMEOUT + TICK_INTERVAL * 2) {
            Ok(result) => result,
            Err(RecvTimeoutError::Timeout) => Err(ProposeFailure::Timeout),
            Err(RecvTimeoutError::Disconnected) => Err(ProposeFailure::Stopped),
        }
    }

    /// Hands a message from another node to the region's peer.
    pub fn step(&self, region: u64, message: Message) {
        if let Err(TrySendError::Full(_)) = self.mailbox.try_send(Msg::Raft { region, message }) {
            warn!(region, "raftstore mailbox full; dropping a Raft message");
        }
    }

    /// Starts a peer of a new region on this node (ignored when the peer exists).
    pub fn create_region(&self, meta: RegionMeta) {
        let _ = self.mailbox.send(Msg::Create { meta });
    }

    /// Runs `f` on the region's metadata if this node serves `region` now.
    // Hot path: every request.
    pub fn with_serving_region<T>(
        &self,
        region: u64,
        f: impl FnOnce(&RegionMeta) -> T,
    ) -> Result<T, NotServing> {
        let status = self.status.read();
        let Some(s) = status.get(&region) else {
            return Err(NotServing::RegionNotFound);
        };
        let serving = s.leading
            && s.serving_term == s.term
            && s.lease_until.is_some_and(|until| Instant::now() < until);
        if serving {
            return Ok(f(&s.meta));
        }
        let leader_store = if s.leading {
            None
        } else {
            s.meta.store_of(s.leader_peer)
        };
        Err(NotServing::NotLeader { leader_store })
    }

    /// The regions this node holds a peer of.
    pub fn regions(&self) -> Vec<RegionMeta> {
        self.status
            .read()
            .values()
            .map(|s| s.meta.clone())
            .collect()
    }

    /// The region holding `key`, among those this node holds.
    pub fn region_of(&self, key: &[u8]) -> Option<u64> {
        self.status
            .read()
            .values()
            .find(|s| s.meta.contains(key))
            .map(|s| s.meta.id)
    }

    /// The regions whose peer here leads: (region, leader peer, term).
    pub fn leaders(&self) -> Vec<(u64, u64, u64)> {
        self.status
            .read()
            .values()
            .filter(|s| s.leading)
            .map(|s| (s.meta.id, s.leader_peer, s.term))
            .collect()
    }
}

/// A started store: its poll loop and leader hook threads.
pub struct RaftStore {
    router: Router,
    poll: Option<JoinHandle<()>>,
    hook: Option<JoinHandle<()>>,
    purge: Option<JoinHandle<()>>,
    stopping: Arc<std::sync::atomic::AtomicBool>,
}

/// Applies one region's committed commands into a batch the poll loop writes.
struct Applier {
    region: u64,
    batch: WriteBatch,
    compact_to: Option<u64>,
}

impl StateMachine for Applier {
    fn apply(&mut self, _index: u64, command: &[u8]) {
        match command.split_first() {
            Some((&CMD_WRITE, bytes)) => match WriteBatch::decode(bytes) {
                Ok(batch) => self.batch.append(batch),
                Err(e) => panic!("region {}: a committed write is corrupt: {e}", self.region),
            },
            Some((&CMD_COMPACT, bytes)) if bytes.len() == 8 => {
                let index = u64::from_be_bytes(bytes.try_into().expect("8 bytes"));
                self.compact_to = Some(self.compact_to.map_or(index, |i| i.max(index)));
            }
            Some((&CMD_NOOP, _)) | None => {}
            Some((tag, _)) => panic!("region {}: unknown command {tag}", self.region),
        }
    }
}

/// The key of a region's applied index in [`Cf::Raft`].
fn applied_key(region: u64) -> Vec<u8> {
    let mut key = b"applied/".to_vec();
    key.extend_from_slice(&region.to_be_bytes());
    key
}

fn peer_config() -> PeerConfig {
    PeerConfig {
        election_tick: ELECTION_TICKS,
        heartbeat_tick: HEARTBEAT_TICKS,
        ..PeerConfig::default()
    }
}

struct RegionPeer {
    meta: RegionMeta,
    peer: Peer<Applier>,
    /// The term the leader hook was last asked about, and when.
    hooked: Option<(u64, Instant)>,
}

/// How long the leader hook has to prepare a region before it is asked again.
const HOOK_RETRY: Duration = Duration::from_secs(1);

impl RegionPeer {
    /// Asks the leader hook to prepare this peer's term unless it is prepared or being
    /// prepared.
    fn hook_if_needed(&mut self, serving_term: u64, hook: &Sender<(RegionMeta, u64, u64)>) {
        let term = self.peer.term();
        if !self.peer.is_ready_leader() || serving_term == term {
            return;
        }
        let asked = self
            .hooked
            .is_some_and(|(t, at)| t == term && at.elapsed() < HOOK_RETRY);
        if !asked {
            self.hooked = Some((term, Instant::now()));
            let _ = hook.send((self.meta.clone(), self.peer.id(), term));
        }
    }
}

struct Pending {
    term: u64,
    proposed_at: Instant,
    reply: Option<Reply>,
}

struct Poller {
    store_id: u64,
    log: Arc<RaftLog>,
    engine: Arc<dyn Engine>,
    transport: Arc<dyn Transport>,
    peers: HashMap<u64, RegionPeer>,
    status: Arc<RwLock<HashMap<u64, Status>>>,
    hook: Sender<(RegionMeta, u64, u64)>,
    next_id: u64,
    pending: HashMap<u64, Pending>,
}

impl RaftStore {
    /// Opens the peers of every region with a log in `log` and starts the poll loop.
    pub fn start(
        store_id: u64,
        log: Arc<RaftLog>,
        engine: Arc<dyn Engine>,
        transport: Arc<dyn Transport>,
        hook: Arc<dyn LeaderHook>,
        regions: Vec<RegionMeta>,
    ) -> Result<RaftStore, crate::log::LogError> {
        let (mailbox, inbox) = channel::bounded(MAILBOX_CAPACITY);
        let (hook_tx, hook_rx) = channel::unbounded::<(RegionMeta, u64, u64)>();
        let status = Arc::new(RwLock::new(HashMap::new()));
        let stopping = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let purge = {
            let (log, stopping) = (log.clone(), stopping.clone());
            std::thread::Builder::new()
                .name("raft-log-purge".into())
                .spawn(move || purge_loop(&log, &stopping))
                .map_err(crate::log::LogError::from_io)?
        };
        let mut poller = Poller {
            store_id,
            log,
            engine,
            transport,
            peers: HashMap::new(),
            status: status.clone(),
            hook: hook_tx,
            next_id: 1,
            pending: HashMap::new(),
        };
        for meta in regions {
            poller.open_region(meta)?;
        }
        let poll = std::thread::Builder::new()
            .name("raftstore".into())
            .spawn(move || poller.run(inbox))
            .map_err(crate::log::LogError::from_io)?;
        let hook_mailbox = mailbox.clone();
        let hook = std::thread::Builder::new()
            .name("leader-hook".into())
            .spawn(move || {
                for (meta, peer, term) in hook_rx {
                    if hook.start_leading(&meta, peer, term) {
                        let region = meta.id;
                        if hook_mailbox.send(Msg::Serving { region, term }).is_err() {
                            return;
                        }
                    }
                }
            })
            .map_err(crate::log::LogError::from_io)?;
        Ok(RaftStore {
            router: Router { mailbox, status },
            poll: Some(poll),
            hook: Some(hook),
            purge: Some(purge),
            stopping,
        })
    }

    pub fn router(&self) -> Router {
        self.router.clone()
    }

    /// Stops the poll loop; proposals still waiting learn that the store stopped.
    pub fn stop(mut self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(purge) = self.purge.take() {
            let _ = purge.join();
        }
        let _ = self.router.mailbox.send(Msg::Stop);
        if let Some(poll) = self.poll.take() {
            let _ = poll.join();
        }
        if let Some(hook) = self.hook.take() {
            let _ = hook.join();
        }
    }
}

impl Poller {
    /// Opens the peer of `meta`: from its log when there is one, else as a new region whose
    /// voters are the region's peers.
    fn open_region(&mut self, meta: RegionMeta) -> Result<(), crate::log::LogError> {
        if self.peers.contains_key(&meta.id) {
            return Ok(());
        }
        let Some(me) = meta.peers.iter().find(|p| p.store_id == self.store_id) else {
            return Ok(());
        };
        let applier = Applier {
            region: meta.id,
            batch: WriteBatch::new(),
            compact_to: None,
        };
        let peer = match self.log.load(meta.id)? {
            Some(storage) => {
                let applied = match self.engine.get(Cf::Raft, &applied_key(meta.id)) {
                    Ok(Some(bytes)) if bytes.len() == 8 => {
                        u64::from_be_bytes(bytes.try_into().expect("8 bytes"))
                    }
                    Ok(_) => 0,
                    Err(e) => return Err(crate::log::LogError::from_display(e)),
                };
                {
                    // The applied data may be newer than the last hard state written.
                    let mut core = storage.wl();
                    let commit = core.hard_state().commit;
                    if applied > commit {
                        core.mut_hard_state().commit = applied;
                    }
                }
                info!(region = meta.id, applied, "region peer opened from its log");
                Peer::open_applied(me.id, storage, peer_config(), applier, applied)
            }
            None => {
                let voters: Vec<u64> = meta.peers.iter().map(|p| p.id).collect();
                let mut batch = LogWriteBatch::new();
                batch.set_voters(meta.id, &voters)?;
                self.log.write(&mut batch, true)?;
                info!(region = meta.id, ?voters, "region peer created");
                Peer::bootstrap(me.id, &voters, peer_config(), applier)
            }
        };
        self.status.write().insert(
            meta.id,
            Status {
                meta: meta.clone(),
                leader_peer: 0,
                term: 0,
                leading: false,
                serving_term: 0,
                lease_until: None,
            },
        );
        self.peers.insert(
            meta.id,
            RegionPeer {
                meta,
                peer,
                hooked: None,
            },
        );
        Ok(())
    }

    fn run(mut self, inbox: Receiver<Msg>) {
        let mut next_tick = Instant::now() + TICK_INTERVAL;
        loop {
            let first = match inbox.recv_deadline(next_tick) {
                Ok(msg) => Some(msg),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            let mut stop = false;
            for msg in first
                .into_iter()
                .chain(inbox.try_iter().take(POLL_BATCH_MAX))
            {
                if !self.handle(msg) {
                    stop = true;
                }
            }
            if Instant::now() >= next_tick {
                next_tick += TICK_INTERVAL;
                if next_tick < Instant::now() {
                    next_tick = Instant::now() + TICK_INTERVAL;
                }
                self.tick();
            }

            if let Err(e) = self.process_readies() {
                error!(%e, "raftstore cannot persist its log; stopping");
                stop = true;
            }
            if stop {
                break;
            }
        }
        for (_, pending) in self.pending.drain() {
            if let Some(reply) = pending.reply {
                let _ = reply.send(Err(ProposeFailure::Stopped));
            }
        }
    }

    /// Handles one mailbox item; false asks the loop to stop.
    fn handle(&mut self, msg: Msg) -> bool {
        match msg {
            Msg::Raft { region, message } => {
                if let Some(p) = self.peers.get_mut(&region) {
                    p.peer.step(message);
                }
            }
            Msg::Propose {
                region,
                command,
                reply,
            } => self.propose(region, command, Some(reply)),
            Msg::Create { meta } => {
                if let Err(e) = self.open_region(meta) {
                    error!(%e, "cannot create a region peer");
                }
            }
            Msg::Serving { region, term } => {
                if let Some(s) = self.status.write().get_mut(&region) {
                    if s.term == term {
                        s.serving_term = term;
                    }
                }
                // Take a lease at once rather than at the next tick.
                self.propose(region, vec![CMD_NOOP], None);
            }
            Msg::Stop => return false,
        }
        true
    }

    fn propose(&mut self, region: u64, command: Vec<u8>, reply: Option<Reply>) {
        let Some(p) = self.peers.get_mut(&region) else {
            if let Some(reply) = reply {
                let _ = reply.send(Err(ProposeFailure::RegionNotFound));
            }
            return;
        };
        let id = self.next_id;
        self.next_id += 1;
        match p.peer.propose(id, command) {
            Ok(()) => {
                self.pending.insert(
                    id,
                    Pending {
                        term: p.peer.term(),
                        proposed_at: Instant::now(),
                        reply,
                    },
                );
            }
            Err(e) => {
                let failure = match e {
                    ProposeError::NotLeader { leader } => ProposeFailure::NotLeader {
                        leader_store: p.meta.store_of(leader),
                    },
                    ProposeError::Dropped => ProposeFailure::Dropped,
                };
                if let Some(reply) = reply {
                    let _ = reply.send(Err(failure));
                }
            }
        }
    }

    fn tick(&mut self) {
        let now = Instant::now();
        let mut renew = Vec::new();
        let mut compact = Vec::new();
        {
            let status = self.status.read();
            for (id, p) in &mut self.peers {
                p.peer.tick();
                let Some(s) = status.get(id) else { continue };
                if s.leading && s.serving_term == s.term {
                    let expiring = s.lease_until.is_none_or(|until| until < now + LEASE / 2);
                    if expiring {
                        renew.push(*id);
                    }
                }
                if let Some(matched) = p.peer.min_matched_index() {
                    let first = raft::Storage::first_index(&p.peer.storage()).unwrap_or(1);
                    if matched > first + COMPACT_LOG_GAP {
                        compact.push((*id, matched));
                    }
                }
            }
        }
        for region in renew {
            self.propose(region, vec![CMD_NOOP], None);
        }
        for (region, index) in compact {
            let mut command = vec![CMD_COMPACT];
            command.extend_from_slice(&index.to_be_bytes());
            self.propose(region, command, None);
        }
        // Proposals whose outcome takes too long are reported unknown; a later outcome is
        // dropped with the entry.
        let expired: Vec<u64> = self
            .pending
            .iter()
            .filter(|(_, p)| p.reply.is_some() && now > p.proposed_at + PROPOSE_TIMEOUT)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            if let Some(reply) = self.pending.get_mut(&id).and_then(|p| p.reply.take()) {
                let _ = reply.send(Err(ProposeFailure::Timeout));
            }
        }
        // Ask the hook again for leaders it has not prepared.
        let status = self.status.read();
        for (id, p) in &mut self.peers {
            let serving_term = status.get(id).map_or(0, |s| s.serving_term);
            p.hook_if_needed(serving_term, &self.hook);
        }
    }

    /// Persists, sends and applies what every region has ready, with one log sync.
    fn process_readies(&mut self) -> Result<(), crate::log::LogError> {
        let mut log_batch = LogWriteBatch::new();
        let mut touched = Vec::new();
        let mut outs = Vec::new();
        for (id, p) in &mut self.peers {
            if !p.peer.has_ready() {
                continue;
            }
            let mut out = crate::peer::Ready::default();
            let write = p.peer.collect_ready(&mut out);
            log_batch.add(*id, &write)?;
            for message in out.messages.drain(..) {
                send(&*self.transport, &p.meta, message);
            }
            touched.push(*id);
            outs.push(out);
        }
        if touched.is_empty() {
            return Ok(());
        }
        self.log.write(&mut log_batch, true)?;

        let mut apply = WriteBatch::new();
        let mut truncations = LogWriteBatch::new();
        for (id, out) in touched.iter().zip(outs.iter_mut()) {
            let p = self.peers.get_mut(id).expect("touched peers exist");
            p.peer.finish_ready(out);
            let applier = p.peer.state_machine_mut();
            let batch = std::mem::take(&mut applier.batch);
            let compact_to = applier.compact_to.take();
            if !batch.is_empty() || !out.outcomes.is_empty() || compact_to.is_some() {
                apply.append(batch);
                apply.put(
                    Cf::Raft,
                    applied_key(*id),
                    p.peer.applied_index().to_be_bytes().to_vec(),
                );
            }
            if let Some(index) = compact_to {
                let storage = p.peer.storage();
                let first = raft::Storage::first_index(&storage).unwrap_or(1);
                if index > first {
                    if let Ok(prev_term) = raft::Storage::term(&storage, index - 1) {
                        truncations.truncate(*id, index, prev_term)?;
                        p.peer.compact_log(index);
                    }
                }
            }
        }
        if !apply.is_empty() {
            // Applied data need not be synced: the synced log replays it after a crash. Except
            // before the log drops entries: then what they applied must be on disk first.
            if let Err(e) = self.engine.write(&apply, !truncations.is_empty()) {
                // The log holds the commands; a restart applies them again.
                return Err(crate::log::LogError::from_display(e));
            }
        }
        self.log.write(&mut truncations, false)?;

        let now = Instant::now();
        for (id, out) in touched.iter().zip(outs.iter_mut()) {
            let p = self.peers.get_mut(id).expect("touched peers exist");
            for message in out.messages.drain(..) {
                send(&*self.transport, &p.meta, message);
            }
            let mut lease = None;
            for outcome in out.outcomes.drain(..) {
                let (pid, result) = match outcome {
                    ProposalOutcome::Applied { id, .. } => (id, Ok(())),
                    ProposalOutcome::Dropped { id } => (id, Err(ProposeFailure::Dropped)),
                };
                let Some(pending) = self.pending.remove(&pid) else {
                    continue;
                };
                if result.is_ok() && pending.term == p.peer.term() && p.peer.is_leader() {
                    let until = pending.proposed_at + LEASE;
                    lease = Some(lease.map_or(until, |l: Instant| l.max(until)));
                }
                if let Some(reply) = pending.reply {
                    let _ = reply.send(result);
                }
            }
            let mut status = self.status.write();
            let s = status.get_mut(id).expect("every peer has a status");
            let (term, leader_peer, leading) =
                (p.peer.term(), p.peer.leader_id(), p.peer.is_ready_leader());
            if s.term != term || !leading {
                s.lease_until = None;
            }
            s.term = term;
            s.leader_peer = leader_peer;
            s.leading = leading;
            if let Some(until) = lease {
                if until > now {
                    s.lease_until = Some(s.lease_until.map_or(until, |l| l.max(until)));
                }
            }
            let serving_term = s.serving_term;
            drop(status);
            p.hook_if_needed(serving_term, &self.hook);
        }
        Ok(())
    }
}

/// Drops log files of compacted entries every [`LOG_PURGE_INTERVAL`], off the poll loop.
fn purge_loop(log: &RaftLog, stopping: &std::sync::atomic::AtomicBool) {
    let step = Duration::from_millis(100);
    let mut waited = Duration::ZERO;
    while !stopping.load(std::sync::atomic::Ordering::SeqCst) {
        std::thread::sleep(step);
        waited += step;
        if waited >= LOG_PURGE_INTERVAL {
            waited = Duration::ZERO;
            if let Err(e) = log.purge() {
                warn!(%e, "purging the Raft log failed");
            }
        }
    }
}

fn send(transport: &dyn Transport, meta: &RegionMeta, message: Message) {
    match meta.store_of(message.to) {
        Some(store) => transport.send(store, meta.id, message),
        None => warn!(
            region = meta.id,
            to = message.to,
            "a Raft message to an unknown peer"
        ),
    }
}
