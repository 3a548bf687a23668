//! A query block without FROM: one row of no columns, if its WHERE holds.

use crate::error::Result;
use crate::exec::holds;
use crate::expr::Expr;

use super::describe;
use super::{Batch, Exec, Node, Operator};

pub struct Dual<'p> {
    filter: Option<&'p Expr>,
    done: bool,
}

impl<'p> Dual<'p> {
    pub fn new(filter: Option<&'p Expr>) -> Dual<'p> {
        Dual {
            filter,
            done: false,
        }
    }
}

impl Operator for Dual<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        if std::mem::replace(&mut self.done, true) || !holds(self.filter, &[], exec.ctx)? {
            return Ok(None);
        }
        Ok(Some(vec![Vec::new()]))
    }

    fn explain(&self) -> Node {
        let info = describe::exprs(self.filter, &describe::Names::none());
        let node = Node::root("TableDual", info, Vec::new());
        // A WHERE that can never hold leaves no row (TiDB shows such a dual with 0 rows).
        match self
            .filter
            .and_then(crate::planner::optimize::literal_truth)
        {
            Some(false) => node.estimated(0.0),
            _ => node,
        }
    }
}
