//! The connection phase: greeting, HandshakeResponse41, optional auth switch, password check.
//!
//! ```text
//!   server                                   client
//!   Handshake v10 (seq 0, scramble) ───────▶
//!                                   ◀─────── HandshakeResponse41 (seq 1: user, auth, db, plugin)
//!   [plugin ≠ the account's]
//!   AuthSwitchRequest (seq 2) ─────────────▶
//!                                   ◀─────── auth response (seq 3)
//!   [caching_sha2_password]
//!   AuthMoreData 0x03 (fast auth), or the full authentication of `crate::sha2_auth`
//!   OK or ERR ─────────────────────────────▶  (sent by the caller, after it opens the session)
//! ```
//!
//! Accounts use `mysql_native_password` or `caching_sha2_password`. The greeting proposes
//! `caching_sha2_password`, as MySQL 8 does, so a client logs in to such an account in one
//! round trip (PyMySQL before 1.1 cannot follow a switch to it), and one of a native account
//! is switched over. A `caching_sha2_password` login takes the fast path once the SQL node
//! has cached the account's hash, and sends its password (over TLS, the Unix socket, or RSA)
//! the first time. TLS is advertised when the server has a certificate
//! ([`Greeting::offering_tls`]); compression never, so a client that asks for it (or for TLS
//! from a server without one) is refused with 1043 "Bad handshake". An account's `REQUIRE`
//! clause is checked against the transport ([`Transport`]).
//! Parsing and password verification are pure functions; [`authenticate`] sequences them over
//! a packet reader and writer.

use std::io::{Read, Write};

use rand::Rng;
use sha1::{Digest, Sha1};
use strata_sql::account::password::sha2_double_hash;
use strata_sql::{charsets, Blocked, Credential, Identity, Login, SqlError};

use crate::error::{codes, ConnectionError};
use crate::packet::{put_nul_bytes, Cursor, PacketReader, PacketWriter, Truncated};
use crate::reply::status;
use crate::sha2_auth::{self, RsaKeyPair, FAST_AUTH_SUCCESS};

/// Client/server capability flags (`CLIENT_*` in MySQL's `mysql_com.h`).
pub mod capabilities {
    pub const LONG_PASSWORD: u32 = 1;
    pub const FOUND_ROWS: u32 = 1 << 1;
    pub const LONG_FLAG: u32 = 1 << 2;
    pub const CONNECT_WITH_DB: u32 = 1 << 3;
    pub const COMPRESS: u32 = 1 << 5;
    pub const PROTOCOL_41: u32 = 1 << 9;
    pub const SSL: u32 = 1 << 11;
    pub const TRANSACTIONS: u32 = 1 << 13;
    pub const SECURE_CONNECTION: u32 = 1 << 15;
    pub const MULTI_STATEMENTS: u32 = 1 << 16;
    pub const MULTI_RESULTS: u32 = 1 << 17;
    pub const PS_MULTI_RESULTS: u32 = 1 << 18;
    pub const PLUGIN_AUTH: u32 = 1 << 19;
    pub const CONNECT_ATTRS: u32 = 1 << 20;
    pub const PLUGIN_AUTH_LENENC_CLIENT_DATA: u32 = 1 << 21;
    pub const CAN_HANDLE_EXPIRED_PASSWORDS: u32 = 1 << 22;
    pub const DEPRECATE_EOF: u32 = 1 << 24;
    pub const QUERY_ATTRIBUTES: u32 = 1 << 27;

    /// What this server advertises. Deliberately absent: SSL (libmysqlclient 8.0 would silently
    /// switch sysbench to TLS), QUERY_ATTRIBUTES (it changes the COM_QUERY and COM_STMT_EXECUTE
    /// layouts) and COMPRESS.
    pub const SERVER: u32 = LONG_PASSWORD
        | FOUND_ROWS
        | LONG_FLAG
        | CONNECT_WITH_DB
        | PROTOCOL_41
        | TRANSACTIONS
        | SECURE_CONNECTION
        | MULTI_STATEMENTS
        | MULTI_RESULTS
        | PS_MULTI_RESULTS
        | PLUGIN_AUTH
        | CONNECT_ATTRS
        | PLUGIN_AUTH_LENENC_CLIENT_DATA
        | CAN_HANDLE_EXPIRED_PASSWORDS
        | DEPRECATE_EOF;
}

/// The authentication method announced in the greeting, and every account's unless it has
/// another.
pub const NATIVE_PASSWORD_PLUGIN: &str = "mysql_native_password";

/// MySQL 8's default method: a SHA-256 scramble checked against the SQL node's cache, else
/// the password itself (`crate::sha2_auth`).
pub const CACHING_SHA2_PLUGIN: &str = "caching_sha2_password";

/// The length of the random challenge sent to the client.
pub const SCRAMBLE_BYTES: usize = 20;

/// The largest handshake response accepted (user, auth data, database and attributes).
pub const HANDSHAKE_MAX_PAYLOAD_BYTES: usize = 1 << 20;

/// The largest number of connection attributes kept from a handshake response.
const MAX_CONNECTION_ATTRIBUTES: usize = 64;

/// What the server says first on a new connection.
#[derive(Clone, Debug)]
pub struct Greeting {
    pub connection_id: u32,
    pub server_version: String,
    pub scramble: [u8; SCRAMBLE_BYTES],
    /// What the server advertises: [`capabilities::SERVER`], and `SSL` when it offers TLS.
    pub capabilities: u32,
}

impl Greeting {
    /// Creates a greeting with a fresh random scramble.
    pub fn new(connection_id: u32, server_version: &str) -> Greeting {
        Greeting {
            connection_id,
            server_version: server_version.to_string(),
            scramble: new_scramble(),
            capabilities: capabilities::SERVER,
        }
    }

    /// The greeting of a server that offers TLS.
    pub fn offering_tls(mut self) -> Greeting {
        self.capabilities |= capabilities::SSL;
        self
    }
}

/// A parsed HandshakeResponse41.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HandshakeResponse {
    pub capabilities: u32,
    pub max_packet_bytes: u32,
    pub charset: u8,
    pub user: String,
    pub auth_response: Vec<u8>,
    pub database: Option<String>,
    pub auth_plugin: Option<String>,
    pub attributes: Vec<(String, String)>,
}

/// A client that proved its identity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authenticated {
    pub user: String,
    /// The account it logged in as.
    pub account: Identity,
    /// The account's password expired: the session may only change it.
    pub password_expired: bool,
    pub database: Option<String>,
    /// The capabilities both sides have.
    pub capabilities: u32,
    pub attributes: Vec<(String, String)>,
}

/// Returns 20 random bytes in 1..=127 without `$`, as MySQL generates them: some clients treat
/// the scramble as a C string.
pub fn new_scramble() -> [u8; SCRAMBLE_BYTES] {
    let mut rng = rand::thread_rng();
    let mut scramble = [0u8; SCRAMBLE_BYTES];
    for byte in &mut scramble {
        *byte = loop {
            let candidate = rng.gen_range(1..=127u8);
            if candidate != b'$' {
                break candidate;
            }
        };
    }
    scramble
}

/// Appends the Handshake v10 payload.
pub fn encode_greeting(buffer: &mut Vec<u8>, greeting: &Greeting) {
    let capabilities = greeting.capabilities.to_le_bytes();
    buffer.push(10);
    put_nul_bytes(buffer, greeting.server_version.as_bytes());
    buffer.extend_from_slice(&greeting.connection_id.to_le_bytes());
    buffer.extend_from_slice(&greeting.scramble[..8]);
    buffer.push(0);
    buffer.extend_from_slice(&capabilities[..2]);
    buffer.push(charsets::UTF8MB4_GENERAL_CI as u8);
    buffer.extend_from_slice(&status::AUTOCOMMIT.to_le_bytes());
    buffer.extend_from_slice(&capabilities[2..]);
    buffer.push(SCRAMBLE_BYTES as u8 + 1);
    buffer.extend_from_slice(&[0; 10]);
    put_nul_bytes(buffer, &greeting.scramble[8..]);
    put_nul_bytes(buffer, CACHING_SHA2_PLUGIN.as_bytes());
}

/// Appends an AuthSwitchRequest to `plugin` with the scramble.
pub fn encode_auth_switch(buffer: &mut Vec<u8>, plugin: &str, scramble: &[u8; SCRAMBLE_BYTES]) {
    buffer.push(0xFE);
    put_nul_bytes(buffer, plugin.as_bytes());
    put_nul_bytes(buffer, scramble);
}

/// Parses a HandshakeResponse41; anything else (protocol 3.20, compression, or the SSL flag
/// on a connection that is not `secure`) is 1043.
pub fn parse_handshake_response(
    payload: &[u8],
    secure: bool,
) -> Result<HandshakeResponse, SqlError> {
    parse_response_fields(payload, secure).map_err(|Truncated| codes::bad_handshake())
}

/// Reads the body of a COM_CHANGE_USER (after its command byte) from a client that negotiated
/// `capabilities`: user, auth response (answering the greeting's scramble), database, and
/// with the protocol 4.1 flags a character set, the auth method and attributes.
pub fn parse_change_user(body: &[u8], capabilities: u32) -> Result<HandshakeResponse, SqlError> {
    change_user_fields(body, capabilities).map_err(|Truncated| codes::malformed_packet())
}

fn change_user_fields(body: &[u8], capabilities: u32) -> Result<HandshakeResponse, Truncated> {
    use capabilities::*;
    let mut cursor = Cursor::new(body);
    let user = lossy(cursor.nul_bytes()?);
    let auth_response = if capabilities & SECURE_CONNECTION != 0 {
        let length = cursor.u8()?;
        cursor.take(usize::from(length))?
    } else {
        cursor.nul_bytes()?
    };
    let database = cursor.nul_bytes_or_rest();
    let mut response = HandshakeResponse {
        capabilities,
        user,
        auth_response: auth_response.to_vec(),
        database: (!database.is_empty()).then(|| lossy(database)),
        ..HandshakeResponse::default()
    };
    if capabilities & PROTOCOL_41 != 0 && !cursor.is_empty() {
        response.charset = cursor.u16()? as u8;
    }
    if capabilities & PLUGIN_AUTH != 0 && !cursor.is_empty() {
        response.auth_plugin = Some(lossy(cursor.nul_bytes_or_rest()));
    }
    if capabilities & CONNECT_ATTRS != 0 && !cursor.is_empty() {
        response.attributes = parse_attributes(cursor.lenenc_bytes()?)?;
    }
    Ok(response)
}

/// Whether a client's first packet is an SSLRequest: the fixed part of a HandshakeResponse41
/// alone, with the SSL flag.
pub fn is_ssl_request(payload: &[u8]) -> bool {
    payload.len() == 32
        && payload[..4]
            .try_into()
            .map(u32::from_le_bytes)
            .is_ok_and(|client| client & capabilities::SSL != 0)
}

fn parse_response_fields(payload: &[u8], secure: bool) -> Result<HandshakeResponse, Truncated> {
    use capabilities::*;
    let mut cursor = Cursor::new(payload);
    let client = cursor.u32()?;
    if client & PROTOCOL_41 == 0 || client & COMPRESS != 0 || (client & SSL != 0 && !secure) {
        return Err(Truncated);
    }
    let capabilities = client & SERVER;
    let max_packet_bytes = cursor.u32()?;
    let charset = cursor.u8()?;
    cursor.take(23)?;
    let user = lossy(cursor.nul_bytes()?);
    let auth_response = if capabilities & PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
        cursor.lenenc_bytes()?
    } else if capabilities & SECURE_CONNECTION != 0 {
        let length = cursor.u8()?;
        cursor.take(usize::from(length))?
    } else {
        cursor.nul_bytes()?
    };
    let mut response = HandshakeResponse {
        capabilities,
        max_packet_bytes,
        charset,
        user,
        auth_response: auth_response.to_vec(),
        ..HandshakeResponse::default()
    };
    if capabilities & CONNECT_WITH_DB != 0 && !cursor.is_empty() {
        let database = cursor.nul_bytes_or_rest();
        response.database = (!database.is_empty()).then(|| lossy(database));
    }
    if capabilities & PLUGIN_AUTH != 0 && !cursor.is_empty() {
        response.auth_plugin = Some(lossy(cursor.nul_bytes_or_rest()));
    }
    if capabilities & CONNECT_ATTRS != 0 && !cursor.is_empty() {
        response.attributes = parse_attributes(cursor.lenenc_bytes()?)?;
    }
    Ok(response)
}

fn parse_attributes(block: &[u8]) -> Result<Vec<(String, String)>, Truncated> {
    let mut cursor = Cursor::new(block);
    let mut attributes = Vec::new();
    while !cursor.is_empty() && attributes.len() < MAX_CONNECTION_ATTRIBUTES {
        let key = lossy(cursor.lenenc_bytes()?);
        let value = lossy(cursor.lenenc_bytes()?);
        attributes.push((key, value));
    }
    Ok(attributes)
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Checks a `mysql_native_password` response against the stored SHA1(SHA1(password)) (None
/// for an account without a password). The client sends
/// `SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password)))`, and nothing for an empty
/// password; unmasking it gives SHA1(password), whose SHA1 must be the stored hash.
pub fn verify_native_password(
    scramble: &[u8; SCRAMBLE_BYTES],
    auth_response: &[u8],
    stored: Option<&[u8; 20]>,
) -> bool {
    let Some(stored) = stored else {
        return auth_response.is_empty();
    };
    if auth_response.len() != 20 {
        return false;
    }
    let mut hasher = Sha1::new();
    hasher.update(scramble);
    hasher.update(stored);
    let mask = hasher.finalize();
    let stage1: Vec<u8> = (0..20).map(|i| auth_response[i] ^ mask[i]).collect();
    let candidate = Sha1::digest(&stage1);
    // Compares every byte so the time taken does not depend on where a mismatch is.
    let difference = (0..20).fold(0u8, |acc, i| acc | (candidate[i] ^ stored[i]));
    difference == 0
}

/// Whether the client's scramble proves it knows the password of `credential` (for the
/// fast path of `caching_sha2_password`, its cached hash).
fn verify(scramble: &[u8; SCRAMBLE_BYTES], auth_response: &[u8], credential: &Credential) -> bool {
    match credential {
        Credential::None => auth_response.is_empty(),
        Credential::Native(stored) => verify_native_password(scramble, auth_response, Some(stored)),
        Credential::CachingSha2(stored) => sha2_auth::verify_fast(scramble, auth_response, stored),
        Credential::Sha2Crypt { cached, .. } => cached
            .as_ref()
            .is_some_and(|stored| sha2_auth::verify_fast(scramble, auth_response, stored)),
    }
}

/// How a password check ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Checked {
    Wrong,
    /// Right on the fast path of `caching_sha2_password` (0x03 goes before the OK).
    Fast,
    Right,
}

/// Checks the client's answer for `login`, whose method is `method`: a `caching_sha2_password`
/// account whose fast path fails gets its password in full authentication, and a right one is
/// remembered for the fast path.
#[allow(clippy::too_many_arguments)]
fn check_password<R: Read, W: Write>(
    reader: &mut PacketReader<R>,
    writer: &mut PacketWriter<W>,
    greeting: &Greeting,
    auth_response: &[u8],
    login: &Login,
    method: &str,
    transport: &Transport,
    logins: &Logins<
        '_,
        impl Fn(&str) -> Option<Login>,
        impl Fn(&Login, bool) -> Option<Blocked>,
        impl Fn(&Login, [u8; 32]),
    >,
) -> Result<Checked, ConnectionError> {
    let sha2 = method == CACHING_SHA2_PLUGIN
        && matches!(
            login.credential,
            Credential::CachingSha2(_) | Credential::Sha2Crypt { .. }
        );
    if verify(&greeting.scramble, auth_response, &login.credential) {
        return Ok(if sha2 { Checked::Fast } else { Checked::Right });
    }
    // An account with a password that the client answered with none is refused at once.
    if !sha2 || auth_response.is_empty() {
        return Ok(Checked::Wrong);
    }
    let Some(password) = sha2_auth::read_password(
        reader,
        writer,
        &greeting.scramble,
        transport.sends_passwords_in_clear(),
        logins.rsa,
    )?
    else {
        return Ok(Checked::Wrong);
    };
    let right = match &login.credential {
        Credential::CachingSha2(stored) => sha2_double_hash(&password) == *stored,
        Credential::Sha2Crypt { secret, .. } => secret.matches(&password),
        _ => false,
    };
    if !right {
        return Ok(Checked::Wrong);
    }
    (logins.remember)(login, sha2_double_hash(&password));
    Ok(Checked::Right)
}

/// Runs the connection phase up to (not including) the final OK: sends the greeting, reads the
/// response, switches the client to its account's method (`mysql_native_password` or
/// `caching_sha2_password`) if it proposed another, and checks the scramble against the
/// account `find_login` names for the user (1045 for an
/// unknown user or a wrong password alike, 3118 for a locked account, 1862 for an expired
/// password when the client cannot handle one). `host` names the peer in the messages.
pub fn authenticate<R: Read, W: Write>(
    reader: &mut PacketReader<R>,
    writer: &mut PacketWriter<W>,
    greeting: &Greeting,
    find_login: impl Fn(&str) -> Option<Login>,
    host: &str,
) -> Result<Authenticated, ConnectionError> {
    let payload = greet(reader, writer, greeting)?;
    authenticate_response(
        reader,
        writer,
        greeting,
        payload,
        &Transport::Plain,
        Logins {
            find: find_login,
            outcome: |_: &Login, _: bool| None,
            remember: |_: &Login, _: [u8; 32]| {},
            rsa: None,
        },
        host,
    )
}

/// What carries a client's handshake response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    Plain,
    /// The Unix socket: local, so a password may cross it in clear, but not TLS for an
    /// account's `REQUIRE` clause (as MySQL).
    Socket,
    Tls {
        /// The negotiated cipher suite, as `Ssl_cipher` names it.
        cipher: String,
        /// The names of the client's certificate, when it showed one that the server's CA
        /// issued (`REQUIRE X509`).
        client: Option<CertificateNames>,
    },
}

/// A certificate's subject and issuer in OpenSSL's one-line form (`/O=Shop/CN=ann`), which
/// MySQL's `REQUIRE SUBJECT` and `REQUIRE ISSUER` compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertificateNames {
    pub subject: String,
    pub issuer: String,
}

impl Transport {
    pub fn is_tls(&self) -> bool {
        matches!(self, Transport::Tls { .. })
    }

    /// Whether a client may send its password itself (MySQL's secure transports).
    fn sends_passwords_in_clear(&self) -> bool {
        *self != Transport::Plain
    }

    /// Whether an account's `REQUIRE` clause admits a client over this transport: SSL needs
    /// TLS, X509 a certificate of the server's CA, SUBJECT and ISSUER such a certificate
    /// naming them, CIPHER that cipher.
    fn admits(&self, login: &Login) -> bool {
        let Transport::Tls { cipher, client } = self else {
            return !login.require_secure && !login.require_x509;
        };
        let required = &login.require_specified;
        if required.cipher.as_ref().is_some_and(|c| c != cipher) {
            return false;
        }
        if !login.require_x509 {
            return true;
        }
        client.as_ref().is_some_and(|names| {
            required
                .subject
                .as_ref()
                .is_none_or(|s| *s == names.subject)
                && required.issuer.as_ref().is_none_or(|i| *i == names.issuer)
        })
    }
}

/// How the connection phase learns of accounts: `find` names the account a user logs in as,
/// `outcome` is told whether its password was right and may refuse the login (an account
/// blocked after too many wrong passwords), `remember` keeps SHA256(SHA256(password)) of a
/// `caching_sha2_password` account after a full authentication for its fast path, and `rsa`
/// decrypts passwords sent over plain connections.
pub struct Logins<'a, F, O, M>
where
    F: Fn(&str) -> Option<Login>,
    O: Fn(&Login, bool) -> Option<Blocked>,
    M: Fn(&Login, [u8; 32]),
{
    pub find: F,
    pub outcome: O,
    pub remember: M,
    pub rsa: Option<&'a RsaKeyPair>,
}

/// Sends the greeting and reads the client's first packet: its HandshakeResponse41, or an
/// SSLRequest ([`is_ssl_request`]).
pub fn greet<R: Read, W: Write>(
    reader: &mut PacketReader<R>,
    writer: &mut PacketWriter<W>,
    greeting: &Greeting,
) -> Result<Vec<u8>, ConnectionError> {
    writer.set_sequence(0);
    writer.write_with(|buffer| encode_greeting(buffer, greeting))?;
    writer.flush()?;
    reader.set_sequence(writer.sequence());
    let mut payload = Vec::new();
    if !reader.read_payload(&mut payload)? {
        return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
    }
    Ok(payload)
}

/// [`authenticate`] from the client's HandshakeResponse41 on, which arrived over `transport`.
pub fn authenticate_response<R: Read, W: Write>(
    reader: &mut PacketReader<R>,
    writer: &mut PacketWriter<W>,
    greeting: &Greeting,
    payload: Vec<u8>,
    transport: &Transport,
    logins: Logins<
        '_,
        impl Fn(&str) -> Option<Login>,
        impl Fn(&Login, bool) -> Option<Blocked>,
        impl Fn(&Login, [u8; 32]),
    >,
    host: &str,
) -> Result<Authenticated, ConnectionError> {
    let response =
        parse_handshake_response(&payload, transport.is_tls()).map_err(ConnectionError::Fatal)?;
    authenticate_client(reader, writer, greeting, response, transport, logins, host)
}

/// Checks the identity a client claims (in its HandshakeResponse41 or its COM_CHANGE_USER):
/// switches it to its account's method if it proposed another, and checks the scramble of
/// `greeting`, which the client answered. Up to, not including, the final OK.
pub fn authenticate_client<R: Read, W: Write>(
    reader: &mut PacketReader<R>,
    writer: &mut PacketWriter<W>,
    greeting: &Greeting,
    response: HandshakeResponse,
    transport: &Transport,
    logins: Logins<
        '_,
        impl Fn(&str) -> Option<Login>,
        impl Fn(&Login, bool) -> Option<Blocked>,
        impl Fn(&Login, [u8; 32]),
    >,
    host: &str,
) -> Result<Authenticated, ConnectionError> {
    let mut payload = Vec::new();
    let mut auth_response = response.auth_response;
    // A client without plugin authentication speaks mysql_native_password.
    let proposed = response
        .auth_plugin
        .as_deref()
        .unwrap_or(NATIVE_PASSWORD_PLUGIN);
    let found = (logins.find)(&response.user);
    // The account's method; an account without a password takes an empty answer in either.
    let method = match &found {
        Some(login)
            if login.credential == Credential::None
                && auth_response.is_empty()
                && (proposed == CACHING_SHA2_PLUGIN || proposed == NATIVE_PASSWORD_PLUGIN) =>
        {
            proposed
        }
        Some(login) if login.plugin == CACHING_SHA2_PLUGIN => CACHING_SHA2_PLUGIN,
        _ => NATIVE_PASSWORD_PLUGIN,
    };
    if proposed != method {
        writer.set_sequence(reader.sequence());
        writer.write_with(|buffer| encode_auth_switch(buffer, method, &greeting.scramble))?;
        writer.flush()?;
        reader.set_sequence(writer.sequence());
        if !reader.read_payload(&mut payload)? {
            return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
        }
        auth_response = payload;
    }
    writer.set_sequence(reader.sequence());
    // Some clients send a lone NUL for an empty password.
    if auth_response == [0] {
        auth_response.clear();
    }
    let checked = match found {
        Some(login) => {
            let checked = check_password(
                reader,
                writer,
                greeting,
                &auth_response,
                &login,
                method,
                transport,
                &logins,
            )?;
            Some((login, checked))
        }
        None => None,
    };
    let fast = checked.as_ref().is_some_and(|(_, c)| *c == Checked::Fast);
    if let Some((login, checked)) = &checked {
        if let Some(blocked) = (logins.outcome)(login, *checked != Checked::Wrong) {
            tracing::info!(user = %response.user, host, "access denied: blocked after failed logins");
            return Err(ConnectionError::Fatal(SqlError::new(
                3955,
                "HY000",
                blocked.message(&response.user, host),
            )));
        }
    }
    let login = checked.and_then(|(login, checked)| (checked != Checked::Wrong).then_some(login));
    let Some(login) = login else {
        tracing::info!(user = %response.user, host, "access denied: unknown user or wrong password");
        return Err(ConnectionError::Fatal(codes::access_denied(
            &response.user,
            host,
            !auth_response.is_empty(),
        )));
    };
    if !transport.admits(&login) {
        tracing::info!(
            user = %response.user,
            host,
            "access denied: the account requires TLS (a client certificate, a cipher)"
        );
        return Err(ConnectionError::Fatal(codes::access_denied(
            &response.user,
            host,
            !auth_response.is_empty(),
        )));
    }
    if login.locked {
        tracing::info!(user = %response.user, host, "access denied: account locked");
        return Err(ConnectionError::Fatal(SqlError::new(
            3118,
            "HY000",
            format!(
                "Access denied for user '{}'@'{host}'. Account is locked.",
                response.user
            ),
        )));
    }
    if login.password_expired
        && response.capabilities & capabilities::CAN_HANDLE_EXPIRED_PASSWORDS == 0
    {
        return Err(ConnectionError::Fatal(SqlError::new(
            1862,
            "HY000",
            "Your password has expired. To log in you must change it using a client that supports expired passwords.",
        )));
    }
    if fast {
        writer.write_with(|buffer| buffer.extend_from_slice(&FAST_AUTH_SUCCESS))?;
    }
    Ok(Authenticated {
        user: response.user,
        account: login.identity,
        password_expired: login.password_expired,
        database: response.database,
        capabilities: response.capabilities,
        attributes: response.attributes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Computes the client side of `mysql_native_password`, independently of the verifier.
    fn client_scramble(scramble: &[u8], password: &str) -> Vec<u8> {
        let stage1 = Sha1::digest(password.as_bytes());
        let stage2 = Sha1::digest(stage1);
        let mut seeded = scramble.to_vec();
        seeded.extend_from_slice(&stage2);
        let mask = Sha1::digest(&seeded);
        stage1.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect()
    }

    /// What a catalog stores for `password`: SHA1(SHA1(password)).
    fn stored(password: &str) -> [u8; 20] {
        Sha1::digest(Sha1::digest(password.as_bytes())).into()
    }

    #[test]
    fn native_password_verification() {
        let scramble = *b"abcdefghijklmnopqrst";
        let response = client_scramble(&scramble, "secret");
        let secret = stored("secret");
        assert!(verify_native_password(&scramble, &response, Some(&secret)));
        assert!(!verify_native_password(
            &scramble,
            &response,
            Some(&stored("Secret"))
        ));
        assert!(!verify_native_password(
            &scramble,
            &response[..19],
            Some(&secret)
        ));
        assert!(!verify_native_password(&scramble, b"", Some(&secret)));
        assert!(verify_native_password(&scramble, b"", None));
        assert!(!verify_native_password(&scramble, &response, None));
    }

    /// A vector computed by an independent implementation (Python's `hashlib`) for the
    /// password "password".
    #[test]
    fn native_password_known_vector() {
        let scramble = *b"abcdefghijklmnopqrst";
        let response = hex("bfdd49584b917d42c758edd2a7a541f721843041");
        assert!(verify_native_password(
            &scramble,
            &response,
            Some(&stored("password"))
        ));
        assert_eq!(client_scramble(&scramble, "password"), response);
    }

    fn hex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn scramble_is_printable_and_has_no_nul() {
        for _ in 0..100 {
            let scramble = new_scramble();
            assert!(scramble
                .iter()
                .all(|&b| (1..=127).contains(&b) && b != b'$'));
        }
    }

    #[test]
    fn greeting_layout() {
        let greeting = Greeting {
            connection_id: 7,
            server_version: "8.0.11-x".into(),
            scramble: *b"ABCDEFGHIJKLMNOPQRST",
            capabilities: capabilities::SERVER,
        };
        let mut buffer = Vec::new();
        encode_greeting(&mut buffer, &greeting);
        let mut cursor = Cursor::new(&buffer);
        assert_eq!(cursor.u8(), Ok(10));
        assert_eq!(cursor.nul_bytes(), Ok(&b"8.0.11-x"[..]));
        assert_eq!(cursor.u32(), Ok(7));
        assert_eq!(cursor.take(8), Ok(&b"ABCDEFGH"[..]));
        assert_eq!(cursor.u8(), Ok(0));
        let low = cursor.u16().unwrap();
        assert_eq!(cursor.u8(), Ok(45));
        assert_eq!(cursor.u16(), Ok(status::AUTOCOMMIT));
        let high = cursor.u16().unwrap();
        let advertised = u32::from(low) | u32::from(high) << 16;
        assert_eq!(advertised, capabilities::SERVER);
        assert_eq!(
            advertised
                & (capabilities::SSL | capabilities::QUERY_ATTRIBUTES | capabilities::COMPRESS),
            0
        );
        assert_eq!(cursor.u8(), Ok(21));
        assert_eq!(cursor.take(10), Ok(&[0u8; 10][..]));
        assert_eq!(cursor.nul_bytes(), Ok(&b"IJKLMNOPQRST"[..]));
        assert_eq!(cursor.nul_bytes(), Ok(CACHING_SHA2_PLUGIN.as_bytes()));
        assert!(cursor.is_empty());
    }

    /// HandshakeResponse41 payloads of the MariaDB 10.11 client (Connector/C 3.3.20), captured
    /// from the wire against a greeting with the scramble `ABCDEFGHIJKLMNOPQRST`:
    /// `mariadb -uroot -Dsbtest` and `mariadb -uapp -psecret`.
    const MARIADB_ROOT_SBTEST: &[&str] = &[
        "8da2bf0000001000210000000000000000000000000000000000000000000000726f6f740000736274657374006d7973",
        "716c5f6e61746976655f70617373776f7264007f035f6f73054c696e75780c5f636c69656e745f6e616d650a6c69626d",
        "617269616462045f7069640531353438380f5f636c69656e745f76657273696f6e06332e332e3230095f706c6174666f",
        "726d067838365f36340c70726f6772616d5f6e616d65056d7973716c0c5f7365727665725f686f7374093132372e302e",
        "302e31",
    ];
    const MARIADB_APP_SECRET: &[&str] = &[
        "85a2bf0000001000210000000000000000000000000000000000000000000000617070001428441590674285e7d03cae",
        "7af237504797f70e916d7973716c5f6e61746976655f70617373776f7264007f035f6f73054c696e75780c5f636c6965",
        "6e745f6e616d650a6c69626d617269616462045f7069640531353535320f5f636c69656e745f76657273696f6e06332e",
        "332e3230095f706c6174666f726d067838365f36340c70726f6772616d5f6e616d65056d7973716c0c5f736572766572",
        "5f686f7374093132372e302e302e31",
    ];

    fn captured(parts: &[&str]) -> Vec<u8> {
        hex(&parts.concat())
    }

    #[test]
    fn parses_a_real_client_response() {
        let response = parse_handshake_response(&captured(MARIADB_ROOT_SBTEST), false).unwrap();
        assert_eq!(response.user, "root");
        assert!(response.auth_response.is_empty());
        assert_eq!(response.database.as_deref(), Some("sbtest"));
        assert_eq!(
            response.auth_plugin.as_deref(),
            Some(NATIVE_PASSWORD_PLUGIN)
        );
        assert_eq!(response.charset, 33, "utf8_general_ci");
        assert_eq!(response.max_packet_bytes, 1 << 20);
        assert!(response
            .attributes
            .contains(&("_client_name".into(), "libmariadb".into())));
        assert!(response
            .attributes
            .contains(&("program_name".into(), "mysql".into())));
        assert_ne!(response.capabilities & capabilities::MULTI_STATEMENTS, 0);
        assert_eq!(
            response.capabilities & capabilities::DEPRECATE_EOF,
            0,
            "MariaDB keeps classic EOFs"
        );
    }

    #[test]
    fn verifies_a_real_client_password() {
        let response = parse_handshake_response(&captured(MARIADB_APP_SECRET), false).unwrap();
        assert_eq!(response.user, "app");
        assert_eq!(response.database, None);
        let scramble = *b"ABCDEFGHIJKLMNOPQRST";
        assert!(verify_native_password(
            &scramble,
            &response.auth_response,
            Some(&stored("secret"))
        ));
        assert!(!verify_native_password(
            &scramble,
            &response.auth_response,
            Some(&stored("secret2"))
        ));
    }

    #[test]
    fn every_truncation_of_a_response_is_an_error_not_a_panic() {
        let payload = captured(MARIADB_APP_SECRET);
        for end in 0..payload.len() {
            let _ = parse_handshake_response(&payload[..end], false);
        }
        let mut ssl = payload.clone();
        ssl[1] |= (capabilities::SSL >> 8) as u8;
        assert_eq!(
            parse_handshake_response(&ssl, false).unwrap_err().code,
            1043
        );
        assert!(parse_handshake_response(&ssl, true).is_ok());
    }

    fn client_packets(packets: &[&[u8]]) -> Vec<u8> {
        let mut writer = PacketWriter::new(Vec::new());
        writer.set_sequence(1);
        for packet in packets {
            writer.write_packet(packet).unwrap();
            writer.set_sequence(writer.sequence() + 1);
        }
        writer.flush().unwrap();
        writer.get_ref().clone()
    }

    fn response_with(plugin: &str, auth: &[u8]) -> Vec<u8> {
        let mut payload = Vec::new();
        let flags = capabilities::SERVER & !capabilities::CONNECT_ATTRS;
        payload.extend_from_slice(&flags.to_le_bytes());
        payload.extend_from_slice(&(1u32 << 24).to_le_bytes());
        payload.push(45);
        payload.extend_from_slice(&[0; 23]);
        put_nul_bytes(&mut payload, b"app");
        crate::packet::put_lenenc_bytes(&mut payload, auth);
        put_nul_bytes(&mut payload, b"");
        put_nul_bytes(&mut payload, plugin.as_bytes());
        payload
    }

    fn run_authenticate(
        wire: &[u8],
        greeting: &Greeting,
    ) -> (Result<Authenticated, ConnectionError>, Vec<u8>) {
        let find = |user: &str| {
            (user == "app").then(|| Login::with_password(Identity::new("app", "%"), "pw"))
        };
        let mut reader = PacketReader::new(wire, HANDSHAKE_MAX_PAYLOAD_BYTES);
        let mut writer = PacketWriter::new(Vec::new());
        let result = authenticate(&mut reader, &mut writer, greeting, find, "10.0.0.1");
        writer.flush().unwrap();
        (result, writer.get_ref().clone())
    }

    #[test]
    fn native_client_authenticates_without_a_switch() {
        let greeting = Greeting::new(1, "8.0.11");
        let auth = client_scramble(&greeting.scramble, "pw");
        let wire = client_packets(&[&response_with(NATIVE_PASSWORD_PLUGIN, &auth)]);
        let (result, written) = run_authenticate(&wire, &greeting);
        let authenticated = result.unwrap();
        assert_eq!(authenticated.user, "app");
        assert_eq!(authenticated.database, None);
        assert_eq!(written[3], 0, "only the greeting was written");
        assert_eq!(written.len(), 4 + written[0] as usize);
    }

    #[test]
    fn caching_sha2_client_of_a_native_account_is_switched_to_native_password() {
        let greeting = Greeting::new(2, "8.0.11");
        let auth = client_scramble(&greeting.scramble, "pw");
        let wire = client_packets(&[&response_with("caching_sha2_password", &[9; 32]), &auth]);
        let (result, written) = run_authenticate(&wire, &greeting);
        assert!(result.is_ok());
        let switch_at = 4 + written[0] as usize;
        assert_eq!(written[switch_at + 3], 2, "the switch request is packet 2");
        let mut switch = Cursor::new(&written[switch_at + 4..]);
        assert_eq!(switch.u8(), Ok(0xFE));
        assert_eq!(switch.nul_bytes(), Ok(NATIVE_PASSWORD_PLUGIN.as_bytes()));
        assert_eq!(switch.nul_bytes(), Ok(&greeting.scramble[..]));
    }

    /// The client side of `caching_sha2_password`, as PyMySQL computes it.
    fn client_sha2_scramble(scramble: &[u8], password: &str) -> Vec<u8> {
        use sha2::Sha256;
        let stage1 = Sha256::digest(password.as_bytes());
        let stage2 = Sha256::digest(stage1);
        let mut seeded = stage2.to_vec();
        seeded.extend_from_slice(scramble);
        let mask = Sha256::digest(&seeded);
        stage1.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect()
    }

    /// A `caching_sha2_password` account `app` with password `pw`, its hash cached or not.
    fn sha2_login(cached: bool) -> Login {
        let mut account = strata_sql::account::Account::new(&Identity::new("app", "%"));
        account.plugin = CACHING_SHA2_PLUGIN.into();
        account.auth_string = strata_sql::account::stored_secret(CACHING_SHA2_PLUGIN, "pw");
        let mut login = account.login();
        if let Credential::Sha2Crypt { cached: slot, .. } = &mut login.credential {
            *slot = cached.then(|| sha2_double_hash(b"pw"));
        }
        login
    }

    /// Authenticates the client packets `wire` against `login` over `transport`: the result,
    /// what the server wrote, and the hash it remembered.
    fn run_sha2(
        wire: &[u8],
        greeting: &Greeting,
        login: &Login,
        transport: Transport,
        rsa: Option<&RsaKeyPair>,
    ) -> (
        Result<Authenticated, ConnectionError>,
        Vec<u8>,
        Option<[u8; 32]>,
    ) {
        let mut reader = PacketReader::new(wire, HANDSHAKE_MAX_PAYLOAD_BYTES);
        let mut writer = PacketWriter::new(Vec::new());
        let remembered = std::cell::Cell::new(None);
        let result = greet(&mut reader, &mut writer, greeting).and_then(|first| {
            let logins = Logins {
                find: |_: &str| Some(login.clone()),
                outcome: |_: &Login, _: bool| None,
                remember: |_: &Login, hash: [u8; 32]| remembered.set(Some(hash)),
                rsa,
            };
            authenticate_response(
                &mut reader,
                &mut writer,
                greeting,
                first,
                &transport,
                logins,
                "10.0.0.1",
            )
        });
        writer.flush().unwrap();
        (result, writer.get_ref().clone(), remembered.get())
    }

    /// The packets the server wrote after its greeting: (sequence, payload).
    fn written_after_greeting(written: &[u8]) -> Vec<(u8, Vec<u8>)> {
        let mut packets = Vec::new();
        let mut at = 4 + written[0] as usize;
        while at < written.len() {
            let length = usize::from(written[at]) | usize::from(written[at + 1]) << 8;
            packets.push((written[at + 3], written[at + 4..at + 4 + length].to_vec()));
            at += 4 + length;
        }
        packets
    }

    #[test]
    fn caching_sha2_accounts_take_the_fast_path_once_cached() {
        let login = sha2_login(true);
        let run = |wire: &[u8], greeting: &Greeting| {
            run_sha2(wire, greeting, &login, Transport::Plain, None)
        };
        // Proposed directly: the scramble is checked and fast authentication announced.
        let greeting = Greeting::new(4, "8.0.11");
        let auth = client_sha2_scramble(&greeting.scramble, "pw");
        let wire = client_packets(&[&response_with(CACHING_SHA2_PLUGIN, &auth)]);
        let (result, written, remembered) = run(&wire, &greeting);
        assert!(result.is_ok());
        assert_eq!(written_after_greeting(&written), [(2, vec![0x01, 0x03])]);
        assert_eq!(remembered, None, "nothing new to remember");
        // A native client is switched to caching_sha2_password.
        let wire = client_packets(&[&response_with(NATIVE_PASSWORD_PLUGIN, &[1; 20]), &auth]);
        let (result, written, _) = run(&wire, &greeting);
        assert!(result.is_ok());
        let mut switch = Cursor::new(&written[4 + written[0] as usize + 4..]);
        assert_eq!(switch.u8(), Ok(0xFE));
        assert_eq!(switch.nul_bytes(), Ok(CACHING_SHA2_PLUGIN.as_bytes()));
        // A wrong scramble asks for the password in full; a wrong one is 1045. Without an RSA
        // key no password can come over a plain connection.
        let wrong = client_sha2_scramble(&greeting.scramble, "pW");
        let wire = client_packets(&[&response_with(CACHING_SHA2_PLUGIN, &wrong), &[2]]);
        let (result, written, _) = run(&wire, &greeting);
        let Err(ConnectionError::Fatal(error)) = result else {
            panic!("accepted")
        };
        assert_eq!(error.code, 1045);
        assert_eq!(written_after_greeting(&written)[0], (2, vec![0x01, 0x04]));
    }

    #[test]
    fn caching_sha2_without_a_cached_hash_takes_the_password_in_full() {
        let login = sha2_login(false);
        let greeting = Greeting::new(5, "8.0.11");
        let scramble_answer = client_sha2_scramble(&greeting.scramble, "pw");
        let first = response_with(CACHING_SHA2_PLUGIN, &scramble_answer);

        // Over a secure transport the client sends the password and a NUL.
        for (password, right) in [("pw", true), ("pW", false)] {
            let clear = [password.as_bytes(), b"\0"].concat();
            let wire = client_packets(&[&first, &clear]);
            let (result, written, remembered) =
                run_sha2(&wire, &greeting, &login, Transport::Socket, None);
            assert_eq!(written_after_greeting(&written), [(2, vec![0x01, 0x04])]);
            assert_eq!(result.is_ok(), right, "{password}");
            assert_eq!(remembered, right.then(|| sha2_double_hash(b"pw")));
        }

        // Over plain TCP it asks for the public key and sends the password encrypted with it:
        // RSA-OAEP of the password and its NUL, XORed with the scramble.
        let rsa = RsaKeyPair::generate().unwrap();
        let public = openssl::rsa::Rsa::public_key_from_pem(rsa.public_pem()).unwrap();
        for (password, right) in [("pw", true), ("pW", false)] {
            let mut plain = [password.as_bytes(), b"\0"].concat();
            for (i, byte) in plain.iter_mut().enumerate() {
                *byte ^= greeting.scramble[i % SCRAMBLE_BYTES];
            }
            let mut sealed = vec![0; public.size() as usize];
            let n = public
                .public_encrypt(&plain, &mut sealed, openssl::rsa::Padding::PKCS1_OAEP)
                .unwrap();
            sealed.truncate(n);
            let wire = client_packets(&[&first, &[2], &sealed]);
            let (result, written, remembered) =
                run_sha2(&wire, &greeting, &login, Transport::Plain, Some(&rsa));
            let mut key_reply = vec![0x01];
            key_reply.extend_from_slice(rsa.public_pem());
            assert_eq!(
                written_after_greeting(&written)[..2],
                [(2, vec![0x01, 0x04]), (4, key_reply)]
            );
            assert_eq!(result.is_ok(), right, "{password}");
            assert_eq!(remembered, right.then(|| sha2_double_hash(b"pw")));
        }

        // A password sent in clear over plain TCP does not decrypt: refused.
        let wire = client_packets(&[&first, b"pw\0"]);
        let (result, _, remembered) =
            run_sha2(&wire, &greeting, &login, Transport::Plain, Some(&rsa));
        assert!(result.is_err());
        assert_eq!(remembered, None);
        // No answer at all: refused without a second round trip.
        let wire = client_packets(&[&response_with(CACHING_SHA2_PLUGIN, b"")]);
        let (result, written, _) = run_sha2(&wire, &greeting, &login, Transport::Socket, None);
        assert!(result.is_err());
        assert!(written_after_greeting(&written).is_empty());
    }

    #[test]
    fn wrong_password_is_access_denied() {
        let greeting = Greeting::new(3, "8.0.11");
        let auth = client_scramble(&greeting.scramble, "nope");
        let wire = client_packets(&[&response_with(NATIVE_PASSWORD_PLUGIN, &auth)]);
        let Err(ConnectionError::Fatal(error)) = run_authenticate(&wire, &greeting).0 else {
            panic!("accepted")
        };
        assert_eq!((error.code, error.state), (1045, "28000"));
        assert_eq!(
            error.message,
            "Access denied for user 'app'@'10.0.0.1' (using password: YES)"
        );

        let wire = client_packets(&[&response_with(NATIVE_PASSWORD_PLUGIN, b"")]);
        let Err(ConnectionError::Fatal(error)) = run_authenticate(&wire, &greeting).0 else {
            panic!("accepted")
        };
        assert!(error.message.ends_with("(using password: NO)"));
    }

    #[test]
    fn change_user_bodies_parse_as_clients_send_them() {
        // mysql2's layout: user, length-prefixed token, database, charset, plugin, attributes.
        let mut body = b"bob\0".to_vec();
        body.push(3);
        body.extend_from_slice(&[7, 8, 9]);
        body.extend_from_slice(b"shop\0");
        body.extend_from_slice(&45u16.to_le_bytes());
        body.extend_from_slice(b"mysql_native_password\0");
        body.extend_from_slice(&[4, 1, b'k', 1, b'v']);
        let parsed = parse_change_user(&body, capabilities::SERVER).unwrap();
        assert_eq!(
            (parsed.user.as_str(), parsed.auth_response.as_slice()),
            ("bob", &[7u8, 8, 9][..])
        );
        assert_eq!(parsed.database.as_deref(), Some("shop"));
        assert_eq!(parsed.charset, 45);
        assert_eq!(parsed.auth_plugin.as_deref(), Some(NATIVE_PASSWORD_PLUGIN));
        assert_eq!(parsed.attributes, vec![("k".to_string(), "v".to_string())]);
        // An old client's: user, NUL-ended token, database.
        let parsed = parse_change_user(b"amy\0\0\0", capabilities::PROTOCOL_41).unwrap();
        assert_eq!((parsed.user.as_str(), parsed.database), ("amy", None));
        for truncated in [&b""[..], b"bob", b"bob\0", b"bob\0\x05ab"] {
            let error = parse_change_user(truncated, capabilities::SERVER).unwrap_err();
            assert_eq!(error.code, 1835, "{truncated:?}");
        }
    }
}
