//! `UNION [ALL | DISTINCT]` of SELECTs.
//!
//! A union plans as a [`SelectPlan`] whose `union` holds its parts: executing it runs each
//! part and concatenates their rows. An ORDER BY or LIMIT of the whole union makes it a
//! derived table of `SELECT * FROM (<union>) AS union_rows ORDER BY … LIMIT …`, so those
//! clauses name the first SELECT's columns, as in MySQL.

use std::collections::HashSet;
use std::sync::Arc;

use sqlparser::ast::{self, SetExpr, SetOperator, SetQuantifier, TableFactor};
use strata_codec::Datum;
use strata_txn::Transaction;
use strata_types::Key;

use crate::api::{ColumnInfo, ColumnType, SqlError};
use crate::bind::OuterScope;
use crate::catalog::Schema;
use crate::error::{self, Result};
use crate::exec::{self, group_key, Ctx};
use crate::expr::{Expr, ResultType};
use crate::query::{self, RowLock, SelectPlan};

/// The parts of a union, left to right.
#[derive(Clone, Debug)]
pub struct UnionPlan {
    pub parts: Vec<SelectPlan>,
    /// Rows of parts before this index are made distinct (a `UNION DISTINCT` removes the
    /// duplicates of everything to its left, ALL or not); later parts are appended as they
    /// are.
    pub distinct_until: usize,
}

/// The alias of a union read as a derived table.
const UNION_ALIAS: &str = "union_rows";

/// Plans `query`, whose body is a set operation.
pub fn plan(
    query: &ast::Query,
    schema: &Schema,
    database: Option<&str>,
    outer: Option<&OuterScope<'_>>,
) -> Result<SelectPlan> {
    if query.order_by.is_some() || query.limit_clause.is_some() {
        return plan_ordered(query, schema, database, outer);
    }
    let mut bodies = Vec::new();
    flatten(&query.body, &mut bodies)?;
    let mut parts = Vec::new();
    let mut distinct_until = 0;
    for (i, (body, distinct)) in bodies.into_iter().enumerate() {
        let mut part = query.clone();
        *part.body = body.clone();
        parts.push(query::plan_select_in(&part, schema, database, outer)?);
        if distinct {
            distinct_until = i + 1;
        }
    }
    let width = parts[0].columns.len();
    if parts.iter().any(|p| p.columns.len() != width) {
        return Err(SqlError::new(
            1222,
            "21000",
            "The used SELECT statements have a different number of columns",
        ));
    }
    let result_types = merged_types(&parts);
    let columns: Arc<[ColumnInfo]> = parts[0]
        .columns
        .iter()
        .zip(&result_types)
        .map(|(c, ty)| ColumnInfo {
            column_type: ty.column_type,
            column_length: ty.length,
            decimals: ty.decimals,
            ..c.clone()
        })
        .collect();
    Ok(SelectPlan {
        source: None,
        filter: None,
        aggregate: false,
        aggs: Vec::new(),
        group_by: Vec::new(),
        having: None,
        projection: (0..width).map(Expr::Column).collect(),
        result_types,
        columns,
        distinct: false,
        order_by: Vec::new(),
        limit: None,
        offset: None,
        lock: RowLock::None,
        join: None,
        subqueries: Vec::new(),
        post_filter: None,
        width,
        union: Some(Box::new(UnionPlan {
            parts,
            distinct_until,
        })),
    })
}

/// `SELECT * FROM (<the union>) AS union_rows` with the union's ORDER BY and LIMIT.
fn plan_ordered(
    query: &ast::Query,
    schema: &Schema,
    database: Option<&str>,
    outer: Option<&OuterScope<'_>>,
) -> Result<SelectPlan> {
    let template = format!("SELECT * FROM (SELECT 1) AS {UNION_ALIAS}");
    let Some(ast::Statement::Query(mut wrapper)) = crate::parse::parse(&template)?.statements.pop()
    else {
        unreachable!("the wrapper parses as a query");
    };
    let mut inner = query.clone();
    inner.order_by = None;
    inner.limit_clause = None;
    let SetExpr::Select(select) = wrapper.body.as_mut() else {
        unreachable!("the wrapper is a SELECT");
    };
    let Some(TableFactor::Derived { subquery, .. }) =
        select.from.first_mut().map(|from| &mut from.relation)
    else {
        unreachable!("the wrapper reads a derived table");
    };
    **subquery = inner;
    wrapper.order_by = query.order_by.clone();
    wrapper.limit_clause = query.limit_clause.clone();
    query::plan_select_in(&wrapper, schema, database, outer)
}

/// The SELECTs of a chain of unions, each with whether the union before it is DISTINCT.
fn flatten<'q>(body: &'q SetExpr, out: &mut Vec<(&'q SetExpr, bool)>) -> Result<()> {
    match body {
        SetExpr::SetOperation {
            op: SetOperator::Union,
            set_quantifier,
            left,
            right,
        } => {
            let distinct = match set_quantifier {
                SetQuantifier::All => false,
                SetQuantifier::Distinct | SetQuantifier::None => true,
                other => return Err(error::unsupported(format!("UNION {other}"))),
            };
            flatten(left, out)?;
            let start = out.len();
            flatten(right, out)?;
            out[start].1 = distinct;
            Ok(())
        }
        SetExpr::SetOperation { op, .. } => Err(error::unsupported(op)),
        SetExpr::Query(q) if q.order_by.is_none() && q.limit_clause.is_none() => {
            flatten(&q.body, out)
        }
        other => {
            out.push((other, false));
            Ok(())
        }
    }
}

/// Each column's type: the parts' common type, or text where they differ.
fn merged_types(parts: &[SelectPlan]) -> Vec<ResultType> {
    (0..parts[0].result_types.len())
        .map(|i| {
            let first = &parts[0].result_types[i];
            let same = parts
                .iter()
                .all(|p| p.result_types[i].column_type == first.column_type);
            let longest = parts
                .iter()
                .map(|p| p.result_types[i].length)
                .max()
                .unwrap_or(first.length);
            if same {
                ResultType {
                    length: longest,
                    decimals: parts
                        .iter()
                        .map(|p| p.result_types[i].decimals)
                        .max()
                        .unwrap_or(first.decimals),
                    unsigned: parts.iter().all(|p| p.result_types[i].unsigned),
                    not_null: parts.iter().all(|p| p.result_types[i].not_null),
                    ..first.clone()
                }
            } else if let Some(numeric) = merged_number(parts.iter().map(|p| &p.result_types[i])) {
                numeric
            } else {
                ResultType::of(ColumnType::VarString, longest.max(255), 0)
            }
        })
        .collect()
}

/// The common type of numbers of different types: a double if any is, else a decimal if any
/// is, else a BIGINT. `None` when one is not a number.
fn merged_number<'t>(types: impl Iterator<Item = &'t ResultType>) -> Option<ResultType> {
    use ColumnType::*;
    let (mut double, mut decimal, mut decimals) = (false, false, 0);
    for ty in types {
        match ty.column_type {
            Double | Float => double = true,
            NewDecimal => {
                decimal = true;
                decimals = decimals.max(ty.decimals);
            }
            Tiny | Short | Int24 | Long | LongLong => {}
            _ => return None,
        }
    }
    Some(if double {
        ResultType::of(Double, 22, 31)
    } else if decimal {
        ResultType::of(NewDecimal, 65, decimals)
    } else {
        ResultType::of(LongLong, 21, 0)
    })
}

/// Runs each part and concatenates their rows.
pub fn execute(
    union: &UnionPlan,
    txn: &mut Transaction,
    ctx: &Ctx,
) -> Result<(Vec<Vec<Datum>>, Vec<Key>)> {
    let mut rows = Vec::new();
    let mut seen = HashSet::new();
    for (i, part) in union.parts.iter().enumerate() {
        let (part_rows, _) = exec::execute_select(part, txn, ctx)?;
        if i < union.distinct_until {
            rows.extend(part_rows.into_iter().filter(|r| seen.insert(group_key(r))));
        } else {
            rows.extend(part_rows);
        }
    }
    Ok((rows, Vec::new()))
}
