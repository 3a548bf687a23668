//! The deepest statements the parser accepts are planned, run, explained and dropped on a
//! quarter of the stack a connection gets ([`strata_fiber::FIBER_STACK_BYTES`]), so the
//! nesting limit (1436 past it) leaves a connection's stack a margin of four. A statement
//! that used more would overflow the test thread's stack and abort this test.

use std::sync::Arc;

use strata_engine::MemoryEngine;
use strata_kv::Storage;
use strata_pd_client::LocalTso;
use strata_sql::{Output, Session, SqlServer};
use strata_txn::TxnClient;

/// Statements nested `d` deep, each with the least depth the server must answer (MariaDB
/// 10.11 answers at least as deep; it refuses subqueries past 63 with 1473).
#[allow(clippy::type_complexity)]
fn shapes() -> Vec<(&'static str, usize, Box<dyn Fn(usize) -> String>)> {
    vec![
        (
            "parentheses",
            100,
            Box::new(|d| format!("SELECT {}1{}", "(".repeat(d), ")".repeat(d))),
        ),
        (
            "CASE in CASE",
            100,
            Box::new(|d| {
                format!(
                    "SELECT {}id{} FROM t",
                    "CASE WHEN id > 0 THEN ".repeat(d),
                    " ELSE 0 END".repeat(d)
                )
            }),
        ),
        (
            "sums",
            60,
            Box::new(|d| format!("SELECT {}id{} FROM t", "1 + (".repeat(d), ")".repeat(d))),
        ),
        (
            "sums in CASE",
            40,
            Box::new(|d| {
                format!(
                    "SELECT {}id{} FROM t",
                    "CASE WHEN id > 0 THEN 1 + (".repeat(d),
                    ") ELSE 0 END".repeat(d)
                )
            }),
        ),
        (
            "functions",
            60,
            Box::new(|d| {
                format!(
                    "SELECT COUNT(*), SUM({}-id{}) FROM t GROUP BY id % 2 ORDER BY 1",
                    "ABS(".repeat(d),
                    ")".repeat(d)
                )
            }),
        ),
        (
            "subqueries",
            63,
            Box::new(|d| format!("SELECT {}id{} FROM t", "(SELECT ".repeat(d), ")".repeat(d))),
        ),
        (
            "derived tables",
            63,
            Box::new(|d| {
                format!(
                    "SELECT COUNT(*) FROM {}t{}",
                    "(SELECT id FROM ".repeat(d),
                    " WHERE id > 0) AS x".repeat(d)
                )
            }),
        ),
        (
            "IN subqueries",
            40,
            Box::new(|d| {
                format!(
                    "SELECT COUNT(*) FROM t WHERE {}1{}",
                    "id IN (SELECT id FROM t WHERE ".repeat(d),
                    ")".repeat(d)
                )
            }),
        ),
    ]
}

/// Whether the statement is answered (false: refused as too deep, 1436 or 1473).
fn answered(session: &mut Session, what: &str, sql: &str) -> bool {
    match session.execute_text(sql).pop().unwrap() {
        Ok(Output::ResultSet { rows, .. }) => {
            assert!(!rows.is_empty(), "{what}");
            true
        }
        Err(e) if e.code == 1436 || e.code == 1473 => false,
        other => panic!("{what}: {other:?}"),
    }
}

#[test]
fn the_deepest_statements_run_on_a_quarter_of_a_connections_stack() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(Storage::new(Arc::new(MemoryEngine::new())).unwrap());
    let tso = Arc::new(LocalTso::open(dir.path()).unwrap());
    let server = SqlServer::open(TxnClient::new(storage, tso)).unwrap();
    let stack = strata_fiber::FIBER_STACK_BYTES / 4;
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let mut session = server.new_session("root", None).unwrap();
            for sql in [
                "CREATE DATABASE d",
                "USE d",
                "CREATE TABLE t (id INT PRIMARY KEY)",
                "INSERT INTO t VALUES (1), (2), (3)",
            ] {
                session.execute_text(sql).pop().unwrap().unwrap();
            }
            for (what, least, shape) in shapes() {
                // The deepest answered: answered at `lo`, refused at `hi`.
                let (mut lo, mut hi) = (1, 5_000);
                assert!(answered(&mut session, what, &shape(lo)), "{what}");
                assert!(!answered(&mut session, what, &shape(hi)), "{what}");
                while hi - lo > 1 {
                    let mid = (lo + hi) / 2;
                    if answered(&mut session, what, &shape(mid)) {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                println!("{what}: {lo} deep answered");
                assert!(lo >= least, "{what}: only {lo} deep answered");
                // EXPLAIN takes a level or two of its own.
                let explained = (lo - 3..=lo)
                    .rev()
                    .any(|d| answered(&mut session, what, &format!("EXPLAIN {}", shape(d))));
                assert!(explained, "{what}");
            }
        })
        .unwrap()
        .join()
        .unwrap();
}
