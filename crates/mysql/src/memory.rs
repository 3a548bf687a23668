//! An in-memory [`Backend`] with canned answers, for tests of the protocol without a database.
//!
//! [`ScriptedBackend`] knows a fixed set of statements. A COM_QUERY is split on `;` (more than
//! one statement is a 1064 unless the client allowed several) and each statement looked up (case-insensitively, trimmed) among the canned ones; `BEGIN`,
//! `START TRANSACTION`, `COMMIT` and `ROLLBACK` toggle the session's transaction flag; anything
//! else is a 1064 syntax error, which stops the batch as the SQL layer does. A prepared statement
//! is known by its SQL text, its parameter count and its columns; executing it returns one row
//! made of the parameters themselves (padded with NULL to the column count), or an OK packet
//! whose affected-row count is the number of parameters when it has no columns. Every execution
//! is recorded so a test can check what the protocol decoded. COM_PROCESS_KILL knows only the
//! session's own connection (which it ends); any other id is unknown. `max_connections` is a
//! number that the server sets. Its accounts are `'user'@'%'` with a plain password, `root`
//! without one unless others are given.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use strata_sql::{
    charsets, Batch, Client, ColumnInfo, ColumnType, Datum, Identity, Login, Output, PreparedInfo,
    ResultSink, RowSink, SessionStatus, SqlError,
};

use crate::backend::{Backend, BackendSession};

/// A canned prepared statement: its parameter count and result columns.
#[derive(Clone, Debug)]
struct CannedStatement {
    param_count: u16,
    columns: Arc<[ColumnInfo]>,
}

/// A prepared-statement execution as the session received it.
#[derive(Clone, Debug, PartialEq)]
pub struct Execution {
    pub sql: String,
    pub params: Vec<Datum>,
}

/// A backend that answers from canned outputs; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct ScriptedBackend {
    queries: HashMap<String, Output>,
    statements: HashMap<String, CannedStatement>,
    tables: HashMap<String, Vec<ColumnInfo>>,
    databases: BTreeSet<String>,
    /// Users and their passwords; none means `root` without a password.
    users: Vec<(String, String)>,
    executions: Arc<Mutex<Vec<Execution>>>,
    connection_ids: Arc<AtomicU32>,
    max_connections: Arc<AtomicUsize>,
}

/// A binary column `name` of table `db.t`, for canned results and statements.
pub fn column(name: &str, column_type: ColumnType) -> ColumnInfo {
    ColumnInfo {
        schema: "db".into(),
        table: "t".into(),
        org_table: "t".into(),
        name: name.into(),
        org_name: name.into(),
        charset: charsets::BINARY,
        column_length: 20,
        column_type,
        flags: 0,
        decimals: 0,
    }
}

impl ScriptedBackend {
    /// Creates a backend that knows no statements and no databases.
    pub fn new() -> ScriptedBackend {
        ScriptedBackend::default()
    }

    /// Answers the statement `sql` with `output`.
    pub fn with_query(mut self, sql: &str, output: Output) -> ScriptedBackend {
        self.queries.insert(normalize(sql), output);
        self
    }

    /// Makes `sql` preparable with `param_count` parameters and `columns`.
    pub fn with_statement(
        mut self,
        sql: &str,
        param_count: u16,
        columns: Vec<ColumnInfo>,
    ) -> ScriptedBackend {
        let statement = CannedStatement {
            param_count,
            columns: columns.into(),
        };
        self.statements.insert(normalize(sql), statement);
        self
    }

    /// Makes COM_FIELD_LIST of `table` return `columns`.
    pub fn with_table(mut self, table: &str, columns: Vec<ColumnInfo>) -> ScriptedBackend {
        self.tables.insert(table.to_string(), columns);
        self
    }

    /// Makes `name` a database that exists.
    pub fn with_database(mut self, name: &str) -> ScriptedBackend {
        self.databases.insert(name.to_string());
        self
    }

    /// Lets `user` log in from anywhere with `password` (empty for none).
    pub fn with_user(mut self, user: &str, password: &str) -> ScriptedBackend {
        self.users.push((user.to_string(), password.to_string()));
        self
    }

    /// Returns every prepared-statement execution so far, across sessions.
    pub fn executions(&self) -> Vec<Execution> {
        self.executions.lock().clone()
    }
}

impl Backend for ScriptedBackend {
    type Session = ScriptedSession;

    fn next_connection_id(&self) -> u32 {
        self.connection_ids.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn max_connections(&self) -> usize {
        self.max_connections.load(Ordering::Relaxed)
    }

    fn set_max_connections(&self, limit: usize) {
        self.max_connections.store(limit, Ordering::Relaxed);
    }

    fn find_login(&self, user: &str, _peer: &str) -> Option<Login> {
        let password = if self.users.is_empty() {
            (user == "root").then_some("")
        } else {
            self.users
                .iter()
                .find(|(name, _)| name == user)
                .map(|(_, password)| password.as_str())
        };
        password.map(|password| Login::with_password(Identity::new(user, "%"), password))
    }

    fn open_session(
        &self,
        client: Client,
        database: Option<&str>,
    ) -> Result<ScriptedSession, SqlError> {
        let mut session = ScriptedSession {
            script: Arc::new(self.clone()),
            prepared: HashMap::new(),
            next_statement_id: 1,
            in_transaction: false,
            database: None,
            connection_id: client.connection_id,
            killed: false,
        };
        if let Some(name) = database {
            session.use_database(name)?;
        }
        Ok(session)
    }
}

/// One session of a [`ScriptedBackend`].
pub struct ScriptedSession {
    script: Arc<ScriptedBackend>,
    prepared: HashMap<u32, (String, CannedStatement)>,
    next_statement_id: u32,
    in_transaction: bool,
    database: Option<String>,
    connection_id: u32,
    killed: bool,
}

impl ScriptedSession {
    /// The current database, if any.
    pub fn current_database(&self) -> Option<&str> {
        self.database.as_deref()
    }

    fn status(&self) -> SessionStatus {
        SessionStatus {
            in_transaction: self.in_transaction,
            autocommit: true,
        }
    }

    fn execute_one(&mut self, statement: &str) -> Result<Output, SqlError> {
        let ok = Output::Ok {
            affected_rows: 0,
            last_insert_id: 0,
            warnings: 0,
            info: String::new(),
        };
        match statement {
            "begin" | "start transaction" => self.in_transaction = true,
            "commit" | "rollback" => self.in_transaction = false,
            _ => {
                return self
                    .script
                    .queries
                    .get(statement)
                    .cloned()
                    .ok_or_else(|| syntax_error(statement))
            }
        }
        Ok(ok)
    }
}

impl BackendSession for ScriptedSession {
    fn execute_text(&mut self, sql: &str, batch: Batch, sink: &mut dyn ResultSink) {
        let statements: Vec<String> = sql
            .split(';')
            .map(normalize)
            .filter(|statement| !statement.is_empty())
            .collect();
        let refused = if batch == Batch::Single && statements.len() > 1 {
            Some(SqlError::new(1064, "42000", "multiple statements"))
        } else if statements.is_empty() {
            Some(SqlError::new(1065, "42000", "Query was empty"))
        } else {
            None
        };
        if let Some(error) = refused {
            let _ = sink.result(Err(error), self.status(), false);
            return;
        }
        let last = statements.len() - 1;
        for (index, statement) in statements.iter().enumerate() {
            let result = self.execute_one(statement);
            let failed = result.is_err();
            let more = index < last && !failed;
            if sink.result(result, self.status(), more).is_err() || failed {
                break;
            }
        }
    }

    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        let key = normalize(sql);
        let statement = self
            .script
            .statements
            .get(&key)
            .cloned()
            .ok_or_else(|| syntax_error(&key))?;
        let statement_id = self.next_statement_id;
        self.next_statement_id += 1;
        let info = PreparedInfo {
            statement_id,
            param_count: statement.param_count,
            columns: statement.columns.clone(),
        };
        self.prepared.insert(statement_id, (key, statement));
        Ok(info)
    }

    fn execute_prepared(
        &mut self,
        statement_id: u32,
        params: Vec<Datum>,
        _sink: &mut dyn RowSink,
    ) -> Result<Output, SqlError> {
        let Some((sql, statement)) = self.prepared.get(&statement_id) else {
            let message = format!(
                "Unknown prepared statement handler ({statement_id}) given to mysqld_stmt_execute"
            );
            return Err(SqlError::new(1243, "HY000", message));
        };
        self.script.executions.lock().push(Execution {
            sql: sql.clone(),
            params: params.clone(),
        });
        if statement.columns.is_empty() {
            let affected_rows = params.len() as u64;
            return Ok(Output::Ok {
                affected_rows,
                last_insert_id: 0,
                warnings: 0,
                info: String::new(),
            });
        }
        let mut row = params;
        row.resize(statement.columns.len(), Datum::Null);
        Ok(Output::ResultSet {
            columns: statement.columns.clone(),
            rows: vec![row],
        })
    }

    fn close_prepared(&mut self, statement_id: u32) {
        self.prepared.remove(&statement_id);
    }

    fn use_database(&mut self, name: &str) -> Result<(), SqlError> {
        if !self.script.databases.contains(name) {
            return Err(SqlError::new(
                1049,
                "42000",
                format!("Unknown database '{name}'"),
            ));
        }
        self.database = Some(name.to_string());
        Ok(())
    }

    fn field_list(&mut self, table: &str) -> Result<Vec<ColumnInfo>, SqlError> {
        let Some(columns) = self.script.tables.get(table) else {
            let database = self.database.as_deref().unwrap_or("");
            return Err(SqlError::new(
                1146,
                "42S02",
                format!("Table '{database}.{table}' doesn't exist"),
            ));
        };
        Ok(columns.clone())
    }

    fn reset(&mut self) {
        self.prepared.clear();
        self.in_transaction = false;
    }

    fn in_transaction(&self) -> bool {
        self.in_transaction
    }

    fn autocommit(&self) -> bool {
        true
    }

    fn kill(&mut self, connection_id: u32) -> Result<(), SqlError> {
        if connection_id != self.connection_id {
            return Err(crate::error::codes::unknown_thread(connection_id));
        }
        self.killed = true;
        Ok(())
    }

    fn connection_killed(&self) -> bool {
        self.killed
    }
}

fn normalize(sql: &str) -> String {
    sql.trim().to_ascii_lowercase()
}

fn syntax_error(statement: &str) -> SqlError {
    let message =
        format!("You have an error in your SQL syntax; unknown statement near '{statement}'");
    SqlError::new(1064, "42000", message)
}
