//! The connection of point reads from a SQL node to one KV node (`GetBatch` in kv.proto,
//! framed as `strata_proto::frame` says): reads queued by any fiber of a thread go out as many
//! per message as are waiting, and each answer goes back to its caller.
//!
//! It is a TCP connection of its own (TLS under the cluster's TLS), not a gRPC stream: a point read is the cluster's hottest
//! request, and HTTP/2's framing and the tasks behind a gRPC stream cost more CPU per message
//! than the read itself (`docs/benchmarks.md`, "A cluster point select"). One task writes the
//! batches, one reads the answers, so that neither side can stall the other.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use strata_proto::frame::{decode_frame, encode_frame, READ_STREAM_PREFACE};
use strata_proto::kv as pb;
use strata_proto::security::{ReadHalf, Security};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// Point reads queued for one store's connection, each with where its answer goes.
pub(crate) type GetQueue = mpsc::Sender<(pb::GetRequest, GetReply)>;

/// Point reads waiting for one store's connection; more wait for room.
pub const GET_STREAM_QUEUE: usize = 4096;
/// The most point reads sent in one message.
pub const GET_STREAM_BATCH_MAX: usize = 256;
/// How long connecting to a KV node may take.
pub const GET_STREAM_CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// Room kept free in the buffer of answers for each read from the socket.
const READ_CHUNK_BYTES: usize = 64 << 10;

type GetReply = oneshot::Sender<Result<pb::GetResponse, String>>;

/// The callers whose reads went out and have no answer yet, by the read's number; once the
/// connection ended, why it did.
type Waiting = Arc<Mutex<Result<HashMap<u64, GetReply>, String>>>;

/// Carries the point reads queued for the store at `address` over one connection, as many
/// per message as are waiting, and hands each answer to its caller. It ends when the
/// connection fails (every caller still waiting hears why) or when no caller can queue any
/// more; the queue closes with it.
pub(crate) async fn drive_get_stream(
    address: String,
    security: Security,
    mut callers: mpsc::Receiver<(pb::GetRequest, GetReply)>,
) {
    // Connect only once there is a read to send.
    let Some(first) = callers.recv().await else {
        return;
    };
    let (reader, mut writer) = match security.connect(&address, GET_STREAM_CONNECT_TIMEOUT).await {
        Ok(halves) => halves,
        Err(e) => {
            let _ = first.1.send(Err(format!("connecting to {address}: {e}")));
            return;
        }
    };
    let waiting: Waiting = Arc::new(Mutex::new(Ok(HashMap::new())));
    let mut answers = tokio::spawn(read_answers(reader, waiting.clone()));
    let mut out = READ_STREAM_PREFACE.to_vec();
    let mut next_id = 0u64;
    let mut next = Some(first);
    let why = loop {
        let caller = match next.take() {
            Some(caller) => caller,
            None => tokio::select! {
                caller = callers.recv() => match caller {
                    Some(caller) => caller,
                    None => break "no more reads".to_string(),
                },
                _ = &mut answers => break "the KV node closed the connection".to_string(),
            },
        };
        let Some(batch) = take_batch(caller, &mut callers, &waiting, &mut next_id) else {
            break "the connection ended".to_string();
        };
        encode_frame(&batch, &mut out);
        if let Err(e) = writer.write_all(&out).await {
            break format!("sending to {address}: {e}");
        }
        out.clear();
    };
    answers.abort();
    fail_waiting(&waiting, why);
}

/// `first` and the reads queued behind it (up to [`GET_STREAM_BATCH_MAX`]) as one message,
/// each numbered and its caller remembered in `waiting`; `None` (and the callers told) when
/// the connection already ended.
fn take_batch(
    first: (pb::GetRequest, GetReply),
    callers: &mut mpsc::Receiver<(pb::GetRequest, GetReply)>,
    waiting: &Waiting,
    next_id: &mut u64,
) -> Option<pb::GetBatch> {
    let mut waiting = waiting.lock();
    let mut gets = Vec::new();
    let mut next = Some(first);
    while let Some((request, reply)) = next.take() {
        match waiting.as_mut() {
            Ok(waiting) => {
                *next_id += 1;
                waiting.insert(*next_id, reply);
                gets.push(pb::TaggedGet {
                    id: *next_id,
                    request: Some(request),
                });
            }
            Err(why) => {
                let _ = reply.send(Err(why.clone()));
            }
        }
        if gets.len() < GET_STREAM_BATCH_MAX {
            next = callers.try_recv().ok();
        }
    }
    waiting.is_ok().then_some(pb::GetBatch { gets })
}

/// Reads answers until the connection ends, handing each to its caller.
async fn read_answers(mut reader: ReadHalf, waiting: Waiting) {
    let mut buffer: Vec<u8> = Vec::with_capacity(READ_CHUNK_BYTES);
    let why = 'reading: loop {
        buffer.reserve(READ_CHUNK_BYTES);
        match reader.read_buf(&mut buffer).await {
            Ok(0) => break "the KV node closed the connection".to_string(),
            Ok(_) => {}
            Err(e) => break format!("reading from the KV node: {e}"),
        }
        let mut used = 0;
        loop {
            match decode_frame::<pb::GetAnswers>(&buffer[used..]) {
                Ok(None) => break,
                Ok(Some((answers, len))) => {
                    used += len;
                    let mut waiting = waiting.lock();
                    let Ok(waiting) = waiting.as_mut() else {
                        return;
                    };
                    for tagged in answers.answers {
                        if let Some(reply) = waiting.remove(&tagged.id) {
                            let _ = reply.send(Ok(tagged.response.unwrap_or_default()));
                        }
                    }
                }
                Err(e) => break 'reading format!("from the KV node: {e}"),
            }
        }
        buffer.drain(..used);
    };
    fail_waiting(&waiting, why);
}

/// Tells every caller still waiting why the connection ended, and turns later ones away.
fn fail_waiting(waiting: &Waiting, why: String) {
    let mut waiting = waiting.lock();
    if let Ok(callers) = std::mem::replace(&mut *waiting, Err(why.clone())) {
        for (_, reply) in callers {
            let _ = reply.send(Err(why.clone()));
        }
    }
}
