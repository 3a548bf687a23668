//! The placement driver's client, used by SQL nodes (timestamps, regions, stores) and KV nodes
//! (registration, heartbeats). Its methods block the calling thread or fiber
//! ([`strata_fiber::block_on`]): the callers are the connection fibers of the SQL layer and the
//! KV node's background threads, never tasks of an async runtime. The RPCs run on the client's
//! runtime (its own small one, or the SQL node's fiber thread), which other RPC clients of the
//! process share through [`PdClient::runtime`].
//!
//! Timestamps are batched: callers queue on a channel and one task sends one request for all
//! of them, so a thousand concurrent transactions cost one round trip per batch.
//!
//! A cluster may run several placement drivers, of which one leads and serves. The client
//! takes all their addresses, sends to the one it believes leads, and on an answer naming
//! another leader (or no answer) moves on, until the call's [`PD_REQUEST_TIMEOUT`] runs out.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use strata_proto::pd::{self as pb, pd_client::PdClient as RawClient};
pub use strata_proto::security::Security;
use strata_types::Timestamp;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot};
use tonic::transport::Channel;

use crate::{PdError, TimestampOracle};

/// How long to wait for a connection to the placement driver.
pub const PD_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long one request to the placement driver may take, moves between members included.
pub const PD_REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one try at one member may take before the client tries the next.
pub const PD_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(1);
/// The pause after every member was tried without success (e.g. during an election).
pub const PD_RETRY_BACKOFF: Duration = Duration::from_millis(100);
/// Callers that may wait for a timestamp at once; more wait for room in the queue.
pub const TSO_QUEUE_CAPACITY: usize = 8192;
/// The most callers served by one timestamp request.
pub const TSO_BATCH_MAX: usize = 4096;
/// Worker threads of the runtime that carries a process's RPCs. One: the callers block on their
/// own threads and the runtime only moves bytes, and on a small machine a second worker mostly
/// adds wake-ups and context switches (one measured +15% point selects and updates on a 2-core
/// cluster).
pub const RPC_RUNTIME_THREADS: usize = 1;

type TsoWaiter = oneshot::Sender<Result<Timestamp, PdError>>;

/// A connection to the placement driver.
#[derive(Clone)]
pub struct PdClient {
    runtime: Handle,
    /// The runtime the client made for itself, if it was given none.
    _own_runtime: Option<Arc<OwnRuntime>>,
    members: Arc<Members>,
    tso_queue: mpsc::Sender<TsoWaiter>,
    security: Security,
}

/// A runtime that a client made for itself. The last clone of the client may go with a task of
/// that very runtime (one that held a clone and ended as the process stopped), where a runtime
/// may not wait for its threads: it is then shut down without waiting.
struct OwnRuntime(Option<tokio::runtime::Runtime>);

impl Drop for OwnRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            if Handle::try_current().is_ok() {
                runtime.shutdown_background();
            }
        }
    }
}

/// The placement drivers a client knows, and which of them it believes leads.
struct Members {
    addresses: Vec<String>,
    clients: Vec<RawClient<Channel>>,
    leader: AtomicUsize,
}

impl Members {
    /// The member believed to lead.
    fn current(&self) -> usize {
        self.leader.load(Ordering::Relaxed) % self.clients.len()
    }

    /// Moves on from member `tried` after a failure: to the leader `status` names, or to the
    /// next member. Returns whether a member named another leader (worth trying at once).
    fn move_on(&self, tried: usize, status: Option<&tonic::Status>) -> bool {
        let hint = status
            .and_then(|s| s.metadata().get(crate::PD_LEADER_HEADER))
            .and_then(|v| v.to_str().ok())
            .and_then(|a| self.addresses.iter().position(|m| m == a));
        let next = hint.unwrap_or((tried + 1) % self.clients.len());
        let _ = self
            .leader
            .compare_exchange(tried, next, Ordering::Relaxed, Ordering::Relaxed);
        hint.is_some_and(|h| h != tried)
    }

    /// Runs `call` against the leader, following the members' hints, until it succeeds, fails
    /// for a reason other than leadership or reachability, or [`PD_REQUEST_TIMEOUT`] passes.
    async fn call<T, F>(&self, call: impl Fn(RawClient<Channel>) -> F) -> Result<T, PdError>
    where
        F: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        let mut retries = Retries::new();
        loop {
            let tried = self.current();
            let left = retries.left();
            let attempt = call(self.clients[tried].clone());
            let error = match tokio::time::timeout(left.min(PD_ATTEMPT_TIMEOUT), attempt).await {
                Ok(Ok(response)) => return Ok(response.into_inner()),
                Ok(Err(status)) if !retryable(&status) => return Err(PdError::from(status)),
                Ok(Err(status)) => {
                    if self.move_on(tried, Some(&status)) {
                        continue;
                    }
                    PdError::from(status)
                }
                Err(_) => {
                    self.move_on(tried, None);
                    PdError::Rpc("placement driver request timed out".into())
                }
            };
            retries.failed(error, self.clients.len()).await?;
        }
    }
}

/// A stream of timestamp requests to one member (see `TsoStream` in pd.proto).
struct TsoStream {
    member: usize,
    requests: mpsc::Sender<pb::TsoRequest>,
    answers: tonic::Streaming<pb::TsoResponse>,
}

/// Timestamp requests queued on a stream before the client waits (one is in flight at a time).
const TSO_STREAM_REQUESTS_QUEUED: usize = 4;

impl Members {
    /// Opens a timestamp stream to the member believed to lead.
    async fn open_tso_stream(&self) -> Result<TsoStream, tonic::Status> {
        let member = self.current();
        let (requests, outgoing) = mpsc::channel(TSO_STREAM_REQUESTS_QUEUED);
        let mut client = self.clients[member].clone();
        let answers = client
            .tso_stream(tokio_stream::wrappers::ReceiverStream::new(outgoing))
            .await?
            .into_inner();
        Ok(TsoStream {
            member,
            requests,
            answers,
        })
    }

    /// `count` consecutive timestamps (the last of them) over `stream`, opened or opened again
    /// at the leader as needed, until [`PD_REQUEST_TIMEOUT`] passes.
    async fn tso(&self, stream: &mut Option<TsoStream>, count: u32) -> Result<u64, PdError> {
        let mut retries = Retries::new();
        loop {
            let left = retries.left();
            let tried = stream.as_ref().map_or_else(|| self.current(), |s| s.member);
            let attempt = async {
                if stream.is_none() {
                    *stream = Some(self.open_tso_stream().await?);
                }
                let open = stream.as_mut().expect("opened above");
                if open.requests.send(pb::TsoRequest { count }).await.is_err() {
                    return Err(tonic::Status::unavailable("the timestamp stream closed"));
                }
                match open.answers.message().await? {
                    Some(answer) => Ok(answer),
                    None => Err(tonic::Status::unavailable("the timestamp stream ended")),
                }
            };
            let error = match tokio::time::timeout(left.min(PD_ATTEMPT_TIMEOUT), attempt).await {
                Ok(Ok(answer)) if answer.count == count => return Ok(answer.last),
                Ok(Ok(answer)) => {
                    *stream = None;
                    return Err(PdError::Rpc(format!(
                        "asked for {count} timestamps, got {}",
                        answer.count
                    )));
                }
                Ok(Err(status)) => {
                    *stream = None;
                    if !retryable(&status) {
                        return Err(PdError::from(status));
                    }
                    if self.move_on(tried, Some(&status)) {
                        continue;
                    }
                    PdError::from(status)
                }
                Err(_) => {
                    *stream = None;
                    self.move_on(tried, None);
                    PdError::Rpc("timestamp request timed out".into())
                }
            };
            retries.failed(error, self.clients.len()).await?;
        }
    }
}

/// The tries of one request: until [`PD_REQUEST_TIMEOUT`], pausing [`PD_RETRY_BACKOFF`] each
/// time every member was tried.
struct Retries {
    deadline: Instant,
    failed_in_a_row: usize,
}

impl Retries {
    fn new() -> Retries {
        Retries {
            deadline: Instant::now() + PD_REQUEST_TIMEOUT,
            failed_in_a_row: 0,
        }
    }

    /// The time left for the request.
    fn left(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Counts a failed try among `members`; gives up with `error` once the deadline passed.
    async fn failed(&mut self, error: PdError, members: usize) -> Result<(), PdError> {
        if Instant::now() >= self.deadline {
            return Err(error);
        }
        self.failed_in_a_row += 1;
        if self.failed_in_a_row.is_multiple_of(members) {
            tokio::time::sleep(PD_RETRY_BACKOFF.min(self.left())).await;
        }
        Ok(())
    }
}

/// Whether a failed call may succeed at another member or a moment later.
fn retryable(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::Unavailable
            | tonic::Code::Unknown
            | tonic::Code::Cancelled
            | tonic::Code::DeadlineExceeded
    )
}

/// Opens a lazily connected channel to `address` (host:port), TLS as `security` says; it
/// reconnects by itself.
pub fn channel(address: &str, runtime: &Handle, security: &Security) -> Result<Channel, PdError> {
    let endpoint = security
        .endpoint(address)
        .map_err(PdError::Rpc)?
        .connect_timeout(PD_CONNECT_TIMEOUT)
        .tcp_nodelay(true);
    let _guard = runtime.enter();
    Ok(endpoint.connect_lazy())
}

impl PdClient {
    /// Creates a client of the placement drivers at `addresses` (host:port, separated by
    /// commas). Nothing is sent yet.
    pub fn connect(addresses: &str) -> Result<PdClient, PdError> {
        PdClient::connect_with(addresses, Security::plain())
    }

    /// As [`PdClient::connect`], reaching the cluster as `security` says.
    pub fn connect_with(addresses: &str, security: Security) -> Result<PdClient, PdError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(RPC_RUNTIME_THREADS)
            .thread_name("rpc")
            .enable_all()
            .build()?;
        let mut client = PdClient::connect_on_with(addresses, runtime.handle().clone(), security)?;
        client._own_runtime = Some(Arc::new(OwnRuntime(Some(runtime))));
        Ok(client)
    }

    /// As [`PdClient::connect`], with the RPCs on `runtime` (which must be running).
    pub fn connect_on(addresses: &str, runtime: Handle) -> Result<PdClient, PdError> {
        PdClient::connect_on_with(addresses, runtime, Security::plain())
    }

    /// As [`PdClient::connect_on`], reaching the cluster as `security` says.
    pub fn connect_on_with(
        addresses: &str,
        runtime: Handle,
        security: Security,
    ) -> Result<PdClient, PdError> {
        let addresses: Vec<String> = addresses
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(String::from)
            .collect();
        if addresses.is_empty() {
            return Err(PdError::Rpc("no placement driver address".into()));
        }
        let clients = addresses
            .iter()
            .map(|address| {
                Ok(RawClient::new(channel(address, &runtime, &security)?)
                    .max_decoding_message_size(strata_proto::MAX_MESSAGE_BYTES))
            })
            .collect::<Result<Vec<_>, PdError>>()?;
        let members = Arc::new(Members {
            addresses,
            clients,
            leader: AtomicUsize::new(0),
        });
        let (tso_queue, receiver) = mpsc::channel(TSO_QUEUE_CAPACITY);
        runtime.spawn(serve_tso_batches(members.clone(), receiver));
        Ok(PdClient {
            runtime,
            _own_runtime: None,
            members,
            tso_queue,
            security,
        })
    }

    /// The runtime that carries this client's RPCs; other clients of the process share it.
    pub fn runtime(&self) -> &Handle {
        &self.runtime
    }

    /// How this client reaches the cluster; channels to other roles use the same.
    pub fn security(&self) -> &Security {
        &self.security
    }

    fn call<T, F>(&self, call: impl Fn(RawClient<Channel>) -> F) -> Result<T, PdError>
    where
        F: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        strata_fiber::block_on(&self.runtime, self.members.call(call))
    }

    /// The placement drivers' members and the one the answering member believes leads.
    pub fn members(&self) -> Result<pb::GetMembersResponse, PdError> {
        self.call(|mut c| async move { c.get_members(pb::GetMembersRequest {}).await })
    }

    pub fn alloc_id(&self) -> Result<u64, PdError> {
        Ok(self
            .call(|mut c| async move { c.alloc_id(pb::AllocIdRequest {}).await })?
            .id)
    }

    /// Registers (or re-registers) a store; returns whether it bootstrapped the cluster.
    /// Registers store `id` at `address` for a store without a cluster yet; true when that
    /// completed the stores the first region needs.
    pub fn put_store(&self, id: u64, address: &str) -> Result<bool, PdError> {
        Ok(self.join(id, address, 0)?.bootstrapped)
    }

    /// Registers store `id` at `address` whose data belongs to `cluster_id` (0: none yet);
    /// a store of another cluster is [`PdError::Refused`].
    pub fn join(
        &self,
        id: u64,
        address: &str,
        cluster_id: u64,
    ) -> Result<pb::PutStoreResponse, PdError> {
        let store = pb::Store {
            id,
            address: address.to_string(),
        };
        self.call(|mut c| {
            let store = store.clone();
            async move {
                c.put_store(pb::PutStoreRequest {
                    store: Some(store),
                    cluster_id,
                })
                .await
            }
        })
    }

    pub fn store_heartbeat(&self, store_id: u64, region_count: u64) -> Result<(), PdError> {
        self.call(|mut c| async move {
            c.store_heartbeat(pb::StoreHeartbeatRequest {
                store_id,
                region_count,
            })
            .await
        })?;
        Ok(())
    }

    /// Reports that `leader_peer_id` leads `region` in `term`; returns what the placement
    /// driver wants done with the region (a replica added or removed, or its leadership moved).
    pub fn region_heartbeat(
        &self,
        region: pb::Region,
        leader_peer_id: u64,
        term: u64,
    ) -> Result<pb::RegionHeartbeatResponse, PdError> {
        self.call(|mut c| {
            let region = region.clone();
            async move {
                c.region_heartbeat(pb::RegionHeartbeatRequest {
                    region_id: region.id,
                    leader_peer_id,
                    term,
                    region: Some(region),
                })
                .await
            }
        })
    }

    /// Ids for a region about to be split off `region_id`: the new region's, and one per
    /// peer of `region_id`, in the order of its peers.
    pub fn ask_split(&self, region_id: u64) -> Result<(u64, Vec<u64>), PdError> {
        let response =
            self.call(|mut c| async move { c.ask_split(pb::AskSplitRequest { region_id }).await })?;
        Ok((response.new_region_id, response.new_peer_ids))
    }

    /// Tells the cluster's deadlock detector that transaction `waiter` waits for `blocker`;
    /// returns false when that wait closes a cycle (and was not recorded).
    /// Gives up after `within`.
    pub fn wait_for(
        &self,
        waiter: Timestamp,
        blocker: Timestamp,
        within: Duration,
    ) -> Result<bool, PdError> {
        let request = pb::WaitForRequest {
            waiter: waiter.0,
            blocker: blocker.0,
        };
        let call = self
            .members
            .call(|mut c| async move { c.wait_for(request).await });
        let response = strata_fiber::block_on(&self.runtime, tokio::time::timeout(within, call))
            .map_err(|_| {
            PdError::Rpc("the deadlock detector did not answer in time".into())
        })??;
        Ok(!response.deadlock)
    }

    /// Tells the cluster's deadlock detector that transaction `waiter` no longer waits.
    pub fn wait_ended(&self, waiter: Timestamp) -> Result<(), PdError> {
        let request = pb::WaitEndedRequest { waiter: waiter.0 };
        self.call(|mut c| async move { c.wait_ended(request).await })?;
        Ok(())
    }

    /// Reports SQL node `sql_node`'s oldest open snapshot (`None`: none open), which garbage
    /// collection waits for.
    pub fn report_snapshots(
        &self,
        sql_node: u64,
        oldest: Option<Timestamp>,
    ) -> Result<(), PdError> {
        let request = pb::ReportSnapshotsRequest {
            sql_node,
            oldest_start_ts: oldest.map_or(0, |ts| ts.0),
        };
        self.call(|mut c| async move { c.report_snapshots(request).await })?;
        Ok(())
    }

    /// Advances the cluster's GC safe point (see `gc.rs`) and returns it.
    pub fn advance_gc_safe_point(
        &self,
        life_floor: Timestamp,
        wait_floor: Timestamp,
    ) -> Result<Timestamp, PdError> {
        let request = pb::AdvanceGcSafePointRequest {
            life_floor: life_floor.0,
            wait_floor: wait_floor.0,
        };
        let response = self.call(|mut c| async move { c.advance_gc_safe_point(request).await })?;
        Ok(Timestamp(response.safe_point))
    }

    /// The cluster's GC safe point.
    pub fn gc_safe_point(&self) -> Result<Timestamp, PdError> {
        let response = self
            .call(|mut c| async move { c.get_gc_safe_point(pb::GetGcSafePointRequest {}).await })?;
        Ok(Timestamp(response.safe_point))
    }

    /// Records a split that applied: `left` is the region's new range, `right` the region
    /// split off.
    pub fn report_split(&self, left: pb::Region, right: pb::Region) -> Result<(), PdError> {
        let request = pb::ReportSplitRequest {
            left: Some(left),
            right: Some(right),
        };
        self.call(|mut c| {
            let request = request.clone();
            async move { c.report_split(request).await }
        })?;
        Ok(())
    }

    /// The address of a store's KV service.
    pub fn store_address(&self, store_id: u64) -> Result<String, PdError> {
        let response =
            self.call(|mut c| async move { c.get_store(pb::GetStoreRequest { store_id }).await })?;
        response
            .store
            .map(|s| s.address)
            .ok_or_else(|| PdError::Rpc(format!("store {store_id} unknown")))
    }

    pub fn all_stores(&self) -> Result<Vec<pb::StoreState>, PdError> {
        Ok(self
            .call(|mut c| async move { c.get_all_stores(pb::GetAllStoresRequest {}).await })?
            .stores)
    }

    /// The region holding `key` and its leader; `None` before the cluster is bootstrapped.
    pub fn region_of(&self, key: &[u8]) -> Result<Option<pb::GetRegionResponse>, PdError> {
        let key = key.to_vec();
        let response = self.call(|mut c| {
            let key = key.clone();
            async move { c.get_region(pb::GetRegionRequest { key }).await }
        })?;
        Ok(response.region.is_some().then_some(response))
    }

    pub fn region_by_id(&self, region_id: u64) -> Result<Option<pb::GetRegionResponse>, PdError> {
        let response = self.call(|mut c| async move {
            c.get_region_by_id(pb::GetRegionByIdRequest { region_id })
                .await
        })?;
        Ok(response.region.is_some().then_some(response))
    }

    /// Asks that region `region_id`'s leader move to its peer on store `to_store_id`; the
    /// leader is told on its next heartbeat (within a second), and the move lapses when it
    /// cannot be made.
    pub fn transfer_leader(&self, region_id: u64, to_store_id: u64) -> Result<(), PdError> {
        self.call(|mut c| async move {
            c.transfer_leader(pb::TransferLeaderRequest {
                region_id,
                to_store_id,
            })
            .await
        })?;
        Ok(())
    }

    /// Regions overlapping `[start, end)` (empty end: to the end of the key space).
    pub fn scan_regions(
        &self,
        start: &[u8],
        end: &[u8],
        limit: u32,
    ) -> Result<Vec<pb::GetRegionResponse>, PdError> {
        let request = pb::ScanRegionsRequest {
            start_key: start.to_vec(),
            end_key: end.to_vec(),
            limit,
        };
        Ok(self
            .call(|mut c| {
                let request = request.clone();
                async move { c.scan_regions(request).await }
            })?
            .regions)
    }
}

impl TimestampOracle for PdClient {
    // Hot path: every transaction and pessimistic statement of a SQL node.
    fn get_ts(&self) -> Result<Timestamp, PdError> {
        let (sender, receiver) = oneshot::channel();
        let queue = self.tso_queue.clone();
        strata_fiber::block_on(&self.runtime, async move {
            queue
                .send(sender)
                .await
                .map_err(|_| PdError::Rpc("timestamp batcher stopped".into()))?;
            receiver
                .await
                .map_err(|_| PdError::Rpc("timestamp batcher stopped".into()))?
        })
    }
}

/// Serves queued timestamp requests, one request for everyone queued while the last one ran.
async fn serve_tso_batches(members: Arc<Members>, mut queue: mpsc::Receiver<TsoWaiter>) {
    // One long-lived stream to the leader: a unary call per batch costs an HTTP/2 stream.
    let mut stream = None;
    while let Some(first) = queue.recv().await {
        let mut waiters = vec![first];
        while waiters.len() < TSO_BATCH_MAX {
            match queue.try_recv() {
                Ok(waiter) => waiters.push(waiter),
                Err(_) => break,
            }
        }
        let count = waiters.len() as u32;
        let result = members.tso(&mut stream, count).await;
        match result {
            Ok(last) => {
                let first = last - u64::from(count) + 1;
                for (i, waiter) in waiters.into_iter().enumerate() {
                    let _ = waiter.send(Ok(Timestamp(first + i as u64)));
                }
            }
            Err(error) => {
                for waiter in waiters {
                    let _ = waiter.send(Err(error.clone()));
                }
            }
        }
    }
}

impl From<tonic::Status> for PdError {
    fn from(status: tonic::Status) -> PdError {
        match status.code() {
            tonic::Code::FailedPrecondition | tonic::Code::AlreadyExists => {
                PdError::Refused(status.message().to_string())
            }
            code => PdError::Rpc(format!("{code:?}: {}", status.message())),
        }
    }
}
