//! Malformed input, limits and shutdown: the server answers with an error or closes the
//! connection, and keeps serving others.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{backend, raw_login, read_until_closed, TestServer};
use strata_mysql::ServerConfig;

/// Checks that a fresh client can still log in and run a query.
fn still_serving(server: &TestServer) {
    let (mut reader, mut writer) = raw_login(server.addr);
    writer.set_sequence(0);
    writer.write_packet(b"\x03select 1").unwrap();
    writer.flush().unwrap();
    reader.set_sequence(1);
    let mut column_count = Vec::new();
    assert!(reader.read_payload(&mut column_count).unwrap());
    assert_eq!(column_count, [1]);
}

#[test]
fn garbage_instead_of_a_handshake_response() {
    let server = TestServer::start(ServerConfig::default(), backend());
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream.write_all(b"\x05\x00\x00\x01hello").unwrap();
    let received = read_until_closed(&mut stream);
    assert!(
        received.windows(2).any(|pair| pair == [0xFF, 0x13]),
        "1043 Bad handshake was sent"
    );
    still_serving(&server);
}

#[test]
fn garbage_after_the_handshake() {
    let server = TestServer::start(ServerConfig::default(), backend());
    // Well-framed nonsense: each packet gets an error or no reply, the connection survives.
    let (mut reader, mut writer) = raw_login(server.addr);
    for payload in [
        &b""[..],
        b"\x17\x01",
        b"\x16",
        b"\x99garbage",
        b"\x18\xff",
        b"\x0c\x01",
    ] {
        writer.set_sequence(0);
        writer.write_packet(payload).unwrap();
        writer.flush().unwrap();
    }
    writer.set_sequence(0);
    writer.write_packet(b"\x0e").unwrap();
    writer.flush().unwrap();
    let mut replies = Vec::new();
    loop {
        reader.set_sequence(1);
        let mut reply = Vec::new();
        assert!(reader.read_payload(&mut reply).unwrap());
        let done = reply[0] == 0x00;
        replies.push(reply);
        if done {
            break;
        }
    }
    assert!(
        replies[..replies.len() - 1]
            .iter()
            .all(|reply| reply[0] == 0xFF),
        "errors, then the ping's OK"
    );

    // Broken framing: the server closes the connection.
    let mut stream = TcpStream::connect(server.addr).unwrap();
    let (_reader, writer) = raw_login(server.addr);
    let mut raw = writer.get_ref().try_clone().unwrap();
    raw.write_all(b"\x01\x00\x00\x07\x0e").unwrap();
    read_until_closed(&mut raw);
    stream.write_all(&[0xAB; 64]).unwrap();
    read_until_closed(&mut stream);
    still_serving(&server);
}

#[test]
fn packet_larger_than_max_allowed_packet_closes_the_connection() {
    let config = ServerConfig {
        max_allowed_packet: 1024,
        ..ServerConfig::default()
    };
    let server = TestServer::start(config, backend());
    let (_reader, writer) = raw_login(server.addr);
    let mut raw = writer.get_ref().try_clone().unwrap();
    raw.write_all(&[0x00, 0x08, 0x00, 0x00, 0x03]).unwrap();
    let received = read_until_closed(&mut raw);
    assert_eq!(
        &received[4..7],
        &[0xFF, 0x81, 0x04],
        "1153 before closing: {received:?}"
    );
    assert!(String::from_utf8_lossy(&received).contains("max_allowed_packet"));
    still_serving(&server);
}

#[test]
fn shutdown_returns_and_closes_open_connections() {
    let mut server = TestServer::start(ServerConfig::default(), backend());
    let (_reader, writer) = raw_login(server.addr);
    let mut raw = writer.get_ref().try_clone().unwrap();
    let started = Instant::now();
    server.stop();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(read_until_closed(&mut raw).is_empty());
    assert!(
        TcpStream::connect(server.addr).is_err(),
        "the listener is closed"
    );
}

#[test]
fn clients_that_never_log_in_do_not_keep_others_out() {
    // Three slots: the held login, the new one, and the previous check's, which the server
    // frees only once it has seen that client go (a moment after the client closed).
    let config = ServerConfig {
        max_handshakes: 8,
        max_connections: 3,
        ..ServerConfig::default()
    };
    let server = TestServer::start(config, backend());
    let mut idle: Vec<TcpStream> = (0..50)
        .map(|_| TcpStream::connect(server.addr).unwrap())
        .collect();
    // Each new handshake beyond the budget closed the oldest: the first ones are gone, while a
    // client that logs in now gets in.
    read_until_closed(&mut idle[0]);
    still_serving(&server);
    let _held = raw_login(server.addr);
    still_serving(&server);
}

#[test]
fn the_whole_handshake_must_finish_within_connect_timeout() {
    let connect_timeout = Duration::from_millis(500);
    let config = ServerConfig {
        connect_timeout,
        ..ServerConfig::default()
    };
    let server = TestServer::start(config, backend());
    let mut stream = TcpStream::connect(server.addr).unwrap();
    let started = Instant::now();
    stream
        .set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    // A client that sends its handshake response (announced as 200 bytes) one byte at a time
    // never lets a read time out; the handshake is closed all the same.
    let mut buffer = [0u8; 256];
    let mut greeted = false;
    stream.write_all(&[200, 0, 0, 1]).unwrap();
    let closed_after = loop {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the server kept a dragging handshake open"
        );
        if greeted && stream.write_all(&[0x55]).is_err() {
            break started.elapsed();
        }
        match std::io::Read::read(&mut stream, &mut buffer) {
            Ok(0) => break started.elapsed(),
            Ok(_) => greeted = true,
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => {
                break started.elapsed()
            }
            Err(_) => {}
        }
    };
    assert!(
        closed_after >= connect_timeout - Duration::from_millis(50),
        "closed too early: {closed_after:?}"
    );
    still_serving(&server);
}
