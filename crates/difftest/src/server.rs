//! One connection to a MySQL-protocol server, driven synchronously: statements in, rows as the
//! text protocol renders them (or an error) out.

use std::time::Duration;

use mysql_async::consts::ColumnType;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, OptsBuilder, Row, Value};

/// How long one statement may run before the tester gives up on it.
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(30);

/// Where a server listens and how to log in.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// A name for reports ("strata", "mariadb").
    pub label: String,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// Statements run on every new connection (session settings).
    pub session_setup: Vec<String>,
}

/// What a statement produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Rows, each value as the text protocol sends it (None: NULL).
    Rows(Vec<Vec<Option<Vec<u8>>>>),
    Error {
        code: u16,
        message: String,
    },
    /// No answer within [`STATEMENT_TIMEOUT`], or the connection broke.
    Lost(String),
}

impl Outcome {
    pub fn is_error(&self) -> bool {
        !matches!(self, Outcome::Rows(_))
    }
}

/// Which protocol carries a query and its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// COM_QUERY: rows as text.
    Text,
    /// COM_STMT_PREPARE and COM_STMT_EXECUTE: rows in the binary encoding, turned back into
    /// the text the text protocol would have sent.
    Binary,
}

/// A connection, reopened when a statement loses it.
pub struct Connection {
    endpoint: Endpoint,
    database: Option<String>,
    conn: Option<Conn>,
}

impl Connection {
    pub async fn open(endpoint: &Endpoint) -> Result<Connection, String> {
        let mut connection = Connection {
            endpoint: endpoint.clone(),
            database: None,
            conn: None,
        };
        connection.reconnect().await?;
        Ok(connection)
    }

    pub fn label(&self) -> &str {
        &self.endpoint.label
    }

    async fn reconnect(&mut self) -> Result<(), String> {
        let e = &self.endpoint;
        let opts = OptsBuilder::default()
            .ip_or_hostname(e.host.clone())
            .tcp_port(e.port)
            .user(Some(e.user.clone()))
            .pass(Some(e.password.clone()))
            .db_name(self.database.clone())
            .prefer_socket(false);
        let mut conn = Conn::new(opts)
            .await
            .map_err(|err| format!("connecting to {} at {}:{}: {err}", e.label, e.host, e.port))?;
        for statement in &e.session_setup {
            conn.query_drop(statement)
                .await
                .map_err(|err| format!("{}: {statement}: {err}", e.label))?;
        }
        self.conn = Some(conn);
        Ok(())
    }

    /// Runs a statement whose result does not matter; an error is returned as text.
    pub async fn execute(&mut self, sql: &str) -> Result<(), String> {
        match self.query(sql, Protocol::Text).await {
            Outcome::Rows(_) => Ok(()),
            Outcome::Error { code, message } => {
                Err(format!("{}: {sql}: error {code}: {message}", self.label()))
            }
            Outcome::Lost(why) => Err(format!("{}: {sql}: {why}", self.label())),
        }
    }

    /// Makes `database` the connection's current one (and that of any reconnection).
    pub async fn use_database(&mut self, database: &str) -> Result<(), String> {
        self.execute(&format!("USE {database}")).await?;
        self.database = Some(database.to_string());
        Ok(())
    }

    /// Runs one statement and returns its rows or its error.
    pub async fn query(&mut self, sql: &str, protocol: Protocol) -> Outcome {
        if self.conn.is_none() {
            if let Err(e) = self.reconnect().await {
                return Outcome::Lost(e);
            }
        }
        let conn = self.conn.as_mut().expect("connected");
        let run = async {
            match protocol {
                Protocol::Text => conn.query::<Row, _>(sql).await,
                Protocol::Binary => {
                    let statement = conn.prep(sql).await?;
                    let rows = conn.exec::<Row, _, _>(&statement, ()).await;
                    conn.close(statement).await?;
                    rows
                }
            }
        };
        match tokio::time::timeout(STATEMENT_TIMEOUT, run).await {
            Ok(Ok(rows)) => Outcome::Rows(rows.into_iter().map(row_text).collect()),
            Ok(Err(mysql_async::Error::Server(e))) => Outcome::Error {
                code: e.code,
                message: e.message,
            },
            Ok(Err(e)) => {
                self.conn = None;
                Outcome::Lost(e.to_string())
            }
            Err(_) => {
                self.conn = None;
                Outcome::Lost(format!("no answer in {} s", STATEMENT_TIMEOUT.as_secs()))
            }
        }
    }

    pub async fn close(mut self) {
        if let Some(conn) = self.conn.take() {
            let _ = conn.disconnect().await;
        }
    }
}

/// A row's values as the text protocol sends them.
fn row_text(row: Row) -> Vec<Option<Vec<u8>>> {
    let columns = row.columns();
    row.unwrap()
        .into_iter()
        .zip(columns.iter())
        .map(|(value, column)| value_text(value, column.column_type(), column.decimals()))
        .collect()
}

/// The text of one value, whichever protocol carried it.
fn value_text(value: Value, column_type: ColumnType, decimals: u8) -> Option<Vec<u8>> {
    let text = match value {
        Value::NULL => return None,
        Value::Bytes(bytes) => return Some(bytes),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Double(d) => d.to_string(),
        Value::Date(year, month, day, hour, minute, second, micros) => {
            let date = format!("{year:04}-{month:02}-{day:02}");
            if column_type == ColumnType::MYSQL_TYPE_DATE {
                date
            } else {
                let mut text = format!("{date} {hour:02}:{minute:02}:{second:02}");
                push_fraction(&mut text, micros, decimals);
                text
            }
        }
        Value::Time(negative, days, hours, minutes, seconds, micros) => {
            let hours = u64::from(days) * 24 + u64::from(hours);
            let mut text = format!(
                "{}{hours:02}:{minutes:02}:{seconds:02}",
                if negative { "-" } else { "" }
            );
            push_fraction(&mut text, micros, decimals);
            text
        }
    };
    Some(text.into_bytes())
}

fn push_fraction(text: &mut String, micros: u32, decimals: u8) {
    let digits = usize::from(decimals.min(6));
    if digits > 0 {
        let fraction = format!("{micros:06}");
        text.push('.');
        text.push_str(&fraction[..digits]);
    }
}
