//! `UNION [ALL | DISTINCT]` of SELECTs.
//!
//! A union plans as a [`SelectPlan`] whose root is a [`physical::Plan::Union`] of its parts; the executor's union
//! operator runs each part and concatenates their rows. An ORDER BY or LIMIT of the whole union makes it a
//! derived table of `SELECT * FROM (<union>) AS union_rows ORDER BY … LIMIT …`, so those
//! clauses name the first SELECT's columns, as in MySQL.

use std::sync::Arc;

use sqlparser::ast::{self, SetExpr, SetOperator, SetQuantifier};

use crate::api::ColumnInfo;
use crate::error::{self, Error, Result};
use crate::expr::ResultType;
use crate::infoschema::MemoryRows;
use crate::planner::physical::{self, SelectPlan};
use crate::planner::query::{self, PlanContext, RowLock};
use crate::planner::scope::OuterScope;

/// The parts of a union, left to right.
#[derive(Clone, Debug)]
pub struct UnionPlan {
    pub parts: Vec<SelectPlan>,
    /// Rows of parts before this index are made distinct (a `UNION DISTINCT` removes the
    /// duplicates of everything to its left, ALL or not); later parts are appended as they
    /// are.
    pub distinct_until: usize,
    /// A recursive CTE's union: its later parts run again over the rows of the round before.
    pub recursion: Option<Recursion>,
    /// INTERSECT or EXCEPT of the two parts, instead of their union.
    pub combine: Option<Combine>,
}

/// `left INTERSECT right` or `left EXCEPT right`, DISTINCT (each row once) or ALL (as many times
/// as the counts on both sides allow).
#[derive(Clone, Copy, Debug)]
pub struct Combine {
    pub intersect: bool,
    pub all: bool,
}

/// How a recursive CTE's union runs: the seed parts once, then the recursive parts in rounds,
/// each reading the rows the round before added, until a round adds none.
#[derive(Clone, Debug)]
pub struct Recursion {
    /// Parts before this index are the seeds.
    pub seeds: usize,
    /// The rows of the last round, which the recursive parts read as the CTE's table.
    pub working: MemoryRows,
    /// `UNION DISTINCT`: a row already produced is not added again (and so ends a cycle).
    pub distinct: bool,
}

/// The alias of a union read as a derived table.
const UNION_ALIAS: &str = "union_rows";

/// Plans `query`, whose body is a set operation.
pub fn plan(
    query: &ast::Query,
    cx: &PlanContext,
    outer: Option<&OuterScope<'_>>,
) -> Result<SelectPlan> {
    if query.order_by.is_some() || query.limit_clause.is_some() {
        return plan_ordered(query, cx, outer);
    }
    if let SetExpr::SetOperation {
        op: op @ (SetOperator::Intersect | SetOperator::Except),
        set_quantifier,
        left,
        right,
    } = query.body.as_ref()
    {
        let all = match set_quantifier {
            SetQuantifier::All => true,
            SetQuantifier::Distinct | SetQuantifier::None => false,
            other => return Err(error::unsupported(format!("{op} {other}"))),
        };
        let shell = shell(query);
        let side = |body: &SetExpr| {
            let mut part = shell.clone();
            *part.body = body.clone();
            query::plan_select_in(&part, cx, outer)
        };
        let mut plan = plan_parts(vec![side(left)?, side(right)?], 0)?;
        if let physical::Plan::Union(union) = &mut plan.root {
            union.combine = Some(Combine {
                intersect: *op == SetOperator::Intersect,
                all,
            });
        }
        return Ok(plan);
    }
    let mut bodies = Vec::new();
    flatten(&query.body, &mut bodies)?;
    let mut parts = Vec::new();
    let mut distinct_until = 0;
    let shell = shell(query);
    for (i, (body, distinct)) in bodies.into_iter().enumerate() {
        let mut part = shell.clone();
        *part.body = body.clone();
        parts.push(query::plan_select_in(&part, cx, outer)?);
        if distinct {
            distinct_until = i + 1;
        }
    }
    plan_parts(parts, distinct_until)
}

/// `query` with an empty body: what each part is planned in (its WITH clause), copied once
/// rather than with the whole union for every part.
fn shell(query: &ast::Query) -> ast::Query {
    ast::Query {
        body: Box::new(crate::parser::synth::no_rows()),
        ..query.clone()
    }
}

/// The plan of a union of planned parts.
pub fn plan_parts(mut parts: Vec<SelectPlan>, distinct_until: usize) -> Result<SelectPlan> {
    let width = parts[0].columns.len();
    if parts.iter().any(|p| p.columns.len() != width) {
        return Err(Error::new(
            1222,
            "21000",
            "The used SELECT statements have a different number of columns",
        ));
    }
    let result_types = merged_types(&parts);
    // Each part's values leave it in the union's types (a part's 1 is the union's 1.00), so
    // that DISTINCT compares them as the client will see them. A DISTINCT part shows them in
    // its own types first, as MySQL's does through its own temporary table (its quotient 1/3
    // is 0.3333 before it is the union's 0.333300).
    for part in parts.iter_mut().filter(|p| !p.is_distinct()) {
        part.result_types.clone_from(&result_types);
    }
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
        root: physical::Plan::Union(Box::new(UnionPlan {
            parts,
            distinct_until,
            recursion: None,
            combine: None,
        })),
        result_types,
        columns,
        lock: RowLock::None,
    })
}

/// `SELECT * FROM (<the union>) AS union_rows` with the union's ORDER BY and LIMIT.
fn plan_ordered(
    query: &ast::Query,
    cx: &PlanContext,
    outer: Option<&OuterScope<'_>>,
) -> Result<SelectPlan> {
    let mut inner = query.clone();
    inner.order_by = None;
    inner.limit_clause = None;
    let mut wrapper = crate::parser::synth::select(
        vec![ast::SelectItem::Wildcard(
            ast::WildcardAdditionalOptions::default(),
        )],
        vec![crate::parser::synth::derived(inner, UNION_ALIAS)],
    );
    wrapper.order_by = query.order_by.clone();
    wrapper.limit_clause = query.limit_clause.clone();
    query::plan_select_in(&wrapper, cx, outer)
}

/// The SELECTs of a chain of unions, each with whether the union before it is DISTINCT.
pub fn flatten<'q>(body: &'q SetExpr, out: &mut Vec<(&'q SetExpr, bool)>) -> Result<()> {
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
        // INTERSECT and EXCEPT bind tighter: each is one part of the union, planned by `plan`.
        other @ SetExpr::SetOperation {
            op: SetOperator::Intersect | SetOperator::Except,
            ..
        } => {
            out.push((other, false));
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

/// Each column's type: what the parts' types merge into, as MySQL merges them.
fn merged_types(parts: &[SelectPlan]) -> Vec<ResultType> {
    (0..parts[0].result_types.len())
        .map(|i| {
            let types: Vec<ResultType> = parts.iter().map(|p| p.result_types[i].clone()).collect();
            crate::expr::merged_type(&types)
        })
        .collect()
}
