//! Passwords as accounts keep them (`authentication_string`), and what a login is checked
//! against.
//!
//! - `mysql_native_password`: `*` and the upper-case hex of SHA1(SHA1(password)), as MySQL.
//! - `caching_sha2_password`: MySQL's form, `$A$005$`, a 20-byte salt and the 43-character
//!   SHA-256 crypt of the password with that salt in 5,000 rounds (Drepper's SHA-crypt, with
//!   MySQL's longer salt). The crypt cannot check a client's scramble, so a login's fast path
//!   uses SHA256(SHA256(password)) from the SQL node's [`Sha2Cache`], which a full
//!   authentication (the password itself, over TLS or RSA) fills, as MySQL's server does.
//!   Stored secrets of the older form `$S$` and the hex of SHA256(SHA256(password)) still
//!   check every scramble; no statement writes them any more.

use std::collections::HashMap;

use parking_lot::Mutex;
use rand::Rng;
use sha1::{Digest, Sha1};
use sha2::Sha256;

use super::{Identity, CACHING_SHA2_PASSWORD};

/// The prefix of a `caching_sha2_password` secret of the older form.
const SHA2_DOUBLE_HASH_PREFIX: &str = "$S$";
/// The prefix of MySQL's `caching_sha2_password` secret: SHA-256 crypt, 5 thousand rounds.
const SHA2_CRYPT_PREFIX: &str = "$A$005$";
/// Rounds of the SHA-256 crypt that [`SHA2_CRYPT_PREFIX`] names.
const SHA2_CRYPT_ROUNDS: u32 = 5_000;
/// Bytes of salt in a stored `caching_sha2_password` secret (MySQL's CRYPT_SALT_LENGTH).
const SHA2_SALT_BYTES: usize = 20;
/// Characters of the encoded digest after the salt.
const SHA2_DIGEST_CHARS: usize = 43;
/// The longest `caching_sha2_password` password MySQL accepts: the crypt's work grows with
/// the square of the length.
pub const SHA2_PASSWORD_MAX_BYTES: usize = 256;
/// Accounts the fast-path cache of a SQL node holds before it starts over.
const SHA2_CACHE_CAPACITY: usize = 100_000;

/// What a password check compares the client's answer with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credential {
    /// No password: the client sends nothing.
    None,
    /// `mysql_native_password`: SHA1(SHA1(password)).
    Native([u8; 20]),
    /// `caching_sha2_password` of the older stored form: SHA256(SHA256(password)), which
    /// checks every scramble.
    CachingSha2([u8; 32]),
    /// `caching_sha2_password` as MySQL stores it; `cached` is SHA256(SHA256(password)) once
    /// a full authentication succeeded on this SQL node, for the fast path.
    Sha2Crypt {
        secret: Sha2Crypt,
        cached: Option<[u8; 32]>,
    },
}

/// A stored SHA-256 crypt: its salt and encoded digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sha2Crypt {
    salt: Vec<u8>,
    digest: Vec<u8>,
}

impl Sha2Crypt {
    /// Reads `$A$005$<salt><digest>`.
    fn parse(text: &str) -> Option<Sha2Crypt> {
        let rest = text.as_bytes().strip_prefix(SHA2_CRYPT_PREFIX.as_bytes())?;
        if rest.len() != SHA2_SALT_BYTES + SHA2_DIGEST_CHARS {
            return None;
        }
        let (salt, digest) = rest.split_at(SHA2_SALT_BYTES);
        Some(Sha2Crypt {
            salt: salt.to_vec(),
            digest: digest.to_vec(),
        })
    }

    /// The crypt of `password` with a fresh salt: 20 random ASCII bytes other than NUL and
    /// `$`, as MySQL makes them.
    fn new(password: &[u8]) -> Sha2Crypt {
        let mut rng = rand::thread_rng();
        let salt: Vec<u8> = (0..SHA2_SALT_BYTES)
            .map(|_| match rng.gen::<u8>() & 0x7f {
                b @ (0 | b'$') => b + 1,
                b => b,
            })
            .collect();
        let digest = sha256_crypt(password, &salt, SHA2_CRYPT_ROUNDS).to_vec();
        Sha2Crypt { salt, digest }
    }

    /// The stored text.
    fn text(&self) -> String {
        let mut bytes = SHA2_CRYPT_PREFIX.as_bytes().to_vec();
        bytes.extend_from_slice(&self.salt);
        bytes.extend_from_slice(&self.digest);
        // Salt and digest are ASCII.
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Whether `password` is the one this crypt was made of.
    pub fn matches(&self, password: &[u8]) -> bool {
        if password.len() > SHA2_PASSWORD_MAX_BYTES {
            return false;
        }
        let candidate = sha256_crypt(password, &self.salt, SHA2_CRYPT_ROUNDS);
        // Compares every byte so the time taken does not depend on where a mismatch is.
        candidate.len() == self.digest.len()
            && candidate
                .iter()
                .zip(&self.digest)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }
}

/// SHA256(SHA256(password)): what the fast path of `caching_sha2_password` checks a scramble
/// against.
pub fn sha2_double_hash(password: &[u8]) -> [u8; 32] {
    Sha256::digest(Sha256::digest(password)).into()
}

/// The SHA-256 crypt of `password` with `salt` in `rounds` rounds (Ulrich Drepper's
/// "Unix crypt using SHA-256", steps 1 to 22), as its 43 encoded characters. The salt is used
/// whole: MySQL's are 20 bytes, the specification's at most 16.
fn sha256_crypt(password: &[u8], salt: &[u8], rounds: u32) -> [u8; SHA2_DIGEST_CHARS] {
    let length = password.len();
    // Steps 4 to 8: the alternate sum.
    let alternate = Sha256::new()
        .chain_update(password)
        .chain_update(salt)
        .chain_update(password)
        .finalize();
    // Steps 1 to 3 and 9 to 12.
    let mut a = Sha256::new().chain_update(password).chain_update(salt);
    let mut left = length;
    while left > 32 {
        a.update(alternate);
        left -= 32;
    }
    a.update(&alternate[..left]);
    let mut bits = length;
    while bits > 0 {
        if bits & 1 == 1 {
            a.update(alternate);
        } else {
            a.update(password);
        }
        bits >>= 1;
    }
    let a = a.finalize();
    // Steps 13 to 16: P, the password's sum stretched to its length.
    let mut dp = Sha256::new();
    for _ in 0..length {
        dp.update(password);
    }
    let dp = dp.finalize();
    let p: Vec<u8> = dp.iter().copied().cycle().take(length).collect();
    // Steps 17 to 20: S, the salt's sum stretched to its length.
    let mut ds = Sha256::new();
    for _ in 0..16 + usize::from(a[0]) {
        ds.update(salt);
    }
    let ds = ds.finalize();
    let s: Vec<u8> = ds.iter().copied().cycle().take(salt.len()).collect();
    // Step 21: the rounds.
    let mut c: [u8; 32] = a.into();
    for round in 0..rounds {
        let mut h = Sha256::new();
        if round % 2 == 1 {
            h.update(&p);
        } else {
            h.update(c);
        }
        if round % 3 != 0 {
            h.update(&s);
        }
        if round % 7 != 0 {
            h.update(&p);
        }
        if round % 2 == 1 {
            h.update(c);
        } else {
            h.update(&p);
        }
        c = h.finalize().into();
    }
    // Step 22: the digest's bytes in the specification's order, 6 bits per character.
    const ALPHABET: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    const GROUPS: [(usize, usize, usize); 10] = [
        (0, 10, 20),
        (21, 1, 11),
        (12, 22, 2),
        (3, 13, 23),
        (24, 4, 14),
        (15, 25, 5),
        (6, 16, 26),
        (27, 7, 17),
        (18, 28, 8),
        (9, 19, 29),
    ];
    let mut out = [0u8; SHA2_DIGEST_CHARS];
    let mut at = 0;
    let mut emit = |word: u32, chars: usize| {
        for i in 0..chars {
            out[at] = ALPHABET[((word >> (6 * i)) & 0x3f) as usize];
            at += 1;
        }
    };
    for (x, y, z) in GROUPS {
        emit(
            u32::from(c[x]) << 16 | u32::from(c[y]) << 8 | u32::from(c[z]),
            4,
        );
    }
    emit(u32::from(c[31]) << 8 | u32::from(c[30]), 3);
    out
}

/// The stored form of `password` for `plugin`; empty for an empty password.
pub fn stored_secret(plugin: &str, password: &str) -> String {
    if password.is_empty() {
        return String::new();
    }
    if plugin == CACHING_SHA2_PASSWORD {
        Sha2Crypt::new(password.as_bytes()).text()
    } else {
        let stage2 = Sha1::digest(Sha1::digest(password.as_bytes()));
        format!("*{}", hex(&stage2))
    }
}

/// Whether `text` is a stored secret of `plugin` (`IDENTIFIED WITH plugin AS '…'`).
pub fn is_stored_secret(plugin: &str, text: &str) -> bool {
    if text.is_empty() {
        return true;
    }
    if plugin == CACHING_SHA2_PASSWORD {
        Sha2Crypt::parse(text).is_some()
            || text
                .strip_prefix(SHA2_DOUBLE_HASH_PREFIX)
                .and_then(unhex::<32>)
                .is_some()
    } else {
        text.len() == 41 && text.strip_prefix('*').and_then(unhex::<20>).is_some()
    }
}

/// `text` as `IDENTIFIED WITH plugin AS 'text'` stores it: the native hash in upper case, a
/// crypt as given (its salt is case-sensitive).
pub fn normalized_secret(plugin: &str, text: &str) -> String {
    if plugin == CACHING_SHA2_PASSWORD {
        text.to_string()
    } else {
        text.to_ascii_uppercase()
    }
}

/// What a login is checked against for the stored `auth_string`; an unreadable one (which no
/// statement writes) lets no one in.
pub fn credential(auth_string: &str) -> Credential {
    if auth_string.is_empty() {
        return Credential::None;
    }
    if let Some(secret) = Sha2Crypt::parse(auth_string) {
        return Credential::Sha2Crypt {
            secret,
            cached: None,
        };
    }
    if let Some(hex) = auth_string.strip_prefix(SHA2_DOUBLE_HASH_PREFIX) {
        if let Some(hash) = unhex::<32>(hex) {
            return Credential::CachingSha2(hash);
        }
    } else if let Some(hash) = auth_string.strip_prefix('*').and_then(unhex::<20>) {
        return Credential::Native(hash);
    }
    // Matches no scramble a client can send for it.
    Credential::Native([0; 20])
}

/// The fast-path cache of `caching_sha2_password` on one SQL node: SHA256(SHA256(password))
/// of each account that logged in with its password since the node started, keyed by the
/// account and its stored secret, so that a changed password (on any SQL node) misses it.
/// `FLUSH PRIVILEGES` empties it, as MySQL's.
#[derive(Debug, Default)]
pub struct Sha2Cache {
    entries: Mutex<HashMap<(Identity, String), [u8; 32]>>,
}

impl Sha2Cache {
    /// The cached hash of `identity` whose secret is `auth_string`.
    pub fn get(&self, identity: &Identity, auth_string: &str) -> Option<[u8; 32]> {
        self.entries
            .lock()
            .get(&(identity.clone(), auth_string.to_string()))
            .copied()
    }

    /// Notes `hash` for `identity` after a full authentication against `auth_string`.
    pub fn insert(&self, identity: &Identity, auth_string: &str, hash: [u8; 32]) {
        let mut entries = self.entries.lock();
        if entries.len() >= SHA2_CACHE_CAPACITY {
            entries.clear();
        }
        entries.insert((identity.clone(), auth_string.to_string()), hash);
    }

    pub fn clear(&self) {
        self.entries.lock().clear();
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

fn unhex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crypt_text(password: &str, salt: &str) -> String {
        String::from_utf8(sha256_crypt(password.as_bytes(), salt.as_bytes(), 5_000).to_vec())
            .unwrap()
    }

    /// Vectors from glibc's `crypt(3)` (`$5$rounds=5000$salt`, through Python's `crypt`), an
    /// implementation independent of this one; its salts are at most 16 bytes.
    #[test]
    fn sha256_crypt_agrees_with_glibc() {
        assert_eq!(
            crypt_text("Hello world!", "saltstring"),
            "5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZaBBGWEc5"
        );
        assert_eq!(
            crypt_text("secret", "0123456789abcdef"),
            "r6nzC5LUC0uVXFw52gWstJ181ms.XFW71j20yui2zG7"
        );
        // A password longer than one digest, and none.
        assert_eq!(
            crypt_text(&"x".repeat(40), "ABCDEFGHIJKLMNOP"),
            "nbsaoQAnqB3kWX6wlKiyqoaeMI83qxfgmTQC/4.Rt34"
        );
        assert_eq!(
            crypt_text("", "ABCDEFGHIJKLMNOP"),
            "OHECpAsJdteNx4ouLLv3xuJdToxDN1xrgHLUxCQ1Ot1"
        );
    }

    /// Secrets MySQL 8 stored (the hex of `authentication_string`, as TiDB's tests of the same
    /// format carry them) check their passwords: 20-byte salts, used whole.
    #[test]
    fn mysql_secrets_check_their_passwords() {
        let from_hex = |hex: &str| -> String {
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            String::from_utf8(bytes).unwrap()
        };
        let cases = [
            (
                "foobar",
                "24412430303524031A69251C34295C4B35167C7F1E5A7B63091349503974624D34504B5A42467935\
                 4856336868686F52485A736E4A733368786E427575516C73446469496537",
            ),
            (
                "123456",
                "244124303035245e3e122f765160382d0b1e4d416f3f6752557c3c4d726e5a68756f4a54754768\
                 2e536c504e6e76484a7854646b5452486d636e45464d61377a634147714144",
            ),
        ];
        for (password, hex) in cases {
            let text = from_hex(hex);
            assert!(is_stored_secret(CACHING_SHA2_PASSWORD, &text));
            let Credential::Sha2Crypt { secret, cached } = credential(&text) else {
                panic!("{text:?} is not a crypt");
            };
            assert_eq!(cached, None);
            assert!(secret.matches(password.as_bytes()), "{password}");
            assert!(!secret.matches(b"not the password"));
            assert_eq!(secret.text(), text);
        }
    }

    #[test]
    fn new_secrets_are_salted_crypts_in_mysql_form() {
        let one = stored_secret(CACHING_SHA2_PASSWORD, "secret");
        let two = stored_secret(CACHING_SHA2_PASSWORD, "secret");
        assert_ne!(one, two, "each secret has a salt of its own");
        for text in [&one, &two] {
            assert_eq!(text.len(), 70);
            assert!(text.starts_with("$A$005$"));
            assert!(!text[7..27].contains(['$', '\0']));
            let Credential::Sha2Crypt { secret, .. } = credential(text) else {
                panic!("{text:?}");
            };
            assert!(secret.matches(b"secret"));
            assert!(!secret.matches(b"Secret"));
        }
        // MySQL's marker of an account no password opens is a valid secret that nothing
        // matches.
        let locked = "$A$005$THISISACOMBINATIONOFINVALIDSALTANDPASSWORDTHATMUSTNEVERBRBEUSED";
        assert!(is_stored_secret(CACHING_SHA2_PASSWORD, locked));
        assert_eq!(normalized_secret(CACHING_SHA2_PASSWORD, locked), locked);
        assert!(!is_stored_secret(CACHING_SHA2_PASSWORD, "$A$005$short"));
        // A password past MySQL's limit matches nothing (its crypt would take quadratic time).
        let Credential::Sha2Crypt { secret, .. } = credential(&one) else {
            unreachable!()
        };
        assert!(!secret.matches(&[b'a'; SHA2_PASSWORD_MAX_BYTES + 1]));
    }

    #[test]
    fn the_cache_misses_once_the_secret_changes() {
        let cache = Sha2Cache::default();
        let bob = Identity::new("bob", "%");
        cache.insert(&bob, "$A$005$old", [7; 32]);
        assert_eq!(cache.get(&bob, "$A$005$old"), Some([7; 32]));
        assert_eq!(cache.get(&bob, "$A$005$new"), None);
        assert_eq!(
            cache.get(&Identity::new("bob", "localhost"), "$A$005$old"),
            None
        );
        cache.clear();
        assert_eq!(cache.get(&bob, "$A$005$old"), None);
    }
}
