//! GROUP BY and aggregate functions: every input row is added to its group; the groups leave
//! as their first row followed by their aggregate values.

use crate::error::Result;
use crate::executor::grouping::Grouping;
use crate::planner::query::SelectPlan;

use super::describe;
use super::{once, Batch, Exec, Held, Node, Operator};
use crate::memory::row_bytes;

pub struct HashAgg<'p> {
    input: Box<dyn Operator + 'p>,
    plan: &'p SelectPlan,
    done: bool,
    /// The bytes of the groups it made.
    memory: u64,
}

impl<'p> HashAgg<'p> {
    pub fn new(input: Box<dyn Operator + 'p>, plan: &'p SelectPlan) -> HashAgg<'p> {
        HashAgg {
            input,
            plan,
            done: false,
            memory: 0,
        }
    }
}

impl Operator for HashAgg<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        let memory = &mut self.memory;
        once(&mut self.done, || {
            let plan = self.plan;
            let mut grouping =
                Grouping::new(&plan.aggs, plan.group_by.len(), plan.rollup, exec.ctx);
            while let Some(batch) = self.input.next(exec)? {
                for row in &batch {
                    grouping.add(&plan.group_by, row, exec.ctx)?;
                }
            }
            let width = plan.width + plan.subqueries.len();
            let groups = grouping.finish(width, &plan.group_by, exec.ctx)?;
            let rows: Batch = groups
                .into_iter()
                .map(|(mut row, aggs)| {
                    row.extend(aggs);
                    row
                })
                .collect();
            *memory = rows.iter().map(|row| row_bytes(row) as u64).sum();
            Ok(rows)
        })
    }

    fn held(&self) -> Option<Held> {
        Some(Held {
            memory: self.memory,
            disk: 0,
        })
    }

    fn explain(&self) -> Node {
        let plan = self.plan;
        let names = describe::Names::of_block(plan);
        let mut info = Vec::new();
        if !plan.group_by.is_empty() {
            info.push(format!(
                "group by:{}",
                describe::exprs(&plan.group_by, &names)
            ));
        }
        if plan.rollup {
            info.push("with rollup".to_string());
        }
        let funcs = names.aggs.join(", ");
        info.push(format!("funcs:{funcs}"));
        Node::root("HashAgg", info.join(", "), vec![self.input.explain()])
    }
}
