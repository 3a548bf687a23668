//! The SQL layer's errors: one enum whose variants say what the caller must do, and the one
//! table that gives each the MySQL code, SQLSTATE and message a client receives.
//!
//! - [`Error::Txn`] keeps the transaction client's error typed, so the session decides by its
//!   kind whether a statement may run again (a write conflict, a lock met), whether the
//!   transaction is over (a deadlock), and what a failed commit means;
//! - [`Error::Refused`] is a statement MySQL refuses too (bad input, a missing table, a
//!   duplicate key), already in the form MySQL sends it;
//! - [`Error::Internal`] is a bug or corrupt data, sent as 1105.
//!
//! [`Error::to_packet`] is where the session meets the protocol; the constructors below name
//! each refusal once.

use crate::api::SqlError;
use strata_txn::{KvError, PdError, TxnError};
use strata_types::Timestamp;

/// An error of the SQL layer, by what the caller must do about it.
#[derive(Debug)]
pub enum Error {
    /// The transaction client failed; see [`Error::is_retryable`] and [`Error::is_deadlock`].
    Txn(TxnError),
    /// A statement MySQL refuses too: its code, SQLSTATE and message.
    Refused(SqlError),
    /// A bug or corrupt data.
    Internal(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// MySQL's code of a write conflict (TiDB's), a refusal the session may retry.
const WRITE_CONFLICT_CODE: u16 = 9007;

impl Error {
    /// A refusal with MySQL's code, SQLSTATE and message.
    pub fn new(code: u16, state: &'static str, message: impl Into<String>) -> Error {
        Error::Refused(SqlError::new(code, state, message))
    }

    /// The MySQL error code the client receives.
    pub fn code(&self) -> u16 {
        match self {
            Error::Refused(packet) => packet.code,
            other => other.to_packet().code,
        }
    }

    /// Whether a concurrent commit got there first, so the statement may run again from
    /// scratch (nothing of it was returned or kept).
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Txn(e) => matches!(
                e,
                TxnError::Kv(KvError::WriteConflict { .. } | KvError::KeyIsLocked(_))
            ),
            Error::Refused(packet) => packet.code == WRITE_CONFLICT_CODE,
            Error::Internal(_) => false,
        }
    }

    /// Whether an autocommit statement may run again from scratch: also when a reader rolled
    /// its transaction back before its commit landed (nothing was committed or returned).
    pub fn autocommit_may_retry(&self) -> bool {
        self.is_retryable() || matches!(self, Error::Txn(TxnError::Kv(KvError::TxnAborted { .. })))
    }

    /// Whether the transaction lost a deadlock, which ends it (as InnoDB does).
    pub fn is_deadlock(&self) -> bool {
        self.code() == 1213
    }

    /// Whether a name resolved to no column (where an enclosing scope may still have it).
    pub fn is_unknown_column(&self) -> bool {
        matches!(self, Error::Refused(packet) if packet.code == UNKNOWN_COLUMN)
    }

    /// What the client receives: the one table from every error to MySQL's code, SQLSTATE and
    /// message.
    pub fn to_packet(&self) -> SqlError {
        match self {
            Error::Refused(packet) => packet.clone(),
            Error::Internal(message) => SqlError::new(1105, "HY000", message.clone()),
            Error::Txn(TxnError::Kv(KvError::Deadlock { .. })) => packet(deadlock()),
            Error::Txn(TxnError::Kv(KvError::LockWaitTimeout { .. })) => {
                packet(lock_wait_timeout())
            }
            Error::Txn(TxnError::Kv(KvError::WriteConflict {
                start_ts,
                conflict_commit_ts,
                ..
            })) => packet(write_conflict(&format!(
                "txnStartTS={start_ts}, conflictCommitTS={conflict_commit_ts}"
            ))),
            Error::Txn(TxnError::Kv(KvError::SnapshotTooOld { ts, safe_point })) => {
                packet(gc_too_early(*ts, *safe_point))
            }
            Error::Txn(TxnError::LockNotCleared(_)) => packet(lock_wait_timeout()),
            Error::Txn(TxnError::Kv(KvError::Undetermined(why))) => {
                packet(commit_undetermined(why))
            }
            Error::Txn(TxnError::Interrupted) => crate::process::interrupted().to_packet(),
            Error::Txn(TxnError::Kv(KvError::CommitTsTooLarge { .. })) => {
                packet(schema_out_of_date())
            }
            Error::Txn(TxnError::Kv(KvError::Unavailable(why))) => packet(region_unavailable(why)),
            Error::Txn(TxnError::Pd(e @ PdError::Rpc(_))) => packet(pd_timeout(e)),
            Error::Txn(other) => SqlError::new(1105, "HY000", other.to_string()),
        }
    }

    /// [`Error::to_packet`], consuming the error.
    pub fn into_packet(self) -> SqlError {
        match self {
            Error::Refused(packet) => packet,
            other => other.to_packet(),
        }
    }
}

/// The packet of a refusal built by a constructor below.
fn packet(e: Error) -> SqlError {
    e.into_packet()
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.to_packet().fmt(f)
    }
}

impl std::error::Error for Error {}

impl From<TxnError> for Error {
    fn from(e: TxnError) -> Error {
        Error::Txn(e)
    }
}

impl From<SqlError> for Error {
    fn from(e: SqlError) -> Error {
        Error::Refused(e)
    }
}

impl From<strata_codec::CodecError> for Error {
    fn from(e: strata_codec::CodecError) -> Error {
        internal(format!("corrupt data: {e}"))
    }
}

/// ER_STACK_OVERRUN_NEED_MORE: a statement nested deeper than the server reads.
/// ER_TOO_HIGH_LEVEL_OF_NESTING_FOR_SELECT: subqueries nested deeper than MySQL allows.
pub fn too_deep_queries() -> Error {
    Error::new(1473, "HY000", "Too high level of nesting for select")
}

pub fn too_deep() -> Error {
    Error::new(
        1436,
        "HY000",
        format!(
            "Thread stack overrun: the statement nests deeper than the server reads (at most \
             {} levels of parentheses and CASE, fewer of subqueries, and {} operators in a row \
             that do not associate)",
            crate::parser::dialect::MAX_TEXT_NESTING,
            crate::parser::dialect::MAX_LEFT_DEEP
        ),
    )
}

pub fn syntax(message: impl std::fmt::Display) -> Error {
    Error::new(
        1064,
        "42000",
        format!("You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use: {message}"),
    )
}

pub fn no_database() -> Error {
    Error::new(1046, "3D000", "No database selected")
}

pub fn unknown_database(name: &str) -> Error {
    Error::new(1049, "42000", format!("Unknown database '{name}'"))
}

pub fn database_exists(name: &str) -> Error {
    Error::new(
        1007,
        "HY000",
        format!("Can't create database '{name}'; database exists"),
    )
}

pub fn unknown_table(db: &str, table: &str) -> Error {
    Error::new(1146, "42S02", format!("Table '{db}.{table}' doesn't exist"))
}

/// A write to a database no one may write, such as information_schema.
pub fn access_denied_database(db: &str) -> Error {
    Error::new(
        1044,
        "42000",
        format!("Access denied for user 'root'@'%' to database '{db}'"),
    )
}

pub fn bad_table(name: &str) -> Error {
    Error::new(1051, "42S02", format!("Unknown table '{name}'"))
}

pub fn table_exists(name: &str) -> Error {
    Error::new(1050, "42S01", format!("Table '{name}' already exists"))
}

/// ER_BAD_FIELD_ERROR.
pub const UNKNOWN_COLUMN: u16 = 1054;

pub fn unknown_column(name: &str, context: &str) -> Error {
    Error::new(
        UNKNOWN_COLUMN,
        "42S22",
        format!("Unknown column '{name}' in '{context}'"),
    )
}

pub fn ambiguous_column(name: &str) -> Error {
    Error::new(
        1052,
        "23000",
        format!("Column '{name}' in field list is ambiguous"),
    )
}

pub fn duplicate_key(value: &str, key: &str) -> Error {
    Error::new(
        1062,
        "23000",
        format!("Duplicate entry '{value}' for key '{key}'"),
    )
}

pub fn null_not_allowed(column: &str) -> Error {
    Error::new(1048, "23000", format!("Column '{column}' cannot be null"))
}

pub fn no_default(column: &str) -> Error {
    Error::new(
        1364,
        "HY000",
        format!("Field '{column}' doesn't have a default value"),
    )
}

pub fn data_too_long(column: &str) -> Error {
    Error::new(
        1406,
        "22001",
        format!("Data too long for column '{column}' at row 1"),
    )
}

pub fn out_of_range(column: &str) -> Error {
    Error::new(
        1264,
        "22003",
        format!("Out of range value for column '{column}' at row 1"),
    )
}

pub fn value_out_of_range(type_name: &str, expr: &str) -> Error {
    Error::new(
        1690,
        "22003",
        format!("{type_name} value is out of range in '{expr}'"),
    )
}

pub fn incorrect_value(type_name: &str, value: &str, column: &str) -> Error {
    Error::new(
        1366,
        "HY000",
        format!("Incorrect {type_name} value: '{value}' for column '{column}' at row 1"),
    )
}

pub fn division_by_zero() -> Error {
    Error::new(1365, "22012", "Division by 0")
}

pub fn column_count_mismatch() -> Error {
    Error::new(
        1136,
        "21S01",
        "Column count doesn't match value count at row 1",
    )
}

pub fn operand_columns(n: usize) -> Error {
    Error::new(
        1241,
        "21000",
        format!("Operand should contain {n} column(s)"),
    )
}

pub fn unsupported(what: impl std::fmt::Display) -> Error {
    Error::new(
        1235,
        "42000",
        format!("This version of Strata doesn't yet support '{what}'"),
    )
}

pub fn cannot_prepare(what: impl std::fmt::Display) -> Error {
    Error::new(
        1295,
        "HY000",
        format!("This command is not supported in the prepared statement protocol yet: {what}"),
    )
}

pub fn unknown_statement(id: u32, command: &str) -> Error {
    Error::new(
        1243,
        "HY000",
        format!("Unknown prepared statement handler ({id}) given to {command}"),
    )
}

pub fn wrong_arguments(command: &str) -> Error {
    Error::new(1210, "HY000", format!("Incorrect arguments to {command}"))
}

/// ER_PS_MANY_PARAM: more placeholders than the protocol's 16-bit count holds.
pub fn too_many_placeholders() -> Error {
    Error::new(
        1390,
        "HY000",
        "Prepared statement contains too many placeholders",
    )
}

pub fn too_many_prepared(limit: usize) -> Error {
    Error::new(
        1461,
        "42000",
        format!(
            "Can't create more than max_prepared_stmt_count statements (current value: {limit})"
        ),
    )
}

pub fn unknown_variable(name: &str) -> Error {
    Error::new(1193, "HY000", format!("Unknown system variable '{name}'"))
}

pub fn global_variable(name: &str) -> Error {
    Error::new(
        1229,
        "HY000",
        format!("Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL"),
    )
}

pub fn wrong_value_for_variable(name: &str, value: &str) -> Error {
    Error::new(
        1231,
        "42000",
        format!("Variable '{name}' can't be set to the value of '{value}'"),
    )
}

pub fn invalid_group_use() -> Error {
    Error::new(1111, "HY000", "Invalid use of group function")
}

pub fn duplicate_key_name(name: &str) -> Error {
    Error::new(1061, "42000", format!("Duplicate key name '{name}'"))
}

pub fn cant_drop(name: &str) -> Error {
    Error::new(
        1091,
        "42000",
        format!("Can't DROP '{name}'; check that column/key exists"),
    )
}

pub fn duplicate_column(name: &str) -> Error {
    Error::new(1060, "42S21", format!("Duplicate column name '{name}'"))
}

pub fn multiple_primary_keys() -> Error {
    Error::new(1068, "42000", "Multiple primary key defined")
}

pub fn lock_wait_timeout() -> Error {
    Error::new(
        1205,
        "HY000",
        "Lock wait timeout exceeded; try restarting transaction",
    )
}

pub fn deadlock() -> Error {
    Error::new(
        1213,
        "40001",
        "Deadlock found when trying to get lock; try restarting transaction",
    )
}

pub fn write_conflict(detail: &str) -> Error {
    Error::new(
        9007,
        "HY000",
        format!("Write conflict, {detail} [try again later]"),
    )
}

/// A transaction whose snapshot is older than the GC safe point (TiDB's ErrGCTooEarly).
pub fn gc_too_early(start_ts: Timestamp, safe_point: Timestamp) -> Error {
    let time = |ts: Timestamp| {
        chrono::DateTime::from_timestamp_millis(ts.physical_ms() as i64).map_or_else(
            || ts.to_string(),
            |t| t.format("%Y-%m-%d %H:%M:%S%.3f UTC").to_string(),
        )
    };
    Error::new(
        9006,
        "HY000",
        format!(
            "GC life time is shorter than transaction duration, transaction starts at {}, GC safe point is {}",
            time(start_ts),
            time(safe_point)
        ),
    )
}

pub fn internal(message: impl std::fmt::Display) -> Error {
    Error::Internal(message.to_string())
}

/// A commit whose answer was lost (MySQL's ER_ERROR_DURING_COMMIT, never used for a commit that
/// surely failed): it may have been applied, so the client must read before it writes again.
/// The connection stays open; the transaction is over either way.
pub fn commit_undetermined(why: &str) -> Error {
    Error::new(
        ERROR_DURING_COMMIT,
        "HY000",
        format!(
            "Got error {ERROR_DURING_COMMIT} - 'the outcome of the commit is undetermined, it may \
             have been applied: {why}' during COMMIT"
        ),
    )
}

/// MySQL's code of an error during COMMIT: Strata's answer to a commit of unknown outcome.
pub const ERROR_DURING_COMMIT: u16 = 1180;

/// A commit on a SQL node that has not reported its schema version for half a lease (TiDB's
/// 8027): other nodes may soon stop waiting for it and change the schema under its writes.
pub fn schema_out_of_date() -> Error {
    Error::new(
        8027,
        "HY000",
        "Information schema is out of date: schema failed to update in 1 lease, please make \
         sure the SQL node can reach the KV nodes",
    )
}

/// A KV request whose region had no leader that answered for the client's whole retry time
/// (TiDB's ErrRegionUnavailable): nothing of the statement was committed, and it may be run
/// again once the region has a leader.
pub fn region_unavailable(why: &str) -> Error {
    Error::new(9005, "HY000", format!("Region is unavailable: {why}"))
}

/// A call to the placement driver (a timestamp, a region's location) that got no answer in
/// time (TiDB's ErrPDServerTimeout); nothing was committed.
pub fn pd_timeout(why: &PdError) -> Error {
    Error::new(9001, "HY000", format!("PD server timeout: {why}"))
}

/// A scalar subquery that returned more than one row.
pub fn subquery_rows() -> Error {
    Error::new(1242, "21000", "Subquery returns more than 1 row")
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata_types::{Key, Timestamp};

    fn txn(e: KvError) -> Error {
        Error::Txn(TxnError::Kv(e))
    }

    #[test]
    fn each_kind_says_what_the_caller_must_do() {
        let conflict = txn(KvError::WriteConflict {
            key: Key::from(b"k".to_vec()),
            start_ts: Timestamp(10),
            conflict_commit_ts: Timestamp(12),
        });
        assert!(conflict.is_retryable());
        assert_eq!(conflict.code(), 9007);

        // A commit that may have been applied is never run again.
        let undetermined = txn(KvError::Undetermined("store 3 did not answer".into()));
        assert!(!undetermined.is_retryable() && !undetermined.autocommit_may_retry());
        assert_eq!(undetermined.code(), 1180);
        assert!(undetermined
            .to_packet()
            .message
            .contains("undetermined, it may have been applied: store 3 did not answer"));
        assert!(conflict.to_packet().message.contains("txnStartTS=10"));

        let deadlock = txn(KvError::Deadlock {
            key: Key::from(b"k".to_vec()),
            blocker_start_ts: Timestamp(9),
        });
        assert!(deadlock.is_deadlock() && !deadlock.is_retryable());
        assert_eq!(
            (deadlock.code(), deadlock.to_packet().state),
            (1213, "40001")
        );

        let aborted = txn(KvError::TxnAborted {
            start_ts: Timestamp(10),
        });
        assert!(!aborted.is_retryable() && aborted.autocommit_may_retry());
        assert_eq!(aborted.code(), 1105);

        // TiDB's codes for a cluster that cannot answer in time; nothing was committed.
        let unavailable = txn(KvError::Unavailable("region unavailable for 20s".into()));
        assert_eq!(unavailable.code(), 9005);
        assert!(unavailable
            .to_packet()
            .message
            .starts_with("Region is unavailable"));
        let pd = Error::Txn(TxnError::Pd(PdError::Rpc("deadline has elapsed".into())));
        assert_eq!(pd.code(), 9001);
        assert!(pd.to_packet().message.starts_with("PD server timeout"));
        let late = txn(KvError::CommitTsTooLarge {
            commit_ts: Timestamp(20),
            max_commit_ts: Timestamp(19),
        });
        assert_eq!(late.code(), 8027);

        let refused = unknown_column("x", "field list");
        assert!(refused.is_unknown_column() && !refused.is_retryable());
        assert_eq!(refused.to_packet().state, "42S22");
        assert_eq!(internal("bug").code(), 1105);
    }
}
