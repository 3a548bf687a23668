//! `strata bench tpcc`: a TPC-C driver that behaves like `go-tpc tpcc` (what `tiup bench tpcc`
//! runs) against any MySQL-protocol server.
//!
//! ```text
//!   prepare ──► 9 tables, loaded with text multi-row INSERTs by -T connections
//!   run     ──► -T workers, one connection each, server-side prepared statements
//!               deck of 100 cards (--weight) ──► NewOrder | Payment | OrderStatus | Delivery | StockLevel
//!               every 10 s: [Current] lines; at the end: [Summary] lines, tpmC, tpmTotal, efficiency
//!   check   ──► the consistency conditions of TPC-C 3.3.2.1–12, in one snapshot
//!   cleanup ──► DROP TABLE IF EXISTS × 9
//! ```
//!
//! The schema, the data rules and the SQL of the five transactions are those of go-tpc's
//! `tpcc/` package, so that a tpmC measured here can be put beside one measured with go-tpc. Where go-tpc deviates from the TPC-C specification (stock is
//! read on the home warehouse, the 1% of New-Orders that roll back count as successes, no
//! keying or think time), this driver deviates the same way. Where go-tpc's own behaviour hides
//! problems, this driver does not: a worker never silently stops after an error, and the checks
//! include customers without delivered orders.
//!
//! Modules: [`rand`] (NURand, names, strings), [`load`] (prepare), [`input`] (what each
//! transaction is asked to do), [`txn`] (the transactions' SQL), [`run`] (workers, progress,
//! result file), [`stats`] (histograms and tpmC), [`check`] (consistency conditions).

pub mod check;
pub mod input;
pub mod load;
pub mod rand;
pub mod run;
pub mod stats;
pub mod txn;

use std::time::Duration;

use mysql_async::prelude::Queryable;
use mysql_async::{Conn, OptsBuilder};

use crate::client::{self, Target};

/// Districts per warehouse.
pub const DISTRICTS_PER_WAREHOUSE: u32 = 10;
/// Customers per district.
pub const CUSTOMERS_PER_DISTRICT: u32 = 3000;
/// Orders per district in the initial population.
pub const ORDERS_PER_DISTRICT: u32 = 3000;
/// The first undelivered order of the initial population (orders 2101..=3000 are new orders).
pub const FIRST_NEW_ORDER_ID: u32 = 2101;
/// Items, and stock rows per warehouse.
pub const ITEMS: u32 = 100_000;

/// Prepared statements one worker holds (63) plus room: mysql_async closes a statement that
/// falls out of its cache, which would break a worker that still holds it.
const STATEMENT_CACHE_SIZE: usize = 128;
/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The nine tables, in the order they are created.
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "stock",
    "item",
];

/// A failure of a `strata bench tpcc` command.
#[derive(Debug)]
pub struct TpccError(pub String);

impl std::fmt::Display for TpccError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TpccError {}

impl From<client::ClientError> for TpccError {
    fn from(e: client::ClientError) -> Self {
        TpccError(e.0)
    }
}

/// The CREATE TABLE statements of go-tpc (MySQL driver, clustered-index comment as at go-tpc
/// HEAD; MySQL and MariaDB read it as a comment).
pub fn create_table_statements() -> Vec<String> {
    let stock_dists: String = (1..=10)
        .map(|i| format!("s_dist_{i:02} CHAR(24), "))
        .collect();
    vec![
        "CREATE TABLE IF NOT EXISTS warehouse (w_id INT NOT NULL, w_name VARCHAR(10), \
         w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), \
         w_zip CHAR(9), w_tax DECIMAL(4, 4), w_ytd DECIMAL(12, 2), \
         PRIMARY KEY (w_id) /*T![clustered_index] CLUSTERED */)"
            .to_string(),
        "CREATE TABLE IF NOT EXISTS district (d_id INT NOT NULL, d_w_id INT NOT NULL, \
         d_name VARCHAR(10), d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), d_city VARCHAR(20), \
         d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4, 4), d_ytd DECIMAL(12, 2), \
         d_next_o_id INT, PRIMARY KEY (d_w_id, d_id) /*T![clustered_index] CLUSTERED */)"
            .to_string(),
        "CREATE TABLE IF NOT EXISTS customer (c_id INT NOT NULL, c_d_id INT NOT NULL, \
         c_w_id INT NOT NULL, c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), \
         c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), \
         c_zip CHAR(9), c_phone CHAR(16), c_since DATETIME, c_credit CHAR(2), \
         c_credit_lim DECIMAL(12, 2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), \
         c_ytd_payment DECIMAL(12,2), c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500), \
         PRIMARY KEY(c_w_id, c_d_id, c_id) /*T![clustered_index] CLUSTERED */, \
         INDEX idx_customer (c_w_id, c_d_id, c_last, c_first))"
            .to_string(),
        "CREATE TABLE IF NOT EXISTS history (h_c_id INT NOT NULL, h_c_d_id INT NOT NULL, \
         h_c_w_id INT NOT NULL, h_d_id INT NOT NULL, h_w_id INT NOT NULL, h_date DATETIME, \
         h_amount DECIMAL(6, 2), h_data VARCHAR(24), INDEX idx_h_w_id (h_w_id), \
         INDEX idx_h_c_w_id (h_c_w_id))"
            .to_string(),
        "CREATE TABLE IF NOT EXISTS new_order (no_o_id INT NOT NULL, no_d_id INT NOT NULL, \
         no_w_id INT NOT NULL, \
         PRIMARY KEY(no_w_id, no_d_id, no_o_id) /*T![clustered_index] CLUSTERED */)"
            .to_string(),
        "CREATE TABLE IF NOT EXISTS orders (o_id INT NOT NULL, o_d_id INT NOT NULL, \
         o_w_id INT NOT NULL, o_c_id INT, o_entry_d DATETIME, o_carrier_id INT, o_ol_cnt INT, \
         o_all_local INT, PRIMARY KEY(o_w_id, o_d_id, o_id) /*T![clustered_index] CLUSTERED */, \
         INDEX idx_order (o_w_id, o_d_id, o_c_id, o_id))"
            .to_string(),
        "CREATE TABLE IF NOT EXISTS order_line (ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, \
         ol_w_id INT NOT NULL, ol_number INT NOT NULL, ol_i_id INT NOT NULL, ol_supply_w_id INT, \
         ol_delivery_d DATETIME, ol_quantity INT, ol_amount DECIMAL(6, 2), ol_dist_info CHAR(24), \
         PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number) /*T![clustered_index] CLUSTERED */)"
            .to_string(),
        format!(
            "CREATE TABLE IF NOT EXISTS stock (s_i_id INT NOT NULL, s_w_id INT NOT NULL, \
             s_quantity INT, {stock_dists}s_ytd INT, s_order_cnt INT, s_remote_cnt INT, \
             s_data VARCHAR(50), PRIMARY KEY(s_w_id, s_i_id) /*T![clustered_index] CLUSTERED */)"
        ),
        "CREATE TABLE IF NOT EXISTS item (i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), \
         i_price DECIMAL(5, 2), i_data VARCHAR(50), \
         PRIMARY KEY(i_id) /*T![clustered_index] CLUSTERED */)"
            .to_string(),
    ]
}

/// Drops the nine tables (`strata bench tpcc cleanup`).
pub fn cleanup(target: &Target) -> Result<(), TpccError> {
    let db = client::quote_ident(&target.db);
    let statements: Vec<String> = TABLES
        .iter()
        .map(|table| format!("DROP TABLE IF EXISTS {db}.{table}"))
        .collect();
    client::execute(target, &statements)?;
    Ok(())
}

/// Opens a connection to `target`'s database with room for every prepared statement.
pub(crate) async fn connect(target: &Target) -> Result<Conn, mysql_async::Error> {
    let opts = OptsBuilder::default()
        .ip_or_hostname(target.host.clone())
        .tcp_port(target.port)
        .user(Some(target.user.clone()))
        .pass(Some(target.password.clone()))
        .db_name(Some(target.db.clone()))
        .prefer_socket(false)
        .stmt_cache_size(STATEMENT_CACHE_SIZE);
    match tokio::time::timeout(CONNECT_TIMEOUT, Conn::new(opts)).await {
        Ok(result) => result,
        Err(_) => Err(mysql_async::Error::Other(
            format!(
                "connecting to {} took more than {CONNECT_TIMEOUT:?}",
                target.address()
            )
            .into(),
        )),
    }
}

/// Opens a connection or says where it failed.
pub(crate) async fn connect_or_explain(target: &Target) -> Result<Conn, TpccError> {
    connect(target).await.map_err(|e| {
        TpccError(format!(
            "connecting to {} database {}: {e}",
            target.address(),
            target.db
        ))
    })
}

/// The server error code of `error`, if the server sent one.
pub(crate) fn server_code(error: &mysql_async::Error) -> Option<u16> {
    match error {
        mysql_async::Error::Server(e) => Some(e.code),
        _ => None,
    }
}

/// A Tokio runtime for a command with `threads` connections: the driver's CPU work is small,
/// so as many runtime threads as the machine has cores (at most `threads`) are enough.
pub(crate) fn runtime(threads: u32) -> Result<tokio::runtime::Runtime, TpccError> {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores.min(threads.max(1) as usize))
        .enable_all()
        .build()
        .map_err(|e| TpccError(format!("starting the Tokio runtime: {e}")))
}

/// Runs one text query and drops its result.
pub(crate) async fn query_drop(conn: &mut Conn, sql: &str) -> Result<(), TpccError> {
    conn.query_drop(sql)
        .await
        .map_err(|e| TpccError(format!("{sql}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_tables_with_go_tpc_keys() {
        let ddl = create_table_statements();
        assert_eq!(ddl.len(), TABLES.len());
        for (statement, table) in ddl.iter().zip(TABLES) {
            assert!(
                statement.starts_with(&format!("CREATE TABLE IF NOT EXISTS {table} (")),
                "{statement}"
            );
        }
        assert!(ddl[7].contains("s_dist_01 CHAR(24), s_dist_02 CHAR(24)"));
        assert!(ddl[7].contains("s_dist_10 CHAR(24), s_ytd INT"));
        assert!(ddl[6].contains("PRIMARY KEY(ol_w_id, ol_d_id, ol_o_id, ol_number)"));
        assert!(
            !ddl[3].contains("PRIMARY KEY"),
            "history has no primary key"
        );
    }
}
