//! UNION, INTERSECT and EXCEPT of query blocks, and recursive CTEs (`crate::union`).

use crate::error::Result;
use crate::expr::ResultType;
use crate::union::UnionPlan;

use super::{Batch, Exec, Node, Operator};

pub struct Union<'p> {
    plan: &'p UnionPlan,
    types: &'p [ResultType],
    done: bool,
}

impl<'p> Union<'p> {
    pub fn new(plan: &'p UnionPlan, types: &'p [ResultType]) -> Union<'p> {
        Union {
            plan,
            types,
            done: false,
        }
    }
}

impl Operator for Union<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(None);
        }
        let (rows, _) = crate::union::execute(self.plan, self.types, exec.txn, exec.ctx)?;
        Ok((!rows.is_empty()).then_some(rows))
    }

    fn explain(&self) -> Node {
        let plan = self.plan;
        let name = match (&plan.recursion, plan.combine) {
            (Some(_), _) => "RecursiveUnion",
            (None, Some(how)) if how.intersect => "Intersect",
            (None, Some(_)) => "Except",
            (None, None) => "Union",
        };
        let info = if plan.distinct_until > 0 {
            "distinct"
        } else {
            "all"
        };
        let children = plan
            .parts
            .iter()
            .map(|p| super::build(p).explain())
            .collect();
        Node::root(name, info, children)
    }
}
