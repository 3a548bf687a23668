//! Mutual TLS between the roles of a cluster, as TiDB's `[security]` section (`cluster-ssl-ca`,
//! `cluster-ssl-cert`, `cluster-ssl-key`).
//!
//! A process holds one [`Security`]: plain, or a [`ClusterTls`] made of the cluster's CA and
//! this node's certificate and key. With TLS, every gRPC channel and every framed point-read
//! connection it opens shows its certificate and checks the other side's against the CA (and
//! the address it dialled), and every connection it accepts must show a certificate issued by
//! the CA: a caller without one is dropped during the handshake, before any request is read.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::{TlsAcceptor, TlsConnector};
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::server::{Connected, TcpConnectInfo};
use tonic::transport::{Certificate, ClientTlsConfig, Endpoint, Identity};

/// How long an accepted connection may take to finish its TLS handshake.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Accepted connections queued for a gRPC server.
const CONNECTIONS_QUEUED: usize = 128;
/// How long a listener pauses after a failed accept (say, out of file descriptors).
const ACCEPT_RETRY: Duration = Duration::from_millis(10);

/// The half of a connection that reads.
pub type ReadHalf = Box<dyn AsyncRead + Send + Unpin>;
/// The half of a connection that writes.
pub type WriteHalf = Box<dyn AsyncWrite + Send + Unpin>;

/// The cluster's CA and this node's certificate and key, as rustls configurations.
pub struct ClusterTls {
    ca_pem: Vec<u8>,
    cert_pem: Vec<u8>,
    key_pem: Vec<u8>,
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
}

impl ClusterTls {
    /// Reads the CA certificate, this node's certificate chain and its private key (PEM).
    pub fn load(ca: &Path, cert: &Path, key: &Path) -> Result<ClusterTls, String> {
        let read = |path: &Path, what: &str| {
            std::fs::read(path).map_err(|e| format!("reading the {what} {}: {e}", path.display()))
        };
        ClusterTls::from_pem(
            read(ca, "cluster CA")?,
            read(cert, "cluster certificate")?,
            read(key, "cluster key")?,
        )
    }

    /// Builds the configurations from PEM text.
    pub fn from_pem(
        ca_pem: Vec<u8>,
        cert_pem: Vec<u8>,
        key_pem: Vec<u8>,
    ) -> Result<ClusterTls, String> {
        let mut roots = RootCertStore::empty();
        for ca in CertificateDer::pem_slice_iter(&ca_pem) {
            let ca = ca.map_err(|e| format!("the cluster CA: {e}"))?;
            roots
                .add(ca)
                .map_err(|e| format!("the cluster CA is not a CA certificate: {e}"))?;
        }
        if roots.is_empty() {
            return Err("no certificate in the cluster CA file".into());
        }
        let roots = Arc::new(roots);
        let chain = CertificateDer::pem_slice_iter(&cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("the cluster certificate: {e}"))?;
        if chain.is_empty() {
            return Err("no certificate in the cluster certificate file".into());
        }
        let key =
            PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| format!("the cluster key: {e}"))?;
        // ring, as on the MySQL port (crates/mysql/src/tls.rs says why).
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier = WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone())
            .build()
            .map_err(|e| format!("the cluster CA cannot check clients: {e}"))?;
        let mut server = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .and_then(|b| {
                b.with_client_cert_verifier(verifier)
                    .with_single_cert(chain.clone(), key.clone_key())
            })
            .map_err(|e| {
                format!("the cluster certificate and key do not make a TLS server: {e}")
            })?;
        // gRPC clients insist on HTTP/2; point-read connections ask for no protocol.
        server.alpn_protocols = vec![b"h2".to_vec()];
        let client = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .map_err(|e| {
                format!("the cluster certificate and key do not make a TLS client: {e}")
            })?;
        Ok(ClusterTls {
            ca_pem,
            cert_pem,
            key_pem,
            client: Arc::new(client),
            server: Arc::new(server),
        })
    }
}

/// How this process reaches the other roles and admits them: plain, or mutual TLS.
#[derive(Clone, Default)]
pub struct Security {
    tls: Option<Arc<ClusterTls>>,
}

impl std::fmt::Debug for Security {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.tls.is_some() {
            "Security(mutual TLS)"
        } else {
            "Security(plain)"
        })
    }
}

impl Security {
    /// Plain TCP: anyone who reaches a port is served.
    pub fn plain() -> Security {
        Security::default()
    }

    /// Mutual TLS with `tls`.
    pub fn tls(tls: ClusterTls) -> Security {
        Security {
            tls: Some(Arc::new(tls)),
        }
    }

    /// Whether connections are mutual TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// A gRPC endpoint for `address` (host:port), with this node's certificate under TLS.
    pub fn endpoint(&self, address: &str) -> Result<Endpoint, String> {
        let Some(tls) = &self.tls else {
            return Endpoint::from_shared(format!("http://{address}"))
                .map_err(|e| format!("bad address {address}: {e}"));
        };
        let config = ClientTlsConfig::new()
            .ca_certificate(Certificate::from_pem(&tls.ca_pem))
            .identity(Identity::from_pem(&tls.cert_pem, &tls.key_pem))
            .domain_name(host_of(address));
        Endpoint::from_shared(format!("https://{address}"))
            .and_then(|endpoint| endpoint.tls_config(config))
            .map_err(|e| format!("bad address {address}: {e}"))
    }

    /// Opens a framed connection to `address` (host:port), with `TCP_NODELAY`, and its TLS
    /// session under TLS; it fails after `timeout`.
    pub async fn connect(
        &self,
        address: &str,
        timeout: Duration,
    ) -> io::Result<(ReadHalf, WriteHalf)> {
        let connecting = async {
            let stream = TcpStream::connect(address).await?;
            stream.set_nodelay(true)?;
            let Some(tls) = &self.tls else {
                let (reader, writer) = stream.into_split();
                return Ok::<_, io::Error>((
                    Box::new(reader) as ReadHalf,
                    Box::new(writer) as WriteHalf,
                ));
            };
            let name = ServerName::try_from(host_of(address))
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            let stream = TlsConnector::from(tls.client.clone())
                .connect(name, stream)
                .await?;
            let (reader, writer) = tokio::io::split(stream);
            Ok((Box::new(reader) as ReadHalf, Box::new(writer) as WriteHalf))
        };
        tokio::time::timeout(timeout, connecting)
            .await
            .unwrap_or_else(|_| Err(io::ErrorKind::TimedOut.into()))
    }

    /// Takes an accepted connection through the TLS handshake (under TLS), which must show a
    /// certificate of the cluster's CA.
    pub async fn accept(&self, stream: TcpStream) -> io::Result<Conn> {
        let _ = stream.set_nodelay(true);
        let inner = match &self.tls {
            None => Inner::Plain(stream),
            Some(tls) => Inner::Tls(Box::new(
                TlsAcceptor::from(tls.server.clone()).accept(stream).await?,
            )),
        };
        Ok(Conn {
            inner,
            replay: Vec::new(),
            replayed: 0,
        })
    }

    /// Accepts connections on `listener` and yields each once through [`Security::accept`]
    /// (within [`HANDSHAKE_TIMEOUT`]; a slow or refused one never holds up the others), for
    /// `tonic`'s `serve_with_incoming`. It runs on the calling runtime until the returned
    /// stream is dropped.
    pub fn incoming(&self, listener: TcpListener) -> ReceiverStream<io::Result<Conn>> {
        let (accepted, incoming) = mpsc::channel(CONNECTIONS_QUEUED);
        let security = self.clone();
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    stream = listener.accept() => stream,
                    () = accepted.closed() => return,
                };
                match stream {
                    Ok((stream, peer)) => {
                        let (security, accepted) = (security.clone(), accepted.clone());
                        tokio::spawn(async move {
                            match tokio::time::timeout(HANDSHAKE_TIMEOUT, security.accept(stream))
                                .await
                            {
                                Ok(Ok(conn)) => {
                                    let _ = accepted.send(Ok(conn)).await;
                                }
                                Ok(Err(e)) => {
                                    tracing::info!(%peer, error = %e, "refused a connection")
                                }
                                Err(_) => {
                                    tracing::info!(%peer, "a connection's handshake timed out")
                                }
                            }
                        });
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "accepting a connection failed");
                        tokio::time::sleep(ACCEPT_RETRY).await;
                    }
                }
            }
        });
        ReceiverStream::new(incoming)
    }
}

/// The CA certificate's file name in a folder of [`generate_local`].
pub const CA_FILE: &str = "ca.pem";

/// The certificate and key files of `node` in a folder of [`generate_local`].
pub fn node_files(dir: &Path, node: &str) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{node}.pem")),
        dir.join(format!("{node}-key.pem")),
    )
}

/// Writes a new CA and one certificate per node into `dir` (`ca.pem`, and [`node_files`] of
/// each of `nodes`), each valid for `hosts` as server and as client, unless they are all
/// there already. A local cluster's certificates, as `tiup playground` makes them: the CA's
/// key is not kept, so no one can issue more.
pub fn generate_local(dir: &Path, nodes: &[String], hosts: &[String]) -> Result<(), String> {
    let all_there = dir.join(CA_FILE).exists()
        && nodes.iter().all(|node| {
            let (cert, key) = node_files(dir, node);
            cert.exists() && key.exists()
        });
    if all_there {
        return Ok(());
    }
    let failed = |e: rcgen::Error| format!("generating the cluster's certificates: {e}");
    let ca_key = rcgen::KeyPair::generate().map_err(failed)?;
    let mut ca = rcgen::CertificateParams::default();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "Strata local cluster CA");
    let ca = ca.self_signed(&ca_key).map_err(failed)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for node in nodes {
        let key = rcgen::KeyPair::generate().map_err(failed)?;
        let mut params = rcgen::CertificateParams::new(hosts.to_vec()).map_err(failed)?;
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, node.as_str());
        params.key_usages = vec![rcgen::KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![
            rcgen::ExtendedKeyUsagePurpose::ServerAuth,
            rcgen::ExtendedKeyUsagePurpose::ClientAuth,
        ];
        let cert = params.signed_by(&key, &ca, &ca_key).map_err(failed)?;
        let (cert_file, key_file) = node_files(dir, node);
        write_file(&key_file, key.serialize_pem().as_bytes(), 0o600)?;
        write_file(&cert_file, cert.pem().as_bytes(), 0o644)?;
    }
    write_file(&dir.join(CA_FILE), ca.pem().as_bytes(), 0o644)
}

/// Writes a file with the permissions `mode`.
fn write_file(path: &Path, contents: &[u8], mode: u32) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .open(path)
        .and_then(|mut file| file.write_all(contents))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// The host part of `host:port` (without the brackets of an IPv6 address).
fn host_of(address: &str) -> String {
    let host = address.rsplit_once(':').map_or(address, |(host, _)| host);
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_string()
}

/// An accepted connection, after its TLS handshake under TLS. Bytes read to see how it opens
/// ([`Conn::opens_with`]) are read again by whoever serves it.
pub struct Conn {
    inner: Inner,
    replay: Vec<u8>,
    replayed: usize,
}

enum Inner {
    Plain(TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

impl Conn {
    /// Whether the connection's first bytes are `preface`; they stay unread.
    pub async fn opens_with(&mut self, preface: &[u8]) -> io::Result<bool> {
        loop {
            let seen = match &mut self.inner {
                Inner::Plain(stream) => {
                    let mut seen = vec![0u8; preface.len()];
                    let n = stream.peek(&mut seen).await?;
                    seen.truncate(n);
                    seen
                }
                Inner::Tls(stream) => {
                    if self.replay.len() < preface.len() {
                        let mut chunk = vec![0u8; preface.len() - self.replay.len()];
                        let n = stream.read(&mut chunk).await?;
                        self.replay.extend_from_slice(&chunk[..n]);
                        if n == 0 {
                            return Err(io::ErrorKind::UnexpectedEof.into());
                        }
                    }
                    self.replay.clone()
                }
            };
            if seen.is_empty() {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            if seen[..] != preface[..seen.len()] {
                return Ok(false);
            }
            if seen.len() == preface.len() {
                return Ok(true);
            }
            if let Inner::Plain(_) = self.inner {
                // Part of the preface came: the rest is on its way (a peek would find the same
                // bytes at once rather than wait for more).
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    }

    /// The connection's two halves, for a reader and a writer that run apart.
    pub fn into_split(self) -> (ReadHalf, WriteHalf) {
        match self.inner {
            Inner::Plain(stream) if self.replay.is_empty() => {
                let (reader, writer) = stream.into_split();
                (Box::new(reader), Box::new(writer))
            }
            _ => {
                let (reader, writer) = tokio::io::split(self);
                (Box::new(reader), Box::new(writer))
            }
        }
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.replayed < this.replay.len() {
            let left = &this.replay[this.replayed..];
            let n = left.len().min(buf.remaining());
            buf.put_slice(&left[..n]);
            this.replayed += n;
            if this.replayed == this.replay.len() {
                this.replay = Vec::new();
                this.replayed = 0;
            }
            return Poll::Ready(Ok(()));
        }
        match &mut this.inner {
            Inner::Plain(stream) => Pin::new(stream).poll_read(cx, buf),
            Inner::Tls(stream) => Pin::new(stream.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().inner {
            Inner::Plain(stream) => Pin::new(stream).poll_write(cx, data),
            Inner::Tls(stream) => Pin::new(stream.as_mut()).poll_write(cx, data),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().inner {
            Inner::Plain(stream) => Pin::new(stream).poll_write_vectored(cx, data),
            Inner::Tls(stream) => Pin::new(stream.as_mut()).poll_write_vectored(cx, data),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match &self.inner {
            Inner::Plain(stream) => stream.is_write_vectored(),
            Inner::Tls(stream) => stream.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().inner {
            Inner::Plain(stream) => Pin::new(stream).poll_flush(cx),
            Inner::Tls(stream) => Pin::new(stream.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().inner {
            Inner::Plain(stream) => Pin::new(stream).poll_shutdown(cx),
            Inner::Tls(stream) => Pin::new(stream.as_mut()).poll_shutdown(cx),
        }
    }
}

impl Connected for Conn {
    type ConnectInfo = TcpConnectInfo;

    fn connect_info(&self) -> TcpConnectInfo {
        match &self.inner {
            Inner::Plain(stream) => stream.connect_info(),
            Inner::Tls(stream) => stream.get_ref().0.connect_info(),
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncWriteExt;

    use super::*;

    #[test]
    fn the_host_of_an_address() {
        assert_eq!(host_of("127.0.0.1:20160"), "127.0.0.1");
        assert_eq!(host_of("kv-1.example:20160"), "kv-1.example");
        assert_eq!(host_of("[::1]:2379"), "::1");
    }

    fn cluster(dir: &Path, node: &str) -> Security {
        let nodes = ["server".to_string(), "client".to_string()];
        generate_local(dir, &nodes, &["localhost".into(), "127.0.0.1".into()]).unwrap();
        let (cert, key) = node_files(dir, node);
        Security::tls(ClusterTls::load(&dir.join(CA_FILE), &cert, &key).unwrap())
    }

    #[tokio::test]
    async fn only_a_caller_certified_by_the_cluster_ca_gets_through() {
        let (ours, theirs) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let server = cluster(ours.path(), "server");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let serving = tokio::spawn(async move {
            let mut outcomes = Vec::new();
            for _ in 0..3 {
                let (stream, _) = listener.accept().await.unwrap();
                let outcome = match server.accept(stream).await {
                    Ok(mut conn) => {
                        let framed = conn.opens_with(b"PREFACE").await.unwrap();
                        let mut all = Vec::new();
                        conn.read_to_end(&mut all).await.unwrap();
                        Ok((framed, String::from_utf8(all).unwrap()))
                    }
                    Err(e) => Err(e.to_string()),
                };
                outcomes.push(outcome);
            }
            outcomes
        });
        let timeout = Duration::from_secs(5);

        // A node of the cluster: its bytes arrive whole, the preface seen and read again.
        let (_, mut writer) = cluster(ours.path(), "client")
            .connect(&address, timeout)
            .await
            .unwrap();
        writer.write_all(b"PREFACE and a batch").await.unwrap();
        writer.shutdown().await.unwrap();
        drop(writer);
        // A node of another cluster: its certificate is refused.
        let stranger = cluster(theirs.path(), "client")
            .connect(&address, timeout)
            .await;
        if let Ok((mut reader, _)) = stranger {
            let mut byte = [0u8; 1];
            assert!(
                reader.read(&mut byte).await.is_err(),
                "the stranger was answered"
            );
        }
        // A plain client: no TLS, no answer.
        let (mut reader, mut writer) = Security::plain().connect(&address, timeout).await.unwrap();
        writer.write_all(b"PREFACE plain").await.unwrap();
        let mut answer = Vec::new();
        let _ = reader.read_to_end(&mut answer).await;
        assert!(
            !answer.starts_with(b"PREFACE"),
            "the plain client was served"
        );

        let outcomes = serving.await.unwrap();
        assert_eq!(
            outcomes[0],
            Ok((true, "PREFACE and a batch".to_string())),
            "the cluster's node"
        );
        assert!(
            outcomes[1].is_err(),
            "the other cluster's node: {:?}",
            outcomes[1]
        );
        assert!(outcomes[2].is_err(), "the plain client: {:?}", outcomes[2]);
    }

    #[tokio::test]
    async fn a_plain_connection_is_sorted_by_its_first_bytes_without_consuming_them() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let client = tokio::spawn(async move {
            let (_, mut writer) = Security::plain()
                .connect(&address, Duration::from_secs(5))
                .await
                .unwrap();
            writer.write_all(b"PRI * HTTP/2.0").await.unwrap();
        });
        let (stream, _) = listener.accept().await.unwrap();
        let mut conn = Security::plain().accept(stream).await.unwrap();
        assert!(!conn.opens_with(b"PREFACE").await.unwrap());
        client.await.unwrap();
        let mut all = Vec::new();
        conn.read_to_end(&mut all).await.unwrap();
        assert_eq!(all, b"PRI * HTTP/2.0");
    }
}
