//! Tests of the connection phase: parsing, password checks, and the exchanges of each
//! method over a scripted wire.

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
        advertised & (capabilities::SSL | capabilities::QUERY_ATTRIBUTES | capabilities::COMPRESS),
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
    let find =
        |user: &str| (user == "app").then(|| Login::with_password(Identity::new("app", "%"), "pw"));
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
    let run =
        |wire: &[u8], greeting: &Greeting| run_sha2(wire, greeting, &login, Transport::Plain, None);
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
    let (result, _, remembered) = run_sha2(&wire, &greeting, &login, Transport::Plain, Some(&rsa));
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
