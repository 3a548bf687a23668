//! What a session reports of the statements it runs: counts and durations by type (the
//! metrics), the slow log, and the statement summary; and what information_schema shows of
//! the server to it (its processes and statements).

use std::time::Duration;

use strata_codec::Datum;
use strata_txn::ReadStats;

use super::{Caches, Session};
use crate::account;
use crate::api::Output;
use crate::error::Result;
use crate::metrics::StatementKind;
use crate::parser::statement;
use crate::summary::{self, Normalized};
use crate::vars;

/// The slow log and statement summary settings of a session, the version of the global
/// variables they were read at, and the buffer digests are made in.
#[derive(Debug, Default)]
pub(crate) struct Observing {
    version: Option<u64>,
    slow_threshold: Option<Duration>,
    summary: summary::Settings,
    digest_buffer: String,
    summary_cache: summary::SessionCache,
    /// The transaction the running statement ran in: its start timestamp, and what its reads
    /// had asked of storage when the statement ended.
    statement_txn: Option<(strata_types::Timestamp, ReadStats)>,
}

impl Session {
    /// [`Session::run_statement`], counted by type with its duration and outcome, written to
    /// the slow log (as `text`) when it took `long_query_time` or longer, and counted in the
    /// statement summary. `caches` are a prepared statement's.
    // Hot path: every statement.
    pub(super) fn run_counted(
        &mut self,
        statement: &statement::Statement,
        text: &str,
        params: &[Datum],
        caches: Option<&mut Caches>,
        rows: Option<&mut dyn crate::api::RowSink>,
    ) -> Result<Output> {
        let kind = StatementKind::of(statement);
        // Counted for the session before it runs: MySQL's Questions includes the statement
        // that reads it.
        self.counts.add(kind);
        self.observing.statement_txn = None;
        let open_before = self
            .txn
            .as_ref()
            .map(|o| (o.txn.start_ts(), o.txn.read_stats()));
        let started = std::time::Instant::now();
        let (result, digest) = match caches {
            Some(Caches {
                plan,
                needs,
                digest,
            }) => (
                self.run_statement(statement, params, Some(plan), Some(needs), rows),
                Some(digest),
            ),
            None => (
                self.run_statement(statement, params, None, None, rows),
                None,
            ),
        };
        let took = started.elapsed();
        crate::metrics::statement_done(kind, took, result.is_err());
        if let Err(e) = &result {
            crate::metrics::failed_with(e);
        }
        if kind == StatementKind::Set {
            // It may have changed long_query_time or the summary's settings.
            self.observing.version = None;
        }
        self.read_observing();
        if self
            .observing
            .slow_threshold
            .is_some_and(|threshold| took >= threshold)
        {
            // Its own reads: those of its transaction less what came before it there.
            let (start_ts, reads) = match (self.observing.statement_txn, open_before) {
                (Some((ts, reads)), Some((open_ts, before))) if ts == open_ts => {
                    (ts, reads.since(&before))
                }
                (Some(txn), _) => txn,
                (None, _) => (strata_types::Timestamp(0), ReadStats::default()),
            };
            let start_ts = if start_ts == strata_types::Timestamp::MAX {
                0
            } else {
                start_ts.0
            };
            self.log_slow(text, took, &result, start_ts, reads);
        }
        if self.observing.summary.enabled {
            self.summarize(kind, text, took, &result, digest);
        }
        result
    }

    /// Reads the slow log's and the summary's settings again after any SET GLOBAL or a SET
    /// of this session.
    fn read_observing(&mut self) {
        let version = self.server.globals_version();
        if self.observing.version == Some(version) {
            return;
        }
        let on = self
            .variable_i64("slow_query_log")
            .is_some_and(|on| on != 0);
        let seconds = self
            .variable("long_query_time")
            .and_then(|d| crate::types::to_f64(&d))
            .unwrap_or(vars::LONG_QUERY_TIME_S_DEFAULT);
        let number = |name: &str, default: i64| {
            usize::try_from(self.variable_i64(name).unwrap_or(default)).unwrap_or(0)
        };
        let summary = summary::Settings {
            enabled: self
                .variable_i64("tidb_enable_stmt_summary")
                .is_none_or(|on| on != 0),
            refresh: Duration::from_secs(
                number(
                    "tidb_stmt_summary_refresh_interval",
                    summary::REFRESH_S_DEFAULT,
                )
                .max(1) as u64,
            ),
            history: number("tidb_stmt_summary_history_size", summary::HISTORY_DEFAULT),
            max_count: number(
                "tidb_stmt_summary_max_stmt_count",
                summary::MAX_COUNT_DEFAULT,
            ),
            max_sql_length: number(
                "tidb_stmt_summary_max_sql_length",
                summary::MAX_SQL_LENGTH_DEFAULT,
            ),
        };
        self.observing.version = Some(version);
        self.observing.slow_threshold = on.then(|| Duration::from_secs_f64(seconds.max(0.0)));
        self.observing.summary = summary;
    }

    fn log_slow(
        &self,
        text: &str,
        took: Duration,
        result: &Result<Output>,
        txn_start_ts: u64,
        reads: ReadStats,
    ) {
        let (rows_sent, rows_affected) = rows_of(result);
        crate::slowlog::write(&crate::slowlog::Entry {
            user: self.process.user(),
            host: self.process.host(),
            connection_id: self.process.id(),
            database: self.database.as_deref(),
            took,
            rows_sent,
            rows_affected,
            memory: self.process.memory_used(),
            txn_start_ts,
            reads,
            succeeded: result.is_ok(),
            query: text,
        });
    }

    /// Counts the statement in the server's statement summary; a prepared statement's digest
    /// is made once, in `cached`.
    fn summarize(
        &mut self,
        kind: StatementKind,
        text: &str,
        took: Duration,
        result: &Result<Output>,
        cached: Option<&mut Option<Normalized>>,
    ) {
        let max_bytes = self.observing.summary.max_sql_length;
        let made;
        let normalized = match cached {
            Some(slot) => &*slot.get_or_insert_with(|| {
                Normalized::of(text, &mut self.observing.digest_buffer, max_bytes)
            }),
            None => {
                made = Normalized::of(text, &mut self.observing.digest_buffer, max_bytes);
                &made
            }
        };
        let (rows_sent, rows_affected) = rows_of(result);
        self.server.summary.record(
            &self.observing.summary,
            &summary::Execution {
                kind,
                schema: self.database.as_deref(),
                user: &self.user,
                normalized,
                text,
                took,
                failed: result.is_err(),
                rows_sent,
                rows_affected,
                memory: self.process.memory_used(),
            },
            &mut self.observing.summary_cache,
        );
    }
}

/// The rows a statement sent and the rows it changed.
fn rows_of(result: &Result<Output>) -> (u64, u64) {
    match result {
        Ok(Output::ResultSet { rows, .. }) => (rows.len() as u64, 0),
        Ok(Output::Streamed { rows }) => (*rows, 0),
        Ok(Output::Ok { affected_rows, .. }) => (0, *affected_rows),
        _ => (0, 0),
    }
}

/// What a session sees of the server in information_schema: every session and statement
/// with the PROCESS privilege, else its user's own.
impl crate::infoschema::Live for Session {
    fn processes(&self) -> Vec<crate::process::ProcessRow> {
        Session::processes(self)
    }

    fn cluster_processes(&self) -> Result<Vec<(String, crate::process::ProcessRow)>> {
        let instance = self.server.instance();
        let mut rows: Vec<_> = Session::processes(self)
            .into_iter()
            .map(|p| (instance.clone(), p))
            .collect();
        let mut elsewhere =
            crate::peers::processes_elsewhere(self.server.client(), self.server.processes.slot())?;
        if !self.has_global(account::Privileges::PROCESS) {
            elsewhere.retain(|(_, p)| p.user == self.user);
        }
        rows.extend(elsewhere);
        Ok(rows)
    }

    fn slow_queries(&self) -> Vec<Vec<Datum>> {
        let mut rows = crate::slowlog::rows();
        if !self.has_global(account::Privileges::PROCESS) {
            rows.retain(|row| self.logged_by_me(row));
        }
        rows
    }

    fn cluster_slow_queries(&self) -> Result<Vec<(String, Vec<Datum>)>> {
        let instance = self.server.instance();
        let mut rows: Vec<_> = crate::infoschema::Live::slow_queries(self)
            .into_iter()
            .map(|row| (instance.clone(), row))
            .collect();
        let mut elsewhere = crate::peers::slow_queries_elsewhere(
            self.server.client(),
            self.server.processes.slot(),
        )?;
        if !self.has_global(account::Privileges::PROCESS) {
            elsewhere.retain(|(_, row)| self.logged_by_me(row));
        }
        rows.extend(elsewhere);
        Ok(rows)
    }

    fn placement(&self) -> Result<(Vec<strata_txn::RegionInfo>, Vec<strata_txn::StoreInfo>)> {
        if !self.has_global(account::Privileges::PROCESS) {
            return Ok((Vec::new(), Vec::new()));
        }
        let client = self.server.client();
        let regions = client.regions(b"", b"").map_err(crate::error::Error::Txn)?;
        let stores = client.stores().map_err(crate::error::Error::Txn)?;
        Ok((regions, stores))
    }

    fn statements(&self, history: bool) -> Vec<Vec<Datum>> {
        let user = (!self.has_global(account::Privileges::PROCESS)).then_some(self.user.as_str());
        self.server.summary.rows(history, user)
    }
}

impl Session {
    /// Whether a slow-log row (of `crate::slowlog::COLUMNS`) is of a statement of this
    /// session's user.
    fn logged_by_me(&self, row: &[Datum]) -> bool {
        let user = crate::slowlog::COLUMNS.iter().position(|c| *c == "User");
        matches!(user.and_then(|u| row.get(u)), Some(Datum::Bytes(user)) if user.as_slice() == self.user.as_bytes())
    }
}

impl Session {
    /// Notes `txn` as the running statement's transaction, as the statement ends in it (for
    /// the slow log).
    pub(super) fn note_txn(&mut self, txn: &strata_txn::Transaction) {
        self.observing.statement_txn = Some((txn.start_ts(), txn.read_stats()));
    }
}
