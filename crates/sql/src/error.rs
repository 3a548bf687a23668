//! MySQL error codes and SQLSTATEs, assigned in one place.

use crate::api::SqlError;
use strata_txn::{KvError, TxnError};
use strata_types::Timestamp;

pub type Result<T> = std::result::Result<T, SqlError>;

pub fn syntax(message: impl std::fmt::Display) -> SqlError {
    SqlError::new(
        1064,
        "42000",
        format!("You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use: {message}"),
    )
}

pub fn no_database() -> SqlError {
    SqlError::new(1046, "3D000", "No database selected")
}

pub fn unknown_database(name: &str) -> SqlError {
    SqlError::new(1049, "42000", format!("Unknown database '{name}'"))
}

pub fn database_exists(name: &str) -> SqlError {
    SqlError::new(
        1007,
        "HY000",
        format!("Can't create database '{name}'; database exists"),
    )
}

pub fn unknown_table(db: &str, table: &str) -> SqlError {
    SqlError::new(1146, "42S02", format!("Table '{db}.{table}' doesn't exist"))
}

/// A write to a database no one may write, such as information_schema.
pub fn access_denied_database(db: &str) -> SqlError {
    SqlError::new(
        1044,
        "42000",
        format!("Access denied for user 'root'@'%' to database '{db}'"),
    )
}

pub fn bad_table(name: &str) -> SqlError {
    SqlError::new(1051, "42S02", format!("Unknown table '{name}'"))
}

pub fn table_exists(name: &str) -> SqlError {
    SqlError::new(1050, "42S01", format!("Table '{name}' already exists"))
}

/// ER_BAD_FIELD_ERROR.
pub const UNKNOWN_COLUMN: u16 = 1054;

pub fn unknown_column(name: &str, context: &str) -> SqlError {
    SqlError::new(
        UNKNOWN_COLUMN,
        "42S22",
        format!("Unknown column '{name}' in '{context}'"),
    )
}

pub fn ambiguous_column(name: &str) -> SqlError {
    SqlError::new(
        1052,
        "23000",
        format!("Column '{name}' in field list is ambiguous"),
    )
}

pub fn duplicate_key(value: &str, key: &str) -> SqlError {
    SqlError::new(
        1062,
        "23000",
        format!("Duplicate entry '{value}' for key '{key}'"),
    )
}

pub fn null_not_allowed(column: &str) -> SqlError {
    SqlError::new(1048, "23000", format!("Column '{column}' cannot be null"))
}

pub fn no_default(column: &str) -> SqlError {
    SqlError::new(
        1364,
        "HY000",
        format!("Field '{column}' doesn't have a default value"),
    )
}

pub fn data_too_long(column: &str) -> SqlError {
    SqlError::new(
        1406,
        "22001",
        format!("Data too long for column '{column}' at row 1"),
    )
}

pub fn out_of_range(column: &str) -> SqlError {
    SqlError::new(
        1264,
        "22003",
        format!("Out of range value for column '{column}' at row 1"),
    )
}

pub fn value_out_of_range(type_name: &str, expr: &str) -> SqlError {
    SqlError::new(
        1690,
        "22003",
        format!("{type_name} value is out of range in '{expr}'"),
    )
}

pub fn incorrect_value(type_name: &str, value: &str, column: &str) -> SqlError {
    SqlError::new(
        1366,
        "HY000",
        format!("Incorrect {type_name} value: '{value}' for column '{column}' at row 1"),
    )
}

pub fn division_by_zero() -> SqlError {
    SqlError::new(1365, "22012", "Division by 0")
}

pub fn column_count_mismatch() -> SqlError {
    SqlError::new(
        1136,
        "21S01",
        "Column count doesn't match value count at row 1",
    )
}

pub fn operand_columns(n: usize) -> SqlError {
    SqlError::new(
        1241,
        "21000",
        format!("Operand should contain {n} column(s)"),
    )
}

pub fn unsupported(what: impl std::fmt::Display) -> SqlError {
    SqlError::new(
        1235,
        "42000",
        format!("This version of Strata doesn't yet support '{what}'"),
    )
}

pub fn cannot_prepare(what: impl std::fmt::Display) -> SqlError {
    SqlError::new(
        1295,
        "HY000",
        format!("This command is not supported in the prepared statement protocol yet: {what}"),
    )
}

pub fn unknown_statement(id: u32, command: &str) -> SqlError {
    SqlError::new(
        1243,
        "HY000",
        format!("Unknown prepared statement handler ({id}) given to {command}"),
    )
}

pub fn wrong_arguments(command: &str) -> SqlError {
    SqlError::new(1210, "HY000", format!("Incorrect arguments to {command}"))
}

pub fn too_many_prepared(limit: usize) -> SqlError {
    SqlError::new(
        1461,
        "42000",
        format!(
            "Can't create more than max_prepared_stmt_count statements (current value: {limit})"
        ),
    )
}

pub fn unknown_variable(name: &str) -> SqlError {
    SqlError::new(1193, "HY000", format!("Unknown system variable '{name}'"))
}

pub fn wrong_value_for_variable(name: &str, value: &str) -> SqlError {
    SqlError::new(
        1231,
        "42000",
        format!("Variable '{name}' can't be set to the value of '{value}'"),
    )
}

pub fn invalid_group_use() -> SqlError {
    SqlError::new(1111, "HY000", "Invalid use of group function")
}

pub fn duplicate_key_name(name: &str) -> SqlError {
    SqlError::new(1061, "42000", format!("Duplicate key name '{name}'"))
}

pub fn cant_drop(name: &str) -> SqlError {
    SqlError::new(
        1091,
        "42000",
        format!("Can't DROP '{name}'; check that column/key exists"),
    )
}

pub fn duplicate_column(name: &str) -> SqlError {
    SqlError::new(1060, "42S21", format!("Duplicate column name '{name}'"))
}

pub fn multiple_primary_keys() -> SqlError {
    SqlError::new(1068, "42000", "Multiple primary key defined")
}

pub fn lock_wait_timeout() -> SqlError {
    SqlError::new(
        1205,
        "HY000",
        "Lock wait timeout exceeded; try restarting transaction",
    )
}

pub fn deadlock() -> SqlError {
    SqlError::new(
        1213,
        "40001",
        "Deadlock found when trying to get lock; try restarting transaction",
    )
}

pub fn write_conflict(detail: &str) -> SqlError {
    SqlError::new(
        9007,
        "HY000",
        format!("Write conflict, {detail} [try again later]"),
    )
}

/// A transaction whose snapshot is older than the GC safe point (TiDB's ErrGCTooEarly).
pub fn gc_too_early(start_ts: Timestamp, safe_point: Timestamp) -> SqlError {
    let time = |ts: Timestamp| {
        chrono::DateTime::from_timestamp_millis(ts.physical_ms() as i64).map_or_else(
            || ts.to_string(),
            |t| t.format("%Y-%m-%d %H:%M:%S%.3f UTC").to_string(),
        )
    };
    SqlError::new(
        9006,
        "HY000",
        format!(
            "GC life time is shorter than transaction duration, transaction starts at {}, GC safe point is {}",
            time(start_ts),
            time(safe_point)
        ),
    )
}

pub fn internal(message: impl std::fmt::Display) -> SqlError {
    SqlError::new(1105, "HY000", message.to_string())
}

/// Maps a transaction-client error to what MySQL would send.
pub fn from_txn(e: TxnError) -> SqlError {
    match e {
        TxnError::Kv(KvError::Deadlock { .. }) => deadlock(),
        TxnError::Kv(KvError::LockWaitTimeout { .. }) => lock_wait_timeout(),
        TxnError::Kv(KvError::WriteConflict {
            start_ts,
            conflict_commit_ts,
            ..
        }) => write_conflict(&format!(
            "txnStartTS={start_ts}, conflictCommitTS={conflict_commit_ts}"
        )),
        TxnError::Kv(KvError::SnapshotTooOld { ts, safe_point }) => gc_too_early(ts, safe_point),
        TxnError::LockNotCleared(_) => lock_wait_timeout(),
        other => internal(other),
    }
}

impl From<TxnError> for SqlError {
    fn from(e: TxnError) -> SqlError {
        from_txn(e)
    }
}

impl From<strata_codec::CodecError> for SqlError {
    fn from(e: strata_codec::CodecError) -> SqlError {
        internal(format!("corrupt data: {e}"))
    }
}

/// A scalar subquery that returned more than one row.
pub fn subquery_rows() -> SqlError {
    SqlError::new(1242, "21000", "Subquery returns more than 1 row")
}
