//! What the SQL layer counts: statements by type (count, errors, duration) and connections,
//! registered with the process's Prometheus registry (served at `/metrics` by the status
//! port) and read back by `SHOW GLOBAL STATUS`.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use prometheus::{
    exponential_buckets, register_histogram_vec, register_int_counter, register_int_counter_vec,
    register_int_gauge, register_int_gauge_vec, Histogram, IntCounter, IntGauge,
};
use sqlparser::ast;

use crate::parser::statement::Statement;

/// The types statements are counted by (a bounded label set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatementKind {
    Select,
    Insert,
    Replace,
    Update,
    Delete,
    Begin,
    Commit,
    Rollback,
    Set,
    Use,
    Show,
    Ddl,
    Account,
    Other,
}

impl StatementKind {
    pub const ALL: [StatementKind; 14] = [
        StatementKind::Select,
        StatementKind::Insert,
        StatementKind::Replace,
        StatementKind::Update,
        StatementKind::Delete,
        StatementKind::Begin,
        StatementKind::Commit,
        StatementKind::Rollback,
        StatementKind::Set,
        StatementKind::Use,
        StatementKind::Show,
        StatementKind::Ddl,
        StatementKind::Account,
        StatementKind::Other,
    ];

    /// The STMT_TYPE of the statement summary.
    pub fn summary_type(self) -> &'static str {
        match self {
            StatementKind::Select => "Select",
            StatementKind::Insert => "Insert",
            StatementKind::Replace => "Replace",
            StatementKind::Update => "Update",
            StatementKind::Delete => "Delete",
            StatementKind::Begin => "Begin",
            StatementKind::Commit => "Commit",
            StatementKind::Rollback => "Rollback",
            StatementKind::Set => "Set",
            StatementKind::Use => "Use",
            StatementKind::Show => "Show",
            StatementKind::Ddl => "DDL",
            StatementKind::Account => "Account",
            StatementKind::Other => "Other",
        }
    }

    /// The `type` label of the statement metrics.
    pub fn label(self) -> &'static str {
        match self {
            StatementKind::Select => "select",
            StatementKind::Insert => "insert",
            StatementKind::Replace => "replace",
            StatementKind::Update => "update",
            StatementKind::Delete => "delete",
            StatementKind::Begin => "begin",
            StatementKind::Commit => "commit",
            StatementKind::Rollback => "rollback",
            StatementKind::Set => "set",
            StatementKind::Use => "use",
            StatementKind::Show => "show",
            StatementKind::Ddl => "ddl",
            StatementKind::Account => "account",
            StatementKind::Other => "other",
        }
    }

    /// MySQL's `Com_…` status variable for this type, where it has one of its own.
    pub fn com_variable(self) -> Option<&'static str> {
        Some(match self {
            StatementKind::Select => "Com_select",
            StatementKind::Insert => "Com_insert",
            StatementKind::Replace => "Com_replace",
            StatementKind::Update => "Com_update",
            StatementKind::Delete => "Com_delete",
            StatementKind::Begin => "Com_begin",
            StatementKind::Commit => "Com_commit",
            StatementKind::Rollback => "Com_rollback",
            StatementKind::Set => "Com_set_option",
            StatementKind::Use => "Com_change_db",
            StatementKind::Show | StatementKind::Ddl | StatementKind::Account => return None,
            StatementKind::Other => return None,
        })
    }

    fn index(self) -> usize {
        self as usize
    }

    /// The type of a parsed statement.
    pub fn of(statement: &Statement) -> StatementKind {
        match statement {
            Statement::Sql(tree, _) => Self::of_tree(tree),
            Statement::Show(_) => StatementKind::Show,
            Statement::BeginConsistent => StatementKind::Begin,
            Statement::Account(_) => StatementKind::Account,
            Statement::AlterDatabase { .. } => StatementKind::Ddl,
            Statement::Analyze { .. } | Statement::Do(_) | Statement::Checksum { .. } => {
                StatementKind::Other
            }
        }
    }

    fn of_tree(tree: &ast::Statement) -> StatementKind {
        use ast::Statement as S;
        match tree {
            S::Query(_) => StatementKind::Select,
            S::Insert(insert) if insert.replace_into => StatementKind::Replace,
            S::Insert(_) => StatementKind::Insert,
            S::Update { .. } => StatementKind::Update,
            S::Delete(_) => StatementKind::Delete,
            S::StartTransaction { .. } => StatementKind::Begin,
            S::Commit { .. } => StatementKind::Commit,
            S::Rollback { .. } => StatementKind::Rollback,
            S::Set(_) => StatementKind::Set,
            S::Use(_) => StatementKind::Use,
            S::ShowTables { .. }
            | S::ShowColumns { .. }
            | S::ShowCreate { .. }
            | S::ShowDatabases { .. }
            | S::ShowVariables { .. }
            | S::ShowStatus { .. }
            | S::ShowCollation { .. }
            | S::ShowFunctions { .. }
            | S::ShowVariable { .. } => StatementKind::Show,
            S::CreateTable(_)
            | S::CreateIndex(_)
            | S::CreateView { .. }
            | S::AlterView { .. }
            | S::AlterTable { .. }
            | S::Drop { .. }
            | S::DropFunction { .. }
            | S::RenameTable(_)
            | S::Truncate { .. }
            | S::CreateDatabase { .. }
            | S::CreateSchema { .. } => StatementKind::Ddl,
            _ => StatementKind::Other,
        }
    }
}

/// The metrics of one statement type, resolved once so that counting takes no lookup.
struct KindMetrics {
    duration: Histogram,
    errors: IntCounter,
}

static STATEMENTS: LazyLock<Vec<KindMetrics>> = LazyLock::new(|| {
    let duration = register_histogram_vec!(
        "strata_sql_statement_duration_seconds",
        "Statements run by this SQL node, by type: how long each took, from parsed to answered",
        &["type"],
        // 50 µs to about 26 s.
        exponential_buckets(0.000_05, 2.0, 20).expect("valid buckets")
    )
    .expect("registered once");
    let errors = register_int_counter_vec!(
        "strata_sql_statement_errors_total",
        "Statements that ended with an error, by type",
        &["type"]
    )
    .expect("registered once");
    StatementKind::ALL
        .iter()
        .map(|kind| KindMetrics {
            duration: duration.with_label_values(&[kind.label()]),
            errors: errors.with_label_values(&[kind.label()]),
        })
        .collect()
});

static CONNECTIONS: LazyLock<IntGauge> = LazyLock::new(|| {
    register_int_gauge!(
        "strata_sql_connections",
        "Sessions open on this SQL node (MySQL's Threads_connected)"
    )
    .expect("registered once")
});

static CONNECTIONS_TOTAL: LazyLock<IntCounter> = LazyLock::new(|| {
    register_int_counter!(
        "strata_sql_connections_total",
        "Sessions opened since start (MySQL's Connections)"
    )
    .expect("registered once")
});

/// Why a statement ran again (a bounded label set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// A concurrent commit wrote a key the statement wrote or locked.
    WriteConflict,
    /// Another transaction's lock was in the way.
    Locked,
    /// A reader rolled the statement's own autocommit transaction back before it committed.
    Aborted,
}

impl Retry {
    const ALL: [Retry; 3] = [Retry::WriteConflict, Retry::Locked, Retry::Aborted];

    fn label(self) -> &'static str {
        match self {
            Retry::WriteConflict => "write_conflict",
            Retry::Locked => "locked",
            Retry::Aborted => "aborted",
        }
    }

    /// Why `e` made a statement run again.
    pub fn of(e: &crate::error::Error) -> Retry {
        use strata_txn::{KvError, TxnError};
        match e {
            crate::error::Error::Txn(TxnError::Kv(KvError::KeyIsLocked(_))) => Retry::Locked,
            crate::error::Error::Txn(TxnError::Kv(KvError::TxnAborted { .. })) => Retry::Aborted,
            _ => Retry::WriteConflict,
        }
    }
}

static RETRIES: LazyLock<Vec<IntCounter>> = LazyLock::new(|| {
    let retries = register_int_counter_vec!(
        "strata_sql_statement_retries_total",
        "Statements run again from scratch, by reason (write_conflict, locked, aborted)",
        &["reason"]
    )
    .expect("registered once");
    Retry::ALL
        .iter()
        .map(|r| retries.with_label_values(&[r.label()]))
        .collect()
});

/// The transaction errors clients received (a bounded label set).
const CONFLICTS: [&str; 5] = [
    "deadlock",
    "lock_wait_timeout",
    "write_conflict",
    "txn_aborted",
    "snapshot_too_old",
];

static CONFLICT_ERRORS: LazyLock<Vec<IntCounter>> = LazyLock::new(|| {
    let conflicts = register_int_counter_vec!(
        "strata_sql_txn_conflict_errors_total",
        "Statements that ended with a transaction conflict error, by kind (deadlock 1213, \
         lock_wait_timeout 1205, write_conflict 9007, txn_aborted: rolled back by another \
         client, snapshot_too_old: older than the GC safe point)",
        &["kind"]
    )
    .expect("registered once");
    CONFLICTS
        .iter()
        .map(|kind| conflicts.with_label_values(&[kind]))
        .collect()
});

/// Counts a statement run again.
pub fn retried(reason: Retry) {
    RETRIES[reason as usize].inc();
}

/// Counts a statement that failed with `e`, if it is a transaction conflict.
pub fn failed_with(e: &crate::error::Error) {
    use strata_txn::{KvError, TxnError};
    let kind = match e {
        crate::error::Error::Txn(TxnError::Kv(kv)) => match kv {
            KvError::Deadlock { .. } => 0,
            KvError::LockWaitTimeout { .. } => 1,
            KvError::WriteConflict { .. } => 2,
            KvError::TxnAborted { .. } => 3,
            KvError::SnapshotTooOld { .. } => 4,
            _ => return,
        },
        crate::error::Error::Txn(TxnError::LockNotCleared(_)) => 1,
        // The same errors passed on as packets (by a retry loop or a commit).
        other => match other.code() {
            1213 => 0,
            1205 => 1,
            9007 => 2,
            _ => return,
        },
    };
    CONFLICT_ERRORS[kind].inc();
}

static ADMISSION_WAITS: LazyLock<[IntCounter; 2]> = LazyLock::new(|| {
    let waits = register_int_counter_vec!(
        "strata_sql_admission_waits_total",
        "Statements that waited to start while the running ones held nearly all of the \
         memory pool, by outcome",
        &["outcome"]
    )
    .expect("registered once");
    ["admitted", "refused"].map(|outcome| waits.with_label_values(&[outcome]))
});

/// Counts a statement that waited to start under memory pressure.
pub fn admitted(admitted: bool) {
    ADMISSION_WAITS[usize::from(!admitted)].inc();
}

static MEMORY: LazyLock<[IntGauge; 3]> = LazyLock::new(|| {
    let memory = register_int_gauge_vec!(
        "strata_sql_memory_bytes",
        "Working memory of this SQL node's statements, by tracker: what the running \
         statements reserved from the pool (statements), the most one of them holds \
         (largest_statement), and the pool's limit (limit)",
        &["tracker"]
    )
    .expect("registered once");
    ["statements", "largest_statement", "limit"].map(|t| memory.with_label_values(&[t]))
});

/// Sets the memory gauges from the server's pool (before each scrape).
pub fn set_memory(statements: u64, largest_statement: u64, limit: u64) {
    for (gauge, value) in MEMORY.iter().zip([statements, largest_statement, limit]) {
        gauge.set(i64::try_from(value).unwrap_or(i64::MAX));
    }
}

static STARTED: LazyLock<Instant> = LazyLock::new(Instant::now);

/// Registers the metrics, so that `/metrics` lists them before the first statement, and starts
/// the uptime clock.
pub fn init() {
    LazyLock::force(&STATEMENTS);
    LazyLock::force(&CONNECTIONS);
    LazyLock::force(&CONNECTIONS_TOTAL);
    LazyLock::force(&MEMORY);
    LazyLock::force(&RETRIES);
    LazyLock::force(&CONFLICT_ERRORS);
    LazyLock::force(&ADMISSION_WAITS);
    LazyLock::force(&STARTED);
}

/// Counts a finished statement.
// Hot path: every statement.
pub fn statement_done(kind: StatementKind, took: Duration, failed: bool) {
    let metrics = &STATEMENTS[kind.index()];
    metrics.duration.observe(took.as_secs_f64());
    if failed {
        metrics.errors.inc();
    }
}

/// Statements of `kind` run since start.
pub fn statements(kind: StatementKind) -> u64 {
    STATEMENTS[kind.index()].duration.get_sample_count()
}

/// Counts a session that opened; [`session_closed`] when it goes.
pub fn session_opened() {
    CONNECTIONS.inc();
    CONNECTIONS_TOTAL.inc();
}

pub fn session_closed() {
    CONNECTIONS.dec();
}

/// Sessions open now and opened since start.
pub fn connections() -> (i64, u64) {
    (CONNECTIONS.get(), CONNECTIONS_TOTAL.get())
}

/// Time since the SQL layer started.
pub fn uptime() -> Duration {
    STARTED.elapsed()
}

/// A session's own counts, for `SHOW [SESSION] STATUS`.
#[derive(Clone, Debug, Default)]
pub struct SessionCounts {
    by_kind: [u64; StatementKind::ALL.len()],
}

impl SessionCounts {
    pub fn add(&mut self, kind: StatementKind) {
        self.by_kind[kind.index()] += 1;
    }

    pub fn get(&self, kind: StatementKind) -> u64 {
        self.by_kind[kind.index()]
    }

    pub fn total(&self) -> u64 {
        self.by_kind.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(sql: &str) -> StatementKind {
        let parsed = crate::parser::parse_batch(sql, crate::parser::Batch::Single).unwrap();
        StatementKind::of(&parsed.statements[0])
    }

    #[test]
    fn statements_are_counted_by_what_they_do() {
        assert_eq!(kind("SELECT 1"), StatementKind::Select);
        assert_eq!(kind("INSERT INTO t VALUES (1)"), StatementKind::Insert);
        assert_eq!(kind("REPLACE INTO t VALUES (1)"), StatementKind::Replace);
        assert_eq!(kind("UPDATE t SET a = 1"), StatementKind::Update);
        assert_eq!(kind("DELETE FROM t"), StatementKind::Delete);
        assert_eq!(kind("BEGIN"), StatementKind::Begin);
        assert_eq!(
            kind("START TRANSACTION WITH CONSISTENT SNAPSHOT"),
            StatementKind::Begin
        );
        assert_eq!(kind("COMMIT"), StatementKind::Commit);
        assert_eq!(kind("ROLLBACK"), StatementKind::Rollback);
        assert_eq!(kind("SET autocommit = 0"), StatementKind::Set);
        assert_eq!(kind("USE shop"), StatementKind::Use);
        assert_eq!(kind("SHOW TABLES"), StatementKind::Show);
        assert_eq!(kind("SHOW GLOBAL STATUS"), StatementKind::Show);
        assert_eq!(kind("CREATE TABLE t (a INT)"), StatementKind::Ddl);
        assert_eq!(kind("DROP TABLE t"), StatementKind::Ddl);
        assert_eq!(kind("CREATE USER u"), StatementKind::Account);
        assert_eq!(kind("DO 1"), StatementKind::Other);
    }

    #[test]
    fn a_statement_is_counted_once_with_its_error() {
        init();
        let before = statements(StatementKind::Rollback);
        let errors = STATEMENTS[StatementKind::Rollback.index()].errors.get();
        statement_done(StatementKind::Rollback, Duration::from_millis(2), true);
        assert!(statements(StatementKind::Rollback) > before);
        assert!(STATEMENTS[StatementKind::Rollback.index()].errors.get() > errors);
        let mut session = SessionCounts::default();
        session.add(StatementKind::Select);
        session.add(StatementKind::Select);
        assert_eq!(session.get(StatementKind::Select), 2);
        assert_eq!(session.total(), 2);
    }
}
