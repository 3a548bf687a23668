//! Subqueries: each row gets the values of the query block's subqueries after its columns,
//! then the conditions that read them are checked.

use std::cmp::Ordering;

use strata_codec::Datum;
use strata_txn::Transaction;

use crate::error::{self, Result};
use crate::exec::{self, holds, Ctx};
use crate::expr::Expr;
use crate::planner::bind::SubqueryKind;
use crate::planner::physical::Plan;
use crate::planner::subquery::SubqueryPlan;
use crate::types::compare;

use super::describe;
use super::{Batch, Exec, Node, Operator};

pub struct Apply<'p> {
    input: Box<dyn Operator + 'p>,
    /// Its node of the plan, whose rows EXPLAIN names the condition's columns by.
    node: &'p Plan,
    subqueries: &'p [SubqueryPlan],
    applier: Applier,
    filter: Option<&'p Expr>,
}

impl<'p> Apply<'p> {
    pub fn new(
        input: Box<dyn Operator + 'p>,
        node: &'p Plan,
        subqueries: &'p [SubqueryPlan],
        filter: Option<&'p Expr>,
    ) -> Apply<'p> {
        Apply {
            input,
            node,
            subqueries,
            applier: Applier::new(subqueries.len()),
            filter,
        }
    }
}

impl Operator for Apply<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        while let Some(mut batch) = self.input.next(exec)? {
            self.applier
                .apply(self.subqueries, &mut batch, exec.txn, exec.ctx)?;
            let mut kept = Vec::with_capacity(batch.len());
            for row in batch {
                if holds(self.filter, &row, exec.ctx)? {
                    kept.push(row);
                }
            }
            if !kept.is_empty() {
                return Ok(Some(kept));
            }
        }
        Ok(None)
    }

    fn explain(&self) -> Node {
        let mut children = vec![self.input.explain()];
        let mut info = Vec::new();
        for (k, sub) in self.subqueries.iter().enumerate() {
            children.push(super::build(&sub.plan).explain());
            let how = if sub.correlated {
                "correlated"
            } else {
                "computed once"
            };
            info.push(format!("subquery#{k}:{how}"));
        }
        if let Some(filter) = self.filter {
            let names = describe::Names::of_block(self.node);
            info.push(format!("then:{}", describe::exprs([filter], &names)));
        }
        Node::root("Apply", info.join(", "), children)
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
