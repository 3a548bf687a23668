//! A few statements the benchmark tools send themselves (version, CREATE DATABASE, ANALYZE,
//! data size), over the MySQL protocol with a real client library.

use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, OptsBuilder};

/// Where a MySQL-protocol server listens and how to log in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    pub db: String,
}

impl Target {
    /// `host:port`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// An error talking to the server, with what was being done.
#[derive(Debug)]
pub struct ClientError(pub String);

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ClientError {}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread tokio runtime")
}

async fn connect(target: &Target, with_db: bool) -> Result<Conn, ClientError> {
    let mut opts = OptsBuilder::default()
        .ip_or_hostname(target.host.clone())
        .tcp_port(target.port)
        .user(Some(target.user.clone()))
        .pass(Some(target.password.clone()))
        .prefer_socket(false);
    if with_db {
        opts = opts.db_name(Some(target.db.clone()));
    }
    Conn::new(opts)
        .await
        .map_err(|e| ClientError(format!("connecting to {}: {e}", target.address())))
}

/// `SELECT VERSION()`.
pub fn server_version(target: &Target) -> Result<String, ClientError> {
    runtime().block_on(async {
        let mut conn = connect(target, false).await?;
        let version: Option<String> = conn
            .query_first("SELECT VERSION()")
            .await
            .map_err(|e| ClientError(format!("SELECT VERSION(): {e}")))?;
        let _ = conn.disconnect().await;
        Ok(version.unwrap_or_default())
    })
}

/// Waits until the server accepts a login, for at most `timeout`.
pub fn wait_until_ready(target: &Target, timeout: Duration) -> Result<(), ClientError> {
    let deadline = Instant::now() + timeout;
    loop {
        match server_version(target) {
            Ok(_) => return Ok(()),
            Err(e) if Instant::now() >= deadline => {
                return Err(ClientError(format!(
                    "server at {} not ready after {timeout:?}: {e}",
                    target.address()
                )))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// Runs statements in order on one connection (without selecting the database first, so that
/// `CREATE DATABASE` works).
pub fn execute(target: &Target, statements: &[String]) -> Result<(), ClientError> {
    runtime().block_on(async {
        let mut conn = connect(target, false).await?;
        for statement in statements {
            conn.query_drop(statement.as_str())
                .await
                .map_err(|e| ClientError(format!("{statement}: {e}")))?;
        }
        let _ = conn.disconnect().await;
        Ok(())
    })
}

/// Quotes an identifier with backticks.
pub fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// The database's tables and indexes in bytes as the server accounts them:
/// `SUM(DATA_LENGTH + INDEX_LENGTH)` over information_schema.TABLES. `None` if the server
/// does not report it.
pub fn logical_bytes(target: &Target) -> Option<u64> {
    runtime().block_on(async {
        let mut conn = connect(target, false).await.ok()?;
        let query = format!(
            "SELECT CAST(COALESCE(SUM(DATA_LENGTH + INDEX_LENGTH), 0) AS UNSIGNED) \
             FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{}'",
            target.db.replace('\'', "''")
        );
        let bytes: Option<u64> = conn.query_first(query).await.ok()?;
        let _ = conn.disconnect().await;
        bytes
    })
}
