//! Comparing two servers' answers to one query.
//!
//! Without ORDER BY the answers are multisets of rows. With ORDER BY the order is fixed only
//! between rows whose ORDER BY values differ, so each answer is cut into runs of equal ORDER BY
//! values: the runs must come in the same order, and each run must hold the same multiset.
//! The peer (MariaDB) is the oracle of how values sort, so the tester need not know collations.

use std::fmt::Write;

use crate::server::Outcome;

type Row = Vec<Option<Vec<u8>>>;

/// How two answers differ; the shrinker keeps a smaller query only if it fails the same way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// Both answered with rows, and the rows differ.
    Rows,
    /// Only Strata failed, with this error code.
    StrataError(u16),
    /// Only the peer failed, with this error code.
    PeerError(u16),
    /// Strata did not answer (a timeout or a dropped connection).
    StrataLost,
}

/// Compares the peer's answer (`expected`) with Strata's (`actual`). `order_by` holds the
/// output positions of the query's ORDER BY (empty: none).
pub fn compare(expected: &Outcome, actual: &Outcome, order_by: &[usize]) -> Option<Difference> {
    match (expected, actual) {
        (Outcome::Rows(e), Outcome::Rows(a)) => {
            if same_rows(e, a, order_by) {
                None
            } else {
                Some(Difference::Rows)
            }
        }
        (_, Outcome::Lost(_)) => Some(Difference::StrataLost),
        // Both failed: the query is one that MySQL refuses too.
        (Outcome::Error { .. } | Outcome::Lost(_), Outcome::Error { .. }) => None,
        (Outcome::Rows(_), Outcome::Error { code, .. }) => Some(Difference::StrataError(*code)),
        (Outcome::Error { code, .. }, Outcome::Rows(_)) => Some(Difference::PeerError(*code)),
        (Outcome::Lost(_), Outcome::Rows(_)) => Some(Difference::PeerError(0)),
    }
}

fn same_rows(expected: &[Row], actual: &[Row], order_by: &[usize]) -> bool {
    if expected.len() != actual.len() {
        return false;
    }
    let expected_runs = runs(expected, order_by);
    let actual_runs = runs(actual, order_by);
    expected_runs.len() == actual_runs.len()
        && expected_runs
            .into_iter()
            .zip(actual_runs)
            .all(|(mut e, mut a)| {
                e.sort();
                a.sort();
                e == a
            })
}

/// Consecutive rows with equal values at `positions` (one run of everything without them).
fn runs<'a>(rows: &'a [Row], positions: &[usize]) -> Vec<Vec<&'a Row>> {
    let key = |row: &Row| -> Vec<Option<Vec<u8>>> {
        positions
            .iter()
            .map(|&p| row.get(p).cloned().flatten())
            .collect()
    };
    if positions.is_empty() {
        return vec![rows.iter().collect()];
    }
    let mut out: Vec<Vec<&Row>> = Vec::new();
    let mut last_key = None;
    for row in rows {
        let k = key(row);
        if last_key.as_ref() != Some(&k) {
            out.push(Vec::new());
            last_key = Some(k);
        }
        out.last_mut().expect("a run").push(row);
    }
    out
}

/// An answer as text for a report: at most `rows_max` rows, tab-separated, NULL as NULL.
pub fn render(outcome: &Outcome, rows_max: usize) -> String {
    match outcome {
        Outcome::Error { code, message } => format!("error {code}: {message}"),
        Outcome::Lost(why) => format!("no answer: {why}"),
        Outcome::Rows(rows) => {
            let mut text = format!("{} row(s)", rows.len());
            for row in rows.iter().take(rows_max) {
                text.push_str("\n  ");
                let cells: Vec<String> = row
                    .iter()
                    .map(|v| match v {
                        None => "NULL".to_string(),
                        Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
                    })
                    .collect();
                text.push_str(&cells.join("\t"));
            }
            if rows.len() > rows_max {
                let _ = write!(text, "\n  … {} more", rows.len() - rows_max);
            }
            text
        }
    }
}

/// The rows one answer has more of than the other: (the peer's extra rows, Strata's extra
/// rows), as multisets; empty when either failed.
pub fn extra_rows(expected: &Outcome, actual: &Outcome) -> (Vec<Row>, Vec<Row>) {
    let (Outcome::Rows(e), Outcome::Rows(a)) = (expected, actual) else {
        return (Vec::new(), Vec::new());
    };
    let (mut e, mut a) = (e.clone(), a.clone());
    e.sort();
    a.sort();
    let (mut only_e, mut only_a) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < e.len() || j < a.len() {
        match (e.get(i), a.get(j)) {
            (Some(x), Some(y)) if x == y => {
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                only_e.push(x.clone());
                i += 1;
            }
            (Some(_), Some(y)) => {
                only_a.push(y.clone());
                j += 1;
            }
            (Some(x), None) => {
                only_e.push(x.clone());
                i += 1;
            }
            (None, Some(y)) => {
                only_a.push(y.clone());
                j += 1;
            }
            (None, None) => break,
        }
    }
    (only_e, only_a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(values: &[&[&str]]) -> Outcome {
        Outcome::Rows(
            values
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|v| (*v != "NULL").then(|| v.as_bytes().to_vec()))
                        .collect()
                })
                .collect(),
        )
    }

    #[test]
    fn unordered_answers_are_multisets() {
        let a = rows(&[&["1", "x"], &["2", "y"], &["1", "x"]]);
        let b = rows(&[&["2", "y"], &["1", "x"], &["1", "x"]]);
        assert_eq!(compare(&a, &b, &[]), None);
        let c = rows(&[&["2", "y"], &["2", "y"], &["1", "x"]]);
        assert_eq!(compare(&a, &c, &[]), Some(Difference::Rows));
    }

    #[test]
    fn ordered_answers_may_permute_only_ties() {
        let peer = rows(&[&["1", "b"], &["1", "a"], &["2", "c"], &["NULL", "d"]]);
        let ties_swapped = rows(&[&["1", "a"], &["1", "b"], &["2", "c"], &["NULL", "d"]]);
        assert_eq!(compare(&peer, &ties_swapped, &[0]), None);
        let out_of_order = rows(&[&["2", "c"], &["1", "a"], &["1", "b"], &["NULL", "d"]]);
        assert_eq!(compare(&peer, &out_of_order, &[0]), Some(Difference::Rows));
        // The same runs, but a value moved between them.
        let moved = rows(&[&["1", "a"], &["1", "c"], &["2", "b"], &["NULL", "d"]]);
        assert_eq!(compare(&peer, &moved, &[0]), Some(Difference::Rows));
    }

    #[test]
    fn errors_on_one_side_differ() {
        let ok = rows(&[&["1"]]);
        let error = Outcome::Error {
            code: 1105,
            message: "x".into(),
        };
        assert_eq!(
            compare(&ok, &error, &[]),
            Some(Difference::StrataError(1105))
        );
        assert_eq!(compare(&error, &ok, &[]), Some(Difference::PeerError(1105)));
        assert_eq!(compare(&error, &error, &[]), None);
        let lost = Outcome::Lost("gone".into());
        assert_eq!(compare(&ok, &lost, &[]), Some(Difference::StrataLost));
    }
}
