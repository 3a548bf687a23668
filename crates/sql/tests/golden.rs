//! Golden SQL scripts: each file in `tests/scripts/` is a sequence of statements (lines starting
//! with `> `) each followed by the output it must produce. The scripts run against a real
//! in-process stack (SQL layer, transaction client, MVCC over the memory engine, local TSO).
//! Set `STRATA_BLESS=1` to rewrite the expected outputs, then review the diff.

use std::path::Path;
use std::sync::Arc;

use strata_engine::MemoryEngine;
use strata_kv::Storage;
use strata_pd_client::LocalTso;
use strata_sql::{Datum, Output, SqlServer};
use strata_txn::TxnClient;

fn render(output: &Result<Output, strata_sql::SqlError>) -> String {
    match output {
        Ok(Output::Ok {
            affected_rows,
            last_insert_id,
            info,
            ..
        }) => {
            let mut s = format!("ok {affected_rows}");
            if *last_insert_id != 0 {
                s.push_str(&format!(" last_insert_id={last_insert_id}"));
            }
            if !info.is_empty() {
                s.push_str(&format!(" ({info})"));
            }
            s
        }
        Ok(Output::ResultSet { columns, rows }) => {
            let mut lines = vec![columns
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>()
                .join("\t")];
            for row in rows {
                lines.push(
                    row.iter()
                        .map(|d| match d {
                            Datum::Null => "NULL".to_string(),
                            other => {
                                String::from_utf8_lossy(&strata_sql::types::datum_to_text(other))
                                    .into_owned()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join("\t"),
                );
            }
            mask_durations(&lines.join("\n"))
        }
        // `execute_text` collects every result whole: nothing is streamed.
        Ok(Output::Streamed { rows }) => format!("streamed {rows} rows"),
        Err(e) => format!(
            "error {} ({}): {}",
            e.code,
            e.state,
            mask_timestamps(&e.message)
        ),
    }
}

/// Replaces EXPLAIN ANALYZE's measured times (`time:1.23ms`) so outputs are stable.
fn mask_durations(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("time:") {
        out.push_str(&rest[..at + 5]);
        rest = &rest[at + 5..];
        let number = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let unit = ["µs", "ms", "s"]
            .iter()
            .find(|u| number > 0 && rest[number..].starts_with(*u));
        if let Some(unit) = unit {
            out.push_str("<t>");
            rest = &rest[number + unit.len()..];
        }
    }
    out.push_str(rest);
    out
}

/// Replaces runs of 15 or more digits (transaction timestamps) so outputs are stable.
fn mask_timestamps(text: &str) -> String {
    let mut out = String::new();
    let mut digits = String::new();
    for c in text.chars().chain(std::iter::once('\0')) {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        if digits.len() >= 15 {
            out.push_str("<ts>");
        } else {
            out.push_str(&digits);
        }
        digits.clear();
        if c != '\0' {
            out.push(c);
        }
    }
    out
}

fn run_script(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(Storage::new(Arc::new(MemoryEngine::new())).unwrap());
    let tso = Arc::new(LocalTso::open(dir.path()).unwrap());
    let server = SqlServer::open(TxnClient::new(storage, tso)).unwrap();
    let mut sessions = std::collections::HashMap::new();
    let mut current = "a".to_string();
    sessions.insert(current.clone(), server.new_session("root", None).unwrap());

    let mut rendered = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(name) = line.strip_prefix("@session ") {
            // Switches to (or opens) another connection.
            current = name.trim().to_string();
            if !sessions.contains_key(&current) {
                sessions.insert(current.clone(), server.new_session("root", None).unwrap());
            }
            rendered.push_str(line);
            rendered.push('\n');
            continue;
        }
        let Some(sql) = line.strip_prefix("> ") else {
            // Comments and blank lines between blocks are kept as they are.
            if line.starts_with('#') || line.is_empty() {
                rendered.push_str(line);
                rendered.push('\n');
            }
            continue;
        };
        // Skip the old expected output up to the blank line.
        while lines.peek().is_some_and(|l| {
            !l.is_empty()
                && !l.starts_with("> ")
                && !l.starts_with('#')
                && !l.starts_with("@session")
        }) {
            lines.next();
        }
        let session = sessions.get_mut(&current).unwrap();
        rendered.push_str(line);
        rendered.push('\n');
        for output in session.execute_text(sql) {
            rendered.push_str(&render(&output));
            rendered.push('\n');
        }
    }
    if std::env::var_os("STRATA_BLESS").is_some() {
        std::fs::write(path, &rendered).unwrap();
        return;
    }
    if rendered != text {
        let expected: Vec<&str> = text.lines().collect();
        let actual: Vec<&str> = rendered.lines().collect();
        let first = expected
            .iter()
            .zip(&actual)
            .position(|(e, a)| e != a)
            .unwrap_or(expected.len().min(actual.len()));
        panic!(
            "{} differs at line {}:\n expected: {:?}\n   actual: {:?}\n(run with STRATA_BLESS=1 to accept, then review the diff)",
            path.display(),
            first + 1,
            expected.get(first),
            actual.get(first)
        );
    }
}

#[test]
fn golden_scripts() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scripts");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    for path in paths {
        run_script(&path);
    }
}
