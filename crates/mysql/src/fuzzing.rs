//! Entry points of the protocol fuzz targets (`fuzz/fuzz_targets/protocol_*.rs`): the bytes a
//! client may send, fed to the server's own code as a connection receives them, without a
//! socket. Each returns normally whatever the bytes are; a panic or a stack overflow is the
//! bug the fuzzer looks for.

use std::io;
use std::sync::Arc;

use strata_sql::{Client, ColumnType, Datum, Output};

use crate::backend::Backend;
use crate::conn::{Connection, Flow};
use crate::handshake::{authenticate, Greeting, HANDSHAKE_MAX_PAYLOAD_BYTES};
use crate::memory::{column, ScriptedBackend};
use crate::packet::{PacketReader, PacketWriter};
use crate::server::ServerState;

/// Commands one input may run: enough for prepare, long data and execute sequences, few enough
/// that each input stays fast.
const COMMANDS_MAX: usize = 64;

/// The largest packet the fuzzed connection accepts (the server's `max_allowed_packet` is
/// larger; the code paths are the same).
const MAX_PACKET_BYTES: usize = 1 << 16;

/// The connection phase: `data` is what the client sends after the greeting (its handshake
/// response, then its answer to an authentication switch). Returns whether it logged in.
pub fn handshake(data: &[u8]) -> bool {
    let mut reader = PacketReader::new(data, HANDSHAKE_MAX_PAYLOAD_BYTES);
    let mut writer = PacketWriter::new(io::sink());
    let greeting = Greeting::new(1, "8.0.11-strata-fuzz");
    let backend = ScriptedBackend::new()
        .with_user("root", "")
        .with_user("app", "secret");
    let find = |user: &str| backend.find_login(user, "127.0.0.1");
    authenticate(&mut reader, &mut writer, &greeting, find, "127.0.0.1").is_ok()
}

/// The command phase: the first four bytes of `data` are the capabilities the client
/// negotiated (little-endian), the rest the packets it sends; each payload is handled as the
/// server's command loop handles it, against a scripted backend that can prepare a few
/// statements with parameters of several counts. Returns how many commands were handled.
pub fn commands(data: &[u8]) -> usize {
    let Some((capabilities, stream)) = data.split_first_chunk::<4>() else {
        return 0;
    };
    let capabilities = u32::from_le_bytes(*capabilities);
    let backend = backend();
    let client = Client {
        connection_id: backend.next_connection_id(),
        user: "root".to_string(),
        host: "127.0.0.1".to_string(),
        on_kill: None,
        ..Client::default()
    };
    let Ok(session) = backend.open_session(client, None) else {
        return 0;
    };
    let mut connection = Connection::new(
        session,
        capabilities,
        MAX_PACKET_BYTES,
        Arc::new(ServerState::new()),
    );
    let mut reader = PacketReader::new(stream, MAX_PACKET_BYTES);
    let mut payload = Vec::new();
    for handled in 0..COMMANDS_MAX {
        reader.set_sequence(0);
        if !matches!(reader.read_payload(&mut payload), Ok(true)) {
            return handled;
        }
        let mut writer = PacketWriter::new(io::sink());
        writer.set_sequence(reader.sequence());
        match connection.handle(&payload, &mut writer) {
            Ok(Flow::Continue) => {}
            // The driver would authenticate the user it names: the parse is what bytes reach.
            Ok(Flow::ChangeUser) => {
                let _ = crate::handshake::parse_change_user(&payload[1..], capabilities);
            }
            Ok(Flow::Quit) | Err(_) => return handled + 1,
        }
    }
    COMMANDS_MAX
}

/// Statements the fuzzer can reach: a query with a result set, and prepared statements of
/// zero to three parameters (their texts are in the target's seeds).
fn backend() -> ScriptedBackend {
    let rows = Output::ResultSet {
        columns: vec![
            column("id", ColumnType::LongLong),
            column("c", ColumnType::VarString),
        ]
        .into(),
        rows: vec![
            vec![Datum::Int(1), Datum::Bytes(b"one".to_vec())],
            vec![Datum::Null, Datum::Bytes(Vec::new())],
        ],
    };
    ScriptedBackend::new()
        .with_query("select 1", rows)
        .with_statement("select 1", 0, vec![column("1", ColumnType::LongLong)])
        .with_statement(
            "select c from t where id=?",
            1,
            vec![column("c", ColumnType::VarString)],
        )
        .with_statement("insert into t values (?, ?, ?)", 3, Vec::new())
        .with_table("t", vec![column("id", ColumnType::LongLong)])
        .with_database("db")
}
