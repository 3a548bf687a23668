//! The select list: each row's values in their columns' types, followed by its ORDER BY
//! values when a sort follows.

use strata_codec::Datum;

use crate::error::Result;
use crate::expr::ResultType;
use crate::expr::{conform, Expr};
use crate::planner::physical::Plan;

use super::describe;
use super::{grouped_env, split_aggs, Batch, Exec, Node, Operator};

pub struct Project<'p> {
    input: Box<dyn Operator + 'p>,
    /// Its node of the plan, whose input rows EXPLAIN names the columns by.
    node: &'p Plan,
    /// The select list, and the types its values leave in.
    exprs: &'p [Expr],
    types: &'p [ResultType],
    /// ORDER BY expressions evaluated for the sort above (empty when none sorts).
    order_by: &'p [(Expr, bool)],
    /// Aggregate values and then window values at the end of each row.
    aggs: usize,
    windows: usize,
}

impl<'p> Project<'p> {
    pub fn new(
        input: Box<dyn Operator + 'p>,
        node: &'p Plan,
        exprs: &'p [Expr],
        types: &'p [ResultType],
        order_by: &'p [(Expr, bool)],
        aggs: usize,
        windows: usize,
    ) -> Project<'p> {
        Project {
            input,
            node,
            exprs,
            types,
            order_by,
            aggs,
            windows,
        }
    }
}

impl Operator for Project<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        let Some(batch) = self.input.next(exec)? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(batch.len());
        for row in &batch {
            // Before each row, so that a SLEEP cut short in the only row returns 1 (as in
            // MySQL) while one in a longer result stops the statement.
            exec.ctx.session.check_interrupt()?;
            let (row, windows) = split_aggs(row, self.windows);
            let (row, aggs) = split_aggs(row, self.aggs);
            let env = grouped_env(exec.ctx, aggs, windows);
            // Values leave in their columns' types before DISTINCT compares them, as MySQL's
            // temporary table holds them (two quotients shown as 0.3333 are one row).
            let mut values: Vec<Datum> = Vec::with_capacity(self.exprs.len() + self.order_by.len());
            for (e, t) in self.exprs.iter().zip(self.types) {
                values.push(conform(e.eval(row, &env)?, t));
            }
            for (e, _) in self.order_by {
                values.push(e.eval(row, &env)?);
            }
            out.push(values);
        }
        Ok(Some(out))
    }

    fn explain(&self) -> Node {
        let names = describe::Names::of_block(self.node);
        let info = describe::exprs(self.exprs, &names);
        Node::root("Projection", info, vec![self.input.explain()])
    }
}
