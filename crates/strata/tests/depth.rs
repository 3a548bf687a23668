//! No statement is too long or too deep for the server: chains of 100,000 ORs, ANDs, `+`s and
//! `||`s, a run of 100,001 NOTs, an IN list of 100,000 values and a UNION of 10,000 SELECTs
//! are answered; nesting deeper than the server reads (parentheses, CASE in CASE, a run of
//! operators that must stay left-deep, a longer UNION) gets MySQL's thread stack overrun
//! error (1436), subqueries nested past 63 MySQL's 1473; and the server answers the next
//! statement. Each statement goes through the real `mariadb` client. (`strata-sql`'s
//! `tests/stack.rs` finds how deep each shape is answered.)

mod common;

use common::Playground;

/// Runs one statement in database `d`; returns the client's output and error text.
fn run(p: &Playground, sql: &str) -> (String, String) {
    let out = common::mariadb_reading(p.port, &["--batch", "-N", "d"], sql.as_bytes());
    (
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn chain(op: &str, terms: impl Iterator<Item = String>) -> String {
    terms.collect::<Vec<_>>().join(op)
}

#[test]
fn long_and_deep_statements_are_answered_or_refused_and_the_server_lives_on() {
    let p = Playground::start();
    p.sql(
        None,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY); INSERT INTO d.t VALUES (1), (2)",
    );
    let n = 100_000;
    let answered = [
        (
            "OR",
            format!(
                "SELECT COUNT(*) FROM t WHERE {}",
                chain(" OR ", (0..n).map(|i| format!("id = {i}")))
            ),
            "2",
        ),
        (
            "AND",
            format!(
                "SELECT COUNT(*) FROM t WHERE {}",
                chain(" AND ", (0..n).map(|i| format!("id <> {}", i + 10)))
            ),
            "2",
        ),
        (
            "+",
            format!("SELECT {}", chain(" + ", (0..n).map(|_| "1".to_string()))),
            "100000",
        ),
        (
            "||",
            format!(
                "SELECT COUNT(*) FROM t WHERE {}",
                chain(" || ", (0..n).map(|i| format!("id = {i}")))
            ),
            "2",
        ),
        (
            "IN",
            format!(
                "SELECT COUNT(*) FROM t WHERE id IN ({})",
                chain(", ", (0..n).map(|i| i.to_string()))
            ),
            "2",
        ),
        (
            "NOT",
            format!(
                "SELECT COUNT(*) FROM t WHERE {}id = 1",
                "NOT ".repeat(n + 1)
            ),
            "1",
        ),
        (
            "UNION",
            format!(
                "SELECT COUNT(*), SUM(x) FROM ({}) AS u",
                chain(
                    " UNION ALL ",
                    (0..10_000).map(|i| format!("SELECT {i} AS x"))
                )
            ),
            "10000\t49995000",
        ),
        (
            "UNION DISTINCT after ALL",
            // A DISTINCT union removes the duplicates of every part to its left.
            format!(
                "SELECT COUNT(*) FROM ({} UNION SELECT 0 UNION ALL SELECT 0) AS u",
                chain(
                    " UNION ALL ",
                    (0..100).map(|i| format!("SELECT {}", i % 10))
                )
            ),
            "11",
        ),
    ];
    for (what, sql, expected) in answered {
        let (out, err) = run(&p, &sql);
        assert_eq!(out, expected, "{what}: {err}");
    }

    let refused = [
        (
            "a run of - and +",
            format!(
                "SELECT {}",
                chain(" - 1 + ", (0..n).map(|_| "1".to_string()))
            ),
        ),
        (
            "parentheses",
            format!("SELECT {}1{}", "(".repeat(10_000), ")".repeat(10_000)),
        ),
        (
            "subqueries",
            format!("SELECT {}1{}", "(SELECT ".repeat(1_000), ")".repeat(1_000)),
        ),
        ("unary minus", format!("SELECT {}1", "- ".repeat(10_000))),
        (
            "CASE in CASE",
            format!(
                "SELECT {}1{}",
                "CASE WHEN 1 THEN ".repeat(1_000),
                " END".repeat(1_000)
            ),
        ),
        (
            "UNION",
            chain(" UNION ALL ", (0..n).map(|i| format!("SELECT {i}"))),
        ),
    ];
    for (what, sql) in refused {
        let (out, err) = run(&p, &sql);
        let expected = if what == "subqueries" {
            // MySQL's limit for nested queries, which comes first.
            "ERROR 1473 (HY000)"
        } else {
            "ERROR 1436 (HY000)"
        };
        assert!(err.contains(expected), "{what}: {out} {err}");
    }

    // A syntax error at the end of a long chain: the partial tree is dropped, not the server.
    let (_, err) = run(
        &p,
        &format!("SELECT {} +", chain(" + ", (0..n).map(|_| "1".to_string()))),
    );
    assert!(err.contains("ERROR 1064 (42000)"), "{err}");

    assert_eq!(run(&p, "SELECT 'still here'").0, "still here");
}
