//! What ties the node to its raftstore: the engine [`Storage`] writes through (every write
//! batch is proposed to the region of its keys and returns once applied), the gRPC transport
//! of Raft messages between nodes, and the hook that prepares a region before its new leader
//! serves.
//!
//! ```text
//!   Storage ──write──▶ ReplicatedEngine ──propose──▶ Router ──▶ poll loop ──▶ RocksDB
//!      │                     │ reads                               │ messages
//!      └──────reads──────────┴─────────▶ RocksDB            GrpcTransport ──raft.Raft──▶ peers
//! ```

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::Mutex;
use strata_engine::{BatchOp, Cf, Engine, EngineError, EngineIterator, RocksEngine, WriteBatch};
use strata_kv::{mvcc, LeaderLocks, Storage};
use strata_pd_client::{PdClient, TimestampOracle};
use strata_proto::raft::{self as pb, raft_client::RaftClient, raft_server};
use strata_raftstore::{LeaderHook, LeaderStart, Message, RegionMeta, Router, Transport};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;
use tonic::{Request, Response, Status};
use tracing::{debug, warn};

/// Raft messages queued for one other node; more are dropped (Raft resends).
pub const RAFT_SEND_QUEUE: usize = 8192;
/// Messages sent to one node in one message of its stream.
pub const RAFT_SEND_BATCH: usize = 1024;
/// Batches waiting for room in one node's stream (HTTP/2 flow control); while they wait,
/// messages queue in [`RAFT_SEND_QUEUE`].
pub const RAFT_STREAM_BATCHES_QUEUED: usize = 8;
/// The largest gRPC message of Raft: a batch of messages fills up to [`MAX_MESSAGE_BYTES`]
/// (more go in the next one), and one message may be a snapshot of a whole region.
///
/// [`MAX_MESSAGE_BYTES`]: strata_proto::MAX_MESSAGE_BYTES
pub const RAFT_MESSAGE_MAX_BYTES: usize =
    strata_proto::MAX_MESSAGE_BYTES + strata_raftstore::SNAPSHOT_MAX_BYTES;
/// Pause after a failed send before a node is tried again.
const RAFT_RECONNECT_PAUSE: Duration = Duration::from_millis(200);

/// The node's engine as [`Storage`] sees it: reads from RocksDB, writes through Raft.
pub struct ReplicatedEngine {
    rocks: Arc<RocksEngine>,
    router: Router,
}

impl ReplicatedEngine {
    pub fn new(rocks: Arc<RocksEngine>, router: Router) -> ReplicatedEngine {
        ReplicatedEngine { rocks, router }
    }
}

/// The user key a batch operation touches: lock keys are user keys, the other column
/// families hold encoded user keys followed by a timestamp.
fn user_key(op: &BatchOp) -> Result<Vec<u8>, EngineError> {
    let (cf, key) = match op {
        BatchOp::Put { cf, key, .. } | BatchOp::Delete { cf, key } => (*cf, key),
    };
    match cf {
        Cf::Lock => Ok(key.clone()),
        Cf::Default | Cf::Write => mvcc::split_versioned_key(key)
            .and_then(|(encoded, _)| mvcc::decode_user_key(encoded))
            .map_err(|e| EngineError::Storage(e.to_string())),
        Cf::Raft => Err(EngineError::Storage(
            "replication state is not written through Raft".into(),
        )),
    }
}

impl Engine for ReplicatedEngine {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>, EngineError> {
        self.rocks.get(cf, key)
    }

    /// Proposes `batch` to the region holding its keys and waits until it applied here. The
    /// batch is durable on a majority of the region's replicas when this returns; `sync` is
    /// implied.
    fn write(&self, batch: &WriteBatch, _sync: bool) -> Result<(), EngineError> {
        if batch.is_empty() {
            return Ok(());
        }
        let keys = batch
            .ops()
            .iter()
            .map(user_key)
            .collect::<Result<Vec<_>, _>>()?;
        // Unavailable: the caller's region check passed, so the region changed since (a
        // split) or this node no longer holds it; the client retries with a fresh view.
        let (region, version) = self.router.region_holding(keys.iter()).ok_or_else(|| {
            EngineError::Unavailable("no region here holds every key of the write".into())
        })?;
        self.router
            .propose_write(region, version, batch)
            .map_err(|failure| {
                if failure.is_definite() {
                    EngineError::Unavailable(failure.to_string())
                } else {
                    EngineError::OutcomeUnknown(failure.to_string())
                }
            })
    }

    fn iterator(&self, cf: Cf, lower: &[u8], upper: Option<&[u8]>) -> Box<dyn EngineIterator + '_> {
        self.rocks.iterator(cf, lower, upper)
    }

    fn versions_iterator(&self) -> Box<dyn EngineIterator + '_> {
        self.rocks.versions_iterator()
    }

    fn approximate_size_bytes(&self) -> u64 {
        self.rocks.approximate_size_bytes()
    }
}

/// Where user keys lie in the engine: lock keys are user keys, the other data column families
/// hold encoded user keys followed by a timestamp (so a user key's versions sort together,
/// between the encodings of the range's ends).
pub struct MvccKeySpace;

impl strata_raftstore::KeySpace for MvccKeySpace {
    fn engine_range(&self, cf: Cf, start: &[u8], end: &[u8]) -> (Vec<u8>, Option<Vec<u8>>) {
        let bound = |key: &[u8]| match cf {
            Cf::Lock | Cf::Raft => key.to_vec(),
            Cf::Default | Cf::Write => mvcc::encode_user_key(key),
        };
        (bound(start), (!end.is_empty()).then(|| bound(end)))
    }
}

/// Sends Raft messages to other nodes over gRPC: one queue and one sending task per node.
pub struct GrpcTransport {
    store_id: u64,
    pd: PdClient,
    queues: Mutex<HashMap<u64, mpsc::Sender<pb::RaftEnvelope>>>,
}

impl GrpcTransport {
    pub fn new(store_id: u64, pd: PdClient) -> GrpcTransport {
        GrpcTransport {
            store_id,
            pd,
            queues: Mutex::new(HashMap::new()),
        }
    }

    fn queue(&self, to_store: u64) -> mpsc::Sender<pb::RaftEnvelope> {
        let mut queues = self.queues.lock();
        queues
            .entry(to_store)
            .or_insert_with(|| {
                let (tx, rx) = mpsc::channel(RAFT_SEND_QUEUE);
                let pd = self.pd.clone();
                self.pd.runtime().spawn(send_loop(pd, to_store, rx));
                tx
            })
            .clone()
    }
}

impl Transport for GrpcTransport {
    fn send(&self, to_store: u64, region: u64, message: Message) {
        let envelope = pb::RaftEnvelope {
            region_id: region,
            from_store: self.store_id,
            message: strata_raftstore::encode_message(&message),
        };
        if self.queue(to_store).try_send(envelope).is_err() {
            debug!(to_store, "Raft send queue full; dropping a message");
        }
    }
}

/// Takes `first` and the messages queued behind it, up to [`RAFT_SEND_BATCH`] messages or
/// [`MAX_MESSAGE_BYTES`](strata_proto::MAX_MESSAGE_BYTES) of them.
fn take_batch(
    first: pb::RaftEnvelope,
    queue: &mut mpsc::Receiver<pb::RaftEnvelope>,
) -> pb::RaftBatch {
    let mut bytes = first.message.len();
    let mut messages = vec![first];
    while messages.len() < RAFT_SEND_BATCH && bytes < strata_proto::MAX_MESSAGE_BYTES {
        match queue.try_recv() {
            Ok(m) => {
                bytes += m.message.len();
                messages.push(m);
            }
            Err(_) => break,
        }
    }
    pb::RaftBatch { messages }
}

/// Opens a client of `store`'s Raft service, or says why not.
async fn connect(pd: &PdClient, store: u64) -> Option<RaftClient<Channel>> {
    let lookup = pd.clone();
    let address = tokio::task::spawn_blocking(move || lookup.store_address(store)).await;
    match address {
        Ok(Ok(address)) => match strata_pd_client::channel(&address, pd.runtime(), pd.security()) {
            Ok(channel) => Some(
                RaftClient::new(channel)
                    .max_decoding_message_size(RAFT_MESSAGE_MAX_BYTES)
                    .max_encoding_message_size(RAFT_MESSAGE_MAX_BYTES),
            ),
            Err(e) => {
                debug!(store, %e, "cannot reach a node for Raft");
                None
            }
        },
        Ok(Err(e)) => {
            debug!(store, %e, "cannot look up a node for Raft");
            None
        }
        Err(e) => {
            debug!(store, %e, "address lookup failed");
            None
        }
    }
}

/// Delivers the queued messages for one node over one long-lived stream, a batch per stream
/// message, opening a new stream (after a pause) when one fails. Messages in flight on a
/// failed stream are lost; Raft resends them.
async fn send_loop(pd: PdClient, store: u64, mut queue: mpsc::Receiver<pb::RaftEnvelope>) {
    let mut client: Option<RaftClient<Channel>> = None;
    loop {
        // A stream opens with the first message to send after a start or a failure.
        let Some(first) = queue.recv().await else {
            return;
        };
        if client.is_none() {
            client = connect(&pd, store).await;
        }
        // Clients share their connection: this one's call borrows only the clone.
        let Some(mut c) = client.clone() else {
            tokio::time::sleep(RAFT_RECONNECT_PAUSE).await;
            continue;
        };
        let (batches, outgoing) = mpsc::channel(RAFT_STREAM_BATCHES_QUEUED);
        let _ = batches.try_send(take_batch(first, &mut queue));
        let call = c.send(ReceiverStream::new(outgoing));
        let mut call = std::pin::pin!(call);
        let why = loop {
            tokio::select! {
                ended = &mut call => break match ended {
                    Ok(_) => "the node ended the stream".to_string(),
                    Err(status) => status.to_string(),
                },
                next = queue.recv() => {
                    let Some(next) = next else {
                        return;
                    };
                    if batches.send(take_batch(next, &mut queue)).await.is_err() {
                        break "the stream closed".to_string();
                    }
                }
            }
        };
        debug!(store, %why, "the stream of Raft messages ended");
        client = None;
        tokio::time::sleep(RAFT_RECONNECT_PAUSE).await;
    }
}

/// The gRPC service that receives Raft messages from other nodes.
#[derive(Clone)]
pub struct RaftService {
    router: Router,
}

impl RaftService {
    pub fn new(router: Router) -> RaftService {
        RaftService { router }
    }

    pub fn into_server(self) -> raft_server::RaftServer<RaftService> {
        raft_server::RaftServer::new(self)
            .max_decoding_message_size(RAFT_MESSAGE_MAX_BYTES)
            .max_encoding_message_size(RAFT_MESSAGE_MAX_BYTES)
    }
}

#[tonic::async_trait]
impl raft_server::Raft for RaftService {
    async fn send(
        &self,
        request: Request<tonic::Streaming<pb::RaftBatch>>,
    ) -> Result<Response<pb::RaftDone>, Status> {
        let mut incoming = request.into_inner();
        while let Some(batch) = incoming.message().await? {
            for envelope in batch.messages {
                match strata_raftstore::decode_message(&envelope.message) {
                    Ok(message) => self.router.step(envelope.region_id, message),
                    Err(e) => warn!(from = envelope.from_store, %e, "a corrupt Raft message"),
                }
            }
        }
        Ok(Response::new(pb::RaftDone {}))
    }
}

/// Prepares a region before this node serves it as the new leader: one-phase commits start
/// above a fresh timestamp (above every read the previous leader served), stale in-memory
/// locks go, and the placement driver learns the new leader.
pub struct NodeLeaderHook {
    pd: PdClient,
    storage: OnceLock<Arc<Storage>>,
}

impl NodeLeaderHook {
    pub fn new(pd: PdClient) -> NodeLeaderHook {
        NodeLeaderHook {
            pd,
            storage: OnceLock::new(),
        }
    }

    /// Hands the hook the storage it prepares (the storage is built over the raftstore, so
    /// after it).
    pub fn set_storage(&self, storage: Arc<Storage>) {
        let _ = self.storage.set(storage);
    }
}

impl LeaderHook for NodeLeaderHook {
    fn start_leading(&self, start: &LeaderStart) -> bool {
        let (region, peer, term) = (&start.region, start.peer, start.term);
        let Some(storage) = self.storage.get() else {
            return false;
        };
        // Another leader's collection passes reached this replica as plain writes: snapshots
        // below the cluster's safe point may miss what they deleted.
        let now = match self
            .pd
            .get_ts()
            .and_then(|now| Ok((now, self.pd.gc_safe_point()?)))
        {
            Ok((now, safe_point)) => {
                storage.raise_gc_safe_point(safe_point);
                now
            }
            Err(e) => {
                warn!(region = region.id, %e, "no timestamp to start leading with");
                return false;
            }
        };
        let locks = if start.continues_parent {
            LeaderLocks::Keep
        } else {
            LeaderLocks::Forget
        };
        storage.start_leading(&region.start_key, &region.end_key, now, term, locks);
        // What the placement driver asks in reply waits for the next regular heartbeat.
        if let Err(e) = self
            .pd
            .region_heartbeat(crate::region_to_pb(region), peer, term)
        {
            debug!(region = region.id, %e, "reporting a new leader failed; the heartbeat will");
        }
        true
    }

    fn handover(&self, region: &RegionMeta, term: u64) -> Option<WriteBatch> {
        let storage = self.storage.get()?;
        Some(storage.hand_over(&region.start_key, &region.end_key, term))
    }
}

/// The cluster's deadlock detector, kept by the placement driver: every KV node reports its
/// lock waits there, so a cycle of waits across nodes is found.
pub struct PdDeadlockDetector {
    pd: PdClient,
}

impl PdDeadlockDetector {
    pub fn new(pd: PdClient) -> PdDeadlockDetector {
        PdDeadlockDetector { pd }
    }
}

impl strata_kv::DeadlockDetector for PdDeadlockDetector {
    fn wait(
        &self,
        waiter: strata_types::Timestamp,
        blocker: strata_types::Timestamp,
        within: std::time::Duration,
    ) -> Result<bool, strata_kvapi::KvError> {
        self.pd
            .wait_for(waiter, blocker, within)
            .map_err(|e| strata_kvapi::KvError::Unavailable(e.to_string()))
    }

    fn wait_ended(&self, waiter: strata_types::Timestamp) {
        if let Err(e) = self.pd.wait_ended(waiter) {
            // The wait expires at the placement driver by itself.
            debug!(%e, "telling the deadlock detector that a wait ended failed");
        }
    }
}
