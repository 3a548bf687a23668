//! strata-mysql: the server side of the MySQL client/server protocol.
//!
//! This crate turns bytes from MySQL clients (libmysqlclient under sysbench, MariaDB
//! Connector/C, go-sql-driver, the `mariadb` CLI) into calls on a SQL session, and the session's
//! outputs back into packets. It knows nothing of SQL: every statement goes to a
//! [`BackendSession`], which in production is `strata_sql::Session`.
//!
//! ```text
//!   TcpListener ── accept ──▶ one OS thread per connection (server.rs)
//!                              │  handshake.rs   greeting, [TLS (tls.rs)], HandshakeResponse41,
//!                              │                 auth switch, native / caching_sha2 check
//!                              │  Backend::open_session(user, database)
//!                              ▼
//!                 loop { PacketReader::read_payload          (packet.rs: framing, limits)
//!                        Connection::handle(payload, writer)  (conn.rs: one COM_* → reply)
//!                          ├─ text rows    (text.rs)
//!                          └─ binary rows, execute params (binary.rs)
//!                        PacketWriter::flush }                one write per reply
//! ```
//!
//! **Why threads, not async.** Statement execution blocks: on row-lock waits and on the group
//! commit's sync. A connection therefore owns an OS thread and blocking sockets, as in MariaDB;
//! the per-command path is one `read` and one `write` system call, with TCP_NODELAY set.
//!
//! **Departures from DESIGN.md, and why.** DESIGN.md names tokio for the server and
//! `mysql_common` for packet encoding. The server uses threads (above), and encodes packets
//! itself: `mysql_common`'s packet types are built for the client side, and the few encoders a
//! server needs (length-encoded integers and strings, OK/ERR/EOF, column definitions, binary
//! rows) are short, checked here against bytes captured from real clients, and sit on the hot
//! path where every copy counts.
//!
//! **Invariants.**
//! - Nothing a client sends can panic the server or make it allocate without bound: every field
//!   is read through the checked [`packet::Cursor`], every payload is bounded by
//!   `max_allowed_packet` before it is read, and a panic in a connection thread is caught and
//!   ends that connection only.
//! - A connection waits for a client for a bounded time: `connect_timeout` for the whole
//!   handshake, [`server::WAIT_TIMEOUT`] afterwards.
//! - Clients that never log in cannot keep others out: handshakes have a budget of their own
//!   (the oldest is closed when it is full), and only authenticated connections count against
//!   `max_connections`.
//! - The column count announced by COM_STMT_PREPARE is the SQL layer's `PreparedInfo::columns`,
//!   which it must keep equal to what the execute returns (a mismatch desynchronises clients).
//! - Parameter types sent with the first COM_STMT_EXECUTE are remembered per statement, because
//!   libmysqlclient and Connector/C send them only once.
//!
//! - COM_CHANGE_USER authenticates again with the greeting's scramble (switching the client to
//!   the account's method as at connection), then the connection gets a new session; a failed
//!   change disconnects (1873), as in MySQL.
//! - Query text that is not UTF-8 (bytes in a BLOB literal) keeps its bytes: the SQL layer's
//!   `decode_statement_text` maps them to characters its string literals map back.
//!
//! **Deliberately not done.** Compression, CLIENT_QUERY_ATTRIBUTES, server-side cursors
//! (COM_STMT_FETCH; a cursor request gets the whole result set inline, which clients accept),
//! and binlog commands.
//!
//! **Testing.** [`memory::ScriptedBackend`] is the in-memory backend beside the real one: canned
//! outputs per statement, an echo for prepared statements, and a log of the parameters each
//! execute decoded. The end-to-end tests run the real `mariadb` CLI, sysbench (libmariadb) and
//! `mysql_async` against it; `examples/scripted_server.rs` serves it for measurements.

mod backend;
mod binary;
mod conn;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod handshake;
pub mod memory;
pub mod packet;
mod reply;
pub mod server;
pub mod sha2_auth;
mod socket;
mod text;
pub mod tls;

pub use backend::{Backend, BackendSession};
pub use conn::MAX_PREPARED_STATEMENTS;
pub use error::{codes, ConnectionError};
pub use handshake::capabilities;
pub use server::{MysqlServer, ServerConfig, ShutdownHandle};
pub use sha2_auth::RsaKeyPair;
pub use tls::TlsConfig;
