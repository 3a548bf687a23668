//! Subqueries: each row gets the values of the query block's subqueries after its columns,
//! then the conditions that read them are checked.

use crate::error::Result;
use crate::exec::holds;
use crate::expr::Expr;
use crate::query::SelectPlan;
use crate::subquery::{Applier, SubqueryPlan};

use super::describe;
use super::{Batch, Exec, Node, Operator};

pub struct Apply<'p> {
    input: Box<dyn Operator + 'p>,
    plan: &'p SelectPlan,
    subqueries: &'p [SubqueryPlan],
    applier: Applier,
    filter: Option<&'p Expr>,
}

impl<'p> Apply<'p> {
    pub fn new(input: Box<dyn Operator + 'p>, plan: &'p SelectPlan) -> Apply<'p> {
        Apply {
            input,
            plan,
            subqueries: &plan.subqueries,
            applier: Applier::new(plan.subqueries.len()),
            filter: plan.post_filter.as_ref(),
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
            let names = describe::Names::of_block(self.plan);
            info.push(format!("then:{}", describe::exprs([filter], &names)));
        }
        Node::root("Apply", info.join(", "), children)
    }
}
