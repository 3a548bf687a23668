//! The placement driver's gRPC face: each call of the `Pd` service checked and answered by the
//! [`PdService`] behind it (see `server.rs`).

use std::sync::Arc;
use std::time::Instant;

use strata_proto::pd::{self as pb, pd_server};
use strata_types::Timestamp;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};
use tracing::info;

use crate::gc::{gc_safe_point, SNAPSHOT_REPORT_GRACE};
use crate::meta::{PeerRecord, RegionRecord, StoreRecord};
use crate::schedule::Operator;
use crate::server::{PdService, StoreLiveness, SCAN_REGIONS_MAX, TSO_STREAM_ANSWERS_QUEUED};

fn new_cluster_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    ((seconds << 32) | (random & 0xFFFF_FFFF)).max(1)
}

fn region_from_pb(region: &pb::Region) -> RegionRecord {
    let epoch = region.epoch.unwrap_or_default();
    RegionRecord {
        id: region.id,
        start_key: region.start_key.clone(),
        end_key: region.end_key.clone(),
        conf_ver: epoch.conf_ver,
        version: epoch.version,
        peers: region
            .peers
            .iter()
            .map(|p| PeerRecord {
                id: p.id,
                store_id: p.store_id,
            })
            .collect(),
        leader_peer_id: 0,
    }
}

/// Refuses a safe point request whose floors lie beyond the timestamps issued: honest callers
/// derive them from a timestamp they were given, and a safe point moved past every timestamp
/// would break every snapshot for good.
fn check_floors(
    issued: Timestamp,
    life_floor: Timestamp,
    wait_floor: Timestamp,
) -> Result<(), Status> {
    if life_floor > issued || wait_floor > issued {
        return Err(Status::invalid_argument(format!(
            "garbage collection floors ({}, {}) lie beyond the last timestamp issued ({})",
            life_floor.0, wait_floor.0, issued.0
        )));
    }
    Ok(())
}

/// The gRPC face of a [`PdService`].
pub struct Handler(pub(crate) Arc<PdService>);

#[tonic::async_trait]
impl pd_server::Pd for Handler {
    async fn tso(
        &self,
        request: Request<pb::TsoRequest>,
    ) -> Result<Response<pb::TsoResponse>, Status> {
        self.0
            .issue_tso(request.into_inner().count)
            .map(Response::new)
    }

    type TsoStreamStream = ReceiverStream<Result<pb::TsoResponse, Status>>;

    async fn tso_stream(
        &self,
        request: Request<tonic::Streaming<pb::TsoRequest>>,
    ) -> Result<Response<Self::TsoStreamStream>, Status> {
        let mut incoming = request.into_inner();
        let (answers, stream) = tokio::sync::mpsc::channel(TSO_STREAM_ANSWERS_QUEUED);
        let service = self.0.clone();
        tokio::spawn(async move {
            while let Ok(Some(request)) = incoming.message().await {
                let answer = service.issue_tso(request.count);
                let failed = answer.is_err();
                if answers.send(answer).await.is_err() || failed {
                    break;
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(stream)))
    }

    async fn alloc_id(
        &self,
        _: Request<pb::AllocIdRequest>,
    ) -> Result<Response<pb::AllocIdResponse>, Status> {
        let id = self.0.alloc_id().await?;
        Ok(Response::new(pb::AllocIdResponse { id }))
    }

    async fn put_store(
        &self,
        request: Request<pb::PutStoreRequest>,
    ) -> Result<Response<pb::PutStoreResponse>, Status> {
        let request = request.into_inner();
        let store = request
            .store
            .ok_or_else(|| Status::invalid_argument("store missing"))?;
        if store.id == 0 || store.address.is_empty() {
            return Err(Status::invalid_argument(
                "a store needs an id and an address",
            ));
        }
        let replicas = self.0.replicas;
        let (bootstrapped, cluster_id) = self
            .0
            .change(|meta| {
                if request.cluster_id != 0 && request.cluster_id != meta.cluster_id {
                    return Err(Status::failed_precondition(format!(
                        "store {} at {} holds data of cluster {}, and these placement drivers \
                         lead cluster {}: a store joins only its own cluster",
                        store.id,
                        store.address,
                        request.cluster_id,
                        if meta.cluster_id == 0 {
                            "none yet".to_string()
                        } else {
                            meta.cluster_id.to_string()
                        }
                    )));
                }
                if meta.cluster_id == 0 {
                    meta.cluster_id = new_cluster_id();
                }
                if let Some(other) = meta
                    .stores
                    .values()
                    .find(|s| s.address == store.address && s.id != store.id)
                {
                    return Err(Status::already_exists(format!(
                        "address {} belongs to store {}",
                        store.address, other.id
                    )));
                }
                meta.stores.insert(
                    store.id,
                    StoreRecord {
                        id: store.id,
                        address: store.address.clone(),
                    },
                );
                if !meta.regions.is_empty() || meta.stores.len() < replicas {
                    return Ok((false, meta.cluster_id));
                }
                let region_id = meta.alloc_id();
                let store_ids: Vec<u64> = meta.stores.keys().copied().take(replicas).collect();
                let peers: Vec<PeerRecord> = store_ids
                    .into_iter()
                    .map(|store_id| PeerRecord {
                        id: meta.alloc_id(),
                        store_id,
                    })
                    .collect();
                meta.regions.insert(
                    Vec::new(),
                    RegionRecord {
                        id: region_id,
                        start_key: Vec::new(),
                        end_key: Vec::new(),
                        conf_ver: 1,
                        version: 1,
                        leader_peer_id: peers[0].id,
                        peers,
                    },
                );
                Ok((true, meta.cluster_id))
            })
            .await??;
        info!(
            store = store.id,
            address = %store.address,
            bootstrapped,
            cluster_id,
            "store registered"
        );
        self.0.liveness.lock().insert(
            store.id,
            StoreLiveness {
                last_heartbeat: Instant::now(),
                region_count: 0,
            },
        );
        Ok(Response::new(pb::PutStoreResponse {
            bootstrapped,
            cluster_id,
        }))
    }

    async fn store_heartbeat(
        &self,
        request: Request<pb::StoreHeartbeatRequest>,
    ) -> Result<Response<pb::StoreHeartbeatResponse>, Status> {
        let heartbeat = request.into_inner();
        self.0.lead()?;
        if !self.0.meta().stores.contains_key(&heartbeat.store_id) {
            return Err(Status::not_found(format!(
                "store {} is not registered",
                heartbeat.store_id
            )));
        }
        self.0.liveness.lock().insert(
            heartbeat.store_id,
            StoreLiveness {
                last_heartbeat: Instant::now(),
                region_count: heartbeat.region_count,
            },
        );
        Ok(Response::new(pb::StoreHeartbeatResponse {}))
    }

    async fn region_heartbeat(
        &self,
        request: Request<pb::RegionHeartbeatRequest>,
    ) -> Result<Response<pb::RegionHeartbeatResponse>, Status> {
        let report = request.into_inner();
        self.0.lead()?;
        if let Some(region) = &report.region {
            let record = region_from_pb(region);
            let newer = self.0.meta().region_by_id(record.id).is_none_or(|known| {
                (known.version, known.conf_ver) < (record.version, record.conf_ver)
            });
            if newer && self.0.change(|meta| meta.update_region(record)).await? {
                info!(region = region.id, "region range learnt from its leader");
            }
        }
        let known = self
            .0
            .meta()
            .region_by_id(report.region_id)
            .is_some_and(|r| r.peers.iter().any(|p| p.id == report.leader_peer_id));
        if !known {
            return Err(Status::not_found(format!(
                "region {} has no peer {}",
                report.region_id, report.leader_peer_id
            )));
        }
        {
            let mut leaders = self.0.leaders.lock();
            let entry = leaders.entry(report.region_id).or_insert((0, 0));
            if report.term >= entry.1 {
                if entry.0 != report.leader_peer_id {
                    info!(
                        region = report.region_id,
                        leader = report.leader_peer_id,
                        term = report.term,
                        "region leader changed"
                    );
                }
                *entry = (report.leader_peer_id, report.term);
            }
        }
        let peer = |p: PeerRecord| pb::Peer {
            id: p.id,
            store_id: p.store_id,
        };
        match self.0.replica_operator(report.region_id).await? {
            Some(Operator::Add(p)) => {
                info!(
                    region = report.region_id,
                    peer = p.id,
                    store = p.store_id,
                    "adding a replica"
                );
                return Ok(Response::new(pb::RegionHeartbeatResponse {
                    add_peer: Some(peer(p)),
                    ..Default::default()
                }));
            }
            Some(Operator::Remove(p)) => {
                info!(
                    region = report.region_id,
                    peer = p.id,
                    store = p.store_id,
                    "removing a replica from a store down too long"
                );
                return Ok(Response::new(pb::RegionHeartbeatResponse {
                    remove_peer: Some(peer(p)),
                    ..Default::default()
                }));
            }
            None => {}
        }
        let transfer_leader_to_store = self
            .0
            .balance(report.region_id, report.leader_peer_id)
            .unwrap_or(0);
        if transfer_leader_to_store != 0 {
            info!(
                region = report.region_id,
                to_store = transfer_leader_to_store,
                "balancing leaders: moving a region's leader"
            );
        }
        Ok(Response::new(pb::RegionHeartbeatResponse {
            transfer_leader_to_store,
            ..Default::default()
        }))
    }

    async fn wait_for(
        &self,
        request: Request<pb::WaitForRequest>,
    ) -> Result<Response<pb::WaitForResponse>, Status> {
        let r = request.into_inner();
        self.0.lead()?;
        let recorded =
            self.0
                .deadlocks
                .lock()
                .wait(Timestamp(r.waiter), Timestamp(r.blocker), Instant::now());
        Ok(Response::new(pb::WaitForResponse {
            deadlock: !recorded,
        }))
    }

    async fn wait_ended(
        &self,
        request: Request<pb::WaitEndedRequest>,
    ) -> Result<Response<pb::WaitEndedResponse>, Status> {
        let waiter = Timestamp(request.into_inner().waiter);
        self.0.lead()?;
        self.0.deadlocks.lock().remove(waiter);
        Ok(Response::new(pb::WaitEndedResponse {}))
    }

    async fn report_snapshots(
        &self,
        request: Request<pb::ReportSnapshotsRequest>,
    ) -> Result<Response<pb::ReportSnapshotsResponse>, Status> {
        let r = request.into_inner();
        self.0.lead()?;
        let oldest = (r.oldest_start_ts > 0).then_some(Timestamp(r.oldest_start_ts));
        self.0
            .snapshots
            .lock()
            .report(r.sql_node, oldest, Instant::now());
        Ok(Response::new(pb::ReportSnapshotsResponse {}))
    }

    async fn transfer_leader(
        &self,
        request: Request<pb::TransferLeaderRequest>,
    ) -> Result<Response<pb::TransferLeaderResponse>, Status> {
        let r = request.into_inner();
        self.0.lead()?;
        let known = self
            .0
            .meta()
            .region_by_id(r.region_id)
            .is_some_and(|region| region.peers.iter().any(|p| p.store_id == r.to_store_id));
        if !known {
            return Err(Status::not_found(format!(
                "region {} has no peer on store {}",
                r.region_id, r.to_store_id
            )));
        }
        info!(
            region = r.region_id,
            to_store = r.to_store_id,
            "leader transfer asked for"
        );
        self.0.balancer.lock().request(r.region_id, r.to_store_id);
        Ok(Response::new(pb::TransferLeaderResponse {}))
    }

    async fn advance_gc_safe_point(
        &self,
        request: Request<pb::AdvanceGcSafePointRequest>,
    ) -> Result<Response<pb::GcSafePointResponse>, Status> {
        let r = request.into_inner();
        self.0.lead()?;
        let issued = match &*self.0.tso.read() {
            Some((_, window)) => window.last_issued(),
            None => return Err(self.0.not_leader(self.0.group.role())),
        };
        check_floors(issued, Timestamp(r.life_floor), Timestamp(r.wait_floor))?;
        // A member that just started leading has not heard every SQL node's report yet: until
        // it has, the safe point stays where it is.
        let candidate = if self.0.leader_since.lock().elapsed() < SNAPSHOT_REPORT_GRACE {
            Timestamp::ZERO
        } else {
            let oldest = self.0.snapshots.lock().oldest(Instant::now());
            gc_safe_point(Timestamp(r.life_floor), Timestamp(r.wait_floor), oldest)
        };
        let safe_point = self
            .0
            .change(|meta| {
                meta.gc_safe_point = meta.gc_safe_point.max(candidate.0);
                meta.gc_safe_point
            })
            .await?;
        Ok(Response::new(pb::GcSafePointResponse { safe_point }))
    }

    async fn get_gc_safe_point(
        &self,
        _request: Request<pb::GetGcSafePointRequest>,
    ) -> Result<Response<pb::GcSafePointResponse>, Status> {
        self.0.lead()?;
        Ok(Response::new(pb::GcSafePointResponse {
            safe_point: self.0.meta().gc_safe_point,
        }))
    }

    async fn ask_split(
        &self,
        request: Request<pb::AskSplitRequest>,
    ) -> Result<Response<pb::AskSplitResponse>, Status> {
        let region_id = request.into_inner().region_id;
        let (new_region_id, new_peer_ids) = self
            .0
            .change(|meta| {
                let peers = meta
                    .region_by_id(region_id)
                    .map(|r| r.peers.len())
                    .ok_or_else(|| Status::not_found(format!("region {region_id} unknown")))?;
                let new_region_id = meta.alloc_id();
                let new_peer_ids = (0..peers).map(|_| meta.alloc_id()).collect();
                Ok::<_, Status>((new_region_id, new_peer_ids))
            })
            .await??;
        Ok(Response::new(pb::AskSplitResponse {
            new_region_id,
            new_peer_ids,
        }))
    }

    async fn report_split(
        &self,
        request: Request<pb::ReportSplitRequest>,
    ) -> Result<Response<pb::ReportSplitResponse>, Status> {
        let report = request.into_inner();
        let (Some(left), Some(right)) = (&report.left, &report.right) else {
            return Err(Status::invalid_argument(
                "a split report needs both regions",
            ));
        };
        let (left, mut right) = (region_from_pb(left), region_from_pb(right));
        // The split-off region's first leader is the peer next to the region's leader: it
        // campaigns at once.
        let leader_store = self
            .0
            .leaders
            .lock()
            .get(&left.id)
            .and_then(|&(peer, _)| left.peers.iter().find(|p| p.id == peer))
            .map(|p| p.store_id);
        if let Some(peer) = right
            .peers
            .iter()
            .find(|p| Some(p.store_id) == leader_store)
        {
            right.leader_peer_id = peer.id;
        }
        let (left_id, right_id) = (left.id, right.id);
        let changed = self
            .0
            .change(|meta| meta.update_region(left) | meta.update_region(right))
            .await?;
        if changed {
            info!(
                region = left_id,
                new_region = right_id,
                "region split recorded"
            );
        }
        Ok(Response::new(pb::ReportSplitResponse {}))
    }

    async fn get_store(
        &self,
        request: Request<pb::GetStoreRequest>,
    ) -> Result<Response<pb::GetStoreResponse>, Status> {
        let id = request.into_inner().store_id;
        self.0.lead()?;
        let meta = self.0.meta();
        let store = meta
            .stores
            .get(&id)
            .ok_or_else(|| Status::not_found(format!("store {id} is not registered")))?;
        Ok(Response::new(pb::GetStoreResponse {
            store: Some(pb::Store {
                id: store.id,
                address: store.address.clone(),
            }),
        }))
    }

    async fn get_all_stores(
        &self,
        _: Request<pb::GetAllStoresRequest>,
    ) -> Result<Response<pb::GetAllStoresResponse>, Status> {
        self.0.lead()?;
        let meta = self.0.meta();
        let liveness = self.0.liveness.lock();
        let stores = meta
            .stores
            .values()
            .map(|s| {
                let live = liveness.get(&s.id);
                pb::StoreState {
                    store: Some(pb::Store {
                        id: s.id,
                        address: s.address.clone(),
                    }),
                    since_heartbeat_ms: live
                        .map_or(u64::MAX, |l| l.last_heartbeat.elapsed().as_millis() as u64),
                    region_count: live.map_or(0, |l| l.region_count),
                }
            })
            .collect();
        Ok(Response::new(pb::GetAllStoresResponse { stores }))
    }

    async fn get_region(
        &self,
        request: Request<pb::GetRegionRequest>,
    ) -> Result<Response<pb::GetRegionResponse>, Status> {
        let key = request.into_inner().key;
        self.0.lead()?;
        let meta = self.0.meta();
        Ok(Response::new(
            meta.region_of(&key)
                .map(|r| self.0.region_to_pb(r))
                .unwrap_or_default(),
        ))
    }

    async fn get_region_by_id(
        &self,
        request: Request<pb::GetRegionByIdRequest>,
    ) -> Result<Response<pb::GetRegionResponse>, Status> {
        let id = request.into_inner().region_id;
        self.0.lead()?;
        let meta = self.0.meta();
        Ok(Response::new(
            meta.region_by_id(id)
                .map(|r| self.0.region_to_pb(r))
                .unwrap_or_default(),
        ))
    }

    async fn scan_regions(
        &self,
        request: Request<pb::ScanRegionsRequest>,
    ) -> Result<Response<pb::ScanRegionsResponse>, Status> {
        let scan = request.into_inner();
        let limit = (scan.limit as usize).clamp(1, SCAN_REGIONS_MAX);
        self.0.lead()?;
        let meta = self.0.meta();
        let regions = meta
            .scan_regions(&scan.start_key, &scan.end_key, limit)
            .into_iter()
            .map(|r| self.0.region_to_pb(r))
            .collect();
        Ok(Response::new(pb::ScanRegionsResponse { regions }))
    }

    async fn raft(
        &self,
        request: Request<pb::PdRaftRequest>,
    ) -> Result<Response<pb::PdRaftResponse>, Status> {
        for message in request.into_inner().messages {
            self.0.group.deliver(&message);
        }
        Ok(Response::new(pb::PdRaftResponse {}))
    }

    async fn get_members(
        &self,
        _: Request<pb::GetMembersRequest>,
    ) -> Result<Response<pb::GetMembersResponse>, Status> {
        let group = &self.0.group;
        Ok(Response::new(pb::GetMembersResponse {
            leader_id: group.role().leader_id,
            members: group
                .members()
                .iter()
                .map(|(id, address)| pb::PdMember {
                    id: *id,
                    address: address.clone(),
                })
                .collect(),
            id: group.id(),
        }))
    }
}
