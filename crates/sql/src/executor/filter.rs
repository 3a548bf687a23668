//! HAVING: the grouped rows whose condition holds.

use crate::error::Result;
use crate::exec::holds;
use crate::expr::Expr;
use crate::planner::physical::Plan;

use super::describe;
use super::{grouped_env, split_aggs, Batch, Exec, Node, Operator};

pub struct Having<'p> {
    input: Box<dyn Operator + 'p>,
    /// Its node of the plan, whose rows EXPLAIN names the condition's columns by.
    node: &'p Plan,
    condition: &'p Expr,
    /// Aggregate values at the end of each row.
    aggs: usize,
}

impl<'p> Having<'p> {
    pub fn new(
        input: Box<dyn Operator + 'p>,
        node: &'p Plan,
        condition: &'p Expr,
        aggs: usize,
    ) -> Having<'p> {
        Having {
            input,
            node,
            condition,
            aggs,
        }
    }
}

impl Operator for Having<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        while let Some(batch) = self.input.next(exec)? {
            let mut kept = Vec::with_capacity(batch.len());
            for row in batch {
                let (values, aggs) = split_aggs(&row, self.aggs);
                if holds(
                    Some(self.condition),
                    values,
                    &grouped_env(exec.ctx, aggs, &[]),
                )? {
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
        let names = describe::Names::of_block(self.node);
        let info = format!("having:{}", describe::exprs([self.condition], &names));
        let input = self.input.explain();
        // TiDB's selectivity of a condition it knows nothing about.
        let est_rows = input.est_rows * 0.8;
        Node::root("Selection", info, vec![input]).estimated(est_rows)
    }
}
