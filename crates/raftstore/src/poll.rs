//! The poll loop: one thread that drives every region peer of the store (see `store.rs`).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam::channel::{Receiver, RecvTimeoutError, Sender};
use parking_lot::RwLock;
use raft::eraftpb::{ConfChange, ConfChangeType, Message, Snapshot};
use raft::storage::MemStorage;
use strata_engine::{Cf, Engine, WriteBatch};
use tracing::{debug, error, info, warn};

use crate::apply::{applied_key, applied_value, change_context, read_applied, Applier, Written};
use crate::log::{LogWriteBatch, RaftLog, INIT_INDEX, INIT_TERM};
use crate::peer::{Peer, PeerConfig, ProposalOutcome, ProposeError};
use crate::region::{region_key, Command, RegionMeta};
use crate::snapshot::{restore_batch, KeySpace, RegionSnapshots};
use crate::store::{
    LeaderHook, LeaderStart, Msg, PeerChange, ProposeFailure, Reply, Status, StoreConfig, StoreIo,
    Transport, COMPACT_LOG_GAP, ELECTION_TICKS, HEARTBEAT_TICKS, LEASE, LOG_PURGE_INTERVAL,
    ORPHAN_MESSAGES_MAX, ORPHAN_REGIONS_MAX, ORPHAN_TTL, POLL_BATCH_MAX, PROPOSE_TIMEOUT,
    TICK_INTERVAL,
};

fn peer_config() -> PeerConfig {
    PeerConfig {
        election_tick: ELECTION_TICKS,
        heartbeat_tick: HEARTBEAT_TICKS,
        ..PeerConfig::default()
    }
}

/// How a region comes to be opened on this store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Its metadata is in this store's engine.
    Held,
    /// It is new, with the same initial state on every peer: the cluster's first region, or
    /// one split off a region here.
    New,
    /// The placement driver says this store holds a peer of it, but it has no data here: the
    /// peer waits for a snapshot from the leader.
    Added,
}

impl Origin {
    /// How to open a region the placement driver lists for this store: its first version is
    /// the cluster's first region (bootstrapped alike everywhere); any other was made by a
    /// split or a membership change, and this store has yet to receive its data.
    pub fn from_placement_driver(meta: &RegionMeta) -> Origin {
        if meta.version == 1 && meta.conf_ver == 1 {
            Origin::New
        } else {
            Origin::Added
        }
    }
}

struct RegionPeer {
    meta: RegionMeta,
    peer: Peer<Applier>,
    /// The term the leader hook was last asked about, and when.
    hooked: Option<(u64, Instant)>,
    /// Split off a region this store served as leader (see [`LeaderStart::continues_parent`]).
    split_from_serving_leader: bool,
}

/// How long the leader hook has to prepare a region before it is asked again.
const HOOK_RETRY: Duration = Duration::from_secs(1);

impl RegionPeer {
    /// Asks the leader hook to prepare this peer's term unless it is prepared or being
    /// prepared.
    fn hook_if_needed(&mut self, serving_term: u64, hook: &Sender<LeaderStart>) {
        let term = self.peer.term();
        if !self.peer.is_ready_leader() || serving_term == term {
            return;
        }
        let asked = self
            .hooked
            .is_some_and(|(t, at)| t == term && at.elapsed() < HOOK_RETRY);
        if !asked {
            self.hooked = Some((term, Instant::now()));
            // A region split off starts at INIT_TERM with no leader: the campaign of the peer
            // next to the old leader makes the first term.
            let _ = hook.send(LeaderStart {
                region: self.meta.clone(),
                peer: self.peer.id(),
                term,
                continues_parent: self.split_from_serving_leader && term == INIT_TERM + 1,
            });
        }
    }
}

struct Pending {
    region: u64,
    term: u64,
    proposed_at: Instant,
    reply: Option<Reply>,
}

pub(crate) struct Poller {
    store_id: u64,
    log: Arc<RaftLog>,
    engine: Arc<dyn Engine>,
    keys: Arc<dyn KeySpace>,
    transport: Arc<dyn Transport>,
    peers: HashMap<u64, RegionPeer>,
    status: Arc<RwLock<HashMap<u64, Status>>>,
    hook: Sender<LeaderStart>,
    /// Asked what to hand to the next leader before a transfer.
    handover: Arc<dyn LeaderHook>,
    next_id: u64,
    pending: HashMap<u64, Pending>,
    /// Messages for regions this store does not hold yet, with when they came.
    orphans: HashMap<u64, VecDeque<(Instant, Message)>>,
    /// Entries a region's log may hold before it is compacted past peers that lag behind.
    log_max_entries: u64,
}

/// The least [`StoreConfig::raft_log_max_entries`] a store takes.
const LOG_MAX_ENTRIES_MIN: u64 = 1024;

fn log_error(e: impl std::fmt::Display) -> crate::log::LogError {
    crate::log::LogError::from_display(e)
}

impl Poller {
    pub fn new(
        store_id: u64,
        io: StoreIo,
        status: Arc<RwLock<HashMap<u64, Status>>>,
        (hook, handover): (Sender<LeaderStart>, Arc<dyn LeaderHook>),
        config: StoreConfig,
    ) -> Poller {
        Poller {
            store_id,
            log: io.log,
            engine: io.engine,
            keys: io.keys,
            transport: io.transport,
            peers: HashMap::new(),
            status,
            hook,
            handover,
            next_id: 1,
            pending: HashMap::new(),
            orphans: HashMap::new(),
            log_max_entries: config.raft_log_max_entries.max(LOG_MAX_ENTRIES_MIN),
        }
    }

    /// Opens this store's peer of `meta` (see [`Origin`]). A region overlapping one held here
    /// is not opened: the one held here is older and has yet to apply the split that made
    /// `meta`.
    pub fn open_region(
        &mut self,
        meta: RegionMeta,
        origin: Origin,
    ) -> Result<(), crate::log::LogError> {
        if self.peers.contains_key(&meta.id) || self.peers.values().any(|p| p.meta.overlaps(&meta))
        {
            return Ok(());
        }
        let Some(me) = meta
            .peers
            .iter()
            .find(|p| p.store_id == self.store_id)
            .copied()
        else {
            return Ok(());
        };
        let mut storage = self.log.load(meta.id)?;
        if storage.is_none() && origin == Origin::New {
            let voters: Vec<u64> = meta.peers.iter().map(|p| p.id).collect();
            let mut batch = LogWriteBatch::new();
            batch.bootstrap(meta.id, &voters)?;
            self.log.write(&mut batch, true)?;
            let mut data = WriteBatch::new();
            data.put(
                Cf::Raft,
                applied_key(meta.id),
                applied_value(INIT_INDEX, INIT_TERM),
            );
            self.engine.write(&data, true).map_err(log_error)?;
            storage = self.log.load(meta.id)?;
            info!(region = meta.id, ?voters, "region peer created");
        }
        let mut data = WriteBatch::new();
        data.put(Cf::Raft, region_key(meta.id), meta.encode());
        self.engine.write(&data, true).map_err(log_error)?;

        let applier = Applier::new(meta.clone());
        let mut peer = match storage {
            Some(storage) => {
                let applied = self.prepare_log(&meta, &storage)?;
                info!(region = meta.id, applied, "region peer opened from its log");
                Peer::open_applied(me.id, storage, peer_config(), applier, applied)
            }
            None => {
                info!(
                    region = meta.id,
                    "region peer opened empty; waiting for a snapshot"
                );
                Peer::open(me.id, MemStorage::new(), peer_config(), applier)
            }
        };
        peer.set_snapshot_source(Arc::new(RegionSnapshots {
            engine: self.engine.clone(),
            keys: self.keys.clone(),
            region: meta.id,
        }));
        let id = meta.id;
        self.status.write().insert(id, Status::new(meta.clone()));
        self.peers.insert(
            id,
            RegionPeer {
                meta,
                peer,
                hooked: None,
                split_from_serving_leader: false,
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

    /// Makes a region's log agree with its applied data before the peer opens over it, and
    /// returns the applied index. The engine is the authority: its region metadata holds the
    /// voters, and when its data is applied past the log's end (a snapshot written to the
    /// engine just before a crash kept it from the log), the log restarts at the data.
    fn prepare_log(
        &self,
        meta: &RegionMeta,
        storage: &MemStorage,
    ) -> Result<u64, crate::log::LogError> {
        let voters: Vec<u64> = meta.peers.iter().map(|p| p.id).collect();
        let conf_state = raft::eraftpb::ConfState::from((voters, vec![]));
        let first = raft::Storage::first_index(storage).unwrap_or(1);
        let last = raft::Storage::last_index(storage).unwrap_or(0);
        let applied = read_applied(&*self.engine, meta.id).map_err(log_error)?;
        let mut core = storage.wl();
        let applied = match applied {
            Some((index, term)) if index > last => {
                let mut snapshot = Snapshot::default();
                let metadata = snapshot.mut_metadata();
                metadata.index = index;
                metadata.term = term;
                metadata.set_conf_state(conf_state.clone());
                core.apply_snapshot(snapshot).map_err(log_error)?;
                index
            }
            // A log bootstrapped just before a crash kept its applied index from the engine.
            Some((index, _)) => index.max(first - 1),
            None => first - 1,
        };
        core.set_conf_state(conf_state);
        // The applied data may be newer than the last hard state written.
        if applied > core.hard_state().commit {
            core.mut_hard_state().commit = applied;
        }
        Ok(applied)
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

    pub fn run(mut self, inbox: Receiver<Msg>) {
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
                let origin = Origin::from_placement_driver(&meta);
                if let Err(e) = self.open_region(meta, origin) {
                    error!(%e, "cannot create a region peer");
                }
            }
            Msg::ChangePeer { region, change } => {
                let Some(p) = self.peers.get_mut(&region) else {
                    return true;
                };
                let mut conf_change = ConfChange::default();
                match change {
                    PeerChange::Add(peer) => {
                        conf_change.set_change_type(ConfChangeType::AddNode);
                        conf_change.node_id = peer.id;
                        conf_change.context = change_context(peer.store_id).into();
                    }
                    PeerChange::Remove(peer) => {
                        conf_change.set_change_type(ConfChangeType::RemoveNode);
                        conf_change.node_id = peer.id;
                    }
                }
                match p.peer.propose_conf_change(conf_change) {
                    Ok(()) => info!(region, ?change, "proposed a membership change"),
                    Err(e) => info!(region, ?change, %e, "membership change not proposed"),
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
                let Some(target) = target.map(|t| t.id) else {
                    return true;
                };
                if !p.peer.is_leader() || p.peer.is_transferring() {
                    return true;
                }
                if !p.peer.can_take_leadership(target) {
                    debug!(
                        region,
                        to_store, "not transferring: the target lags or is silent"
                    );
                    return true;
                }
                // Stop serving reads first: once the target campaigns it may lead before
                // this peer's lease would have run out.
                if let Some(s) = self.status.write().get_mut(&region) {
                    s.lease_until = None;
                }
                // What the next leader needs goes into the log ahead of the transfer: Raft
                // hands leadership only to a peer whose log holds it.
                let (meta, term) = (p.meta.clone(), p.peer.term());
                if let Some(batch) = self.handover.handover(&meta, term) {
                    self.propose(region, Command::encode_write(meta.version, &batch), None);
                }
                info!(region, to_store, "transferring region leadership");
                crate::metrics::transfer_started();
                if let Some(p) = self.peers.get_mut(&region) {
                    p.peer.transfer_leader(target);
                }
            }
            Msg::Stale { region, conf_ver } => {
                let stale = self
                    .peers
                    .get(&region)
                    .is_some_and(|p| p.meta.conf_ver < conf_ver && !p.peer.is_leader());
                if stale {
                    info!(
                        region,
                        conf_ver, "dropping a peer the region removed while this store was away"
                    );
                    if let Err(e) = self.destroy(region) {
                        error!(%e, region, "cannot drop a stale region peer");
                    }
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
                crate::metrics::proposed();
                self.pending.insert(
                    id,
                    Pending {
                        region,
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
                if p.peer.is_leader() {
                    let first = raft::Storage::first_index(&p.peer.storage()).unwrap_or(1);
                    let applied = p.peer.applied_index();
                    let to = match p.peer.min_matched_index() {
                        Some(matched) if matched > first + COMPACT_LOG_GAP => Some(matched),
                        // A peer far behind (or down) would keep the log growing: past the
                        // limit it is compacted anyway, and that peer gets a snapshot.
                        _ if applied > first + self.log_max_entries => {
                            Some(applied - self.log_max_entries / 2)
                        }
                        _ => None,
                    };
                    if let Some(index) = to {
                        compact.push((*id, index));
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
        // The entries this round applies were committed by now (the leader learned it from
        // the acknowledgements it stepped before).
        let committed_at = Instant::now();
        let mut log_batch = LogWriteBatch::new();
        let mut touched = Vec::new();
        let mut outs = Vec::new();
        for (id, p) in &mut self.peers {
            if !p.peer.has_ready() {
                continue;
            }
            let mut out = crate::peer::Ready::default();
            let write = p.peer.collect_ready(&mut out);
            if let Some(snapshot) = p.peer.state_machine_mut().restore.take() {
                // The data first: once the log records the snapshot, its entries are gone.
                let (meta, batch) =
                    restore_batch(&*self.engine, &*self.keys, &snapshot).map_err(log_error)?;
                self.engine.write(&batch, true).map_err(log_error)?;
                info!(
                    region = *id,
                    index = snapshot.get_metadata().index,
                    keys = batch.len(),
                    "region data restored from a snapshot"
                );
                p.peer.state_machine_mut().meta = meta.clone();
                p.meta = meta.clone();
                if let Some(s) = self.status.write().get_mut(id) {
                    s.meta = meta;
                }
            }
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
        // A round that only moved commit indexes (the usual second ready of a write: the
        // leader learning its entry committed, a follower hearing so) writes them unsynced.
        let sync = log_batch.must_sync();
        self.log.write(&mut log_batch, sync)?;

        let mut apply = WriteBatch::new();
        let mut truncations = LogWriteBatch::new();
        let mut splits = Vec::new();
        let mut changed = Vec::new();
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
            if std::mem::take(&mut applier.meta_changed) {
                changed.push((*id, applier.meta.clone()));
            }
            written.push(std::mem::take(&mut applier.written));
            if !batch.is_empty() || !out.outcomes.is_empty() || compact_to.is_some() {
                apply.append(batch);
                apply.put(
                    Cf::Raft,
                    applied_key(*id),
                    applied_value(p.peer.applied_index(), p.peer.applied_term()),
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
            let sync = !truncations.is_empty() || !changed.is_empty();
            let started = Instant::now();
            if let Err(e) = self.engine.write(&apply, sync) {
                // The log holds the commands; a restart applies them again.
                return Err(crate::log::LogError::from_display(e));
            }
            crate::metrics::apply_written(started.elapsed());
        }
        self.log.write(&mut truncations, false)?;
        for (id, meta, new_regions) in splits {
            self.finish_split(id, meta, new_regions)?;
        }
        for (id, meta) in changed {
            self.take_meta(id, meta)?;
        }

        let now = Instant::now();
        for ((id, out), written) in touched.iter().zip(outs.iter_mut()).zip(written) {
            let Some(p) = self.peers.get_mut(id) else {
                // Destroyed: its peer was removed from the region.
                continue;
            };
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
                if result.is_ok() {
                    crate::metrics::applied(pending.proposed_at, committed_at, now);
                }
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
            // A leader that stepped down (it lost touch with a majority, or another peer
            // won an election) answers its waiting proposers now: their entries may or may
            // not commit under the next leader, which is what they would learn after
            // PROPOSE_TIMEOUT, while the client could already be asking that leader.
            let stepped_down = s.leader_peer == p.peer.id() && leader_peer != p.peer.id();
            if s.term != term || !leading || p.peer.is_transferring() {
                s.lease_until = None;
            }
            if !leading {
                s.checked = false;
                s.written = Written::default();
            } else {
                s.written.add(written);
            }
            if leading && !s.leading {
                crate::metrics::leader_gained();
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
            if stepped_down {
                for pending in self.pending.values_mut().filter(|w| w.region == *id) {
                    if let Some(reply) = pending.reply.take() {
                        let _ = reply.send(Err(ProposeFailure::SteppedDown));
                    }
                }
            }
        }
        Ok(())
    }
}

impl Poller {
    /// Takes a region's metadata after a committed change altered it; a store whose peer the
    /// change removed drops the peer.
    fn take_meta(&mut self, id: u64, meta: RegionMeta) -> Result<(), crate::log::LogError> {
        let Some(p) = self.peers.get_mut(&id) else {
            return Ok(());
        };
        let removed = !meta.peers.iter().any(|x| x.store_id == self.store_id);
        p.meta = meta.clone();
        if let Some(s) = self.status.write().get_mut(&id) {
            s.meta = meta;
        }
        if removed {
            self.destroy(id)?;
        }
        Ok(())
    }

    /// Drops this store's peer of region `id`: its metadata and log go (its data stays until
    /// the range is reused).
    fn destroy(&mut self, id: u64) -> Result<(), crate::log::LogError> {
        self.peers.remove(&id);
        self.status.write().remove(&id);
        let mut data = WriteBatch::new();
        data.delete(Cf::Raft, region_key(id));
        data.delete(Cf::Raft, applied_key(id));
        self.engine.write(&data, true).map_err(log_error)?;
        let mut log = LogWriteBatch::new();
        log.clean(id);
        self.log.write(&mut log, true)?;
        info!(region = id, "region peer removed from this store");
        Ok(())
    }

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
        let mut serving = false;
        if let Some(s) = self.status.write().get_mut(&id) {
            s.meta = meta;
            serving = leading && s.serving_term == p.peer.term();
            // A region may still be past the limit after a split (one look of the split
            // checker cuts only so many pieces): the checker looks at this part again at
            // once, as it does at the new one, rather than after the part takes more writes.
            s.checked = false;
        }
        for new in new_regions {
            let new_id = new.id;
            info!(region = id, new_region = new_id, split_key = ?new.start_key, "region split");
            self.open_region(new, Origin::New)?;
            if let Some(p) = self.peers.get_mut(&new_id) {
                p.split_from_serving_leader = serving;
                if leading {
                    p.peer.campaign();
                }
            }
        }
        Ok(())
    }
}

/// Drops log files of compacted entries every [`LOG_PURGE_INTERVAL`], off the poll loop.
pub(crate) fn purge_loop(log: &RaftLog, stopping: &std::sync::atomic::AtomicBool) {
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
        Some(store) => {
            crate::metrics::message_sent();
            transport.send(store, meta.id, message)
        }
        None => warn!(
            region = meta.id,
            to = message.to,
            "a Raft message to an unknown peer"
        ),
    }
}
