//! The command phase of one connection: a state machine from command payloads to reply packets.
//!
//! [`Connection::handle`] takes one command payload (already joined from its packets) and
//! appends the whole reply to a [`PacketWriter`]; it never touches a socket, so tests drive it
//! with byte vectors. The driver in `server.rs` reads a payload, calls `handle`, flushes: one
//! read and one write per command.
//!
//! The connection keeps, per prepared statement id, what the protocol needs beyond the session:
//! the parameter count announced at prepare time, the parameter types of the last execute that
//! bound them, and COM_STMT_SEND_LONG_DATA bytes. The columns of each execute's result set are
//! the ones the session returns with it (MySQL, too, resends metadata on every execute, so a
//! statement re-prepared after ALTER TABLE is described correctly).
//!
//! Hot paths: COM_QUERY (`Connection::query`) and COM_STMT_EXECUTE (`Connection::execute`),
//! which sysbench sends once per statement. They allocate only the parameter vector and the
//! session's output; a change to them should come with a sysbench measurement.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::Arc;

use strata_sql::{
    charsets, Batch, ColumnInfo, ColumnType, Datum, Output, ResultSink, RowSink, SessionStatus,
    SqlError,
};

use crate::backend::BackendSession;
use crate::binary::{decode_params, encode_binary_row, ParamState};
use crate::error::codes;
use crate::handshake::capabilities;
use crate::packet::{Cursor, PacketWriter, Truncated};
use crate::reply::{encode_column_definition, status, OkPacket, Replies};
use crate::server::ServerState;
use crate::text::encode_text_row;

/// Command bytes (`COM_*`).
mod commands {
    pub const QUIT: u8 = 0x01;
    pub const INIT_DB: u8 = 0x02;
    pub const QUERY: u8 = 0x03;
    pub const FIELD_LIST: u8 = 0x04;
    pub const STATISTICS: u8 = 0x09;
    pub const PROCESS_KILL: u8 = 0x0C;
    pub const DEBUG: u8 = 0x0D;
    pub const PING: u8 = 0x0E;
    pub const CHANGE_USER: u8 = 0x11;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    pub const STMT_CLOSE: u8 = 0x19;
    pub const STMT_RESET: u8 = 0x1A;
    pub const SET_OPTION: u8 = 0x1B;
    pub const RESET_CONNECTION: u8 = 0x1F;
}

/// The most prepared statements one connection may hold (MySQL's default
/// `max_prepared_stmt_count`, which MySQL applies server-wide).
pub const MAX_PREPARED_STATEMENTS: usize = 16_382;

/// What the driver does after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Flush the reply and read the next command.
    Continue,
    /// Close the connection (COM_QUIT).
    Quit,
    /// COM_CHANGE_USER: nothing was written; the driver, which reads and writes the socket,
    /// authenticates the user the payload names and hands the connection a new session
    /// ([`Connection::replace_session`]).
    ChangeUser,
}

/// A prepared statement as the connection remembers it.
struct PreparedStatement {
    params: ParamState,
}

/// A command failed: with an error for the client, or with the socket.
enum CommandError {
    Sql(SqlError),
    Io(io::Error),
}

impl From<SqlError> for CommandError {
    fn from(error: SqlError) -> CommandError {
        CommandError::Sql(error)
    }
}

impl From<io::Error> for CommandError {
    fn from(error: io::Error) -> CommandError {
        CommandError::Io(error)
    }
}

type CommandResult = Result<(), CommandError>;

/// One authenticated connection.
pub struct Connection<S: BackendSession> {
    session: S,
    capabilities: u32,
    max_allowed_packet: usize,
    statements: HashMap<u32, PreparedStatement>,
    server: Arc<ServerState>,
}

impl<S: BackendSession> Connection<S> {
    /// Creates the command-phase state of a connection that negotiated `capabilities`.
    pub fn new(
        session: S,
        capabilities: u32,
        max_allowed_packet: usize,
        server: Arc<ServerState>,
    ) -> Connection<S> {
        Connection {
            session,
            capabilities,
            max_allowed_packet,
            statements: HashMap::new(),
            server,
        }
    }

    /// The capabilities the client negotiated.
    pub fn capabilities(&self) -> u32 {
        self.capabilities
    }

    /// Gives the connection another session (COM_CHANGE_USER's, for the user it changed to):
    /// the prepared statements of the old one are forgotten.
    pub fn replace_session(&mut self, session: S) {
        self.statements.clear();
        self.session = session;
    }

    /// Returns the status flags of the session for OK and EOF packets.
    pub fn status(&self) -> u16 {
        status_flags(SessionStatus {
            in_transaction: self.session.in_transaction(),
            autocommit: self.session.autocommit(),
        })
    }

    /// Handles one command payload, appending its reply (if it has one) to `writer`, whose
    /// sequence id the caller has set. Errors are the socket's only.
    pub fn handle<W: Write>(
        &mut self,
        payload: &[u8],
        writer: &mut PacketWriter<W>,
    ) -> io::Result<Flow> {
        let deprecate_eof = self.capabilities & capabilities::DEPRECATE_EOF != 0;
        let mut replies = Replies {
            writer,
            deprecate_eof,
        };
        let Some((&command, body)) = payload.split_first() else {
            replies.err(&codes::malformed_packet())?;
            return Ok(Flow::Continue);
        };
        let result = match command {
            commands::QUIT => return Ok(Flow::Quit),
            commands::CHANGE_USER => return Ok(Flow::ChangeUser),
            commands::INIT_DB => self.init_db(body, &mut replies),
            commands::QUERY => self.query(body, &mut replies),
            commands::FIELD_LIST => self.field_list(body, &mut replies),
            commands::STATISTICS => self.statistics(&mut replies),
            commands::PROCESS_KILL => self.process_kill(body, &mut replies),
            commands::DEBUG | commands::PING => self.ok(&mut replies),
            commands::STMT_PREPARE => self.prepare(body, &mut replies),
            commands::STMT_EXECUTE => self.execute(body, &mut replies),
            commands::STMT_SEND_LONG_DATA => {
                self.send_long_data(body);
                Ok(())
            }
            commands::STMT_CLOSE => {
                self.close_statement(body);
                Ok(())
            }
            commands::STMT_RESET => self.reset_statement(body, &mut replies),
            commands::SET_OPTION => self.set_option(body, &mut replies),
            commands::RESET_CONNECTION => self.reset_connection(&mut replies),
            _ => Err(codes::unknown_command().into()),
        };
        match result {
            Ok(()) => {}
            Err(CommandError::Sql(error)) => replies.err(&error)?,
            Err(CommandError::Io(error)) => return Err(error),
        }
        if self.session.connection_killed() {
            return Ok(Flow::Quit);
        }
        Ok(Flow::Continue)
    }

    fn ok<W: Write>(&mut self, replies: &mut Replies<'_, W>) -> CommandResult {
        replies.ok(&OkPacket {
            status: self.status(),
            ..OkPacket::default()
        })?;
        Ok(())
    }

    fn init_db<W: Write>(&mut self, body: &[u8], replies: &mut Replies<'_, W>) -> CommandResult {
        self.session.use_database(&String::from_utf8_lossy(body))?;
        self.ok(replies)
    }

    /// COM_QUERY: one result per statement, written as the statement ends with the session's
    /// status then, each but the last flagged MORE_RESULTS_EXISTS; an error ends the batch. A
    /// large result set is written while its statement runs. Only a client that asked for
    /// CLIENT_MULTI_STATEMENTS (at the handshake or by COM_SET_OPTION) may send several
    /// statements: for any other, text after the first is a syntax error and nothing runs, so
    /// an injected `; DROP …` cannot ride along.
    fn query<W: Write>(&mut self, body: &[u8], replies: &mut Replies<'_, W>) -> CommandResult {
        let sql = strata_sql::decode_statement_text(statement_text(body));
        let batch = if self.capabilities & capabilities::MULTI_STATEMENTS != 0 {
            Batch::Multiple
        } else {
            Batch::Single
        };
        let mut sink = ReplySink::new(replies, encode_text_row);
        self.session.execute_text(&sql, batch, &mut sink);
        sink.finish()
    }

    fn field_list<W: Write>(&mut self, body: &[u8], replies: &mut Replies<'_, W>) -> CommandResult {
        let table = Cursor::new(body).nul_bytes_or_rest();
        let columns = self.session.field_list(&String::from_utf8_lossy(table))?;
        for column in &columns {
            replies
                .writer
                .write_with(|buffer| encode_column_definition(buffer, column, true))?;
        }
        replies.end_of_rows(self.status())?;
        Ok(())
    }

    fn statistics<W: Write>(&mut self, replies: &mut Replies<'_, W>) -> CommandResult {
        let text = format!(
            "Uptime: {}  Threads: {}  Open prepared statements: {}",
            self.server.uptime().as_secs(),
            self.server.connection_count(),
            self.statements.len()
        );
        replies.writer.write_packet(text.as_bytes())?;
        Ok(())
    }

    fn process_kill<W: Write>(
        &mut self,
        body: &[u8],
        replies: &mut Replies<'_, W>,
    ) -> CommandResult {
        let connection_id = Cursor::new(body)
            .u32()
            .map_err(|Truncated| codes::malformed_packet())?;
        self.session.kill(connection_id)?;
        self.ok(replies)
    }

    /// COM_STMT_PREPARE: STMT_PREPARE_OK, then parameter and column definitions.
    fn prepare<W: Write>(&mut self, body: &[u8], replies: &mut Replies<'_, W>) -> CommandResult {
        if self.statements.len() >= MAX_PREPARED_STATEMENTS {
            return Err(codes::too_many_prepared_statements(MAX_PREPARED_STATEMENTS).into());
        }
        let info = self
            .session
            .prepare(&strata_sql::decode_statement_text(statement_text(body)))?;
        let column_count = u16::try_from(info.columns.len()).unwrap_or(u16::MAX);
        replies.writer.write_with(|buffer| {
            buffer.push(0x00);
            buffer.extend_from_slice(&info.statement_id.to_le_bytes());
            buffer.extend_from_slice(&column_count.to_le_bytes());
            buffer.extend_from_slice(&info.param_count.to_le_bytes());
            buffer.push(0x00);
            buffer.extend_from_slice(&0u16.to_le_bytes());
        })?;
        let status = self.status();
        if info.param_count > 0 {
            let param = param_definition();
            for _ in 0..info.param_count {
                replies
                    .writer
                    .write_with(|buffer| encode_column_definition(buffer, &param, false))?;
            }
            replies.eof_after_definitions(status)?;
        }
        if !info.columns.is_empty() {
            replies.definitions(&info.columns, status)?;
        }
        let params = ParamState::new(usize::from(info.param_count));
        self.statements
            .insert(info.statement_id, PreparedStatement { params });
        Ok(())
    }

    /// COM_STMT_EXECUTE: decode parameters (types remembered across executes), run, reply with
    /// a binary result set or OK. Long data is consumed whatever the outcome.
    fn execute<W: Write>(&mut self, body: &[u8], replies: &mut Replies<'_, W>) -> CommandResult {
        let mut cursor = Cursor::new(body);
        let statement_id = cursor
            .u32()
            .map_err(|Truncated| codes::malformed_packet())?;
        let Some(statement) = self.statements.get_mut(&statement_id) else {
            return Err(codes::unknown_statement(statement_id, "mysqld_stmt_execute").into());
        };
        let overflowed = statement.params.long_data_overflowed;
        let params = decode_params(&mut cursor, &mut statement.params);
        statement.params.clear_long_data();
        if overflowed {
            return Err(codes::packet_too_large().into());
        }
        let params = params?;
        let mut sink = ReplySink::new(replies, encode_binary_row);
        let output = self
            .session
            .execute_prepared(statement_id, params, &mut sink);
        sink.finish()?;
        let status = self.status();
        write_output(replies, output?, status, encode_binary_row)?;
        Ok(())
    }

    /// COM_STMT_SEND_LONG_DATA has no reply; an unknown statement or parameter is ignored.
    fn send_long_data(&mut self, body: &[u8]) {
        let mut cursor = Cursor::new(body);
        let (Ok(statement_id), Ok(param_index)) = (cursor.u32(), cursor.u16()) else {
            return;
        };
        if let Some(statement) = self.statements.get_mut(&statement_id) {
            statement.params.append_long_data(
                usize::from(param_index),
                cursor.rest(),
                self.max_allowed_packet,
            );
        }
    }

    /// COM_STMT_CLOSE has no reply.
    fn close_statement(&mut self, body: &[u8]) {
        if let Ok(statement_id) = Cursor::new(body).u32() {
            if self.statements.remove(&statement_id).is_some() {
                self.session.close_prepared(statement_id);
            }
        }
    }

    fn reset_statement<W: Write>(
        &mut self,
        body: &[u8],
        replies: &mut Replies<'_, W>,
    ) -> CommandResult {
        let statement_id = Cursor::new(body)
            .u32()
            .map_err(|Truncated| codes::malformed_packet())?;
        let Some(statement) = self.statements.get_mut(&statement_id) else {
            return Err(codes::unknown_statement(statement_id, "mysqld_stmt_reset").into());
        };
        statement.params.clear_long_data();
        self.ok(replies)
    }

    /// COM_SET_OPTION: 0 turns multi-statements on, 1 off; the reply is an EOF.
    fn set_option<W: Write>(&mut self, body: &[u8], replies: &mut Replies<'_, W>) -> CommandResult {
        match Cursor::new(body).u16() {
            Ok(0) => self.capabilities |= capabilities::MULTI_STATEMENTS,
            Ok(1) => self.capabilities &= !capabilities::MULTI_STATEMENTS,
            _ => return Err(codes::unknown_command().into()),
        }
        replies.end_of_rows(self.status())?;
        Ok(())
    }

    fn reset_connection<W: Write>(&mut self, replies: &mut Replies<'_, W>) -> CommandResult {
        self.session.reset();
        self.statements.clear();
        self.ok(replies)
    }
}

/// The `SERVER_STATUS_*` flags of a session's state.
fn status_flags(state: SessionStatus) -> u16 {
    let mut flags = 0;
    if state.in_transaction {
        flags |= status::IN_TRANS;
    }
    if state.autocommit {
        flags |= status::AUTOCOMMIT;
    }
    flags
}

/// How a row's payload is encoded: the text or the binary protocol.
type EncodeRow = fn(&mut Vec<u8>, &[ColumnInfo], &[Datum]);

/// Writes a command's results as the session hands them over: whole results, and the
/// columns and rows of a result set that streams while its statement runs. The first socket
/// error is kept (the session is told the write failed, and stops) and ends the connection.
struct ReplySink<'r, 'w, W: Write> {
    replies: &'r mut Replies<'w, W>,
    encode_row: EncodeRow,
    /// The columns of the result set being streamed.
    columns: Vec<ColumnInfo>,
    failed: Option<io::Error>,
}

impl<'r, 'w, W: Write> ReplySink<'r, 'w, W> {
    fn new(replies: &'r mut Replies<'w, W>, encode_row: EncodeRow) -> Self {
        ReplySink {
            replies,
            encode_row,
            columns: Vec::new(),
            failed: None,
        }
    }

    /// Keeps the first socket error, which the session gets as MySQL's 1160.
    fn written(&mut self, result: io::Result<()>) -> Result<(), SqlError> {
        result.map_err(|error| {
            self.failed.get_or_insert(error);
            codes::net_error_on_write()
        })
    }

    /// The socket error a write met, if any.
    fn finish(self) -> CommandResult {
        match self.failed {
            Some(error) => Err(CommandError::Io(error)),
            None => Ok(()),
        }
    }
}

impl<W: Write> RowSink for ReplySink<'_, '_, W> {
    fn columns(&mut self, columns: &[ColumnInfo], state: SessionStatus) -> Result<(), SqlError> {
        self.columns = columns.to_vec();
        let written = self.replies.begin_result_set(columns, status_flags(state));
        self.written(written)
    }

    fn rows(&mut self, rows: &[Vec<Datum>]) -> Result<(), SqlError> {
        let (columns, encode_row) = (&self.columns, self.encode_row);
        let writer = &mut *self.replies.writer;
        let written = rows
            .iter()
            .try_for_each(|row| writer.write_with(|buffer| encode_row(buffer, columns, row)));
        self.written(written)
    }
}

impl<W: Write> ResultSink for ReplySink<'_, '_, W> {
    fn result(
        &mut self,
        result: Result<Output, SqlError>,
        state: SessionStatus,
        more: bool,
    ) -> Result<(), SqlError> {
        let more = if more { status::MORE_RESULTS_EXISTS } else { 0 };
        let written = match result {
            Ok(output) => write_output(
                self.replies,
                output,
                status_flags(state) | more,
                self.encode_row,
            ),
            Err(error) => self.replies.err(&error),
        };
        self.written(written)
    }
}

/// Writes one statement's output: a result set (rows encoded by `encode_row`), the end of one
/// whose rows were streamed, or an OK packet. A result set without columns cannot be expressed
/// in the protocol and is sent as OK.
fn write_output<W: Write>(
    replies: &mut Replies<'_, W>,
    output: Output,
    status: u16,
    encode_row: EncodeRow,
) -> io::Result<()> {
    match output {
        Output::Streamed { .. } => replies.end_of_rows(status),
        Output::ResultSet { columns, rows } if !columns.is_empty() => {
            replies.result_set(&columns, &rows, status, encode_row)
        }
        Output::ResultSet { .. } => replies.ok(&OkPacket {
            status,
            ..OkPacket::default()
        }),
        Output::Ok {
            affected_rows,
            last_insert_id,
            warnings,
            info,
        } => replies.ok(&OkPacket {
            affected_rows,
            last_insert_id,
            status,
            warnings,
            info: &info,
        }),
    }
}

/// The definition sent for every `?` of a prepared statement.
/// The statement text of a COM_QUERY or COM_STMT_PREPARE body. MySQL's lexer takes one NUL
/// that ends the text (after trailing spaces and `;`, which the server trims first) as its
/// end, and some clients send one (mysqlslap's queries end in the C string's terminator);
/// any other NUL stays, to be read as the lexer reads it.
fn statement_text(body: &[u8]) -> &[u8] {
    let trimmed = body
        .iter()
        .rposition(|&b| !(b == b';' || b.is_ascii_whitespace()))
        .map_or(&body[..0], |last| &body[..=last]);
    match trimmed.split_last() {
        Some((0, text)) => text,
        _ => body,
    }
}

fn param_definition() -> ColumnInfo {
    ColumnInfo {
        schema: String::new(),
        table: String::new(),
        org_table: String::new(),
        name: "?".to_string(),
        org_name: String::new(),
        charset: charsets::BINARY,
        column_length: 0,
        column_type: ColumnType::VarString,
        flags: 0,
        decimals: 0,
    }
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;
