//! No statement may crash the server: random token soups and mutations of valid statements
//! run through a session; each must return a result (usually an error), never panic, and the
//! session must keep answering afterwards.

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use strata_engine::MemoryEngine;
use strata_kv::Storage;
use strata_pd_client::LocalTso;
use strata_sql::{Batch, Datum, Output, Session, SqlServer};
use strata_txn::TxnClient;

const STATEMENTS: usize = 3_000;

const TOKENS: &[&str] = &[
    "SELECT",
    "INSERT",
    "INTO",
    "UPDATE",
    "DELETE",
    "FROM",
    "WHERE",
    "SET",
    "VALUES",
    "(",
    ")",
    ",",
    "*",
    "=",
    "<",
    ">",
    "<=",
    ">=",
    "<>",
    "AND",
    "OR",
    "NOT",
    "NULL",
    "IS",
    "IN",
    "BETWEEN",
    "LIKE",
    "ORDER",
    "BY",
    "GROUP",
    "HAVING",
    "LIMIT",
    "OFFSET",
    "DESC",
    "ASC",
    "DISTINCT",
    "COUNT(*)",
    "SUM(k)",
    "AVG(id)",
    "MAX(c)",
    "t",
    "id",
    "k",
    "c",
    "1",
    "0",
    "-1",
    "2.5",
    "1e308",
    "18446744073709551616",
    "'x'",
    "''",
    "'2024-01-01'",
    "?",
    "+",
    "-",
    "/",
    "%",
    "DIV",
    "FOR",
    "UPDATE",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "CREATE",
    "TABLE",
    "INDEX",
    "ON",
    "DROP",
    "IF",
    "EXISTS",
    "PRIMARY",
    "KEY",
    "INT",
    "VARCHAR(3)",
    "DECIMAL(5,2)",
    "DATETIME",
    "DEFAULT",
    "AUTO_INCREMENT",
    "REPLACE",
    "DUPLICATE",
    "@@version",
    "@x",
    "CAST(",
    "AS",
    "SIGNED",
    "CASE",
    "WHEN",
    "THEN",
    "ELSE",
    "END",
    "/*!",
    "*/",
    ";",
    "SHOW",
    "TABLES",
    "EXPLAIN",
    "ANALYZE",
    "USE",
    "g",
    "`t`",
    "\"q\"",
    "0x41",
    "COALESCE(",
    "POWER(",
    "SUBSTRING(",
];

#[test]
fn random_statements_never_panic() {
    match std::env::var("STRATA_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        Some(seed) => run(seed),
        None => (1..=8).for_each(run),
    }
}

/// A session of a fresh in-memory server; the folder holds its timestamp oracle's state.
fn session() -> (tempfile::TempDir, Session) {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(Storage::new(Arc::new(MemoryEngine::new())).unwrap());
    let tso = Arc::new(LocalTso::open(dir.path()).unwrap());
    let server = SqlServer::open(TxnClient::new(storage, tso)).unwrap();
    let session = server.new_session("root", None).unwrap();
    (dir, session)
}

/// More placeholders than COM_STMT_PREPARE's 16-bit count holds get MySQL's error, not a
/// count that wrapped around.
#[test]
fn too_many_placeholders_are_refused() {
    let (_dir, mut session) = session();
    let placeholders = |n: usize| format!("SELECT 1 IN ({})", vec!["?"; n].join(", "));
    let info = session.prepare(&placeholders(65_535)).unwrap();
    assert_eq!(info.param_count, 65_535);
    let error = session.prepare(&placeholders(65_536)).err().unwrap();
    assert_eq!((error.code, error.state), (1390, "HY000"));
}

/// A text that may hold one statement (COM_QUERY from a client without multi-statements, or a
/// prepared statement) answers a second one with MySQL's syntax error, quoting it, before any
/// of them runs.
#[test]
fn a_single_statement_batch_refuses_a_second_statement() {
    let (_dir, mut session) = session();
    let setup = "CREATE DATABASE b; USE b; CREATE TABLE t (id INT PRIMARY KEY)";
    assert!(session.execute_text(setup).iter().all(Result::is_ok));

    let results = session.execute_batch("INSERT INTO t VALUES (1); DROP TABLE t", Batch::Single);
    assert_eq!(results.len(), 1);
    let error = results[0].as_ref().err().unwrap();
    assert_eq!((error.code, error.state), (1064, "42000"));
    assert!(
        error.message.ends_with("near 'DROP TABLE t' at line 1"),
        "{}",
        error.message
    );
    let error = session.prepare("SELECT 1; SELECT 2").err().unwrap();
    assert_eq!(error.code, 1064);

    for one in [
        "INSERT INTO t VALUES (2);",
        "INSERT INTO t VALUES (3) ;\n  ",
    ] {
        let results = session.execute_batch(one, Batch::Single);
        assert!(matches!(results[..], [Ok(_)]), "{one}: {results:?}");
    }
    let results = session.execute_batch("SELECT COUNT(*) FROM t", Batch::Single);
    match &results[..] {
        [Ok(Output::ResultSet { rows, .. })] => assert_eq!(rows[0][0], Datum::Int(2)),
        other => panic!("{other:?}"),
    }
    let results = session.execute_batch("SELECT 1; SELECT 2", Batch::Multiple);
    assert!(matches!(results[..], [Ok(_), Ok(_)]), "{results:?}");
}

fn run(seed: u64) {
    println!("seed {seed} (set STRATA_TEST_SEED to replay)");
    let mut rng = StdRng::seed_from_u64(seed);
    let (_dir, mut session) = session();
    for setup in [
        "CREATE DATABASE g",
        "USE g",
        "CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, k INT NOT NULL DEFAULT '0', c VARCHAR(3), KEY kk (k))",
        "INSERT INTO t (k, c) VALUES (1, 'a'), (2, 'b'), (3, NULL)",
    ] {
        assert!(session.execute_text(setup).iter().all(Result::is_ok), "{setup}");
    }
    let valid = [
        "SELECT id, k, c FROM t WHERE id = 1",
        "UPDATE t SET k = k + 1 WHERE id BETWEEN 1 AND 2",
        "INSERT INTO t (k, c) VALUES (5, 'z')",
        "SELECT COUNT(*), SUM(k) FROM t GROUP BY c ORDER BY 1 DESC LIMIT 2",
        "DELETE FROM t WHERE k > 100",
    ];
    for i in 0..STATEMENTS {
        let sql = if i % 2 == 0 {
            let n = rng.gen_range(1..14);
            (0..n)
                .map(|_| TOKENS[rng.gen_range(0..TOKENS.len())])
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            // A valid statement with one token replaced, dropped or duplicated.
            let base = valid[rng.gen_range(0..valid.len())];
            let mut words: Vec<&str> = base.split(' ').collect();
            let at = rng.gen_range(0..words.len());
            match rng.gen_range(0..3) {
                0 => words[at] = TOKENS[rng.gen_range(0..TOKENS.len())],
                1 => {
                    words.remove(at);
                }
                _ => words.insert(at, words[at]),
            }
            words.join(" ")
        };
        let outputs = session.execute_text(&sql);
        assert!(!outputs.is_empty(), "no result for {sql}");
        // Prepared too: preparing and executing with NULL parameters must not panic either.
        if let Ok(info) = session.prepare(&sql) {
            let _ = session.execute_prepared(
                info.statement_id,
                vec![strata_sql::Datum::Null; info.param_count as usize],
            );
            session.close_prepared(info.statement_id);
        }
    }
    // The session still works and the table is still consistent with its index.
    let _ = session.execute_text("ROLLBACK");
    let by_scan = session.execute_text("SELECT COUNT(*) FROM t WHERE c IS NULL OR c IS NOT NULL");
    let by_index = session.execute_text("SELECT COUNT(*) FROM t WHERE k >= -9223372036854775807");
    match (&by_scan[0], &by_index[0]) {
        (Ok(Output::ResultSet { rows: a, .. }), Ok(Output::ResultSet { rows: b, .. })) => {
            assert_eq!(a, b)
        }
        other => panic!("{other:?}"),
    }
}
