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
//! Commands ([`Command`]) are writes of the engine (a [`WriteBatch`]), no-ops that renew the
//! lease, log compactions proposed by the leader once every peer holds the entries, and
//! splits. A split applies on every peer at the same log index: the region keeps the keys
//! below the split key, and a new region with a peer on each of the same stores takes the
//! rest, starting from an empty log over the data already there. The new region's peer next
//! to the old leader campaigns at once; the others wait for its votes (messages for a region
//! a store does not hold yet are kept for a moment, [`ORPHAN_TTL`], since the split usually
//! applies there a moment after).

use std::collections::{HashMap, VecDeque};
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
use crate::region::{load_regions, region_key, Command, PeerMeta, RegionMeta};

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
/// How long messages for a region this store does not hold yet are kept.
pub const ORPHAN_TTL: Duration = Duration::from_secs(2);
/// Messages kept per region this store does not hold yet.
pub const ORPHAN_MESSAGES_MAX: usize = 16;
/// Regions this store keeps messages for before it holds them.
pub const ORPHAN_REGIONS_MAX: usize = 1024;

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
    /// Not applied and never will be: the region split (or otherwise changed) since the
    /// command was prepared.
    #[error("the region changed since the command was prepared")]
    EpochNotMatch,
}

impl ProposeFailure {
    /// Whether the command certainly did not apply.
    pub fn is_definite(&self) -> bool {
        matches!(
            self,
            ProposeFailure::NotLeader { .. }
                | ProposeFailure::RegionNotFound
                | ProposeFailure::Dropped
                | ProposeFailure::EpochNotMatch
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
    TransferLeader {
        region: u64,
        to_store: u64,
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
    /// Bytes and keys this peer wrote since the split checker last looked at the region.
    written: Written,
    /// Whether the split checker has looked at the region since this peer started leading.
    checked: bool,
}

/// The handle to a running store: proposes, delivers messages, answers who serves.
#[derive(Clone)]
pub struct Router {
    mailbox: Sender<Msg>,
    status: Arc<RwLock<HashMap<u64, Status>>>,
}

impl Router {
    /// Proposes `batch` to `region`, prepared against region version `version`, and waits
    /// until it applied here.
    pub fn propose_write(
        &self,
        region: u64,
        version: u64,
        batch: &WriteBatch,
    ) -> Result<(), ProposeFailure> {
        self.propose_and_wait(region, Command::encode_write(version, batch))
    }

    /// Splits `region` (at version `version`) at `key`: keys from `key` on move to region
    /// `new_id`, whose peers `new_peers` sit on the stores of the region's peers, in order.
    /// Returns once the split applied here.
    pub fn propose_split(
        &self,
        region: u64,
        version: u64,
        key: Vec<u8>,
        new_id: u64,
        new_peers: Vec<u64>,
    ) -> Result<(), ProposeFailure> {
        let command = Command::Split {
            version,
            key,
            new_id,
            new_peers,
        };
        self.propose_and_wait(region, command.encode())
    }

    /// Asks this node's leader of `region` to hand leadership to its peer on `to_store`.
    pub fn transfer_leader(&self, region: u64, to_store: u64) {
        let _ = self
            .mailbox
            .try_send(Msg::TransferLeader { region, to_store });
    }

    fn propose_and_wait(&self, region: u64, command: Vec<u8>) -> Result<(), ProposeFailure> {
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

    /// The region (id and version) holding every one of `keys`, among those this node holds;
    /// `None` when no region here holds the first key or the keys span regions.
    // Hot path: every write.
    pub fn region_holding<K: AsRef<[u8]>>(
        &self,
        mut keys: impl Iterator<Item = K>,
    ) -> Option<(u64, u64)> {
        let status = self.status.read();
        let first = keys.next()?;
        let meta = &status
            .values()
            .find(|s| s.meta.contains(first.as_ref()))?
            .meta;
        keys.all(|k| meta.contains(k.as_ref()))
            .then_some((meta.id, meta.version))
    }

    /// The regions this node leads that the split checker should look at: those it has not
    /// looked at since this node started leading them, and those that took at least
    /// `min_bytes` bytes or `min_keys` keys of writes since it last looked. Each is counted as
    /// looked at.
    pub fn split_candidates(&self, min_bytes: u64, min_keys: u64) -> Vec<RegionMeta> {
        let mut status = self.status.write();
        status
            .values_mut()
            .filter(|s| {
                s.leading
                    && (!s.checked || s.written.bytes >= min_bytes || s.written.keys >= min_keys)
            })
            .map(|s| {
                s.checked = true;
                s.written = Written::default();
                s.meta.clone()
            })
            .collect()
    }

    /// The regions whose peer here leads: (region, leader peer, term).
    pub fn leaders(&self) -> Vec<(RegionMeta, u64, u64)> {
        self.status
            .read()
            .values()
            .filter(|s| s.leading)
            .map(|s| (s.meta.clone(), s.leader_peer, s.term))
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
    /// The region as its applied commands left it.
    meta: RegionMeta,
    batch: WriteBatch,
    compact_to: Option<u64>,
    /// Regions split off since the poll loop last looked.
    splits: Vec<RegionMeta>,
    /// Writes applied since the poll loop last looked.
    written: Written,
}

/// An account of applied writes.
#[derive(Clone, Copy, Debug, Default)]
struct Written {
    bytes: u64,
    /// Keys put into the write column family: new versions.
    keys: u64,
}

impl Written {
    fn add(&mut self, other: Written) {
        self.bytes += other.bytes;
        self.keys += other.keys;
    }
}

impl Applier {
    fn new(meta: RegionMeta) -> Applier {
        Applier {
            meta,
            batch: WriteBatch::new(),
            compact_to: None,
            splits: Vec::new(),
            written: Written::default(),
        }
    }

    fn split(&mut self, version: u64, key: Vec<u8>, new_id: u64, new_peers: Vec<u64>) -> bool {
        let meta = &mut self.meta;
        let valid = version == meta.version
            && meta.contains(&key)
            && key > meta.start_key
            && new_peers.len() == meta.peers.len();
        if !valid {
            return false;
        }
        meta.version += 1;
        let right = RegionMeta {
            id: new_id,
            start_key: key.clone(),
            end_key: std::mem::replace(&mut meta.end_key, key),
            conf_ver: meta.conf_ver,
            version: meta.version,
            peers: meta
                .peers
                .iter()
                .zip(new_peers)
                .map(|(p, id)| PeerMeta {
                    id,
                    store_id: p.store_id,
                })
                .collect(),
        };
        self.batch.put(Cf::Raft, region_key(meta.id), meta.encode());
        self.batch
            .put(Cf::Raft, region_key(right.id), right.encode());
        self.splits.push(right);
        true
    }
}

impl StateMachine for Applier {
    fn apply(&mut self, _index: u64, command: &[u8]) -> bool {
        let command = Command::decode(command).unwrap_or_else(|e| {
            panic!(
                "region {}: a committed command is corrupt: {e}",
                self.meta.id
            )
        });
        match command {
            Command::Write { version, batch } => {
                if version != self.meta.version {
                    return false;
                }
                for op in batch.ops() {
                    match op {
                        strata_engine::BatchOp::Put { cf, key, value } => {
                            self.written.bytes += (key.len() + value.len()) as u64;
                            self.written.keys += u64::from(*cf == Cf::Write);
                        }
                        strata_engine::BatchOp::Delete { key, .. } => {
                            self.written.bytes += key.len() as u64;
                        }
                    }
                }
                self.batch.append(batch);
            }
            Command::Compact { index } => {
                self.compact_to = Some(self.compact_to.map_or(index, |i| i.max(index)));
            }
            Command::Split {
                version,
                key,
                new_id,
                new_peers,
            } => return self.split(version, key, new_id, new_peers),
            Command::Noop => {}
        }
        true
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
    /// Messages for regions this store does not hold yet, with when they came.
    orphans: HashMap<u64, VecDeque<(Instant, Message)>>,
}

impl RaftStore {
    /// Opens the peer of every region whose metadata the engine holds, and of each region of
    /// `regions` (the placement driver's view) that does not overlap one of those, and starts
    /// the poll loop.
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
            orphans: HashMap::new(),
        };
        let local = load_regions(&*poller.engine).map_err(crate::log::LogError::from_display)?;
        for meta in local {
            poller.open_region(meta)?;
        }
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
    /// voters are the region's peers. A region overlapping one held here is not opened: the
    /// one held here is older and has yet to apply the split that made `meta`.
    fn open_region(&mut self, meta: RegionMeta) -> Result<(), crate::log::LogError> {
        if self.peers.contains_key(&meta.id) || self.peers.values().any(|p| p.meta.overlaps(&meta))
        {
            return Ok(());
        }
        let Some(me) = meta.peers.iter().find(|p| p.store_id == self.store_id) else {
            return Ok(());
        };
        let mut batch = WriteBatch::new();
        batch.put(Cf::Raft, region_key(meta.id), meta.encode());
        self.engine
            .write(&batch, true)
            .map_err(crate::log::LogError::from_display)?;
        let applier = Applier::new(meta.clone());
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
                written: Written::default(),
                checked: false,
            },
        );
        let id = meta.id;
        self.peers.insert(
            id,
            RegionPeer {
                meta,
                peer,
                hooked: None,
            },
        );
        if let Some(orphans) = self.orphans.remove(&id) {
            let p = self.peers.get_mut(&id).expect("just inserted");
            for (_, message) in orphans {
                p.peer.step(message);
            }
        }
        Ok(())
    }

    /// Keeps a message for a region this store does not hold yet.
    fn keep_orphan(&mut self, region: u64, message: Message) {
        if self.orphans.len() >= ORPHAN_REGIONS_MAX && !self.orphans.contains_key(&region) {
            return;
        }
        let queue = self.orphans.entry(region).or_default();
        if queue.len() >= ORPHAN_MESSAGES_MAX {
            queue.pop_front();
        }
        queue.push_back((Instant::now(), message));
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
            Msg::Raft { region, message } => match self.peers.get_mut(&region) {
                Some(p) => p.peer.step(message),
                None => self.keep_orphan(region, message),
            },
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
                self.propose(region, Command::Noop.encode(), None);
            }
            Msg::TransferLeader { region, to_store } => {
                let Some(p) = self.peers.get_mut(&region) else {
                    return true;
                };
                let target = p.meta.peers.iter().find(|x| x.store_id == to_store);
                if let (true, Some(target)) = (p.peer.is_leader(), target) {
                    // Stop serving reads first: once the target campaigns it may lead before
                    // this peer's lease would have run out.
                    if let Some(s) = self.status.write().get_mut(&region) {
                        s.lease_until = None;
                    }
                    info!(region, to_store, "transferring region leadership");
                    p.peer.transfer_leader(target.id);
                }
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
        if Command::proposed_version(&command).is_some_and(|v| v != p.meta.version) {
            if let Some(reply) = reply {
                let _ = reply.send(Err(ProposeFailure::EpochNotMatch));
            }
            return;
        }
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
                if s.leading && s.serving_term == s.term && !p.peer.is_transferring() {
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
            self.propose(region, Command::Noop.encode(), None);
        }
        for (region, index) in compact {
            self.propose(region, Command::Compact { index }.encode(), None);
        }
        self.orphans.retain(|_, queue| {
            queue.retain(|(at, _)| now.duration_since(*at) < ORPHAN_TTL);
            !queue.is_empty()
        });
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
        let mut splits = Vec::new();
        let mut written = Vec::new();
        for (id, out) in touched.iter().zip(outs.iter_mut()) {
            let p = self.peers.get_mut(id).expect("touched peers exist");
            p.peer.finish_ready(out);
            let applier = p.peer.state_machine_mut();
            let batch = std::mem::take(&mut applier.batch);
            let compact_to = applier.compact_to.take();
            if !applier.splits.is_empty() {
                splits.push((
                    *id,
                    applier.meta.clone(),
                    std::mem::take(&mut applier.splits),
                ));
            }
            written.push(std::mem::take(&mut applier.written));
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
            // before the log drops entries: then what they applied must be on disk first; and
            // a split's, which the new regions' logs build on.
            let sync = !truncations.is_empty() || !splits.is_empty();
            if let Err(e) = self.engine.write(&apply, sync) {
                // The log holds the commands; a restart applies them again.
                return Err(crate::log::LogError::from_display(e));
            }
        }
        self.log.write(&mut truncations, false)?;
        for (id, meta, new_regions) in splits {
            self.finish_split(id, meta, new_regions)?;
        }

        let now = Instant::now();
        for ((id, out), written) in touched.iter().zip(outs.iter_mut()).zip(written) {
            let p = self.peers.get_mut(id).expect("touched peers exist");
            for message in out.messages.drain(..) {
                send(&*self.transport, &p.meta, message);
            }
            let mut lease = None;
            for outcome in out.outcomes.drain(..) {
                let (pid, result) = match outcome {
                    ProposalOutcome::Applied { id, .. } => (id, Ok(())),
                    ProposalOutcome::Dropped { id } => (id, Err(ProposeFailure::Dropped)),
                    ProposalOutcome::Rejected { id } => (id, Err(ProposeFailure::EpochNotMatch)),
                };
                let Some(pending) = self.pending.remove(&pid) else {
                    continue;
                };
                let leading = p.peer.is_leader() && !p.peer.is_transferring();
                if result.is_ok() && pending.term == p.peer.term() && leading {
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
            if s.term != term || !leading || p.peer.is_transferring() {
                s.lease_until = None;
            }
            if !leading {
                s.checked = false;
                s.written = Written::default();
            } else {
                s.written.add(written);
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

impl Poller {
    /// Takes the region's new range after a split applied, and opens the peers of the regions
    /// split off; the one next to the region's leader campaigns at once.
    fn finish_split(
        &mut self,
        id: u64,
        meta: RegionMeta,
        new_regions: Vec<RegionMeta>,
    ) -> Result<(), crate::log::LogError> {
        let p = self.peers.get_mut(&id).expect("split peers exist");
        let leading = p.peer.is_leader();
        p.meta = meta.clone();
        if let Some(s) = self.status.write().get_mut(&id) {
            s.meta = meta;
        }
        for new in new_regions {
            let new_id = new.id;
            info!(region = id, new_region = new_id, split_key = ?new.start_key, "region split");
            self.open_region(new)?;
            if leading {
                if let Some(p) = self.peers.get_mut(&new_id) {
                    p.peer.campaign();
                }
            }
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
