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
//!
//! Membership changes add or remove one voter at a time ([`Router::change_peer`]). A store
//! told by the placement driver that it holds a peer of a region it has no data for opens it
//! empty; the leader then sends it a snapshot (see `snapshot.rs`), since every region's log
//! starts after [`INIT_INDEX`](crate::log::INIT_INDEX). A peer removed from its region is
//! destroyed on its store when the store applies the change.
//!
//! The poll loop itself is in `poll.rs`.

use std::collections::HashMap;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, RecvTimeoutError, Sender, TrySendError};
use parking_lot::RwLock;
use raft::eraftpb::Message;
use strata_engine::{Engine, WriteBatch};
use tracing::warn;

use crate::apply::Written;
use crate::log::RaftLog;
use crate::poll::{purge_loop, Origin, Poller};
use crate::region::{load_regions, Command, PeerMeta, RegionMeta};
use crate::snapshot::KeySpace;

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
/// The largest region a snapshot carries (it travels as one Raft message).
pub const SNAPSHOT_MAX_BYTES: usize = 512 << 20;
/// Mailbox items one poll loop iteration handles before it processes readies.
pub const POLL_BATCH_MAX: usize = 4096;
/// Entries a leader keeps in its log beyond what every peer holds before it compacts.
pub const COMPACT_LOG_GAP: u64 = 4096;

/// What a store reads and writes: its Raft logs, its engine (and where user keys lie in it),
/// and the transport to other stores.
pub struct StoreIo {
    pub log: Arc<RaftLog>,
    pub engine: Arc<dyn Engine>,
    pub keys: Arc<dyn KeySpace>,
    pub transport: Arc<dyn Transport>,
}

/// How a store runs its regions.
#[derive(Clone, Copy, Debug)]
pub struct StoreConfig {
    /// Entries a region's log may hold before the leader compacts it past peers that have not
    /// caught up (they then catch up from a snapshot); at least 1024.
    pub raft_log_max_entries: u64,
}

impl Default for StoreConfig {
    fn default() -> StoreConfig {
        StoreConfig {
            raft_log_max_entries: 65_536,
        }
    }
}
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

/// A peer of this node that leads its region, with its log applied, and is about to serve.
#[derive(Clone, Debug)]
pub struct LeaderStart {
    pub region: RegionMeta,
    pub peer: u64,
    pub term: u64,
    /// This node has led the region's keys without a gap: the region was split off a region
    /// this node served as leader, and this is the new region's first term. What the node
    /// keeps in memory for those keys (pessimistic locks) is still current.
    pub continues_parent: bool,
}

/// What the node does before one of its peers starts serving as leader.
pub trait LeaderHook: Send + Sync + 'static {
    /// Called on the hook thread when one of this node's peers leads; the region serves once
    /// it returns true (false: asked again later).
    fn start_leading(&self, start: &LeaderStart) -> bool;

    /// Called on the poll loop when this node's peer of `region`, which leads in `term`, is
    /// about to hand leadership to another peer: a write to propose ahead of the transfer,
    /// which the next leader applies before it serves (the state this node keeps only in
    /// memory for the region's keys, such as pessimistic locks). None: nothing to hand over.
    fn handover(&self, _region: &RegionMeta, _term: u64) -> Option<WriteBatch> {
        None
    }
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
    /// The outcome is unknown: this peer stopped leading before the entry committed (the
    /// next leader may still commit it).
    #[error("the leader stepped down before the proposal committed")]
    SteppedDown,
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

pub(crate) type Reply = Sender<Result<(), ProposeFailure>>;

pub(crate) enum Msg {
    Raft {
        region: u64,
        message: Message,
    },
    ChangePeer {
        region: u64,
        change: PeerChange,
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
    /// The region removed this store's peer in a change this store missed (it was down).
    Stale {
        region: u64,
        conf_ver: u64,
    },
    Stop,
}

/// A membership change of a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerChange {
    Add(PeerMeta),
    Remove(PeerMeta),
}

/// What the service side sees of a region.
#[derive(Clone, Debug)]
pub(crate) struct Status {
    pub meta: RegionMeta,
    pub leader_peer: u64,
    pub term: u64,
    /// Leads with an entry of its term applied.
    pub leading: bool,
    /// The term the leader hook prepared this node for.
    pub serving_term: u64,
    pub lease_until: Option<Instant>,
    /// Bytes and keys this peer wrote since the split checker last looked at the region.
    pub written: Written,
    /// Whether the split checker has looked at the region since this peer started leading.
    pub checked: bool,
}

impl Status {
    pub fn new(meta: RegionMeta) -> Status {
        Status {
            meta,
            leader_peer: 0,
            term: 0,
            leading: false,
            serving_term: 0,
            lease_until: None,
            written: Written::default(),
            checked: false,
        }
    }
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

    /// Asks this node's leader of `region` to propose a membership change (one at a time; a
    /// change asked while another is in progress is dropped, to be asked again).
    pub fn change_peer(&self, region: u64, change: PeerChange) {
        let _ = self.mailbox.try_send(Msg::ChangePeer { region, change });
    }

    /// Drops this node's peer of `region` if its membership is older than `conf_ver`, which no
    /// longer includes this node (the placement driver's view after changes this node missed).
    pub fn drop_stale_peer(&self, region: u64, conf_ver: u64) {
        let _ = self.mailbox.try_send(Msg::Stale { region, conf_ver });
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

    /// Sets the gauges of regions held and led (`/metrics`).
    pub fn refresh_metrics(&self) {
        let status = self.status.read();
        let leaders = status.values().filter(|s| s.leading).count();
        crate::metrics::set_regions(status.len(), leaders);
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

impl RaftStore {
    /// Opens the peer of every region whose metadata the engine holds, and of each region of
    /// `regions` (the placement driver's view) that does not overlap one of those, and starts
    /// the poll loop.
    pub fn start(
        store_id: u64,
        io: StoreIo,
        hook: Arc<dyn LeaderHook>,
        regions: Vec<RegionMeta>,
        config: StoreConfig,
    ) -> Result<RaftStore, crate::log::LogError> {
        let (mailbox, inbox) = channel::bounded(MAILBOX_CAPACITY);
        let (hook_tx, hook_rx) = channel::unbounded::<LeaderStart>();
        let status = Arc::new(RwLock::new(HashMap::new()));
        let stopping = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let purge = {
            let (log, stopping) = (io.log.clone(), stopping.clone());
            std::thread::Builder::new()
                .name("raft-log-purge".into())
                .spawn(move || purge_loop(&log, &stopping))
                .map_err(crate::log::LogError::from_io)?
        };
        let local = load_regions(&*io.engine).map_err(crate::log::LogError::from_display)?;
        let mut poller = Poller::new(
            store_id,
            io,
            status.clone(),
            (hook_tx, hook.clone()),
            config,
        );
        for meta in local {
            poller.open_region(meta, Origin::Held)?;
        }
        for meta in regions {
            let origin = Origin::from_placement_driver(&meta);
            poller.open_region(meta, origin)?;
        }
        let poll = std::thread::Builder::new()
            .name("raftstore".into())
            .spawn(move || poller.run(inbox))
            .map_err(crate::log::LogError::from_io)?;
        let hook_mailbox = mailbox.clone();
        let hook = std::thread::Builder::new()
            .name("leader-hook".into())
            .spawn(move || {
                for start in hook_rx {
                    if hook.start_leading(&start) {
                        let (region, term) = (start.region.id, start.term);
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
