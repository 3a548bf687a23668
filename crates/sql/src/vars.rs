//! System variables: their defaults, and which ones a session may change.

use strata_codec::Datum;

/// The version string reported to clients (MySQL 8.0 compatible, as TiDB reports).
pub const SERVER_VERSION: &str = "8.0.11-Strata-0.1.0";
/// Default `innodb_lock_wait_timeout`, in seconds.
pub const LOCK_WAIT_TIMEOUT_S_DEFAULT: i64 = 50;
/// Default `max_connections`: authenticated connections served at once.
pub const MAX_CONNECTIONS_DEFAULT: usize = 1024;
/// The largest `max_connections` (MySQL's bound).
const MAX_CONNECTIONS_MAX: i64 = 100_000;
/// Variables that only `SET GLOBAL` may change (1229 otherwise).
const GLOBAL_ONLY: &[&str] = &[
    "max_connections",
    "require_secure_transport",
    "slow_query_log",
    "slow_query_log_file",
    "tidb_enable_stmt_summary",
    "tidb_stmt_summary_history_size",
    "tidb_stmt_summary_max_sql_length",
    "tidb_stmt_summary_max_stmt_count",
    "tidb_stmt_summary_refresh_interval",
    "tidb_server_memory_limit",
];
/// Default `long_query_time`, in seconds: TiDB's slow-log threshold (MySQL's is 10).
pub const LONG_QUERY_TIME_S_DEFAULT: f64 = 0.3;
/// Default `max_prepared_stmt_count` (per session here).
pub const MAX_PREPARED_STMT_COUNT_DEFAULT: i64 = 1_048_576;

fn s(v: &str) -> Datum {
    Datum::Bytes(v.as_bytes().to_vec())
}

fn i(v: i64) -> Datum {
    Datum::Int(v)
}

/// Every known variable with its default, sorted by name.
pub fn defaults() -> Vec<(&'static str, Datum)> {
    let mut vars = vec![
        ("auto_increment_increment", i(1)),
        ("auto_increment_offset", i(1)),
        ("autocommit", i(1)),
        ("character_set_client", s("utf8mb4")),
        ("character_set_connection", s("utf8mb4")),
        ("character_set_database", s("utf8mb4")),
        ("character_set_filesystem", s("binary")),
        ("character_set_results", s("utf8mb4")),
        ("character_set_server", s("utf8mb4")),
        ("character_set_system", s("utf8")),
        ("collation_connection", s("utf8mb4_bin")),
        ("collation_database", s("utf8mb4_bin")),
        ("collation_server", s("utf8mb4_bin")),
        ("cte_max_recursion_depth", i(1000)),
        ("default_storage_engine", s("InnoDB")),
        ("div_precision_increment", i(4)),
        ("group_concat_max_len", i(1024)),
        ("have_ssl", s("DISABLED")),
        ("hostname", s("localhost")),
        ("init_connect", s("")),
        ("innodb_lock_wait_timeout", i(LOCK_WAIT_TIMEOUT_S_DEFAULT)),
        ("interactive_timeout", i(28800)),
        ("license", s("Apache License 2.0")),
        ("long_query_time", Datum::Float(LONG_QUERY_TIME_S_DEFAULT)),
        ("lower_case_table_names", i(2)),
        ("max_allowed_packet", i(67_108_864)),
        ("max_connections", i(MAX_CONNECTIONS_DEFAULT as i64)),
        ("max_execution_time", i(0)),
        ("max_heap_table_size", i(16_777_216)),
        ("max_prepared_stmt_count", i(MAX_PREPARED_STMT_COUNT_DEFAULT)),
        ("net_buffer_length", i(16384)),
        ("net_read_timeout", i(30)),
        ("net_write_timeout", i(60)),
        ("performance_schema", i(0)),
        ("port", i(4000)),
        ("query_cache_size", i(0)),
        ("query_cache_type", s("OFF")),
        // Strata listens on TCP only. As TiDB without `--socket`, the socket is the empty
        // string, which drivers that prefer a Unix socket on loopback (the Rust `mysql` and
        // `mysql_async` crates ask for `@@socket`) read as "stay on TCP"; NULL made them panic.
        ("socket", s("")),
        // On by default, as TiDB's (MySQL's is off); the file is the process's
        // (`crate::slowlog`), read there.
        ("slow_query_log", i(1)),
        ("slow_query_log_file", s("")),
        ("require_secure_transport", i(0)),
        ("sql_auto_is_null", i(0)),
        ("sql_quote_show_create", i(1)),
        ("sql_notes", i(1)),
        ("sql_warnings", i(0)),
        ("sql_safe_updates", i(0)),
        ("sql_log_bin", i(1)),
        ("sql_big_selects", i(1)),
        ("unique_checks", i(1)),
        ("foreign_key_checks", i(1)),
        ("sql_mode", s("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION")),
        ("sql_select_limit", Datum::UInt(u64::MAX)),
        ("system_time_zone", s("UTC")),
        ("tidb_enable_1pc", i(1)),
        ("tidb_enable_async_commit", i(1)),
        ("tidb_enable_stmt_summary", i(1)),
        ("tidb_mem_quota_query", i(crate::memory::QUERY_QUOTA_BYTES_DEFAULT)),
        ("tidb_server_memory_limit", i(0)),
        ("tidb_stmt_summary_history_size", i(crate::summary::HISTORY_DEFAULT)),
        ("tidb_stmt_summary_max_sql_length", i(crate::summary::MAX_SQL_LENGTH_DEFAULT)),
        ("tidb_stmt_summary_max_stmt_count", i(crate::summary::MAX_COUNT_DEFAULT)),
        ("tidb_stmt_summary_refresh_interval", i(crate::summary::REFRESH_S_DEFAULT)),
        ("tidb_txn_mode", s("pessimistic")),
        ("time_zone", s("SYSTEM")),
        ("tmp_table_size", i(16_777_216)),
        ("transaction_isolation", s("REPEATABLE-READ")),
        ("transaction_read_only", i(0)),
        ("tx_isolation", s("REPEATABLE-READ")),
        ("tx_read_only", i(0)),
        ("version", s(SERVER_VERSION)),
        ("version_comment", s("Strata: a distributed SQL database")),
        ("version_compile_machine", s("x86_64")),
        ("version_compile_os", s("Linux")),
        ("wait_timeout", i(28800)),
        ("warning_count", i(0)),
        ("error_count", i(0)),
    ];
    vars.sort_by(|a, b| a.0.cmp(b.0));
    vars
}

static DEFAULTS: std::sync::LazyLock<std::collections::HashMap<&'static str, Datum>> =
    std::sync::LazyLock::new(|| defaults().into_iter().collect());

/// Looks up a variable's default.
// Hot path: every statement reads autocommit and the lock wait timeout.
pub fn default_of(name: &str) -> Option<Datum> {
    DEFAULTS.get(name).cloned()
}

/// Whether `name` is a variable that only `SET GLOBAL` may change.
pub fn is_global_only(name: &str) -> bool {
    GLOBAL_ONLY.contains(&name)
}

/// Normalizes a value assigned to a variable: `ON`/`OFF`/`1`/`0` of a boolean-like one, the
/// spelling of an enumeration, a bounded integer clamped to its range as MySQL does. `None`
/// when the value cannot be assigned.
/// What an `sql_mode` value changes in parsing: PIPES_AS_CONCAT makes `||` concatenate,
/// ANSI_QUOTES makes `"` quote identifiers; ANSI implies both.
pub fn parser_modes(sql_mode: &Datum) -> crate::parser::Modes {
    let mut modes = crate::parser::Modes::default();
    for mode in crate::types::datum_to_text(sql_mode).split(|&b| b == b',') {
        let mode = mode.trim_ascii();
        let ansi = mode.eq_ignore_ascii_case(b"ANSI");
        modes.pipes_as_concat |= ansi || mode.eq_ignore_ascii_case(b"PIPES_AS_CONCAT");
        modes.ansi_quotes |= ansi || mode.eq_ignore_ascii_case(b"ANSI_QUOTES");
    }
    modes
}

pub fn normalize(name: &str, value: Datum) -> Option<Datum> {
    if name == "tidb_server_memory_limit" {
        // Bytes; 0 for no limit.
        return match value {
            Datum::Int(n) if n >= 0 => Some(i(n)),
            Datum::UInt(n) => Some(i(i64::try_from(n).unwrap_or(i64::MAX))),
            _ => None,
        };
    }
    if name == "max_connections" {
        let limit = match value {
            Datum::Int(n) => n,
            Datum::UInt(n) => i64::try_from(n).unwrap_or(i64::MAX),
            _ => return None,
        };
        return Some(i(limit.clamp(1, MAX_CONNECTIONS_MAX)));
    }
    let boolean = matches!(
        name,
        "autocommit"
            | "tidb_enable_1pc"
            | "tidb_enable_async_commit"
            | "sql_auto_is_null"
            | "sql_quote_show_create"
            | "sql_notes"
            | "sql_warnings"
            | "sql_safe_updates"
            | "sql_log_bin"
            | "sql_big_selects"
            | "unique_checks"
            | "foreign_key_checks"
            | "tx_read_only"
            | "require_secure_transport"
            | "transaction_read_only"
            | "slow_query_log"
            | "tidb_enable_stmt_summary"
    );
    if boolean {
        let text =
            String::from_utf8_lossy(&crate::types::datum_to_text(&value)).to_ascii_uppercase();
        return match text.as_str() {
            "1" | "ON" | "TRUE" => Some(i(1)),
            "0" | "OFF" | "FALSE" => Some(i(0)),
            _ => None,
        };
    }
    if matches!(name, "tx_isolation" | "transaction_isolation") {
        let text = String::from_utf8_lossy(&crate::types::datum_to_text(&value))
            .to_ascii_uppercase()
            .replace(' ', "-");
        return match text.as_str() {
            "REPEATABLE-READ" | "READ-COMMITTED" | "SERIALIZABLE" | "READ-UNCOMMITTED" => {
                Some(s(&text))
            }
            _ => None,
        };
    }
    // The statement summary's bounds (TiDB's ranges).
    let range = match name {
        "tidb_stmt_summary_refresh_interval" => Some((1, i64::from(i32::MAX))),
        "tidb_stmt_summary_history_size" => Some((0, 255)),
        "tidb_stmt_summary_max_stmt_count" => Some((1, 32_767)),
        "tidb_stmt_summary_max_sql_length" => Some((0, i64::from(i32::MAX))),
        _ => None,
    };
    if let Some((low, high)) = range {
        let n = crate::types::to_i64(&value)?;
        return Some(i(n.clamp(low, high)));
    }
    if name == "long_query_time" {
        let seconds = crate::types::to_f64(&value)?;
        return Some(Datum::Float(seconds.max(0.0)));
    }
    if name == "tidb_txn_mode" {
        let text =
            String::from_utf8_lossy(&crate::types::datum_to_text(&value)).to_ascii_lowercase();
        return match text.as_str() {
            "pessimistic" | "optimistic" | "" => {
                Some(s(if text.is_empty() { "optimistic" } else { &text }))
            }
            _ => None,
        };
    }
    Some(value)
}
