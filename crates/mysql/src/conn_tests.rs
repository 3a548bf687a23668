//! Tests of the command phase against the scripted backend, byte for byte.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use strata_sql::{Client, ColumnType, Datum, Output};

use super::*;
use crate::backend::Backend;
use crate::memory::{column, Execution, ScriptedBackend, ScriptedSession};
use crate::packet::PacketReader;

fn backend() -> ScriptedBackend {
    let one = Output::ResultSet {
        columns: vec![column("1", ColumnType::LongLong)].into(),
        rows: vec![vec![Datum::Int(1)]],
    };
    let insert = Output::Ok {
        affected_rows: 3,
        last_insert_id: 9,
        warnings: 0,
        info: String::new(),
    };
    ScriptedBackend::new()
        .with_query("select 1", one)
        .with_query("insert x", insert)
        .with_statement(
            "select c, pad from sbtest1 where id=?",
            1,
            vec![
                column("c", ColumnType::VarString),
                column("pad", ColumnType::LongLong),
            ],
        )
        .with_statement("update t set k=k+1 where id=?", 1, Vec::new())
        .with_statement("insert into t values (?, ?)", 2, Vec::new())
        .with_table("sbtest1", vec![column("id", ColumnType::Long)])
        .with_database("sbtest")
}

fn connection(backend: &ScriptedBackend, capabilities: u32) -> Connection<ScriptedSession> {
    let client = Client {
        connection_id: backend.next_connection_id(),
        user: "root".to_string(),
        host: "localhost".to_string(),
        on_kill: None,
        ..Client::default()
    };
    let session = backend.open_session(client, None).unwrap();
    Connection::new(session, capabilities, 1 << 20, Arc::new(ServerState::new()))
}

const CLASSIC: u32 = capabilities::SERVER & !capabilities::DEPRECATE_EOF;
const DEPRECATE_EOF: u32 = capabilities::SERVER;

/// Runs one command; returns the reply packets with their sequence ids.
fn command(connection: &mut Connection<ScriptedSession>, payload: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut writer = PacketWriter::new(Vec::new());
    writer.set_sequence(1);
    assert_eq!(
        connection.handle(payload, &mut writer).unwrap(),
        Flow::Continue
    );
    writer.flush().unwrap();
    let wire = writer.get_ref().clone();
    let mut reader = PacketReader::new(&wire[..], usize::MAX);
    reader.set_sequence(1);
    let mut packets = Vec::new();
    loop {
        let sequence = reader.sequence();
        let mut payload = Vec::new();
        if !reader.read_payload(&mut payload).unwrap() {
            return packets;
        }
        packets.push((sequence, payload));
    }
}

fn payloads(packets: Vec<(u8, Vec<u8>)>) -> Vec<Vec<u8>> {
    for (index, (sequence, _)) in packets.iter().enumerate() {
        assert_eq!(
            usize::from(*sequence),
            index + 1,
            "sequence ids count from 1"
        );
    }
    packets.into_iter().map(|(_, payload)| payload).collect()
}

fn query(connection: &mut Connection<ScriptedSession>, sql: &str) -> Vec<Vec<u8>> {
    let mut payload = vec![commands::QUERY];
    payload.extend_from_slice(sql.as_bytes());
    payloads(command(connection, &payload))
}

fn error_code(packet: &[u8]) -> u16 {
    assert_eq!(packet[0], 0xFF, "not an ERR packet: {packet:?}");
    u16::from_le_bytes([packet[1], packet[2]])
}

/// The status flags of an OK packet with one-byte affected rows and last insert id.
fn ok_status(packet: &[u8]) -> u16 {
    u16::from_le_bytes([packet[3], packet[4]])
}

#[test]
fn text_result_set_with_classic_eof() {
    let mut connection = connection(&backend(), CLASSIC);
    let packets = query(&mut connection, "SELECT 1");
    assert_eq!(packets.len(), 5);
    assert_eq!(packets[0], [1]);
    assert_eq!(packets[2], [0xFE, 0, 0, 2, 0]);
    assert_eq!(packets[3], [1, b'1']);
    assert_eq!(packets[4], [0xFE, 0, 0, 2, 0]);
}

#[test]
fn text_result_set_with_deprecated_eof() {
    let mut connection = connection(&backend(), DEPRECATE_EOF);
    let packets = query(&mut connection, "SELECT 1");
    assert_eq!(packets.len(), 4);
    assert_eq!(packets[2], [1, b'1']);
    assert_eq!(packets[3], [0xFE, 0, 0, 2, 0, 0, 0]);
}

#[test]
fn multi_statements_flag_more_results_and_stop_at_the_first_error() {
    let mut connection = connection(&backend(), DEPRECATE_EOF);
    let packets = query(&mut connection, "begin; insert x; select 1");
    assert_eq!(packets.len(), 6);
    let in_trans = status::IN_TRANS | status::AUTOCOMMIT;
    assert_eq!(
        ok_status(&packets[0]),
        in_trans | status::MORE_RESULTS_EXISTS
    );
    assert_eq!(
        packets[1][..3],
        [0, 3, 9],
        "affected rows and last insert id"
    );
    assert_eq!(
        ok_status(&packets[1]),
        in_trans | status::MORE_RESULTS_EXISTS
    );
    assert_eq!(ok_status(&packets[5]), in_trans);

    let packets = query(&mut connection, "commit; bogus; select 1");
    assert_eq!(packets.len(), 2);
    assert_eq!(
        ok_status(&packets[0]),
        status::AUTOCOMMIT | status::MORE_RESULTS_EXISTS
    );
    assert_eq!(error_code(&packets[1]), 1064);
}

#[test]
fn several_statements_need_the_multi_statements_capability() {
    let single = DEPRECATE_EOF & !capabilities::MULTI_STATEMENTS;
    let mut connection = connection(&backend(), single);
    let packets = query(&mut connection, "begin; select 1");
    assert_eq!(packets.len(), 1);
    assert_eq!(error_code(&packets[0]), 1064);
    assert_eq!(connection.status(), status::AUTOCOMMIT, "nothing ran");
    assert_eq!(
        query(&mut connection, "select 1;").len(),
        4,
        "one statement may end in ;"
    );

    // COM_SET_OPTION switches the capability on and off for the rest of the connection.
    payloads(command(&mut connection, &[commands::SET_OPTION, 0, 0]));
    assert_eq!(query(&mut connection, "select 1; select 1").len(), 8);
    payloads(command(&mut connection, &[commands::SET_OPTION, 1, 0]));
    assert_eq!(
        error_code(&query(&mut connection, "select 1; select 1")[0]),
        1064
    );
}

#[test]
fn prepare_announces_the_columns_execute_returns() {
    let backend = backend();
    for capabilities in [CLASSIC, DEPRECATE_EOF] {
        let mut connection = connection(&backend, capabilities);
        let mut payload = vec![commands::STMT_PREPARE];
        payload.extend_from_slice(b"SELECT c, pad FROM sbtest1 WHERE id=?");
        let packets = payloads(command(&mut connection, &payload));
        let classic = capabilities == CLASSIC;
        assert_eq!(packets.len(), if classic { 6 } else { 4 });
        let prepare_ok = &packets[0];
        assert_eq!(prepare_ok[0], 0);
        let statement_id = u32::from_le_bytes(prepare_ok[1..5].try_into().unwrap());
        assert_eq!(&prepare_ok[5..9], &[2, 0, 1, 0], "2 columns, 1 parameter");

        // First execute binds LONG; the second reuses it.
        for (id, bound) in [(7i32, true), (8, false)] {
            let mut payload = vec![commands::STMT_EXECUTE];
            payload.extend_from_slice(&statement_id.to_le_bytes());
            payload.extend_from_slice(&[0, 1, 0, 0, 0, 0]);
            payload.push(u8::from(bound));
            if bound {
                payload.extend_from_slice(&[3, 0]);
            }
            payload.extend_from_slice(&id.to_le_bytes());
            let packets = payloads(command(&mut connection, &payload));
            assert_eq!(packets[0], [2], "column count equals the prepared one");
            let row = &packets[if classic { 4 } else { 3 }];
            let expected = [0x00, 0b0000_1000, 1, b'0' + id as u8];
            assert_eq!(row[..], expected, "binary row: c as text, pad NULL");
        }
    }
    let executions = backend.executions();
    assert_eq!(executions.len(), 4);
    assert_eq!(
        executions[1],
        Execution {
            sql: "select c, pad from sbtest1 where id=?".into(),
            params: vec![Datum::Int(8)]
        }
    );
}

fn prepare(connection: &mut Connection<ScriptedSession>, sql: &str) -> u32 {
    let mut payload = vec![commands::STMT_PREPARE];
    payload.extend_from_slice(sql.as_bytes());
    let packets = payloads(command(connection, &payload));
    u32::from_le_bytes(packets[0][1..5].try_into().unwrap())
}

#[test]
fn long_data_feeds_the_next_execute_only() {
    let backend = backend();
    let mut connection = connection(&backend, DEPRECATE_EOF);
    let statement_id = prepare(&mut connection, "insert into t values (?, ?)");
    for chunk in [&b"hello "[..], b"world"] {
        let mut payload = vec![commands::STMT_SEND_LONG_DATA];
        payload.extend_from_slice(&statement_id.to_le_bytes());
        payload.extend_from_slice(&1u16.to_le_bytes());
        payload.extend_from_slice(chunk);
        assert!(
            command(&mut connection, &payload).is_empty(),
            "no reply to long data"
        );
    }
    let mut execute = vec![commands::STMT_EXECUTE];
    execute.extend_from_slice(&statement_id.to_le_bytes());
    execute.extend_from_slice(&[0, 1, 0, 0, 0, 0b01, 1, 8, 0, 252, 0]);
    let packets = payloads(command(&mut connection, &execute));
    assert_eq!(packets[0][..2], [0, 2]);
    let mut again = execute.clone();
    again.extend_from_slice(&[2, b'h', b'i']);
    command(&mut connection, &again);

    // COM_STMT_RESET drops long data before it is used.
    let mut payload = vec![commands::STMT_SEND_LONG_DATA];
    payload.extend_from_slice(&statement_id.to_le_bytes());
    payload.extend_from_slice(&[1, 0, b'x']);
    command(&mut connection, &payload);
    let mut reset = vec![commands::STMT_RESET];
    reset.extend_from_slice(&statement_id.to_le_bytes());
    assert_eq!(payloads(command(&mut connection, &reset))[0][0], 0);
    command(&mut connection, &again);

    let params: Vec<Vec<Datum>> = backend
        .executions()
        .into_iter()
        .map(|execution| execution.params)
        .collect();
    assert_eq!(
        params,
        vec![
            vec![Datum::Null, Datum::Bytes(b"hello world".to_vec())],
            vec![Datum::Null, Datum::Bytes(b"hi".to_vec())],
            vec![Datum::Null, Datum::Bytes(b"hi".to_vec())],
        ]
    );
}

#[test]
fn statement_errors() {
    let mut connection = connection(&backend(), DEPRECATE_EOF);
    let mut execute = vec![commands::STMT_EXECUTE];
    execute.extend_from_slice(&99u32.to_le_bytes());
    execute.extend_from_slice(&[0, 1, 0, 0, 0]);
    assert_eq!(
        error_code(&payloads(command(&mut connection, &execute))[0]),
        1243
    );

    let statement_id = prepare(&mut connection, "update t set k=k+1 where id=?");
    let mut truncated = vec![commands::STMT_EXECUTE];
    truncated.extend_from_slice(&statement_id.to_le_bytes());
    truncated.extend_from_slice(&[0, 1, 0, 0, 0, 0, 1, 3, 0, 1]);
    assert_eq!(
        error_code(&payloads(command(&mut connection, &truncated))[0]),
        1210
    );

    let mut close = vec![commands::STMT_CLOSE];
    close.extend_from_slice(&statement_id.to_le_bytes());
    assert!(
        command(&mut connection, &close).is_empty(),
        "no reply to close"
    );
    let mut reset = vec![commands::STMT_RESET];
    reset.extend_from_slice(&statement_id.to_le_bytes());
    assert_eq!(
        error_code(&payloads(command(&mut connection, &reset))[0]),
        1243
    );

    let mut prepare = vec![commands::STMT_PREPARE];
    prepare.extend_from_slice(b"nonsense");
    assert_eq!(
        error_code(&payloads(command(&mut connection, &prepare))[0]),
        1064
    );
}

#[test]
fn small_commands() {
    let mut connection = connection(&backend(), CLASSIC);
    assert_eq!(
        error_code(&payloads(command(&mut connection, &[]))[0]),
        1835
    );
    assert_eq!(
        error_code(&payloads(command(&mut connection, &[0x42]))[0]),
        1047
    );
    assert_eq!(
        payloads(command(&mut connection, &[commands::PING])),
        [[0, 0, 0, 2, 0, 0, 0]]
    );
    assert_eq!(
        payloads(command(&mut connection, &[commands::DEBUG]))[0][0],
        0
    );
    assert_eq!(
        payloads(command(&mut connection, &[commands::SET_OPTION, 1, 0])),
        [[0xFE, 0, 0, 2, 0]]
    );
    assert_eq!(
        error_code(&payloads(command(&mut connection, &[commands::SET_OPTION, 5, 0]))[0]),
        1047
    );
    assert_eq!(
        payloads(command(&mut connection, &[commands::RESET_CONNECTION]))[0][0],
        0
    );
    let statistics = payloads(command(&mut connection, &[commands::STATISTICS]));
    assert!(statistics[0].starts_with(b"Uptime: "));
    assert_eq!(
        error_code(
            &payloads(command(
                &mut connection,
                &[commands::PROCESS_KILL, 9, 0, 0, 0]
            ))[0]
        ),
        1094
    );

    let mut init_db = vec![commands::INIT_DB];
    init_db.extend_from_slice(b"nosuch");
    assert_eq!(
        error_code(&payloads(command(&mut connection, &init_db))[0]),
        1049
    );
    init_db.truncate(1);
    init_db.extend_from_slice(b"sbtest");
    assert_eq!(payloads(command(&mut connection, &init_db))[0][0], 0);

    let mut field_list = vec![commands::FIELD_LIST];
    field_list.extend_from_slice(b"sbtest1\0");
    let packets = payloads(command(&mut connection, &field_list));
    assert_eq!(packets.len(), 2);
    assert_eq!(packets[0].last(), Some(&0xFB), "default value field");
    assert_eq!(packets[1], [0xFE, 0, 0, 2, 0]);

    let mut writer = PacketWriter::new(Vec::new());
    assert_eq!(
        connection.handle(&[commands::QUIT], &mut writer).unwrap(),
        Flow::Quit
    );
}

/// Random payloads after every command byte: each gets a reply or none, never a panic.
#[test]
fn random_payloads_never_panic() {
    let seed = 0x5eed_u64;
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut connection = connection(&backend(), DEPRECATE_EOF);
    let statement_id = prepare(&mut connection, "insert into t values (?, ?)");
    for _ in 0..20_000 {
        let command_byte = rng.gen_range(0..0x20u8);
        if command_byte == commands::QUIT {
            continue;
        }
        let mut payload = vec![command_byte];
        if rng.gen_bool(0.5) {
            payload.extend_from_slice(&statement_id.to_le_bytes());
        }
        let length = rng.gen_range(0..24);
        payload.extend((0..length).map(|_| rng.gen::<u8>()));
        let mut writer = PacketWriter::new(Vec::new());
        writer.set_sequence(1);
        let flow = connection.handle(&payload, &mut writer);
        assert!(flow.is_ok(), "seed {seed:#x}, payload {payload:?}");
    }
}

#[test]
fn one_nul_ending_the_text_ends_the_statement() {
    // As MariaDB 10.11 answers each of these (checked with pymysql).
    for (body, text) in [
        (&b"select 1\0"[..], &b"select 1"[..]),
        (b"select 1 \0 ", b"select 1 "),
        (b"select 1;\0", b"select 1;"),
        (b"select 1\0;", b"select 1"),
        (b"select 1\0\0", b"select 1\0"),
        (b"select 1\0 + 2", b"select 1\0 + 2"),
        (b"\0select 1", b"\0select 1"),
        (b"\0", b""),
        (b"", b""),
        (b" ;", b" ;"),
    ] {
        assert_eq!(statement_text(body), text, "{body:?}");
    }
    let backend = backend();
    let mut connection = connection(&backend, DEPRECATE_EOF);
    let mut payload = vec![0x03];
    payload.extend_from_slice(b"select 1\0");
    let replies = payloads(command(&mut connection, &payload));
    assert_eq!(replies, query(&mut connection, "select 1"));
    assert_eq!(replies[0], [1], "a result set of one column");
}

#[test]
fn change_user_is_left_to_the_driver_and_forgets_prepared_statements() {
    let backend = backend();
    let mut connection = connection(&backend, DEPRECATE_EOF);
    let id = prepare(&mut connection, "select c, pad from sbtest1 where id=?");
    let mut writer = PacketWriter::new(Vec::new());
    writer.set_sequence(1);
    let flow = connection
        .handle(b"\x11bob\0\0shop\0", &mut writer)
        .unwrap();
    writer.flush().unwrap();
    assert_eq!(flow, Flow::ChangeUser);
    assert!(writer.get_ref().is_empty(), "the driver answers it");
    let client = Client {
        connection_id: backend.next_connection_id(),
        user: "bob".to_string(),
        ..Client::default()
    };
    connection.replace_session(backend.open_session(client, None).unwrap());
    let mut execute = vec![0x17];
    execute.extend_from_slice(&id.to_le_bytes());
    execute.extend_from_slice(&[0, 1, 0, 0, 0]);
    let reply = payloads(command(&mut connection, &execute));
    assert_eq!(
        error_code(&reply[0]),
        1243,
        "unknown statement after the change"
    );
}
