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
    /// No rows: an OK packet.
    Ok {
        affected_rows: u64,
        last_insert_id: u64,
        warnings: u16,
        info: String,
    },
}

/// The reply to COM_STMT_PREPARE.
#[derive(Clone, Debug, PartialEq)]
pub struct PreparedInfo {
    pub statement_id: u32,
    pub param_count: u16,
    pub columns: Arc<[ColumnInfo]>,
}
