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

use crate::handshake::CertificateNames;
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
pub(crate) fn write_private(path: &Path, contents: &[u8]) -> Result<(), String> {
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

    /// The names of the certificate the client showed (which the handshake checked against
    /// the CA); None when it showed none.
    pub(crate) fn client_names(&self) -> Option<CertificateNames> {
        let session = self.session.borrow();
        let certificate = session.peer_certificates()?.first()?;
        certificate_names(certificate.as_ref())
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
            .map(openssl_cipher_name)
            .unwrap_or_default();
        (version, cipher)
    }
}

/// The OpenSSL name of a cipher suite rustls names by its IANA name: what MySQL's
/// `Ssl_cipher` shows and `REQUIRE CIPHER` compares (`TLS_AES_256_GCM_SHA384`,
/// `ECDHE-RSA-AES128-GCM-SHA256`).
fn openssl_cipher_name(iana: &str) -> String {
    // TLS 1.3 suites: OpenSSL drops rustls's "13".
    if let Some(rest) = iana.strip_prefix("TLS13_") {
        return format!("TLS_{rest}");
    }
    // TLS 1.2: TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 is ECDHE-RSA-AES128-GCM-SHA256, and a
    // ChaCha20 suite drops its hash (ECDHE-RSA-CHACHA20-POLY1305).
    let Some((exchange, cipher)) = iana
        .strip_prefix("TLS_")
        .and_then(|name| name.split_once("_WITH_"))
    else {
        return iana.to_string();
    };
    let cipher = match cipher {
        "CHACHA20_POLY1305_SHA256" => "CHACHA20_POLY1305".to_string(),
        other => other.replacen("AES_", "AES", 1),
    };
    format!("{exchange}_{cipher}").replace('_', "-")
}

/// A DER certificate's subject and issuer in OpenSSL's one-line form; None when it does not
/// parse.
pub(crate) fn certificate_names(der: &[u8]) -> Option<CertificateNames> {
    use x509_cert::der::Decode;
    let certificate = x509_cert::Certificate::from_der(der).ok()?;
    let tbs = &certificate.tbs_certificate;
    Some(CertificateNames {
        subject: one_line(&tbs.subject),
        issuer: one_line(&tbs.issuer),
    })
}

/// `/C=SE/O=Shop/CN=ann`: each attribute in the certificate's order, by OpenSSL's short
/// name (the dotted number of one it has no name for).
fn one_line(name: &x509_cert::name::Name) -> String {
    let mut out = String::new();
    for attribute in name.0.iter().flat_map(|rdn| rdn.0.iter()) {
        let oid = attribute.oid.to_string();
        let short = match oid.as_str() {
            "2.5.4.3" => "CN",
            "2.5.4.4" => "SN",
            "2.5.4.5" => "serialNumber",
            "2.5.4.6" => "C",
            "2.5.4.7" => "L",
            "2.5.4.8" => "ST",
            "2.5.4.9" => "street",
            "2.5.4.10" => "O",
            "2.5.4.11" => "OU",
            "2.5.4.12" => "title",
            "2.5.4.42" => "GN",
            "1.2.840.113549.1.9.1" => "emailAddress",
            "0.9.2342.19200300.100.1.1" => "UID",
            "0.9.2342.19200300.100.1.25" => "DC",
            other => other,
        };
        out.push('/');
        out.push_str(short);
        out.push('=');
        out.push_str(&String::from_utf8_lossy(attribute.value.value()));
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cipher_suites_take_openssl_names() {
        for (iana, openssl) in [
            ("TLS13_AES_256_GCM_SHA384", "TLS_AES_256_GCM_SHA384"),
            (
                "TLS13_CHACHA20_POLY1305_SHA256",
                "TLS_CHACHA20_POLY1305_SHA256",
            ),
            (
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                "ECDHE-RSA-AES128-GCM-SHA256",
            ),
            (
                "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                "ECDHE-ECDSA-AES256-GCM-SHA384",
            ),
            (
                "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
                "ECDHE-RSA-CHACHA20-POLY1305",
            ),
        ] {
            assert_eq!(openssl_cipher_name(iana), openssl);
        }
    }

    #[test]
    fn a_certificates_names_read_as_openssl_prints_them() {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        let mut name = rcgen::DistinguishedName::new();
        name.push(rcgen::DnType::CountryName, "SE");
        name.push(rcgen::DnType::OrganizationName, "Shop");
        name.push(rcgen::DnType::CommonName, "ann");
        params.distinguished_name = name;
        let key = rcgen::KeyPair::generate().unwrap();
        let certificate = params.self_signed(&key).unwrap();
        let names = certificate_names(certificate.der()).unwrap();
        assert_eq!(names.subject, "/C=SE/O=Shop/CN=ann");
        assert_eq!(names.issuer, "/C=SE/O=Shop/CN=ann");
        assert_eq!(certificate_names(b"not a certificate"), None);
    }
}
