//! The placement drivers of a cluster as one Raft group, so that the cluster's metadata and
//! the timestamp oracle survive the loss of a minority of them.
//!
//! ```text
//!   PdService ──propose(Command)──▶ driver thread: Peer (raft-rs) ──▶ raft-engine log (sync)
//!        ▲                              │  ├─▶ messages to the other members (gRPC, batched)
//!        └── applied PdState ◀──apply───┘  └─▶ outcomes to proposers, lease
//! ```
//!
//! The replicated state ([`PdState`]) is the cluster metadata and the limit below which
//! timestamps may be issued. A command carries the whole new metadata (it changes rarely and
//! is small), a raised timestamp limit, or nothing (a no-op that renews the leader's lease).
//! Every member applies the commands to its copy and saves it to a file; the log is compacted
//! behind what is saved, and a member behind the log receives the state as a snapshot.
//!
//! Only the leader serves, and only once it has applied an entry of its own term (it then holds
//! everything earlier leaders committed). Timestamps need more: a **lease**. A command applied
//! at time `t` was acknowledged by a majority after `t`, and none of them votes for another
//! candidate for an election timeout after hearing from this leader, so until
//! `t + LEASE` no other member can lead; the leader renews it with no-ops. A new leader
//! therefore issues timestamps only after every earlier leader stopped, and starts above the
//! limit those committed.
//!
//! Membership is static: every member is started with the same `--peers` list.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use strata_proto::pd::{self as pb, pd_client::PdClient as RawClient};
use strata_raftstore::{
    decode_message, encode_message, LogWriteBatch, MemStorage, Message, Peer, PeerConfig,
    ProposalOutcome, RaftLog, Ready, SnapshotSource, StateMachine, ELECTION_TICKS, INIT_INDEX,
    INIT_TERM, LEASE, TICK_INTERVAL,
};
use tracing::{info, warn};

use crate::meta::ClusterMeta;
use strata_pd_client::{PdError, Security};

/// The placement drivers' log in raft-engine (one group per data folder).
const GROUP: u64 = 1;
/// Messages and proposals queued for the driver thread; more are refused (Raft resends).
pub const PD_MAILBOX_CAPACITY: usize = 4096;
/// Raft messages queued for one other member; more are dropped (Raft resends).
pub const PD_RAFT_QUEUE_CAPACITY: usize = 1024;
/// Raft messages sent to a member in one request.
pub const PD_RAFT_BATCH_MAX: usize = 256;
/// How long one delivery of Raft messages to a member may take.
pub const PD_RAFT_SEND_TIMEOUT: Duration = Duration::from_secs(1);
/// How long a proposer waits for its command to apply.
pub const PD_PROPOSE_TIMEOUT: Duration = Duration::from_secs(5);
/// Applied entries the log holds before it is compacted behind the saved state.
pub const PD_LOG_COMPACT_ENTRIES: u64 = 256;
/// Applied entries kept in the log after a compaction, for members a little behind.
pub const PD_LOG_KEEP_ENTRIES: u64 = 32;
/// Ticks between the leader's heartbeats.
const HEARTBEAT_TICKS: usize = 2;

/// A change to the replicated state.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Command {
    /// Renews the leader's lease.
    Noop,
    /// The whole cluster metadata after a change.
    Meta(ClusterMeta),
    /// Timestamps may be issued with a physical part below this (the limit only grows).
    TsoLimit(u64),
}

/// What the placement drivers replicate, as applied up to `applied_index`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PdState {
    pub applied_index: u64,
    pub applied_term: u64,
    pub meta: ClusterMeta,
    pub tso_limit_ms: u64,
}

/// This member's view of the group.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Role {
    /// The member believed to lead (0: none known).
    pub leader_id: u64,
    pub term: u64,
    /// This member leads and has applied an entry of its term.
    pub ready: bool,
    /// Until when no other member can lead (set only while `ready`).
    pub lease_until: Option<Instant>,
}

impl Role {
    pub fn holds_lease(&self) -> bool {
        self.ready && self.lease_until.is_some_and(|until| Instant::now() < until)
    }
}

/// Why a proposal did not apply.
#[derive(Clone, Debug, thiserror::Error)]
pub(crate) enum ProposeFailure {
    #[error("this placement driver does not lead")]
    NotLeader,
    #[error("the proposal was dropped")]
    Dropped,
    #[error("the proposal did not apply within {PD_PROPOSE_TIMEOUT:?}")]
    TimedOut,
}

type Reply = Box<dyn FnOnce(Result<(), ProposeFailure>) + Send>;

enum Input {
    Message(Message),
    Propose(Vec<u8>, Reply),
    Stop,
}

/// A running member of the placement drivers' Raft group.
pub(crate) struct Group {
    id: u64,
    members: Vec<(u64, String)>,
    mailbox: Sender<Input>,
    role: Arc<Mutex<Role>>,
    state: Arc<Mutex<PdState>>,
    leading: Receiver<u64>,
    driver: Mutex<Option<JoinHandle<()>>>,
    transport_runtime: Option<tokio::runtime::Runtime>,
}

impl Group {
    /// Opens member `id` of the group `members` (id, address) over the state in `dir`.
    /// With one member it leads at once. It reaches the other members as `security` says.
    pub fn open(
        dir: &Path,
        id: u64,
        members: Vec<(u64, String)>,
        security: Security,
    ) -> Result<Group, PdError> {
        let voters: Vec<u64> = members.iter().map(|(id, _)| *id).collect();
        if !voters.contains(&id) {
            return Err(PdError::Storage(format!(
                "member {id} is not in the group {voters:?}"
            )));
        }
        fs::create_dir_all(dir)?;
        let log = RaftLog::open(&dir.join("raft")).map_err(storage_error)?;
        let (file, mut state) = StateFile::open(dir)?;
        let storage = match log.load(GROUP).map_err(storage_error)? {
            Some(storage) => storage,
            None => {
                let mut batch = LogWriteBatch::new();
                batch.bootstrap(GROUP, &voters).map_err(storage_error)?;
                log.write(&mut batch, true).map_err(storage_error)?;
                info!(?voters, "placement driver group created");
                log.load(GROUP)
                    .map_err(storage_error)?
                    .ok_or_else(|| PdError::Storage("bootstrapped log is missing".into()))?
            }
        };
        let logged_voters = raft::Storage::initial_state(&storage).map_or_else(
            |_| Vec::new(),
            |s| {
                let mut v = s.conf_state.voters.clone();
                v.sort_unstable();
                v
            },
        );
        let mut sorted = voters.clone();
        sorted.sort_unstable();
        if logged_voters != sorted {
            warn!(
                ?logged_voters,
                ?voters,
                "--peers differs from the group this data folder belongs to; the log's members stand"
            );
        }
        // A fresh state is the state at the log's start.
        if state.applied_index < INIT_INDEX {
            state.applied_index = INIT_INDEX;
            state.applied_term = INIT_TERM;
        }
        let applied = prepare_log(&storage, &state)?;
        let state = Arc::new(Mutex::new(state));
        let machine = Machine {
            state: state.clone(),
            file,
            storage: storage.clone(),
        };
        let config = PeerConfig {
            election_tick: ELECTION_TICKS,
            heartbeat_tick: HEARTBEAT_TICKS,
            ..PeerConfig::default()
        };
        let mut peer = Peer::open_applied(id, storage, config, machine, applied);
        peer.set_snapshot_source(Arc::new(Snapshots {
            state: state.clone(),
            voters: logged_voters.clone(),
        }));
        if logged_voters == [id] {
            peer.campaign();
        }

        let transport_runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("pd-raft")
            .enable_all()
            .build()?;
        let mut outboxes = HashMap::new();
        for (member, address) in &members {
            if *member == id {
                continue;
            }
            let (sender, receiver) = tokio::sync::mpsc::channel(PD_RAFT_QUEUE_CAPACITY);
            let client = RawClient::new(strata_pd_client::channel(
                address,
                transport_runtime.handle(),
                &security,
            )?)
            .max_encoding_message_size(strata_proto::MAX_MESSAGE_BYTES);
            transport_runtime.spawn(deliver(client, receiver));
            outboxes.insert(*member, sender);
        }
        let (mailbox, inbox) = channel::bounded(PD_MAILBOX_CAPACITY);
        let (leading_sender, leading) = channel::unbounded();
        let role = Arc::new(Mutex::new(Role::default()));
        let driver = Driver {
            peer,
            log,
            outboxes,
            role: role.clone(),
            pending: HashMap::new(),
            next_id: 1,
            lease_until: None,
            renewing: false,
            announced_term: 0,
            leading: leading_sender,
            last_purge: Instant::now(),
        };
        let driver = std::thread::Builder::new()
            .name("pd-raft-driver".into())
            .spawn(move || driver.run(inbox))?;
        info!(id, ?voters, applied, "placement driver member started");
        Ok(Group {
            id,
            members,
            mailbox,
            role,
            state,
            leading,
            driver: Mutex::new(Some(driver)),
            transport_runtime: Some(transport_runtime),
        })
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    pub fn members(&self) -> &[(u64, String)] {
        &self.members
    }

    /// The address of member `id`, if it is one.
    pub fn address_of(&self, id: u64) -> Option<&str> {
        self.members
            .iter()
            .find(|(m, _)| *m == id)
            .map(|(_, a)| a.as_str())
    }

    pub fn role(&self) -> Role {
        *self.role.lock()
    }

    /// The replicated state as applied here.
    pub fn state(&self) -> parking_lot::MutexGuard<'_, PdState> {
        self.state.lock()
    }

    /// Terms in which this member became a ready leader, in order (a wake-up: the term is in
    /// [`Group::role`] before it is sent).
    pub fn leading(&self) -> &Receiver<u64> {
        &self.leading
    }

    /// Hands a Raft message from another member to this one.
    pub fn deliver(&self, bytes: &[u8]) {
        match decode_message(bytes) {
            Ok(message) => {
                let _ = self.mailbox.try_send(Input::Message(message));
            }
            Err(e) => warn!(error = %e, "undecodable placement driver Raft message"),
        }
    }

    fn submit(&self, command: &Command, reply: Reply) {
        let bytes = serde_json::to_vec(command).expect("a command always encodes");
        if let Err(e) = self.mailbox.try_send(Input::Propose(bytes, reply)) {
            if let Input::Propose(_, reply) = e.into_inner() {
                reply(Err(ProposeFailure::Dropped));
            }
        }
    }

    /// Proposes `command` and waits until it applied here.
    pub async fn propose(&self, command: &Command) -> Result<(), ProposeFailure> {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        self.submit(
            command,
            Box::new(move |result| {
                let _ = sender.send(result);
            }),
        );
        match tokio::time::timeout(PD_PROPOSE_TIMEOUT, receiver).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(ProposeFailure::Dropped),
            Err(_) => Err(ProposeFailure::TimedOut),
        }
    }

    /// [`Group::propose`] for a thread outside any async runtime.
    pub fn propose_blocking(&self, command: &Command) -> Result<(), ProposeFailure> {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        self.submit(
            command,
            Box::new(move |result| {
                let _ = sender.send(result);
            }),
        );
        receiver
            .recv_timeout(PD_PROPOSE_TIMEOUT)
            .unwrap_or(Err(ProposeFailure::TimedOut))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        let _ = self.mailbox.send(Input::Stop);
        if let Some(driver) = self.driver.lock().take() {
            let _ = driver.join();
        }
        // The service may be dropped on a thread of another runtime, where waiting is refused.
        if let Some(runtime) = self.transport_runtime.take() {
            runtime.shutdown_background();
        }
    }
}

fn storage_error(e: impl std::fmt::Display) -> PdError {
    PdError::Storage(e.to_string())
}

/// Makes the log agree with the saved state before the peer opens over it; returns the
/// applied index. A state saved past the log's end (a snapshot applied just before a crash
/// kept it from the log) restarts the log there.
fn prepare_log(storage: &MemStorage, state: &PdState) -> Result<u64, PdError> {
    let first = raft::Storage::first_index(storage).unwrap_or(1);
    let last = raft::Storage::last_index(storage).unwrap_or(0);
    let conf_state = raft::Storage::initial_state(storage)
        .map_err(storage_error)?
        .conf_state;
    let mut core = storage.wl();
    let applied = if state.applied_index > last {
        let mut snapshot = raft::eraftpb::Snapshot::default();
        let metadata = snapshot.mut_metadata();
        metadata.index = state.applied_index;
        metadata.term = state.applied_term;
        metadata.set_conf_state(conf_state);
        core.apply_snapshot(snapshot).map_err(storage_error)?;
        state.applied_index
    } else {
        state.applied_index.max(first - 1)
    };
    if applied > core.hard_state().commit {
        core.mut_hard_state().commit = applied;
    }
    Ok(applied)
}

/// Applies committed commands to the replicated state and saves it.
struct Machine {
    state: Arc<Mutex<PdState>>,
    file: StateFile,
    /// The log, to learn the term of an applied index.
    storage: MemStorage,
}

impl Machine {
    fn save(&self, state: &PdState) {
        if let Err(e) = self.file.save(state) {
            // The log still holds the command; it is not compacted past an unsaved state.
            warn!(error = %e, "saving the placement driver state failed");
        }
    }
}

impl StateMachine for Machine {
    fn apply(&mut self, index: u64, command: &[u8]) -> bool {
        let command: Command = match serde_json::from_slice(command) {
            Ok(command) => command,
            Err(e) => {
                warn!(index, error = %e, "undecodable placement driver command");
                return false;
            }
        };
        let term = raft::Storage::term(&self.storage, index).unwrap_or(0);
        let mut state = self.state.lock();
        state.applied_index = index;
        state.applied_term = term;
        let changed = match command {
            Command::Noop => false,
            Command::Meta(meta) => {
                state.meta = meta;
                true
            }
            Command::TsoLimit(limit) => {
                state.tso_limit_ms = state.tso_limit_ms.max(limit);
                true
            }
        };
        if changed {
            let snapshot = state.clone();
            drop(state);
            self.save(&snapshot);
        }
        true
    }

    fn apply_conf_change(&mut self, _index: u64, _change: &raft::eraftpb::ConfChange) {}

    fn restore(&mut self, snapshot: &raft::eraftpb::Snapshot) {
        let metadata = snapshot.get_metadata();
        let mut restored: PdState = match serde_json::from_slice(&snapshot.data) {
            Ok(state) => state,
            Err(e) => {
                warn!(error = %e, "undecodable placement driver snapshot");
                return;
            }
        };
        restored.applied_index = metadata.index;
        restored.applied_term = metadata.term;
        info!(
            index = metadata.index,
            "placement driver state restored from a snapshot"
        );
        *self.state.lock() = restored.clone();
        self.save(&restored);
    }
}

/// The replicated state as a Raft snapshot, for a member behind the log.
struct Snapshots {
    state: Arc<Mutex<PdState>>,
    voters: Vec<u64>,
}

impl SnapshotSource for Snapshots {
    fn snapshot(&self) -> Result<raft::eraftpb::Snapshot, String> {
        let state = self.state.lock().clone();
        let mut snapshot = raft::eraftpb::Snapshot {
            data: serde_json::to_vec(&state)
                .map_err(|e| e.to_string())?
                .into(),
            ..Default::default()
        };
        let metadata = snapshot.mut_metadata();
        metadata.index = state.applied_index;
        metadata.term = state.applied_term;
        metadata.set_conf_state(raft::eraftpb::ConfState::from((
            self.voters.clone(),
            vec![],
        )));
        Ok(snapshot)
    }
}

/// The thread that owns the Raft peer.
struct Driver {
    peer: Peer<Machine>,
    log: RaftLog,
    outboxes: HashMap<u64, tokio::sync::mpsc::Sender<Vec<u8>>>,
    role: Arc<Mutex<Role>>,
    /// Proposal id -> when it was proposed, and who waits for it (none: a lease renewal).
    pending: HashMap<u64, (Instant, Option<Reply>)>,
    next_id: u64,
    lease_until: Option<Instant>,
    renewing: bool,
    announced_term: u64,
    leading: Sender<u64>,
    last_purge: Instant,
}

/// How often the log files are purged of compacted entries.
const PURGE_INTERVAL: Duration = Duration::from_secs(60);

impl Driver {
    fn run(mut self, inbox: Receiver<Input>) {
        let mut next_tick = Instant::now() + TICK_INTERVAL;
        loop {
            let wait = next_tick.saturating_duration_since(Instant::now());
            let first = match inbox.recv_timeout(wait) {
                Ok(input) => Some(input),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            for input in first
                .into_iter()
                .chain(inbox.try_iter().take(PD_MAILBOX_CAPACITY))
            {
                match input {
                    Input::Message(message) => self.peer.step(message),
                    Input::Propose(command, reply) => {
                        self.propose(command, Some(reply));
                    }
                    Input::Stop => return,
                }
            }
            // Ticks never come faster than the interval: the lease relies on it.
            if Instant::now() >= next_tick {
                self.peer.tick();
                next_tick = Instant::now() + TICK_INTERVAL;
                self.maintain();
            }
            while self.peer.has_ready() {
                if let Err(e) = self.handle_ready() {
                    // Without its log a member cannot go on safely.
                    tracing::error!(error = %e, "placement driver Raft log failed; stopping");
                    std::process::abort();
                }
            }
            self.publish_role();
        }
    }

    /// Proposes `command`; returns whether Raft took it (`reply` hears either way).
    fn propose(&mut self, command: Vec<u8>, reply: Option<Reply>) -> bool {
        let id = self.next_id;
        self.next_id += 1;
        let failure = match self.peer.propose(id, command) {
            Ok(()) => {
                self.pending.insert(id, (Instant::now(), reply));
                return true;
            }
            Err(strata_raftstore::ProposeError::NotLeader { .. }) => ProposeFailure::NotLeader,
            Err(strata_raftstore::ProposeError::Dropped) => ProposeFailure::Dropped,
        };
        if let Some(reply) = reply {
            reply(Err(failure));
        }
        false
    }

    /// Once a tick: renews the lease, compacts the log, purges log files.
    fn maintain(&mut self) {
        if self.peer.is_ready_leader() && !self.renewing {
            let expiring = self
                .lease_until
                .is_none_or(|until| until < Instant::now() + LEASE / 2);
            if expiring {
                let noop = serde_json::to_vec(&Command::Noop).expect("a command encodes");
                self.renewing = self.propose(noop, None);
            }
        }
        let applied = self.peer.applied_index();
        let first = raft::Storage::first_index(&self.peer.storage()).unwrap_or(1);
        if applied >= first + PD_LOG_COMPACT_ENTRIES {
            if let Err(e) = self.compact(applied - PD_LOG_KEEP_ENTRIES) {
                warn!(error = %e, "compacting the placement driver log failed");
            }
        }
        if self.last_purge.elapsed() >= PURGE_INTERVAL {
            self.last_purge = Instant::now();
            if let Err(e) = self.log.purge() {
                warn!(error = %e, "purging the placement driver log failed");
            }
        }
    }

    /// Drops log entries before `index`, after saving the state that covers them.
    fn compact(&mut self, index: u64) -> Result<(), PdError> {
        let state = self.peer.state_machine().state.lock().clone();
        self.peer.state_machine().file.save(&state)?;
        let prev_term =
            raft::Storage::term(&self.peer.storage(), index - 1).map_err(storage_error)?;
        let mut batch = LogWriteBatch::new();
        batch
            .truncate(GROUP, index, prev_term)
            .map_err(storage_error)?;
        self.log.write(&mut batch, false).map_err(storage_error)?;
        self.peer.compact_log(index);
        Ok(())
    }

    fn handle_ready(&mut self) -> Result<(), PdError> {
        let mut out = Ready::default();
        let write = self.peer.collect_ready(&mut out);
        if !write.is_empty() {
            let mut batch = LogWriteBatch::new();
            batch.add(GROUP, &write).map_err(storage_error)?;
            self.log.write(&mut batch, true).map_err(storage_error)?;
        }
        self.peer.finish_ready(&mut out);
        for message in out.messages {
            if let Some(outbox) = self.outboxes.get(&message.to) {
                let _ = outbox.try_send(encode_message(&message));
            }
        }
        for outcome in out.outcomes {
            let (id, result) = match outcome {
                ProposalOutcome::Applied { id, .. } => (id, Ok(())),
                ProposalOutcome::Dropped { id } | ProposalOutcome::Rejected { id } => {
                    (id, Err(ProposeFailure::Dropped))
                }
            };
            let Some((proposed_at, reply)) = self.pending.remove(&id) else {
                continue;
            };
            match reply {
                Some(reply) => reply(result.clone()),
                None => self.renewing = false,
            }
            if result.is_ok() && self.peer.is_leader() {
                let until = proposed_at + LEASE;
                self.lease_until = Some(self.lease_until.map_or(until, |u| u.max(until)));
            }
        }
        Ok(())
    }

    fn publish_role(&mut self) {
        let term = self.peer.term();
        let ready = self.peer.is_ready_leader();
        if !self.peer.is_leader() {
            self.lease_until = None;
            self.renewing = false;
            // Proposals of a lost leadership never apply here in this term.
            for (_, (_, reply)) in self.pending.drain() {
                if let Some(reply) = reply {
                    reply(Err(ProposeFailure::NotLeader));
                }
            }
        }
        *self.role.lock() = Role {
            leader_id: self.peer.leader_id(),
            term,
            ready,
            lease_until: if ready { self.lease_until } else { None },
        };
        // Announced after the role is visible: whoever wakes up sees it.
        if ready && self.announced_term != term {
            self.announced_term = term;
            info!(term, "this placement driver leads");
            let _ = self.leading.send(term);
        }
    }
}

/// Sends queued Raft messages to one member, in batches; what fails is dropped.
async fn deliver(
    mut client: RawClient<tonic::transport::Channel>,
    mut queue: tokio::sync::mpsc::Receiver<Vec<u8>>,
) {
    while let Some(first) = queue.recv().await {
        let mut messages = vec![first];
        while messages.len() < PD_RAFT_BATCH_MAX {
            match queue.try_recv() {
                Ok(message) => messages.push(message),
                Err(_) => break,
            }
        }
        let request = client.raft(pb::PdRaftRequest { messages });
        let _ = tokio::time::timeout(PD_RAFT_SEND_TIMEOUT, request).await;
    }
}

/// The file that holds a member's applied [`PdState`], replaced atomically on every change.
pub(crate) struct StateFile {
    path: PathBuf,
}

impl StateFile {
    /// Opens the state saved in `dir`; a folder of a placement driver from before the group
    /// existed starts from its metadata file and timestamp limit.
    pub fn open(dir: &Path) -> Result<(StateFile, PdState), PdError> {
        fs::create_dir_all(dir)?;
        let path = dir.join("pd-state.json");
        let state = match fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| PdError::Corrupt(format!("{}: {e}", path.display())))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => legacy_state(dir)?,
            Err(e) => return Err(e.into()),
        };
        Ok((StateFile { path }, state))
    }

    /// Replaces the saved state; durable when this returns.
    pub fn save(&self, state: &PdState) -> Result<(), PdError> {
        let bytes = serde_json::to_vec(state).map_err(|e| PdError::Corrupt(e.to_string()))?;
        strata_pd_client::replace_file(&self.path, &bytes)
    }
}

/// The state a single placement driver kept before the group existed (`cluster.json` and
/// `tso/tso-limit`), or an empty one.
fn legacy_state(dir: &Path) -> Result<PdState, PdError> {
    let meta = match fs::read(dir.join("cluster.json")) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| PdError::Corrupt(format!("cluster.json: {e}")))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ClusterMeta::default(),
        Err(e) => return Err(e.into()),
    };
    let tso_limit_ms = fs::read_to_string(dir.join("tso").join("tso-limit"))
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0);
    Ok(PdState {
        meta,
        tso_limit_ms,
        ..PdState::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::StoreRecord;

    #[test]
    fn the_state_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let (file, mut state) = StateFile::open(dir.path()).unwrap();
        assert_eq!(state, PdState::default());
        let id = state.meta.alloc_id();
        state.meta.stores.insert(
            id,
            StoreRecord {
                id,
                address: "127.0.0.1:20160".into(),
            },
        );
        state.applied_index = 9;
        state.tso_limit_ms = 12345;
        file.save(&state).unwrap();
        let (_, reopened) = StateFile::open(dir.path()).unwrap();
        assert_eq!(reopened, state);
    }
}
