//! The stream of point reads from a SQL node to one KV node (`GetStream` in kv.proto): reads
//! queued by any thread go out as many per message as are waiting, and each answer goes back
//! to its caller.

use std::collections::HashMap;

use strata_proto::kv::{self as pb, kv_client::KvClient};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

/// Point reads queued for one store's stream, each with where its answer goes.
pub(crate) type GetQueue = mpsc::Sender<(pb::GetRequest, GetReply)>;

/// Point reads waiting for one store's stream; more wait for room.
pub const GET_STREAM_QUEUE: usize = 4096;
/// The most point reads sent in one message of a stream.
pub const GET_STREAM_BATCH_MAX: usize = 256;

type GetReply = oneshot::Sender<Result<pb::GetResponse, String>>;

/// `first` and the reads queued behind it (up to [`GET_STREAM_BATCH_MAX`]) as one message,
/// each numbered and its caller remembered in `waiting`.
fn take_batch(
    first: (pb::GetRequest, GetReply),
    callers: &mut mpsc::Receiver<(pb::GetRequest, GetReply)>,
    waiting: &mut HashMap<u64, GetReply>,
    next_id: &mut u64,
) -> pb::GetBatch {
    let mut gets = Vec::new();
    let mut next = Some(first);
    while let Some((request, reply)) = next.take() {
        *next_id += 1;
        waiting.insert(*next_id, reply);
        gets.push(pb::TaggedGet {
            id: *next_id,
            request: Some(request),
        });
        if gets.len() < GET_STREAM_BATCH_MAX {
            next = callers.try_recv().ok();
        }
    }
    pb::GetBatch { gets }
}

/// Carries the point reads queued for one store over one stream, as many per message as are
/// waiting, and hands each answer to its caller. It ends when the stream fails (every caller
/// still waiting hears why) or when no caller can queue any more.
pub(crate) async fn drive_get_stream(
    mut client: KvClient<Channel>,
    mut callers: mpsc::Receiver<(pb::GetRequest, GetReply)>,
) {
    let (batches, outgoing) =
        mpsc::channel::<pb::GetBatch>(GET_STREAM_QUEUE / GET_STREAM_BATCH_MAX);
    let mut waiting: HashMap<u64, GetReply> = HashMap::new();
    let mut next_id = 0u64;
    // The call starts with the first read in it.
    let Some(first) = callers.recv().await else {
        return;
    };
    let batch = take_batch(first, &mut callers, &mut waiting, &mut next_id);
    if batches.send(batch).await.is_err() {
        return;
    }
    let why = match client.get_stream(ReceiverStream::new(outgoing)).await {
        Err(status) => status.to_string(),
        Ok(answers) => {
            let mut answers = answers.into_inner();
            loop {
                tokio::select! {
                    caller = callers.recv() => {
                        let Some(caller) = caller else {
                            break "no more reads".to_string();
                        };
                        let batch = take_batch(caller, &mut callers, &mut waiting, &mut next_id);
                        if batches.send(batch).await.is_err() {
                            break "the stream closed".to_string();
                        }
                    }
                    answer = answers.message() => match answer {
                        Ok(Some(answer)) => {
                            for tagged in answer.answers {
                                if let Some(reply) = waiting.remove(&tagged.id) {
                                    let _ = reply.send(Ok(tagged.response.unwrap_or_default()));
                                }
                            }
                        }
                        Ok(None) => break "the store ended the stream".to_string(),
                        Err(status) => break status.to_string(),
                    },
                }
            }
        }
    };
    for (_, reply) in waiting {
        let _ = reply.send(Err(why.clone()));
    }
}
