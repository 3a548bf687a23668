//! Serves the scripted in-memory backend, to measure the protocol layer alone with sysbench.
//!
//! ```text
//! cargo run --release -p strata-mysql --example scripted_server -- 127.0.0.1:3307
//! ```
//!
//! It knows one statement, sysbench's point select `SELECT c FROM sbtest1 WHERE id=?`, in the
//! database `sbtest`; a Lua script that prepares it once and executes it per event measures
//! prepared-execute round trips without any storage behind them. On the 2-core development
//! machine, 2 sysbench threads reach about 54,000 executes per second, with one `recvfrom` and
//! one `sendto` per execute.

use strata_mysql::memory::ScriptedBackend;
use strata_mysql::{MysqlServer, ServerConfig};
use strata_sql::{charsets, ColumnInfo, ColumnType};

fn main() {
    let column = |name: &str, column_type| ColumnInfo {
        schema: "sbtest".into(),
        table: "sbtest1".into(),
        org_table: "sbtest1".into(),
        name: name.into(),
        org_name: name.into(),
        charset: charsets::UTF8MB4_GENERAL_CI,
        column_length: 120,
        column_type,
        flags: 0,
        decimals: 31,
    };
    let backend = ScriptedBackend::new()
        .with_statement(
            "SELECT c FROM sbtest1 WHERE id=?",
            1,
            vec![column("c", ColumnType::LongLong)],
        )
        .with_database("sbtest");
    let listen = std::env::args()
        .nth(1)
        .unwrap_or("127.0.0.1:3307".into())
        .parse()
        .unwrap();
    let server = MysqlServer::bind(
        ServerConfig {
            listen,
            ..ServerConfig::default()
        },
        backend,
    )
    .unwrap();
    server.run().unwrap();
}
