//! The point-read connections of SQL nodes, served beside gRPC on the KV node's port: a
//! connection that opens with [`READ_STREAM_PREFACE`] carries `GetBatch` frames in and
//! `GetAnswers` frames out (`strata_proto::frame`); any other goes to the gRPC server.
//!
//! A batch's reads that need no wait are answered together, in one frame, as soon as the
//! batch is read; a read that waits for a commit in flight answers alone, later.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use strata_pd_client::Security;
use strata_proto::frame::{decode_frame, encode_frame, READ_STREAM_PREFACE};
use strata_proto::kv as pb;
use strata_proto::security::Conn;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tracing::{info, warn};

use crate::KvService;

/// Answers of waiting reads queued on one connection before their tasks wait for the writer.
pub const GET_STREAM_ANSWERS_QUEUED: usize = 1024;
/// Accepted gRPC connections queued for the gRPC server.
pub const GRPC_CONNECTIONS_QUEUED: usize = 128;
/// How long a new connection may take to finish its TLS handshake (under TLS) and show which
/// kind it is.
pub const PREFACE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the listener pauses after a failed accept (say, out of file descriptors).
const ACCEPT_RETRY: Duration = Duration::from_millis(10);
/// Room kept free in a connection's buffer for each read from the socket.
const READ_CHUNK_BYTES: usize = 64 << 10;

/// Accepts connections on `listener` (with `TCP_NODELAY`, through the TLS handshake under
/// `security`), serves the point-read ones with `service`, and yields the others, for
/// `tonic`'s `serve_with_incoming`. It runs on the calling runtime until the returned stream
/// is dropped.
pub fn split_incoming(
    listener: TcpListener,
    security: Security,
    service: KvService,
) -> ReceiverStream<io::Result<Conn>> {
    let (grpc, incoming) = mpsc::channel(GRPC_CONNECTIONS_QUEUED);
    tokio::spawn(async move {
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = grpc.closed() => return,
            };
            match accepted {
                Ok((stream, peer)) => {
                    tokio::spawn(sort_connection(
                        stream,
                        peer,
                        security.clone(),
                        service.clone(),
                        grpc.clone(),
                    ));
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
    peer: SocketAddr,
    security: Security,
    service: KvService,
    grpc: mpsc::Sender<io::Result<Conn>>,
) {
    let sorted = tokio::time::timeout(PREFACE_TIMEOUT, async {
        let mut conn = security.accept(stream).await?;
        let reads = conn.opens_with(READ_STREAM_PREFACE).await?;
        Ok::<_, io::Error>((conn, reads))
    });
    match sorted.await {
        Ok(Ok((conn, true))) => serve_reads(conn, service).await,
        Ok(Ok((conn, false))) => {
            let _ = grpc.send(Ok(conn)).await;
        }
        // Refused by TLS, closed, or silent before it said anything: dropped.
        Ok(Err(e)) => info!(%peer, error = %e, "dropped a connection"),
        Err(_) => info!(%peer, "dropped a connection that said nothing"),
    }
}

/// Answers the point reads of one connection until the client closes it or sends what is
/// not a batch.
async fn serve_reads(conn: Conn, service: KvService) {
    let (mut reader, mut writer) = conn.into_split();
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
