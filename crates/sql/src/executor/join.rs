//! The joined rows of a FROM clause with several relations, computed by the join's steps
//! (`crate::join`) when first pulled.

use crate::error::Result;
use crate::join::{BuildSource, JoinItem, JoinPlan};
use crate::query::SelectPlan;

use super::describe;
use super::scan::source_node;
use super::{Batch, Exec, Node, Operator};

pub struct Join<'p> {
    /// The query block, whose FROM row names the columns EXPLAIN shows.
    block: &'p SelectPlan,
    plan: &'p JoinPlan,
    done: bool,
}

impl<'p> Join<'p> {
    pub fn new(block: &'p SelectPlan, plan: &'p JoinPlan) -> Join<'p> {
        Join {
            block,
            plan,
            done: false,
        }
    }
}

impl Operator for Join<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(None);
        }
        let rows = crate::join::execute(self.plan, exec.txn, exec.ctx)?;
        Ok((!rows.is_empty()).then_some(rows))
    }

    fn explain(&self) -> Node {
        let names = describe::Names::of_block(self.block);
        let steps = self
            .plan
            .steps
            .iter()
            .enumerate()
            .map(|(k, step)| {
                let kind = if step.left { "left outer" } else { "inner" };
                let mut info = Vec::new();
                if let Some(on) = &step.on {
                    info.push(format!("on:{}", describe::exprs([on], &names)));
                }
                if let Some(filter) = &step.filter {
                    info.push(format!("then:{}", describe::exprs([filter], &names)));
                }
                match &step.item {
                    JoinItem::Lookup(source) => {
                        if k > 0 {
                            info.insert(0, format!("{kind} index join"));
                        }
                        source_node(source, info.join(", "))
                    }
                    JoinItem::Build { source, hash } => {
                        let how = if hash.is_some() {
                            "hash join"
                        } else {
                            "nested loop"
                        };
                        info.insert(0, format!("{kind} {how}, build"));
                        match source {
                            BuildSource::Table(t) => source_node(t, info.join(", ")),
                            BuildSource::Derived(plan) => Node {
                                name: "Derived".to_string(),
                                task: "root",
                                object: format!("derived:{}", step.alias),
                                info: info.join(", "),
                                children: vec![super::build(plan).explain()],
                            },
                        }
                    }
                }
            })
            .collect();
        Node::root(
            "Join",
            format!("{} relations, in this order", self.plan.steps.len()),
            steps,
        )
    }
}
