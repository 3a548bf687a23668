//! A session's system and user variables: reading them (the session's value, else the
//! global one, else the default) and setting them.

use sqlparser::ast::Statement;
use strata_codec::Datum;
use strata_txn::TxnMode;

use super::Session;
use crate::error::{self, Result};
use crate::parser::statement;
use crate::vars;

/// The variables every statement reads, as read at the version of the global variables in
/// `globals`; `None` there after the session set one of its own (or reset them).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Settings {
    globals: Option<u64>,
    autocommit: bool,
    txn_mode: Option<TxnMode>,
    lock_wait_ms: u64,
    one_pc: bool,
    async_commit: bool,
    /// `tidb_mem_quota_query` in bytes, 0 for none.
    memory_quota: u64,
    /// `max_execution_time` in milliseconds, 0 for none.
    max_execution_ms: u64,
}

impl Session {
    /// The variables every statement reads: read again only after a SET, of this session or
    /// of any global (a lookup by name costs a map search each, and a lock of the globals).
    // Hot path: several times per statement.
    fn settings(&self) -> Settings {
        let globals = self.server.globals_version();
        let cached = self.settings.get();
        if cached.globals == Some(globals) {
            return cached;
        }
        let non_negative = |name| self.variable_i64(name).map_or(0, |v| v.max(0) as u64);
        let settings = Settings {
            globals: Some(globals),
            autocommit: self.variable_i64("autocommit") != Some(0),
            txn_mode: Some(match self.variable("tidb_txn_mode") {
                Some(Datum::Bytes(b)) if b.eq_ignore_ascii_case(b"optimistic") => {
                    TxnMode::Optimistic
                }
                _ => TxnMode::Pessimistic,
            }),
            lock_wait_ms: self
                .variable_i64("innodb_lock_wait_timeout")
                .unwrap_or(vars::LOCK_WAIT_TIMEOUT_S_DEFAULT)
                .max(0) as u64
                * 1000,
            one_pc: self.variable_i64("tidb_enable_1pc") != Some(0),
            async_commit: self.variable_i64("tidb_enable_async_commit") != Some(0),
            memory_quota: non_negative("tidb_mem_quota_query"),
            max_execution_ms: non_negative("max_execution_time"),
        };
        self.settings.set(settings);
        settings
    }

    /// The time limit of `statement` in milliseconds (0 for none): its MAX_EXECUTION_TIME hint,
    /// else `max_execution_time`; as in MySQL, only a SELECT has one.
    pub(super) fn max_execution_ms(&self, statement: &statement::Statement) -> u64 {
        match statement {
            statement::Statement::Sql(tree, extras) if matches!(**tree, Statement::Query(_)) => {
                extras
                    .max_execution_ms
                    .unwrap_or_else(|| self.settings().max_execution_ms)
            }
            _ => 0,
        }
    }

    /// `tidb_mem_quota_query` in bytes; 0 (no quota) when it is 0 or negative, as in TiDB.
    pub(super) fn memory_quota(&self) -> u64 {
        self.settings().memory_quota
    }

    /// Whether autocommit is on (SERVER_STATUS_AUTOCOMMIT).
    pub fn autocommit(&self) -> bool {
        self.settings().autocommit
    }

    /// `tidb_enable_1pc` and `tidb_enable_async_commit`.
    pub(super) fn commit_protocols(&self) -> (bool, bool) {
        let settings = self.settings();
        (settings.one_pc, settings.async_commit)
    }

    /// Returns a variable's value: the session's, else the global's, else its default.
    // Hot path: every statement.
    pub(crate) fn variable(&self, name: &str) -> Option<Datum> {
        let lowered;
        let name = if name.bytes().any(|b| b.is_ascii_uppercase()) {
            lowered = name.to_ascii_lowercase();
            lowered.as_str()
        } else {
            name
        };
        if name == "warning_count" || name == "error_count" {
            return Some(Datum::Int(0));
        }
        if name == "slow_query_log_file" {
            let file = crate::slowlog::file().map(|f| f.display().to_string());
            return Some(Datum::Bytes(file.unwrap_or_default().into_bytes()));
        }
        if let Some(v) = self.vars.get(name) {
            return Some(v.clone());
        }
        if let Some(v) = self.server.globals.read().get(name) {
            return Some(v.clone());
        }
        vars::default_of(name)
    }

    pub(crate) fn global_variable(&self, name: &str) -> Option<Datum> {
        self.server
            .globals
            .read()
            .get(name)
            .cloned()
            .or_else(|| vars::default_of(name))
    }

    pub(super) fn variable_i64(&self, name: &str) -> Option<i64> {
        self.variable(name).and_then(|d| crate::types::to_i64(&d))
    }

    pub(super) fn txn_mode(&self) -> TxnMode {
        self.settings().txn_mode.unwrap_or(TxnMode::Pessimistic)
    }

    pub(super) fn lock_wait_ms(&self) -> u64 {
        self.settings().lock_wait_ms
    }

    /// Forgets the settings read from the session's variables, after one changed.
    pub(super) fn variables_changed(&mut self) {
        self.settings.get_mut().globals = None;
    }

    /// Sets a session (or global) variable.
    pub(crate) fn set_variable(&mut self, name: &str, value: Datum, global: bool) -> Result<()> {
        let name = name.to_ascii_lowercase();
        if vars::default_of(&name).is_none() {
            return Err(error::unknown_variable(&name));
        }
        if !global && vars::is_global_only(&name) {
            return Err(error::global_variable(&name));
        }
        let text = String::from_utf8_lossy(&crate::types::datum_to_text(&value)).into_owned();
        // Character set and collation names are MySQL's (1115, 1273); every one holds utf8mb4.
        if value != Datum::Null {
            let lowered = text.to_ascii_lowercase();
            if name.starts_with("character_set_") {
                crate::charset::check(&statement::DatabaseOptions {
                    charset: Some(lowered),
                    collation: None,
                })?;
            } else if name.starts_with("collation_") {
                crate::charset::check(&statement::DatabaseOptions {
                    charset: None,
                    collation: Some(lowered),
                })?;
            }
        }
        let value = vars::normalize(&name, value)
            .ok_or_else(|| error::wrong_value_for_variable(&name, &text))?;
        if name == "autocommit" && value == Datum::Int(1) && !global {
            // Turning autocommit on commits the open transaction.
            self.commit()?;
        }
        let aliases: &[&str] = match name.as_str() {
            "tx_isolation" | "transaction_isolation" => &["tx_isolation", "transaction_isolation"],
            "tx_read_only" | "transaction_read_only" => &["tx_read_only", "transaction_read_only"],
            _ => &[],
        };
        let names: Vec<String> = if aliases.is_empty() {
            vec![name]
        } else {
            aliases.iter().map(|s| s.to_string()).collect()
        };
        if global && names.iter().any(|n| n == "slow_query_log_file") {
            let path = String::from_utf8_lossy(&crate::types::datum_to_text(&value)).into_owned();
            if path.is_empty() {
                return Err(error::wrong_value_for_variable(
                    "slow_query_log_file",
                    &path,
                ));
            }
            crate::slowlog::set_file(std::path::Path::new(&path));
        }
        if global && names.iter().any(|n| n == "tidb_server_memory_limit") {
            if let Datum::Int(bytes) = value {
                self.server.set_memory_limit(bytes as u64);
            }
            return Ok(());
        }
        if names.iter().any(|n| n == "sql_mode") && !global {
            self.modes = vars::parser_modes(&value);
        }
        for n in names {
            if global {
                self.server.globals.write().insert(n, value.clone());
                self.server.globals_changed();
            } else {
                self.vars.insert(n, value.clone());
            }
        }
        self.variables_changed();
        Ok(())
    }

    pub(crate) fn set_user_variable(&mut self, name: &str, value: Datum) {
        self.user_vars
            .get_mut()
            .insert(name.to_ascii_lowercase(), value);
    }
}
