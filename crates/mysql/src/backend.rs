//! The boundary between the wire protocol and the SQL layer.
//!
//! The server is generic over [`Backend`] so that its tests run against the in-memory
//! [`crate::memory::ScriptedBackend`]; production uses `Arc<SqlServer>`, whose sessions are
//! `strata_sql::Session`. Every method mirrors one of `Session`'s and may block (row-lock waits,
//! group-commit syncs): each connection has its own thread for exactly that reason.

use std::sync::Arc;

use strata_sql::{
    Batch, Blocked, Client, ColumnInfo, Datum, Login, Output, PreparedInfo, ResultSink, RowSink,
    Session, SqlError, SqlServer,
};

/// What the server needs from the SQL layer: a way to open one session per connection.
pub trait Backend: Send + Sync + 'static {
    type Session: BackendSession;

    /// A fresh connection id, announced in the greeting before the session opens.
    fn next_connection_id(&self) -> u32;

    /// The most authenticated connections to serve at once (`@@global.max_connections`).
    fn max_connections(&self) -> usize;

    /// Sets `@@global.max_connections` (from the server's configuration, when it starts).
    fn set_max_connections(&self, limit: usize);

    /// Notes the Unix socket the server listens on (`@@socket`).
    fn set_socket(&self, _path: &str) {}

    /// The account a client named `user` connecting from `peer` (an IP address) logs in as.
    fn find_login(&self, user: &str, peer: &str) -> Option<Login>;

    /// Whether plain (not TLS) connections are refused (`@@global.require_secure_transport`).
    fn require_secure_transport(&self) -> bool {
        false
    }

    /// Notes a login as `login` whose password was right or wrong; `Some` refuses it (the
    /// account is blocked after too many wrong passwords, error 3955).
    fn login_outcome(&self, _login: &Login, _password_ok: bool) -> Option<Blocked> {
        None
    }

    /// Keeps SHA256(SHA256(password)) of a `caching_sha2_password` account whose password a
    /// client proved in full, for the fast path of its next logins.
    fn remember_sha2(&self, _login: &Login, _hash: [u8; 32]) {}

    /// Notes the RSA public key clients encrypt passwords with (PEM).
    fn set_rsa_public_key(&self, _pem: &str) {}

    /// Opens the session of an authenticated client, optionally in a database (1049 if
    /// unknown).
    fn open_session(
        &self,
        client: Client,
        database: Option<&str>,
    ) -> Result<Self::Session, SqlError>;
}

/// The per-connection state of the SQL layer, as the protocol drives it.
pub trait BackendSession {
    /// Runs the statements of one COM_QUERY, handing `sink` one result per statement as each
    /// ends (and a large result set's rows while it runs), stopping after the first error;
    /// with [`Batch::Single`] text after the first statement is a syntax error and none runs.
    fn execute_text(&mut self, sql: &str, batch: Batch, sink: &mut dyn ResultSink);

    /// Prepares a statement.
    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError>;

    /// Executes a prepared statement with one datum per parameter; a large result set's rows
    /// may go to `sink` while it runs ([`Output::Streamed`]).
    fn execute_prepared(
        &mut self,
        statement_id: u32,
        params: Vec<Datum>,
        sink: &mut dyn RowSink,
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

    /// COM_PROCESS_KILL: ends connection `connection_id` (1094 if there is none).
    fn kill(&mut self, connection_id: u32) -> Result<(), SqlError>;

    /// Whether this session's connection was killed (by KILL from any connection): the
    /// connection then closes.
    fn connection_killed(&self) -> bool;
}

impl Backend for Arc<SqlServer> {
    type Session = Session;

    fn next_connection_id(&self) -> u32 {
        SqlServer::next_connection_id(self)
    }

    fn max_connections(&self) -> usize {
        SqlServer::max_connections(self)
    }

    fn set_max_connections(&self, limit: usize) {
        SqlServer::set_max_connections(self, limit)
    }

    fn set_socket(&self, path: &str) {
        SqlServer::set_socket(self, path)
    }

    fn find_login(&self, user: &str, peer: &str) -> Option<Login> {
        SqlServer::find_login(self, user, peer)
    }

    fn require_secure_transport(&self) -> bool {
        SqlServer::require_secure_transport(self)
    }

    fn login_outcome(&self, login: &Login, password_ok: bool) -> Option<Blocked> {
        SqlServer::login_outcome(self, login, password_ok)
    }

    fn remember_sha2(&self, login: &Login, hash: [u8; 32]) {
        SqlServer::remember_sha2(self, login, hash)
    }

    fn set_rsa_public_key(&self, pem: &str) {
        SqlServer::set_rsa_public_key(self, pem)
    }

    fn open_session(&self, client: Client, database: Option<&str>) -> Result<Session, SqlError> {
        SqlServer::open_session(self, client, database)
    }
}

impl BackendSession for Session {
    fn execute_text(&mut self, sql: &str, batch: Batch, sink: &mut dyn ResultSink) {
        Session::execute_batch_into(self, sql, batch, sink)
    }

    fn prepare(&mut self, sql: &str) -> Result<PreparedInfo, SqlError> {
        Session::prepare(self, sql)
    }

    fn execute_prepared(
        &mut self,
        statement_id: u32,
        params: Vec<Datum>,
        sink: &mut dyn RowSink,
    ) -> Result<Output, SqlError> {
        Session::execute_prepared_into(self, statement_id, params, sink)
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

    fn kill(&mut self, connection_id: u32) -> Result<(), SqlError> {
        Session::kill(self, connection_id)
    }

    fn connection_killed(&self) -> bool {
        Session::connection_killed(self)
    }
}
