//! Known differences: answers where Strata departs from MariaDB on purpose, each with its
//! reason. A difference listed here is counted, not failed; anything else is a failure.
//!
//! Only departures that a MySQL user would accept belong here (MariaDB quirks that MySQL 8 does
//! not share, or limits Strata documents). A Strata bug is fixed, not listed.

use crate::query::{Expr, Query, Select};
use crate::server::Outcome;

/// Asks the peer another query (a known difference may check that the peer contradicts
/// itself).
pub type Ask<'a> = dyn FnMut(&Query) -> Outcome + 'a;

/// One known difference.
pub struct Known {
    /// A short name, used in reports and counts.
    pub name: &'static str,
    /// Why Strata answers differently, and why that is acceptable.
    pub reason: &'static str,
    /// Whether the two answers (peer's, Strata's) to `query` are this difference.
    pub matches: fn(query: &Query, peer: &Outcome, strata: &Outcome, ask: &mut Ask) -> bool,
}

/// Every known difference.
pub const KNOWN: &[Known] = &[
    Known {
        name: "constant-distinct-offset",
        reason: "MariaDB 10.11 returns the one row of a SELECT DISTINCT whose columns are all \
                 constants even when OFFSET skips it; MySQL 8 and Strata return no row",
        matches: constant_distinct_offset,
    },
    Known {
        name: "having-over-const-table",
        reason: "MariaDB 10.11 evaluates the HAVING of an aggregate over an empty join with the \
                 values of a one-row table in it, and returns a row although the aggregate \
                 that HAVING tests is NULL (it says so when asked for the aggregate itself); \
                 MySQL 8 and Strata return no row",
        matches: having_over_const_table,
    },
    Known {
        name: "grouped-aggregate-of-quotient",
        reason: "MariaDB 10.11 rounds each quotient (or MIN/MAX of quotients) to its shown \
                 decimals before SUM or AVG adds it up, or before an expression uses it, \
                 when the rows of several groups go through a temporary table, and keeps \
                 every digit otherwise (one group, or no GROUP BY: `MIN(c5 / c1 / id) + 8` \
                 is 7.9999909748 for one row alone and 7.9999909747 grouped); Strata always \
                 uses the quotients as computed",
        matches: grouped_aggregate_of_quotient,
    },
    Known {
        name: "overflow-in-dropped-row",
        reason: "MariaDB 10.11 may compute the select list of rows that a semi-join later \
                 drops, and fail with 1690 (out of range) on one of them; Strata filters \
                 first, and here returned no row at all, so it computed no value to overflow",
        matches: overflow_in_dropped_row,
    },
];

/// The known difference that explains two answers, if any.
pub fn explain(
    query: &Query,
    peer: &Outcome,
    strata: &Outcome,
    ask: &mut Ask,
) -> Option<&'static Known> {
    KNOWN.iter().find(|k| (k.matches)(query, peer, strata, ask))
}

fn constant_distinct_offset(query: &Query, peer: &Outcome, strata: &Outcome, _: &mut Ask) -> bool {
    let offset = query.limit.is_some_and(|(_, offset)| offset > 0);
    let constant_distinct = query
        .selects
        .iter()
        .any(|s| s.distinct && s.items.iter().all(Expr::is_constant));
    matches!((peer, strata), (Outcome::Rows(p), Outcome::Rows(s)) if p.len() == 1 && s.is_empty())
        && offset
        && constant_distinct
}

fn having_over_const_table(query: &Query, peer: &Outcome, strata: &Outcome, ask: &mut Ask) -> bool {
    let [select] = query.selects.as_slice() else {
        return false;
    };
    let Some(having) = select.having.clone() else {
        return false;
    };
    let shape = select.group_by.is_empty()
        && matches!((peer, strata), (Outcome::Rows(p), Outcome::Rows(s)) if p.len() == 1 && s.is_empty());
    if !shape {
        return false;
    }
    // The peer's own value of the HAVING condition, over the same rows.
    let probe = Query::single(Select {
        items: vec![having],
        having: None,
        distinct: false,
        ..select.clone()
    });
    matches!(ask(&probe), Outcome::Rows(rows)
        if rows.len() == 1 && rows[0].first().is_some_and(|v| v.as_deref() != Some(b"1".as_slice())))
}

fn grouped_aggregate_of_quotient(
    query: &Query,
    peer: &Outcome,
    strata: &Outcome,
    _: &mut Ask,
) -> bool {
    fn has_quotient(e: &Expr) -> bool {
        matches!(e, Expr::Binary { op: "/", .. }) || e.children().into_iter().any(has_quotient)
    }
    fn aggregates_quotient(e: &Expr) -> bool {
        match e {
            Expr::Aggregate {
                name: "SUM" | "AVG" | "MIN" | "MAX",
                arg: Some(arg),
                ..
            } => has_quotient(arg),
            other => other.children().into_iter().any(aggregates_quotient),
        }
    }
    matches!((peer, strata), (Outcome::Rows(_), Outcome::Rows(_)))
        && query.selects.iter().any(|s| {
            !s.group_by.is_empty()
                && s.items
                    .iter()
                    .chain(s.having.iter())
                    .any(aggregates_quotient)
        })
}

fn overflow_in_dropped_row(_: &Query, peer: &Outcome, strata: &Outcome, _: &mut Ask) -> bool {
    matches!(peer, Outcome::Error { code: 1690, .. })
        && matches!(strata, Outcome::Rows(rows) if rows.is_empty())
}
