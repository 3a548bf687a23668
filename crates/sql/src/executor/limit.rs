//! LIMIT and OFFSET: the parent gets the rows after the first OFFSET, up to LIMIT of them, and
//! nothing is pulled from below once they are out.

use crate::error::Result;
use crate::exec::eval_count;
use crate::expr::Expr;

use super::{Batch, Exec, Node, Operator};

/// A query block's LIMIT and OFFSET, evaluated when the statement runs (they may be
/// parameters).
#[derive(Clone, Copy)]
pub struct Count<'p> {
    limit: Option<&'p Expr>,
    offset: Option<&'p Expr>,
}

impl<'p> Count<'p> {
    /// None when the block has neither.
    pub fn new(limit: Option<&'p Expr>, offset: Option<&'p Expr>) -> Option<Count<'p>> {
        (limit.is_some() || offset.is_some()).then_some(Count { limit, offset })
    }

    /// (rows to skip, rows to return after them; None: all).
    pub fn eval(&self, exec: &Exec) -> Result<(usize, Option<usize>)> {
        let offset = eval_count(self.offset, exec.ctx)?.unwrap_or(0);
        Ok((offset, eval_count(self.limit, exec.ctx)?))
    }

    /// The rows it lets through of `rows` estimated below, when the count is a literal.
    pub fn estimate(&self, rows: f64) -> f64 {
        let literal = |e: Option<&Expr>| match e {
            Some(Expr::Literal(d)) => crate::types::to_f64(d),
            _ => None,
        };
        match literal(self.limit) {
            Some(limit) => rows.min(limit.max(0.0)),
            None => rows,
        }
    }

    /// Rows that pass below the limit before it has all it returns; None: no bound.
    pub fn rows_needed(&self, exec: &Exec) -> Result<Option<usize>> {
        let (offset, limit) = self.eval(exec)?;
        Ok(limit.map(|l| l.saturating_add(offset)))
    }

    pub fn info(&self) -> String {
        let text = |e: Option<&Expr>| match e {
            Some(e) => super::describe::exprs([e], &super::describe::Names::none()),
            None => String::new(),
        };
        match (self.offset, self.limit) {
            (None, _) => format!("count:{}", text(self.limit)),
            (Some(_), None) => format!("offset:{}", text(self.offset)),
            (Some(_), Some(_)) => {
                format!("offset:{}, count:{}", text(self.offset), text(self.limit))
            }
        }
    }
}

pub struct Limit<'p> {
    input: Box<dyn Operator + 'p>,
    count: Count<'p>,
    /// (rows still to skip, rows still to return), once evaluated.
    left: Option<(usize, Option<usize>)>,
}

impl<'p> Limit<'p> {
    pub fn new(input: Box<dyn Operator + 'p>, count: Count<'p>) -> Limit<'p> {
        Limit {
            input,
            count,
            left: None,
        }
    }
}

impl Operator for Limit<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        let (skip, take) = match &mut self.left {
            Some(left) => left,
            None => self.left.insert(self.count.eval(exec)?),
        };
        loop {
            if *take == Some(0) {
                return Ok(None);
            }
            let Some(mut batch) = self.input.next(exec)? else {
                return Ok(None);
            };
            if *skip > 0 {
                let skipped = (*skip).min(batch.len());
                batch.drain(..skipped);
                *skip -= skipped;
            }
            if let Some(take) = take {
                batch.truncate(*take);
                *take -= batch.len();
            }
            if !batch.is_empty() {
                return Ok(Some(batch));
            }
        }
    }

    fn explain(&self) -> Node {
        let input = self.input.explain();
        let est_rows = self.count.estimate(input.est_rows);
        Node::root("Limit", self.count.info(), vec![input]).estimated(est_rows)
    }
}
