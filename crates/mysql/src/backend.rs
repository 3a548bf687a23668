//! The boundary between the wire protocol and the SQL layer.
//!
//! The server is generic over [`Backend`] so that its tests run against the in-memory
//! [`crate::memory::ScriptedBackend`]; production uses `Arc<SqlServer>`, whose sessions are
//! `strata_sql::Session`. Every method mirrors one of `Session`'s and may block (row-lock waits,
//! group-commit syncs): each connection has its own thread for exactly that reason.

use std::sync::Arc;

use strata_sql::{ColumnInfo, Datum, Output, PreparedInfo, Session, SqlError, SqlServer};

/// What the server needs from the SQL layer: a way to open one session per connection.
pub trait Backend: Send + Sync + 'static {
    type Session: BackendSession;

    /// Opens a session for an authenticated user, optionally in a database (1049 if unknown).
    fn open_session(&self, user: &str, database: Option<&str>) -> Result<Self::Session, SqlError>;
}

/// The per-connection state of the SQL layer, as the protocol drives it.
pub trait BackendSession {
    /// Runs the statements of one COM_QUERY, one result per statement, stopping after the first
    /// error.
    fn execute_text(&mut self, sql: &str) -> Vec<Result<Output, SqlError>>;

    /// Prepares a statement.
    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError>;

    /// Executes a prepared statement with one datum per parameter.
    fn execute_prepared(
        &mut self,
        statement_id: u32,
        params: Vec<Datum>,
    ) -> Result<Output, SqlError>;

    /// Forgets a prepared statement.
    fn close_prepared(&mut self, statement_id: u32);

    /// Changes the current database.
    fn use_database(&mut self, name: &str) -> Result<(), SqlError>;

    /// Describes the columns of a table.
    fn field_list(&mut self, table: &str) -> Result<Vec<ColumnInfo>, SqlError>;

    /// Rolls back, and resets variables and prepared statements.
    fn reset(&mut self);

    /// Whether a transaction is open.
    fn in_transaction(&self) -> bool;

    /// Whether autocommit is on.
    fn autocommit(&self) -> bool;
}

impl Backend for Arc<SqlServer> {
    type Session = Session;

    fn open_session(&self, user: &str, database: Option<&str>) -> Result<Session, SqlError> {
        self.new_session(user, database)
    }
}

impl BackendSession for Session {
    fn execute_text(&mut self, sql: &str) -> Vec<Result<Output, SqlError>> {
        Session::execute_text(self, sql)
    }

    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        Session::prepare(self, sql)
    }

    fn execute_prepared(
        &mut self,
        statement_id: u32,
        params: Vec<Datum>,
    ) -> Result<Output, SqlError> {
        Session::execute_prepared(self, statement_id, params)
    }

    fn close_prepared(&mut self, statement_id: u32) {
        Session::close_prepared(self, statement_id)
    }

    fn use_database(&mut self, name: &str) -> Result<(), SqlError> {
        Session::use_database(self, name)
    }

    fn field_list(&mut self, table: &str) -> Result<Vec<ColumnInfo>, SqlError> {
        Session::field_list(self, table)
    }

    fn reset(&mut self) {
        Session::reset(self)
    }

    fn in_transaction(&self) -> bool {
        Session::in_transaction(self)
    }

    fn autocommit(&self) -> bool {
        Session::autocommit(self)
    }
}
