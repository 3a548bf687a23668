//! ORDER BY: every row, sorted by the ORDER BY values that follow its projected columns.

use crate::error::Result;
use crate::exec::compare_sort_keys;
use crate::expr::{EvalEnv, Expr};
use crate::planner::query::SelectPlan;

use super::describe;
use super::{drain, once, Batch, Exec, Node, Operator};

pub struct Sort<'p> {
    input: Box<dyn Operator + 'p>,
    plan: &'p SelectPlan,
    order_by: &'p [(Expr, bool)],
    /// The projected columns; the ORDER BY values follow them and are cut off.
    width: usize,
    done: bool,
}

impl<'p> Sort<'p> {
    pub fn new(
        input: Box<dyn Operator + 'p>,
        plan: &'p SelectPlan,
        order_by: &'p [(Expr, bool)],
        width: usize,
    ) -> Sort<'p> {
        Sort {
            input,
            plan,
            order_by,
            width,
            done: false,
        }
    }
}

impl Operator for Sort<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        once(&mut self.done, || {
            let mut rows = drain(self.input.as_mut(), exec)?;
            for row in &rows {
                exec.ctx.keep_row(row)?;
            }
            let width = self.width;
            rows.sort_by(|a, b| compare_sort_keys(&a[width..], &b[width..], self.order_by));
            for row in &mut rows {
                row.truncate(width);
            }
            Ok(rows)
        })
    }

    fn explain(&self) -> Node {
        let names = describe::Names::of_block(self.plan);
        let info = self
            .order_by
            .iter()
            .map(|(e, desc)| {
                let key = describe::exprs([e], &names);
                if *desc {
                    format!("{key}:desc")
                } else {
                    key
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        Node::root("Sort", info, vec![self.input.explain()])
    }
}
