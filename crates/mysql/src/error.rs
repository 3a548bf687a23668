//! Errors of the wire protocol, and the one table of MySQL error codes this crate sends.
//!
//! Two kinds of failure exist on a connection. A command that is well framed but wrong (a
//! truncated COM_STMT_EXECUTE, an unknown statement id) is answered with an ERR packet and the
//! connection goes on. A broken connection (the socket failed, packets arrived out of order, a
//! packet exceeded `max_allowed_packet`) ends it: [`ConnectionError`] says which, and carries the
//! ERR packet to send first when one is due.

use std::io;

use strata_sql::SqlError;

/// Why a connection must end.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    /// The socket failed, timed out or was closed by the peer: drop the connection silently.
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
    /// The client broke the protocol: send this error, then drop the connection.
    #[error("{0}")]
    Fatal(SqlError),
}

/// The MySQL errors raised by the protocol layer itself (the SQL layer assigns its own).
///
/// Codes and SQLSTATEs follow MySQL's `mysqld_error.h`, so that clients which branch on them
/// (sysbench's `--mysql-ignore-errors`, connectors' reconnect logic) behave as against MySQL.
pub mod codes {
    use strata_sql::SqlError;

    /// 1040: the server already serves `max_connections` clients.
    pub fn too_many_connections() -> SqlError {
        SqlError::new(1040, "08004", "Too many connections")
    }

    /// 1043: the handshake response could not be parsed.
    pub fn bad_handshake() -> SqlError {
        SqlError::new(1043, "08S01", "Bad handshake")
    }

    /// 1045: unknown user or wrong password.
    pub fn access_denied(user: &str, host: &str, using_password: bool) -> SqlError {
        let using = if using_password { "YES" } else { "NO" };
        SqlError::new(
            1045,
            "28000",
            format!("Access denied for user '{user}'@'{host}' (using password: {using})"),
        )
    }

    /// 1873: COM_CHANGE_USER named an unknown user or a wrong password; MySQL disconnects.
    pub fn change_user_denied(user: &str, host: &str, using_password: bool) -> SqlError {
        let using = if using_password { "YES" } else { "NO" };
        SqlError::new(
            1873,
            "28000",
            format!(
                "Access denied trying to change to user '{user}'@'{host}' (using password: {using}). Disconnecting."
            ),
        )
    }

    /// 3159: a plain connection while `require_secure_transport` is ON.
    pub fn insecure_transport() -> SqlError {
        SqlError::new(
            3159,
            "HY000",
            "Connections using insecure transport are prohibited while --require_secure_transport=ON.",
        )
    }

    /// 1047: a command byte this server does not implement.
    pub fn unknown_command() -> SqlError {
        SqlError::new(1047, "08S01", "Unknown command")
    }

    /// 1094: COM_PROCESS_KILL named a connection that does not exist.
    pub fn unknown_thread(connection_id: u32) -> SqlError {
        SqlError::new(1094, "HY000", format!("Unknown thread id: {connection_id}"))
    }

    /// 1153: a packet (or long data) larger than `max_allowed_packet`.
    pub fn packet_too_large() -> SqlError {
        SqlError::new(
            1153,
            "08S01",
            "Got a packet bigger than 'max_allowed_packet' bytes",
        )
    }

    /// 1156: a packet arrived with an unexpected sequence id.
    pub fn packets_out_of_order() -> SqlError {
        SqlError::new(1156, "08S01", "Got packets out of order")
    }

    /// 1160: a reply could not be written (the client went away or stopped reading).
    pub fn net_error_on_write() -> SqlError {
        SqlError::new(1160, "08S01", "Got an error writing communication packets")
    }

    /// 1210: a COM_STMT_* command whose arguments do not match the statement.
    pub fn wrong_arguments(command: &str) -> SqlError {
        SqlError::new(1210, "HY000", format!("Incorrect arguments to {command}"))
    }

    /// 1243: a COM_STMT_* command named a statement id this connection did not prepare.
    pub fn unknown_statement(statement_id: u32, command: &str) -> SqlError {
        SqlError::new(
            1243,
            "HY000",
            format!("Unknown prepared statement handler ({statement_id}) given to {command}"),
        )
    }

    /// 1461: the connection holds too many prepared statements.
    pub fn too_many_prepared_statements(limit: usize) -> SqlError {
        SqlError::new(
            1461,
            "42000",
            format!("Can't create more than max_prepared_stmt_count statements (current value: {limit})"),
        )
    }

    /// 1835: a command packet too short or otherwise unparsable.
    pub fn malformed_packet() -> SqlError {
        SqlError::new(1835, "HY000", "Malformed communication packet.")
    }
}
