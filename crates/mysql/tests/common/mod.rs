//! What the end-to-end tests share: a server over the scripted backend on a loopback port, and
//! a minimal raw client for the tests that must send what no real client sends.

#![allow(dead_code)]

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

use strata_mysql::memory::ScriptedBackend;
use strata_mysql::packet::{put_lenenc_bytes, put_nul_bytes, PacketReader, PacketWriter};
use strata_mysql::{capabilities, MysqlServer, ServerConfig, ShutdownHandle};
use strata_sql::{charsets, ColumnInfo, ColumnType, Datum, Output};

/// A server running on its own thread; shut down and joined on drop.
pub struct TestServer {
    pub addr: SocketAddr,
    pub backend: ScriptedBackend,
    shutdown: ShutdownHandle,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl TestServer {
    pub fn start(config: ServerConfig, backend: ScriptedBackend) -> TestServer {
        let config = ServerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            ..config
        };
        let server = MysqlServer::bind(config, backend.clone()).unwrap();
        let addr = server.local_addr();
        let shutdown = server.shutdown_handle();
        let thread = std::thread::spawn(move || server.run());
        TestServer {
            addr,
            backend,
            shutdown,
            thread: Some(thread),
        }
    }

    /// Stops the server and waits for `run` to return.
    pub fn stop(&mut self) {
        if let Some(thread) = self.thread.take() {
            self.shutdown.shutdown();
            thread.join().unwrap().unwrap();
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop();
    }
}

pub fn column(name: &str, column_type: ColumnType) -> ColumnInfo {
    ColumnInfo {
        schema: "sbtest".into(),
        table: "sbtest1".into(),
        org_table: "sbtest1".into(),
        name: name.into(),
        org_name: name.into(),
        charset: charsets::UTF8MB4_GENERAL_CI,
        column_length: 120,
        column_type,
        flags: 0,
        decimals: 31,
    }
}

/// The backend every end-to-end test uses: `SELECT 1`, sysbench's point select and update.
pub fn backend() -> ScriptedBackend {
    let one = Output::ResultSet {
        columns: vec![column("1", ColumnType::LongLong)].into(),
        rows: vec![vec![Datum::Int(1)]],
    };
    let words = Output::ResultSet {
        columns: vec![
            column("id", ColumnType::Long),
            column("word", ColumnType::VarString),
        ]
        .into(),
        rows: vec![
            vec![Datum::Int(1), Datum::Bytes(b"one".to_vec())],
            vec![Datum::Int(2), Datum::Null],
        ],
    };
    ScriptedBackend::new()
        .with_query("select 1", one)
        .with_query("select id, word from words", words)
        .with_statement(
            "SELECT c, pad FROM sbtest1 WHERE id=?",
            1,
            vec![
                column("c", ColumnType::LongLong),
                column("pad", ColumnType::String),
            ],
        )
        .with_statement("UPDATE sbtest1 SET c=? WHERE id=?", 2, Vec::new())
        .with_statement(
            "SELECT ?, ?, ?, ?",
            4,
            vec![
                column("a", ColumnType::Double),
                column("b", ColumnType::DateTime),
                column("c", ColumnType::VarString),
                column("d", ColumnType::LongLong),
            ],
        )
        .with_database("sbtest")
}

/// Checks that `program` is installed; a missing client fails the test (scripts/test.sh installs
/// sysbench and the mariadb client), so a test never passes without running.
pub fn installed(program: &str) -> bool {
    assert!(
        Path::new(program).exists(),
        "{program} is not installed: run scripts/test.sh, which installs it"
    );
    true
}

/// Connects and logs in as `root` with no password, with the raw packet layer.
pub fn raw_login(addr: SocketAddr) -> (PacketReader<TcpStream>, PacketWriter<TcpStream>) {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut reader = PacketReader::new(stream.try_clone().unwrap(), 1 << 24);
    let mut writer = PacketWriter::new(stream);
    let mut greeting = Vec::new();
    assert!(reader.read_payload(&mut greeting).unwrap());
    assert_eq!(greeting[0], 10, "protocol version 10");
    let mut response = Vec::new();
    let flags = capabilities::PROTOCOL_41
        | capabilities::SECURE_CONNECTION
        | capabilities::PLUGIN_AUTH
        | capabilities::PLUGIN_AUTH_LENENC_CLIENT_DATA
        | capabilities::DEPRECATE_EOF;
    response.extend_from_slice(&flags.to_le_bytes());
    response.extend_from_slice(&(1u32 << 24).to_le_bytes());
    response.push(45);
    response.extend_from_slice(&[0; 23]);
    put_nul_bytes(&mut response, b"root");
    put_lenenc_bytes(&mut response, b"");
    put_nul_bytes(&mut response, b"mysql_native_password");
    writer.set_sequence(reader.sequence());
    writer.write_packet(&response).unwrap();
    writer.flush().unwrap();
    reader.set_sequence(writer.sequence());
    let mut ok = Vec::new();
    assert!(reader.read_payload(&mut ok).unwrap());
    assert_eq!(ok[0], 0, "login OK: {ok:?}");
    (reader, writer)
}

/// Reads until the server closes the stream; fails if it does not within the read timeout.
pub fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut received = Vec::new();
    match stream.read_to_end(&mut received) {
        Ok(_) => received,
        Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => received,
        Err(error) => panic!("the server did not close the connection: {error}"),
    }
}
