//! What the wire protocol sees of the SQL layer: a shared [`SqlServer`], one [`Session`] per
//! connection, statement outputs, column descriptions and MySQL errors.

use std::sync::Arc;

use strata_codec::Datum;

/// A MySQL error as sent to a client: code, SQLSTATE and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqlError {
    pub code: u16,
    pub state: &'static str,
    pub message: String,
}

impl SqlError {
    pub fn new(code: u16, state: &'static str, message: impl Into<String>) -> SqlError {
        SqlError {
            code,
            state,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ERROR {} ({}): {}", self.code, self.state, self.message)
    }
}

impl std::error::Error for SqlError {}

/// MySQL column types, as sent in column definitions (`MYSQL_TYPE_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    Tiny,
    Short,
    Int24,
    Long,
    LongLong,
    Float,
    Double,
    NewDecimal,
    VarString,
    String,
    Blob,
    Date,
    DateTime,
    Timestamp,
    Time,
    Year,
    Bit,
    Json,
    Null,
}

impl ColumnType {
    /// Returns the `MYSQL_TYPE_*` code of the type.
    pub fn code(self) -> u8 {
        match self {
            ColumnType::Tiny => 1,
            ColumnType::Short => 2,
            ColumnType::Long => 3,
            ColumnType::Float => 4,
            ColumnType::Double => 5,
            ColumnType::Null => 6,
            ColumnType::Timestamp => 7,
            ColumnType::LongLong => 8,
            ColumnType::Int24 => 9,
            ColumnType::Date => 10,
            ColumnType::Time => 11,
            ColumnType::DateTime => 12,
            ColumnType::Year => 13,
            ColumnType::Bit => 16,
            ColumnType::Json => 245,
            ColumnType::NewDecimal => 246,
            ColumnType::Blob => 252,
            ColumnType::VarString => 253,
            ColumnType::String => 254,
        }
    }
}

/// Column definition flags (`*_FLAG` in MySQL's `mysql_com.h`).
pub mod column_flags {
    pub const NOT_NULL: u16 = 1;
    pub const PRIMARY_KEY: u16 = 2;
    pub const UNIQUE_KEY: u16 = 4;
    pub const MULTIPLE_KEY: u16 = 8;
    pub const BLOB: u16 = 16;
    pub const UNSIGNED: u16 = 32;
    pub const ZEROFILL: u16 = 64;
    pub const BINARY: u16 = 128;
    pub const ENUM: u16 = 256;
    pub const AUTO_INCREMENT: u16 = 512;
    pub const SET: u16 = 2048;
    pub const NUM: u16 = 32768;
}

/// Character set ids sent in column definitions.
pub mod charsets {
    pub const UTF8MB4_GENERAL_CI: u16 = 45;
    pub const BINARY: u16 = 63;
}

/// One column of a result set, as described to the client.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnInfo {
    pub schema: String,
    pub table: String,
    pub org_table: String,
    pub name: String,
    pub org_name: String,
    pub charset: u16,
    pub column_length: u32,
    pub column_type: ColumnType,
    pub flags: u16,
    pub decimals: u8,
}

/// What one statement produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// Rows, each with one datum per column.
    ResultSet {
        columns: Arc<[ColumnInfo]>,
        rows: Vec<Vec<Datum>>,
    },
    /// Rows that already went to the [`ResultSink`] as the statement made them: what is left
    /// to send is the end of the result set.
    Streamed {
        /// How many rows were sent.
        rows: u64,
    },
    /// No rows: an OK packet.
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        warnings: u16,
        info: String,
    },
}

/// The session's state that the protocol reports with each result (`SERVER_STATUS_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionStatus {
    /// A transaction is open.
    pub in_transaction: bool,
    /// Autocommit is on.
    pub autocommit: bool,
}

/// Where a running SELECT may send its rows before it ends (the protocol's connection). One
/// whose result grows past [`STREAM_AFTER_BYTES`](crate::STREAM_AFTER_BYTES) sends its
/// columns and rows here while it runs, so that no result is ever held whole: its result is
/// then [`Output::Streamed`]. A failure of the sink (the client went away) is returned as the
/// error that stops the statement.
pub trait RowSink {
    /// Whether rows may go out before their statement has ended; when false, every result
    /// comes whole.
    fn streams(&self) -> bool {
        true
    }

    /// A result set begins: its columns, before any of its rows.
    fn columns(
        &mut self,
        columns: &[ColumnInfo],
        status: SessionStatus,
    ) -> std::result::Result<(), SqlError>;

    /// More rows of the result set that [`RowSink::columns`] began.
    fn rows(&mut self, rows: &[Vec<Datum>]) -> std::result::Result<(), SqlError>;
}

/// Where a session sends the results of a client's COM_QUERY as its statements finish, each
/// before the next statement runs (so a streamed result follows the ones before it).
pub trait ResultSink: RowSink {
    /// One statement ended with `result`; `more` when another statement of the same command
    /// follows. An error from the sink stops the command.
    fn result(
        &mut self,
        result: std::result::Result<Output, SqlError>,
        status: SessionStatus,
        more: bool,
    ) -> std::result::Result<(), SqlError>;
}

/// A [`ResultSink`] that keeps every result whole, in order (tests, and callers that want
/// the results as values).
#[derive(Default)]
pub struct CollectResults(pub Vec<std::result::Result<Output, SqlError>>);

impl RowSink for CollectResults {
    fn streams(&self) -> bool {
        false
    }

    fn columns(&mut self, _: &[ColumnInfo], _: SessionStatus) -> std::result::Result<(), SqlError> {
        unreachable!("a collecting sink is never streamed to")
    }

    fn rows(&mut self, _: &[Vec<Datum>]) -> std::result::Result<(), SqlError> {
        unreachable!("a collecting sink is never streamed to")
    }
}

impl ResultSink for CollectResults {
    fn result(
        &mut self,
        result: std::result::Result<Output, SqlError>,
        _: SessionStatus,
        _: bool,
    ) -> std::result::Result<(), SqlError> {
        self.0.push(result);
        Ok(())
    }
}

/// The reply to COM_STMT_PREPARE.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedInfo {
    pub statement_id: u32,
    pub param_count: u16,
    pub columns: Arc<[ColumnInfo]>,
}
