//! Subqueries in expressions: scalar `(SELECT …)`, `EXISTS (…)` and `x IN (SELECT …)`.
//!
//! A query block's binder hands each subquery it meets to a [`Collector`], which plans it with
//! the block's scope as its enclosing scope and gives back `Expr::Column(width + k)`: the k-th
//! subquery's result is an extra column of the block's row. After the FROM rows are found, the
//! executor computes those columns row by row ([`apply`]) and only then checks the conditions
//! that read them. A subquery that does not read the enclosing row runs once per execution.

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;

use sqlparser::ast;
use strata_codec::Datum;
use strata_txn::Transaction;

use crate::api::ColumnType;
use crate::bind::{OuterScope, Scope, SubqueryKind, SubqueryPlanner};
use crate::error::{self, Result};
use crate::exec::{self, Ctx};
use crate::expr::{Expr, ResultType};
use crate::query::{self, PlanContext, SelectPlan};
use crate::types::compare;

/// A planned subquery of a query block.
#[derive(Clone, Debug)]
pub struct SubqueryPlan {
    pub plan: SelectPlan,
    pub kind: SubqueryKind,
    /// Reads the enclosing row, so runs once per row.
    pub correlated: bool,
}

impl SubqueryPlan {
    /// The type of the column that holds its result.
    pub fn result_type(&self) -> ResultType {
        match &self.kind {
            SubqueryKind::Scalar => {
                let mut ty = self
                    .plan
                    .result_types
                    .first()
                    .cloned()
                    .unwrap_or_else(|| ResultType::of(ColumnType::VarString, 255, 0));
                ty.not_null = false;
                ty
            }
            SubqueryKind::Exists { .. } | SubqueryKind::In { .. } => {
                ResultType::of(ColumnType::LongLong, 1, 0)
            }
        }
    }
}

/// Collects the subqueries of one query block while it is bound.
pub struct Collector<'a> {
    cx: &'a PlanContext<'a>,
    /// Width of the block's FROM row; subquery results follow it.
    base_width: usize,
    /// The scope the block is itself nested in, which its subqueries see beyond the block's.
    outer: Option<&'a OuterScope<'a>>,
    plans: RefCell<Vec<SubqueryPlan>>,
}

impl<'a> Collector<'a> {
    pub fn new(cx: &'a PlanContext<'a>, base_width: usize) -> Collector<'a> {
        Collector {
            cx,
            base_width,
            outer: None,
            plans: RefCell::new(Vec::new()),
        }
    }

    /// The collector of a block nested in `outer` (a subquery's own subqueries).
    pub fn nested_in(self, outer: Option<&'a OuterScope<'a>>) -> Collector<'a> {
        Collector { outer, ..self }
    }

    pub fn into_plans(self) -> Vec<SubqueryPlan> {
        self.plans.into_inner()
    }
}

impl SubqueryPlanner for Collector<'_> {
    fn plan(&self, query: &ast::Query, kind: SubqueryKind, scope: &Scope) -> Result<Expr> {
        let outer = OuterScope {
            scope,
            used: Cell::new(false),
            parent: self.outer,
        };
        let mut plan = query::plan_select_in(query, self.cx, Some(&outer))?;
        let exists = matches!(kind, SubqueryKind::Exists { .. });
        if !exists && plan.columns.len() != 1 {
            return Err(error::operand_columns(1));
        }
        if exists && plan.limit.is_none() && plan.offset.is_none() {
            // EXISTS asks whether the subquery has a row: its first row answers.
            plan.limit = Some(Expr::Literal(Datum::Int(1)));
        }
        let mut plans = self.plans.borrow_mut();
        plans.push(SubqueryPlan {
            plan,
            kind,
            correlated: outer.used.get(),
        });
        Ok(Expr::Column(self.base_width + plans.len() - 1))
    }
}

/// Appends each subquery's result to every row.
pub fn apply(
    subqueries: &[SubqueryPlan],
    rows: &mut [Vec<Datum>],
    txn: &mut Transaction,
    ctx: &Ctx,
) -> Result<()> {
    Applier::new(subqueries.len()).apply(subqueries, rows, txn, ctx)
}

/// Computes a query block's subqueries for its rows, batch after batch; the results of
/// those that do not read the row are computed on first use and kept.
pub struct Applier {
    once: Vec<Option<Vec<Vec<Datum>>>>,
}

impl Applier {
    pub fn new(subqueries: usize) -> Applier {
        Applier {
            once: vec![None; subqueries],
        }
    }

    /// Appends each subquery's result to every row of `rows`.
    pub fn apply(
        &mut self,
        subqueries: &[SubqueryPlan],
        rows: &mut [Vec<Datum>],
        txn: &mut Transaction,
        ctx: &Ctx,
    ) -> Result<()> {
        for row in rows.iter_mut() {
            let width = row.len();
            for (k, sub) in subqueries.iter().enumerate() {
                // Each result joins the row at once: a later IN may compare an earlier result.
                let computed;
                let result: &[Vec<Datum>] = if sub.correlated {
                    // The outer row of a subquery: this row, then the row this block is
                    // nested in.
                    let outer_row;
                    let outer: &[Datum] = if ctx.outer.is_empty() {
                        &row[..width]
                    } else {
                        outer_row = [&row[..width], ctx.outer].concat();
                        &outer_row
                    };
                    computed = exec::execute_select(&sub.plan, txn, &ctx.with_outer(outer))?.0;
                    &computed
                } else {
                    if self.once[k].is_none() {
                        self.once[k] = Some(exec::execute_select(&sub.plan, txn, ctx)?.0);
                    }
                    self.once[k].as_deref().expect("computed above")
                };
                let v = value(sub, result, row, ctx)?;
                row.push(v);
            }
        }
        Ok(())
    }
}

/// The column value of a subquery that returned `result` for `row`.
fn value(sub: &SubqueryPlan, result: &[Vec<Datum>], row: &[Datum], ctx: &Ctx) -> Result<Datum> {
    Ok(match &sub.kind {
        SubqueryKind::Scalar => {
            if result.len() > 1 {
                return Err(error::subquery_rows());
            }
            result
                .first()
                .and_then(|r| r.first().cloned())
                .unwrap_or(Datum::Null)
        }
        SubqueryKind::Exists { negated } => Datum::Int(i64::from(result.is_empty() == *negated)),
        SubqueryKind::In { expr, negated } => {
            // Nothing is in an empty set, not even NULL.
            if result.is_empty() {
                return Ok(Datum::Int(i64::from(*negated)));
            }
            let v = expr.eval(row, ctx)?;
            if v == Datum::Null {
                return Ok(Datum::Null);
            }
            let mut saw_null = false;
            for r in result {
                match compare(&v, r.first().unwrap_or(&Datum::Null)) {
                    Some(Ordering::Equal) => return Ok(Datum::Int(i64::from(!*negated))),
                    None => saw_null = true,
                    _ => {}
                }
            }
            if saw_null {
                Datum::Null
            } else {
                Datum::Int(i64::from(*negated))
            }
        }
    })
}
