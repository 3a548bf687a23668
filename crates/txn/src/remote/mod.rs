//! [`RemoteKv`]: the KV API of a cluster, reached over gRPC.
//!
//! It keeps a region cache (key range → region id, epoch, leader's store) filled from the
//! placement driver, splits each request by region, sends every part to the region's leader,
//! and on a region error (not leader, stale epoch, region gone, key outside the region) or an
//! unreachable node drops the cached entry, backs off and retries, until
//! [`REGION_RETRY_DEADLINE`]. Transaction outcomes (locks, conflicts, deadlocks) are not
//! retried here: they go back to the [`Transaction`](crate::Transaction) as [`KvError`]s.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::time::{Duration, Instant};

use parking_lot::RwLock;
use strata_kvapi::{
    KvApi, KvError, LockInfo, PessimisticLockRequest, PrewriteRequest, PrewriteResponse,
    RegionInfo, ScanRequest, Scanned, SecondaryLocks, StoreInfo, TxnStatus,
};
use strata_pd_client::PdClient;
use strata_proto::kv::{self as pb, kv_client::KvClient};
use strata_proto::{
    key_error_from_pb, lock_info_from_pb, mutation_to_pb, secondary_locks_from_pb,
    txn_status_from_pb,
};
use strata_types::{Key, Timestamp, Value};
use tokio::sync::{mpsc, oneshot};
use tonic::transport::Channel;
use tracing::debug;

use crate::get_stream::{drive_get_stream, GetQueue, GET_STREAM_QUEUE};
use crate::region::CachedRegion;

mod scans;

/// How long a request keeps retrying region errors and unreachable nodes before it fails.
pub const REGION_RETRY_DEADLINE: Duration = Duration::from_secs(20);
/// How long one KV request may take, on top of the lock wait it asks for.
pub const KV_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
const BACKOFF_FIRST: Duration = Duration::from_millis(5);
const BACKOFF_MAX: Duration = Duration::from_millis(500);
/// Regions fetched from the placement driver in one scan when the cache misses.
const REGION_SCAN_BATCH: u32 = 64;

/// Why one attempt must be retried.
enum Retry {
    Region(pb::RegionError),
    /// The request did not reach a node.
    Unreachable(String),
    /// The request may have reached the node and been applied, but no answer came back (the
    /// connection broke or the node did not answer in time).
    Lost(String),
}

/// What one attempt at one region gave.
type Attempt<T> = Result<Result<T, KvError>, Retry>;

/// Doubles the pause between retries up to a deadline.
struct Backoff {
    next: Duration,
    until: Instant,
}

impl Backoff {
    fn new() -> Backoff {
        Backoff {
            next: BACKOFF_FIRST,
            until: Instant::now() + REGION_RETRY_DEADLINE,
        }
    }

    fn wait(&mut self, why: &Retry) -> Result<(), KvError> {
        let reason = match why {
            Retry::Region(e) => format!("{:?}", e.kind),
            Retry::Unreachable(e) | Retry::Lost(e) => e.clone(),
        };
        if Instant::now() + self.next > self.until {
            return Err(KvError::Unavailable(format!(
                "region unavailable for {}s: {reason}",
                REGION_RETRY_DEADLINE.as_secs()
            )));
        }
        debug!(%reason, pause = ?self.next, "retrying a KV request");
        strata_fiber::sleep(self.next);
        self.next = (self.next * 2).min(BACKOFF_MAX);
        Ok(())
    }
}

/// Responses that carry the KV service's error field.
trait KvResponse {
    fn take_error(&mut self) -> Option<pb::Error>;
}

macro_rules! kv_response {
    ($($t:ty),*) => {$(
        impl KvResponse for $t {
            fn take_error(&mut self) -> Option<pb::Error> {
                self.error.take()
            }
        }
    )*};
}
kv_response!(
    pb::GetResponse,
    pb::BatchGetResponse,
    pb::ScanResponse,
    pb::BatchScanResponse,
    pb::WriteResponse,
    pb::PrewriteResponse,
    pb::CheckTxnStatusResponse,
    pb::CheckSecondaryLocksResponse,
    pb::TxnHeartBeatResponse,
    pb::ScanLockResponse
);

/// A request to a region's leader, ready to run.
type Call<R> = std::pin::Pin<Box<dyn Future<Output = Attempt<R>> + Send + 'static>>;

/// An answer's key-value pairs as entries.
fn entries(pairs: Vec<pb::KvPair>) -> Vec<(Key, Value)> {
    pairs.into_iter().map(|p| (p.key, p.value)).collect()
}

/// Sorts the outcome of one request to the leader on `store`.
fn sort_response<R: KvResponse>(
    store: u64,
    response: Result<Result<tonic::Response<R>, tonic::Status>, tokio::time::error::Elapsed>,
) -> Attempt<R> {
    let mut response = match response {
        Ok(Ok(response)) => response.into_inner(),
        // A failed connection attempt never sent the request.
        Ok(Err(status)) if status.message().contains("connect error") => {
            return Err(Retry::Unreachable(format!(
                "store {store}: {}",
                status.message()
            )))
        }
        Ok(Err(status)) => {
            return Err(Retry::Lost(format!(
                "store {store}: {:?}: {}",
                status.code(),
                status.message()
            )))
        }
        Err(_) => return Err(Retry::Lost(format!("store {store} did not answer in time"))),
    };
    match response.take_error().and_then(|e| e.kind) {
        None => Ok(Ok(response)),
        Some(pb::error::Kind::Region(e)) => Err(Retry::Region(e)),
        Some(pb::error::Kind::Key(e)) => Ok(Err(key_error_from_pb(e))),
    }
}

/// The KV API over gRPC, routed by region. Point reads, the hottest request, go over one
/// long-lived connection per KV node, as many per message as are waiting, framed without
/// HTTP/2 (see `get_stream.rs`); the other requests are unary gRPC calls.
pub struct RemoteKv {
    pd: PdClient,
    runtime: tokio::runtime::Handle,
    regions: RwLock<BTreeMap<Key, CachedRegion>>,
    /// A connection to each store, by store and [`Transport`].
    stores: RwLock<HashMap<(u64, Transport), KvClient<Channel>>>,
    /// The connection of point reads to each store (see `GetBatch` in kv.proto), by store and
    /// [`Transport`].
    get_streams: RwLock<HashMap<(u64, Transport), GetQueue>>,
}

/// Whose connections a request uses: each fiber thread of a SQL node has its own, on its own
/// runtime, so that a fiber's requests never leave its thread; other threads share one, on the
/// client's runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Transport {
    FiberThread(usize),
    Shared,
}

impl Transport {
    /// The caller's transport, and the runtime its connections live on.
    fn current(shared: &tokio::runtime::Handle) -> (Transport, tokio::runtime::Handle) {
        match strata_fiber::pool_thread() {
            Some((index, runtime)) => (Transport::FiberThread(index), runtime),
            None => (Transport::Shared, shared.clone()),
        }
    }
}

/// The most keys one batch of point reads asks for; more go in several batches, one after
/// another.
pub const BATCH_GET_KEYS_MAX: usize = 256;

impl RemoteKv {
    /// A client of the cluster whose placement driver `pd` talks to; it shares `pd`'s runtime.
    pub fn new(pd: PdClient) -> RemoteKv {
        RemoteKv {
            runtime: pd.runtime().clone(),
            pd,
            regions: RwLock::new(BTreeMap::new()),
            stores: RwLock::new(HashMap::new()),
            get_streams: RwLock::new(HashMap::new()),
        }
    }

    fn cached(&self, key: &[u8]) -> Option<CachedRegion> {
        let regions = self.regions.read();
        let (_, region) = regions.range(..=key.to_vec()).next_back()?;
        region.contains(key).then(|| region.clone())
    }

    fn insert(&self, region: CachedRegion) {
        let mut regions = self.regions.write();
        // Drop cached regions that overlap the new one: they are older.
        let stale: Vec<Key> = regions
            .values()
            .filter(|r| {
                (region.end_key.is_empty() || r.start_key < region.end_key)
                    && (r.end_key.is_empty() || r.end_key > region.start_key)
            })
            .map(|r| r.start_key.clone())
            .collect();
        for key in stale {
            regions.remove(&key);
        }
        regions.insert(region.start_key.clone(), region);
    }

    /// Forgets what `why` proved stale about `region`, and waits before the retry unless the
    /// error named the region's new leader.
    fn retry_after(
        &self,
        region: &CachedRegion,
        why: &Retry,
        backoff: &mut Backoff,
    ) -> Result<(), KvError> {
        if let Retry::Region(pb::RegionError {
            kind: Some(pb::region_error::Kind::NotLeader(hint)),
        }) = why
        {
            if hint.leader_store_id != 0 && hint.leader_store_id != region.leader_store {
                let mut regions = self.regions.write();
                if let Some(cached) = regions.get_mut(&region.start_key) {
                    if cached.id == region.id {
                        cached.leader_store = hint.leader_store_id;
                        return Ok(());
                    }
                }
            }
        }
        self.regions.write().remove(&region.start_key);
        if let Retry::Unreachable(_) | Retry::Lost(_) = why {
            let store = region.leader_store;
            self.stores.write().retain(|(s, _), _| *s != store);
            self.get_streams.write().retain(|(s, _), _| *s != store);
        }
        backoff.wait(why)
    }

    /// The region holding `key`, from the cache or the placement driver.
    fn locate(&self, key: &[u8], backoff: &mut Backoff) -> Result<CachedRegion, KvError> {
        loop {
            if let Some(region) = self.cached(key) {
                return Ok(region);
            }
            match self.pd.region_of(key) {
                Ok(Some(entry)) => match CachedRegion::from_pb(entry) {
                    Some(region) => {
                        self.insert(region.clone());
                        return Ok(region);
                    }
                    None => backoff.wait(&Retry::Unreachable("region has no leader".into()))?,
                },
                Ok(None) => backoff.wait(&Retry::Unreachable("cluster not bootstrapped".into()))?,
                Err(e) => backoff.wait(&Retry::Unreachable(e.to_string()))?,
            }
        }
    }

    /// The region holding the keys just below `end` (empty: the end of the key space).
    fn locate_before(&self, end: &[u8], backoff: &mut Backoff) -> Result<CachedRegion, KvError> {
        let mut filled = false;
        loop {
            if filled {
                backoff.wait(&Retry::Unreachable("no region ends the range".into()))?;
            }
            filled = true;
            {
                let regions = self.regions.read();
                let candidate = if end.is_empty() {
                    regions
                        .values()
                        .next_back()
                        .filter(|r| r.end_key.is_empty())
                } else {
                    regions
                        .range(..end.to_vec())
                        .next_back()
                        .map(|(_, r)| r)
                        .filter(|r| r.end_key.is_empty() || r.end_key.as_slice() >= end)
                };
                if let Some(region) = candidate {
                    return Ok(region.clone());
                }
            }
            // Fill the cache with the regions that end the range, then look again.
            let mut start = Vec::new();
            loop {
                let page = match self.pd.scan_regions(&start, end, REGION_SCAN_BATCH) {
                    Ok(page) => page,
                    Err(e) => {
                        backoff.wait(&Retry::Unreachable(e.to_string()))?;
                        break;
                    }
                };
                let full = page.len() == REGION_SCAN_BATCH as usize;
                let mut last_end = None;
                for region in page.into_iter().filter_map(CachedRegion::from_pb) {
                    last_end = Some(region.end_key.clone());
                    self.insert(region);
                }
                match last_end {
                    Some(next) if full && !next.is_empty() => start = next,
                    Some(_) => break,
                    None => {
                        backoff.wait(&Retry::Unreachable("no region covers the range".into()))?;
                        break;
                    }
                }
            }
        }
    }

    fn client(&self, store_id: u64) -> Result<KvClient<Channel>, Retry> {
        let (transport, runtime) = Transport::current(&self.runtime);
        if let Some(client) = self.stores.read().get(&(store_id, transport)) {
            return Ok(client.clone());
        }
        let address = self
            .pd
            .store_address(store_id)
            .map_err(|e| Retry::Unreachable(e.to_string()))?;
        let channel = strata_pd_client::channel(&address, &runtime, self.pd.security())
            .map_err(|e| Retry::Unreachable(e.to_string()))?;
        let client = KvClient::new(channel)
            .max_decoding_message_size(strata_proto::MAX_MESSAGE_BYTES)
            .max_encoding_message_size(strata_proto::MAX_MESSAGE_BYTES);
        self.stores
            .write()
            .insert((store_id, transport), client.clone());
        Ok(client)
    }

    /// The queue of the stream of point reads to a store, started on first use and again
    /// after it ended.
    fn get_queue(&self, store_id: u64) -> Result<GetQueue, Retry> {
        let (transport, runtime) = Transport::current(&self.runtime);
        let key = (store_id, transport);
        if let Some(queue) = self.get_streams.read().get(&key) {
            if !queue.is_closed() {
                return Ok(queue.clone());
            }
        }
        let address = self
            .pd
            .store_address(store_id)
            .map_err(|e| Retry::Unreachable(e.to_string()))?;
        let mut streams = self.get_streams.write();
        if let Some(queue) = streams.get(&key) {
            if !queue.is_closed() {
                return Ok(queue.clone());
            }
        }
        let (queue, callers) = mpsc::channel(GET_STREAM_QUEUE);
        runtime.spawn(drive_get_stream(
            address,
            self.pd.security().clone(),
            callers,
        ));
        streams.insert(key, queue.clone());
        Ok(queue)
    }

    /// One point read from a region's leader, over the store's stream of point reads.
    fn send_get(&self, region: &CachedRegion, request: pb::GetRequest) -> Attempt<pb::GetResponse> {
        let queue = self.get_queue(region.leader_store)?;
        let store = region.leader_store;
        let (reply, answer) = oneshot::channel();
        let outcome = strata_fiber::block_on(&self.runtime, async move {
            if queue.send((request, reply)).await.is_err() {
                return Err("the stream of point reads ended".to_string());
            }
            match tokio::time::timeout(KV_REQUEST_TIMEOUT, answer).await {
                Ok(Ok(result)) => result,
                Ok(Err(_)) => Err("the stream of point reads ended".to_string()),
                Err(_) => Err("no answer in time".to_string()),
            }
        });
        let mut response = outcome.map_err(|why| Retry::Lost(format!("store {store}: {why}")))?;
        match response.take_error().and_then(|e| e.kind) {
            None => Ok(Ok(response)),
            Some(pb::error::Kind::Region(e)) => Err(Retry::Region(e)),
            Some(pb::error::Kind::Key(e)) => Ok(Err(key_error_from_pb(e))),
        }
    }

    /// Sends one request to a region's leader and sorts its outcome.
    fn send<R, F>(
        &self,
        region: &CachedRegion,
        extra_wait: Duration,
        rpc: impl FnOnce(KvClient<Channel>) -> F,
    ) -> Attempt<R>
    where
        R: KvResponse,
        F: Future<Output = Result<tonic::Response<R>, tonic::Status>>,
    {
        let client = self.client(region.leader_store)?;
        let store = region.leader_store;
        strata_fiber::block_on(&self.runtime, async move {
            let response = tokio::time::timeout(KV_REQUEST_TIMEOUT + extra_wait, rpc(client)).await;
            sort_response(store, response)
        })
    }

    /// One request to a region's leader, as a future that owns what it needs, so that requests
    /// to several regions can run at once.
    fn request<R, F>(
        &self,
        region: &CachedRegion,
        extra_wait: Duration,
        rpc: impl FnOnce(KvClient<Channel>) -> F,
    ) -> Result<Call<R>, Retry>
    where
        R: KvResponse + Send + 'static,
        F: Future<Output = Result<tonic::Response<R>, tonic::Status>> + Send + 'static,
    {
        let client = self.client(region.leader_store)?;
        let store = region.leader_store;
        let call = rpc(client);
        Ok(Box::pin(async move {
            let response = tokio::time::timeout(KV_REQUEST_TIMEOUT + extra_wait, call).await;
            sort_response(store, response)
        }))
    }

    /// Runs `attempt` against the region of `key` until it does not ask for a retry.
    fn on_region_of<T>(
        &self,
        key: &[u8],
        mut attempt: impl FnMut(&CachedRegion) -> Attempt<T>,
    ) -> Result<T, KvError> {
        let mut backoff = Backoff::new();
        loop {
            let region = self.locate(key, &mut backoff)?;
            match attempt(&region) {
                Ok(result) => return result,
                Err(why) => self.retry_after(&region, &why, &mut backoff)?,
            }
        }
    }

    /// Splits `keys` by region and sends the request `attempt` makes for each part (the
    /// indices into `keys`) to its region, all parts at once; parts that hit region errors are
    /// split again and retried. Returns each part with its result.
    fn on_regions_of<T, F>(
        &self,
        keys: &[&[u8]],
        mut attempt: impl FnMut(&CachedRegion, &[usize]) -> Result<F, Retry>,
    ) -> Result<Vec<(Vec<usize>, T)>, KvError>
    where
        T: Send + 'static,
        F: Future<Output = Attempt<T>> + Send + 'static,
    {
        let mut backoff = Backoff::new();
        let mut pending: Vec<Vec<usize>> = vec![(0..keys.len()).collect()];
        let mut done = Vec::new();
        while !pending.is_empty() {
            let mut parts = Vec::new();
            for indices in std::mem::take(&mut pending) {
                parts.extend(self.group(keys, &indices, &mut backoff)?);
            }
            // One slot per part: its outcome, once known.
            let mut slots: Vec<Option<Attempt<T>>> = Vec::with_capacity(parts.len());
            let mut calls = Vec::new();
            for (i, (region, part)) in parts.iter().enumerate() {
                match attempt(region, part) {
                    Ok(call) => {
                        slots.push(None);
                        calls.push((i, call));
                    }
                    Err(why) => slots.push(Some(Err(why))),
                }
            }
            if calls.len() == 1 {
                let (i, call) = calls.pop().expect("one call");
                slots[i] = Some(strata_fiber::block_on(&self.runtime, call));
            } else if !calls.is_empty() {
                let (_, runtime) = Transport::current(&self.runtime);
                let handles: Vec<_> = calls
                    .into_iter()
                    .map(|(i, call)| (i, runtime.spawn(call)))
                    .collect();
                let results = strata_fiber::block_on(&self.runtime, async move {
                    let mut results = Vec::with_capacity(handles.len());
                    for (i, handle) in handles {
                        let result = handle.await.unwrap_or_else(|e| {
                            Err(Retry::Lost(format!("a KV request task failed: {e}")))
                        });
                        results.push((i, result));
                    }
                    results
                });
                for (i, result) in results {
                    slots[i] = Some(result);
                }
            }
            let mut first_error = None;
            for ((region, part), outcome) in parts.into_iter().zip(slots) {
                match outcome.expect("every part has an outcome") {
                    Ok(Ok(value)) => done.push((part, value)),
                    Ok(Err(e)) => {
                        first_error.get_or_insert(e);
                    }
                    Err(why) => {
                        self.retry_after(&region, &why, &mut backoff)?;
                        pending.push(part);
                    }
                }
            }
            if let Some(e) = first_error {
                return Err(e);
            }
        }
        Ok(done)
    }

    /// Groups `indices` of `keys` by the region that holds each key.
    fn group(
        &self,
        keys: &[&[u8]],
        indices: &[usize],
        backoff: &mut Backoff,
    ) -> Result<Vec<(CachedRegion, Vec<usize>)>, KvError> {
        let mut groups: Vec<(CachedRegion, Vec<usize>)> = Vec::new();
        for &i in indices {
            match groups.iter_mut().find(|(r, _)| r.contains(keys[i])) {
                Some((_, part)) => part.push(i),
                None => groups.push((self.locate(keys[i], backoff)?, vec![i])),
            }
        }
        Ok(groups)
    }

    /// Sends a command without data for `keys`, split by region.
    fn write_keys<F>(
        &self,
        keys: &[Key],
        extra_wait: Duration,
        rpc: impl Fn(KvClient<Channel>, Option<pb::Context>, Vec<Key>) -> F,
    ) -> Result<(), KvError>
    where
        F: Future<Output = Result<tonic::Response<pb::WriteResponse>, tonic::Status>>
            + Send
            + 'static,
    {
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        self.on_regions_of(&refs, |region, part| {
            let part_keys = part.iter().map(|&i| keys[i].clone()).collect();
            let call = self.request(region, extra_wait, |c| rpc(c, region.context(), part_keys))?;
            Ok(async move { call.await.map(|r| r.map(|_| ())) })
        })
        .map(|_| ())
    }
}

impl KvApi for RemoteKv {
    // Hot path: point select.
    fn get(&self, key: &[u8], ts: Timestamp) -> Result<Option<Value>, KvError> {
        self.on_region_of(key, |region| {
            let request = pb::GetRequest {
                context: region.context(),
                key: key.to_vec(),
                ts: ts.0,
            };
            self.send_get(region, request)
                .map(|r| r.map(|r| r.found.then_some(r.value)))
        })
    }

    fn batch_get(&self, keys: &[Key], ts: Timestamp) -> Result<Vec<Option<Value>>, KvError> {
        if keys.len() > BATCH_GET_KEYS_MAX {
            // Keep each answer's size in bounds: a join reads the rows of a whole batch.
            let mut values = Vec::with_capacity(keys.len());
            for chunk in keys.chunks(BATCH_GET_KEYS_MAX) {
                values.extend(self.batch_get(chunk, ts)?);
            }
            return Ok(values);
        }
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let parts = self.on_regions_of(&refs, |region, part| {
            let request = pb::BatchGetRequest {
                context: region.context(),
                keys: part.iter().map(|&i| keys[i].clone()).collect(),
                ts: ts.0,
            };
            let expected = part.len();
            let call = self.request(region, Duration::ZERO, |mut c| async move {
                c.batch_get(request).await
            })?;
            Ok(async move {
                Ok(call.await?.and_then(|response| {
                    if response.values.len() == expected {
                        Ok(response.values)
                    } else {
                        Err(KvError::Storage(format!(
                            "batch get of {expected} keys returned {} values",
                            response.values.len()
                        )))
                    }
                }))
            })
        })?;
        let mut values = vec![None; keys.len()];
        for (part, found) in parts {
            for (&i, value) in part.iter().zip(found) {
                values[i] = value.found.then_some(value.value);
            }
        }
        Ok(values)
    }

    fn scan(&self, request: &ScanRequest) -> Result<Scanned, KvError> {
        self.scan_regions(request)
    }

    fn batch_scan(&self, requests: &[ScanRequest]) -> Result<Vec<Scanned>, KvError> {
        self.scan_together(requests)
    }

    fn pessimistic_lock(&self, request: &PessimisticLockRequest) -> Result<(), KvError> {
        let wait = Duration::from_millis(request.wait_timeout_ms);
        self.write_keys(&request.keys, wait, |mut c, context, keys| {
            let lock = pb::PessimisticLockRequest {
                context,
                keys,
                primary: request.primary.clone(),
                start_ts: request.start_ts.0,
                for_update_ts: request.for_update_ts.0,
                wait_timeout_ms: request.wait_timeout_ms,
                lock_ttl_ms: request.lock_ttl_ms,
            };
            async move { c.pessimistic_lock(lock).await }
        })
    }

    fn pessimistic_rollback(&self, keys: &[Key], start_ts: Timestamp) -> Result<(), KvError> {
        self.write_keys(keys, Duration::ZERO, |mut c, context, keys| {
            let request = pb::KeysRequest {
                context,
                keys,
                start_ts: start_ts.0,
            };
            async move { c.pessimistic_rollback(request).await }
        })
    }

    fn prewrite(&self, request: &PrewriteRequest) -> Result<PrewriteResponse, KvError> {
        let refs: Vec<&[u8]> = request.mutations.iter().map(|m| m.key()).collect();
        let mut backoff = Backoff::new();
        let all = (0..refs.len()).collect::<Vec<_>>();
        let groups = self.group(&refs, &all, &mut backoff)?;
        // One-phase commit only when one region holds every key.
        if request.try_one_pc && groups.len() == 1 {
            let (region, _) = &groups[0];
            let prewrite = pb::PrewriteRequest {
                context: region.context(),
                mutations: request.mutations.iter().map(mutation_to_pb).collect(),
                primary: request.primary.clone(),
                start_ts: request.start_ts.0,
                for_update_ts: request.for_update_ts.0,
                locked_at: request.locked_at.iter().map(|ts| ts.0).collect(),
                lock_ttl_ms: request.lock_ttl_ms,
                try_one_pc: true,
                async_commit: false,
                secondaries: Vec::new(),
                max_commit_ts: request.max_commit_ts.0,
            };
            match self.send(region, Duration::ZERO, |mut c| async move {
                c.prewrite(prewrite).await
            }) {
                Ok(Ok(response)) if response.one_pc_commit_ts != 0 => {
                    return Ok(PrewriteResponse {
                        one_pc_commit_ts: Some(Timestamp(response.one_pc_commit_ts)),
                        min_commit_ts: None,
                    })
                }
                Ok(Ok(_)) => {
                    return Err(KvError::Storage(
                        "a one-phase commit returned no commit timestamp".into(),
                    ))
                }
                Ok(Err(e)) => return Err(e),
                // The one-phase commit may have committed: the caller must not retry it, nor
                // may it be prewritten again (its own commit would look like a conflict).
                Err(Retry::Lost(why)) => return Err(KvError::Undetermined(why)),
                // The region moved: prewrite by region below, without one-phase commit.
                Err(why) => self.retry_after(region, &why, &mut backoff)?,
            }
        }
        let parts = self.on_regions_of(&refs, |region, part| {
            let holds_primary = part.iter().any(|&i| refs[i] == request.primary.as_slice());
            let prewrite = pb::PrewriteRequest {
                context: region.context(),
                mutations: part
                    .iter()
                    .map(|&i| mutation_to_pb(&request.mutations[i]))
                    .collect(),
                primary: request.primary.clone(),
                start_ts: request.start_ts.0,
                for_update_ts: request.for_update_ts.0,
                locked_at: if request.locked_at.is_empty() {
                    Vec::new()
                } else {
                    part.iter().map(|&i| request.locked_at[i].0).collect()
                },
                lock_ttl_ms: request.lock_ttl_ms,
                try_one_pc: false,
                async_commit: request.async_commit,
                secondaries: if request.async_commit && holds_primary {
                    request.secondaries.clone()
                } else {
                    Vec::new()
                },
                max_commit_ts: request.max_commit_ts.0,
            };
            let call = self.request(region, Duration::ZERO, |mut c| async move {
                c.prewrite(prewrite).await
            })?;
            Ok(async move { call.await.map(|r| r.map(|r| r.min_commit_ts)) })
        })?;
        let min_commit_ts = parts.iter().map(|(_, ts)| *ts).max().unwrap_or(0);
        if request.async_commit && min_commit_ts == 0 {
            return Err(KvError::Storage(
                "an async-commit prewrite returned no min_commit_ts".into(),
            ));
        }
        Ok(PrewriteResponse {
            one_pc_commit_ts: None,
            min_commit_ts: request.async_commit.then_some(Timestamp(min_commit_ts)),
        })
    }

    fn commit(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
        commit_ts: Timestamp,
    ) -> Result<(), KvError> {
        self.write_keys(keys, Duration::ZERO, |mut c, context, keys| {
            let request = pb::CommitRequest {
                context,
                keys,
                start_ts: start_ts.0,
                commit_ts: commit_ts.0,
            };
            async move { c.commit(request).await }
        })
    }

    fn rollback(&self, keys: &[Key], start_ts: Timestamp) -> Result<(), KvError> {
        self.write_keys(keys, Duration::ZERO, |mut c, context, keys| {
            let request = pb::KeysRequest {
                context,
                keys,
                start_ts: start_ts.0,
            };
            async move { c.rollback(request).await }
        })
    }

    fn check_txn_status(
        &self,
        primary: &[u8],
        start_ts: Timestamp,
        current_ts: Timestamp,
        rollback_if_missing: bool,
    ) -> Result<TxnStatus, KvError> {
        self.on_region_of(primary, |region| {
            let request = pb::CheckTxnStatusRequest {
                context: region.context(),
                primary: primary.to_vec(),
                start_ts: start_ts.0,
                current_ts: current_ts.0,
                rollback_if_missing,
            };
            self.send(region, Duration::ZERO, |mut c| async move {
                c.check_txn_status(request).await
            })
            .map(|r| r.and_then(txn_status_from_pb))
        })
    }

    fn check_secondary_locks(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
    ) -> Result<SecondaryLocks, KvError> {
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let parts = self.on_regions_of(&refs, |region, part| {
            let request = pb::CheckSecondaryLocksRequest {
                context: region.context(),
                keys: part.iter().map(|&i| keys[i].clone()).collect(),
                start_ts: start_ts.0,
            };
            let call = self.request(region, Duration::ZERO, |mut c| async move {
                c.check_secondary_locks(request).await
            })?;
            Ok(async move {
                call.await
                    .map(|r| r.and_then(|r| secondary_locks_from_pb(&r)))
            })
        })?;
        Ok(parts.into_iter().map(|(_, locks)| locks).fold(
            SecondaryLocks::Locked {
                min_commit_ts: Timestamp::ZERO,
            },
            SecondaryLocks::merge,
        ))
    }

    fn txn_heart_beat(
        &self,
        primary: &[u8],
        start_ts: Timestamp,
        advise_lock_ttl_ms: u64,
    ) -> Result<u64, KvError> {
        self.on_region_of(primary, |region| {
            let request = pb::TxnHeartBeatRequest {
                context: region.context(),
                primary: primary.to_vec(),
                start_ts: start_ts.0,
                advise_lock_ttl_ms,
            };
            self.send(region, Duration::ZERO, |mut c| async move {
                c.txn_heart_beat(request).await
            })
            .map(|r| r.map(|r| r.lock_ttl_ms))
        })
    }

    fn scan_lock(
        &self,
        start: &[u8],
        end: &[u8],
        max_ts: Timestamp,
        limit: usize,
    ) -> Result<Vec<LockInfo>, KvError> {
        let mut out = Vec::new();
        let mut backoff = Backoff::new();
        let mut start = start.to_vec();
        while out.len() < limit && (end.is_empty() || start.as_slice() < end) {
            let region = self.locate(&start, &mut backoff)?;
            let (part_start, part_end) = region.part_of(&start, end);
            let request = pb::ScanLockRequest {
                context: region.context(),
                start: part_start,
                end: part_end,
                max_ts: max_ts.0,
                limit: (limit - out.len()) as u64,
            };
            match self.send(&region, Duration::ZERO, |mut c| async move {
                c.scan_lock(request).await
            }) {
                Ok(Ok(response)) => out.extend(response.locks.into_iter().map(lock_info_from_pb)),
                Ok(Err(e)) => return Err(e),
                Err(why) => {
                    self.retry_after(&region, &why, &mut backoff)?;
                    continue;
                }
            }
            if region.end_key.is_empty() {
                break;
            }
            start = region.end_key;
        }
        Ok(out)
    }

    fn resolve_lock(
        &self,
        keys: &[Key],
        start_ts: Timestamp,
        commit_ts: Option<Timestamp>,
    ) -> Result<(), KvError> {
        self.write_keys(keys, Duration::ZERO, |mut c, context, keys| {
            let request = pb::ResolveLockRequest {
                context,
                keys,
                start_ts: start_ts.0,
                commit_ts: commit_ts.map_or(0, |ts| ts.0),
            };
            async move { c.resolve_lock(request).await }
        })
    }

    fn regions(&self, start: &[u8], end: &[u8]) -> Result<Vec<RegionInfo>, KvError> {
        crate::placement::regions(&self.pd, start, end)
    }

    fn stores(&self) -> Result<Vec<StoreInfo>, KvError> {
        crate::placement::stores(&self.pd)
    }
}
