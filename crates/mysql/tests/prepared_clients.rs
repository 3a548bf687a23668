//! Real clients of the binary protocol: sysbench 1.0.20 (libmariadb, which sends parameter
//! types on the first COM_STMT_EXECUTE only, and keeps classic EOFs) and `mysql_async` (a Rust
//! client with CLIENT_DEPRECATE_EOF).

mod common;

use std::process::Command;

use chrono::NaiveDate;
use common::{backend, installed, TestServer};
use mysql_async::prelude::Queryable;
use mysql_async::{OptsBuilder, Row, Value};
use strata_mysql::ServerConfig;
use strata_sql::Datum;

const SYSBENCH: &str = "/usr/bin/sysbench";

/// A sysbench script shaped like `oltp_common.lua`: statements prepared and bound once in
/// `thread_init`, executed with new values per event.
const SCRIPT: &str = r#"
function thread_init()
  drv = sysbench.sql.driver()
  con = drv:connect()
  point = con:prepare("SELECT c, pad FROM sbtest1 WHERE id=?")
  id = point:bind_create(sysbench.sql.type.INT)
  point:bind_param(id)
  update = con:prepare("UPDATE sbtest1 SET c=? WHERE id=?")
  c = update:bind_create(sysbench.sql.type.CHAR, 120)
  uid = update:bind_create(sysbench.sql.type.INT)
  update:bind_param(c, uid)
end

function event()
  con:query("BEGIN")
  for i = 1, 3 do
    id:set(i)
    point:execute()
  end
  c:set("abc")
  uid:set(9)
  update:execute()
  c:set("defgh")
  uid:set(-10)
  update:execute()
  con:query("COMMIT")
end

function thread_done()
  point:close()
  update:close()
  con:disconnect()
end
"#;

#[test]
fn sysbench_prepared_statements_reuse_bound_types() {
    if !installed(SYSBENCH) {
        return;
    }
    let server = TestServer::start(ServerConfig::default(), backend());
    let directory =
        std::env::temp_dir().join(format!("strata-mysql-sysbench-{}", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let script = directory.join("prepared.lua");
    std::fs::write(&script, SCRIPT).unwrap();
    let output = Command::new(SYSBENCH)
        .arg(&script)
        .args([
            "--threads=1",
            "--events=2",
            "--mysql-host=127.0.0.1",
            "--mysql-user=root",
            "--mysql-db=sbtest",
        ])
        .arg(format!("--mysql-port={}", server.addr.port()))
        .arg("run")
        .output()
        .unwrap();
    std::fs::remove_dir_all(&directory).unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "sysbench failed:\n{log}");
    assert!(!log.contains("FATAL"), "{log}");

    let params: Vec<Vec<Datum>> = server
        .backend
        .executions()
        .into_iter()
        .map(|execution| execution.params)
        .collect();
    let text = |s: &str| Datum::Bytes(s.as_bytes().to_vec());
    let event = vec![
        vec![Datum::Int(1)],
        vec![Datum::Int(2)],
        vec![Datum::Int(3)],
        vec![text("abc"), Datum::Int(9)],
        vec![text("defgh"), Datum::Int(-10)],
    ];
    assert_eq!(params, [event.clone(), event].concat());
}

#[tokio::test]
async fn mysql_async_decodes_binary_and_text_results() {
    let server = TestServer::start(
        ServerConfig::default(),
        backend().with_user("root", "").with_user("app", "secret"),
    );
    let opts = OptsBuilder::default()
        .ip_or_hostname("127.0.0.1")
        .tcp_port(server.addr.port())
        .user(Some("app"))
        .pass(Some("secret"))
        .db_name(Some("sbtest"))
        .prefer_socket(false)
        .max_allowed_packet(Some(1 << 20))
        .wait_timeout(Some(28800));
    let mut conn = mysql_async::Conn::new(opts).await.unwrap();

    let one: Option<i64> = conn.query_first("select 1").await.unwrap();
    assert_eq!(one, Some(1));
    let words: Vec<(i64, Option<String>)> = conn.query("select id, word from words").await.unwrap();
    assert_eq!(words, vec![(1, Some("one".to_string())), (2, None)]);

    let statement = conn.prep("SELECT ?, ?, ?, ?").await.unwrap();
    assert_eq!(statement.columns().len(), 4);
    assert_eq!(statement.num_params(), 4);
    let when = Value::Date(2024, 2, 29, 13, 14, 15, 160_000);
    for round in 0..2i64 {
        let params = (
            Value::Int(3 + round),
            when.clone(),
            "text",
            Value::UInt(u64::MAX),
        );
        let row: Row = conn.exec_first(&statement, params).await.unwrap().unwrap();
        let values = row.unwrap();
        assert_eq!(
            values[0],
            Value::Double((3 + round) as f64),
            "an Int sent into a DOUBLE column"
        );
        assert_eq!(values[1], when);
        assert_eq!(values[2], Value::Bytes(b"text".to_vec()));
        assert_eq!(
            values[3],
            Value::Int(-1),
            "u64::MAX in a signed BIGINT column"
        );
    }
    conn.close(statement).await.unwrap();
    conn.ping().await.unwrap();
    conn.reset().await.unwrap();
    conn.disconnect().await.unwrap();

    let executions = server.backend.executions();
    assert_eq!(executions.len(), 2);
    let datetime = NaiveDate::from_ymd_opt(2024, 2, 29)
        .unwrap()
        .and_hms_micro_opt(13, 14, 15, 160_000)
        .unwrap();
    assert_eq!(
        executions[1].params,
        vec![
            Datum::Int(4),
            Datum::DateTime(datetime),
            Datum::Bytes(b"text".to_vec()),
            Datum::UInt(u64::MAX)
        ]
    );
}
