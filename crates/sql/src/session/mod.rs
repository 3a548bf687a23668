//! Sessions: one per client connection. A session owns the connection's variables, its open
//! transaction and its prepared statements, and runs each statement in the right transaction:
//!
//! - inside an explicit transaction (`BEGIN`, or `autocommit = 0`), a statement that writes
//!   reads the newest committed rows at a fresh `for_update_ts` and locks what it writes
//!   (pessimistic mode); a statement that fails is undone alone, except a deadlock, which ends
//!   the transaction as InnoDB does;
//! - in autocommit mode each statement is its own transaction; a write that meets a concurrent
//!   commit is retried from scratch, which is safe because nothing was returned yet.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use sqlparser::ast::{self, Statement};
use strata_codec::Datum;
use strata_txn::{KvError, Transaction, TxnError, TxnMode};

use crate::account::{self, Identity};
use crate::api::{
    CollectResults, ColumnInfo, Output, PreparedInfo, ResultSink, RowSink, SessionStatus, SqlError,
};
use crate::ddl::ActiveTxn;
use crate::dml::{self, WriteCtx, WriteResult};
use crate::error::{self, Error, Result};
use crate::exec::{self, Ctx, SessionEnv};
use crate::expr::SessionValue;
use crate::parser::statement;
use crate::parser::{self, Batch};
use crate::planner::physical::SelectPlan;
use crate::planner::query;
use crate::process::{KillScope, Process};
use crate::show;
use crate::vars;

mod access;
mod observe;
mod select;
mod server;
mod txn;
mod variables;

pub use server::SqlServer;

use access::check_account;

/// Attempts of an autocommit write that meets concurrent commits.
const AUTOCOMMIT_ATTEMPTS_MAX: usize = 64;
/// Attempts of the optimistic form before an autocommit write falls back to locking.
const AUTOCOMMIT_OPTIMISTIC_ATTEMPTS: usize = 4;
/// Attempts of a pessimistic statement whose locked rows changed after it read them.
const STATEMENT_ATTEMPTS_MAX: usize = 64;

/// A planned statement, cached per prepared statement (behind an `Arc`, so its size matters
/// little).
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
enum Plan {
    Select(SelectPlan),
    Insert(dml::InsertPlan),
    Update(dml::UpdatePlan),
    Delete(dml::DeletePlan),
    /// A multiple-table UPDATE or DELETE.
    Joined(dml::JoinedWritePlan),
}

struct CachedPlan {
    version: u64,
    database: Option<String>,
    plan: Arc<Plan>,
}

struct Prepared {
    statement: statement::Statement,
    /// The statement's text, for SHOW PROCESSLIST.
    text: Arc<str>,
    param_count: usize,
    caches: Caches,
}

/// What a prepared statement keeps between its executions.
#[derive(Default)]
struct Caches {
    plan: Option<CachedPlan>,
    /// What the statement needs of its account, read once per current database.
    needs: access::CachedNeeds,
    /// Its digest, for the statement summary.
    digest: Option<crate::summary::Normalized>,
}

struct OpenTxn {
    txn: Transaction,
    _active: ActiveTxn,
    /// SAVEPOINTs, oldest first.
    savepoints: Vec<(String, strata_txn::Savepoint)>,
}

/// The state of one connection.
pub struct Session {
    server: Arc<SqlServer>,
    user: String,
    /// The account whose privileges every statement is checked against; None for a session
    /// of the embedded API.
    account: Option<Identity>,
    /// The TLS protocol version and cipher of the connection (`Ssl_version`, `Ssl_cipher`).
    tls: Option<(String, String)>,
    /// The roles in use (`SET ROLE`): the account's default roles at first.
    active_roles: Vec<Identity>,
    /// What the account may do with those roles, for the schema version it was read at.
    effective: RefCell<Option<(u64, Arc<account::Account>)>>,
    /// The account's password expired and was not changed yet (1820 for other statements).
    password_expired: bool,
    database: Option<String>,
    vars: HashMap<String, Datum>,
    /// User variables (`@name`); `@name := value` in a query assigns one while the query
    /// runs, through a shared borrow of the session.
    user_vars: RefCell<HashMap<String, Datum>>,
    txn: Option<OpenTxn>,
    prepared: HashMap<u32, Prepared>,
    next_statement_id: u32,
    last_insert_id: u64,
    found_rows: u64,
    /// What the parser kept beside the running statement (SQL_CALC_FOUND_ROWS, an UPDATE's
    /// ORDER BY, the mode of TiDB's `BEGIN PESSIMISTIC`, a view's CHECK OPTION).
    extras: parser::Extras,
    /// This session's statements by type (`SHOW SESSION STATUS`).
    counts: crate::metrics::SessionCounts,
    /// The slow log and statement summary settings as last read, and the digest buffer.
    observing: observe::Observing,
    /// The variables every statement reads, as last read.
    settings: std::cell::Cell<variables::Settings>,
    row_count: i64,
    process: Arc<Process>,
    /// What the session's `sql_mode` changes in parsing (PIPES_AS_CONCAT, ANSI_QUOTES).
    modes: parser::Modes,
    /// The client asked for CLIENT_FOUND_ROWS (an UPDATE reports the rows it matched).
    client_found_rows: bool,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.server.processes.deregister(&self.process);
    }
}

/// What expressions may read of a session while it runs a statement.
struct Env<'a> {
    session: &'a Session,
}

impl SessionEnv for Env<'_> {
    fn check_interrupt(&self) -> Result<()> {
        self.session.process.check()
    }

    fn user_sleep(&self, on: bool) {
        self.session.process.set_user_sleep(on);
    }

    fn consume_memory(&self, bytes: usize) -> Result<()> {
        self.session.process.consume_memory(bytes)
    }

    fn release_memory(&self, bytes: usize) {
        self.session.process.release_memory(bytes);
    }

    fn memory_pressed(&self) -> bool {
        self.session.process.memory_pressed()
    }

    fn set_user_variable(&self, name: &str, value: Datum) {
        self.session
            .user_vars
            .borrow_mut()
            .insert(name.to_string(), value);
    }

    fn session_value(&self, value: &SessionValue) -> Datum {
        let s = self.session;
        match value {
            SessionValue::Database => s
                .database
                .as_ref()
                .map(|d| Datum::Bytes(d.clone().into_bytes()))
                .unwrap_or(Datum::Null),
            SessionValue::LastInsertId => Datum::UInt(s.last_insert_id),
            SessionValue::ConnectionId => Datum::UInt(u64::from(s.process.id())),
            SessionValue::User => {
                Datum::Bytes(format!("{}@{}", s.user, s.process.host()).into_bytes())
            }
            SessionValue::CurrentRole => {
                let roles: Vec<String> = s
                    .active_roles
                    .iter()
                    .map(account::statement::quoted)
                    .collect();
                let text = if roles.is_empty() {
                    "NONE".to_string()
                } else {
                    roles.join(",")
                };
                Datum::Bytes(text.into_bytes())
            }
            SessionValue::CurrentUser => Datum::Bytes(
                match &s.account {
                    Some(account) => format!("{}@{}", account.user, account.host),
                    None => format!("{}@localhost", s.user),
                }
                .into_bytes(),
            ),
            SessionValue::Version => Datum::Bytes(vars::SERVER_VERSION.as_bytes().to_vec()),
            SessionValue::Now(fsp) => {
                use chrono::Timelike;
                let now = chrono::Local::now().naive_local();
                let unit = 10u32.pow(9 - u32::from(*fsp));
                let nanos = now.nanosecond() % 1_000_000_000;
                Datum::DateTime(now.with_nanosecond(nanos - nanos % unit).unwrap_or(now))
            }
            SessionValue::CurDate => Datum::Date(chrono::Local::now().date_naive()),
            SessionValue::CurTime(fsp) => {
                use chrono::Timelike;
                let now = chrono::Local::now().naive_local();
                let micros = i64::from(now.num_seconds_from_midnight()) * 1_000_000
                    + i64::from(now.nanosecond() / 1000 % 1_000_000);
                let unit = 10i64.pow(6 - u32::from(*fsp));
                Datum::Time(micros - micros % unit)
            }
            SessionValue::SystemVariable(name) => s.variable(name).unwrap_or(Datum::Null),
            SessionValue::UserVariable(name) => s
                .user_vars
                .borrow()
                .get(name)
                .cloned()
                .unwrap_or(Datum::Null),
            SessionValue::FoundRows => Datum::UInt(s.found_rows),
            SessionValue::RowCount => Datum::Int(s.row_count),
        }
    }
}

fn ok(affected_rows: u64, last_insert_id: u64) -> Output {
    Output::Ok {
        affected_rows,
        last_insert_id,
        warnings: 0,
        info: String::new(),
    }
}

impl Session {
    /// Runs the `;`-separated statements of one text, stopping after the first error.
    pub fn execute_text(&mut self, sql: &str) -> Vec<std::result::Result<Output, SqlError>> {
        self.execute_batch(sql, Batch::Multiple)
    }

    /// [`Session::execute_text`] for a text that may hold only as many statements as `batch`
    /// allows: with [`Batch::Single`], a second statement is a syntax error and none runs.
    pub fn execute_batch(
        &mut self,
        sql: &str,
        batch: Batch,
    ) -> Vec<std::result::Result<Output, SqlError>> {
        let mut results = CollectResults::default();
        self.execute_batch_into(sql, batch, &mut results);
        results.0
    }

    /// [`Session::execute_batch`] with each statement's result handed to `sink` as the
    /// statement ends, and a large result set's rows while it runs (see [`RowSink`]). The
    /// batch stops at the first error, its own or the sink's.
    pub fn execute_batch_into(&mut self, sql: &str, batch: Batch, sink: &mut dyn ResultSink) {
        let parsed = match parser::parse_batch_in(sql, batch, self.modes) {
            Ok(p) if p.param_count > 0 => Err(error::syntax("near '?'")),
            Ok(p) if p.statements.is_empty() => Err(Error::new(1065, "42000", "Query was empty")),
            other => other,
        };
        let parsed = match parsed {
            Ok(parsed) => parsed,
            Err(e) => {
                let _ = sink.result(Err(e.into_packet()), self.status(), false);
                return;
            }
        };
        let last = parsed.statements.len() - 1;
        // Each statement of several is shown, logged and summarized with its own text.
        let texts = if last > 0 {
            parsed.texts(sql)
        } else {
            vec![sql]
        };
        for (index, statement) in parsed.statements.iter().enumerate() {
            let text = crate::process::info_text(texts[index]);
            let rows = sink.streams().then_some(&mut *sink as &mut dyn RowSink);
            let result = self
                .process
                .begin_statement(
                    &text,
                    self.max_execution_ms(statement),
                    self.memory_quota(),
                    statement.is_process_control(),
                )
                .and_then(|()| self.run_counted(statement, &text, &[], None, rows));
            let failed = result.is_err();
            let more = index < last && !failed;
            let delivered = sink.result(result.map_err(Error::into_packet), self.status(), more);
            if failed || delivered.is_err() {
                break;
            }
        }
        self.process.end_statement();
    }

    /// The state reported with each result: an open transaction, autocommit.
    pub fn status(&self) -> SessionStatus {
        SessionStatus {
            in_transaction: self.in_transaction(),
            autocommit: self.autocommit(),
        }
    }

    /// This session's statements by type.
    pub(crate) fn statement_counts(&self) -> &crate::metrics::SessionCounts {
        &self.counts
    }

    /// Runs one parsed statement: sqlparser's trees through planning (with the plan cached in
    /// `cache` for a prepared statement), Strata's own forms through their handlers.
    fn run_statement(
        &mut self,
        statement: &statement::Statement,
        params: &[Datum],
        cache: Option<&mut Option<CachedPlan>>,
        needs: Option<&mut access::CachedNeeds>,
        rows: Option<&mut dyn RowSink>,
    ) -> Result<Output> {
        self.check_privileges(statement, needs)?;
        match statement {
            statement::Statement::Sql(tree, extras) => {
                self.take_extras(extras);
                self.execute_statement(tree, params, cache, rows)
            }
            other => {
                self.take_extras(&parser::Extras::default());
                show::execute_mysql_only(self, other)
            }
        }
    }

    /// Makes what the parser kept beside a statement the running statement's.
    fn take_extras(&mut self, extras: &parser::Extras) {
        self.extras.clone_from(extras);
    }

    /// What the parser kept beside the running statement.
    pub(crate) fn extras(&self) -> &parser::Extras {
        &self.extras
    }

    /// Prepares a statement (COM_STMT_PREPARE).
    pub fn prepare(&mut self, sql: &str) -> std::result::Result<PreparedInfo, SqlError> {
        self.prepare_statement(sql).map_err(Error::into_packet)
    }

    fn prepare_statement(&mut self, sql: &str) -> Result<PreparedInfo> {
        let limit = self
            .variable_i64("max_prepared_stmt_count")
            .unwrap_or(vars::MAX_PREPARED_STMT_COUNT_DEFAULT) as usize;
        if self.prepared.len() >= limit {
            return Err(error::too_many_prepared(limit));
        }
        let mut parsed = parser::parse_batch_in(sql, Batch::Single, self.modes)?;
        if parsed.statements.is_empty() {
            return Err(Error::new(1065, "42000", "Query was empty"));
        }
        let param_count =
            u16::try_from(parsed.param_count).map_err(|_| error::too_many_placeholders())?;
        let statement = parsed.statements.pop().expect("one statement");
        // As MySQL, a statement the account may not run cannot be prepared either (its
        // result columns would describe tables it may not see).
        self.check_privileges(&statement, None)?;
        let columns = match &statement {
            statement::Statement::Sql(tree, _) => self.prepared_columns(tree)?,
            // MySQL's own statements describe their columns when they run.
            _ => Arc::from(Vec::new()),
        };
        let statement_id = self.next_statement_id;
        self.next_statement_id = self.next_statement_id.wrapping_add(1).max(1);
        self.prepared.insert(
            statement_id,
            Prepared {
                statement,
                text: crate::process::info_text(sql),
                param_count: parsed.param_count,
                caches: Caches::default(),
            },
        );
        Ok(PreparedInfo {
            statement_id,
            param_count,
            columns,
        })
    }

    /// The result columns a prepared statement describes (a query's), or none; an error for a
    /// statement that cannot be prepared.
    fn prepared_columns(&self, tree: &Statement) -> Result<Arc<[ColumnInfo]>> {
        Ok(match tree {
            Statement::Query(q) => {
                let schema = self.server.catalog.schema();
                query::plan_select(q, &schema, self.database.as_deref())?.columns
            }
            Statement::Insert(_)
            | Statement::Update { .. }
            | Statement::Delete(_)
            | Statement::StartTransaction { .. }
            | Statement::Commit { .. }
            | Statement::Rollback { .. }
            | Statement::Set(_)
            | Statement::CreateTable(_)
            | Statement::CreateIndex(_)
            | Statement::AlterTable { .. }
            | Statement::RenameTable(_)
            | Statement::CreateDatabase { .. }
            | Statement::Drop { .. }
            | Statement::Truncate { .. }
            | Statement::Use(_) => Arc::from(Vec::new()),
            other => {
                return Err(error::cannot_prepare(
                    other.to_string().split_whitespace().next().unwrap_or(""),
                ))
            }
        })
    }

    /// Executes a prepared statement with its parameters (COM_STMT_EXECUTE).
    // Hot path: every sysbench statement.
    pub fn execute_prepared(
        &mut self,
        statement_id: u32,
        params: Vec<Datum>,
    ) -> std::result::Result<Output, SqlError> {
        self.execute_prepared_statement(statement_id, params, None)
            .map_err(Error::into_packet)
    }

    /// [`Session::execute_prepared`] with a large result set's rows handed to `sink` while
    /// the statement runs (its result is then [`Output::Streamed`]).
    pub fn execute_prepared_into(
        &mut self,
        statement_id: u32,
        params: Vec<Datum>,
        sink: &mut dyn RowSink,
    ) -> std::result::Result<Output, SqlError> {
        let rows = sink.streams().then_some(sink);
        self.execute_prepared_statement(statement_id, params, rows)
            .map_err(Error::into_packet)
    }

    fn execute_prepared_statement(
        &mut self,
        statement_id: u32,
        params: Vec<Datum>,
        rows: Option<&mut dyn RowSink>,
    ) -> Result<Output> {
        let mut prepared = self
            .prepared
            .remove(&statement_id)
            .ok_or_else(|| error::unknown_statement(statement_id, "mysqld_stmt_execute"))?;
        let result = if params.len() != prepared.param_count {
            Err(error::wrong_arguments("mysqld_stmt_execute"))
        } else {
            let Prepared {
                statement,
                text,
                caches,
                ..
            } = &mut prepared;
            let result = self
                .process
                .begin_statement(
                    text,
                    self.max_execution_ms(statement),
                    self.memory_quota(),
                    statement.is_process_control(),
                )
                .and_then(|()| self.run_counted(statement, text, &params, Some(caches), rows));
            self.process.end_statement();
            result
        };
        self.prepared.insert(statement_id, prepared);
        result
    }

    /// Forgets a prepared statement (COM_STMT_CLOSE).
    pub fn close_prepared(&mut self, statement_id: u32) {
        self.prepared.remove(&statement_id);
    }

    /// Changes the current database (COM_INIT_DB).
    pub fn use_database(&mut self, name: &str) -> std::result::Result<(), SqlError> {
        self.switch_database(name).map_err(Error::into_packet)
    }

    /// [`Session::use_database`] with the SQL layer's errors (USE).
    pub(crate) fn switch_database(&mut self, name: &str) -> Result<()> {
        let schema = self.server.catalog.schema();
        if let Some(identity) = &self.account {
            let needs = [account::check::Need::AnyOnDatabase(name.to_string())];
            check_account(&schema, identity, &self.active_roles, &needs)?;
        }
        if !schema.databases.contains_key(name) {
            return Err(error::unknown_database(name));
        }
        self.database = Some(name.to_string());
        self.process.set_database(self.database.as_deref());
        Ok(())
    }

    /// Describes the columns of a table (COM_FIELD_LIST).
    pub fn field_list(&mut self, table: &str) -> std::result::Result<Vec<ColumnInfo>, SqlError> {
        self.describe_table(table).map_err(Error::into_packet)
    }

    fn describe_table(&mut self, table: &str) -> Result<Vec<ColumnInfo>> {
        let db = self.database.clone().ok_or_else(error::no_database)?;
        let schema = self.server.catalog.schema();
        if let Some(identity) = &self.account {
            let needs = [account::check::Need::AnyOnTable {
                database: db.clone(),
                table: table.to_string(),
            }];
            check_account(&schema, identity, &self.active_roles, &needs)?;
        }
        let def = schema.table(&db, table)?;
        let scope = query::table_scope(def, &def.name);
        let plan_columns: Vec<ColumnInfo> = def
            .columns
            .iter()
            .zip(&scope.columns)
            .filter(|(c, _)| !c.write_only)
            .map(|(c, s)| ColumnInfo {
                schema: db.clone(),
                table: def.name.clone(),
                org_table: def.name.clone(),
                name: c.name.clone(),
                org_name: c.name.clone(),
                charset: if c.ty.is_binary_to_clients() {
                    crate::api::charsets::BINARY
                } else {
                    crate::api::charsets::UTF8MB4_GENERAL_CI
                },
                column_length: s.ty.length,
                column_type: s.ty.column_type,
                flags: if c.nullable {
                    0
                } else {
                    crate::api::column_flags::NOT_NULL
                } | if c.ty.binary {
                    crate::api::column_flags::BINARY
                } else {
                    0
                } | c.ty.client_flags(),
                decimals: s.ty.decimals,
            })
            .collect();
        Ok(plan_columns)
    }

    /// Rolls back any open transaction and resets variables and prepared statements
    /// (COM_RESET_CONNECTION).
    pub fn reset(&mut self) {
        self.txn = None;
        self.vars.clear();
        self.variables_changed();
        self.user_vars.get_mut().clear();
        self.prepared.clear();
        self.last_insert_id = 0;
    }

    /// Whether a transaction is open (SERVER_STATUS_IN_TRANS).
    pub fn in_transaction(&self) -> bool {
        self.txn.is_some()
    }

    /// The current database, if any.
    pub fn current_database(&self) -> Option<&str> {
        self.database.as_deref()
    }

    pub(crate) fn clear_database(&mut self) {
        self.database = None;
        self.process.set_database(None);
    }

    pub(crate) fn server(&self) -> &Arc<SqlServer> {
        &self.server
    }

    /// `KILL [QUERY | CONNECTION] id` and COM_PROCESS_KILL, on this node or (by the id's slot)
    /// another of the cluster: 1094 for an unknown id, 1095 for another user's session (only
    /// root may stop those), 1317 for the killing statement itself when it stops its own
    /// session.
    pub(crate) fn kill_process(&self, id: u32, scope: KillScope) -> Result<()> {
        let Some(process) = self.server.processes.get(id) else {
            // Another SQL node's connection, if the id is of another node's slot.
            let may_kill_others = self.has_global(account::Privileges::SUPER);
            return self
                .server
                .kill_elsewhere(id, scope, &self.user, may_kill_others);
        };
        if process.user() != self.user && !self.has_global(account::Privileges::SUPER) {
            return Err(Error::new(
                1095,
                "HY000",
                format!("You are not owner of thread {id}"),
            ));
        }
        process.kill(scope);
        if id == self.process.id() {
            return Err(crate::process::interrupted());
        }
        Ok(())
    }

    /// COM_PROCESS_KILL: ends connection `id` as `KILL CONNECTION id` does.
    pub fn kill(&self, id: u32) -> std::result::Result<(), SqlError> {
        self.kill_process(id, KillScope::Connection)
            .map_err(Error::into_packet)
    }

    /// Whether this session's connection was killed: the protocol layer then closes it.
    pub fn connection_killed(&self) -> bool {
        self.process.connection_killed()
    }

    /// The server's sessions, for SHOW PROCESSLIST.
    /// The processes SHOW PROCESSLIST lists: all of them with the PROCESS privilege, else the
    /// session's user's own.
    /// `FLUSH PRIVILEGES`.
    pub(crate) fn flush_privileges(&self) {
        self.server.flush_privileges();
    }

    /// The server's RSA public key of `caching_sha2_password` (PEM; empty without one).
    pub(crate) fn rsa_public_key(&self) -> String {
        self.server.rsa_public_key()
    }

    pub(crate) fn processes(&self) -> Vec<crate::process::ProcessRow> {
        let mut rows = self.server.processes.rows();
        if !self.has_global(account::Privileges::PROCESS) {
            rows.retain(|p| p.user == self.user);
        }
        rows
    }

    /// The value of an expression that may hold subqueries (`SET @n = (SELECT …)`): it is
    /// run as `SELECT expr`, in the session's transaction if one is open.
    pub(crate) fn eval_query_value(&mut self, e: &ast::Expr, params: &[Datum]) -> Result<Datum> {
        let query = crate::parser::synth::select_value(e.clone());
        let schema = self.server.catalog.schema();
        let plan = query::plan_select(&query, &schema, self.database.as_deref())?;
        match self.run_select(&plan, params, None)? {
            Output::ResultSet { rows, .. } => Ok(rows
                .into_iter()
                .next()
                .and_then(|r| r.into_iter().next())
                .unwrap_or(Datum::Null)),
            _ => Ok(Datum::Null),
        }
    }

    /// The rows of a query Strata composed, run as the session's own SELECT would be.
    pub(crate) fn query_rows(&mut self, query: &ast::Query) -> Result<Vec<Vec<Datum>>> {
        let schema = self.server.catalog.schema();
        let plan = query::plan_select(query, &schema, self.database.as_deref())?;
        match self.run_select(&plan, &[], None)? {
            Output::ResultSet { rows, .. } => Ok(rows),
            _ => Ok(Vec::new()),
        }
    }

    /// The rows of `rows`, laid out as `scope`, for which `condition` holds (a SHOW's WHERE).
    pub(crate) fn filter_rows(
        &self,
        scope: &crate::planner::scope::Scope,
        condition: &ast::Expr,
        rows: Vec<Vec<Datum>>,
    ) -> Result<Vec<Vec<Datum>>> {
        let filter = crate::planner::bind::Binder::new(scope, "where clause").bind(condition)?;
        let env = Env { session: self };
        let ctx = Ctx::new(&[], &env, false);
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            if exec::holds(Some(&filter), &row, &ctx)? {
                kept.push(row);
            }
        }
        Ok(kept)
    }

    pub(crate) fn eval_constant(&self, e: &ast::Expr, params: &[Datum]) -> Result<Datum> {
        let scope = crate::planner::scope::Scope::default();
        let expr = crate::planner::bind::Binder::new(&scope, "field list").bind(e)?;
        let env = Env { session: self };
        let ctx = Ctx::new(params, &env, false);
        expr.eval(&[], &ctx)
    }

    fn plan(
        &self,
        statement: &Statement,
        cache: Option<&mut Option<CachedPlan>>,
    ) -> Result<Option<Arc<Plan>>> {
        let schema = self.server.catalog.schema();
        if let Some(Some(cached)) = cache.as_ref().map(|c| c.as_ref()) {
            if cached.version == schema.version && cached.database == self.database {
                return Ok(Some(cached.plan.clone()));
            }
        }
        let schema = self.schema_for(statement, schema);
        let db = self.database.as_deref();
        if let Some(on_table) = crate::view::through_view(statement, &schema, db)? {
            return self.plan(&on_table, None);
        }
        let plan = match statement {
            Statement::Query(q) => {
                let cx = query::PlanContext {
                    live: Some(self),
                    ..query::PlanContext::new(&schema, db)
                };
                Plan::Select(query::plan_select_in(q, &cx, None)?)
            }
            Statement::Insert(insert) => Plan::Insert(dml::plan_insert(insert, &schema, db)?),
            Statement::Update {
                table,
                assignments,
                selection,
                limit,
                from,
                ..
            } if !table.joins.is_empty() || from.is_some() => {
                Plan::Joined(dml::plan_joined_update(
                    table,
                    from.as_ref(),
                    assignments,
                    selection.as_ref(),
                    (&self.extras.update_order_by, limit.as_ref()),
                    &schema,
                    db,
                )?)
            }
            Statement::Update {
                table,
                assignments,
                selection,
                limit,
                from: None,
                ..
            } => Plan::Update(dml::plan_update(
                table,
                assignments,
                selection.as_ref(),
                &self.extras.update_order_by,
                limit.as_ref(),
                &schema,
                db,
            )?),
            Statement::Delete(delete) if !delete.tables.is_empty() => {
                Plan::Joined(dml::plan_joined_delete(delete, &schema, db)?)
            }
            Statement::Delete(delete) => Plan::Delete(dml::plan_delete(delete, &schema, db)?),
            _ => return Ok(None),
        };
        let plan = Arc::new(plan);
        // information_schema rows are fixed at planning: such plans are not reused.
        let computed = matches!(&*plan, Plan::Select(s) if s.reads_computed_rows());
        if let Some(cache) = cache.filter(|_| !computed) {
            *cache = Some(CachedPlan {
                version: schema.version,
                database: self.database.clone(),
                plan: plan.clone(),
            });
        }
        Ok(Some(plan))
    }

    /// Runs one statement that writes (CREATE TABLE … SELECT's INSERT), as if a client sent it.
    pub(crate) fn execute_write(&mut self, statement: &Statement) -> Result<Output> {
        self.execute_statement(statement, &[], None, None)
    }

    fn execute_statement(
        &mut self,
        statement: &Statement,
        params: &[Datum],
        cache: Option<&mut Option<CachedPlan>>,
        rows: Option<&mut dyn RowSink>,
    ) -> Result<Output> {
        // A write registers its transaction before it is planned: online DDL waits for every
        // transaction registered under an older schema, and a plan made from an older schema
        // must count as one (see ddl.rs).
        let writes = matches!(
            statement,
            Statement::Insert(_) | Statement::Update { .. } | Statement::Delete(_)
        );
        let _active = if writes && self.explicit_txn_active() {
            self.ensure_txn()?;
            None
        } else if writes {
            Some(self.server.catalog.register_txn())
        } else {
            None
        };
        match self.plan(statement, cache)? {
            Some(plan) => self.execute_plan(&plan, params, rows),
            None => show::execute_other(self, statement, params),
        }
    }

    fn execute_plan(
        &mut self,
        plan: &Plan,
        params: &[Datum],
        rows: Option<&mut dyn RowSink>,
    ) -> Result<Output> {
        match plan {
            Plan::Select(select) => self.run_select(select, params, rows),
            _ => self.run_write(plan, params),
        }
    }

    fn write_in(
        &self,
        txn: &mut Transaction,
        plan: &Plan,
        params: &[Datum],
    ) -> Result<WriteResult> {
        let env = Env { session: self };
        let ctx = Ctx::new(params, &env, true);
        let w = WriteCtx {
            ctx: &ctx,
            autoids: &self.server.catalog.autoids,
            lock_wait_ms: self.lock_wait_ms(),
        };
        Ok(match plan {
            Plan::Insert(p) => dml::execute_insert(p, txn, &w)?,
            Plan::Update(p) => dml::execute_update(p, txn, &w)?,
            Plan::Delete(p) => dml::execute_delete(p, txn, &w)?,
            Plan::Joined(p) => dml::execute_joined(p, txn, &w)?,
            Plan::Select(_) => unreachable!("reads do not run here"),
        })
    }

    fn run_write(&mut self, plan: &Plan, params: &[Datum]) -> Result<Output> {
        let result = if self.explicit_txn_active() {
            self.ensure_txn()?;
            let mut open = self.txn.take().expect("transaction ensured");
            let mut attempt = 0;
            let result = loop {
                attempt += 1;
                if let Err(e) = open.txn.begin_statement(true) {
                    break Err(Error::Txn(e));
                }
                match self.write_in(&mut open.txn, plan, params) {
                    Err(e) if e.is_retryable() && attempt < STATEMENT_ATTEMPTS_MAX => {
                        crate::metrics::retried(crate::metrics::Retry::of(&e));
                        open.txn.rollback_statement();
                    }
                    other => break other,
                }
            };
            self.finish_statement(open, result)?
        } else {
            self.autocommit_write(plan, params)?
        };
        if result.last_insert_id != 0 {
            self.last_insert_id = result.last_insert_id;
        }
        let update = matches!(
            plan,
            Plan::Update(_)
                | Plan::Joined(dml::JoinedWritePlan {
                    assignments: Some(_),
                    ..
                })
        );
        let info = if update {
            format!(
                "Rows matched: {}  Changed: {}  Warnings: 0",
                result.matched_rows, result.affected_rows
            )
        } else {
            String::new()
        };
        // With CLIENT_FOUND_ROWS an UPDATE counts the rows it matched, and ON DUPLICATE KEY
        // UPDATE a row set to its own values as 1, as MySQL does (and so does ROW_COUNT()).
        let affected_rows = match (update, self.client_found_rows) {
            (true, true) => result.matched_rows,
            (false, true) => result.affected_rows + result.unchanged_rows,
            (_, false) => result.affected_rows,
        };
        self.row_count = affected_rows as i64;
        Ok(Output::Ok {
            affected_rows,
            last_insert_id: result.last_insert_id,
            warnings: 0,
            info,
        })
    }

    fn autocommit_write(&mut self, plan: &Plan, params: &[Datum]) -> Result<WriteResult> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mode = if attempt <= AUTOCOMMIT_OPTIMISTIC_ATTEMPTS {
                TxnMode::Optimistic
            } else {
                TxnMode::Pessimistic
            };
            let mut txn = self.server.client.begin(mode)?;
            txn.set_interrupt(self.process.clone());
            txn.begin_statement(mode == TxnMode::Pessimistic)?;

            self.choose_commit_protocols(&mut txn);
            let written = self.write_in(&mut txn, plan, params).and_then(|r| {
                let limit = self.server.catalog.check_schema_lease()?;
                txn.set_max_commit_ts(limit);
                Ok(r)
            });
            self.note_txn(&txn);
            let outcome = written.and_then(|r| txn.commit().map(|_| r).map_err(Error::Txn));
            match outcome {
                Ok(r) => return Ok(r),
                Err(e) if e.autocommit_may_retry() && attempt < AUTOCOMMIT_ATTEMPTS_MAX => {
                    crate::metrics::retried(crate::metrics::Retry::of(&e));
                    continue;
                }
                Err(e) => return Err(self.commit_error(e)),
            }
        }
    }

    /// Maps a failed statement or commit to its MySQL error; an insert whose key turned out to
    /// exist is a duplicate-key error naming the key.
    fn commit_error(&self, e: Error) -> Error {
        match e {
            Error::Txn(TxnError::Kv(KvError::AlreadyExists { key })) => {
                dml::duplicate_from_key(&self.server.catalog.schema(), &key)
            }
            other => other,
        }
    }
}
