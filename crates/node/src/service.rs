//! The KV node's gRPC service: checks that each request belongs to a region this node leads,
//! then runs it on [`Storage`] (writes on the blocking pool: they wait for Raft, and may
//! wait for locks).

use std::sync::Arc;

use strata_kv::Storage;
use strata_kvapi::{KvApi, KvError, PessimisticLockRequest, PrewriteRequest, ScanRequest};
use strata_proto::kv::{self as pb, kv_server};
use strata_proto::{
    key_error_to_pb, lock_info_to_pb, mutation_from_pb, secondary_locks_to_pb, txn_status_to_pb,
};
use strata_raftstore::{NotServing, Router};
use strata_types::{Key, Timestamp, Value};

use crate::metrics::{self, Command};
use crate::oracle_bound::OracleBound;
use tonic::{Request, Response, Status};

/// Checks that a request's region is served here, its epoch is current and `keys` (and the
/// scan range up to `scan_end`) lie inside it.
// Hot path: every request.
fn check<'a>(
    router: &Router,
    context: &Option<pb::Context>,
    keys: impl IntoIterator<Item = &'a [u8]>,
    scan_end: Option<&[u8]>,
) -> Result<(), pb::RegionError> {
    use pb::region_error::Kind;
    let context = context.unwrap_or_default();
    let checked = router.with_serving_region(context.region_id, |region| {
        let epoch = pb::RegionEpoch {
            conf_ver: region.conf_ver,
            version: region.version,
        };
        if context.region_epoch.unwrap_or_default() != epoch {
            return Err(pb::RegionError {
                kind: Some(Kind::EpochNotMatch(pb::EpochNotMatch {
                    current: Some(epoch),
                })),
            });
        }
        let outside = |key: &[u8]| pb::RegionError {
            kind: Some(Kind::KeyNotInRegion(pb::KeyNotInRegion {
                key: key.to_vec(),
                region_id: region.id,
            })),
        };
        for key in keys {
            if !region.contains(key) {
                return Err(outside(key));
            }
        }
        if let Some(end) = scan_end {
            let past_region = if end.is_empty() {
                !region.end_key.is_empty()
            } else {
                !region.end_key.is_empty() && end > region.end_key.as_slice()
            };
            if past_region {
                return Err(outside(end));
            }
        }
        Ok(())
    });
    match checked {
        Ok(result) => result,
        Err(NotServing::RegionNotFound) => Err(pb::RegionError {
            kind: Some(Kind::RegionNotFound(context.region_id)),
        }),
        Err(NotServing::NotLeader { leader_store }) => Err(pb::RegionError {
            kind: Some(Kind::NotLeader(pb::NotLeader {
                region_id: context.region_id,
                leader_store_id: leader_store.unwrap_or(0),
            })),
        }),
    }
}

/// Checks, after a read, that the region is still served here at the request's epoch. A read
/// counts only if this node held the lease from before it began until after it ended: a lease
/// given up meanwhile (to hand leadership over) means another node may already have written
/// what the read missed. A read may wait in a queue for a while, so the check before it is
/// not enough.
fn still_serving(router: &Router, context: &Option<pb::Context>) -> Result<(), pb::RegionError> {
    check(router, context, std::iter::empty::<&[u8]>(), None)
}

/// The KV API of one node, served over gRPC.
#[derive(Clone)]
pub struct KvService {
    storage: Arc<Storage>,
    router: Router,
    store_id: u64,
    oracle: Arc<OracleBound>,
}

/// A response that can carry only an error.
trait ErrorAnswer: Default {
    fn with_error(error: Option<pb::Error>) -> Self;
}

macro_rules! error_answers {
    ($($response:ty),*) => {
        $(impl ErrorAnswer for $response {
            // WriteResponse has no other field.
            #[allow(clippy::needless_update)]
            fn with_error(error: Option<pb::Error>) -> Self {
                Self { error, ..Default::default() }
            }
        })*
    };
}

error_answers!(
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

fn region_error(error: pb::RegionError) -> Option<pb::Error> {
    metrics::region_error(&error);
    Some(pb::Error {
        kind: Some(pb::error::Kind::Region(error)),
    })
}

/// The error field of a response for a failed command. A command the engine could not apply
/// because this replica stopped leading is a region error: the client retries elsewhere.
fn key_error(error: &KvError) -> Option<pb::Error> {
    let kind = match error {
        KvError::Unavailable(_) => {
            let error = pb::RegionError {
                kind: Some(pb::region_error::Kind::NotLeader(pb::NotLeader {
                    region_id: 0,
                    leader_store_id: 0,
                })),
            };
            metrics::region_error(&error);
            pb::error::Kind::Region(error)
        }
        error => pb::error::Kind::Key(key_error_to_pb(error)),
    };
    Some(pb::Error { kind: Some(kind) })
}

/// Runs a storage command on the blocking pool.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, Status> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Status::internal(format!("storage command failed: {e}")))
}

/// The response to a command without data.
fn write_response(result: Result<(), KvError>) -> Response<pb::WriteResponse> {
    Response::new(pb::WriteResponse {
        error: result.err().as_ref().and_then(key_error),
    })
}

/// Bytes of keys and values after which a batch scan answers the scans read so far and
/// leaves the others to the client (a scan's own answer is bounded by its limit).
pub const BATCH_SCAN_ANSWER_BYTES: usize = 4 << 20;

fn get_response(result: Result<Option<Vec<u8>>, KvError>) -> pb::GetResponse {
    match result {
        Ok(value) => pb::GetResponse {
            error: None,
            found: value.is_some(),
            value: value.unwrap_or_default(),
        },
        Err(e) => pb::GetResponse {
            error: key_error(&e),
            ..Default::default()
        },
    }
}

impl KvService {
    /// A point read that needs no wait, answered on the calling (gRPC worker) thread: they are
    /// short (a seek or two), and a hop to the blocking pool costs more than they do. One that
    /// must wait for a commit in flight is handed back for [`KvService::get_waiting`]: the
    /// worker also receives the Raft messages that commit waits for.
    // Hot path: every point read of a cluster.
    pub(crate) fn get_now(&self, r: pb::GetRequest) -> Result<pb::GetResponse, pb::GetRequest> {
        let timer = metrics::timer(Command::Get);
        if let Some(refused) = self.beyond_oracle(&[r.ts], &[]) {
            return Ok(refused);
        }
        if let Err(e) = check(&self.router, &r.context, [&r.key[..]], None) {
            return Ok(pb::GetResponse {
                error: region_error(e),
                ..Default::default()
            });
        }
        let ts = Timestamp(r.ts);
        let Some(values) = self.storage.try_batch_get(std::slice::from_ref(&r.key), ts) else {
            // Timed by the read that waits.
            timer.stop_and_discard();
            return Err(r);
        };
        if let Err(e) = still_serving(&self.router, &r.context) {
            return Ok(pb::GetResponse {
                error: region_error(e),
                ..Default::default()
            });
        }
        Ok(get_response(values.map(|mut v| v.pop().flatten())))
    }

    /// A point read that waits for a commit in flight, on the blocking pool.
    async fn get_waiting(&self, r: pb::GetRequest) -> Result<pb::GetResponse, Status> {
        let _timer = metrics::timer(Command::Get);
        let storage = self.storage.clone();
        let (key, ts) = (r.key.clone(), Timestamp(r.ts));
        let result = blocking(move || storage.get(&key, ts)).await?;
        if let Err(e) = still_serving(&self.router, &r.context) {
            return Ok(pb::GetResponse {
                error: region_error(e),
                ..Default::default()
            });
        }
        Ok(get_response(result))
    }

    /// [`KvService::get_waiting`] with its failure as the answer's error, for a read whose
    /// answer goes back on a point-read connection.
    pub(crate) async fn get_later(&self, r: pb::GetRequest) -> pb::GetResponse {
        self.get_waiting(r)
            .await
            .unwrap_or_else(|status| pb::GetResponse {
                error: key_error(&KvError::Storage(status.message().to_string())),
                ..Default::default()
            })
    }

    pub fn new(
        storage: Arc<Storage>,
        router: Router,
        store_id: u64,
        oracle: Arc<OracleBound>,
    ) -> KvService {
        KvService {
            storage,
            router,
            store_id,
            oracle,
        }
    }

    /// The refusal of a request with a read timestamp in `reads` or a write timestamp in
    /// `writes` beyond the timestamp oracle (see [`OracleBound`]).
    fn beyond_oracle<R: ErrorAnswer>(&self, reads: &[u64], writes: &[u64]) -> Option<R> {
        let refused = self.oracle.admit_all(reads, writes).err()?;
        tracing::warn!(error = %refused, "refused a request");
        Some(R::with_error(key_error(&refused)))
    }

    pub fn store_id(&self) -> u64 {
        self.store_id
    }

    /// The tonic service to add to a server.
    pub fn into_server(self) -> kv_server::KvServer<KvService> {
        kv_server::KvServer::new(self)
            .max_decoding_message_size(strata_proto::MAX_MESSAGE_BYTES)
            .max_encoding_message_size(strata_proto::MAX_MESSAGE_BYTES)
    }

    /// The refusal of a command without data whose keys are not all in a region held here.
    fn refuse(
        &self,
        context: &Option<pb::Context>,
        keys: &[Key],
    ) -> Option<Response<pb::WriteResponse>> {
        let checked = check(&self.router, context, keys.iter().map(|k| &k[..]), None);
        checked.err().map(|e| {
            Response::new(pb::WriteResponse {
                error: region_error(e),
            })
        })
    }

    /// Runs a command without data on the blocking pool (it may wait for locks).
    async fn write(
        &self,
        command: impl FnOnce(&Storage) -> Result<(), KvError> + Send + 'static,
    ) -> Result<Response<pb::WriteResponse>, Status> {
        let storage = self.storage.clone();
        Ok(write_response(blocking(move || command(&storage)).await?))
    }
}

#[tonic::async_trait]
impl kv_server::Kv for KvService {
    async fn get(
        &self,
        request: Request<pb::GetRequest>,
    ) -> Result<Response<pb::GetResponse>, Status> {
        let response = match self.get_now(request.into_inner()) {
            Ok(response) => response,
            Err(request) => self.get_waiting(request).await?,
        };
        Ok(Response::new(response))
    }

    async fn batch_get(
        &self,
        request: Request<pb::BatchGetRequest>,
    ) -> Result<Response<pb::BatchGetResponse>, Status> {
        let _timer = metrics::timer(Command::BatchGet);
        let r = request.into_inner();
        if let Some(refused) = self.beyond_oracle(&[r.ts], &[]) {
            return Ok(Response::new(refused));
        }
        if let Err(e) = check(
            &self.router,
            &r.context,
            r.keys.iter().map(|k| &k[..]),
            None,
        ) {
            return Ok(Response::new(pb::BatchGetResponse {
                error: region_error(e),
                values: Vec::new(),
            }));
        }
        // Like point reads, batch point reads run on the gRPC worker unless they must wait.
        let ts = Timestamp(r.ts);
        let context = r.context;
        let result = match self.storage.try_batch_get(&r.keys, ts) {
            Some(values) => values,
            None => {
                let storage = self.storage.clone();
                blocking(move || storage.batch_get(&r.keys, ts)).await?
            }
        };
        if let Err(e) = still_serving(&self.router, &context) {
            return Ok(Response::new(pb::BatchGetResponse {
                error: region_error(e),
                values: Vec::new(),
            }));
        }
        Ok(Response::new(match result {
            Ok(values) => pb::BatchGetResponse {
                error: None,
                values: values
                    .into_iter()
                    .map(|v| pb::OptionalValue {
                        found: v.is_some(),
                        value: v.unwrap_or_default(),
                    })
                    .collect(),
            },
            Err(e) => pb::BatchGetResponse {
                error: key_error(&e),
                values: Vec::new(),
            },
        }))
    }

    async fn scan(
        &self,
        request: Request<pb::ScanRequest>,
    ) -> Result<Response<pb::ScanResponse>, Status> {
        let _timer = metrics::timer(Command::Scan);
        let r = request.into_inner();
        if let Some(refused) = self.beyond_oracle(&[r.ts], &[]) {
            return Ok(Response::new(refused));
        }
        if let Err(e) = check(&self.router, &r.context, [&r.start[..]], Some(&r.end)) {
            return Ok(Response::new(pb::ScanResponse {
                error: region_error(e),
                ..Default::default()
            }));
        }
        let scan = ScanRequest {
            start: r.start,
            end: r.end,
            limit: usize::try_from(r.limit).unwrap_or(usize::MAX),
            ts: Timestamp(r.ts),
            reverse: r.reverse,
            keys_only: r.keys_only,
        };
        let storage = self.storage.clone();
        let result = blocking(move || storage.scan(&scan)).await?;
        if let Err(e) = still_serving(&self.router, &r.context) {
            return Ok(Response::new(pb::ScanResponse {
                error: region_error(e),
                ..Default::default()
            }));
        }
        Ok(Response::new(match result {
            Ok(scanned) => pb::ScanResponse {
                error: None,
                pairs: pairs_of(scanned.pairs),
                versions: scanned.versions,
            },
            Err(e) => pb::ScanResponse {
                error: key_error(&e),
                ..Default::default()
            },
        }))
    }

    async fn batch_scan(
        &self,
        request: Request<pb::BatchScanRequest>,
    ) -> Result<Response<pb::BatchScanResponse>, Status> {
        let _timer = metrics::timer(Command::BatchScan);
        let r = request.into_inner();
        let reads: Vec<u64> = r.scans.iter().map(|scan| scan.ts).collect();
        if let Some(refused) = self.beyond_oracle(&reads, &[]) {
            return Ok(Response::new(refused));
        }
        let refused = |e| {
            Ok(Response::new(pb::BatchScanResponse {
                error: region_error(e),
                results: Vec::new(),
            }))
        };
        for scan in &r.scans {
            if let Err(e) = check(&self.router, &r.context, [&scan.start[..]], Some(&scan.end)) {
                return refused(e);
            }
        }
        let scans: Vec<ScanRequest> = r
            .scans
            .into_iter()
            .map(|s| ScanRequest {
                start: s.start,
                end: s.end,
                limit: usize::try_from(s.limit).unwrap_or(usize::MAX),
                ts: Timestamp(s.ts),
                reverse: s.reverse,
                keys_only: s.keys_only,
            })
            .collect();
        let storage = self.storage.clone();
        let result = blocking(move || {
            // The scans in order until the answer holds BATCH_SCAN_ANSWER_BYTES; the client
            // reads the rest on its own.
            let mut results = Vec::with_capacity(scans.len());
            let mut bytes = 0;
            for scan in &scans {
                if bytes >= BATCH_SCAN_ANSWER_BYTES {
                    break;
                }
                let scanned = storage.scan(scan)?;
                bytes += scanned
                    .pairs
                    .iter()
                    .map(|(k, v)| k.len() + v.len())
                    .sum::<usize>();
                results.push(scanned);
            }
            Ok::<_, KvError>(results)
        })
        .await?;
        if let Err(e) = still_serving(&self.router, &r.context) {
            return refused(e);
        }
        Ok(Response::new(match result {
            Ok(results) => pb::BatchScanResponse {
                error: None,
                results: results
                    .into_iter()
                    .map(|scanned| pb::ScanResult {
                        pairs: pairs_of(scanned.pairs),
                        versions: scanned.versions,
                    })
                    .collect(),
            },
            Err(e) => pb::BatchScanResponse {
                error: key_error(&e),
                results: Vec::new(),
            },
        }))
    }

    async fn pessimistic_lock(
        &self,
        request: Request<pb::PessimisticLockRequest>,
    ) -> Result<Response<pb::WriteResponse>, Status> {
        let _timer = metrics::timer(Command::PessimisticLock);
        let r = request.into_inner();
        if let Some(refused) = self.beyond_oracle(&[], &[r.start_ts, r.for_update_ts]) {
            return Ok(Response::new(refused));
        }
        if let Some(refused) = self.refuse(&r.context, &r.keys) {
            return Ok(refused);
        }
        let lock = PessimisticLockRequest {
            keys: r.keys,
            primary: r.primary,
            start_ts: Timestamp(r.start_ts),
            for_update_ts: Timestamp(r.for_update_ts),
            wait_timeout_ms: r.wait_timeout_ms,
            lock_ttl_ms: r.lock_ttl_ms,
        };
        let (router, context) = (self.router.clone(), r.context);
        self.write(move |s| {
            s.pessimistic_lock_while(&lock, &|| still_serving(&router, &context).is_ok())
        })
        .await
    }

    async fn pessimistic_rollback(
        &self,
        request: Request<pb::KeysRequest>,
    ) -> Result<Response<pb::WriteResponse>, Status> {
        let _timer = metrics::timer(Command::PessimisticRollback);
        let r = request.into_inner();
        if let Some(refused) = self.beyond_oracle(&[], &[r.start_ts]) {
            return Ok(Response::new(refused));
        }
        if let Some(refused) = self.refuse(&r.context, &r.keys) {
            return Ok(refused);
        }
        self.write(move |s| s.pessimistic_rollback(&r.keys, Timestamp(r.start_ts)))
            .await
    }

    async fn prewrite(
        &self,
        request: Request<pb::PrewriteRequest>,
    ) -> Result<Response<pb::PrewriteResponse>, Status> {
        let _timer = metrics::timer(Command::Prewrite);
        let r = request.into_inner();
        if let Some(refused) = self.beyond_oracle(&[], &[r.start_ts, r.for_update_ts]) {
            return Ok(Response::new(refused));
        }
        let keys: Vec<&[u8]> = r.mutations.iter().map(|m| &m.key[..]).collect();
        if let Err(e) = check(&self.router, &r.context, keys, None) {
            return Ok(Response::new(pb::PrewriteResponse {
                error: region_error(e),
                ..Default::default()
            }));
        }
        let mutations: Result<Vec<_>, _> = r.mutations.into_iter().map(mutation_from_pb).collect();
        let mutations = match mutations {
            Ok(m) if !r.locked_at.is_empty() && r.locked_at.len() != m.len() => {
                let e = KvError::Storage(format!(
                    "{} lock timestamps for {} mutations",
                    r.locked_at.len(),
                    m.len()
                ));
                return Ok(Response::new(pb::PrewriteResponse {
                    error: key_error(&e),
                    ..Default::default()
                }));
            }
            Ok(m) => m,
            Err(e) => {
                return Ok(Response::new(pb::PrewriteResponse {
                    error: key_error(&e),
                    ..Default::default()
                }))
            }
        };
        let prewrite = PrewriteRequest {
            mutations,
            primary: r.primary,
            start_ts: Timestamp(r.start_ts),
            for_update_ts: Timestamp(r.for_update_ts),
            locked_at: r.locked_at.into_iter().map(Timestamp).collect(),
            lock_ttl_ms: r.lock_ttl_ms,
            try_one_pc: r.try_one_pc,
            async_commit: r.async_commit,
            secondaries: r.secondaries,
            max_commit_ts: Timestamp(r.max_commit_ts),
        };
        let storage = self.storage.clone();
        let result = blocking(move || storage.prewrite(&prewrite)).await?;
        Ok(Response::new(match result {
            Ok(response) => pb::PrewriteResponse {
                error: None,
                one_pc_commit_ts: response.one_pc_commit_ts.map_or(0, |ts| ts.0),
                min_commit_ts: response.min_commit_ts.map_or(0, |ts| ts.0),
            },
            Err(e) => pb::PrewriteResponse {
                error: key_error(&e),
                ..Default::default()
            },
        }))
    }

    async fn commit(
        &self,
        request: Request<pb::CommitRequest>,
    ) -> Result<Response<pb::WriteResponse>, Status> {
        let _timer = metrics::timer(Command::Commit);
        let r = request.into_inner();
        if let Some(refused) = self.beyond_oracle(&[], &[r.start_ts, r.commit_ts]) {
            return Ok(Response::new(refused));
        }
        if let Some(refused) = self.refuse(&r.context, &r.keys) {
            return Ok(refused);
        }
        self.write(move |s| s.commit(&r.keys, Timestamp(r.start_ts), Timestamp(r.commit_ts)))
            .await
    }

    async fn rollback(
        &self,
        request: Request<pb::KeysRequest>,
    ) -> Result<Response<pb::WriteResponse>, Status> {
        let _timer = metrics::timer(Command::Rollback);
        let r = request.into_inner();
        if let Some(refused) = self.beyond_oracle(&[], &[r.start_ts]) {
            return Ok(Response::new(refused));
        }
        if let Some(refused) = self.refuse(&r.context, &r.keys) {
            return Ok(refused);
        }
        self.write(move |s| s.rollback(&r.keys, Timestamp(r.start_ts)))
            .await
    }

    async fn check_txn_status(
        &self,
        request: Request<pb::CheckTxnStatusRequest>,
    ) -> Result<Response<pb::CheckTxnStatusResponse>, Status> {
        let _timer = metrics::timer(Command::CheckTxnStatus);
        let r = request.into_inner();
        if let Some(refused) = self.beyond_oracle(&[r.current_ts], &[r.start_ts]) {
            return Ok(Response::new(refused));
        }
        if let Err(e) = check(&self.router, &r.context, [&r.primary[..]], None) {
            return Ok(Response::new(pb::CheckTxnStatusResponse {
                error: region_error(e),
                ..Default::default()
            }));
        }
        let storage = self.storage.clone();
        let result = blocking(move || {
            storage.check_txn_status(
                &r.primary,
                Timestamp(r.start_ts),
                Timestamp(r.current_ts),
                r.rollback_if_missing,
            )
        })
        .await?;
        Ok(Response::new(match result {
            Ok(status) => txn_status_to_pb(status),
            Err(e) => pb::CheckTxnStatusResponse {
                error: key_error(&e),
                ..Default::default()
            },
        }))
    }

    async fn check_secondary_locks(
        &self,
        request: Request<pb::CheckSecondaryLocksRequest>,
    ) -> Result<Response<pb::CheckSecondaryLocksResponse>, Status> {
        let _timer = metrics::timer(Command::CheckSecondaryLocks);
        let r = request.into_inner();
        if let Some(refused) = self.beyond_oracle(&[], &[r.start_ts]) {
            return Ok(Response::new(refused));
        }
        let keys = r.keys.iter().map(|k| &k[..]);
        if let Err(e) = check(&self.router, &r.context, keys, None) {
            return Ok(Response::new(pb::CheckSecondaryLocksResponse {
                error: region_error(e),
                ..Default::default()
            }));
        }
        let storage = self.storage.clone();
        let result =
            blocking(move || storage.check_secondary_locks(&r.keys, Timestamp(r.start_ts))).await?;
        Ok(Response::new(match result {
            Ok(locks) => secondary_locks_to_pb(locks),
            Err(e) => pb::CheckSecondaryLocksResponse {
                error: key_error(&e),
                ..Default::default()
            },
        }))
    }

    async fn txn_heart_beat(
        &self,
        request: Request<pb::TxnHeartBeatRequest>,
    ) -> Result<Response<pb::TxnHeartBeatResponse>, Status> {
        let _timer = metrics::timer(Command::TxnHeartBeat);
        let r = request.into_inner();
        if let Some(refused) = self.beyond_oracle(&[], &[r.start_ts]) {
            return Ok(Response::new(refused));
        }
        if let Err(e) = check(&self.router, &r.context, [&r.primary[..]], None) {
            return Ok(Response::new(pb::TxnHeartBeatResponse {
                error: region_error(e),
                ..Default::default()
            }));
        }
        let storage = self.storage.clone();
        let result = blocking(move || {
            storage.txn_heart_beat(&r.primary, Timestamp(r.start_ts), r.advise_lock_ttl_ms)
        })
        .await?;
        Ok(Response::new(match result {
            Ok(lock_ttl_ms) => pb::TxnHeartBeatResponse {
                error: None,
                lock_ttl_ms,
            },
            Err(e) => pb::TxnHeartBeatResponse {
                error: key_error(&e),
                ..Default::default()
            },
        }))
    }

    async fn resolve_lock(
        &self,
        request: Request<pb::ResolveLockRequest>,
    ) -> Result<Response<pb::WriteResponse>, Status> {
        let _timer = metrics::timer(Command::ResolveLock);
        let r = request.into_inner();
        if let Some(refused) = self.beyond_oracle(&[], &[r.start_ts, r.commit_ts]) {
            return Ok(Response::new(refused));
        }
        if let Some(refused) = self.refuse(&r.context, &r.keys) {
            return Ok(refused);
        }
        self.write(move |s| {
            let commit_ts = (r.commit_ts != 0).then_some(Timestamp(r.commit_ts));
            s.resolve_lock(&r.keys, Timestamp(r.start_ts), commit_ts)
        })
        .await
    }

    async fn scan_lock(
        &self,
        request: Request<pb::ScanLockRequest>,
    ) -> Result<Response<pb::ScanLockResponse>, Status> {
        let _timer = metrics::timer(Command::ScanLock);
        let r = request.into_inner();
        if let Err(e) = check(&self.router, &r.context, [&r.start[..]], Some(&r.end)) {
            return Ok(Response::new(pb::ScanLockResponse::with_error(
                region_error(e),
            )));
        }
        let storage = self.storage.clone();
        let (start, end) = (r.start, r.end);
        let (max_ts, limit) = (Timestamp(r.max_ts), r.limit as usize);
        let result = blocking(move || storage.scan_lock(&start, &end, max_ts, limit)).await?;
        if let Err(e) = still_serving(&self.router, &r.context) {
            return Ok(Response::new(pb::ScanLockResponse::with_error(
                region_error(e),
            )));
        }
        Ok(Response::new(match result {
            Ok(locks) => pb::ScanLockResponse {
                error: None,
                locks: locks.iter().map(lock_info_to_pb).collect(),
            },
            Err(e) => pb::ScanLockResponse::with_error(key_error(&e)),
        }))
    }
}

/// Entries as the answer's key-value pairs.
fn pairs_of(pairs: Vec<(Key, Value)>) -> Vec<pb::KvPair> {
    pairs
        .into_iter()
        .map(|(key, value)| pb::KvPair { key, value })
        .collect()
}
