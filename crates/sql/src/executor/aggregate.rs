//! GROUP BY and aggregate functions: every input row is added to its group; the groups leave
//! as their first row followed by their aggregate values.

use crate::error::Result;
use crate::executor::grouping::Grouping;
use crate::planner::query::SelectPlan;

use super::describe;
use super::{once, Batch, Exec, Node, Operator};

pub struct HashAgg<'p> {
    input: Box<dyn Operator + 'p>,
    plan: &'p SelectPlan,
    done: bool,
}

impl<'p> HashAgg<'p> {
    pub fn new(input: Box<dyn Operator + 'p>, plan: &'p SelectPlan) -> HashAgg<'p> {
        HashAgg {
            input,
            plan,
            done: false,
        }
    }
}

impl Operator for HashAgg<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
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
            Ok(rows)
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
