//! The point-read connections of SQL nodes, served beside gRPC on the KV node's port: a
//! connection that opens with [`READ_STREAM_PREFACE`] carries `GetBatch` frames in and
//! `GetAnswers` frames out (`strata_proto::frame`); any other goes to the gRPC server.
//!
//! A batch's reads that need no wait are answered together, in one frame, as soon as the
//! batch is read; a read that waits for a commit in flight answers alone, later.

use std::io;
use std::time::Duration;

use strata_proto::frame::{decode_frame, encode_frame, READ_STREAM_PREFACE};
use strata_proto::kv as pb;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tracing::warn;

use crate::KvService;

/// Answers of waiting reads queued on one connection before their tasks wait for the writer.
pub const GET_STREAM_ANSWERS_QUEUED: usize = 1024;
/// Accepted gRPC connections queued for the gRPC server.
pub const GRPC_CONNECTIONS_QUEUED: usize = 128;
/// How long a new connection may take to show which kind it is.
pub const PREFACE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the listener pauses after a failed accept (say, out of file descriptors).
const ACCEPT_RETRY: Duration = Duration::from_millis(10);
/// Room kept free in a connection's buffer for each read from the socket.
const READ_CHUNK_BYTES: usize = 64 << 10;

/// Accepts connections on `listener` (with `TCP_NODELAY`), serves the point-read ones with
/// `service`, and yields the others, for `tonic`'s `serve_with_incoming`. It runs on the
/// calling runtime until the returned stream is dropped.
pub fn split_incoming(
    listener: TcpListener,
    service: KvService,
) -> ReceiverStream<io::Result<TcpStream>> {
    let (grpc, incoming) = mpsc::channel(GRPC_CONNECTIONS_QUEUED);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = grpc.closed() => return,
            };
            match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    tokio::spawn(sort_connection(stream, service.clone(), grpc.clone()));
                }
                Err(e) => {
                    warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                }
            }
        }
    });
    ReceiverStream::new(incoming)
}

/// Serves `stream` as a point-read connection if it opens with the preface, and hands it to
/// the gRPC server if it does not.
async fn sort_connection(
    stream: TcpStream,
    service: KvService,
    grpc: mpsc::Sender<io::Result<TcpStream>>,
) {
    match tokio::time::timeout(PREFACE_TIMEOUT, opens_with_preface(&stream)).await {
        Ok(Ok(true)) => serve_reads(stream, service).await,
        Ok(Ok(false)) => {
            let _ = grpc.send(Ok(stream)).await;
        }
        // Closed, failed or silent before it said anything: dropped.
        Ok(Err(_)) | Err(_) => {}
    }
}

/// Whether the first bytes of `stream` are [`READ_STREAM_PREFACE`], without consuming them.
async fn opens_with_preface(stream: &TcpStream) -> io::Result<bool> {
    let mut seen = [0u8; READ_STREAM_PREFACE.len()];
    loop {
        let n = stream.peek(&mut seen).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if seen[..n] != READ_STREAM_PREFACE[..n] {
            return Ok(false);
        }
        if n == seen.len() {
            return Ok(true);
        }
        // Part of the preface came: the rest is on its way (a peek would find the same bytes
        // at once rather than wait for more).
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Answers the point reads of one connection until the client closes it or sends what is
/// not a batch.
async fn serve_reads(stream: TcpStream, service: KvService) {
    let (mut reader, mut writer) = stream.into_split();
    let mut preface = [0u8; READ_STREAM_PREFACE.len()];
    if reader.read_exact(&mut preface).await.is_err() {
        return;
    }
    let (late, mut late_answers) =
        mpsc::channel::<pb::TaggedGetResponse>(GET_STREAM_ANSWERS_QUEUED);
    let mut buffer: Vec<u8> = Vec::with_capacity(READ_CHUNK_BYTES);
    let mut out = Vec::new();
    loop {
        buffer.reserve(READ_CHUNK_BYTES);
        let mut ready = Vec::new();
        tokio::select! {
            read = reader.read_buf(&mut buffer) => match read {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            },
            Some(answer) = late_answers.recv() => {
                ready.push(answer);
                while let Ok(answer) = late_answers.try_recv() {
                    ready.push(answer);
                }
            }
        }
        let mut used = 0;
        loop {
            match decode_frame::<pb::GetBatch>(&buffer[used..]) {
                Ok(None) => break,
                Ok(Some((batch, len))) => {
                    used += len;
                    for tagged in batch.gets {
                        let (id, request) = (tagged.id, tagged.request.unwrap_or_default());
                        match service.get_now(request) {
                            Ok(response) => ready.push(pb::TaggedGetResponse {
                                id,
                                response: Some(response),
                            }),
                            Err(request) => {
                                let (service, late) = (service.clone(), late.clone());
                                tokio::spawn(async move {
                                    let response = Some(service.get_later(request).await);
                                    let _ = late.send(pb::TaggedGetResponse { id, response }).await;
                                });
                            }
                        }
                    }
                }
                Err(e) => {
                    warn!(error = %e, "closing a point-read connection");
                    return;
                }
            }
        }
        buffer.drain(..used);
        if !ready.is_empty() {
            out.clear();
            encode_frame(&pb::GetAnswers { answers: ready }, &mut out);
            if writer.write_all(&out).await.is_err() {
                return;
            }
        }
    }
}
