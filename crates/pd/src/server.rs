//! The placement driver's service: timestamps, ids, store registration and heartbeats, and
//! the region table (its gRPC calls are in `handler.rs`).
//!
//! Only the leader of the placement drivers' Raft group serves (see `group.rs`); the others
//! answer UNAVAILABLE and name the leader in the [`PD_LEADER_HEADER`] metadata entry. Every
//! change to the metadata is replicated before it is answered. What the leader learns from
//! heartbeats (leaders of regions, live stores, lock waits) is soft state: a new leader starts
//! without it and learns it again within a heartbeat, and it orders no leader moves for
//! [`BALANCE_GRACE`] meanwhile.
//!
//! The cluster bootstraps when as many stores registered as a region has replicas: the
//! placement driver then creates one region covering the whole key space with a peer on each
//! of those stores. Leaders are learnt from the KV nodes' region heartbeats and kept in
//! memory (a restarted placement driver learns them again within a heartbeat).

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use strata_proto::kv::RegionEpoch;
use strata_proto::pd::{self as pb, pd_server};
use strata_types::deadlock::WaitForGraph;
use strata_types::Timestamp;
use tonic::Status;
use tracing::{info, warn};

use crate::gc::SnapshotsInUse;
use crate::group::{Command, Group, ProposeFailure, Role};
use crate::handler::Handler;
use crate::meta::{ClusterMeta, PeerRecord, RegionRecord};
use crate::schedule::{LeaderBalancer, Operator, ReplicaChecker, StoreView};
use strata_pd_client::{
    PdError, Security, SystemClock, TsoWindow, PD_LEADER_HEADER, TSO_SAVE_INTERVAL_MS,
};

/// The most timestamps one TSO request may ask for.
pub const TSO_MAX_BATCH: u32 = 1 << 16;
/// Answers queued on one timestamp stream before its reader waits for the client.
pub const TSO_STREAM_ANSWERS_QUEUED: usize = 64;
/// The most regions one scan returns.
pub const SCAN_REGIONS_MAX: usize = 1024;
/// A lock wait that its KV node has not reported again for this long no longer counts in
/// deadlock detection (waiters report every `LOCK_WAIT_RECHECK`, 100 ms).
pub const DEADLOCK_WAIT_TTL: std::time::Duration = std::time::Duration::from_secs(3);
/// A store that has not sent a heartbeat for this long gets no leaders from the balancer.
pub const STORE_UP_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);
/// How long a new leader waits for heartbeats before it moves region leaders.
pub const BALANCE_GRACE: Duration = Duration::from_secs(3);
/// Ids reserved by one replicated change and then handed out from memory.
pub const ID_RESERVE_BATCH: u64 = 100;
/// How often the leader checks that the timestamp limit stays ahead of the clock.
const TSO_CHECK_INTERVAL: Duration = Duration::from_millis(50);

pub(crate) struct StoreLiveness {
    pub(crate) last_heartbeat: Instant,
    pub(crate) region_count: u64,
}

/// How the placement driver runs a cluster.
#[derive(Clone, Debug)]
pub struct PdConfig {
    /// Replicas of each region (how many stores the cluster waits for to bootstrap).
    pub replicas: usize,
    /// A store without a heartbeat for this long has its replicas re-created elsewhere.
    pub max_store_down: std::time::Duration,
    /// This member's id in `members`.
    pub id: u64,
    /// The placement drivers of the cluster (id, host:port), the same list on each; empty:
    /// this one alone.
    pub members: Vec<(u64, String)>,
    /// How this member reaches the other placement drivers.
    pub security: Security,
}

impl Default for PdConfig {
    /// Three replicas; replicas of a store down for 30 minutes are replaced (TiKV's
    /// `max-store-down-time`).
    fn default() -> PdConfig {
        PdConfig {
            replicas: 3,
            max_store_down: std::time::Duration::from_secs(30 * 60),
            id: 1,
            members: Vec::new(),
            security: Security::plain(),
        }
    }
}

/// The state behind the placement driver's service.
pub struct PdService {
    pub(crate) group: Group,
    /// The timestamps this member issues while it leads, with the term they belong to.
    pub(crate) tso: RwLock<Option<(u64, Arc<TsoWindow>)>>,
    /// Serializes changes of the metadata: each is computed from the last one applied.
    changing: tokio::sync::Mutex<()>,
    /// Ids reserved by a replicated change and not handed out yet.
    reserved_ids: Mutex<std::ops::Range<u64>>,
    pub(crate) liveness: Mutex<HashMap<u64, StoreLiveness>>,
    /// Region -> (leader peer, its term), as the leaders reported.
    pub(crate) leaders: Mutex<HashMap<u64, (u64, u64)>>,
    /// Replicas of each region (how many stores the cluster waits for to bootstrap).
    pub(crate) replicas: usize,
    max_store_down: std::time::Duration,
    /// When this member last started leading.
    pub(crate) leader_since: Mutex<Instant>,
    pub(crate) balancer: Mutex<LeaderBalancer>,
    replica_checker: Mutex<ReplicaChecker>,
    /// The cluster's lock waits, for deadlocks that span KV nodes.
    pub(crate) deadlocks: Mutex<WaitForGraph>,
    /// The oldest snapshot of each SQL node, which the GC safe point waits for.
    pub(crate) snapshots: Mutex<SnapshotsInUse>,
}

/// A region's id, its leader peer as last recorded, and its peers as (peer, store).
type RegionLeaders = (u64, u64, Vec<(u64, u64)>);

impl PdService {
    /// Opens the placement driver whose state lives in `dir` and starts its member of the
    /// placement drivers' Raft group.
    pub fn open(dir: &Path, config: PdConfig) -> Result<Arc<PdService>, PdError> {
        let members = if config.members.is_empty() {
            vec![(config.id, String::new())]
        } else {
            config.members.clone()
        };
        let group = Group::open(dir, config.id, members, config.security.clone())?;
        let service = Arc::new(PdService {
            group,
            tso: RwLock::new(None),
            changing: tokio::sync::Mutex::new(()),
            reserved_ids: Mutex::new(0..0),
            liveness: Mutex::new(HashMap::new()),
            leaders: Mutex::new(HashMap::new()),
            replicas: config.replicas.max(1),
            max_store_down: config.max_store_down,
            leader_since: Mutex::new(Instant::now()),
            balancer: Mutex::new(LeaderBalancer::default()),
            replica_checker: Mutex::new(ReplicaChecker::default()),
            deadlocks: Mutex::new(WaitForGraph::with_ttl(DEADLOCK_WAIT_TTL)),
            snapshots: Mutex::new(SnapshotsInUse::default()),
        });
        let weak = Arc::downgrade(&service);
        std::thread::Builder::new()
            .name("pd-leader".into())
            .spawn(move || lead(weak))?;
        Ok(service)
    }

    pub(crate) fn region_to_pb(&self, region: &RegionRecord) -> pb::GetRegionResponse {
        let leader = match self.leaders.lock().get(&region.id) {
            Some(&(peer, _)) => peer,
            None => region.leader_peer_id,
        };
        region_to_pb(region, leader)
    }

    /// The tonic service to add to a server.
    pub fn into_server(self: Arc<Self>) -> pd_server::PdServer<Handler> {
        pd_server::PdServer::new(Handler(self))
            .max_decoding_message_size(strata_proto::MAX_MESSAGE_BYTES)
            .max_encoding_message_size(strata_proto::MAX_MESSAGE_BYTES)
    }

    /// The metadata as applied here.
    pub(crate) fn meta(&self) -> parking_lot::MappedMutexGuard<'_, ClusterMeta> {
        parking_lot::MutexGuard::map(self.group.state(), |state| &mut state.meta)
    }

    /// The answer of a member that does not serve: UNAVAILABLE, naming the leader it knows.
    pub(crate) fn not_leader(&self, role: Role) -> Status {
        let mut status = Status::unavailable(format!(
            "placement driver {} does not serve (leader: {})",
            self.group.id(),
            role.leader_id
        ));
        if role.leader_id != self.group.id() {
            if let Some(address) = self.group.address_of(role.leader_id) {
                if let Ok(value) = address.parse() {
                    status.metadata_mut().insert(PD_LEADER_HEADER, value);
                }
            }
        }
        status
    }

    /// Fails unless this member leads with everything earlier leaders committed applied.
    pub(crate) fn lead(&self) -> Result<(), Status> {
        let role = self.group.role();
        if role.ready {
            Ok(())
        } else {
            Err(self.not_leader(role))
        }
    }

    fn propose_failed(&self, failure: ProposeFailure) -> Status {
        match failure {
            ProposeFailure::NotLeader => self.not_leader(self.group.role()),
            other => Status::unavailable(other.to_string()),
        }
    }

    /// Applies `change` to the metadata and replicates the result before anyone sees it.
    pub(crate) async fn change<T>(
        &self,
        change: impl FnOnce(&mut ClusterMeta) -> T,
    ) -> Result<T, Status> {
        let _changing = self.changing.lock().await;
        self.lead()?;
        let mut next = self.meta().clone();
        let out = change(&mut next);
        if next != *self.meta() {
            self.group
                .propose(&Command::Meta(next))
                .await
                .map_err(|e| self.propose_failed(e))?;
        }
        Ok(out)
    }

    /// A fresh id from the reserved ones, `None` when they ran out.
    fn take_reserved_id(&self) -> Option<u64> {
        let mut reserved = self.reserved_ids.lock();
        let id = reserved.next()?;
        Some(id)
    }

    /// Reserves the next [`ID_RESERVE_BATCH`] ids (through the log, so that no later leader
    /// hands them out again).
    async fn reserve_ids(&self) -> Result<(), Status> {
        let end = self
            .change(|meta| {
                meta.last_id += ID_RESERVE_BATCH;
                meta.last_id + 1
            })
            .await?;
        *self.reserved_ids.lock() = end - ID_RESERVE_BATCH..end;
        Ok(())
    }

    pub(crate) async fn alloc_id(&self) -> Result<u64, Status> {
        loop {
            if let Some(id) = self.take_reserved_id() {
                return Ok(id);
            }
            self.reserve_ids().await?;
        }
    }

    /// Prepares this member to serve as the leader of `term`: forgets the soft state of any
    /// earlier leadership and replicates a timestamp limit above everything issued before.
    fn start_leading(&self, term: u64) -> Result<(), ProposeFailure> {
        *self.tso.write() = None;
        self.liveness.lock().clear();
        self.leaders.lock().clear();
        *self.deadlocks.lock() = WaitForGraph::with_ttl(DEADLOCK_WAIT_TTL);
        *self.balancer.lock() = LeaderBalancer::default();
        *self.replica_checker.lock() = ReplicaChecker::default();
        *self.leader_since.lock() = Instant::now();
        // Earlier leaders issued below the committed limit.
        let floor = self.group.state().tso_limit_ms;
        let window = TsoWindow::new(SystemClock, floor, 0);
        let limit = window.next_physical_ms() + TSO_SAVE_INTERVAL_MS;
        self.group.propose_blocking(&Command::TsoLimit(limit))?;
        window.raise(limit);
        *self.tso.write() = Some((term, Arc::new(window)));
        info!(
            term,
            "placement driver leads; timestamps start above {floor} ms"
        );
        Ok(())
    }

    /// Issues `count` consecutive timestamps (clamped to [`TSO_MAX_BATCH`]), if this member
    /// leads and holds the lease.
    // Hot path: every timestamp batch of every SQL node.
    pub(crate) fn issue_tso(&self, count: u32) -> Result<pb::TsoResponse, Status> {
        let count = count.clamp(1, TSO_MAX_BATCH);
        let role = self.group.role();
        let window = match &*self.tso.read() {
            Some((term, window)) if *term == role.term && role.holds_lease() => window.clone(),
            _ => return Err(self.not_leader(role)),
        };
        let last = window
            .issue(count)
            .map_err(|_| Status::unavailable("the timestamp limit is being raised"))?;
        crate::metrics::METRICS.tso_requests.inc();
        crate::metrics::METRICS.timestamps.inc_by(u64::from(count));
        Ok(pb::TsoResponse {
            last: last.0,
            count,
        })
    }

    /// Sets the gauges of `/metrics`: whether this member leads and, as its applied metadata
    /// says, the stores, regions, leaders per store and the GC safe point.
    pub fn refresh_metrics(&self) {
        let metrics = &crate::metrics::METRICS;
        metrics.leading.set(i64::from(self.group.role().ready));
        // (region, reported leader peer, peers by store), taken without holding two locks.
        let (store_ids, regions, safe_point) = {
            let meta = self.meta();
            let ids: Vec<u64> = meta.stores.keys().copied().collect();
            let regions: Vec<RegionLeaders> = meta
                .regions
                .values()
                .map(|r| {
                    let peers = r.peers.iter().map(|p| (p.id, p.store_id)).collect();
                    (r.id, r.leader_peer_id, peers)
                })
                .collect();
            (ids, regions, meta.gc_safe_point)
        };
        let (mut up, mut down) = (0, 0);
        {
            let liveness = self.liveness.lock();
            for id in &store_ids {
                match liveness.get(id) {
                    Some(l) if l.last_heartbeat.elapsed() < STORE_UP_WITHIN => up += 1,
                    _ => down += 1,
                }
            }
        }
        metrics.stores.with_label_values(&["up"]).set(up);
        metrics.stores.with_label_values(&["down"]).set(down);
        metrics.regions.set(regions.len() as i64);
        let mut per_store: HashMap<u64, i64> = store_ids.iter().map(|id| (*id, 0)).collect();
        {
            let leaders = self.leaders.lock();
            for (id, reported, peers) in &regions {
                let peer = leaders.get(id).map_or(*reported, |(peer, _)| *peer);
                if let Some((_, store)) = peers.iter().find(|(p, _)| *p == peer) {
                    *per_store.entry(*store).or_default() += 1;
                }
            }
        }
        for (store, count) in per_store {
            metrics
                .leaders
                .with_label_values(&[&store.to_string()])
                .set(count);
        }
        metrics
            .gc_safe_point_ms
            .set(Timestamp(safe_point).physical_ms() as i64);
    }

    /// Keeps the replicated timestamp limit ahead of the timestamps issued.
    fn keep_tso_ahead(&self) {
        let role = self.group.role();
        let Some((term, window)) = self.tso.read().clone() else {
            return;
        };
        if term != role.term || !role.ready {
            return;
        }
        let next = window.next_physical_ms();
        if next + TSO_SAVE_INTERVAL_MS / 2 < window.limit_ms() {
            return;
        }
        let limit = next + TSO_SAVE_INTERVAL_MS;
        match self.group.propose_blocking(&Command::TsoLimit(limit)) {
            Ok(()) => window.raise(limit),
            Err(e) => warn!(error = %e, "raising the timestamp limit failed"),
        }
    }
}

/// The thread that prepares this member when it becomes leader and keeps the timestamp limit
/// ahead; it ends with the service.
fn lead(service: Weak<PdService>) {
    // The service is held only while there is work, so that dropping it stops this thread.
    let Some(leading) = service.upgrade().map(|s| s.group.leading().clone()) else {
        return;
    };
    // The term this member last prepared to lead in; decided from the role, not from the
    // wake-ups, so that none is missed.
    let mut prepared = 0;
    loop {
        match leading.recv_timeout(TSO_CHECK_INTERVAL) {
            Ok(_) | Err(crossbeam::channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam::channel::RecvTimeoutError::Disconnected) => return,
        }
        let Some(service) = service.upgrade() else {
            return;
        };
        let role = service.group.role();
        if role.ready && role.term != prepared {
            match service.start_leading(role.term) {
                Ok(()) => prepared = role.term,
                Err(e) => warn!(term = role.term, error = %e, "preparing to lead failed; retrying"),
            }
        }
        service.keep_tso_ahead();
    }
}

impl PdService {
    /// The store each region's leader is on, for the regions whose leader is known.
    fn leader_stores(&self, meta: &ClusterMeta) -> HashMap<u64, u64> {
        let leaders = self.leaders.lock();
        meta.regions
            .values()
            .filter_map(|r| {
                let &(peer, _) = leaders.get(&r.id)?;
                let store = r.peers.iter().find(|p| p.id == peer)?.store_id;
                Some((r.id, store))
            })
            .collect()
    }

    /// The membership change `region` needs, if a store holding one of its peers has been
    /// down too long or it has too few peers.
    pub(crate) async fn replica_operator(
        &self,
        region_id: u64,
    ) -> Result<Option<Operator>, Status> {
        let (region, stores) = {
            let meta = self.meta();
            let Some(region) = meta.region_by_id(region_id).cloned() else {
                return Ok(None);
            };
            let liveness = self.liveness.lock();
            let leading_for = self.leader_since.lock().elapsed();
            let stores: Vec<StoreView> = meta
                .stores
                .keys()
                .map(|&id| {
                    let live = liveness.get(&id);
                    // A store not heard of since this placement driver started leading has
                    // been down at least that long.
                    let silent = live.map_or(leading_for, |l| l.last_heartbeat.elapsed());
                    StoreView {
                        id,
                        up: silent < STORE_UP_WITHIN,
                        down_too_long: silent > self.max_store_down,
                        regions: live.map_or(0, |l| l.region_count),
                    }
                })
                .collect();
            (region, stores)
        };
        let mut out_of_ids = false;
        let operator = self
            .replica_checker
            .lock()
            .check(&region, self.replicas, &stores, || {
                let id = self.take_reserved_id();
                out_of_ids = id.is_none();
                id
            });
        if out_of_ids {
            // The next heartbeat of the region finds ids.
            self.reserve_ids().await?;
        }
        Ok(operator)
    }

    /// The store `region`'s leader should move to, if leaders are out of balance.
    /// A move an operator asked for goes first, at once.
    pub(crate) fn balance(&self, region_id: u64, leader_peer_id: u64) -> Option<u64> {
        let meta = self.meta();
        let region = meta.region_by_id(region_id)?;
        let leader_store = region
            .peers
            .iter()
            .find(|p| p.id == leader_peer_id)?
            .store_id;
        let up: std::collections::HashSet<u64> = self
            .liveness
            .lock()
            .iter()
            .filter(|(_, l)| l.last_heartbeat.elapsed() < STORE_UP_WITHIN)
            .map(|(&id, _)| id)
            .collect();
        let mut balancer = self.balancer.lock();
        if let Some(target) = balancer.requested(region, leader_store, &up) {
            return Some(target);
        }
        if self.leader_since.lock().elapsed() < BALANCE_GRACE {
            return None;
        }
        let leader_stores = self.leader_stores(&meta);
        balancer.decide(region, leader_store, &leader_stores, &up)
    }
}

/// A fresh cluster id: the time in seconds above, random bits below (as TiDB's PD makes
/// them), never 0.
fn region_to_pb(region: &RegionRecord, leader_peer_id: u64) -> pb::GetRegionResponse {
    let peer = |p: &PeerRecord| pb::Peer {
        id: p.id,
        store_id: p.store_id,
    };
    pb::GetRegionResponse {
        region: Some(pb::Region {
            id: region.id,
            start_key: region.start_key.clone(),
            end_key: region.end_key.clone(),
            epoch: Some(RegionEpoch {
                conf_ver: region.conf_ver,
                version: region.version,
            }),
            peers: region.peers.iter().map(peer).collect(),
        }),
        leader: region
            .peers
            .iter()
            .find(|p| p.id == leader_peer_id)
            .map(peer),
    }
}
