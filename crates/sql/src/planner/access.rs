//! The access path of one table: how its rows are found (point get, batch point get,
//! primary-key range or prefixes, index lookup, full scan), chosen from the WHERE clause's
//! conditions on key columns and the table's statistics by estimated rows read; and which of
//! its columns a statement reads.

use std::sync::Arc;

use strata_codec::Datum;

use crate::catalog::{TableDef, TableStats};
use crate::expr::{BinaryOp, Expr};
/// Rows assumed in a table never analyzed.
const ROWS_UNKNOWN: f64 = 10_000.0;
/// Fraction of rows an equality on one more key column keeps, without better statistics.
const EQ_SELECTIVITY: f64 = 0.1;
/// Fraction of rows a one-sided range keeps.
const OPEN_RANGE_SELECTIVITY: f64 = 0.3;
/// Fraction of rows a two-sided range keeps.
const CLOSED_RANGE_SELECTIVITY: f64 = 0.05;

/// Fraction of rows that bounds on the next key column keep.
fn range_selectivity(low: &Option<RangeBound>, high: &Option<RangeBound>) -> f64 {
    match (low, high) {
        (Some(_), Some(_)) => CLOSED_RANGE_SELECTIVITY,
        (Some(_), None) | (None, Some(_)) => OPEN_RANGE_SELECTIVITY,
        (None, None) => 1.0,
    }
}

/// Relative cost of reading a row through a secondary index instead of by primary key.
const INDEX_LOOKUP_COST: f64 = 2.0;

/// A bound on one key column of a range.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeBound {
    pub expr: Expr,
    pub inclusive: bool,
}

/// How rows of a table are found.
#[derive(Clone, Debug, PartialEq)]
pub enum Access {
    /// One row by its full primary key.
    Point(Vec<Expr>),
    /// Rows by a list of full primary keys.
    Points(Vec<Vec<Expr>>),
    /// Primary-key range: equal prefix, then bounds on the next key column.
    PkRange {
        prefix: Vec<Expr>,
        low: Option<RangeBound>,
        high: Option<RangeBound>,
    },
    /// Secondary index range, then rows by handle.
    Index {
        index: usize,
        prefix: Vec<Expr>,
        low: Option<RangeBound>,
        high: Option<RangeBound>,
    },
    FullScan,
    /// Primary-key ranges, one per equal prefix in a list (`(a, b) IN ((…), …)` on the
    /// first key columns).
    PkPrefixes(Vec<Vec<Expr>>),
    /// Rows computed when the statement was planned (information_schema).
    Memory(crate::infoschema::MemoryRows),
}

/// Where a query's rows come from.
#[derive(Clone, Debug)]
pub struct TableSource {
    pub table: Arc<TableDef>,
    pub access: Access,
    /// Scan in descending key order (to serve ORDER BY … DESC without sorting).
    pub reverse: bool,
    /// Rows arrive in ORDER BY order, so no sort is needed.
    pub ordered: bool,
    /// Positions of the columns the statement reads; the others are left NULL (None: all).
    pub columns: Option<Vec<usize>>,
    /// Each row is followed by its row key (the target of a multi-table UPDATE or DELETE).
    pub with_key: bool,
    /// The scan stops once LIMIT + OFFSET rows of its block passed its conditions: nothing
    /// above it drops, adds or reorders rows ([`crate::planner::optimize::push_down_limit`]).
    pub limited: bool,
    /// The rows the access path is estimated to read (per lookup in an index join): EXPLAIN's
    /// estRows of its scan.
    pub est_rows: f64,
}

impl TableSource {
    /// Every column of the rows `access` finds, in key order.
    pub fn new(table: Arc<TableDef>, access: Access, est_rows: f64) -> TableSource {
        TableSource {
            table,
            access,
            est_rows,
            reverse: false,
            ordered: false,
            columns: None,
            with_key: false,
            limited: false,
        }
    }
}

/// Positions of the columns that `exprs` read, or None when they read all of `width`.
pub fn columns_read<'a>(
    exprs: impl IntoIterator<Item = &'a Expr>,
    width: usize,
) -> Option<Vec<usize>> {
    let mut used = vec![false; width];
    for e in exprs {
        e.walk(&mut |node| {
            if let Expr::Column(i) = node {
                if let Some(slot) = used.get_mut(*i) {
                    *slot = true;
                }
            }
        });
    }
    if used.iter().all(|u| *u) {
        return None;
    }
    Some(
        used.iter()
            .enumerate()
            .filter(|(_, u)| **u)
            .map(|(i, _)| i)
            .collect(),
    )
}

/// What the WHERE clause says about one column.
#[derive(Default, Clone)]
struct ColumnConditions {
    eq: Option<Expr>,
    list: Option<Vec<Expr>>,
    low: Option<RangeBound>,
    high: Option<RangeBound>,
}

/// A `(a, b) IN ((…), …)` condition: the columns and the tuples.
type TupleIn = (Vec<usize>, Vec<Vec<Expr>>);

fn column_conditions(
    conjuncts: &[Expr],
    columns: usize,
) -> (Vec<ColumnConditions>, Option<TupleIn>) {
    let mut out = vec![ColumnConditions::default(); columns];
    let mut tuple_in = None;
    for c in conjuncts {
        // Only conditions on this table's columns can choose its access path.
        if c.columns().iter().any(|&i| i >= columns) {
            continue;
        }
        match c {
            Expr::Binary(op, l, r) => {
                let (column, value, op) = match (l.as_ref(), r.as_ref()) {
                    (Expr::Column(i), v) if v.is_row_independent() => (*i, v.clone(), *op),
                    (v, Expr::Column(i)) if v.is_row_independent() => (*i, v.clone(), flip(*op)),
                    _ => continue,
                };
                let Some(slot) = out.get_mut(column) else {
                    continue;
                };
                match op {
                    BinaryOp::Eq => slot.eq = Some(value),
                    BinaryOp::Gt => {
                        slot.low = Some(RangeBound {
                            expr: value,
                            inclusive: false,
                        })
                    }
                    BinaryOp::GtEq => {
                        slot.low = Some(RangeBound {
                            expr: value,
                            inclusive: true,
                        })
                    }
                    BinaryOp::Lt => {
                        slot.high = Some(RangeBound {
                            expr: value,
                            inclusive: false,
                        })
                    }
                    BinaryOp::LtEq => {
                        slot.high = Some(RangeBound {
                            expr: value,
                            inclusive: true,
                        })
                    }
                    _ => {}
                }
            }
            Expr::Between {
                expr,
                low,
                high,
                negated: false,
            } => {
                if let Expr::Column(i) = expr.as_ref() {
                    if low.is_row_independent() && high.is_row_independent() {
                        out[*i].low = Some(RangeBound {
                            expr: (**low).clone(),
                            inclusive: true,
                        });
                        out[*i].high = Some(RangeBound {
                            expr: (**high).clone(),
                            inclusive: true,
                        });
                    }
                }
            }
            Expr::InList {
                expr,
                list,
                negated: false,
            } => {
                if let Expr::Column(i) = expr.as_ref() {
                    if list.iter().all(Expr::is_row_independent) {
                        out[*i].list = Some(list.clone());
                    }
                }
            }
            Expr::TupleIn {
                exprs,
                list,
                negated: false,
            } => {
                let columns: Option<Vec<usize>> = exprs
                    .iter()
                    .map(|e| {
                        if let Expr::Column(i) = e {
                            Some(*i)
                        } else {
                            None
                        }
                    })
                    .collect();
                if let Some(columns) = columns {
                    if list.iter().flatten().all(Expr::is_row_independent) {
                        tuple_in = Some((columns, list.clone()));
                    }
                }
            }
            _ => {}
        }
    }
    (out, tuple_in)
}

fn flip(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::GtEq => BinaryOp::LtEq,
        other => other,
    }
}

/// Chooses how to find the rows that satisfy `conjuncts`, with the rows it is estimated to
/// read.
pub fn choose_access(
    table: &TableDef,
    conjuncts: &[Expr],
    stats: Option<&TableStats>,
) -> (Access, f64) {
    let (cost, access) = choose_access_costed(table, conjuncts, stats);
    (access.clone(), rows_of_cost(&access, cost))
}

/// The rows an access path whose cost is `cost` reads: an index lookup's cost counts each row
/// [`INDEX_LOOKUP_COST`] times.
pub fn rows_of_cost(access: &Access, cost: f64) -> f64 {
    match access {
        Access::Index { .. } if cost > 1.0 => cost / INDEX_LOOKUP_COST,
        _ => cost,
    }
}

/// Chooses an access path, with the rows it is estimated to read.
pub fn choose_access_costed(
    table: &TableDef,
    conjuncts: &[Expr],
    stats: Option<&TableStats>,
) -> (f64, Access) {
    let (conds, tuple_in) = column_conditions(conjuncts, table.columns.len());
    let pk = table.primary_columns();
    let rows = stats
        .map(|s| s.row_count.max(1) as f64)
        .unwrap_or(ROWS_UNKNOWN);

    if !pk.is_empty() {
        let eqs: Vec<Option<Expr>> = pk.iter().map(|c| conds[*c].eq.clone()).collect();
        if eqs.iter().all(Option::is_some) {
            return (
                1.0,
                Access::Point(eqs.into_iter().map(Option::unwrap).collect()),
            );
        }
        if let Some((columns, list)) = &tuple_in {
            if pk.iter().all(|c| columns.contains(c)) && columns.len() == pk.len() {
                let keys: Vec<Vec<Expr>> = list
                    .iter()
                    .map(|tuple| {
                        pk.iter()
                            .map(|c| tuple[columns.iter().position(|x| x == c).unwrap()].clone())
                            .collect()
                    })
                    .collect();
                return (keys.len() as f64, Access::Points(keys));
            }
            // A list of key prefixes: one range scan each.
            let n = columns.len();
            if n < pk.len() && pk[..n].iter().all(|c| columns.contains(c)) {
                let prefixes: Vec<Vec<Expr>> = list
                    .iter()
                    .map(|tuple| {
                        pk[..n]
                            .iter()
                            .map(|c| tuple[columns.iter().position(|x| x == c).unwrap()].clone())
                            .collect()
                    })
                    .collect();
                let per_prefix = rows * EQ_SELECTIVITY.powi(n as i32);
                return (
                    prefixes.len() as f64 * per_prefix.min(100.0),
                    Access::PkPrefixes(prefixes),
                );
            }
        }
        let prefix_len = eqs.iter().take_while(|e| e.is_some()).count();
        if prefix_len == pk.len() - 1 {
            if let Some(list) = &conds[pk[prefix_len]].list {
                let prefix: Vec<Expr> = eqs[..prefix_len]
                    .iter()
                    .map(|e| e.clone().unwrap())
                    .collect();
                let keys: Vec<Vec<Expr>> = list
                    .iter()
                    .map(|v| prefix.iter().cloned().chain([v.clone()]).collect())
                    .collect();
                return (keys.len() as f64, Access::Points(keys));
            }
        }
    }

    // Candidate: unique index fully matched by equalities.
    let mut best: Option<(f64, Access)> = None;
    for (position, index) in table.indexes.iter().enumerate().filter(|(_, i)| i.public) {
        let eqs: Vec<Option<Expr>> = index.columns.iter().map(|c| conds[*c].eq.clone()).collect();
        let prefix_len = eqs.iter().take_while(|e| e.is_some()).count();
        let prefix: Vec<Expr> = eqs[..prefix_len]
            .iter()
            .map(|e| e.clone().unwrap())
            .collect();
        let next = index.columns.get(prefix_len).map(|c| &conds[*c]);
        let (low, high) = next
            .map(|n| (n.low.clone(), n.high.clone()))
            .unwrap_or((None, None));
        if prefix_len == 0 && low.is_none() && high.is_none() {
            continue;
        }
        let estimate = if prefix_len == index.columns.len() {
            if index.unique {
                1.0
            } else {
                let distinct = stats
                    .and_then(|s| s.index_distinct.get(&index.id))
                    .copied()
                    .unwrap_or(0);
                if distinct > 0 {
                    rows / distinct as f64
                } else {
                    rows * EQ_SELECTIVITY.powi(prefix_len as i32)
                }
            }
        } else {
            rows * EQ_SELECTIVITY.powi(prefix_len as i32) * range_selectivity(&low, &high)
        };
        // An index lookup reads each row twice (entry, then row), except a unique point.
        let estimate = if estimate > 1.0 {
            estimate * INDEX_LOOKUP_COST
        } else {
            estimate
        };
        if best.as_ref().is_none_or(|(b, _)| estimate < *b) {
            best = Some((
                estimate,
                Access::Index {
                    index: position,
                    prefix,
                    low,
                    high,
                },
            ));
        }
    }

    // Candidate: primary-key range.
    let pk_range = if pk.is_empty() {
        None
    } else {
        let prefix: Vec<Expr> = pk.iter().map_while(|c| conds[*c].eq.clone()).collect();
        let next = pk.get(prefix.len()).map(|c| &conds[*c]);
        let (low, high) = next
            .map(|n| (n.low.clone(), n.high.clone()))
            .unwrap_or((None, None));
        if prefix.is_empty() && low.is_none() && high.is_none() {
            None
        } else {
            let estimate =
                rows * EQ_SELECTIVITY.powi(prefix.len() as i32) * range_selectivity(&low, &high);
            let estimate = match (&low, &high) {
                (Some(l), Some(h)) => {
                    literal_span(&l.expr, &h.expr).map_or(estimate, |span| span.min(estimate))
                }
                _ => estimate,
            };
            Some((estimate, Access::PkRange { prefix, low, high }))
        }
    };
    match (best, pk_range) {
        (Some((ie, ia)), Some((pe, pa))) => {
            if pe <= ie {
                (pe, pa)
            } else {
                (ie, ia)
            }
        }
        (Some(choice), None) | (None, Some(choice)) => choice,
        (None, None) => (rows, Access::FullScan),
    }
}

fn literal_span(low: &Expr, high: &Expr) -> Option<f64> {
    match (low, high) {
        (Expr::Literal(Datum::Int(l)), Expr::Literal(Datum::Int(h))) => {
            Some((h - l + 1).max(0) as f64)
        }
        _ => None,
    }
}

/// Serves ORDER BY on the primary key (after its equal prefix) from the scan order.
pub fn order_by_key(source: &mut TableSource, conjuncts: &[Expr], order_by: &[(Expr, bool)]) {
    if order_by.is_empty() {
        return;
    }
    let pk = source.table.primary_columns();
    let (prefix_len, pk_scan) = match &source.access {
        Access::PkRange { prefix, .. } => (prefix.len(), true),
        Access::FullScan => (0, true),
        Access::Point(_) => {
            source.ordered = true;
            return;
        }
        _ => (0, false),
    };
    if !pk_scan || pk.is_empty() {
        return;
    }
    let _ = conjuncts;
    let rest = &pk[prefix_len..];
    if order_by.len() > rest.len() {
        return;
    }
    let descending = order_by[0].1;
    let matches = order_by
        .iter()
        .zip(rest)
        .all(|((e, desc), column)| *e == Expr::Column(*column) && *desc == descending);
    if matches {
        source.ordered = true;
        source.reverse = descending;
    }
}
