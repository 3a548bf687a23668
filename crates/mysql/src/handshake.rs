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
#[path = "handshake_tests.rs"]
mod tests;
