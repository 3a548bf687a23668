//! `caching_sha2_password`, MySQL 8's default method, as its server runs it.
//!
//! ```text
//!   client: SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + scramble)
//!   [the SQL node's cache holds SHA256(SHA256(pw)) and the scramble matches]
//!   server: AuthMoreData 0x03 (fast auth succeeded), then OK
//!   [otherwise] server: AuthMoreData 0x04 (perform full authentication)
//!     over TLS or the Unix socket        client: the password and a NUL
//!     over plain TCP                     client: 0x02 (request public key)
//!                                        server: AuthMoreData, the RSA public key (PEM)
//!                                        client: RSA-OAEP(password + NUL XOR scramble)
//!   server: checks the password against the stored SHA-256 crypt, caches its double hash
//! ```
//!
//! The key pair is the server's own ([`RsaKeyPair`]): generated at start, or kept in the data
//! folder of a playground (`private_key.pem`, `public_key.pem`, as MySQL's
//! `auto_generate_certs`), where a client may read the public key instead of asking for it.

use std::io::{self, Read, Write};
use std::path::Path;

use openssl::pkey::Private;
use openssl::rsa::{Padding, Rsa};
use sha2::{Digest, Sha256};

use crate::error::ConnectionError;
use crate::handshake::SCRAMBLE_BYTES;
use crate::packet::{PacketReader, PacketWriter};

/// AuthMoreData: the scramble matched the cached hash.
pub(crate) const FAST_AUTH_SUCCESS: [u8; 2] = [0x01, 0x03];
/// AuthMoreData: the client must send its password.
const PERFORM_FULL_AUTHENTICATION: [u8; 2] = [0x01, 0x04];
/// The client's request for the server's public key.
const REQUEST_PUBLIC_KEY: u8 = 0x02;
/// The AuthMoreData marker before the public key.
const MORE_DATA: u8 = 0x01;
/// The size of the generated key, as MySQL's.
const RSA_BITS: u32 = 2048;
/// Where a data folder keeps the key pair (MySQL's names).
pub const PRIVATE_KEY_FILE: &str = "private_key.pem";
pub const PUBLIC_KEY_FILE: &str = "public_key.pem";

/// The server's RSA key pair for passwords sent over plain connections.
pub struct RsaKeyPair {
    private: Rsa<Private>,
    public_pem: Vec<u8>,
}

impl std::fmt::Debug for RsaKeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RsaKeyPair").finish_non_exhaustive()
    }
}

impl RsaKeyPair {
    /// A new 2048-bit key pair.
    pub fn generate() -> Result<RsaKeyPair, String> {
        let private = Rsa::generate(RSA_BITS).map_err(|e| format!("generating an RSA key: {e}"))?;
        RsaKeyPair::from_private(private)
    }

    /// The key pair kept in `dir`, made there on first use (the private key readable by its
    /// owner only).
    pub fn load_or_generate(dir: &Path) -> Result<RsaKeyPair, String> {
        let private_path = dir.join(PRIVATE_KEY_FILE);
        let public_path = dir.join(PUBLIC_KEY_FILE);
        if private_path.exists() {
            return RsaKeyPair::load(&private_path);
        }
        let pair = RsaKeyPair::generate()?;
        let private_pem = pair
            .private
            .private_key_to_pem()
            .map_err(|e| format!("encoding the RSA key: {e}"))?;
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        crate::tls::write_private(&private_path, &private_pem)?;
        std::fs::write(&public_path, &pair.public_pem)
            .map_err(|e| format!("{}: {e}", public_path.display()))?;
        Ok(pair)
    }

    /// The key pair whose private key (PEM, PKCS#1 or PKCS#8) is in `path`.
    pub fn load(path: &Path) -> Result<RsaKeyPair, String> {
        let pem = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let private = Rsa::private_key_from_pem(&pem)
            .or_else(|_| openssl::pkey::PKey::private_key_from_pem(&pem).and_then(|key| key.rsa()))
            .map_err(|e| format!("{}: not an RSA private key: {e}", path.display()))?;
        RsaKeyPair::from_private(private)
    }

    fn from_private(private: Rsa<Private>) -> Result<RsaKeyPair, String> {
        let public_pem = private
            .public_key_to_pem()
            .map_err(|e| format!("encoding the RSA public key: {e}"))?;
        Ok(RsaKeyPair {
            private,
            public_pem,
        })
    }

    /// The public key as clients read it: PEM, SubjectPublicKeyInfo.
    pub fn public_pem(&self) -> &[u8] {
        &self.public_pem
    }

    /// Decrypts an RSA-OAEP (SHA-1) block; None for anything else.
    fn decrypt(&self, ciphertext: &[u8]) -> Option<Vec<u8>> {
        let size = usize::try_from(self.private.size()).ok()?;
        if ciphertext.len() != size {
            return None;
        }
        let mut plain = vec![0u8; size];
        let length = self
            .private
            .private_decrypt(ciphertext, &mut plain, Padding::PKCS1_OAEP)
            .ok()?;
        plain.truncate(length);
        Some(plain)
    }
}

/// Checks a fast-path response against SHA256(SHA256(password)): the client sends
/// `SHA256(password) XOR SHA256(SHA256(SHA256(password)) + scramble)`.
pub fn verify_fast(
    scramble: &[u8; SCRAMBLE_BYTES],
    auth_response: &[u8],
    stored: &[u8; 32],
) -> bool {
    if auth_response.len() != 32 {
        return false;
    }
    let mut hasher = Sha256::new();
    hasher.update(stored);
    hasher.update(scramble);
    let mask = hasher.finalize();
    let stage1: Vec<u8> = (0..32).map(|i| auth_response[i] ^ mask[i]).collect();
    let candidate = Sha256::digest(&stage1);
    let difference = (0..32).fold(0u8, |acc, i| acc | (candidate[i] ^ stored[i]));
    difference == 0
}

/// Full authentication: tells the client so and reads its password, in clear over a
/// `secure` transport (TLS, the Unix socket), else encrypted with `rsa` (sending the public
/// key first when the client asks for it). None when the client sent nothing that decrypts.
/// Leaves the writer's sequence after the client's last packet.
pub(crate) fn read_password<R: Read, W: Write>(
    reader: &mut PacketReader<R>,
    writer: &mut PacketWriter<W>,
    scramble: &[u8; SCRAMBLE_BYTES],
    secure: bool,
    rsa: Option<&RsaKeyPair>,
) -> Result<Option<Vec<u8>>, ConnectionError> {
    let mut packet = exchange(reader, writer, &PERFORM_FULL_AUTHENTICATION)?;
    if secure {
        // The password and its NUL.
        if packet.last() == Some(&0) {
            packet.pop();
        }
        return Ok(Some(packet));
    }
    let Some(rsa) = rsa else {
        return Ok(None);
    };
    if packet == [REQUEST_PUBLIC_KEY] {
        let mut reply = vec![MORE_DATA];
        reply.extend_from_slice(rsa.public_pem());
        packet = exchange(reader, writer, &reply)?;
    }
    let Some(mut password) = rsa.decrypt(&packet) else {
        return Ok(None);
    };
    for (i, byte) in password.iter_mut().enumerate() {
        *byte ^= scramble[i % SCRAMBLE_BYTES];
    }
    if password.last() == Some(&0) {
        password.pop();
    }
    Ok(Some(password))
}

/// Sends `payload` and reads the client's next packet.
fn exchange<R: Read, W: Write>(
    reader: &mut PacketReader<R>,
    writer: &mut PacketWriter<W>,
    payload: &[u8],
) -> Result<Vec<u8>, ConnectionError> {
    writer.write_with(|buffer| buffer.extend_from_slice(payload))?;
    writer.flush()?;
    reader.set_sequence(writer.sequence());
    let mut packet = Vec::new();
    if !reader.read_payload(&mut packet)? {
        return Err(io::Error::from(io::ErrorKind::UnexpectedEof).into());
    }
    writer.set_sequence(reader.sequence());
    Ok(packet)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openssl::rsa::Rsa;

    #[test]
    fn a_password_encrypted_with_the_public_key_comes_back() {
        let pair = RsaKeyPair::generate().unwrap();
        let public = Rsa::public_key_from_pem(pair.public_pem()).unwrap();
        let plain = b"s3cret\0";
        let mut sealed = vec![0u8; public.size() as usize];
        let n = public
            .public_encrypt(plain, &mut sealed, Padding::PKCS1_OAEP)
            .unwrap();
        sealed.truncate(n);
        assert_eq!(pair.decrypt(&sealed).as_deref(), Some(&plain[..]));
        // Anything that is not such a block gives nothing.
        assert_eq!(pair.decrypt(b"s3cret\0"), None);
        sealed[10] ^= 1;
        assert_eq!(pair.decrypt(&sealed), None);
    }

    #[test]
    fn a_given_private_key_is_read_in_either_pem_form() {
        let dir = tempfile::tempdir().unwrap();
        let rsa = Rsa::generate(2048).unwrap();
        let public = rsa.public_key_to_pem().unwrap();
        let pkcs1 = dir.path().join("pkcs1.pem");
        std::fs::write(&pkcs1, rsa.private_key_to_pem().unwrap()).unwrap();
        let pkcs8 = dir.path().join("pkcs8.pem");
        let key = openssl::pkey::PKey::from_rsa(rsa).unwrap();
        std::fs::write(&pkcs8, key.private_key_to_pem_pkcs8().unwrap()).unwrap();
        for path in [&pkcs1, &pkcs8] {
            assert_eq!(RsaKeyPair::load(path).unwrap().public_pem(), public);
        }
        let other = dir.path().join("other.pem");
        std::fs::write(&other, b"not a key").unwrap();
        assert!(RsaKeyPair::load(&other).is_err());
        assert!(RsaKeyPair::load(&dir.path().join("missing.pem")).is_err());
    }

    #[test]
    fn a_kept_key_pair_is_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let first = RsaKeyPair::load_or_generate(dir.path()).unwrap();
        let again = RsaKeyPair::load_or_generate(dir.path()).unwrap();
        assert_eq!(first.public_pem(), again.public_pem());
        assert_eq!(
            std::fs::read(dir.path().join(PUBLIC_KEY_FILE)).unwrap(),
            first.public_pem()
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join(PRIVATE_KEY_FILE))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "the private key is its owner's alone");
    }
}
