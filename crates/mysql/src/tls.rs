//! TLS on the MySQL port, with rustls.
//!
//! A server with a [`TlsConfig`] advertises `CLIENT_SSL`. A client that wants TLS sends an
//! SSLRequest (the first 32 bytes of a HandshakeResponse41, with the SSL flag) instead of its
//! response; the server then runs the TLS handshake on the socket, and the client sends its
//! full response, and everything after it, through TLS (`TlsSocket`).
//!
//! The certificate is the operator's (`--ssl-cert` / `--ssl-key`) or, as MySQL's
//! `auto_generate_certs` and TiDB's `auto-tls` do, a self-signed one generated into the data
//! folder on first start and kept there.

use std::cell::RefCell;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, ServerConnection};

use crate::socket::Socket;

/// The file names of a generated certificate and its key in the data folder.
pub const GENERATED_CERT: &str = "server-cert.pem";
pub const GENERATED_KEY: &str = "server-key.pem";

/// What a server presents to a client that asks for TLS.
#[derive(Clone, Debug)]
pub struct TlsConfig {
    config: Arc<ServerConfig>,
}

impl TlsConfig {
    /// Loads a PEM certificate chain and its private key. With `client_ca` (PEM), a client may
    /// show a certificate, which must be issued by that CA (for `REQUIRE X509` accounts).
    pub fn load(cert: &Path, key: &Path, client_ca: Option<&Path>) -> Result<TlsConfig, String> {
        let chain = CertificateDer::pem_file_iter(cert)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("reading the certificate {}: {e}", cert.display()))?;
        if chain.is_empty() {
            return Err(format!("no certificate in {}", cert.display()));
        }
        let key = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| format!("reading the private key {}: {e}", key.display()))?;
        // ring rather than aws-lc-rs (rustls's default, which deprecates ring's provider for
        // lacking post-quantum key exchange): aws-lc needs a CMake build of its C sources,
        // and MySQL clients negotiate classical groups anyway.
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?;
        let builder = match client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                for certificate in CertificateDer::pem_file_iter(ca)
                    .map_err(|e| format!("reading the CA {}: {e}", ca.display()))?
                {
                    let certificate =
                        certificate.map_err(|e| format!("reading the CA {}: {e}", ca.display()))?;
                    roots
                        .add(certificate)
                        .map_err(|e| format!("the CA {}: {e}", ca.display()))?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                        .allow_unauthenticated()
                        .build()
                        .map_err(|e| {
                            format!("the CA {} cannot check clients: {e}", ca.display())
                        })?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let config = builder
            .with_single_cert(chain, key)
            .map_err(|e| format!("the certificate and key do not make a TLS server: {e}"))?;
        Ok(TlsConfig {
            config: Arc::new(config),
        })
    }

    /// The certificate in `dir`, generated (self-signed, for `localhost`) on first use;
    /// `client_ca` as in [`TlsConfig::load`].
    pub fn load_or_generate(dir: &Path, client_ca: Option<&Path>) -> Result<TlsConfig, String> {
        let (cert, key) = (dir.join(GENERATED_CERT), dir.join(GENERATED_KEY));
        if !cert.exists() || !key.exists() {
            let generated = rcgen::generate_simple_self_signed(vec![
                "localhost".to_string(),
                "127.0.0.1".to_string(),
            ])
            .map_err(|e| format!("generating a certificate: {e}"))?;
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            write_private(&key, generated.key_pair.serialize_pem().as_bytes())?;
            std::fs::write(&cert, generated.cert.pem())
                .map_err(|e| format!("{}: {e}", cert.display()))?;
        }
        TlsConfig::load(&cert, &key, client_ca)
    }
}

/// Writes a file only its owner may read.
fn write_private(path: &Path, contents: &[u8]) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    file.write_all(contents)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// A connection's socket after the TLS handshake: reads and writes go through the TLS
/// session. One thread (or fiber) drives a connection, so the session sits in a `RefCell`
/// that each read or write borrows for its duration.
pub(crate) struct TlsSocket<S> {
    session: RefCell<ServerConnection>,
    inner: S,
}

impl<S: Socket> TlsSocket<S> {
    /// Runs the TLS handshake over `inner`. `already_read` holds bytes the connection's
    /// reader took from the socket after the SSLRequest (a client may send its ClientHello
    /// without waiting), which are the start of the handshake.
    pub(crate) fn accept(
        config: &TlsConfig,
        inner: S,
        already_read: &[u8],
    ) -> io::Result<TlsSocket<S>> {
        let mut session = ServerConnection::new(config.config.clone()).map_err(io::Error::other)?;
        let mut pending = already_read;
        while !pending.is_empty() {
            session.read_tls(&mut pending)?;
            session.process_new_packets().map_err(io::Error::other)?;
        }
        let mut socket = inner;
        while session.is_handshaking() {
            session.complete_io(&mut socket)?;
        }
        Ok(TlsSocket {
            session: RefCell::new(session),
            inner,
        })
    }

    /// Whether the client showed a certificate (which the handshake checked against the CA).
    pub(crate) fn client_certified(&self) -> bool {
        self.session
            .borrow()
            .peer_certificates()
            .is_some_and(|certificates| !certificates.is_empty())
    }

    /// The negotiated protocol version and cipher suite, as MySQL's `Ssl_version` and
    /// `Ssl_cipher` name them.
    pub(crate) fn describe(&self) -> (String, String) {
        let session = self.session.borrow();
        let version = match session.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLSv1.3".to_string(),
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLSv1.2".to_string(),
            Some(other) => format!("{other:?}"),
            None => String::new(),
        };
        let cipher = session
            .negotiated_cipher_suite()
            .and_then(|suite| suite.suite().as_str())
            .unwrap_or_default()
            .to_string();
        (version, cipher)
    }
}

impl<S: Socket> Read for &TlsSocket<S> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let mut inner = self.inner;
        let mut session = self.session.borrow_mut();
        rustls::Stream::new(&mut *session, &mut inner).read(buffer)
    }
}

impl<S: Socket> Write for &TlsSocket<S> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let mut inner = self.inner;
        let mut session = self.session.borrow_mut();
        rustls::Stream::new(&mut *session, &mut inner).write(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut inner = self.inner;
        let mut session = self.session.borrow_mut();
        rustls::Stream::new(&mut *session, &mut inner).flush()
    }
}

impl<S: Socket> Socket for &TlsSocket<S> {
    fn set_read_timeout(self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_read_timeout(timeout)
    }

    fn set_write_timeout(self, timeout: Option<Duration>) -> io::Result<()> {
        self.inner.set_write_timeout(timeout)
    }

    fn set_nodelay(self, nodelay: bool) -> io::Result<()> {
        self.inner.set_nodelay(nodelay)
    }

    fn shutdown(self) {
        self.inner.shutdown()
    }
}
